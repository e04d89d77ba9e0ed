"""The faults a workspace meets, each repeated, and whether it held: kills, lost catalogs, full disks,
damaged files, writers at once. Prints a table (kind, tries, held, failed) and searches every byte it
printed or was told for a secret.

    python benchmarks/faults.py [--tries N] [--writers-seconds S] [--only KIND ...]

File kinds run anywhere; the lake kinds need the team environment (`.venv-team`: DuckDB 1.5.5 with the
DuckLake and PostgreSQL extensions) and Debian's PostgreSQL, and say "not run" elsewhere. Held means:
  kill-commit-*     the pull killed (SIGKILL) at its commit, or as near as it can be seen, then a new
                    pull: no load left running, the views readable throughout, the view equal to an
                    uninterrupted pull of the same sandbox
  pg-restart, pg-terminate   PostgreSQL stopped and started, or every connection of the lake ended
                    (pg_terminate_backend), under a refresh in a process of its own: the process ends by
                    itself (no abort), each resource ok or failed in toolkit's words, and the next
                    refresh equal to a fresh pull
  writers-*         5 processes refreshing at once while the sandbox's clock moves: none crashes, and
                    after a last refresh every view equals a fresh pull
  disk-full         an export to a 300 kB file system (root only): a WorkspaceError, nothing left there
  damaged-*         bytes flipped in a workspace file, a snapshot, a checkpoint's batch: found out and said
                    in toolkit's words (the checkpoint discarded, the pull equal to an uninterrupted one)
  object-store      (lake, data on a local S3 server behind a proxy that answers 500 or 503 to a share of
                    uploads or drops the connection): each load complete or failed, as the next read of
                    `_loads` says, and the view equal to a fresh pull after a clean refresh
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import defaultdict
from pathlib import Path

import toolkit as tk

HERE = Path(__file__).resolve().parent
NAMES = ("submissions", "targets", "phases")
# a toolkit from before WorkspaceDamagedError (the "before" table) raised DuckDB's own errors instead
DAMAGED = getattr(tk, "WorkspaceDamagedError", None) or type("NeverRaised", (Exception,), {})
SAID = io.StringIO()        # every byte printed, and every error's text: searched for secrets at the end
CHILD = r"""
import json, sys, os
import toolkit as tk
job = json.loads(sys.argv[1])
ws = tk.Workspace(job["workspace"], data_path=job.get("data"))
tm = ws.connect("translation", **job["credentials"])
print("ready", flush=True)
if job["do"] == "pull":
    for name in job["names"]:
        tm.pull(name, refresh=True, progress=False)
else:
    import time
    until = time.monotonic() + job.get("seconds", 0)
    while True:
        done = ws.refresh(progress=False, say=lambda line: print(line, flush=True))
        print("RESULT " + json.dumps(sorted(set(done["kind"]))), flush=True)
        if time.monotonic() >= until:
            break
ws.close()
"""


def say(text: str) -> None:
    print(text, flush=True)
    SAID.write(text + "\n")


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.notes: dict[str, list[str]] = defaultdict(list)

    def count(self, kind: str, held: bool, note: str = "") -> None:
        row = self.rows[kind]
        row[0] += 1
        row[1 if held else 2] += 1
        if note and not held:
            self.notes[kind].append(note[:300])
            SAID.write(note + "\n")

    def skip(self, kind: str, why: str) -> None:
        self.notes[kind].append(f"not run: {why}")
        self.rows.setdefault(kind, [0, 0, 0])


def view(ws, name: str):
    import pandas as pd
    frame = ws.sql(f"SELECT * FROM translation.{name}").df()
    key = "id" if "id" in frame.columns else list(frame.columns)[0]
    frame = frame.astype("string").fillna("<NA>")
    return frame[sorted(frame.columns)].sort_values(key).reset_index(drop=True) if len(frame) else pd.DataFrame()


def equal_to_fresh(ws, box, names=NAMES) -> list[str]:
    """The views that differ from a fresh in-memory pull of the same sandbox."""
    fresh = tk.Workspace()
    tm = fresh.connect("translation", **box.credentials("translation"))
    differing = []
    for name in names:
        tm.pull(name, progress=False)
        if not view(ws, name).equals(view(fresh, name)):
            differing.append(name)
    fresh.close()
    return differing


def child(job: dict, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(job)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})})


def output(proc: subprocess.Popen) -> str:
    text = proc.stdout.read() if proc.stdout else ""
    SAID.write(text)
    return text


# -- kills ---------------------------------------------------------------------------------------------

def kill_at_commit(tally: Tally, kind: str, box, workspace: str, data: str | None, tries: int, rng) -> None:
    job = {"workspace": workspace, "data": data, "credentials": box.credentials("translation"),
           "do": "pull", "names": list(NAMES)}
    with tk.Workspace(workspace, data_path=data) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in NAMES:
            tm.pull(name, progress=False)
    note = Path(workspace).parent / f".{Path(workspace).name}.holder" if data is None else None
    for _ in range(tries):
        box.advance(hours=1)
        proc = child(job)
        proc.stdout.readline()
        deadline = time.monotonic() + rng.uniform(0.05, 2.5)
        while time.monotonic() < deadline and proc.poll() is None:
            if note is not None and "committing" in (note.read_text() if note.exists() else ""):
                break        # the file says a commit holds it: kill it now
            time.sleep(0.002)
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        output(proc)
        try:
            with tk.Workspace(workspace, data_path=data) as ws:
                for name in NAMES:
                    view(ws, name)                 # readable after the kill
                tm = ws.connect("translation", **box.credentials("translation"))
                for name in NAMES:
                    tm.pull(name, progress=False)
                running = int((ws.loads()["status"] == "running").sum())
                differing = equal_to_fresh(ws, box)
            tally.count(kind, not running and not differing, f"running={running} differing={differing}")
        except Exception as error:
            tally.count(kind, False, f"{type(error).__name__}: {error}")


# -- the lake's catalog ----------------------------------------------------------------------------------

def catalog_faults(tally: Tally, box, postgres, database: str, data: str, tries: int, rng, kinds) -> None:
    workspace = postgres.dsn(database)
    with tk.Workspace(workspace, data_path=data) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in NAMES:
            tm.pull(name, progress=False)
    job = {"workspace": workspace, "data": data, "credentials": box.credentials("translation"), "do": "refresh"}
    for kind in kinds:
        for _ in range(tries):
            box.advance(hours=1)
            proc = child(job, {"TOOLKIT_LAKE_RECONNECT": "3"})
            proc.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.6))
            if kind == "pg-restart":
                postgres.halt()
                time.sleep(rng.uniform(0.2, 1.5))
                postgres.resume()
            else:
                postgres.run("psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(postgres.port), "-U", "postgres",
                             "-d", "postgres", "-c", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             f"WHERE datname = '{database}' AND pid <> pg_backend_pid()",
                             env=dict(os.environ, PGPASSWORD=postgres.password))
            try:
                code = proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = "hung"
            text = output(proc)
            raw = [line for line in text.splitlines() if line.startswith(("Traceback", "terminate called"))]
            if os.environ.get("TOOLKIT_FAULTS_VERBOSE") and (raw or code != 0):
                print(text[-3000:])
            try:
                with tk.Workspace(workspace, data_path=data) as ws:
                    ws.connect("translation", **box.credentials("translation"))
                    ws.refresh(progress=False, say=lambda line: None)
                    differing = equal_to_fresh(ws, box)
            except Exception as error:
                differing = [f"{type(error).__name__}: {error}"]
            held = code == 0 and not raw and not differing
            tally.count(kind, held, f"exit {code}, {raw[:1]}, differing={differing}")


# -- writers at once -------------------------------------------------------------------------------------

def writers(tally: Tally, kind: str, box, workspace: str, data: str | None, seconds: float) -> None:
    with tk.Workspace(workspace, data_path=data) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in NAMES:
            tm.pull(name, progress=False)
    job = {"workspace": workspace, "data": data, "credentials": box.credentials("translation"),
           "do": "refresh", "seconds": seconds}
    procs = [child(job) for _ in range(5)]
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        time.sleep(2)
        box.advance(hours=1)
    codes = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=seconds + 300))
        except subprocess.TimeoutExpired:
            proc.kill()
            codes.append("hung")
        output(proc)
    with tk.Workspace(workspace, data_path=data) as ws:
        ws.connect("translation", **box.credentials("translation"))
        ws.refresh(progress=False, say=lambda line: None)
        differing = equal_to_fresh(ws, box)
    tally.count(kind, all(c == 0 for c in codes) and not differing, f"exits {codes}, differing={differing}")


# -- disks and damaged files -------------------------------------------------------------------------------

def disk_full(tally: Tally, box, folder: Path, tries: int) -> None:
    tiny = folder / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(tiny)], capture_output=True).returncode:
        tally.skip("disk-full", "a small file system needs mount (root)")
        return
    try:
        with tk.Workspace(folder / "big.duckdb") as ws:
            tm = ws.connect("translation", **box.credentials("translation"))
            for name in NAMES:
                tm.pull(name, progress=False)
            for i in range(tries):
                try:
                    ws.export(tiny / f"snap-{i}.duckdb")
                    tally.count("disk-full", False, "the export fitted: no fault")
                except tk.WorkspaceError as error:
                    SAID.write(str(error))
                    tally.count("disk-full", "no space left" in str(error) and not list(tiny.iterdir()),
                                f"{error}; left {list(tiny.iterdir())}")
                except Exception as error:
                    tally.count("disk-full", False, f"raw {type(error).__name__}: {error}")
    finally:
        subprocess.run(["umount", str(tiny)], capture_output=True)


def damaged_files(tally: Tally, box, folder: Path, tries: int, rng) -> None:
    source, snapshot = folder / "whole.duckdb", folder / "whole-snap.duckdb"
    with tk.Workspace(source) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in NAMES:
            tm.pull(name, progress=False)
        ws.export(snapshot)
    for kind, original in (("damaged-workspace", source), ("damaged-snapshot", snapshot)):
        for i in range(tries):
            copy = folder / f"{kind}-{i}.duckdb"
            shutil.copy(original, copy)
            data = bytearray(copy.read_bytes())
            for _ in range(8):
                data[rng.randrange(len(data))] ^= 0xFF
            copy.write_bytes(bytes(data))
            try:
                if kind == "damaged-workspace":
                    with tk.Workspace(copy, read_only=True) as ws:
                        ws.tables()
                        for name in NAMES:
                            ws.read("translation", name)
                else:
                    with tk.open_snapshot(copy) as snap:
                        snap.tables()
                        for name in NAMES:
                            snap.read("translation", name)
                tally.count(kind, False, "read without a word")
            except DAMAGED as error:
                SAID.write(str(error))
                tally.count(kind, True)
            except Exception as error:
                tally.count(kind, False, f"raw {type(error).__module__}.{type(error).__name__}: {error}")


STAGE_CHILD = r"""
import json, sys
import toolkit as tk
job = json.loads(sys.argv[1])
with tk.Workspace(job["workspace"]) as ws:
    conn = ws.connect("asset_library", **job["credentials"])
    print("ready", flush=True)
    conn.pull("versions", refresh=True, progress=False)
"""


def damaged_stage(tally: Tally, folder: Path, tries: int, rng) -> None:
    with tk.sandbox.start(seed=11, enforce_limits=False) as box:
        whole = tk.Workspace()
        conn = whole.connect("asset_library", **box.credentials("asset_library"))
        conn.pull("assets", progress=False)
        expected = len(conn.fetch("versions", refresh=True, progress=False))
        whole.close()
        for i in range(tries):
            path = folder / f"stage-{i}" / "ws.duckdb"
            path.parent.mkdir()
            with tk.Workspace(path) as ws:
                ws.connect("asset_library", **box.credentials("asset_library")).pull("assets", progress=False)
            proc = subprocess.Popen([sys.executable, "-c", STAGE_CHILD, json.dumps(
                {"workspace": str(path), "credentials": box.credentials("asset_library")})],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env={**os.environ, "TOOLKIT_CHECKPOINT_SECONDS": "0"})
            proc.stdout.readline()
            start = box.stats()["requests"]
            while proc.poll() is None and box.stats()["requests"] - start < 150:
                time.sleep(0.002)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            output(proc)
            batches = sorted(path.parent.glob(".toolkit-stage-*/*.arrow"))
            if not batches:
                tally.count("damaged-stage", False, "the killed pull left no checkpoint to damage")
                continue
            hurt = batches[rng.randrange(len(batches))]
            data = bytearray(hurt.read_bytes())
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            hurt.write_bytes(bytes(data))
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), tk.Workspace(path) as ws:
                    conn = ws.connect("asset_library", **box.credentials("asset_library"))
                    result = conn.pull("versions", refresh=True, progress=False)
                    rows = len(ws.read("asset_library", "versions"))
                SAID.write(err.getvalue())
                said = "damaged" in err.getvalue()
                tally.count("damaged-stage", said and result.resumed == 0 and rows == expected,
                            f"said={said} resumed={result.resumed} rows={rows}/{expected}")
            except Exception as error:
                tally.count("damaged-stage", False, f"{type(error).__name__}: {error}")


# -- object storage ------------------------------------------------------------------------------------------

class FaultyProxy:
    """An HTTP proxy before a local S3 server answering 500 or 503 to a share of the uploads (PUT, POST),
    or dropping their connection, while `faulty` is set."""

    def __init__(self, target: str, rate: float, rng) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        import requests
        self.faulty, self.faults = False, defaultdict(int)
        proxy, http = self, requests.Session()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if proxy.faulty and self.command in ("PUT", "POST") and rng.random() < rate:
                    fault = rng.choice(["500", "503", "drop"])
                    proxy.faults[fault] += 1
                    if fault == "drop":
                        self.close_connection = True
                        self.connection.close()
                        return
                    self.send_response(int(fault))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                answer = http.request(self.command, target + self.path, data=body, headers={
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")})
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()


def object_store(tally: Tally, box, postgres, tries: int, rng) -> None:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        tally.skip("object-store", "moto is not installed (the team-tests extra)")
        return
    import logging
    logging.getLogger("werkzeug").setLevel(logging.ERROR)     # moto's server logs every request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    proxy = FaultyProxy(f"http://{host}:{port}", 0.3, rng)
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret-9f3e",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": proxy.url}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import boto3
        boto3.client("s3", endpoint_url=f"http://{host}:{port}").create_bucket(Bucket="lake")
        postgres.create_database("s3lake")
        workspace, data = postgres.dsn("s3lake"), "s3://lake/data/"
        with tk.Workspace(workspace, data_path=data) as ws:
            tm = ws.connect("translation", **box.credentials("translation"))
            for name in NAMES:
                tm.pull(name, progress=False)
            for _ in range(tries):
                box.advance(hours=1)
                before = set(ws.loads()["load_id"])
                proxy.faulty = True
                try:
                    done = ws.refresh(progress=False, say=lambda line: SAID.write(line + "\n"))
                    raised = None
                except Exception as error:
                    done, raised = None, f"{type(error).__name__}: {error}"
                proxy.faulty = False
                loads = ws.loads()
                new = loads[~loads.load_id.isin(before)]
                committed = {f"translation.{r}" for r in new[new.status == "complete"].resource}
                # what refresh said of each load is what `_loads` holds now
                mis_told = [] if done is None else [
                    (row.resource, row.kind) for row in done.itertuples()
                    if row.kind not in ("cached", "skipped") and (row.kind == "failed") == (row.resource in committed)]
                ws.refresh(progress=False, say=lambda line: None)
                differing = equal_to_fresh(ws, box)
                tally.count("object-store", raised is None and not mis_told and not differing,
                            f"raised={raised} mis-told={mis_told} differing={differing}")
        say(f"  object-store faults injected: {dict(proxy.faults)}")
    except Exception as error:
        tally.count("object-store", False, f"{type(error).__name__}: {error}")
    finally:
        proxy.server.shutdown()
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# -- the run ---------------------------------------------------------------------------------------------

def lake_ready() -> str | None:
    from toolkit.storage import extensions
    if extensions.wheel_file("ducklake") is None or extensions.wheel_file("postgres") is None:
        return "not the team environment (.venv-team)"
    sys.path.insert(0, str(HERE.parent / "tests" / "team"))
    from local_postgres import binaries
    return None if binaries() is not None else "no PostgreSQL (Debian's postgresql)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10, help="tries of each kind (kills at commit: twice this)")
    parser.add_argument("--writers-seconds", type=float, default=30.0, help="how long the 5 writers refresh")
    parser.add_argument("--only", nargs="*", default=None, help="the kinds to run (prefixes)")
    args = parser.parse_args()
    wanted = lambda kind: args.only is None or any(kind.startswith(p) for p in args.only)  # noqa: E731
    rng = random.Random(7)
    tally = Tally()
    folder = Path(tempfile.mkdtemp(prefix="toolkit-faults-"))
    secrets: list[str] = []
    os.environ.setdefault("TOOLKIT_TYPING_HELPER", "0")
    try:
        with tk.sandbox.start(seed=5) as box:
            secrets += box.secrets()
            if wanted("kill-commit-file"):
                kill_at_commit(tally, "kill-commit-file", box, str(folder / "killed.duckdb"), None, 2 * args.tries, rng)
            if wanted("writers-file"):
                writers(tally, "writers-file", box, str(folder / "writers.duckdb"), None, args.writers_seconds)
            if wanted("disk-full"):
                disk_full(tally, box, folder, args.tries)
            if wanted("damaged"):
                damaged_files(tally, box, folder, 2 * args.tries, rng)
            why = lake_ready()
            lake_kinds = ("kill-commit-lake", "pg-restart", "pg-terminate", "writers-lake", "object-store")
            if why:
                for kind in lake_kinds:
                    if wanted(kind):
                        tally.skip(kind, why)
            elif any(wanted(kind) for kind in lake_kinds):
                from local_postgres import LocalPostgres, binaries
                postgres = LocalPostgres(binaries())
                postgres.start()
                secrets.append(postgres.password)
                try:
                    if wanted("kill-commit-lake"):
                        postgres.create_database("killed")
                        kill_at_commit(tally, "kill-commit-lake", box, postgres.dsn("killed"), str(folder / "k-data"),
                                       2 * args.tries, rng)
                    kinds = [kind for kind in ("pg-restart", "pg-terminate") if wanted(kind)]
                    if kinds:
                        postgres.create_database("faults")
                        catalog_faults(tally, box, postgres, "faults", str(folder / "f-data"), args.tries, rng, kinds)
                    if wanted("writers-lake"):
                        postgres.create_database("writers")
                        writers(tally, "writers-lake", box, postgres.dsn("writers"), str(folder / "w-data"),
                                args.writers_seconds)
                    if wanted("object-store"):
                        object_store(tally, box, postgres, args.tries, rng)
                finally:
                    postgres.stop()
        if wanted("damaged-stage"):
            damaged_stage(tally, folder, args.tries, rng)
    except Exception:
        say("the fault script itself failed:\n" + traceback.format_exc())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    say(f"{'kind':<20}{'tries':>6}{'held':>6}{'failed':>8}")
    for kind, (tries, held, failed) in tally.rows.items():
        say(f"{kind:<20}{tries:>6}{held:>6}{failed:>8}")
    for kind, notes in tally.notes.items():
        for note in sorted(set(notes))[:3]:
            say(f"  {kind}: {note}")
    found = [s for s in secrets if s and len(s) >= 4 and s in SAID.getvalue()]
    say(f"secrets in what was printed or told: {len(found)} (of {len(secrets)} searched)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
