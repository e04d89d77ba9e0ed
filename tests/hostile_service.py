"""A hostile server on 127.0.0.1 speaking each paging style, for the tests of answers that lie, loop, break,
repeat (tests/http/test_hostile_answers.py) or cost too much (tests/http/test_answer_limits.py).

`answer(path, query)` gives (status, headers, body); a body that is a function writes the answer after its
status line itself (a stream, a trickle, a body that never ends).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

import toolkit
from toolkit.http.session import RetryPolicy, Transport


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer()

    def answer(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.server.asked.append((url.path, query))
        status, headers, body = self.server.answer(url.path, query)
        self.send_response(status)
        if callable(body):
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            try:
                body(self)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True      # the client stopped reading: what a limit does
            return
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def hostile():
    """`hostile(answer)`: the server's base URL, answering `answer(path, query) -> (status, headers, body)`."""
    servers = []

    def start(answer: Callable) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.answer, server.asked, server.daemon_threads = answer, [], True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


TOKEN = json.dumps({"access_token": "hostile-access", "token_type": "bearer", "expires_in": 3600}).encode()


class Style:
    """One paging style as a service speaks it: which resource, its rows, and a page's answer."""

    def __init__(self, name, service, resource, path, rows, base, credentials, page_size):
        self.name, self.service, self.resource, self.path = name, service, resource, path
        self.rows, self.base, self.credentials, self.page_size = rows, base, credentials, page_size

    def window(self, query: dict) -> tuple[int, int]:
        """Where the page starts and how many rows it asks for."""
        if self.name == "cursor":
            cursor = query.get("cursor", "c0")
            return (int(cursor[1:]) if cursor[1:].isdigit() else 0), int(query["limit"])
        if self.name == "page_number":
            size = int(query["pageSize"])
            return int(query["pageNumber"]) * size, size
        return int(query["offset"]), int(query["size"])

    def page(self, rows: list, start: int, size: int, total: int | None = None, cursor: str | None = None,
             served: int | None = None) -> tuple[int, dict, bytes]:
        total = len(rows) if total is None else total
        chunk = rows[start:start + size]
        end = start + len(chunk)
        if self.name == "cursor":
            more = end < len(rows)
            body = {"data": chunk, "pagination": {"hasMore": more, "cursor": cursor or (f"c{end}" if more else None)}}
            return 200, {}, json.dumps(body).encode()
        if self.name == "page_number":
            return 200, {"total-size": str(total)}, json.dumps(chunk).encode()
        if self.name == "offset":
            body = {"list": chunk, "offset": start, "pageSize": size, "totalSize": total}
            return 200, {}, json.dumps(body).encode()
        return 200, {}, json.dumps(chunk).encode()        # bare array


def _tags(n):
    return [{"id": f"t{i:05}", "name": f"tag {i}"} for i in range(n)]


def _notifications(n):
    return [{"id": f"n{i:05}", "type": "alert", "message": f"note {i}", "severity": "info",
             "created": 1_790_000_000_000 + i} for i in range(n)]


def _submissions(n):
    return [{"submissionId": i + 1, "name": f"submission {i}", "status": "IN_PROGRESS"} for i in range(n)]


def _audiences(n):
    return [{"id": f"a{i:05}", "name": f"audience {i}"} for i in range(n)]


STYLES = {
    "cursor": Style("cursor", "asset_library", "tags", "/v1/tags", _tags(1500), "/v1",
                    {"api_key": "hostile-key", "workspace_id": "w1"}, 500),
    "offset": Style("offset", "audience_platform", "notifications", "/cdp-server/api/v2/notifications",
                    _notifications(2500), "/cdp-server", {"token": "hostile-token"}, 1000),
    "page_number": Style("page_number", "translation", "submissions", "/PD/rest/v0/submissions",
                         _submissions(1000), "/PD", {"username": "u", "password": "hostile-pass",
                                                     "client_id": "c", "client_secret": "hostile-secret"}, 200),
    "bare_array": Style("bare_array", "audience_platform", "audiences", "/cdp-server/api/v2/audiences",
                        _audiences(2500), "/cdp-server", {"token": "hostile-token"}, 1000),
}


def serve(hostile, style: Style, fault: Callable | None = None):
    """The style's rows served honestly, except where `fault(query, n, honest)` answers otherwise
    (n counts the list requests, from 1; None from it means the honest answer)."""
    count = [0]

    def answer(path, query):
        if path.endswith("/oauth/token"):
            return 200, {}, TOKEN
        if path != style.path:
            return 404, {}, b'{"message": "no such path"}'
        count[0] += 1
        start, size = style.window(query)

        def honest():
            return style.page(style.rows, start, size)
        given = fault(query, count[0], honest, start, size) if fault else None
        return given if given is not None else honest()

    return hostile(answer)


def quick(**options) -> Transport:
    """A transport retrying 3 times without waiting (`options` say otherwise)."""
    return Transport(**{"retry": RetryPolicy(attempts=3, backoff=0.0), "sleep": lambda seconds: None, **options})


def connected(server, style: Style, tmp_path):
    ws = toolkit.Workspace(tmp_path / "ws.duckdb")
    base = f"http://127.0.0.1:{server.server_address[1]}{style.base}"
    conn = ws.connect(style.service, base_url=base, **style.credentials, transport=quick())
    return ws, conn


def held(ws, style: Style) -> int:
    if not ws.loads().query("status == 'complete'").shape[0]:
        return 0
    return ws.sql(f"select count(*) from {style.service}.{style.resource}").fetchone()[0]


def outcome(ws, conn, style: Style, error: type[Exception] | None):
    """Fetch; with `error`, the load must fail so and leave the view as it was."""
    before = held(ws, style)
    if error is None:
        frame = conn.fetch(style.resource, progress=False)
        assert len(frame) == len(style.rows) == held(ws, style)
        return frame
    with pytest.raises(error):
        conn.fetch(style.resource, progress=False)
    last = ws.loads().iloc[-1]
    assert last["status"] == "failed" and held(ws, style) == before
    return None


@pytest.fixture(params=list(STYLES))
def style(request) -> Style:
    return STYLES[request.param]


def with_clean_load(hostile, style, tmp_path, fault, **options):
    """A workspace holding one complete load of the style's rows, then a server with the fault (sent
    to through `quick(**options)`)."""
    clean = serve(hostile, style)
    ws, conn = connected(clean, style, tmp_path)
    conn.fetch(style.resource, progress=False)
    faulty = serve(hostile, style, fault)
    base = f"http://127.0.0.1:{faulty.server_address[1]}{style.base}"
    conn = ws.connect(style.service, base_url=base, **style.credentials, transport=quick(**options))
    return ws, conn, faulty


