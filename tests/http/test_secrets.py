"""Secrets never show: not in reprs, errors, log lines or request previews.

A service that echoes what it was sent is a client handed a Session that answers from the test
(`answered`); the log-line test stubs four services' paths at once with `responses`."""
from __future__ import annotations

import json
import logging
import pickle

import pytest
import requests
import responses
from stubbed_services import answered, reply

import toolkit
from toolkit import catalog
from toolkit.errors import ApiError, ValidationError
from toolkit.http.session import Redactor, Secret

SECRETS = ["mr-token-5f2e9a", "al-key-8c1d4b", "ap-token-3e7f0c", "tm-pass-6a9b2d", "tm-secret-1f4e8c"]


def assert_clean(text: str, *secrets: str) -> None:
    for secret in secrets or SECRETS:
        assert secret not in text


def test_secret_type():
    secret = Secret("hunter2-long")
    assert repr(secret) == "***" and str(secret) == "***" and f"{secret}" == "***"
    assert repr([secret, {"k": secret}]) == "[***, {'k': ***}]"
    assert secret.reveal() == "hunter2-long"
    assert secret == Secret("hunter2-long") and secret != "hunter2-long"
    assert bool(secret) and not Secret("")
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_redactor_scrubs_plain_secrets():
    redactor = Redactor(["s3cret-value"])
    assert redactor.scrub("token=s3cret-value&x=1") == "token=***&x=1"
    redactor.add(Secret("another-one"))
    redactor.add(None)
    redactor.add("ab")                    # too short to scrub safely
    assert redactor.scrub("another-one ab") == "*** ab"


@pytest.mark.parametrize("username", ["al", "bob", "carl", "dave1", "eve-22", "x"])
def test_a_basic_header_is_scrubbed_whatever_the_username_length(make, username):
    """The header is base64 of `user:password`: the password's own base64 appears in it only when
    len(user) + 1 is a multiple of 3, so the whole header value must go."""
    client = make("audience_platform", token=None, username=username, password="s3cretpw-basic")
    header = requests.Request("GET", client.base_url, auth=client.auth).prepare().headers["Authorization"]
    value = header.split()[1]
    for text in (f"Authorization: {header}", f"sent {value} and {value.rstrip('=')}", header.lower()):
        scrubbed = client.redactor.scrub(text)
        assert value.rstrip("=") not in scrubbed and "s3cretpw" not in scrubbed


def test_any_authorization_value_is_scrubbed_even_when_unknown():
    scrubbed = Redactor().scrub("Authorization: Bearer eyJhbGciOi.xyz-abc and Basic Ym9iOnMzY3JldHB3")
    assert scrubbed == "Authorization: Bearer *** and Basic ***"


def test_repr_of_a_prepared_request_masks_secret_params(make):
    audience, tms = make("audience_platform"), make("translation")
    shown = [
        repr(audience.prepare("audience_platform.create_user", username="ana", password="user-pass-98765",
                              roles=["ROLE_ADMIN"])),
        repr(tms.prepare("translation.create_token", grant_type="password", username="pm.user",
                         password="form-pass-1234")),
    ]
    for text in shown:
        assert "user-pass-98765" not in text and "form-pass-1234" not in text and "***" in text
        assert_clean(text)
    assert "POST http://127.0.0.1:9/cdp-server/api/v2/security/users" in shown[0]


@pytest.mark.parametrize("service", list(catalog.SERVICES))
def test_repr_of_a_client_holds_no_secret(make, service):
    client = make(service)
    text = repr(client) + str(client) + repr(vars(client)) + repr(vars(client.transport))
    assert_clean(text)
    assert "***" in repr(client)


def test_repr_of_the_auth_objects_holds_no_secret(make):
    for service in catalog.SERVICES:
        auth = make(service).auth
        assert_clean(repr(vars(auth)))


@pytest.mark.parametrize(("service", "action", "params", "path", "own"), [
    ("media_review", "media_review.list_teams", {}, "/teams", ["mr-token-5f2e9a"]),
    ("asset_library", "asset_library.get_asset", {"asset_id": "a1"}, "/assets/a1", ["al-key-8c1d4b"]),
    ("audience_platform", "audience_platform.get_version", {}, "/api/v2/version", ["ap-token-3e7f0c"]),
    ("translation", "translation.get_submission", {"submission_id": 1}, "/rest/v0/submissions/1",
     ["tm-pass-6a9b2d", "tm-secret-1f4e8c", "access-echo-9d8c"]),
])
def test_a_service_echoing_the_credentials_is_scrubbed_from_the_error(service, action, params, path, own):
    echo = " ".join(own)
    body = {"message": f"bad credentials: {echo}", "messages": [f"bad credentials: {echo}"],
            "errors": [{"detail": echo}]}

    def echoing(request):
        assert request.method == "GET" and request.path_url.endswith(path)
        return reply(400, json_body=body)
    client = answered(service, echoing, token="access-echo-9d8c")
    with pytest.raises(ApiError) as info:
        client.call(action, **params)
    error = info.value
    text = str(error) + repr(error) + error.message + repr(error.args) + repr(error.body)
    assert_clean(text, *own)
    assert "bad credentials: ***" in error.message


def test_a_secret_param_echoed_back_is_scrubbed():
    def echoing(request):
        sent = json.loads(request.body)
        assert request.path_url.endswith("/api/v2/security/users") and sent["password"] == "Pa55word-x9!"
        return reply(400, json_body={"message": f"password '{sent['password']}' is too weak"})
    audience = answered("audience_platform", echoing)
    with pytest.raises(ApiError) as info:
        audience.call("audience_platform.create_user", username="bot", password="Pa55word-x9!")
    assert "Pa55word-x9!" not in str(info.value) and "Pa55word-x9!" not in repr(info.value.body)


def test_no_log_line_holds_a_secret(stub, make, token, caplog):
    token(access="access-log-4b5a")
    clients = [make(s) for s in ("media_review", "asset_library", "audience_platform", "translation")]
    stub.add(responses.GET, clients[0].base_url + "/teams", json=[], status=503)
    stub.add(responses.GET, clients[0].base_url + "/teams", json=[])
    # a path param that happens to hold a key still ends up in a log line as ***
    stub.add(responses.GET, clients[1].base_url + "/assets/al-key-8c1d4b", json={"id": "x"})
    stub.add(responses.GET, clients[2].base_url + "/api/v2/version", json={})
    stub.add(responses.GET, clients[3].base_url + "/rest/v0/projects", json=[])
    with caplog.at_level(logging.DEBUG):
        clients[0].call("media_review.list_teams")
        clients[1].call("asset_library.get_asset", asset_id="al-key-8c1d4b")
        clients[2].call("audience_platform.get_version")
        clients[3].call("translation.list_projects")
    lines = [record.getMessage() for record in caplog.records]
    assert any("/teams" in line for line in lines) and any("retry" in line for line in lines)
    assert any("/assets/***" in line for line in lines)
    text = "\n".join(lines)
    assert_clean(text, *SECRETS, "access-log-4b5a")
    assert "Authorization" not in text and "x-api-key" not in text and "Bearer" not in text


def test_validation_errors_do_not_show_credentials(make):
    with pytest.raises(ValidationError) as info:
        make("asset_library", api_key="al-key-8c1d4b", region="eu")
    assert "al-key-8c1d4b" not in str(info.value) and info.value.param == "region"


# --- previews -------------------------------------------------------------------------------------------

def preview(client, action, **params) -> str:
    return client.prepare(action, **params).describe(client.redactor, client.auth_headers())


def test_preview_masks_auth_headers(make):
    assets, media = make("asset_library"), make("media_review")
    text = preview(assets, "asset_library.create_tag", name="hero")
    assert "x-api-key: ***" in text and "x-air-workspace-id: ws-1" in text
    assert text.startswith("POST http://127.0.0.1:9/v1/tags") and '"name": "hero"' in text
    assert "Authorization: Bearer ***" in preview(media, "media_review.list_teams")
    basic = make("audience_platform", token=None, username="integration", password="ap-pass-77aa")
    assert "Authorization: Basic ***" in preview(basic, "audience_platform.get_version")
    assert_clean(text)


@pytest.mark.parametrize(("action", "params", "wire"), [
    ("audience_platform.update_document_generation_configuration",
     {"client_secret": "cs-42-secret", "password": "pw-42-secret", "username": "svc", "grant_type": "password"},
     ["clientSecret", "password"]),
    ("audience_platform.update_experience_insights_configuration",
     {"credentials_json": '{"private_key": "pk-42-secret"}'}, ["credentialsJson"]),
    ("audience_platform.update_analytics_configuration",
     {"google_credentials_json": '{"private_key": "gk-42-secret"}'}, ["googleCredentialsJson"]),
    ("audience_platform.update_warehouse_configuration",
     {"google_credentials_json": '{"private_key": "wk-42-secret"}'}, ["googleCredentialsJson"]),
    ("audience_platform.create_user", {"username": "bot", "password": "pw-43-secret"}, ["password"]),
])
def test_preview_masks_secret_body_fields(make, action, params, wire):
    text = preview(make("audience_platform"), action, **params)
    for name in wire:
        assert f'"{name}": "***"' in text
    assert "42-secret" not in text and "43-secret" not in text
    assert_clean(text)


def test_preview_masks_secret_form_fields(make):
    tms = make("translation")
    text = preview(tms, "translation.create_token", grant_type="password", username="pm.user",
                   password="form-pass-1234")
    assert "password=***" in text and "username=pm.user" in text and "form-pass-1234" not in text
    assert_clean(text)


def test_preview_shows_files_by_size(make):
    text = preview(make("translation"), "translation.upload_source", submission_id=1,
                   file=("home.html", b"<html></html>"), batch_name="B1")
    assert "[file file: home.html, 13 bytes]" in text


def test_secret_params_can_be_given_as_secrets():
    audience = answered("audience_platform", lambda request: reply(json_body={"enabled": True}))
    audience.call("audience_platform.update_document_generation_configuration", client_secret=Secret("cs-99-real"))
    [sent] = audience.transport.session.sent
    assert sent.method == "PATCH" and sent.path_url.endswith("/api/v2/docgen/configuration")
    assert b'"clientSecret":"cs-99-real"' in sent.body


def test_a_token_asked_for_through_a_connection_is_never_shown(stub, make, token):
    from toolkit.connection.connection import bind
    from toolkit.workspace import Workspace
    token(access="asked-for-token-9c8d7e", refresh="asked-refresh-6f5e4d")
    with Workspace() as ws:
        conn = bind(make("translation"), ws)
        answer = conn.call("translation.create_token", grant_type="password", username="pm.user",
                           password="form-pass-1234")
        assert answer["access_token"] == "asked-for-token-9c8d7e"
        text = conn.redactor.scrub(f"echoed {answer['access_token']} and {answer['refresh_token']}")
        assert "asked-for-token" not in text and "asked-refresh" not in text


def test_the_mask_and_the_secret_names_have_one_home():
    """toolkit.catalog.masking defines the mask and what a secret is; no other engine module spells
    the mask or keeps a list of secret words of its own (the sandbox speaks for the services)."""
    from pathlib import Path

    engine = [p for p in Path(toolkit.__file__).parent.rglob("*.py") if "sandbox" not in p.parts]
    spelled = [str(p.name) for p in engine if p.name != "masking.py"
               and ('"***"' in p.read_text() or "MASK = " in p.read_text() or "SECRET_WORDS" in p.read_text())]
    assert spelled == []


@pytest.mark.parametrize("text", [
    "IO Error: Unable to connect to Postgres at \"dbname=lake host=db user=cron password=s3cr3t-pw\": refused",
    "connection to 'ducklake:postgres:host=db password='s3cr3t-pw' user=x' lost",
    "could not attach postgresql://cron:s3cr3t-pw@db.internal:5432/lake",
    "PASSWORD = s3cr3t-pw",
])
def test_a_connection_strings_password_is_masked_wherever_duckdb_repeats_it(text):
    import duckdb

    from toolkit.catalog.masking import mask_passwords
    from toolkit.storage.lake import masked_error
    assert "s3cr3t-pw" not in mask_passwords(text) and "***" in mask_passwords(text)
    shown = masked_error(duckdb.IOException(text))
    assert type(shown) is duckdb.IOException and "s3cr3t-pw" not in str(shown)
    untouched = duckdb.CatalogException("Table with name x does not exist")
    assert masked_error(untouched) is untouched
