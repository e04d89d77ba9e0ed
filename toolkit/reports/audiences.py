"""Audience reports: sizes, tags and providers, the overlap between audiences, memberships gained and
lost between two loads, and how many audiences a profile is in.

Sizes come from `audience_platform.audiences` (the platform's own `profile_count`, every profile);
overlap, changes and the per-profile counts from `audience_platform.memberships`, which holds the
profiles that were pulled (a sample of them on a large platform), so they describe that sample.

    sizes = reports.audiences.sizes(ws); reports.audiences.plot_sizes(sizes)
"""
from __future__ import annotations

__all__ = ["SERVICE", "audiences_per_profile", "membership_changes", "overlap", "plot_audiences_per_profile",
           "plot_membership_changes", "plot_overlap", "plot_sizes", "plot_sizes_over_loads", "plot_tags", "providers",
           "size_changes", "sizes", "sizes_over_loads", "tag_counts"]

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from toolkit.reports import plots
from toolkit.reports.source import frame, has, history, loads, table

SERVICE = "audience_platform"


def sizes(source: Any) -> pd.DataFrame:
    """One row per audience, largest first: id, name, provider, profile_count, tags, system_tags, hidden."""
    found = table(source, SERVICE, "audiences",
                  "id, name, provider, profile_count, tags, system_tags, hidden, enabled")
    if found.empty:
        return found
    return found.sort_values(["profile_count", "name"], ascending=[False, True], ignore_index=True)


def plot_sizes(sizes: pd.DataFrame) -> Figure:
    """Horizontal bars of profiles per audience, coloured by provider."""
    title = "Audience sizes"
    if sizes.empty:
        return plots.empty(title, "No audiences were pulled.")
    shown = sizes.iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.24)
    providers = list(dict.fromkeys(sizes["provider"].fillna("unknown")))
    colours = {p: plots.colour(p, plots.PROVIDER, i) for i, p in enumerate(providers)}
    ax.barh(positions, shown["profile_count"], color=[colours[p] for p in shown["provider"].fillna("unknown")])
    ax.set_yticks(positions, [plots.shorten(n, 36) for n in shown["name"]])
    ax.set_ylim(-0.6, len(shown) - 0.4)
    plots.label_bars(ax, shown["profile_count"], positions)
    ax.legend(handles=[Patch(color=colours[p], label=p) for p in providers], title="provider",
              loc="lower right", frameon=False, fontsize=9)
    plots.finish(ax, title + ": every profile, as the platform counts them", "profiles in the audience",
                 "audience")
    return fig


def tag_counts(source: Any) -> pd.DataFrame:
    """One row per tag and system tag: kind ("tag" or "system tag"), tag, audiences, memberships (the
    audiences' sizes summed: a profile in two of them counts twice, so they are not profiles);
    `attrs["audiences"]` counts the audiences, tagged or not."""
    if not has(source, SERVICE, "audiences"):
        return pd.DataFrame(columns=["kind", "tag", "audiences", "memberships"])
    found = frame(source, f"""
        SELECT kind, tag, count(*) AS audiences, sum(profile_count)::BIGINT AS memberships FROM (
            SELECT 'tag' AS kind, unnest(tags) AS tag, profile_count FROM {SERVICE}.audiences
            UNION ALL
            SELECT 'system tag', unnest(system_tags), profile_count FROM {SERVICE}.audiences)
        GROUP BY ALL ORDER BY kind DESC, audiences DESC, tag""")
    found.attrs["audiences"] = int(frame(source, f"SELECT count(*) AS n FROM {SERVICE}.audiences")["n"].iloc[0])
    return found


def providers(source: Any) -> pd.DataFrame:
    """One row per provider: audiences, hidden audiences, memberships (its audiences' sizes summed: a
    profile in two of them counts twice; a column named "profiles" once said 1,001 for 100 profiles)."""
    if not has(source, SERVICE, "audiences"):
        return pd.DataFrame(columns=["provider", "audiences", "hidden", "memberships"])
    return frame(source, f"""
        SELECT coalesce(provider, 'unknown') AS provider, count(*) AS audiences,
               count(*) FILTER (WHERE hidden) AS hidden, sum(profile_count)::BIGINT AS memberships
        FROM {SERVICE}.audiences GROUP BY ALL ORDER BY audiences DESC""")


def plot_tags(tags: pd.DataFrame) -> Figure:
    """Audiences per tag and per system tag, side by side."""
    if tags.empty:
        return plots.empty("Audiences per tag", "No audiences were pulled.")
    kinds = [k for k in ("tag", "system tag") if (tags["kind"] == k).any()]
    most = max((tags["kind"] == k).sum() for k in kinds)
    fig = plots.figure(plots.bar_height(most, per_bar=0.22))
    axes = np.atleast_1d(fig.subplots(1, len(kinds), width_ratios=[3, 2][: len(kinds)]))
    for ax, kind, colour in zip(axes, kinds, (plots.BLUE, plots.PURPLE), strict=False):
        part = tags[tags["kind"] == kind].iloc[::-1]
        positions = np.arange(len(part)) + (most - len(part))  # same bar size in both panels, top-aligned
        ax.barh(positions, part["audiences"], color=colour)
        ax.set_yticks(positions, part["tag"])
        ax.set_ylim(-0.6, most - 0.4)
        ax.xaxis.get_major_locator().set_params(integer=True)
        plots.label_bars(ax, part["audiences"], positions)
        plots.finish(ax, f"Audiences per {kind}", "audiences carrying it", kind)
    return fig


# --- memberships ---------------------------------------------------------------------------------

def overlap(source: Any, top: int = 15) -> pd.DataFrame:
    """Profiles shared by each pair of the `top` audiences with most members among the pulled profiles;
    the diagonal is each audience's own count. Index and columns are audience names; `attrs`:
    `pulled_profiles`, `audiences` (those with a pulled member: the matrix shows `top` of them) and
    `sizes` (each audience's size on the platform)."""
    if not has(source, SERVICE, "memberships"):
        return pd.DataFrame()
    pairs = frame(source, f"""
        WITH m AS (SELECT DISTINCT profile_id, audience_id, name FROM {SERVICE}.memberships),
        top AS (SELECT audience_id, any_value(name) AS name, count(*) AS n FROM m GROUP BY 1
                ORDER BY n DESC, audience_id LIMIT {int(top)})
        SELECT ta.name AS a, tb.name AS b, ta.n AS na, count(*) AS shared
        FROM m a JOIN m b ON a.profile_id = b.profile_id
        JOIN top ta ON ta.audience_id = a.audience_id JOIN top tb ON tb.audience_id = b.audience_id
        GROUP BY ALL""")
    if pairs.empty:
        return pd.DataFrame()
    order = pairs.drop_duplicates("a").sort_values(["na", "a"], ascending=[False, True])["a"].tolist()
    matrix = pairs.pivot_table(index="a", columns="b", values="shared", fill_value=0, aggfunc="sum")
    matrix = matrix.reindex(index=order, columns=order, fill_value=0).astype(int)
    matrix.index.name, matrix.columns.name = "audience", "audience"
    # what the diagonal is of: the pulled profiles, against each audience's size on the platform (an
    # audience of 110 showed 55 on the diagonal, explained only by "among the pulled profiles")
    held = frame(source, f"SELECT count(DISTINCT profile_id) AS n, count(DISTINCT audience_id) AS a "
                         f"FROM {SERVICE}.memberships")
    matrix.attrs.update(pulled_profiles=int(held["n"].iloc[0]), audiences=int(held["a"].iloc[0]))
    if has(source, SERVICE, "audiences"):
        size = frame(source, f"SELECT name, max(profile_count) AS n FROM {SERVICE}.audiences GROUP BY 1")
        matrix.attrs["sizes"] = {name: int(n) for name, n in zip(size["name"], size["n"], strict=True)
                                 if name in order and pd.notna(n)}
    return matrix


def plot_overlap(matrix: pd.DataFrame) -> Figure:
    """A heatmap of shared profiles between pairs of audiences (the diagonal: the audience's own count)."""
    title = "Overlap between audiences"
    if matrix.empty:
        return plots.empty(title, "No memberships were pulled (fetch memberships with profile_ids=...).")
    n = len(matrix)
    fig = plots.figure(height=max(4.0, 0.42 * n + 2.2))
    ax = fig.subplots()
    values = matrix.to_numpy()
    off = values.copy().astype(float)
    np.fill_diagonal(off, np.nan)
    image = ax.imshow(off, cmap="Blues", vmin=0, aspect="auto")
    for i in range(n):
        for j in range(n):
            value = values[i, j]
            dark = i != j and not np.isnan(off[i, j]) and off[i, j] > 0.6 * np.nanmax(off)
            ax.text(j, i, f"{value}", ha="center", va="center", fontsize=7.5,
                    color="white" if dark else plots.INK, fontweight="bold" if i == j else "normal")
    labels = [plots.shorten(name, 28) for name in matrix.index]
    sizes = matrix.attrs.get("sizes", {})
    ax.set_xticks(range(n), labels, rotation=40, ha="right")
    # each row says its diagonal against the audience's size: "Newsletter (55 of 110)"
    labels = [f"{label} ({matrix.iloc[i, i]:,} of {sizes[name]:,})" if name in sizes else label
              for i, (label, name) in enumerate(zip(labels, matrix.index, strict=True))]
    for i in range(n):  # the diagonal (an audience with itself) on a neutral ground, apart from the pairs
        ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, facecolor=plots.GRID, edgecolor="white"))
    ax.set_yticks(range(n), labels)
    fig.colorbar(image, ax=ax, shrink=0.7, label="profiles in both audiences")
    pulled = matrix.attrs.get("pulled_profiles")
    among = f"among the {pulled:,} pulled profiles" if pulled else "among the pulled profiles"
    every = matrix.attrs.get("audiences", n)
    # a capped plot says which of how many it shows
    capped = f"\nthe {n} of {every} audiences with most of them" if every > n else ""
    # short lines: one long line ran past the figure's edge and was cut
    plots.finish(ax, f"{title}: profiles in both,\n{among}{capped};\non the diagonal, an audience's "
                     "pulled members,\nof its size on the platform", "audience", "audience", grid="")
    ax.tick_params(labelsize=8)
    return fig


def membership_changes(source: Any, before: str | None = None, after: str | None = None) -> pd.DataFrame:
    """Per audience: members `before` and `after`, `gained` and `lost` between two loads of memberships
    (the first and the latest by default); empty when the source holds one load only."""
    columns = ["audience_id", "name", "before", "after", "gained", "lost"]
    pulled = loads(source, SERVICE, "memberships")
    if len(pulled) < 2 or not history(source, SERVICE, "memberships"):
        return pd.DataFrame(columns=columns)
    before = before or pulled["load_id"].iloc[0]
    after = after or pulled["load_id"].iloc[-1]
    changes = frame(source, f"""
        WITH o AS (SELECT DISTINCT profile_id, audience_id, name FROM {SERVICE}.memberships__loads
                   WHERE _load_id = $before),
             n AS (SELECT DISTINCT profile_id, audience_id, name FROM {SERVICE}.memberships__loads
                   WHERE _load_id = $after),
             both_sides AS (
                SELECT coalesce(n.audience_id, o.audience_id) AS audience_id, coalesce(n.name, o.name) AS name,
                       o.profile_id IS NOT NULL AS was, n.profile_id IS NOT NULL AS is_now
                FROM o FULL JOIN n ON o.profile_id = n.profile_id AND o.audience_id = n.audience_id)
        SELECT audience_id, any_value(name) AS name, count(*) FILTER (WHERE was) AS before,
               count(*) FILTER (WHERE is_now) AS after, count(*) FILTER (WHERE is_now AND NOT was) AS gained,
               count(*) FILTER (WHERE was AND NOT is_now) AS lost
        FROM both_sides GROUP BY 1 ORDER BY gained + lost DESC, audience_id""",
                     {"before": before, "after": after})
    changes.attrs.update(before=before, after=after)
    return changes[columns]


def plot_membership_changes(changes: pd.DataFrame) -> Figure:
    """Diverging bars per audience that changed: members gained to the right, lost to the left."""
    title = "Memberships gained and lost"
    moved = changes[(changes["gained"] > 0) | (changes["lost"] > 0)] if not changes.empty else changes
    if moved.empty:
        why = ("No membership changed between the two loads." if not changes.empty
               else "Needs two loads of memberships (a workspace, or a snapshot exported with history).")
        return plots.empty(title, why)
    shown = moved.iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.4, least=2.4)
    ax.barh(positions, shown["gained"], color=plots.GREEN, label="gained", height=0.6)
    ax.barh(positions, -shown["lost"], color=plots.RED, label="lost", height=0.6)
    ax.set_ylim(-0.8, len(shown) - 0.2)
    ax.axvline(0, color=plots.GREY, linewidth=1)
    ax.set_yticks(positions, [plots.shorten(n, 36) for n in shown["name"]])
    for y, (gained, lost) in enumerate(zip(shown["gained"], shown["lost"], strict=True)):
        if gained:
            ax.annotate(f"+{gained}", (gained, y), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=8, color=plots.MUTED)
        if lost:
            ax.annotate(f"−{lost}", (-lost, y), xytext=(-3, 0), textcoords="offset points", va="center",
                        ha="right", fontsize=8, color=plots.MUTED)
    reach = max(shown["gained"].max(), shown["lost"].max(), 1) * 1.2
    ax.set_xlim(-reach, reach)
    ax.xaxis.set_major_formatter(lambda value, _: f"{abs(value):,.0f}")
    plots.legend(fig, 2)
    # the memberships are those of the pulled profiles: a platform-wide change is not what this counts
    plots.finish(ax, f"{title} among the pulled profiles,\nbetween the first and the latest load "
                     f"({len(moved)} of {len(changes)} audiences changed)", "profiles lost (left) and gained (right)",
                 "audience")
    return fig


def audiences_per_profile(source: Any) -> pd.DataFrame:
    """How many of the pulled profiles are in 0, 1, 2, ... audiences: audiences, profiles."""
    if not has(source, SERVICE, "memberships"):
        return pd.DataFrame(columns=["audiences", "profiles"])
    everyone = (f"SELECT item_id AS profile_id FROM {SERVICE}.profiles UNION "
                if has(source, SERVICE, "profiles") else "")
    counts = frame(source, f"""
        WITH p AS ({everyone}SELECT DISTINCT profile_id FROM {SERVICE}.memberships),
        n AS (SELECT p.profile_id, count(DISTINCT m.audience_id) AS audiences
              FROM p LEFT JOIN {SERVICE}.memberships m USING (profile_id) GROUP BY 1)
        SELECT audiences, count(*) AS profiles FROM n GROUP BY 1 ORDER BY 1""")
    if counts.empty:
        return counts
    full = pd.RangeIndex(0, int(counts["audiences"].max()) + 1, name="audiences")
    return counts.set_index("audiences").reindex(full, fill_value=0).reset_index()


def plot_audiences_per_profile(counts: pd.DataFrame) -> Figure:
    """A histogram: profiles by the number of audiences they are in."""
    title = "Audiences per profile"
    if counts.empty:
        return plots.empty(title, "No memberships were pulled.")
    fig = plots.figure(3.4)
    ax = fig.subplots()
    ax.bar(counts["audiences"], counts["profiles"], color=plots.TEAL, width=0.8)
    ax.set_xticks(counts["audiences"])
    plots.label_bars(ax, counts["profiles"], counts["audiences"], horizontal=False)
    plots.finish(ax, f"{title}: the {int(counts['profiles'].sum()):,} pulled profiles", "audiences the profile is in",
                 "profiles", grid="y")
    return fig


# --- over the loads --------------------------------------------------------------------------------

def sizes_over_loads(source: Any) -> pd.DataFrame:
    """Each audience's size (the platform's `profile_count`) at every load of audiences, from the
    history the source keeps (`audiences__loads`): load_id, service_clock (the service's Date at the
    load, or its end where none was recorded), audience id, name and profile_count; oldest load first.
    Only the latest load where the source has no history."""
    if not has(source, SERVICE, "audiences"):
        return pd.DataFrame(columns=["load_id", "service_clock", "id", "name", "profile_count"])
    held = loads(source, SERVICE, "audiences")
    clock = held.assign(service_clock=held["service_clock"].fillna(held["finished"]))[["load_id", "service_clock"]]
    if history(source, SERVICE, "audiences"):
        rows = frame(source, f"SELECT _load_id AS load_id, id, name, profile_count FROM {SERVICE}.audiences__loads")
    else:
        rows = table(source, SERVICE, "audiences", "id, name, profile_count").assign(load_id=held["load_id"].iloc[-1])
    found = rows.merge(clock, on="load_id")[["load_id", "service_clock", "id", "name", "profile_count"]]
    return found.sort_values(["service_clock", "profile_count", "id"], ascending=[True, False, True],
                             ignore_index=True)


def size_changes(over: pd.DataFrame) -> pd.DataFrame:
    """Per audience: its size at the first and at the latest load of `sizes_over_loads` (empty where it
    was not there then: an audience new since, or gone), `change` (its last size less its first, over the
    loads it was in), `changed` (whether its size moved at all over those loads), `loads` it was in.
    Those that changed come first, the most changed first."""
    if over.empty:
        return pd.DataFrame(columns=["id", "name", "first", "latest", "change", "changed", "loads"])
    moments = over["service_clock"].drop_duplicates().sort_values()
    first = over[over["service_clock"] == moments.iloc[0]].set_index("id")["profile_count"]
    latest = over[over["service_clock"] == moments.iloc[-1]].set_index("id")["profile_count"]
    names = over.drop_duplicates("id", keep="last").set_index("id")["name"]
    ordered = over.sort_values("service_clock", kind="stable").groupby("id")["profile_count"]
    found = pd.DataFrame({"name": names, "first": first.reindex(names.index).astype("Int64"),
                          "latest": latest.reindex(names.index).astype("Int64")})
    found["change"] = (ordered.last() - ordered.first()).reindex(names.index).astype("int64")
    found["changed"] = (ordered.nunique() > 1).reindex(names.index)
    found["loads"] = over.groupby("id")["load_id"].nunique().reindex(names.index)
    found = found.rename_axis("id").reset_index()
    found["_size"] = found["change"].abs()
    found = found.sort_values(["changed", "_size", "latest"], ascending=False, ignore_index=True, na_position="last")
    return found.drop(columns="_size")


def plot_sizes_over_loads(over: pd.DataFrame, limit: int = 8) -> Figure:
    """A line per audience of its size at each load, by the service's clock: those whose size changed in
    colour and labelled (the `limit` that changed most), every other one a thin grey line, summed up in
    the legend as "and K unchanged"; the title counts what the plot draws."""
    title = "Audience sizes over the loads"
    if over.empty:
        return plots.empty(title, "No audiences were pulled.")
    changes = size_changes(over)
    moved = changes[changes["changed"]]
    labelled = moved.head(limit)
    fig = plots.figure(4.2)
    ax = fig.subplots()
    ax.set_ylim(0, max(float(over["profile_count"].max()), 1) * 1.1)

    def draw(audience: Any, **style: Any) -> None:
        line = over[over["id"] == audience]
        ax.plot(pd.to_datetime(line["service_clock"], utc=True).dt.tz_localize(None), line["profile_count"],
                **style)

    rest = changes[~changes["id"].isin(labelled["id"])]
    unchanged = int((~rest["changed"]).sum())
    others = len(rest) - unchanged
    for i, audience in enumerate(rest["id"]):      # under the coloured ones, one legend entry for them all
        name = f"and {unchanged:,} unchanged" if others == 0 else f"and {len(rest):,} more ({unchanged:,} unchanged)"
        draw(audience, color=plots.GREY, linewidth=0.8, alpha=0.6, label=name if i == 0 else "_nolegend_")
    for i, row in enumerate(labelled.itertuples()):
        draw(row.id, marker="o", markersize=3, linewidth=2, color=plots.SERIES[i % len(plots.SERIES)],
             label=f"{plots.shorten(str(row.name), 28)} ({row.change:+,})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=8)  # beside: lines stay clear
    loads_seen = over["load_id"].nunique()
    said = (f"{len(moved):,} of {len(changes):,} changed size" if len(labelled) == len(moved)
            else f"the {len(labelled):,} that changed most of the {len(moved):,} that changed, of {len(changes):,}")
    plots.finish(ax, f"{title} ({loads_seen} loads)\n{said}, in colour; the other {len(rest):,} in grey",
                 "the service's clock at the load", "profiles")
    return fig
