"""Every catalog row replayed from its cassette with the network closed; no secret in any cassette;
re-recording from the sandbox gives the committed bytes.

    pytest tests/cassettes/test_cassettes.py                                   # cassettes/ (from the sandbox)
    TOOLKIT_CASSETTES=cassettes-real pytest tests/cassettes/test_cassettes.py  # what a real service answered
"""
from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest
from vcr.serializers import yamlserializer

import toolkit
from toolkit import cassettes, catalog, sandbox
from toolkit.cassettes.scrub import AUTH_HEADERS, MASK, mask_fields
from toolkit.catalog.paging import Unpaged

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / cassettes.FOLDER
FOLDER = Path(os.environ.get("TOOLKIT_CASSETTES") or DEFAULT)
if not FOLDER.is_absolute():
    FOLDER = ROOT / FOLDER
FROM_SANDBOX = FOLDER == DEFAULT

ROWS = [(row.action, row.version) for row in toolkit.actions().itertuples()]
KIND = {"record": dict, "bytes": bytes, "none": type(None), "boolean": bool, "text": str}


def _id(row: tuple[str, str]) -> str:
    return f"{row[0]}@{row[1]}" if row[1] else row[0]


# --- replay -----------------------------------------------------------------------------------------

@pytest.mark.block_network
def test_the_network_is_closed_during_replay():
    with pytest.raises(Exception, match="(?i)network"):
        socket.create_connection(("127.0.0.1", 9), timeout=1)


@pytest.mark.block_network
@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_replay(row):
    action_id, version = row
    action = catalog.ACTIONS[action_id]
    path = cassettes.cassette_path(FOLDER, action, version)
    if not path.exists():
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if not FROM_SANDBOX:
            pytest.skip(f"{shown} not recorded from the real service")
        pytest.fail(f"no cassette {shown}; record it with: "
                    f"{cassettes.record_command(action, version)}", pytrace=False)
    meta, outcome, seen = cassettes.replay(path)
    assert (meta["action"], meta["version"]) == (action_id, version)
    assert outcome["unplayed"] == 0, "the replay left recorded exchanges unused"
    assert seen == meta["expect"], "the parsed result differs from what the cassette promises"
    if FROM_SANDBOX:
        assert not any("error" in part for part in seen.values()), seen
    id_type = int if action.service == "translation" else str
    if "call" in outcome:
        result = outcome["call"]
        if action.response in KIND:
            assert isinstance(result, KIND[action.response]), (action.response, type(result))
        else:                                   # list and page: an array, or an envelope holding it
            assert isinstance(result, list | dict), type(result)
        if action.response == "bytes":
            assert result and len(result) == seen["call"]["length"]
        if isinstance(result, list):
            assert all(isinstance(i, id_type) for i in seen["call"]["ids"]), seen["call"]["ids"]
    if "pages" in outcome:
        pages = outcome["pages"]
        assert pages and all(isinstance(page, list) for page in pages)
        rows = [r for page in pages for r in page]
        assert all(isinstance(r, dict) for r in rows)
        if FROM_SANDBOX and not isinstance(action.paging, Unpaged) and len(pages) > 1:
            assert len(rows) == len({repr(r) for r in rows}), "a page came back twice"
        ids = seen["pages"]["ids"]
        assert all(isinstance(i, id_type) for i in ids), ids


def test_every_row_has_its_own_cassette():
    """One file per row, nothing left over from a renamed or removed action."""
    if not FROM_SANDBOX:
        pytest.skip("a real-service folder holds the rows it was allowed to record")
    expected = {cassettes.cassette_path(FOLDER, catalog.ACTIONS[a], v) for a, v in ROWS}
    found = set(FOLDER.rglob("*.yaml"))
    assert not found - expected, f"cassettes of no catalog row: {sorted(found - expected)[:5]}"


def test_list_rows_replay_with_rows():
    """The walks of the list actions bring rows back, so the replay checks ids and not only emptiness."""
    if not FROM_SANDBOX:
        pytest.skip("a real account may have empty lists")
    empty = []
    for action_id, version in ROWS:
        path = cassettes.cassette_path(FOLDER, catalog.ACTIONS[action_id], version)
        expect = cassettes.metadata(path).get("expect", {}) if path.exists() else {}
        if "pages" in expect and not sum(expect["pages"]["rows"]):
            empty.append(_id((action_id, version)))
    assert len(empty) <= len(ROWS) // 10, f"walks without rows: {empty}"


# --- no secrets ---------------------------------------------------------------------------------------

SHAPES = {
    "bearer token": re.compile(r"Bearer (?!\*\*\*)[A-Za-z0-9._~+/=-]{6,}"),
    "basic credentials": re.compile(r"Basic (?!\*\*\*)[A-Za-z0-9+/=]{6,}"),
    "OAuth token": re.compile(r"\"(access_token|refresh_token|id_token)\"\s*:\s*\"(?!\*\*\*\")[^\"]+\""),
    "form secret": re.compile(r"(password|client_secret|refresh_token)=(?!%2A%2A%2A|\*\*\*)[^&\s']+"),
    "sandbox key": re.compile(r"\b(sbx|pw|dgs)_[A-Za-z0-9]{8,}"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
    "AWS key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
}


def _issued_secrets() -> list[str]:
    """The sandbox's secrets after it issued tokens as the recordings did (fresh sandbox, seed 0)."""
    held: list[str] = []
    for mode in ("client", "hosted"):
        with sandbox.start(seed=0, mode=mode) as box:
            if "translation" in box.services:
                client = toolkit.connect("translation", **box.credentials("translation"))
                for _ in range(3):
                    client.auth.invalidate()
                    client.auth.token()
            held += [s for s in box.secrets() if isinstance(s, str) and len(s) >= 6]
    return sorted(set(held))


def _bodies(value):
    """Every request and response body of a cassette, parsed as JSON where it is JSON."""
    for interaction in value.get("interactions", []):
        for side in ("request", "response"):
            part = interaction[side]
            body = part.get("body")
            body = body.get("string") if isinstance(body, dict) else body
            headers = part.get("headers", {})
            yield side, headers, body


def test_no_secret_in_any_cassette():
    files = sorted(FOLDER.rglob("*.yaml"))
    assert files, f"no cassettes under {FOLDER}"
    secrets = _issued_secrets()
    assert secrets, "the sandbox lists no secrets"
    leaks = []
    for file in files:
        text = file.read_text(errors="replace")
        leaks += [(file.name, "sandbox secret", s[:4] + "…") for s in secrets if s in text]
        leaks += [(file.name, name, m.group(0)[:12] + "…") for name, shape in SHAPES.items()
                  for m in shape.finditer(text)]
        data = yamlserializer.deserialize(text)
        for side, headers, body in _bodies(data):
            for name, values in headers.items():
                if name.lower() in AUTH_HEADERS and any(not str(v).endswith(MASK) for v in values):
                    leaks.append((file.name, f"{side} header {name}", "unmasked"))
            if isinstance(body, bytes):
                try:
                    body = body.decode()
                except UnicodeDecodeError:
                    continue
            try:
                parsed = json.loads(body) if isinstance(body, str) and body[:1] in "{[" else None
            except ValueError:
                parsed = None
            if parsed is not None and mask_fields(parsed) != parsed:
                leaks.append((file.name, f"{side} body", "a secret field holds a value"))
    assert not leaks, f"{len(leaks)} leaks, e.g. {leaks[:5]}"


# --- stable re-recording ------------------------------------------------------------------------------

def _sample() -> dict[str, list[str] | None]:
    """A few actions of the big services: reads, writes and deletes, a paged walk, a binary answer, a
    multipart upload, the token endpoint; every other service (media_review) whole."""
    picks = {
        "asset_library": ["list_assets", "delete_board", "create_upload_part"],
        "audience_platform": ["list_audiences", "update_document_generation_configuration", "delete_user"],
        "translation": ["create_token", "download_files", "upload_source", "list_targets"],
    }
    return {key: picks.get(key) for key in catalog.SERVICES}


@pytest.mark.skipif(not FROM_SANDBOX, reason="only sandbox recordings are re-recordable")
@pytest.mark.parametrize("service", list(catalog.SERVICES))
def test_re_recording_gives_the_same_bytes(service):
    sample = _sample()
    differ = cassettes.check_stable(service, folder=FOLDER, actions=sample[service])
    assert not differ, differ
