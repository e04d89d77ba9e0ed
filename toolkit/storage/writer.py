"""A load's writer: typed tables gathered into batches and written on a thread of their own.

A batch is one DuckDB row group of rows (`BATCH_ROWS`) or at most `BATCH_BYTES` of Arrow, whichever
comes first. It is written while the next fills: DuckDB compresses and writes without the GIL, so on a
machine with two cores a pull's walk hardly waits for the workspace. One batch is in flight at most,
so memory stays bounded whatever the width of a row; a failed write fails the load.

    with ws.load(...) as load, load.writer() as writer:
        for table in tables: writer.add(table)
        writer.flush(wait=True)
"""
from __future__ import annotations

__all__ = ["BATCH_BYTES", "BATCH_ROWS", "TABLES_AT_MOST", "Writer", "Writes", "as_text", "joined"]

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import orjson
import pyarrow as pa


class Writes(Protocol):
    """What a writer writes into: a load (toolkit.storage.loads.Load)."""

    def write(self, batch: pa.Table) -> None: ...

# rows per batch written: one DuckDB row group (fewer, larger batches pulled faster than 50,000 rows
# did: benchmarks/fetch.py); wide rows stop at BATCH_BYTES first
BATCH_ROWS = 122_880
# and at most this many bytes of Arrow: one batch is written while the next fills, so this bounds
# a pull's memory whatever the width of a row
BATCH_BYTES = 16 * 2**20
# tables waiting, at most, before they are made one: a fan-out's member is a table of a few rows, and
# each Arrow table holds some 16 kB beside its data (buffers, arrays, schema), so a batch's 25,000 tables
# of five memberships held 413 MB for 8 MB of rows
TABLES_AT_MOST = 256


class Writer:
    """Gathers a load's tables and writes them in batches, one at a time on a thread of its own."""

    def __init__(self, load: Writes) -> None:
        self.tables: list[pa.Table] = []
        self.load, self.pending, self.rows, self.bytes = load, 0, 0, 0
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolkit-write")
        self._writing: Future | None = None

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._wait()      # before the load commits or rolls back: no write may land after that
        finally:
            self._writer.shutdown(wait=True)

    def add(self, table: pa.Table) -> None:
        self.tables.append(table)
        self.pending += table.num_rows
        self.rows += table.num_rows
        self.bytes += table.nbytes
        if self.pending >= BATCH_ROWS or self.bytes >= BATCH_BYTES:
            self.flush()
        elif len(self.tables) >= TABLES_AT_MOST:
            self.tables = [joined(self.tables).combine_chunks()]

    def flush(self, *, wait: bool = False) -> None:
        if self.tables:
            batch = joined(self.tables)
            self.tables, self.pending, self.bytes = [], 0, 0
            self._wait()
            self._writing = self._writer.submit(self.load.write, batch)
        if wait:
            self._wait()

    def _wait(self) -> None:
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()


def joined(tables: list[pa.Table]) -> pa.Table:
    """Typed pages as one batch. A column Arrow cannot unify (one page's ids text, the others'
    integers: toolkit.pull.frames) is text in each, as the workspace widens the stored column."""
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        pass
    kinds: dict[str, set] = {}
    for table in tables:
        for item in table.schema:
            kinds.setdefault(item.name, set()).add(item.type)
    clashing = {name for name, types in kinds.items() if len(types - {pa.null()}) > 1}
    return pa.concat_tables([as_text(table, clashing) for table in tables],
                            promote_options="permissive")


def as_text(table: pa.Table, names: set[str]) -> pa.Table:
    for name in names & set(table.column_names):
        column = table.column(name)
        try:
            text = column.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            text = pa.array([None if v is None else orjson.dumps(v, default=str).decode()
                             for v in column.to_pylist()], pa.string())
        table = table.set_column(table.column_names.index(name), name, text)
    return table
