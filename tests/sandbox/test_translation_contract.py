"""The translation contract: every catalog action answers its example call with a 2xx and the shape
its entry declares. The call is built from the catalog alone (base URL + path with examples()
substituted, query and body by wire names); the sandbox's examples() replace the catalog's example
values wherever it names the param. Destructive actions each get a sandbox of their own, so a cancel
or a delete does not take away what a later example call needs; an action of one mode only is called
in a sandbox of that mode, and the other mode must refuse it with a 400."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

import toolkit.sandbox
from toolkit.catalog import translation as catalog
from toolkit.catalog.spec import Action
from toolkit.sandbox.translation.service import Translation

ACTIONS = [a for a in catalog.ACTIONS if not a.destructive]
DESTRUCTIVE = [a for a in catalog.ACTIONS if a.destructive]


def wire_value(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return value


def request_for(action: Action, creds: dict[str, str], examples: dict[str, Any]) -> dict[str, Any]:
    """requests.request keyword arguments for the action's example call."""
    values = {p.name: examples.get(p.name, p.example) for p in action.params if p.example is not None}
    values.update((examples.get("overrides") or {}).get(action.id, {}))
    if action.id == "translation.create_token":
        values.update(username=creds["username"], password=creds["password"])
    path, query, body, form, files = action.path, {}, {}, {}, {}
    for param in action.params:
        if param.name not in values or param.where == "local":
            continue
        value = values[param.name]
        if param.where == "path":
            path = path.replace("{" + param.name + "}", str(value))
        elif param.where == "query":
            query[param.wire] = wire_value(value)
        elif param.where == "file":
            files[param.wire] = value
        elif param.where == "form" or action.body == "form":
            form[param.wire] = wire_value(value)
        else:
            body[param.wire] = value
    kwargs: dict[str, Any] = {"method": action.method, "url": creds["base_url"] + path, "params": query,
                              "timeout": 10}
    if files or action.body == "multipart":
        kwargs.update(files=files, data=form)
    elif action.body == "form":
        kwargs["data"] = form
    elif action.body == "json":
        kwargs["json"] = [body] if action.body_in_list else body
    return kwargs


class Caller:
    def __init__(self, box: toolkit.sandbox.Sandbox) -> None:
        self.box = box
        self.creds = box.credentials("translation")
        self.http = requests.Session()
        self.http.trust_env = False
        token = self.http.post(self.creds["base_url"] + "/oauth/token", timeout=10,
                               auth=(self.creds["client_id"], self.creds["client_secret"]),
                               data={"grant_type": "password", "username": self.creds["username"],
                                     "password": self.creds["password"]}).json()
        self.bearer = {"Authorization": f"Bearer {token['access_token']}"}

    def call(self, action: Action) -> requests.Response:
        kwargs = request_for(action, self.creds, self.box.examples("translation"))
        if action.id == "translation.create_token":
            kwargs["auth"] = (self.creds["client_id"], self.creds["client_secret"])
        else:
            kwargs["headers"] = self.bearer
        return self.http.request(**kwargs)


def check_shape(action: Action, answer: requests.Response) -> None:
    assert 200 <= answer.status_code < 300, f"{action.id}: {answer.status_code} {answer.text[:300]}"
    kind = action.response
    if kind == "record":
        assert isinstance(answer.json(), dict), action.id
    elif kind in ("list", "page"):
        assert isinstance(answer.json(), list), action.id
        if kind == "page":
            assert {"total-size", "page-size"} <= set(answer.headers), action.id
    elif kind == "bytes":
        assert answer.content and "json" not in answer.headers.get("content-type", ""), action.id
    elif kind == "none":
        assert not answer.content, action.id
    elif kind == "text":
        assert answer.text.strip(), action.id


@pytest.fixture(scope="module")
def callers() -> Iterator[dict[str, Caller]]:
    """A client-mode and a hosted-mode sandbox: each action is called in a mode that offers it."""
    with (toolkit.sandbox.start(emulators={"translation": Translation}) as client,
          toolkit.sandbox.start(emulators={"translation": Translation}, mode="hosted") as hosted):
        yield {"client": Caller(client), "hosted": Caller(hosted)}


def test_the_catalog_is_covered(callers: dict[str, Caller]) -> None:
    assert len(catalog.ACTIONS) == len(ACTIONS) + len(DESTRUCTIVE) >= 82
    emulator = callers["client"].box.emulator("translation")
    parts = (emulator, *emulator.parts)  # type: ignore[attr-defined]
    missing = [a.id for a in catalog.ACTIONS if not any(hasattr(p, "do_" + a.name) for p in parts)]
    assert not missing
    path_params = {p.name for a in catalog.ACTIONS for p in a.params if p.where == "path"}
    assert path_params <= set(callers["client"].box.examples("translation"))


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.name)
def test_example_call(callers: dict[str, Caller], action: Action) -> None:
    check_shape(action, callers[action.modes[0]].call(action))


@pytest.mark.parametrize("action", [a for a in catalog.ACTIONS if len(a.modes) == 1], ids=lambda a: a.name)
def test_the_other_mode_refuses(callers: dict[str, Caller], action: Action) -> None:
    other = "hosted" if action.modes == ("client",) else "client"
    answer = callers[other].call(action)
    assert answer.status_code == 400 and answer.json()["messages"], action.id


@pytest.mark.parametrize("action", DESTRUCTIVE, ids=lambda a: a.name)
def test_destructive_example_call(action: Action) -> None:
    with toolkit.sandbox.start(emulators={"translation": Translation}) as box:
        check_shape(action, Caller(box).call(action))
