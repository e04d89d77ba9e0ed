"""Client-side rules: each rule alone, then through the real catalog actions via rules.check."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from toolkit.catalog import ACTIONS
from toolkit.errors import ModeError, ValidationError, VersionError
from toolkit.http import durations, rules
from toolkit.http.session import Secret


def ok(action: str, *, mode: str | None = None, system_version: str | None = None, **params) -> None:
    rules.check(ACTIONS[action], params, mode=mode, system_version=system_version)


def refused(action: str, **params) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        rules.check(ACTIONS[action], params)
    return info.value


def assert_names(error: ValidationError, param: str, value, fragment: str, action: str) -> None:
    """The error names the param, the value and the rule, in its attributes and in its text."""
    assert error.param == param
    assert error.value == value
    assert fragment in error.rule
    assert error.action == action
    text = str(error)
    assert text.startswith(f"{param}=")
    assert repr(value)[:60] in text
    assert fragment in text
    assert action in text


# --- every constraint alone -----------------------------------------------------------------------

# what the catalog's fields say a param may be (range, pattern, immutable, a service's own check, the
# shared named rules), one param of the catalog for each, with the values it takes and refuses
RULE_CASES = {
    ("asset_library.get_asset", "asset_id"): (["x", 0, 12, " a "], [None, "", "   ", "\t\n"]),
    ("media_review.list_teams", "page"): ([1, 500, 10**9], [0, -1, 1.5, "3", True, None]),
    ("audience_platform.list_audience_metadata", "offset"): ([0, 1, 60000], [-1, -100, 0.5, "0", False]),
    ("audience_platform.list_audience_metadata", "size"): ([1, 50, -1], [0, -2, 1.0, "10", True]),
    ("asset_library.list_assets", "limit"): ([1, 100, 500], [0, 501, -1, 100.0, "100"]),
    ("translation.list_submissions", "page_size"): ([1, 200], [0, 201, -1, "50"]),
    # Java's Duration.parse: days to seconds only, either case, signs, `.` or `,` before up to 9 digits
    ("audience_platform.update_analytics_configuration", "audience_definition_refresh_interval"): (
        ["PT1H", "P30D", "PT60M", "PT3600S", "P1DT12H", "PT720H", "pt1h", "+PT1H", "P1DT-1H",
         "PT3600,5S", "P29DT23H59M59.999999999S", dt.timedelta(hours=1), dt.timedelta(days=30)],
        ["PT59M", "PT59M59S", "PT59M59.999999999S", "P31D", "P30DT1S", "P30DT0.000000001S",
         "PT0S", "-PT1H", "P4W", "P1M", "P1Y", "P1Y2M", "PT", "P", "P1DT", "1H", " PT1H",
         "PT1H ", "PT1.0000000001H", "P99999999999D", "P9999999999999999999D", "",
         "one hour", dt.timedelta(minutes=59), dt.timedelta(days=31)]),
    ("asset_library.create_import", "source_url"): (
        ["https://docgen.example.com/api", "http://localhost:8080", "http://127.0.0.1/x?y=1"],
        ["ftp://example.com", "example.com", "https://", "http:///path", "", "not a url", 42, None]),
    ("asset_library.add_board_guest", "email"): (
        ["ana.lopez@example.com", "a@b.co"], ["ana", "a@b", "a b@example.com", "", None]),
    ("audience_platform.get_profile_property", "property_id"): (
        ["loyaltyTier", "a", "X9", "123"], ["loyalty_tier", "loyalty-tier", "", " a", "tier 2", "é", None, 5]),
    ("translation.claim_submission", "phase_name"): (
        ["Translation", "Review_2", "QA-final"], ["Final Review", " Translation", "a b"]),
    ("audience_platform.list_audience_metadata", "tags"): (
        ["vip", "vip,!test", "!hidden", ["vip", "!test"], ""],
        ["vip,,x", ",vip", "vip,", "!", "vip,!", ["vip", ""], ["!"]]),
    ("audience_platform.list_audience_metadata", "sort"): (
        ["name", "name:asc", "name:desc", "name,createdAt:desc", "name, created:asc", "", ["a", "b:asc"]],
        ["name:ascending", "name:ASC", ":asc", "name:", "-name", "name desc", "name;asc", ["a:up"]]),
    # empty: no filter, as the services read it (a delete with none needs all=True: filter_or_all)
    ("audience_platform.list_notifications", "filter"): (
        ["read:true", 'type:alert AND NOT (severity:[low, info] OR read:true)', "", "  "],
        ["read", "a:b AND", "(a:b", "a:[x,", 'a:"open']),
    ("asset_library.update_custom_field", "type"): ([], ["date", "plain-text", "single-select"]),
    ("translation.create_submission", "source_language"): (
        ["en-US", "fr", "de-DE", "zh-Hant-TW", "fr_FR"], ["EN", "english", "e", "", "en US", 7]),
    ("audience_platform.import_audience", "package"): (
        [{"type": "url", "url": "https://x.example/a.json"},
         {"type": "enclosed", "audience": {"id": "a", "name": "A"}, "members": ["p1"]}],
        [{}, {"type": "url"}, {"type": "enclosed", "members": []}, [], "url", None]),
}



def constraint_of(action: str, name: str):
    return ACTIONS[action].param(name)


def facets(param) -> set:
    """What a param says of its values besides its kind: each a constraint the generic check reads."""
    found = {("rule", rule) for rule in param.rules}
    if param.minimum is not None or param.maximum is not None:
        found.add(("range", param.kind == "duration", param.minimum, param.maximum, param.also))
    if param.pattern:
        found.add(("pattern", param.pattern, param.listed))
    if param.check:
        found.add(("check", param.check))
    if param.immutable:
        found.add(("immutable",))
    return found


def test_every_constraint_of_the_catalog_has_cases():
    used = {facet for action in ACTIONS.values() for param in action.params for facet in facets(param)}
    covered = {facet for key in RULE_CASES for facet in facets(constraint_of(*key))}
    assert used <= covered, used - covered
    assert set(rules.PARAM_RULES) <= {facet[1] for facet in covered if facet[0] == "rule"}


@pytest.mark.parametrize(("where", "value"), [(r, v) for r, (good, _) in RULE_CASES.items() for v in good])
def test_param_rule_passes(where, value):
    assert rules.constraint_problem(constraint_of(*where), value) is None


@pytest.mark.parametrize(("where", "value"), [(r, v) for r, (_, bad) in RULE_CASES.items() for v in bad])
def test_param_rule_fails(where, value):
    problem = rules.constraint_problem(constraint_of(*where), value)
    assert isinstance(problem, str) and problem


def test_parse_duration_reads_every_unit():
    assert durations.parse_duration("P1DT2H3M4S") == dt.timedelta(days=1, hours=2, minutes=3, seconds=4)
    assert durations.parse_duration("PT1.5S") == dt.timedelta(seconds=1.5)
    assert durations.parse_duration("-P1DT-1H") == -dt.timedelta(hours=23)
    with pytest.raises(ValueError, match="ISO-8601"):
        durations.parse_duration("PT")


@pytest.mark.parametrize("text", ["P1W", "P2W", "P1M", "P1Y", "P1Y2M3D", "PT1H2D", "P1DT", "PT1.5M"])
def test_durations_java_refuses_are_refused(text):
    """Weeks, months and years are not Java Duration's: a month of 30 days was the client's guess alone."""
    with pytest.raises(ValueError, match="ISO-8601"):
        durations.parse_duration(text)


def test_a_duration_beyond_a_timedelta_is_refused_not_overflowing():
    interval = constraint_of("audience_platform.update_analytics_configuration", "audience_definition_refresh_interval")
    assert rules.constraint_problem(interval, "P99999999999D") == "must be between PT1H and P30D inclusive"
    assert durations.duration_nanos("P99999999999D") == 99999999999 * 86_400 * 10**9
    with pytest.raises(ValueError, match="timedelta"):
        durations.parse_duration("P99999999999D")
    with pytest.raises(ValueError, match="Java long"):
        durations.duration_nanos("P9999999999999999999D")


@pytest.mark.parametrize(("value", "ok"), [("PT59M59S", False), ("PT1H", True), ("P30D", True), ("P30DT1S", False),
                                           ("PT720H", True), ("PT720H0.000000001S", False)])
def test_duration_bounds_at_their_edges(value, ok):
    problem = refused_or_none("audience_platform.update_analytics_configuration",
                              audience_definition_refresh_interval=value)
    assert (problem is None) is ok
    if not ok:
        assert problem.param == "audience_definition_refresh_interval" and "PT1H and P30D" in problem.rule


def refused_or_none(action: str, **params) -> ValidationError | None:
    found = rules.problems(ACTIONS[action], params)
    return found[0] if found else None


# --- the ValidationError names the param, the value and the rule; .problems lists all ------------------

def test_error_names_param_value_rule_and_action():
    error = refused("asset_library.list_assets", limit=900)
    assert_names(error, "limit", 900, "between 1 and 500", "asset_library.list_assets")
    assert str(error) == "limit=900: must be between 1 and 500 (asset_library.list_assets)"
    assert isinstance(error, ValueError)


def test_problems_lists_every_broken_rule_in_param_order():
    error = refused("audience_platform.list_audiences", offset=-3, size=0, sort="name:up", tags="vip,,x",
                    colour="red")
    found = [(p.param, p.value) for p in error.problems]
    assert found == [("colour", "***"), ("offset", -3), ("size", 0), ("sort", "name:up"), ("tags", "vip,,x")]
    assert error is error.problems[0]
    assert all(isinstance(p, ValidationError) for p in error.problems)
    assert "unknown param" in error.rule and "offset" in error.rule


def test_an_unknown_params_value_is_never_shown():
    """A misspelt secret (`pasword=`) is unknown to the action, so no param says it is secret."""
    error = refused("audience_platform.create_user", username="ana", pasword="hunter2-very-secret")
    unknown = next(p for p in error.problems if p.param == "pasword")
    assert unknown.value == "***"
    assert "hunter2" not in str(error) and "hunter2" not in repr(error.problems)


def test_problems_is_empty_for_good_params():
    assert rules.problems(ACTIONS["audience_platform.list_audiences"], {"offset": 0, "size": 10}) == []


# --- blank ids where "must not be blank" applies ----------------------------------------------------

BLANK_ID_ACTIONS = [
    ("asset_library.get_asset", "asset_id", {}),
    ("asset_library.get_board", "board_id", {}),
    ("audience_platform.get_audience", "audience_id", {}),
    ("audience_platform.get_profile", "profile_id", {}),
    ("audience_platform.delete_notification", "notification_id", {}),
    ("audience_platform.update_user", "username", {}),
    ("audience_platform.get_warehouse_audience_query", "definition_id", {}),
    ("audience_platform.create_profile", "item_id", {}),
    ("audience_platform.start_communication", "communication_id", {"profile_id": "p1"}),
    ("audience_platform.start_communication", "profile_id", {"communication_id": "c1"}),
    ("audience_platform.create_user", "username", {}),
    ("translation.get_submission", "submission_id", {}),
    ("translation.get_project", "project_id", {}),
]


@pytest.mark.parametrize(("action", "param", "others"), BLANK_ID_ACTIONS)
@pytest.mark.parametrize("blank", ["", "   ", None])
def test_blank_ids_refused(action, param, others, blank):
    error = refused(action, **{param: blank}, **others)
    assert error.param == param and error.value == blank
    assert error.rule == "must not be blank"


@pytest.mark.parametrize(("action", "param", "others"), BLANK_ID_ACTIONS)
def test_missing_required_id_refused(action, param, others):
    error = refused(action, **others)
    assert (error.param, error.value, error.rule) == (param, None, "is required")


def test_ids_that_are_set_pass():
    ok("asset_library.get_asset", asset_id="4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15")
    ok("translation.get_submission", submission_id=1234)
    ok("audience_platform.start_communication", communication_id="COMM-1", profile_id="p1")


def test_required_param_given_as_none_is_refused():
    error = refused("translation.claim_submission", submission_id=1, phase_name=None, languages=["fr-FR"])
    assert (error.param, error.rule) == ("phase_name", "is required")


# --- Offset / Size ----------------------------------------------------------------------------------

OFFSET_ACTIONS = ["audience_platform.list_audiences", "audience_platform.list_audience_metadata",
                  "audience_platform.list_profile_properties", "audience_platform.list_notifications",
                  "audience_platform.list_warehouse_audience_queries"]


@pytest.mark.parametrize("action", OFFSET_ACTIONS)
@pytest.mark.parametrize(("offset", "size"), [(0, 1), (0, 50), (100, 50), (0, -1), (None, -1), (7, None)])
def test_offset_size_pass(action, offset, size):
    params = {k: v for k, v in {"offset": offset, "size": size}.items() if v is not None}
    ok(action, **params)


@pytest.mark.parametrize("action", OFFSET_ACTIONS)
@pytest.mark.parametrize(("offset", "size", "param", "fragment"), [
    (0, 0, "size", "positive integer or -1"),
    (0, -2, "size", "positive integer or -1"),
    (0, 2.5, "size", "integer"),
    (-1, 10, "offset", "0 or a positive integer"),
    (5, -1, "offset", "must be 0 when size is -1"),
    (1, -1, "offset", "must be 0 when size is -1"),
])
def test_offset_size_fail(action, offset, size, param, fragment):
    error = refused(action, offset=offset, size=size)
    assert_names(error, param, {"offset": offset, "size": size}[param], fragment, action)


def test_metric_needs_its_id_and_the_paging_rule():
    ok("audience_platform.get_metric", metric_id="profiles.created", offset=0, size=-1)
    assert refused("audience_platform.get_metric", metric_id=" ").param == "metric_id"
    assert refused("audience_platform.get_metric", metric_id="m", offset=3, size=-1).param == "offset"


# --- booleans ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "param", "others"), [
    ("audience_platform.create_profile", "validate", {"item_id": "p1"}),
    ("audience_platform.update_profile", "validate", {"profile_id": "p1", "patch": {}}),
    ("audience_platform.update_analytics_audience", "refresh_definition",
     {"account_id": "1", "property_id": "UA-1", "audience_id": "2"}),
    ("audience_platform.update_profile_merge_configuration", "enabled", {}),
    ("asset_library.list_assets", "include_nested_assets", {}),
    ("translation.save_submission", "auto_start", {"submission_id": 1}),
    ("translation.upload_source", "extract_archive", {"submission_id": 1, "file": b"x", "batch_name": "B"}),
])
def test_booleans(action, param, others):
    for good in (True, False, "true", "false", "TRUE"):
        ok(action, **{param: good}, **others)
    for bad in ("yes", "1", 1, 0, "on", [True]):
        error = refused(action, **{param: bad}, **others)
        assert (error.param, error.value, error.rule) == (param, bad, "must be true or false")


# --- Profiledatapolicy ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "others"), [
    ("audience_platform.create_profile_property", {"definition": {"id": "tier"}}),
    ("audience_platform.update_profile_property", {"property_id": "tier", "patch": {}}),
    ("audience_platform.delete_profile_property", {"property_id": "tier"}),
])
def test_profile_data_policy(action, others):
    ok(action, profile_data_policy="allow", **others)
    ok(action, profile_data_policy="disallow", **others)
    for bad in ("ALLOW", "deny", "", "allow,disallow"):
        error = refused(action, profile_data_policy=bad, **others)
        assert_names(error, "profile_data_policy", bad, "must be one of allow, disallow", action)


# --- the analytics refresh intervals -------------------------------------------------------------------

ANALYTICS = "audience_platform.update_analytics_configuration"


@pytest.mark.parametrize("param", ["audience_definition_refresh_interval", "audience_membership_refresh_interval"])
@pytest.mark.parametrize("value", ["PT1H", "P30D", "PT12H", "P1D", "P7DT6H"])
def test_refresh_interval_within_bounds(param, value):
    ok(ANALYTICS, **{param: value})


@pytest.mark.parametrize("param", ["audience_definition_refresh_interval", "audience_membership_refresh_interval"])
@pytest.mark.parametrize(("value", "fragment"), [
    ("PT59M", "between PT1H and P30D"), ("P31D", "between PT1H and P30D"), ("PT0S", "between PT1H and P30D"),
    ("P30DT1S", "between PT1H and P30D"), ("1 hour", "ISO-8601"), ("PT", "ISO-8601"), ("3600", "ISO-8601"),
])
def test_refresh_interval_out_of_bounds(param, value, fragment):
    assert_names(refused(ANALYTICS, **{param: value}), param, value, fragment, ANALYTICS)


def test_bulk_size_positive():
    ok(ANALYTICS, audience_member_index_persistence_bulk_size=500)
    assert refused(ANALYTICS, audience_member_index_persistence_bulk_size=0).rule == "must be a positive integer"


# --- document generation: URLs and the grant type ------------------------------------------------------

DOCGEN = "audience_platform.update_document_generation_configuration"


@pytest.mark.parametrize("param", ["base_rest_url", "token_url"])
def test_docgen_urls(param):
    ok(DOCGEN, **{param: "https://docgen.example.com/api/v1"})
    for bad in ("docgen.example.com", "ftp://docgen.example.com", "https://", "not a url"):
        assert_names(refused(DOCGEN, **{param: bad}), param, bad, "valid http(s) URL", DOCGEN)


def test_other_url_params():
    ok("asset_library.create_import", source_url="https://example.com/media/beach.jpg")
    assert refused("asset_library.create_import", source_url="beach.jpg").param == "source_url"
    assert refused("audience_platform.update_warehouse_configuration", root_url="bigquery").param == "root_url"


def test_grant_type():
    ok(DOCGEN, grant_type="client_credentials", client_id="cdp")
    ok(DOCGEN, grant_type="password", username="svc", password="pw-123456")
    bad = refused(DOCGEN, grant_type="implicit")
    assert_names(bad, "grant_type", "implicit", "must be one of client_credentials, password", DOCGEN)
    missing = refused(DOCGEN, grant_type="password")
    assert (missing.param, missing.rule) == ("username", "the password grant needs a username")


def test_token_grant_type():
    ok("translation.create_token", grant_type="password", username="u", password="p")
    ok("translation.create_token", grant_type="refresh_token", refresh_token="r")
    assert refused("translation.create_token", grant_type="client_credentials").param == "grant_type"
    assert refused("translation.create_token").rule == "is required"


# --- read timeout ----------------------------------------------------------------------------------------

WAREHOUSE = "audience_platform.update_warehouse_configuration"


def test_read_timeout():
    ok(WAREHOUSE, read_timeout=0)
    ok(WAREHOUSE, read_timeout=60000)
    for bad in (-1, -60000, 1.5, "0"):
        error = refused(WAREHOUSE, read_timeout=bad)
        assert error.param == "read_timeout" and error.value == bad
    assert "0 or a positive integer" in refused(WAREHOUSE, read_timeout=-1).rule


# --- translation: targetFormat and fileFormatName ---------------------------------------------------------

UPLOAD = "translation.upload_source"
UPLOAD_BASE = {"submission_id": 1234, "file": ("a.html", b"<p/>"), "batch_name": "Batch1"}


@pytest.mark.parametrize("fmt", ["TXML", "TXLF", "NON_PARSABLE"])
def test_target_formats(fmt):
    ok(UPLOAD, target_format=fmt, **UPLOAD_BASE)


@pytest.mark.parametrize("fmt", ["XLIFF", "txml", "", "NON PARSABLE"])
def test_unknown_target_format(fmt):
    error = refused(UPLOAD, target_format=fmt, **UPLOAD_BASE)
    assert_names(error, "target_format", fmt, "must be one of TXML, TXLF, NON_PARSABLE", UPLOAD)


def test_file_format_name_blank_for_non_parsable():
    ok(UPLOAD, target_format="NON_PARSABLE", **UPLOAD_BASE)
    ok(UPLOAD, target_format="NON_PARSABLE", file_format_name="", **UPLOAD_BASE)
    ok(UPLOAD, target_format="TXLF", file_format_name="HTML", **UPLOAD_BASE)
    error = refused(UPLOAD, target_format="NON_PARSABLE", file_format_name="HTML", **UPLOAD_BASE)
    assert_names(error, "file_format_name", "HTML", "must be blank when the target format is NON_PARSABLE", UPLOAD)


def test_batch_target_formats_at_creation():
    base = {"name": "Site", "project_id": 10, "source_language": "en-US"}
    batch = {"workflowId": 22, "name": "B1", "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}
    for fmt in ("TXML", "TXLF", "NON_PARSABLE"):
        ok("translation.create_submission", batch_infos=[{**batch, "targetFormat": fmt}], **base)
    error = refused("translation.create_submission", batch_infos=[{**batch, "targetFormat": "DOCX"}], **base)
    assert error.param == "batch_infos" and "TXML, TXLF or NON_PARSABLE" in error.rule


# --- target statuses (the seed's five plus PROCESSED and CANCELLED) ---------------------------------------

TARGET_STATUSES = ["COMPLETED", "DELIVERED", "READY", "IN_PROCESS", "WAITING", "PROCESSED", "CANCELLED"]


@pytest.mark.parametrize("status", TARGET_STATUSES)
def test_target_status_values(status):
    ok("translation.list_submission_targets", submission_id=1, status=status)
    ok("translation.list_targets", status=[status])


@pytest.mark.parametrize("status", ["DONE", "completed", "IN PROCESS", ""])
def test_unknown_target_status(status):
    error = refused("translation.list_submission_targets", submission_id=1, status=status)
    assert error.param == "status" and "must be one of COMPLETED" in error.rule
    assert refused("translation.list_targets", status=["READY", status]).param == "status"


def test_target_status_list_as_comma_text():
    ok("translation.list_targets", status="READY,COMPLETED")
    assert refused("translation.list_targets", status="READY,DONE").param == "status"


def test_submission_statuses():
    ok("translation.list_submissions", statuses=["IN_PROCESS", "PREFLIGHT"])
    assert refused("translation.list_submissions", statuses=["RUNNING"]).param == "statuses"


# --- phase names ---------------------------------------------------------------------------------------------

PHASE = "translation.complete_phase"
PHASE_BASE = {"submission_id": 1, "target_ids": [98765], "transition": "Review"}


def test_phase_names():
    ok(PHASE, phase_name="Translation", **PHASE_BASE)
    for bad in ("Final Review", " Translation", "Translation "):
        error = refused(PHASE, phase_name=bad, **PHASE_BASE)
        assert_names(error, "phase_name", bad, "must not contain spaces", PHASE)
    assert refused(PHASE, phase_name="", **PHASE_BASE).rule == "must not be blank"


# --- the word-count body ----------------------------------------------------------------------------------------

WORDS = "translation.get_word_count"


@pytest.mark.parametrize("one", [{}, {"target_language": "fr-FR"}, {"document_id": 5678}, {"target_id": 98765},
                                 {"batch_name": "Batch1"}, {"target_language": None, "batch_name": "B"}])
def test_word_count_body_empty_or_one_field(one):
    ok(WORDS, submission_id=1, **one)


@pytest.mark.parametrize(("two", "named"), [
    ({"target_language": "fr-FR", "document_id": 5}, "document_id"),
    ({"target_id": 1, "batch_name": "B"}, "batch_name"),
    ({"document_id": 5, "target_id": 1, "batch_name": "B"}, "target_id"),
])
def test_word_count_body_more_than_one_field(two, named):
    error = refused(WORDS, submission_id=1, **two)
    assert error.param == named and error.value == two[named]
    assert "give at most one of target_language, document_id, target_id, batch_name" in error.rule


# --- cancel ids as arrays of numbers ----------------------------------------------------------------------------

CANCEL = "translation.cancel_submission"


def test_cancel_ids():
    ok(CANCEL, submission_id=1)
    ok(CANCEL, submission_id=1, target_ids=[98765, 98766], document_ids=[])
    ok(CANCEL, submission_id=1, document_ids=(5678,))
    for param in ("target_ids", "document_ids"):
        for bad in (98765, "98765", ["98765"], [1.5], [True], [1, None]):
            error = refused(CANCEL, submission_id=1, **{param: bad})
            assert (error.param, error.value, error.rule) == (param, bad, "must be an array of numbers")


def test_ids_taken_from_a_dataframe_column_are_numbers():
    ids = list(pd.Series([98765, 98766]).to_numpy())   # numpy.int64 each, as from a DataFrame column
    assert type(ids[0]).__module__ == "numpy"
    ok(CANCEL, submission_id=np.int64(1), target_ids=ids)
    assert refused(CANCEL, submission_id=1, target_ids=[np.float64(1.5)]).rule == "must be an array of numbers"
    assert refused(CANCEL, submission_id=1, target_ids=[np.True_]).rule == "must be an array of numbers"


# --- custom fields: type, immutability, select values ----------------------------------------------------------

CREATE_FIELD = "asset_library.create_custom_field"


@pytest.mark.parametrize("kind", ["single-select", "multi-select", "plain-text", "date"])
def test_custom_field_types(kind):
    ok(CREATE_FIELD, name="Campaign", type=kind)


@pytest.mark.parametrize("kind", ["number", "text", "Date", "select", ""])
def test_unknown_custom_field_type(kind):
    error = refused(CREATE_FIELD, name="Campaign", type=kind)
    assert_names(error, "type", kind, "must be one of single-select, multi-select, plain-text, date", CREATE_FIELD)


def test_custom_field_type_required():
    assert refused(CREATE_FIELD, name="Campaign").param == "type"


@pytest.mark.parametrize("kind", ["single-select", "multi-select", "plain-text", "date"])
def test_custom_field_type_immutable_on_update(kind):
    action = "asset_library.update_custom_field"
    ok(action, custom_field_id="cf", name="Renamed")
    assert_names(refused(action, custom_field_id="cf", type=kind), "type", kind,
                 "cannot be changed after creation", action)


def test_select_values_only_for_select_types():
    values = [{"name": "Spring"}, {"name": "Summer"}]
    ok(CREATE_FIELD, name="Campaign", type="single-select", values=values)
    ok(CREATE_FIELD, name="Campaign", type="multi-select", values=values)
    ok(CREATE_FIELD, name="Due", type="date")
    for kind in ("plain-text", "date"):
        error = refused(CREATE_FIELD, name="Campaign", type=kind, values=values)
        assert_names(error, "values", values, "only single-select and multi-select fields take values", CREATE_FIELD)


@pytest.mark.parametrize("action", ["asset_library.set_asset_custom_field", "asset_library.set_board_custom_field"])
def test_setting_a_custom_field_value(action):
    ids = {"custom_field_id": "cf", ("asset_id" if "set_asset" in action else "board_id"): "x"}
    ok(action, value="Spring launch", **ids)
    ok(action, value=None, **ids)                               # unsets
    ok(action, values=[{"id": "v1"}, {"id": "v2"}], **ids)
    ok(action, values=None, **ids)
    assert "give value" in refused(action, **ids).rule
    assert "not both" in refused(action, value="a", values=[{"id": "v"}], **ids).rule
    assert refused(action, values=[{"name": "v"}], **ids).rule == "must be a list of objects each with the id of a value"
    assert refused(action, values=["v1"], **ids).param == "values"


# --- limits -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("action", ["asset_library.list_assets", "asset_library.list_boards", "asset_library.list_tags",
                                    "asset_library.list_custom_fields"])
def test_asset_library_limit(action):
    ok(action, limit=1)
    ok(action, limit=500)
    for bad in (501, 1000, 0, -1):
        assert_names(refused(action, limit=bad), "limit", bad, "between 1 and 500", action)


@pytest.mark.parametrize("action", ["translation.list_submissions", "translation.list_claimable_submissions",
                                    "translation.list_claimed_submissions"])
def test_translation_page_size(action):
    ok(action, page_size=200, page_number=0)
    for bad in (201, 0, 1000):
        assert_names(refused(action, page_size=bad), "page_size", bad, "between 1 and 200", action)
    assert refused(action, page_number=-1).param == "page_number"


def test_media_review_paging():
    ok("media_review.list_teams", page=1, page_size=50)
    assert refused("media_review.list_teams", page=0).param == "page"
    assert refused("media_review.list_teams", page_size=-5).param == "page_size"


# --- Roles' required type -----------------------------------------------------------------------------------------

def test_roles_type():
    ok("asset_library.list_roles", type="guest")
    ok("asset_library.list_roles", type="member")
    assert (refused("asset_library.list_roles").param, refused("asset_library.list_roles").rule) == ("type", "is required")
    assert refused("asset_library.list_roles", type=None).rule == "must not be blank"
    assert refused("asset_library.list_roles", type="admin").rule == "must be one of guest, member"


# --- modes ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "only", "params"), [
    ("translation.list_project_glossaries", "client", {"project_id": 10}),
    ("translation.list_project_tms", "client", {"project_id": 10}),
    ("translation.get_root", "client", {}),
    ("translation.list_pa_client_glossaries", "hosted", {"paclient_id": 7}),
    ("translation.list_pa_client_tms", "hosted", {"paclient_id": 7}),
])
def test_mode_only_actions(action, only, params):
    other = "hosted" if only == "client" else "client"
    ok(action, mode=only, **params)
    with pytest.raises(ModeError) as info:
        ok(action, mode=other, **params)
    assert action in str(info.value)
    assert f"only in {only} mode" in str(info.value) and f"in {other} mode" in str(info.value)


def test_actions_of_both_modes_pass_in_either():
    ok("translation.get_submission", mode="client", submission_id=1)
    ok("translation.get_submission", mode="hosted", submission_id=1)


# --- system versions -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "params", "needed", "too_old"), [
    ("translation.list_project_glossaries", {"project_id": 10}, "5.13", "5.12"),
    ("translation.get_word_count", {"submission_id": 1}, "5.14", "5.13.9"),
    ("translation.list_failed_webhooks", {}, "5.14", "5.9"),
    ("translation.upload_collateral", {"submission_id": 1, "file": b"x"}, "5.19", "5.18"),
    ("translation.list_targets", {}, "5.20", "5.19"),
    ("translation.get_target_phase", {"submission_id": 1, "target_id": 2}, "5.20", "5.2"),
    ("translation.list_document_targets", {"submission_id": 1, "document_id": 2}, "6.2", "5.20"),
])
def test_actions_newer_than_the_system_version(action, params, needed, too_old):
    ok(action, system_version=needed, **params)
    ok(action, system_version="7.0", **params)
    ok(action, **params)                                   # no version configured: nothing to refuse
    with pytest.raises(VersionError) as info:
        ok(action, system_version=too_old, **params)
    error = info.value
    assert (error.action, error.needed, error.configured) == (action, needed, too_old)
    assert f"needs system version {needed}" in str(error) and too_old in str(error)


def test_versions_compare_as_numbers_not_text():
    ok("translation.list_document_targets", system_version="6.10", submission_id=1, document_id=2)
    with pytest.raises(VersionError):
        ok("translation.list_targets", system_version="5.3")


@pytest.mark.parametrize(("param", "value", "needed", "too_old"), [
    ("status", "COMPLETED", "5.15", "5.14"),
    ("target_language", "fr-FR", "5.20", "5.19"),
])
def test_params_newer_than_the_system_version(param, value, needed, too_old):
    action = "translation.list_submission_targets"
    ok(action, system_version=too_old, submission_id=1)    # without the param the action is fine
    ok(action, system_version=needed, submission_id=1, **{param: value})
    with pytest.raises(VersionError) as info:
        ok(action, system_version=too_old, submission_id=1, **{param: value})
    assert info.value.needed == needed and param in str(info.value)


def test_version_tuple():
    assert rules.version_tuple("5.20") > rules.version_tuple("5.3")
    assert rules.version_tuple("6.2.1") > rules.version_tuple("6.2")
    assert rules.version_tuple(None) == (0,)


# --- audience platform: profile property ids, filters and sort ---------------------------------------------------------

@pytest.mark.parametrize("action", ["audience_platform.get_profile_property", "audience_platform.delete_profile_property"])
def test_profile_property_ids(action):
    ok(action, property_id="loyaltyTier")
    ok(action, property_id="a1")
    for bad in ("loyalty_tier", "loyalty-tier", "tier 2", "ünicode"):
        assert_names(refused(action, property_id=bad), "property_id", bad,
                     "one or more alphanumeric characters", action)
    assert refused(action, property_id="").rule == "must not be blank"


@pytest.mark.parametrize("action", ["audience_platform.list_audiences", "audience_platform.list_audience_metadata"])
@pytest.mark.parametrize("param", ["system_tags", "tags", "providers", "names"])
def test_audience_filters(action, param):
    for good in ("vip", "vip,!test", "!hidden", ["vip", "!test"], ""):
        ok(action, **{param: good})
    for bad in ("vip,,test", "!", "vip,!", ",vip"):
        assert_names(refused(action, **{param: bad}), param, bad, "comma separated list of values", action)


@pytest.mark.parametrize("action", ["audience_platform.list_audiences", "audience_platform.list_audience_metadata",
                                    "audience_platform.list_notifications"])
def test_sort(action):
    for good in ("name", "name:asc", "name:desc", "name:asc,created:desc", ""):
        ok(action, sort=good)
    for bad in ("name:up", "name:ASC", "name desc", ":asc", "-name"):
        assert_names(refused(action, sort=bad), "sort", bad, "name, name:asc or name:desc", action)


# --- notification filters through the actions (the language itself: test_filters.py) ------------------------------------

@pytest.mark.parametrize("action", ["audience_platform.list_notifications", "audience_platform.delete_notifications"])
def test_notification_filter(action):
    ok(action, filter='severity:ERROR AND read:false')
    ok(action, filter='type:[import, refresh] OR NOT message:"a \\"quoted\\" word"')
    error = refused(action, filter="severity:ERROR AND (read:false")
    assert error.param == "filter" and "missing ')'" in error.rule and "position" in error.rule


# --- kinds checked for every action ----------------------------------------------------------------------------------------

def test_kinds():
    assert refused("asset_library.create_upload", file_name="a", ext="jpg", size="12", mime="image/jpeg",
                   recorded_at="2024-05-14T09:30:00Z").rule == "must be an integer"
    assert refused("asset_library.list_assets", created_at_gte="last week").rule == "must be an ISO-8601 date-time"
    ok("asset_library.list_assets", created_at_gte=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    ok("translation.list_submissions", due_date_from=1764547200000)
    ok("translation.list_submissions", due_date_from=dt.datetime(2025, 1, 1))
    assert refused("translation.list_submissions", due_date_from="2025-01-01").rule == \
        "must be epoch milliseconds or a datetime"
    assert refused("asset_library.add_board_guest", board_id="b", email="nobody", role_id="r").param == "email"
    assert refused("translation.upload_source", submission_id=1, file=12, batch_name="B").rule == \
        "must be bytes, a path or an open file"
    assert refused("translation.upload_source", submission_id=1, file="/no/such/file.html",
                   batch_name="B").rule == "is not a file"
    assert refused("audience_platform.update_audience", audience_id="a", patch="tags=vip").rule == \
        "must be a JSON object or array"
    assert refused("translation.create_submission", name="S", project_id=1, source_language="english").param == \
        "source_language"


# --- every bad value is a ValidationError naming param, value and rule (issue 18, items 1 and 3) ---------------------------

PATH_PARAMS = sorted({(a.id, p.name) for a in ACTIONS.values() for p in a.params if p.where == "path"})


def with_example(action: str, **params) -> dict:
    return {**ACTIONS[action].example, **params}


@pytest.mark.parametrize(("action", "param"), PATH_PARAMS)
def test_path_values_that_would_change_the_path_are_refused(action, param):
    """`.` and `..` are sent as they are and resolved by the URL library: `/boards/../assets/X` is `/assets/X`."""
    for bad in (".", "..", "", "x" * 1001):
        found = rules.problems(ACTIONS[action], with_example(action, **{param: bad}))
        assert [p.param for p in found] == [param], (bad[:5], [str(p) for p in found])
    # three dots are a name, sent as one; not where the param takes letters and digits, or an integer id
    found = rules.problems(ACTIONS[action], with_example(action, **{param: "..."}))
    assert found == [] or "alphanumeric" in found[0].rule or "integer id" in found[0].rule


def test_path_values_up_to_1000_characters_and_with_slashes_pass():
    ok("asset_library.get_asset", asset_id="x" * 1000)
    ok("asset_library.get_asset", asset_id="a/b/../c")            # encoded to one segment by the client
    ok("asset_library.get_asset", asset_id="%2e%2e")               # its % is encoded: %252e%252e
    error = refused("asset_library.remove_board_asset", board_id="..", asset_id="4b7c")
    assert_names(error, "board_id", "..", "another path", "asset_library.remove_board_asset")
    assert "1,001 characters" in refused("asset_library.get_asset", asset_id="x" * 1001).rule


WRONG_TYPES = [{"a": 1}, ["a"], {"a"}, b"abc", bytearray(b"abc"), True, math.nan, math.inf, 2**70, object()]


@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda v: type(v).__name__ + ("" if isinstance(v, type) else ""))
@pytest.mark.parametrize(("action", "param", "others"), [
    ("asset_library.get_asset", "asset_id", {}),                                        # id, path
    ("translation.get_submission", "submission_id", {}),                               # integer id, path
    ("asset_library.create_board", "title", {}),                                        # string, body
    ("asset_library.create_board", "description", {"title": "Q4"}),                    # text, body
    ("asset_library.list_boards", "name", {}),                                          # string, query
    ("audience_platform.create_user", "password", {"username": "bot"}),                # secret, body
    ("translation.create_token", "password", {"grant_type": "password", "username": "u"}),  # secret, form
])
def test_wrong_types_for_scalars_are_refused(action, param, others, value):
    error = refused(action, **{param: value}, **others)
    assert error.param == param and error.rule


def test_numpy_ids_and_secrets_stay_accepted():
    ok("translation.get_submission", submission_id=np.int64(1234))
    ok("translation.get_submission", submission_id=pd.Series([7], dtype="int64")[0])
    ok("asset_library.get_asset", asset_id="4b7c")
    ok("audience_platform.create_user", username="bot", password=Secret("pw"))
    ok("audience_platform.update_experience_insights_configuration", credentials_json='{"type": "service_account"}')
    ok("audience_platform.create_profile", item_id="p1", properties={"score": np.float64(1.5), "n": np.int64(3),
                                                                      "tags": np.array(["a", "b"])})


def test_a_secret_params_value_is_masked_in_the_error():
    error = refused("audience_platform.create_user", username="bot", password=["hunter2-s3cret"])
    assert "hunter2" not in str(error) and "hunter2" not in repr(error.value)
    assert error.value == "***" and "password=" in str(error) and "must be a string" in error.rule
    error = refused("audience_platform.update_experience_insights_configuration", credentials_json=7)
    assert (error.param, error.value) == ("credentials_json", "***")


@pytest.mark.parametrize(("body", "where"), [
    ({"score": math.nan}, "score"), ({"a": [1, {"b": math.inf}]}, "a[1].b"), ({"n": 2**70}, "n"),
    ({"n": -(2**63) - 1}, "n"), ({"raw": b"\x00"}, "raw"), ({"tags": {"a", "b"}}, "tags"),
    ({"when": object()}, "when"),
])
def test_values_json_cannot_carry_are_refused_where_they_are(body, where):
    error = refused("audience_platform.create_profile", item_id="p1", properties=body)
    assert error.param == "properties" and f"(at {where})" in error.rule


def test_json_keys_must_be_text_and_nesting_is_bounded():
    assert "key that is not a string" in refused("audience_platform.create_profile", item_id="p1",
                                                 properties={1: "a"}).rule
    deep: list = []
    for _ in range(3000):
        deep = [deep]
    error = refused("audience_platform.create_profile", item_id="p1", properties={"a": deep})
    assert error.param == "properties" and "deeper than 64" in error.rule and error.value == {"a": deep}
    ok("audience_platform.create_profile", item_id="p1", properties={"a": [[[[1.5, None, True, "x"]]]]})


def test_a_value_too_deep_for_repr_is_still_a_validation_error():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    error = refused("asset_library.create_board", title=deep)
    assert error.param == "title" and error.value is deep and "[[[[" in str(error)


def test_integers_outside_64_bits_are_refused_everywhere():
    assert "64-bit" in refused("translation.get_submission", submission_id=2**63).rule
    ok("translation.get_submission", submission_id=2**63 - 1)
    assert "64-bit" in refused("translation.cancel_submission", submission_id=1, target_ids=[1, 2**64]).rule
    assert "64-bit" in refused("asset_library.list_assets", limit=-(2**70)).rule


def test_unparsable_urls_durations_and_filters_are_validation_errors():
    error = refused("asset_library.create_import", source_url="http://[::1")
    assert_names(error, "source_url", "http://[::1", "valid http(s) URL", "asset_library.create_import")
    error = refused("audience_platform.update_analytics_configuration",
                    audience_membership_refresh_interval="P99999999999D")
    assert "between PT1H and P30D" in error.rule
    error = refused("audience_platform.list_notifications", filter="(" * 3000)
    assert error.param == "filter" and "deeper than 32" in error.rule


@pytest.mark.parametrize(("value", "fragment"), [
    ([1, 2], "list of strings"), ("a,b", None), (["a", {"b": 1}], "list of strings"), ([None], "list of strings"),
])
def test_list_params_take_strings_only(value, fragment):
    found = rules.problems(ACTIONS["asset_library.list_assets"], {"tag": value})
    assert (found[0].rule if found else None) == (f"must be a {fragment}" if fragment else None)


def test_a_value_no_rule_foresaw_is_refused_not_raised():
    class Hostile(str):
        def __str__(self):
            raise TypeError("no text for you")

    error = refused("asset_library.get_asset", asset_id=Hostile("x"))
    assert error.param == "asset_id" and "cannot be checked (TypeError)" in error.rule


def test_what_a_refusal_says_is_in_the_docstring_before_it():
    """The range, pattern and shared rules a param has are said in its method's docstring in the words
    the refusal uses, so that `?` in a notebook tells what `check` will refuse."""
    from toolkit.http.methods import docstring
    with pytest.raises(ValidationError) as refused:
        rules.check(ACTIONS["asset_library.list_assets"], {"limit": 900})
    said = str(refused.value).split(": ", 1)[1].split(" (")[0]
    assert said == "must be between 1 and 500"
    assert f"limit (integer, query limit, optional): maximum number of items per page (at most 500); {said}" \
        in docstring(ACTIONS["asset_library.list_assets"])
    constrained = [(a, p) for a in ACTIONS.values() for p in a.params if rules.said_of(p)]
    assert len(constrained) > 100
    for action, param in constrained:
        line = next(line for line in docstring(action).splitlines() if line.startswith(f"    {param.name} ("))
        assert all(words in line for words in rules.said_of(param)), (action.id, param.name)
