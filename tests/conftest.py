"""Shared fixtures: clients of the four services on 127.0.0.1 behind `responses` stubs, no network.

Nothing here ever reaches a socket: `stub` intercepts every request of every requests Session, and a
request nobody stubbed fails loudly (ConnectionError) instead of leaving the machine.
"""
from __future__ import annotations

import os

import pytest
import responses

import toolkit
from toolkit.http import RetryPolicy

# Pages are typed in the walk's process: a typing helper started by one test would stay up for the
# tests after it and type their pages out of reach of their monkeypatches. tests/test_typist.py turns
# it on where it tests it.
os.environ["TOOLKIT_TYPING_HELPER"] = "0"

BASE = {
    "media_review": "http://127.0.0.1:9/v2",
    "asset_library": "http://127.0.0.1:9/v1",
    "audience_platform": "http://127.0.0.1:9/cdp-server",
    "translation": "http://127.0.0.1:9/PD",
}
CREDENTIALS = {
    "media_review": {"token": "mr-token-5f2e9a"},
    "asset_library": {"api_key": "al-key-8c1d4b", "workspace_id": "ws-1"},
    "audience_platform": {"token": "ap-token-3e7f0c"},
    "translation": {"username": "pm.user", "password": "tm-pass-6a9b2d", "client_id": "tm-client",
                    "client_secret": "tm-secret-1f4e8c"},
}
TOKEN_URL = BASE["translation"] + "/oauth/token"


class Sleeps(list):
    """A fake `sleep` that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def stub():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def make_client(service: str, sleeps: Sleeps | None = None, **extra) -> toolkit.Client:
    client = toolkit.connect(service, base_url=BASE[service], **{**CREDENTIALS[service], **extra})
    client.transport.sleep = sleeps if sleeps is not None else Sleeps()
    return client


def stub_token(stub, access: str = "access-0a1b2c", expires_in: int = 3600, refresh: str | None = None,
               status: int = 200) -> None:
    body = {"access_token": access, "token_type": "bearer", "expires_in": expires_in, "scope": "read write"}
    if refresh:
        body["refresh_token"] = refresh
    stub.add(responses.POST, TOKEN_URL, json=body, status=status)


@pytest.fixture
def make(sleeps):
    """`make(service, **extra)`: a client of the service at its 127.0.0.1 base URL, sleeps recorded."""
    return lambda service, **extra: make_client(service, sleeps, **extra)


@pytest.fixture
def token(stub):
    """`token(access=..., expires_in=..., refresh=..., status=...)` stubs one answer of the token URL."""
    return lambda **kw: stub_token(stub, **kw)


@pytest.fixture
def media(sleeps):
    return make_client("media_review", sleeps)


@pytest.fixture
def assets(sleeps):
    return make_client("asset_library", sleeps)


@pytest.fixture
def audience(sleeps):
    return make_client("audience_platform", sleeps)


@pytest.fixture
def tms(stub, sleeps):
    """A translation client whose token request is stubbed (one token, valid for an hour)."""
    stub_token(stub)
    return make_client("translation", sleeps)


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.02)


# --- cassettes: pytest-recording uses toolkit.cassettes' one vcrpy configuration ---------------------

@pytest.fixture
def vcr_config() -> dict:
    """toolkit.cassettes.vcr_config() for `@pytest.mark.vcr` tests; the record mode is pytest-recording's
    `--record-mode` (default none, so CI never opens a socket)."""
    from toolkit.cassettes import vcr_config as config
    return {k: v for k, v in config().items() if k != "record_mode"}


@pytest.fixture(scope="module")
def vcr_cassette_dir() -> str:
    from pathlib import Path
    return str(Path(__file__).resolve().parent.parent / "cassettes")


def pytest_recording_configure(config, vcr) -> None:
    """Register the JSON-body matcher that vcr_config's match_on names."""
    from toolkit.cassettes import json_body
    vcr.register_matcher("json_body", json_body)
