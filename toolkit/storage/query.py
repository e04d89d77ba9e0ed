"""A workspace's query: a DuckDB relation that holds the workspace's file only while it runs.

`Store.sql`, `as_of(..., relation=True)` and `versions(..., relation=True)` give one; it keeps the query
and the steps chained onto it and runs them anew each time, so it sees the loads committed since.
"""
from __future__ import annotations

__all__ = ["Query"]

from typing import Any

import duckdb
import pyarrow as pa

from toolkit.storage.handle import FileHandle


class Query:
    """A DuckDB relation (`.df()`, `.arrow()`, `.show()`, `.fetchall()`, chaining) that holds the
    workspace's file only while it runs: it keeps the query and the steps chained onto it, and runs
    them anew each time, so it sees the loads committed since it was made. It also answers
    `fetchone()`, which DuckDB 2.0 relations no longer have. Once its workspace is closed, it says
    so (`WorkspaceError`)."""

    def __init__(self, file: FileHandle, query: str, params: Any = None, steps: tuple = (),
                 rows: pa.Table | None = None) -> None:
        self._file, self._query, self._params, self._steps = file, query, params, steps
        self._rows = rows  # what a statement that ran at once gave (INSERT ... RETURNING, PRAGMA): never run again

    def _relation(self, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
        relation = con.from_arrow(self._rows) if self._rows is not None else con.sql(self._query, params=self._params)
        for name, args, kwargs in self._steps:
            relation = getattr(relation, name)(*_live(args, con), **kwargs)
        return relation

    def fetchone(self) -> tuple | None:
        rows = self.limit(1).fetchall()
        return rows[0] if rows else None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or not hasattr(duckdb.DuckDBPyRelation, name):
            raise AttributeError(f"a workspace query has no attribute {name!r}")
        if not callable(getattr(duckdb.DuckDBPyRelation, name)):  # columns, types, shape...
            with self._file.held() as con:
                return getattr(self._relation(con), name)

        def run(*args: Any, **kwargs: Any) -> Any:
            with self._file.held() as con:
                result = getattr(self._relation(con), name)(*_live(args, con), **kwargs)
                if isinstance(result, duckdb.DuckDBPyRelation):  # a step: kept, run with the rest
                    return Query(self._file, self._query, self._params,
                                 (*self._steps, (name, args, kwargs)), self._rows)
                if isinstance(result, pa.RecordBatchReader):  # a stream would outlive the file's hold
                    result = pa.RecordBatchReader.from_batches(result.schema, list(result))
                return result
        return run

    def __repr__(self) -> str:
        with self._file.held() as con:
            return repr(self._relation(con))

    def _repr_html_(self) -> str:
        with self._file.held() as con:
            return self._relation(con).limit(20).df().to_html()


def _live(args: tuple, con: duckdb.DuckDBPyConnection) -> list:
    """A step's arguments with any Query among them (a join's other side) as a relation on `con`."""
    return [arg._relation(con) if isinstance(arg, Query) else arg for arg in args]
