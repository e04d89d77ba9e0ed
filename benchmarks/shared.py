"""One workspace shared by a notebook and a cron job on one machine: what failed, how long reads waited.

    python benchmarks/shared.py [seconds] [notebook_every] [cron_every]     # 120 0.5 5 by default

An embedded sandbox (seed 7); a file workspace holding the translation service's submissions,
targets and phases. A notebook process opens it read-write and keeps it open (the default
`toolkit.Workspace(path)`), reading its loads and counting each view every `notebook_every`
seconds; a cron loop runs `toolkit refresh --workspace path` in a process of its own every
`cron_every` seconds, the sandbox's clock an hour on before each, for `seconds`. Printed: refreshes
run and failed (with their exit codes), reads made and failed, the longest read, the longest commit
(`_loads.commit_seconds`: how long a refresh held the file to write one load), and whether the
notebook's last read saw every load without reopening. Goal (issue 25): 0 failed refreshes, 0 failed
reads, the longest read at most the longest commit plus 1 s.

The team workspace on DuckLake (issue 25's second part) is measured here when it lands.
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

RESOURCES = ("submissions", "targets", "phases")


def notebook(path: str, stop: str, every: float) -> None:
    """The notebook's side: one read-write workspace held open, a read every `every` seconds."""
    ws = tk.Workspace(path)
    while True:
        final = Path(stop).exists()
        began = time.monotonic()
        record: dict = {"final": final}
        try:
            loads = ws.loads()
            record["rows"] = {name: ws.sql(f"SELECT count(*) FROM translation.{name}").fetchone()[0]
                              for name in RESOURCES}
            record.update(ok=True, loads=len(loads))
        except Exception as error:  # a benchmark counts failures rather than stopping at one
            record.update(ok=False, error=f"{type(error).__name__}: {error}"[:300])
        record["s"] = round(time.monotonic() - began, 3)
        print(json.dumps(record), flush=True)
        if final:
            break
        time.sleep(every)
    ws.close()


def main(seconds: float = 120.0, notebook_every: float = 0.5, cron_every: float = 5.0) -> None:
    folder = Path(tempfile.mkdtemp(prefix="toolkit-bench-shared-"))
    path, stop, reads = folder / "notebook.duckdb", folder / "stop", folder / "reads.jsonl"
    box = tk.sandbox.start(seed=7)
    try:
        with tk.Workspace(path) as ws:
            conn = ws.connect("translation", **box.credentials("translation"))
            for name in RESOURCES:
                conn.pull(name, refresh=True, progress=False)
            before = len(ws.loads())
        env = dict(os.environ, **{f"TOOLKIT_TRANSLATION_{k.upper()}": str(v)
                                  for k, v in box.credentials("translation").items()})
        with open(reads, "w") as out:
            reader = subprocess.Popen([sys.executable, __file__, "--notebook", str(path), str(stop),
                                       str(notebook_every)], stdout=out, env=env)
            runs, end = [], time.monotonic() + seconds
            while time.monotonic() < end:
                tick = time.monotonic()
                box.advance(hours=1)
                done = subprocess.run([sys.executable, "-m", "toolkit.cli", "refresh", "--workspace", str(path)],
                                      env=env, capture_output=True, text=True)
                runs.append((done.returncode, round(time.monotonic() - tick, 2),
                             (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]))
                time.sleep(max(0.0, tick + cron_every - time.monotonic()))
            stop.touch()
            reader.wait(timeout=120)
        records = [json.loads(line) for line in reads.read_text().splitlines() if line.startswith("{")]
        with tk.Workspace(path, read_only=True) as ws:
            loads = ws.loads()
        commits = loads["commit_seconds"].dropna()
    finally:
        box.stop()
    failed_runs = [r for r in runs if r[0] != 0]
    failed_reads = [r for r in records if not r.get("ok")]
    longest_read = max((r["s"] for r in records), default=0.0)
    longest_commit = float(commits.max()) if len(commits) else 0.0
    codes: dict = {}
    for code, *_ in runs:
        codes[code] = codes.get(code, 0) + 1
    final = [r for r in records if r.get("final")]
    print(f"one machine, {seconds:.0f} s: a notebook reading every {notebook_every} s, a cron refresh every "
          f"{cron_every} s")
    print(f"  refreshes: {len(runs)} run, {len(failed_runs)} failed (exit codes {codes}); longest "
          f"{max((r[1] for r in runs), default=0):.2f} s")
    if failed_runs:
        print(f"  first failed refresh: exit {failed_runs[0][0]}: {failed_runs[0][2][0]}")
    print(f"  reads: {len(records)} made, {len(failed_reads)} failed; longest {longest_read:.3f} s, median "
          f"{sorted(r['s'] for r in records)[len(records) // 2] if records else 0:.3f} s")
    if failed_reads:
        print(f"  first failed read: {failed_reads[0].get('error')}")
    print(f"  commits: {len(commits)}, longest {longest_commit:.3f} s; the longest read waited "
          f"{longest_read - longest_commit:+.3f} s beyond it (goal: at most +1 s)")
    print(f"  loads: {before} before, {len(loads)} after; the notebook's last read saw "
          f"{final[-1].get('loads') if final else None} without reopening")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--notebook"]:
        notebook(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        main(*(float(a) for a in sys.argv[1:4]))
