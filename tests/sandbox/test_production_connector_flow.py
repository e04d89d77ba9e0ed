"""The translation flows of a workflow-automation platform's production connector (docs/public-specs.md,
source G8), run against the sandbox with plain requests, each shaped as that connector shapes it.

Written by us from its request shapes (nothing copied): a connection checked with `GET instanceInfo`;
submission pickers filtering by status lists that name IN_ERROR and ARCHIVED; a submission created,
its source uploaded and saved with `autoStart: false`, then started the connector's way (only when
WAITING or PREFLIGHT: analyze, poll the status every 5 s for at most 30 polls, start); and a translated
file of a NON_PARSABLE batch uploaded through `upload/translatable`, its check polled, its phase found
among the phases by `targetFileName` and completed along its first transition.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import toolkit.sandbox
from tests.sandbox.test_integration_flows import DAY_MS, V0, Flow, Stop

# every status of the connector's "non-cancelled" picker, and of its "upload target" picker
NON_CANCELLED = "CREATING,WAITING,PREFLIGHT,READY,IN_PROCESS,PROCESSING,IN_ERROR,ARCHIVED"
UPLOAD_TARGET = "IN_PROCESS,PROCESSING,IN_ERROR"
SOURCE = b"The first sentence.\nThe second one.\nA third, to close.\n"


@pytest.fixture()
def box() -> Iterator[toolkit.sandbox.Sandbox]:
    with toolkit.sandbox.start() as started:
        yield started


def pick(flow: Flow, statuses: str) -> list[dict[str, Any]]:
    """A picker: every page of `GET submissions?statuses=…` (pageSize 200, then pageNumber 1, 2…,
    until `total-size` rows or an empty page), as the connector pages."""
    rows: list[dict[str, Any]] = []
    number = 0
    while True:
        params: dict[str, Any] = {"statuses": statuses, "pageSize": 200}
        if number:
            params["pageNumber"] = number
        answer = flow.send(f"picker page {number}", "GET", V0 + "/submissions", params=params)
        page = flow.json(answer, "picker")
        rows += page
        number += 1
        if not page or len(rows) >= int(answer.headers.get("total-size", 0)):
            return rows


def create(flow: Flow, target_format: str, *, save_first: bool) -> int:
    """Create (the connector's body: one batch Batch1, no workflow chosen) and save without a start,
    the source uploaded after the save (the connector's order) or before it (the issue's)."""
    now = flow.now_ms(flow.urlencoded_token())
    body = {"name": "Release notes", "projectId": "10", "sourceLanguage": "en-US", "claimScope": "LANGUAGE",
            "dueDate": now + 7 * DAY_MS,
            "batchInfos": [{"targetFormat": target_format, "name": "Batch1",
                            "targetLanguageInfos": [{"targetLanguage": "es-ES"}, {"targetLanguage": "fr-FR"}]}]}
    sid = flow.json(flow.send("create", "POST", V0 + "/submissions/create", json=body), "create")["submissionId"]
    steps = ["save", "upload"] if save_first else ["upload", "save"]
    for step in steps:
        if step == "save":
            flow.json(flow.send("save (autoStart false)", "POST", f"{V0}/submissions/{sid}/save",
                                json={"autoStart": False}), "save")
        else:
            sent = flow.json(flow.send("upload source", "POST", f"{V0}/submissions/{sid}/upload/source",
                                       files={"file": ("release notes.txt", SOURCE)}, data={"batchName": "Batch1"}),
                             "upload source")
            flow.need(sent["documentIds"], "no document made")
    return sid


def start(flow: Flow, box: toolkit.sandbox.Sandbox, sid: int) -> dict[str, Any]:
    """The connector's start: refused unless WAITING or PREFLIGHT; analyze, poll, start."""
    got = flow.json(flow.send("get", "GET", f"{V0}/submissions/{sid}"), "get")
    flow.read["status before start"] = got["status"]
    flow.need(got["status"] in ("WAITING", "PREFLIGHT"), f"the submission is {got['status']}: not startable")
    flow.json(flow.send("analyze", "POST", f"{V0}/submissions/{sid}/analyze"), "analyze")
    for _ in range(30):
        status = flow.json(flow.send("status", "GET", f"{V0}/submissions/{sid}/status"), "status")
        if status["status"] != "PROCESSING":
            break
        box.advance(seconds=5)
    else:
        raise Stop("the analysis did not finish in 30 polls of 5 s")
    return flow.json(flow.send("start", "POST", f"{V0}/submissions/{sid}/start"), "start")


@pytest.mark.parametrize("save_first", [True, False], ids=["save-then-upload", "upload-then-save"])
def test_a_submission_saved_without_a_start_is_on_hold_and_the_connector_starts_it(box, save_first) -> None:
    flow = Flow(box)
    sid = create(flow, "TXLF", save_first=save_first)
    started = start(flow, box, sid)
    assert flow.read["status before start"] == "WAITING"
    assert started["startedSubmissionIds"] == [sid]
    submission = flow.json(flow.send("get", "GET", f"{V0}/submissions/{sid}"), "get")
    assert submission["status"] == "IN_PROCESS"
    targets = flow.json(flow.send("targets", "GET", V0 + "/targets", params={"submissionIds": sid}), "targets")
    assert {t["status"] for t in targets} == {"READY"} and len(targets) == 2


def test_a_saved_submission_shows_its_targets_waiting(box) -> None:
    flow = Flow(box)
    sid = create(flow, "TXLF", save_first=False)
    targets = flow.json(flow.send("targets", "GET", V0 + "/targets", params={"submissionIds": sid}), "targets")
    assert {t["status"] for t in targets} == {"WAITING"}
    early = flow.json(flow.send("start", "POST", f"{V0}/submissions/{sid}/start"), "start")
    assert early["startedSubmissionIds"] == [] and "analyze" in early["messages"][0]


def test_the_connection_check_answers_with_a_token_and_refuses_without(box) -> None:
    flow = Flow(box)
    flow.urlencoded_token()
    info = flow.send("instanceInfo", "GET", V0 + "/instanceInfo")
    assert info.status_code == 200 and info.json()["systemVersion"] == "6.2"
    flow.token = "not-a-token"
    assert flow.send("instanceInfo", "GET", V0 + "/instanceInfo").status_code == 401


def test_pickers_with_statuses_the_sandbox_does_not_model_select_by_the_others(box) -> None:
    flow = Flow(box)
    flow.urlencoded_token()
    rows = pick(flow, NON_CANCELLED)
    assert rows and {r["status"] for r in rows} <= set(NON_CANCELLED.split(","))
    assert {r["status"] for r in rows} >= {"CREATING", "IN_PROCESS"}
    running = pick(flow, UPLOAD_TARGET)
    assert running and {r["status"] for r in running} == {"IN_PROCESS"}
    assert pick(flow, "IN_ERROR,ARCHIVED") == []
    misspelt = flow.send("picker", "GET", V0 + "/submissions", params={"statuses": "IN_PROCES"})
    assert misspelt.status_code == 400 and "IN_PROCES" in misspelt.json()["messages"][0]


def upload_target(flow: Flow, sid: int, name: str, data: bytes) -> dict[str, Any]:
    """The connector's "Upload target file": upload, poll the check, find the phase by the file's name
    (with or without `.txlf`), complete it along its first transition."""
    process = flow.json(flow.send("upload translatable", "POST", f"{V0}/submissions/{sid}/upload/translatable",
                                  files={"file": (name, data)}), "upload translatable")
    check = flow.json(flow.send("check", "GET", f"{V0}/submissions/{sid}/upload/translatable/"
                                                f"{process['processId']}"), "check")
    flow.need(check["processingFinished"] and "Upload successfully!" in check["messages"][0],
              f"upload failed: {check['messages']}")
    phases = flow.json(flow.send("phases", "GET", f"{V0}/submissions/{sid}/phases?targetids&documentId"), "phases")
    bare = name[:-5] if name.lower().endswith(".txlf") else name
    phase = next((p for p in phases if p.get("targetFileName", "").lower() in (name.lower(), bare.lower())), None)
    flow.need(phase is not None, f"no phase for {name} among {[p.get('targetFileName') for p in phases]}")
    transition = phase["transitions"][0]["name"] if phase["transitions"] else None
    done = flow.json(flow.send("complete", "POST", f"{V0}/submissions/{sid}/phases/{phase['currentPhase']}/complete",
                               json={"targetIds": [int(phase["targetId"])], "transition": transition}), "complete")
    flow.need(not done["failedTargets"], f"failed targets {done['failedTargets']}")
    return {"phase": phase, "completed": done}


def test_a_non_parsable_deliverable_is_uploaded_and_its_phase_found_by_file_name(box) -> None:
    flow = Flow(box)
    sid = create(flow, "NON_PARSABLE", save_first=True)
    assert start(flow, box, sid)["startedSubmissionIds"] == [sid]
    phases = flow.json(flow.send("phases", "GET", f"{V0}/submissions/{sid}/phases"), "phases")
    names = sorted(p["targetFileName"] for p in phases)
    assert len(names) == 2 and all(n.startswith("release notes-Non-Parsable-") for n in names)
    assert all(n.endswith("#.txt") and "#TR_" in n for n in names), names
    spanish = next(n for n in names if "-es-ES#" in n)
    result = upload_target(flow, sid, spanish, b"La primera frase.\n")
    assert flow.stopped is None and result["phase"]["targetLanguage"] == "es-ES"
    assert result["completed"]["completedTargets"] == [int(result["phase"]["targetId"])]
    after = {p["targetId"]: p for p in flow.json(flow.send("phases", "GET", f"{V0}/submissions/{sid}/phases"),
                                                   "phases")}
    assert after[result["phase"]["targetId"]]["currentPhase"] != result["phase"]["currentPhase"]
    assert all(200 <= status < 300 for _, status in flow.trace), flow.trace


def test_a_parsable_submission_still_wants_a_translatable_file(box) -> None:
    flow = Flow(box)
    sid = create(flow, "TXLF", save_first=True)
    start(flow, box, sid)
    phases = flow.json(flow.send("phases", "GET", f"{V0}/submissions/{sid}/phases"), "phases")
    assert all(p["targetFileName"].endswith("#.txlf") for p in phases)
    with pytest.raises(Stop, match="upload failed|check: 400"):
        upload_target(flow, sid, "release notes.txt", b"Texto")
    result = upload_target(flow, sid, phases[0]["targetFileName"], b"<xliff version='1.2'/>")
    assert result["phase"]["targetId"] == phases[0]["targetId"]
