"""Errors that say what to do, against the sandbox: a service that does not answer, credentials it
refuses, a name misspelt, a view not fetched yet, a bad value found before a parent is pulled, a long
list of ids shortened (issue 28)."""
from __future__ import annotations

import pytest

import toolkit as tk
from toolkit.errors import AuthError, ToolkitError, TransportError, UnknownNameError, ValidationError
from toolkit.http.session import RetryPolicy

QUICK = RetryPolicy(attempts=2, backoff=0.01)


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as box:
        yield box


@pytest.fixture(scope="module")
def gone():
    """Credentials of a sandbox that has stopped: nothing listens at its address any more."""
    with tk.sandbox.start() as stopped:
        credentials = {s: stopped.credentials(s) for s in ("translation", "asset_library")}
    return credentials


def test_no_answer_names_the_service_the_address_where_it_came_from_and_what_to_check(gone, monkeypatch):
    client = tk.connect("asset_library", retry=QUICK, **gone["asset_library"])
    with pytest.raises(TransportError) as info:
        client.call("asset_library.list_tags")
    said = str(info.value)
    assert said.startswith(f"asset_library.list_tags: no answer from asset_library at {client.base_url}: "
                           "it refused or dropped the connection (2 tries in ")
    assert "the address came from the arguments of connect()" in said and "tk.sandbox.start()" in said
    assert info.value.tries == 2 and info.value.failure == "ConnectionError"
    for field, value in gone["asset_library"].items():
        monkeypatch.setenv(f"TOOLKIT_ASSET_LIBRARY_{field.upper()}", value)
    with pytest.raises(TransportError, match="the address came from the arguments of connect\\(\\) and the "
                                             "variables TOOLKIT_ASSET_LIBRARY_BASE_URL, "):
        tk.connect("asset_library", retry=QUICK).call("asset_library.list_tags")
    with pytest.raises(TransportError, match="the address came from the file /tmp/c.json"):
        tk.connect("asset_library", retry=QUICK, source="the file /tmp/c.json").call("asset_library.list_tags")


def test_a_fan_out_that_fails_shows_a_few_of_its_ids_not_eighty(gone):
    with tk.Workspace() as ws:
        tm = ws.connect("translation", retry=QUICK, **gone["translation"])
        with pytest.raises(ToolkitError) as info:
            tm.fetch("targets", submission_ids=list(range(1001, 1081)), progress=False)
    said = str(info.value)
    assert "[1001, 1002, 1003, … 80 in all]" in said and "1004" not in said
    assert "no answer from translation at" in said


def test_a_refused_login_shows_the_services_words_and_the_credentials_to_check(box):
    wrong = {**box.credentials("translation"), "password": "not-the-password"}
    with pytest.raises(AuthError) as info:
        tk.connect("translation", **wrong).call("translation.get_submission", submission_id=1001)
    said = str(info.value)
    assert said.startswith("translation.create_token: 400 Bad credentials. translation at ")
    assert "refused the credentials (username, password, client_id, client_secret), which came from the " \
           "arguments of connect(): check them" in said
    assert "{" not in said and "not-the-password" not in said
    assert info.value.message == "Bad credentials"      # the service's own words, kept apart from the advice
    wrong = {**box.credentials("asset_library"), "api_key": "wrong-key"}
    with pytest.raises(AuthError, match=r"refused the credentials \(api_key, workspace_id\)"):
        tk.connect("asset_library", **wrong).call("asset_library.list_tags")


def test_misspelt_params_and_filters_say_the_closest_name(box):
    with tk.Workspace() as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        with pytest.raises(ValidationError, match=r"unknown param; did you mean 'submission_id'\?"):
            tm.get_submission(submision_id=1001)
        with pytest.raises(ValidationError, match=r"unknown param; did you mean 'statuses'\?"):
            tm.call("translation.list_submissions", status="DONE")
        with pytest.raises(ValidationError, match=r"unknown filter; did you mean 'status'\? targets takes "
                                                  r"submission_ids, status$"):
            tm.fetch("targets", statuss=["READY"])
        with pytest.raises(UnknownNameError, match=r"did you mean 'targets'\?"):
            tm.fetch("target")
        with pytest.raises(ValidationError, match=r"unknown param; translation.get_submission takes"):
            tm.get_submission(zzz=1)       # nothing close: no guess


@pytest.mark.parametrize(("service", "resource", "filters"), [
    ("translation", "targets", {"status": ["DONE"]}),                   # chunked over the submissions
    ("asset_library", "guests", {"email": 12}),                         # one walk per board
])
def test_a_bad_value_is_refused_before_the_parent_is_pulled(box, service, resource, filters):
    with tk.Workspace() as ws:
        conn = ws.connect(service, **box.credentials(service))
        with pytest.raises(ValidationError) as info:
            conn.fetch(resource, progress=False, **filters)
        assert info.value.param in filters
        assert conn.client.requests_sent == 0 and ws.tables().empty


def test_a_view_not_fetched_yet_names_the_call_that_fetches_it(box):
    with tk.Workspace() as ws:
        ws.connect("translation", **box.credentials("translation")).fetch("submissions", progress=False)
        with pytest.raises(ToolkitError) as info:
            ws.sql("select * from translation.phases").df()
        said = str(info.value)
        assert said == ("translation.phases is not fetched yet: ws.connect('translation', ...).fetch('phases') "
                        "fetches it (this workspace holds translation.submissions)"), said


def test_a_snapshot_that_is_not_there_is_a_short_toolkit_error(tmp_path):
    from toolkit.errors import SnapshotNotFoundError
    with pytest.raises(FileNotFoundError) as info:      # as it was: code that caught this goes on working
        tk.open_snapshot(tmp_path / "missing.duckdb")
    assert isinstance(info.value, SnapshotNotFoundError)
    assert str(info.value) == f"no snapshot at {tmp_path / 'missing.duckdb'}: toolkit export (or ws.export(path)) " \
                              "writes one"
    assert len(info.value._render_traceback_()) == 3


def test_a_misspelt_method_says_the_closest_as_call_does(box):
    """Issue 45: `tm.get_submision(...)` was a bare AttributeError, where `tm.call` suggests three."""
    from toolkit.errors import UnknownMethodError
    with tk.Workspace() as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        with pytest.raises(AttributeError) as info:
            tm.get_submision(submission_id=1001)
        assert isinstance(info.value, UnknownMethodError) and isinstance(info.value, ToolkitError)
        assert "the translation connection has no method or attribute 'get_submision'; did you mean " \
               "'get_submission'" in str(info.value)
        with pytest.raises(UnknownMethodError, match="the translation client .* did you mean 'get_submission'"):
            tm.client.get_submision()
        assert not hasattr(tm, "nothing_like_it") and getattr(tm, "_private", 5) == 5
        assert len(info.value._render_traceback_()) == 3    # the cell's line, the message, the hint
    assert box.stats()["by_action"].get("translation.get_submission", 0) == 0


def test_a_list_of_resources_is_refused_with_the_loop_that_fetches_each(box):
    """Issue 45: `tm.fetch(["targets", "phases"])` was a 42-line `TypeError: unhashable type: 'list'`."""
    with tk.Workspace() as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        before = box.stats()["requests"]
        with pytest.raises(ValidationError) as info:
            tm.fetch(["targets", "phases"])
        assert str(info.value) == ("resource=['targets', 'phases']: one resource a call; for several, one call "
                                   "each: for name in ['targets', 'phases']: conn.fetch(name) (translation)")
        with pytest.raises(ValidationError, match="action=.*one action a call"):
            tm.call(["translation.get_submission"])
        assert box.stats()["requests"] == before
