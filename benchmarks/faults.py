"""The reliability sweep's faults, again: does each one hold (issue 39)?

    python benchmarks/faults.py [--tries N] [--minutes M] [--kinds kill9-file,disk-full,...]
    .venv-team/bin/python benchmarks/faults.py          # the lake's kinds too (DuckLake on PostgreSQL)

An embedded sandbox (seed 7) serves the translation service; every step that may fail runs as a
`toolkit` command in a process of its own, so that a raw traceback, an abort or a hang is seen as the
analyst would see it. Kinds (tries by default; --tries caps them):

  kill9-file, kill9-lake   a refresh killed with SIGKILL while it commits (x20); then a refresh must
                           succeed, no load stay "running", and (lake) no Parquet file be left that the
                           catalog does not list
  pg-restart, pg-terminate PostgreSQL stopped and started, or every backend ended by
                           pg_terminate_backend, during a refresh (x10): no abort, no traceback, exit 0,
                           1 or 75; then a refresh succeeds
  s3-500, s3-503, s3-drop, s3-down  the lake's data on moto's S3 behind a proxy that answers uploads 500
                           or 503, drops them, or is down for a while (x5 each): no traceback; a line
                           says "failed" only for a load the catalog did not commit
  writers                  5 refresh processes on one file workspace for --minutes (default 0.5):
                           every exit 0 or 75, no traceback, no load left "running"
  disk-full                an export to a full file system (a 300 kB tmpfs, or a file-size limit
                           where mounting is not allowed) (x5): a toolkit error, nothing left there
  corrupt-workspace, corrupt-snapshot, corrupt-stage  bytes overwritten or the file cut (x20): the
                           command reads what it can or says the file is damaged, in at most 3 lines
  bomb, endless, page-500mb, trickle, retry-after, depth  a hostile asset library on 127.0.0.1 answers
                           `toolkit pull asset_library tags` with a gzip page inflating to 4 GiB, a chunked
                           body that never ends, a 500 MB page, one byte every 5 s, Retry-After: 119, or
                           JSON nested 100,000 deep (x1, the real sizes and default limits, but the
                           deadline at 30 s and the longest wait at 60 s): one line and exit 1 within
                           the deadline, peak RSS under the limit plus 200 MiB (printed), the view intact

Printed: one row per kind (tries, held, failed, the first failure's reason), then the secrets check:
every byte printed here and by each command searched for the sandbox's secrets and the lake's password.
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import http.server
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import toolkit as tk

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ("submissions", "targets", "phases")
KINDS = ("kill9-file", "kill9-lake", "pg-restart", "pg-terminate", "s3-500", "s3-503", "s3-drop", "s3-down",
         "writers", "disk-full", "corrupt-workspace", "corrupt-snapshot", "corrupt-stage",
         "bomb", "endless", "page-500mb", "trickle", "retry-after", "depth")
TRIES = {"kill9-file": 20, "kill9-lake": 20, "pg-restart": 10, "pg-terminate": 10, "s3-500": 5, "s3-503": 5,
         "s3-drop": 5, "s3-down": 5, "writers": 1, "disk-full": 5, "corrupt-workspace": 20,
         "corrupt-snapshot": 20, "corrupt-stage": 20, "bomb": 1, "endless": 1, "page-500mb": 1, "trickle": 1,
         "retry-after": 1, "depth": 1}
PRINTED = io.StringIO()          # every byte this script and its commands print, for the secrets check


def say(line: str) -> None:
    PRINTED.write(line + "\n")
    print(line, flush=True)


class Bench:
    """The sandbox, a folder, the environment of each command, and what they printed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.box = tk.sandbox.start(seed=7)
        creds = folder / "credentials.json"
        creds.write_text(json.dumps({"translation": self.box.credentials("translation")}))
        creds.chmod(0o600)
        self.env = dict(os.environ, TOOLKIT_CREDENTIALS=str(creds), TOOLKIT_TYPING_HELPER="0",
                        TOOLKIT_WORKSPACE_WAIT="30", TOOLKIT_LAKE_RECONNECT="3")
        self.secrets: list[str] = list(self.box.secrets())
        self.outputs: list[bytes] = []
        self.notes: dict[str, int | str] = {}   # per kind: tries that met the fault, or what was measured

    def command(self, *args: str, timeout: float = 180, env: dict | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "toolkit.cli", *args], capture_output=True, env=env or self.env,
                              timeout=timeout, check=False)
        self.outputs += [done.stdout, done.stderr]
        return done

    def start(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "toolkit.cli", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env or self.env)

    def finish(self, proc: subprocess.Popen, timeout: float = 180) -> tuple[int, str]:
        out, err = proc.communicate(timeout=timeout)
        self.outputs += [out, err]
        return proc.returncode, (out + err).decode("utf-8", "replace")


def raw(rc: int, text: str) -> str | None:
    """Why a command's outcome is not one of toolkit's: an abort, a traceback, an unknown exit."""
    if rc < 0 and rc != -signal.SIGKILL:
        return f"killed by signal {-rc}"
    if "terminate called" in text:
        return "terminate called (C++ abort)"
    if "Traceback (most recent call last)" in text:
        lines = [line for line in text.splitlines() if line.strip()]
        return f"raw traceback: {lines[-1][:110] if lines else ''}"
    if rc not in (0, 1, 2, 75):
        return f"exit {rc}"
    return None


def workspace_args(where: str, data: str | None) -> list[str]:
    return ["--workspace", where, *(["--data-path", data] if data else [])]


def recovered(bench: Bench, where: str, data: str | None) -> str | None:
    """A refresh after the fault succeeds, and no load stays "running"."""
    bench.box.advance(hours=1)
    done = bench.command("refresh", *workspace_args(where, data), "translation")
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    why = raw(done.returncode, text)
    if why or done.returncode != 0:
        return f"the next refresh: {why or f'exit {done.returncode}: {text.strip().splitlines()[-1][:100]}'}"
    with tk.Workspace(where, data_path=data, read_only=True) as ws:
        running = int((ws.loads()["status"] == "running").sum())
    return f"{running} load(s) still running" if running else None


def orphans(where: str, data: str) -> int:
    """Parquet files under the lake's data path that its catalog does not list."""
    with tk.Workspace(where, data_path=data, read_only=True) as ws:
        listed = {Path(p).name for (p,) in ws.sql(
            "SELECT path FROM __ducklake_metadata_workspace.ducklake_data_file UNION ALL "
            "SELECT path FROM __ducklake_metadata_workspace.ducklake_delete_file").fetchall()}
    if data.startswith("s3://"):
        return -1
    return sum(1 for p in Path(data).rglob("*.parquet") if p.name not in listed)


# -- the kinds -----------------------------------------------------------------------------------------

def kill9(bench: Bench, where: str, data: str | None, tries: int) -> list[str | None]:
    results = []
    for i in range(tries):
        bench.box.advance(hours=1)
        proc = bench.start("refresh", *workspace_args(where, data), "translation", "--full")
        time.sleep(random.Random(i).uniform(0.3, 2.5))       # somewhere in its pulls and commits
        proc.send_signal(signal.SIGKILL)
        bench.finish(proc)
        why = recovered(bench, where, data)
        if why is None and data is not None:     # nobody writes now: every file the catalog lacks may go
            bench.command("lake", "clean", *workspace_args(where, data), "--older-than", "0")
            left = orphans(where, data)
            why = f"{left} orphan Parquet file(s) left after the next commit and a clean" if left > 0 else None
        results.append(why)
    return results


def pg_faults(bench: Bench, where: str, data: str, server, tries: int, terminate: bool) -> list[str | None]:
    results = []
    for i in range(tries):
        bench.box.advance(hours=1)
        proc = bench.start("refresh", *workspace_args(where, data), "translation", "--full")
        time.sleep(random.Random(i).uniform(0.2, 1.5))
        if terminate:
            server.run("psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", "-d",
                       "postgres", "-c", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                       "pid <> pg_backend_pid() AND backend_type = 'client backend'",
                       env=dict(os.environ, PGPASSWORD=server.password))
        else:
            server.halt()
            time.sleep(1.0)
            server.resume()
        rc, text = bench.finish(proc)
        results.append(raw(rc, text) or recovered(bench, where, data))
    return results


class FaultProxy(http.server.ThreadingHTTPServer):
    """Between DuckDB and moto: passes everything, or answers uploads 500/503, drops them, or drops all."""

    daemon_threads = True

    def __init__(self, upstream: int) -> None:
        self.upstream, self.mode = upstream, "ok"
        super().__init__(("127.0.0.1", 0), _Forward)


class _Forward(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _any(self) -> None:
        mode = self.server.mode
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if self.command in ("PUT", "POST") else b""
        upload = self.command in ("PUT", "POST")
        if mode == "down" or (mode == "drop" and upload):
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode in ("500", "503") and upload:
            self.send_response(int(mode))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        conn = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=60)
        conn.request(self.command, self.path, body=body, headers={k: v for k, v in self.headers.items()})
        answer = conn.getresponse()
        content = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(content)
        conn.close()

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any


def complete_loads(where: str, data: str, env: dict) -> set[tuple[str, str, str]]:
    """(service, resource, load_id) of the lake's complete loads, read with the object store's keys."""
    old = dict(os.environ)
    os.environ.update({k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL")})
    try:
        with tk.Workspace(where, data_path=data, read_only=True) as ws:
            loads = ws.loads()
    finally:
        os.environ.clear()
        os.environ.update(old)
    done = loads[loads.status == "complete"]
    return set(zip(done.service, done.resource, done.load_id, strict=True))


def s3_faults(bench: Bench, server, mode: str, tries: int) -> list[str | None]:
    import logging

    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)      # a line per request otherwise
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    proxy = FaultProxy(moto._server.server_port)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    env = dict(bench.env, AWS_ACCESS_KEY_ID="fault-key", AWS_SECRET_ACCESS_KEY="fault-secret-" + os.urandom(6).hex(),
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.server_port}")
    bench.secrets.append(env["AWS_SECRET_ACCESS_KEY"])
    import boto3
    boto3.client("s3", endpoint_url=f"http://127.0.0.1:{moto._server.server_port}", region_name="us-east-1",
                 aws_access_key_id="x", aws_secret_access_key="x").create_bucket(Bucket="lake")
    name = f"s3_{mode}"
    server.create_database(name)
    where, data = server.dsn(name), f"s3://lake/{mode}/"
    results: list[str | None] = []
    try:
        first = bench.command("pull", *workspace_args(where, data), "translation", *RESOURCES, env=env)
        if first.returncode:
            return [f"set-up pull failed: {first.stderr.decode()[-120:]}"] * tries
        for _ in range(tries):
            bench.box.advance(hours=1)
            before = complete_loads(where, data, env)
            proxy.mode = mode
            if mode == "down":
                threading.Timer(2.0, lambda: setattr(proxy, "mode", "ok")).start()
            done = bench.command("refresh", *workspace_args(where, data), "translation", "--full", env=env)
            proxy.mode = "ok"
            text = (done.stdout + done.stderr).decode("utf-8", "replace")
            why = raw(done.returncode, text)
            if why is None:      # a resource said failed whose load the catalog has committed
                committed = {f"{s}.{r}" for s, r, load_id in complete_loads(where, data, env) - before}
                said_failed = {line.split(":")[0] for line in text.splitlines() if ": failed:" in line}
                wrong = sorted(said_failed & committed)
                why = f"said failed, committed: {', '.join(wrong)}" if wrong else None
            results.append(why)
    finally:
        proxy.shutdown()
        moto.stop()
    return results


def writers(bench: Bench, minutes: float) -> list[str | None]:
    where = str(bench.folder / "writers.duckdb")
    bench.command("pull", "--workspace", where, "translation", *RESOURCES)
    end, results = time.monotonic() + 60 * minutes, []
    while time.monotonic() < end:
        bench.box.advance(hours=1)
        procs = [bench.start("refresh", "--workspace", where, "translation") for _ in range(5)]
        for proc in procs:
            rc, text = bench.finish(proc, timeout=600)
            results.append(raw(rc, text) or (f"exit {rc}: {text.strip().splitlines()[-1][:100]}"
                                             if rc not in (0, 75) else None))
    results.append(recovered(bench, where, None))
    return [next((r for r in results if r), None)]    # one try: the whole run


def disk_full(bench: Bench, where: str, tries: int) -> list[str | None]:
    full = bench.folder / "full"
    full.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(full)],
                             capture_output=True, check=False).returncode == 0
    env = dict(bench.env)
    prefix: list[str] = []
    if not mounted:   # a file-size limit is what a full disk looks like to one process (EFBIG)
        prefix = ["prlimit", "--fsize=300000"]
    results = []
    try:
        for i in range(tries):
            out = full / f"snap{i}.duckdb"
            cmd = [*prefix, sys.executable, "-m", "toolkit.cli", "export", "--workspace", where, "--history",
                   "--out", str(out)]
            done = subprocess.run(cmd, capture_output=True, env=env, timeout=180, check=False)
            bench.outputs += [done.stdout, done.stderr]
            text = (done.stdout + done.stderr).decode("utf-8", "replace")
            why = raw(done.returncode, text) if done.returncode != -signal.SIGXFSZ else "killed by SIGXFSZ"
            left = [p.name for p in full.iterdir()] if not out.exists() else []
            if why is None and done.returncode == 0 and out.exists():
                out.unlink()            # it fit: not a full disk; not counted against toolkit
                why = None
            elif why is None and left:
                why = f"left {left[0]}"
            elif why is None and len(done.stderr.decode().strip().splitlines()) > 3:
                why = "more than 3 lines"
            results.append(why)
    finally:
        if mounted:
            subprocess.run(["umount", str(full)], check=False)
    return results


def damage(path: Path, seed: int) -> None:
    pick = random.Random(seed)
    files = [p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()]
    target = pick.choice(files)
    size = target.stat().st_size
    with target.open("r+b") as file:
        if seed % 3 == 0:
            file.truncate(pick.randrange(0, max(1, size)))
        else:
            for _ in range(1 + seed % 5):
                file.seek(pick.randrange(0, max(1, size)))
                file.write(bytes(pick.randrange(256) for _ in range(pick.choice((1, 16, 4096)))))


def corrupt(bench: Bench, what: str, source: Path, tries: int) -> list[str | None]:
    results = []
    for i in range(tries):
        copy = bench.folder / f"{what}-{i}{source.suffix}"
        shutil.copy(source, copy)
        damage(copy, i)
        if what == "workspace":
            done = bench.command("show", "--workspace", str(copy))
        else:
            code = ("import sys, toolkit as tk\ntry:\n    s = tk.open_snapshot(sys.argv[1]); s.tables(); "
                    "s.loads(); s.read('translation', 'targets')\nexcept tk.ToolkitError as e:\n"
                    "    print(f'{type(e).__name__}: {e}', file=sys.stderr); sys.exit(2)\n")
            done = subprocess.run([sys.executable, "-c", code, str(copy)], capture_output=True, env=bench.env,
                                  timeout=120, check=False)
            bench.outputs += [done.stdout, done.stderr]
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        why = raw(done.returncode, text)
        if why is None and done.returncode and len(done.stderr.decode().strip().splitlines()) > 3:
            why = "more than 3 lines"
        results.append(why)
        copy.unlink()
    return results


def corrupt_stage(bench: Bench, tries: int) -> list[str | None]:
    """A pull killed once it staged batches on disk, one of them damaged, then pulled again: the rows
    must equal a clean pull's."""
    clean = bench.folder / "stage-clean.duckdb"
    bench.command("pull", "--workspace", str(clean), "translation", "phases")
    with tk.Workspace(clean, read_only=True) as ws:
        expected = ws.sql("SELECT count(*), sum(hash(t)) FROM translation.phases t").fetchone()
    # every batch staged on disk at once (a long pull's do, past 32 MB), by a pull slowed between pages
    child = ("import sys, time, toolkit.storage.stage as s\nadd = s.Stage.add\n"
             "def slow(self, table):\n    add(self, table); time.sleep(0.05)\n"
             "s.Stage.__init__.__defaults__ = (1,); s.Stage.add = slow\n"
             "from toolkit.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    results = []
    for i in range(tries):
        where = bench.folder / f"stage-{i}.duckdb"
        proc = subprocess.Popen([sys.executable, "-c", child, "pull", "--workspace", str(where), "translation",
                                 "phases"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=bench.env)
        staged: list[Path] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and proc.poll() is None and not staged:
            staged = [p for p in bench.folder.rglob("*.arrow") if p.stat().st_size > 0]
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        bench.finish(proc)
        if staged:
            damage(staged[0], i)
            bench.notes["corrupt-stage"] = bench.notes.get("corrupt-stage", 0) + 1
        done = bench.command("pull", "--workspace", str(where), "translation", "phases")
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        why = raw(done.returncode, text)
        if why is None and done.returncode == 0:
            with tk.Workspace(where, read_only=True) as ws:
                got = ws.sql("SELECT count(*), sum(hash(t)) FROM translation.phases t").fetchone()
            why = None if got == expected else f"rows differ from a clean pull ({got[0]} vs {expected[0]})"
        results.append(why)
    return results


# -- answers that cost too much (toolkit.http.limits) ---------------------------------------------------

def _hostile_answer(kind: str):
    """What the hostile asset library writes after the status line of every answer to /v1/tags."""
    import zlib

    def write(h, headers: dict, body_writer) -> None:
        for name, value in {"Content-Type": "application/json", **headers}.items():
            h.send_header(name, value)
        body_writer(h)

    if kind == "bomb":
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [packer.compress(b'{"data": [')] + [packer.compress(b" " * (1 << 20)) for _ in range(4096)]
        bomb = b"".join([*parts, packer.flush()])
        return 200, lambda h: write(h, {"Content-Encoding": "gzip", "Content-Length": str(len(bomb))},
                                   lambda h: (h.end_headers(), h.wfile.write(bomb)))
    if kind in ("endless", "page-500mb"):
        def chunks(h) -> None:
            h.end_headers()
            piece = b" " * (1 << 20)
            for _ in range(500 if kind == "page-500mb" else 10**9):
                h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            h.wfile.write(b"0\r\n\r\n")
        return 200, lambda h: write(h, {"Transfer-Encoding": "chunked"}, chunks)
    if kind == "trickle":
        def drip(h) -> None:
            h.end_headers()
            for _ in range(100_000):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(5)
        return 200, lambda h: write(h, {"Content-Length": "100000"}, drip)
    if kind == "retry-after":
        return 429, lambda h: write(h, {"Retry-After": "119", "Content-Length": "2"},
                                    lambda h: (h.end_headers(), h.wfile.write(b"{}")))
    deep = b'{"data": [{"id": "t1", "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
    return 200, lambda h: write(h, {"Content-Length": str(len(deep))}, lambda h: (h.end_headers(), h.wfile.write(deep)))


class _Hostile(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.server.honest:
            body = json.dumps({"data": [{"id": f"t{i}", "name": f"tag {i}"} for i in range(50)],
                               "pagination": {"hasMore": False, "cursor": None}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        status, writer = self.server.fault
        self.send_response(status)
        with contextlib.suppress(OSError):
            writer(self)


def answer_faults(bench: Bench, kind: str) -> list[str | None]:
    """One pull of the asset library's tags from a hostile server; what it printed, took and held."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads, server.honest, server.fault = True, True, _hostile_answer(kind)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    where = str(bench.folder / f"answers-{kind}.duckdb")
    env = dict(bench.env, TOOLKIT_ASSET_LIBRARY_BASE_URL=f"http://127.0.0.1:{server.server_port}/v1",
               TOOLKIT_ASSET_LIBRARY_API_KEY="hostile-key", TOOLKIT_ASSET_LIBRARY_WORKSPACE_ID="w1",
               TOOLKIT_REQUEST_DEADLINE="30", TOOLKIT_MAX_RETRY_AFTER="60")
    env.pop("TOOLKIT_CREDENTIALS", None)
    try:
        bench.command("pull", "--workspace", where, "asset_library", "tags", env=env)
        server.honest = False
        began = time.monotonic()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "toolkit.cli", "pull", "--workspace",
                               where, "asset_library", "tags"], capture_output=True, env=env, timeout=600, check=False)
        took = time.monotonic() - began
    finally:
        server.shutdown()
        server.server_close()
    bench.outputs += [done.stdout, done.stderr]
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    peak = int(lines[-1]) * 1024 if lines and lines[-1].isdigit() else 0
    said = [line for line in lines[:-1] if line.strip()]
    text = done.stdout.decode("utf-8", "replace") + "\n".join(said)
    with tk.Workspace(where, read_only=True) as ws:
        view = ws.sql("SELECT count(*) FROM asset_library.tags").fetchone()[0]
    bench.notes[kind] = f"peak RSS {peak / (1 << 20):,.0f} MiB, {took:.1f} s"
    limit = 256 << 20
    why = raw(done.returncode, text)
    if why is None and done.returncode != 1:
        why = f"exit {done.returncode}"
    if why is None and kind in ("bomb", "endless", "page-500mb") and peak > limit + (200 << 20):
        why = f"peak RSS {peak / (1 << 20):,.0f} MiB, past the limit and 200 MiB"
    if why is None and took > 45:
        why = f"took {took:.0f} s"
    if why is None and view != 50:
        why = f"the view holds {view} rows, not 50"
    if why is None and len(said) > 3:
        why = f"{len(said)} lines"
    return [why]


# -- the run -------------------------------------------------------------------------------------------

def lake_available() -> bool:
    from toolkit.storage import extensions
    return extensions.wheel_file("ducklake") is not None and extensions.wheel_file("postgres") is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=None, help="at most this many tries of each kind")
    parser.add_argument("--minutes", type=float, default=0.5, help="how long the 5 writers run (default 0.5)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, of: " + ", ".join(KINDS))
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    tries = {k: min(TRIES[k], args.tries) if args.tries else TRIES[k] for k in kinds}
    folder = Path(tempfile.mkdtemp(prefix="toolkit-faults-"))
    # a SIGTERM unwinds like Ctrl-C, so that PostgreSQL, the tmpfs and the folder go with the run
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    bench = Bench(folder)
    rows: list[tuple[str, int, int, int, str]] = []
    server = None
    began = time.monotonic()
    try:
        where = str(folder / "ws.duckdb")
        bench.command("pull", "--workspace", where, "translation", *RESOURCES)
        snapshot = folder / "snap.duckdb"
        bench.command("export", "--workspace", where, "--history", "--out", str(snapshot))
        lake_kinds = [k for k in kinds if k.startswith(("kill9-lake", "pg-", "s3-"))]
        if lake_kinds and lake_available():
            sys.path.insert(0, str(ROOT / "tests" / "team"))
            from local_postgres import LocalPostgres, binaries
            if binaries() is not None:
                server = LocalPostgres(binaries())
                server.start()
                bench.secrets.append(server.password)
        for kind in kinds:
            n = tries[kind]
            if kind in lake_kinds and server is None:
                rows.append((kind, 0, 0, 0, "skipped: no team environment (.venv-team) or PostgreSQL"))
                continue
            lake_name = kind.replace("-", "_")
            if kind in ("kill9-lake", "pg-restart", "pg-terminate"):
                server.create_database(lake_name)
                lake_where, lake_data = server.dsn(lake_name), str(folder / f"{lake_name}-data")
                Path(lake_data).mkdir()
                bench.command("pull", *workspace_args(lake_where, lake_data), "translation", *RESOURCES)
            if kind == "kill9-file":
                results = kill9(bench, where, None, n)
            elif kind == "kill9-lake":
                results = kill9(bench, lake_where, lake_data, n)
            elif kind in ("pg-restart", "pg-terminate"):
                results = pg_faults(bench, lake_where, lake_data, server, n, kind == "pg-terminate")
            elif kind.startswith("s3-"):
                results = s3_faults(bench, server, kind[3:], n)
            elif kind == "writers":
                results = writers(bench, args.minutes)
            elif kind == "disk-full":
                results = disk_full(bench, where, n)
            elif kind == "corrupt-stage":
                results = corrupt_stage(bench, n)
            elif kind in ("bomb", "endless", "page-500mb", "trickle", "retry-after", "depth"):
                results = answer_faults(bench, kind)
            else:
                results = corrupt(bench, kind.split("-")[1], Path(where) if kind.endswith("workspace") else snapshot, n)
            failed = [r for r in results if r]
            rows.append((kind, len(results), len(results) - len(failed), len(failed), failed[0] if failed else ""))
            print(f"  {kind}: {rows[-1][2]} of {rows[-1][1]} held", flush=True)   # what a stopped run had
    finally:
        if server is not None:
            server.stop()
        bench.box.stop()
        shutil.rmtree(folder, ignore_errors=True)
    say(f"faults ({time.monotonic() - began:.0f} s; toolkit at {Path(tk.__file__).parent})")
    say(f"{'kind':<18} {'tries':>5} {'held':>5} {'failed':>6}  first failure")
    for kind, n, held, failed, first in rows:
        note = bench.notes.get(kind)
        met = f"({note}) " if isinstance(note, str) else \
            f"(a staged batch damaged in {note}) " if note is not None else ""
        say(f"{kind:<18} {n:>5} {held:>5} {failed:>6}  {met}{first[:120]}")
    printed = b"".join(bench.outputs) + PRINTED.getvalue().encode()
    found = sorted({s[:4] + "…" for s in bench.secrets if len(s) >= 6 and s.encode() in printed})
    print(f"secrets: {len(bench.secrets)} searched in {len(printed):,} bytes printed; "
          f"{len(found)} found{': ' + ', '.join(found) if found else ''}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
