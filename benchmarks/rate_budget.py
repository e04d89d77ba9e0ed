"""Two processes with one key against the sandbox enforcing the asset library's limits (15 requests a
second, 10 at once): answers of 429 with the rate budget shared between them and without.

    python benchmarks/rate_budget.py [seconds]          # 120 by default, for each of the two runs

Each process pulls the versions of every asset again and again (a request per asset) for `seconds`.
Printed per run: requests the sandbox answered, 429s among them, and requests a second. Goal (issue
26): 0 answers of 429 with the budget shared (TOOLKIT_SHARED_BUDGET unset); without it (=0) each
process takes the whole budget and the service refuses what goes over.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import toolkit as tk
from toolkit.http.session import RateBudget


def puller(creds: str, ids: str, until: str) -> None:
    with tk.Workspace() as ws:
        conn = ws.connect("asset_library", **json.loads(creds))
        while time.time() < float(until):
            # a 429 that outlasts the retries skips that asset: the figure is how many the service refused
            conn.pull("versions", asset_ids=json.loads(ids), refresh=True, progress=False, on_error="skip")


def run(box: tk.sandbox.Sandbox, ids: list, seconds: float, shared: bool, folder: Path) -> tuple[int, int, float]:
    before = box.stats()
    env = dict(os.environ, TOOLKIT_BUDGETS=str(folder), **({} if shared else {"TOOLKIT_SHARED_BUDGET": "0"}))
    until = time.time() + seconds
    began = time.monotonic()
    procs = [subprocess.Popen([sys.executable, __file__, "--puller", json.dumps(box.credentials("asset_library")),
                               json.dumps(ids), str(until)], env=env) for _ in range(2)]
    for proc in procs:
        proc.wait()
    after = box.stats()
    requests = after["by_service"].get("asset_library", 0) - before["by_service"].get("asset_library", 0)
    limited = after["limited"].get("asset_library", 0) - before["limited"].get("asset_library", 0)
    return requests, limited, requests / (time.monotonic() - began)


def main(seconds: float = 120.0) -> None:
    folder = Path(tempfile.mkdtemp(prefix="toolkit-bench-budget-"))
    with tk.sandbox.start(seed=7) as box:
        with tk.Workspace() as ws:
            conn = ws.connect("asset_library", **box.credentials("asset_library"))
            conn.client.transport.budget = RateBudget(None, 10)
            ids = conn.fetch("assets", progress=False)["id"].tolist()
        # the service counts this process's requests too, and the pullers' shared window knows none of
        # them: a second passes, or their first burst meets a 429 that is this benchmark's own
        time.sleep(1.1)
        print(f"two processes, one key, {len(ids)} assets' versions again and again for {seconds:.0f} s each run")
        for shared in (True, False):
            requests, limited, rate = run(box, ids, seconds, shared, folder)
            print(f"  budget {'shared' if shared else 'per process'}: {requests:,} requests, {limited:,} answered "
                  f"429 ({limited / max(1, requests):.1%}), {rate:.1f} requests/s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--puller"]:
        puller(*sys.argv[2:5])
    else:
        main(*(float(a) for a in sys.argv[1:2]))
