"""The asset library vendor's own end-to-end tests of tags, replayed against the sandbox with plain
requests as its SDK sends them (docs/public-specs.md, source A3; written by us, nothing copied):
the list's cursor page, then create → get → rename → get → delete → get, the last a 404 (the SDK's
NotFoundError), with the run's clean-up deleting what a failed test left; and its error tests."""
from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests

import toolkit.sandbox


@pytest.fixture()
def api() -> Iterator[tuple[requests.Session, str]]:
    with toolkit.sandbox.start() as box:
        creds = box.credentials("asset_library")
        session = requests.Session()
        session.trust_env = False
        # the SDK's two headers on every request, JSON bodies
        session.headers.update({"x-api-key": creds["api_key"], "x-air-workspace-id": creds["workspace_id"]})
        yield session, creds["base_url"]
        session.close()


def test_the_tag_list_is_a_cursor_page(api) -> None:
    session, base = api
    page = session.get(base + "/tags", timeout=10).json()
    assert isinstance(page["data"], list) and page["data"]
    assert isinstance(page["pagination"]["hasMore"], bool)


def test_a_tag_is_read_after_create_and_rename_and_not_found_after_delete(api) -> None:
    session, base = api
    cleanup = []
    name = f"e2e-{int(time.time() * 1000)}-tag"          # the run's resource name
    try:
        made = session.post(base + "/tags", json={"name": name}, timeout=10)
        assert made.status_code == 201
        tag = made.json()
        cleanup.append(tag["id"])
        assert tag["name"] == name and tag["id"]

        fetched = session.get(f"{base}/tags/{tag['id']}", timeout=10)
        assert fetched.status_code == 200 and fetched.json() == {"id": tag["id"], "name": name}

        renamed = session.patch(f"{base}/tags/{tag['id']}", json={"name": f"{name}-updated"}, timeout=10)
        assert renamed.status_code == 204
        assert session.get(f"{base}/tags/{tag['id']}", timeout=10).json()["name"] == f"{name}-updated"

        assert session.delete(f"{base}/tags/{tag['id']}", timeout=10).status_code == 204
        cleanup.clear()
        gone = session.get(f"{base}/tags/{tag['id']}", timeout=10)
        assert gone.status_code == 404 and tag["id"] in gone.json()["message"]
    finally:
        for tag_id in cleanup:
            session.delete(f"{base}/tags/{tag_id}", timeout=10)


def test_an_unknown_tag_is_not_found(api) -> None:
    session, base = api
    missing = session.get(base + "/tags/00000000-0000-4000-8000-000000000000", timeout=10)
    assert missing.status_code == 404


def test_the_error_tests_hold_an_unknown_asset_is_404_and_a_malformed_id_an_error(api) -> None:
    """The vendor's `errors` e2e tests: NotFoundError (404) for a well-formed id no asset has, an
    APIError (any 4xx) for an id that is no UUID."""
    session, base = api
    missing = session.get(base + "/assets/00000000-0000-0000-0000-000000000000", timeout=10)
    assert missing.status_code == 404 and missing.json()["message"]
    assert 400 <= session.get(base + "/assets/not-a-valid-uuid", timeout=10).status_code < 500
