"""The audience platform emulator refuses malformed filters and durations with a 400, never a 500.

Over real HTTP with plain requests. The same edges are checked on the client side in tests/http/test_rules.py
and tests/http/test_filters.py; both sides read the language and the durations the same way.
"""
from __future__ import annotations

import datetime as dt

import pytest
import requests

import toolkit.sandbox as sandbox
from toolkit.sandbox.audience_platform.filter import MAX_DEPTH, parse_filter
from toolkit.sandbox.audience_platform.integrations import check_field, parse_duration
from toolkit.sandbox.audience_platform.service import AudiencePlatform
from toolkit.sandbox.exchange import Reject

SERVICE = "audience_platform"
MERGE = {"Content-Type": "application/merge-patch+json"}
ANALYTICS = "/ext/analytics/configuration"


@pytest.fixture(scope="module")
def api():
    with sandbox.start(emulators={SERVICE: AudiencePlatform}, seed=0) as box:
        creds = box.credentials(SERVICE)
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {creds['token']}"

        def call(method: str, path: str, **kwargs) -> requests.Response:
            return session.request(method, f"{creds['base_url']}/api/v2{path}", timeout=10, **kwargs)

        yield call


# --- the notification filter ----------------------------------------------------------------------

@pytest.mark.parametrize("expression", [
    "a:1 OR OR x:1",            # was read as a property named "OR x"
    "foo AND type:alert",       # was read as a property named "foo AND type"
    "type:alert AND NOT NOT",
    "a NOT b:1",
    "OR:1",
])
def test_keywords_are_not_property_names(api, expression):
    answer = api("GET", "/notifications", params={"filter": expression})
    assert answer.status_code == 400, answer.text
    assert "operator" in answer.json()["message"]


@pytest.mark.parametrize("expression", ["(" * 3000 + "type:system" + ")" * 3000, "NOT " * 3000 + "type:system"])
def test_a_filter_nested_past_reason_is_a_400_not_a_500(api, expression):
    for method in ("GET", "DELETE"):
        answer = api(method, "/notifications", params={"filter": expression})
        assert answer.status_code == 400, answer.text
        assert f"deeper than {MAX_DEPTH}" in answer.json()["message"]


def test_nesting_up_to_the_bound_is_read(api):
    every = api("GET", "/notifications", params={"filter": "type:system", "size": -1}).json()["totalSize"]
    deep = "(" * MAX_DEPTH + "type:system" + ")" * MAX_DEPTH
    assert api("GET", "/notifications", params={"filter": deep, "size": -1}).json()["totalSize"] == every
    negated = "NOT " * (MAX_DEPTH - 1) + "(type:system)"      # an odd number of NOTs and one parenthesis
    total = api("GET", "/notifications", params={"size": 1}).json()["totalSize"]
    assert api("GET", "/notifications", params={"filter": negated, "size": -1}).json()["totalSize"] == total - every
    too_deep = "(" * (MAX_DEPTH + 1) + "type:system" + ")" * (MAX_DEPTH + 1)
    assert api("GET", "/notifications", params={"filter": too_deep}).status_code == 400


def test_names_that_only_start_with_a_keyword_are_names():
    assert parse_filter("ANDROID:x OR NOTE:y") == ("or", [(":", "ANDROID", "x"), (":", "NOTE", "y")])
    assert parse_filter("first name:Ada") == (":", "first name", "Ada")
    with pytest.raises(Reject):
        parse_filter("first AND name:Ada")


# --- durations: Java's Duration.parse, bounds PT1H..P30D inclusive ------------------------------------

@pytest.mark.parametrize(("value", "status"), [
    ("PT59M59S", 400), ("PT1H", 200), ("P30D", 200), ("P30DT1S", 400), ("PT720H", 200),
    ("P1DT12H", 200), ("pt1h", 200), ("PT3600,5S", 200),
    ("P1W", 400), ("P1M", 400), ("P1Y", 400), ("-PT1H", 400), ("PT", 400), ("P1DT", 400),
    ("P99999999999D", 400),          # no timedelta holds it: was a 500
    ("P9999999999999999999D", 400),  # no Java long holds it
])
def test_refresh_interval_bounds_at_their_edges(api, value, status):
    answer = api("PATCH", ANALYTICS, headers=MERGE, json={"audienceDefinitionRefreshInterval": value})
    assert answer.status_code == status, (value, answer.text)
    if status == 200:
        assert answer.json()["audienceDefinitionRefreshInterval"] == value


def test_parse_duration_reads_java_grammar():
    assert parse_duration("P1DT2H3M4.5S") == dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    assert parse_duration("-P1DT-1H") == -dt.timedelta(hours=23)
    assert parse_duration("PT-0.5S") == -dt.timedelta(seconds=0.5)
    for text in ("P2W", "P1M", "P1Y", "PT", "P", "P1DT", " PT1H", "PT1.5H", "P١D", 3600, None):
        assert parse_duration(text) is None, text
    assert parse_duration("P99999999999D") == dt.timedelta.max
    assert check_field("x", "duration", "P99999999999D") == "x must be between PT1H and P30D"
