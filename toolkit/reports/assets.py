"""Asset library reports: assets per board tree, tag usage, custom-field fill rate, imports by outcome.

    trees = reports.assets.assets_per_board_tree(ws); reports.assets.plot_assets_per_board_tree(trees)
"""
from __future__ import annotations

__all__ = ["SERVICE", "assets_per_board_tree", "custom_field_fill_rate", "imports",
           "plot_assets_per_board_tree", "plot_custom_field_fill_rate", "plot_imports", "plot_tag_usage",
           "tag_usage"]

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from toolkit.reports import plots
from toolkit.reports.source import frame, has, table

SERVICE = "asset_library"
_FIELDS = '[{"id": "VARCHAR", "name": "VARCHAR", "value": "JSON", "values": "JSON"}]'


def _roots(boards: pd.DataFrame) -> dict[str, str]:
    """Each board's top-level board (itself when it has no parent); a cycle stops where it repeats."""
    parent = dict(zip(boards["id"], boards["parent_board_id"], strict=True))
    roots = {}
    for board in parent:
        seen, here = {board}, board
        while isinstance(parent.get(here), str) and parent[here] in parent and parent[here] not in seen:
            here = parent[here]
            seen.add(here)
        roots[board] = here
    return roots


def assets_per_board_tree(source: Any) -> pd.DataFrame:
    """Per top-level board: its title, boards in its tree and distinct assets anywhere in it; a last row
    "(on no board)" counts the assets no board holds. `attrs`: `assets` (all of them) and `placed` (those
    on a board of any tree: an asset in two trees counts in each row, once here)."""
    boards = table(source, SERVICE, "boards", "id, parent_board_id, title")
    placed = table(source, SERVICE, "asset_boards", "asset_id, id")
    if boards.empty:
        return pd.DataFrame(columns=["board_id", "title", "boards", "assets"])
    roots = _roots(boards)
    titles = dict(zip(boards["id"], boards["title"], strict=True))
    tree = pd.Series(roots, name="root").rename_axis("id").reset_index()
    sizes = tree.groupby("root").size().rename("boards")
    if placed.empty:
        counts = pd.Series(0, index=sizes.index, name="assets")
    else:
        placed = placed.assign(root=placed["id"].map(roots)).dropna(subset=["root"])
        counts = placed.groupby("root")["asset_id"].nunique().rename("assets")
    found = pd.concat([sizes, counts], axis=1).fillna(0).astype(int).rename_axis("board_id").reset_index()
    found.insert(1, "title", found["board_id"].map(titles))
    found = found.sort_values(["assets", "title"], ascending=[False, True], ignore_index=True)
    if has(source, SERVICE, "assets") and not placed.empty:
        total = int(frame(source, f"SELECT count(*) AS n FROM {SERVICE}.assets")["n"].iloc[0])
        nowhere = total - placed["asset_id"].nunique()
        if nowhere > 0:
            found.loc[len(found)] = {"board_id": None, "title": "(on no board)", "boards": 0, "assets": nowhere}
        found.attrs.update(assets=total, placed=int(placed["asset_id"].nunique()))
    return found


def plot_assets_per_board_tree(trees: pd.DataFrame) -> Figure:
    """Distinct assets in each top-level board's tree (the board and its descendants)."""
    title = "Assets per board tree"
    if trees.empty:
        return plots.empty(title, "No boards were pulled.")
    shown = trees.iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.4)
    colours = [plots.GREY if pd.isna(b) else plots.BLUE for b in shown["board_id"]]
    ax.barh(positions, shown["assets"], color=colours)
    ax.set_yticks(positions, [t if pd.isna(b) else f"{plots.shorten(t, 30)} ({n} boards)"
                              for t, b, n in zip(shown["title"], shown["board_id"], shown["boards"], strict=True)])
    plots.label_bars(ax, shown["assets"], positions)
    ax.set_xlim(0, max(shown["assets"].max(), 1) * 1.12)
    plots.finish(ax, title, "distinct assets in the board or any board under it", "top-level board")
    return fig


def tag_usage(source: Any) -> pd.DataFrame:
    """Per tag of the library: assets whose cover version carries it (0 for an unused tag), most used first;
    `attrs["assets"]` counts the assets."""
    used = pd.DataFrame(columns=["tag", "assets"])
    every = 0
    if has(source, SERVICE, "assets"):
        every = int(frame(source, f"SELECT count(*) AS n FROM {SERVICE}.assets")["n"].iloc[0])
        used = frame(source, f"""
            SELECT t.name AS tag, count(DISTINCT id) AS assets
            FROM (SELECT id, unnest(cover_version_tags) AS t FROM {SERVICE}.assets) GROUP BY 1""")
    known = table(source, SERVICE, "tags", "name AS tag")
    if not known.empty:
        used = known.merge(used, on="tag", how="outer")
    used["assets"] = used["assets"].fillna(0).astype(int)
    found = used.sort_values(["assets", "tag"], ascending=[False, True], ignore_index=True)
    found.attrs["assets"] = every
    return found


def plot_tag_usage(usage: pd.DataFrame) -> Figure:
    """Assets per tag; unused tags show as empty rows at the bottom."""
    title = "Tag usage"
    if usage.empty:
        return plots.empty(title, "No tags or assets were pulled.")
    shown = usage.iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.24)
    ax.barh(positions, shown["assets"], color=plots.TEAL)
    ax.set_yticks(positions, [f"{t}  (unused)" if n == 0 else t for t, n in zip(shown["tag"], shown["assets"],
                                                                                 strict=True)])
    ax.set_ylim(-0.6, len(shown) - 0.4)
    plots.label_bars(ax, shown["assets"], positions)
    plots.finish(ax, title, "assets whose cover version carries the tag", "tag")
    return fig


def custom_field_fill_rate(source: Any) -> pd.DataFrame:
    """Per custom field: its type, the assets with a value for it, and that as a percent of all assets."""
    if not has(source, SERVICE, "assets"):
        return pd.DataFrame(columns=["field", "type", "filled", "assets", "percent"])
    filled = frame(source, f"""
        WITH f AS (SELECT id AS asset_id, unnest(from_json(custom_fields, '{_FIELDS}')) AS f
                   FROM {SERVICE}.assets WHERE custom_fields IS NOT NULL)
        SELECT f.id AS field_id, any_value(f.name) AS field,
               count(DISTINCT asset_id) FILTER (WHERE (f.value IS NOT NULL AND f.value::VARCHAR != 'null')
                                                OR coalesce(json_array_length(f.values), 0) > 0) AS filled
        FROM f GROUP BY 1""")
    defined = table(source, SERVICE, "custom_fields", "id AS field_id, name AS field, type")
    if not defined.empty:
        filled = defined.merge(filled.drop(columns="field"), on="field_id", how="left")
    else:
        filled["type"] = None
    total = int(frame(source, f"SELECT count(*) AS n FROM {SERVICE}.assets")["n"].iloc[0])
    filled["filled"] = filled["filled"].fillna(0).astype(int)
    filled["assets"] = total
    filled["percent"] = (100 * filled["filled"] / max(total, 1)).round(1)
    return filled.sort_values(["percent", "field"], ascending=[False, True], ignore_index=True)[
        ["field", "type", "filled", "assets", "percent"]]


def plot_custom_field_fill_rate(rates: pd.DataFrame) -> Figure:
    """Percent of assets with a value in each custom field."""
    title = "Custom-field fill rate"
    if rates.empty:
        return plots.empty(title, "No custom fields or assets were pulled.")
    shown = rates.iloc[::-1]
    fig, ax, positions = plots.bar_axes(len(shown), per_bar=0.4)
    ax.barh(positions, 100, color=plots.GRID)
    ax.barh(positions, shown["percent"], color=plots.PURPLE)
    ax.set_yticks(positions, [f"{f} ({t})" if isinstance(t, str) else f
                              for f, t in zip(shown["field"], shown["type"], strict=True)])
    for y, (pct, n, total) in enumerate(zip(shown["percent"], shown["filled"], shown["assets"], strict=True)):
        ax.annotate(f"{pct:.0f}% ({n:,} of {total:,})", (max(pct, 100), y), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8, color=plots.MUTED)
    ax.set_xlim(0, 135)
    ax.set_xticks(range(0, 101, 20))
    plots.finish(ax, title, "assets with a value (%)", "custom field (type)")
    return fig


def imports(source: Any) -> pd.DataFrame:
    """Imports per outcome: status, error_type (for failures) and count, failures first."""
    if not has(source, SERVICE, "imports"):
        return pd.DataFrame(columns=["status", "error_type", "imports"])
    return frame(source, f"""
        SELECT * FROM (SELECT status::VARCHAR AS outcome, error_type, count(*) AS imports
                       FROM {SERVICE}.imports GROUP BY ALL)
        ORDER BY outcome != 'failed', imports DESC, error_type""").rename(columns={"outcome": "status"})


def plot_imports(outcomes: pd.DataFrame) -> Figure:
    """Imports by outcome: each failure type in red, successes in green, unfinished in grey."""
    title = "Imports by outcome and failure type"
    if outcomes.empty:
        return plots.empty(title, "No imports were pulled (fetch imports with import_ids=...).")
    labels = [f"failed: {e}" if s == "failed" else s for s, e in zip(outcomes["status"], outcomes["error_type"],
                                                                   strict=True)]
    colours = [plots.RED if s == "failed" else plots.GREEN if s == "succeeded" else plots.GREY
               for s in outcomes["status"]]
    fig, ax, positions = plots.bar_axes(len(outcomes), per_bar=0.4)
    positions = positions[::-1]   # the outcomes in their order, from the top
    ax.barh(positions, outcomes["imports"], color=colours)
    ax.set_yticks(positions, labels)
    plots.label_bars(ax, outcomes["imports"], positions)
    plots.whole_numbers(ax.xaxis)
    plots.finish(ax, title, "imports", "outcome")
    return fig
