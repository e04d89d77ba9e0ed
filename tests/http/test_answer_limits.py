"""What one answer may cost, against a hostile server on 127.0.0.1 (toolkit.http.limits): a decompression
bomb, a body that never ends, a page larger than the limit, a trickle, a long Retry-After, JSON nested
100,000 deep. Each ends in one LimitError (or RateLimitError) naming the limit and how to raise it, the
load failed and the view as it was; the memory a bomb costs is measured in a process of its own.

The limits here are small so that the tests are quick; benchmarks/faults.py measures the real sizes.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import random
import subprocess
import sys
import time
import zlib

import pytest
from hostile_service import STYLES, held, outcome, quick, serve, with_clean_load

import toolkit
from toolkit.errors import LimitError, RateLimitError, ValidationError
from toolkit.http.limits import _NOT_STRUCTURE, Limits, _nests_past, depth_past
from toolkit.http.session import RetryPolicy

MiB = 1 << 20


@functools.cache
def bomb(encoding: str, inflated: int = 256 * MiB) -> bytes:
    """A page's beginning, then spaces: `inflated` bytes once decoded, about a thousandth of it sent."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    parts = [packer.compress(b'{"data": [')]
    block = b" " * MiB
    parts += [packer.compress(block) for _ in range(inflated // MiB)]
    return b"".join([*parts, packer.flush()])


def endless(handler) -> None:
    """A chunked body that never ends: the start of a page, then spaces, until the client goes."""
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    piece = b" " * (256 * 1024)
    handler.wfile.write(b'a\r\n{"data": [\r\n')
    while True:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))


def trickle(handler, every: float = 0.2) -> None:
    """A page that says 100,000 bytes and sends one every `every` seconds."""
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for _ in range(100_000):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(every)


def trickled_headers(handler, every: float = 0.2) -> None:
    """An answer whose headers come one byte every `every` seconds, and never end."""
    handler.flush_headers()           # the status line, then a header that never ends
    handler.wfile.write(b"X-Slow: ")
    while True:
        handler.wfile.write(b"a")
        handler.wfile.flush()
        time.sleep(every)


def on_the_second_fetch(fault):
    """The tags' honest pages for the first walk (3 pages of 500), `fault` for every list request after."""
    def answer(query, n, honest, start, size):
        return fault if n > 3 else None
    return answer


def limited(hostile, tmp_path, fault, sleep=lambda seconds: None, **limits):
    """A workspace holding one clean load of the asset library's tags, and a connection with `limits`
    to a server whose every page is then `fault`."""
    style = STYLES["cursor"]
    ws, conn, server = with_clean_load(hostile, style, tmp_path, lambda *a: fault)
    base = f"http://127.0.0.1:{server.server_address[1]}{style.base}"
    conn = ws.connect(style.service, base_url=base, **style.credentials,
                      transport=quick(limits=Limits.resolved(**limits), sleep=sleep))
    return ws, conn, style


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_decompression_bomb_stops_at_the_limit(hostile, tmp_path, encoding):
    ws, conn, style = limited(hostile, tmp_path, (200, {"Content-Encoding": encoding}, bomb(encoding)),
                              max_answer_bytes=4 * MiB)
    began = time.monotonic()
    outcome(ws, conn, style, LimitError)
    error = ws.loads().iloc[-1]["error"]
    assert "past the limit of 4,194,304 bytes (after decoding)" in error
    assert "max_answer_bytes" in error and "TOOLKIT_MAX_ANSWER_BYTES" in error
    assert time.monotonic() - began < 5        # 4 MiB inflated, not 256


def test_a_body_that_never_ends_stops_at_the_limit(hostile, tmp_path):
    ws, conn, style = limited(hostile, tmp_path, (200, {}, endless), max_answer_bytes=4 * MiB)
    outcome(ws, conn, style, LimitError)
    assert "past the limit of 4,194,304 bytes" in ws.loads().iloc[-1]["error"]


def test_a_page_that_says_it_is_larger_than_the_limit_is_not_read(hostile, tmp_path):
    page = b'{"data": [' + b" " * (8 * MiB) + b"]}"
    ws, conn, style = limited(hostile, tmp_path, (200, {}, page), max_answer_bytes=4 * MiB)
    outcome(ws, conn, style, LimitError)
    assert f"says it holds {len(page):,} bytes" in ws.loads().iloc[-1]["error"]


CHILD = """
import json, sys, toolkit
ws = toolkit.Workspace(sys.argv[2])
conn = ws.connect("asset_library", base_url=sys.argv[1], api_key="hostile-key", workspace_id="w1",
                  max_answer_bytes=int(sys.argv[3]))
conn.fetch("tags", progress=False)           # the clean walk: every module loaded, DuckDB warmed
before = int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1])
try:
    conn.fetch("tags", progress=False)
    said = "no error"
except toolkit.LimitError as error:
    said = str(error)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child of a large pytest worker starts
# with the worker's peak (460 MiB under xdist); VmHWM belongs to this process's own memory
peak = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
print(json.dumps({"grew": (peak - before) * 1024, "said": said,
                  "view": ws.sql("select count(*) from asset_library.tags").fetchone()[0]}))
"""


@pytest.mark.parametrize("kind", ["gzip bomb", "endless body", "large page"])
def test_the_memory_one_answer_takes_is_the_limit_and_a_fixed_margin(hostile, tmp_path, kind):
    """Measured in a process of its own: its peak RSS grows by at most the limit and 48 MiB (the piece
    being read, the decoder's buffers, the allocator's slack) whatever the service sends; without the
    limit, the bomb alone took 256 MiB here (7.2 GB with the sweep's 4 GiB one)."""
    limit = 16 * MiB
    fault = {"gzip bomb": (200, {"Content-Encoding": "gzip"}, bomb("gzip")), "endless body": (200, {}, endless),
             "large page": (200, {"Transfer-Encoding": "chunked"}, lambda h: endless_of(h, 128 * MiB))}[kind]
    style = STYLES["cursor"]
    server = serve(hostile, style, on_the_second_fetch(fault))
    base = f"http://127.0.0.1:{server.server_address[1]}{style.base}"
    done = subprocess.run([sys.executable, "-c", CHILD, base, str(tmp_path / "ws.duckdb"), str(limit)],
                          capture_output=True, timeout=120, check=False,
                          env=dict(os.environ, TOOLKIT_TYPING_HELPER="0"))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    found = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "past the limit of 16,777,216 bytes" in found["said"] and found["view"] == len(style.rows)
    assert found["grew"] < limit + 48 * MiB, f"{kind}: grew {found['grew'] / MiB:.0f} MiB"
    print(f"{kind}: peak RSS grew {found['grew'] / MiB:.1f} MiB with a limit of {limit / MiB:.0f} MiB")


def endless_of(handler, size: int) -> None:
    """A chunked page of `size` bytes, then its end."""
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    piece = b" " * MiB
    handler.wfile.write(b'a\r\n{"data": [\r\n')
    for _ in range(size // MiB):
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
    handler.wfile.write(b"2\r\n]}\r\n0\r\n\r\n")


@pytest.mark.parametrize("where", ["body", "headers"])
def test_a_trickle_ends_at_the_deadline_in_one_line(hostile, tmp_path, where):
    ws, conn, style = limited(hostile, tmp_path, (200, {}, trickle if where == "body" else trickled_headers),
                              deadline=1.5)
    began = time.monotonic()
    outcome(ws, conn, style, LimitError)
    took = time.monotonic() - began
    error = ws.loads().iloc[-1]["error"]
    assert 1.5 <= took < 4, took        # once: a deadline is not tried again
    assert "within the deadline of 1.5 s" in error and "TOOLKIT_REQUEST_DEADLINE" in error
    assert "\n" not in error.strip()


def test_a_retry_after_past_the_longest_wait_fails_at_once_saying_what_to_do(hostile, tmp_path):
    ws, conn, style = limited(hostile, tmp_path, (429, {"Retry-After": "119"}, b'{"message": "slow down"}'),
                              max_retry_after=5, sleep=time.sleep)
    began = time.monotonic()
    outcome(ws, conn, style, RateLimitError)
    assert time.monotonic() - began < 2
    error = ws.loads().iloc[-1]["error"]
    assert "asks to wait 119 s, longer than this client's max_retry_after of 5 s" in error
    assert "TOOLKIT_MAX_RETRY_AFTER" in error


def test_a_retry_after_within_the_longest_wait_is_said_and_waited(hostile, tmp_path, caplog):
    style = STYLES["cursor"]
    asked = []

    def fault(query, n, honest, start, size):
        asked.append(time.monotonic())
        return (429, {"Retry-After": "1"}, b"{}") if len(asked) == 2 else None

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault, retry=RetryPolicy(attempts=3, loud_wait=1.0),
                                       sleep=time.sleep)
    with caplog.at_level(logging.INFO, logger="toolkit.http.session"):
        outcome(ws, conn, style, None)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "429; waiting 1 s (until " in said[0], said
    assert "as the service asks (Retry-After)" in said[0] and "TOOLKIT_MAX_RETRY_AFTER" in said[0]
    assert asked[2] - asked[1] >= 1.0


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("where", ["field", "body"])
def test_json_nested_100000_deep_fails_the_load_in_one_line(hostile, style, tmp_path, where):
    def fault(query, n, honest, start, size):
        if start != style.page_size:
            return None
        status, headers, body = honest()
        if where == "body":
            return status, headers, ("[" * 100_000 + "]" * 100_000).encode()
        at = body.index(b"{", 1 if body.startswith(b"[") else body.index(b"[") + 1)
        return status, headers, body[:at + 1] + f'"deep": {nested(100_000)}, '.encode() + body[at + 1:]

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    outcome(ws, conn, style, LimitError)
    error = ws.loads().iloc[-1]["error"]
    assert "nests deeper than 128 arrays and objects" in error and "TOOLKIT_MAX_DEPTH" in error
    assert held(ws, style) == len(style.rows)
    second = [q for path, q in server.asked if path == style.path and style.window(q)[0] == style.page_size]
    assert len(second) == 1             # not asked again: the same answer would come


def test_json_nested_within_the_limit_is_kept_in_extra(hostile, style, tmp_path):
    def fault(query, n, honest, start, size):
        status, headers, body = honest()
        if start != style.page_size:
            return None
        at = body.index(b"{", 1 if body.startswith(b"[") else body.index(b"[") + 1)
        return status, headers, body[:at + 1] + f'"deep": {nested(120)}, '.encode() + body[at + 1:]

    ws, conn, server = with_clean_load(hostile, style, tmp_path, fault)
    frame = outcome(ws, conn, style, None)
    kept = [json.loads(x)["deep"] for x in frame["extra"].dropna() if "deep" in x]
    assert len(kept) == 1 and json.dumps(kept[0]) == nested(120)


def test_depth_is_counted_outside_strings():
    assert not depth_past(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[", "b": [1, [2]]}', 3)
    assert not depth_past(b'["\\"[[[[[[[[", "\\\\", [[1]]]', 3)
    assert depth_past(b'["\\\\", [[[1]]]]', 3)
    assert depth_past(nested(4).encode(), 3) and not depth_past(nested(3).encode(), 3)
    assert not depth_past(b"[[[[[[", 3) and not depth_past(b"<html>", 3)      # not JSON: the parser says


@pytest.mark.parametrize("text, limit, deeper", [
    (b'{"a": "[{[{", "b": [[1]]}', 3, False),       # brackets inside strings count nothing
    (b'{"a": "[{[{", "b": [[1]]}', 2, True),        # an object and two arrays: 3 deep
    (b'[{' * 65 + b'}]' * 65, 129, True),            # each round takes one level, `[]` or `{}`
    (b'[{' * 65 + b'}]' * 65, 130, False),
    (b'[["[", [[1]], "]"]]', 3, True),
    (b'[1, "a""[[[[", [2]]', 2, False),              # adjacent strings
    (b'[[[ "[ ]]]', 1, False),                        # a quote left open: the rounds decide, as always
    (b'1}"}[[[{""}""]', 1, True),                    # odd quotes after an empty string's pair
    (b']]]]' + b'[' * 6 + b']' * 6, 4, True),         # a closing bracket first: not JSON, still counted
    (b'[}{]' * 50, 2, False),                        # brackets that never pair
    (b'', 3, False),
])
def test_depth_is_counted_the_same_by_the_quick_sum_and_the_exact_rounds(text, limit, deeper):
    """The running sum answers within the limit, the rounds past it (toolkit.http.limits.depth_past):
    malformed text, quotes and strings give what the rounds alone gave."""
    assert depth_past(text, limit) is deeper


def _value(draw: random.Random, depth: int) -> object:
    """A JSON value nesting `depth` deep, its strings full of what the count must not take for structure."""
    if depth == 0:
        return draw.choice([1, None, "", "x", '"', "\\", "[", "]]", "{[", '\\"{', '"[', "[]{}", 2.5])
    inner = [_value(draw, depth - 1)] + [_value(draw, draw.randrange(depth)) for _ in range(draw.randrange(3))]
    draw.shuffle(inner)
    return inner if draw.random() < 0.5 else {f"k{i}[" if i % 2 else f'"{i}': v for i, v in enumerate(inner)}


def test_depth_of_json_with_brackets_and_quotes_in_its_strings():
    """The count against the depth the value was made with: strings of brackets, quotes and escapes
    (escaped, adjacent, empty) count nothing, and a value one deeper than the limit is refused."""
    draw = random.Random(48)
    for _ in range(600):
        depth = draw.randrange(1, 9)
        text = json.dumps([_value(draw, depth - 1), "[[[[[[[[[[", ""], separators=(",", ":")).encode()
        assert depth_past(text, depth) is False and depth_past(text, depth - 1) is True, text


def test_depth_of_any_text_is_what_the_exact_rounds_say():
    """Malformed text too (quotes left open, brackets unpaired, stray escapes): the quick count gives
    what the exact rounds over the text's quotes and brackets give."""
    draw = random.Random(480)
    for _ in range(4000):
        text = bytes(draw.choice(b'[]{}""\\ a') for _ in range(draw.randrange(40)))
        limit = draw.randrange(1, 5)
        kept = text.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
        assert depth_past(text, limit) is _nests_past(kept, limit), text


def test_limits_come_from_the_arguments_then_the_environment(monkeypatch):
    monkeypatch.setenv("TOOLKIT_REQUEST_DEADLINE", "45")
    monkeypatch.setenv("TOOLKIT_MAX_DEPTH", "64")
    assert Limits.resolved(max_depth=32) == Limits(deadline=45.0, max_depth=32)
    monkeypatch.setenv("TOOLKIT_MAX_ANSWER_BYTES", "lots")
    with pytest.raises(ValidationError, match="TOOLKIT_MAX_ANSWER_BYTES='lots': must be a positive whole number"):
        Limits.resolved()
    monkeypatch.delenv("TOOLKIT_MAX_ANSWER_BYTES")
    with pytest.raises(ValidationError, match="max_depth=1000: must be at most 250"):
        toolkit.connect("asset_library", base_url="http://127.0.0.1:9", api_key="k", workspace_id="w", max_depth=1000)
