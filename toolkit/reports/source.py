"""What a report reads: a Workspace, a Snapshot, or a DuckDB connection (anything with `.sql()`).

Every report asks SQL of the source: `<service>.<resource>` is the latest load in all three, `_loads`
lists the loads, and `<service>.<resource>__loads` (a workspace, or a snapshot exported with
`history=True`) gives every load's rows with `_load_id`, which the reports over time need: a view
computed from the row versions (toolkit.storage.file), or the table of copies an older export holds.

"Now" is the service's own clock at the latest load: each load records the `Date` header of the
service's latest answer (`_loads.service_clock`), so a deadline is measured as the service measures
it, whether this machine's clock is off or the service is the sandbox on its virtual clock. A load
without one (a service that sends no Date, a file of an older toolkit) is dated by this machine's
clock when it finished. `now=` overrides both; every report says which clock it used (`clock_of`).

    late = reports.translation.overdue(ws); late.attrs["now"], late.attrs["clock"]
"""
from __future__ import annotations

__all__ = ["CLOCKS", "FINISHED", "GIVEN", "OUR_CLOCK", "SERVICE_CLOCK", "clock_of", "frame", "has",
           "has_column", "history", "load_moment", "loads", "table", "translation_now", "utc"]

from typing import Any

import pandas as pd

from toolkit.storage.file import quote

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
    """The finished loads of a resource, oldest first: load_id, base_url, started, finished, rows, and
    service_clock (the service's clock at the load's latest answer; NULL where it was not recorded)."""
    if not has(source, "main", "_loads"):
        return pd.DataFrame(columns=["load_id", "base_url", "started", "finished", "rows", "service_clock"])
    clock = "service_clock" if has_column(source, "main", "_loads", "service_clock") else \
        "NULL::TIMESTAMPTZ AS service_clock"
    return frame(source, f"SELECT load_id, base_url, started, finished, \"rows\", {clock} FROM _loads "
                 "WHERE service = ? AND resource = ? AND status IN ('complete', 'stale') "
                 "ORDER BY finished, started", [service, resource])


def history(source: Any, service: str, resource: str) -> bool:
    """Whether the rows of every load are there (not only the latest)."""
    return has(source, service, f"{resource}__loads")


def utc(value: Any) -> pd.Timestamp | None:
    """A tz-aware UTC Timestamp, or None for a missing value."""
    if value is None or pd.isna(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


GIVEN, SERVICE_CLOCK, OUR_CLOCK = "given", "service", "this machine"
CLOCKS = {GIVEN: "the moment given (now=)", SERVICE_CLOCK: "the service's clock (its Date header) at the latest load",
          OUR_CLOCK: "this machine's clock when the latest load finished (the service sent no Date)"}


def load_moment(service_clock: Any, finished: Any) -> tuple[pd.Timestamp | None, str]:
    """When a load saw the service: by the service's clock where recorded, else by ours; and which."""
    moment = utc(service_clock)
    return (moment, SERVICE_CLOCK) if moment is not None else (utc(finished), OUR_CLOCK)


def clock_of(source: Any, now: Any = None, service: str = "translation",
             resource: str = "targets") -> tuple[pd.Timestamp | None, str]:
    """The moment a report measures against and the clock it comes from (a key of CLOCKS): `now` when
    given, else the latest load of `service.resource` as the service's clock saw it; None with no load."""
    if now is not None:
        return utc(now), GIVEN
    pulled = loads(source, service, resource)
    if pulled.empty:
        return None, GIVEN
    return load_moment(pulled["service_clock"].iloc[-1], pulled["finished"].iloc[-1])


def translation_now(source: Any, now: Any = None) -> pd.Timestamp | None:
    """The moment the translation reports measure against (`clock_of` without which clock)."""
    return clock_of(source, now)[0]
