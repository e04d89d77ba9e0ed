"""The sandbox under abuse: malformed framing, bodies too large or too slow, wrong content types,
numbers too wide and dot segments get the 4xx a real server gives, in time, with no traceback.

Driven with raw sockets: requests and urllib3 would fix the request (or resolve its dots) first.
"""
from __future__ import annotations

import socket
import time

import orjson
import pytest
import requests

BASE = "/toy/toy/api/v2"


def exchange(box, head: str, body: bytes = b"", wait: float = 5.0) -> tuple[int, dict, bytes, float, bool]:
    """Send `head` (lines joined with CRLF, the blank line added) and `body`; read one answer.

    (status, headers, body, seconds to the answer, whether the server closed the connection after).
    """
    with socket.create_connection(("127.0.0.1", box.port), timeout=wait) as sock:
        started = time.perf_counter()
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n\r\n" + body)
        status, headers, payload = read_answer(sock)
        elapsed = time.perf_counter() - started
        sock.settimeout(0.5)         # a refusal closes at once; a kept connection stays open
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
        except ConnectionResetError:
            closed = True
    return status, headers, payload, elapsed, closed


def read_answer(sock: socket.socket) -> tuple[int, dict, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        assert more, f"the connection closed without an answer (got {data!r})"
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", 0))
    while len(rest) < length:
        more = sock.recv(65536)
        assert more, "the connection closed in the middle of the answer"
        rest += more
    return int(lines[0].split()[1]), headers, rest[:length]


def message(payload: bytes) -> str:
    return orjson.loads(payload)["message"]


@pytest.fixture
def box(launch):
    return launch(read_timeout=0.5, max_body=1_000_000)


@pytest.fixture
def auth(box):
    return f"Authorization: Bearer {box.credentials('toy')['token']}"


@pytest.mark.parametrize(("length", "status", "words"), [
    ("abc", 400, "Content-Length"),
    ("-5", 400, "Content-Length"),
    ("2, 3", 400, "Content-Length"),
    ("", 400, "Content-Length"),
    ("1" * 40, 400, "Content-Length"),
    ("2000000", 413, "larger than"),
])
def test_a_bad_content_length_is_answered_and_the_connection_closed(box, auth, capfd, length, status, words):
    answer, _, payload, elapsed, closed = exchange(
        box, f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json\n"
             f"Content-Length: {length}", b"{}")
    assert (answer, closed) == (status, True) and words in message(payload) and elapsed < 2
    assert "Traceback" not in capfd.readouterr().err


def test_a_repeated_content_length_of_one_value_is_taken(box, auth):
    status, _, payload, _, _ = exchange(
        box, f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json\n"
             "Content-Length: 9\nContent-Length: 9", b'{"n": 12}')
    assert status == 201 and orjson.loads(payload)["n"] == 12


@pytest.mark.parametrize(("extra", "body", "status"), [
    ("Transfer-Encoding: chunked", b"zz\r\n{}\r\n0\r\n\r\n", 400),                 # not hex
    ("Transfer-Encoding: chunked", b"-2\r\n{}\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding: chunked", b"2\r\n{}XX0\r\n\r\n", 400),                    # no CRLF after the chunk
    ("Transfer-Encoding: chunked", b"fffffffffffffffffff\r\n", 400),              # wider than any body
    ("Transfer-Encoding: chunked", b"100000\r\n" + b"x" * 10, 413),               # over max_body
    ("Transfer-Encoding: chunked\nContent-Length: 2", b"2\r\n{}\r\n0\r\n\r\n", 400),  # both: smuggling
    ("Transfer-Encoding: gzip, chunked", b"0\r\n\r\n", 501),
    ("", b"", 411),                                                                 # a POST with no length
])
def test_bad_framing_is_answered(box, auth, capfd, extra, body, status):
    head = f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json"
    answer, _, payload, elapsed, closed = exchange(box, head + ("\n" + extra if extra else ""), body)
    assert (answer, closed) == (status, True) and message(payload) and elapsed < 2
    assert "Traceback" not in capfd.readouterr().err


def test_a_good_chunked_body_with_extensions_and_trailers_is_read(box, auth):
    body = b'4;name=x\r\n{"n"\r\n4\r\n: 5}\r\n0\r\nX-Trailer: 1\r\n\r\n'
    status, _, payload, _, closed = exchange(
        box, f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json\n"
             "Transfer-Encoding: chunked", body)
    assert (status, closed) == (201, False) and orjson.loads(payload)["n"] == 5


@pytest.mark.parametrize(("head", "status"), [
    (f"GET {BASE}/things", 400),                                 # no version
    (f"GET {BASE}/things HTTP/1.1 extra", 400),
    (f"G(T {BASE}/things HTTP/1.1", 400),
    (f"GET {BASE}/things HTTP/2.0", 505),
    (f"GET {BASE}/things HTTP/1.1\nBad Header: x", 400),       # a space in a name
    (f"GET {BASE}/things HTTP/1.1\n folded: x", 400),
    (f"GET {BASE}/things HTTP/1.1\nNoColon", 400),
    (f"GET {BASE}/things HTTP/1.1\nX-Long: {'a' * 70000}", 431),
    (f"GET {BASE}/things HTTP/1.1\n" + "\n".join(f"X-{n}: {n}" for n in range(101)), 431),
    (f"GET {'/a' * 40000} HTTP/1.1", 414),
])
def test_a_malformed_head_is_answered(box, capfd, head, status):
    answer, _, payload, elapsed, closed = exchange(box, head)
    assert (answer, closed) == (status, True) and message(payload) and elapsed < 2
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_shorter_than_announced_is_a_408_within_the_read_timeout(box, auth, capfd):
    status, _, payload, elapsed, closed = exchange(
        box, f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json\n"
             "Content-Length: 100", b'{"n": 1')
    assert (status, closed) == (408, True) and "0.5 s" in message(payload)
    assert 0.4 < elapsed < 2
    assert "Traceback" not in capfd.readouterr().err


def test_a_head_that_stops_arriving_is_a_408(box):
    with socket.create_connection(("127.0.0.1", box.port), timeout=5) as sock:
        started = time.perf_counter()
        sock.sendall(f"GET {BASE}/things HTTP/1.1\r\nHost: x\r\n".encode())    # no blank line
        status, _, _ = read_answer(sock)
        assert status == 408 and time.perf_counter() - started < 2


def test_an_idle_kept_alive_connection_is_closed_and_clients_reconnect(launch):
    box = launch(idle_timeout=0.3)
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('toy')['token']}"
    with socket.create_connection(("127.0.0.1", box.port), timeout=5) as sock:
        started = time.perf_counter()
        assert sock.recv(1) == b"" and time.perf_counter() - started < 2     # closed, no answer
    assert session.get(f"{box.url('toy')}/api/v2/things/t0001", timeout=5).status_code == 200
    time.sleep(0.6)
    assert session.get(f"{box.url('toy')}/api/v2/things/t0002", timeout=5).status_code == 200


def test_a_large_body_is_refused_by_its_head_before_it_is_read(box, auth):
    """413 on the announced length alone: the client gets it without sending a byte of the body."""
    status, _, payload, elapsed, closed = exchange(
        box, f"POST {BASE}/upload HTTP/1.1\nHost: x\n{auth}\nContent-Type: multipart/form-data; boundary=b\n"
             "Content-Length: 50000000")
    assert (status, closed) == (413, True) and "1,000,000" in message(payload) and elapsed < 1


def test_credentials_are_checked_before_a_body_is_read(launch):
    box = launch(read_timeout=5)                     # the default 32 MiB limit
    status, _, payload, elapsed, closed = exchange(
        box, f"POST {BASE}/upload HTTP/1.1\nHost: x\nContent-Type: multipart/form-data; boundary=b\n"
             "Content-Length: 20000000\nExpect: 100-continue")
    assert (status, closed) == (401, True) and "credentials" in message(payload)
    assert elapsed < 1                               # answered at once, not after 20 MB or a timeout
    assert box.stats()["by_action"]["toy.upload"] == 1


def test_requests_sees_the_413_of_a_body_it_sends_whole(box):
    answer = requests.post(f"{box.url('toy')}/api/v2/upload", files={"file": ("a.bin", b"x" * 1_500_000)},
                           headers={"Authorization": f"Bearer {box.credentials('toy')['token']}"}, timeout=10)
    assert answer.status_code == 413


def test_the_body_limit_takes_the_largest_upload_the_toolkit_sends(launch):
    """The default limit holds a 6 MiB multipart part, the largest the seeds and tests send."""
    box = launch()
    blob = bytes(range(256)) * (6 * 1024 * 4)
    answer = requests.post(f"{box.url('toy')}/api/v2/upload", files={"file": ("a.zip", blob)},
                           headers={"Authorization": f"Bearer {box.credentials('toy')['token']}"}, timeout=30)
    assert answer.status_code == 200 and answer.json()[0]["size"] == len(blob)


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", None])
def test_a_body_of_a_content_type_the_action_does_not_take_is_a_415(box, auth, content_type):
    given = f"\nContent-Type: {content_type}" if content_type else ""
    status, _, payload, _, closed = exchange(
        box, f"POST {BASE}/things HTTP/1.1\nHost: x\n{auth}{given}\nContent-Length: 11", b'{"n": 1313}')
    assert status == 415 and "application/json" in message(payload) and "toy.create_thing" in message(payload)
    assert not closed                                # a small body is read and dropped: the connection stays
    things = box.emulator("toy").store["things"]
    assert not [t for t in things if t.get("n") == 1313]


def test_merge_patch_takes_its_own_type_and_json(box):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('toy')['token']}"
    url = f"{box.url('toy')}/api/v2/things/t0001"
    for kind in ("application/merge-patch+json", "application/json"):
        answer = session.patch(url, data=b'{"n": 70}', headers={"Content-Type": kind}, timeout=5)
        assert answer.status_code == 200, kind
    assert session.patch(url, data=b'{"n": 70}', headers={"Content-Type": "text/plain"},
                         timeout=5).status_code == 415


def test_a_refused_small_body_keeps_the_connection_for_the_next_request(box, auth):
    with socket.create_connection(("127.0.0.1", box.port), timeout=5) as sock:
        sock.sendall(f"POST {BASE}/things HTTP/1.1\r\nHost: x\r\n{auth}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: 2\r\n\r\n{{}}".encode())
        assert read_answer(sock)[0] == 415
        sock.sendall(f"GET {BASE}/things/t0001 HTTP/1.1\r\nHost: x\r\n{auth}\r\n\r\n".encode())
        status, _, payload = read_answer(sock)
        assert status == 200 and orjson.loads(payload)["id"] == "t0001"


@pytest.mark.parametrize("query", ["offset=1180591620717411303424", "offset=0&size=-1180591620717411303424",
                                   "offset=9223372036854775808", "offset=1" + "0" * 5000])
def test_a_query_number_too_wide_is_a_400(box, auth, query):
    status, _, payload, _, _ = exchange(box, f"GET {BASE}/offset?{query} HTTP/1.1\nHost: x\n{auth}")
    assert status == 400 and ("offset" in message(payload) or "size" in message(payload))


def test_the_widest_query_number_still_fits(box, auth):
    status, _, payload, _, _ = exchange(box, f"GET {BASE}/offset?offset=9223372036854775807 HTTP/1.1\n"
                                             f"Host: x\n{auth}")
    assert status == 200 and orjson.loads(payload)["offset"] == 2**63 - 1


@pytest.mark.parametrize(("method", "path", "segment"), [
    ("DELETE", f"{BASE}/things/t0003/children/..", ".."),          # would be DELETE /things/t0003
    ("DELETE", f"{BASE}/things/t0003/children/%2e%2e", "%2e%2e"),
    ("DELETE", f"{BASE}/things/t0003/children/%2E%2e", "%2E%2e"),
    ("DELETE", f"{BASE}/things/..", ".."),
    ("DELETE", f"{BASE}/things/.%2E", ".%2E"),
    ("GET", f"{BASE}/things/./t0003", "."),
    ("GET", f"{BASE}/things/%2e/t0003", "%2e"),
    ("GET", "/toy/toy/api/v2/../v1/things", ".."),
    ("GET", "/../toy/toy/api/v2/things", ".."),
])
def test_a_dot_segment_is_refused_never_resolved(box, auth, method, path, segment):
    status, _, payload, _, _ = exchange(box, f"{method} {path}?limit=1 HTTP/1.1\nHost: x\n{auth}")
    assert status == 400
    assert path in message(payload) and repr(segment) in message(payload)
    assert box.emulator("toy").store["things"].get("t0003") is not None


def test_a_dot_segment_with_a_body_is_refused_before_the_body(box, auth):
    status, _, payload, elapsed, closed = exchange(
        box, f"POST {BASE}/things/%2e%2e HTTP/1.1\nHost: x\n{auth}\nContent-Type: application/json\n"
             "Content-Length: 900000")
    assert (status, closed) == (400, True) and "dot segment" in message(payload) and elapsed < 1


def test_dots_inside_a_segment_are_a_plain_value(box, auth):
    box.emulator("toy").store["things"].add({"id": "a..b", "n": -2})
    box.emulator("toy").store["things"].add({"id": "...", "n": -3})
    for thing_id, n in (("a..b", -2), ("...", -3), ("%2e%2e%2e", -3)):
        status, _, payload, _, _ = exchange(box, f"GET {BASE}/things/{thing_id} HTTP/1.1\nHost: x\n{auth}")
        assert status == 200 and orjson.loads(payload)["n"] == n


def test_a_target_that_is_not_a_path_is_a_400(box):
    status, _, payload, _, _ = exchange(box, "GET * HTTP/1.1\nHost: x")
    assert status == 400 and "path" in message(payload)
