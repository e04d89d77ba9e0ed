"""Shared fixtures: clients of the four services on 127.0.0.1 behind `responses` stubs, no network.

Nothing here ever reaches a socket: `stub` intercepts every request of every requests Session, and a
request nobody stubbed fails loudly (ConnectionError) instead of leaving the machine.
"""
from __future__ import annotations

import os

import pytest
import responses
from stubbed_services import BASE, CREDENTIALS, TOKEN_URL, Sleeps, make_client, stub_token  # noqa: F401

from toolkit.http.session import RetryPolicy

# Pages are typed in the walk's process: a typing helper started by one test would stay up for the
# tests after it and type their pages out of reach of their monkeypatches. tests/pull/test_typist.py turns
# it on where it tests it.
os.environ["TOOLKIT_TYPING_HELPER"] = "0"

@pytest.fixture
def stub():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


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
