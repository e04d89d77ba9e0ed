"""What a pull costs at a real library's scale, in requests: a first full pull, an hourly refresh, and a
pull killed at 80% and run again.

    python benchmarks/scale.py [assets] [services]      # 20000 and every service by default

The sandbox at the scale where the asset library holds about `assets` assets (the other services grow
with the same scale), its limits off and the clients' budgets off: rate limits are counted, not
waited for. For each run: requests per service, and the time they would take at the services'
documented budgets (the asset library's 15 requests a second; the others document none). Then the
floor: the fewest requests the endpoints allow for the same rows (each list at its largest page, each
fan-out from its cheaper side, one request a parent at least), against which every figure is read.

Runs:
  full      a first pull of every resource (toolkit.bulk, the demo's inputs for those needing ids)
  hourly    a refresh after one virtual hour of the sandbox's usual activity
  resumed   the full pull killed with SIGKILL once 80% of its requests were sent, then run again: the
            second run's requests (it resumes: the resources the killed run completed are not pulled
            again, the fan-out it was walking goes on from its checkpoint), and its views against an
            uninterrupted pull of the same sandbox

Goals (issue 26): the hourly refresh at most 25% of the full pull's requests, every row confirmed
within its budget; the resumed run at most 30% of a full pull's requests; the same views as an
uninterrupted pull.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import toolkit as tk
from toolkit import bulk, catalog
from toolkit.http.session import RateBudget
from toolkit.pull import sides

GROWTH = math.log(1_000_000 / 300) / math.log(1000)   # the sandbox's asset count: 300 × scale**GROWTH
SERVICES = ("asset_library", "audience_platform", "translation", "media_review")


def scale_for(assets: int) -> float:
    return (assets / 300) ** (1 / GROWTH)


def connected(ws: tk.Workspace, box, services) -> dict:
    conns = {}
    for service in services:
        conns[service] = ws.connect(service, **box.credentials(service))
        conns[service].client.transport.budget = RateBudget(None, 10)   # counted, not waited for
    return conns


def pull_all(path: Path, box, services) -> dict[str, int]:
    """Every resource of the services pulled into `path`; the requests each service took."""
    before = box.stats()["by_service"]
    with tk.Workspace(path) as ws:
        for service, conn in connected(ws, box, services).items():
            bulk.pull_service(conn, inputs=box.examples(service), progress=False, log=None)
    after = box.stats()["by_service"]
    return {s: after.get(s, 0) - before.get(s, 0) for s in services}


def at_budgets(requests: dict[str, int]) -> str:
    shown = []
    for service, count in requests.items():
        rate = catalog.SERVICES[service].rate_per_second
        shown.append(f"{service} {count:,}" + (f" ({count / rate / 60:.1f} min at {rate:g}/s)" if rate else ""))
    return "; ".join(shown)


def floor(path: Path, services) -> int:
    """The fewest requests the endpoints allow for the rows the workspace holds (module docstring)."""
    total = 0
    with tk.Workspace(path, read_only=True) as ws:
        held = {(r["service"], r["resource"]): int(r["rows"]) for r in ws.tables().to_dict("records")}
        for (service, name), rows in held.items():
            if service not in services or name.endswith("__filtered"):
                continue
            resource = catalog.resource(service, name)
            action = catalog.ACTIONS[resource.action]
            style = action.paging or catalog.SERVICES[service].paging
            page = getattr(style, "max_size", 100) if (action.response == "page" or action.paging) else None
            if resource.chunks is not None:
                parents = held.get((service, resource.parent), 0)
                total += max(1, math.ceil(parents / resource.chunks.size))
            elif resource.fan_out and (service, resource.parent) in held:
                parents = held[(service, resource.parent)]
                this = parents * max(1, math.ceil(rows / max(parents, 1) / (page or rows or 1)))
                if resource.other_side is not None:
                    others = held.get((service, resource.other_side.parent), 0)
                    this = min(this, sides.requests_each_way(parents, others, rows, page or 100)[1])
                total += this
            elif page:
                total += max(1, math.ceil(rows / page))
            else:
                total += 1
    return total


def differing(mine: Path, theirs: Path) -> list[str]:
    """The views of two workspaces that differ, row for row and value for value."""
    differ = []
    with tk.Workspace(mine, read_only=True) as a, tk.Workspace(theirs, read_only=True) as b:
        for view in b.tables().itertuples():
            key = list(catalog.RESOURCES[view.service, view.resource.removesuffix("__filtered")].key)
            frames = []
            for ws in (a, b):
                frame = ws.sql(f'SELECT * FROM {view.service}."{view.resource}"').df()
                frame = frame.drop(columns=[c for c in frame.columns if c.startswith("_")]).astype("string")
                frames.append(frame.fillna("<NA>").sort_values(key or list(frame.columns)).reset_index(drop=True))
            if not frames[0].equals(frames[1]):
                differ.append(view.table)
    return differ


def killed_at(path: Path, box, services, share: float, full: int) -> None:
    """The full pull in a process of its own, killed with SIGKILL once `share` of `full` requests went."""
    code = ("import sys, toolkit as tk\n"
            "from toolkit import bulk\n"
            "from toolkit.http.session import RateBudget\n"
            "import json\n"
            "creds = json.loads(sys.argv[2])\n"
            "with tk.Workspace(sys.argv[1]) as ws:\n"
            "    for service, given in creds.items():\n"
            "        conn = ws.connect(service, **given['creds'])\n"
            "        conn.client.transport.budget = RateBudget(None, 10)\n"
            "        bulk.pull_service(conn, inputs=given['inputs'], progress=False, log=None)\n")
    import json
    given = {s: {"creds": box.credentials(s), "inputs": box.examples(s)} for s in services}
    start = box.stats()["requests"]
    proc = subprocess.Popen([sys.executable, "-c", code, str(path), json.dumps(given, default=str)])
    while proc.poll() is None and box.stats()["requests"] - start < share * full:
        time.sleep(0.05)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def main(assets: int = 20_000, services: tuple[str, ...] = SERVICES) -> None:
    scale = scale_for(assets)
    folder = Path(tempfile.mkdtemp(prefix="toolkit-bench-scale-"))
    with tk.sandbox.start(seed=7, scale=scale, enforce_limits=False) as box:
        print(f"sandbox at scale {scale:.1f} (about {assets:,} assets), limits off, budgets counted")
        began = time.monotonic()
        full = pull_all(folder / "full.duckdb", box, services)
        print(f"  full pull: {sum(full.values()):,} requests in {time.monotonic() - began:.0f} s: {at_budgets(full)}")
        lowest = floor(folder / "full.duckdb", services)
        print(f"  the floor for the same rows: {lowest:,} requests ({lowest / sum(full.values()):.0%} of the full pull)")
        box.advance(hours=1)
        before = box.stats()["by_service"]
        with tk.Workspace(folder / "full.duckdb") as ws:
            connected(ws, box, services)
            table = ws.refresh(progress=False, say=lambda line: None)
        after = box.stats()["by_service"]
        hourly = {s: after.get(s, 0) - before.get(s, 0) for s in services}
        print(f"  hourly refresh: {sum(hourly.values()):,} requests ({sum(hourly.values()) / sum(full.values()):.0%} "
              f"of the full pull; goal ≤ 25%): {at_budgets(hourly)}")
        costly = table.sort_values("requests", ascending=False).head(5)
        print("    most requests: " + ", ".join(f"{r.resource} {int(r.requests):,}" for r in costly.itertuples()))
        with tk.Workspace(folder / "full.duckdb", read_only=True) as ws:
            for (service, name), resource in catalog.RESOURCES.items():
                how = resource.incremental
                if service in services and how is not None and how.strategy == "rotation":
                    confirmed = ws.confirmations(service, name)
                    clock = ws.sql("SELECT max(service_clock) FROM _loads WHERE service = ?", [service]).fetchone()[0]
                    oldest = max((clock - at).total_seconds() for at in confirmed.values()) / 3600
                    print(f"    {service}.{name}: {len(confirmed):,} parents, the oldest confirmed {oldest:.1f} h ago "
                          f"(budget {how.max_age / 3600:.0f} h)")
        killed_at(folder / "killed.duckdb", box, services, 0.8, sum(full.values()))
        began = time.monotonic()
        again = pull_all(folder / "killed.duckdb", box, services)
        print(f"  killed at 80% and run again: the second run sent {sum(again.values()):,} requests in "
              f"{time.monotonic() - began:.0f} s ({sum(again.values()) / sum(full.values()):.0%} of a full pull; "
              f"goal ≤ 30%): {at_budgets(again)}")
        pull_all(folder / "whole.duckdb", box, services)
        differ = differing(folder / "killed.duckdb", folder / "whole.duckdb")
        print(f"    views equal to an uninterrupted pull of the same sandbox: {not differ}"
              + (f" (differ: {', '.join(differ)})" if differ else ""))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000,
         tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else SERVICES)
