"""What the asset library's destructive actions lose, counted from the workspace: a board delete
cascades to the assets contained only in it or its direct child boards, which the service deletes with
it; a custom field takes its values; a tag leaves the versions that carried it."""
from __future__ import annotations

__all__ = ["SENTENCES", "board_cascade"]

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit.connection.held import Read, latest, title

if TYPE_CHECKING:

    from toolkit.storage.store import Store



def board_cascade(workspace: Store | None, board_id: Any) -> tuple[int, int] | None:
    """(child boards, assets) a board delete removes: assets only in the board or its direct children.

    None when the workspace lacks boards or asset_boards to count from.
    """
    boards, placed = latest(workspace, "asset_library", "boards"), latest(workspace, "asset_library", "asset_boards")
    if boards is None or placed is None or placed.empty:
        return None
    board = str(board_id)
    children = set(boards.loc[boards.parent_board_id.astype(str) == board, "id"].astype(str))
    doomed = {board} | children
    where: dict[str, set[str]] = {}
    for asset, in_board in zip(placed.asset_id.astype(str), placed["id"].astype(str), strict=True):
        where.setdefault(asset, set()).add(in_board)
    gone = sum(1 for ids in where.values() if ids <= doomed)
    return len(children), gone


def _board(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    if not values.get("board_id"):
        return None
    board = values["board_id"]
    counted = board_cascade(workspace, board)
    named = title(read("boards"), "id", board, "title")
    if counted is None:
        return (f"Deletes board {named} and every asset contained only in it or its direct child boards "
                "(pull boards and asset_boards to count them first). This cannot be undone.")
    children, gone = counted
    return (f"Deletes board {named} with its {children} direct child board(s); the cascade removes "
            f"{gone} asset(s) contained only in them (counted from the workspace's boards and "
            "asset_boards). This cannot be undone.")


def _custom_field(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    if not values.get("custom_field_id"):
        return None
    found = read("custom_field_values")
    field = values["custom_field_id"]
    named = title(read("custom_fields"), "id", field, "name")
    if found is None:
        return None
    count = int((found.custom_field_id.astype(str) == str(field)).sum())
    return f"Deletes custom field {named} with its {count} value(s) and every asset's setting of it. " \
           "This cannot be undone."


def _tag(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    if not values.get("tag_id"):
        return None
    tags, assets = read("tags"), read("assets")
    tag = title(tags, "id", values["tag_id"], "name").strip("“”")
    if assets is None or "cover_version_tags" not in assets:
        return None
    count = sum(1 for t in assets.cover_version_tags if t is not None and tag in list(t))
    return f"Deletes tag “{tag}”, carried by the cover version of {count} asset(s). This cannot be undone."


SENTENCES = {"asset_library.delete_board": _board, "asset_library.delete_custom_field": _custom_field,
             "asset_library.delete_tag": _tag}
