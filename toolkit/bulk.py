"""Many resources of a service in one go: the loop behind `toolkit demo` and `toolkit pull`.

Each resource is pulled through `Client.pull` (progress bar on a terminal or in Jupyter) and then
reported in one plain line (rows, requests, seconds), so a scheduled run leaves a readable log.
A resource that cannot be pulled without ids the analyst holds (`profile_ids`, `import_ids`, ...) or
a required path param is skipped with a message saying what it needs, unless `inputs` has them.

    bulk.pull_service(ws.connect("translation", **creds), inputs=sandbox.examples("translation"))
"""
from __future__ import annotations

__all__ = ["Pulled", "log", "needs", "pull_one", "pull_service", "resource_names"]

import logging
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit import catalog
from toolkit.catalog.masking import mask_passwords
from toolkit.errors import ToolkitError, printable

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from toolkit.catalog.spec import Resource
    from toolkit.connection.connection import Connection


@dataclass
class Pulled:
    """One resource's outcome: rows, requests and seconds, or why it was skipped or failed."""
    service: str
    resource: str
    rows: int = 0
    requests: int = 0
    seconds: float = 0.0
    skipped: str | None = None
    error: str | None = None
    load_id: str | None = None
    resumed: bool = False       # completed by a run that died; not pulled again
    taken_over: int = 0         # parents an interrupted pull had checkpointed, not asked again

    def line(self) -> str:
        name = f"{self.service}.{self.resource}"
        if self.skipped:
            return f"  skip {name}: {self.skipped}"
        if self.resumed:
            return f"  ok   {name:<44} {self.rows:>8,} rows: pulled by the interrupted run (load {self.load_id})"
        if self.error:
            return f"  FAIL {name}: {printable(self.error)}"
        resumed = f" ({self.taken_over:,} parents from the interrupted pull)" if self.taken_over else ""
        return f"  ok   {name:<44} {self.rows:>8,} rows {self.requests:>6,} requests {self.seconds:>6.1f} s{resumed}"


def needs(resource: Resource) -> list[str]:
    """The inputs a resource cannot be pulled without: the ids it fans out over, required path params."""
    wanted: list[str] = []
    if resource.fan_out and resource.parent and (resource.service, resource.parent) not in catalog.RESOURCES:
        wanted.append(resource.parent)
    action = catalog.ACTIONS[resource.action]
    wanted += [p.name for p in action.params
               if p.required and p.default is None and p.name != resource.fan_out and p.where == "path"
               and not resource.fan_out]
    return wanted


def resource_names(service: str) -> list[str]:
    """Every resource of a service, parents before the resources that fan out over them."""
    names = [name for (owner, name) in catalog.RESOURCES if owner == service]
    return sorted(names, key=lambda name: catalog.RESOURCES[(service, name)].parent in names)


def pull_one(client: Connection, name: str, inputs: Mapping[str, Any] | None = None,
             progress: bool | None = None) -> Pulled:
    """Pull one resource with what it needs from `inputs`; never raises for a service's refusal."""
    resource = catalog.resource(client.service.key, name)
    inputs = inputs or {}
    missing = [need for need in needs(resource) if inputs.get(need) is None]
    if missing:
        given = ", ".join(f"{m}=[...]" if m == resource.parent else f"{m}=..." for m in missing)
        # the command takes the ids a resource fans out over, not the values of its path params
        command = (f"toolkit pull {resource.service} {name} --ids ... or --ids-from SERVICE.RESOURCE.COLUMN; "
                   if missing == [resource.parent] else "")
        return Pulled(resource.service, name, skipped=f"needs {', '.join(missing)} ({command}from Python: "
                      f"client.pull({name!r}, {given}))")
    filters = {need: inputs[need] for need in needs(resource)}
    started = time.monotonic()
    try:
        result = client.pull(name, refresh=True, progress=progress, **filters)
    except ToolkitError as error:
        return Pulled(resource.service, name, seconds=time.monotonic() - started,
                      error=f"{type(error).__name__}: {mask_passwords(str(error))}")
    except Exception as error:  # one resource's bug or bad bytes never stops the others (nor Ctrl-C's way out)
        # the traceback as text, masked: a lost lake's errors repeat its address, password and all
        log.warning("%s.%s failed unexpectedly\n%s", resource.service, name,
                    mask_passwords("".join(traceback.format_exception(error)).rstrip()))
        return Pulled(resource.service, name, seconds=time.monotonic() - started,
                      error=f"unexpected {type(error).__name__}: {mask_passwords(printable(error))}")
    return Pulled(resource.service, name, result.rows, result.requests, time.monotonic() - started,
                  load_id=result.load_id, taken_over=result.resumed)


def pull_service(client: Connection, names: Sequence[str] | None = None, inputs: Mapping[str, Any] | None = None,
                 progress: bool | None = None, log: Callable[[str], None] | None = print) -> list[Pulled]:
    """Pull the named resources of the client's service (all of them when none), one line each.

    The run is resumable (toolkit.storage.runs): run again with the same names and inputs after its
    process died, it does not pull again what it had completed (and still the latest load), and the
    resource it was walking resumes from its checkpoint."""
    done = []
    service, store = client.service.key, client.workspace
    names = list(names or resource_names(service))
    asked = {"run": "pull", "service": service, "base_url": client.client.base_url, "names": names,
             "inputs": {key: (value.tolist() if hasattr(value, "tolist") else value)
                        for key, value in sorted((inputs or {}).items())}}
    with store.run(asked) as run:
        for name in names:
            earlier = run.resumed.get(name)
            rows = store.completed_rows(service, name, earlier)
            if rows is not None:
                outcome = Pulled(service, name, rows, load_id=earlier, resumed=True)
            else:
                outcome = pull_one(client, name, inputs, progress)
                if outcome.load_id and not outcome.error:
                    run.done(name, outcome.load_id)
            if log:
                log(outcome.line())
            done.append(outcome)
    return done
