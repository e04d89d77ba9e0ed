"""Forms against the sandbox: one fresh sandbox per service per test module, a workspace, a client.

`env(service)` starts (once per module) a sandbox serving only that service, with an in-memory
workspace and a client connected through it; `own_env(service)` does the same for one test alone,
for a write whose records another test may have changed or deleted; `real_params(env, action)` is
the action's catalog example with the sandbox's own ids put in, so a filled form names records that
exist.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import toolkit as tk
from toolkit.catalog.spec import Action
from toolkit.http.session import RateBudget, Transport
from toolkit.sandbox import available


@dataclass
class Env:
    box: Any
    ws: Any
    client: Any

    def requests(self) -> int:
        return self.box.stats()["requests"]


def _start(service: str) -> Env:
    box = tk.sandbox.start(emulators={service: available()[service]}, enforce_limits=False)
    ws = tk.Workspace()
    client = ws.connect(service, **box.credentials(service),     # the sandbox runs without limits here
                        transport=Transport(budget=RateBudget(None, None)))
    return Env(box, ws, client)


def _environments():
    made: dict[str, Env] = {}

    def get(service: str) -> Env:
        if service not in made:
            made[service] = _start(service)
        return made[service]

    yield get
    for found in made.values():
        found.ws.close()
        found.box.stop()


@pytest.fixture(scope="module")
def env():
    yield from _environments()


@pytest.fixture
def own_env():
    yield from _environments()


@pytest.fixture(scope="module")
def real_params():
    return _real_params


def _real_params(env: Env, entry: Action) -> dict[str, Any]:
    """The example params of an action with the sandbox's ids in place of the catalog's made-up ones."""
    ids = env.box.examples(entry.service)
    params = dict(entry.example)
    for param in entry.params:
        key = param.name
        if entry.service == "audience_platform":
            if key == "property_id" and "/schemas/" in entry.path:
                key = "schema_property_id"
            elif key == "definition_id" and "/profile" in entry.path:
                key = "profile_definition_id"
            elif key == "audience_id" and "/ext/analytics" not in entry.path:
                params[param.name] = ids["audience_ids"][0]
                continue
        if key in ids and (param.name in params or param.required):
            params[param.name] = ids[key]
    params.update(ids.get("overrides", {}).get(entry.id, {}))
    return params
