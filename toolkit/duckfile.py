"""The DuckDB file under a workspace or a snapshot: how it is opened, and the names inside it.

    <service>.<resource>__loads   the rows of every load, with `_load_id` (`table_of`)
    <service>.<resource>          a view of the latest finished load (`view_sql`)
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from toolkit.errors import WorkspaceInUseError, WorkspaceOpenHereError

FINISHED = ("complete", "stale")  # loads whose rows are data; only "complete" ones are reused as a cache


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_of(service: str, resource: str) -> str:
    """The table with every load's rows."""
    return f"{quote(service)}.{quote(resource + '__loads')}"


def view_sql(service: str, resource: str, catalog: str | None = None) -> str:
    """The view of the latest finished load, created in `catalog` (the workspace's own by default).

    Its names are qualified by schema and never by catalog: DuckDB binds them in the view's own
    database first, so the view reads its own file's `_loads` when that file is attached under any
    name (`ATTACH 'ws.duckdb' AS w; FROM w.translation.targets`) or copied. An unqualified `_loads`
    would be looked for in the view's schema and then in the attaching session's own database.
    """
    latest = (f"SELECT load_id FROM main._loads WHERE service = {literal(service)} "
              f"AND resource = {literal(resource)} "
              f"AND status IN {FINISHED} ORDER BY finished DESC, started DESC LIMIT 1")
    name = f"{quote(service)}.{quote(resource)}"
    return (f"CREATE OR REPLACE VIEW {catalog + '.' if catalog else ''}{name} AS SELECT * EXCLUDE (_load_id) "
            f"FROM {table_of(service, resource)} WHERE _load_id = ({latest})")


def session(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Settings every connection needs: no progress bar of DuckDB's own, timestamps handed out in UTC."""
    con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")
    return con


def open_duckdb(path: Path | None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection; a file locked by another process becomes `WorkspaceInUseError`, one open in this
    process the other way (read-write against read-only) `WorkspaceOpenHereError`."""
    try:
        con = session(duckdb.connect(str(path) if path else ":memory:", read_only=read_only))
        if path:
            # DuckDB keeps written blocks in its buffer pool up to 80% of RAM by default, so a big load
            # would grow the process with N; a file-backed workspace can spill, so bound it
            con.execute(f"SET memory_limit = '{os.environ.get('TOOLKIT_DUCKDB_MEMORY_LIMIT', '64MB')}'")
        return con
    except duckdb.ConnectionException as error:
        if "different configuration" not in str(error):
            raise
        raise WorkspaceOpenHereError(path, read_only) from None
    except duckdb.IOException as error:
        if "lock" not in str(error).lower():
            raise
        pid = re.search(r"PID (\d+)", str(error))
        raise WorkspaceInUseError(path, int(pid.group(1)) if pid else None, read_only) from None
