"""How a load's staged rows become row versions at its commit: one row per key, the valid versions an
incremental load carries over, and the set-based merge that ends the versions the load lacks and begins
those it brings (the docstring of `toolkit.storage.loads` says how rows are matched).

`Merge` is the part of `toolkit.storage.loads.Load` that runs at the end of its commit's transaction.
"""
from __future__ import annotations

__all__ = ["Merge"]

import duckdb

from toolkit.errors import WorkspaceError
from toolkit.storage.file import VALIDITY, quote, row_hash


class Merge:
    """The commit's merge of a load's rows into the versions (the module docstring)."""

    service: str
    resource: str
    key: tuple[str, ...]
    carry: tuple[str, list] | None
    load_id: str | None
    seq: int
    rows: int
    drift: list[dict] | None
    _cursor: duckdb.DuckDBPyConnection | None
    _columns: dict[str, str] | None
    _targets: list[str]
    _stage: str | None
    _versions: str

    def _one_row_per_key(self) -> None:
        """One load never holds two rows of one key: a walk over data that moved, or a service that
        repeats rows, keeps the later one, and the load's drift counts the others (`duplicate_key`).
        Rows whose key is incomplete are left alone: NULLs are not equal keys."""
        key = [k for k in self.key if k in (self._columns or {})]
        if not key or not self._targets:
            return
        target = self._stage or self._versions
        mine = "" if self._stage else f"_valid_from = {int(self.seq)} AND _valid_to IS NULL AND "
        keys = ", ".join(quote(k) for k in key)
        where = mine + " AND ".join(f"{quote(k)} IS NOT NULL" for k in key)
        doubled = self._cursor.execute(f"SELECT count(*) - count(DISTINCT ({keys})) FROM {target} "
                                       f"WHERE {where}").fetchone()[0]
        if not doubled:
            return
        self._cursor.execute(f"DELETE FROM {target} WHERE rowid IN (SELECT r FROM (SELECT rowid AS r, "
                             f"row_number() OVER (PARTITION BY {keys} ORDER BY rowid DESC) AS n FROM {target} "
                             f"WHERE {where}) WHERE n > 1)")
        self.rows -= doubled
        self.kept = None        # the batches held the doubles: the caller reads the load back
        self.drift = [*(self.drift or []), {"field": ", ".join(key), "kind": "duplicate_key", "count": doubled,
                                            "example": "the later row of each key is kept"}]

    def _merge(self) -> None:
        """The staged rows become this load's view (module docstring); without a stage, the rows went
        straight in, or none came and every valid version stops being valid here."""
        cursor, versions, seq = self._cursor, self._versions, self.seq
        if not self._targets:  # no batch: a load of no rows
            cursor.execute(f"UPDATE {versions} SET _valid_to = ? WHERE _valid_to IS NULL", [seq])
            return
        if self._stage is None:
            return
        if self.carry is not None:
            self._carry()
        data = [name for name in self._columns if name not in VALIDITY]
        old, new = (quote(f"_toolkit_{side}_{self.load_id}") for side in ("old", "new"))
        for name, source, where in ((old, versions, "WHERE _valid_to IS NULL"), (new, self._stage, "")):
            cursor.execute(f"CREATE TEMP TABLE {name} AS SELECT rowid AS r, {row_hash(data)} AS h "
                           f"FROM {source} {where}")
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
        cursor.execute(f"INSERT INTO {versions} BY NAME SELECT *, ? AS _valid_from FROM {self._stage} WHERE "
                       f"rowid IN (SELECT r FROM temp.main.{new} ANTI JOIN temp.main.{old} USING ({match}))", [seq])
        for name in (old, new):
            cursor.execute(f"DROP TABLE temp.main.{name}")
        cursor.execute(f"DROP TABLE {self._stage}")

    def _carry(self) -> None:
        """An incremental load: the valid versions it keeps join its rows before the merge, so that
        they match themselves and stay as they are (those whose key its rows hold are replaced)."""
        condition, args = self.carry
        if not self.key:
            raise WorkspaceError(f"{self.service}.{self.resource} has no key: it cannot be pulled incrementally")
        keys = ", ".join(quote(k) for k in self.key)
        data = ", ".join(f"v.{quote(name)}" for name in self._columns if name not in VALIDITY)
        self._cursor.execute(f"INSERT INTO {self._stage} BY NAME SELECT {data} FROM (SELECT * FROM "
                             f"{self._versions} WHERE _valid_to IS NULL AND ({condition})) v "
                             f"ANTI JOIN (SELECT {keys} FROM {self._stage}) s USING ({keys})", args)
