"""A redirect never carries a secret to another origin, and nothing another origin answers is kept.

Two real servers on 127.0.0.1, on two ports (two origins): the service, which answers with a redirect,
and the other host, which records every header and body it is sent.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from stubbed_services import CREDENTIALS

import toolkit
from toolkit import catalog
from toolkit.errors import AuthError, RedirectError
from toolkit.http.session import same_origin

SECRETS = [v for key, creds in CREDENTIALS.items() for k, v in creds.items() if k in catalog.SERVICES[key].secrets]
BASE_PATH = {key: service.base_path for key, service in catalog.SERVICES.items()}


class Host:
    """A loopback HTTP server: `answer(handler)` gives (status, headers, body); every request is kept."""

    def __init__(self, answer) -> None:
        self.seen: list[dict] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                host.seen.append({"method": self.command, "path": self.path,
                                  "headers": dict(self.headers), "body": body})
                status, headers, payload = answer(self)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def everything_sent(self) -> str:
        return "\n".join(f"{s['method']} {s['path']} {s['headers']} {s['body']!r}" for s in self.seen)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


TOKEN = json.dumps({"access_token": "issued-token-7d3a", "token_type": "bearer", "expires_in": 3600}).encode()


@pytest.fixture
def other():
    host = Host(lambda h: (200, {"Content-Type": "application/json"}, b"[]"))
    yield host
    host.close()


def redirecting_service(target: str, status: int = 302, token_too: bool = False) -> Host:
    def answer(handler):
        if handler.path.endswith("/oauth/token") and not token_too:
            return 200, {"Content-Type": "application/json"}, TOKEN
        return status, {"Location": target + handler.path}, b""
    return Host(answer)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("service, action, params", [
    ("media_review", "media_review.list_teams", {}),
    ("asset_library", "asset_library.list_tags", {}),
    ("audience_platform", "audience_platform.list_audiences", {}),
    ("translation", "translation.list_submissions", {}),
])
def test_a_redirect_to_another_origin_is_refused_with_nothing_sent_there(other, service, action, params, status):
    service_host = redirecting_service(other.url, status)
    try:
        client = toolkit.connect(service, base_url=service_host.url + BASE_PATH[service], **CREDENTIALS[service])
        with pytest.raises(RedirectError) as raised:
            client.call(action, **params)
    finally:
        service_host.close()
    assert other.seen == []                              # not even a request without credentials
    assert raised.value.origin == other.url
    assert action in str(raised.value) and "another origin" in str(raised.value)
    for secret in [*SECRETS, "issued-token-7d3a"]:
        assert secret not in str(raised.value)
    # the service itself was asked with its credentials, once
    assert [s["path"] for s in service_host.seen if "oauth" not in s["path"]] != []


@pytest.mark.parametrize("status", [302, 307, 308])
def test_a_token_request_never_follows_a_redirect(other, status):
    service_host = redirecting_service(other.url, status, token_too=True)
    try:
        client = toolkit.connect("translation", base_url=service_host.url + "/PD", **CREDENTIALS["translation"])
        with pytest.raises(AuthError, match="redirect") as raised:
            client.call("translation.list_submissions")
    finally:
        service_host.close()
    assert other.seen == []
    assert "tm-pass-6a9b2d" not in str(raised.value) and "tm-secret-1f4e8c" not in str(raised.value)


def test_a_token_request_redirected_within_its_origin_is_not_followed_either():
    moved = {"n": 0}

    def answer(handler):
        if handler.path == "/PD/oauth/token":
            moved["n"] += 1
            return 307, {"Location": "/elsewhere/oauth/token"}, b""
        return 200, {"Content-Type": "application/json"}, TOKEN
    host = Host(answer)
    try:
        client = toolkit.connect("translation", base_url=host.url + "/PD", **CREDENTIALS["translation"])
        with pytest.raises(AuthError, match="redirect"):
            client.call("translation.list_submissions")
    finally:
        host.close()
    assert [s["path"] for s in host.seen] == ["/PD/oauth/token"]     # the password went nowhere else


def test_a_token_answer_without_an_access_token_says_so():
    host = Host(lambda h: (200, {"Content-Type": "application/json"}, b'{"token_type": "bearer"}'))
    try:
        client = toolkit.connect("translation", base_url=host.url + "/PD", **CREDENTIALS["translation"])
        with pytest.raises(AuthError, match="no access_token"):
            client.call("translation.list_submissions")
    finally:
        host.close()


def test_a_redirect_within_the_origin_is_followed_with_the_credentials():
    def answer(handler):
        if handler.path.startswith("/old/"):
            return 301, {"Location": handler.path.replace("/old/", "/v1/", 1)}, b""
        return 200, {"Content-Type": "application/json"}, b'{"data": [], "pagination": {}}'
    host = Host(answer)
    try:
        client = toolkit.connect("asset_library", base_url=host.url + "/old", **CREDENTIALS["asset_library"])
        client.call("asset_library.list_tags")
    finally:
        host.close()
    assert [s["path"].split("?")[0] for s in host.seen] == ["/old/tags", "/v1/tags"]
    assert host.seen[1]["headers"].get("x-api-key") == "al-key-8c1d4b"


def test_nothing_from_another_origin_is_stored_as_a_load(tmp_path, other):
    service_host = redirecting_service(other.url, 302)
    ws = toolkit.Workspace(tmp_path / "w.duckdb")
    try:
        conn = ws.connect("asset_library", base_url=service_host.url + "/v1", **CREDENTIALS["asset_library"])
        with pytest.raises(RedirectError):
            conn.fetch("tags")
        loads = ws.loads()
        assert list(loads["status"]) == ["failed"]
        assert "asset_library.tags" not in ws.tables().to_string()
    finally:
        ws.close()
        service_host.close()
    assert other.seen == []


@pytest.mark.parametrize("sent, target, kept", [
    ("http://api.example.com/v1/x", "http://api.example.com/v2/y", True),
    ("http://api.example.com/v1/x", "https://api.example.com/v1/x", True),       # upgraded to TLS
    ("https://api.example.com/v1/x", "http://api.example.com/v1/x", False),      # downgraded
    ("http://api.example.com:8080/x", "https://api.example.com/x", False),
    ("https://api.example.com/x", "https://api.example.com:8443/x", False),
    ("https://api.example.com/x", "https://API.example.com:443/y", True),
    ("https://api.example.com/x", "https://evil.example.com/x", False),
    ("https://api.example.com/x", "https://api.example.com.evil.net/x", False),
])
def test_what_counts_as_the_same_origin(sent, target, kept):
    assert same_origin(sent, target) is kept


def test_a_download_follows_a_redirect_to_a_file_host_without_the_callers_headers():
    from toolkit.http.downloads import fetch_url
    files = Host(lambda h: (200, {"Content-Type": "text/csv"}, b"a,b\n1,2\n"))
    origin = Host(lambda h: (302, {"Location": files.url + "/signed/terms.csv"}, b""))
    try:
        got = fetch_url(origin.url + "/terms.csv", as_text=True, headers={"X-File-Key": "file-key-91c2"})
    finally:
        files.close()
        origin.close()
    assert got.text == "a,b\n1,2\n"
    assert origin.seen[0]["headers"].get("X-File-Key") == "file-key-91c2"
    assert "file-key-91c2" not in files.everything_sent()
