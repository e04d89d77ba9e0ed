"""`toolkit pull` and `toolkit refresh`: services' rows into a workspace, one line per resource (a cron log)."""
from __future__ import annotations

__all__ = ["add"]

import argparse
import contextlib
import sys
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.cli.options import (
    BUSY,
    CREDENTIALS_HELP,
    WAIT_HELP,
    credentials_file,
    credentials_refused,
    credentials_source,
    duration,
    failed,
    missing_workspace,
    open_workspace,
    unknown_name,
    workspace_options,
)

if TYPE_CHECKING:
    from toolkit.workspace import Workspace


def _ids(args: argparse.Namespace, ws: Workspace) -> list[str] | None:
    """The ids of --ids (comma-separated, repeatable, or @FILE of one a line) or --ids-from a view
    the workspace holds (SERVICE.RESOURCE.COLUMN): None when neither is given."""
    from toolkit.errors import WorkspaceError
    from toolkit.glance.reading import selected
    from toolkit.storage.file import quote
    if args.ids_from:
        parts = args.ids_from.split(".", 2)
        if len(parts) != 3 or not all(parts):
            raise WorkspaceError(f"--ids-from names a view's column as SERVICE.RESOURCE.COLUMN, not {args.ids_from!r}")
        schema, name, column = parts
        view = selected(ws, f"SELECT * FROM {quote(schema)}.{quote(name)}")   # UnknownTableError when not held
        if column not in view.columns:
            raise WorkspaceError(f"{schema}.{name} has no column {column!r}; it has {', '.join(view.columns)}")
        rows = selected(ws, f"SELECT DISTINCT {quote(column)} FROM {quote(schema)}.{quote(name)} "
                            f"WHERE {quote(column)} IS NOT NULL ORDER BY 1").fetchall()
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
    if unknown_name("pull", "service", [args.service], list(catalog.SERVICES)):
        return 2
    known = [name for (service, name) in catalog.RESOURCES if service == args.service]
    if unknown_name("pull", "resource", args.resources, known, where=f" in {args.service}"):
        return 2
    named = [catalog.RESOURCES[args.service, name] for name in args.resources]
    # the kinds of ids the named resources fan out over (a required path param is not one)
    wanting = {resource.parent for resource in named if resource.parent and resource.parent in bulk.needs(resource)}
    if (args.ids or args.ids_from) and len(wanting) != 1:
        print(f"toolkit pull: --ids go to one kind of ids; name the resources that take them "
              f"({', '.join(sorted(wanting)) or 'none of those named needs ids'})", file=sys.stderr)
        return 2
    if credentials_refused(args, "pull"):   # said before anything is opened or sent
        return 2
    try:
        with open_workspace(args, wait=args.wait) as ws, _resuming_said():
            ids = _ids(args, ws)
            client = ws.connect(args.service, source=credentials_source(args), credentials_file=credentials_file(args))
            print(f"pull {args.service} from {scrub_url(client.base_url)} into {ws.where}", flush=True)
            done = bulk.pull_service(client, args.resources or None, inputs={wanting.pop(): ids} if ids else None,
                                     log=lambda line: print(line, flush=True))
    except ToolkitError as error:
        return failed("pull", error)
    except OSError as error:        # an --ids @FILE that cannot be read
        print(f"toolkit pull: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    pulled = [p for p in done if not p.skipped and not p.error]
    print(f"{len(pulled)} pulled ({sum(p.rows for p in pulled):,} rows written, {sum(p.requests for p in pulled):,} "
          f"requests), {sum(bool(p.skipped) for p in done)} skipped, {sum(bool(p.error) for p in done)} failed")
    named_but_skipped = args.resources and any(p.skipped for p in done)
    if any(p.error for p in done) and all("WorkspaceBusyError" in p.error for p in done if p.error):
        return BUSY
    return 1 if named_but_skipped or any(p.error for p in done) else 0


# what `toolkit refresh` exits with besides 0 (everything asked for refreshed), 2 (bad arguments or
# credentials file), 75 (workspace busy) and 130 (interrupted): a scheduler tells these apart
NOTHING_REFRESHED = 1    # every resource failed or was skipped (no credentials), or the workspace holds none
PARTLY_REFRESHED = 3     # some refreshed, others failed or were skipped: the lines above say which
REFRESHED = ("full", "incremental", "cached", "resumed")


def _refresh(args: argparse.Namespace) -> int:
    from toolkit import catalog
    from toolkit.errors import ToolkitError
    from toolkit.pull.refresh import refresh
    if missing_workspace(args, "refresh"):
        return 2
    if unknown_name("refresh", "service", args.services, list(catalog.SERVICES)) or unknown_name(
            "refresh", "resource", args.resource, [f"{s}.{r}" for s, r in catalog.RESOURCES]):
        return 2
    if credentials_refused(args, "refresh"):   # said before anything is opened or sent
        return 2
    try:
        with open_workspace(args, wait=args.wait) as ws, _resuming_said():
            where = ws.where
            held = sorted(set(ws.loads()["service"])) if len(ws.loads()) else []
            named = sorted({r.split(".", 1)[0] for r in args.resource})
            unconnected = {}
            for service in args.services or named or held:
                try:
                    ws.connect(service, source=credentials_source(args), credentials_file=credentials_file(args))
                except ToolkitError as error:  # its resources are then skipped: said once here, in the command's words
                    print(f"{service}: not connected: {_unconnected(service, error, args)}", flush=True)
                    unconnected[service] = "no credentials (said above)" if _lacking(error) else "said above"
            table = refresh(ws, ws.connections, tuple(args.services), resources=args.resource or None,
                            incremental=not args.full, max_age=args.max_age, say=lambda line: print(line, flush=True),
                            unconnected=unconnected)
    except ToolkitError as error:
        return failed("refresh", error)
    counts = table["kind"].value_counts()
    # one line a cron log can tell from the last run's: when, which workspace, what changed
    from datetime import datetime
    changed = (f"+{int(table['added'].sum()):,} ~{int(table['changed'].sum()):,} "
               f"-{int(table['removed'].sum()):,} rows") if len(table) else "no rows"
    print(f"{datetime.now(UTC).isoformat(timespec='seconds')} refresh {where}: "
          f"{', '.join(f'{counts[k]} {k}' for k in counts.index) or 'nothing held'}, {changed} "
          f"({int(table['requests'].sum()):,} requests)")
    broken = table[table["kind"] == "failed"]
    if len(broken) and broken["error"].astype(str).str.contains("WorkspaceBusyError").all():
        return BUSY
    done = int(table["kind"].isin(REFRESHED).sum())
    if not len(table):
        print("toolkit refresh: nothing refreshed: the workspace holds no load"
              + (f" of {', '.join(args.services)}" if args.services else "")
              + "; `toolkit pull SERVICE ...` fills it first (exit 1)", file=sys.stderr)
        return NOTHING_REFRESHED
    others = (f"{int((table['kind'] == 'failed').sum())} failed, {int((table['kind'] == 'skipped').sum())} "
              "skipped (the lines above say why)")
    if done == 0:
        print(f"toolkit refresh: nothing refreshed: of {len(table)} resources, {others} (exit 1)", file=sys.stderr)
        return NOTHING_REFRESHED
    if done < len(table):
        print(f"toolkit refresh: partly refreshed: {done} of {len(table)} resources; {others} (exit 3)",
              file=sys.stderr)
        return PARTLY_REFRESHED
    return 0


def _lacking(error: BaseException) -> bool:
    """Whether connecting failed for want of credentials (none given anywhere), not for their content."""
    return getattr(error, "value", "") is None and "is required" in getattr(error, "rule", "")


def _unconnected(service: str, error: BaseException, args: argparse.Namespace) -> str:
    """Why a service could not be connected, in the command's words: which file, variables or flag."""
    from toolkit import catalog
    from toolkit.catalog.masking import mask_passwords
    if not _lacking(error):
        return f"{type(error).__name__}: {mask_passwords(str(error))}"
    fields = ("base_url", *(f for f in catalog.SERVICES[service].credentials if f not in ("mode", "system_version")))
    variables = ", ".join(f"TOOLKIT_{service.upper()}_{field.upper()}" for field in fields)
    given = credentials_file(args)
    if given:
        return f"no credentials: the file {given} holds no \"{service}\"; add it there, or set {variables}"
    return (f"no credentials: give --credentials FILE (or TOOLKIT_CREDENTIALS=FILE; `toolkit sandbox` writes one), "
            f"or set {variables}")


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


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    from toolkit import catalog
    pull = sub.add_parser("pull", help="pull resources of a service into a workspace, credentials from "
                                       "TOOLKIT_<SERVICE>_<FIELD>; one line per resource (for a scheduled job)")
    pull.add_argument("service", help=f"the service: {', '.join(catalog.SERVICES)}")
    pull.add_argument("resources", nargs="*", help="resources to pull (default: every one that needs no ids)")
    pull.add_argument("--ids", action="append", metavar="ID,ID|@FILE",
                      help="the ids a resource fans out over (memberships and profiles: profile ids; imports, "
                           "metrics), comma-separated or a file of one a line; repeatable")
    pull.add_argument("--ids-from", metavar="SERVICE.RESOURCE.COLUMN",
                      help="the ids from a view the workspace holds, e.g. audience_platform.profiles.item_id")
    workspace_options(pull, "the workspace's DuckDB file (created when missing)")
    pull.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    pull.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    pull.set_defaults(run=_pull)
    again = sub.add_parser("refresh", help="pull again every resource a workspace holds (or those of the named "
                                           "services), incrementally where the catalog says how; credentials "
                                           "from TOOLKIT_<SERVICE>_<FIELD>; one line per resource (for cron)")
    again.add_argument("services", nargs="*", metavar="SERVICE",
                       help="services to refresh (default: every one the workspace holds)")
    workspace_options(again, "the workspace's DuckDB file")
    again.add_argument("--credentials", metavar="FILE", help=CREDENTIALS_HELP)
    again.add_argument("--full", action="store_true", help="pull everything, not only what may have changed")
    again.add_argument("--resource", action="append", default=[], metavar="SERVICE.RESOURCE",
                       help="refresh only these held resources (repeatable); a held parent not named is not added")
    again.add_argument("--max-age", type=duration, metavar="DURATION",
                       help="keep loads younger than this, and ask again the parents of the fan-outs under a "
                            "freshness budget (versions, guests, documents, ...) that were confirmed longer ago; "
                            "seconds or 30m, 6h, 1d; 0 asks every parent again (default: the catalog's, a day)")
    again.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    again.set_defaults(run=_refresh)
