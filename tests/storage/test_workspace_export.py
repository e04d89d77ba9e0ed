"""Exports under pressure: queries failing on other threads, exports that fail, processes killed midway."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from toolkit import Workspace, open_snapshot
from toolkit.errors import WorkspaceError
from toolkit.storage import exports

URL = "http://127.0.0.1:9/PD"


def put(ws: Workspace, ids: range, resource: str = "targets") -> str:
    with ws.load("translation", URL, resource, {}, ("id",)) as load:
        load.write(pa.table({"id": list(ids), "name": [f"target {i}" for i in ids]}))
    return load.load_id


def hidden(folder: Path) -> list[str]:
    """Hidden files an export left: the workspace's own note of who holds it is not one."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and not p.name.endswith(".holder"))


@pytest.fixture
def filled(tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as ws:
        for _ in range(3):
            put(ws, range(1000))
        put(ws, range(10), "phases")
        yield ws


def test_export_with_history_holds_while_another_threads_queries_fail(filled, tmp_path):
    """A query that fails on a missing name looks at every attached database, the export's too, and
    kept it open after its DETACH: 9 of 30 exports failed with DuckDB's ResourceInUseException."""
    ws, folder = filled, tmp_path / "out"
    folder.mkdir()
    stop, failures = threading.Event(), []

    def analyst() -> None:
        while not stop.is_set():
            try:
                ws.sql("select * from no_such_table").fetchall()
            except duckdb.CatalogException:
                failures.append(1)

    thread = threading.Thread(target=analyst)
    thread.start()
    paths = []
    try:  # 30 exports at least, and as many as it takes the analyst to fail 30 queries alongside them
        while len(paths) < 30 or (len(failures) <= 30 and len(paths) < 300):
            paths.append(ws.export(folder / f"snap-{len(paths)}.duckdb", history=True))
    finally:
        stop.set()
        thread.join(10)
    assert len(failures) > 30, "the other thread's queries ran alongside"
    assert hidden(folder) == []
    for path in paths:
        with open_snapshot(path) as snap:
            assert len(snap.read("translation", "targets")) == 1000
            assert snap.sql('select count(*) from translation."targets__loads"').fetchall() == [(3000,)]
            assert len(snap.loads()) == 4
    databases = ws.sql("select database_name from duckdb_databases() where not internal").fetchall()
    assert databases == [("ws",)], "no export is left attached"


@pytest.mark.parametrize("format", ["duckdb", "parquet"])
@pytest.mark.parametrize("error", [RuntimeError("disk full"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_an_export_that_fails_leaves_nothing_behind_and_the_next_one_works(filled, tmp_path, monkeypatch,
                                                                          format, error):
    ws, folder = filled, tmp_path / "out"
    folder.mkdir()
    real = exports._included

    def failing(resources):  # after the rows are written: the temporary file is at its largest
        raise error

    monkeypatch.setattr(exports, "_included", failing)
    with pytest.raises(type(error)):
        ws.export(folder / "snap", format=format, history=True)
    assert list(folder.iterdir()) == []
    monkeypatch.setattr(exports, "_included", real)
    with open_snapshot(ws.export(folder / "snap", format=format, history=True)) as snap:
        assert len(snap.read("translation", "targets")) == 1000
    assert hidden(folder) == []


@pytest.mark.parametrize("format", ["duckdb", "parquet"])
def test_a_replacement_that_fails_keeps_the_snapshot_it_was_to_replace(filled, tmp_path, monkeypatch, format):
    ws, path = filled, tmp_path / "snap"
    ws.export(path, format=format)
    put(ws, range(5))
    real, refusals = os.replace, []

    def refused(source, target):  # the new snapshot's move into place fails (once: not a way back)
        built = Path(source)
        if Path(target) == path and ".snap.tmp-" in f"{built.parent.name}/{built.name}" and not refusals:
            refusals.append(source)
            raise PermissionError(f"cannot move {source}")
        return real(source, target)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(WorkspaceError, match="was not written .*PermissionError.* is as it was"):
        ws.export(path, format=format, overwrite=True)
    monkeypatch.setattr(os, "replace", real)
    with open_snapshot(path) as snap:
        assert len(snap.read("translation", "targets")) == 1000, "the earlier snapshot, whole"
    assert hidden(tmp_path) == []


PAUSED_EXPORT = textwrap.dedent("""
    import sys, threading, pyarrow as pa, toolkit
    from toolkit.storage import exports
    folder, name, format = sys.argv[1], sys.argv[2], sys.argv[3]
    ws = toolkit.Workspace()
    with ws.load("translation", "http://x", "targets", {}, ("id",)) as load:
        load.write(pa.table({"id": list(range(200_000)), "name": [f"target {i}" * 3 for i in range(200_000)]}))

    def paused(resources):  # the rows are written: say so, and wait to be killed
        print("exporting", flush=True)
        threading.Event().wait()

    exports._included = paused
    ws.export(f"{folder}/{name}", format=format, history=True)
""")


def paused_export(folder: Path, name: str, format: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", PAUSED_EXPORT, str(folder), name, format],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    if line != "exporting":
        process.kill()
        raise AssertionError(process.stderr.read())
    return process


def test_what_a_killed_export_left_is_removed_by_the_next_export_and_a_running_one_is_left_alone(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    killed = paused_export(folder, "big.duckdb", "duckdb")
    running = paused_export(folder, "live", "parquet")
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        left = [p for p in folder.iterdir() if p.name.startswith(".big.duckdb.tmp-")]
        assert left, "the killed export left its temporary file"
        assert sum(f.stat().st_size for p in left for f in [p, *p.rglob("*")] if f.is_file()) > 1_000_000
        live = [p.name for p in folder.iterdir() if p.name.startswith(".live.tmp-")]
        assert live
        with Workspace() as ws:
            put(ws, range(3))
            ws.export(folder / "now.duckdb")
        assert len(hidden(folder)) == 2, "a folder just made may not be locked yet: it is left for later"

        # dated by the files' own clock, which is the filesystem's (faketime moves only the process's)
        a_while_ago = (folder / "now.duckdb").stat().st_mtime - exports.JUST_MADE.total_seconds() - 1
        for entry in folder.iterdir():
            os.utime(entry, (a_while_ago, a_while_ago))
        with Workspace() as ws:
            put(ws, range(3))
            ws.export(folder / "next.duckdb")
        assert hidden(folder) == live, "the dead export's file went, the running one's stayed"
        assert running.poll() is None
    finally:
        for process in (killed, running):
            process.kill()
            process.communicate(timeout=30)
    with Workspace() as ws:
        put(ws, range(3))
        ws.export(folder / "after.duckdb")
    assert hidden(folder) == [], "once its process is gone, the other one's goes too"


def test_leftovers_of_exports_before_the_lock_are_removed_only_once_old(tmp_path):
    """Before exports locked their temporary, a leftover was a file `.NAME.tmp-XXXXXXXX` (and its WAL):
    who wrote it cannot be told, so only its age says its writer is gone."""
    old, recent = tmp_path / ".a.duckdb.tmp-0badc0de", tmp_path / ".b.duckdb.tmp-5eedf00d"
    for file in (old, Path(f"{old}.wal"), recent):
        file.write_bytes(b"x" * 1000)
    hours_ago = recent.stat().st_mtime - exports.UNLOCKED_AFTER.total_seconds() - 60
    for file in (old, Path(f"{old}.wal")):
        os.utime(file, (hours_ago, hours_ago))
    (tmp_path / ".keep").write_text("not an export's")
    (tmp_path / "a.duckdb.tmp-0badc0de").write_text("not hidden: not an export's")
    assert sorted(p.name for p in exports.remove_leftovers(tmp_path)) == [old.name, f"{old.name}.wal"]
    assert hidden(tmp_path) == [".b.duckdb.tmp-5eedf00d", ".keep"]


@pytest.mark.parametrize("format", ["duckdb", "parquet"])
def test_a_closed_snapshot_says_so_from_every_method(filled, tmp_path, format):
    snap = open_snapshot(filled.export(tmp_path / "snap", format=format, history=True))
    snap.close()
    snap.close()  # twice is fine
    calls = {"sql": lambda: snap.sql("select 1"), "tables": snap.tables, "manifest": snap.manifest,
             "loads": snap.loads, "read": lambda: snap.read("translation", "targets")}
    for name, call in calls.items():
        with pytest.raises(WorkspaceError, match="is closed; open it again"):
            call()
            pytest.fail(f"snap.{name}() on a closed snapshot")
    assert snap.closed and "closed" in repr(snap)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 300 kB file system of the test's own (root only: mount -t tmpfs), removed afterwards."""
    import subprocess
    folder = tmp_path / "tiny"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode:
        pytest.skip("a small file system needs mount (root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def test_an_export_to_a_full_disk_says_so_and_leaves_nothing(tiny_disk, tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as ws:
        put(ws, range(50_000))
        with pytest.raises(WorkspaceError, match="no space left") as raised:
            ws.export(tiny_disk / "snap.duckdb")
        assert len(raised.value._render_traceback_()) <= 3
        assert list(tiny_disk.iterdir()) == []
        assert len(ws.read("translation", "targets")) == 50_000       # the workspace goes on
