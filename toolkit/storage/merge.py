"""How a load's staged rows become row versions at its commit: one row per key, the valid versions an
incremental load carries over (left untouched), and the set-based merge that ends the versions the load lacks and begins
those it brings (the docstring of `toolkit.storage.loads` says how rows are matched).

`Merge` runs at the end of a `toolkit.storage.loads.Load`'s commit, made for it with what it needs: the
commit's cursor, the table as the commit shaped it (`toolkit.storage.schema.Evolution`), the load's
number and id. What it finds (the doubled rows of a key) it gives back; the load keeps its own counts.
"""
from __future__ import annotations

__all__ = ["Carry", "Merge"]

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from toolkit.errors import WorkspaceError
from toolkit.storage.file import VALIDITY, quote, row_hash
from toolkit.storage.schema import Evolution


@dataclass(frozen=True)
class Carry:
    """What an incremental load carries over: the valid versions for which `condition` (SQL, its `?`
    parameters in `args`) is true, when the load's rows lack their key. `tables` are Arrow tables the
    condition names, registered on the commit's cursor for the merge alone: a long list of ids stays
    Arrow there. As a list parameter (`IN (SELECT unnest(?))`) each id became a DuckDB value of its own:
    594,000 ids cost 216 MB of RSS, more than the whole refresh otherwise held."""
    condition: str
    args: list = field(default_factory=list)
    tables: Mapping[str, pa.Table] = field(default_factory=dict)

    @classmethod
    def of(cls, carry: Carry | tuple[str, list] | None) -> Carry | None:
        """A carry as given: a Carry, or a (condition, args) pair."""
        return carry if carry is None or isinstance(carry, Carry) else cls(carry[0], list(carry[1]))


class Merge:
    """The commit's merge of a load's rows into the versions (the module docstring)."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, table: Evolution, seq: int, load_id: str) -> None:
        self._cursor, self._table, self._seq, self._load_id = cursor, table, seq, load_id
        self._columns = table.columns or {}

    def one_row_per_key(self) -> dict[str, Any] | None:
        """One load never holds two rows of one key: a walk over data that moved, or a service that
        repeats rows, keeps the later one; the others are given back as a drift entry (`duplicate_key`)
        with their count, which the load takes off its rows. Rows whose key is incomplete are left
        alone: NULLs are not equal keys."""
        table = self._table
        key = [k for k in table.key if k in self._columns]
        if not key or not table.targets:
            return None
        target = table.stage or table.versions
        mine = "" if table.stage else f"_valid_from = {int(self._seq)} AND _valid_to IS NULL AND "
        keys = ", ".join(quote(k) for k in key)
        where = mine + " AND ".join(f"{quote(k)} IS NOT NULL" for k in key)
        doubled = self._cursor.execute(f"SELECT count(*) - count(DISTINCT ({keys})) FROM {target} "
                                       f"WHERE {where}").fetchall()[0][0]
        if not doubled:
            return None
        self._cursor.execute(f"DELETE FROM {target} WHERE rowid IN (SELECT r FROM (SELECT rowid AS r, "
                             f"row_number() OVER (PARTITION BY {keys} ORDER BY rowid DESC) AS n FROM {target} "
                             f"WHERE {where}) WHERE n > 1)")
        return {"field": ", ".join(key), "kind": "duplicate_key", "count": doubled,
                "example": "the later row of each key is kept"}

    def merge(self, carry: Carry | None) -> None:
        """The staged rows become this load's view (module docstring); without a stage, the rows went
        straight in, or none came and every valid version stops being valid here. `carry`: the valid
        versions an incremental load keeps."""
        cursor, versions, seq, stage = self._cursor, self._table.versions, self._seq, self._table.stage
        if not self._table.targets:  # no batch: a load of no rows
            cursor.execute(f"UPDATE {versions} SET _valid_to = ? WHERE _valid_to IS NULL", [seq])
            return
        if stage is None:
            return
        touched, args = ("WHERE _valid_to IS NULL", []) if carry is None else self._touched(stage, carry)
        data = [name for name in self._columns if name not in VALIDITY]
        old, new = (quote(f"_toolkit_{side}_{self._load_id}") for side in ("old", "new"))
        tables = carry.tables if carry is not None else {}
        for name, table in tables.items():
            cursor.register(name, table)
        try:
            for name, source, where, given in ((old, f"{versions} v", touched, args), (new, stage, "", [])):
                cursor.execute(f"CREATE TEMP TABLE {name} AS SELECT rowid AS r, {row_hash(data)} AS h "
                               f"FROM {source} {where}", given)
        finally:
            for name in tables:
                cursor.unregister(name)
        match = "h"
        if any(cursor.execute(f"SELECT count(*) FROM (SELECT h FROM temp.main.{name} GROUP BY h "
                              "HAVING count(*) > 1)").fetchall()[0][0] for name in (old, new)):
            # equal rows: each is matched by its place among them, so that a duplicate gained or lost
            # counts; numbering every row costs a sort (1 s a million), so only when there are some
            for name in (old, new):
                cursor.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT r, h, "
                               f"row_number() OVER (PARTITION BY h) AS n FROM temp.main.{name}")
            match = "h, n"
        cursor.execute(f"UPDATE {versions} SET _valid_to = ? WHERE _valid_to IS NULL AND rowid IN "
                       f"(SELECT r FROM temp.main.{old} ANTI JOIN temp.main.{new} USING ({match}))", [seq])
        cursor.execute(f"INSERT INTO {versions} BY NAME SELECT *, ? AS _valid_from FROM {stage} WHERE "
                       f"rowid IN (SELECT r FROM temp.main.{new} ANTI JOIN temp.main.{old} USING ({match}))", [seq])
        for name in (old, new):
            cursor.execute(f"DROP TABLE temp.main.{name}")
        cursor.execute(f"DROP TABLE {stage}")

    def _touched(self, stage: str, carry: Carry) -> tuple[str, list]:
        """An incremental load's part of the valid versions: those it does not carry (`condition` false
        or unknown) and those whose key its rows hold. The versions it carries are left as they are,
        neither read nor hashed: they would match themselves. Copying them into the stage to be matched
        made a refresh cost the whole view (a 1% change of 3,000,000 memberships took 7% of their pull),
        and the merge's hash tables of every row outgrew a load's memory limit and spilled."""
        table = self._table
        if not table.key:
            raise WorkspaceError(f"{table.service}.{table.resource} has no key: it cannot be pulled incrementally")
        same = " AND ".join(f"s.{quote(k)} = v.{quote(k)}" for k in table.key)
        return (f"WHERE _valid_to IS NULL AND (NOT coalesce(({carry.condition}), false) "
                f"OR EXISTS (SELECT 1 FROM {stage} s WHERE {same}))", list(carry.args))
