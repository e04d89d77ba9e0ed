"""A hostile server on 127.0.0.1: answers that lie, loop, break or repeat, for each paging style.

Every case either completes with every row the server served, or fails the load (recorded as failed,
the view keeping the last complete load): never a complete load with fewer rows than were served.
"""
from __future__ import annotations

import json
import warnings

import pytest
from hostile_service import STYLES, _notifications, _tags, connected, held, outcome, serve, with_clean_load

import toolkit
from toolkit.errors import AnswerError, PagingError

# --- 1. a page that is not JSON is never an empty page ----------------------------------------------------

BROKEN = {
    "html": (200, {"Content-Type": "text/html"}, b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "empty": (200, {}, b""),
    "cut": None,          # the honest page cut in half
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_second_page_that_is_not_json_fails_the_load_and_the_view_keeps_the_last(hostile, style, tmp_path, kind):
    def fault(query, n, honest, start, size):
        if start == 0:
            return None
        if kind == "cut":
            status, headers, body = honest()
            return status, headers, body[:len(body) // 2]
        return BROKEN[kind]

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, AnswerError)
    assert held(ws, style) == len(style.rows)
    error = ws.loads().iloc[-1]["error"]
    assert "AnswerError" in error and "not JSON after 3 tries" in error
    asked_second = [q for path, q in server.asked if path == style.path and style.window(q)[0] == style.page_size]
    assert len(asked_second) == 3         # asked again like a 5xx, then given up


def test_a_proxy_page_served_once_is_asked_again_and_the_load_completes(hostile, style, tmp_path):
    def fault(query, n, honest, start, size):
        return BROKEN["html"] if n == 2 else None

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    outcome(ws, conn, style, None)


def test_numbers_past_a_double_or_64_bits_keep_their_digits(hostile, style, tmp_path):
    huge = b'"huge": 1e400, "long": 123456789012345678901234567890, '

    def fault(query, n, honest, start, size):
        status, headers, body = honest()
        if start != style.page_size:
            return None
        # the first row of the second page gains two numbers no float or int64 holds
        at = body.index(b"{", 1 if body.startswith(b"[") else body.index(b"[") + 1)
        return status, headers, body[:at + 1] + huge + body[at + 1:]

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    frame = outcome(ws, conn, style, None)
    extra = [json.loads(x) for x in frame["extra"].dropna() if "huge" in x]
    assert extra == [{"huge": "1e400", "long": "123456789012345678901234567890"}]


@pytest.fixture(params=["here", "helper"])
def typed_where(request, monkeypatch):
    """Pages typed in this process, or every page sent to the typing helper (a long walk's way)."""
    from toolkit.pull import typist
    if request.param == "helper":
        monkeypatch.setenv("TOOLKIT_TYPING_HELPER", "1")
        monkeypatch.setattr(typist, "START_AFTER_PAGES", 1)
        monkeypatch.setattr(typist, "SMALLEST_PAGE", 0)
        typist.stop()
        typist._start()
        typist._helper.ready.result(timeout=60)
        yield request.param
        typist.stop()
    else:
        yield request.param


def test_a_number_past_a_double_in_a_declared_field_is_its_text_in_every_walk(hostile, style, tmp_path, typed_where):
    """Issue 45: the offset walk typed by the helper ended in a raw JSONDecodeError where the cursor walk
    kept the page; 1e400 means one thing everywhere: the text the service wrote, told as drift."""
    field = {"cursor": "name", "offset": "created", "page_number": "submissionId", "bare_array": "name"}[style.name]

    def fault(query, n, honest, start, size):
        status, headers, body = honest()
        if start != style.page_size:
            return None
        at = body.index(f'"{field}": '.encode()) + len(field) + 4
        end = min(body.index(b",", at), body.index(b"}", at))
        return status, headers, body[:at] + b"1e400" + body[end:]

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    frame = outcome(ws, conn, style, None)
    said = [d for d in json.loads(ws.loads().iloc[-1]["drift"]) if d["example"] == '"1e400"']
    if style.name in ("cursor", "bare_array"):      # a text field: the text
        assert frame["name"].tolist().count("1e400") == 1 and not said
    else:                                           # a number or a time: kept as drift, said once
        assert said == [{"field": field, "kind": "type", "count": 1, "example": '"1e400"'}]


def test_a_lone_surrogate_is_kept_as_the_replacement_character(hostile, style, tmp_path):
    field = "message" if style.name == "offset" else "name"

    def fault(query, n, honest, start, size):
        status, headers, body = honest()
        return (status, headers, body.replace(f'"{field}": "'.encode(), f'"{field}": "\\ud800'.encode(), 1)) \
            if start == style.page_size else None

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    frame = outcome(ws, conn, style, None)
    assert frame[field].str.startswith("\ufffd").sum() == 1


# --- 2. a total that disagrees with the rows is drift, not the end of the data ---------------------------

@pytest.mark.parametrize("total", [5, 50, 999_999])
@pytest.mark.parametrize("name", ["offset", "page_number"])
def test_a_total_that_lies_is_drift_and_every_row_is_kept(hostile, tmp_path, name, total):
    style = STYLES[name]

    def fault(query, n, honest, start, size):
        return style.page(style.rows, start, size, total=total)

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome(ws, conn, style, None)
    drift = ws.drift(f"{style.service}.{style.resource}")
    envelope = drift[drift["kind"] == "envelope"]
    assert len(envelope) == 1 and f"said {total:,} rows" in envelope.iloc[0]["example"], envelope
    assert len([w for w in caught if issubclass(w.category, toolkit.DriftWarning)]) == 1


# --- 3. a walk that loops or runs away stops; a key is never stored twice ----------------------------------

def test_a_cursor_cycle_stops_with_a_paging_error(hostile, tmp_path):
    style = STYLES["cursor"]

    def fault(query, n, honest, start, size):
        # A -> B -> A: each cursor leads to the other, new rows each time
        cursor = {"c0": "A", "A": "B", "B": "A"}[query.get("cursor", "c0")]
        return style.page(_tags(10_000), n * 500, 500, cursor=cursor)

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, PagingError)
    assert len(server.asked) == 3 and "led the walk back" in ws.loads().iloc[-1]["error"]


@pytest.mark.parametrize("how", ["modulo", "ignored"])
def test_pages_that_come_back_again_stop_with_a_paging_error(hostile, style, tmp_path, how):
    if style.name == "cursor" and how == "modulo":
        pytest.skip("a cursor has no number to take modulo")

    def fault(query, n, honest, start, size):
        if how == "ignored":          # the paging param ignored: the first page, forever, saying more follow
            return style.page(style.rows * 100, 0, size, cursor=f"c{n * size}")
        page = (start // size) % 2
        return style.page(style.rows * 100, page * size, size)

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, PagingError)
    assert len(server.asked) <= 12       # a few pages, and those asked for ahead


def test_a_full_page_of_keys_seen_stops_even_when_its_bytes_differ(hostile, tmp_path):
    style = STYLES["page_number"]

    def fault(query, n, honest, start, size):
        rows = [{**row, "name": f"{row['name']} at request {n}"} for row in style.rows[:size]]
        return 200, {"total-size": "100000"}, json.dumps(rows).encode()

    ws, conn, _ = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, PagingError)
    assert "only rows the walk has had already" in ws.loads().iloc[-1]["error"]


def test_a_walk_that_runs_away_stops_at_its_ceiling(hostile, tmp_path):
    style = STYLES["offset"]

    def fault(query, n, honest, start, size):       # says 2,500 rows, gives new ones forever
        rows = [{**row, "id": f"n{start + i:07}"} for i, row in enumerate(_notifications(size))]
        return 200, {}, json.dumps({"list": rows, "offset": start, "pageSize": size, "totalSize": 2500}).encode()

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, PagingError)
    error = ws.loads().iloc[-1]["error"]
    assert "ceiling of 130 pages" in error and "2,500 rows the service says" in error
    assert 130 <= len(server.asked) <= 131     # the ceiling's pages, and perhaps one asked for ahead


def test_a_key_is_stored_once_the_later_row_wins(hostile, style, tmp_path):
    field = "message" if style.name == "offset" else "name"

    def fault(query, n, honest, start, size):
        if start != style.page_size:
            return None
        # the second page begins with the first page's first 25 rows again, changed (data that moved)
        rows = list(style.rows)
        rows[start:start + 25] = [{**row, field: "again"} for row in style.rows[:25]]
        return style.page(rows, start, size)

    ws, conn = connected(serve(hostile, style, fault), style, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = conn.fetch(style.resource, progress=False)
    key = toolkit.catalog.resource(style.service, style.resource).key[0]
    served = len(style.rows) - 25       # 25 rows were never served: their places held the repeats
    assert frame[key].is_unique and len(frame) == served == held(ws, style)
    assert (frame[field] == "again").sum() == 25
    drift = ws.drift(f"{style.service}.{style.resource}")
    assert drift[drift["kind"] == "duplicate_key"].iloc[0]["count"] == 25
    assert any("earlier rows of a repeated key" in str(w.message) for w in caught)


def test_a_field_name_holding_terminal_escapes_reaches_no_warning_or_error_raw(hostile, tmp_path):
    """A field `\x1b[2J...\nWARNING: all good` reached the DriftWarning as it was: it cleared the
    terminal and forged a line. It is shown escaped; its value is kept as data."""
    style = STYLES["cursor"]
    evil = "x\x1b[2J\x1b[H\nWARNING: all good\u202e"
    rows = [{**row, evil: "value"} for row in style.rows[:10]]

    def evil_page(query, n, honest, start, size):
        return style.page(rows, start, size)

    ws, conn = connected(serve(hostile, style, evil_page), style, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = conn.fetch(style.resource, progress=False)
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "x\\x1b[2J\\x1b[H\\nWARNING: all good\\u202e undeclared (10)" in said[0]
    assert not any(c in said[0] for c in "\x1b\n\u202e")
    assert len(frame) == 10 and evil in json.loads(frame["extra"].iloc[0]), "the data itself is kept"
    fail = toolkit.errors.error_for("asset_library", "asset_library.list_tags", 400, "message",
                                    {"message": "bad\x1b[31m\nWARNING: all good"})
    assert str(fail) == "asset_library.list_tags: 400 bad\\x1b[31m\\nWARNING: all good"
