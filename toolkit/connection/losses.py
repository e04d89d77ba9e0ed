"""What a destructive action loses, in a sentence or two, counted from the workspace where it can be:
the confirm line of a form (toolkit.forms) and `forms.loss(...)`.

Most actions are said from their catalog entry alone ("Deletes a tag. This cannot be undone.").
Where the service's own semantics say more (a board delete cascades to the assets only in it), the
sentence is written in the module named for that service (`<service>_losses.py`: `SENTENCES`, by
action id), as reports are written per service.
"""
from __future__ import annotations

__all__ = ["SENTENCES", "Sentence", "loss"]

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolkit import catalog
from toolkit.catalog.spec import Action
from toolkit.connection.held import Read, latest

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.storage.store import Store

# (read the service's resource, the workspace, the action's values) → the sentence, or None to say
# only what the catalog entry says
Sentence = Callable[[Read, Any, Mapping[str, Any]], "str | None"]


def _sentences() -> dict[str, Sentence]:
    """Every service's own sentences, from the `<service>_losses` module beside this one where the
    service has one: found from the catalog, so a new service adds its module and nothing else."""
    found: dict[str, Sentence] = {}
    for key in catalog.SERVICES:
        try:
            module = importlib.import_module(f"{__package__}.{key}_losses")
        except ModuleNotFoundError as missing:
            if missing.name != f"{__package__}.{key}_losses":
                raise
            continue
        found.update(module.SENTENCES)
    return found


SENTENCES: Mapping[str, Sentence] = MappingProxyType(_sentences())


def loss(workspace: Store | None, action: Action, values: dict[str, Any]) -> str:
    """What the action removes, in a sentence or two, counted from the workspace where it can be
    (a Store, or a Connection's workspace)."""
    def read(resource: str) -> pd.DataFrame | None:
        return latest(workspace, action.service, resource)

    said = SENTENCES[action.id](read, workspace, values) if action.id in SENTENCES else None
    return said or f"{action.doc.rstrip('.')}. This cannot be undone."
