"""The translation token request goes urlencoded by default and multipart when asked (the service's
Spring endpoint takes both, docs/public-specs.md); multipart fields go as parts without a file name,
and a preview shows neither form's password."""
from __future__ import annotations

import pytest

import toolkit
import toolkit.sandbox


@pytest.fixture(scope="module")
def box():
    with toolkit.sandbox.start() as started:
        yield started


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_token_in_either_form(box, content_type):
    creds = box.credentials("translation")
    tm = toolkit.connect("translation", **creds)
    params = {"grant_type": "password", "username": creds["username"], "password": creds["password"]}
    prepared = tm.prepare("translation.create_token", content_type=content_type, **params)
    shown = repr(prepared)
    assert creds["password"] not in shown
    if content_type == "multipart/form-data":
        assert prepared.data is None and set(prepared.files) == {"grant_type", "username", "password"}
        assert "[field password: " in shown
    else:
        assert prepared.files is None or not prepared.files
    sent: list[str] = []
    tm.transport.session.hooks["response"].append(
        lambda response, **_: sent.append(response.request.headers.get("Content-Type", "")))
    answer = tm.call("translation.create_token", content_type=content_type, **params)
    assert answer["token_type"] == "bearer" and answer["access_token"]
    assert sent[-1].split(";")[0] == (content_type or "application/x-www-form-urlencoded")
