"""A pull pauses the garbage collector, so whatever it leaves in reference cycles stays until it ends:
a cycle made per page or per fan-out parent grows with the pull (a recursive closure made per typed
page held some 150 MB at the end of a fan-out over 600,000 parents). These tests count what a
collection finds after pulls of different sizes."""
from __future__ import annotations

import gc

import pytest

import toolkit
from toolkit import Workspace
from toolkit.connection.connection import Connection
from toolkit.http.session import RateBudget
from toolkit.sandbox import available


@pytest.fixture(scope="module")
def box():
    emulators = available()
    with toolkit.sandbox.start(seed=0, scale=2, enforce_limits=False,
                               emulators={"audience_platform": emulators["audience_platform"],
                                          "asset_library": emulators["asset_library"]}) as sandbox:
        yield sandbox


def _garbage_after(pull) -> int:
    """Objects in reference cycles that `pull()` left, the collector off meanwhile as a pull keeps it."""
    gc.collect()
    gc.disable()
    try:
        pull()
        return gc.collect()
    finally:
        gc.enable()


def _client(ws: Workspace, box, service: str) -> Connection:
    client = ws.connect(service, **box.credentials(service))
    client.transport.budget = RateBudget(None, None)
    return client


def test_a_fan_out_leaves_no_garbage_per_parent(box):
    ids = [box.emulator("audience_platform").state.population.id(i) for i in range(320)]
    with Workspace() as ws:
        client = _client(ws, box, "audience_platform")
        client.pull("memberships", profile_ids=ids[:10], progress=False)       # imports and caches warmed
        few = _garbage_after(lambda: client.pull("memberships", profile_ids=ids[:40], progress=False))
        many = _garbage_after(lambda: client.pull("memberships", profile_ids=ids, progress=False))
    assert many - few < 100, f"{many - few} more objects in cycles for 280 more parents"

