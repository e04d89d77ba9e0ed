"""Paging: each style's stop conditions, alone and through Client.pages against scripted answers.

The clients here are handed a Session whose adapter answers from the test's script (`answered`): the
script is all that answers, and a request it does not expect fails the test where it is sent."""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from stubbed_services import answered, reply

from toolkit.catalog.paging import Cursor, Offset, PageNumber, Unpaged, Watch, dig
from toolkit.errors import PagingError, ToolkitError


class Pages:
    """Answers successive requests of `method` to `path` (below the client's base URL) from a script,
    and records each request's query; any other request fails the test. A client answered by it:
    `answered(service, script)` (tests/stubbed_services.py), its Session handed in."""

    def __init__(self, method: str, path: str, answers: list) -> None:
        self.method, self.path, self.answers, self.queries = method, path, list(answers), []

    def __call__(self, request):
        asked = urlsplit(request.url)
        if request.method != self.method or not asked.path.endswith(self.path):
            raise AssertionError(f"{request.method} {asked.path} was not expected: only {self.method} {self.path}")
        self.queries.append({k: v if len(v) > 1 else v[0] for k, v in parse_qs(asked.query).items()})
        if len(self.queries) > len(self.answers):
            raise AssertionError(f"request {len(self.queries)} was not expected: the walk should have stopped")
        body, headers = self.answers[len(self.queries) - 1]
        return reply(200, json.dumps(body), headers)


def rows(n: int, start: int = 0) -> list[dict]:
    return [{"id": f"r{i}"} for i in range(start, start + n)]


# --- the style objects alone ---------------------------------------------------------------------------

def test_dig():
    assert dig({"pagination": {"cursor": "c"}}, "pagination.cursor") == "c"
    assert dig({"pagination": None}, "pagination.cursor") is None
    assert dig([1], "a") is None
    assert dig({"a": 1}, "") == {"a": 1}


class TestCursor:
    style = Cursor()

    def test_start_asks_for_the_largest_page_unless_told(self):
        assert self.style.start({"tag": ["a"]}) == {"limit": 500, "tag": ["a"]}
        assert self.style.start({"limit": 20}) == {"limit": 20}

    def next(self, body, params=None):
        params = params or {"limit": 2, "tag": ["hero"]}
        return self.style.next(params, body, {}, self.style.rows(body), 0)

    def test_next_repeats_the_filters_with_the_cursor(self):
        body = {"data": rows(2), "pagination": {"hasMore": True, "cursor": "c2"}}
        assert self.next(body) == {"limit": 2, "tag": ["hero"], "cursor": "c2"}

    @pytest.mark.parametrize("pagination", [
        {"hasMore": False, "cursor": "c2"},     # last page
        {"hasMore": True, "cursor": None},      # cursor null
        {"hasMore": True, "cursor": ""},
        {"hasMore": True},
        {},
    ])
    def test_stops(self, pagination):
        assert self.next({"data": rows(2), "pagination": pagination}) is None

    def test_stops_on_an_empty_page(self):
        assert self.next({"data": [], "pagination": {"hasMore": True, "cursor": "c9"}}) is None

    def test_a_cursor_that_does_not_advance_raises(self):
        with pytest.raises(PagingError, match="'c1' twice"):
            self.next({"data": rows(2), "pagination": {"hasMore": True, "cursor": "c1"}},
                      {"limit": 2, "cursor": "c1"})

    def test_rows(self):
        assert self.style.rows({"data": rows(3)}) == rows(3)
        assert self.style.rows({"data": None}) == []
        with pytest.raises(PagingError, match="expected a list at data"):
            self.style.rows({"data": {"id": 1}})


class TestPageNumber:
    style = PageNumber(page="pageNumber", size="pageSize", first=0, max_size=200, total_header="total-size")

    def next(self, page, size, got, seen, headers=None):
        return self.style.next({"pageNumber": page, "pageSize": size, "statuses": "READY"}, rows(got),
                               headers or {}, rows(got), seen)

    def test_start(self):
        assert self.style.start({}) == {"pageNumber": 0, "pageSize": 200}
        assert self.style.start({"pageSize": 50, "statuses": "READY"}) == {"pageNumber": 0, "pageSize": 50,
                                                                           "statuses": "READY"}

    def test_next_page_repeats_the_filters(self):
        assert self.next(0, 2, 2, 2) == {"pageNumber": 1, "pageSize": 2, "statuses": "READY"}

    def test_last_page_is_short(self):
        assert self.next(3, 2, 1, 7) is None

    def test_empty_page(self):
        assert self.next(3, 2, 0, 6) is None

    def test_a_full_page_is_followed_by_another_request_whatever_the_total_says(self):
        # a total that lies (or data that grew while the walk went on) must not cut the walk short
        after = {"pageNumber": 2, "pageSize": 2, "statuses": "READY"}
        assert self.next(1, 2, 2, 4, {"total-size": "4"}) == after
        assert self.next(1, 2, 2, 4, {"total-size": "1"}) == after
        assert self.next(1, 2, 2, 4, {"total-size": "5"}) == after
        assert self.next(2, 2, 0, 4, {"total-size": "4"}) is None

    def test_the_total_still_stops_guessing_ahead(self):
        params = {"pageNumber": 1, "pageSize": 2}
        assert self.style.after_full(params, [], {"total-size": "4"}, 2) is None
        assert self.style.after_full(params, [], {"total-size": "5"}, 2) == {"pageNumber": 2, "pageSize": 2}

    def test_a_header_that_is_not_a_number_is_ignored(self):
        # the full page decides: the walk goes on to the next page with the same filters
        assert self.next(0, 2, 2, 2, {"total-size": "many"}) == {"pageNumber": 1, "pageSize": 2,
                                                                 "statuses": "READY"}

    def test_total_pages_header(self):
        style = PageNumber(page="page", size="page_size", first=1, max_size=100, total_header="total",
                           pages_header="total-pages")
        assert style.start({}) == {"page": 1, "page_size": 100}
        full = rows(2)
        assert style.next({"page": 1, "page_size": 2}, full, {"total-pages": "2"}, full, 2) == {"page": 2,
                                                                                                 "page_size": 2}
        # the last page by the header, but full: one more request makes sure
        assert style.next({"page": 2, "page_size": 2}, full, {"total-pages": "2"}, full, 4) == {"page": 3,
                                                                                                 "page_size": 2}
        assert style.next({"page": 2, "page_size": 2}, rows(1), {"total-pages": "2"}, rows(1), 3) is None

    def test_a_page_cut_below_the_size_asked_is_not_the_last_while_the_headers_say_more(self):
        # a service whose own maximum is below the size asked (the vendor's clients trust per-page)
        style = PageNumber(page="page", size="page_size", first=1, max_size=100, total_header="total",
                           pages_header="total-pages")
        cut = rows(100)
        more = {"total": "250", "total-pages": "3", "per-page": "100"}
        assert style.next({"page": 1, "page_size": 500}, cut, more, cut, 100) == {"page": 2, "page_size": 500}
        assert style.next({"page": 3, "page_size": 500}, rows(50), more, rows(50), 250) is None
        # a count of rows alone does not: a short page ends the walk (the data may have moved)
        assert self.next(0, 200, 100, 100, {"total-size": "150"}) is None


class TestOffset:
    style = Offset()

    def next(self, body, offset=0, size=2, style=None):
        style = style or self.style
        got = style.rows(body)
        return style.next({"offset": offset, "size": size, "tags": "vip"}, body, {}, got, offset + len(got))

    def test_start(self):
        assert self.style.start({}) == {"offset": 0, "size": 1000}
        assert Offset(cap=1000, page_size=5000).start({}) == {"offset": 0, "size": 1000}

    def test_total_size_in_the_body(self):
        page = {"list": rows(2), "offset": 0, "pageSize": 2, "totalSize": 5}
        assert self.next(page) == {"offset": 2, "size": 2, "tags": "vip"}
        assert self.next({**page, "list": rows(1), "offset": 4}, offset=4) is None
        # total reached on a full page: one more request, since the total may lie
        assert self.next({**page, "totalSize": 4, "offset": 2}, offset=2) == {"offset": 4, "size": 2, "tags": "vip"}
        assert self.next({**page, "list": rows(1), "totalSize": 3, "offset": 2}, offset=2) is None

    def test_a_bare_array(self):
        assert self.next(rows(2)) == {"offset": 2, "size": 2, "tags": "vip"}
        assert self.next(rows(1), offset=2) is None

    def test_empty_page(self):
        assert self.next({"list": [], "totalSize": 10}) is None
        assert self.next([]) is None

    def test_size_minus_one_is_everything(self):
        assert self.next(rows(7), size=-1) is None
        assert self.next({"list": rows(7), "totalSize": 7}, size=-1) is None

    def test_notification_cap_walks_on_in_pages_of_the_cap(self):
        capped = Offset(cap=3)
        assert self.next(rows(3), size=-1, style=capped) == {"offset": 3, "size": 3, "tags": "vip"}
        assert self.next(rows(3), offset=3, size=3, style=capped) == {"offset": 6, "size": 3, "tags": "vip"}
        assert self.next(rows(2), offset=6, size=3, style=capped) is None
        # a full page at the cap asks once more, whatever the total says
        assert self.next({"list": rows(3), "totalSize": 3}, size=-1, style=capped) == {"offset": 3, "size": 3,
                                                                                        "tags": "vip"}
        assert self.next({"list": rows(2), "totalSize": 3}, size=-1, style=capped) is None


def test_unpaged():
    style = Unpaged(items="data")
    assert style.start({"email": "a@b.c"}) == {"email": "a@b.c"}
    assert style.rows({"data": rows(2)}) == rows(2)
    assert style.next({}, {"data": rows(2)}, {}, rows(2), 2) is None
    assert Unpaged().rows(rows(1)) == rows(1)


# --- through Client.pages -----------------------------------------------------------------------------------

def walk(client, action, **params):
    return [page.rows for page in client.pages(action, **params)]


def test_cursor_walk_repeats_the_filters_on_every_page():
    script = Pages("GET", "/assets", [
        ({"data": rows(2), "pagination": {"hasMore": True, "cursor": "c1"}}, {}),
        ({"data": rows(2, 2), "pagination": {"hasMore": True, "cursor": "c2"}}, {}),
        ({"data": rows(1, 4), "pagination": {"hasMore": False, "cursor": None}}, {}),
    ])
    assets = answered("asset_library", script)
    got = walk(assets, "asset_library.list_assets", limit=2, tag=["hero", "q2"], parent_board_id="b1")
    assert got == [rows(2), rows(2, 2), rows(1, 4)]
    assert [q.get("cursor") for q in script.queries] == [None, "c1", "c2"]
    for query in script.queries:
        assert query["tag"] == ["hero", "q2"] and query["parentBoardId"] == "b1" and query["limit"] == "2"


def test_cursor_walk_asks_for_500_by_default():
    script = Pages("GET", "/tags",
                   [({"data": rows(1), "pagination": {"hasMore": False, "cursor": None}}, {})])
    assets = answered("asset_library", script)
    assert assets.rows("asset_library.list_tags") == rows(1)
    assert script.queries == [{"limit": "500"}]


def test_cursor_null_stops_even_when_has_more():
    script = Pages("GET", "/boards",
          [({"data": rows(2), "pagination": {"hasMore": True, "cursor": None}}, {})])
    assets = answered("asset_library", script)
    assert walk(assets, "asset_library.list_boards") == [rows(2)]


def test_cursor_that_does_not_advance_raises_instead_of_looping():
    script = Pages("GET", "/assets", [
        ({"data": rows(2), "pagination": {"hasMore": True, "cursor": "c1"}}, {}),
        ({"data": rows(2, 2), "pagination": {"hasMore": True, "cursor": "c1"}}, {}),
    ])
    assets = answered("asset_library", script)
    pages = assets.pages("asset_library.list_assets")
    assert next(pages).rows == rows(2)
    assert next(pages).rows == rows(2, 2)
    with pytest.raises(PagingError):
        next(pages)
    assert len(script.queries) == 2


def test_page_numbers_stop_at_the_total_pages_header():
    script = Pages("GET", "/teams", [
        (rows(2), {"total-pages": "2", "total": "4"}),
        (rows(2, 2), {"total-pages": "2", "total": "4"}),
        ([], {"total-pages": "2", "total": "4"}),
    ])
    media = answered("media_review", script)
    # the last page by the header came back full: one more request makes sure nothing follows
    assert walk(media, "media_review.list_teams", page_size=2) == [rows(2), rows(2, 2), []]
    assert [(q["page"], q["page_size"]) for q in script.queries] == [("1", "2"), ("2", "2"), ("3", "2")]


def test_page_numbers_stop_at_the_total_size_header():
    script = Pages("GET", "/rest/v0/submissions", [
        (rows(2), {"total-size": "4"}),
        (rows(2, 2), {"total-size": "4"}),
        ([], {"total-size": "4"}),
    ])
    tms = answered("translation", script)
    got = walk(tms, "translation.list_submissions", page_size=2, statuses=["READY", "IN_PROCESS"])
    assert got == [rows(2), rows(2, 2), []]
    assert [q["pageNumber"] for q in script.queries] == ["0", "1", "2"]
    assert all(q["statuses"] == "READY,IN_PROCESS" and q["pageSize"] == "2" for q in script.queries)


def test_page_numbers_stop_on_a_short_page():
    script = Pages("GET", "/rest/v0/submissions/claimable",
                   [(rows(2), {}), (rows(1, 2), {})])
    tms = answered("translation", script)
    assert walk(tms, "translation.list_claimable_submissions", page_size=2, phase_name="Translation") == \
        [rows(2), rows(1, 2)]
    assert all(q["phaseName"] == "Translation" for q in script.queries)


def test_page_numbers_stop_on_an_empty_page():
    script = Pages("GET", "/rest/v0/submissions",
                   [(rows(2), {}), (rows(2, 2), {}), ([], {})])
    tms = answered("translation", script)
    assert sum(walk(tms, "translation.list_submissions", page_size=2), []) == rows(4)
    assert [q["pageNumber"] for q in script.queries] == ["0", "1", "2"]


def test_a_page_that_does_not_advance_raises_instead_of_looping():
    # a service that ignores pageNumber and sends no total: the same full page would come forever
    script = Pages("GET", "/rest/v0/submissions", [(rows(2), {})] * 3)
    tms = answered("translation", script)
    with pytest.raises(PagingError, match="page 2 of the walk is page 1 again"):
        walk(tms, "translation.list_submissions", page_size=2)
    assert len(script.queries) == 2


def test_the_repeat_page_guard_tells_pages_apart_by_every_byte():
    """Pages of one length that differ in one byte anywhere are different pages; the same bytes again,
    in another object, are a repeat (paging.Watch's digest)."""
    style = PageNumber(page="pageNumber", size="pageSize")
    page = json.dumps(rows(500)).encode()
    watch = Watch("translation.list_submissions", style)
    for n, at in enumerate([0, 1, len(page) // 2, len(page) - 2]):
        changed = bytearray(page)
        changed[at] = ord(" ") if page[at:at + 1] != b" " else ord("\t")
        watch.asking({"pageNumber": n})
        watch.answered({"pageNumber": n}, [1], bytes(changed))
    watch.asking({"pageNumber": 4})
    watch.answered({"pageNumber": 4}, [1], page)
    watch.asking({"pageNumber": 5})
    with pytest.raises(PagingError, match="page 6 of the walk is page 5 again"):
        watch.answered({"pageNumber": 5}, [1], bytes(bytearray(page)))


def test_offset_walk_stops_at_total_size_in_the_body():
    url = "/api/v2/audiences"
    script = Pages("GET", url, [
        ({"list": rows(2), "offset": 0, "pageSize": 2, "totalSize": 5}, {}),
        ({"list": rows(2, 2), "offset": 2, "pageSize": 2, "totalSize": 5}, {}),
        ({"list": rows(1, 4), "offset": 4, "pageSize": 2, "totalSize": 5}, {}),
    ])
    audience = answered("audience_platform", script)
    got = walk(audience, "audience_platform.list_audiences", size=2, tags="vip,!test", sort="name:asc")
    assert sum(got, []) == rows(5)
    assert [q["offset"] for q in script.queries] == ["0", "2", "4"]
    assert all(q["tags"] == "vip,!test" and q["sort"] == "name:asc" and q["size"] == "2" for q in script.queries)


def test_offset_walk_asks_once_more_when_the_total_is_reached_on_a_full_page():
    script = Pages("GET", "/api/v2/schemas/profile/properties", [
        ({"list": rows(2), "totalSize": 4}, {}), ({"list": rows(2, 2), "totalSize": 4}, {}),
        ({"list": [], "totalSize": 4}, {}),
    ])
    audience = answered("audience_platform", script)
    assert len(audience.rows("audience_platform.list_profile_properties", size=2)) == 4
    assert len(script.queries) == 3       # the full page at the total is followed by one more request


def test_offset_walk_accepts_a_bare_array():
    script = Pages("GET", "/api/v1/audiences",
                   [(rows(2), {}), (rows(1, 2), {})])
    audience = answered("audience_platform", script)
    got = walk(audience, "audience_platform.list_audience_metadata", version="v1", size=2, names="Newsletter")
    assert got == [rows(2), rows(1, 2)]
    assert [q["offset"] for q in script.queries] == ["0", "2"]
    assert all(q["names"] == "Newsletter" for q in script.queries)


def test_offset_walk_with_size_minus_one_is_one_request():
    script = Pages("GET", "/api/v2/ext/warehouse/query/audience",
                   [({"list": rows(7), "totalSize": 7}, {})])
    audience = answered("audience_platform", script)
    assert len(audience.rows("audience_platform.list_warehouse_audience_queries", size=-1)) == 7
    assert script.queries == [{"offset": "0", "size": "-1"}]


def test_offset_walk_stops_on_an_empty_page():
    script = Pages("GET", "/api/v2/metrics",
                   [(rows(2), {}), ([], {})])
    audience = answered("audience_platform", script)
    assert len(audience.rows("audience_platform.get_metric", metric_id="profiles.created", size=2)) == 2
    assert len(script.queries) == 2 and all(q["metricId"] == "profiles.created" for q in script.queries)


def test_notification_cap_pages_through_everything_with_size_minus_one():
    url = "/api/v2/notifications"
    script = Pages("GET", url, [(rows(1000), {}), (rows(1000, 1000), {}), (rows(500, 2000), {})])
    audience = answered("audience_platform", script)
    got = audience.rows("audience_platform.list_notifications", size=-1, filter="read:false")
    assert got == rows(2500)
    assert [(q["offset"], q["size"]) for q in script.queries] == [("0", "-1"), ("1000", "1000"), ("2000", "1000")]
    assert all(q["filter"] == "read:false" for q in script.queries)


def test_notification_pages_are_never_larger_than_the_cap():
    script = Pages("GET", "/api/v2/notifications",
                   [({"list": rows(3), "totalSize": 3}, {})])
    audience = answered("audience_platform", script)
    audience.rows("audience_platform.list_notifications")
    assert script.queries[0]["size"] == "1000"


def test_unpaged_list_is_one_request():
    script = Pages("GET", "/assets/a1/versions",
                   [({"data": rows(3), "total": 3}, {})])
    assets = answered("asset_library", script)
    assert walk(assets, "asset_library.list_asset_versions", asset_id="a1") == [rows(3)]
    assert len(script.queries) == 1


def test_page_objects_carry_the_answer():
    script = Pages("GET", "/rest/v0/submissions", [(rows(1), {"total-size": "1"})])
    tms = answered("translation", script)
    page = next(tms.pages("translation.list_submissions"))
    assert page.rows == rows(1) and page.body == rows(1)
    assert page.response.headers["total-size"] == "1"
    assert page.params == {"page_number": 0, "page_size": 200}


def test_pages_of_an_action_that_is_not_a_list(assets):
    with pytest.raises(ToolkitError, match="not a list action"):
        next(assets.pages("asset_library.get_asset", asset_id="a1"))


def test_every_page_request_is_checked():
    assets = answered("asset_library", Pages("GET", "/assets", []))
    with pytest.raises(ToolkitError, match="limit=900"):
        next(assets.pages("asset_library.list_assets", limit=900))
    assert assets.transport.session.sent == []


# --- asking for pages ahead -------------------------------------------------------------------------------

class ByPage:
    """Answers each GET of `path` by the page it names (requests ahead arrive in any order)."""

    def __init__(self, path: str, param: str, answers: dict) -> None:
        self.path, self.param, self.answers, self.asked = path, param, answers, []

    def __call__(self, request):
        asked = urlsplit(request.url)
        if request.method != "GET" or not asked.path.endswith(self.path):
            raise AssertionError(f"{request.method} {asked.path} was not expected: only GET {self.path}")
        page = parse_qs(asked.query)[self.param][0]
        self.asked.append(page)
        body, headers = self.answers.get(page, ([], {}))
        return reply(200, json.dumps(body), headers)


def test_page_numbers_asked_ahead_give_the_pages_of_a_walk_one_at_a_time():
    answers = {str(n): (rows(2, 2 * n), {"total-size": "9"}) for n in range(4)}
    answers["4"] = (rows(1, 8), {"total-size": "9"})
    script = ByPage("/rest/v0/submissions", "pageNumber", answers)
    tms = answered("translation", script)
    one_at_a_time = walk(tms, "translation.list_submissions", page_size=2)
    asked = len(script.asked)
    ahead = [page.rows for page in tms.pages("translation.list_submissions", page_size=2, ahead=3)]
    assert ahead == one_at_a_time and sum(ahead, []) == rows(9)
    assert sorted(script.asked[asked:]) == ["0", "1", "2", "3", "4"]   # none past the total


def test_offsets_asked_ahead_give_the_pages_of_a_walk_one_at_a_time():
    answers = {str(o): ({"list": rows(min(2, 7 - o), o), "totalSize": 7}, {}) for o in range(0, 8, 2)}
    script = ByPage("/api/v2/audiences", "offset", answers)
    audience = answered("audience_platform", script)
    one_at_a_time = walk(audience, "audience_platform.list_audiences", size=2)
    ahead = [page.rows for page in audience.pages("audience_platform.list_audiences", size=2, ahead=4)]
    assert ahead == one_at_a_time and sum(ahead, []) == rows(7)


def test_a_short_page_drops_the_pages_asked_ahead_of_it():
    # the total says 8, but the data moved: page 1 comes back short, so the walk ends there
    answers = {"0": (rows(2), {"total-size": "8"}), "1": (rows(1, 2), {"total-size": "8"}),
               "2": (rows(2, 90), {"total-size": "8"}), "3": (rows(2, 92), {"total-size": "8"})}
    script = ByPage("/rest/v0/submissions", "pageNumber", answers)
    tms = answered("translation", script)
    ahead = [page.rows for page in tms.pages("translation.list_submissions", page_size=2, ahead=3)]
    assert ahead == [rows(2), rows(1, 2)]
    assert "2" in script.asked            # it was asked for ahead, and its rows dropped


def test_a_cursor_walk_does_not_ask_ahead():
    script = Pages("GET", "/assets", [
        ({"data": rows(2), "pagination": {"hasMore": True, "cursor": "c1"}}, {}),
        ({"data": rows(2, 2), "pagination": {"hasMore": False}}, {}),
    ])
    assets = answered("asset_library", script)
    assert [page.rows for page in assets.pages("asset_library.list_assets", limit=2, ahead=5)] == [rows(2), rows(2, 2)]
    assert len(script.queries) == 2


def test_absent_names_what_the_declared_style_reads_and_the_answer_lacks():
    from toolkit.catalog.paging import absent
    cursor = Cursor()
    assert absent(cursor, {"data": [], "pagination": {"hasMore": False, "cursor": None}}, {}) == []
    assert absent(cursor, {"items": [], "pagination": {"hasMore": True}}, {}) == ["data", "pagination.cursor"]
    assert absent(cursor, {"data": {"not": "a list"}, "pagination": {"hasMore": False, "cursor": None}}, {}) \
        == ["data"]
    offset = Offset()
    assert absent(offset, [{"id": 1}], {}) == [], "a bare array is an offset answer too"
    assert absent(offset, {"list": [], "totalCount": 3}, {}) == ["totalSize"]
    pages = PageNumber(total_header="total", pages_header="total-pages")
    assert absent(pages, [], {"Total": "3", "Total-Pages": "1"}) == [], "headers are matched in any case"
    assert absent(pages, [], {"x-total-count": "3"}) == ["header total", "header total-pages"]
    assert absent(Unpaged(items="data"), {"rows": []}, {}) == ["data"]
    assert absent(Unpaged(), [], {}) == [] and absent(None, {}, {}) == []
