"""The catalog: every action of the four services, once, indexed by id, service and resource name."""
from __future__ import annotations

from types import MappingProxyType

from toolkit.catalog import asset_library, audience_platform, media_review, translation
from toolkit.catalog.spec import Action, Resource, Service

MODULES = (media_review, asset_library, audience_platform, translation)

SERVICES: MappingProxyType[str, Service] = MappingProxyType({m.SERVICE.key: m.SERVICE for m in MODULES})
ACTIONS: MappingProxyType[str, Action] = MappingProxyType({a.id: a for m in MODULES for a in m.ACTIONS})
RESOURCES: MappingProxyType[tuple[str, str], Resource] = MappingProxyType(
    {(r.service, r.name): r for m in MODULES for r in m.RESOURCES})


def action(action_id: str, service: str | None = None) -> Action:
    """The action by id (`asset_library.list_assets`), or by its short name within `service`."""
    if "." not in action_id and service:
        action_id = f"{service}.{action_id}"
    try:
        return ACTIONS[action_id]
    except KeyError:
        close = [a for a in ACTIONS if action_id.split(".")[-1] in a]
        hint = f"; did you mean {', '.join(close[:3])}?" if close else ""
        raise KeyError(f"no action {action_id!r}{hint}") from None


def actions_of(service: str) -> tuple[Action, ...]:
    return tuple(a for a in ACTIONS.values() if a.service == service)


def resource(service: str, name: str) -> Resource:
    try:
        return RESOURCES[(service, name)]
    except KeyError:
        names = sorted(r for s, r in RESOURCES if s == service)
        raise KeyError(f"{service} has no resource {name!r}; it has {', '.join(names)}") from None
