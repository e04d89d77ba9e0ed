"""A clean sandbox answers exactly what the catalog declares: no drift on any resource.

The sandbox is our reading of the services; drift detection (toolkit.pull.drift) compares answers with the
catalog's columns. If the two disagree on a clean sandbox, every analyst gets warnings for answers
that are as expected, and `contract="freeze"` refuses them. So every resource of the catalog is
pulled frozen from a clean sandbox, then again after clock steps (statuses move; a status the table
already held is no drift), and `ws.drift()` must stay empty.
"""
import pytest
from test_fetch import connect, filters_for

import toolkit
from toolkit import Workspace, catalog
from toolkit.errors import ContractError

RESOURCES = sorted(catalog.RESOURCES.values(), key=lambda r: (r.service, r.name))


def pull_all(ws: Workspace, box, clients: dict) -> list[str]:
    """Every resource pulled frozen; what was refused, as text naming the resource and the drift."""
    refused = []
    for resource in RESOURCES:
        client = clients.setdefault(resource.service, connect(ws, box, resource.service))
        try:
            client.pull(resource.name, progress=False, contract="freeze",
                        **filters_for(box, resource.service, resource.name))
        except ContractError as error:
            refused.append(f"{resource.service}.{resource.name}: {error}")
    return refused


@pytest.fixture(scope="module")
def clean():
    with toolkit.sandbox.start(seed=0, scale=1, enforce_limits=False) as box, Workspace() as ws:
        yield box, ws, {}


def test_a_clean_sandbox_shows_no_drift(clean):
    box, ws, clients = clean
    assert pull_all(ws, box, clients) == []
    assert ws.drift().empty, ws.drift().to_string()


@pytest.mark.parametrize("step", [1, 2, 3])
def test_clock_steps_show_no_drift(clean, step):
    """Pulled again an hour later: targets and submissions move on, imports finish; the values they
    move to are values the catalog and the sandbox share, held by an earlier load or not."""
    box, ws, clients = clean
    box.advance(hours=1)
    assert pull_all(ws, box, clients) == []
    assert ws.drift().empty, ws.drift().to_string()


@pytest.mark.parametrize("asked", [False, True])
def test_asset_boards_custom_fields_come_when_asked_for_and_their_absence_is_no_drift(clean, asked):
    """customFields is an optional column: sent only with include_custom_fields, absent otherwise."""
    box, ws, clients = clean
    client = clients.setdefault("asset_library", connect(ws, box, "asset_library"))
    filters = filters_for(box, "asset_library", "asset_boards")
    result = client.pull("asset_boards", progress=False, contract="freeze", include_custom_fields=asked,
                         **filters)
    assert result.rows and ws.drift(load_id=result.load_id).empty
    held = ws.sql(f"select custom_fields, extra from {result.table}").fetchall()
    assert all(extra is None for _, extra in held)                          # declared: not in extra
    assert any(fields is not None for fields, _ in held) == asked
