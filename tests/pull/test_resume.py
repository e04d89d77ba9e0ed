"""Resumable pulls: a fan-out killed (SIGKILL), interrupted (Ctrl-C) or cut off mid-walk keeps what
it had walked in a checkpoint beside the workspace; the next pull of the same rows asks only for the
parents not done, and ends with the views an uninterrupted pull gives. Nothing half-walked is
visible meanwhile."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import toolkit as tk
from toolkit.http.session import RateBudget, Transport

PULL = """
import json, sys
import toolkit as tk
from toolkit.http.session import RateBudget, Transport
with tk.Workspace(sys.argv[1]) as ws:
    conn = ws.connect("asset_library", **json.loads(sys.argv[2]), transport=Transport(budget=RateBudget(None, 4)))
    print("pulling", flush=True)
    conn.pull(sys.argv[3], refresh=True, progress=False, workers=4)
"""


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start(seed=11, enforce_limits=False) as running:
        yield running


def connected(ws: tk.Workspace, box) -> tk.Workspace:
    conn = ws.connect("asset_library", **box.credentials("asset_library"), transport=Transport(budget=RateBudget(None, 4)))
    return conn


@pytest.fixture(scope="module")
def uninterrupted(box, tmp_path_factory) -> dict[str, pd.DataFrame]:
    """The views of an uninterrupted pull of the same sandbox."""
    with tk.Workspace(tmp_path_factory.mktemp("whole") / "whole.duckdb") as ws:
        conn = connected(ws, box)
        conn.pull("assets", progress=False)
        conn.pull("boards", progress=False)
        return {name: comparable(conn.fetch(name, refresh=True, progress=False))
                for name in ("versions", "guests")}


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    columns = sorted(frame.columns)
    return frame[columns].astype(str).sort_values(columns).reset_index(drop=True)


def stages(folder: Path) -> list[Path]:
    return sorted(folder.glob(".toolkit-stage-*"))


def killed(path: Path, box, what: str, after: int, code: str = PULL) -> int:
    """`code` (the pull of resource `what`, by default) in a process of its own, killed with SIGKILL
    once it sent `after` requests; the requests it sent."""
    env = {**os.environ, "TOOLKIT_CHECKPOINT_SECONDS": "0"}   # a checkpoint after every parent
    proc = subprocess.Popen([sys.executable, "-c", code, str(path), json.dumps(box.credentials("asset_library")),
                             what], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "pulling"
    start = box.stats()["requests"]
    deadline = time.monotonic() + 60
    while proc.poll() is None and box.stats()["requests"] - start < after and time.monotonic() < deadline:
        time.sleep(0.002)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return box.stats()["requests"] - start


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_a_fan_out_killed_at_any_moment_resumes_where_it_was(box, tmp_path, uninterrupted, share):
    path = tmp_path / "ws.duckdb"
    with tk.Workspace(path) as ws:
        conn = connected(ws, box)
        parents = len(conn.fetch("assets", progress=False))
    sent = killed(path, box, "versions", int(share * parents))
    assert sent < parents, "the pull was killed before it finished"
    assert stages(tmp_path), "the killed pull left its checkpoint beside the workspace"
    with tk.Workspace(path) as ws:
        assert stages(tmp_path), "a read-write open keeps a checkpoint a load may take over"
        with pytest.raises(tk.WorkspaceError):
            ws.read("asset_library", "versions")   # nothing half-walked is visible
        conn = connected(ws, box)
        before = box.stats()["requests"]
        result = conn.pull("versions", refresh=True, progress=False)
        again = box.stats()["requests"] - before
        # the parents done at the last checkpoint are not asked again; those in flight at the kill are
        assert result.resumed >= sent - 2 * 4 - 1 and result.resumed + again == parents
        assert comparable(ws.read("asset_library", "versions")).equals(uninterrupted["versions"])
        loads = ws.loads()
        versions = loads[loads.resource == "versions"]
        assert list(versions.status) == ["interrupted", "complete"] and "interrupted" in versions.error.iloc[0]
        assert result.rows == len(uninterrupted["versions"])
    assert not stages(tmp_path), "the checkpoint was taken over and removed"


def test_ctrl_c_keeps_the_walk_for_the_next_pull_in_the_same_process(box, tmp_path, uninterrupted):
    with tk.Workspace(tmp_path / "ws.duckdb") as ws:
        conn = connected(ws, box)
        conn.pull("boards", progress=False)
        boards = len(ws.read("asset_library", "boards"))
        start, pulling = box.stats()["requests"], threading.Event()

        def interrupt(*_):
            raise KeyboardInterrupt

        def press_ctrl_c():
            while pulling.is_set() and box.stats()["requests"] - start < boards // 2:
                time.sleep(0.001)
            if pulling.is_set():
                os.kill(os.getpid(), signal.SIGUSR1)

        old = signal.signal(signal.SIGUSR1, interrupt)
        os.environ["TOOLKIT_CHECKPOINT_SECONDS"] = "0"
        try:
            pulling.set()
            threading.Thread(target=press_ctrl_c, daemon=True).start()
            with pytest.raises(KeyboardInterrupt):
                conn.pull("guests", refresh=True, progress=False, workers=2)
        finally:
            pulling.clear()
            signal.signal(signal.SIGUSR1, old)
            del os.environ["TOOLKIT_CHECKPOINT_SECONDS"]
        sent = box.stats()["requests"] - start
        assert stages(tmp_path)
        before = box.stats()["requests"]
        result = conn.pull("guests", refresh=True, progress=False)
        assert result.resumed > 0 and box.stats()["requests"] - before == boards - result.resumed
        assert result.resumed <= sent
        assert comparable(ws.read("asset_library", "guests")).equals(uninterrupted["guests"])
    assert not stages(tmp_path)


def test_a_checkpoint_is_taken_over_only_by_a_pull_of_the_same_rows(box, tmp_path, uninterrupted):
    path = tmp_path / "ws.duckdb"
    with tk.Workspace(path) as ws:
        connected(ws, box).pull("assets", progress=False)
        ids = ws.read("asset_library", "assets")["id"].tolist()
    killed(path, box, "versions", len(ids) // 2)
    assert stages(tmp_path)
    with tk.Workspace(path) as ws:
        conn = connected(ws, box)
        # other params (these ids, not the parent's): another load's rows, so it starts from zero
        some = conn.pull("versions", asset_ids=ids[:5], progress=False)
        assert some.resumed == 0 and stages(tmp_path)
        whole = conn.pull("versions", refresh=True, progress=False)
        assert whole.resumed > 0
    assert not stages(tmp_path)


BULK = """
import json, sys
import toolkit as tk
from toolkit import bulk
from toolkit.http.session import RateBudget, Transport
with tk.Workspace(sys.argv[1]) as ws:
    conn = ws.connect("asset_library", **json.loads(sys.argv[2]), transport=Transport(budget=RateBudget(None, 4)))
    print("pulling", flush=True)
    if sys.argv[3] == "pull":
        bulk.pull_service(conn, ["assets", "boards", "versions", "guests"], progress=False, log=None)
    else:
        ws.refresh(max_age=0, progress=False, say=lambda line: None)
"""


def test_a_killed_pull_of_many_resources_pulls_again_only_what_it_had_not_finished(box, tmp_path, uninterrupted):
    from toolkit import bulk
    path = tmp_path / "ws.duckdb"
    with tk.Workspace(tmp_path / "whole.duckdb") as ws:
        before = box.stats()["requests"]
        bulk.pull_service(connected(ws, box), ["assets", "boards", "versions", "guests"], progress=False, log=None)
        whole = box.stats()["requests"] - before
    sent = killed(path, box, "pull", int(whole * 0.6), BULK)
    assert sent < whole and list(tmp_path.glob(".toolkit-run-*"))
    with tk.Workspace(path) as ws:
        before = box.stats()["requests"]
        lines: list[str] = []
        done = bulk.pull_service(connected(ws, box), ["assets", "boards", "versions", "guests"], progress=False,
                                 log=lines.append)
        again = box.stats()["requests"] - before
        assert [d.resource for d in done if d.resumed] == ["assets", "boards"], lines
        assert "pulled by the interrupted run" in lines[0]
        assert again <= whole - sent + 2 * 10 + 1, (again, whole, sent)   # 10 workers: 20 in flight at most
        for name in ("versions", "guests"):
            assert comparable(ws.read("asset_library", name)).equals(uninterrupted[name])
    assert not list(tmp_path.glob(".toolkit-run-*")) and not stages(tmp_path)


def test_a_killed_refresh_resumes_when_run_again(box, tmp_path, uninterrupted):
    path = tmp_path / "ws.duckdb"
    with tk.Workspace(path) as ws:
        conn = connected(ws, box)
        for name in ("assets", "boards", "versions", "guests"):
            conn.pull(name, progress=False)
        before = box.stats()["requests"]
        ws.refresh(max_age=0, progress=False, say=lambda line: None)
        whole = box.stats()["requests"] - before
    sent = killed(path, box, "refresh", int(whole * 0.5), BULK)
    assert sent < whole
    with tk.Workspace(path) as ws:
        connected(ws, box)
        before = box.stats()["requests"]
        table = ws.refresh(max_age=0, progress=False, say=lambda line: None)
        again = box.stats()["requests"] - before
        assert "resumed" in set(table.kind) or table.resumed.sum() > 0, table
        assert again <= whole - sent + 2 * 10 + 1, (again, whole, sent)   # 10 workers: 20 in flight at most
        for name in ("versions", "guests"):
            assert comparable(ws.read("asset_library", name)).equals(uninterrupted[name])
    assert not list(tmp_path.glob(".toolkit-run-*")) and not stages(tmp_path)


def one_digit_changed(note: Path) -> None:
    """One digit of the rows the note counts changed: still JSON, and the batches unharmed, so only the
    note's own digest tells (a digit of a `done` list of integer ids names another parent the same way)."""
    data = bytearray(note.read_bytes())
    at = data.index(b'"rows":') + len(b'"rows":')
    data[at] = ord("1") if data[at] != ord("1") else ord("2")
    note.write_bytes(bytes(data))
    assert json.loads(note.read_bytes())["rows"] > 0


@pytest.mark.parametrize("damage", ["flip", "cut", "gone", "note"])
def test_a_damaged_checkpoint_is_discarded_and_its_parents_asked_again(box, tmp_path, uninterrupted, capfd, damage):
    path = tmp_path / "ws.duckdb"
    with tk.Workspace(path) as ws:
        parents = len(connected(ws, box).fetch("assets", progress=False))
    killed(path, box, "versions", parents // 2)
    batches = sorted(f for stage in stages(tmp_path) for f in stage.glob("*.arrow"))
    assert batches, "the killed pull left batches in its checkpoint"
    hurt = batches[len(batches) // 2]
    data = bytearray(hurt.read_bytes())
    if damage == "flip":     # one byte of the body: still an Arrow file, holding other values
        data[len(data) // 2] ^= 0x01
        hurt.write_bytes(bytes(data))
    elif damage == "note":
        one_digit_changed(hurt.parent / "checkpoint.json")
    elif damage == "cut":
        hurt.write_bytes(bytes(data[: len(data) // 3]))
    else:
        hurt.unlink()
    capfd.readouterr()
    with tk.Workspace(path) as ws:
        conn = connected(ws, box)
        before = box.stats()["requests"]
        result = conn.pull("versions", refresh=True, progress=False)
        assert result.resumed == 0 and box.stats()["requests"] - before == parents   # asked again, all of it
        assert comparable(ws.read("asset_library", "versions")).equals(uninterrupted["versions"])
    said = [line for line in capfd.readouterr().err.splitlines() if "checkpoint" in line]
    assert len(said) == 1 and "damaged" in said[0] and "asset_library.versions" in said[0]
    assert not stages(tmp_path)
