"""Fetch benchmarks against the sandbox: pull speed per paging style against the transport+parse
ceiling (and dlt when installed), peak memory against N, fan-out speed-up and rate budget, and the
cached fetch against DuckDB's own Arrow read. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/fetch.py            # 1M records per style (several minutes)
    .venv/bin/python benchmarks/fetch.py --quick    # 100k records, to try it out

The sandbox runs in its own process, so that its CPU and memory are not counted as the client's;
each measured pull runs in a fresh process, so that its peak RSS is its own. A pull's CPU is also
split by thread (`_thread_split`): the walk's thread and the commit after it are the critical path,
the load's writer thread runs beside the walk.
"""
from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

STYLES = {
    # style: (service, resource)
    "cursor": ("asset_library", "assets"),
    "offset": ("audience_platform", "notifications"),
    "page number": ("translation", "targets"),
}


def notifications_max() -> int:
    """The most notifications the sandbox seeds, whatever the scale."""
    from toolkit.sandbox.audience_platform.log import NOTIFICATIONS_MAX
    return NOTIFICATIONS_MAX


def scale_for(style: str, records: int) -> float:
    """The sandbox scale that serves about `records` records of the style's resource (see the seeds)."""
    if style == "cursor":       # 300 × scale**GROWTH assets: 300 at scale 1, a million at 1000
        from toolkit.sandbox.asset_library.service import GROWTH
        return max(1.0, (records / 300) ** (1 / GROWTH))
    if style == "offset":       # 300 × scale notifications, at most the sandbox's NOTIFICATIONS_MAX
        return max(1.0, min(records, notifications_max()) / 300)
    return max(1.0, records / 98)   # about 98 targets per unit of scale beyond the first


# Translation's bearer token per base URL, fetched once in the parent before any walk: a token request
# is a POST, and any POST to the sandbox empties its read cache for that service, so a child asking
# for its own token would make every walk after it render its pages again.
TOKENS: dict[str, str] = {}
# Base URLs of sandboxes started without their rate limits (the paging and cached benchmarks measure
# the client's speed, not the asset library's 15 requests/s): clients of these run without a budget.
UNLIMITED: set[str] = set()


def connect(service: str, credentials: dict, workspace=None):
    """toolkit.connect (or workspace.connect) with the parent's token, so that connecting POSTs nothing."""
    import toolkit
    from toolkit.http.session import RateBudget, Secret
    client = (workspace.connect if workspace is not None else toolkit.connect)(service, **credentials)
    if credentials["base_url"] in UNLIMITED:
        client.transport.budget = RateBudget(None, None)
    token = TOKENS.get(credentials["base_url"])
    if token:
        own = getattr(client, "client", client)          # a Connection's client
        auth: Any = getattr(own, "auth", None) or client.transport.auth     # a checkout before Client.auth: its transport's
        auth._access, auth._expires = Secret(token), time.monotonic() + 3000
        auth.redactor.add(auth._access)
    return client


def fetch_token(credentials: dict) -> str:
    import toolkit
    client = toolkit.connect("translation", **credentials)
    token = (getattr(client, "auth", None) or client.transport.auth).token().reveal()   # a checkout before Client.auth
    TOKENS[credentials["base_url"]] = token
    return token


def submission_ids(credentials: dict) -> list:
    client = connect("translation", credentials)
    return [r["submissionId"] for r in client.rows("list_submissions")]


def _serve(service: str, scale: float, latency_ms: float, enforce_limits: bool, pipe) -> None:
    import toolkit
    from toolkit.sandbox import available
    box = toolkit.sandbox.start(scale=scale, latency_ms=latency_ms, emulators={service: available()[service]},
                                cache_reads=True, enforce_limits=enforce_limits)
    pipe.send((box.credentials(service), box.examples(service)))
    while True:
        message = pipe.recv()
        if message == "stop":
            break
        if message == "profile_ids":      # every seeded profile's id (the memberships' fan-out)
            emulator: Any = box.emulator(service)
            population = emulator.state.population
            pipe.send([population.id(i) for i in range(population.count)])
            continue
        pipe.send(box.stats())
    box.stop()


class Sandbox:
    """One emulated service served from a child process."""

    def __init__(self, service: str, scale: float, latency_ms: float = 0, enforce_limits: bool = True) -> None:
        # a fresh interpreter (spawn), not a fork: a fork of this process after it has used DuckDB (the
        # fan-out's workspaces, with their threads) can die of SIGSEGV at its start
        context = mp.get_context("spawn")
        self.pipe, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(service, scale, latency_ms, enforce_limits, child),
                                  daemon=True)
        self.process.start()
        child.close()                      # so that a sandbox dying at its start ends recv() with EOFError
        try:
            self.credentials, self.examples = self.pipe.recv()
        except EOFError:
            self.process.join(5)
            raise RuntimeError(f"the {service} sandbox process died at its start "
                               f"(exit code {self.process.exitcode})") from None
        if not enforce_limits:
            UNLIMITED.add(self.credentials["base_url"])

    def cpu(self) -> float:
        """CPU seconds the sandbox's process has spent (Linux; NaN elsewhere)."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return float("nan")

    def stats(self) -> dict:
        self.pipe.send("stats")
        return self.pipe.recv()

    def stop(self) -> None:
        self.pipe.send("stop")
        self.process.join(10)


def _child_main(pipe, function, args: tuple, kwargs: dict, tokens: dict, unlimited: set) -> None:
    pipe.send(_run_here(function, args, kwargs, tokens, unlimited))


def _run_here(function, args: tuple, kwargs: dict, tokens: dict, unlimited: set) -> tuple:
    """Run function in this (fresh) process: ("ok", result, peak MB) or ("error", message, traceback)."""
    TOKENS.update(tokens)
    UNLIMITED.update(unlimited)
    # every temporary file of the run (workspaces of a million rows, dlt's pipelines) in one folder
    # that goes with the run: a full benchmark used to leave about 25 GB behind
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-", ignore_cleanup_errors=True) as scratch:
        tempfile.tempdir = scratch
        try:
            result = function(*args, **kwargs)
        except BaseException as error:     # the parent would otherwise wait for ever
            return ("error", f"{type(error).__name__}: {error}", traceback.format_exc())
        # the typing helper's peak counts as the pull's
        helper = _helper_peak()
        if isinstance(result, dict):
            result["helper_peak"] = helper
        return ("ok", result, peak_mb() + helper)


def peak_mb(pid: int | str = "self") -> float:
    """A process's own peak RSS in MB: VmHWM, which starts afresh when the process execs. ru_maxrss does
    not: it keeps the RSS of the process that forked it at the fork, so a child started by a large
    parent would report the parent's size (Linux; elsewhere ru_maxrss of this process)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if pid == "self" else float("nan")


def reset_peak() -> bool:
    """Start this process's VmHWM afresh from its present RSS (Linux: clear_refs 5), so that a peak
    read after it is that of the work since, not of what the process did before; False elsewhere."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _helper_peak() -> float:
    """The typing helper's peak RSS in MB (0 when none ran), read before it is stopped."""
    typist: Any = sys.modules.get("toolkit.pull.typist")
    helper = getattr(typist, "_helper", None)
    if helper is None:
        return 0.0
    peak = peak_mb(helper.process.pid)
    typist.stop()
    return peak


def _in_child(function, *args, python: str | None = None, **kwargs):
    """Run function(*args, **kwargs) in a fresh process; its result and its peak RSS in MB, plus the
    peak of the typing helper it started (`result["helper_peak"]`): an upper bound of the two together.

    A fresh interpreter (spawn), not a fork: a fork of this process after it has used Arrow's or
    DuckDB's thread pools (the fan-out's workspaces) can hang in `to_pandas` or die at its start; and
    its peak RSS is then its own, not partly the parent's. With `python`, that interpreter runs this
    script (`--child`), so that another checkout's toolkit (its own venv) runs the same function.
    """
    if python is not None:
        import pickle
        import subprocess
        request = pickle.dumps((function.__name__, args, kwargs, dict(TOKENS), set(UNLIMITED)))
        done = subprocess.run([python, os.path.abspath(__file__), "--child"], input=request, capture_output=True,
                              cwd=tempfile.gettempdir())
        try:
            answer = pickle.loads(done.stdout)
        except Exception:
            answer = ("error", f"exit code {done.returncode}", done.stderr.decode(errors="replace")[-3000:])
    else:
        context = mp.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_child_main,
                                  args=(child, function, args, kwargs, dict(TOKENS), set(UNLIMITED)))
        process.start()
        child.close()                          # so that a child dying without a word ends recv() with EOFError
        try:
            answer = parent.recv()
        except EOFError:
            process.join()
            answer = ("error", f"the child process died (exit code {process.exitcode})", "")
        process.join()
    if answer[0] == "error":
        raise RuntimeError(f"{function.__name__} failed in its child process: {answer[1]}\n{answer[2]}")
    return answer[1], answer[2]


def _child_of_other_python() -> None:
    """`fetch.py --child`: a pickled (function name, args, kwargs, tokens, unlimited) on stdin, the
    answer pickled on stdout (what the function prints goes to stderr)."""
    import pickle
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    name, args, kwargs, tokens, unlimited = pickle.loads(sys.stdin.buffer.read())
    out.write(pickle.dumps(_run_here(globals()[name], args, kwargs, tokens, unlimited)))
    out.flush()


def _baseline_rss() -> float:
    import duckdb  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import toolkit  # noqa: F401
    return peak_mb()


def _children_cpu() -> float:
    """CPU seconds of this process's children: those reaped, and the typing helper while it runs."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = used.ru_utime + used.ru_stime
    helper = getattr(sys.modules.get("toolkit.pull.typist"), "_helper", None)
    if helper is not None and helper.process.poll() is None:
        try:
            with open(f"/proc/{helper.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return total


def _pull(service: str, name: str, credentials: dict, filters: dict, limit: int | None) -> dict:
    """One pull into a new file workspace: rows, requests, seconds, and the CPU seconds it took in this
    process and its children (the typing helper), imports and connecting left out."""
    import toolkit
    ws = toolkit.Workspace(Path(tempfile.mkdtemp()) / "bench.duckdb")
    client = connect(service, credentials, ws)
    if limit and service == "translation":
        filters = {"submission_ids": filters["submission_ids"][:limit]}
    cpu, children = time.process_time(), _children_cpu()
    with _thread_split() as split:
        started = time.perf_counter()
        result = client.pull(name, progress=False, workers=1, **filters)
        took = time.perf_counter() - started
    cpu = time.process_time() - cpu + _children_cpu() - children
    ws.close()
    return {"rows": result.rows, "requests": result.requests, "seconds": took, "cpu": cpu, "threads": split}


# issue 48's goals for a cold pull: a share of a ceiling, and a multiple of dlt's best
GOALS = {"offset": (0.35, "http.client+orjson", 5), "cursor": (0.9, "requests+orjson", 5)}


def _floor_line(style: str, pulled: dict, stdlib: dict, requests_: dict, dlt: dict | None) -> str:
    """The goal's wall-clock budget per 100k records beside the least any arrangement of the cold pull's
    own work could take on this machine: the commit where it is (after the walk: the file is held only
    at the commit) and the walk's thread's CPU split evenly over every core. Above the budget, the goal
    needs less work, not the same work moved. A style with no goal, or a pull with no thread split,
    gets a line saying so."""
    threads = pulled.get("threads")
    if style not in GOALS or not threads:
        return f"{'':12s} (no goal for this style in GOALS, or no thread split of the pull)"
    share, ceiling_name, times_dlt = GOALS[style]
    ceiling = stdlib if ceiling_name.startswith("http.client") else requests_
    wanted = max(share * _rate(ceiling), times_dlt * _rate(dlt) if dlt else 0.0)
    cores = os.cpu_count() or 1
    per = {k: v * 100_000 / pulled["rows"] for k, v in threads.items()}
    floor = per["commit"] + per["walk"] / cores
    return (f"{'':12s} the goal ({share:.0%} of {ceiling_name}" + (f", {times_dlt}x dlt" if dlt else "")
            + f") is {wanted:,.0f} rec/s = {100_000 / wanted:.3f} s per 100k; the cold pull's own work, its walk's "
            f"thread over {cores} cores and its commit after, needs at least {floor:.3f} s per 100k "
            f"= {100_000 / floor:,.0f} rec/s")


@contextlib.contextmanager
def _thread_split():
    """CPU seconds of a pull by thread (each thread's own clock, CLOCK_THREAD_CPUTIME_ID, as in
    /proc/self/task/*/stat): the walk's thread (this one, but for its commit), the commit (the load's
    `_commit` on this thread, DuckDB's insert running on it with one thread) and the load's writer
    thread (`Load.write` called off this thread); the rest of the process's CPU is `other`. Measured by
    wrapping those two methods of the checkout's Load, so that another checkout (--base) is measured alike."""
    from toolkit.storage import loads
    main = threading.get_ident()
    split = {"walk": 0.0, "commit": 0.0, "writer": 0.0, "other": 0.0}
    commit, write = loads.Load._commit, loads.Load.write
    lock = threading.Lock()

    def timed(method, where):
        def run(self, *args, **kwargs):
            began = time.thread_time()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent = time.thread_time() - began
                key = where if where == "commit" or threading.get_ident() != main else None
                if key:
                    with lock:
                        split[key] += spent
        return run
    loads.Load._commit, loads.Load.write = timed(commit, "commit"), timed(write, "writer")
    this, total = time.thread_time(), time.process_time()
    try:
        yield split
    finally:
        loads.Load._commit, loads.Load.write = commit, write
        split["walk"] = time.thread_time() - this - split["commit"]
        split["other"] = time.process_time() - total - split["walk"] - split["commit"] - split["writer"]


def _pull_warm(service: str, name: str, credentials: dict, filters: dict, limit: int | None) -> dict:
    """A second pull in one process (the first is not measured): what a notebook's later pulls cost."""
    _pull(service, name, credentials, filters, limit)
    return _pull(service, name, credentials, filters, limit)


def _ceiling(service: str, name: str, credentials: dict, filters: dict) -> dict:
    """requests.Session + orjson over the same pages: what transport and parsing alone cost."""
    import pull_costs
    return pull_costs.requests_ceiling(connect(service, credentials), service, name, filters)


def _stdlib(service: str, name: str, credentials: dict, filters: dict) -> dict:
    """Python's keep-alive http.client + orjson over the same pages: the fetch-and-parse ceiling."""
    import pull_costs
    return pull_costs.stdlib_ceiling(connect(service, credentials), service, name, filters)


def _stages(service: str, name: str, credentials: dict, filters: dict) -> dict:
    import pull_costs
    return pull_costs.stages(connect(service, credentials), service, name, filters)


def _dlt(function_name: str, style: str, credentials: dict, filters: dict, token: str | None,
         **options) -> dict:
    """One dlt walk (dlt_compare.dlt_pull or rest_api_pull) over the same requests as the ceiling."""
    import dlt_compare
    target = dlt_compare.request_of(style, credentials, filters, token)
    return getattr(dlt_compare, function_name)(style, params=target.pop("walks"), **target, **options)


def _load_average() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _rate(result: dict) -> float:
    return result["rows"] / result["seconds"]


def _interleaved(contenders: dict, rounds: int) -> dict:
    """Each contender (name: (function, args, python)) run `rounds` times in fresh processes, one after
    the other in turn, so that the machine's load falls on all alike: name → every (result, peak MB)."""
    runs: dict = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, (function, args, python) in contenders.items():
            runs[name].append(_in_child(function, *args, python=python))
    return runs


def _best(runs: list) -> tuple[dict, float]:
    """The fastest run, with the least CPU of any run and the highest peak of all (memory is not luck)."""
    result, _ = max(runs, key=lambda run: _rate(run[0]))
    result = dict(result)
    if all("cpu" in run[0] for run in runs):
        result["cpu"] = min(run[0]["cpu"] for run in runs)
    return result, max(run[1] for run in runs)


def paging(records: int, runs: int = 3, rest_api_records: int = 0, styles: Sequence[str] = (),
           base: str | None = None) -> None:
    import dlt_compare
    print(f"\n== pull of about {records:,} records per paging style: best of {runs} runs each, interleaved, every "
          f"run a fresh process, after one discarded walk that fills the sandbox's read cache ==")
    print("the sandbox runs without its rate limits and the clients without their budget: this measures the "
          "client, not the asset library's 15 requests/s. The machine is shared: read the ratios of runs "
          "made in turn and the CPU seconds (this process and its children), not the wall clock alone")
    have_dlt = dlt_compare.available()
    print(f"dlt {dlt_compare.version()}: its best configuration (RESTClient pages → Arrow tables → duckdb)"
          + (f"; rest_api with defaults on the first {rest_api_records:,} records" if rest_api_records else "")
          if have_dlt else "dlt is not installed: no comparison with dlt (pip install -e '.[bench]')")
    if base:
        print(f"before: the pulls also run under {base} (another checkout's toolkit), in turn with these")
    for style, (service, name) in STYLES.items():
        if styles and style not in styles:
            continue
        wanted = records if style != "offset" else min(records, notifications_max())
        box = Sandbox(service, scale_for(style, records), enforce_limits=False)
        token = fetch_token(box.credentials) if service == "translation" else None
        filters = {"submission_ids": submission_ids(box.credentials)} if service == "translation" else {}
        started = time.perf_counter()
        warm, _ = _in_child(_ceiling, service, name, box.credentials, filters)
        print(f"{style:12s} {service}.{name}: {warm['rows']:,} records, {warm['requests']:,} requests; the "
              f"sandbox rendered them in {time.perf_counter() - started:.1f} s (the discarded walk)"
              + (f"; notifications stop at {notifications_max():,} in the sandbox, so this style is measured on "
                 f"{wanted:,}, not {records:,}" if wanted < records else "") + f"; {_load_average()}")
        given = (service, name, box.credentials, filters)
        contenders: dict[str, tuple[Any, tuple, str | None]] = {"http.client + orjson": (_stdlib, given, None),
                      "requests + orjson": (_ceiling, given, None),
                      "cold pull": (_pull, (*given, None), None),
                      "warm pull": (_pull_warm, (*given, None), None)}
        if base:
            contenders["cold pull before"] = (_pull, (*given, None), base)
            contenders["warm pull before"] = (_pull_warm, (*given, None), base)
        if have_dlt:
            contenders["dlt best"] = (_dlt, ("dlt_pull", style, box.credentials, filters, token), None)
        served = box.cpu()
        measured = {name_: _best(found) for name_, found in _interleaved(contenders, runs).items()}
        # the sandbox answers every measured walk from its read cache: its CPU shows it is not what
        # bounds them (a walk it renders afresh costs it some 50 us of CPU per asset)
        served = (box.cpu() - served) / (runs * len(contenders))
        stdlib, requests_ = measured["http.client + orjson"][0], measured["requests + orjson"][0]
        dlt = measured.get("dlt best", (None,))[0]
        for label, (result, peak) in measured.items():
            line = f"{'':12s} {label:22s} {_rate(result):>9,.0f} rec/s  ({result['rows']:,} rows in " \
                   f"{result['seconds']:.2f} s"
            if "cpu" in result:
                line += f", {result['cpu']:.2f} CPU-s = {result['cpu'] * 100_000 / result['rows']:.2f} per 100k"
            if result.get("threads"):
                per = {k: v * 100_000 / result["rows"] for k, v in result["threads"].items()}
                line += (f" [per 100k by thread: walk {per['walk']:.3f} + commit {per['commit']:.3f} = critical "
                         f"{per['walk'] + per['commit']:.3f}; writer {per['writer']:.3f}, other {per['other']:.3f}]")
            line += f", peak {peak:.0f} MB"
            if result.get("helper_peak"):
                line += f" of which the typing helper {result['helper_peak']:.0f}"
            line += ")"
            if "pull" in label:
                line += f" → {_rate(result) / _rate(stdlib):.0%} of http.client+orjson, " \
                        f"{_rate(result) / _rate(requests_):.2f}x requests+orjson"
                if dlt:
                    line += f", {_rate(result) / _rate(dlt):.1f}x dlt"
            print(line)
            if label == "requests + orjson":
                print(f"{'':12s} {'(the sandbox)':22s} {served:.2f} CPU-s a walk on average, answered from its cache")
            if result["rows"] != stdlib["rows"]:
                print(f"{'':12s} !! {label} has {result['rows']:,} rows, the ceiling {stdlib['rows']:,}")
        print(_floor_line(style, measured["cold pull"][0], stdlib, requests_, dlt))
        if have_dlt and rest_api_records:
            rest, rest_peak = _in_child(_dlt, "rest_api_pull", style, box.credentials, filters, token,
                                        max_records=rest_api_records)
            print(f"{'':12s} dlt rest_api (defaults, first {rest['rows']:,} records only): {_rate(rest):,.0f} rec/s "
                  f"in {rest['seconds']:.1f} s, peak {rest_peak:.0f} MB")
        stages_of = {"now": _in_child(_stages, *given)[0]}
        if base:
            stages_of["before"] = _in_child(_stages, *given, python=base)[0]
        print(f"{'':12s} CPU seconds per 100k records by stage, each stage alone over the same pages"
              + (" (before → now)" if base else ""))
        for stage, seconds in stages_of["now"]["per_100k"].items():
            was = stages_of.get("before", {}).get("per_100k", {}).get(stage)
            print(f"{'':14s} {stage:42s} " + (f"{was:6.3f} → " if was is not None else "") + f"{seconds:6.3f}")
        if style == "cursor":
            small, small_peak = _in_child(_pull_limited, service, name, box.credentials, records // 5)
            base_rss = _in_child(_baseline_rss)[0]
            pulled_peak = measured["cold pull"][1]
            print(f"{'':12s} memory: {small['rows']:,} rows peak {small_peak:.0f} MB, {wanted:,} rows peak "
                  f"{pulled_peak:.0f} MB → {pulled_peak / small_peak:.2f}x; interpreter with the libraries "
                  f"alone: {base_rss:.0f} MB")
        box.stop()


def _pull_limited(service: str, name: str, credentials: dict, limit: int) -> dict:
    """A pull that stops after `limit` rows: the same code path, a smaller N."""
    import toolkit
    from toolkit.pull import plans
    ws = toolkit.Workspace(Path(tempfile.mkdtemp()) / "bench.duckdb")
    client = connect(service, credentials, ws)
    original = plans.walk

    def walk(*args, **kwargs):
        seen = 0
        for table, step in original(*args, **kwargs):
            yield table, step
            seen += table.num_rows
            if seen >= limit:
                return
    plans.walk = walk
    started = time.perf_counter()
    result = client.pull(name, progress=False)
    return {"rows": result.rows, "seconds": time.perf_counter() - started}


def _write_profiles(ws, base_url: str, ids: list, changed: set) -> None:
    """A load of `audience_platform.profiles` holding only what a memberships refresh compares (the
    profile, and a version raised for `changed`): the parent whose rows say which memberships to ask again."""
    import pyarrow as pa

    from toolkit.storage.writer import BATCH_ROWS
    with ws.load("audience_platform", base_url, "profiles", {}, ("item_id",)) as load:
        for start in range(0, len(ids), BATCH_ROWS):
            part = ids[start:start + BATCH_ROWS]
            load.write(pa.table({"profile_id": part, "item_id": part,
                                 "version": [2 if i in changed else 1 for i in part]}))


def _duckdb_mb(ws: Any) -> float:
    """What DuckDB's buffer manager holds in the workspace's database, in MB (duckdb_memory())."""
    return ws.sql("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchall()[0][0] / 2**20


def rss_mb() -> float:
    """This process's resident memory now, in MB (VmRSS; NaN where /proc is not there)."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return float("nan")


def _memberships_workspace(credentials: dict, ids: list, path: str, changed: int = 0) -> dict:
    """What a memberships pull's workspace holds before it: the audiences' metadata and a load of the
    profiles the refresh compares (every `changed`-th profile's version raised when `changed`), written
    by a process of its own so that the pulling process does not start from this one's peak."""
    import toolkit
    with toolkit.Workspace(path) as ws:
        conn = connect("audience_platform", credentials, ws)
        conn.pull("audience_metadata", progress=False, refresh=bool(changed))
        _write_profiles(ws, credentials["base_url"], ids, set(ids[::changed]) if changed else set())
    return {"profiles": len(ids)}


def _memberships(credentials: dict, ids: Any, path: str, incremental: bool = False) -> dict:
    """A pull of the memberships of `ids` into the workspace at `path` (or, `incremental`, an incremental
    refresh of the one there), in a process that has done nothing before but take the ids and open the
    workspace: its RSS then, its peak over the pull alone, time, CPU and requests."""
    import toolkit
    with toolkit.Workspace(path) as ws:
        conn = connect("audience_platform", credentials, ws)
        start, reset = rss_mb(), reset_peak()
        cpu, children = time.process_time(), _children_cpu()
        started = time.perf_counter()
        pulled = conn.pull("memberships", profile_ids=ids, progress=False, incremental=incremental)
        return {"rows": pulled.rows, "requests": pulled.requests, "seconds": time.perf_counter() - started,
                "cpu": time.process_time() - cpu + _children_cpu() - children, "kind": pulled.kind,
                "start": start, "peak": peak_mb() if reset else float("nan"), "duckdb_mb": _duckdb_mb(ws)}


def as_fetched(ids: list) -> Any:
    """Ids as an analyst has them: a column of a fetched DataFrame (pandas strings backed by Arrow, as
    `fetch` gives text columns), which the pull is handed as it is."""
    import pandas as pd
    return pd.Series(ids, dtype=pd.StringDtype("pyarrow"), name="profile_id")


def _memberships_in_turn(credentials: dict, ids: list, refresh: bool, python: str | None) -> dict:
    """The workspace written, the pull, and with `refresh` 1% of the profiles changed and an incremental
    refresh: each step in a fresh process, in one folder that goes with the run."""
    import shutil
    folder = tempfile.mkdtemp(prefix="toolkit-bench-scale-")
    path = str(Path(folder) / "bench.duckdb")
    try:
        _in_child(_memberships_workspace, credentials, ids, path, python=python)
        fetched = as_fetched(ids)
        full, _ = _in_child(_memberships, credentials, fetched, path, python=python)
        if refresh:
            _in_child(_memberships_workspace, credentials, ids, path, 100, python=python)
            full["refresh"], _ = _in_child(_memberships, credentials, fetched, path, True, python=python)
        return full
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def memberships_scale(members: int = 3_000_000, python: str | None = None) -> None:
    """Memberships at `members` rows against a tenth of it: the pulling process's RSS at its start and its
    peak over the pull, time per record, and an incremental refresh after 1% of the profiles changed."""
    print(f"\n== memberships: {members // 10:,} and {members:,} rows (about 5 a profile, one request a profile), "
          f"then an incremental refresh after 1% of the profiles changed ==")
    box = Sandbox("audience_platform", members / 5 / 200, enforce_limits=False)
    box.pipe.send("profile_ids")
    every = box.pipe.recv()
    print(f"  {len(every):,} profiles in the sandbox; the workspace (audience metadata, the profiles loads the "
          f"refresh compares) is written by a process of its own, and each pull runs in a fresh process that "
          f"holds the ids and the open workspace; the ids are handed as a fetch gives them, a column of "
          f"Arrow-backed pandas strings; {_load_average()}")
    small = _memberships_in_turn(box.credentials, every[:len(every) // 10], False, python)
    print(f"  {_load_average()}")
    large = _memberships_in_turn(box.credentials, every, True, python)
    for label, got in (("tenth", small), ("full", large)):
        print(f"  {label}: {got['rows']:,} rows, {got['requests']:,} requests in {got['seconds']:.1f} s "
              f"({got['rows'] / got['seconds']:,.0f} rows/s, {got['cpu']:.1f} CPU-s); RSS at the start "
              f"{got['start']:.0f} MB, the pull's peak {got['peak']:.0f} MB (+{got['peak'] - got['start']:.0f}; "
              f"DuckDB's after it: {got['duckdb_mb']:.0f} MB)")
    per = (large["seconds"] / large["rows"]) / (small["seconds"] / small["rows"])
    print(f"  the sandbox's own process peaked at {peak_mb(box.process.pid or 0):.0f} MB (not counted above)")
    print(f"  peak RSS {large['peak'] / small['peak']:.2f}x (goal ≤ 1.2x); at the start "
          f"{large['start'] / small['start']:.2f}x; added by the pull "
          f"{(large['peak'] - large['start']) / (small['peak'] - small['start']):.2f}x; time per record {per:.2f}x "
          f"(goal ≤ 1.15x); CPU per record {(large['cpu'] / large['rows']) / (small['cpu'] / small['rows']):.2f}x")
    again = large["refresh"]
    print(f"  incremental refresh ({again['kind']}): {again['requests']:,} requests, {again['rows']:,} rows in "
          f"{again['seconds']:.1f} s, {again['cpu']:.1f} CPU-s → {again['seconds'] / large['seconds']:.1%} of the "
          f"full pull's time (goal ≤ 5%), {again['cpu'] / large['cpu']:.1%} of its CPU; its process's RSS at the "
          f"start {again['start']:.0f} MB, peak {again['peak']:.0f} MB; {_load_average()}")
    box.stop()


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


def pages_ahead(records: int, latency_ms: float = 50) -> None:
    """An offset walk over a slow link: one request at a time against pages asked for ahead."""
    import toolkit
    print(f"\n== offset walk of {records:,} notifications at latency {latency_ms:.0f} ms: pages asked ahead ==")
    box = Sandbox("audience_platform", max(1, records / 300), latency_ms=latency_ms)
    times = {}
    for workers in (1, 10):
        ws = toolkit.Workspace()
        client = connect("audience_platform", box.credentials, ws)
        started = time.perf_counter()
        result = client.pull("notifications", progress=False, workers=workers)
        times[workers] = time.perf_counter() - started
        print(f"  {workers:2d} workers ({workers - 1} pages ahead): {result.rows:,} rows, {result.requests} requests "
              f"in {times[workers]:.2f} s")
    print(f"  speed-up {times[1] / times[10]:.1f}x")
    box.stop()


def _cached(service: str, name: str, credentials: dict) -> dict:
    import duckdb

    import toolkit
    path = Path(tempfile.mkdtemp()) / "bench.duckdb"
    ws = toolkit.Workspace(path)
    client = connect(service, credentials, ws)
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


def _fetch_memory(service: str, name: str, credentials: dict) -> dict:
    """A fetch from scratch (pull, then the DataFrame): its rows, time and the DataFrame's own size."""
    import toolkit
    ws = toolkit.Workspace(Path(tempfile.mkdtemp()) / "bench.duckdb")
    client = connect(service, credentials, ws)
    started = time.perf_counter()
    frame = client.fetch(name, progress=False)
    took = time.perf_counter() - started
    return {"rows": len(frame), "seconds": took, "frame_mb": frame.memory_usage(deep=True).sum() / 2**20}


def cached(records: int) -> None:
    print(f"\n== cached fetch of about {records:,} rows against DuckDB's .arrow().to_pandas() ==")
    # without the asset library's rate limit: the pull that fills the workspace is not what is measured
    box = Sandbox("asset_library", scale_for("cursor", records), enforce_limits=False)
    result, _ = _in_child(_cached, "asset_library", "assets", box.credentials)
    print(f"  {result['rows']:,} rows: fetch {result['fetch']:.2f} s, duckdb {result['duckdb']:.2f} s "
          f"→ {result['fetch'] / result['duckdb']:.2f}x (goal ≤ 1.2x)")
    fetched, fetch_peak = _in_child(_fetch_memory, "asset_library", "assets", box.credentials)
    pulled, pull_peak = _in_child(_pull, "asset_library", "assets", box.credentials, {}, None)
    print(f"  memory: a fetch of {fetched['rows']:,} rows peaks at {fetch_peak:.0f} MB, a pull alone at "
          f"{pull_peak:.0f} MB → the fetch adds {fetch_peak - pull_peak:.0f} MB; the DataFrame itself is "
          f"{fetched['frame_mb']:.0f} MB (goal: adds no more than the DataFrame)")
    box.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k records, 500 fan-out requests")
    parser.add_argument("--only", choices=("paging", "fan_out", "cached", "scale"))
    parser.add_argument("--members", type=int, default=3_000_000,
                        help="memberships of the scale figures (and a tenth of it)")
    parser.add_argument("--style", action="append", choices=tuple(STYLES), default=[],
                        help="only this paging style (repeatable; default: all three)")
    parser.add_argument("--runs", type=int, default=3, help="runs of the ceiling and the pull per style (median)")
    parser.add_argument("--base", metavar="PYTHON",
                        help="also run the pulls under this interpreter (a venv of another checkout), in turn")
    parser.add_argument("--rest-api", type=int, default=50_000, metavar="N",
                        help="records for dlt's rest_api source with defaults (slow; 0: skip it)")
    args = parser.parse_args()
    records = 100_000 if args.quick else args.records
    print(f"python {sys.version.split()[0]}; {mp.cpu_count()} cores; {_load_average()} at the start")
    if args.only in (None, "paging"):
        paging(records, args.runs, min(args.rest_api, records), args.style, args.base)
    if args.only in (None, "fan_out"):
        fan_out(500 if args.quick else 2000)
        pages_ahead(30_000 if args.quick else 100_000)
    if args.only in (None, "cached"):
        cached(records)
    if args.only in (None, "scale"):
        memberships_scale(300_000 if args.quick else args.members)
        if args.base:
            print("  before:")
            memberships_scale(300_000 if args.quick else args.members, args.base)
    print(f"\n{_load_average()} at the end")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child_of_other_python()
    else:
        main()
