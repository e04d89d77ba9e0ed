"""The media review emulator: teams of the user, a bare array paged with Scrivener headers."""
import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit.sandbox.media_review.service import MediaReview

FIELDS = {"id", "name", "account_id", "creator_id", "access", "storage", "storage_limit", "file_count",
          "folder_count", "project_count", "member_count", "member_limit", "collaborator_count",
          "inserted_at", "updated_at", "deleted_at", "account", "user_role"}


@pytest.fixture(scope="module")
def teams():
    with sandbox.start(emulators={"media_review": MediaReview}) as box:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {box.credentials('media_review')['token']}"
        yield box, session, box.url("media_review") + "/teams"


def test_teams_are_a_bare_array_of_snake_case_records(teams):
    _, session, url = teams
    answer = session.get(url, params={"page": 1, "page_size": 100})
    records = answer.json()
    assert isinstance(records, list) and 30 <= len(records) <= 50
    for team in records:
        assert set(team) >= FIELDS and team["deleted_at"] is None
        assert team["access"] in ("private", "public", "restricted")
        assert team["inserted_at"].endswith("Z") and team["inserted_at"] <= team["updated_at"]
        assert isinstance(team["account"], dict) and isinstance(team["user_role"], dict)
        assert team["account"]["id"] == team["account_id"]
    assert len({t["name"] for t in records}) == len(records)
    assert any(t["storage"] > t["storage_limit"] for t in records) or any(
        t["member_limit"] is not None and t["member_count"] > t["member_limit"] for t in records)


def test_paging_headers_and_links(teams):
    _, session, url = teams
    answer = session.get(url, params={"page": 2, "page_size": 10})
    total = int(answer.headers["total"])
    assert answer.headers["page-number"] == "2" and answer.headers["per-page"] == "10"
    assert answer.headers["total-pages"] == str(-(-total // 10))
    assert 'page=3&page_size=10>; rel="next"' in answer.headers["link"]
    assert 'page=1&page_size=10>; rel="prev"' in answer.headers["link"]
    walked = []
    for page in range(1, int(answer.headers["total-pages"]) + 1):
        walked += session.get(url, params={"page": page, "page_size": 10}).json()
    assert len(walked) == len({t["id"] for t in walked}) == total


def test_page_size_above_100_is_cut_and_bad_pages_refused(teams):
    _, session, url = teams
    assert session.get(url, params={"page_size": 500}).headers["per-page"] == "100"
    refused = session.get(url, params={"page": 0})
    assert refused.status_code == 400
    assert set(refused.json()) == {"code", "message", "errors"}
    assert set(refused.json()["errors"][0]) == {"code", "detail", "status", "title"}


def test_bearer_token_required(teams):
    _, _, url = teams
    answer = requests.get(url, timeout=5)
    assert answer.status_code == 401 and answer.json()["code"] == 401


def test_seed_data_is_deterministic_and_scales(teams):
    box, session, url = teams
    clock = box.clock
    same = MediaReview(0, 1, clock, {}).store["teams"].all()
    assert same == box.emulator("media_review").store["teams"].all()
    assert MediaReview(1, 1, clock, {}).store["teams"].all() != same
    assert len(MediaReview(0, 10, clock, {}).store["teams"]) == 400


def test_examples(teams):
    box, _, _ = teams
    assert len(box.examples("media_review")["team_ids"]) == 5
