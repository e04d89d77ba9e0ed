"""The scrubbing hooks and the JSON-body matcher of toolkit.cassettes, on hand-made exchanges."""
from __future__ import annotations

import json

import pytest
from vcr.request import Request

from toolkit.cassettes import calls
from toolkit.cassettes.scrub import Scrubber, json_body, mask_fields, scrub_url
from toolkit.catalog import ACTIONS

SECRET = "sbx_s3cr3tValue0123456789"


def scrubber() -> Scrubber:
    return Scrubber({"http://127.0.0.1:40111": "http://sandbox"}, lambda: [SECRET])


def test_request_headers_and_origin():
    request = Request("GET", "http://127.0.0.1:40111/asset_library/v1/assets?limit=5", None, {
        "Authorization": f"Bearer {SECRET}", "x-api-key": "k-123456", "x-air-workspace-id": "ws-9",
        "Accept-Encoding": "gzip, br, zstd", "User-Agent": "toolkit/0.1"})
    out = scrubber().request(request)
    assert out.uri == "http://sandbox/asset_library/v1/assets?limit=5"
    assert out.headers["Authorization"] == "Bearer ***"
    assert out.headers["x-api-key"] == "***" and out.headers["x-air-workspace-id"] == "***"
    assert "Accept-Encoding" not in out.headers            # depends on what is installed


def test_json_body_secret_fields_at_any_depth():
    body = {"enabled": True, "clientSecret": "abc-123", "nested": {"credentialsJson": '{"k": 1}',
            "googleCredentialsJson": {"private_key": "x"}}, "list": [{"password": "hunter2"}],
            "username": "a.dubois", "apiKey": "", "token": None}
    request = Request("PATCH", "http://127.0.0.1:40111/x", json.dumps(body).encode(),
                      {"Content-Type": "application/merge-patch+json"})
    out = json.loads(scrubber().request(request).body)
    assert out["clientSecret"] == "***" and out["nested"]["credentialsJson"] == "***"
    assert out["nested"]["googleCredentialsJson"] == "***" and out["list"][0]["password"] == "***"
    assert out["username"] == "a.dubois"                   # not a secret in a JSON body
    assert out["apiKey"] == "" and out["token"] is None    # empty stays empty: "not set" is information


def test_form_body_secrets_and_login():
    form = f"grant_type=password&username=pm.user&password={SECRET}&client_secret=cs-1"
    request = Request("POST", "http://127.0.0.1:40111/translation/PD/oauth/token", form.encode(),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    body = scrubber().request(request).body.decode()
    assert body == "grant_type=password&username=%2A%2A%2A&password=%2A%2A%2A&client_secret=%2A%2A%2A"


def test_response_oauth_tokens_headers_and_length():
    answer = {"access_token": "tok-abcdef", "refresh_token": "ref-abcdef", "expires_in": 3600,
              "link": "http://127.0.0.1:40111/files/1?X-Amz-Signature=deadbeef&part=1"}
    raw = json.dumps(answer).encode()
    response = {"status": {"code": 200, "message": "OK"}, "body": {"string": raw}, "headers": {
        "Content-Type": ["application/json"], "Content-Length": [str(len(raw))],
        "Date": ["Sat, 22 Nov 2025 07:00:00 GMT"], "Server": ["sandbox"], "Location": ["http://127.0.0.1:40111/a"]}}
    out = scrubber().response(response)
    body = json.loads(out["body"]["string"])
    assert body["access_token"] == "***" and body["refresh_token"] == "***" and body["expires_in"] == 3600
    assert body["link"] == "http://sandbox/files/1?X-Amz-Signature=***&part=1"
    assert "Date" not in out["headers"] and "Server" not in out["headers"]
    assert out["headers"]["Location"] == ["http://sandbox/a"]
    assert out["headers"]["Content-Length"] == [str(len(out["body"]["string"]))]


def test_known_secrets_masked_anywhere_and_binary_left_alone():
    text = f"token is {SECRET}, again {SECRET}".encode()
    assert scrubber().body(text, "text/plain") == b"token is ***, again ***"
    zipped = b"PK\x03\x04\x14\x00\x08\x00\xff\xfe" + SECRET.encode()
    assert scrubber().body(zipped, "application/zip") == zipped      # not UTF-8: bytes kept exactly
    multipart = b"--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n<html/>\r\n--b--\r\n"
    assert scrubber().body(multipart, "multipart/form-data; boundary=b") == multipart


def test_scrub_url_leaves_plain_urls_alone():
    assert scrub_url("https://x.test/a?b=1&c=2") == "https://x.test/a?b=1&c=2"
    assert scrub_url("https://x.test/a?access_token=abc&b=1") == "https://x.test/a?access_token=***&b=1"


def test_mask_fields_covers_the_catalogs_secret_params():
    secret_wires = {p.wire for a in ACTIONS.values() for p in a.params if p.secret}
    assert secret_wires
    assert all(mask_fields({wire: "value"}) == {wire: "***"} for wire in secret_wires)


def _request(body: bytes | None, kind: str = "application/json") -> Request:
    return Request("POST", "http://sandbox/x", body, {"Content-Type": kind})


def test_json_body_matcher():
    json_body(_request(b'{"a": 1, "b": [1, 2]}'), _request(b'{"b":[1,2],"a":1}'))   # key order aside
    with pytest.raises(AssertionError):
        json_body(_request(b'{"a": 1}'), _request(b'{"a": 2}'))
    with pytest.raises(AssertionError):
        json_body(_request(b'[1, 2]'), _request(b'[2, 1]'))                            # order of a list counts
    form = "application/x-www-form-urlencoded"
    json_body(_request(b"a=1&b=2", form), _request(b"b=2&a=1", form))
    multipart = "multipart/form-data; boundary=x"
    json_body(_request(b"--x one", multipart), _request(b"--y two", multipart))    # not compared
    json_body(_request(None), _request(b""))


def test_example_params_take_sandbox_ids():
    examples = {"schema_property_id": "loyaltyTier", "property_id": "UA-1", "account_id": "123",
                "audience_id": "8765", "username": "a.dubois",
                "overrides": {"asset_library.set_asset_custom_field": {"custom_field_id": "cf-2"},
                              "audience_platform.create_user": {"username": "integration-bot"}},
                "asset_id": "as-1", "custom_field_id": "cf-1"}
    get_property = ACTIONS["audience_platform.get_profile_property"]
    assert calls.example_params(get_property, "v2", examples)["property_id"] == "loyaltyTier"
    analytics = ACTIONS["audience_platform.get_analytics_audience"]
    assert calls.example_params(analytics, "v2", examples)["property_id"] == "UA-1"
    assert calls.example_params(ACTIONS["asset_library.set_asset_custom_field"], "", examples)["custom_field_id"] == "cf-2"
    create_user = ACTIONS["audience_platform.create_user"]
    assert calls.example_params(create_user, "v2", examples)["username"] == "integration-bot"     # a body param too
    assert calls.example_params(ACTIONS["audience_platform.update_user"], "v2", examples)["username"] == "a.dubois"
    token = ACTIONS["translation.create_token"]
    params = calls.example_params(token, "", {}, {"username": "pm.sandbox", "password": "pw", "client_id": "c"})
    assert params["username"] == "pm.sandbox" and params["password"] == "pw" and "client_id" not in params
