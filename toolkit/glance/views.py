"""What the browser shows of a workspace's views and loads, on one clock: this machine's (the analyst's
wall clock, its local zone named), unless a column says "service clock".

A workspace's views carry their freshness (hours since the rows were confirmed, the budget, the rows
past it) by the wall clock: three services whose clocks differ (the sandbox's moves on its own) no
longer read as three ages for views loaded in the same minute. A snapshot has no freshness, so its
table has no such columns.

    views_frame(ws); summary_html(views_frame(ws), "toolkit-demo.duckdb")
"""
from __future__ import annotations

import html
import io
from datetime import datetime

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from toolkit.glance import reading
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["FRESHNESS", "clock_name", "history_figure", "local", "png", "summary_html", "views_count", "views_frame"]

FRESHNESS = ["confirmed h ago", "budget h", "past budget"]


def clock_name() -> str:
    """"this machine's clock (UTC)": the analyst's wall clock and its zone."""
    return f"this machine's clock ({datetime.now().astimezone().tzname()})"


def local(moments: pd.Series) -> pd.Series:
    """Moments on the wall clock, in this machine's zone, to the minute ("" where unknown)."""
    zone = datetime.now().astimezone().tzinfo
    when = pd.to_datetime(moments, utc=True, errors="coerce").dt.tz_convert(zone)
    return when.dt.strftime("%Y-%m-%d %H:%M").fillna("")


def views_frame(source: Store | Snapshot) -> pd.DataFrame:
    """One row per view: view, rows, loads, last load (finished, wall clock), hours since its rows were
    confirmed (wall clock), its budget, rows past it, drift (fields that differed in its latest load),
    filtered, and `last_load` (its id). A snapshot's has no freshness columns: it keeps none."""
    snapshot = isinstance(source, Snapshot)
    views = pd.DataFrame(reading.list_views(source) if snapshot else reading.list_views(source, clock="wall"))
    columns = ["view", "rows", "loads", "last load", *([] if snapshot else FRESHNESS), "drift", "filtered",
               "last_load"]
    if views.empty:
        return pd.DataFrame(columns=columns)
    drift = pd.DataFrame(columns=["load_id"]) if isinstance(source, Snapshot) else source.drift()
    counts = drift.groupby("load_id").size() if len(drift) else pd.Series(dtype="int64")
    found = pd.DataFrame({
        "view": views["view"], "rows": views["rows"].astype("int64"), "loads": views["loads"].astype("int64"),
        "last load": local(views["exported" if snapshot else "finished"]),
        "drift": [int(counts.get(load, 0)) for load in views["last_load"]],
        "filtered": views["filtered"].astype(bool), "last_load": views["last_load"]})
    if not snapshot:
        for name, field in zip(FRESHNESS, ("confirmed_hours_ago", "budget_hours", "rows_past_budget"), strict=True):
            found[name] = pd.to_numeric(views.get(field, pd.Series([None] * len(views))), errors="coerce")
        found["past budget"] = found["past budget"].astype("Int64")
    return found[columns]


def views_count(count: int) -> str:
    """"1 view", "41 views"."""
    return f"{count:,} view" + ("" if count == 1 else "s")


def summary_html(views: pd.DataFrame, title: str) -> str:
    """The static summary, for where widgets do not render (a notebook reopened without its kernel):
    the views table under one title, every time on the wall clock."""
    shown = views.drop(columns=["last_load"], errors="ignore")
    return (f"<div class='toolkit-browser'><b>{html.escape(title)}</b>: {views_count(len(shown))}; times on "
            f"{html.escape(clock_name())}" + shown.to_html(index=False, na_rep="", escape=True,
                                                           classes="toolkit-views") + "</div>")


def history_figure(changes: pd.DataFrame, view: str) -> Figure:
    """Rows added, changed and removed per load, each load at the moment it finished on the wall clock."""
    figure = Figure(figsize=(6, 2.2), dpi=80)
    axes = figure.add_subplot()
    moments = list(local(changes["finished"]))
    days = sorted({t[:10] for t in moments if t})
    # the day once, under the axis, when every load ran on it: the labels stay apart
    labels = [f"{i + 1}\n{t[11:] if len(days) == 1 else t[5:]}" for i, t in enumerate(moments)]
    bottom = pd.Series([0] * len(changes), dtype="float64")
    for name, color in (("added", "#2a9d8f"), ("changed", "#e9c46a"), ("removed", "#e76f51")):
        values = pd.to_numeric(changes[name], errors="coerce").fillna(0).astype("float64").reset_index(drop=True)
        axes.bar(range(len(changes)), values, bottom=bottom, color=color, label=name)
        bottom = bottom + values
    axes.set_xticks(range(len(changes)), labels, fontsize=7)
    if len(days) == 1:
        axes.set_xlabel(f"load, finished on {days[0]}", fontsize=7)
    axes.set_title(f"{view}: rows per load, finished by {clock_name()}", fontsize=9)
    axes.legend(fontsize=7, frameon=False)
    figure.tight_layout()
    return figure


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()
