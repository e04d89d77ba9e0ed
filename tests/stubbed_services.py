"""The four services' stubbed addresses and credentials, and a client of each behind them: what the
shared fixtures (conftest.py) build on, importable by name from a test module (`from conftest import`
would find whichever conftest.py was imported first: tests/sandbox has its own).

Two ways to answer a client without a network: the `stub` fixture (`responses`, which patches every
requests Session of the process), or a Session handed to the client (`answered`), whose adapter asks a
function for each answer, as httpx's users hand a MockTransport: the test then holds the one thing that
answers, and a request the function does not expect fails in the test, loudly.
"""
from __future__ import annotations

import contextlib
import hashlib
import http
import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import requests
import responses
import urllib3
from requests.adapters import HTTPAdapter

import toolkit
from toolkit import catalog
from toolkit.http.origins import OneOriginSession
from toolkit.http.session import RetryPolicy, Transport

# a port nothing listens on: a request the stub does not answer fails at once
BASE = {key: "http://127.0.0.1:9" + service.base_path for key, service in catalog.SERVICES.items()}
# the values the tests cite by name; any other service's credentials are made from its catalog entry
CITED = {
    ("media_review", "token"): "mr-token-5f2e9a",
    ("asset_library", "api_key"): "al-key-8c1d4b", ("asset_library", "workspace_id"): "ws-1",
    ("audience_platform", "token"): "ap-token-3e7f0c",
    ("translation", "username"): "pm.user", ("translation", "password"): "tm-pass-6a9b2d",
    ("translation", "client_id"): "tm-client", ("translation", "client_secret"): "tm-secret-1f4e8c",
}


def _made(service: str, name: str) -> str:
    """A stand-in credential: a secret one long and distinct enough that a test finds it wherever it leaks."""
    secret = name in catalog.SERVICES[service].secrets
    return f"{service[:2]}-{name}-{hashlib.sha256(f'{service}/{name}'.encode()).hexdigest()[:6]}" if secret \
        else f"{service[:2]}-{name}"


# each service's usual login (`Service.login`: the audience platform's token, not its Basic pair; the
# translation service's four keys, without its optional mode and system version)
CREDENTIALS = {key: {name: CITED.get((key, name)) or _made(key, name) for name in service.login}
               for key, service in catalog.SERVICES.items()}
TOKEN_URL = BASE["translation"] + "/oauth/token"


class Sleeps(list):
    """A fake `sleep` that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(service: str, sleeps: Sleeps | None = None, session: requests.Session | None = None,
                retry: RetryPolicy | None = None, **extra) -> toolkit.Client:
    """A client of `service` at its stub address whose retries wait in `sleeps`, not in time."""
    options = {"timeout": extra.pop("timeout")} if "timeout" in extra else {}
    transport = Transport(sleep=sleeps if sleeps is not None else Sleeps(), session=session, retry=retry, **options)
    return toolkit.connect(service, base_url=BASE[service], transport=transport, **{**CREDENTIALS[service], **extra})


def reply(status: int = 200, body: bytes | str = b"", headers: dict | None = None, *,
          json_body: object = None) -> urllib3.HTTPResponse:
    """An answer for `answered`'s function to give: `json_body` as JSON, else `body` as it is."""
    headers = dict(headers or {})
    if json_body is not None:
        body = json.dumps(json_body)
        headers.setdefault("Content-Type", "application/json")
    data = body.encode() if isinstance(body, str) else body
    return urllib3.HTTPResponse(body=io.BytesIO(data), headers=headers, status=status, preload_content=False,
                                reason=http.HTTPStatus(status).phrase, decode_content=False)


Answer = Callable[[requests.PreparedRequest], urllib3.HTTPResponse]


class Answering(HTTPAdapter):
    """A requests adapter that sends nothing: `answer(request)` gives each answer (`reply`). Every request
    it was given is in `sent`."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(max_retries=0)
        self.answer, self.sent = answer, []

    def send(self, request: requests.PreparedRequest, *args, **kwargs) -> requests.Response:
        self.sent.append(request)
        return self.build_response(request, self.answer(request))


def answered(service: str, answer: Answer, sleeps: Sleeps | None = None, token: str = "access-0a1b2c",
             **extra) -> toolkit.Client:
    """A client of `service` whose requests `answer` answers (a translation client's token request is
    answered here: `token`, valid for an hour). `client.transport.session.sent` holds what it sent."""
    def with_token(request: requests.PreparedRequest) -> urllib3.HTTPResponse:
        if service == "translation" and request.url == TOKEN_URL:
            return reply(json_body={"access_token": token, "token_type": "bearer", "expires_in": 3600})
        return answer(request)

    adapter = Answering(with_token)
    session = OneOriginSession()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.sent = adapter.sent
    return make_client(service, sleeps, session=session, **extra)


def stub_token(stub, access: str = "access-0a1b2c", expires_in: int = 3600, refresh: str | None = None,
               status: int = 200) -> None:
    body = {"access_token": access, "token_type": "bearer", "expires_in": expires_in, "scope": "read write"}
    if refresh:
        body["refresh_token"] = refresh
    stub.add(responses.POST, TOKEN_URL, json=body, status=status)


@contextlib.contextmanager
def held_elsewhere(path: Path) -> Iterator[subprocess.Popen]:
    """`path` held by another process (a plain duckdb.connect that keeps it) until the block ends."""
    keeper = subprocess.Popen([sys.executable, "-c", f"import duckdb; c = duckdb.connect({str(path)!r}); "
                               "print('held', flush=True); input()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert keeper.stdout.readline().strip() == "held"
        yield keeper
    finally:
        keeper.communicate("\n", timeout=30)


def most_at_once(budget: object, threads: int, hold: float) -> tuple[int, int]:
    """`threads` threads each hold a place of `budget` for `hold` seconds: the most that were inside at
    once, and how many are inside once all have ended."""
    inside, most, lock = [0], [0], threading.Lock()

    def use() -> None:
        with budget:
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(hold)
            with lock:
                inside[0] -= 1

    started = [threading.Thread(target=use) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join(10)
    assert not any(thread.is_alive() for thread in started)
    return most[0], inside[0]
