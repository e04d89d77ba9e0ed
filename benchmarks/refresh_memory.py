"""Where an incremental refresh of a large memberships view spends its memory, by phase. Prints figures;
asserts nothing.

    .venv/bin/python benchmarks/refresh_memory.py --profiles 50000 200000
    .venv/bin/python benchmarks/refresh_memory.py --profiles 200000 --trace    # tracemalloc too (slower)
    .venv/bin/python benchmarks/refresh_memory.py --base /tmp/before --keep /tmp/pulls --runs 2

`--base` names a checkout before a change (`git archive <commit> toolkit | tar -x -C /tmp/before`):
its refreshes run in turn with this one's, on copies of the same full pulls; `--keep` keeps those
pulls (a few minutes each) for the next run, their loads moved to its sandbox's address.

The shape of `benchmarks/fetch.py --only scale` at a size that takes minutes, not half an hour: a sandbox
of the largest size's profiles, and for each size the memberships of its first profiles pulled in full
(once, into a workspace kept for the runs), then, each run in a fresh process on a copy of it, 1% of the
profiles changed and an incremental refresh. A thread samples the refreshing process every 20 ms: its RSS
and Arrow's allocations (`pa.total_allocated_bytes()`), by the phase the refresh is in (the plan, the
load's start, the walk, the commit and its merge); DuckDB's own memory (`duckdb_memory()`) and limit are
read at the merge's start and end. With `--trace`, tracemalloc says what Python holds when the walk
starts (what the plan left for the rest of the refresh) and its peak in each phase.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch as bench  # the scale benchmark's own sandbox, children and workspace steps


def _sampled_refresh(credentials: dict, ids: Any, path: str, trace: bool = False, base: str | None = None) -> dict:
    """An incremental refresh of the memberships of `ids` in the workspace at `path`, sampled by phase;
    with `base`, the toolkit of that checkout (a spawned child takes its parent's sys.path, not PYTHONPATH)."""
    if base:
        assert "toolkit" not in sys.modules, "toolkit was imported before the checkout's folder was put first"
        sys.path.insert(0, base)
    import pyarrow as pa

    import toolkit
    from toolkit.pull import fetch as pulling
    from toolkit.storage import loads, merge

    phase = ["start"]
    peaks: dict[str, dict[str, float]] = {}
    marks: dict[str, Any] = {}
    stop = threading.Event()

    def note() -> None:
        here = peaks.setdefault(phase[0], {"rss": 0.0, "arrow": 0.0})
        here["rss"] = max(here["rss"], bench.rss_mb())
        here["arrow"] = max(here["arrow"], pa.total_allocated_bytes() / 2**20)

    def sample() -> None:
        while not stop.wait(0.02):
            note()

    if trace:
        import tracemalloc

    def within(name: str, function):
        def wrapped(*args, **kwargs):
            before, phase[0] = phase[0], name
            note()
            if trace:     # not over the walk: traced, its thousands of requests take minutes
                if name == "walk":
                    marks["held at the walk's start"] = tracemalloc.take_snapshot()
                    tracemalloc.stop()
                elif not tracemalloc.is_tracing():
                    tracemalloc.start(4)
                if tracemalloc.is_tracing():
                    tracemalloc.reset_peak()
            try:
                return function(*args, **kwargs)
            finally:
                note()
                if trace and name != "walk":
                    peaks[name]["python"] = max(peaks[name].get("python", 0.0),
                                                tracemalloc.get_traced_memory()[1] / 2**20)
                phase[0] = before if name == "merge" else f"after {name}"
        return wrapped

    def merged(self, carry):
        read = "SELECT sum(memory_usage_bytes) / 2**20, current_setting('memory_limit') FROM duckdb_memory()"
        marks["duckdb at the merge's start"] = self._cursor.execute(read).fetchall()[0]
        try:
            return within("merge", original_merge)(self, carry)
        finally:
            marks["duckdb at the merge's end"] = self._cursor.execute(read).fetchall()[0]

    def planned(client, store, *args, **kwargs):
        try:
            return within("plan", original_plan)(client, store, *args, **kwargs)
        finally:
            marks["duckdb at the plan's end"] = store.rows(
                "SELECT sum(memory_usage_bytes) / 2**20, current_setting('memory_limit') FROM duckdb_memory()")[0]

    original_merge, original_plan = merge.Merge.merge, pulling._plan_of
    pulling._plan_of = planned
    loads.Load.__enter__ = within("enter", loads.Load.__enter__)
    pulling._walk_into = within("walk", pulling._walk_into)
    loads.Load._commit = within("commit", loads.Load._commit)
    merge.Merge.merge = merged

    with toolkit.Workspace(path) as ws:
        conn = bench.connect("audience_platform", credentials, ws)
        start, reset = bench.rss_mb(), bench.reset_peak()
        peaks["start"] = {"rss": start, "arrow": pa.total_allocated_bytes() / 2**20}
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.perf_counter()
        pulled = conn.pull("memberships", profile_ids=ids, progress=False, incremental=True)
        took = time.perf_counter() - began
        stop.set()
        sampler.join()
        peak = bench.peak_mb() if reset else float("nan")   # before the count below, which is not the refresh's
        view = ws.sql("SELECT count(*) FROM audience_platform.memberships").fetchall()[0][0]
    held = None
    if trace:
        snapshot = marks.pop("held at the walk's start").filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)])
        held = [(str(stat.traceback[0]), stat.size / 2**20, stat.count)
                for stat in snapshot.statistics("lineno")[:8]]
        if tracemalloc.is_tracing():
            tracemalloc.stop()
    return {"toolkit": str(Path(toolkit.__file__).parent.parent), "rows": pulled.rows, "requests": pulled.requests,
            "kind": pulled.kind, "seconds": took, "view": view,
            "start": start, "peak": peak, "phases": peaks,
            "duckdb": {k: v for k, v in marks.items() if k.startswith("duckdb")}, "held": held}


def _prepared(credentials: dict, ids: list, folder: Path) -> tuple[Path, dict]:
    """A workspace holding the full pull of the memberships of `ids` (kept for the runs)."""
    path = folder / "full.duckdb"
    bench._in_child(bench._memberships_workspace, credentials, ids, str(path))
    full, _ = bench._in_child(bench._memberships, credentials, bench.as_fetched(ids), str(path))
    return path, full


def _moved(path: str, base_url: str) -> dict:
    """The loads of a kept workspace as of this run's sandbox, whose port is new: a refresh builds only
    on a load of the same base URL."""
    import duckdb

    from toolkit.catalog.masking import scrub_url
    with duckdb.connect(path) as con:
        con.execute("UPDATE _loads SET base_url = ?", [scrub_url(base_url)])
    return {}


def _one_run(credentials: dict, ids: list, full: Path, trace: bool, base: str | None = None) -> dict:
    """A refresh on a copy of `full`; with `base`, the refresh imports the toolkit of that checkout (its
    folder put first on the child's sys.path, ahead of this one's editable install)."""
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-refresh-") as folder:
        path = Path(folder) / "bench.duckdb"
        shutil.copy(full, path)
        bench._in_child(_moved, str(path), credentials["base_url"])
        bench._in_child(bench._memberships_workspace, credentials, ids, str(path), 100)
        got, _ = bench._in_child(_sampled_refresh, credentials, bench.as_fetched(ids), str(path), trace, base)
        return got


def _print(size: int, full: dict, got: dict, label: str) -> None:
    print(f"  {label} ({got['toolkit']}): {size:,} profiles, {got['view']:,} memberships held: refresh "
          f"({got['kind']}) {got['requests']:,} requests, {got['rows']:,} rows in {got['seconds']:.1f} s; RSS at the start {got['start']:.0f} MB, "
          f"peak {got['peak']:.0f} MB (+{got['peak'] - got['start']:.0f}); the full pull's peak "
          f"{full['peak']:.0f} MB from {full['start']:.0f}")
    line = "    by phase, RSS peak (Arrow's peak)"
    for name, here in got["phases"].items():     # in the order the refresh met them
        line += f"; {name} {here['rss']:.0f} ({here['arrow']:.0f})"
        if "python" in here:
            line += f" [python {here['python']:.0f}]"
    print(line)
    for label, (used, limit) in got["duckdb"].items():
        print(f"    {label}: {used:.0f} MB used, limit {limit}")
    for where, mb, count in got["held"] or ():
        print(f"    held when the walk starts: {mb:6.1f} MB in {count:,} blocks at {where}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, nargs="+", default=[50_000, 200_000])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the refreshing process")
    parser.add_argument("--base", help="a checkout of toolkit before the change (its folder holding toolkit/)")
    parser.add_argument("--keep", help="a folder for the full pulls' workspaces, reused when there")
    args = parser.parse_args(argv)
    largest = max(args.profiles)
    box = bench.Sandbox("audience_platform", largest / 200, enforce_limits=False)
    box.pipe.send("profile_ids")
    every = box.pipe.recv()
    print(f"== incremental refresh of memberships after 1% of the profiles changed, by phase "
          f"({len(every):,} profiles in the sandbox; {bench._load_average()}) ==")
    keep = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="toolkit-bench-refresh-full-"))
    try:
        for size in sorted(args.profiles):
            ids = every[:size]
            folder = keep / str(size)
            folder.mkdir(parents=True, exist_ok=True)
            if (folder / "full.duckdb").exists() and (folder / "full.txt").exists():
                full = json.loads((folder / "full.txt").read_text())
                path = folder / "full.duckdb"
            else:
                path, full = _prepared(box.credentials, ids, folder)
                (folder / "full.txt").write_text(json.dumps({k: full[k] for k in ("start", "peak", "rows", "seconds")}))
            for _ in range(args.runs):   # interleaved with the checkout before, when given
                for label, base in (("before", args.base), ("now", None)) if args.base else (("now", None),):
                    _print(size, full, _one_run(box.credentials, ids, path, args.trace, base), label)
        print(f"  {bench._load_average()}")
    finally:
        if not args.keep:
            shutil.rmtree(keep, ignore_errors=True)
        box.stop()


if __name__ == "__main__":
    main()
