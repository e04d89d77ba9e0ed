"""The record of loads (`_loads`) and of categories (`_categories`), kept the way the backend allows.

In a DuckDB file one process writes at a time, so a load's row in `_loads` is updated in place as the
load goes (running, then complete or failed, then stale). In a lake many processes commit at once, and
DuckLake makes two transactions that update or delete rows of one table conflict whatever rows they
touch (measured with two writers: 4 and 11 of 30 commits each failed), while appends never do. So
there every change is a new row of `_load_events` (`_category_events`), stamped with `_event`, and
`_loads` (`_categories`) is a view of each load's (each column's) latest row: the same names and
columns to every reader, the reports and the exports included.

Commits of one resource must still follow each other (each takes the next `seq`). In a file the file's
lock sees to it; in a lake each commit rewrites the resource's one-row `<resource>__head` table, so
two at once conflict and one of them is retried (toolkit.storage.loads).
"""
from __future__ import annotations

__all__ = ["CATEGORIES_COLUMNS", "CONFIRMED", "IN_ORDER", "LOADS_COLUMNS", "create", "head_of", "insert_load", "next_seq",
           "put_categories", "update_loads"]

import time
from collections.abc import Sequence
from typing import Any

import duckdb

from toolkit.storage import id_lists
from toolkit.storage.file import quote

# every column `_loads` has had, in order; a file written before one of them gains it on a read-write open
LOADS_COLUMNS = (
    ("load_id", "VARCHAR"), ("service", "VARCHAR"), ("base_url", "VARCHAR"), ("resource", "VARCHAR"),
    ("params", "VARCHAR"), ("started", "TIMESTAMPTZ"), ("finished", "TIMESTAMPTZ"), ('"rows"', "BIGINT"),
    ("requests", "BIGINT"), ("status", "VARCHAR"), ("error", "VARCHAR"), ("failed_ids", "VARCHAR[]"),
    ('"key"', "VARCHAR[]"), ("seq", "BIGINT"), ("kind", "VARCHAR"), ("builds_on", "VARCHAR"),
    ("drift", "JSON"), ("service_clock", "TIMESTAMPTZ"), ("owner", "VARCHAR"), ("commit_seconds", "DOUBLE"),
    ("conflicts", "INTEGER"), ("seen", "JSON"))
_FIRST = 13  # the columns the first `_loads` had; the others were added since
CATEGORIES_COLUMNS = (("service", "VARCHAR"), ("resource", "VARCHAR"), ("column_name", "VARCHAR"),
                      ("categories", "VARCHAR[]"))


def _columns(columns: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)


# the loads' order (an ORDER BY of `_loads`), whatever this machine's clock said: a resource's finished
# loads by their number (`seq`), each placed no earlier than those numbered before it, so a load made while
# the clock ran behind still comes after them; the loads that took no number (failed, running) by their start
IN_ORDER = ("CASE WHEN seq IS NULL THEN started ELSE max(started) OVER (PARTITION BY service, resource, "
            "seq IS NULL ORDER BY seq) END, seq NULLS LAST, started")

CONFIRMED = "CREATE TABLE IF NOT EXISTS _confirmed (service VARCHAR, resource VARCHAR, parent VARCHAR, load_id VARCHAR)"


def create(con: duckdb.DuckDBPyConnection, lake: bool) -> None:
    """The record's tables (and, in a lake, its views), where missing. `_confirmed`: the parents a
    fan-out load asked, which a freshness budget reads (toolkit.pull.increments "rotation"), and
    `_given_ids`, the long lists of ids loads were given (toolkit.storage.id_lists): appended only, in a
    file and a lake alike."""
    if not lake:
        con.execute(CONFIRMED)
        con.execute(id_lists.CREATE)
        con.execute(f"CREATE TABLE IF NOT EXISTS _loads ({_columns(LOADS_COLUMNS[:_FIRST])})")
        con.execute(f"CREATE TABLE IF NOT EXISTS _categories ({_columns(CATEGORIES_COLUMNS)})")
        for name, kind in LOADS_COLUMNS[_FIRST:]:
            con.execute(f"ALTER TABLE _loads ADD COLUMN IF NOT EXISTS {name} {kind}")
        return
    have = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database() "
        "AND schema_name = 'main'").fetchall()}
    if "_load_events" not in have:
        con.execute(f"CREATE TABLE IF NOT EXISTS _load_events ({_columns(LOADS_COLUMNS)}, _event BIGINT)")
    else:   # a lake made before a column was added gains it (the `_loads` view reads * anew)
        present = {name for (name,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND table_name = '_load_events'").fetchall()}
        for name, kind in LOADS_COLUMNS:
            if name.strip('"') not in present:
                con.execute(f"ALTER TABLE _load_events ADD COLUMN IF NOT EXISTS {name} {kind}")
    if "_confirmed" not in have:
        con.execute(CONFIRMED)
    if "_given_ids" not in have:
        con.execute(id_lists.CREATE)
    if "_category_events" not in have:
        con.execute(f"CREATE TABLE IF NOT EXISTS _category_events ({_columns(CATEGORIES_COLUMNS)}, _event BIGINT)")
    if "_loads" not in have:
        con.execute("CREATE VIEW IF NOT EXISTS _loads AS SELECT * EXCLUDE (_event) FROM main._load_events "
                    "QUALIFY row_number() OVER (PARTITION BY load_id ORDER BY _event DESC) = 1")
    if "_categories" not in have:
        con.execute("CREATE VIEW IF NOT EXISTS _categories AS SELECT * EXCLUDE (_event) FROM main._category_events "
                    "QUALIFY row_number() OVER (PARTITION BY service, resource, column_name ORDER BY _event DESC) = 1")


def _event() -> int:
    return time.time_ns()


def insert_load(con: duckdb.DuckDBPyConnection, lake: bool, values: dict[str, Any]) -> None:
    """A new load's row (`values` by column name)."""
    names = list(values)
    table, args = ("_load_events", [*values.values(), _event()]) if lake else ("_loads", list(values.values()))
    names += ["_event"] if lake else []
    con.execute(f"INSERT INTO {table} ({', '.join(quote(n) for n in names)}) "
                f"VALUES ({', '.join('?' for _ in names)})", args)


def update_loads(con: duckdb.DuckDBPyConnection, lake: bool, changes: Sequence[tuple[str, str]],
                 values: Sequence[Any], where: str, where_values: Sequence[Any] = ()) -> None:
    """Change loads' rows: `changes` are (column, SQL expression) pairs, `values` the parameters of
    those expressions in order, `where` the rows' condition with its own parameters after them."""
    if not lake:
        sets = ", ".join(f"{quote(name)} = {expression}" for name, expression in changes)
        con.execute(f"UPDATE _loads SET {sets} WHERE {where}", [*values, *where_values])
        return
    replaced = ", ".join(f"{expression} AS {quote(name)}" for name, expression in changes)
    con.execute(f"INSERT INTO _load_events BY NAME SELECT * REPLACE ({replaced}), ?::BIGINT AS _event "
                f"FROM _loads WHERE {where}", [*values, _event(), *where_values])


def put_categories(con: duckdb.DuckDBPyConnection, lake: bool, service: str, resource: str, column: str,
                   categories: list[str]) -> None:
    """A column's categories, replacing what was kept for it."""
    if lake:
        con.execute("INSERT INTO _category_events VALUES (?, ?, ?, ?, ?)",
                    [service, resource, column, categories, _event()])
        return
    con.execute("DELETE FROM _categories WHERE service = ? AND resource = ? AND column_name = ?",
                [service, resource, column])
    con.execute("INSERT INTO _categories VALUES (?, ?, ?, ?)", [service, resource, column, categories])


def head_of(service: str, resource: str) -> str:
    """A lake's one-row table that every commit of a resource rewrites (the module docstring)."""
    return f"{quote(service)}.{quote(resource + '__head')}"


def next_seq(con: duckdb.DuckDBPyConnection, lake: bool, service: str, resource: str) -> int:
    """The number of a resource's next finished load, inside the committing transaction."""
    seq = con.execute("SELECT coalesce(max(seq), 0) + 1 FROM _loads WHERE service = ? AND resource = ?",
                      [service, resource]).fetchall()[0][0]
    if lake:
        head = head_of(service, resource)
        con.execute(f"CREATE TABLE IF NOT EXISTS {head} (seq BIGINT)")
        con.execute(f"DELETE FROM {head}")
        con.execute(f"INSERT INTO {head} VALUES (?)", [seq])
    return seq
