"""How a load's batches shape the table of its row versions: the table created from the first batch,
new columns added, a column whose values no longer fit its type widened (to DuckDB's union of the two
types where every value casts, else to text), and DuckDB's type of an Arrow type with untyped parts.

`Evolution` is the table of one commit of a `toolkit.storage.loads.Load`, made for that commit with what
it needs (the commit's cursor, the FileHandle, the resource, its key and the columns stored so far): it
chooses where the batches go (`stage`), and `take` makes the tables able to hold each batch. Everything
here runs on the commit's cursor except the one question a failed statement would abort the
transaction for, asked on the shared connection.
"""
from __future__ import annotations

__all__ = ["LONG_TEXT_BYTES", "Evolution", "nested", "untyped_kind"]

import functools
import re

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.storage.file import VALIDITY, quote, versions_of
from toolkit.storage.handle import FileHandle
from toolkit.storage.readback import casts_unchanged

# text columns whose values average this many bytes or more (free text, JSON, URLs) are stored with
# zstd: for notifications' messages and details it took less CPU than DuckDB's default (DICT_FSST),
# stored them smaller and read back as fast (benchmarks/workspace_io.py). Shorter ones (ids, names,
# statuses) keep the default, which is smaller for them and quicker to look up.
LONG_TEXT_BYTES = 40


def nested(kind: str) -> bool:
    """Whether a DuckDB type holds lists or structs (whose casts can lose values inside)."""
    return kind.endswith("]") or kind.upper().startswith(("STRUCT", "MAP", "UNION"))


class Evolution:
    """The table of a load's row versions made and kept able to take each batch (the module docstring).

    `columns`: the versions' columns as the commit's transaction sees them (None: no table yet);
    `stage`: the temporary table the batches go into when valid versions exist (else None: straight
    into the versions); `targets`: the tables a batch's columns are added to; `changed`: whether the
    table's columns changed, so that its views are made again.
    """

    def __init__(self, cursor: duckdb.DuckDBPyConnection, handle: FileHandle, service: str, resource: str,
                 key: tuple[str, ...], columns: dict[str, str] | None, stage_name: str) -> None:
        self._cursor, self._handle, self._stage_name = cursor, handle, stage_name
        self.service, self.resource, self.key = service, resource, key
        self.versions = versions_of(service, resource)
        self.columns = columns
        self.stage: str | None = None
        self.targets: list[str] = []
        self.changed = False

    def take(self, incoming: dict[str, str], table: pa.Table) -> dict[str, str]:
        """Make the tables able to take a batch of these columns (name → DuckDB type): the stored columns after."""
        if self.columns is None:
            return self._create(incoming, table)
        if not self.targets:
            self._choose_target()
        return self._evolve(incoming, table)

    def _choose_target(self) -> None:
        """Write straight into the versions when none is valid (every row is then new), else into a stage."""
        valid = self._cursor.execute(f"SELECT 1 FROM {self.versions} WHERE _valid_to IS NULL LIMIT 1").fetchall()
        if valid:
            self.stage = f"temp.main.{quote(self._stage_name)}"
            self._cursor.execute(f"CREATE TEMP TABLE {quote(self._stage_name)} AS "
                                 f"SELECT * EXCLUDE (_valid_from, _valid_to) FROM {self.versions} LIMIT 0")
        self.targets = [self.versions] + ([self.stage] if self.stage else [])

    def _create(self, incoming: dict[str, str], table: pa.Table) -> dict[str, str]:
        # an all-null column has no type yet: VARCHAR until a later batch brings values (see _evolve)
        long = {name for name, kind in incoming.items() if kind == "VARCHAR" and name not in self.key
                and _long_text(table.column(name))} if _per_column_compression() and self._handle.lake is None \
            else set()  # a lake's Parquet files take no per-column compression
        columns = ", ".join(f"{quote(n)} {_typed(t)}"
                            + (" USING COMPRESSION zstd" if n in long else "") for n, t in incoming.items())
        columns += ", " if columns else ""
        self._cursor.execute(f"CREATE TABLE {self.versions} ({columns}_valid_from BIGINT, _valid_to BIGINT)")
        created = {n: _typed(t) for n, t in incoming.items()}
        created.update(dict.fromkeys(VALIDITY, "BIGINT"))
        self.columns, self.targets, self.changed = created, [self.versions], True
        return created

    def _evolve(self, incoming: dict[str, str], table: pa.Table) -> dict[str, str]:
        """Union by name: add new columns; widen a column whose type the batch does not fit."""
        columns = self.columns if self.columns is not None else {}
        for name, kind in incoming.items():
            have = columns.get(name)
            if have is None:
                kind = _typed(kind)
                for target in self.targets:
                    self._cursor.execute(f"ALTER TABLE {target} ADD COLUMN {quote(name)} {kind}")
            elif kind in (_NULL, have) or (_NO_TYPE.search(kind) and self._holds(name, have, table)):
                continue
            else:
                kind = self._wider(name, have, _typed(kind), table)
                if kind == have:
                    continue
                # a list or struct widened to text is kept as its JSON, which reads back exactly
                using = f" USING to_json({quote(name)})::VARCHAR" if kind == "VARCHAR" and nested(have) else ""
                for target in self.targets:
                    self._retype(target, name, kind, using)
            columns[name] = kind
            self.changed = True
        return columns

    def _retype(self, target: str, name: str, kind: str, using: str) -> None:
        """A stored column to a wider type. DuckLake changes a type in place only to a wider number,
        and with no expression; and DuckDB gives no list or struct to text stored with zstd
        (LONG_TEXT_BYTES), where a failed ALTER would abort the commit: there the versions table is
        written anew, its column cast."""
        rewrite = self._handle.lake is not None or ((self.columns or {}).get(name) == "VARCHAR" and nested(kind))
        if target != self.versions or not rewrite:
            self._cursor.execute(f"ALTER TABLE {target} ALTER COLUMN {quote(name)} TYPE {kind}{using}")
            return
        value = using.removeprefix(" USING ") if using else f"CAST({quote(name)} AS {kind})"
        fresh = f"{quote(self.service)}.{quote(self.resource + '__retyped')}"
        self._cursor.execute(f"CREATE TABLE {fresh} AS SELECT * REPLACE ({value} AS {quote(name)}) FROM {target}")
        self._cursor.execute(f"DROP TABLE {target}")
        self._cursor.execute(f"ALTER TABLE {fresh} RENAME TO {quote(self.resource + '__versions')}")

    def _holds(self, name: str, have: str, table: pa.Table) -> bool:
        """Whether the stored column takes a batch's column of a type with an untyped part (a list of
        only empty lists is `"NULL"[]`) as it is: the typed parts cast unchanged and the untyped ones
        hold no value. So a batch of empty lists keeps VARCHAR[] (or a list of structs) as it is,
        where widening to the union of the two would make every stored list text."""
        stored = self._cursor.sql(f"SELECT {quote(name)} FROM {self.versions} LIMIT 0").to_arrow_table()
        return casts_unchanged(table.schema.field(name).type, stored.schema.field(0).type)

    def _wider(self, name: str, have: str, kind: str, table: pa.Table) -> str:
        """The type both the stored values and the batch's fit, found without an error (an error would
        abort the load's transaction): the batch's when nothing is stored yet, else DuckDB's union of
        the two if every value casts to it, else VARCHAR."""
        column, cursor = quote(name), self._cursor
        _toolkit_batch = table  # read by DuckDB's replacement scan below
        if sum(cursor.execute(f"SELECT count({column}) FROM {target}").fetchall()[0][0]
               for target in self.targets) == 0:
            return kind
        try:  # on the shared connection, outside the transaction: this one may fail harmlessly
            with self._handle.lock:
                union = self._handle.con.execute(f"SELECT typeof(x) FROM (SELECT NULL::{have} AS x "
                                                    f"UNION ALL SELECT NULL::{kind}) LIMIT 1").fetchall()[0][0]
        except duckdb.Error:
            return "VARCHAR"
        lost = f"SELECT count(*) FROM {{}} WHERE {column} IS NOT NULL AND TRY_CAST({column} AS {union}) IS NULL"
        if nested(have) or nested(kind):
            # a cast that nulls an element or a field leaves the list or struct itself non-null, and the
            # ALTER's plain CAST would then fail the load (text tags that turn into objects): count the
            # nulls inside too, as JSON shows them
            cast = f"to_json(TRY_CAST({column} AS {union}))"
            lost += (f" OR length({cast}) - length(replace({cast}, 'null', '')) > "
                     f"length(to_json({column})) - length(replace(to_json({column}), 'null', ''))")
        for target in [*self.targets, "_toolkit_batch"]:  # a loop, not a generator: the scan sees this frame
            if cursor.execute(lost.format(target)).fetchall()[0][0]:
                return "VARCHAR"
        return union


# DuckDB's type of a column, or part of one, with no value to type it by: `"NULL"`, a list of only
# empty lists `"NULL"[]`, a struct's field `STRUCT(roles "NULL"[])`; never a field named NULL, which
# a space and its type follow
_NULL = '"NULL"'
_NO_TYPE = re.compile(r'"NULL"(?=[\[\),]|$)')


_SIMPLE = {pa.bool_(): "BOOLEAN", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
           pa.int64(): "BIGINT", pa.uint8(): "UTINYINT", pa.uint16(): "USMALLINT", pa.uint32(): "UINTEGER",
           pa.uint64(): "UBIGINT", pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.string(): "VARCHAR",
           pa.large_string(): "VARCHAR", pa.binary(): "BLOB", pa.large_binary(): "BLOB", pa.date32(): "DATE"}


def untyped_kind(kind: pa.DataType) -> str | None:
    """DuckDB's type of an Arrow type with a part that has no values to type it by (a list of only
    empty lists), with `"NULL"` for that part as DuckDB 2 writes it; None when there is no such part
    (or a part this does not spell), and DuckDB's own description stands."""
    def spelled(part: pa.DataType) -> tuple[str, bool] | None:
        if pa.types.is_null(part):
            return _NULL, True
        if pa.types.is_list(part) or pa.types.is_large_list(part):
            inner = spelled(part.value_type)
            return None if inner is None else (inner[0] + "[]", inner[1])
        if pa.types.is_struct(part):
            named = [(part.field(i).name, spelled(part.field(i).type)) for i in range(part.num_fields)]
            fields = [(name, inner) for name, inner in named if inner is not None]
            if len(fields) < len(named):
                return None
            names = [name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else quote(name) for name, _ in fields]
            return (f"STRUCT({', '.join(f'{n} {inner[0]}' for n, (_, inner) in zip(names, fields, strict=True))})",
                    any(inner[1] for _, inner in fields))
        if pa.types.is_dictionary(part):
            return spelled(part.value_type)
        if pa.types.is_timestamp(part):
            return ("TIMESTAMP WITH TIME ZONE" if part.tz else "TIMESTAMP"), False
        return (_SIMPLE[part], False) if part in _SIMPLE else None

    found = spelled(kind)
    return found[0] if found and found[1] and not pa.types.is_null(kind) else None


def _typed(kind: str) -> str:
    """A batch column's type as a stored column's: a part with no values yet (`"NULL"`, a list of only
    empty lists `"NULL"[]`, a struct's field) is text until a later batch brings values (`_evolve`)."""
    return _NO_TYPE.sub("VARCHAR", kind)


@functools.cache
def _per_column_compression() -> bool:
    """Whether this DuckDB takes `USING COMPRESSION` in a column's definition (asked once, of a
    database in memory: a statement that fails inside the load's transaction would abort it)."""
    try:
        with duckdb.connect() as con:
            con.execute("CREATE TABLE t (x VARCHAR USING COMPRESSION zstd)")
    except duckdb.Error:
        return False
    return True


def _long_text(column: pa.ChunkedArray) -> bool:
    if pa.types.is_dictionary(column.type):
        return False  # a status: few distinct values
    valid = len(column) - column.null_count
    return valid > 0 and pc.sum(pc.binary_length(column)).as_py() >= LONG_TEXT_BYTES * valid
