"""Translation progress: targets by status and language, the phase funnel, percent complete per
submission, overdue and at-risk targets, and the burndown over the loads (toolkit.reports.translation
hands them on)."""
from __future__ import annotations

__all__ = ["burndown", "overdue", "overdue_by", "percent_complete", "phase_funnel", "plot_burndown",
           "plot_overdue", "plot_percent_complete", "plot_phase_funnel", "plot_status_by_language",
           "status_by_language"]

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from toolkit.reports import plots
from toolkit.reports.source import (
    GIVEN,
    OUR_CLOCK,
    SERVICE_CLOCK,
    clock_of,
    frame,
    has,
    has_column,
    history,
    load_moment,
    loads,
    table,
    utc,
)
from toolkit.reports.translation.statuses import AT_RISK_HOURS, CANCELLED, DONE, DONE_SQL, SERVICE


def status_by_language(source: Any) -> pd.DataFrame:
    """Targets per target language (rows, busiest first) and status (columns, from waiting to done)."""
    counts = table(source, SERVICE, "targets", "target_language, status")
    if counts.empty:
        return pd.DataFrame()
    pivot = pd.crosstab(counts["target_language"], counts["status"])
    known = [s for s in plots.STATUS if s in pivot.columns]
    pivot = pivot[known + sorted(set(pivot.columns) - set(known))]
    return pivot.loc[pivot.sum(axis=1).sort_values(ascending=False).index]


def plot_status_by_language(pivot: pd.DataFrame) -> Figure:
    """Stacked horizontal bars: each target language's targets by status."""
    title = "Targets by status and target language"
    if pivot.empty:
        return plots.empty(title, "No targets were pulled.")
    shown = pivot.iloc[::-1]
    fig = plots.figure(plots.bar_height(len(shown), per_bar=0.3))
    ax = fig.subplots()
    left = np.zeros(len(shown))
    for i, status in enumerate(shown.columns):
        ax.barh(shown.index, shown[status], left=left, label=status, color=plots.colour(status, plots.STATUS, i))
        left += shown[status].to_numpy()
    plots.label_bars(ax, left, range(len(shown)))
    ax.legend(title="status", frameon=False, fontsize=8, loc="lower right", ncols=2)
    plots.finish(ax, title, "targets", "target language")
    return fig


# --- phases --------------------------------------------------------------------------------------

def _workflow_phases(source: Any) -> dict[str, list[str]]:
    """Each workflow's phase names in order, by workflow name."""
    found = table(source, SERVICE, "workflows", "name, phases")
    out = {}
    for name, phases in zip(found.get("name", []), found.get("phases", []), strict=False):
        steps = json.loads(phases) if isinstance(phases, str) else list(phases or [])
        out[name] = [p["name"] for p in sorted(steps, key=lambda p: p.get("order", 0))]
    return out


def _targets_with_phase(source: Any) -> pd.DataFrame:
    """Targets with status, current phase, due date and workflow name (from the phases resource or the
    targets' own, in `extra` in files written before it was a column), plus `step` (1-based order of
    the phase) and `last_step`."""
    if not has(source, SERVICE, "targets"):
        return pd.DataFrame()
    workflow = "json_extract_string(t.extra, '$.workflowName')"
    if has_column(source, SERVICE, "targets", "workflow_name"):
        workflow = f"coalesce(t.workflow_name, {workflow})"
    if has(source, SERVICE, "phases"):
        workflow = f"coalesce(p.workflow_name, {workflow})"
        join = f"LEFT JOIN {SERVICE}.phases p USING (target_id)"
    else:
        join = ""
    words = "t.word_count" if has_column(source, SERVICE, "targets", "word_count") else "NULL::BIGINT"
    project = "NULL::VARCHAR"
    if has(source, SERVICE, "submissions"):
        join += (f" LEFT JOIN (SELECT submission_id, project_name FROM {SERVICE}.submissions) s "
                 "ON s.submission_id = t.submission_id")
        project = "s.project_name"
    targets = frame(source, f"""
        SELECT t.target_id, t.submission_id, t.document_name, t.target_language, t.status::VARCHAR AS status,
               t.current_phase, t.due_date, {workflow} AS workflow, {words} AS word_count, {project} AS project_name
        FROM {SERVICE}.targets t {join}""")
    phases = _workflow_phases(source)
    targets["step"] = [
        (phases.get(w, []).index(p) + 1 if p in phases.get(w, []) else 1) if isinstance(p, str) else 0
        for w, p in zip(targets["workflow"], targets["current_phase"], strict=True)]
    targets["last_step"] = [len(phases.get(w, [])) or 1 for w in targets["workflow"]]
    return targets


def phase_funnel(source: Any) -> pd.DataFrame:
    """How far the targets (cancelled ones aside) got: per stage (queued, phase 1, 2, ..., done) the
    targets that `reached` it and those `now` in it; `phases` names the phases at each step. A target
    has reached every stage up to the one its current phase is at (its history is not read);
    `attrs["cancelled"]` counts the targets left out."""
    targets = _targets_with_phase(source)
    if targets.empty:
        return pd.DataFrame(columns=["stage", "phases", "reached", "now"])
    cancelled = int((targets["status"] == CANCELLED).sum())
    targets = targets[targets["status"] != CANCELLED]
    steps = max(int(targets["last_step"].max()), int(targets["step"].max()), 1)
    done = targets["status"].isin(DONE)
    reached_step = np.where(done, steps + 1, targets["step"])
    names: dict[int, list[str]] = {}
    for phases in _workflow_phases(source).values():
        for i, name in enumerate(phases, start=1):
            names.setdefault(i, [])
            if name not in names[i]:
                names[i].append(name)
    rows = [{"stage": "queued", "phases": "not started yet", "reached": len(targets),
             "now": int((reached_step == 0).sum())}]
    for step in range(1, steps + 1):
        rows.append({"stage": f"phase {step}", "phases": ", ".join(names.get(step, [])),
                     "reached": int((reached_step >= step).sum()), "now": int((reached_step == step).sum())})
    rows.append({"stage": "done", "phases": ", ".join(DONE), "reached": int(done.sum()), "now": int(done.sum())})
    funnel = pd.DataFrame(rows)
    funnel.attrs["cancelled"] = cancelled
    return funnel


def plot_phase_funnel(funnel: pd.DataFrame) -> Figure:
    """The funnel: targets that reached each stage (light) and those in it now (dark)."""
    title = "Phase funnel"
    if funnel.empty:
        return plots.empty(title, "No targets were pulled.")
    shown = funnel.iloc[::-1].reset_index(drop=True)
    fig = plots.figure(plots.bar_height(len(shown), per_bar=0.62, least=3.0))   # a stage and up to 3 lines of names
    ax = fig.subplots()
    labels = [f"{stage}\n{plots.names(phases)}" for stage, phases in zip(shown["stage"], shown["phases"],
                                                                      strict=True)]
    ax.barh(labels, shown["reached"], color="#bcd3ea", label="reached this stage")
    ax.barh(labels, shown["now"], color=plots.BLUE, height=0.5, label="in this stage now")
    total = max(int(funnel["reached"].iloc[0]), 1)
    for y, (reached, now) in enumerate(zip(shown["reached"], shown["now"], strict=True)):
        ax.annotate(f"{reached:,} reached ({reached / total:.0%}), {now:,} here now", (reached, y), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8, color=plots.MUTED)
    ax.set_xlim(0, total * 1.6)
    ax.tick_params(axis="y", labelsize=8)
    plots.legend(fig, 2)
    plots.finish(ax, title, "targets (cancelled ones left out)", "stage")
    return fig


# --- submissions and deadlines -------------------------------------------------------------------

def percent_complete(source: Any, now: Any = None) -> pd.DataFrame:
    """Per submission: targets (cancelled aside), done, open, percent done, with name, status and due date;
    open submissions first, by due date."""
    if not has(source, SERVICE, "targets"):
        return pd.DataFrame()
    named = has(source, SERVICE, "submissions")
    names = (f"LEFT JOIN (SELECT submission_id, name, project_name, status::VARCHAR AS submission_status, "
             f"due_date FROM {SERVICE}.submissions) s USING (submission_id)") if named else ""
    extra = ", any_value(s.name) AS name, any_value(s.project_name) AS project_name, " \
            "any_value(s.submission_status) AS submission_status, any_value(s.due_date) AS due_date" if named else ""
    found = frame(source, f"""
        SELECT t.submission_id{extra},
               count(*) FILTER (WHERE t.status::VARCHAR != '{CANCELLED}') AS targets,
               count(*) FILTER (WHERE t.status::VARCHAR IN {DONE_SQL}) AS done
        FROM {SERVICE}.targets t {names} GROUP BY 1""")
    found["open"] = found["targets"] - found["done"]
    found["percent"] = (100 * found["done"] / found["targets"].where(found["targets"] > 0)).round(1)
    moment, clock = clock_of(source, now)
    if "due_date" in found and moment is not None:
        found["hours_left"] = ((found["due_date"] - moment).dt.total_seconds() / 3600).round(1)
    found = found.sort_values(["open", "due_date" if named else "submission_id"], ascending=[False, True],
                              key=lambda c: c.gt(0) if c.name == "open" else c, ignore_index=True)
    found.attrs.update(now=moment, clock=clock)
    return found


def plot_percent_complete(progress: pd.DataFrame, limit: int = 25) -> Figure:
    """Percent done of each submission with a target still open (up to `limit`, soonest due first),
    coloured by deadline. An "open submission" is one neither done nor cancelled (word_counts): a
    submission with no target yet is one, and has nothing here to complete."""
    title = "Percent complete per submission with open targets"
    open_ones = progress[(progress["open"] > 0)] if not progress.empty else progress
    if open_ones.empty:
        return plots.empty(title, "Every submission is done (or none was pulled).")
    shown = open_ones.head(limit).iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.3)
    hours = shown.get("hours_left", pd.Series(np.nan, index=shown.index))
    colours = [plots.RED if h < 0 else plots.GOLD if h < AT_RISK_HOURS else plots.BLUE for h in hours.fillna(1e9)]
    labels = [f"{plots.shorten(n, 30)} (#{i})" if isinstance(n, str) else f"#{i}"
              for n, i in zip(shown.get("name", shown["submission_id"]), shown["submission_id"], strict=True)]
    ax.barh(positions, 100, color=colours, alpha=0.18)  # the track: the whole submission, in its deadline colour
    ax.barh(positions, shown["percent"].fillna(0), color=colours)
    ax.set_yticks(positions, labels)
    ax.set_ylim(-0.7, len(shown) - 0.3)
    for y, (pct, done, total) in enumerate(zip(shown["percent"].fillna(0), shown["done"], shown["targets"],
                                               strict=True)):
        ax.annotate(f"{pct:.0f}% ({done}/{total})", (pct, y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8, color=plots.MUTED)
    ax.set_xlim(0, 118)
    plots.legend(fig, 3, handles=[Patch(color=plots.RED, label="past due"),
                                  Patch(color=plots.GOLD, label=f"due within {AT_RISK_HOURS} h"),
                                  Patch(color=plots.BLUE, label="due later")])
    capped = f"\nthe {len(shown)} soonest due of {len(open_ones)}" if len(open_ones) > len(shown) else ""
    plots.finish(ax, title + capped, "targets done (%)", "submission")
    return fig


def overdue(source: Any, now: Any = None, within_hours: float = AT_RISK_HOURS) -> pd.DataFrame:
    """Open targets past their due date ("overdue") or due within `within_hours` and not yet in their
    workflow's last phase ("at risk"), soonest due first, with their project, `hours_left` (negative:
    hours late) and `words_left` (the target's words: an open target has delivered none)."""
    targets = _targets_with_phase(source)
    moment, clock = clock_of(source, now)
    columns = ["target_id", "submission_id", "project_name", "document_name", "target_language", "status",
               "current_phase", "due_date", "hours_left", "words_left", "flag"]
    if targets.empty or moment is None:
        empty = pd.DataFrame(columns=columns)
        empty.attrs.update(now=moment, clock=clock)
        return empty
    open_ = targets[~targets["status"].isin((*DONE, CANCELLED)) & targets["due_date"].notna()].copy()
    open_["hours_left"] = ((open_["due_date"] - moment).dt.total_seconds() / 3600).round(1)
    open_["words_left"] = open_["word_count"]  # an open target's words are all still to deliver
    late = open_["hours_left"] < 0
    risky = ~late & (open_["hours_left"] < within_hours) & (open_["step"] < open_["last_step"])
    open_["flag"] = np.where(late, "overdue", np.where(risky, "at risk", ""))
    found = open_[open_["flag"] != ""].sort_values(["due_date", "target_id"], ignore_index=True)[columns]
    found.attrs.update(now=moment, clock=clock)
    return found


def overdue_by(source: Any, now: Any = None, within_hours: float = AT_RISK_HOURS) -> pd.DataFrame:
    """The overdue and at-risk targets (`overdue`) per target language and project, each flag counted
    apart: `overdue` targets and their `overdue_words` left, `at_risk` targets and their
    `at_risk_words` left (an open target has delivered none of its words), `soonest_due`; the most
    overdue words first. The words of a pair's targets, whatever their flag, are the sum of the two.

        reports.translation.overdue_by(ws)
    """
    late = overdue(source, now, within_hours)
    columns = ["target_language", "project_name", "overdue", "overdue_words", "at_risk", "at_risk_words",
               "soonest_due"]
    if late.empty:
        found = pd.DataFrame(columns=columns)
    else:
        late = late.assign(project_name=late["project_name"].fillna("(no project)"),
                           overdue_words=late["words_left"].where(late["flag"] == "overdue"),
                           at_risk_words=late["words_left"].where(late["flag"] == "at risk"))
        grouped = late.groupby(["target_language", "project_name"], dropna=False, observed=True)
        found = pd.DataFrame({"overdue": grouped["flag"].agg(lambda f: int((f == "overdue").sum())),
                              "overdue_words": grouped["overdue_words"].sum(),
                              "at_risk": grouped["flag"].agg(lambda f: int((f == "at risk").sum())),
                              "at_risk_words": grouped["at_risk_words"].sum(),
                              "soonest_due": grouped["due_date"].min()}).reset_index()
        found = found[columns].astype({"overdue_words": "int64", "at_risk_words": "int64"})
        found = found.sort_values(["overdue_words", "at_risk_words", "overdue"], ascending=False, ignore_index=True)
    found.attrs.update(late.attrs)
    return found


def plot_overdue(late: pd.DataFrame, submissions: pd.DataFrame | None = None, limit: int = 20) -> Figure:
    """Overdue and at-risk targets per submission (the `limit` with most), stacked."""
    title = "Overdue and at-risk targets"
    if late.empty:
        return plots.empty(title, "No open target is overdue or at risk.")
    counts = pd.crosstab(late["submission_id"], late["flag"]).reindex(columns=["overdue", "at risk"], fill_value=0)
    every = len(counts)
    counts = counts.loc[counts.sum(axis=1).sort_values(ascending=False).index].head(limit).iloc[::-1]
    names = {} if submissions is None or "name" not in submissions else dict(zip(
        submissions["submission_id"], submissions["name"], strict=False))
    labels = [f"{plots.shorten(names[i], 30)} (#{i})" if i in names else f"#{i}" for i in counts.index]
    fig = plots.figure(plots.bar_height(len(counts), per_bar=0.32))
    ax = fig.subplots()
    left = np.zeros(len(counts))
    for flag in counts.columns:
        ax.barh(labels, counts[flag], left=left, color=plots.FLAG[flag], label=flag, height=0.7)
        left += counts[flag].to_numpy()
    plots.label_bars(ax, left, range(len(counts)))
    ax.set_ylim(-0.8, len(counts) - 0.2)
    ax.set_xlim(0, left.max() * 1.12)
    plots.whole_numbers(ax.xaxis)
    plots.legend(fig, 2)
    moment = late.attrs.get("now")
    when = f" at {moment:%d %b %Y %H:%M} UTC" if moment is not None else ""
    capped = f"\nthe {len(counts)} submissions with most, of {every}" if every > len(counts) else ""
    plots.finish(ax, f"{title}{when}{capped}", "targets", "submission")
    return fig


# --- over the loads --------------------------------------------------------------------------------

def burndown(source: Any, as_of: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per load of targets: `as_of`, `open` (neither done nor cancelled), `in_phase` (open and in a
    phase: being worked on), `done`, `cancelled`; oldest first.

    A load is dated by `as_of` (load id → moment) where that names it, else by the service's clock
    at the load (its Date header), else by this machine's when it finished; `attrs["clocks"]` says
    which of those (keys of source.CLOCKS) dated the loads.
    """
    columns = ["load_id", "as_of", "open", "in_phase", "done", "cancelled"]
    pulled = loads(source, SERVICE, "targets")
    if pulled.empty:
        return pd.DataFrame(columns=columns)
    if history(source, SERVICE, "targets"):
        rows, by = f"{SERVICE}.targets__loads", "_load_id"
    else:  # one load: the latest
        rows, by = f"(SELECT *, {pulled['load_id'].iloc[-1]!r} AS _load_id FROM {SERVICE}.targets)", "_load_id"
    counts = frame(source, f"""
        SELECT {by} AS load_id,
               count(*) FILTER (WHERE status::VARCHAR NOT IN {DONE_SQL} AND status::VARCHAR != '{CANCELLED}') AS open,
               count(*) FILTER (WHERE current_phase IS NOT NULL AND status::VARCHAR NOT IN {DONE_SQL}
                                AND status::VARCHAR != '{CANCELLED}') AS in_phase,
               count(*) FILTER (WHERE status::VARCHAR IN {DONE_SQL}) AS done,
               count(*) FILTER (WHERE status::VARCHAR = '{CANCELLED}') AS cancelled
        FROM {rows} GROUP BY 1""")
    merged = pulled.merge(counts, on="load_id")
    given = {load: utc(moment) for load, moment in (as_of or {}).items()}
    dated = [(given[load], GIVEN) if given.get(load) is not None else load_moment(seen, end)
             for load, seen, end in zip(merged["load_id"], merged["service_clock"], merged["finished"], strict=True)]
    merged["as_of"] = pd.to_datetime([moment for moment, _ in dated], utc=True)
    found = merged.sort_values(["as_of", "finished"], ignore_index=True)[columns]
    found.attrs["clocks"] = tuple(sorted({clock for _, clock in dated}))
    return found


def plot_burndown(progress: pd.DataFrame) -> Figure:
    """Open targets (and those being worked on in a phase) per load, over time."""
    title = "Burndown: open targets over the loads"
    if len(progress) < 2:
        return plots.empty(title, "Needs two loads of targets or more (pull them again later, or open a "
                                  "workspace or a snapshot exported with history).")
    fig = plots.figure(3.6)
    ax = fig.subplots()
    when = pd.to_datetime(progress["as_of"], utc=True).dt.tz_localize(None)
    ax.plot(when, progress["open"], marker="o", color=plots.BLUE, linewidth=2,
            label="open (neither done nor cancelled)")
    ax.plot(when, progress["in_phase"], marker="s", color=plots.ORANGE, linewidth=1.5, linestyle="--",
            label="open and in a phase (being worked on)")
    for x, y in zip(when, progress["open"], strict=True):
        ax.annotate(f"{y:,}", (x, y), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=8,
                    color=plots.MUTED)
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylim(0, max(progress["open"].max(), 1) * 1.15)
    ax.legend(frameon=False, fontsize=8)
    clocks = " or ".join({GIVEN: "the moments given", SERVICE_CLOCK: "the service's clock",
                          OUR_CLOCK: "this machine's clock"}[c] for c in progress.attrs.get("clocks", ()))
    plots.finish(ax, title, f"the load's time (UTC, by {clocks or 'the load'})", "targets", grid="y")
    return fig




