"""The workspace browser: one ipywidgets widget over a workspace (or a snapshot) in a notebook.

The views as a table sortable by any column (rows, last load, freshness against its budget, drift,
filtered); picking a view shows its first 100 rows with their columns' types, its loads over time (rows
added, changed and removed per load, by the service's clock: reading.load_changes), the diff between
two loads picked from its list, and its drift. The refresh button calls what the workspace handed in
(`refresh`: a pull through its connections, whose progress line shows in the widget's output); a
snapshot has none. Where widgets cannot render (a saved notebook, nbconvert) the mimebundle's HTML is
a static summary of the views. No grid package: ipydatagrid needs a JupyterLab extension of its own
and itables reads a DataFrame once; a table of 41 views is plain HTML, sorted by a dropdown.

    ws.browse()      # toolkit.Workspace hands itself in: Browser(ws, refresh=...)
"""
from __future__ import annotations

import html
import io
from collections.abc import Callable
from typing import Any

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from toolkit.glance import reading
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["Browser", "Picture", "history_figure", "png", "summary_html", "views_frame"]

ROWS_SHOWN = 100
SORTS = {"view": True, "rows": False, "last load": False, "confirmed h ago": False, "drift": False,
         "filtered": True}


def views_frame(source: Store | Snapshot) -> pd.DataFrame:
    """One row per view: view, rows, loads, last load, hours since confirmed, budget, rows past it,
    drift (fields that differed in its latest load), filtered."""
    views = pd.DataFrame(reading.list_views(source))
    if views.empty:
        return pd.DataFrame(columns=list(SORTS))
    drift = source.drift() if isinstance(source, Store) else pd.DataFrame(columns=["load_id"])
    counts = drift.groupby("load_id").size() if len(drift) else pd.Series(dtype="int64")
    return pd.DataFrame({
        "view": views["view"], "rows": views["rows"], "loads": views["loads"],
        "last load": views.get("finished", views.get("exported")).astype(str).str[:16],
        "confirmed h ago": views.get("confirmed_hours_ago", pd.Series([None] * len(views))),
        "budget h": views.get("budget_hours", pd.Series([None] * len(views))),
        "past budget": views.get("rows_past_budget", pd.Series([None] * len(views))),
        "drift": [int(counts.get(load, 0)) for load in views["last_load"]],
        "filtered": views["filtered"], "last_load": views["last_load"]})


def summary_html(views: pd.DataFrame, title: str) -> str:
    """The static summary: the views table, for where widgets do not render."""
    shown = views.drop(columns=["last_load"], errors="ignore")
    return (f"<div class='toolkit-browser'><b>{html.escape(title)}</b>: {len(shown)} views"
            + shown.to_html(index=False, na_rep="", escape=True, classes="toolkit-views") + "</div>")


def history_figure(changes: pd.DataFrame, view: str) -> Figure:
    """Rows added, changed and removed per load, by the service's clock (its finish where not recorded)."""
    figure = Figure(figsize=(6, 2.2), dpi=80)
    axes = figure.add_subplot()
    when = pd.to_datetime(changes["service_clock"].fillna(changes["finished"]), utc=True)
    labels = [f"{i + 1}\n{t:%m-%d %H:%M}" for i, t in enumerate(when)]
    bottom = pd.Series([0] * len(changes), dtype="float64")
    for name, color in (("added", "#2a9d8f"), ("changed", "#e9c46a"), ("removed", "#e76f51")):
        values = pd.to_numeric(changes[name], errors="coerce").fillna(0).astype("float64").reset_index(drop=True)
        axes.bar(range(len(changes)), values, bottom=bottom, color=color, label=name)
        bottom = bottom + values
    axes.set_xticks(range(len(changes)), labels, fontsize=7)
    axes.set_title(f"{view}: rows per load, by the service's clock", fontsize=9)
    axes.legend(fontsize=7, frameon=False)
    figure.tight_layout()
    return figure


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()


class Picture:
    """A PNG a notebook displays as an image."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _repr_png_(self) -> bytes:
        return self.data


class Browser:
    """The widget's state and parts: `views`, `view` (picked), `loads` (its load ids), `before`/`after`
    (picked for the diff), and `widget` (an ipywidgets VBox). `select`, `pick` and `refresh` do what
    the controls do, for code and tests."""

    def __init__(self, source: Store | Snapshot, refresh: Callable[[list[str]], Any] | None = None,
                 title: str | None = None) -> None:
        import ipywidgets as w

        self.source, self._refresh = source, refresh
        self.title = title or str(getattr(source, "where", None) or getattr(source, "path", "workspace"))
        self.views = views_frame(source)
        self.view: str | None = None
        self.loads: list[str] = []
        self.changes = pd.DataFrame()
        self.before: str | None = None
        self.after: str | None = None
        self.refreshed: list[list[str]] = []
        self._sort = w.Dropdown(options=list(SORTS), value="view", description="sort by")
        self._table = w.HTML()
        self._picker = w.Dropdown(options=[""] + list(self.views["view"]), value="", description="view")
        self._rows, self._drift, self._diff = w.HTML(), w.HTML(), w.HTML()
        self._plot = w.Image(format="png")
        self._before = w.Dropdown(description="before")
        self._after = w.Dropdown(description="after")
        self._button = w.Button(description="Refresh", icon="refresh", disabled=refresh is None,
                                tooltip="pull this view again through the workspace's connection")
        self.output = w.Output()
        tabs = w.Tab(children=[self._rows, self._plot, w.VBox([w.HBox([self._before, self._after]), self._diff]),
                               self._drift])
        for i, name in enumerate(("rows", "loads", "diff", "drift")):
            tabs.set_title(i, name)
        self.widget = w.VBox([w.HTML(f"<b>{html.escape(self.title)}</b>"), self._sort, self._table,
                              w.HBox([self._picker, self._button]), tabs, self.output])
        self._sort.observe(lambda change: self._draw_table(), names="value")
        self._picker.observe(lambda change: self.select(change["new"] or None), names="value")
        self._before.observe(lambda change: self.pick(change["new"], self._after.value), names="value")
        self._after.observe(lambda change: self.pick(self._before.value, change["new"]), names="value")
        self._button.on_click(lambda button: self.refresh())
        self._draw_table()

    def sorted_views(self) -> pd.DataFrame:
        by = self._sort.value
        return self.views.sort_values(by, ascending=SORTS[by], na_position="last", kind="stable")

    def _draw_table(self) -> None:
        self._table.value = summary_html(self.sorted_views(), self.title)

    def select(self, view: str | None) -> None:
        """Show a view: its rows, its loads' plot, the last two loads' diff, its drift."""
        self.view = view
        if self._picker.value != (view or ""):
            self._picker.value = view or ""
        if view is None:
            return
        service, resource = reading.resolve(self.source, view)
        name = f'"{service}"."{resource}"'
        first = self.source.sql(f"SELECT * FROM {name} LIMIT {ROWS_SHOWN}").df()
        types = reading.describe_view(self.source, view)["columns"]
        header = "".join(f"<th>{html.escape(c['name'])}<br><small>{html.escape(c['type'])}</small></th>" for c in types)
        body = first.head(ROWS_SHOWN).to_html(index=False, header=False, na_rep="", max_cols=60)
        self._rows.value = (f"<p>first {len(first)} rows of {html.escape(view)}</p>"
                            + body.replace("<tbody>", f"<thead><tr>{header}</tr></thead><tbody>", 1))
        self.changes = reading.load_changes(self.source, service, resource)
        self._plot.value = png(history_figure(self.changes, view)) if len(self.changes) else b""
        self.loads = list(self.changes["load_id"])
        labels = [(f"{i + 1}: {load}", load) for i, load in enumerate(self.loads)]
        with self._before.hold_trait_notifications(), self._after.hold_trait_notifications():
            self._before.options, self._after.options = labels, labels
        if len(self.loads) >= 2:
            self.pick(self.loads[-2], self.loads[-1])
        else:
            self._diff.value = "<p>one load: nothing to compare yet</p>"
        drift = self.source.drift(view) if isinstance(self.source, Store) else pd.DataFrame()
        self._drift.value = (drift.to_html(index=False) if len(drift)
                             else f"<p>no drift recorded for {html.escape(view)}</p>")

    def pick(self, before: str | None, after: str | None) -> None:
        """Compare two loads of the view picked."""
        if not before or not after or (before, after) == (self.before, self.after):
            return
        self.before, self.after = before, after
        if self._before.value != before:
            self._before.value = before
        if self._after.value != after:
            self._after.value = after
        try:
            diff = reading.view_diff(self.source, self.view, before, after, limit=20)
        except Exception as error:  # a snapshot, or loads that cannot be compared: say why in the tab
            self._diff.value = f"<p>{html.escape(str(error))}</p>"
            return
        parts = [f"<p><b>{html.escape(self.view)}</b> {html.escape(before)} → {html.escape(after)}: "
                 f"{diff['added']['count']} added, {diff['removed']['count']} removed, "
                 f"{diff['changed']['count']} changed</p>"]
        for name in ("added", "removed", "changed"):
            if diff[name]["rows"]:
                parts.append(f"<p>{name}</p>" + pd.DataFrame(diff[name]["rows"]).to_html(index=False))
        self._diff.value = "".join(parts)

    def plot(self) -> Picture:
        """The picked view's loads over time, the plot its "loads" tab shows, as an image of its own."""
        return Picture(bytes(self._plot.value))

    def refresh(self) -> None:
        """Pull the view picked (every view when none is) again through what the workspace handed in."""
        if self._refresh is None:
            return
        asked = [self.view] if self.view else list(self.views["view"])
        self.refreshed.append(asked)
        with self.output:
            self._refresh(asked)
        self.views = views_frame(self.source)
        self._draw_table()
        if self.view:
            self.select(self.view)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = summary_html(self.sorted_views(), self.title)
        bundle["text/plain"] = f"<toolkit.Browser {self.title}: {len(self.views)} views>"
        return bundle

    def _repr_html_(self) -> str:
        return summary_html(self.sorted_views(), self.title)
