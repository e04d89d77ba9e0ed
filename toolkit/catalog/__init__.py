"""The catalog: every action of the services, once, indexed by id, service and resource name.

A service is one module in this package that defines `SERVICE` (and its `ACTIONS`, `RESOURCES`): it is
found here by that, so adding a service is adding its module, nothing else. What no field of its
records can say is in modules beside it named for it (`<service>_checks.py`, the audience platform's
filter language), which it imports itself.
"""
from __future__ import annotations

__all__ = ["ACTIONS", "MODULES", "RESOURCES", "SERVICES", "action", "actions_of", "how_to_fetch", "lookup",
           "resource", "service"]

import importlib
import pkgutil
from types import MappingProxyType, ModuleType

from toolkit.catalog.spec import Action, Lookup, Resource, Service
from toolkit.errors import UnknownNameError, ValidationError, did_you_mean

# the catalog's own rooms, beside the services' modules: not imported to look for a SERVICE (tables and
# listings load pandas, which a bare client never needs)
_ROOMS = frozenset({"listings", "masking", "paging", "spec", "tables"})


def _service_modules() -> tuple[ModuleType, ...]:
    """Every module of this package that describes a service, in the order their `SERVICE.position`
    gives (the order the README's table and every listing show them)."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in _ROOMS or info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if isinstance(getattr(module, "SERVICE", None), Service):
            found.append(module)
    return tuple(sorted(found, key=lambda m: (m.SERVICE.position, m.SERVICE.key)))


MODULES = _service_modules()

SERVICES: MappingProxyType[str, Service] = MappingProxyType({m.SERVICE.key: m.SERVICE for m in MODULES})
ACTIONS: MappingProxyType[str, Action] = MappingProxyType({a.id: a for m in MODULES for a in m.ACTIONS})
RESOURCES: MappingProxyType[tuple[str, str], Resource] = MappingProxyType(
    {(r.service, r.name): r for m in MODULES for r in m.RESOURCES})


def action(action_id: str, service: str | None = None) -> Action:
    """The action by id (`asset_library.list_assets`), or by its short name within `service`."""
    _one_name("action", action_id, "call", service)
    if "." not in action_id and service:
        action_id = f"{service}.{action_id}"
    try:
        return ACTIONS[action_id]
    except KeyError:
        known = [a for a in ACTIONS if not service or a.startswith(f"{service}.")]
        raise UnknownNameError("action", action_id, known, lister="toolkit.actions()") from None


def actions_of(service: str) -> tuple[Action, ...]:
    return tuple(a for a in ACTIONS.values() if a.service == service)


def lookup(action: Action, name: str) -> Lookup | None:
    """Where the values of the action's param `name` come from: the param's own `lookup`, else what its
    service says for the name; None when from nowhere (a free value)."""
    own = next((p.lookup for p in action.params if p.name == name), None)
    if own is not None:
        return own if own.resource else None
    return SERVICES[action.service].lookups.get(name)


def service(key: str) -> Service:
    """The service by key; an unknown one says which are served (and the closest)."""
    try:
        return SERVICES[key]
    except (KeyError, TypeError):
        raise UnknownNameError("service", key, list(SERVICES)) from None


def resource(service_key: str, name: str) -> Resource:
    """A resource of a service; an unknown one says the closest names the service has."""
    _one_name("resource", name, "fetch", service_key)
    try:
        return RESOURCES[(service_key, name)]
    except KeyError:
        service(service_key)
        names = sorted(r for s, r in RESOURCES if s == service_key)
        raise UnknownNameError("resource", name, names, where=f" in {service_key}",
                               lister=f"toolkit.resources({service_key!r})") from None


def _one_name(what: str, name: object, verb: str, service: str | None) -> None:
    """A list or another non-name where one name goes (`tm.fetch(["targets", "phases"])`) is refused with
    the loop that does what was meant, not a raw `TypeError: unhashable type: 'list'`."""
    if isinstance(name, str):
        return
    many = isinstance(name, list | tuple | set)
    rule = (f"one {what} a call; for several, one call each: for name in {list(name)!r}: conn.{verb}(name)"
            if many else f"give the {what}'s name as text")
    raise ValidationError(what, name, rule, service or "")


def how_to_fetch(service_key: str, name: str) -> str:
    """The call that fills the view `service.name`, for a query that names it before it is fetched
    (DuckDB's own answer was `Table with name phases does not exist! Did you mean "pg_catalog.pg_class"?`);
    for a name the catalog lacks, the closest it has. Empty for a service the catalog lacks."""
    if service_key not in SERVICES:
        return f"no service {service_key!r}{did_you_mean(service_key, SERVICES)}"
    found = RESOURCES.get((service_key, name))
    if found is None:
        names = sorted(r for s, r in RESOURCES if s == service_key)
        return f"{service_key} has no resource {name!r}{did_you_mean(name, names)}"
    ids = f", {found.parent}=[...]" if found.fan_out and (service_key, found.parent) not in RESOURCES else ""
    return (f"{service_key}.{name} is not fetched yet: ws.connect({service_key!r}, ...).fetch({name!r}{ids}) "
            f"fetches it")
