"""Media review reports: each team's storage and members against its plan's limits.

    teams = reports.media.team_usage(ws); reports.media.plot_team_usage(teams)
"""
from __future__ import annotations

__all__ = ["GB", "SERVICE", "plot_team_usage", "team_usage"]

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from toolkit.reports import plots
from toolkit.reports.source import table

SERVICE = "media_review"
GB = 1024**3


def team_usage(source: Any) -> pd.DataFrame:
    """Per team (deleted ones aside): storage and its limit (GiB, percent used), members and their limit
    (percent used; empty when the plan has no member limit), collaborators and files; fullest first.
    `attrs["deleted"]` counts the deleted teams left out."""
    teams = table(source, SERVICE, "teams", "name, storage, storage_limit, member_count, member_limit, "
                                             "collaborator_count, file_count, deleted_at")
    if teams.empty:
        return pd.DataFrame()
    deleted = int(teams["deleted_at"].notna().sum())
    teams = teams[teams["deleted_at"].isna()].drop(columns="deleted_at")
    teams["storage_gib"] = (teams["storage"] / GB).round(1)
    teams["storage_limit_gib"] = (teams["storage_limit"] / GB).round(1)
    teams["storage_percent"] = (100 * teams["storage"] / teams["storage_limit"].where(teams["storage_limit"] > 0)
                                ).astype(float).round(1)
    teams["member_percent"] = (100 * teams["member_count"] / teams["member_limit"].where(teams["member_limit"] > 0)
                               ).astype(float).round(1)
    fullest = teams[["storage_percent", "member_percent"]].max(axis=1)
    columns = ["name", "storage_gib", "storage_limit_gib", "storage_percent", "member_count", "member_limit",
               "member_percent", "collaborator_count", "file_count"]
    found = teams.assign(_fullest=fullest).sort_values("_fullest", ascending=False, ignore_index=True)[columns]
    found.attrs["deleted"] = deleted
    return found


def _colour(percent: float) -> str:
    return plots.RED if percent >= 100 else plots.GOLD if percent >= 80 else plots.BLUE


def plot_team_usage(usage: pd.DataFrame, limit: int = 20) -> Figure:
    """Side by side for the `limit` fullest teams: storage and members as a percent of their limits
    (red: over, gold: 80% or more); a team without a member limit shows its member count."""
    title = "Teams against their limits"
    if usage.empty:
        return plots.empty(title, "No teams were pulled.")
    shown = usage.head(limit).iloc[::-1].reset_index(drop=True)
    # a capped plot says which of how many it shows
    capped = f"\nthe {len(shown)} fullest of {len(usage)}" if len(usage) > len(shown) else ""
    fig = plots.figure(plots.bar_height(len(shown), per_bar=0.3))
    storage_ax, members_ax = fig.subplots(1, 2, sharey=True)
    positions = np.arange(len(shown))
    for ax, column, what in ((storage_ax, "storage_percent", "storage"), (members_ax, "member_percent", "members")):
        values = shown[column].fillna(0)
        ax.barh(positions, values, color=[_colour(v) for v in values])
        ax.axvline(100, color=plots.RED, linewidth=1, linestyle=":")
        ax.axvline(80, color=plots.GOLD, linewidth=1, linestyle=":")
        top = max(130.0, float(values.max()) * 1.3)
        ax.set_xlim(0, top)
        ax.set_ylim(-0.6, len(shown) - 0.4)
        plots.finish(ax, f"{title}: {what}{capped}" if what == "storage" else what,
                     f"{what} used (% of the limit)", "team" if what == "storage" else "")
    for y, row in shown.iterrows():
        storage_ax.annotate(f"{row['storage_gib']:,.0f} / {row['storage_limit_gib']:,.0f} GiB",
                            (row["storage_percent"] if pd.notna(row["storage_percent"]) else 0, y), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7, color=plots.MUTED)
        limit_text = f"{row['member_count']} / {row['member_limit']}" if pd.notna(row["member_limit"]) \
            else f"{row['member_count']} (no limit)"
        members_ax.annotate(limit_text, (row["member_percent"] if pd.notna(row["member_percent"]) else 0, y),
                            xytext=(3, 0), textcoords="offset points", va="center", fontsize=7, color=plots.MUTED)
    storage_ax.set_yticks(positions, [plots.shorten(n, 30) for n in shown["name"]])
    return fig
