"""Each paging envelope and the requests each one refuses."""
import pytest


def test_cursor_pages_walk_every_record_once(toy):
    _, session, base = toy
    seen, cursor = [], None
    while True:
        body = session.get(f"{base}/api/v2/things", params={"limit": 500, **({"cursor": cursor} if cursor else {})}).json()
        assert set(body) == {"data", "pagination", "total"} and body["total"] == 1200
        seen += [thing["id"] for thing in body["data"]]
        if not body["pagination"]["hasMore"]:
            assert body["pagination"]["cursor"] is None
            break
        cursor = body["pagination"]["cursor"]
        assert isinstance(cursor, str) and not cursor.isdigit()
    assert len(seen) == len(set(seen)) == 1200


@pytest.mark.parametrize("query", [{"limit": 501}, {"limit": 0}, {"limit": "x"}, {"limit": 5, "cursor": "junk!"}])
def test_cursor_refuses(toy, query):
    _, session, base = toy
    answer = session.get(f"{base}/api/v2/things", params=query)
    assert answer.status_code == 400 and "message" in answer.json()


def test_offset_envelope_and_size_minus_one_capped(toy):
    _, session, base = toy
    body = session.get(f"{base}/api/v2/offset", params={"offset": 10, "size": 5}).json()
    assert [t["n"] for t in body["list"]] == [10, 11, 12, 13, 14]
    assert {k: body[k] for k in ("offset", "pageSize", "totalSize", "totalSizeRelation")} == {
        "offset": 10, "pageSize": 5, "totalSize": 1200, "totalSizeRelation": "EQUAL"}
    everything = session.get(f"{base}/api/v2/offset", params={"offset": 0, "size": -1}).json()
    assert len(everything["list"]) == 1000 and everything["totalSize"] == 1200


@pytest.mark.parametrize("query", [{"offset": 1, "size": -1}, {"offset": -1, "size": 5}, {"size": 0},
                                   {"size": -2}])
def test_offset_refuses(toy, query):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/offset", params=query).status_code == 400


def test_page_number_zero_based_with_headers(toy):
    _, session, base = toy
    answer = session.get(f"{base}/api/v2/numbered", params={"pageNumber": 1, "pageSize": 200})
    assert [t["n"] for t in answer.json()][:2] == [200, 201] and len(answer.json()) == 200
    assert answer.headers["total-size"] == "1200" and answer.headers["page-size"] == "200"
    assert session.get(f"{base}/api/v2/numbered", params={"pageNumber": 6, "pageSize": 200}).json() == []


@pytest.mark.parametrize("query", [{"pageSize": 201}, {"pageNumber": -1}, {"pageSize": 0}])
def test_page_number_refuses(toy, query):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/numbered", params=query).status_code == 400


def test_unpaged_with_and_without_wrapper(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/things/t0001/children").json() == {
        "data": [{"id": "c1", "thingId": "t0001"}, {"id": "c4", "thingId": "t0001"},
                 {"id": "c7", "thingId": "t0001"}]}
    assert len(session.get(f"{base}/api/v2/bare").json()) == 9
