"""What a new analyst reads after 81 typical mistakes, before and after issue 28 (the first 41) and
issue 35 (the 28 after them, run against 4235939; the last two, an interrupted refresh, against
6bd8cbb), and issue 45's first hour (the last 12, named "(issue 45)": `--before 8873e88 --only
"issue 45"`): the message and its length, how many lines a notebook shows for it (the error's `_render_traceback_`, else the whole
traceback) and how many requests reached the sandbox first.

    .venv/bin/python benchmarks/mistakes.py                  # after (this tree) against c0d4f47
    .venv/bin/python benchmarks/mistakes.py --before REV     # against another commit
    .venv/bin/python benchmarks/mistakes.py --json           # this tree only, as JSON
    .venv/bin/python benchmarks/mistakes.py --only refresh   # the mistakes whose name holds "refresh"

"Before" runs this same file in a child process over `git archive REV`, unpacked in a temporary folder
first on the child's path. Everything runs against embedded sandboxes on 127.0.0.1; the CLI cases run
`python -c "from toolkit.cli import main; ..."` with the same path.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BEFORE = "c0d4f47"

# (what the analyst did, the code they ran); the names below are set up by `world()`
MISTAKES: list[tuple[str, str]] = [
    ("service name misspelt (connect)", "tk.connect('translaton', **creds['translation'])"),
    ("service name misspelt (ws.connect)", "ws.connect('audience', **creds['audience_platform'])"),
    ("service name misspelt (tk.actions)", "tk.actions('translaton')"),
    ("service name misspelt (tk.resources)", "tk.resources('translaton')"),
    ("resource name: singular", "tm.fetch('target')"),
    ("resource name misspelt", "tm.fetch('submisions')"),
    ("resource of another service", "tm.fetch('assets')"),
    ("action name misspelt", "tm.call('translation.get_submision', submission_id=1001)"),
    ("credential name misspelt", "tk.connect('asset_library', base_url='http://127.0.0.1:9/v1', api_kye='k', "
                                 "workspace_id='w')"),
    ("action of another service", "tm.call('asset_library.list_tags')"),
    ("param name misspelt (call)", "tm.call('translation.get_submission', submision_id=1001)"),
    ("param name misspelt (method)", "tm.get_submission(submision_id=1001)"),
    ("filter name misspelt (fetch)", "tm.fetch('targets', statuss=['READY'])"),
    ("required param missing", "tm.call('translation.get_submission')"),
    ("bad choice in a fetch filter (parent not held)", "fresh_tm.fetch('targets', status=['DONE'])"),
    ("bad choice in a call", "tm.call('translation.list_submissions', status='DONE')"),
    ("number out of range", "al.call('asset_library.list_assets', limit=900)"),
    ("text where a number goes", "al.call('asset_library.list_assets', limit='ten')"),
    ("integer id given as text", "tm.call('translation.get_submission', submission_id='abc')"),
    ("id the service does not have", "tm.call('translation.get_submission', submission_id=999999)"),
    ("UUID the service does not have", "al.call('asset_library.get_asset', asset_id='0000-nope')"),
    ("fan-out without its ids", "cdp.fetch('memberships')"),
    ("fan-out over ids the service lacks", "cdp.fetch('memberships', profile_ids=['nope-1', 'nope-2'])"),
    ("view not fetched yet", "ws.sql('select * from translation.phases').df()"),
    ("view name misspelt", "ws.sql('select * from translation.targetz').df()"),
    ("view of a service not connected", "ws.sql('select * from media_review.teams').df()"),
    ("as_of a load that does not exist", "ws.as_of('translation.submissions', 'nope')"),
    ("history of a resource not held", "ws.history('translation.quotes')"),
    ("no sandbox running (call)", "down_tm.call('translation.get_submission', submission_id=1001)"),
    ("no sandbox running (fetch fan-out)", "down_tm.fetch('targets', submission_ids=list(range(1001, 1081)))"),
    ("no sandbox running (asset library)", "down_al.fetch('tags')"),
    ("wrong password", "wrong_tm.call('translation.get_submission', submission_id=1001)"),
    ("wrong API key", "wrong_al.call('asset_library.list_tags')"),
    ("wrong token", "wrong_mr.fetch('teams')"),
    ("credentials missing", "tk.connect('asset_library', base_url=creds['asset_library']['base_url'])"),
    ("form for a read action", "tm.form('translation.get_submission')"),
    ("snapshot that does not exist", "tk.open_snapshot('/nonexistent/snapshot.duckdb')"),
    ("CLI: actions of a misspelt service", "cli('actions', 'translaton')"),
    ("CLI: resources of a misspelt service", "cli('resources', 'translaton')"),
    ("CLI: pull a misspelt resource", "cli('pull', 'translation', 'target', '--workspace', scratch)"),
    ("CLI: pull a fan-out without ids", "cli('pull', 'audience_platform', 'memberships', '--workspace', scratch)"),
]

# issue 35 items 3-6 and issue 39 item 7's credentials files and paths (issue-35b)
MISTAKES += [
    ("ws.connect beside a cron job's TOOLKIT_CREDENTIALS", "credentials_file(json.dumps(creds))"),
    ("credentials file: not UTF-8", "credentials_file(b'\\xff\\xfe{}')"),
    ("credentials file: 100,000 deep", "credentials_file('[' * 100_000)"),
    ("credentials file: a number for base_url", "credentials_file(json.dumps({'asset_library': {'base_url': 5}}))"),
    ("credentials file: a file:// base URL", "credentials_file(json.dumps({'asset_library': "
                                              "{**creds['asset_library'], 'base_url': 'file:///etc/passwd'}}))"),
    ("CLI: credentials file is a FIFO", "cli('call', 'asset_library.list_tags', '--credentials', fifo, timeout=10)"),
    ("workspace in a folder that does not exist", "tk.Workspace(os.path.join(folder, 'missing-dir', 'x.duckdb'))"),
    ("workspace path with a backslash", "tk.Workspace(os.path.join(folder, 'a\\\\b.duckdb'))"),
    ("export to a path with ?", "held.export(os.path.join(folder, 'snap?.duckdb'))"),
    ("snapshot: a folder that is none", "tk.open_snapshot(folder)"),
    ("export onto an existing file", "held.export(existing)"),
    ("open_snapshot of a workspace", "tk.open_snapshot(other_path)"),
    ("view whose loads all failed", "failed_ws.sql('select * from asset_library.tags')"),
    ("CLI: export --wait", "cli('export', '--workspace', other_path, '--out', os.path.join(folder, 's2.duckdb'), "
                           "'--wait', '5')"),
    ("Ctrl-C halfway through a fan-out (notebook)", "ctrl_c()"),
    ("CLI: SIGINT halfway through a fan-out", "cli_interrupted()"),
]


# --- issue 35 items 1-2 and issue 39 item 7 (branch issue-35a): values of the wrong kind -----------------
# Each was sent (a request per character of a lone id), a raw ValueError/TypeError, or a 404 after a
# request the catalog could have refused; `--before 4235939` gives the figures before.
MISTAKES += [
    ("a lone profile id where a list goes", "cdp.fetch('memberships', profile_ids='0dafbbf9-365b-44ac-8d31-"
                                            "ea12e0d04796', progress=False)"),
    ("a lone submission id where a list goes", "tm.fetch('targets', submission_ids=1001, progress=False)"),
    ("a word for an integer id (method)", "tm.get_submission(submission_id='first')"),
    ("a word among integer ids (fetch)", "tm.fetch('targets', submission_ids=[1001, 'first'])"),
    ("a number that is no id where ids go", "tm.fetch('targets', submission_ids=5.5)"),
    ("max_age as the CLI takes it", "tm.fetch('submissions', max_age='1h', progress=False)"),
    ("max_age that is no duration", "tm.fetch('submissions', max_age='soon')"),
    ("an integer wider than 64 bits in a filter", "al.fetch('assets', created_at_gte=-2**63 - 1)"),
    ("a filter property that is no name", "tk.F(5) == 'alert'"),
    ("no worker threads", "tm.fetch('submissions', workers=0, refresh=True)"),
]

# --- issue 35 item 3 for a refresh (branch issue-35c): Ctrl-C let every service's worker pull to its end,
# then a bare KeyboardInterrupt (the notebook's traceback) or "toolkit refresh: interrupted"
MISTAKES += [
    ("Ctrl-C halfway through a refresh (notebook)", "refresh_ctrl_c()"),
    ("CLI: SIGTERM halfway through a refresh", "cli_refresh_interrupted()"),
]

# --- issue 45: an analyst's first hour from a fresh clone; before: against 8873e88 -----------------------
MISTAKES += [
    ("(issue 45) CLI: a cron refresh with nothing connected", "cli_bare('refresh', '--workspace', held_path)"),
    ("(issue 45) CLI: a cron refresh whose every resource fails",
     "cli('refresh', '--workspace', held_path, '--credentials', gone_file)"),
    ("(issue 45) CLI: toolkit sandbox on a port already taken", "sandbox_on_a_taken_port()"),
    ("(issue 45) a list of resources to fetch", "tm.fetch(['targets', 'phases'])"),
    ("(issue 45) a misspelt method", "tm.get_submision(submission_id=1001)"),
    ("(issue 45) 1e400 in an offset walk typed by the helper", "offset_walk_with_1e400()"),
    ("(issue 45) a frame with lists and zoned times to Excel", "tk.save(audiences, os.path.join(folder, 'a.xlsx'))"),
    ("(issue 45) .plot() of zoned times with gaps", "tk.plottable(targets).plot()"),
    ("(issue 45) the stored record of an interrupted pull", "interrupted_record()"),
    ("(issue 45) CLI: a workspace not there, from another folder", "cli('show', '--workspace', 'reporting.duckdb')"),
    ("(issue 45) CLI: the doctor's clock skew against the sandbox", "cli_skew()"),
    ("(issue 45) CLI: lake init --print-sql for roles etl and viewer", "cli_last('lake', 'init', "
     "'ducklake:postgres:dbname=lake host=db.internal port=5432 user=postgres', '--writer', 'etl', '--reader', "
     "'viewer', '--print-sql')"),
]


def _first_hour(tk, box, creds: dict, scratch: str, cli, edges: dict) -> dict:
    """The names issue 45's cases use: a workspace a cron refreshes, a stopped sandbox's credentials, a
    port taken, a page holding 1e400, the record an interrupt leaves."""
    import signal
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    folder = tempfile.mkdtemp(prefix="first-hour-", dir=scratch)
    held_path = os.path.join(folder, "cron.duckdb")
    with tk.Workspace(held_path) as ws:
        for service, name in [("translation", "submissions"), ("media_review", "teams")]:
            ws.connect(service, **creds[service]).pull(name, progress=False)
    with tk.sandbox.start() as gone:
        gone_file = Path(folder) / "gone.json"
        gone_file.write_text(json.dumps({s: gone.credentials(s) for s in ("translation", "media_review")}))
        gone_file.chmod(0o600)

    def cli_bare(*argv: str) -> None:
        code = f"import sys; from toolkit.cli import main; sys.exit(main({list(argv)!r}))"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                             env={**env, "TOOLKIT_PROGRESS": "0"})
        shown = (run.stdout + run.stderr).strip()
        raise _Shown(f"exit {run.returncode}", shown, len(shown.splitlines()))

    def sandbox_on_a_taken_port() -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            cli("sandbox", "--port", str(taken.getsockname()[1]), "--credentials", os.path.join(folder, "s.json"))

    rows = [{"id": f"n{i:05}", "type": "alert", "message": f"note {i}", "severity": "info",
             "created": 1_790_000_000_000 + i} for i in range(60)]

    class Offsets(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            from urllib.parse import parse_qs, urlsplit
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            start, size = int(query.get("offset", 0)), int(query.get("size", 20))
            body = json.dumps({"list": rows[start:start + size], "offset": start, "pageSize": size,
                               "totalSize": len(rows)}).encode()
            if start == size:
                body = body.replace(b'"created": %d' % (1_790_000_000_000 + start), b'"created": 1e400', 1)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    def offset_walk_with_1e400() -> object:
        from toolkit.pull import typist
        server = ThreadingHTTPServer(("127.0.0.1", 0), Offsets)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        os.environ["TOOLKIT_TYPING_HELPER"] = "1"
        typist.START_AFTER_PAGES, typist.SMALLEST_PAGE = 1, 0
        try:
            conn = tk.Workspace(":memory:").connect("audience_platform", token="t",
                                                    base_url=f"http://127.0.0.1:{server.server_address[1]}/cdp-server")
            return conn.fetch("notifications", size=20, progress=False)
        finally:
            typist.stop()
            server.shutdown()
            server.server_close()

    def interrupted_record() -> None:
        with contextlib.suppress(_Shown):
            edges["ctrl_c"]()
        path = max(Path(edges["folder"]).glob("*/w.duckdb"), key=lambda p: p.stat().st_mtime)
        with tk.Workspace(path, read_only=True) as ws:
            last = ws.loads().query("resource == 'documents'").iloc[-1]
        raise _Shown("stored", f"status {last['status']}, {int(last['requests'])} requests: {last['error']}", 1)

    def cli_skew() -> None:
        try:
            cli("doctor", "media_review")
        except _Shown as shown:
            line = next((x.strip() for x in shown.text.splitlines() if "clock skew" in x), shown.text)
            raise _Shown(shown.kind, line, 1) from None

    def cli_last(*argv: str) -> None:
        """The command's last line: what it says to run next."""
        try:
            cli(*argv)
        except _Shown as shown:
            raise _Shown(shown.kind, shown.text.splitlines()[-1], shown.lines) from None

    del signal
    return dict(held_path=held_path, gone_file=str(gone_file), cli_bare=cli_bare,
                sandbox_on_a_taken_port=sandbox_on_a_taken_port, offset_walk_with_1e400=offset_walk_with_1e400,
                interrupted_record=interrupted_record, cli_skew=cli_skew, cli_last=cli_last)


def world() -> dict:
    """Sandboxes and connections for the mistakes: one running, one stopped, wrong secrets."""
    import toolkit as tk
    box = tk.sandbox.start()
    gone = tk.sandbox.start()
    down = {s: gone.credentials(s) for s in ("translation", "asset_library")}
    gone.stop()
    creds = {s: box.credentials(s) for s in ("translation", "asset_library", "audience_platform", "media_review")}
    scratch = tempfile.mkdtemp(prefix="mistakes-")
    ws = tk.Workspace(":memory:")
    names = dict(tk=tk, box=box, ws=ws, creds=creds, scratch=os.path.join(scratch, "w.duckdb"))
    names["tm"] = ws.connect("translation", **creds["translation"])
    names["al"] = ws.connect("asset_library", **creds["asset_library"])
    names["cdp"] = ws.connect("audience_platform", **creds["audience_platform"])
    names["tm"].fetch("submissions", progress=False)
    names["fresh_tm"] = tk.Workspace(":memory:").connect("translation", **creds["translation"])
    names["down_tm"] = ws.connect("translation", **down["translation"])
    names["down_al"] = ws.connect("asset_library", **down["asset_library"])
    names["wrong_tm"] = tk.connect("translation", **{**creds["translation"], "password": "wrong-password"})
    names["wrong_al"] = tk.connect("asset_library", **{**creds["asset_library"], "api_key": "wrong-key"})
    names["wrong_mr"] = ws.connect("media_review", **{**creds["media_review"], "token": "wrong-token"})
    credentials = Path(scratch) / "credentials.json"
    credentials.write_text(json.dumps(creds))

    credentials.chmod(0o600)

    def cli(*argv: str, timeout: float = 300) -> None:
        code = f"import sys; from toolkit.cli import main; sys.exit(main({list(argv)!r}))"
        env = {**os.environ, "TOOLKIT_CREDENTIALS": str(credentials), "COLUMNS": "100", "TOOLKIT_PROGRESS": "0"}
        try:
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            raise _Shown("hung", f"(still running after {timeout:.0f} s: killed)", 0) from None
        shown = (run.stderr.strip() or run.stdout.strip())
        raise _Shown(f"exit {run.returncode}", shown, len(shown.splitlines()))
    names["cli"] = cli
    names.update(_edges(tk, box, creds, scratch, cli))
    names.update(_first_hour(tk, box, creds, scratch, cli, names))
    names["audiences"] = names["cdp"].fetch("audiences", progress=False)
    names["targets"] = names["tm"].fetch("targets", progress=False)
    return names


def _edges(tk, box, creds: dict, scratch: str, cli) -> dict:
    """The names the cases of issue 35 items 3-6 use: credentials files, held and failed workspaces, an
    interrupted fan-out in this process and from the CLI, against a sandbox slow enough to interrupt."""
    import signal
    import threading
    folder = tempfile.mkdtemp(prefix="edges-", dir=scratch)
    fifo = os.path.join(folder, "fifo")
    os.mkfifo(fifo)
    held_path = os.path.join(folder, "held.duckdb")
    held = tk.Workspace(held_path)
    held.connect("media_review", **creds["media_review"]).fetch("teams", progress=False)
    existing = os.path.join(folder, "existing.duckdb")
    held.export(existing)
    other_path = os.path.join(folder, "other.duckdb")      # a workspace no process here keeps open
    with tk.Workspace(other_path) as other:
        other.connect("media_review", **creds["media_review"]).fetch("teams", progress=False)
    failed_ws = tk.Workspace(":memory:")
    with contextlib.suppress(Exception):
        failed_ws.connect("asset_library", **{**creds["asset_library"], "api_key": "wrong-key"}).fetch(
            "tags", progress=False)

    def credentials_file(text: str | bytes) -> object:
        path = Path(tempfile.mkdtemp(dir=folder)) / "credentials.json"
        (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
        path.chmod(0o600)
        old = {name: os.environ.pop(name) for name in list(os.environ) if name.startswith("TOOLKIT_")}
        os.environ["TOOLKIT_CREDENTIALS"] = str(path)
        try:
            return tk.Workspace(":memory:").connect("asset_library").fetch("tags", progress=False)
        finally:
            del os.environ["TOOLKIT_CREDENTIALS"]
            os.environ.update(old)

    slow = tk.sandbox.start(scale=12, latency_ms=100)
    slow_creds = slow.credentials("translation")

    def documents_asked() -> int:
        return slow.stats()["by_action"].get("translation.list_documents", 0)

    def interrupted_at_half(interrupt, running) -> None:
        start, parents = documents_asked(), 126

        def watch() -> None:
            while running() and documents_asked() - start < parents // 2:
                time.sleep(0.002)
            if running():
                interrupt()
        threading.Thread(target=watch, daemon=True).start()

    def ctrl_c() -> None:
        path = tempfile.mkdtemp(dir=folder)
        with tk.Workspace(os.path.join(path, "w.duckdb")) as ws:
            conn = ws.connect("translation", **slow_creds)
            conn.pull("submissions", progress=False)
            running = threading.Event()
            running.set()
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
            interrupted_at_half(lambda: os.kill(os.getpid(), signal.SIGINT), running.is_set)
            try:
                conn.pull("documents", refresh=True, progress=False)
            except KeyboardInterrupt as error:
                raise _Shown(type(error).__name__, str(error) or "(no message)", shown_lines(error)) from None
            finally:
                running.clear()
                signal.signal(signal.SIGINT, previous)

    def cli_interrupted() -> None:
        path = os.path.join(tempfile.mkdtemp(dir=folder), "w.duckdb")
        with tk.Workspace(path) as ws:
            ws.connect("translation", **slow_creds).pull("submissions", progress=False)
        file = Path(folder) / "slow.json"
        file.write_text(json.dumps({"translation": slow_creds}))
        file.chmod(0o600)
        code = ("import sys; from toolkit.cli import main; sys.exit(main(['pull', 'translation', 'documents', "
                f"'--workspace', {path!r}, '--credentials', {str(file)!r}]))")
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "TOOLKIT_PROGRESS": "0"})
        interrupted_at_half(lambda: proc.send_signal(signal.SIGINT), lambda: proc.poll() is None)
        out, err = proc.communicate(timeout=120)
        shown = err.strip() or "(nothing)"
        raise _Shown(f"exit {proc.returncode}", shown, len(err.strip().splitlines()))

    def held_by_three(folder: str) -> tuple[str, Path]:
        """A workspace holding the documents' fan-out beside two other services' resources, and their
        credentials file: a refresh runs a worker for each service."""
        path = os.path.join(tempfile.mkdtemp(dir=folder), "w.duckdb")
        services = ("translation", "media_review", "asset_library")
        with tk.Workspace(path) as ws:
            for service, name in [("translation", "submissions"), ("translation", "documents"),
                                  ("media_review", "teams"), ("asset_library", "tags")]:
                ws.connect(service, **slow.credentials(service)).pull(name, progress=False)
        file = Path(path).with_name("slow.json")
        file.write_text(json.dumps({service: slow.credentials(service) for service in services}))
        file.chmod(0o600)
        return path, file

    def refresh_ctrl_c() -> None:
        path, file = held_by_three(folder)
        with tk.Workspace(path) as ws:
            for service, creds_of in json.loads(file.read_text()).items():
                ws.connect(service, **creds_of)
            running = threading.Event()
            running.set()
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
            interrupted_at_half(lambda: os.kill(os.getpid(), signal.SIGINT), running.is_set)
            try:
                ws.refresh(incremental=False, progress=False)
            except KeyboardInterrupt as error:
                raise _Shown(type(error).__name__, str(error) or "(no message)", shown_lines(error)) from None
            finally:
                running.clear()
                signal.signal(signal.SIGINT, previous)

    def cli_refresh_interrupted() -> None:
        path, file = held_by_three(folder)
        code = ("import sys; from toolkit.cli import main; sys.exit(main(['refresh', '--full', "
                f"'--workspace', {path!r}, '--credentials', {str(file)!r}]))")
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "TOOLKIT_PROGRESS": "0"})
        interrupted_at_half(lambda: proc.send_signal(signal.SIGTERM), lambda: proc.poll() is None)
        out, err = proc.communicate(timeout=120)
        raise _Shown(f"exit {proc.returncode}", err.strip() or "(nothing)", len(err.strip().splitlines()))

    return dict(folder=folder, fifo=fifo, held=held, other_path=other_path, existing=existing, failed_ws=failed_ws,
                credentials_file=credentials_file, ctrl_c=ctrl_c, cli_interrupted=cli_interrupted, json=json,
                os=os, refresh_ctrl_c=refresh_ctrl_c, cli_refresh_interrupted=cli_refresh_interrupted)


class _Shown(Exception):
    """A CLI case's result: what it printed, as if raised."""

    def __init__(self, kind: str, text: str, lines: int) -> None:
        super().__init__(text)
        self.kind, self.text, self.lines = kind, text, lines


def shown_lines(error: BaseException) -> int:
    """How many lines Jupyter shows for `error`: its `_render_traceback_`, else the whole traceback."""
    render = getattr(error, "_render_traceback_", None)
    if render is not None:
        with contextlib.suppress(Exception):
            return len("\n".join(render()).splitlines())
    return len("".join(traceback.format_exception(error)).splitlines())


def measure(only: str = "") -> list[dict]:
    names = world()
    found = []
    for what, code in [(what, code) for what, code in MISTAKES if only.lower() in what.lower()]:
        started, before = time.perf_counter(), names["box"].stats()["requests"]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                result = eval(code, names)      # the cases are this file's own text
            kind, text = "no error", f"(returned {type(result).__name__}"
            text += f" of {len(result)} rows)" if hasattr(result, "__len__") else ")"
            lines = 0
        except _Shown as shown:
            kind, text, lines = shown.kind, shown.text, shown.lines
        except Exception as error:      # every kind is what is measured
            kind, text, lines = type(error).__name__, str(error), shown_lines(error)
        found.append(dict(what=what, code=code, kind=kind, text=text, chars=len(text), lines=lines,
                          sent=names["box"].stats()["requests"] - before,
                          seconds=round(time.perf_counter() - started, 1)))
    names["box"].stop()
    return found


def before(rev: str, only: str = "") -> list[dict]:
    """This file run over `rev`'s tree, unpacked in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="mistakes-before-") as folder:
        archive = subprocess.run(["git", "-C", str(HERE), "archive", rev], capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env = {**os.environ, "PYTHONPATH": folder}
        run = subprocess.run([sys.executable, __file__, "--json", "--only", only], capture_output=True, text=True, env=env,
                             timeout=900, cwd=folder)
        if run.returncode:
            raise SystemExit(run.stderr[-3000:])
        return json.loads(run.stdout)


def cell(text: str, width: int = 700) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    parser.add_argument("--json", action="store_true", help="measure this tree only and print JSON")
    parser.add_argument("--only", default="", metavar="TEXT", help="only the mistakes whose name holds TEXT")
    args = parser.parse_args()
    if args.json:
        import toolkit
        assert Path(toolkit.__file__).resolve().is_relative_to(Path.cwd().resolve()) or Path.cwd() == HERE
        print(json.dumps(measure(args.only)))
        return
    old, new = before(args.before, args.only), measure(args.only)
    print(f"| # | mistake | before ({args.before}): kind, chars, notebook lines, requests sent, message | "
          "after: kind, chars, notebook lines, requests sent, message |")
    print("|---|---|---|---|")
    for number, (was, now) in enumerate(zip(old, new, strict=True), 1):
        print(f"| {number} | {now['what']}: `{now['code']}` | {was['kind']}, {was['chars']}, {was['lines']}, "
              f"{was['sent']}: {cell(was['text'])} | {now['kind']}, {now['chars']}, {now['lines']}, {now['sent']}: "
              f"{cell(now['text'])} |")
    quiet = [n for n in new if n["kind"] == "no error"]
    print(f"\n{len(new)} mistakes; silent after: {len(quiet)}; median chars before "
          f"{sorted(o['chars'] for o in old)[len(old) // 2]}, after {sorted(n['chars'] for n in new)[len(new) // 2]}")


if __name__ == "__main__":
    main()
