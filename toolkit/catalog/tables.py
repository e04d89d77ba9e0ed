"""The catalog as DataFrames: `toolkit.actions()` and `toolkit.resources()`."""
from __future__ import annotations

__all__ = ["actions", "resources"]

import pandas as pd

from toolkit import catalog
from toolkit.catalog.spec import Action


def actions(service: str | None = None) -> pd.DataFrame:
    """One row per callable endpoint: the audience platform's v1 and v2 forms are two rows.

        toolkit.actions().query("writes and service == 'translation'")
    """
    if service is not None:
        catalog.service(service)
    rows = []
    for entry in catalog.ACTIONS.values():
        if service and entry.service != service:
            continue
        svc = catalog.SERVICES[entry.service]
        for version in entry.versions:
            prefix = svc.version_prefix.format(version=version) if version else ""
            rows.append({
                "service": entry.service, "action": entry.id, "name": entry.name, "group": entry.group,
                "method": entry.method, "path": prefix + entry.path_for(version), "version": version,
                "doc": entry.doc, "writes": bool(entry.writes), "destructive": bool(entry.destructive),
                "response": entry.response, "paged": entry.response == "page",
                "body": entry.body or "", "params": ", ".join(p.name for p in entry.params),
                "required": ", ".join(p.name for p in entry.params if p.required),
                "modes": ", ".join(entry.modes), "min_version": entry.min_version or "",
                # where the row comes from: the interface document, or the public integrations that
                # show it (the action, or some of its params; keys of docs/public-specs.md)
                "origin": _origin(entry),
            })
    return pd.DataFrame(rows).astype({"writes": bool, "destructive": bool})


def _origin(entry: Action) -> str:
    """"seed", or the integrations' keys and what they add: `G4 (action)`, `G4 (deliverable_languages)`."""
    found = [f"{', '.join(entry.origin)} (action)"] if entry.origin else []
    found += [f"{', '.join(p.origin)} ({p.name})" for p in entry.params if p.origin]
    return "; ".join(found) or "seed"


def resources(service: str | None = None) -> pd.DataFrame:
    """One row per fetchable resource: how it is pulled, its key and its columns."""
    if service is not None:
        catalog.service(service)
    rows = [{
        "service": r.service, "resource": r.name, "action": r.action, "key": ", ".join(r.key),
        "fan_out": r.fan_out or "", "parent": r.parent or "", "filters": ", ".join(r.filters),
        "columns": len(r.columns), "doc": r.doc,
    } for r in catalog.RESOURCES.values() if not service or r.service == service]
    return pd.DataFrame(rows, columns=["service", "resource", "action", "key", "fan_out", "parent",
                                       "filters", "columns", "doc"])
