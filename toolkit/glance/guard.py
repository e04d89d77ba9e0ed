"""Whether a query may run for an assistant: one SELECT that reads the workspace's views and nothing else.

This is the readable first answer ("INSERT is refused: ..."), not the wall: the query then runs on a
connection DuckDB itself seals (toolkit.storage.sealed: no file, no URL, no extension, no setting
changed, bounded in time, memory and spill), read-only, so what this list misses still reaches nothing.

The check reads DuckDB's own parse of the query, never its spelling, made on a throwaway in-memory
connection sealed the same way before anything is parsed (DuckDB 1.5 runs a PRAGMA while it splits
statements: `import_database` reads files, `tpch` downloads an extension; sealed, they fail and leave
no trace). `extract_statements` splits the query (a `;`-joined second statement is a second
statement, comments are gone, case does not matter) and says each statement's type; only a lone
SELECT passes. Its syntax tree (`json_serialize_sql`, which serializes SELECTs only) is then walked for
what a SELECT can still name beyond the workspace's views: table functions that read files
(`read_csv`, `glob`), a file named as a table (`FROM 'x.csv'`), another attached catalog, the engine's
catalog and settings (`duckdb_*`, `pragma_*`, `pg_settings`, `information_schema`, `current_setting`,
`getenv`), the lake's own metadata, and toolkit's `_audit`, whose rows hold what was sent to services.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import duckdb
import orjson

from toolkit.errors import QueryRefusedError
from toolkit.storage.sealed import parser

__all__ = ["readable"]

# what a query may read as a table function: numbers and lists, nothing from outside or of the engine
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
# scalar functions are too many to list the good ones: these parts of a name reach files, settings or
# the engine's catalog
FUNCTION_PARTS = ("read_", "secret", "setting", "extension", "getenv", "database", "file", "glob", "query",
                  "duckdb_", "pragma", "pg_", "ducklake", "sqlite_")
HIDDEN_TABLES = frozenset({"_audit", "_audit_events"})
# the engine's own views of its catalog, settings and databases: names and schemas
ENGINE_PREFIXES = ("duckdb_", "pragma_", "pg_", "sqlite_")
ENGINE_SCHEMAS = frozenset({"pg_catalog", "information_schema"})
VIEWS_SAY = "list_views and describe_view say what the workspace holds"
_PIVOT = re.compile(r"(?is)^\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*(?:un)?pivot\b")


def readable(query: str) -> str:
    """The query's one SELECT statement, as DuckDB parsed it; QueryRefusedError for anything else."""
    if not isinstance(query, str) or not query.strip():
        raise QueryRefusedError("no query given: ask one SELECT")
    with parser() as con:  # sealed before the parse: a PRAGMA DuckDB runs while splitting reaches nothing
        try:
            statements = con.extract_statements(query)
        except duckdb.Error as error:
            raise QueryRefusedError(f"the query does not parse here: {str(error).splitlines()[0][:200]}") from None
        if _PIVOT.match(query) and (len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT):
            raise QueryRefusedError("a PIVOT whose columns are not listed runs as more than one statement: list "
                                    "them with IN, e.g. PIVOT v ON k IN ('a', 'b') USING sum(n)")
        if len(statements) != 1:
            raise QueryRefusedError(f"{len(statements)} statements given: ask one SELECT at a time")
        statement = statements[0]
        if statement.type != duckdb.StatementType.SELECT:
            raise QueryRefusedError(f"{statement.type.name} is refused: the workspace is read-only here; "
                                    "ask one SELECT")
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
                yield f"the table function {name}() is refused: query the workspace's views; {VIEWS_SAY}"
        elif kind == "BASE_TABLE":
            catalog, schema, table = (str(node.get(k) or "") for k in ("catalog_name", "schema_name", "table_name"))
            named = ".".join(n for n in (catalog, schema, table) if n)
            if catalog.lower().startswith("__ducklake") or schema.lower().startswith("__ducklake") or \
                    table.lower().startswith("ducklake_"):
                yield f"{named} is not shared: it is the lake's own metadata (snapshots, files); {VIEWS_SAY}, view_history its loads"
            elif catalog:
                yield f"{named}: name a view as service.resource, without a database"
            elif any(c in table for c in "./\\:"):
                yield f"{table!r} is not a view of the workspace: files are not read here"
            elif table.lower() in HIDDEN_TABLES:
                yield f"{named} is not shared: it holds what was sent to services"
            elif schema.lower() in ENGINE_SCHEMAS or table.lower().startswith(ENGINE_PREFIXES):
                yield f"{named} is not shared: it is the engine's catalog or settings; {VIEWS_SAY}"
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
