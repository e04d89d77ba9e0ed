"""A walk's batches staged in a DuckDB file of their own, uncompressed, so that the commit copies them
with DuckDB's own `INSERT ... SELECT` instead of reading Arrow (tried: docs/architecture/pull-speed.md).

Off by default (`TOOLKIT_DUCKDB_STAGE=1` turns it on, for a file workspace's page walks; a fan-out's
stage checkpoints and keeps toolkit.storage.stage). The batches go into `stage.duckdb` in the stage's
own folder beside the workspace, one table a batch, in one transaction of the stage's own connection,
on the load's writer thread (DuckDB releases the GIL while it executes); its memory is limited and
spills to that folder, so a pull of millions of rows stays flat. The workspace's file is still held
only at the commit, which attaches the stage's file read-only and copies each table. A batch with a
column of no type yet (only nulls, lists of only empty lists) stays Arrow, as DuckDB would store its
column as INTEGER: the commit takes those as before.
"""
from __future__ import annotations

__all__ = ["STAGE_MEMORY_LIMIT", "DuckStage", "StagedTable", "enabled"]

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.storage.file import quote
from toolkit.storage.processes import this_process
from toolkit.storage.schema import LONG_TEXT_BYTES, untyped_kind

STAGE_MEMORY_LIMIT = "64MB"   # the stage's DuckDB spills to its folder past this
_PREFIX = ".toolkit-stage-"   # as toolkit.storage.stage's folders: removed alike when abandoned


def enabled() -> bool:
    """Whether walks stage their batches in DuckDB (TOOLKIT_DUCKDB_STAGE=1)."""
    return os.environ.get("TOOLKIT_DUCKDB_STAGE", "") == "1"


@dataclass(frozen=True)
class StagedTable:
    """A batch staged in DuckDB: the name the commit reads it by, its Arrow schema as written (what
    the workspace's evolution compares types with) and its text columns long enough for zstd."""
    source: str
    schema: pa.Schema
    long: frozenset[str]
    num_rows: int


class DuckStage:
    """The batches of one walk's load, in the order they came, in a DuckDB file beside the workspace."""

    def __init__(self, workspace: Path, load_id: str) -> None:
        owner = this_process().replace("/", "~")
        self._folder = workspace.resolve().parent / f"{_PREFIX}{owner}~{load_id}"
        self._alias = f"_toolkit_staged_{load_id.replace('-', '_')}"
        self._con: duckdb.DuckDBPyConnection | None = None
        self._entries: list[pa.Table | StagedTable] = []
        self.checkpointed = False

    @property
    def file(self) -> Path:
        return self._folder / "stage.duckdb"

    def add(self, table: pa.Table) -> None:
        if any(pa.types.is_null(field.type) or untyped_kind(field.type) for field in table.schema):
            self._entries.append(table)
            return
        con = self._connection()
        name = f"b{len(self._entries):06d}"
        _toolkit_batch = table   # read by DuckDB's replacement scan
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _toolkit_batch")
        con.execute("CHECKPOINT")   # written now, on this thread, not when the commit attaches the file
        self._entries.append(StagedTable(f"{quote(self._alias)}.main.{name}", table.schema, _long_texts(table),
                                         table.num_rows))

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._folder.mkdir(mode=0o700)
            self._con = duckdb.connect(str(self.file), config={
                "threads": 1, "memory_limit": STAGE_MEMORY_LIMIT, "temp_directory": str(self._folder / "spill"),
                "force_compression": "uncompressed"})
        return self._con

    def seal(self) -> None:
        """The walk is over: let go of the stage's file for the commit."""
        con, self._con = self._con, None
        if con is not None:
            con.close()

    def attach(self, cursor: duckdb.DuckDBPyConnection) -> bool:
        """The stage's file attached read-only to the commit's connection; False when nothing is in it."""
        self.seal()
        if not any(isinstance(entry, StagedTable) for entry in self._entries):
            return False
        path = str(self.file).replace("'", "''")
        cursor.execute(f"ATTACH '{path}' AS {quote(self._alias)} (READ_ONLY)")
        return True

    def detach(self, cursor: duckdb.DuckDBPyConnection) -> None:
        cursor.execute(f"DETACH DATABASE IF EXISTS {quote(self._alias)}")

    def __iter__(self) -> Iterator[pa.Table | StagedTable]:
        yield from self._entries

    def checkpoint(self, note: dict[str, Any], done: list | None = None) -> None:
        raise RuntimeError("a walk's DuckDB stage does not checkpoint (a fan-out's stage does)")

    def adopt(self, checkpoint: Any) -> bool:
        raise RuntimeError("a walk's DuckDB stage does not take over checkpoints")

    def release(self) -> None:
        self.close()

    def close(self) -> None:
        con, self._con, self._entries = self._con, None, []
        if con is not None:
            con.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def _long_texts(table: pa.Table) -> frozenset[str]:
    """Text columns whose values average LONG_TEXT_BYTES or more (toolkit.storage.schema)."""
    found = set()
    for field in table.schema:
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            column = table.column(field.name)
            valid = len(column) - column.null_count
            if valid and pc.sum(pc.binary_length(column)).as_py() >= LONG_TEXT_BYTES * valid:
                found.add(field.name)
    return frozenset(found)
