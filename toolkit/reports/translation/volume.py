"""Translation volume and money: words to translate per project, and quotes against approvals
(toolkit.reports.translation hands them on)."""
from __future__ import annotations

__all__ = ["plot_quotes", "plot_word_counts", "quotes", "word_counts"]

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from toolkit.reports import plots
from toolkit.reports.source import frame, has, has_column
from toolkit.reports.translation.statuses import CANCELLED, DONE_SQL, SERVICE


def word_counts(source: Any) -> pd.DataFrame:
    """Per open submission (words still to translate: done and cancelled submissions aside, where the
    submissions were pulled): word_count and its breakdown (repetitions, exact, fuzzy, no match), with
    its name, project and status; `attrs["of"]` counts the submissions with a word count."""
    if not has(source, SERVICE, "word_counts"):
        return pd.DataFrame()
    named = has(source, SERVICE, "submissions")
    join = (f"JOIN {SERVICE}.submissions s ON s.submission_id = w.submission_id "
            f"AND s.status::VARCHAR NOT IN {DONE_SQL} AND s.status::VARCHAR != '{CANCELLED}'") if named else ""
    pick = "s.name, s.project_name, s.status::VARCHAR AS status" if named else \
        "NULL AS name, NULL AS project_name, NULL AS status"
    # the breakdown's columns (repetitions, exact_match, ...), or `extra` in files written before them
    def part(wire: str, column: str) -> str:
        held = f"TRY_CAST(json_extract(w.extra, '$.breakdown.{wire}') AS BIGINT)"
        return f"coalesce(w.{column}, {held})" if has_column(source, SERVICE, "word_counts", column) else held
    found = frame(source, f"""
        SELECT w.submission_id, {pick}, w.word_count, {part('repetitions', 'repetitions')} AS repetitions,
               {part('exactMatch', 'exact_match')} AS exact, {part('fuzzyMatch', 'fuzzy_match')} AS fuzzy,
               {part('noMatch', 'no_match')} AS no_match
        FROM {SERVICE}.word_counts w {join} ORDER BY w.word_count DESC NULLS LAST""")
    # of how many: the open ones are a part of the submissions with a word count
    found.attrs["of"] = int(frame(source, f"SELECT count(*) AS n FROM {SERVICE}.word_counts")["n"].iloc[0])
    return found


def plot_word_counts(words: pd.DataFrame) -> Figure:
    """Words per project, stacked by how much translation memory covers them."""
    title = "Words to translate per project (open submissions)"
    if words.empty:
        return plots.empty(title, "No word counts were pulled.")
    parts = {"no_match": ("no match (new words)", plots.BLUE), "fuzzy": ("fuzzy match", plots.ORANGE),
             "exact": ("exact match", plots.GREEN), "repetitions": ("repetitions", plots.GREY)}
    by = words.assign(project=words["project_name"].fillna("(unknown project)"))
    totals = by.groupby("project")[list(parts)].sum().fillna(0)
    if not totals.to_numpy().any():  # no breakdown: the totals alone
        totals = by.groupby("project")[["word_count"]].sum()
        parts = {"word_count": ("words", plots.BLUE)}
    totals = totals.loc[totals.sum(axis=1).sort_values().index]
    fig = plots.figure(plots.bar_height(len(totals), per_bar=0.5, least=2.8))
    ax = fig.subplots()
    left = np.zeros(len(totals))
    for column, (label, colour) in parts.items():
        ax.barh(totals.index, totals[column], left=left, color=colour, label=label)
        left += totals[column].to_numpy()
    plots.label_bars(ax, left, range(len(totals)))
    ax.set_xlim(0, left.max() * 1.15)
    ax.xaxis.set_major_formatter(lambda value, _: f"{value / 1000:,.0f}k" if value else "0")
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    plots.finish(ax, title, "words", "project")
    return fig


def quotes(source: Any) -> pd.DataFrame:
    """Per project and currency: `quotes` (every quote, whatever its status or its submission's),
    `approved` (status APPROVED or an approval date), `submissions`, and their amounts in that currency
    (`amount_quoted`, `amount_approved`). "provided" is a status (quoted, not approved yet), so it names
    no column; `attrs["submissions"]` counts the submissions quoted."""
    if not has(source, SERVICE, "quotes"):
        return pd.DataFrame()
    named = has(source, SERVICE, "submissions")
    join = f"LEFT JOIN {SERVICE}.submissions s USING (submission_id)" if named else ""
    project = "coalesce(s.project_name, '(unknown project)')" if named else "'all projects'"
    found = frame(source, f"""
        SELECT {project} AS project, q.currency, count(*) AS quotes,
               count(*) FILTER (WHERE q.status::VARCHAR = 'APPROVED' OR q.date_approved IS NOT NULL) AS approved,
               count(DISTINCT q.submission_id) AS submissions,
               round(sum(q.amount), 2) AS amount_quoted,
               round(coalesce(sum(q.amount) FILTER (WHERE q.status::VARCHAR = 'APPROVED'
                                                     OR q.date_approved IS NOT NULL), 0), 2) AS amount_approved
        FROM {SERVICE}.quotes q {join} GROUP BY ALL ORDER BY amount_quoted DESC""")
    found.attrs["submissions"] = int(frame(source, f"SELECT count(DISTINCT submission_id) AS n "
                                                   f"FROM {SERVICE}.quotes")["n"].iloc[0])
    return found


def plot_quotes(money: pd.DataFrame) -> Figure:
    """Amounts quoted against approved, per project (and currency)."""
    title = "Quotes: amount quoted against approved"
    if money.empty:
        return plots.empty(title, "No quotes were pulled.")
    shown = money.iloc[::-1]
    labels = [f"{plots.shorten(p, 28)} ({c})" for p, c in zip(shown["project"], shown["currency"], strict=True)]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.55, least=2.8)
    ax.barh(positions + 0.2, shown["amount_quoted"], height=0.4, color="#bcd3ea", label="quoted (every quote)")
    ax.barh(positions - 0.2, shown["amount_approved"], height=0.4, color=plots.GREEN, label="approved")
    for y, (given, approved, n, k) in enumerate(zip(shown["amount_quoted"], shown["amount_approved"],
                                                   shown["quotes"], shown["approved"], strict=True)):
        ax.annotate(f"{given:,.0f} ({n} quotes)", (given, y + 0.2), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8, color=plots.MUTED)
        ax.annotate(f"{approved:,.0f} ({k} approved)", (approved, y - 0.2), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=8, color=plots.MUTED)
    ax.set_yticks(positions, labels)
    ax.set_xlim(0, shown["amount_quoted"].max() * 1.35)
    ax.xaxis.set_major_formatter(lambda value, _: f"{value:,.0f}")
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    plots.finish(ax, title, "amount (in the quote's currency)", "project (currency)")
    return fig
