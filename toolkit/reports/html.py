"""The HTML report: every report of the four services in one self-contained file.

Images are PNGs embedded as `data:` URIs and the CSS is inline, so the file opens anywhere with no
network and can be mailed as it is. A report that cannot be drawn from the source (a resource never
pulled, history missing) says so in its place; the others still appear.

    reports.write_report(ws, "report.html")          # or a snapshot: toolkit.open_snapshot(...)
"""
from __future__ import annotations

__all__ = ["CSS", "Drawn", "Part", "write_report"]

import functools
import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from toolkit.reports import assets, audiences, captions, media, plots, translation
from toolkit.reports.source import CLOCKS, clock_of, frame, has

CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2933;
       background: #f5f7fa; margin: 0; line-height: 1.45; }
main { max-width: 940px; margin: 0 auto; padding: 24px 20px 60px; background: white; }
h1 { font-size: 26px; margin: 8px 0 4px; } h2 { font-size: 21px; margin: 40px 0 8px; padding-top: 12px;
     border-top: 3px solid #2f6fb0; } h3 { font-size: 16px; margin: 28px 0 4px; }
p { margin: 4px 0 10px; } .meta { color: #616e7c; font-size: 13px; }
nav { font-size: 14px; margin: 12px 0 4px; } nav a { margin-right: 14px; color: #2f6fb0; }
img { width: 100%; max-width: 900px; height: auto; display: block; margin: 6px 0 10px; }
table.data { border-collapse: collapse; font-size: 12px; margin: 4px 0 14px; }
table.data th, table.data td { padding: 3px 8px; border-bottom: 1px solid #e4e7eb; text-align: left;
                               vertical-align: top; }
table.data th { background: #f0f4f8; } table.data td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #8a5a00; background: #fff7e0; padding: 6px 10px; border-radius: 4px; font-size: 13px; }
"""


Drawn = tuple[Figure | None, pd.DataFrame | None, str]


@dataclass
class Part:
    """One report in the page: heading, what the plot shows, and `draw`, which gives the figure, a small
    table and the sentence that counts what both show (toolkit.reports.captions), put before `text`."""
    heading: str
    text: str
    draw: Callable[[], Drawn]
    rows: int = 10
    columns: list[str] = field(default_factory=list)


def _cell(value: Any, column: str) -> tuple[str, bool]:
    """A value as table text, and whether it is a number (right-aligned)."""
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(map(str, value)), False
    if value is None or value is pd.NA or (isinstance(value, float | np.floating | pd.Timestamp) and pd.isna(value)):
        return "", False
    if isinstance(value, bool | np.bool_):
        return ("yes" if value else "no"), False
    if isinstance(value, int | np.integer):
        return (str(value) if column == "id" or column.endswith("_id") else f"{value:,}"), True
    if isinstance(value, float | np.floating):
        return (f"{value:,.2f}" if column.startswith("amount") else f"{value:,.1f}"), True
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M"), False
    return str(value), False


def _table(data: pd.DataFrame | None, rows: int, columns: list[str]) -> str:
    """A small HTML table, text to the left and numbers to the right: its first `rows` rows, the
    others folded under a <details> that opens on a click (the page stays short, nothing is left out)."""
    if data is None or data.empty or rows <= 0:
        return ""
    shown = data[[c for c in columns if c in data.columns]] if columns else data
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    lines = []
    for record in shown.itertuples(index=False):
        cells = [_cell(value, str(column)) for value, column in zip(record, shown.columns, strict=True)]
        lines.append("<tr>" + "".join(f"<td class=num>{html.escape(text)}</td>" if number
                                      else f"<td>{html.escape(text)}</td>" for text, number in cells) + "</tr>")
    first = f"<table class=data><thead><tr>{head}</tr></thead><tbody>{''.join(lines[:rows])}</tbody></table>"
    if len(lines) <= rows:
        return first
    # the rest folded, not dropped: a table that stopped at 10 rows left no way to see the others
    rest = f"<table class=data><thead><tr>{head}</tr></thead><tbody>{''.join(lines[rows:])}</tbody></table>"
    return (f"{first}<details><summary>the other {len(lines) - rows:,} of {len(lines):,} rows</summary>"
            f"{rest}</details>")


def _part(part: Part) -> str:
    out = [f"<h3>{html.escape(part.heading)}</h3>"]
    try:
        figure, data, counted = part.draw()
    except Exception as error:  # one report that cannot be drawn must not cost the others
        return "\n".join([*out, f"<p>{html.escape(part.text)}</p>",
                          _note("This report could not be drawn from this source", error)])
    out.append(f"<p>{html.escape(counted)} {html.escape(part.text)}</p>")
    if figure is not None:
        try:
            out.append(f'<img alt="{html.escape(part.heading)}" src="{plots.data_uri(figure)}">')
        except Exception as error:  # nor one figure its table, or the page
            out.append(_note("The figure could not be drawn; its table follows", error))
    try:
        out.append(_table(data, part.rows, part.columns))
    except Exception as error:
        out.append(_note("The table could not be written", error))
    return "\n".join(out)


def _note(what: str, error: Exception) -> str:
    """A short note in place of what failed: the error's first line, never a page of it."""
    first = (str(error).strip().splitlines() or [""])[0]
    said = f"{type(error).__name__}: {plots.shorten(first, 200)}" if first else type(error).__name__
    return f"<p class=note>{html.escape(what)}: {html.escape(said)}</p>"


def _parts(source: Any, now: Any, as_of: Mapping[str, Any] | None) -> dict[str, list[Part]]:
    """The report's sections: heading → parts, each computed only when drawn, each with the sentence
    that counts what it shows (toolkit.reports.captions) before its text."""
    return {"Audiences": _audience_parts(source), "Translation progress": _translation_parts(source, now, as_of),
            "Asset library": _asset_parts(source), "Media review": _media_parts(source)}


def _audience_parts(source: Any) -> list[Part]:
    """Sizes, tags, overlaps and memberships of the audience platform's audiences."""
    A, C = audiences, captions

    @functools.cache
    def over_loads() -> pd.DataFrame:
        return A.sizes_over_loads(source)

    def sizes() -> Drawn:
        found, by = A.sizes(source), A.providers(source)
        return A.plot_sizes(found), by, C.audience_sizes(source, found, by)

    def sizes_over() -> Drawn:
        changes = A.size_changes(over_loads())
        return (A.plot_sizes_over_loads(over_loads(), _OVER_LOADS), changes,
                C.sizes_over_loads(source, over_loads(), changes, _OVER_LOADS))

    def tags() -> Drawn:
        found = A.tag_counts(source)
        return A.plot_tags(found), None, C.tag_counts(source, found)

    def shared() -> Drawn:
        matrix = A.overlap(source)
        return A.plot_overlap(matrix), None, C.overlap(source, matrix)

    def changed() -> Drawn:
        changes = A.membership_changes(source)
        moved = changes[(changes["gained"] > 0) | (changes["lost"] > 0)] if not changes.empty else changes
        return A.plot_membership_changes(changes), moved, C.membership_changes(source, changes, moved)

    def per_profile() -> Drawn:
        counts = A.audiences_per_profile(source)
        return A.plot_audiences_per_profile(counts), None, C.audiences_per_profile(source, counts)

    return [
        Part("Audience sizes", "Profiles in each audience, as the platform counts them, coloured by the "
             "provider that maintains the audience. The table counts each provider's audiences and their "
             "memberships (their sizes summed: a profile in two audiences counts twice).", sizes),
        Part("Audience sizes over the loads", "Each audience's size (the platform's profile count) at "
             "every load of audiences.", sizes_over, _OVER_LOADS, ["id", "name", "first", "latest", "change",
                                                                   "loads"]),
        Part("Tags and system tags", "How many audiences carry each tag (set by people) and each system "
             "tag (set by the platform: where an audience comes from, whether it is hidden).", tags),
        Part("Overlap between audiences", "Profiles that two audiences share; the diagonal is the "
             "audience's pulled members, beside its size on the platform, which counts every profile. Dark "
             "cells are pairs worth a look before targeting both.", shared),
        Part("Memberships gained and lost", "Profiles that joined (right) or left (left) each audience.",
             changed, 8, ["audience_id", "name", "before", "after", "gained", "lost"]),
        Part("Audiences per profile", "How many audiences each profile belongs to, among the pulled "
             "memberships.", per_profile),
    ]


def _translation_parts(source: Any, now: Any, as_of: Mapping[str, Any] | None) -> list[Part]:
    """Statuses, the phase funnel, what is late, the burndown, words and quotes of the translation service."""
    T, C = translation, captions

    @functools.cache
    def progress() -> pd.DataFrame:  # two parts use it; computed once, inside the part that first draws
        return T.percent_complete(source, now) if has(source, "translation", "targets") else pd.DataFrame()

    @functools.cache
    def open_progress() -> pd.DataFrame:  # the plot and its table show the same set: those with open targets
        found = progress()
        return found[found["open"] > 0].reset_index(drop=True) if not found.empty else found

    def by_language() -> Drawn:
        pivot = T.status_by_language(source)
        return T.plot_status_by_language(pivot), None, C.status_by_language(source, pivot)

    def funnel() -> Drawn:
        found = T.phase_funnel(source)
        return T.plot_phase_funnel(found), found, C.phase_funnel(source, found)

    def percent() -> Drawn:
        return (T.plot_percent_complete(open_progress(), _SOONEST), open_progress(),
                C.percent_complete(progress(), open_progress(), _SOONEST))

    def late() -> Drawn:
        found = T.overdue(source, now)
        return T.plot_overdue(found, progress(), _MOST_LATE), found, C.overdue(found, _MOST_LATE)

    def late_by() -> Drawn:
        found = T.overdue_by(source, now)
        return None, found, C.overdue_by(found)

    def burning() -> Drawn:
        found = T.burndown(source, as_of)
        return T.plot_burndown(found), found, C.burndown(found)

    def words() -> Drawn:
        found = T.word_counts(source)
        return T.plot_word_counts(found), found, C.word_counts(source, found)

    def money() -> Drawn:
        found = T.quotes(source)
        return T.plot_quotes(found), found, C.quotes(source, found)

    return [
        Part("Targets by status and target language", "Every target (one document into one language) "
             "by its status, per target language: grey waits, blue is being worked on, green is done, pink "
             "is cancelled.", by_language),
        Part("Phase funnel", "How far the targets got through their workflow: the light bar counts "
             "those that reached a stage (a target has reached every stage up to its current phase's; "
             "its history is not read), the dark bar those in it now. Workflows differ, so a stage names "
             "the phases found at that step.", funnel, 8),
        Part("Percent complete per submission with open targets", "Targets done (cancelled ones aside) per submission, "
             "soonest due first; the colour says whether the submission is past due, due within 48 hours, "
             "or due later.", percent, 10,
             ["submission_id", "name", "project_name", "submission_status", "due_date", "targets", "done",
              "percent", "hours_left"]),
        Part("Overdue and at-risk targets", "Open targets past their due date, and those due within 48 "
             "hours that are not yet in their workflow's last phase, per submission; in the table soonest due "
             "first, with its project and the words it has left.", late, 12,
             ["target_id", "submission_id", "project_name", "target_language", "status", "due_date",
              "hours_left", "words_left", "flag"]),
        Part("Overdue and at-risk by language and project", "The targets above per target language and "
             "project: how many are overdue and at risk, and the words they have left, most words first.",
             late_by, 12),
        Part("Burndown", "The blue line should fall towards zero; the dashed line counts the open targets "
             "being worked on in a phase.", burning, 8, ["as_of", "open", "in_phase", "done", "cancelled"]),
        Part("Word counts", "Words to translate per project, split by how much the translation memory "
             "already covers (new words cost the most). The table lists each open submission, most words "
             "first.", words, 8),
        Part("Quotes: amount quoted against approved", "What the vendors quoted per project and currency, "
             "and how much of it has been approved.", money),
    ]


def _asset_parts(source: Any) -> list[Part]:
    """Board trees, tags, custom fields and imports of the asset library."""
    S, C = assets, captions

    def trees() -> Drawn:
        found = S.assets_per_board_tree(source)
        return S.plot_assets_per_board_tree(found), None, C.assets_per_board_tree(source, found)

    def tag_use() -> Drawn:
        found = S.tag_usage(source)
        return S.plot_tag_usage(found), None, C.tag_usage(source, found)

    def fill() -> Drawn:
        found = S.custom_field_fill_rate(source)
        return S.plot_custom_field_fill_rate(found), None, C.custom_field_fill_rate(source, found)

    def outcomes() -> Drawn:
        found = S.imports(source)
        return S.plot_imports(found), found, C.imports(source, found)

    return [
        Part("Assets per board tree", "Distinct assets in each top-level board and the boards under it "
             "(an asset on several boards of a tree counts once).", trees),
        Part("Tag usage", "Assets whose current (cover) version carries each tag of the library.", tag_use),
        Part("Custom-field fill rate", "The share of assets with a value in each custom field: low bars "
             "are metadata nobody fills in.", fill),
        Part("Imports by outcome", "URL imports by outcome, each failure by its type.", outcomes),
    ]


def _media_parts(source: Any) -> list[Part]:
    """Media review's teams against their plans' limits."""
    M, C = media, captions

    def teams() -> Drawn:
        found = M.team_usage(source)
        return M.plot_team_usage(found, _FULLEST), found, C.team_usage(source, found, _FULLEST)

    return [
        Part("Teams against their limits", "Storage and members of each team as a percent of its plan's "
             "limits: gold from 80%, red over the limit.", teams, 10,
             ["name", "storage_gib", "storage_limit_gib", "storage_percent", "member_count", "member_limit",
              "member_percent"]),
    ]


# how many each capped plot draws; its caption and title say "N of M" from these
_OVER_LOADS, _SOONEST, _MOST_LATE, _FULLEST = 8, 25, 20, 20


def _summary(source: Any, now: Any) -> str:
    where = getattr(source, "path", None)
    kind = type(source).__name__
    rows = []
    if has(source, "main", "_loads"):
        counts = frame(source, "SELECT service, count(*) AS loads, count(DISTINCT resource) AS resources, "
                               "max(finished) AS latest FROM _loads WHERE status IN ('complete', 'stale') "
                               "GROUP BY 1 ORDER BY 1")
        rows = [f"{html.escape(s)}: {captions.many(int(r), 'resource')}, {captions.many(int(n), 'load')}"
                for s, n, r in zip(counts["service"], counts["loads"], counts["resources"], strict=True)]
    moment, clock = clock_of(source, now)
    as_of = (f" Translation deadlines are measured against {moment:%d %b %Y %H:%M} UTC, by "
             f"{html.escape(CLOCKS[clock])}." if moment else "")
    return (f"<p class=meta>From the {html.escape(kind.lower())} {html.escape(str(where or 'in memory'))}; "
            f"{'; '.join(rows) or 'no loads'}. Written {datetime.now(UTC):%d %b %Y %H:%M} UTC by this machine's "
            f"clock.{as_of}</p>")


def write_report(source: Any, path: str | Path, now: Any = None, title: str = "toolkit report",
                 as_of: Mapping[str, Any] | None = None) -> Path:
    """Write the HTML report of `source` (a Workspace or a Snapshot) to `path`; returns the path.

    `now` is the moment translation deadlines are measured against (by default the service's clock
    at the latest load of targets, which the page names); `as_of` dates loads for the burndown (load
    id → moment, see `translation.burndown`).
    """
    path = Path(path)
    sections = _parts(source, now, as_of)
    anchors = {name: name.lower().replace(" ", "-") for name in sections}
    body = [f"<h1>{html.escape(title)}</h1>", _summary(source, now),
            "<nav>" + "".join(f'<a href="#{anchors[n]}">{html.escape(n)}</a>' for n in sections) + "</nav>"]
    for name, parts in sections.items():
        body.append(f'<h2 id="{anchors[name]}">{html.escape(name)}</h2>')
        body.extend(_part(part) for part in parts)
    page = (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
            + "\n".join(body) + "\n</main></body></html>\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
