"""History as a question: a measure of a resource over its loads, from the row versions the store keeps.

`timeline_sql` asks the versions valid in each finished load (`storage.file.valid_at`) once, grouped by
load and by the columns given, so "how many profiles does each audience have, load by load" is one
query and no copies: the `<resource>__history` view (storage.file) is the same versions for SQL.
A `Timeline` is the DataFrame it gives, with a `.plot()` of the measure over the service's clock.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from toolkit.errors import WorkspaceError
from toolkit.storage.file import FINISHED, literal, quote, valid_at, versions_of

__all__ = ["LOAD_COLUMNS", "Timeline", "measures", "timeline_sql"]

# the columns of each load a timeline row carries: which load, its number, and both clocks
LOAD_COLUMNS = ["load_id", "seq", "finished", "service_clock"]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def measures(agg: str | Mapping[str, str] | None) -> dict[str, str]:
    """The measures asked, name → SQL aggregate: `rows` (count(*)) by default; one expression is
    named `value`; a mapping names each (`{"words": "sum(words)"}`)."""
    if agg is None:
        return {"rows": "count(*)"}
    if isinstance(agg, str):
        return {"value": agg}
    if not agg or not all(isinstance(k, str) and _NAME.fullmatch(k) for k in agg):
        raise WorkspaceError(f"agg is an SQL aggregate or a mapping of plain names to them, not {agg!r}")
    return dict(agg)


def timeline_sql(service: str, resource: str, by: Sequence[str], agg: Mapping[str, str]) -> str:
    """One row per finished load × group: the load's columns (LOAD_COLUMNS), the groups, the measures."""
    groups = "".join(f", v.{quote(c)}" for c in by)
    asked = "".join(f", {expression} AS {quote(name)}" for name, expression in agg.items())
    # a load with no rows (or none in a group) has no row of its own: the count of nothing is not stored
    return (f"SELECT l.load_id, l.seq, l.finished, coalesce(l.service_clock, l.finished) AS service_clock"
            f"{groups}{asked} FROM main._loads l JOIN {versions_of(service, resource)} v "
            f"ON {valid_at('l.seq', 'v')} WHERE l.service = {literal(service)} AND l.resource = "
            f"{literal(resource)} AND l.status IN {FINISHED} GROUP BY ALL ORDER BY l.seq{groups}")


class Timeline(pd.DataFrame):
    """A timeline's rows (one per load × group), a DataFrame with the measure's `.plot()`."""

    _metadata = ["by", "measure"]

    @property
    def _constructor(self) -> type[Timeline]:
        return Timeline

    def wide(self, measure: str | None = None) -> pd.DataFrame:
        """The measure with a column per group and a row per load (by the service's clock); a group
        absent from a load shows 0 there for a count, NaN otherwise."""
        measure = measure or getattr(self, "measure", None) or self.columns[-1]
        by = list(getattr(self, "by", None) or [])
        if not by:
            return self.set_index("service_clock")[[measure]]
        table = self.pivot_table(index="service_clock", columns=by, values=measure, aggfunc="sum")
        return table.fillna(0) if measure == "rows" else table

    def plot(self, measure: str | None = None, **kwargs: Any) -> Any:
        """The measure over the service's clock, a line per group (pandas' plot of `wide()`)."""
        kwargs.setdefault("marker", "o")
        return pd.DataFrame(self.wide(measure)).plot(**kwargs)
