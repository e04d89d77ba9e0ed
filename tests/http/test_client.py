"""The client: request building, versions, methods from the catalog, connect() and response parsing."""
from __future__ import annotations

import datetime as dt
import inspect
import json
from urllib.parse import parse_qsl, urlsplit

import pytest
import responses

import toolkit
from toolkit import catalog
from toolkit.errors import AnswerError, ToolkitError, ValidationError, VersionError
from toolkit.http.client import client_class
from toolkit.http.methods import RESERVED


def sent(stub, index: int = -1):
    return stub.calls[index].request


def query(request) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(request.url).query, keep_blank_values=True)


# --- paths ----------------------------------------------------------------------------------------------

def test_path_params_are_quoted(assets):
    prepared = assets.prepare("asset_library.get_asset", asset_id="a/b c?d#e%")
    assert prepared.url == "http://127.0.0.1:9/v1/assets/a%2Fb%20c%3Fd%23e%25"


def test_path_params_of_every_kind_are_filled(tms):
    prepared = tms.prepare("translation.get_pa_client_glossary", organization_id=3, paclient_id=7,
                           glossary_name="Marketing EU")
    assert prepared.url == "http://127.0.0.1:9/PD/rest/v0/organizations/3/paclients/7/glossary/Marketing%20EU"
    assert tms.prepare("translation.complete_phase", submission_id=1, phase_name="Review", target_ids=[2],
                       transition="Final").url.endswith("/rest/v0/submissions/1/phases/Review/complete")


def test_the_request_goes_where_the_url_says(stub, assets):
    stub.add(responses.GET, "http://127.0.0.1:9/v1/assets/a%2Fb", json={"id": "a/b"})
    assert assets.call("asset_library.get_asset", asset_id="a/b") == {"id": "a/b"}
    assert sent(stub).path_url == "/v1/assets/a%2Fb"


# --- query strings ----------------------------------------------------------------------------------------

def test_repeatable_query_keys(assets):
    prepared = assets.prepare("asset_library.list_assets", tag=["hero", "q2"], custom_field=["a:b", "c:d"])
    assert prepared.query == [("tag", "hero"), ("tag", "q2"), ("customField", "a:b"), ("customField", "c:d")]


def test_comma_lists(tms, audience):
    prepared = tms.prepare("translation.list_submissions", submission_ids=[1234, 1235],
                           statuses=("READY", "IN_PROCESS"))
    assert prepared.query == [("submissionIds", "1234,1235"), ("statuses", "READY,IN_PROCESS")]
    assert tms.prepare("translation.list_targets", status=["READY", "COMPLETED"]).query == \
        [("targetStatus", "READY,COMPLETED")]
    assert audience.prepare("audience_platform.list_audiences", tags=["vip", "!test"]).query == \
        [("tags", "vip,!test")]


def test_comma_lists_go_on_the_wire_with_plain_commas(stub, tms):
    """Not %2C: each would lengthen the query that urllib3 checks byte by byte, twice per request."""
    stub.add(responses.GET, "http://127.0.0.1:9/PD/rest/v0/targets", json=[])
    tms.call("translation.list_targets", submission_ids=[1234, 1235], status=["READY"])
    assert urlsplit(sent(stub).url).query == "submissionIds=1234,1235&targetStatus=READY"
    assert query(sent(stub)) == [("submissionIds", "1234,1235"), ("targetStatus", "READY")]


@pytest.mark.parametrize(("value", "wire"), [(True, "true"), (False, "false"), ("TRUE", "true"),
                                             ("False", "false")])
def test_booleans_in_the_query(audience, value, wire):
    prepared = audience.prepare("audience_platform.create_profile", validate=value, item_id="p1")
    assert prepared.query == [("validate", wire)]


def test_none_is_not_sent(assets):
    assert assets.prepare("asset_library.list_assets", search=None, limit=10).query == [("limit", "10")]


def test_wire_names_in_the_query(assets):
    prepared = assets.prepare("asset_library.list_assets", parent_board_id="b1", include_nested_assets=True,
                              created_at_gte="2024-01-01T00:00:00.000Z")
    assert prepared.query == [("parentBoardId", "b1"), ("includeNestedAssets", "true"),
                              ("createdAt[gte]", "2024-01-01T00:00:00.000Z")]


def test_datetimes_as_iso_utc(assets):
    cest = dt.timezone(dt.timedelta(hours=2))
    prepared = assets.prepare("asset_library.list_assets", created_at_gte=dt.datetime(2024, 5, 1, 12, 0, tzinfo=cest),
                              created_at_lte=dt.datetime(2024, 5, 2))
    assert prepared.query == [("createdAt[gte]", "2024-05-01T10:00:00.000Z"),
                              ("createdAt[lte]", "2024-05-02T00:00:00.000Z")]


@pytest.mark.parametrize(("value", "ms"), [
    (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), 1704067200000),
    (dt.datetime(2024, 1, 1), 1704067200000),                                   # naive: UTC
    (dt.datetime(2024, 1, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2))), 1704067200000),
    (dt.date(2024, 1, 1), 1704067200000),
    (dt.datetime(2024, 1, 1, 0, 0, 0, 250000, tzinfo=dt.UTC), 1704067200250),
    (1704067200000, 1704067200000),
])
def test_epoch_ms_from_datetimes(tms, value, ms):
    assert tms.prepare("translation.list_submissions", due_date_from=value).query == [("dueDateFrom", str(ms))]
    body = tms.prepare("translation.create_submission", name="S", project_id=10, source_language="en-US",
                       due_date=value).json
    assert body["dueDate"] == ms and isinstance(body["dueDate"], int)


# --- bodies ---------------------------------------------------------------------------------------------

def test_json_body_uses_wire_names(stub, assets):
    stub.add(responses.POST, assets.base_url + "/boards", json={"id": "b9"}, status=201)
    assets.call("asset_library.create_board", title="Review", parent_board_id="b1", description="Q3")
    request = sent(stub)
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == {"title": "Review", "description": "Q3", "parentBoardId": "b1"}


def test_json_body_with_an_explicit_wire_name(assets):
    prepared = assets.prepare("asset_library.add_asset_version_tag", asset_id="a", version_id="v", tag_id="t1")
    assert prepared.json == {"id": "t1"}
    upload = assets.prepare("asset_library.create_upload_part", multi_part_upload_id="u1", key="k", part_number=2)
    assert upload.json == {"multiPartUploadId": "u1", "key": "k", "partNumber": 2}


def test_json_body_values(tms):
    body = tms.prepare("translation.save_submission", submission_id=1, auto_start="true").json
    assert body == {"autoStart": True}
    assert tms.prepare("translation.cancel_submission", submission_id=1, target_ids=[5, 6]).json == {"targetIds": [5, 6]}
    assert tms.prepare("translation.get_word_count", submission_id=1).json == {}


def test_a_value_given_as_none_is_sent_as_null(assets):
    # the asset library unsets a custom field with {"value": null}
    assert assets.prepare("asset_library.set_asset_custom_field", asset_id="a", custom_field_id="c",
                          value=None).json == {"value": None}


def test_raw_body_is_the_whole_body(stub, audience):
    stub.add(responses.PATCH, audience.base_url + "/api/v2/profiles/p1", json={"itemId": "p1"})
    audience.call("audience_platform.update_profile", profile_id="p1", patch={"properties": {"tier": "gold"}},
                  validate=True)
    request = sent(stub)
    assert json.loads(request.body) == {"properties": {"tier": "gold"}}
    assert request.headers["Content-Type"] == "application/merge-patch+json"
    assert query(request) == [("validate", "true")]


@pytest.mark.parametrize("choice", ["json_patch", "application/json-patch+json"])
def test_content_type_choice(stub, audience, choice):
    stub.add(responses.PATCH, audience.base_url + "/api/v2/audiences/vip", json={"id": "vip"})
    ops = [{"op": "add", "path": "/tags/-", "value": "newsletter"}]
    audience.call("audience_platform.update_audience", audience_id="vip", patch=ops, content_type=choice)
    assert sent(stub).headers["Content-Type"] == "application/json-patch+json"
    assert json.loads(sent(stub).body) == ops


def test_merge_patch_is_the_default(audience):
    prepared = audience.prepare("audience_platform.update_audience", audience_id="vip", patch={"tags": ["a"]})
    assert prepared.headers["Content-Type"] == "application/merge-patch+json"


@pytest.mark.parametrize(("action", "params", "choice"), [
    ("audience_platform.update_audience", {"audience_id": "vip", "patch": {}}, "json"),
    ("audience_platform.update_audience", {"audience_id": "vip", "patch": {}}, "text/plain"),
    ("audience_platform.update_profile", {"profile_id": "p", "patch": {}}, "json_patch"),
    ("audience_platform.get_version", {}, "merge_patch"),
])
def test_content_type_refused_where_the_service_does_not_take_it(audience, action, params, choice):
    with pytest.raises(ValidationError) as info:
        audience.prepare(action, content_type=choice, **params)
    assert info.value.param == "content_type" and info.value.value == choice


def test_form_body(stub, tms):
    stub.add(responses.POST, tms.base_url + "/oauth/token", json={"access_token": "x", "expires_in": 60})
    prepared = tms.prepare("translation.create_token", grant_type="password", username="u", password="p w&x")
    assert prepared.data == {"grant_type": "password", "username": "u", "password": "p w&x"}
    assert prepared.json is None and prepared.files is None


def test_multipart_body(stub, tms):
    stub.add(responses.POST, tms.base_url + "/rest/v0/submissions/12/upload/source",
             json={"processId": 1, "submissionId": 12, "documentIds": []})
    tms.call("translation.upload_source", submission_id=12, file=("home.html", b"<p>Welcome</p>"),
             batch_name="Batch1", file_format_name="HTML", extract_archive=False, target_format="TXLF")
    request = sent(stub)
    assert request.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    body = request.body
    assert b'name="file"; filename="home.html"' in body and b"<p>Welcome</p>" in body
    assert b'name="batchName"\r\n\r\nBatch1' in body and b'name="extractArchive"\r\n\r\nfalse' in body
    assert b"targetFormat" not in body and b"TXLF" not in body       # local: checked, never sent


def test_multipart_file_from_a_path_and_from_bytes(tms, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"notes")
    prepared = tms.prepare("translation.upload_collateral", submission_id=1, file=str(path), submission_level=True)
    with prepared.files["file"].opened() as (name, handle):
        assert name == "notes.txt" and handle.read() == b"notes"
    assert handle.closed
    assert prepared.data == {"submissionLevel": "true"}
    raw = tms.prepare("translation.upload_translatable", submission_id=1, file=b"<xliff/>")
    with raw.files["file"].opened() as part:
        assert part == ("upload.bin", b"<xliff/>")
    listed = tms.prepare("translation.upload_reference", submission_id=1, file=b"x",
                         target_language_level=["fr-FR", "de-DE"])
    assert listed.data == {"targetLanguageLevel": "fr-FR,de-DE"}


def test_custom_headers_are_passed_through(stub, assets):
    stub.add(responses.GET, assets.base_url + "/assets/a1", json={"id": "a1"})
    stub.add(responses.GET, assets.base_url + "/tags", json={"data": [], "pagination": {"hasMore": False}})
    assets.call("asset_library.get_asset", asset_id="a1", headers={"X-Trace-Id": "t-1", "Accept-Language": "fr"})
    assert sent(stub).headers["X-Trace-Id"] == "t-1" and sent(stub).headers["Accept-Language"] == "fr"
    assert sent(stub).headers["x-api-key"] == "al-key-8c1d4b"
    list(assets.pages("asset_library.list_tags", headers={"X-Trace-Id": "t-2"}))
    assert sent(stub).headers["X-Trace-Id"] == "t-2"
    assets.get_asset(asset_id="a1", headers={"X-Trace-Id": "t-3"})
    assert sent(stub).headers["X-Trace-Id"] == "t-3"


def test_nothing_is_sent_when_a_rule_breaks(stub, assets):
    with pytest.raises(ValidationError):
        assets.call("asset_library.get_asset", asset_id=" ")
    assert len(stub.calls) == 0


# --- the audience platform's versions --------------------------------------------------------------------

def test_audience_platform_v2_by_default(audience):
    assert audience.version == "v2"
    assert audience.prepare("audience_platform.list_audience_metadata").url == \
        "http://127.0.0.1:9/cdp-server/api/v2/audiences/metadata"
    assert audience.prepare("audience_platform.get_profile", profile_id="p1").url == \
        "http://127.0.0.1:9/cdp-server/api/v2/profiles/p1"


def test_audience_platform_v1_path(stub, audience):
    assert audience.prepare("audience_platform.list_audience_metadata", version="v1").url == \
        "http://127.0.0.1:9/cdp-server/api/v1/audiences"
    stub.add(responses.GET, audience.base_url + "/api/v1/audiences", json={"list": [], "totalSize": 0})
    assert audience.call("audience_platform.list_audience_metadata", version="v1") == {"list": [], "totalSize": 0}


def test_a_v1_client(make):
    v1 = make("audience_platform", version="v1")
    assert v1.prepare("audience_platform.get_profile", profile_id="p1").url.endswith("/api/v1/profiles/p1")
    # an action only v2 has is refused, as version="v1" on the call is (issue 17 item 5)
    with pytest.raises(VersionError):
        v1.prepare("audience_platform.list_audiences")
    assert v1.prepare("audience_platform.list_audiences", version="v2").url.endswith("/api/v2/audiences")


def test_asking_for_a_version_the_action_lacks(audience):
    with pytest.raises(VersionError) as info:
        audience.prepare("audience_platform.list_notifications", version="v1")
    assert info.value.needed == "v2" and info.value.configured == "v1"


def test_other_services_have_no_version_prefix(media, tms):
    assert media.prepare("media_review.list_teams").url == "http://127.0.0.1:9/v2/teams"
    assert tms.prepare("translation.list_projects").url == "http://127.0.0.1:9/PD/rest/v0/projects"


# --- methods built from the catalog ------------------------------------------------------------------------

@pytest.mark.parametrize("service", list(catalog.SERVICES))
def test_every_action_has_a_method_with_a_real_signature(make, service):
    client = make(service)
    for entry in catalog.actions_of(service):
        method = getattr(client, entry.name)
        signature = inspect.signature(method)
        parameters = signature.parameters
        assert list(parameters)[-3:] == list(RESERVED)
        assert set(parameters) == {p.name for p in entry.params} | set(RESERVED)
        for param in entry.params:
            declared = parameters[param.name]
            assert declared.kind is inspect.Parameter.KEYWORD_ONLY
            assert (declared.default is inspect.Parameter.empty) == param.required
        required = [n for n, p in parameters.items() if p.default is inspect.Parameter.empty]
        assert required == list(parameters)[:len(required)]          # required ones first
        assert method.__name__ == entry.name
        doc = inspect.getdoc(method)
        assert doc.startswith(entry.doc) and f"{entry.method} {entry.path}" in doc and "Example: client." in doc
        for param in entry.params:
            assert f"    {param.name} (" in doc


def test_signature_annotations(assets, tms):
    params = inspect.signature(assets.list_assets).parameters
    assert params["limit"].annotation is int and params["include_nested_assets"].annotation is bool
    assert inspect.signature(tms.cancel_submission).parameters["target_ids"].annotation == list[int]


def test_docstring_example_and_flags(assets, tms):
    doc = assets.delete_asset.__doc__
    assert "Destructive" in doc and "Example: client.delete_asset(asset_id='4b7c2f1e-" in doc
    assert "needs system version 5.13; modes: client" in tms.list_project_glossaries.__doc__
    assert "one of TXML, TXLF, NON_PARSABLE" in tms.upload_source.__doc__


def test_methods_call_the_action(stub, assets):
    stub.add(responses.GET, assets.base_url + "/assets/a1", json={"id": "a1"})
    assert assets.get_asset(asset_id="a1") == {"id": "a1"}
    with pytest.raises(TypeError):
        assets.get_asset("a1")


def test_client_classes(make):
    cls = client_class("translation")
    assert cls is client_class("translation") and issubclass(cls, toolkit.Client)
    assert type(make("translation")) is cls
    assert not hasattr(make("media_review"), "list_assets")


def test_actions_of_another_service_or_unknown_ones(assets):
    with pytest.raises(ToolkitError, match="belongs to translation"):
        assets.call("translation.list_projects")
    with pytest.raises(KeyError, match="did you mean 'asset_library.list_assets'"):
        assets.call("asset_library.list_asset")
    assert assets.action("get_asset").id == "asset_library.get_asset"


# --- connect() ------------------------------------------------------------------------------------------------

def test_connect_from_environment(monkeypatch, stub):
    monkeypatch.setenv("TOOLKIT_ASSET_LIBRARY_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TOOLKIT_ASSET_LIBRARY_API_KEY", "env-key-1234")
    monkeypatch.setenv("TOOLKIT_ASSET_LIBRARY_WORKSPACE_ID", "env-ws")
    client = toolkit.connect("asset_library")
    assert client.base_url == "http://127.0.0.1:9/v1"
    stub.add(responses.GET, client.base_url + "/assets/a1", json={})
    client.call("asset_library.get_asset", asset_id="a1")
    assert sent(stub).headers["x-api-key"] == "env-key-1234" and sent(stub).headers["x-air-workspace-id"] == "env-ws"
    assert "env-key-1234" not in repr(client)


def test_given_credentials_beat_the_environment(monkeypatch):
    monkeypatch.setenv("TOOLKIT_MEDIA_REVIEW_BASE_URL", "http://127.0.0.1:9/v2")
    monkeypatch.setenv("TOOLKIT_MEDIA_REVIEW_TOKEN", "env-token-1234")
    client = toolkit.connect("media_review", base_url="http://127.0.0.1:8/v2/")
    assert client.base_url == "http://127.0.0.1:8/v2"
    assert client.auth.token.reveal() == "env-token-1234"


def test_translation_mode_and_version_from_environment(monkeypatch):
    for field, value in {"BASE_URL": "http://127.0.0.1:9/PD", "USERNAME": "u", "PASSWORD": "p-123456",
                         "CLIENT_ID": "c", "CLIENT_SECRET": "s-123456", "MODE": "hosted",
                         "SYSTEM_VERSION": "5.19"}.items():
        monkeypatch.setenv(f"TOOLKIT_TRANSLATION_{field}", value)
    client = toolkit.connect("translation")
    assert (client.mode, client.system_version) == ("hosted", "5.19")
    with pytest.raises(toolkit.ModeError):
        client.prepare("translation.list_project_tms", project_id=10)
    with pytest.raises(toolkit.VersionError):
        client.prepare("translation.list_targets")


def test_connect_needs_a_base_url_and_the_credentials(monkeypatch):
    for name in ("BASE_URL", "TOKEN", "API_KEY", "WORKSPACE_ID"):
        monkeypatch.delenv(f"TOOLKIT_ASSET_LIBRARY_{name}", raising=False)
        monkeypatch.delenv(f"TOOLKIT_MEDIA_REVIEW_{name}", raising=False)
    with pytest.raises(ValidationError, match="TOOLKIT_MEDIA_REVIEW_BASE_URL"):
        toolkit.connect("media_review", token="t-123456")
    with pytest.raises(ValidationError, match="TOOLKIT_ASSET_LIBRARY_WORKSPACE_ID") as info:
        toolkit.connect("asset_library", base_url="http://127.0.0.1:9/v1", api_key="k-123456")
    assert info.value.param == "workspace_id"
    with pytest.raises(KeyError, match="no service"):
        toolkit.connect("crm", base_url="http://127.0.0.1:9")
    with pytest.raises(ValidationError, match="client or hosted"):
        toolkit.connect("translation", base_url="http://127.0.0.1:9/PD", username="u", password="p",
                        client_id="c", client_secret="s", mode="cloud")


def test_loopback_clients_skip_the_proxy_lookup():
    local = toolkit.connect("asset_library", base_url="http://127.0.0.1:9/v1", api_key="k", workspace_id="w")
    assert local.transport.session.trust_env is False
    remote = toolkit.connect("media_review", base_url="https://media.example.com/v2", token="t-123456")
    assert remote.transport.session.trust_env is True


# --- parsing answers --------------------------------------------------------------------------------------------

def test_204_is_none(stub, assets):
    stub.add(responses.DELETE, assets.base_url + "/assets/a1", status=204)
    assert assets.call("asset_library.delete_asset", asset_id="a1") is None


def test_an_empty_200_is_none(stub, tms):
    stub.add(responses.DELETE, tms.base_url + "/rest/v0/submissions/1/metadata", body="", status=200)
    assert tms.call("translation.delete_metadata", submission_id=1) is None


def test_downloads_are_bytes(stub, tms):
    zipped = b"PK\x03\x04\x00\xff binary"
    stub.add(responses.GET, tms.base_url + "/rest/v0/submissions/download/7001", body=zipped,
             content_type="application/zip")
    assert tms.call("translation.download_files", download_id=7001) == zipped
    stub.add(responses.POST, tms.base_url + "/rest/v0/submissions/1/quote/report", body=b"%PDF-1.7",
             content_type="application/pdf")
    assert tms.call("translation.get_quote_report", submission_id=1) == b"%PDF-1.7"


def test_records_lists_booleans_and_text(stub, audience):
    stub.add(responses.GET, audience.base_url + "/api/v2/audiences/vip", json={"id": "vip", "tags": ["a"]})
    stub.add(responses.GET, audience.base_url + "/api/v2/audiences/vip/profiles/p1", body="true",
             content_type="application/json")
    stub.add(responses.GET, audience.base_url + "/api/v2/security/vault/publickey", body="-----BEGIN KEY-----",
             content_type="text/plain")
    stub.add(responses.GET, audience.base_url + "/api/v2/security/users", json=[{"username": "bot"}])
    assert audience.call("audience_platform.get_audience", audience_id="vip") == {"id": "vip", "tags": ["a"]}
    assert audience.call("audience_platform.get_audience_membership", audience_id="vip", profile_id="p1") is True
    assert audience.call("audience_platform.get_vault_public_key") == "-----BEGIN KEY-----"
    assert audience.call("audience_platform.list_users") == [{"username": "bot"}]


def test_a_read_answering_text_instead_of_json_is_asked_again_then_an_answer_error(stub, media):
    stub.add(responses.GET, media.base_url + "/teams", body="not json", content_type="text/plain")
    with pytest.raises(AnswerError) as caught:
        media.call("media_review.list_teams")
    error = caught.value
    assert (error.action, error.status, error.content_type, error.tries) == ("media_review.list_teams", 200,
                                                                              "text/plain", 5)
    assert "'not json'" in str(error) and media.requests_sent == 5 and len(media.transport.sleep) == 4


def test_a_proxy_page_served_once_is_asked_for_again(stub, media):
    stub.add(responses.GET, media.base_url + "/teams", body="<html><h1>502 Bad Gateway</h1></html>",
             content_type="text/html")
    stub.add(responses.GET, media.base_url + "/teams", json=[{"id": "t1"}])
    assert media.call("media_review.list_teams") == [{"id": "t1"}]
    assert media.requests_sent == 2


def test_a_write_answering_text_gives_the_text(stub, assets):
    # the write was done whatever its answer says: raising would have the caller send it again
    stub.add(responses.POST, assets.base_url + "/tags", body="created", content_type="text/plain")
    assert assets.call("asset_library.create_tag", name="hero") == "created"
    assert assets.requests_sent == 1


def test_requests_are_counted(stub, assets):
    stub.add(responses.GET, assets.base_url + "/assets/a1", json={})
    assets.call("asset_library.get_asset", asset_id="a1")
    assets.call("asset_library.get_asset", asset_id="a1")
    assert assets.requests_sent == 2


# --- the next page's request -------------------------------------------------------------------------

@pytest.mark.parametrize("action, params, paging", [
    ("translation.list_targets", {"submission_ids": list(range(1, 101)), "status": ["DELIVERED"]},
     {"page_number": 3}),
    ("asset_library.list_assets", {"search": "hero", "limit": 500}, {"cursor": "c2"}),
    ("audience_platform.list_notifications", {"filter": "type:audienceImport", "size": 1000}, {"offset": 2000}),
])
def test_a_next_page_is_the_first_page_with_its_paging_params_changed(make, action, params, paging):
    from toolkit.http.walks import _repaged
    client = make(catalog.action(action).service)
    first = client.prepare(action, **params)
    following = {**params, **paging}
    assert _repaged(catalog.action(action), (first, params), following) == client.prepare(action, **following)


def test_a_next_page_with_another_list_is_prepared_afresh(make):
    from toolkit.http.walks import _repaged
    client = make("translation")
    params = {"submission_ids": [1, 2]}
    first = client.prepare("translation.list_targets", **params)
    assert _repaged(catalog.action("translation.list_targets"), (first, params), {"submission_ids": [3]}) is None


# --- a path param can never send the request to another path -----------------------------------------

@pytest.mark.parametrize("value", ["..", ".", "%2e%2e", "a/../b"])
def test_a_dot_segment_in_a_path_id_never_reaches_another_endpoint(stub, assets, value):
    try:
        prepared = assets.prepare("asset_library.remove_board_asset", board_id=value, asset_id="a-1")
    except ValidationError:
        assert not stub.calls
        return
    # what is given literally stays inside its segment, encoded: the path keeps its shape
    assert prepared.sent_url.startswith(assets.base_url + "/boards/") and prepared.sent_url.endswith("/assets/a-1")
    assert prepared.sent_url.count("/") == (assets.base_url + "/boards/x/assets/a-1").count("/")


@pytest.mark.parametrize(("action", "params"), [
    ("asset_library.remove_board_asset", {"board_id": "..", "asset_id": "a-1"}),
    ("asset_library.list_asset_boards", {"asset_id": ".."}),
    ("translation.delete_custom_attribute", {"submission_id": 1, "attribute_name": "."}),
])
def test_the_dot_segments_of_the_issue_are_refused_before_sending(stub, assets, tms, action, params):
    client = assets if action.startswith("asset_library") else tms
    with pytest.raises(ValidationError, match="another path"):
        client.call(action, **params)
    assert not [c for c in stub.calls if "/oauth/token" not in c.request.url]


@pytest.mark.parametrize("board_id", ["Q4 board", "ünïcode/ütf", "a?b#c", "100%"])
def test_the_preview_shows_exactly_the_url_that_goes_out(stub, assets, board_id):
    prepared = assets.prepare("asset_library.list_board_guests", board_id=board_id, email="ana+q4@x.org")
    stub.add(responses.GET, prepared.sent_url, json={"data": [], "pagination": {}})
    assets.send(prepared)
    assert stub.calls[0].request.url == prepared.sent_url
    assert prepared.describe(assets.redactor, assets.auth_headers()).splitlines()[0] == f"GET {prepared.sent_url}"


def test_method_signatures_give_ids_the_type_their_service_uses():
    translation = inspect.signature(client_class("translation").get_submission).parameters
    assets = inspect.signature(client_class("asset_library").get_asset).parameters
    assert translation["submission_id"].annotation is int
    assert assets["asset_id"].annotation is str


# --- the session it sends through ---------------------------------------------------------------------------

def test_a_client_makes_its_own_session_that_keeps_to_one_origin(assets):
    from toolkit.http.origins import OneOriginSession
    assert type(assets.transport.session) is OneOriginSession
    assert assets.transport.session.headers["User-Agent"].startswith("toolkit/")


def test_a_session_handed_in_is_what_the_client_sends_through_with_its_auth_and_retries():
    from stubbed_services import BASE, CREDENTIALS, answered, reply
    answers = iter([reply(503), reply(json_body={"id": "a1"})])
    client = answered("asset_library", lambda request: next(answers))
    assert client.get_asset(asset_id="a1") == {"id": "a1"}
    first, second = client.transport.session.sent
    assert first.url == second.url == BASE["asset_library"] + "/assets/a1"
    assert second.headers["x-api-key"] == CREDENTIALS["asset_library"]["api_key"]     # the client's auth
    assert client.requests_sent == 2 and len(client.transport.sleep) == 1    # the 503 retried once
    # and through a workspace's connect, which hands it on
    from requests import Session
    own = Session()
    with toolkit.Workspace() as ws:
        conn = ws.connect("media_review", base_url=BASE["media_review"], session=own,
                          **CREDENTIALS["media_review"])
        assert conn.client.transport.session is own
