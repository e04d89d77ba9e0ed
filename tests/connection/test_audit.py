"""The audit trail: every write sent with a workspace, from code or a form, secrets masked."""
from __future__ import annotations

import warnings

import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.connection import audit
from toolkit.errors import NotFoundError, WorkspaceError
from toolkit.sandbox import available

SERVICE = "audience_platform"


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as running:
        yield running


@pytest.fixture
def ws():
    with tk.Workspace() as workspace:
        yield workspace


def test_an_empty_trail_has_the_columns(ws):
    assert list(audit.audit(ws).columns) == list(audit.COLUMNS)


def test_writes_through_call_are_recorded_and_reads_are_not(box, ws):
    cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
    cdp.call("list_users")
    cdp.call("create_user", username="audit-bot", email="audit.bot@example.com", password="pw-typed-in-code")
    rows = audit.audit(ws)
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row.service, row.action, row.source, row.ok) == (SERVICE, "audience_platform.create_user", "call", True)
    assert row.status in (200, 201)
    assert row.response_id == "audit-bot" and row.at is not None
    assert "pw-typed-in-code" not in row.params and '"password":"***"' in row.params
    assert not [s for s in box.secrets() if s in row.params]


def test_a_refused_write_is_recorded_with_the_service_status(box, ws):
    cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
    with pytest.raises(NotFoundError):
        cdp.call("delete_user", username="nobody-by-that-name")
    row = audit.audit(ws).iloc[-1]
    assert row.status == 404 and not row.ok and "nobody-by-that-name" in row.error


def test_a_bare_client_knows_no_workspace_and_sends_without_recording(box):
    cdp = tk.connect(SERVICE, **box.credentials(SERVICE))
    assert not hasattr(cdp, "workspace") and not hasattr(cdp, "fetch") and not hasattr(cdp, "form")
    cdp.call("update_profile_merge_configuration", enabled=True)


def test_a_write_through_a_connection_whose_workspace_was_closed_is_refused_unsent(box):
    ws = tk.Workspace()
    cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
    ws.close()
    sent = box.stats()["requests"]
    with warnings.catch_warnings(record=True) as warned, \
            pytest.raises(WorkspaceError, match="was not sent.*closed.*client.call"):
        warnings.simplefilter("always")
        cdp.call("update_profile_merge_configuration", enabled=False)
    assert box.stats()["requests"] == sent, "nothing left the machine"
    assert not [w for w in warned if "toolkit" in str(w.message)]
    cdp.client.call("update_profile_merge_configuration", enabled=False)    # the explicit way round
    assert box.stats()["requests"] == sent + 1


def test_a_write_through_a_read_only_workspace_is_refused_unsent(box, tmp_path):
    path = tmp_path / "ro.duckdb"
    tk.Workspace(path).close()
    with tk.Workspace(path, read_only=True) as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        sent = box.stats()["requests"]
        with pytest.raises(WorkspaceError, match="read-only"):
            cdp.call("update_profile_merge_configuration", enabled=False)
        assert box.stats()["requests"] == sent
        cdp.call("list_users")                                               # reads go on


def test_masked_params_show_files_and_secrets_safely():
    entry = catalog.action("translation.upload_source")
    text = audit.masked_params(entry, {"submission_id": 1, "file": ("a.html", b"12345")})
    assert "<file a.html: 5 bytes>" in text
    token = catalog.action("audience_platform.update_document_generation_configuration")
    assert '"client_secret":"***"' in audit.masked_params(token, {"client_secret": "abc"})


def test_a_write_through_call_makes_the_next_cached_fetch_pull_again(box, ws):
    cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
    before = len(cdp.fetch("users"))
    served = box.stats()["requests"]
    cdp.fetch("users", max_age=3600)
    assert box.stats()["requests"] == served, "a fresh cached load is reused"
    cdp.call("create_user", username="stale-maker", email="stale.maker@example.com",
             password="pw-long-enough")
    after = cdp.fetch("users", max_age=3600)
    assert len(after) == before + 1, "the write marked the users load stale, so fetch pulled again"


def test_a_secret_given_as_a_metadata_pair_is_masked_in_the_audit_and_the_preview():
    """The vendor's own client sends its webhook's password as metadata, `{key, value}` data under no
    secret field name (docs/public-specs.md, G9): the audit row and the preview mask the value."""
    hook = "hook-pass-typed-in-code"
    metadata = [{"key": "_webhookURL", "value": "https://hooks.example.com/pd"},
                {"key": "_webhookBasicAuthUser", "value": "hook-user"},
                {"key": "_webhookBasicAuthPass", "value": hook}]
    with tk.sandbox.start(emulators={"translation": available()["translation"]}) as running, tk.Workspace() as ws:
        tm = ws.connect("translation", **running.credentials("translation"))
        params = {"name": "Hooked", "project_id": 10, "source_language": "en-US", "metadata": metadata,
                  "batch_infos": [{"name": "Batch1", "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}]}
        preview = tm.prepare("translation.create_submission", **params).describe(tm.client.redactor, {})
        sid = tm.call("translation.create_submission", **params)["submissionId"]
        stored = {m["key"]: m["value"] for m in tm.call("translation.list_metadata", submission_id=sid)}
        trail = audit.audit(ws).iloc[0].params
    assert stored["_webhookBasicAuthPass"] == hook                 # the service got it
    assert hook not in trail and hook not in preview
    assert '"hook-user"' in trail and '"https://hooks.example.com/pd"' in trail     # the rest kept
    assert catalog.masking.scrub({"metadata": metadata})["metadata"][2] == {"key": "_webhookBasicAuthPass",
                                                                             "value": "***"}
    assert catalog.masking.scrub({"name": "Priority", "value": "High"}) == {"name": "Priority", "value": "High"}
