"""What a write changes: the cached resources to mark stale, and what a destructive action loses.

`affected_resources(action)` is derived from the catalog: the resources whose list action's path shares
a noun with the write's path (`/boards/{board_id}/guests` → boards, guests, asset_boards), the resources
fanned out over those, and the side effects a path does not show, which the catalog declares on the
action (`Action.changes`: a board delete cascades to assets, an upload creates one). Marking too much stale costs one more pull; too little
would show old rows as current, so the rule errs wide.

`loss(workspace, action, values)` says in words what a destructive action removes, counted from the
workspace when it holds the data (for a board: the assets contained only in it or its direct child
boards, which the service deletes with it).
"""
from __future__ import annotations

__all__ = ["affected_resources", "board_cascade", "loss"]

import functools
from typing import TYPE_CHECKING, Any

from toolkit import catalog
from toolkit.catalog.spec import Action
from toolkit.storage.file import filtered_of

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.storage.store import Store

def _nouns(path: str, prefix: tuple[str, ...] = ()) -> set[str]:
    parts = [p.lower() for p in path.strip("/").split("/") if p and not p.startswith("{")]
    return set(parts[len(prefix):] if tuple(parts[:len(prefix)]) == prefix else parts)


@functools.cache
def _prefix(service: str) -> tuple[str, ...]:
    """The literal segments every resource path of the service starts with (`rest/v0`)."""
    paths = [catalog.action(r.action).path for (s, _), r in catalog.RESOURCES.items() if s == service]
    split = [[p.lower() for p in path.strip("/").split("/")] for path in paths]
    if len(split) < 2:
        return ()
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1 or parts[0].startswith("{"):
            break
        common.append(parts[0])
    return tuple(common)


def affected_resources(action: str | Action) -> tuple[str, ...]:
    """The resources of the action's service whose cached loads a successful call makes stale.

        affected_resources("asset_library.delete_board")   # ('asset_boards', 'assets', 'boards', ...)
    """
    return _affected(action.id if isinstance(action, Action) else catalog.action(action).id)


@functools.cache
def _affected(action_id: str) -> tuple[str, ...]:
    entry = catalog.action(action_id)
    service, prefix = entry.service, _prefix(entry.service)
    nouns = _nouns(entry.path, prefix)
    resources = {name: r for (s, name), r in catalog.RESOURCES.items() if s == service}
    hit = {name for name, r in resources.items() if nouns & _nouns(catalog.action(r.action).path, prefix)}
    hit.update(entry.changes)
    grew = True
    while grew:                                   # what fans out over a changed resource changes with it
        children = {name for name, r in resources.items() if r.parent in hit} - hit
        hit |= children
        grew = bool(children)
    return tuple(sorted(n for n in hit if n in resources))


# --- what a destructive action loses ------------------------------------------------------------------

def _store(held: Any) -> Store | None:
    """The store to count from: a Store, or what a Connection (`library`) is bound to. Handed a
    connection, `forms.loss(library, ...)` read nothing and said "pull boards and asset_boards to
    count them first" right after they were pulled."""
    inner = getattr(held, "workspace", None)
    return inner if inner is not None and hasattr(inner, "latest") else held


def _read(workspace: Store | None, service: str, resource: str) -> pd.DataFrame | None:
    """The resource's latest whole load, else its latest filtered one (the boards of the assets asked
    for are all of those assets' boards), or None when the workspace holds neither (or cannot read it:
    a sentence about what is lost must not fail the form that shows it)."""
    workspace = _store(workspace)
    try:
        for name in (resource, filtered_of(resource)):
            if workspace is not None and workspace.latest(service, name) is not None:
                return workspace.read(service, name)
        return None
    except Exception:
        return None


def board_cascade(workspace: Store | None, board_id: Any) -> tuple[int, int] | None:
    """(child boards, assets) a board delete removes: assets only in the board or its direct children.

    None when the workspace lacks boards or asset_boards to count from.
    """
    boards, placed = _read(workspace, "asset_library", "boards"), _read(workspace, "asset_library", "asset_boards")
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


def _title(frame: pd.DataFrame | None, key: str, value: Any, column: str) -> str:
    if frame is None or key not in frame or column not in frame:
        return str(value)
    hit = frame.loc[frame[key].astype(str) == str(value), column]
    return f"“{hit.iloc[0]}”" if len(hit) else str(value)


def loss(workspace: Store | None, action: Action, values: dict[str, Any]) -> str:
    """What the action removes, in a sentence or two, counted from the workspace where it can be
    (a Store, or a Connection's workspace)."""
    def read(resource: str) -> pd.DataFrame | None:
        return _read(workspace, action.service, resource)

    text = f"{action.doc.rstrip('.')}. This cannot be undone."
    name = action.id
    if name == "asset_library.delete_board" and values.get("board_id"):
        board = values["board_id"]
        counted = board_cascade(workspace, board)
        title = _title(read("boards"), "id", board, "title")
        if counted is None:
            return (f"Deletes board {title} and every asset contained only in it or its direct child boards "
                    "(pull boards and asset_boards to count them first). This cannot be undone.")
        children, gone = counted
        return (f"Deletes board {title} with its {children} direct child board(s); the cascade removes "
                f"{gone} asset(s) contained only in them (counted from the workspace's boards and "
                "asset_boards). This cannot be undone.")
    if name == "asset_library.delete_custom_field" and values.get("custom_field_id"):
        found = read("custom_field_values")
        field = values["custom_field_id"]
        title = _title(read("custom_fields"), "id", field, "name")
        if found is not None:
            count = int((found.custom_field_id.astype(str) == str(field)).sum())
            return f"Deletes custom field {title} with its {count} value(s) and every asset's setting of it. " \
                   "This cannot be undone."
    if name == "asset_library.delete_tag" and values.get("tag_id"):
        tags, assets = read("tags"), read("assets")
        tag = _title(tags, "id", values["tag_id"], "name").strip("“”")
        if assets is not None and "cover_version_tags" in assets:
            count = sum(1 for t in assets.cover_version_tags if t is not None and tag in list(t))
            return f"Deletes tag “{tag}”, carried by the cover version of {count} asset(s). This cannot be undone."
    if name == "translation.cancel_submission" and values.get("submission_id"):
        targets = read("targets")
        if targets is not None:
            mine = targets[targets.submission_id.astype(str) == str(values["submission_id"])]
            live = mine[~mine.status.astype(str).isin(["DELIVERED", "CANCELLED"])]
            which = values.get("target_ids") or values.get("document_ids")
            scope = "the listed targets or documents" if which else f"all {len(live)} live target(s)"
            return f"Cancels {scope} of submission {values['submission_id']}. This cannot be undone."
    if name == "audience_platform.delete_notifications":
        if str(values.get("filter") or "").strip():
            return f"Deletes every notification matching {values['filter']!r}. This cannot be undone."
        found = read("notifications")
        count = "every notification" if found is None else \
            f"all {len(found)} notification(s) (as of the workspace's latest pull of notifications)"
        return f"Deletes {count}: no filter is sent. This cannot be undone."
    if name == "audience_platform.anonymize_profile":
        props = read("profile_properties")
        if props is not None and "system_tags" in props:
            personal = [p for p, tags in zip(props.id, props.system_tags, strict=False)
                        if tags is not None and "personalIdentifierProperties" in list(tags)]
            return (f"Deletes the profile's {len(personal)} personal identifier properties "
                    f"({', '.join(map(str, personal[:6]))}{'…' if len(personal) > 6 else ''}). "
                    "This cannot be undone.")
    return text
