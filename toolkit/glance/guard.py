"""Whether a query may run for an assistant: one SELECT that reads the workspace's views and nothing else.

The check reads DuckDB's own parse of the query, never its spelling: `extract_statements` splits it
(a `;`-joined second statement is a second statement, comments are gone, case does not matter) and
says each statement's type; only a lone SELECT passes. Its syntax tree (`json_serialize_sql`, which
serializes SELECTs only) is then walked for what a SELECT can still reach beyond the workspace:
table functions that read files or settings (`read_csv`, `glob`, `duckdb_settings()`), a file named
as a table (`FROM 'x.csv'`), another attached catalog, and toolkit's `_audit`, whose rows hold what
was sent to the services. The query then runs on a read-only connection as well: the refusal comes
first, so nothing is ever half-done.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import orjson

from toolkit.errors import QueryRefusedError

__all__ = ["readable"]

# what a query may read as a table function: numbers and the catalog of tables, nothing from outside
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "duckdb_tables", "duckdb_views",
                             "duckdb_columns", "duckdb_schemas", "duckdb_types"})
# scalar functions are too many to list the good ones: these parts of a name reach files or settings
FUNCTION_PARTS = ("read_", "secret", "setting", "extension", "getenv", "database", "file", "glob", "query")
HIDDEN_TABLES = frozenset({"_audit", "_audit_events"})


def readable(query: str) -> str:
    """The query's one SELECT statement, as DuckDB parsed it; QueryRefusedError for anything else."""
    if not isinstance(query, str) or not query.strip():
        raise QueryRefusedError("no query given: ask one SELECT")
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as error:
        raise QueryRefusedError(f"the query does not parse: {str(error).splitlines()[0]}") from None
    if len(statements) != 1:
        raise QueryRefusedError(f"{len(statements)} statements given: ask one SELECT at a time")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        raise QueryRefusedError(f"{statement.type.name} is refused: the workspace is read-only here; "
                                "ask one SELECT")
    with duckdb.connect() as con:  # an empty in-memory database: parsing reads no table
        tree = orjson.loads(con.execute("SELECT json_serialize_sql(?)", [statement.query]).fetchall()[0][0])
    if tree.get("error"):
        raise QueryRefusedError(f"the query cannot be checked: {tree.get('error_message', 'DuckDB refused it')}")
    for problem in _problems(tree):
        raise QueryRefusedError(problem)
    # wrapped in a SELECT of its own later: a trailing `;` would end it early
    text = statement.query.rstrip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


def _problems(tree: Any) -> Iterator[str]:
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name not in TABLE_FUNCTIONS:
                yield f"the table function {name}() is refused: query the workspace's views"
        elif kind == "BASE_TABLE":
            catalog, schema, table = (str(node.get(k) or "") for k in ("catalog_name", "schema_name", "table_name"))
            if catalog:
                yield f"{catalog}.{schema}.{table}: name a view as service.resource, without a database"
            elif any(c in table for c in "./\\:"):
                yield f"{table!r} is not a view of the workspace: files are not read here"
            elif table.lower() in HIDDEN_TABLES or schema.lower().startswith("__ducklake"):
                yield f"{schema + '.' if schema else ''}{table} is not shared: it holds what was sent to services"
        elif "function_name" in node:
            name = str(node["function_name"]).lower()
            if any(part in name for part in FUNCTION_PARTS):
                yield f"the function {name}() is refused: it reaches beyond the workspace's views"


def _nodes(tree: Any) -> Iterator[dict]:
    """Every object of the syntax tree, depth first."""
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
