"""start(drift=...): list answers drift on the wire exactly as `box.drift` says (plain requests, a
drifting sandbox beside one of the same seed that does not drift); drift off sends what it always
sent; the same seed drifts the same way; writes and single records never drift; stats() counts
requests by HTTP method."""
from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit import catalog
from toolkit.catalog.spec import Cursor, Offset, Resource
from toolkit.sandbox.asset_library.service import AssetLibrary
from toolkit.sandbox.drifting import KINDS, DriftPlan
from toolkit.sandbox.exchange import Response
from toolkit.sandbox.routing import version_prefix

SEED = 5
TARGETS = [("asset_library", "assets"), ("audience_platform", "notifications"), ("translation", "targets")]


class Raw:
    """Plain requests to one sandbox, signed in to every service it serves."""

    def __init__(self, box: sandbox.Sandbox) -> None:
        self.box = box
        self.http = requests.Session()
        self.http.trust_env = False
        self.headers = {service: self._sign_in(service) for service in box.services}

    def _sign_in(self, service: str) -> dict[str, str]:
        creds = self.box.credentials(service)
        if service == "asset_library":
            return {"x-api-key": creds["api_key"], "x-air-workspace-id": creds["workspace_id"]}
        if service == "translation":
            answer = self.http.post(creds["base_url"] + "/oauth/token", timeout=10,
                                    data={"grant_type": "password", "username": creds["username"],
                                          "password": creds["password"]},
                                    auth=(creds["client_id"], creds["client_secret"]))
            return {"Authorization": f"Bearer {answer.json()['access_token']}"}
        return {"Authorization": f"Bearer {creds['token']}"}

    def send(self, method: str, action_id: str, query: dict[str, Any] | None = None,
             **kwargs: Any) -> requests.Response:
        """One request to an action, its path and required query params filled from the examples."""
        action = catalog.ACTIONS[action_id]
        service = action.id.split(".")[0]
        examples = self.box.examples(service)
        path = action.path
        for name in re.findall(r"{(\w+)}", path):
            value = examples.get(name, (examples.get(name + "s") or [None])[0])
            path = path.replace("{" + name + "}", str(value))
        params = {p.wire: examples.get(p.name, p.example) for p in action.params
                  if p.where == "query" and p.required}
        params.update(query or {})
        url = self.box.url(service) + version_prefix(catalog.SERVICES[service], "") + path
        return self.http.request(method, url, params=params, headers=self.headers[service], timeout=30,
                                 **kwargs)

    def get(self, action_id: str, **query: Any) -> requests.Response:
        answer = self.send("GET", action_id, query)
        assert answer.status_code == 200, f"{action_id}: {answer.status_code} {answer.text[:300]}"
        return answer


def list_resources() -> list[Resource]:
    """The resources whose answers may drift: a GET answering a list."""
    return [r for r in catalog.RESOURCES.values()
            if catalog.ACTIONS[r.action].method == "GET" and catalog.ACTIONS[r.action].response in ("page", "list")]


def records(resource: Resource, answer: requests.Response) -> list[dict[str, Any]]:
    body = answer.json()
    if isinstance(body, list):
        return body
    style = catalog.ACTIONS[resource.action].paging or catalog.SERVICES[resource.service].paging
    return body[style.items]


def at(record: dict[str, Any], path: tuple[str, ...]) -> Any:
    """(the dict holding the path's leaf, or None when a parent is not an object)."""
    node: Any = record
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def column(resource: Resource, name: str):
    return next(c for c in resource.columns if c.name == name)


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[sandbox.Sandbox, Raw, Raw]]:
    """(the drifting box, requests to it, requests to a box of the same seed that does not drift)."""
    on, off = (sandbox.start(seed=SEED, drift=True, enforce_limits=False),
               sandbox.start(seed=SEED, enforce_limits=False))
    try:
        yield on, Raw(on), Raw(off)
    finally:
        on.stop()
        off.stop()


def test_drift_true_is_every_kind_on_every_service_and_the_check_s_targets(pair):
    box, _, _ = pair
    kinds = {service: {d.kind for d in box.drift if d.service == service} for service in box.services}
    for service, seen in kinds.items():
        # media review's one list resource, its teams, declares no list column to send as null
        assert seen == set(KINDS) - ({"null_for_list"} if service == "media_review" else set()), service
    for service, name in TARGETS:
        drifted = {d.kind for d in box.drift if (d.service, d.resource) == (service, name)}
        assert {"extra_field", "renamed_field", "missing_field", "unknown_status", "envelope_key"} <= drifted
    for drift in box.drift:
        resource = catalog.RESOURCES[(drift.service, drift.resource)]
        assert drift.field not in resource.key, drift


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_shows_on_the_wire_as_declared(pair, kind):
    box, on, off = pair
    drifts = [d for d in box.drift if d.kind == kind]
    assert drifts
    for drift in drifts:
        resource = catalog.RESOURCES[(drift.service, drift.resource)]
        was, now = off.get(resource.action), on.get(resource.action)
        if kind == "envelope_key":
            check_envelope(drift, was, now)
            continue
        before, after = records(resource, was), records(resource, now)
        assert before and len(after) == len(before), drift
        for old, new in zip(before, after, strict=True):
            for key in resource.key:       # rows stay identifiable
                path = column(resource, key).path
                if (holder := at(old, path)) is not None and path[-1] in holder:
                    assert at(new, path)[path[-1]] == holder[path[-1]], drift
        extras = {d.field for d in box.drift if d.resource == drift.resource and d.kind == "extra_field"
                  and d.service == drift.service}
        CHECKS[kind](drift, resource, before, after, extras)


def check_extra(drift, resource, before, after, extras):
    assert all(drift.field not in old for old in before), drift
    values = {new[drift.field] for new in after}
    assert len(values) == 1 and isinstance(values.pop(), str), drift


def check_renamed(drift, resource, before, after, extras):
    path = column(resource, drift.field).path
    moved = 0
    for old, new in zip(before, after, strict=True):
        was, now = at(old, path), at(new, path)
        if was is None or path[-1] not in was:
            continue
        assert path[-1] not in now, drift
        added = set(now) - set(was) - (extras if len(path) == 1 else set())
        assert len(added) == 1 and now[added.pop()] == was[path[-1]], drift
        moved += 1
    assert moved, f"{drift}: no record sends {'.'.join(path)} even without drift"


def check_missing(drift, resource, before, after, extras):
    path = column(resource, drift.field).path
    assert any((h := at(old, path)) is not None and path[-1] in h for old in before), drift
    assert all((h := at(new, path)) is None or path[-1] not in h for new in after), drift


def check_number(drift, resource, before, after, extras):
    path = column(resource, drift.field).path
    numbers = 0
    for old, new in zip(before, after, strict=True):
        if (was := at(old, path)) is None:
            continue
        value = was.get(path[-1])
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert at(new, path)[path[-1]] == str(value), drift
            numbers += 1
        else:
            assert at(new, path).get(path[-1]) == value, drift
    assert numbers, f"{drift}: no record sends a number at {'.'.join(path)} even without drift"


def check_null(drift, resource, before, after, extras):
    path = column(resource, drift.field).path
    assert any(isinstance((at(old, path) or {}).get(path[-1]), list) for old in before), drift
    assert all(at(new, path)[path[-1]] is None for new in after if at(new, path) is not None), drift


def check_unknown(drift, resource, before, after, extras):
    path = column(resource, drift.field).path
    seen = {(at(old, path) or {}).get(path[-1]) for old in before}
    sent = {at(new, path)[path[-1]] for new in after if at(new, path) is not None}
    assert len(sent) == 1 and not sent & seen, drift


CHECKS = {"extra_field": check_extra, "renamed_field": check_renamed, "missing_field": check_missing,
          "number_as_string": check_number, "null_for_list": check_null, "unknown_status": check_unknown}


def check_envelope(drift, was: requests.Response, now: requests.Response) -> None:
    """The count moved to a new key with its value, one more undeclared key, nothing else changed."""
    old, new = was.json(), now.json()
    if isinstance(old, dict):
        assert drift.field in old and drift.field not in new, drift
        moved = {k for k in new if k not in old and new[k] == old[drift.field]}
        added = set(new) - set(old) - moved
        assert len(moved) == 1 and len(added) == 1, drift
        assert {k: v for k, v in new.items() if k in old and k != "data" and k != "list"} == \
            {k: v for k, v in old.items() if k != drift.field and k != "data" and k != "list"}, drift
    else:
        # (the records drift too, so the length differs; the links name each sandbox's own port)
        names = {k.lower(): v for k, v in was.headers.items() if k.lower() not in ("link", "content-length")}
        after = {k.lower(): v for k, v in now.headers.items() if k.lower() not in ("link", "content-length")}
        assert drift.field in names and drift.field not in after, drift
        moved = {k for k in after if k not in names and after[k] == names[drift.field]}
        added = set(after) - set(names) - moved
        assert len(moved) == 1 and len(added) == 1, drift
        assert {k: v for k, v in after.items() if k in names} == \
            {k: v for k, v in names.items() if k != drift.field}, drift


def walk(raw: Raw, resource: Resource) -> list[Any]:
    """Every key of a resource in pages of 50, reading only what paging needs (no count)."""
    style = catalog.ACTIONS[resource.action].paging or catalog.SERVICES[resource.service].paging
    key = column(resource, resource.key[0]).path[-1]
    keys: list[Any] = []
    query: dict[str, Any] = {style.limit: 50} if isinstance(style, Cursor) else {style.size: 50}
    while True:
        answer = raw.get(resource.action, **query)
        rows = records(resource, answer)
        keys += [row[key] for row in rows]
        if isinstance(style, Cursor):
            pagination = answer.json()["pagination"]
            if not pagination["hasMore"]:
                return keys
            query[style.cursor] = pagination["cursor"]
        elif len(rows) < 50:
            return keys
        elif isinstance(style, Offset):
            query[style.offset] = len(keys)
        else:
            query[style.page] = int(query.get(style.page, style.first)) + 1


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: ".".join(t))
def test_a_client_can_still_page_every_style(pair, target):
    _, on, off = pair
    resource = catalog.RESOURCES[target]
    assert walk(on, resource) == walk(off, resource) and len(walk(off, resource)) > 50


def test_single_records_and_errors_do_not_drift(pair):
    _, on, off = pair
    for action in ("asset_library.get_asset", "translation.get_submission", "audience_platform.get_audience"):
        assert on.get(action).content == off.get(action).content, action
    refused = [raw.send("GET", "asset_library.list_roles", {"type": "nobody"}) for raw in (on, off)]
    assert refused[0].status_code == 400 and refused[0].content == refused[1].content


def test_writes_do_not_drift():
    boxes = [sandbox.start(seed=SEED, drift=drift, emulators={"asset_library": AssetLibrary})
             for drift in (True, None)]
    try:
        made = [Raw(box).send("POST", "asset_library.create_tag", json={"name": "drift-probe"}) for box in boxes]
        assert made[0].status_code == 201 and made[0].content == made[1].content, made[0].text[:300]
    finally:
        for box in boxes:
            box.stop()


def first_pages(box: sandbox.Sandbox) -> dict[str, bytes]:
    raw = Raw(box)
    return {r.action: raw.get(r.action).content for r in list_resources()}


def test_drift_off_sends_what_it_always_sent(pair):
    drifting, _, off = pair
    plain = first_pages(off.box)
    markers = {d.field for d in drifting.drift if d.kind == "extra_field"}
    markers |= {re.search(r"'(sbx-\w+)'|: (sbx-\w+)", d.detail).group(1) or "" for d in drifting.drift
                if "sbx-" in d.detail} - {""}
    assert all(marker.encode() not in body for body in plain.values() for marker in markers)
    for drift in (False, "", []):
        box = sandbox.start(seed=SEED, drift=drift)
        try:
            assert box.drift == [] and box._app.drift is None     # no work at all on an answer
            assert first_pages(box) == plain, drift
        finally:
            box.stop()


def test_the_same_seed_drifts_the_same_way():
    boxes = [sandbox.start(seed=seed, drift=True, emulators={"asset_library": AssetLibrary},
                           enforce_limits=False) for seed in (SEED, SEED, SEED + 1)]
    try:
        pages = [Raw(box).get("asset_library.list_assets").content for box in boxes]
        assert boxes[0].drift == boxes[1].drift and pages[0] == pages[1]
        # drifting again what was sent: the emulator's own records were copied, never changed
        assert Raw(boxes[0]).get("asset_library.list_assets").content == pages[0]
        assert boxes[2].drift != boxes[0].drift
        # the seed names the new fields and values; which column drifts is the catalog's choice
        assert [(d.kind, d.field) for d in boxes[2].drift if d.kind != "extra_field"] == \
            [(d.kind, d.field) for d in boxes[0].drift if d.kind != "extra_field"]
    finally:
        for box in boxes:
            box.stop()


def test_kinds_by_name():
    for asked in ("extra_field, number_as_string", ["number_as_string", "extra_field"]):
        box = sandbox.start(seed=SEED, drift=asked, emulators={"asset_library": AssetLibrary})
        try:
            assert {d.kind for d in box.drift} == {"extra_field", "number_as_string"}
            assert {d.service for d in box.drift} == {"asset_library"}
        finally:
            box.stop()
    with pytest.raises(ValueError, match="renamed_field.*'rename'"):
        sandbox.start(drift="rename")


def test_stats_count_requests_by_method(toy):
    box, session, base = toy
    session.get(f"{base}/api/v2/things/t0001")
    session.get(f"{base}/api/v2/things", params={"limit": 2})
    session.post(f"{base}/api/v2/things", json={"id": "new"})
    session.patch(f"{base}/api/v2/things/t0002", json={"n": 3},
                  headers={"Content-Type": "application/merge-patch+json"})
    session.delete(f"{base}/api/v2/things/t0003")
    session.get(f"{base}/api/v2/nowhere")                                   # 404, still a GET sent
    requests.post(f"{base}/api/v2/things", json={"id": "x"}, timeout=5)     # 401 before its body is read
    stats = box.stats()
    assert stats["by_method"] == {"GET": 3, "POST": 2, "PATCH": 1, "DELETE": 1}
    assert sum(stats["by_method"].values()) == stats["requests"]


def test_the_emulator_s_records_are_never_changed():
    plan = DriftPlan(True, SEED, {"asset_library": ["asset_library.list_assets"]})
    record = {"id": "a1", "coverVersion": {"id": "v1", "fileName": "cut", "ext": "mov", "size": 3, "tags": [],
                                           "type": "video", "urls": {"thumbnail": "t"}}}
    kept = copy.deepcopy(record)
    body = {"data": [record], "pagination": {"hasMore": False, "cursor": None}, "total": 1}
    sent = plan.apply("asset_library.list_assets", Response(200, body))
    assert record == kept and body["total"] == 1 and body["data"][0] is record
    assert sent.body["data"][0]["coverVersion"]["size"] == "3" and "total" not in sent.body
    assert plan.apply("asset_library.list_boards", Response(200, body)).body is body      # not planned
    assert plan.apply("asset_library.list_assets", Response(404, body)).body is body      # an error
