"""A toy service for the sandbox core's tests: one action per paging style, routing corner cases,
generic store actions, a signed URL, and a stand-in with the asset library's key for its rate limit.

    def test_x(launch): box = launch(faults="500#2"); ...
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit.catalog.spec import Action, Cursor, Offset, PageNumber, Param, Service, Unpaged
from toolkit.sandbox.clock import iso
from toolkit.sandbox.emulator import Emulator, Extra, Response
from toolkit.sandbox.memory import Bind

SERVICE = Service("toy", "Toy", "bearer", ("token",), ("token",), "/toy", "message",
                  version_prefix="/api/{version}", default_version="v2")
PAGE = (Param("limit", "query", "integer"), Param("cursor", "query"))
ACTIONS = (
    Action("toy.list_things", "T", "GET", "/things", "", params=PAGE, versions=("v1", "v2"),
           response="page", paging=Cursor()),
    Action("toy.get_thing", "T", "GET", "/things/{thing_id}", ""),
    Action("toy.get_special", "T", "GET", "/things/special", ""),
    Action("toy.create_thing", "T", "POST", "/things", "", body="json", status=201),
    Action("toy.update_thing", "T", "PATCH", "/things/{thing_id}", "", body="merge_patch"),
    Action("toy.replace_thing", "T", "PUT", "/things/{thing_id}", "", body="json", status=204),
    Action("toy.delete_thing", "T", "DELETE", "/things/{thing_id}", "", status=204),
    Action("toy.list_children", "T", "GET", "/things/{thing_id}/children", "", response="list",
           paging=Unpaged("data")),
    Action("toy.list_offset", "T", "GET", "/offset", "", response="page", paging=Offset(cap=1000)),
    Action("toy.list_numbered", "T", "GET", "/numbered", "", response="page", paging=PageNumber()),
    Action("toy.list_bare", "T", "GET", "/bare", "", response="list", paging=Unpaged()),
    Action("toy.list_slash", "T", "GET", "/slash/", "", response="list"),
    Action("toy.list_noslash", "T", "GET", "/slash", "", response="list"),
    Action("toy.get_info", "T", "GET", "/info", "", versions=("v1", "v2"), version_paths={"v1": "/about"}),
    Action("toy.upload", "T", "POST", "/upload", "", body="multipart"),
    Action("toy.get_now", "T", "GET", "/now", ""),
    Action("toy.get_missing", "T", "GET", "/missing", ""),
)


class Toy(Emulator):
    catalog = SimpleNamespace(SERVICE=SERVICE, ACTIONS=ACTIONS)  # type: ignore[assignment]
    collections = {
        "toy.list_things": "things", "toy.get_thing": "things", "toy.create_thing": "things",
        "toy.update_thing": "things", "toy.replace_thing": "things", "toy.delete_thing": "things",
        "toy.list_children": Bind("children", parents={"thing_id": "thingId"}),
        "toy.list_offset": "things", "toy.list_numbered": "things", "toy.list_bare": "children",
    }

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.advanced: list[Any] = []
        self.store["things"].extend([{"id": f"t{n:04d}", "n": n, "tags": {"a": 1}} for n in range(1200)])
        self.store["children"].extend([{"id": f"c{n}", "thingId": f"t{n % 3:04d}"} for n in range(9)])
        self.handlers.update({
            "toy.get_special": lambda request: {"special": True},
            "toy.list_slash": lambda request: ["with slash"],
            "toy.list_noslash": lambda request: ["without slash"],
            "toy.get_info": lambda request: {"version": request.version},
            "toy.upload": self._upload,
            "toy.get_now": lambda request: {"now": iso(self.clock.now())},
        })
        self.extra_routes.append(Extra("PUT", r"/signed/(?P<key>\w+)", self._signed))

    def _upload(self, request):
        return [{"name": p.name, "filename": p.filename, "size": len(p.data), "data": p.data.hex()}
                for p in request.parts()]

    def _signed(self, request):
        return Response(200, None, {"ETag": f'"{request.params["key"]}-{len(request.body)}"'})

    def on_advance(self, now):
        self.advanced.append(now)


LIMITED = Service("asset_library", "Stand-in", "bearer", ("token",), ("token",), "/v1", "message")


class Limited(Emulator):
    """Wears the asset library's key, so the server applies its limit of 15/s and 10 at once."""
    catalog = SimpleNamespace(SERVICE=LIMITED, ACTIONS=(Action("asset_library.ping", "P", "GET", "/ping", ""),))

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.handlers["asset_library.ping"] = lambda request: {"pong": True}


@pytest.fixture
def launch():
    """`launch(**start_kwargs)`: a sandbox of the toy (and the limited stand-in), stopped afterwards."""
    boxes = []

    def start(**kwargs):
        kwargs.setdefault("emulators", {"toy": Toy, "asset_library": Limited})
        box = sandbox.start(**kwargs)
        boxes.append(box)
        return box

    yield start
    for box in boxes:
        box.stop()


@pytest.fixture
def toy(launch):
    """(sandbox, requests.Session with the toy's token, base URL)."""
    box = launch()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('toy')['token']}"
    yield box, session, box.url("toy")
    session.close()
