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

    def moved(self, measure: str | None = None) -> pd.Series:
        """The groups whose measure changed over the loads they were in, each with by how much (its last
        value less its first), the most changed first: what `plot` labels."""
        wide = pd.DataFrame(self.wide(measure))
        found = {c: s.iloc[-1] - s.iloc[0] for c in wide.columns if (s := wide[c].dropna()).nunique() > 1}
        moved = pd.Series(found, dtype="float64")
        return moved.reindex(moved.abs().sort_values(ascending=False, kind="stable").index)

    def plot(self, measure: str | None = None, top: int = 10, **kwargs: Any) -> Any:
        """The measure over the service's clock, a line per group: the groups whose measure changed in
        colour and labelled (the `top` that changed most), every other one a thin grey line, one legend
        entry "and K unchanged"; the title counts what is drawn. Without groups, one line. Other
        keywords go to pandas' plot (title, ylabel, figsize, ax, legend)."""
        wide = pd.DataFrame(self.wide(measure))
        if wide.shape[1] <= 1:
            kwargs.setdefault("marker", "o")
            return wide.plot(**kwargs)
        moved = self.moved(measure)
        changed = moved
        labelled = list(changed.index[:top])
        rest = [c for c in wide.columns if c not in labelled]
        still = len(rest) - (len(changed) - len(labelled))
        legend, title = kwargs.pop("legend", True), kwargs.pop("title", None)
        said = (f"{len(changed):,} of {wide.shape[1]:,} changed, in colour" if len(labelled) == len(changed)
                else f"the {len(labelled):,} that changed most of the {len(changed):,} that changed, of "
                     f"{wide.shape[1]:,}, in colour")
        said += f"; {still:,} unchanged" + (" and the rest" if still < len(rest) else "") + " in grey"
        grey = f"and {still:,} unchanged" if still == len(rest) else f"and {len(rest):,} more ({still:,} unchanged)"
        ax: Any = None
        if rest:
            ax = wide[rest].plot(color="#b8c0c8", linewidth=0.8, legend=False, **kwargs)
            for i, line in enumerate(ax.get_lines()):      # one legend entry for them all
                line.set_label(grey if i == 0 else "_nolegend_")
        if labelled:
            shown = wide[labelled].rename(columns=lambda c: f"{c} ({moved[c]:+,g})")
            ax = shown.plot(ax=ax, marker="o", markersize=3, linewidth=2, legend=False,
                            color=[f"C{i % 10}" for i in range(len(labelled))], **({} if ax else kwargs))
        ax.set_title(f"{title}\n{said}" if title else said, fontsize=9 if title is None else None)
        if "xlabel" not in kwargs:
            ax.set_xlabel("the service's clock at the load")
        if legend:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)
        return ax
