"""The audience platform emulator over real HTTP: wire shapes, lifecycles and the catalog contract."""
from __future__ import annotations

import time

import pytest
import requests
from jsonschema import Draft201909Validator

import toolkit.sandbox as sandbox
from toolkit.catalog import audience_platform as catalog
from toolkit.catalog.spec import CONTENT_TYPES
from toolkit.sandbox.audience_platform.service import AudiencePlatform

SERVICE = "audience_platform"
MERGE = {"Content-Type": "application/merge-patch+json"}
PAGE_KEYS = {"list", "offset", "pageSize", "totalSize", "totalSizeRelation"}


def start(**options):
    return sandbox.start(emulators={SERVICE: AudiencePlatform}, **options)


class Api:
    """requests against one sandbox, with the bearer token and the version prefix filled in."""

    def __init__(self, box, version: str = "v2") -> None:
        self.box, self.version = box, version
        self.creds = box.credentials(SERVICE)
        self.base = self.creds["base_url"]
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {self.creds['token']}"

    def url(self, path: str, version: str | None = None) -> str:
        return f"{self.base}/api/{version or self.version}{path}"

    def __call__(self, method: str, path: str, version: str | None = None, **kwargs) -> requests.Response:
        return self.session.request(method, self.url(path, version), timeout=10, **kwargs)

    def ok(self, method: str, path: str, **kwargs):
        answer = self(method, path, **kwargs)
        assert answer.status_code < 300, (method, path, answer.status_code, answer.text)
        return answer.json() if answer.content else None


@pytest.fixture(scope="module")
def box():
    with start(seed=0) as running:
        yield running


@pytest.fixture(scope="module")
def api(box):
    return Api(box)


@pytest.fixture(scope="module")
def ex(box):
    return box.examples(SERVICE)


def error_of(answer: requests.Response, status: int) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert isinstance(body["message"], str) and body["message"] and isinstance(body["errors"], list)
    return body


# --- credentials and versions ----------------------------------------------------------------------

def test_credentials_bearer_and_basic(box, api):
    url = api.url("/version")
    error_of(requests.get(url, timeout=5), 401)
    error_of(requests.get(url, headers={"Authorization": "Bearer nope"}, timeout=5), 401)
    creds = api.creds
    assert requests.get(url, auth=(creds["username"], creds["password"]), timeout=5).status_code == 200
    error_of(requests.get(url, auth=(creds["username"], "wrong"), timeout=5), 401)
    error_of(requests.get(url, auth=("a.dubois", creds["password"]), timeout=5), 401)
    secrets = box.secrets()
    assert creds["token"] in secrets and creds["password"] in secrets


def test_v1_and_v2_differences(api):
    v1 = api.ok("GET", "/audiences?size=5", version="v1")
    v2 = api.ok("GET", "/audiences?size=5")
    meta = api.ok("GET", "/audiences/metadata?size=5")
    assert set(v1) == PAGE_KEYS and "profileCount" not in v1["list"][0]
    assert "profileCount" in v2["list"][0] and "condition" in v2["list"][0]
    assert v1["list"] == meta["list"]
    for path in ("/notifications", "/metrics?metricId=profiles.created"):
        assert api("GET", path, version="v1").status_code == 404
    assert api("POST", "/actions/audience/import", version="v1", json={"type": "url"}).status_code == 404
    assert api("DELETE", "/notifications?filter=read:true", version="v1").status_code == 404


def test_offset_paging_rules(api):
    for query in ("size=0", "size=-2", "size=-1&offset=5", "offset=-1", "size=x"):
        error_of(api("GET", f"/schemas/profile/properties?{query}"), 400)
    everything = api.ok("GET", "/schemas/profile/properties?size=-1")
    assert set(everything) == PAGE_KEYS and everything["totalSize"] == len(everything["list"]) >= 40
    page = api.ok("GET", "/schemas/profile/properties?offset=10&size=5")
    assert page["offset"] == 10 and page["pageSize"] == 5
    assert [p["id"] for p in page["list"]] == [p["id"] for p in everything["list"][10:15]]
    assert page["totalSizeRelation"] == "EQUAL"


# --- profiles and schema --------------------------------------------------------------------------

def test_seeded_profiles_pass_the_schema(api, ex):
    schema = api.ok("GET", "/schemas/profile")
    assert schema["$schema"].endswith("2019-09/schema")
    Draft201909Validator.check_schema(schema)
    validator = Draft201909Validator(schema, format_checker=Draft201909Validator.FORMAT_CHECKER)
    for profile_id in ex["profile_ids"][:25]:
        profile = api.ok("GET", f"/profiles/{profile_id}")
        assert profile["itemId"] == profile_id and profile["itemType"] == "profile"
        assert not list(validator.iter_errors(profile)), profile_id


def test_profile_validation_blank_ids_and_merge_patch(api):
    bad = {"itemId": "p-bad", "properties": {"firstName": "Ada", "nbOfVisits": "many", "shoeSize": 38}}
    body = error_of(api("POST", "/profiles?validate=true", json=bad), 400)
    assert any("nbOfVisits" in e for e in body["errors"]) and any("shoeSize" in e for e in body["errors"])
    assert api("GET", "/profiles/p-bad").status_code == 404                  # not saved
    error_of(api("POST", "/profiles", json={"itemId": "  ", "properties": {}}), 400)
    error_of(api("POST", "/profiles?validate=true", json={"itemId": "p1", "properties": {"email": "no"}}), 400)
    created = api.ok("POST", "/profiles?validate=true",
                     json={"itemId": "p1", "properties": {"firstName": "Ada", "email": "ada@example.com"}})
    assert created["properties"] == {"firstName": "Ada", "email": "ada@example.com"}
    assert created["segments"] == []
    error_of(api("POST", "/profiles", json={"itemId": "p1"}), 409)
    assert api.ok("POST", "/profiles", json={"itemId": "p-free", "properties": {"shoeSize": 38}})  # no validate
    patched = api.ok("PATCH", "/profiles/p1?validate=true", headers=MERGE,
                     json={"properties": {"email": None, "loyaltyTier": "gold"}})
    assert patched["properties"] == {"firstName": "Ada", "loyaltyTier": "gold"}
    error_of(api("PATCH", "/profiles/p1?validate=true", headers=MERGE,
                 json={"properties": {"loyaltyTier": "diamond"}}), 400)
    assert api.ok("GET", "/profiles/p1")["properties"]["loyaltyTier"] == "gold"   # unchanged
    error_of(api("PATCH", "/profiles/p1", headers=MERGE, json={"itemId": "other"}), 400)
    assert api("DELETE", "/profiles/p1").status_code == 204
    error_of(api("GET", "/profiles/p1"), 404)


def test_profile_data_policy(api, ex):
    prop = {"id": "vipLevel", "type": "integer", "minimum": 1, "maximum": 3}
    assert api.ok("POST", "/schemas/profile/properties?profileDataPolicy=disallow", json=prop)["id"] == "vipLevel"
    assert api.ok("GET", "/schemas/profile")["properties"]["properties"]["properties"]["vipLevel"]["type"] == "integer"
    profile_id = ex["profile_ids"][3]
    api.ok("PATCH", f"/profiles/{profile_id}?validate=true", headers=MERGE, json={"properties": {"vipLevel": 2}})
    error_of(api("PATCH", "/schemas/profile/properties/vipLevel?profileDataPolicy=disallow", headers=MERGE,
                 json={"maximum": 5}), 409)
    assert api.ok("PATCH", "/schemas/profile/properties/vipLevel?profileDataPolicy=allow", headers=MERGE,
                  json={"maximum": 5})["maximum"] == 5
    error_of(api("DELETE", "/schemas/profile/properties/vipLevel?profileDataPolicy=disallow"), 409)
    error_of(api("DELETE", "/schemas/profile/properties/nps"), 409)          # disallow by default, held
    assert api("DELETE", "/schemas/profile/properties/vipLevel?profileDataPolicy=allow").status_code == 204
    assert "vipLevel" not in api.ok("GET", "/schemas/profile")["properties"]["properties"]["properties"]
    error_of(api("GET", "/schemas/profile/properties/vipLevel"), 404)
    # the profile still holds the value: a disallow create sees it
    error_of(api("POST", "/schemas/profile/properties?profileDataPolicy=disallow", json=prop), 409)
    error_of(api("POST", "/schemas/profile/properties", json={"id": "bad-id", "type": "string"}), 400)
    error_of(api("POST", "/schemas/profile/properties", json={"id": "x1", "type": "color"}), 400)
    error_of(api("POST", "/schemas/profile/properties", json={"id": "x2", "type": "string", "minLength": -1}), 400)
    error_of(api("POST", "/schemas/profile/properties?profileDataPolicy=maybe", json={"id": "x3"}), 400)
    error_of(api("GET", "/schemas/profile/properties/not-alnum"), 400)


def test_privacy_anonymize_and_property_delete(api, ex):
    pii = {p["id"] for p in api.ok("GET", "/schemas/profile/properties?size=-1")["list"]
           if "personalIdentifierProperties" in p["systemTags"]}
    assert {"firstName", "lastName", "email", "phoneNumber"} <= pii
    profile_id = ex["profile_ids"][5]
    before = api.ok("GET", f"/profiles/{profile_id}")["properties"]
    after = api.ok("PATCH", f"/privacy/profiles/{profile_id}/anonymize?scope=web")
    assert not pii & set(after["properties"])
    assert set(after["properties"]) == set(before) - pii
    assert api("DELETE", f"/privacy/profiles/{profile_id}/properties/city").status_code == 204
    assert "city" not in api.ok("GET", f"/profiles/{profile_id}")["properties"]
    error_of(api("PATCH", "/privacy/profiles/nobody/anonymize"), 404)


# --- audiences --------------------------------------------------------------------------------

def test_audience_filters_and_sort(api):
    def ids(query: str) -> list[str]:
        return [a["id"] for a in api.ok("GET", f"/audiences/metadata?size=-1&{query}")["list"]]

    everything = api.ok("GET", "/audiences?size=-1")["list"]
    assert len(everything) >= 30
    vip = ids("tags=vip")
    assert vip and all("vip" in a["tags"] for a in everything if a["id"] in vip)
    assert set(ids("tags=vip,!events")) == {a["id"] for a in everything if "vip" in a["tags"]
                                            and "events" not in a["tags"]}
    assert set(ids("tags=vip,sms")) == {a["id"] for a in everything if {"vip", "sms"} & set(a["tags"])}
    assert set(ids("providers=analytics,warehouse")) == {a["id"] for a in everything
                                                         if a["provider"] in ("analytics", "warehouse")}
    assert set(ids("systemTags=!hidden")) == {a["id"] for a in everything if "hidden" not in a["systemTags"]}
    assert ids("names=SMS reachable") == ["sms-reachable"]
    assert ids("tags=") == [a["id"] for a in everything]
    names = [a["name"] for a in api.ok("GET", "/audiences?size=-1&sort=name:desc")["list"]]
    assert names == sorted(names, key=str.lower, reverse=True)
    rows = api.ok("GET", "/audiences?size=-1&sort=provider,profileCount:desc")["list"]
    assert rows == sorted(rows, key=lambda a: (a["provider"], -a["profileCount"]))
    error_of(api("GET", "/audiences?sort=name:up"), 400)
    error_of(api("GET", "/audiences?tags=vip,,x"), 400)


def test_audience_tag_patches(api):
    path = "/audiences/cart-abandoners"
    assert api.ok("PATCH", path, headers=MERGE, json={"tags": ["a", "b"]})["tags"] == ["a", "b"]
    ops = [{"op": "add", "path": "/tags/-", "value": "c"}, {"op": "remove", "path": "/tags/0"},
           {"op": "replace", "path": "/tags/0", "value": "B"}]
    patched = api.ok("PATCH", path, headers={"Content-Type": "application/json-patch+json"}, json=ops)
    assert patched["tags"] == ["B", "c"]
    assert api.ok("PATCH", path, headers={"Content-Type": "application/json-patch+json"},
                  json=[{"op": "replace", "path": "/tags", "value": ["x"]}])["tags"] == ["x"]
    error_of(api("PATCH", path, headers=MERGE, json={"name": "renamed"}), 400)
    api.ok("PATCH", path, headers=MERGE, json={"tags": ["x", "y"]})
    moved = api.ok("PATCH", path, headers={"Content-Type": "application/json-patch+json"},
                   json=[{"op": "move", "path": "/tags/0", "from": "/tags/1"},
                         {"op": "copy", "from": "/name", "path": "/tags/-"},
                         {"op": "remove", "path": "/tags/1"}, {"op": "remove", "path": "/tags/1"}])
    assert moved["tags"] == ["y"]                 # RFC 6902's move and copy, refused before
    error_of(api("PATCH", path, headers={"Content-Type": "application/json-patch+json"},
                 json=[{"op": "move", "path": "/tags/0", "from": "/name"}]), 400)   # a move removes its from
    api.ok("PATCH", path, headers=MERGE, json={"tags": ["x"]})
    error_of(api("PATCH", path, headers={"Content-Type": "application/json-patch+json"},
                 json=[{"op": "add", "path": "/name", "value": "x"}]), 400)
    error_of(api("PATCH", path, headers={"Content-Type": "application/json-patch+json"}, json={"tags": []}), 400)
    assert api.ok("GET", path)["tags"] == ["x"]
    error_of(api("PATCH", "/audiences/nope", headers=MERGE, json={"tags": []}), 404)


def test_a_read_only_audience_refuses_a_patch(api):
    # Unomi's readOnly: "can be accessed but not modified"; an integration manages these audiences
    managed = [a for a in api.ok("GET", "/audiences/metadata?size=-1")["list"] if a["readOnly"]]
    assert managed and {a["provider"] for a in managed} == {"analytics", "warehouse"}
    for audience in (managed[0], managed[-1]):
        path = f"/audiences/{audience['id']}"
        before = api.ok("GET", path)
        error_of(api("PATCH", path, headers=MERGE, json={"tags": ["mine"]}), 409)
        error_of(api("PATCH", path, headers={"Content-Type": "application/json-patch+json"},
                     json=[{"op": "add", "path": "/tags/-", "value": "mine"}]), 409)
        error_of(api("PATCH", path, version="v1", headers=MERGE, json={}), 409)
        assert api.ok("GET", path) == before
    error_of(api("PATCH", f"/audiences/{managed[0]['id']}", headers={"Content-Type": "text/plain"},
                 data="x"), 415)


def test_memberships_agree_with_counts(api, box):
    emulator = box.emulator(SERVICE)
    counts = {a["id"]: 0 for a in api.ok("GET", "/audiences?size=-1")["list"]}
    for index in range(emulator.state.population.count):
        profile_id = emulator.state.population.id(index)
        answer = api("GET", f"/audiences/profiles/{profile_id}")
        if answer.status_code == 404:               # deleted by another test
            continue
        audiences = answer.json()
        assert 0 <= len(audiences) <= 8
        for audience in audiences:
            assert set(audience) >= {"id", "name", "tags", "systemTags", "provider"}
            counts[audience["id"]] += 1
    live = {a["id"]: a["profileCount"] for a in api.ok("GET", "/audiences?size=-1")["list"]}
    assert counts == live
    member = next(a for a, n in counts.items() if n)
    some = api.ok("GET", f"/audiences/profiles/{emulator.state.population.id(0)}")
    inside = {a["id"] for a in some}
    for audience_id in list(counts)[:10]:
        answer = api.ok("GET", f"/audiences/{audience_id}/profiles/{emulator.state.population.id(0)}")
        assert answer is (audience_id in inside)
    error_of(api("GET", f"/audiences/nope/profiles/{emulator.state.population.id(0)}"), 404)
    error_of(api("GET", "/audiences/profiles/nobody"), 404)
    assert member


def test_segments_write_memberships(api, ex):
    profile_id = ex["profile_ids"][9]
    def count(audience_id: str) -> int:
        return api.ok("GET", f"/audiences/{audience_id}")["profileCount"]

    before = {a["id"] for a in api.ok("GET", f"/audiences/profiles/{profile_id}")}
    dropped = sorted(before)[0]
    added = next(a["id"] for a in api.ok("GET", "/audiences?size=-1")["list"] if a["id"] not in before)
    counts = count(dropped), count(added)
    segments = sorted(before - {dropped} | {added})
    patched = api.ok("PATCH", f"/profiles/{profile_id}", headers=MERGE, json={"segments": segments})
    assert sorted(patched["segments"]) == segments
    assert (count(dropped), count(added)) == (counts[0] - 1, counts[1] + 1)
    assert api.ok("GET", f"/audiences/{added}/profiles/{profile_id}") is True
    assert api.ok("GET", f"/audiences/{dropped}/profiles/{profile_id}") is False
    error_of(api("PATCH", f"/profiles/{profile_id}", headers=MERGE, json={"segments": ["nope"]}), 404)
    api.ok("PATCH", f"/profiles/{profile_id}", headers=MERGE, json={"segments": sorted(before)})
    assert (count(dropped), count(added)) == counts


def test_audience_import_lifecycle(api, box, ex):
    members = ex["profile_ids"][:4]
    package = {"type": "enclosed", "audience": {"id": "import-test", "name": "Import test", "tags": ["t"]},
               "members": [*members, "unknown-profile"]}
    answer = api("POST", "/actions/audience/import", json=package)
    assert answer.status_code == 202 and not answer.content
    error_of(api("GET", "/audiences/import-test"), 404)            # applied in the background
    box.advance(minutes=1)
    audience = api.ok("GET", "/audiences/import-test")
    assert audience["provider"] == "import" and audience["profileCount"] == 4 and audience["tags"] == ["t"]
    assert api.ok("GET", f"/audiences/import-test/profiles/{members[0]}") is True
    assert "import-test" in {a["id"] for a in api.ok("GET", f"/audiences/profiles/{members[1]}")}
    note = api.ok("GET", '/notifications?filter=details.audienceId:"import-test"')["list"]
    assert note and note[0]["severity"] == "WARNING" and note[0]["details"]["skipped"] == 1
    # a url package: a file the sandbox serves
    file_url = f"{api.base}/files/audiences/vip-event-2027.json"
    assert requests.get(file_url, timeout=5).json()["audience"]["id"] == "vip-event-2027"
    assert api("POST", "/actions/audience/import", json={"type": "url", "url": file_url}).status_code == 202
    box.advance(seconds=1)
    assert api.ok("GET", "/audiences/vip-event-2027")["profileCount"] == 12
    # bad packages fail in the request
    for bad in ({"type": "zip"}, {"type": "url", "url": "not a url"},
                {"type": "url", "url": f"{api.base}/files/audiences/missing.json"},
                {"type": "url", "url": f"{api.base}/files/audiences/broken.json"},
                {"type": "enclosed", "audience": {"id": "x"}, "members": "all"}):
        error_of(api("POST", "/actions/audience/import", json=bad), 400)
    body = error_of(api("POST", "/actions/audience/import",
                        json={"type": "url", "url": f"{api.base}/files/audiences/no-name.json"}), 400)
    assert "audience.name: must not be blank" in body["errors"]
    error_of(api("POST", "/actions/audience/import",
                 json={"type": "enclosed", "audience": {"id": "8765432101", "name": "x"}, "members": []}), 409)


# --- configurations ----------------------------------------------------------------------------

CONFIGS = ("/actions/profile/merge", "/cxi/configuration", "/docgen/configuration",
           "/ext/analytics/configuration", "/ext/warehouse/configuration")


def test_configurations_mask_secrets(api, box):
    secrets = [s for s in box.secrets() if len(s) > 8]
    for path in CONFIGS:
        for version in ("v1", "v2"):
            answer = api("GET", path, version=version)
            assert answer.status_code == 200
            assert not any(s in answer.text for s in secrets), path
    assert api.ok("GET", "/cxi/configuration")["credentialsJson"] == "***"
    docgen = api.ok("GET", "/docgen/configuration")
    assert docgen["clientSecret"] == "***" and docgen["password"] == "***"
    assert api.ok("GET", "/ext/warehouse/configuration")["googleCredentialsJson"] == "***"
    assert sum("PRIVATE KEY" in s for s in box.secrets()) >= 3


def test_configuration_merge_patches_are_checked(api, box):
    path = "/ext/analytics/configuration"
    before = api.ok("GET", path)
    for bad in ({"audienceDefinitionRefreshInterval": "PT30M"}, {"audienceMembershipRefreshInterval": "P31D"},
                {"audienceDefinitionRefreshInterval": "soon"}, {"enabled": "yes"}, {"colour": "red"},
                {"audienceMemberIndexPersistenceBulkSize": 0}, {"googleCredentialsJson": "not json"}):
        error_of(api("PATCH", path, headers=MERGE, json=bad), 400)
    assert api.ok("GET", path) == before
    after = api.ok("PATCH", path, headers=MERGE, json={"audienceDefinitionRefreshInterval": "PT1H",
                                                        "audienceMembershipRefreshInterval": "P30D",
                                                        "googleCredentialsJson": "***",
                                                        "profileDimensionIds": {"312345678": None}})
    assert after["audienceDefinitionRefreshInterval"] == "PT1H" and after["googleCredentialsJson"] == "***"
    assert after["profileDimensionIds"] == {"398765432": "customUser:cdpProfileId"}
    emulator = box.emulator(SERVICE)
    assert emulator.state.configs["analytics"]["googleCredentialsJson"].startswith('{"type":"service_account"')
    warehouse = "/ext/warehouse/configuration"
    error_of(api("PATCH", warehouse, headers=MERGE, json={"readTimeout": -1}), 400)
    error_of(api("PATCH", warehouse, headers=MERGE, json={"rootUrl": "bigquery"}), 400)
    assert api.ok("PATCH", warehouse, headers=MERGE, json={"readTimeout": 0})["readTimeout"] == 0
    docgen = "/docgen/configuration"
    error_of(api("PATCH", docgen, headers=MERGE, json={"tokenUrl": "ftp://x"}), 400)
    error_of(api("PATCH", docgen, headers=MERGE, json={"grantType": "password", "username": None}), 400)
    new_secret = "dgs_rotated_secret_value_123"
    assert api.ok("PATCH", docgen, headers=MERGE, json={"clientSecret": new_secret})["clientSecret"] == "***"
    assert new_secret in box.secrets()
    merge = api.ok("PATCH", "/actions/profile/merge", version="v1", headers=MERGE, json={"enabled": False})
    assert merge == {"enabled": False} == api.ok("GET", "/actions/profile/merge")
    jwks = api.ok("PATCH", "/security/jwks/configuration", headers=MERGE,
                  json={"enabled": True, "endpoints": ["https://idp.example.com/jwks"]})
    assert jwks["enabled"] and "https://idp.example.com/jwks" in jwks["endpoints"]
    assert len(api.ok("GET", "/security/jwks/configuration/list")) == 2
    error_of(api("PATCH", "/security/jwks/configuration", headers=MERGE, json={"endpoints": ["nope"]}), 400)


# --- analytics, warehouse, documents -------------------------------------------------------------

def test_analytics_audiences(api, box):
    base = "/ext/analytics/accounts/123456789/webproperties/UA-123456789-1/audiences"
    page = api.ok("GET", f"{base}?size=-1")
    assert set(page) == PAGE_KEYS and page["list"]
    assert {r["accountId"] for r in page["list"]} == {"123456789"}
    inactive = next(r for r in page["list"] if not r["active"])
    error_of(api("PATCH", f"{base}/{inactive['audienceId']}?refreshMemberships=true", headers=MERGE, json={}), 400)
    error_of(api("GET", f"{base}/{inactive['audienceId']}x"), 404)
    error_of(api("GET", "/ext/analytics/accounts/123456789/webproperties/UA-0/audiences"), 404)
    box.advance(hours=1)
    now = api.ok("GET", "/monitor/service")["checked"]
    active = api.ok("PATCH", f"{base}/{inactive['audienceId']}?refreshMemberships=true", headers=MERGE,
                    json={"active": True})
    assert active["active"] and active["lastMembershipRefresh"] == now
    tracked = api.ok("GET", f"/audiences/{inactive['audienceId']}")
    assert tracked["provider"] == "analytics" and tracked["profileCount"] == active["memberCount"] > 0
    stale = "/ext/analytics/accounts/123456789/webproperties/UA-123456789-1/audiences/8765432102"
    version = api.ok("GET", stale)["definitionVersion"]
    refreshed = api.ok("PATCH", f"{stale}?refreshDefinition=true", headers=MERGE, json={})
    assert refreshed["definitionVersion"] == version + 1 and refreshed["lastMembershipRefresh"] == now
    error_of(api("PATCH", f"{stale}?refreshDefinition=maybe", headers=MERGE, json={}), 400)


def test_warehouse_definitions(api):
    base = "/ext/warehouse/query/audience"
    body = {"id": "dw-new", "projectId": "p", "datasetName": "d", "tableName": "t", "audienceTags": ["x"]}
    created = api.ok("POST", base, json=body)
    assert created["active"] is False and created["audienceTags"] == ["x"] and "audienceName" in created
    error_of(api("POST", base, json=body), 409)
    error_of(api("POST", base, json={"id": "dw-x", "projectId": "p", "datasetName": " "}), 400)
    error_of(api("POST", base, json={**body, "id": "dw-y", "lastMembershipRefresh": "yesterday"}), 400)
    error_of(api("PATCH", f"{base}/dw-new", headers=MERGE, json={"projectId": "q"}), 400)
    assert api.ok("PATCH", f"{base}/dw-new", headers=MERGE, json={"active": True, "name": "N"})["name"] == "N"
    assert "dw-new" in [d["id"] for d in api.ok("GET", f"{base}?size=-1")["list"]]
    assert api("DELETE", f"{base}/dw-new").status_code == 204
    error_of(api("GET", f"{base}/dw-new"), 404)
    profile = api.ok("GET", "/ext/warehouse/query/profile/dw-crm-customers")
    assert profile["profileIdColumn"] == "customer_id"
    error_of(api("PATCH", "/ext/warehouse/query/profile/dw-crm-customers", headers=MERGE,
                 json={"audienceName": "x"}), 400)


def test_document_generation_communication(api, ex):
    answer = api.ok("POST", "/docgen/communication", json={"communicationId": "winback",
                                                           "profileId": ex["profile_ids"][7]})
    assert answer["communicationId"] == "COMM-0007" and answer["status"] == "INITIATED"
    error_of(api("POST", "/docgen/communication", json={"communicationId": " ", "profileId": "x"}), 400)
    error_of(api("POST", "/docgen/communication", json={"communicationId": "c", "profileId": "nobody"}), 404)


# --- notifications and metrics ------------------------------------------------------------------

def test_notification_filters(api, box):
    everything = api.ok("GET", "/notifications?size=-1")["list"]
    assert len(everything) >= 250
    assert [n["created"] for n in everything] == sorted((n["created"] for n in everything), reverse=True)

    def found(expression: str) -> list[dict]:
        answer = api("GET", "/notifications", params={"filter": expression, "size": -1})
        assert answer.status_code == 200, (expression, answer.text)
        return answer.json()["list"]

    def expect(expression: str, keep) -> None:
        assert [n["id"] for n in found(expression)] == [n["id"] for n in everything if keep(n)], expression

    expect("severity:ERROR", lambda n: n["severity"] == "ERROR")
    expect("severity!:INFO", lambda n: n["severity"] != "INFO")
    expect("severity:[ERROR, WARNING] AND read:false",
           lambda n: n["severity"] in ("ERROR", "WARNING") and not n["read"])
    expect("type!:[audienceRefresh,analyticsSync]", lambda n: n["type"] not in ("audienceRefresh", "analyticsSync"))
    expect("NOT read:true OR (type:system AND severity:ERROR)",
           lambda n: not n["read"] or (n["type"] == "system" and n["severity"] == "ERROR"))
    expect("NOT (read:true OR type:system)", lambda n: not (n["read"] or n["type"] == "system"))
    expect("details.value>1000", lambda n: n["details"].get("value", 0) > 1000)
    expect("details.value >: 1000 AND details.value > 999.5", lambda n: n["details"].get("value", 0) >= 1000)
    expect('created>:"2026-11-01"', lambda n: n["created"] >= "2026-11-01")
    expect("created>2026-10-30T00:00:00Z AND type:privacy",
           lambda n: n["created"] > "2026-10-30T00:00:00Z" and n["type"] == "privacy")
    message = everything[3]["message"]
    expect(f'message:"{message}"', lambda n: n["message"] == message)
    # quotes and backslashes inside a quoted value
    odd = 'say-"hi"\\path'
    api.ok("POST", "/actions/audience/import",
           json={"type": "enclosed", "audience": {"id": odd, "name": "odd"}, "members": []})
    box.advance(seconds=1)
    quoted = odd.replace("\\", "\\\\").replace('"', '\\"')
    hits = found(f'details.audienceId:"{quoted}" AND message:"Audience {quoted} imported: 0 members"')
    assert len(hits) == 1 and hits[0]["details"]["audienceId"] == odd
    for bad in ("severity:", "(severity:ERROR", "severity<ERROR", 'severity:"open', "a:1 b:2",
                "severity>[A,B]", "AND", "severity:[A,", "details.value>abc", 'message:"open \\"'):
        error_of(api("GET", "/notifications", params={"filter": bad}), 400)


def test_notification_sort_and_deletes(api):
    rows = api.ok("GET", "/notifications?size=-1&sort=severity,created:desc")["list"]
    assert rows == sorted(sorted(rows, key=lambda n: n["created"], reverse=True), key=lambda n: n["severity"])
    total = api.ok("GET", "/notifications?size=1")["totalSize"]
    victim = rows[5]["id"]
    assert api("DELETE", f"/notifications/{victim}").status_code == 204
    error_of(api("DELETE", f"/notifications/{victim}"), 404)
    error_of(api("DELETE", "/notifications/00000000-0000-4000-8000-000000000000"), 404)
    system = api.ok("GET", "/notifications?size=-1&filter=type:system")["totalSize"]
    assert system > 0
    assert api("DELETE", "/notifications", params={"filter": "type:system"}).status_code == 204
    assert api.ok("GET", "/notifications?filter=type:system")["totalSize"] == 0
    after = api.ok("GET", "/notifications?size=-1")
    assert after["totalSize"] == total - 1 - system == len(after["list"])
    assert victim not in {n["id"] for n in after["list"]}
    error_of(api("DELETE", "/notifications", params={"filter": "type:"}), 400)


def test_notification_cap_of_1000():
    with start(seed=1, scale=10) as big:
        api = Api(big)
        for query in ("size=-1", "size=5000"):
            page = api.ok("GET", f"/notifications?{query}")
            assert len(page["list"]) == 1000 and page["totalSize"] == 3000
        tail = api.ok("GET", "/notifications?offset=2500&size=1000")
        assert len(tail["list"]) == 500


def test_metrics(api, box, ex):
    assert len(ex["metric_ids"]) >= 20
    page = api.ok("GET", "/metrics?metricId=api.requests&size=-1")
    points = page["list"]
    assert set(page) == PAGE_KEYS and len(points) == page["totalSize"] >= 14 * 24
    assert [p["timestamp"] for p in points] == sorted(p["timestamp"] for p in points)
    assert set(points[0]) == {"metricId", "name", "unit", "timestamp", "value"}
    assert all(isinstance(p["value"], float | int) for p in points)
    second = api.ok("GET", "/metrics?metricId=api.requests&offset=1&size=2")["list"]
    assert second == points[1:3]
    box.advance(hours=3)
    assert api.ok("GET", "/metrics?metricId=api.requests&size=1")["totalSize"] == len(points) + 3
    error_of(api("GET", "/metrics?metricId=nope"), 404)
    error_of(api("GET", "/metrics"), 400)


# --- users and system -----------------------------------------------------------------------------

def test_users(api):
    users = api.ok("GET", "/security/users")
    assert isinstance(users, list) and {"cdp-integration", "a.dubois"} <= {u["username"] for u in users}
    assert all("password" not in u for u in users)
    error_of(api("POST", "/security/users", json={"username": " "}), 400)
    error_of(api("POST", "/security/users", json={"username": "x", "email": "nope"}), 400)
    error_of(api("POST", "/security/users", json={"username": "x", "roles": ["wizard"]}), 400)
    created = api.ok("POST", "/security/users", json={"username": "tester", "password": "s3cret-pass",
                                                       "roles": ["analyst"]})
    assert created["username"] == "tester" and "password" not in created
    error_of(api("POST", "/security/users", json={"username": "tester"}), 409)
    tester = (f"{api.base}/api/v2/security/users/tester", ("tester", "s3cret-pass"))
    error_of(requests.delete(tester[0], auth=tester[1], timeout=5), 400)         # itself
    error_of(api("DELETE", "/security/users/cdp-integration"), 400)             # the token's user
    assert api.ok("PATCH", "/security/users/tester", headers=MERGE, json={"enabled": False})["enabled"] is False
    error_of(requests.get(api.url("/version"), auth=tester[1], timeout=5), 401)
    assert api("DELETE", "/security/users/tester").status_code == 204
    error_of(api("DELETE", "/security/users/tester"), 404)


def test_system_information(api):
    health = api.ok("GET", "/monitor/service", version="v1")
    assert health["status"] == "UP" and {s["name"] for s in health["services"]} == {"vault", "core-data"}
    assert set(api.ok("GET", "/version")) >= {"version", "buildNumber", "buildDate"}
    key = api("GET", "/security/vault/publickey")
    assert key.status_code == 200 and key.text.startswith("-----BEGIN PUBLIC KEY-----")
    assert key.headers["Content-Type"].startswith("text/plain")


# --- determinism and scale --------------------------------------------------------------------

def test_same_seed_same_data():
    answers = []
    for _ in range(2):
        with start(seed=7) as running:
            api = Api(running)
            ex = running.examples(SERVICE)
            answers.append((ex, running.secrets(), api.ok("GET", f"/profiles/{ex['profile_id']}"),
                            api.ok("GET", "/notifications?size=20"), api.ok("GET", "/audiences?size=-1")))
    assert answers[0] == answers[1]


def test_scale_1000_builds_fast_and_pages_deep():
    began = time.perf_counter()
    with start(seed=0, scale=1000) as big:
        assert time.perf_counter() - began < 10
        api = Api(big)
        emulator = big.emulator(SERVICE)
        assert emulator.state.population.count == 200_000
        total = sum(a["profileCount"] for a in api.ok("GET", "/audiences?size=-1")["list"])
        assert 900_000 <= total <= 1_100_000
        page = api.ok("GET", "/notifications?offset=120000&size=1000")
        assert page["totalSize"] == 300_000 and len(page["list"]) == 1000
        last = emulator.state.population.id(199_999)
        assert api.ok("GET", f"/profiles/{last}")["itemId"] == last
        assert api.ok("GET", f"/audiences/profiles/{last}") is not None


# --- the catalog contract ---------------------------------------------------------------------

def test_the_examples_create_a_user_who_does_not_exist_yet(api, ex):
    """examples()'s username names a seeded user; creating one of that name would collide, so the
    create's own example (the catalog's) is what a recorded or contract call sends."""
    create = next(a for a in catalog.ACTIONS if a.id == "audience_platform.create_user")
    new = ex["overrides"][create.id]["username"]
    assert new == create.example["username"] != ex["username"]
    users = {user["username"] for user in api.ok("GET", "/security/users")}
    assert ex["username"] in users and new not in users


def _call(api: Api, ex: dict, action, version: str) -> requests.Response:
    """The action's example call: catalog example params, path ids from examples()."""
    path = action.path_for(version)
    query, body, raw = {}, {}, None
    overrides = ex.get("overrides", {}).get(action.id, {})
    for param in action.params:
        value = param.example
        if param.where == "path":
            key = "schema_property_id" if param.name == "property_id" and action.group == "Schemas" else param.name
            value = overrides.get(param.name, ex.get(key, value))
            path = path.replace("{" + param.name + "}", str(value))
        elif value is None:
            continue
        elif param.where == "query":
            value = ex.get(param.name, value) if param.name == "metric_id" else value
            query[param.wire] = str(value).lower() if isinstance(value, bool) else value
        elif param.where == "body":
            body[param.wire] = ex.get(param.name, value) if param.name == "profile_id" else value
        elif param.where == "raw":
            raw = value
    headers = {"Content-Type": CONTENT_TYPES[action.body]} if action.body else {}
    payload = raw if raw is not None else (body if action.body else None)
    return api(action.method, path, version=version, params=query, headers=headers,
               json=payload)


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_every_action_answers_its_example(version):
    with start(seed=3) as running:
        api, ex = Api(running), running.examples(SERVICE)
        served = [a for a in catalog.ACTIONS if version in a.versions]
        assert len(served) == (56 if version == "v2" else 50)
        for action in served:
            answer = _call(api, ex, action, version)
            assert answer.status_code == action.status, (action.id, answer.status_code, answer.text)
            if action.response == "page":
                assert set(answer.json()) == PAGE_KEYS, action.id
            elif action.response == "list":
                assert isinstance(answer.json(), list), action.id
            elif action.response == "boolean":
                assert isinstance(answer.json(), bool), action.id
            elif action.response == "record":
                assert isinstance(answer.json(), dict), action.id
            elif action.response == "none":
                assert not answer.content, action.id


# --- issue 17 -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("package", [
    {}, {"type": "csv"}, [], {"type": "url"}, {"type": "url", "url": "files/audience.json"},
    {"type": "enclosed", "members": ["p1"]}, {"type": "enclosed", "audience": {"name": "VIP"}, "members": []},
    {"type": "enclosed", "audience": {"id": " ", "name": "VIP"}, "members": []},
    {"type": "enclosed", "audience": {"id": "vip", "name": ""}, "members": []},
    {"type": "enclosed", "audience": {"id": "vip", "name": "VIP", "tags": "a"}, "members": []},
    {"type": "enclosed", "audience": {"id": "vip", "name": "VIP"}},
    {"type": "enclosed", "audience": {"id": "vip", "name": "VIP"}, "members": ["p1", 2]}])
def test_the_import_refuses_the_packages_the_client_refuses(api, package):
    """tests/http/test_seed_rules.py refuses each of these before sending; the emulator answers 400."""
    error_of(api("POST", "/actions/audience/import", json=package), 400)


def test_a_blank_profile_dimension_name_records_the_documents_defaults():
    """A membership refresh records the dimension it read the profile id from, once per property (not
    retroactive); blank, the older property type reads the system client-id dimension, the newer
    `customUser:clientId`; removing an entry has the next refresh record it afresh."""
    with start(seed=0) as fresh:
        dimensions_recorded(Api(fresh))


def dimensions_recorded(api: Api) -> None:
    path = "/ext/analytics/configuration"
    api.ok("PATCH", path, headers=MERGE, json={"profileDimensionName": None,
                                               "profileDimensionIds": {"312345678": None}})
    refresh = "/ext/analytics/accounts/123456789/webproperties/{}/audiences/{}?refreshMemberships=true"
    api.ok("PATCH", refresh.format("312345678", "8765432117"), headers=MERGE, json={})
    api.ok("PATCH", refresh.format("UA-123456789-1", "8765432101"), headers=MERGE, json={})
    ids = api.ok("GET", path)["profileDimensionIds"]
    assert ids["312345678"] == "customUser:clientId"
    assert ids["UA-123456789-1"] == "ga:clientId"
    assert ids["398765432"] == "customUser:cdpProfileId"          # untouched: changes are not retroactive
    api.ok("PATCH", path, headers=MERGE, json={"profileDimensionName": "customUser:cdpId"})
    api.ok("PATCH", refresh.format("312345678", "8765432117"), headers=MERGE, json={})
    assert api.ok("GET", path)["profileDimensionIds"]["312345678"] == "customUser:clientId"
    api.ok("PATCH", path, headers=MERGE, json={"profileDimensionIds": {"312345678": None}})
    api.ok("PATCH", refresh.format("312345678", "8765432117"), headers=MERGE, json={})
    assert api.ok("GET", path)["profileDimensionIds"]["312345678"] == "customUser:cdpId"
