"""The helpers of a production connector's two flows, from code and from the widgets: a submission saved
on hold started, a translated file of a NON_PARSABLE batch handed back and its phase found by its name;
and a tag read by id through the toolkit's client."""
from __future__ import annotations

import pytest

from toolkit.connection import audit
from toolkit.errors import ToolkitError
from toolkit.forms import HandBack, StartSubmission, phase_of_file


def advance(e):
    return lambda seconds: e.box.advance(seconds=seconds)


def saved_on_hold(e, target_format: str = "NON_PARSABLE") -> int:
    """A submission created, its source uploaded (no file format: the connector sends none) and saved
    without a start."""
    batch = [{"name": "Batch1", "targetFormat": target_format,
              "targetLanguageInfos": [{"targetLanguage": "es-ES"}, {"targetLanguage": "fr-FR"}]}]
    sid = e.client.call("translation.create_submission", name="Notes", project_id=10, source_language="en-US",
                        batch_infos=batch)["submissionId"]
    e.client.call("translation.upload_source", submission_id=sid, file=("notes.txt", b"One. Two. Three."),
                  batch_name="Batch1", target_format=target_format)
    saved = e.client.call("translation.save_submission", submission_id=sid, auto_start=False)
    assert saved["startedSubmissionIds"] == []
    return sid


def test_a_submission_saved_on_hold_is_analyzed_and_started(env):
    e = env("translation")
    sid = saved_on_hold(e, "TXLF")
    assert e.client.call("translation.get_submission", submission_id=sid)["status"] == "WAITING"
    helper = StartSubmission(e.client, wait=advance(e))
    result = helper.run(sid)
    assert result["started"] and helper.state == "done"
    assert [s["step"] for s in helper.steps] == ["get_submission", "analyze_submission", "analysis",
                                                 "start_submission"]
    assert e.client.call("translation.get_submission", submission_id=sid)["status"] == "IN_PROCESS"
    with pytest.raises(ToolkitError, match="IN_PROCESS: only a submission not started yet"):
        helper.run(sid)
    assert (audit.audit(e.ws).source == "helper:StartSubmission").sum() == 2     # analyze, start: the writes


def test_the_start_widget_starts_the_submission_it_is_given(env):
    e = env("translation")
    sid = saved_on_hold(e)
    helper = StartSubmission(e.client, wait=advance(e))
    helper.submission.widget.value = str(sid)
    helper.button.click()
    assert helper.state == "done", helper.status.value
    assert helper.result["submission_id"] == sid


def test_a_non_parsable_translation_is_handed_back_and_its_phase_completed(env):
    e = env("translation")
    sid = saved_on_hold(e)
    StartSubmission(e.client, wait=advance(e)).run(sid)
    phases = e.client.call("translation.list_phases", submission_id=sid)
    spanish = next(p for p in phases if p["targetLanguage"] == "es-ES")
    name = spanish["targetFileName"]
    assert name.startswith("notes-Non-Parsable-es-ES#TR_") and name.endswith("#.txt")
    helper = HandBack(e.client, wait=advance(e))
    result = helper.run(sid, (name, b"Uno. Dos. Tres."), complete=True)
    assert result["target_id"] == spanish["targetId"] and result["phase"] == spanish["currentPhase"]
    assert result["completed"]["completedTargets"] == [spanish["targetId"]]
    after = {p["targetId"]: p for p in e.client.call("translation.list_phases", submission_id=sid)}
    assert after[spanish["targetId"]]["currentPhase"] != spanish["currentPhase"]
    with pytest.raises(ToolkitError, match="no target of submission .* has a file named 'renamed.txt'"):
        helper.run(sid, ("renamed.txt", b"Uno."))


def test_a_phase_is_found_by_its_file_name_with_or_without_txlf():
    phases = [{"targetId": 1, "targetFileName": "a-fr-FR#TR_AAAB#.html"},
              {"targetId": 2, "targetFileName": "a-de-DE#TR_AAAC#.html.txlf"}]
    assert phase_of_file(phases, "A-FR-FR#TR_AAAB#.html.txlf")["targetId"] == 1
    assert phase_of_file(phases, "a-de-DE#TR_AAAC#.html.txlf")["targetId"] == 2
    assert phase_of_file(phases, "a-de-DE#TR_AAAC#.html") is None
    assert phase_of_file([{"targetId": 3, "targetFileName": None}], "x") is None


def test_a_tag_is_read_by_id_and_a_deleted_one_is_not_found(env):
    e = env("asset_library")
    made = e.client.call("asset_library.create_tag", name="launch-2026")
    assert e.client.get_tag(tag_id=made["id"]) == {"id": made["id"], "name": "launch-2026"}
    e.client.call("asset_library.delete_tag", tag_id=made["id"])
    with pytest.raises(ToolkitError, match="not found|404"):
        e.client.get_tag(tag_id=made["id"])
