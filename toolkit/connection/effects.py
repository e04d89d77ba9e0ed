"""What a write changes: the cached resources to mark stale, and what a destructive action loses.

`affected_resources(action)` is derived from the catalog: the resources whose list action's path shares
a noun with the write's path (`/boards/{board_id}/guests` → boards, guests, asset_boards), the resources
fanned out over those, and the side effects a path does not show, which the catalog declares on the
action (`Action.changes`: a board delete cascades to assets, an upload creates one). Marking too much
stale costs one more pull; too little would show old rows as current, so the rule errs wide.

`loss(workspace, action, values)` (toolkit.connection.losses, handed on here) says in words what a
destructive action removes, counted from the workspace when it holds the data.
"""
from __future__ import annotations

__all__ = ["affected_resources", "board_cascade", "loss"]

import functools

from toolkit import catalog
from toolkit.catalog.spec import Action
from toolkit.connection.asset_library_losses import board_cascade
from toolkit.connection.losses import loss


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
