"""Wrong-kind values refused before anything reaches the service (issue 35 items 1-2, issue 39 item 7).

Against the sandbox, which counts every request that reaches it: for every action's params and every
fetchable resource's filters (its ids included), a value of the wrong kind drawn with hypothesis is a
ToolkitError of at most 3 lines, and the sandbox's count of requests does not move. Then one test per
mistake the issues name, with the figures they give.
"""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bad_input import huge_ints, wrong_values

import toolkit
from toolkit import catalog
from toolkit.errors import ToolkitError, ValidationError
from toolkit.http.durations import span_seconds
from toolkit.pull import given as pull_given

CASES = settings(max_examples=6, derandomize=True, database=None, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    box = toolkit.sandbox.start()
    ws = toolkit.Workspace(tmp_path_factory.mktemp("kinds") / "w.duckdb")
    conns = {service: ws.connect(service, **box.credentials(service)) for service in box.services}
    yield box, ws, conns
    ws.close()
    box.stop()


def refused(box: Any, call: Any) -> ToolkitError:
    """The error `call` raises, having sent nothing to the sandbox."""
    before = box.stats()["requests"]
    with pytest.raises(ToolkitError) as caught:
        call()
    assert box.stats()["requests"] == before, f"{caught.value} but requests reached the sandbox"
    assert len(str(caught.value).splitlines()) <= 3, str(caught.value)
    return caught.value


def integer_id_values(service: str) -> list[st.SearchStrategy]:
    """Text that is no integer, for an id of a service whose ids are integers."""
    if catalog.SERVICES[service].ids != "integer":
        return []
    return [st.text(min_size=1, max_size=8).filter(lambda t: not t.strip().lstrip("-").isdigit())]


def action_values(action_id: str) -> st.SearchStrategy:
    action = catalog.ACTIONS[action_id]
    return st.one_of([st.tuples(st.just(p), st.one_of(
        [wrong_values(p), *(integer_id_values(action.service) if p.kind == "id" else [])]))
        for p in action.params])


WITH_PARAMS = sorted(a for a in catalog.ACTIONS if catalog.ACTIONS[a].params)


@pytest.mark.parametrize("action_id", WITH_PARAMS)
def test_no_wrong_kind_reaches_the_sandbox_from_an_action(world, action_id):
    box, _, conns = world
    action = catalog.ACTIONS[action_id]
    client = conns[action.service].client

    @CASES
    @given(case=action_values(action_id))
    def check(case):
        param, value = case
        error = refused(box, lambda: client.call(action, **{**action.example, param.name: value}))
        if isinstance(error, ValidationError):
            assert param.name in {p.param for p in getattr(error, "problems", [error])}, str(error)

    check()


# values no list of ids, and no id, can be
not_ids = st.one_of(st.floats(), st.booleans(), st.binary(min_size=1, max_size=4), st.just(object()), huge_ints,
                    st.dictionaries(st.text(max_size=3), st.integers(), min_size=1, max_size=2),
                    st.just(dt.timedelta(hours=1)), st.just([{"a": 1}]), st.just([[1]]), st.just([math.nan]),
                    st.just([True]), st.just([""]), st.just(""))


def resource_values(key: tuple[str, str]) -> st.SearchStrategy:
    resource = catalog.RESOURCES[key]
    drawn = [st.tuples(st.just(name), st.one_of([not_ids, *integer_id_values(resource.service)]))
             for name in sorted(pull_given.id_filters(resource))]
    for param in catalog.ACTIONS[resource.action].params:
        if param.name != resource.fan_out and param.name not in pull_given.id_filters(resource):
            values = wrong_values(param).filter(lambda v: v is not None)   # None: the filter not given
            drawn.append(st.tuples(st.just(param.name), st.one_of(
                [values, *(integer_id_values(resource.service) if param.kind == "id" else [])])))
    return st.one_of(drawn)


def takes_filters(resource: Any) -> bool:
    action = catalog.ACTIONS[resource.action]
    return bool(pull_given.id_filters(resource) or [p for p in action.params if p.name != resource.fan_out])


FETCHABLE = sorted(key for key in catalog.RESOURCES if catalog.RESOURCES[key].settings is None)
FILTERED = [key for key in FETCHABLE if takes_filters(catalog.RESOURCES[key])]


@pytest.mark.parametrize("key", FILTERED, ids=lambda key: ".".join(key))
def test_no_wrong_kind_reaches_the_sandbox_from_a_fetch(world, key):
    box, _, conns = world
    service, name = key

    @CASES
    @given(case=resource_values(key))
    def check(case):
        filter_name, value = case
        refused(box, lambda: conns[service].fetch(name, progress=False, **{filter_name: value}))

    check()


@pytest.mark.parametrize("key", FETCHABLE, ids=lambda key: ".".join(key))
@pytest.mark.parametrize("option, value", [("max_age", "soon"), ("max_age", -1), ("max_age", [1]),
                                           ("budget", "1 hour"), ("workers", 0), ("workers", 2.5),
                                           ("on_error", "ignore"), ("refresh", "yes"), ("progress", "no")])
def test_a_pulls_own_options_are_checked_before_anything_is_sent(world, key, option, value):
    box, _, conns = world
    error = refused(box, lambda: conns[key[0]].fetch(key[1], **{option: value}))
    assert isinstance(error, ValidationError) and error.param == option


# --- the mistakes the issues name -------------------------------------------------------------------

def test_a_lone_profile_id_is_one_id_never_its_characters(world):
    box, _, conns = world
    profile = box.examples("audience_platform")["profile_ids"][0]
    before = box.stats()["by_action"].get("audience_platform.get_profile_audiences", 0)
    frame = conns["audience_platform"].fetch("memberships", profile_ids=profile, progress=False)
    # one request for the one profile (it was 15 and more, one per character, ending in a 404)
    assert box.stats()["by_action"]["audience_platform.get_profile_audiences"] - before == 1
    assert set(frame["profile_id"].astype(str)) <= {profile}


def test_a_lone_submission_id_is_one_id_and_its_digits_are_the_integer(world):
    box, _, conns = world
    submission = box.examples("translation")["submission_id"]
    by_int = conns["translation"].fetch("targets", submission_ids=int(submission), progress=False)
    by_text = conns["translation"].fetch("targets", submission_ids=str(submission), progress=False, refresh=True)
    assert len(by_int) == len(by_text) > 0
    assert set(by_int["submission_id"]) == {int(submission)}


@pytest.mark.parametrize("value", [5.0, True, {"id": 5}, b"5", object(), [{"a": 1}]])
def test_ids_that_are_neither_an_id_nor_a_list_of_them_are_refused(world, value):
    box, _, conns = world
    error = refused(box, lambda: conns["audience_platform"].fetch("memberships", profile_ids=value))
    assert isinstance(error, ValidationError) and error.param == "profile_ids"


def test_an_integer_service_refuses_ids_that_are_not_integers(world):
    box, _, conns = world
    error = refused(box, lambda: conns["translation"].client.call("translation.get_submission", submission_id="first"))
    assert "integer" in str(error)
    error = refused(box, lambda: conns["translation"].fetch("targets", submission_ids=["1001", "first"]))
    assert "submission_ids=['1001', 'first']: 'first' among them: must be an integer id" in str(error)
    # the other services' ids are strings: a name there is an id, and goes out
    assert pull_given.ids_of(catalog.RESOURCES["audience_platform", "memberships"], "profile_ids", "first") == ["first"]


@pytest.mark.parametrize("filters", [{"submission_ids": 5.5}, {"statuses": 5}, {"page_size": "many"}])
def test_filter_values_of_the_wrong_type_are_toolkit_errors(world, filters):
    box, _, conns = world
    refused(box, lambda: conns["translation"].fetch("targets", **filters))


def test_an_integer_no_64_bit_field_holds_is_refused_not_a_type_error(world):
    box, _, conns = world
    error = refused(box, lambda: conns["asset_library"].fetch("assets", created_at_gte=-2**63 - 1))
    assert isinstance(error, ValidationError) and error.param == "created_at_gte"


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("30m", 1800), ("6h", 21_600), ("2d", 172_800),
                                           ("1.5h", 5400), ("PT6H", 21_600), (3600, 3600),
                                           (dt.timedelta(hours=1), 3600), ("45", 45)])
def test_one_duration_parser_for_python_and_the_cli(text, seconds):
    from toolkit.cli.options import duration as _seconds
    assert span_seconds(text) == seconds
    if isinstance(text, str):
        assert _seconds(text) == seconds


@pytest.mark.parametrize("text", ["1h30m", "-1h", "soon", "", "nan", "1e400"])
def test_durations_that_are_none_are_refused_in_one_line(text):
    with pytest.raises(ValidationError) as caught:
        span_seconds(text, "max_age")
    assert len(str(caught.value).splitlines()) == 1 and "6h" in str(caught.value) or "negative" in str(caught.value)


def test_max_age_takes_text_as_the_cli_does(world):
    box, ws, conns = world
    conns["translation"].fetch("submissions", progress=False)
    before = box.stats()["requests"]
    again = conns["translation"].fetch("submissions", max_age="1h", progress=False)
    assert box.stats()["requests"] == before and len(again) > 0      # the load kept, nothing asked
    assert ws.refresh("translation", max_age="6h", progress=False, say=lambda line: None) is not None


@pytest.mark.parametrize("count, unit, shown", [(1, "pages", "page"), (2, "pages", "pages"), (0, "pages", "pages"),
                                                (1, "ids", "id"), (1, "requests", "request"),
                                                (1, "batches of submissions", "batch of submissions"),
                                                (7, "batches of submissions", "batches of submissions"),
                                                (1, "submissions", "submission")])
def test_a_progress_unit_agrees_with_its_number(count, unit, shown):
    from toolkit.pull.progress import unit_of
    assert unit_of(count, unit) == shown


def test_a_filter_built_with_f_takes_one_value_alone_and_refuses_what_it_cannot_spell():
    from toolkit.http.filters import F
    assert str(F("type").isin("alert")) == 'type:["alert"]'        # one value, not a, l, e, r, t
    assert str(F("n").notin(5)) == 'n!:["5"]'
    for build in (lambda: F(5), lambda: F("a") == object(), lambda: F("a") == [1, 2],
                  lambda: F("a").isin([{"x": 1}]), lambda: F("a") > b"x", lambda: F("a").isin([math.nan])):
        with pytest.raises(ValidationError) as caught:
            build()
        assert len(str(caught.value).splitlines()) == 1
