"""What a workspace holds, read for a sentence about a write: the store behind what a form was handed,
a resource's latest load (None when it cannot be read: a sentence must not fail the form that shows
it), a row's title."""
from __future__ import annotations

__all__ = ["Read", "latest", "store_of", "title"]

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit.storage.file import filtered_of

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.storage.store import Store

# a resource of the action's service → its latest load, or None (what a loss sentence is handed)
Read = Callable[[str], "pd.DataFrame | None"]


def store_of(held: Any) -> Store | None:
    """The store to count from: a Store, or what a Connection (`library`) is bound to. Handed a
    connection, `forms.loss(library, ...)` read nothing and said "pull boards and asset_boards to
    count them first" right after they were pulled."""
    inner = getattr(held, "workspace", None)
    return inner if inner is not None and hasattr(inner, "latest") else held


def latest(workspace: Any, service: str, resource: str) -> pd.DataFrame | None:
    """The resource's latest whole load, else its latest filtered one (the boards of the assets asked
    for are all of those assets' boards), or None when the workspace holds neither (or cannot read it:
    a sentence about what is lost must not fail the form that shows it). `workspace`: a Store, or a
    Connection bound to one."""
    store = store_of(workspace)
    try:
        for name in (resource, filtered_of(resource)):
            if store is not None and store.latest(service, name) is not None:
                return store.read(service, name)
        return None
    except Exception:
        return None


def title(frame: pd.DataFrame | None, key: str, value: Any, column: str) -> str:
    """The row's `column` in quotes, for the row whose `key` is `value`; the value itself when unknown."""
    if frame is None or key not in frame or column not in frame:
        return str(value)
    hit = frame.loc[frame[key].astype(str) == str(value), column]
    return f"“{hit.iloc[0]}”" if len(hit) else str(value)
