"""The asset library emulator over real HTTP: wire shapes, lifecycles and the catalog contract."""
from __future__ import annotations

import hashlib
import re

import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit.catalog import asset_library as catalog
from toolkit.sandbox.asset_library.service import AssetLibrary
from toolkit.sandbox.clock import Clock

SERVICE = "asset_library"
PAGE_KEYS = {"data", "pagination", "total"}
# the public types' version (docs/public-specs.md): uploadedAt from the OpenAPI types, summary from the SDK
VERSION_KEYS = {"id", "fileName", "ext", "title", "description", "summary", "type", "size", "createdAt",
                "uploadedAt", "updatedAt", "fileCreatedAt", "width", "height", "duration", "tags", "smartTags",
                "urls"}
BOARD_KEYS = {"id", "parentBoardId", "title", "description", "createdAt", "updatedAt", "customFields"}
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
MIB = 1024 * 1024


def start(**options):
    return sandbox.start(emulators={SERVICE: AssetLibrary}, enforce_limits=False, **options)


class Api:
    """requests against one sandbox with the two key headers set."""

    def __init__(self, box) -> None:
        self.box = box
        creds = box.credentials(SERVICE)
        self.base = creds["base_url"]
        self.session = requests.Session()
        self.session.headers.update({"x-api-key": creds["api_key"], "x-air-workspace-id": creds["workspace_id"]})

    def __call__(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.base + path, timeout=30, **kwargs)

    def ok(self, method: str, path: str, status: int | None = None, **kwargs):
        answer = self(method, path, **kwargs)
        assert answer.status_code < 300, (method, path, answer.status_code, answer.text)
        if status is not None:
            assert answer.status_code == status, (method, path, answer.status_code)
        return answer.json() if answer.content else None

    def fails(self, status: int, method: str, path: str, **kwargs) -> str:
        answer = self(method, path, **kwargs)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text)
        body = answer.json()
        assert isinstance(body.get("message"), str) and body["message"]
        return body["message"]

    def walk(self, path: str, **params) -> list[dict]:
        """Every row of a cursor list, repeating the filters on each page."""
        rows, cursor = [], None
        while True:
            page = self.ok("GET", path, params={**params, **({"cursor": cursor} if cursor else {})})
            rows.extend(page["data"])
            if not page["pagination"]["hasMore"]:
                return rows
            cursor = page["pagination"]["cursor"]

    def upload(self, size: int, **body) -> dict:
        """A small upload, bytes and all: the asset it made."""
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        made = self.ok("POST", "/uploads", 201, json={"fileName": "clip", "ext": "mp4", "size": size,
                                                       "mime": "video/mp4", "recordedAt": "2026-10-01T10:00:00Z",
                                                       **body})
        put = requests.put(made["uploadUrl"], data=data, timeout=10)
        assert put.status_code == 200 and put.headers["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
        return made


@pytest.fixture(scope="module")
def box():
    with start(seed=0) as running:
        yield running


@pytest.fixture(scope="module")
def api(box):
    return Api(box)


@pytest.fixture(scope="module")
def ex(box):
    return box.examples(SERVICE)


# --- the contract: every catalog action answers its example call ----------------------------------

def _order(action) -> int:
    """Deletes last, and deletes of whole records after removals from them."""
    if action.method != "DELETE":
        return 0
    return 2 if action.name in ("delete_asset", "delete_board", "delete_custom_field", "delete_tag") else 1


def test_every_action_answers_its_example():
    with start(seed=0) as running:
        api, examples = Api(running), running.examples(SERVICE)
        for action in sorted(catalog.ACTIONS, key=_order):
            values = dict(action.example)
            for name in values:
                if name in examples:
                    values[name] = examples[name]
            values.update({k: v for k, v in examples["overrides"].get(action.id, {}).items() if k in values})
            params = {p.name: p for p in action.params}
            path = action.path.format(**{n: values[n] for n, p in params.items() if p.where == "path"})
            query = {params[n].wire: ("true" if v is True else v) for n, v in values.items()
                     if params[n].where == "query"}
            body = {params[n].wire: v for n, v in values.items() if params[n].where == "body"}
            answer = api(action.method, path, params=query, json=body if action.body else None)
            assert answer.status_code == action.status, (action.id, answer.status_code, answer.text)
            if action.status == 204:
                assert answer.content == b""
            else:
                assert isinstance(answer.json(), dict), action.id


def test_examples_cover_every_path_param(ex):
    for action in catalog.ACTIONS:
        for param in action.params:
            if param.where == "path":
                assert param.name in ex, (action.id, param.name)


def test_credentials_are_required(box, api):
    base = box.credentials(SERVICE)["base_url"]
    for headers in ({}, {"x-api-key": "nope", "x-air-workspace-id": api.session.headers["x-air-workspace-id"]},
                    {"x-api-key": api.session.headers["x-api-key"]}):
        answer = requests.get(f"{base}/assets", headers=headers, timeout=10)
        assert answer.status_code == 401 and answer.json()["message"]


# --- wire shapes ----------------------------------------------------------------------------------

def test_asset_page_and_records(api, ex):
    page = api.ok("GET", "/assets", params={"limit": 3})
    assert set(page) == PAGE_KEYS and set(page["pagination"]) == {"hasMore", "cursor"}
    assert len(page["data"]) == 3 and page["pagination"]["hasMore"] and page["total"] >= 250
    asset = api.ok("GET", f"/assets/{ex['asset_id']}")
    assert set(asset) == {"id", "coverVersion", "customFields"}
    assert set(asset["coverVersion"]) == VERSION_KEYS
    for field in asset["customFields"]:
        assert set(field) == {"id", "name", "type", "value", "values"}
    version = api.ok("GET", f"/assets/{ex['asset_id']}/versions/{ex['version_id']}")
    # one version's GET adds its file metadata (the OpenAPI types' getAssetVersion); the rest is the cover
    assert {k: v for k, v in version.items() if k != "metadata"} == asset["coverVersion"]
    assert ISO_MS.match(version["createdAt"]) and ISO_MS.match(version["updatedAt"])
    assert all(set(t) == {"id", "name"} for t in version["tags"])
    versions = api.ok("GET", f"/assets/{ex['asset_id']}/versions")
    assert set(versions) == {"data", "total"} and versions["total"] == len(versions["data"]) >= 1
    assert versions["data"][-1]["id"] == ex["version_id"]
    api.fails(404, "GET", "/assets/4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15")
    api.fails(404, "GET", f"/assets/{ex['asset_id']}/versions/4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15")


def test_other_shapes(api, ex):
    board = api.ok("GET", f"/boards/{ex['board_id']}")
    assert set(board) == BOARD_KEYS and board["parentBoardId"] == ex["parent_board_id"]
    boards = api.ok("GET", f"/assets/{ex['asset_id']}/boards")
    assert {b["id"] for b in boards["data"]} == {ex["board_id"], ex["parent_board_id"]}
    assert all("customFields" not in b for b in boards["data"])
    boards = api.ok("GET", f"/assets/{ex['asset_id']}/boards", params={"includeCustomFields": "true"})
    assert all(set(b) == BOARD_KEYS for b in boards["data"])
    guests = api.ok("GET", f"/boards/{ex['board_id']}/guests")
    assert set(guests) == {"data"} and all(set(g) == {"id", "email", "roleId", "boardId"} for g in guests["data"])
    roles = api.ok("GET", "/roles", params={"type": "guest"})
    assert set(roles) == {"data"} and 3 <= len(roles["data"]) <= 4
    assert all(set(r) == {"id", "name", "description", "billable", "type"} and r["type"] == "guest"
               for r in roles["data"])
    fields = api.walk("/customfields")
    assert {f["type"] for f in fields} == set(catalog.CUSTOM_FIELD_TYPES) and len(fields) == 6
    for field in fields:
        assert set(field) == {"id", "name", "description", "type", "values", "createdAt", "updatedAt"}
        assert (field["values"] is None) == (field["type"] in ("plain-text", "date"))
    assert len(api.walk("/tags")) == 25
    assert api.ok("GET", f"/assets/{ex['asset_id']}/versions/{ex['version_id']}/download")["url"].startswith("http")


def test_cursor_paging(api):
    first = api.ok("GET", "/assets", params={"limit": 100})
    everything = api.walk("/assets", limit=100)
    assert len(everything) == first["total"] == len({a["id"] for a in everything})
    assert len(api.walk("/assets", limit=500)) == len(everything)
    for limit in (0, 501, "ten"):
        assert "limit" in api.fails(400, "GET", "/assets", params={"limit": limit})
    api.fails(400, "GET", "/assets", params={"cursor": "not-a-cursor"})
    assert first["pagination"]["cursor"] and not first["pagination"]["cursor"].isdigit()   # opaque
    tagged = api.ok("GET", "/assets", params={"limit": 5, "tag": "lifestyle"})
    after = {"cursor": tagged["pagination"]["cursor"]}
    api.ok("GET", "/assets", params={"limit": 50, "tag": "lifestyle", **after})          # limit may change
    assert "filters" in api.fails(400, "GET", "/assets", params={"limit": 5, **after})  # filters may not


# --- boards -----------------------------------------------------------------------------------------

def test_nested_boards_and_filters(api):
    boards = api.walk("/boards")
    assert 30 <= len(boards) <= 50
    by_id = {b["id"]: b for b in boards}
    depth = {}
    for board in boards:
        node, level = board, 1
        while node["parentBoardId"]:
            node, level = by_id[node["parentBoardId"]], level + 1
        depth[board["id"]] = level
    assert max(depth.values()) == 3
    top = next(b for b in boards if b["parentBoardId"] is None and any(
        depth[c["id"]] == 2 and any(g["parentBoardId"] == c["id"] for g in boards)
        for c in boards if c["parentBoardId"] == b["id"]))
    children = api.walk("/boards", parentBoardId=top["id"])
    assert children and all(c["parentBoardId"] == top["id"] for c in children)
    assert {c["id"] for c in children} == {b["id"] for b in boards if b["parentBoardId"] == top["id"]}
    direct = {a["id"] for a in api.walk("/assets", parentBoardId=top["id"])}
    nested = {a["id"] for a in api.walk("/assets", parentBoardId=top["id"], includeNestedAssets="true")}
    assert direct < nested
    found = api.walk("/boards", name=top["title"][:4].lower())
    assert top["id"] in {b["id"] for b in found}
    api.fails(404, "GET", "/assets", params={"parentBoardId": "4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15"})


def test_board_create_move_and_delete_cascade(api):
    a = api.ok("POST", "/boards", 201, json={"title": "Cascade A", "description": None})
    b = api.ok("POST", "/boards", 201, json={"title": "Cascade B", "parentBoardId": a["id"]})
    c = api.ok("POST", "/boards", 201, json={"title": "Cascade C", "parentBoardId": b["id"]})
    x = api.ok("POST", "/boards", 201, json={"title": "Elsewhere"})
    assert set(a) == BOARD_KEYS and a["parentBoardId"] is None and b["parentBoardId"] == a["id"]
    api.fails(400, "PATCH", f"/boards/{a['id']}", json={"parentBoardId": c["id"]})
    api.fails(400, "POST", "/boards", json={"title": "snake", "parent_board_id": a["id"]})
    api.fails(400, "POST", "/boards", json={"description": "no title"})
    api.fails(404, "POST", "/boards", json={"title": "orphan", "parentBoardId": x["id"][:-4] + "0000"})
    only_a = api.upload(10, parentBoardId=a["id"])["assetId"]
    only_b = api.upload(11, parentBoardId=b["id"])["assetId"]
    only_c = api.upload(12, parentBoardId=c["id"])["assetId"]
    b_and_x = api.upload(13, parentBoardId=b["id"])["assetId"]
    api.ok("POST", f"/boards/{x['id']}/assets", 204, json={"assetIds": [b_and_x]})
    seeded = api.ok("GET", "/assets", params={"limit": 1})["data"][0]["id"]
    api.ok("POST", f"/boards/{a['id']}/assets", 204, json={"assetIds": [seeded]})
    assert {r["id"] for r in api.walk("/assets", parentBoardId=a["id"])} == {only_a, seeded}
    api.ok("DELETE", f"/boards/{a['id']}", 204)
    for board in (a, b, c):
        api.fails(404, "GET", f"/boards/{board['id']}")
    for gone in (only_a, only_b):
        api.fails(404, "GET", f"/assets/{gone}")
    for kept in (only_c, b_and_x, seeded):
        api.ok("GET", f"/assets/{kept}")
    assert [r["id"] for r in api.walk(f"/assets/{b_and_x}/boards")] == [x["id"]]
    assert api.walk(f"/assets/{only_c}/boards") == []
    api.ok("PATCH", f"/boards/{x['id']}", 204, json={"title": "Elsewhere, renamed"})
    assert api.ok("GET", f"/boards/{x['id']}")["title"] == "Elsewhere, renamed"
    api.ok("DELETE", f"/boards/{x['id']}/assets/{b_and_x}", 204)
    api.fails(404, "DELETE", f"/boards/{x['id']}/assets/{b_and_x}")


def test_guests_and_roles(api, ex):
    api.fails(400, "GET", "/roles")
    members = api.ok("GET", "/roles", params={"type": "member"})["data"]
    guest_roles = api.ok("GET", "/roles", params={"type": "guest"})["data"]
    board = ex["board_id"]
    path = f"/boards/{board}/guests"
    api.fails(400, "POST", path, json={"email": "new.guest@example.com", "roleId": members[0]["id"]})
    api.fails(404, "POST", path, json={"email": "new.guest@example.com", "roleId": board})
    api.fails(400, "POST", path, json={"email": "not-an-email", "roleId": guest_roles[0]["id"]})
    guest = api.ok("POST", path, 201, json={"email": "New.Guest@example.com", "roleId": guest_roles[0]["id"]})
    assert guest["boardId"] == board and guest["roleId"] == guest_roles[0]["id"]
    api.fails(409, "POST", path, json={"email": "new.guest@example.com", "roleId": guest_roles[1]["id"]})
    assert [g["id"] for g in api.ok("GET", path, params={"email": "new.guest@example.com"})["data"]] == [guest["id"]]
    api.ok("PATCH", f"{path}/{guest['id']}", 204, json={"roleId": guest_roles[2]["id"]})
    assert api.ok("GET", path, params={"email": "new.guest@example.com"})["data"][0]["roleId"] == guest_roles[2]["id"]
    api.fails(400, "PATCH", f"{path}/{guest['id']}", json={"roleId": members[0]["id"]})
    api.ok("DELETE", f"{path}/{guest['id']}", 204)
    api.fails(404, "DELETE", f"{path}/{guest['id']}")


# --- assets: filters, custom fields, tags --------------------------------------------------------------

def test_tag_filters_all_must_match(api):
    tags = {t["name"]: t["id"] for t in api.walk("/tags")}
    both = api.upload(20, tags=["lifestyle", "print"])["assetId"]
    one = api.upload(21, tags=["lifestyle"])["assetId"]
    found = api.walk("/assets", tag=["lifestyle", "print"], limit=7)
    ids = {a["id"] for a in found}
    assert both in ids and one not in ids and len(found) > 1
    for asset in found[:10]:
        versions = api.ok("GET", f"/assets/{asset['id']}/versions")["data"]
        names = {t["name"] for v in versions for t in v["tags"]}
        assert {"lifestyle", "print"} <= names
    by_id = {a["id"] for a in api.walk("/assets", tag=[tags["lifestyle"], tags["print"]])}
    assert by_id == ids
    assert api.walk("/assets", tag=["no-such-tag"]) == []


def test_search_created_and_custom_field_filters(api):
    found = api.walk("/assets", search="BEACH")
    assert found and all("beach" in f"{a['coverVersion']['fileName']} {a['coverVersion']['title']} "
                                     f"{a['coverVersion']['description']}".lower() for a in found)
    window = {"createdAt[gte]": "2024-01-01T00:00:00.000Z", "createdAt[lte]": "2024-12-31T23:59:59.999Z"}
    found = api.walk("/assets", **window)
    assert found and all(a["coverVersion"]["createdAt"][:4] >= "2024" for a in found)
    api.fails(400, "GET", "/assets", params={"createdAt[gte]": "last tuesday"})
    fields = {f["name"]: f for f in api.walk("/customfields")}
    campaign = fields["Campaign"]
    spring = campaign["values"][0]
    for want in (spring["id"], spring["name"]):
        found = api.walk("/assets", customField=f"{campaign['id']}:{want}")
        assert found and all(any(f["id"] == campaign["id"] and f["values"][0]["id"] == spring["id"]
                                 for f in a["customFields"]) for a in found)
    anyone = api.walk("/assets", customField=[campaign["id"], f"{fields['Photographer']['id']}:Ana López"])
    assert anyone and all({campaign["id"], fields["Photographer"]["id"]} <= {f["id"] for f in a["customFields"]}
                          for a in anyone)
    api.fails(404, "GET", "/assets", params={"customField": "4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15:x"})


def test_custom_fields_lifecycle(api, ex):
    api.fails(400, "POST", "/customfields", json={"name": "Mood", "type": "plain-text", "values": [{"name": "a"}]})
    api.fails(400, "POST", "/customfields", json={"name": "Mood", "type": "colour"})
    mood = api.ok("POST", "/customfields", 201, json={"name": "Mood", "type": "multi-select",
                                                       "values": [{"name": "Calm"}, {"name": "Bold"}]})
    assert [v["name"] for v in mood["values"]] == ["Calm", "Bold"] and mood["type"] == "multi-select"
    api.fails(400, "PATCH", f"/customfields/{mood['id']}", json={"type": "single-select"})
    api.ok("PATCH", f"/customfields/{mood['id']}", 204, json={"name": "Mood board", "description": "feel"})
    assert api.ok("GET", f"/customfields/{mood['id']}")["name"] == "Mood board"
    loud = api.ok("POST", f"/customfields/{mood['id']}/values", 201, json={"name": "Loud"})
    api.ok("PATCH", f"/customfields/{mood['id']}/values/{loud['id']}", 204, json={"name": "Very loud"})
    note = api.ok("POST", "/customfields", 201, json={"name": "Note", "type": "plain-text"})
    assert note["values"] is None
    api.fails(400, "POST", f"/customfields/{note['id']}/values", json={"name": "x"})
    asset = f"/assets/{ex['asset_id']}"
    cf = f"{asset}/customfields/{mood['id']}"
    api.fails(400, "PUT", cf, json={"value": "Calm"})
    api.fails(400, "PUT", cf, json={"values": [{"id": note["id"]}]})
    api.ok("PUT", cf, 204, json={"values": [{"id": mood["values"][1]["id"]}, {"id": loud["id"]}]})
    shown = next(f for f in api.ok("GET", asset)["customFields"] if f["id"] == mood["id"])
    assert shown == {"id": mood["id"], "name": "Mood board", "type": "multi-select", "value": None,
                     "values": [{"id": mood["values"][1]["id"], "name": "Bold"}, {"id": loud["id"], "name": "Very loud"}]}
    api.ok("DELETE", f"/customfields/{mood['id']}/values/{loud['id']}", 204)
    shown = next(f for f in api.ok("GET", asset)["customFields"] if f["id"] == mood["id"])
    assert [v["name"] for v in shown["values"]] == ["Bold"]
    api.ok("PUT", cf, 204, json={"values": None})
    assert mood["id"] not in {f["id"] for f in api.ok("GET", asset)["customFields"]}
    api.fails(400, "PUT", f"{asset}/customfields/{note['id']}", json={"values": [{"id": loud["id"]}]})
    api.ok("PUT", f"{asset}/customfields/{note['id']}", 204, json={"value": "keep dry"})
    board = f"/boards/{ex['board_id']}"
    api.ok("PUT", f"{board}/customFields/{note['id']}", 204, json={"value": "for the summit"})
    date = next(f for f in api.walk("/customfields") if f["type"] == "date")
    api.fails(400, "PUT", f"{board}/customFields/{date['id']}", json={"value": "soon"})
    api.ok("PUT", f"{board}/customFields/{date['id']}", 204, json={"value": "2026-12-01"})
    shown = {f["name"]: f["value"] for f in api.ok("GET", board)["customFields"]}
    assert shown["Note"] == "for the summit" and shown[date["name"]] == "2026-12-01T00:00:00.000Z"
    api.ok("PUT", f"{board}/customFields/{note['id']}", 204, json={"value": None})
    assert "Note" not in {f["name"] for f in api.ok("GET", board)["customFields"]}
    # the other spelling of the segment reaches the same field, with the same checks and status
    api.ok("PUT", f"{board}/customfields/{note['id']}", 204, json={"value": "lower case"})
    api.ok("PUT", f"{asset}/customFields/{note['id']}", 204, json={"value": "upper case"})
    assert {f["name"]: f["value"] for f in api.ok("GET", board)["customFields"]}["Note"] == "lower case"
    assert {f["name"]: f["value"] for f in api.ok("GET", asset)["customFields"]}["Note"] == "upper case"
    api.fails(400, "PUT", f"{board}/customfields/{date['id']}", json={"value": "soon"})
    assert api("PUT", f"{board}/customfields/{note['id']}", json={"value": "x"},
               headers={"x-api-key": "wrong"}).status_code == 401
    api.ok("PUT", f"{board}/customFields/{note['id']}", 204, json={"value": None})
    api.ok("DELETE", f"/customfields/{note['id']}", 204)
    assert note["id"] not in {f["id"] for f in api.ok("GET", asset)["customFields"]}
    api.fails(404, "GET", f"/customfields/{note['id']}")


def test_version_tags_and_tags(api, ex):
    tag = api.ok("POST", "/tags", 201, json={"name": "fresh-tag"})
    assert set(tag) == {"id", "name"}
    version = f"/assets/{ex['asset_id']}/versions/{ex['version_id']}"
    tagged = api.ok("POST", f"{version}/tags", 200, json={"id": tag["id"]})      # the version, as the SDK says
    assert tag in tagged["tags"] and tagged["id"] == ex["version_id"]
    assert tag in api.ok("GET", version)["tags"]
    api.fails(404, "POST", f"{version}/tags", json={"id": ex["asset_id"]})
    api.ok("PATCH", f"/tags/{tag['id']}", 204, json={"name": "fresh-tag-2"})
    assert {"id": tag["id"], "name": "fresh-tag-2"} in api.ok("GET", version)["tags"]
    assert [t["id"] for t in api.walk("/tags", name="FRESH")] == [tag["id"]]
    api.ok("DELETE", f"{version}/tags/{tag['id']}", 204)
    api.fails(404, "DELETE", f"{version}/tags/{tag['id']}")
    api.ok("POST", f"{version}/tags", 200, json={"id": tag["id"]})
    api.ok("DELETE", f"/tags/{tag['id']}", 204)
    assert tag["id"] not in {t["id"] for t in api.ok("GET", version)["tags"]}
    api.ok("PATCH", version, 204, json={"title": "Renamed", "description": None})
    assert api.ok("GET", version)["title"] == "Renamed"
    api.fails(400, "PATCH", version, json={"fileName": "nope"})


# --- imports, uploads, downloads --------------------------------------------------------------------

def test_import_lifecycle_and_error_types(box, api, ex):
    board = ex["parent_board_id"]
    made = api.ok("POST", "/imports", 201, json={"sourceUrl": "https://files.example.org/shoot/dune.jpg",
                                                  "parentBoardId": board, "tags": ["hero", "new-from-import"]})
    assert set(made) == {"id", "assetId", "versionId"}
    again = api.ok("POST", "/imports", 201, json={"sourceUrl": "https://files.example.org/v2/dune-final.png",
                                                   "assetId": ex["asset_id"]})
    assert again["assetId"] == ex["asset_id"]
    urls = {"SOURCE_URL_BLOCKED": "http://blocked.example/a.jpg", "SOURCE_FILE_NOT_FOUND": "https://x.example/missing.jpg",
            "SOURCE_URL_INVALID": "https://x.example/status/503/a.jpg", "PROCESS_TIMED_OUT": "https://x.example/slow/a.mov"}
    failing = {kind: api.ok("POST", "/imports", 201, json={"sourceUrl": url})["id"] for kind, url in urls.items()}
    api.fails(400, "POST", "/imports", json={"sourceUrl": "ftp://files.example.org/a.jpg"})
    api.fails(400, "POST", "/imports", json={"source_url": "https://files.example.org/a.jpg"})

    def status(import_id):
        return api.ok("GET", f"/imports/{import_id}/status")

    assert status(made["id"]) == {"status": "pending"}
    api.fails(404, "GET", f"/assets/{made['assetId']}")
    box.advance(seconds=5)
    assert status(made["id"]) == {"status": "inProgress"}
    box.advance(seconds=30)
    assert status(made["id"]) == {"status": "succeeded"}
    asset = api.ok("GET", f"/assets/{made['assetId']}")
    cover = asset["coverVersion"]
    assert cover["id"] == made["versionId"] and cover["fileName"] == "dune" and cover["ext"] == "jpg"
    assert {t["name"] for t in cover["tags"]} == {"hero", "new-from-import"}
    assert board in {b["id"] for b in api.walk(f"/assets/{made['assetId']}/boards")}
    assert api.ok("GET", f"/assets/{ex['asset_id']}")["coverVersion"]["id"] == again["versionId"]
    for kind in ("SOURCE_URL_BLOCKED", "SOURCE_FILE_NOT_FOUND", "SOURCE_URL_INVALID"):
        answer = status(failing[kind])
        assert answer["status"] == "failed" and answer["error"]["type"] == kind and answer["error"]["message"]
    assert status(failing["PROCESS_TIMED_OUT"]) == {"status": "inProgress"}
    box.advance(minutes=10)
    assert status(failing["PROCESS_TIMED_OUT"])["error"]["type"] == "PROCESS_TIMED_OUT"
    seeded = {status(i)["status"] for i in ex["import_ids"]}
    assert seeded == {"succeeded", "failed"}           # the seeded pending ones have run by now
    api.fails(404, "GET", f"/imports/{ex['asset_id']}/status")


def test_small_upload_and_download(api, ex):
    made = api.ok("POST", "/uploads", 201, json={"fileName": "note", "ext": "pdf", "size": 2048, "mime": "application/pdf",
                                                  "recordedAt": "2026-10-01T10:00:00Z", "parentBoardId": ex["board_id"]})
    assert set(made) == {"assetId", "versionId", "uploadUrl"}
    assert requests.put(made["uploadUrl"], data=b"short", timeout=10).status_code == 400
    data = bytes(range(256)) * 8
    put = requests.put(made["uploadUrl"], data=data, timeout=10)
    assert put.status_code == 200 and put.headers["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    version = api.ok("GET", f"/assets/{made['assetId']}")["coverVersion"]
    assert version["size"] == 2048 and version["fileName"] == "note" and version["type"] == "nonMedia"
    url = api.ok("GET", f"/assets/{made['assetId']}/versions/{made['versionId']}/download")["url"]
    got = requests.get(url, timeout=10)                  # a pre-signed URL: no key headers
    assert got.status_code == 200 and got.content == data and got.headers["Content-Type"] == "application/pdf"
    assert requests.get(url.replace("signature=", "signature=0"), timeout=10).status_code == 403
    # recordedAt may be omitted (the vendor SDK's type): tests/catalog/test_public_specs_assets.py
    for bad in ({"fileName": "x", "ext": "jpg", "size": 0, "mime": "image/jpeg", "recordedAt": "2026-01-01T00:00:00Z"},
                {"fileName": "x", "ext": "jpg", "mime": "image/jpeg", "recordedAt": "2026-01-01T00:00:00Z"}):
        api.fails(400, "POST", "/uploads", json=bad)
    seeded = api.ok("GET", f"/assets/{ex['asset_id']}/versions")["data"][0]
    url = api.ok("GET", f"/assets/{ex['asset_id']}/versions/{seeded['id']}/download")["url"]
    got = requests.get(url, timeout=10)
    assert got.status_code == 200 and len(got.content) == min(seeded["size"], MIB)


def test_multipart_upload(api, ex):
    size = 6 * MIB + 123
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    made = api.ok("POST", "/uploads", 201, json={"fileName": "keynote", "ext": "mov", "size": size, "mime": "video/quicktime",
                                                  "recordedAt": "2026-10-01T10:00:00Z", "assetId": ex["asset_id"]})
    assert set(made) == {"assetId", "versionId", "multiPartUploadId", "key"} and made["assetId"] == ex["asset_id"]
    ids = {"multiPartUploadId": made["multiPartUploadId"], "key": made["key"]}
    chunks = [data[:5 * MIB], data[5 * MIB:]]
    parts = []
    for number, chunk in enumerate(chunks, 1):
        url = api.ok("POST", "/uploads/uploadPart", 201, json={**ids, "partNumber": number})["url"]
        put = requests.put(url, data=chunk, timeout=30)
        assert put.status_code == 200 and put.headers["ETag"] == f'"{hashlib.md5(chunk).hexdigest()}"'
        parts.append({"etag": put.headers["ETag"], "partNumber": number})
    api.fails(400, "POST", "/uploads/uploadPart", json={**ids, "partNumber": 0})
    api.fails(400, "POST", "/uploads/uploadPart", json={**ids, "key": "uploads/other", "partNumber": 1})
    api.fails(400, "POST", "/uploads/completeMultipart", json={**ids, "parts": parts[::-1]})
    api.fails(400, "POST", "/uploads/completeMultipart",
              json={**ids, "parts": [parts[0], {"etag": '"0000"', "partNumber": 2}]})
    api.fails(400, "POST", "/uploads/completeMultipart", json={**ids, "parts": parts[:1]})
    api.fails(404, "GET", f"/assets/{ex['asset_id']}/versions/{made['versionId']}")
    api.ok("POST", "/uploads/completeMultipart", 204, json={**ids, "parts": parts})
    version = api.ok("GET", f"/assets/{ex['asset_id']}/versions/{made['versionId']}")
    assert version["size"] == size and version["type"] == "video"
    url = api.ok("GET", f"/assets/{ex['asset_id']}/versions/{made['versionId']}/download")["url"]
    assert hashlib.md5(requests.get(url, timeout=30).content).digest() == hashlib.md5(data).digest()
    api.ok("POST", "/uploads/completeMultipart", 204, json={**ids, "parts": parts})   # repeating is harmless
    api.fails(404, "POST", "/uploads/uploadPart", json={**ids, "partNumber": 3})


def test_delete_asset(api):
    asset = api.upload(30)["assetId"]
    api.ok("DELETE", f"/assets/{asset}", 204)
    api.fails(404, "GET", f"/assets/{asset}")
    api.fails(404, "DELETE", f"/assets/{asset}")
    assert asset not in {a["id"] for a in api.walk("/assets", limit=500)}


# --- seed and scale -----------------------------------------------------------------------------------

def test_seed_is_deterministic_and_spread():
    first, second = (AssetLibrary(7, 1, Clock(), {}) for _ in range(2))
    assert first.credentials() == second.credentials()
    rows = first.space.rows(first.space.live())
    assert rows[0:50] == second.space.rows(second.space.live())[0:50]
    versions = [len(first.space.state(i)["versions"]) for i in range(first.space.base.count)]
    assert set(versions) == {1, 2, 3}
    types = {row["coverVersion"]["type"] for row in rows[0:300]}
    assert {"photo", "video", "nonMedia"} <= types
    assert any(row["customFields"] for row in rows[0:50])
    assert any(first.boards.board_fields.values())
    statuses = {r["status"] for r in first.transfers.imports.values()}
    assert statuses == {"pending", "inProgress", "succeeded", "failed"}
    assert AssetLibrary(8, 1, Clock(), {}).space.rows(range(1))[0] != rows[0]
