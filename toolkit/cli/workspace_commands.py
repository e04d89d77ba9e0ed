"""What a workspace holds and what is made of it: `toolkit show`, `export`, `migrate`, `mcp`."""
from __future__ import annotations

__all__ = ["add"]

import argparse
import json
import sys
from pathlib import Path

from toolkit.cli.options import (
    WAIT_HELP,
    failed,
    in_cli_words,
    missing_workspace,
    open_workspace,
    read_only_waiting,
    workspace_options,
)


def _show(args: argparse.Namespace) -> int:
    """What each view of a workspace holds: rows, its latest load and filter, age, drift, freshness."""
    from toolkit.errors import ToolkitError
    if missing_workspace(args, "show"):
        return 2
    try:
        with open_workspace(args, read_only=True, wait=args.wait) as ws:
            views = ws.tables()
            fresh = ws.freshness().set_index(["service", "resource"])
            drift = ws.drift()
    except ToolkitError as error:
        return failed("show", error)
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


def _export(args: argparse.Namespace) -> int:
    from toolkit.errors import ToolkitError, WorkspaceBusyError
    if missing_workspace(args, "export"):
        return 2
    try:
        with open_workspace(args, wait=args.wait) as ws:
            where = ws.where
            path = ws.export(args.out, format=args.format, history=args.history, overwrite=args.overwrite,
                             resources=args.resource, since=args.since)
    except WorkspaceBusyError as error:
        return failed("export", error)
    except (ToolkitError, FileExistsError, ValueError) as error:
        # the CLI's own words for the option the Python error names
        print(f"toolkit export: {in_cli_words(str(error))}", file=sys.stderr)
        return 2
    kept = ", every load" if args.history else f", the loads since {args.since}" if args.since else ""
    some = f" of {', '.join(args.resource)}" if args.resource else ""
    print(f"exported {where}{some} to {path} ({args.format}{kept})")
    return 0


def _mcp(args: argparse.Namespace) -> int:
    """Serve a workspace, snapshot or team lake read-only over MCP on stdin/stdout (toolkit.glance)."""
    from toolkit.errors import ToolkitError
    if missing_workspace(args, "mcp"):
        return 2
    try:
        from toolkit.glance import mcp_server, reading
    except ImportError as error:
        print(f"toolkit mcp: the MCP SDK is missing ({error.name}): pip install -e '.[mcp]' in the clone", file=sys.stderr)
        return 2
    from toolkit.storage.sealed import Limits
    try:
        limits = Limits.from_environment(args.time_limit, args.memory_limit, args.spill_limit)
        source = reading.open_source(args.workspace, args.data_path or None, wait=args.wait, limits=limits)
    except ToolkitError as error:
        return failed("mcp", error)
    try:
        with source:       # stdout is the protocol's: every word for a person goes to stderr
            mcp_server.serve(source, limits.seconds)
    finally:
        limits.remove_temp()
    return 0


def _migrate(args: argparse.Namespace) -> int:
    import duckdb

    from toolkit.errors import ToolkitError
    from toolkit.storage.file import old_layout
    from toolkit.workspace import Workspace
    if not Path(args.workspace).exists():
        from toolkit.storage.file import not_there
        print(f"toolkit migrate: {not_there(Path(args.workspace), 'workspace')}", file=sys.stderr)
        return 2
    try:
        with read_only_waiting(Path(args.workspace), args.wait) as con:
            old = old_layout(con)
        Workspace(args.workspace, wait=args.wait).close()   # a read-write open migrates, in one transaction
    except (ToolkitError, duckdb.Error) as error:
        return failed("migrate", error)
    done = ", ".join(f"{service}.{resource}" for service, resource in old)
    print(f"migrated {args.workspace} to row versions: {done}" if old else f"{args.workspace} is up to date")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    """Register this group's commands on the `toolkit` parser's subcommands."""
    show = sub.add_parser("show", help="what each view of a workspace holds: rows, latest load, its filter, "
                                       "loads kept, drift, and how fresh its rows are against their budget")
    workspace_options(show, "the workspace's DuckDB file")
    show.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="a table that fits the terminal (default), JSON or CSV")
    show.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    show.set_defaults(run=_show)
    assistant = sub.add_parser("mcp", help="serve a workspace read-only to an assistant over the Model Context "
                                           "Protocol (stdio): its views, columns, history, diffs and SELECTs")
    workspace_options(assistant, "the workspace's DuckDB file, or a snapshot (file or Parquet folder)")
    assistant.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    assistant.add_argument("--time-limit", type=float, metavar="SECONDS",
                           help="how long one call may run before it is stopped (default TOOLKIT_MCP_TIME_LIMIT, else 30)")
    assistant.add_argument("--memory-limit", metavar="SIZE",
                           help="DuckDB's memory for the assistant's queries (default TOOLKIT_MCP_MEMORY_LIMIT, else 1GB)")
    assistant.add_argument("--spill-limit", metavar="SIZE",
                           help="what its queries may spill to a temp folder of the server's own "
                                "(default TOOLKIT_MCP_SPILL_LIMIT, else 1GB)")
    assistant.set_defaults(run=_mcp)
    migrate = sub.add_parser("migrate", help="bring a workspace written by an older toolkit to the current "
                                             "layout (a read-write open does it too)")
    migrate.add_argument("--workspace", required=True, help="the workspace's DuckDB file")
    migrate.add_argument("--wait", type=float, metavar="SECONDS", help=WAIT_HELP)
    migrate.set_defaults(run=_migrate)
    export = sub.add_parser("export", help="export a workspace's latest loads as a snapshot file or Parquet folder")
    workspace_options(export, "the workspace's DuckDB file")
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
