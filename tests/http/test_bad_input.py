"""Bad input over every catalog action: a ValidationError naming the param, and nothing sent (issue 18).

Each client's HTTP session answers every request itself and records it, so a case that gets past the
checks is seen, not sent anywhere. Properties, drawn with hypothesis (derandomized, so every run draws
the same cases), one test per action:
- a value that is wrong for its param whatever the service (a dict for an id, NaN, an integer no
  64-bit field holds, bytes in a JSON body, `..` in a path, a filter nested 3,000 deep, ...) is a
  ValidationError naming the param, its value masked when the param is secret, and nothing is sent;
- any value at all is either refused that way, or goes out as itself: no Python repr on the wire, no
  NaN turned into null, the path with exactly the segments of the action's path.
"""
from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import orjson
import pytest
import requests
import urllib3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stubbed_services import CREDENTIALS, Answering, reply

import toolkit
from toolkit import catalog
from toolkit.catalog.audience_platform_checks import notification_filter
from toolkit.catalog.spec import Action, Param
from toolkit.errors import ModeError, ValidationError, VersionError
from toolkit.http.session import OAuthPasswordAuth, RateBudget, Secret, Transport

SECRET = "s3cr3t-never-shown-4b1e"
LONG = 2**63
CASES = settings(max_examples=20, derandomize=True, database=None, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def answer_everything(request: requests.PreparedRequest) -> urllib3.HTTPResponse:
    """200 `{}` to every request, a token to the token URL: what is checked is what was sent."""
    token = urlsplit(request.url).path.endswith("/oauth/token")
    return reply(json_body={"access_token": "t-0a1b", "token_type": "bearer", "expires_in": 3600} if token else {})


_CLIENTS: dict[tuple[str, str], tuple[toolkit.Client, Answering]] = {}


def client_for(action: Action) -> tuple[toolkit.Client, Answering]:
    """A client in a mode the action is offered in (so its params are checked), its recorder emptied."""
    mode = "client" if "client" in action.modes else action.modes[0]
    key = (action.service, mode if action.service == "translation" else "client")
    if key not in _CLIENTS:
        service = catalog.SERVICES[action.service]
        client = toolkit.connect(action.service, base_url="http://127.0.0.1:9" + service.base_path, mode=key[1],
                                 transport=Transport(sleep=lambda seconds: None, budget=RateBudget(None, None)),
                                 **CREDENTIALS[action.service])
        recorder = Answering(answer_everything)
        client.transport.session.mount("http://", recorder)
        if isinstance(client.auth, OAuthPasswordAuth):
            client.auth.token()             # the login, before any case counts requests
        _CLIENTS[key] = (client, recorder)
    client, recorder = _CLIENTS[key]
    recorder.sent.clear()
    return client, recorder


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# --- values wrong for a param whatever the service ---------------------------------------------------

huge_ints = st.one_of(st.integers(min_value=LONG), st.integers(max_value=-LONG - 1))
non_finite = st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan")])
bad_leaves = st.one_of(non_finite, huge_ints, st.binary(max_size=8), st.just(object()), st.just({1, 2}),
                       st.just(Secret(SECRET)), st.just(1j))
bad_json = st.one_of(
    bad_leaves.map(lambda v: {"a": v}), bad_leaves.map(lambda v: [v]),
    bad_leaves.map(lambda v: {"a": [{"b": v}]}),
    st.integers(min_value=1, max_value=9).map(lambda n: {n: "key not a string"}),
    st.integers(min_value=65, max_value=3000).map(lambda d: nested(d)),
)
SCALAR_KINDS = ("string", "text", "id", "secret", "integer", "number", "boolean", "url", "email", "duration",
                "datetime", "epoch_ms")


def wrong_values(param: Param) -> st.SearchStrategy:
    kind, where = param.kind, param.where
    found = [non_finite, huge_ints, st.just(object()), st.integers(min_value=65, max_value=3000).map(nested)]
    if kind != "object":
        found.append(st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
    if kind in SCALAR_KINDS and not param.listed:
        found.append(st.lists(st.text(max_size=3), max_size=3))
    if kind in SCALAR_KINDS:
        found += [st.sets(st.text(max_size=3), max_size=2), st.frozensets(st.integers(), max_size=2)]
    if kind != "file":
        found += [st.binary(max_size=16), st.binary(max_size=16).map(bytearray)]
    if kind != "boolean":
        found.append(st.booleans())
    if param.required:
        found.append(st.none())
    if where == "path":
        found += [st.sampled_from([".", "..", ""]), st.integers(1001, 1_000_000).map(lambda n: "x" * n)]
    if where in ("body", "raw") and kind in ("object", "list", "int_list"):
        found.append(bad_json)
    if kind in ("integer", "epoch_ms"):
        found += [st.floats(allow_nan=False).filter(lambda f: not f.is_integer()), st.just("12")]
    if kind == "int_list":
        found += [st.lists(st.text(min_size=1), min_size=1, max_size=3), st.just([1.5]), st.just([True]),
                  huge_ints.map(lambda n: [n])]
    if kind == "id":
        found.append(st.floats())
    if kind == "secret":
        found += [st.integers(), st.just([SECRET]), st.just({"key": SECRET})]
    if kind == "list":
        found += [st.integers(), st.just([{"a": 1}]), st.just([b"x"]), st.just([None]), st.just([math.nan]),
                  st.just([["a"]])]
    if kind == "object":
        found += [st.text(), st.integers(min_value=-LONG, max_value=LONG - 1)]
    if kind == "url":
        found += [st.sampled_from(["http://[::1", "https://[", "example.com", "ftp://x.org", "http://"])]
    if kind == "duration":
        found += [st.sampled_from(["P99999999999D", "P9999999999999999999D", "P1W", "P1M", "P1Y", "PT59M59S",
                                   "P30DT1S", "PT", "P1DT", "-PT1H"])]
    if param.check is notification_filter:
        found += [st.integers(33, 3000).map(lambda n: "(" * n + "a:1" + ")" * n),
                  st.integers(33, 3000).map(lambda n: "NOT " * n + "a:1"),
                  st.sampled_from(["a:1 OR OR x:1", "foo AND type:alert", "a NOT b:1"])]
    return st.one_of(found)


_STRATEGIES: dict[tuple[str, str], st.SearchStrategy] = {}


def cases(action: Action, values: Any) -> st.SearchStrategy:
    """(param, value) drawn over the action's params; built once per action, as hypothesis checks each
    strategy it is given anew (building them per draw took most of the test's time)."""
    key = (action.id, values.__name__)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = st.one_of([st.tuples(st.just(p), values(p)) for p in action.params])
    return _STRATEGIES[key]


ACTIONS = sorted(catalog.ACTIONS)
WITH_PARAMS = [a for a in ACTIONS if catalog.ACTIONS[a].params]


def call(action: Action, param: Param, value: Any) -> tuple[BaseException | None, list]:
    client, recorder = client_for(action)
    params = {**action.example, param.name: value}
    try:
        client.call(action, **params)
    except (ValidationError, ModeError, VersionError) as error:
        return error, list(recorder.sent)
    return None, list(recorder.sent)


@pytest.mark.parametrize("action_id", WITH_PARAMS)
@CASES
@given(data=st.data())
def test_a_wrong_value_is_a_validation_error_and_nothing_is_sent(action_id, data):
    action = catalog.ACTIONS[action_id]
    param, value = data.draw(cases(action, wrong_values), label="param, value")
    error, sent = call(action, param, value)
    assert sent == [], f"{param.name}={value!r:.80} went out: {sent[0].method} {sent[0].url[:120]}"
    assert isinstance(error, ValidationError), f"{param.name}={value!r:.80} was not refused"
    assert param.name in {p.param for p in error.problems}
    assert error.rule and action.id in str(error)
    if param.secret:
        shown = str(error) + repr(error.value)
        assert SECRET not in shown and error.value in ("***", None)


# --- any value: refused, or sent as itself --------------------------------------------------------------

leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.floats(),
                   st.text(max_size=12), st.sampled_from([".", "..", "a/b", "%2e%2e", " ", "P1D", "PT1H",
                                                           "https://example.com/x", "a@b.co", "read:true"]),
                   st.binary(max_size=4))
anything = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=4), inner, max_size=3),
                                                        st.sets(st.text(max_size=3), max_size=2)), max_leaves=8)


def any_value(param: Param) -> st.SearchStrategy:
    return st.one_of(st.just(param.example), anything) if param.example is not None else anything


def must_be_refused(param: Param, value: Any, depth: int = 0) -> bool:
    """An oracle of its own, not toolkit.http.rules: values no service can take as they would be sent."""
    if isinstance(value, float) and not math.isfinite(value):
        return True
    if isinstance(value, int) and not isinstance(value, bool) and not -LONG <= value < LONG:
        return True
    if isinstance(value, bytes | bytearray) and param.kind != "file":
        return True
    if depth == 0 and param.where == "path" and (str(value) in (".", "..", "") or len(str(value)) > 1000):
        return True
    if depth == 0 and param.kind in SCALAR_KINDS:
        if isinstance(value, bool) and param.kind != "boolean":
            return True
        if isinstance(value, dict | set | frozenset):
            return True
        if isinstance(value, list | tuple) and not (param.listed and all(isinstance(v, str) for v in value)):
            return True
    if isinstance(value, set | frozenset) and (depth > 0 or param.kind not in ("list", "object")):
        return True
    if isinstance(value, dict | list | tuple | set | frozenset):
        items = list(value.values()) if isinstance(value, dict) else list(value)
        return any(must_be_refused(param, item, depth + 1) for item in items)
    return False


def as_json(value: Any) -> Any:
    """A value as JSON reads back: tuples are lists, a set of strings a sorted list."""
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(value)
    return value


@pytest.mark.parametrize("action_id", WITH_PARAMS)
@CASES
@given(data=st.data())
def test_any_value_is_refused_or_sent_as_itself(action_id, data):
    action = catalog.ACTIONS[action_id]
    param, value = data.draw(cases(action, any_value), label="param, value")
    error, sent = call(action, param, value)
    if error is not None:
        assert sent == []
        return
    assert not must_be_refused(param, value), f"{param.name}={value!r:.80} went out"
    request = sent[-1]
    url = urlsplit(request.url)
    client = client_for(action)[0]
    template = action.path_for(client._version(action, None))
    assert url.path.count("/") == (client.base_url + client.service.version_prefix.format(
        version=client._version(action, None)) + template).count("/") - 2, url.path     # the scheme's //
    assert not {".", ".."} & set(url.path.split("/")), url.path
    if isinstance(request.body, bytes) and "json" in request.headers.get("Content-Type", ""):
        body = orjson.loads(request.body)            # strict JSON: orjson refuses NaN and Infinity
        if param.kind == "object" and param.where in ("body", "raw"):
            assert (body if param.where == "raw" else body[param.wire]) == as_json(value)


# --- the issue's own cases, spelled out ---------------------------------------------------------------------

@pytest.mark.parametrize(("action_id", "params", "param"), [
    ("asset_library.remove_board_asset", {"board_id": "..", "asset_id": "4b7c"}, "board_id"),
    ("asset_library.list_asset_boards", {"asset_id": ".."}, "asset_id"),
    ("translation.delete_custom_attribute", {"submission_id": 1, "attribute_name": "."}, "attribute_name"),
    ("asset_library.get_asset", {"asset_id": "x" * 1_000_000}, "asset_id"),
    ("asset_library.get_asset", {"asset_id": {"a": 1}}, "asset_id"),
    ("asset_library.get_asset", {"asset_id": True}, "asset_id"),
    ("asset_library.create_import", {"source_url": "http://[::1"}, "source_url"),
    ("asset_library.create_board", {"title": "Q4", "description": b"bytes"}, "description"),
    ("audience_platform.update_experience_insights_configuration", {"credentials_json": 7}, "credentials_json"),
    ("audience_platform.update_analytics_configuration", {"audience_definition_refresh_interval": "P99999999999D"},
     "audience_definition_refresh_interval"),
    ("audience_platform.list_notifications", {"filter": "(" * 3000}, "filter"),
    ("audience_platform.create_profile", {"item_id": "p1", "properties": {"score": math.nan}}, "properties"),
    ("audience_platform.create_profile", {"item_id": "p1", "properties": {"n": 2**70}}, "properties"),
    ("translation.get_submission", {"submission_id": 2**70}, "submission_id"),
])
def test_the_issues_cases_are_refused_before_sending(action_id, params, param):
    action = catalog.ACTIONS[action_id]
    client, recorder = client_for(action)
    with pytest.raises(ValidationError) as info:
        client.call(action, **{**action.example, **params})
    assert info.value.param == param and recorder.sent == []


def test_a_literal_percent_dot_is_sent_encoded_not_resolved():
    """`%2e%2e` given by a user is their text: its % is encoded (%252e), so no server reads a dot segment."""
    action = catalog.ACTIONS["asset_library.get_asset"]
    client, recorder = client_for(action)
    client.call(action, asset_id="%2e%2e")
    assert urlsplit(recorder.sent[0].url).path == "/v1/assets/%252e%252e"


def test_values_from_a_dataframe_and_secrets_stay_accepted():
    submission = catalog.ACTIONS["translation.get_submission"]
    client, recorder = client_for(submission)
    client.call(submission, submission_id=np.int64(1234))
    assert urlsplit(recorder.sent[0].url).path.endswith("/submissions/1234")
    user = catalog.ACTIONS["audience_platform.create_user"]
    client, recorder = client_for(user)
    client.call(user, **{**user.example, "password": Secret("pw-0f9e")})
    assert orjson.loads(recorder.sent[0].body)["password"] == "pw-0f9e"
