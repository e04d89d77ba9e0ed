"""The sandbox contract: every row of the catalog, called through the client with its example params,
answers with the documented shape. Destructive actions run on a sandbox of their own, so that what they
remove does not break the example ids of the others."""
from __future__ import annotations

import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.cassettes.calls import example_params

ROWS = [(a, v) for a in catalog.ACTIONS.values() for v in a.versions]
SHARED: dict[tuple[str, str], tk.sandbox.Sandbox] = {}


def _mode(action) -> str:
    return "hosted" if action.modes == ("hosted",) else "client"


@pytest.fixture(scope="module", autouse=True)
def _stop_shared():
    yield
    for box in SHARED.values():
        box.stop()
    SHARED.clear()


def _sandbox(action, version):
    """A sandbox for the action: shared per service, mode and version (v1 and v2 create the same
    records), or a fresh one for destructive actions."""
    options = {"mode": _mode(action), "enforce_limits": False,
               "emulators": {action.service: tk.sandbox.available()[action.service]}}
    if action.destructive:
        return tk.sandbox.start(**options), True
    key = (action.service, options["mode"], version)
    if key not in SHARED:
        SHARED[key] = tk.sandbox.start(**options)
    return SHARED[key], False


def _check_shape(action, result) -> None:
    kind = action.response
    if kind == "record":
        assert isinstance(result, dict), f"a record, got {type(result).__name__}"
    elif kind in ("list", "page"):
        rows = action.paging.rows(result) if action.paging else result
        assert isinstance(rows, list), f"rows, got {type(result).__name__}"
        assert all(isinstance(row, dict | str | int) for row in rows)
    elif kind == "bytes":
        assert isinstance(result, bytes) and result, "bytes"
    elif kind == "none":
        assert result is None
    elif kind == "boolean":
        assert isinstance(result, bool)
    elif kind == "text":
        assert isinstance(result, str)


@pytest.mark.parametrize(("action", "version"), ROWS, ids=[f"{a.id}{'@' + v if v else ''}" for a, v in ROWS])
def test_every_action_answers_its_example_with_the_documented_shape(action, version):
    box, own = _sandbox(action, version)
    try:
        credentials = box.credentials(action.service)
        if action.service == "translation":
            credentials = {**credentials, "mode": _mode(action)}
        client = tk.connect(action.service, **credentials)
        params = example_params(action, version, box.examples(action.service), box.credentials(action.service))
        before = box.stats()["requests"]
        result = client.call(action, version=version or None, **params)
        assert box.stats()["requests"] > before
        _check_shape(action, result)
    finally:
        if own:
            box.stop()
