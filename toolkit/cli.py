"""The `toolkit` command: demo, sandbox, actions, resources, call, pull, refresh, doctor, export, migrate, cassettes."""
from __future__ import annotations

__all__ = ["BUSY", "CREDENTIALS_HELP", "LISTED", "WAIT_HELP", "main", "parser"]

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from toolkit.workspace import Workspace


def _demo(args: argparse.Namespace) -> int:
    from toolkit import demo
    return demo.run(out=args.out, scale=args.scale)


def _sandbox(args: argparse.Namespace) -> int:
    from toolkit import sandbox
    if args.task == "advance":
        return _advance(args)
    if args.task is not None or args.duration is not None:
        print("toolkit sandbox: the one task is `advance DURATION` (e.g. toolkit sandbox advance 3h)", file=sys.stderr)
        return 2
    sandbox.serve(port=args.port, scale=args.scale, seed=args.seed, drift=args.drift,
                  credentials_file=args.credentials)
    return 0


def _advance(args: argparse.Namespace) -> int:
    """Move the clock of the sandbox `toolkit sandbox` serves, from another shell, through its control
    route and the token its credentials file holds."""
    import requests

    from toolkit.errors import ToolkitError
    from toolkit.sandbox.control import CONTROL
    try:
        seconds = _seconds(args.duration or "")
    except argparse.ArgumentTypeError as error:
        print(f"toolkit sandbox advance: {error}", file=sys.stderr)
        return 2
    try:
        control = _credentials(args).get(CONTROL)
    except ToolkitError as error:
        print(f"toolkit sandbox advance: {error}", file=sys.stderr)
        return 2
    if not control:
        print("toolkit sandbox advance: name the file the running `toolkit sandbox` printed: --credentials FILE "
              "(or TOOLKIT_CREDENTIALS)", file=sys.stderr)
        return 2
    with requests.Session() as session:
        session.trust_env = False       # loopback only: no proxy from the environment
        try:
            answer = session.post(f"{control['base_url']}/clock", json={"seconds": seconds}, timeout=10,
                                  headers={"Authorization": f"Bearer {control['token']}"}, allow_redirects=False)
        except requests.RequestException as error:
            print(f"toolkit sandbox advance: no sandbox answers at {control['base_url']} "
                  f"({type(error).__name__}): is `toolkit sandbox` still running?", file=sys.stderr)
            return 2
    if answer.status_code != 200:
        print(f"toolkit sandbox advance: the sandbox said {answer.status_code}", file=sys.stderr)
        return 2
    print(f"sandbox clock advanced {args.duration}: now {answer.json()['now']}")
    return 0


# what `toolkit actions` and `toolkit resources` show as a table; json and csv give every column
LISTED = {"actions": ["action", "version", "method", "path", "doc"],
          "resources": ["service", "resource", "key", "fan_out", "parent", "filters", "doc"]}


def _listing(args: argparse.Namespace) -> int:
    from toolkit.catalog import listings, tables
    from toolkit.errors import UnknownNameError
    try:
        table = getattr(tables, args.command)(args.service)
    except UnknownNameError as error:
        print(f"toolkit {args.command}: {error}", file=sys.stderr)
        return 2
    if args.format == "table":
        table = table[LISTED[args.command]]
    print(listings.shown(table, args.format))
    return 0


# exit codes: 0 done, 1 something failed (a resource, a check), 2 bad arguments or a toolkit error,
# 75 the workspace stayed held by another process past the wait (EX_TEMPFAIL: run again later)
BUSY = 75
CREDENTIALS_HELP = ("the credentials file `toolkit sandbox` writes (or TOOLKIT_CREDENTIALS); "
                    "TOOLKIT_<SERVICE>_<FIELD> variables fill what it lacks")
WAIT_HELP = ("seconds to wait while another process holds the workspace (default TOOLKIT_WORKSPACE_WAIT, "
             "or 60); still held after that: exit 75")


def _failed(command: str, error: BaseException) -> int:
    """One line for a toolkit error, and its exit code: 75 for a workspace still held after the wait.
    The line passes the mask once more: a team workspace's address may hold its catalog's password."""
    from toolkit.catalog.masking import mask_passwords
    print(f"toolkit {command}: {type(error).__name__}: {mask_passwords(_cli_words(str(error)))}", file=sys.stderr)
    return getattr(error, "exit_code", 2)


def _cli_words(text: str) -> str:
    """An error's advice in the command's own words: the option, not the Python argument it maps to."""
    return (text.replace("toolkit.Workspace(path, wait=300)", "--wait 300")
            .replace("pass overwrite=True", "pass --overwrite"))


def _workspace_options(parser: argparse.ArgumentParser, what: str) -> None:
    """--workspace (a DuckDB file, or a team workspace's `ducklake:...` address) and --data-path; both
    also from the environment, so that a catalog's password need not be on a command line (`ps`)."""
    import os
    parser.add_argument("--workspace", default=os.environ.get("TOOLKIT_WORKSPACE"), help=(
        f"{what}, or a team workspace's DuckLake address ('ducklake:postgres:dbname=... host=... user=...'); "
        "default TOOLKIT_WORKSPACE"))
    parser.add_argument("--data-path", default=os.environ.get("TOOLKIT_DATA_PATH"), metavar="PATH",
                        help="a team workspace's data folder or s3:// path (default TOOLKIT_DATA_PATH)")


def _open(args: argparse.Namespace, **options: object) -> Workspace:
    from toolkit.workspace import Workspace
    return Workspace(args.workspace, data_path=args.data_path or None, **options)


def _missing(args: argparse.Namespace, command: str) -> bool:
    """Say so, in one line, when the workspace named is neither given nor there."""
    from toolkit.storage.lake import is_lake
    if not args.workspace:
        print(f"toolkit {command}: name the workspace: --workspace FILE (or TOOLKIT_WORKSPACE)", file=sys.stderr)
        return True
    if not is_lake(args.workspace) and not Path(args.workspace).exists():
        print(f"toolkit {command}: no workspace at {args.workspace}", file=sys.stderr)
        return True
    return False


def _source(args: argparse.Namespace) -> str | None:
    """Where `_credentials` found them, for the errors that ask the analyst to check them."""
    from toolkit.http.credentials import named_file
    if getattr(args, "credentials", None):
        return f"the file {args.credentials} (--credentials)"
    named = named_file()
    return f"the file {named} (TOOLKIT_CREDENTIALS)" if named else None


def _file(args: argparse.Namespace) -> str | None:
    """The credentials file named: --credentials, else TOOLKIT_CREDENTIALS."""
    from toolkit.http.credentials import named_file
    return named_file(getattr(args, "credentials", None))


def _credentials(args: argparse.Namespace) -> dict[str, dict]:
    """Per service, the credentials in `--credentials FILE` or TOOLKIT_CREDENTIALS; {} without either.
    toolkit.http.credentials reads it (bounded, regular files only) as `toolkit.connect` does, and the
    environment's TOOLKIT_<SERVICE>_<FIELD> fill what it lacks there. Nothing of it is ever printed."""
    from toolkit.http.credentials import named_file, read_file
    given = named_file(getattr(args, "credentials", None))
    return read_file(given) if given else {}


def _call(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.errors import ToolkitError
    from toolkit.http.client import connect
    try:
        action = catalog.action(args.action)
    except KeyError as error:
        print(f"toolkit call: {error.args[0]}", file=sys.stderr)
        return 2
    try:
        params = json.loads(args.params) if args.params else {}
    except json.JSONDecodeError as error:
        # the position only: the params may hold a password, and the error would quote them
        print(f"toolkit call: the params are not JSON ({error.msg}, character {error.pos})", file=sys.stderr)
        return 2
    if not isinstance(params, dict):
        print(f"toolkit call: the params must be a JSON object, not {type(params).__name__}", file=sys.stderr)
        return 2
    try:
        _credentials(args)          # a file that cannot be taken: said before anything else
    except ToolkitError as error:
        print(f"toolkit call: {error}", file=sys.stderr)
        return 2
    try:
        result = connect(action.service, source=_source(args), credentials_file=_file(args)) \
            .call(action.id, **params)
    except ToolkitError as error:
        # one line, as `pull` gives: the errors mask secret values and scrub the service's answers
        print(f"toolkit call: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    if isinstance(result, bytes):
        sys.stdout.buffer.write(result)
    else:
        print(json.dumps(result, indent=2, default=str))
    return 0


def _unknown(command: str, what: str, names: Sequence[str], known: Sequence[str], where: str = "") -> bool:
    """Say, in one line, the first of `names` not in `known` and the closest it has (exit 2)."""
    from toolkit.errors import UnknownNameError
    for name in names:
        if name not in known:
            refused = UnknownNameError(what, name, list(known), where=where, lister=f"`toolkit {what}s`")
            print(f"toolkit {command}: {refused}", file=sys.stderr)
            return True
    return False


def _ids(args: argparse.Namespace, ws: Workspace) -> list[str] | None:
    """The ids of --ids (comma-separated, repeatable, or @FILE of one a line) or --ids-from a view
    the workspace holds (SERVICE.RESOURCE.COLUMN): None when neither is given."""
    if args.ids_from:
        schema, name, column = (part.replace('"', '""') for part in args.ids_from.split(".", 2))
        rows = ws.sql(f'select distinct "{column}" from "{schema}"."{name}" where "{column}" is not null '
                      'order by 1').fetchall()
        return [str(row[0]) for row in rows]
    if not args.ids:
        return None
    found: list[str] = []
    for given in args.ids:
        text = Path(given[1:]).read_text() if given.startswith("@") else given.replace(",", "\n")
        found += [line.strip() for line in text.splitlines() if line.strip()]
    return found


def _pull(args: argparse.Namespace) -> int:
    from toolkit import bulk, catalog
    from toolkit.catalog.masking import scrub_url
    from toolkit.errors import ToolkitError
    if not args.workspace:
        print("toolkit pull: name the workspace: --workspace FILE (or TOOLKIT_WORKSPACE)", file=sys.stderr)
        return 2
    if _unknown("pull", "service", [args.service], list(catalog.SERVICES)):
        return 2
    known = [name for (service, name) in catalog.RESOURCES if service == args.service]
    if _unknown("pull", "resource", args.resources, known, where=f" in {args.service}"):
        return 2
    wanting = {catalog.RESOURCES[args.service, name].parent for name in args.resources
               if bulk.needs(catalog.RESOURCES[args.service, name])}
    if (args.ids or args.ids_from) and len(wanting) != 1:
        print(f"toolkit pull: --ids go to one kind of ids; name the resources that take them "
              f"({', '.join(sorted(wanting)) or 'none of those named needs ids'})", file=sys.stderr)
        return 2
    try:
        _credentials(args)          # a file that cannot be taken: said before the workspace is opened
    except ToolkitError as error:
        print(f"toolkit pull: {error}", file=sys.stderr)
        return 2
    try:
        with _open(args, wait=args.wait) as ws, _resuming_said():
            ids = _ids(args, ws)
            client = ws.connect(args.service, source=_source(args), credentials_file=_file(args))
            print(f"pull {args.service} from {scrub_url(client.base_url)} into {ws.where}", flush=True)
            done = bulk.pull_service(client, args.resources or None, inputs={wanting.pop(): ids} if ids else None,
                                     log=lambda line: print(line, flush=True))
    except ToolkitError as error:
        return _failed("pull", error)
    except OSError as error:        # an --ids @FILE that cannot be read
        print(f"toolkit pull: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    pulled = [p for p in done if not p.skipped and not p.error]
    print(f"{len(pulled)} pulled ({sum(p.rows for p in pulled):,} rows, {sum(p.requests for p in pulled):,} "
          f"requests), {sum(bool(p.skipped) for p in done)} skipped, {sum(bool(p.error) for p in done)} failed")
    named_but_skipped = args.resources and any(p.skipped for p in done)
    if any(p.error for p in done) and all("WorkspaceBusyError" in p.error for p in done if p.error):
        return BUSY
    return 1 if named_but_skipped or any(p.error for p in done) else 0


def _refresh(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.errors import ToolkitError
    if _missing(args, "refresh"):
        return 2
    if _unknown("refresh", "service", args.services, list(catalog.SERVICES)) or _unknown(
            "refresh", "resource", args.resource, [f"{s}.{r}" for s, r in catalog.RESOURCES]):
        return 2
    try:
        _credentials(args)          # a file that cannot be taken: said before the workspace is opened
    except ToolkitError as error:
        print(f"toolkit refresh: {error}", file=sys.stderr)
        return 2
    try:
        with _open(args, wait=args.wait) as ws, _resuming_said():
            where = ws.where
            held = sorted(set(ws.loads()["service"])) if len(ws.loads()) else []
            named = sorted({r.split(".", 1)[0] for r in args.resource})
            for service in args.services or named or held:
                try:
                    ws.connect(service, source=_source(args), credentials_file=_file(args))
                except ToolkitError as error:  # its resources are then skipped, with this line to say why
                    print(f"skip {service}: {type(error).__name__}: {error}", flush=True)
            table = ws.refresh(*args.services, resources=args.resource or None, incremental=not args.full,
                               max_age=args.max_age, say=lambda line: print(line, flush=True))
    except ToolkitError as error:
        return _failed("refresh", error)
    counts = table["kind"].value_counts()
    # one line a cron log can tell from the last run's: when, which workspace, what changed
    from datetime import datetime
    changed = (f"+{int(table['added'].sum()):,} ~{int(table['changed'].sum()):,} "
               f"-{int(table['removed'].sum()):,} rows") if len(table) else "no rows"
    print(f"{datetime.now(UTC).isoformat(timespec='seconds')} refresh {where}: "
          f"{', '.join(f'{counts[k]} {k}' for k in counts.index) or 'nothing held'}, {changed} "
          f"({int(table['requests'].sum()):,} requests)")
    failed = table[table["kind"] == "failed"]
    if len(failed) and failed["error"].astype(str).str.contains("WorkspaceBusyError").all():
        return BUSY
    return 1 if len(failed) else 0


@contextlib.contextmanager
def _resuming_said() -> Iterator[None]:
    """A pull that takes over an interrupted one's checkpoint says so in the command's output (a cron
    log), before it walks: "asset_library.versions: resuming: 120 of 300 already pulled"."""
    import logging

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "resuming:" in record.getMessage():
                print(record.getMessage(), flush=True)

    logger, handler = logging.getLogger("toolkit.pull.fetch"), Said(logging.INFO)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _seconds(text: str) -> float:
    """A duration for --max-age, read as `max_age=` is in Python (toolkit.http.durations)."""
    from toolkit.errors import ValidationError
    from toolkit.http.durations import span_seconds
    try:
        return span_seconds(text, "--max-age")
    except ValidationError as error:
        if "negative" in error.rule:
            raise argparse.ArgumentTypeError(f"{text!r}: a duration is not negative") from None
        raise argparse.ArgumentTypeError(f"{text!r} is no duration: give seconds, or e.g. 30m, 6h, 1d") from None


def _show(args: argparse.Namespace) -> int:
    """What each view of a workspace holds: rows, its latest load and filter, age, drift, freshness."""
    from toolkit.errors import ToolkitError
    if _missing(args, "show"):
        return 2
    try:
        with _open(args, read_only=True, wait=args.wait) as ws:
            views = ws.tables()
            fresh = ws.freshness().set_index(["service", "resource"])
            drift = ws.drift()
    except ToolkitError as error:
        return _failed("show", error)
    drifted = drift.groupby("load_id").size() if len(drift) and "load_id" in drift.columns else {}
    shown = []
    for view in views.itertuples():
        row = {"table": view.table, "rows": int(view.rows), "load": view.load_id,   # the view's, below where known
               "finished": str(view.finished)[:19], "filter": view.params or "", "loads": int(view.loads),
               "drift": int(drifted.get(view.load_id, 0)) if len(drifted) else 0}
        if (view.service, view.resource) in fresh.index:
            f = fresh.loc[(view.service, view.resource)]
            row.update({"rows": int(f["rows"]), "oldest_h": float(f["oldest_hours"]), "budget_h": float(f["budget_hours"]),
                        "past_budget": int(f["past_budget"])})
        shown.append(row)
    if args.format == "json":
        print(json.dumps(shown, indent=1))
    elif args.format == "csv":
        import csv
        writer = csv.DictWriter(sys.stdout, fieldnames=list(shown[0]) if shown else ["table"])
        writer.writeheader()
        writer.writerows(shown)
    elif not shown:
        from toolkit.catalog.masking import mask_passwords
        where = mask_passwords(args.workspace)   # a lake's address may hold its password
        print(f"{where} holds no view yet: toolkit pull SERVICE --workspace '{where}'")
    else:
        import shutil

        import pandas as pd
        frame = pd.DataFrame(shown)
        width = shutil.get_terminal_size((120, 20)).columns
        # the load ids and exact figures are in --format json; the table keeps to a terminal's width
        table = pd.DataFrame({
            "view": frame["table"], "rows": frame["rows"].map("{:,}".format), "loads": frame["loads"],
            "last load": frame["finished"].str[:16],
            "confirmed": [_ago(h) for h in frame.get("oldest_h", [float("nan")] * len(frame))],
            # a view without a freshness budget has no count past it: blank, not NaN or 0.0
            "past budget": [_count(v) for v in frame.get("past_budget", [float("nan")] * len(frame))],
            "drift": frame["drift"], "filter": [f if f not in ("{}", "null") else "" for f in frame["filter"]]})
        room = max(12, width - len(table.drop(columns="filter").to_string(index=False).splitlines()[0]) - 2)
        table["filter"] = table["filter"].map(lambda text: text if len(text) <= room else text[:room - 1] + "…")
        for name in ("view", "last load", "filter"):      # names and text read from the left
            table[name] = table[name].astype(str).str.ljust(max(len(name), table[name].astype(str).str.len().max()))
        print(table.to_string(index=False, justify="left"))
    return 0


def _ago(hours: float) -> str:
    """How long ago, in the unit that reads best; blank where nothing was confirmed."""
    if hours is None or hours != hours:
        return ""
    return f"{hours * 60:.0f} min ago" if hours < 1 else f"{hours:.1f} h ago" if hours < 48 else f"{hours / 24:.0f} d ago"


def _count(value: float) -> str:
    """A count for the table: an integer, or blank where there is none."""
    return "" if value is None or value != value else f"{int(value):,}"


def _doctor(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.checkup.doctor import doctor
    from toolkit.errors import ToolkitError
    if _unknown("doctor", "service", args.services, list(catalog.SERVICES)):
        return 2
    base_urls = {}
    for given in args.base_url:
        service, _, url = given.partition("=") if "=" in given.split("://", 1)[0] else ("", "", given)
        if not service and len(args.services) == 1:
            service = args.services[0]
        if service not in catalog.SERVICES or not url:
            print(f"toolkit doctor: --base-url takes SERVICE=URL, or a URL when one service is named; got {given!r}",
                  file=sys.stderr)
            return 2
        base_urls[service] = url
    try:
        credentials = _credentials(args)
    except ToolkitError as error:
        print(f"toolkit doctor: {error}", file=sys.stderr)
        return 2
    # progress on stderr as each resource is checked (a real service may be slow); the report on stdout
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if sys.stderr.isatty() else None
    try:
        named = args.services or [s for s in credentials if s in catalog.SERVICES]
        report = doctor(*named, credentials=credentials, base_urls=base_urls, page_size=args.page_size, say=say,
                        source=_source(args))
    except ToolkitError as error:        # a service unknown, unconfigured or lacking a credential: nothing was sent
        print(f"toolkit doctor: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    print(report.text())
    if args.json:
        try:
            print(f"report written to {report.to_json(args.json)} (names and types only: no value, no secret)")
        except OSError as error:
            print(f"toolkit doctor: cannot write {args.json}: {error.strerror}", file=sys.stderr)
            return 2
    return 0 if report.ok else 1


def _export(args: argparse.Namespace) -> int:
    from toolkit.errors import ToolkitError, WorkspaceBusyError
    if _missing(args, "export"):
        return 2
    try:
        with _open(args, wait=args.wait) as ws:
            where = ws.where
            path = ws.export(args.out, format=args.format, history=args.history, overwrite=args.overwrite,
                             resources=args.resource, since=args.since)
    except WorkspaceBusyError as error:
        return _failed("export", error)
    except (ToolkitError, FileExistsError, ValueError) as error:
        # the CLI's own words for the option the Python error names
        print(f"toolkit export: {_cli_words(str(error))}", file=sys.stderr)
        return 2
    kept = ", every load" if args.history else f", the loads since {args.since}" if args.since else ""
    some = f" of {', '.join(args.resource)}" if args.resource else ""
    print(f"exported {where}{some} to {path} ({args.format}{kept})")
    return 0


def _read_only_waiting(path: Path, wait: float | None) -> duckdb.DuckDBPyConnection:
    """The file opened read-only, waiting up to `wait` (else TOOLKIT_WORKSPACE_WAIT) while another
    process writes to it; WorkspaceBusyError after that."""
    import time

    from toolkit.errors import WorkspaceBusyError, WorkspaceInUseError
    from toolkit.storage.file import open_duckdb
    from toolkit.storage.handle import wait_seconds
    patience, started = wait_seconds(wait), time.monotonic()
    while True:
        try:
            return open_duckdb(path, read_only=True)
        except WorkspaceInUseError as error:
            if time.monotonic() - started >= patience:
                raise WorkspaceBusyError(path, time.monotonic() - started, pid=error.pid,
                                         holder=f"process {error.pid}" if error.pid else "another process") from None
            time.sleep(0.1)


def _mcp(args: argparse.Namespace) -> int:
    """Serve a workspace, snapshot or team lake read-only over MCP on stdin/stdout (toolkit.glance)."""
    from toolkit.errors import ToolkitError
    if _missing(args, "mcp"):
        return 2
    try:
        from toolkit.glance import mcp_server, reading
    except ImportError as error:
        print(f"toolkit mcp: the MCP SDK is missing ({error.name}): pip install -e '.[mcp]' in the clone", file=sys.stderr)
        return 2
    try:
        source = reading.open_source(args.workspace, args.data_path or None, wait=args.wait)
    except ToolkitError as error:
        return _failed("mcp", error)
    with source:       # stdout is the protocol's: every word for a person goes to stderr
        mcp_server.serve(source)
    return 0


def _migrate(args: argparse.Namespace) -> int:
    import duckdb

    from toolkit.errors import ToolkitError
    from toolkit.storage.file import old_layout
    from toolkit.workspace import Workspace
    if not Path(args.workspace).exists():
        print(f"toolkit migrate: no workspace at {args.workspace}", file=sys.stderr)
        return 2
    try:
        with _read_only_waiting(Path(args.workspace), args.wait) as con:
            old = old_layout(con)
        Workspace(args.workspace, wait=args.wait).close()   # a read-write open migrates, in one transaction
    except (ToolkitError, duckdb.Error) as error:
        return _failed("migrate", error)
    done = ", ".join(f"{service}.{resource}" for service, resource in old)
    print(f"migrated {args.workspace} to row versions: {done}" if old else f"{args.workspace} is up to date")
    return 0


def _cassettes(args: argparse.Namespace) -> int:
    from toolkit import cassettes
    from toolkit.errors import ToolkitError
    actions = [args.action] if args.action else None
    if args.task == "check-stable":
        differ = cassettes.check_stable(args.service, folder=args.out or cassettes.FOLDER, actions=actions)
        print("\n".join(differ) or "stable: re-recording gives the committed files byte for byte")
        return 1 if differ else 0
    examples = json.loads(Path(args.examples).read_text()) if args.examples else None
    try:
        # only when named: a TOOLKIT_CREDENTIALS of a sandbox's file would turn a recording from a fresh
        # seeded sandbox into one from a "real" service
        credentials = _credentials(args).get(args.service or "", {}) if args.credentials else {}
    except ToolkitError as error:
        print(f"toolkit cassettes: {error}", file=sys.stderr)
        return 2
    done = cassettes.record(args.service, folder=args.out, base_url=args.base_url, writes=args.writes,
                            actions=actions, examples=examples, credentials=credentials)
    for result in done:
        flag = "skip" if result.skipped else "ok  " if result.ok else "FAIL"
        print(f"{flag} {result.path}  {result.note}".rstrip())
    recorded = [r for r in done if not r.skipped]
    print(f"{sum(r.ok for r in recorded)} of {len(recorded)} recorded, {len(done) - len(recorded)} skipped")
    return 0 if all(r.ok for r in done) else 1


def _version() -> str:
    import importlib.metadata
    try:
        return importlib.metadata.version("toolkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    from toolkit import catalog
    top = argparse.ArgumentParser(prog="toolkit", description=__doc__)
    top.add_argument("--version", action="version", version=f"toolkit {_version()}")
    sub = top.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="start the sandbox, pull every resource, write a DuckDB file and a report")
    demo.add_argument("--out", default="demo-output", help="folder for the DuckDB file and the report")
    demo.add_argument("--scale", type=float, default=1, help="size of the sandbox's seed data")
    demo.set_defaults(run=_demo)
    box = sub.add_parser("sandbox", help="serve the four emulated services on 127.0.0.1 until interrupted; "
                                         "`toolkit sandbox advance 3h` moves its clock from another shell")
    box.add_argument("task", nargs="?", choices=("advance",),
                     help="advance: move the running sandbox's clock (it reads --credentials or TOOLKIT_CREDENTIALS)")
    box.add_argument("duration", nargs="?", help="how far to advance: seconds, or 30m, 6h, 1d")
    box.add_argument("--port", type=int, default=8765, help="the port on 127.0.0.1 (default 8765)")
    box.add_argument("--scale", type=float, default=1, help="size of the seed data (1: the demo's; 0.25 smaller)")
    box.add_argument("--seed", type=int, default=0, help="the seed: the same seed gives the same data")
    box.add_argument("--drift", nargs="?", const=True, default=None, metavar="KINDS",
                     help="answers that differ from the catalog, to try `toolkit doctor` or a pull on: every "
                          "kind, or some by name (extra_field,number_as_string,...)")
    box.add_argument("--credentials", metavar="FILE",
                     help="where to write the credentials file (readable by you alone) that the other commands' "
                          "--credentials read; default: a new private folder, printed")
    box.set_defaults(run=_sandbox)
    for name in ("actions", "resources"):
        listing = sub.add_parser(name, help=f"list the catalog's {name}")
        listing.add_argument("service", nargs="?", help=f"only this service's {name} (default: all four)")
        listing.add_argument("--format", choices=("table", "json", "csv"), default="table",
                             help="a table that fits the terminal (default), or every column as JSON or CSV")
        listing.set_defaults(run=_listing)
    call = sub.add_parser("call", help="call one action with credentials from TOOLKIT_<SERVICE>_<FIELD>")
    call.add_argument("action", help="an action id, e.g. asset_library.list_tags")
    call.add_argument("params", nargs="?", help="the params as a JSON object")
    call.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    call.set_defaults(run=_call)
    pull = sub.add_parser("pull", help="pull resources of a service into a workspace, credentials from "
                                       "TOOLKIT_<SERVICE>_<FIELD>; one line per resource (for a scheduled job)")
    pull.add_argument("service", help=f"the service: {', '.join(catalog.SERVICES)}")
    pull.add_argument("resources", nargs="*", help="resources to pull (default: every one that needs no ids)")
    pull.add_argument("--ids", action="append", metavar="ID,ID|@FILE",
                      help="the ids a resource fans out over (memberships and profiles: profile ids; imports, "
                           "metrics), comma-separated or a file of one a line; repeatable")
    pull.add_argument("--ids-from", metavar="SERVICE.RESOURCE.COLUMN",
                      help="the ids from a view the workspace holds, e.g. audience_platform.profiles.item_id")
    _workspace_options(pull, "the workspace's DuckDB file (created when missing)")
    pull.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    pull.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    pull.set_defaults(run=_pull)
    again = sub.add_parser("refresh", help="pull again every resource a workspace holds (or those of the named "
                                           "services), incrementally where the catalog says how; credentials "
                                           "from TOOLKIT_<SERVICE>_<FIELD>; one line per resource (for cron)")
    again.add_argument("services", nargs="*", metavar="SERVICE",
                       help="services to refresh (default: every one the workspace holds)")
    _workspace_options(again, "the workspace's DuckDB file")
    again.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    again.add_argument("--full", action="store_true", help="pull everything, not only what may have changed")
    again.add_argument("--resource", action="append", default=[], metavar="SERVICE.RESOURCE",
                       help="refresh only these held resources (repeatable); a held parent not named is not added")
    again.add_argument("--max-age", type=_seconds, metavar="DURATION",
                       help="keep loads younger than this, and ask again the parents of the fan-outs under a "
                            "freshness budget (versions, guests, documents, ...) that were confirmed longer ago; "
                            "seconds or 30m, 6h, 1d; 0 asks every parent again (default: the catalog's, a day)")
    again.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    again.set_defaults(run=_refresh)
    show = sub.add_parser("show", help="what each view of a workspace holds: rows, latest load, its filter, "
                                       "loads kept, drift, and how fresh its rows are against their budget")
    _workspace_options(show, "the workspace's DuckDB file")
    show.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="a table that fits the terminal (default), JSON or CSV")
    show.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    show.set_defaults(run=_show)
    assistant = sub.add_parser("mcp", help="serve a workspace read-only to an assistant over the Model Context "
                                           "Protocol (stdio): its views, columns, history, diffs and SELECTs")
    _workspace_options(assistant, "the workspace's DuckDB file, or a snapshot (file or Parquet folder)")
    assistant.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    assistant.set_defaults(run=_mcp)
    migrate = sub.add_parser("migrate", help="bring a workspace written by an older toolkit to the current "
                                             "layout (a read-write open does it too)")
    migrate.add_argument("--workspace", required=True, help="the workspace's DuckDB file")
    migrate.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    migrate.set_defaults(run=_migrate)
    check = sub.add_parser("doctor", help="read-only calls to services with credentials from TOOLKIT_<SERVICE>_<FIELD>: "
                                          "auth, each resource's first page against the catalog, limits, clock, "
                                          "versions; exit 0 when all answered as declared, 1 when not")
    check.add_argument("services", nargs="*", metavar="SERVICE",
                       help="services to check (default: every one with a base URL in the environment)")
    check.add_argument("--json", metavar="FILE", help="also write the report as JSON (no value, no secret), "
                                                      "to attach to a bug report")
    check.add_argument("--base-url", action="append", default=[], metavar="[SERVICE=]URL",
                       help="a service's base URL, instead of TOOLKIT_<SERVICE>_BASE_URL (repeatable)")
    check.add_argument("--page-size", type=int, default=1, help="rows asked for on each first page (default 1)")
    check.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    check.set_defaults(run=_doctor)
    export = sub.add_parser("export", help="export a workspace's latest loads as a snapshot file or Parquet folder")
    _workspace_options(export, "the workspace's DuckDB file")
    export.add_argument("--out", required=True, help="the snapshot file (duckdb) or folder (parquet)")
    export.add_argument("--format", choices=("duckdb", "parquet"), default="duckdb",
                        help="one DuckDB file (default), or a folder of Parquet files, one per resource")
    export.add_argument("--history", action="store_true", help="every load, not only the latest of each resource")
    export.add_argument("--overwrite", action="store_true", help="replace what is at --out")
    export.add_argument("--resource", action="append", default=None, metavar="SERVICE.RESOURCE",
                        help="only this resource (repeatable; default every one the workspace holds)")
    export.add_argument("--since", metavar="DATE", help="the loads finished since then too, with their row "
                                                        "versions (\"2026-11-20\", or a time): this week's data")
    export.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    export.set_defaults(run=_export)
    lake = sub.add_parser("lake", help="a team workspace's upkeep (DuckLake)").add_subparsers(
        dest="task", required=True, metavar="TASK",
        help="init: make a lake and its roles; check: what a role may do; clean: remove orphan data files")
    init = lake.add_parser("init", help="make a team lake in a PostgreSQL server: its database, DuckLake's and "
                                        "toolkit's tables, a writer role and a read-only role with exactly what "
                                        "each needs (as a superuser or a role with CREATEDB and CREATEROLE)")
    init.add_argument("address", nargs="?", default=None, metavar="ADDRESS",
                      help="'ducklake:postgres:dbname=LAKE host=... user=ADMIN' (default TOOLKIT_WORKSPACE); the "
                           "database is created when missing")
    init.add_argument("--data-path", default=None, metavar="PATH",
                      help="the lake's data folder or s3:// path (default TOOLKIT_DATA_PATH)")
    init.add_argument("--writer", metavar="ROLE", help="the role that refreshes (a cron job's): created when "
                      "missing, its password from TOOLKIT_LAKE_WRITER_PASSWORD")
    init.add_argument("--reader", metavar="ROLE", help="a role that only reads (analysts'): created when missing, "
                      "its password from TOOLKIT_LAKE_READER_PASSWORD")
    init.add_argument("--print-sql", action="store_true",
                      help="print the SQL for a DBA (passwords as psql variables) and run nothing")
    init.set_defaults(run=_lake_init)
    probe = lake.add_parser("check", help="what the role of a team workspace's address may and may not do, "
                                          "and the grant each missing thing needs")
    _workspace_options(probe, "the team workspace")
    probe.set_defaults(run=_lake_check)
    clean = lake.add_parser("clean", help="remove the data files no commit names (left by commits killed "
                                          "mid-way); run it daily beside the refresh")
    _workspace_options(clean, "the team workspace")
    clean.add_argument("--older-than", type=_seconds, default=3600.0, metavar="DURATION",
                       help="only files written longer ago than this (default 1h: a younger one may be a "
                            "commit in flight); seconds or 30m, 6h, 1d")
    clean.add_argument("--dry-run", action="store_true", help="list them, remove nothing")
    clean.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    clean.set_defaults(run=_lake_clean)
    tapes = sub.add_parser("cassettes", help="record cassettes from the sandbox or a real service; check-stable")
    tapes.add_argument("task", choices=("record", "check-stable"),
                       help="record: write cassettes; check-stable: record again into a temporary folder and "
                            "compare")
    tapes.add_argument("--service", help="one service (default: every service the sandbox serves)")
    tapes.add_argument("--action", help="one action (every version of it), e.g. list_teams")
    tapes.add_argument("--base-url", help="a real service: credentials from TOOLKIT_<SERVICE>_<FIELD>")
    tapes.add_argument("--out", help="folder (default cassettes/, cassettes-real/ for a real service)")
    tapes.add_argument("--writes", action="store_true", help="against a real service, record write actions too")
    tapes.add_argument("--examples", help="a JSON file of ids for the example calls ({\"asset_id\": ...})")
    tapes.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    tapes.set_defaults(run=_cassettes)
    return top


PASSWORDS = {"writer": "TOOLKIT_LAKE_WRITER_PASSWORD", "reader": "TOOLKIT_LAKE_READER_PASSWORD"}


def _lake_init(args: argparse.Namespace) -> int:
    """Make a lake and its roles (or print the SQL that does): database, roles, DuckLake's and toolkit's
    tables, then the grants."""
    import os

    from toolkit.catalog.masking import mask_passwords
    from toolkit.errors import ToolkitError
    from toolkit.storage import grants
    from toolkit.workspace import Workspace
    address = args.address or os.environ.get("TOOLKIT_WORKSPACE")
    data_path = args.data_path or os.environ.get("TOOLKIT_DATA_PATH")
    if not address:
        print("toolkit lake init: name the lake: toolkit lake init 'ducklake:postgres:dbname=LAKE host=... "
              "user=ADMIN' --data-path PATH --writer ROLE --reader ROLE", file=sys.stderr)
        return 2
    passwords = {getattr(args, kind): os.environ[name] for kind, name in PASSWORDS.items()
                 if getattr(args, kind) and os.environ.get(name)}
    secrets = list(passwords.values())
    try:
        if args.print_sql:
            print(grants.plan(address, args.writer, args.reader, shown=True).printed())
            print(f"-- then the first open makes the lake: toolkit lake init '{mask_passwords(address)}' "
                  f"--data-path {data_path or 'PATH'} as this role; each role's password: psql -v "
                  "cron_password=... (named ROLE_password)")
            return 0
        if not data_path:
            print("toolkit lake init: name the lake's data: --data-path FOLDER or s3://... (or TOOLKIT_DATA_PATH)",
                  file=sys.stderr)
            return 2
        roles = [r for r in (args.writer, args.reader) if r]
        step = grants.plan(address, args.writer, args.reader, passwords,
                           grants.existing(address, roles, secrets))
        for line in grants.run(address, step, secrets, "server"):
            print(f"  {line}")
        if "://" not in data_path:
            Path(data_path).expanduser().mkdir(parents=True, exist_ok=True)
        with Workspace(address, data_path=data_path) as ws:  # DuckLake's tables and toolkit's own
            where = ws.where
        for line in grants.run(address, step, secrets, "database"):
            print(f"  {line}")
    except ToolkitError as error:
        return _failed("lake init", error)
    print(f"the lake {where} is ready, its data in {data_path}")
    for kind in ("writer", "reader"):
        role = getattr(args, kind)
        if role and role not in passwords:
            print(f"  {role} has no password from {PASSWORDS[kind]}: a DBA sets it (ALTER ROLE {role} PASSWORD ...)")
    if "://" not in data_path:
        print(f"  the writer's machines write {data_path}, the readers' read it: give their OS users that access")
    print("  toolkit lake check --workspace 'ducklake:postgres:... user=ROLE' says what each role may do")
    return 0


def _lake_check(args: argparse.Namespace) -> int:
    """What the address's role may and may not do in the lake; exit 1 when it cannot even read it."""
    from toolkit.catalog.masking import mask_passwords
    from toolkit.errors import ToolkitError
    from toolkit.storage import grants
    if not args.workspace:
        print("toolkit lake check: name a team workspace: --workspace 'ducklake:postgres:...' (or TOOLKIT_WORKSPACE)",
              file=sys.stderr)
        return 2
    try:
        role, found = grants.abilities(args.workspace)
    except ToolkitError as error:
        return _failed("lake check", error)
    print(f"role {role} on {mask_passwords(args.workspace)}:")
    for ability in found:
        print(f"  {'can   ' if ability.can else 'cannot'} {ability.what}")
        if not ability.can:
            shown = ", ".join(ability.missing[:4]) + (f" and {len(ability.missing) - 4} more" if len(ability.missing) > 4 else "")
            kind = "--writer" if ability.what.startswith("write") else "--reader"
            print(f"         missing {shown}: a DBA gives it with toolkit lake init 'ducklake:postgres:... "
                  f"user=ADMIN' --data-path PATH {kind} {role} (or --print-sql for the SQL)")
    return 0 if found[0].can else 1


def _lake_clean(args: argparse.Namespace) -> int:
    """Remove (or list) a team workspace's orphan data files."""
    from toolkit.errors import ToolkitError
    from toolkit.storage.lake import is_lake
    if not args.workspace or not is_lake(args.workspace):
        print("toolkit lake clean: name a team workspace: --workspace 'ducklake:...' (or TOOLKIT_WORKSPACE); "
              "a file workspace has no orphan files", file=sys.stderr)
        return 2
    try:
        with _open(args, wait=args.wait) as ws:    # DuckLake lists them only through a writable attach
            found = ws.remove_orphans(older_than=args.older_than, dry_run=args.dry_run)
            where = ws.where
    except ToolkitError as error:
        return _failed("lake clean", error)
    for name in found:
        print(name)
    print(f"{len(found)} orphan file(s) {'found' if args.dry_run else 'removed'} in {where}")
    return 0


@contextlib.contextmanager
def _terminated_as_interrupted(wanted: bool = True) -> Iterator[None]:
    """SIGTERM (a cron job's timeout, `kill`) stops a command as Ctrl-C does: the pull it interrupts
    checkpoints what it walked and says so. Only the main thread may set handlers."""
    import signal
    import threading
    if not wanted or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings
    # a warning (a credentials file others can read, drift) is one line on stderr, not a file:line and a frame
    warnings.formatwarning = lambda message, category, *_, **__: f"toolkit: {category.__name__}: {message}\n"
    args = parser().parse_args(argv)
    from toolkit.errors import Interrupted
    try:
        with _terminated_as_interrupted(args.command != "sandbox"):   # the sandbox stops on SIGTERM its own way
            return args.run(args)
    except Interrupted as stopped:
        # 130 as for any Ctrl-C, with the line that says what was kept and what to run to go on
        print(f"toolkit {args.command}: interrupted: {stopped.what}; run the same command again to go on",
              file=sys.stderr, flush=True)
        return 130
    except KeyboardInterrupt:
        print(f"toolkit {args.command}: interrupted", file=sys.stderr, flush=True)
        return 130
    except BrokenPipeError:         # `toolkit actions | head`: the reader has what it wanted
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
