"""Processes with one key share the service's rate budget: a notebook and the cron job no longer each
take all of it and meet the asset library's 429s (15 requests a second, 10 at once, per key)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from stubbed_services import most_at_once

import toolkit as tk
from toolkit.http.session import RateBudget, Transport

PULL = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import toolkit as tk
    creds, ids, go = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    with tk.Workspace() as ws:
        conn = ws.connect("asset_library", **creds)
        while not Path(go).exists():
            time.sleep(0.01)
        # an id refused past the retries is skipped (without a shared budget some are): counted, not fatal
        print(len(conn.fetch("versions", asset_ids=ids, progress=False, on_error="skip")))
""")


def two_processes_pulling(box, tmp_path, environment: dict) -> dict:
    with tk.Workspace() as ws:
        conn = ws.connect("asset_library", **box.credentials("asset_library"),
                          transport=Transport(budget=RateBudget(None, 10)))
        ids = conn.fetch("assets", progress=False)["id"].tolist()[:45]
    before = box.stats()["limited"].get("asset_library", 0)
    go = tmp_path / f"go-{len(environment)}"
    import os
    env = dict(os.environ, TOOLKIT_BUDGETS=str(tmp_path / "budgets"), **environment)
    procs = [subprocess.Popen([sys.executable, "-c", PULL, json.dumps(box.credentials("asset_library")),
                               json.dumps(ids), str(go)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    time.sleep(1.5)
    go.touch()
    started = time.monotonic()
    outs = [proc.communicate(timeout=120) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), [err[-1500:] for _, err in outs]
    return {"limited": box.stats()["limited"].get("asset_library", 0) - before,
            "seconds": time.monotonic() - started, "rows": [int(out.split()[-1]) for out, _ in outs]}


def test_two_processes_with_one_key_meet_no_429_and_without_sharing_they_do(tmp_path):
    with tk.sandbox.start(seed=3, scale=0.5) as box:
        shared = two_processes_pulling(box, tmp_path, {})
        apart = two_processes_pulling(box, tmp_path, {"TOOLKIT_SHARED_BUDGET": "0"})
    assert shared["limited"] == 0, shared
    assert apart["limited"] > 0, "each process alone takes the whole budget: the service refuses some"
    assert shared["rows"][0] == shared["rows"][1] > 0
    # 90 requests at 15 a second shared, give or take the start
    assert shared["seconds"] >= 90 / 15 - 1.5


def test_a_shared_budget_file_holds_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_BUDGETS", str(tmp_path))
    client = tk.connect("asset_library", base_url="http://127.0.0.1:9", api_key="sk-very-secret-key",
                        workspace_id="w1")
    path = client.transport.budget.shared
    assert path is not None and path.parent == tmp_path and "secret" not in path.name
    with client.transport.budget, client.transport.budget:
        pass
    written = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"sk-very-secret-key" not in written and "sk-very" not in " ".join(p.name for p in tmp_path.iterdir())
    other = tk.connect("asset_library", base_url="http://127.0.0.1:9", api_key="another-key", workspace_id="w1")
    assert other.transport.budget.shared != path, "another key has a budget of its own"
    assert tk.connect("translation", base_url="http://127.0.0.1:9", client_id="c", client_secret="s",
                      username="u", password="p").transport.budget.shared is None, "no documented rate: not shared"


@pytest.mark.parametrize("places", [1, 3])
def test_the_shared_places_limit_requests_at_once_across_threads(tmp_path, places):
    assert most_at_once(RateBudget(None, places, tmp_path / "b"), 8, 0.02)[0] == places


def test_a_budget_folder_that_cannot_be_written_leaves_the_budget_this_processs_own(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    budget = RateBudget(50, 2, blocked / "budget")
    for _ in range(3):
        with budget:
            pass
    assert budget.shared is None


def test_a_shared_window_that_fails_mid_request_leaves_the_budget_this_processs_own(tmp_path, monkeypatch):
    budget = RateBudget(50, 1, tmp_path / "budget")
    with budget:
        def full(*args):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr("toolkit.http.budget.os.pwrite", full)
    # the answer's write failed: the request ends as it was, and its one place is free for the next
    done = threading.Event()
    thread = threading.Thread(target=lambda: (budget.__enter__(), budget.__exit__(None, None, None), done.set()))
    thread.start()
    thread.join(5)
    assert done.is_set() and budget.shared is None
