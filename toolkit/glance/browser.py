"""The workspace browser: one ipywidgets widget over a workspace (or a snapshot) in a notebook.

The views sit in a compact grid (Perspective's, toolkit.glance.grid: sort by a header, filter a column)
with a box that keeps the views whose name holds some text, and a searchable picker. Picking a view
fills its tabs: rows (a grid of every row in a box of fixed height, scrolled a page at a time; search,
"as DataFrame" and "save" of what the grid shows), columns (type, nulls, distinct, min, max), loads
(added, changed and removed per load), diff (two loads picked: added, removed or changed rows, every
one of them in a grid) and drift. Every time is on the analyst's wall clock (views.clock_name), named
once on the widget. The refresh button calls what the workspace handed in (`ws.refresh` of the view
picked and the views it stands on, incrementally where the catalog says how) and its line ends with
what changed and how long it took. Where widgets cannot render (a notebook reopened without its kernel,
nbconvert) the mimebundle's HTML is a static summary of the views.

    ws.browse()      # toolkit.Workspace hands itself in: Browser(ws, refresh=...)
"""
from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from toolkit.errors import ValidationError
from toolkit.glance import reading
from toolkit.glance.columns import column_summary
from toolkit.glance.grid import Grid, save_frame
from toolkit.glance.views import clock_name, history_figure, png, summary_html, views_count, views_frame
from toolkit.storage.file import quote
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["Browser", "Picture", "refresh_line"]

DIFF_KINDS = ("changed", "added", "removed")


class Picture:
    """A PNG a notebook displays as an image."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _repr_png_(self) -> bytes:
        return self.data


def refresh_line(done: pd.DataFrame, seconds: float) -> str:
    """The refresh's last line: what it did per resource, what changed, how long it took."""
    if done.empty:
        return f"refresh: nothing to refresh · {seconds:.1f} s"
    parts = []
    for row in done.itertuples():
        if row.kind in ("failed", "skipped"):
            parts.append(f"{row.resource} {row.kind}: {row.error}")
        else:
            parts.append(f"{row.resource} {row.kind} ({int(row.added or 0):,} added, "
                         f"{int(row.changed or 0):,} changed, {int(row.removed or 0):,} removed, "
                         f"{int(row.requests or 0):,} requests)")
    return f"refresh done in {seconds:.1f} s: " + "; ".join(parts)


class Browser:
    """The widget's state and parts: `views`, `view` (picked), `loads` (its load ids), `before`/`after`
    (picked for the diff), `rows` (the rows tab's Grid), `diff_grid`, `summary` (the columns tab's
    frame), `frame` (the last "as DataFrame"), `status` (the refresh's line) and `widget` (an
    ipywidgets VBox). `search_views`, `select`, `pick`, `show_diff`, `as_frame`, `save` and `refresh`
    do what the controls do, for code and tests."""

    def __init__(self, source: Store | Snapshot, refresh: Callable[..., pd.DataFrame] | None = None,
                 title: str | None = None) -> None:
        import ipywidgets as w

        self.source, self._refresh = source, refresh
        self.title = title or str(getattr(source, "where", None) or getattr(source, "path", "workspace"))
        self.views = views_frame(source)
        self.view: str | None = None
        self.loads: list[str] = []
        self.changes = pd.DataFrame()
        self.summary = pd.DataFrame()
        self.before: str | None = None
        self.after: str | None = None
        self.diff: Any = None
        self.rows: Grid | None = None
        self.diff_grid: Grid | None = None
        self.frame: pd.DataFrame | None = None
        self.refreshed: list[list[str]] = []
        self.status = ""
        self._quiet = False
        self.views_grid = Grid.of_frame(self._listed(self.views), height="230px", title="views")
        self._find = w.Text(placeholder="filter views by name", description="views", layout=w.Layout(width="320px"))
        self._picker = w.Combobox(options=list(self.views["view"]), placeholder="pick a view (type to search)",
                                  description="view", ensure_option=True, layout=w.Layout(width="420px"))
        self._button = w.Button(description="Refresh", icon="refresh", disabled=refresh is None,
                                tooltip="ws.refresh() of the view picked (every view when none is), "
                                        "incremental where it can be")
        self._status = w.HTML()
        self._search = w.Text(placeholder="search every column", description="search", layout=w.Layout(width="360px"))
        self._held = w.HTML()
        self._rows_box = w.VBox()
        self._path = w.Text(placeholder="rows.csv or rows.parquet", description="save as", layout=w.Layout(width="360px"))
        self._as_frame = w.Button(description="as DataFrame", tooltip="browser.frame: what the grid shows")
        self._save = w.Button(description="save", tooltip="what the grid shows, as CSV or Parquet by the name")
        self._rows_said = w.HTML()
        self._columns = w.HTML()
        self._plot = w.Image(format="png")
        self._before = w.Dropdown(description="before")
        self._after = w.Dropdown(description="after")
        self._kind = w.ToggleButtons(options=list(DIFF_KINDS), value="changed")
        self._diff_said = w.HTML()
        self._diff_box = w.VBox()
        self._drift = w.HTML()
        rows_tab = w.VBox([w.HBox([self._search, self._held]), self._rows_box,
                           w.HBox([self._as_frame, self._path, self._save]), self._rows_said])
        diff_tab = w.VBox([w.HBox([self._before, self._after]), self._kind, self._diff_said, self._diff_box])
        self._tabs = w.Tab(children=[rows_tab, self._columns, self._plot, diff_tab, self._drift])
        for i, name in enumerate(("rows", "columns", "loads", "diff", "drift")):
            self._tabs.set_title(i, name)
        heading = (f"<b>{html.escape(self.title)}</b>: {views_count(len(self.views))} · times on "
                   f"{html.escape(clock_name())}")
        self.widget = w.VBox([w.HTML(heading), self._find, self.views_grid.widget,
                              w.HBox([self._picker, self._button]), self._status, self._tabs])
        self.widget.add_class("toolkit-live")
        self._find.observe(lambda change: self.search_views(change["new"]), names="value")
        self._picker.observe(lambda change: self._picked(change["new"]), names="value")
        self._search.observe(lambda change: self.search_rows(change["new"]), names="value")
        self._as_frame.on_click(lambda button: self.as_frame())
        self._save.on_click(lambda button: self._save_clicked())
        self._before.observe(lambda change: self.pick(change["new"], self._after.value), names="value")
        self._after.observe(lambda change: self.pick(self._before.value, change["new"]), names="value")
        self._kind.observe(lambda change: self.show_diff(change["new"]), names="value")
        self._button.on_click(lambda button: self.refresh())

    @staticmethod
    def _listed(views: pd.DataFrame) -> pd.DataFrame:
        return views.drop(columns=["last_load"], errors="ignore")

    def search_views(self, text: str) -> None:
        """Keep the views whose name holds `text` (case aside), in the grid and the picker."""
        self.views_grid.search(text)
        kept = [v for v in self.views["view"] if text.strip().lower() in v.lower()]
        self._picker.options = kept

    def _picked(self, view: str) -> None:
        if view != (self.view or ""):
            self.select(view or None)

    def select(self, view: str | None) -> None:
        """Show a view: its rows, its columns' summary, its loads' plot, the last two loads' diff, its drift."""
        self.view = view
        if self._picker.value != (view or ""):
            self._picker.value = view or ""
        if view is None:
            return
        service, resource = reading.resolve(self.source, view)
        self.rows = Grid(self.source, f"SELECT * FROM {quote(service)}.{quote(resource)}", title=view)
        self._rows_box.children = [self.rows.widget]
        self._search.value = ""
        self._held.value = html.escape(self.rows.describe())
        self.summary = column_summary(self.source, self.rows.searched())
        self._columns.value = (f"<p>{html.escape(view)}: {html.escape(self.rows.describe())}</p>"
                               + self.summary.to_html(index=False, na_rep="", classes="toolkit-columns"))
        self.changes = reading.load_changes(self.source, service, resource)
        self._plot.value = png(history_figure(self.changes, view)) if len(self.changes) else b""
        self.loads = list(self.changes["load_id"])
        labels = [(f"{i + 1}: {load}", load) for i, load in enumerate(self.loads)]
        self.before = self.after = None
        self._quiet = True          # the old loads' values go with their options: no diff of them
        try:
            self._before.options, self._after.options = labels, labels
        finally:
            self._quiet = False
        if len(self.loads) >= 2:
            self.pick(self.loads[-2], self.loads[-1])
        else:
            self.diff, self.diff_grid = None, None
            self._diff_box.children = []
            self._diff_said.value = "<p>one load: nothing to compare yet</p>"
        drift = self.source.drift(view) if isinstance(self.source, Store) else pd.DataFrame()
        self._drift.value = (drift.to_html(index=False, na_rep="") if len(drift)
                             else f"<p>no drift recorded for {html.escape(view)}</p>")

    def search_rows(self, text: str) -> None:
        """Keep the rows any of whose cells holds `text`; the columns tab summarises what is kept."""
        if self.rows is None:
            return
        self.rows.search(text)
        self._held.value = html.escape(self.rows.describe())
        self.summary = column_summary(self.source, self.rows.searched())
        self._columns.value = (f"<p>{html.escape(self.view or '')}: {html.escape(self.rows.describe())}</p>"
                               + self.summary.to_html(index=False, na_rep="", classes="toolkit-columns"))

    def as_frame(self) -> pd.DataFrame:
        """What the rows grid shows (search, filters, sort, columns) as a DataFrame, kept as `frame`."""
        if self.rows is None:
            raise ValidationError("view", self.view, "pick a view first: browser.select('service.resource')")
        self.frame = self.rows.shown()
        self._rows_said.value = html.escape(f"browser.frame: {len(self.frame):,} rows × "
                                            f"{self.frame.shape[1]} columns of {self.view}, as the grid shows them")
        return self.frame

    def save(self, path: str) -> str:
        """What the rows grid shows, written as CSV or Parquet (by the name's suffix); says where."""
        if self.rows is None:
            raise ValidationError("view", self.view, "pick a view first: browser.select('service.resource')")
        shown = self.rows.shown()
        where = save_frame(shown, path)
        said = f"saved {len(shown):,} rows of {self.view} to {where}"
        self._rows_said.value = html.escape(said)
        return said

    def _save_clicked(self) -> None:
        try:
            self.save(self._path.value.strip())
        except Exception as error:   # a wrong name or a folder not writable: said beside the button
            self._rows_said.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"

    def pick(self, before: str | None, after: str | None) -> None:
        """Compare two loads of the view picked."""
        if self._quiet or self.view is None or not before or not after or (before, after) == (self.before, self.after):
            return
        self.before, self.after = before, after
        if self._before.value != before:
            self._before.value = before
        if self._after.value != after:
            self._after.value = after
        if isinstance(self.source, Snapshot):
            self.diff = None
            self._diff_said.value = ("<p>a snapshot's loads are compared in the workspace it came from "
                                     "(ws.diff); the loads tab gives each load's counts</p>")
            return
        self.diff = self.source.diff(self.view, before, after)
        counts = {kind: len(getattr(self.diff, kind)) for kind in DIFF_KINDS}
        first = next((kind for kind in DIFF_KINDS if counts[kind]), "changed")
        if self._kind.value != first:
            self._kind.value = first          # shows it
        else:
            self.show_diff(first)

    def show_diff(self, kind: str) -> None:
        """The diff's rows of one kind (changed, added, removed): all of them, in a grid."""
        if self.diff is None:
            return
        rows = getattr(self.diff, kind)
        self.diff_grid = Grid.of_frame(rows.reset_index(drop=True), height="300px", title=f"{kind} rows")
        counts = ", ".join(f"{len(getattr(self.diff, k)):,} {k}" for k in ("added", "removed", "changed"))
        self._diff_said.value = (f"<p><b>{html.escape(str(self.view))}</b> {html.escape(str(self.before))} → "
                                 f"{html.escape(str(self.after))}: {counts}. {kind}: "
                                 f"{html.escape(self.diff_grid.describe())}, every one in the grid "
                                 "(scroll, sort by a header)</p>")
        self._diff_box.children = [self.diff_grid.widget]

    def plot(self) -> Picture:
        """The picked view's loads over time, the plot its "loads" tab shows, as an image of its own."""
        return Picture(bytes(self._plot.value))

    def _say(self, text: str) -> None:
        self.status = text
        self._status.value = f"<code>{html.escape(text)}</code>"

    def refresh(self) -> pd.DataFrame | None:
        """Pull the view picked (every view when none is) again through what the workspace handed in,
        as `ws.refresh` does; the status line follows it and ends with what changed and how long."""
        if self._refresh is None:
            return None
        asked = [self.view] if self.view else list(self.views["view"])
        self.refreshed.append(asked)
        began = time.monotonic()
        self._button.disabled = True
        self._say(f"refresh: {', '.join(asked) if len(asked) < 4 else f'{len(asked)} views'} …")
        try:
            done = self._refresh(asked, say=lambda line: self._say(f"refresh: {line}"))
        except Exception as error:      # said on the line, as ws.refresh would raise it
            self._say(f"refresh failed after {time.monotonic() - began:.1f} s: {error}")
            raise
        finally:
            self._button.disabled = False
        self.views = views_frame(self.source)
        self.views_grid.replace_frame(self._listed(self.views))
        if self.view:
            self.select(self.view)
        self._say(refresh_line(done, time.monotonic() - began))
        return done

    def _ipython_display_(self) -> None:
        """Two outputs: the static summary, then the widget. A notebook reopened without its kernel
        (JupyterLab shows "model not found" for the widget, not its HTML) keeps the summary; while the
        widget draws, the summary's style hides it (an untrusted notebook drops that style; the widget
        is not drawn there either)."""
        from IPython.display import display

        hide = ("<style>.jp-OutputArea-child:has(.toolkit-static):has(+ .jp-OutputArea-child .toolkit-live)"
                "{display: none}</style>")
        display({"text/html": hide + "<div class='toolkit-static'>" + summary_html(self.views, self.title) + "</div>",
                 "text/plain": f"<toolkit.Browser {self.title}: {views_count(len(self.views))}>"}, raw=True)
        display(self.widget)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = summary_html(self.views, self.title)
        bundle["text/plain"] = f"<toolkit.Browser {self.title}: {len(self.views)} views>"
        return bundle

    def _repr_html_(self) -> str:
        return summary_html(self.views, self.title)
