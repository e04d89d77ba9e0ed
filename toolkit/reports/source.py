"""What a report reads: a Workspace, a Snapshot, or a DuckDB connection (anything with `.sql()`).

Every report asks SQL of the source: `<service>.<resource>` is the latest load in all three, `_loads`
lists the loads, and `<service>.<resource>__loads` (a workspace, or a snapshot exported with
`history=True`) gives every load's rows with `_load_id`, which the reports over time need: a view
computed from the row versions (toolkit.duckfile), or the table of copies an older export holds.

"Now" is when the latest load finished, whatever the base URL. The sandbox runs on a virtual clock
that the loads' wall-clock times do not show, and only its handle knows that clock (a real service
reached through a localhost tunnel has a loopback URL too): so a report that compares against now
takes `now=` (`box.clock.now()`), and the burndown `as_of=`, the moment each load saw.

    late = reports.translation.overdue(ws, now=box.clock.now())
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from toolkit.duckfile import quote

FINISHED = ("complete", "stale")


def frame(source: Any, query: str, params: Any = None) -> pd.DataFrame:
    """The query's rows as a DataFrame."""
    relation = source.sql(query, params=params) if params is not None else source.sql(query)
    return relation.df()


def has(source: Any, service: str, table: str) -> bool:
    """Whether the source holds table or view `service.table`."""
    query = ("SELECT count(*) AS n FROM (SELECT schema_name, table_name FROM duckdb_tables() UNION ALL "
             "SELECT schema_name, view_name FROM duckdb_views()) WHERE schema_name = ? AND table_name = ?")
    return bool(frame(source, query, [service, table])["n"].iloc[0])


def has_column(source: Any, service: str, table: str, column: str) -> bool:
    """Whether `service.table` has the column (a file written by an older toolkit may lack it)."""
    query = ("SELECT count(*) AS n FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
             "AND column_name = ?")
    return bool(frame(source, query, [service, table, column])["n"].iloc[0])


def table(source: Any, service: str, resource: str, columns: str = "*") -> pd.DataFrame:
    """The latest load of a resource; an empty frame when the source does not hold it."""
    if not has(source, service, resource):
        return pd.DataFrame()
    return frame(source, f"SELECT {columns} FROM {quote(service)}.{quote(resource)}")


def loads(source: Any, service: str, resource: str) -> pd.DataFrame:
    """The finished loads of a resource, oldest first: load_id, base_url, started, finished, rows."""
    if not has(source, "main", "_loads"):
        return pd.DataFrame(columns=["load_id", "base_url", "started", "finished", "rows"])
    return frame(source, "SELECT load_id, base_url, started, finished, \"rows\" FROM _loads WHERE service = ? "
                 "AND resource = ? AND status IN ('complete', 'stale') ORDER BY finished, started",
                 [service, resource])


def history(source: Any, service: str, resource: str) -> bool:
    """Whether the rows of every load are there (not only the latest)."""
    return has(source, service, f"{resource}__loads")


def utc(value: Any) -> pd.Timestamp | None:
    """A tz-aware UTC Timestamp, or None for a missing value."""
    if value is None or pd.isna(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def translation_now(source: Any, now: Any = None) -> pd.Timestamp | None:
    """The moment the translation reports measure against: `now` when given (the sandbox's
    `box.clock.now()`), else when the latest load of targets finished; None with no load."""
    if now is not None:
        return utc(now)
    pulled = loads(source, "translation", "targets")
    return None if pulled.empty else utc(pulled["finished"].iloc[-1])
