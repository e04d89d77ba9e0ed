"""What the translation service's destructive actions lose, counted from the workspace: a cancel
stops the targets of the submission that are still live."""
from __future__ import annotations

__all__ = ["SENTENCES"]

from collections.abc import Mapping
from typing import Any

from toolkit.connection.held import Read

DONE = ["DELIVERED", "CANCELLED"]       # target statuses a cancel no longer changes


def _cancel(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    if not values.get("submission_id"):
        return None
    targets = read("targets")
    if targets is None:
        return None
    mine = targets[targets.submission_id.astype(str) == str(values["submission_id"])]
    live = mine[~mine.status.astype(str).isin(DONE)]
    which = values.get("target_ids") or values.get("document_ids")
    scope = "the listed targets or documents" if which else f"all {len(live)} live target(s)"
    return f"Cancels {scope} of submission {values['submission_id']}. This cannot be undone."


SENTENCES = {"translation.cancel_submission": _cancel}
