"""The asset library and the media review as their public artefacts show them (issue 16 point 4;
docs/public-specs.md has the field-by-field comparison and the sources).

The sandbox is called with plain `requests` where the wire is the point, and through a workspace where
the point is that the catalog declares the field (it lands in a typed column, not in `extra`).
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import orjson
import pandas as pd
import pytest
import requests

import toolkit
from toolkit import Workspace, catalog
from toolkit.sandbox import available

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
METADATA_KEYS = {"category", "fieldName", "label", "type", "data"}


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Air:
    """requests against one asset library sandbox, with its two key headers."""

    def __init__(self, box) -> None:
        creds = box.credentials("asset_library")
        self.base = creds["base_url"]
        self.session = requests.Session()
        self.session.headers.update({"x-api-key": creds["api_key"], "x-air-workspace-id": creds["workspace_id"]})

    def ok(self, method: str, path: str, **kwargs):
        answer = self.session.request(method, self.base + path, timeout=30, **kwargs)
        assert answer.status_code < 300, (method, path, answer.status_code, answer.text)
        return answer.json() if answer.content else None


@pytest.fixture(scope="module")
def box():
    with toolkit.sandbox.start(emulators={"asset_library": available()["asset_library"]}, seed=0, scale=1,
                               enforce_limits=False) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def air(box):
    return Air(box)


@pytest.fixture(scope="module")
def ex(box):
    return box.examples("asset_library")


# --- a version: uploadedAt (the OpenAPI types) and summary (the vendor SDK) -----------------------

def test_every_version_has_uploaded_at_between_created_and_updated(air, ex):
    versions = [a["coverVersion"] for a in air.ok("GET", "/assets", params={"limit": 500})["data"]]
    versions += air.ok("GET", f"/assets/{ex['asset_id']}/versions")["data"]
    for version in versions:
        assert ISO_MS.match(version["uploadedAt"]), version
        assert when(version["createdAt"]) <= when(version["uploadedAt"]) <= when(version["updatedAt"]), version
        assert "summary" in version and version["summary"] is None
    # the field is its own: for versions changed after their upload it is not a copy of createdAt
    assert any(v["uploadedAt"] != v["createdAt"] for v in versions)


def test_one_versions_get_carries_its_file_metadata_and_lists_do_not(air, ex):
    version = air.ok("GET", f"/assets/{ex['asset_id']}/versions/{ex['version_id']}")
    assert version["metadata"], version
    for item in version["metadata"]:
        assert set(item) == METADATA_KEYS
        assert isinstance(item["data"], str) or all(isinstance(d, str) for d in item["data"])
    keywords = next(m for m in version["metadata"] if m["fieldName"] == "Keywords")
    assert keywords["data"] == [t["name"] for t in version["tags"]]
    listed = air.ok("GET", f"/assets/{ex['asset_id']}/versions")["data"]
    assert listed and not any("metadata" in v for v in listed)
    assert "metadata" not in air.ok("GET", f"/assets/{ex['asset_id']}")["coverVersion"]


def test_the_catalog_declares_every_field_of_a_version(air, ex):
    """Nothing of a version the service sends falls into `extra` for want of a column."""
    version = air.ok("GET", f"/assets/{ex['asset_id']}/versions")["data"][0]
    versions = catalog.resource("asset_library", "versions")
    declared = {c.path[0] for c in versions.columns}
    assert set(version) <= declared, set(version) - declared
    cover = {".".join(c.path[1:2]) for c in catalog.resource("asset_library", "assets").columns
             if c.path[0] == "coverVersion"}
    assert set(version) <= cover, set(version) - cover


def test_uploaded_at_lands_in_a_timestamp_column_and_not_in_extra(box, ex):
    with Workspace() as ws:
        client = ws.connect("asset_library", **box.credentials("asset_library"))
        assets = client.fetch("assets")
        versions = client.fetch("versions", asset_ids=ex["asset_ids"])
    for frame, column in ((assets, "cover_version_uploaded_at"), (versions, "uploaded_at")):
        assert pd.api.types.is_datetime64_any_dtype(frame[column]) or "timestamp" in str(frame[column].dtype)
        assert frame[column].notna().all()
        extras = [orjson.loads(e) for e in frame["extra"].dropna()] if "extra" in frame else []
        assert not any("uploadedAt" in e or "uploadedAt" in e.get("coverVersion", {}) for e in extras)


def test_tagging_a_version_answers_the_version(air, ex, box):
    """The vendor SDK's addVersionTag returns the AssetVersion (its own test says so); the OpenAPI types'
    204 loses to it."""
    path = f"/assets/{ex['asset_id']}/versions/{ex['version_id']}/tags"
    tag = air.ok("POST", "/tags", json={"name": "sdk-shape"})
    answer = air.session.post(air.base + path, json={"id": tag["id"]}, timeout=10)
    assert answer.status_code == 200 and tag in answer.json()["tags"] and answer.json()["id"] == ex["version_id"]
    action = catalog.ACTIONS["asset_library.add_asset_version_tag"]
    assert action.response != "none" and action.status == 200


# --- the download URL: expiresAt (the OpenAPI types), and the URL does expire ----------------------

def test_a_download_url_says_when_it_expires_and_is_refused_after(box, air, ex):
    path = f"/assets/{ex['asset_id']}/versions/{ex['version_id']}/download"
    answer = air.ok("GET", path)
    assert set(answer) == {"url", "expiresAt"} and ISO_MS.match(answer["expiresAt"])
    now = box.clock.now()
    assert now < when(answer["expiresAt"]) <= now + timedelta(hours=1)
    assert requests.get(answer["url"], timeout=10).status_code == 200
    later = answer["url"].replace("expires=", "expires=9")        # a longer life is not the URL's to claim
    assert requests.get(later, timeout=10).status_code == 403
    box.advance(seconds=3601)
    expired = requests.get(answer["url"], timeout=10)
    assert expired.status_code == 403 and b"expired" in expired.content
    assert requests.get(air.ok("GET", path)["url"], timeout=10).status_code == 200     # a fresh one works


# --- request shapes of the vendor SDK: recordedAt optional, import title/description, tags as {id} -----

def test_an_upload_without_recorded_at_is_accepted(box, air):
    made = air.ok("POST", "/uploads", json={"fileName": "memo", "ext": "pdf", "size": 16, "mime": "application/pdf"})
    assert requests.put(made["uploadUrl"], data=b"0123456789abcdef", timeout=10).status_code == 200
    version = air.ok("GET", f"/assets/{made['assetId']}/versions/{made['versionId']}")
    assert version["fileCreatedAt"] == version["createdAt"]           # now, when the file was made unknown
    assert not catalog.ACTIONS["asset_library.create_upload"].param("recorded_at").required


def test_an_import_sets_title_description_and_tags_by_id(box, air, ex):
    made = air.ok("POST", "/imports", json={
        "sourceUrl": "https://files.example/shoots/harbour.jpg", "title": "Harbour at dawn",
        "description": "First light over the harbour", "tags": [{"id": ex["tag_id"]}]})
    box.advance(seconds=40)
    assert air.ok("GET", f"/imports/{made['id']}/status")["status"] == "succeeded"
    version = air.ok("GET", f"/assets/{made['assetId']}/versions/{made['versionId']}")
    assert (version["title"], version["description"]) == ("Harbour at dawn", "First light over the harbour")
    assert [t["id"] for t in version["tags"]] == [ex["tag_id"]]
    create_import = catalog.ACTIONS["asset_library.create_import"]
    assert {"title", "description"} <= {p.name for p in create_import.params}
    for action in ("create_import", "create_upload"):
        tags = catalog.ACTIONS[f"asset_library.{action}"].param("tags")
        assert tags.kind == "object" and all(set(t) == {"id"} for t in tags.example)


# --- media review: the paging headers the vendor's Python clients read --------------------------------

def test_media_review_sends_the_paging_headers_the_vendor_clients_read():
    with toolkit.sandbox.start(emulators={"media_review": available()["media_review"]}, seed=0, scale=3,
                               enforce_limits=False) as mr:
        creds = mr.credentials("media_review")
        got = requests.get(creds["base_url"] + "/teams", params={"page": 1, "page_size": 500}, timeout=10,
                           headers={"Authorization": f"Bearer {creds['token']}"})
    assert got.status_code == 200 and isinstance(got.json(), list)
    headers = got.headers
    # frameioclient pages on page-number, per-page, total and total-pages; per-page is what the server used
    assert headers["page-number"] == "1" and headers["per-page"] == "100" and len(got.json()) == 100
    assert int(headers["total-pages"]) == -(-int(headers["total"]) // 100) > 1
    assert all(t["_type"] == "team" for t in got.json())
