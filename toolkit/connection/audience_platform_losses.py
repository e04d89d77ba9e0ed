"""What the audience platform's destructive actions lose, counted from the workspace: a notification
delete without a filter takes every one; an anonymisation removes the personal identifier properties."""
from __future__ import annotations

__all__ = ["SENTENCES"]

from collections.abc import Mapping
from typing import Any

from toolkit.connection.held import Read


def _notifications(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    if str(values.get("filter") or "").strip():
        return f"Deletes every notification matching {values['filter']!r}. This cannot be undone."
    found = read("notifications")
    count = "every notification" if found is None else \
        f"all {len(found)} notification(s) (as of the workspace's latest pull of notifications)"
    return f"Deletes {count}: no filter is sent. This cannot be undone."


def _anonymize(read: Read, workspace: Any, values: Mapping[str, Any]) -> str | None:
    props = read("profile_properties")
    if props is None or "system_tags" not in props:
        return None
    personal = [p for p, tags in zip(props.id, props.system_tags, strict=False)
                if tags is not None and "personalIdentifierProperties" in list(tags)]
    return (f"Deletes the profile's {len(personal)} personal identifier properties "
            f"({', '.join(map(str, personal[:6]))}{'…' if len(personal) > 6 else ''}). "
            "This cannot be undone.")


SENTENCES = {"audience_platform.delete_notifications": _notifications,
             "audience_platform.anonymize_profile": _anonymize}
