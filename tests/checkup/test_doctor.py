"""The doctor against the embedded sandbox: a report per service, GET only, no secret and no value in
its JSON, and the drift of `sandbox.start(drift=True)` shown where it is."""
from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import json
import re

import pytest
import requests

import toolkit
import toolkit.checkup.doctor as doctor_module
from toolkit import catalog
from toolkit.checkup.doctor import doctor
from toolkit.checkup.report import Report, ResourceCheck, ServiceCheck
from toolkit.errors import ToolkitError, ValidationError


@pytest.fixture(scope="module")
def box():
    with toolkit.sandbox.start(seed=3) as running:
        yield running


@pytest.fixture(scope="module")
def drifting():
    with toolkit.sandbox.start(seed=5, drift=True) as running:
        yield running


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    """Only the credentials a test gives: none from the machine's TOOLKIT_* variables."""
    import os
    for name in [n for n in os.environ if n.startswith("TOOLKIT_") and n != "TOOLKIT_TYPING_HELPER"]:
        monkeypatch.delenv(name)


def creds(box) -> dict:
    return {service: box.credentials(service) for service in box.services}


def by_method(box) -> dict:
    return dict(box.stats()["by_method"])


def test_a_report_per_service_against_the_sandbox(box):
    said = []
    report = doctor(*box.services, credentials=creds(box), say=said.append)
    assert isinstance(report, Report) and [s.service for s in report.services] == list(box.services)
    assert report.ok, report.text()
    for service in report.services:
        assert service.auth_ok and service.auth.startswith("ok")
        assert service.base_url.startswith("http://***/")                 # no host, no port
        answered = [r for r in service.resources if r.skipped is None]
        assert answered and all(r.status == 200 and r.ms is not None for r in answered)
        assert all(r.seen and set(r.seen) <= set(r.declared) for r in answered if r.rows)
        assert service.calls and all(c.ms >= 0 for c in service.calls)
    assets = report.service("asset_library")
    first = {r.resource: r for r in assets.resources}
    assert first["assets"].paging_declared == first["assets"].paging_seen == "cursor"
    assert first["assets"].rows == 1                                      # the smallest page
    assert first["assets"].types["coverVersion.size"] == ["integer"]
    assert first["versions"].status == 200                                # a fan-out, its id from assets
    assert "boardId" in first["guests"].seen and not first["guests"].extra   # the fan-out id, sent or added
    assert "assetId" in first["versions"].declared and "assetId" not in first["versions"].missing
    assert "customFields" in first["asset_boards"].seen                   # sent when asked for
    assert first["roles"].status == 200                                   # a required choice given
    assert "import_ids" in first["imports"].skipped
    audience = report.service("audience_platform")
    assert audience.version["api v1"].startswith("answers") and audience.version["api v2"].startswith("answers")
    assert "needs account_id, property_id" in {r.resource: r for r in audience.resources}[
        "analytics_audiences"].skipped
    translation = report.service("translation")
    assert translation.version["configured"] == "6.2"
    assert translation.version["on the wire"] == "at least 5.20"          # list_targets (5.20) answered
    assert "GET only" in {r.resource: r for r in translation.resources}["word_counts"].skipped
    assert sum(len(s.resources) for s in report.services) == len(said) - len(report.services)


def test_it_sends_get_only_and_the_translation_login(box):
    before, actions = by_method(box), dict(box.stats()["by_action"])
    doctor(*box.services, credentials=creds(box), say=None)
    after = by_method(box)
    sent = {m: n - before.get(m, 0) for m, n in after.items() if n - before.get(m, 0)}
    assert sent["GET"] > 30
    assert sent.get("POST") == 1 and set(sent) <= {"GET", "POST"}
    posts = {a: n - actions.get(a, 0) for a, n in box.stats()["by_action"].items()
             if n - actions.get(a, 0) and catalog.ACTIONS[a].method != "GET"}
    assert posts == {"translation.create_token": 1}


def test_a_write_is_refused_in_code_before_it_is_sent(box):
    client, _ = doctor_module._client("asset_library", box.credentials("asset_library"), None)
    before = by_method(box)
    with pytest.raises(ToolkitError, match="sends GET only"):
        client.call("asset_library.create_tag", name="doctor-was-here")
    assert by_method(box) == before


def test_the_json_holds_no_secret_and_no_value(box, tmp_path):
    report = doctor(*box.services, credentials=creds(box), say=None)
    path = report.to_json(tmp_path / "doctor.json")
    text = path.read_text()
    assert json.loads(text) == report.to_dict() and report.to_dict()["ok"] is True
    for secret in box.secrets():
        assert secret not in text
    # every value a pull of the same resources gets (ids, emails, names, nested ones too): none is in the report
    values: set[str] = set()
    keys: set[str] = set()
    for service in box.services:
        client = toolkit.connect(service, **box.credentials(service))
        for (owner, _), resource in catalog.RESOURCES.items():
            action = catalog.ACTIONS[resource.action]
            if owner == service and action.response == "page" and not resource.fan_out \
                    and not [p for p in action.params if p.required]:
                rows = client.rows(action)
                values |= _leaves(rows)
                keys |= _keys(rows)
    # a plain word ("approved") may also be a field's name; a value with a digit, a space, @ or - may not
    distinct = {v for v in values if re.search(r"[\d\s@#-]", v)}
    # the report's own clock is ours, not a service's value: a date in the seed (GoLiveDate) may be today;
    # so is the skew it measures between the service's clock and ours, whose digits change with today's
    # date (the sandbox's clock is its seed's): on some days they spelt an id of the seed ('10290')
    own = report.to_dict()
    assert dt.datetime.fromisoformat(own.pop("started")).tzinfo is not None
    skews = [service.pop("clock_skew_s") for service in own["services"] if "clock_skew_s" in service]
    assert skews and all(isinstance(skew, int | float) for skew in skews)
    searched = json.dumps(own)
    shown = {v for v in distinct if v in searched}
    assert len(distinct) > 500 and not shown, sorted(shown)[:10]
    words = {v for v in values - distinct if v in _strings_of(report.to_dict())}
    assert words <= _field_names() | keys, sorted(words - _field_names() - keys)[:10]


def _leaves(data) -> set[str]:
    """The strings of 6 characters or more and the integers from 10,000 up, anywhere in parsed JSON."""
    if isinstance(data, dict):
        return set().union(*map(_leaves, data.values())) if data else set()
    if isinstance(data, list):
        return set().union(*map(_leaves, data)) if data else set()
    if isinstance(data, str) and len(data) >= 6:
        return {data}
    if isinstance(data, int) and not isinstance(data, bool) and data >= 10_000:
        return {str(data)}
    return set()


def _keys(data) -> set[str]:
    """The keys of every object in parsed JSON: field names, which the report may show."""
    if isinstance(data, dict):
        return set(map(str, data)).union(*map(_keys, data.values()))
    if isinstance(data, list):
        return set().union(*map(_keys, data)) if data else set()
    return set()


def _strings_of(data) -> set[str]:
    if isinstance(data, dict):
        return set(map(str, data)).union(*map(_strings_of, data.values()))
    if isinstance(data, list):
        return set().union(*map(_strings_of, data)) if data else set()
    return {data} if isinstance(data, str) else set()


def _field_names() -> set[str]:
    """Every name the catalog gives a field, a resource or a path on the wire, and the JSON types."""
    names = {"string", "integer", "number", "boolean", "null", "array", "object"}
    for resource in catalog.RESOURCES.values():
        names |= {resource.name, *(part for column in resource.columns for part in column.path)}
    for action in catalog.ACTIONS.values():
        names |= set(re.split(r"[/{}.]+", action.path + "/" + action.id))
    return names


def test_wrong_credentials_say_auth_failed_once_and_show_no_secret(box):
    wrong = {"asset_library": {**box.credentials("asset_library"), "api_key": "sbx_wrong-key-123456"},
             "translation": {**box.credentials("translation"), "password": "sbx_wrong-password-1"}}
    before = by_method(box)
    report = doctor("asset_library", "translation", credentials=wrong, say=None)
    assert not report.ok
    assets, translation = report.services
    assert not assets.auth_ok and assets.auth == "AuthError 401 (asset_library.list_assets)"
    assert len(assets.resources) == 1 and assets.resources[0].error == "AuthError 401"
    assert not translation.auth_ok and translation.auth == "the OAuth login answered 400"   # invalid_grant
    sent = {m: n - before.get(m, 0) for m, n in by_method(box).items()}
    assert sent.get("GET", 0) == 1 and sent.get("POST", 0) == 1          # one try each, then it stops
    text = report.text() + json.dumps(report.to_dict())
    for secret in [*box.secrets(), "sbx_wrong-key-123456", "sbx_wrong-password-1"]:
        assert secret not in text


def test_unknown_or_unconfigured_services_are_refused_before_anything_is_sent(box):
    before = by_method(box)
    with pytest.raises(ValidationError, match="no service 'no_such_service'"):
        doctor("no_such_service", say=None)
    with pytest.raises(ValidationError, match="did you mean 'media_review'"):
        doctor("media_reviews", say=None)
    with pytest.raises(ValidationError, match="none named and none configured"):
        doctor(say=None)
    with pytest.raises(ValidationError, match="needs the credential api_key"):
        doctor("asset_library", base_urls={"asset_library": box.url("asset_library")}, say=None)
    assert by_method(box) == before


def test_services_default_to_those_configured(box, monkeypatch):
    for field, value in box.credentials("media_review").items():
        monkeypatch.setenv(f"TOOLKIT_MEDIA_REVIEW_{field.upper()}", value)
    report = doctor(say=None)
    assert [s.service for s in report.services] == ["media_review"] and report.ok


def answers_changed(monkeypatch, change) -> None:
    """The doctor's clients see every answer after `change(headers)`: what a real service adds or lacks."""
    class Changed(requests.adapters.HTTPAdapter):
        def build_response(self, request, response):
            answer = super().build_response(request, response)
            change(answer.headers)
            return answer

    real = doctor_module.connect

    def connect(service, **options):
        client = real(service, **options)
        client.transport.session.mount("http://", Changed())
        return client

    monkeypatch.setattr(doctor_module, "connect", connect)


def test_rate_limit_headers_and_clock_skew_from_the_answers(box, monkeypatch):
    ahead = dt.timedelta(minutes=5)

    def real_service(headers):  # its clock and its rate limit
        headers["Date"] = email.utils.format_datetime(dt.datetime.now(dt.UTC) + ahead, usegmt=True)
        headers["X-RateLimit-Limit"] = "15"
        headers["X-RateLimit-Remaining"] = "14"

    answers_changed(monkeypatch, real_service)
    service = doctor("asset_library", credentials=creds(box), say=None).services[0]
    assert service.rate_limit_headers == {"x-ratelimit-limit": "15", "x-ratelimit-remaining": "14"}
    assert 298 <= service.clock_skew_s <= 302
    assert "headers x-ratelimit-limit: 15, x-ratelimit-remaining: 14" in service.text()
    assert re.search(r"clock skew: \+(29[89]|30[0-2]) s", service.text()), service.text()
    assert service.on_this_machine      # the sandbox, answering as a real service would here


def test_the_sandbox_clock_shows_as_skew_and_no_rate_headers_as_none(box):
    """The sandbox sends its virtual clock as Date (weeks behind this machine's), and no rate headers
    for the video review service."""
    service = doctor("media_review", credentials=creds(box), say=None).services[0]
    behind = (box.clock.now() - dt.datetime.now(dt.UTC)).total_seconds()
    assert service.rate_limit_headers == {} and abs(service.clock_skew_s - behind) < 30
    assert "headers none seen" in service.text()
    # issue 45: "clock skew: -2237164 s" alone read as a broken clock; the sandbox's is virtual, and it says so
    assert "s (the service's Date minus this machine's time); a service on this machine, the sandbox: its clock " \
           "is virtual (its seed's date, moved by `toolkit sandbox advance`)" in service.text()
    assert "its clock is virtual" in doctor("media_review", credentials=creds(box), say=None)._repr_html_()


def test_without_a_date_header_the_report_says_so(box, monkeypatch):
    answers_changed(monkeypatch, lambda headers: headers.pop("Date"))
    service = doctor("media_review", credentials=creds(box), say=None).services[0]
    assert service.clock_skew_s is None and "no Date header" in service.text()


def test_text_and_html(box):
    report = doctor("media_review", "translation", credentials=creds(box), say=None)
    assert repr(report) == report.text()
    assert "everything answered as declared" in repr(report) and "ok   submissions" in repr(report)
    page = report._repr_html_()
    assert page.count("<table ") == 2 and re.search(r"<td [^>]*border[^>]*>submissions</td>", page)


def test_the_html_table_keeps_each_difference_apart():
    """The doctor's table ran two lists together: "seen nullno header total-size"."""
    check = ResourceCheck("targets", "translation.list_targets", types_differ={"dueDate": "seen null"},
                          paging_differs=["no header total-size"], status=200)
    service = ServiceCheck("translation", "http://127.0.0.1:9/PD", "ok (oauth)", True, [check])
    page = Report([service], "2026-11-25T00:00:00+00:00")._repr_html_()
    assert "dueDate: seen null; no header total-size" in page


def test_toolkit_doctor_is_the_function_even_after_its_modules_are_imported(box):
    import importlib
    importlib.import_module("toolkit.checkup.doctor")         # a submodule named doctor would have shadowed it
    importlib.import_module("toolkit.checkup.report")
    report = toolkit.doctor("media_review", credentials=creds(box), say=None)
    assert isinstance(report, Report) and report.ok
    assert "doctor" in toolkit.__all__


# --- drift -------------------------------------------------------------------------------------------

def test_the_drift_of_a_drifting_sandbox_is_in_the_report(drifting):
    report = doctor(*drifting.services, credentials=creds(drifting), say=None)
    assert not report.ok
    checked = {(s.service, r.resource): r for s in report.services for r in s.resources if r.status == 200}
    kinds = set()
    for drift in drifting.drift:
        result = checked.get((drift.service, drift.resource))
        if result is None or (not result.rows and drift.kind != "envelope_key"):
            continue                       # not read without your ids, or no record to show drift in
        resource = catalog.resource(drift.service, drift.resource)
        wire = {c.name: ".".join(c.path) for c in resource.columns}.get(drift.field, drift.field)
        where = f"{drift.service}.{drift.resource} {drift.kind} {wire}"
        kinds.add(drift.kind)
        if drift.kind == "extra_field":
            assert wire in result.extra and result.types[wire] == ["string"], where
        elif drift.kind == "renamed_field":
            assert wire in result.missing, where
            assert any(name.startswith(wire) and name != wire for name in result.extra), where
        elif drift.kind == "missing_field":
            assert wire in result.missing and wire not in result.seen, where
        elif drift.kind == "number_as_string":
            assert "seen string" in result.types_differ[wire], where
        elif drift.kind == "null_for_list":
            assert result.types_differ[wire] == "declared list, seen null", where
        elif drift.kind == "envelope_key" and result.paging_declared == "cursor":
            # the cursor style reads no count: the renamed one shows among the envelope's keys
            assert drift.detail.split(" arrives as ")[1].split(";")[0] in result.envelope, where
            continue
        elif drift.kind == "envelope_key":
            assert any(drift.field in why for why in result.paging_differs), where
        if drift.kind not in ("extra_field", "unknown_status"):   # undeclared fields and values do not count
            assert not result.ok, where
    assert kinds == {"extra_field", "renamed_field", "missing_field", "number_as_string", "null_for_list",
                     "unknown_status", "envelope_key"}
    # an unknown status is a value: the report shows its field's type, never the value
    text = json.dumps(report.to_dict()) + report.text()
    assert not [v for v in ("ARCHIVED_V2", "QUARANTINED_V2", "MIGRATING_V2") if v in text]
    assert not [s for s in drifting.secrets() if s in text]


def test_a_key_that_looks_like_a_value_is_masked():
    """A map keyed by ids or emails would put values in the report as field names."""
    result = ResourceCheck("tags", "asset_library.list_tags")
    record = {"id": "t1", "name": "x", "ann@example.com": 1, "4b7c9e2a-1111-4222-8333-444455556666": 2,
              "20240101": 3, "regionHint": "eu"}
    doctor_module._fields(result, catalog.resource("asset_library", "tags"), [record])
    assert result.extra == ["<key>", "regionHint"] and result.seen == ["id", "name"]
    assert "example" not in json.dumps(dataclasses.asdict(result))
