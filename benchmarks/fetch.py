"""Fetch benchmarks against the sandbox: pull speed per paging style against the transport+parse
ceiling (and dlt when installed), peak memory against N, fan-out speed-up and rate budget, and the
cached fetch against DuckDB's own Arrow read. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/fetch.py            # 1M records per style (several minutes)
    .venv/bin/python benchmarks/fetch.py --quick    # 100k records, to try it out

The sandbox runs in its own process, so that its CPU and memory are not counted as the client's;
each measured pull runs in a fresh process, so that its peak RSS is its own.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

STYLES = {
    # style: (service, resource, records per unit of scale, how to pull)
    "cursor": ("asset_library", "assets", 1000),
    "offset": ("audience_platform", "notifications", 150),
    "page number": ("translation", "targets", 98),
}


def _serve(service: str, scale: float, latency_ms: float, pipe) -> None:
    import toolkit
    from toolkit.sandbox import available
    box = toolkit.sandbox.start(scale=scale, latency_ms=latency_ms, emulators={service: available()[service]},
                                cache_reads=True)
    pipe.send((box.credentials(service), box.examples(service)))
    while True:
        message = pipe.recv()
        if message == "stop":
            break
        pipe.send(box.stats())
    box.stop()


class Sandbox:
    """One emulated service served from a child process."""

    def __init__(self, service: str, scale: float, latency_ms: float = 0) -> None:
        self.pipe, child = mp.Pipe()
        self.process = mp.Process(target=_serve, args=(service, scale, latency_ms, child), daemon=True)
        self.process.start()
        self.credentials, self.examples = self.pipe.recv()

    def stats(self) -> dict:
        self.pipe.send("stats")
        return self.pipe.recv()

    def stop(self) -> None:
        self.pipe.send("stop")
        self.process.join(10)


def _in_child(function, *args):
    """Run function(*args) in a fresh process; its result and its peak RSS in MB."""
    parent, child = mp.Pipe()

    def target():
        result = function(*args)
        child.send((result, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))

    process = mp.Process(target=target)
    process.start()
    result = parent.recv()
    process.join()
    return result


def _baseline_rss() -> float:
    import duckdb  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import toolkit  # noqa: F401
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pull(service: str, name: str, credentials: dict, filters: dict, limit: int | None) -> dict:
    import toolkit
    ws = toolkit.Workspace(Path(tempfile.mkdtemp()) / "bench.duckdb")
    client = ws.connect(service, **credentials)
    if limit and service == "translation":
        filters = {"submission_ids": filters["submission_ids"][:limit]}
    started = time.perf_counter()
    result = client.pull(name, progress=False, workers=1, **filters)
    took = time.perf_counter() - started
    return {"rows": result.rows, "requests": result.requests, "seconds": took}


def _ceiling(service: str, name: str, credentials: dict, filters: dict) -> dict:
    """requests.Session + orjson over the same pages: what transport and parsing alone cost."""
    import orjson
    import requests

    import toolkit
    from toolkit import catalog
    client = toolkit.connect(service, **credentials)
    resource_ = catalog.resource(service, name)
    action = catalog.ACTIONS[resource_.action]
    session = requests.Session()
    session.trust_env = False
    session.auth = client.transport.auth
    rows = requests_made = 0
    started = time.perf_counter()
    chunks = [{}]
    if service == "translation":
        ids = filters["submission_ids"]
        chunks = [{"submissionIds": ",".join(map(str, ids[i:i + 100]))} for i in range(0, len(ids), 100)]
    for chunk in chunks:
        style = action.paging
        params = style.start(chunk)
        seen = 0                                  # per chunk: the total-size header counts one chunk
        while params is not None:
            prepared = client.prepare(action)
            answer = session.get(prepared.url, params=params, timeout=60)
            requests_made += 1
            body = orjson.loads(answer.content)
            page = style.rows(body)
            rows += len(page)
            seen += len(page)
            params = style.next(params, body, answer.headers, page, seen)
    return {"rows": rows, "requests": requests_made, "seconds": time.perf_counter() - started}


def _dlt(service: str, name: str, credentials: dict) -> dict | None:
    try:
        import dlt  # noqa: F401
    except ImportError:
        return None
    return None  # measured by benchmarks/dlt_compare.py when dlt is installed


def paging(records: int) -> None:
    print(f"\n== pull of about {records:,} records per paging style (median of the runs) ==")
    for style, (service, name, per_scale) in STYLES.items():
        scale = max(1, records / per_scale)
        box = Sandbox(service, scale)
        filters = {}
        if service == "translation":
            import toolkit
            client = toolkit.connect(service, **box.credentials)
            filters = {"submission_ids": [r["submissionId"] for r in client.rows("list_submissions")]}
        ceiling, _ = _in_child(_ceiling, service, name, box.credentials, filters)
        pulled, peak = _in_child(_pull, service, name, box.credentials, filters, None)
        ratio = ceiling["seconds"] / pulled["seconds"]
        print(f"{style:12s} {service}.{name}: pull {pulled['rows']:,} rows in {pulled['seconds']:.1f} s "
              f"({pulled['rows'] / pulled['seconds']:,.0f}/s, {pulled['requests']} requests, peak {peak:.0f} MB); "
              f"ceiling {ceiling['rows'] / ceiling['seconds']:,.0f}/s → {ratio:.0%} of the ceiling (goal ≥ 50%)")
        if style == "cursor":
            small, small_peak = _in_child(_pull_limited, service, name, box.credentials, records // 5)
            base = _in_child(_baseline_rss)[0]
            print(f"{'':12s} memory: {small['rows']:,} rows peak {small_peak:.0f} MB, {pulled['rows']:,} rows "
                  f"peak {peak:.0f} MB → {peak / small_peak:.2f}x (goal ≤ 1.3x, ≤ 450 MB); "
                  f"interpreter with the libraries alone: {base:.0f} MB")
        box.stop()


def _pull_limited(service: str, name: str, credentials: dict, limit: int) -> dict:
    """A pull that stops after `limit` rows: the same code path, a smaller N."""
    import toolkit
    from toolkit import fetch
    ws = toolkit.Workspace(Path(tempfile.mkdtemp()) / "bench.duckdb")
    client = ws.connect(service, **credentials)
    original = fetch._walk

    def walk(*args, **kwargs):
        seen = 0
        for table, step in original(*args, **kwargs):
            yield table, step
            seen += table.num_rows
            if seen >= limit:
                return
    fetch._walk = walk
    started = time.perf_counter()
    result = client.pull(name, progress=False)
    return {"rows": result.rows, "seconds": time.perf_counter() - started}


def fan_out(members: int) -> None:
    import toolkit
    print(f"\n== fan-out: {members:,} audience-membership requests at latency 50 ms ==")
    box = Sandbox("audience_platform", max(1, members / 200), latency_ms=50)
    client = toolkit.connect("audience_platform", **box.credentials)
    ids = client.rows("list_audience_metadata")  # warm the connection
    emulator_ids = box.examples["profile_ids"]
    ids = (emulator_ids * (members // len(emulator_ids) + 1))[:members]
    times = {}
    for workers in (10, 1):
        count = members if workers > 1 else max(50, members // 10)
        ws = toolkit.Workspace()
        c = ws.connect("audience_platform", **box.credentials)
        started = time.perf_counter()
        c.pull("memberships", profile_ids=ids[:count], workers=workers, progress=False)
        times[workers] = (time.perf_counter() - started) / count
        print(f"  {workers:2d} workers: {count:,} requests in {times[workers] * count:.1f} s "
              f"({1 / times[workers]:,.0f} requests/s)")
    print(f"  speed-up {times[1] / times[10]:.1f}x (goal ≥ 8x)")
    box.stop()

    print("\n== fan-out on the asset library: guests of every board, against its budget (15/s, 10 at once) ==")
    box = Sandbox("asset_library", 100)
    ws = toolkit.Workspace()
    c = ws.connect("asset_library", **box.credentials)
    boards = c.fetch("boards")
    before = box.stats()
    started = time.perf_counter()
    result = c.pull("guests", progress=False)
    took = time.perf_counter() - started
    after = box.stats()
    allowed = (result.requests - 15) / 15     # the first 15 may start at once
    print(f"  {len(boards)} boards: {result.requests} requests in {took:.1f} s; budget allows {allowed:.1f} s "
          f"→ {took / allowed - 1:+.0%} (goal within 10%); sandbox saw at most "
          f"{after['max_per_second'].get('asset_library')} in a second and "
          f"{after['max_concurrent'].get('asset_library')} at once; 429s: {after.get('limited', 0)}")
    del before
    box.stop()


def _cached(service: str, name: str, credentials: dict) -> dict:
    import duckdb

    import toolkit
    path = Path(tempfile.mkdtemp()) / "bench.duckdb"
    ws = toolkit.Workspace(path)
    client = ws.connect(service, **credentials)
    client.pull(name, progress=False)
    times, raw = [], []
    for _ in range(3):
        started = time.perf_counter()
        frame = client.fetch(name, max_age=3600, progress=False)
        times.append(time.perf_counter() - started)
    ws.close()
    con = duckdb.connect(str(path), read_only=True)
    for _ in range(3):
        started = time.perf_counter()
        con.sql(f"select * from {service}.{name}").arrow().read_all().to_pandas()
        raw.append(time.perf_counter() - started)
    return {"rows": len(frame), "fetch": statistics.median(times), "duckdb": statistics.median(raw)}


def cached(records: int) -> None:
    print(f"\n== cached fetch of about {records:,} rows against DuckDB's .arrow().to_pandas() ==")
    box = Sandbox("asset_library", max(1, records / 1000))
    result, _ = _in_child(_cached, "asset_library", "assets", box.credentials)
    print(f"  {result['rows']:,} rows: fetch {result['fetch']:.2f} s, duckdb {result['duckdb']:.2f} s "
          f"→ {result['fetch'] / result['duckdb']:.2f}x (goal ≤ 1.2x)")
    box.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k records, 500 fan-out requests")
    parser.add_argument("--only", choices=("paging", "fan_out", "cached"))
    args = parser.parse_args()
    records = 100_000 if args.quick else args.records
    print(f"python {sys.version.split()[0]}; {mp.cpu_count()} cores")
    if args.only in (None, "paging"):
        paging(records)
    if args.only in (None, "fan_out"):
        fan_out(500 if args.quick else 2000)
    if args.only in (None, "cached"):
        cached(records)


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
