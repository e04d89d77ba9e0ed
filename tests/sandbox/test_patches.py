"""The audience platform's PATCH bodies against the RFCs: JSON Patch (RFC 6902, pointers RFC 6901)
and JSON Merge Patch (RFC 7396), over real HTTP against the sandbox, plus RFC 7396's appendix A
against the library the sandbox merges with.

The JSON Patch cases are our own, written after the kinds of case the public conformance suite
(npm `json-patch-test-suite`) checks: move, copy, a failed test, the array index "-", escaped
`~0`/`~1` pointers, leading zeros, and that a patch applies whole or not at all. The service's own
rule stays on top: only /tags may change (a `test` or a copy's `from` may read any member).
"""
from __future__ import annotations

import copy

import json_merge_patch
import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit.sandbox.audience_platform.service import AudiencePlatform

SERVICE = "audience_platform"
AUDIENCE = "cart-abandoners"            # a manual audience: not readOnly
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def box():
    with sandbox.start(emulators={SERVICE: AudiencePlatform}, seed=0) as running:
        yield running


@pytest.fixture(scope="module")
def http(box):
    creds = box.credentials(SERVICE)
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {creds['token']}"

    def call(method: str, headers: dict | None = None, json=None, audience: str = AUDIENCE) -> requests.Response:
        url = f"{creds['base_url']}/api/v2/audiences/{audience}"
        return session.request(method, url, headers=headers, json=json, timeout=10)
    return call


@pytest.fixture
def tagged(http):
    """The audience with tags ["a", "b"] before each case; gives its name for `copy from /name`."""
    answer = http("PATCH", MERGE, {"tags": ["a", "b"]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["tags"] == ["a", "b"]
    return answer.json()


def tags(http) -> list[str]:
    return http("GET").json()["tags"]


# --- RFC 6902: operations that apply -----------------------------------------------------------------

APPLIES = [
    ("add at the front", [{"op": "add", "path": "/tags/0", "value": "x"}], ["x", "a", "b"]),
    ("add with '-' appends", [{"op": "add", "path": "/tags/-", "value": "x"}], ["a", "b", "x"]),
    ("add at the length appends", [{"op": "add", "path": "/tags/2", "value": "x"}], ["a", "b", "x"]),
    ("remove one", [{"op": "remove", "path": "/tags/0"}], ["b"]),
    ("remove them all", [{"op": "remove", "path": "/tags"}], []),
    ("replace one", [{"op": "replace", "path": "/tags/1", "value": "y"}], ["a", "y"]),
    ("replace the list", [{"op": "replace", "path": "/tags", "value": ["z"]}], ["z"]),
    ("move to the front", [{"op": "move", "from": "/tags/1", "path": "/tags/0"}], ["b", "a"]),
    ("move to the end with '-'", [{"op": "move", "from": "/tags/0", "path": "/tags/-"}], ["b", "a"]),
    ("move onto itself", [{"op": "move", "from": "/tags/0", "path": "/tags/0"}], ["a", "b"]),
    # tags are a set (Unomi's Set<String>): a copied tag is kept where it first appears
    ("copy a tag", [{"op": "copy", "from": "/tags/1", "path": "/tags/0"}], ["b", "a"]),
    ("test then change", [{"op": "test", "path": "/tags", "value": ["a", "b"]},
                          {"op": "add", "path": "/tags/-", "value": "c"}], ["a", "b", "c"]),
    ("test an item", [{"op": "test", "path": "/tags/1", "value": "b"},
                      {"op": "remove", "path": "/tags/1"}], ["a"]),
    ("operations in order", [{"op": "add", "path": "/tags/-", "value": "c"},
                             {"op": "move", "from": "/tags/2", "path": "/tags/0"},
                             {"op": "remove", "path": "/tags/1"}], ["c", "b"]),
    ("an empty patch", [], ["a", "b"]),
    ("members other than op, path, from, value are ignored",
     [{"op": "add", "path": "/tags/-", "value": "x", "note": "why"}], ["a", "b", "x"]),
]


@pytest.mark.parametrize(("ops", "expected"), [c[1:] for c in APPLIES], ids=[c[0] for c in APPLIES])
def test_a_json_patch_applies_as_rfc_6902_says(http, tagged, ops, expected):
    answer = http("PATCH", JSON_PATCH, ops)
    assert answer.status_code == 200, answer.text
    assert answer.json()["tags"] == expected
    assert tags(http) == expected


def test_a_test_or_a_copy_may_read_any_member(http, tagged):
    ops = [{"op": "test", "path": "/name", "value": tagged["name"]},
           {"op": "test", "path": "/provider", "value": "manual"},
           {"op": "copy", "from": "/name", "path": "/tags/-"}]
    assert http("PATCH", JSON_PATCH, ops).json()["tags"] == ["a", "b", tagged["name"]]


# --- RFC 6902: operations that fail, and leave the audience as it was ----------------------------------

FAILS = [
    # a failed test, or a pointer the document lacks: the resource's state conflicts (RFC 5789, 409)
    ("a failed test", [{"op": "test", "path": "/tags/0", "value": "zzz"}], 409),
    ("a test of a member it lacks", [{"op": "test", "path": "/nope", "value": 1}], 409),
    ("a test of an index it lacks", [{"op": "test", "path": "/tags/5", "value": "a"}], 409),
    ("a failed test undoes what came before", [{"op": "add", "path": "/tags/-", "value": "x"},
                                               {"op": "test", "path": "/tags/0", "value": "zzz"}], 409),
    ("add past the end", [{"op": "add", "path": "/tags/3", "value": "x"}], 409),
    ("remove an index it lacks", [{"op": "remove", "path": "/tags/2"}], 409),
    ("replace an index it lacks", [{"op": "replace", "path": "/tags/2", "value": "x"}], 409),
    ("move from an index it lacks", [{"op": "move", "from": "/tags/7", "path": "/tags/0"}], 409),
    ("move the tags into themselves", [{"op": "move", "from": "/tags", "path": "/tags/0"}], 409),
    ("a later failure undoes a move", [{"op": "move", "from": "/tags/0", "path": "/tags/-"},
                                       {"op": "remove", "path": "/tags/9"}], 409),
    # a malformed patch: 400
    ("'-' is only for add", [{"op": "replace", "path": "/tags/-", "value": "x"}], 400),
    ("'-' cannot be removed", [{"op": "remove", "path": "/tags/-"}], 400),
    ("a leading zero is not an index", [{"op": "add", "path": "/tags/01", "value": "x"}], 400),
    ("a word is not an index", [{"op": "add", "path": "/tags/first", "value": "x"}], 400),
    ("a pointer starts with /", [{"op": "add", "path": "tags/0", "value": "x"}], 400),
    ("add needs a value", [{"op": "add", "path": "/tags/0"}], 400),
    ("move needs a from", [{"op": "move", "path": "/tags/0"}], 400),
    ("an unknown op", [{"op": "shuffle", "path": "/tags"}], 400),
    ("an op is a string", [{"op": 1, "path": "/tags"}], 400),
    ("an operation is an object", ["add"], 400),
    ("a patch is an array", {"op": "add", "path": "/tags/-", "value": "x"}, 400),
    # the service's rule: only the tags change, and they stay non-blank strings
    ("another member", [{"op": "add", "path": "/name", "value": "x"}], 400),
    ("a move takes its from away", [{"op": "move", "from": "/name", "path": "/tags/-"}], 400),
    ("a copy onto another member", [{"op": "copy", "from": "/tags/0", "path": "/description"}], 400),
    ("~1 escapes '/': the member 'tags/x'", [{"op": "add", "path": "/tags~1x", "value": "x"}], 400),
    ("~0 escapes '~': the member 'tags~'", [{"op": "add", "path": "/tags~0", "value": "x"}], 400),
    ("a tag is a string", [{"op": "add", "path": "/tags/-", "value": 5}], 400),
    ("a tag is not blank", [{"op": "add", "path": "/tags/-", "value": " "}], 400),
]


@pytest.mark.parametrize(("ops", "status"), [c[1:] for c in FAILS], ids=[c[0] for c in FAILS])
def test_a_json_patch_that_cannot_apply_changes_nothing(http, tagged, ops, status):
    answer = http("PATCH", JSON_PATCH, ops)
    assert answer.status_code == status, answer.text
    assert isinstance(answer.json()["message"], str) and answer.json()["message"]
    assert tags(http) == ["a", "b"]


def test_an_escaped_pointer_names_the_member_it_spells(http, tagged):
    # RFC 6901: "/tags~1x" is the member "tags/x", which the audience lacks, not /tags/x
    assert http("PATCH", JSON_PATCH, [{"op": "test", "path": "/tags~1x", "value": "a"}]).status_code == 409
    assert http("PATCH", JSON_PATCH, [{"op": "test", "path": "/tags~01", "value": "a"}]).status_code == 409


# --- RFC 7396 through the service -------------------------------------------------------------------

def test_a_merge_patch_leaves_what_it_does_not_name(http, tagged):
    # an empty merge patch changes nothing (the hand-written one emptied the tags)
    assert http("PATCH", MERGE, {}).json()["tags"] == ["a", "b"]
    assert tags(http) == ["a", "b"]


def test_a_merge_patch_replaces_a_list_whole_and_null_removes_it(http, tagged):
    assert http("PATCH", MERGE, {"tags": ["c"]}).json()["tags"] == ["c"]
    assert http("PATCH", MERGE, {"tags": None}).json()["tags"] == []


def test_a_merge_patch_of_a_profile_merges_nested_objects(box):
    creds = box.credentials(SERVICE)
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {creds['token']}"
    url = f"{creds['base_url']}/api/v2/profiles/{box.examples(SERVICE)['profile_id']}"
    before = session.get(url, timeout=10).json()["properties"]
    name, other = sorted(before)[:2]
    after = session.patch(url, json={"properties": {name: None, "extraNote": "x"}}, headers=MERGE,
                          timeout=10).json()["properties"]
    assert name not in after and after["extraNote"] == "x" and after[other] == before[other]


# --- RFC 7396 appendix A, against the library the sandbox merges with ------------------------------

APPENDIX_A = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), APPENDIX_A)
def test_rfc_7396_appendix_a(target, patch, expected):
    kept = copy.deepcopy(target)
    # as the sandbox calls it: on a copy, since the library merges into its target in place
    assert json_merge_patch.merge(copy.deepcopy(target), patch) == expected
    assert target == kept
