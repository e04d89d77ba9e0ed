"""What changed between two loads of a resource: rows added, removed and changed, matched by its key.

The comparison runs in DuckDB over the resource's row versions, and only over the versions that are
valid in one of the two loads and not in the other: a row unchanged between them is one version valid
in both, so it is never read or joined. Only the differences come to pandas.
"""
from __future__ import annotations

__all__ = ["Diff", "diff_loads"]

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
import pandas as pd
import pyarrow.compute as pc

from toolkit.storage.file import VALIDITY, quote, valid_at
from toolkit.storage.readback import to_frame


@dataclass
class Diff:
    """Rows `added` and `removed`, and rows `changed`: the key, `changed_columns`, and for every column
    that changed anywhere `<column>_before` and `<column>_after`.

        ws.diff("translation.targets").changed.explode("changed_columns").value_counts("changed_columns")
    """

    resource: str
    before: str
    after: str
    key: list[str]
    added: pd.DataFrame
    removed: pd.DataFrame
    changed: pd.DataFrame
    columns: Counter = field(default_factory=Counter)  # how many changed rows each column changed in

    def summary(self) -> str:
        text = (f"{self.resource} {self.before} → {self.after}: {len(self.added)} added, "
                f"{len(self.removed)} removed, {len(self.changed)} changed")
        if self.columns:
            text += " (" + ", ".join(f"{name} {n}" for name, n in self.columns.most_common()) + ")"
        return text

    def __repr__(self) -> str:
        return f"<toolkit.Diff {self.summary()}; by {', '.join(self.key) or 'whole rows'}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self.summary())}</b></p>"]
        for name in ("added", "removed", "changed"):
            frame = getattr(self, name)
            if len(frame):
                more = f" (first 5 of {len(frame)})" if len(frame) > 5 else ""
                parts.append(f"<p>{name}{more}</p>" + frame.head(5).to_html(index=False))
        return "\n".join(parts)


def diff_loads(con: duckdb.DuckDBPyConnection, resource: str, table: str, before: tuple[str, int],
               after: tuple[str, int], key: Sequence[str],
               categories: Mapping[str, Sequence[str]] | None = None) -> Diff:
    """Compare two loads, each (load id, its `_loads.seq`), of the versions `table` by `key`.

    Without a key, whole rows are compared: a changed row shows as one removed and one added.
    """
    columns = [name for (name,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()
               if name not in VALIDITY]
    key = [k for k in key if k in columns] or columns
    values = [c for c in columns if c not in key]
    low, high = sorted((before[1], after[1]))
    # the versions only the later load has, and those only the earlier one has
    only = {"high": f"{valid_at('$high')} AND _valid_from > $low",
            "low": f"{valid_at('$low')} AND _valid_to <= $high"}
    side = "(SELECT * EXCLUDE (_valid_from, _valid_to) FROM " + table + " WHERE {})"
    if low == high:
        a = b = side.format("false")
    else:
        later, earlier = ("high", "low") if after[1] > before[1] else ("low", "high")
        a, b = side.format(only[later]), side.format(only[earlier])
    match = " AND ".join(f"n.{quote(k)} IS NOT DISTINCT FROM o.{quote(k)}" for k in key)
    order = ", ".join(quote(k) for k in key)
    args = {"low": low, "high": high} if low != high else {}
    before_id, after_id = before[0], after[0]

    def frame(query: str) -> pd.DataFrame:
        return to_frame(con.sql(query, params=args).to_arrow_table(), categories)

    added = frame(f"SELECT n.* FROM {a} n ANTI JOIN {b} o ON {match} ORDER BY {order}")
    removed = frame(f"SELECT o.* FROM {b} o ANTI JOIN {a} n ON {match} ORDER BY {order}")
    counts: Counter = Counter()
    if values:
        differs = {c: f"n.{quote(c)} IS DISTINCT FROM o.{quote(c)}" for c in values}
        flags = ", ".join(f"CASE WHEN {test} THEN '{c.replace(chr(39), chr(39) * 2)}' END"
                          for c, test in differs.items())
        sides = ", ".join(f"o.{quote(c)} AS {quote(c + '_before')}, n.{quote(c)} AS {quote(c + '_after')}"
                          for c in values)
        keys = ", ".join(f"n.{quote(k)}" for k in key)
        table_ = con.sql(
            f"SELECT {keys}, list_filter([{flags}], lambda x: x IS NOT NULL) AS changed_columns, {sides} "
            f"FROM {a} n JOIN {b} o ON {match} WHERE {' OR '.join(differs.values())} ORDER BY {order}",
            params=args).to_arrow_table()
        flat = pc.list_flatten(table_.column("changed_columns"))
        counts = Counter({row["values"]: row["counts"] for row in pc.value_counts(flat).to_pylist()})
        unchanged = [f"{c}_{s}" for c in values if c not in counts for s in ("before", "after")]
        changed = to_frame(table_.drop_columns(unchanged), categories)
    else:
        changed = frame(f"SELECT {', '.join(quote(k) for k in key)}, []::VARCHAR[] AS changed_columns "
                        f"FROM {a} WHERE false")
    return Diff(resource, before_id, after_id, list(key), added, removed, changed, counts)
