"""The four services' stubbed addresses and credentials, and a client of each behind them: what the
shared fixtures (conftest.py) build on, importable by name from a test module (`from conftest import`
would find whichever conftest.py was imported first: tests/sandbox has its own).
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import responses

import toolkit

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
