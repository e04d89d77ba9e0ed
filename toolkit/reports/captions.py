"""What each part of the HTML report says it counts: a sentence computed from the data it was drawn from.

Each sentence names what is counted, of which rows (which statuses, which filters), from which load
and by which clock, with the numbers; where a plot or a table shows part of a set, "N of M". A report
whose caption was written once by hand said "words to translate" over done work and "the 25 soonest"
over a table of 79 rows: these are computed so that they cannot drift from the data.

    captions.status_by_language(ws, reports.translation.status_by_language(ws))
"""
from __future__ import annotations

__all__ = ["assets_per_board_tree", "audience_sizes", "audiences_per_profile", "burndown", "custom_field_fill_rate",
           "imports", "latest", "many", "membership_changes", "overdue", "overdue_by", "overlap", "percent_complete",
           "phase_funnel", "quotes", "sizes_over_loads", "status_by_language", "tag_counts", "tag_usage",
           "team_usage", "word_counts"]

from typing import Any

import pandas as pd

from toolkit.reports.source import GIVEN, OUR_CLOCK, SERVICE_CLOCK, load_moment, loads, utc

_BY = {SERVICE_CLOCK: "the service's clock", OUR_CLOCK: "this machine's clock (the service sent no Date)",
       GIVEN: "the moment given"}
_DONE = ("PROCESSED", "DELIVERED", "COMPLETED")


def _when(moment: Any) -> str:
    return f"{utc(moment):%d %b %Y %H:%M} UTC" if utc(moment) is not None else "an unknown time"


def latest(source: Any, service: str, resource: str) -> str:
    """"the latest load of targets (03 Nov 2026 00:00 UTC by the service's clock)"."""
    pulled = loads(source, service, resource)
    if pulled.empty:
        return f"no load of {resource}"
    moment, clock = load_moment(pulled["service_clock"].iloc[-1], pulled["finished"].iloc[-1])
    return f"the latest load of {resource} ({_when(moment)} by {_BY[clock]})"


def many(count: int, noun: str) -> str:
    """"1 load", "6 loads": a count and its noun."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _cut(shown: int, every: int, what: str, noun: str) -> str:
    """"the 8 with the most of them, of 31" where a plot is cut, "all 31 audiences" where it is not."""
    return f"the {shown:,} {what}, of {every:,}" if shown < every else f"all {every:,} {noun}"


# --- audiences ----------------------------------------------------------------------------------

_AP = "audience_platform"


def audience_sizes(source: Any, sizes: pd.DataFrame, providers: pd.DataFrame) -> str:
    if sizes.empty:
        return "No audiences were pulled."
    hidden = int(sizes["hidden"].fillna(False).astype(bool).sum())
    return (f"{many(len(sizes), 'audience')} ({hidden:,} of them hidden) of "
            f"{many(len(providers), 'provider')}, from {latest(source, _AP, 'audiences')}: "
            f"{many(int(sizes['profile_count'].sum()), 'membership')} in all (the platform's profile counts "
            "summed).")


def sizes_over_loads(source: Any, over: pd.DataFrame, changes: pd.DataFrame, shown: int) -> str:
    if over.empty:
        return "No audiences were pulled."
    moments = over["service_clock"].drop_duplicates().sort_values()
    # the plot labels only those whose size moved: say how many did, and how many it leaves grey
    moved = int(changes["changed"].sum())
    labelled = min(shown, moved)
    new = int(changes["first"].isna().sum())
    gone = int(changes["latest"].isna().sum())
    unclocked = loads(source, _AP, "audiences")["service_clock"].isna().any()
    ours = " (this machine's when a load finished, where the service sent no Date)" if unclocked else ""
    drawn = f"labels the {labelled:,} that changed" + (" most" if labelled < moved else "")
    came = f"; {new:,} not there at the first load" if new else ""
    went = f", {gone:,} gone by the latest" if gone else ""
    return (f"{many(len(changes), 'audience')} over {many(over['load_id'].nunique(), 'load')} of audiences, "
            f"from {_when(moments.iloc[0])} to {_when(moments.iloc[-1])} by the service's clock at each load{ours}: "
            f"{moved:,} of them changed size over the loads they were in{came}{went}; the plot {drawn} and "
            f"draws the other {len(changes) - labelled:,} in grey; the table lists all {len(changes):,}, "
            "those that changed first (first and latest empty where the audience was not there).")


def tag_counts(source: Any, tags: pd.DataFrame) -> str:
    if tags.empty:
        return "No audiences were pulled."
    kinds = tags["kind"].value_counts()
    return (f"{many(int(kinds.get('tag', 0)), 'tag')} and {many(int(kinds.get('system tag', 0)), 'system tag')}"
            f" on the {many(tags.attrs.get('audiences', 0), 'audience')} of {latest(source, _AP, 'audiences')}; "
            "an audience counts once under each tag it carries.")


def overlap(source: Any, matrix: pd.DataFrame) -> str:
    if matrix.empty:
        return "No memberships were pulled."
    every = matrix.attrs.get("audiences", len(matrix))
    return (f"{many(every, 'audience')} have members among the "
            f"{many(matrix.attrs.get('pulled_profiles', 0), 'profile')} of {latest(source, _AP, 'memberships')}; "
            f"the plot draws {_cut(len(matrix), every, 'with the most of them', 'audiences')}.")


def membership_changes(source: Any, changes: pd.DataFrame, moved: pd.DataFrame) -> str:
    if "before" not in changes.attrs:
        return "Needs two loads of memberships (a workspace, or a snapshot exported with history)."
    pulled = loads(source, _AP, "memberships").set_index("load_id")

    def at(load: str) -> str:
        return _when(load_moment(pulled.at[load, "service_clock"], pulled.at[load, "finished"])[0])

    return (f"{len(moved):,} of {many(len(changes), 'audience')} changed between the first load of memberships "
            f"({at(changes.attrs['before'])}) and the latest ({at(changes.attrs['after'])}), by the service's "
            f"clock: {many(int(changes['gained'].sum()), 'membership')} gained and "
            f"{int(changes['lost'].sum()):,} lost, among the pulled profiles only; plot and table show the "
            "audiences that changed.")


def audiences_per_profile(source: Any, counts: pd.DataFrame) -> str:
    if counts.empty:
        return "No memberships were pulled."
    nowhere = int(counts.loc[counts["audiences"] == 0, "profiles"].sum())
    return (f"{many(int(counts['profiles'].sum()), 'profile')} (those pulled, and any with a pulled "
            f"membership), {nowhere:,} of them in no audience, from {latest(source, _AP, 'memberships')}.")


# --- translation --------------------------------------------------------------------------------

_TM = "translation"


def status_by_language(source: Any, pivot: pd.DataFrame) -> str:
    if pivot.empty:
        return "No targets were pulled."
    by_status = pivot.sum()
    done = int(by_status[[s for s in by_status.index if s in _DONE]].sum())
    cancelled = int(by_status.get("CANCELLED", 0))
    total = int(by_status.sum())
    return (f"{many(total, 'target')} in {many(len(pivot), 'target language')}, from "
            f"{latest(source, _TM, 'targets')}: {total - done - cancelled:,} open, {done:,} done "
            f"({', '.join(_DONE)}), {cancelled:,} cancelled.")


def phase_funnel(source: Any, funnel: pd.DataFrame) -> str:
    if funnel.empty:
        return "No targets were pulled."
    counted, done = int(funnel["reached"].iloc[0]), int(funnel["now"].iloc[-1])
    return (f"{many(counted, 'target')} ({funnel.attrs.get('cancelled', 0):,} cancelled ones aside) of "
            f"{latest(source, _TM, 'targets')}: {done:,} done, {counted - done:,} open, "
            f"{int(funnel['now'].iloc[0]):,} of them not started.")


def percent_complete(progress: pd.DataFrame, shown: pd.DataFrame, limit: int) -> str:
    if progress.empty:
        return "No targets were pulled."
    if shown.empty:
        return "No submission has a target still open."
    drawn = _cut(min(limit, len(shown)), len(shown), "soonest due", "of them")
    return (f"{many(len(shown), 'submission')} with a target still open, of the {len(progress):,} with "
            f"targets ({len(progress) - len(shown):,} whose targets are all done or cancelled aside); due dates "
            f"against {_when(progress.attrs.get('now'))} by {_BY[progress.attrs.get('clock', GIVEN)]}. The plot "
            f"draws {drawn}, the table lists all {len(shown):,}.")


def overdue(late: pd.DataFrame, limit: int) -> str:
    if late.attrs.get("now") is None:   # no load of targets to measure by
        return "No targets were pulled."
    if late.empty:
        return "No open target is overdue or at risk."
    flags = late["flag"].value_counts()
    submissions = late["submission_id"].nunique()
    drawn = _cut(min(limit, submissions), submissions, "submissions with most", "submissions")
    return (f"{len(late):,} open targets ({int(flags.get('overdue', 0)):,} overdue, "
            f"{int(flags.get('at risk', 0)):,} at risk) in {many(submissions, 'submission')}, "
            f"{many(int(late['words_left'].sum()), 'word')} left, against {_when(late.attrs.get('now'))} by "
            f"{_BY[late.attrs.get('clock', GIVEN)]}. The plot draws {drawn}, the table each of the "
            f"{many(len(late), 'target')}.")


def overdue_by(by: pd.DataFrame) -> str:
    if by.attrs.get("now") is None:
        return "No targets were pulled."
    if by.empty:
        return "No open target is overdue or at risk."
    return (f"{many(len(by), 'pair')} of target language and project: {many(int(by['overdue'].sum()), 'target')} "
            f"overdue with {many(int(by['overdue_words'].sum()), 'word')} left, {int(by['at_risk'].sum()):,} at risk "
            f"with {many(int(by['at_risk_words'].sum()), 'word')} left.")


def burndown(progress: pd.DataFrame) -> str:
    if progress.empty:
        return "No targets were pulled."
    clocks = " and ".join("the moments given (as_of=)" if c == GIVEN else _BY[c]
                          for c in progress.attrs.get("clocks", ()))
    first, last = progress.iloc[0], progress.iloc[-1]
    return (f"{many(len(progress), 'load')} of targets, from {_when(first['as_of'])} to {_when(last['as_of'])} "
            f"by {clocks or 'the time of each load'}: open targets (neither done nor cancelled) went from "
            f"{int(first['open']):,} to {int(last['open']):,}, {int(last['in_phase']):,} of them in a phase "
            f"and {int(last['cancelled']):,} cancelled at the latest load.")


def word_counts(source: Any, words: pd.DataFrame) -> str:
    if words.empty:
        return "No word counts of open submissions were pulled."
    projects = words["project_name"].nunique()
    every = words.attrs.get("of", len(words))
    # two loads of two times: the counts of one, which submissions are open by the other
    return (f"{many(int(words['word_count'].sum()), 'word')} in {len(words):,} open submissions (neither done "
            f"nor cancelled) of the {many(every, 'submission')} with a word count, in "
            f"{many(projects, 'project')}: the counts of {latest(source, _TM, 'word_counts')}, open by "
            f"{latest(source, _TM, 'submissions')}.")


def quotes(source: Any, money: pd.DataFrame) -> str:
    if money.empty:
        return "No quotes were pulled."
    currencies = ", ".join(sorted(money["currency"].dropna().unique()))
    count, approved = int(money["quotes"].sum()), int(money["approved"].sum())
    return (f"{many(count, 'quote')} of {many(money.attrs.get('submissions', 0), 'submission')}, every quote "
            f"of {latest(source, _TM, 'quotes')} whatever its submission's status: {approved:,} approved "
            f"(status APPROVED or an approval date), {count - approved:,} not; amounts in each quote's currency "
            f"({currencies}), never added across currencies.")


# --- asset library and media review -------------------------------------------------------------

_AL = "asset_library"


def assets_per_board_tree(source: Any, trees: pd.DataFrame) -> str:
    if trees.empty:
        return "No boards were pulled."
    roots = trees[trees["board_id"].notna()]
    every, placed = trees.attrs.get("assets"), trees.attrs.get("placed")
    held = (f"; {placed:,} of the {many(every, 'asset')} of {latest(source, _AL, 'assets')} are on a board, "
            f"{every - placed:,} on none" if every is not None and placed is not None else "")
    return (f"{many(len(roots), 'top-level board')} holding {many(int(roots['boards'].sum()), 'board')}"
            f"{held}; an asset on boards of two trees counts in each.")


def tag_usage(source: Any, usage: pd.DataFrame) -> str:
    if usage.empty:
        return "No tags or assets were pulled."
    return (f"{many(len(usage), 'tag')} ({int((usage['assets'] == 0).sum()):,} on no asset) over the cover "
            f"versions of the {many(usage.attrs.get('assets', 0), 'asset')} of {latest(source, _AL, 'assets')}; "
            "an asset counts once under each tag it carries.")


def custom_field_fill_rate(source: Any, rates: pd.DataFrame) -> str:
    if rates.empty:
        return "No custom fields or assets were pulled."
    return (f"{many(len(rates), 'custom field')}, each against all "
            f"{many(int(rates['assets'].iloc[0]), 'asset')} of {latest(source, _AL, 'assets')}.")


def imports(source: Any, outcomes: pd.DataFrame) -> str:
    if outcomes.empty:
        return "No imports were pulled (fetch imports with import_ids=...)."
    by = outcomes.groupby("status")["imports"].sum()
    done = int(by.get("succeeded", 0)) + int(by.get("failed", 0))
    return (f"{many(int(by.sum()), 'import')}, those asked for by id, from {latest(source, _AL, 'imports')}: "
            f"{int(by.get('succeeded', 0)):,} succeeded, {int(by.get('failed', 0)):,} failed, "
            f"{int(by.sum()) - done:,} not finished.")


def team_usage(source: Any, usage: pd.DataFrame, limit: int) -> str:
    if usage.empty:
        return "No teams were pulled."
    return (f"{many(len(usage), 'team')} ({usage.attrs.get('deleted', 0):,} deleted ones aside) of "
            f"{latest(source, 'media_review', 'teams')}; the plot draws "
            f"{_cut(min(limit, len(usage)), len(usage), 'fullest', 'teams')}, the table lists all "
            f"{len(usage):,}, fullest first.")
