"""The work on a translation submission after it is made: starting one saved on hold, and handing a
translated file back.

    StartSubmission(tm, wait=lambda s: sandbox.advance(seconds=s)).run(1234)
    HandBack(tm, wait=...).run(1234, ("notes-Non-Parsable-es-ES#TR_FQQS#.txt", data))

A submission saved without `auto_start` waits on hold (WAITING) until it is started: StartSubmission
analyzes it unless it is analyzed already, polls the status until the analysis is done and starts it,
saying why when the service started nothing. HandBack uploads a translated file (any file for a
NON_PARSABLE batch; XLIFF, TXLF or TXML otherwise), polls the upload's check, finds the target's phase
by the file's name (the name the service gave the target's file, with or without `.txlf`) and, with
`complete=True`, completes that phase along its default transition.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from toolkit.errors import ToolkitError
from toolkit.forms.fields import LABEL_WIDTH, MISSING
from toolkit.forms.steps import Steps, Wait, lookup_field, value_of

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

__all__ = ["HandBack", "StartSubmission", "phase_of_file"]

STARTABLE = ("CREATING", "WAITING", "PREFLIGHT", "READY")


def phase_of_file(phases: list[dict[str, Any]], file_name: str) -> dict[str, Any] | None:
    """The phase whose `targetFileName` is the file's name, compared without case and with or without
    a trailing `.txlf` (a translated TXLF may come back under either)."""
    wanted = {file_name.lower()}
    if file_name.lower().endswith(".txlf"):
        wanted.add(file_name[:-5].lower())
    return next((p for p in phases if str(p.get("targetFileName") or "").lower() in wanted), None)


class StartSubmission(Steps):
    """Analyze (unless analyzed) → wait for the analysis → start: a submission saved on hold."""

    title = "Start a submission saved on hold"
    action_label = "Analyze and start"

    def __init__(self, conn: Connection, *, wait: Wait | None = None, interval: float = 5.0,
                 timeout: float = 900.0) -> None:
        self.submission = lookup_field(conn, "translation.start_submission", "submission_id")
        super().__init__(conn, [self.submission.row], wait=wait, interval=interval, timeout=timeout)

    def run_from_widgets(self) -> Any:
        self.require({"submission_id": self.submission})
        return self.run(value_of(self.submission))

    def run(self, submission_id: int, *, wait: Wait | None = None) -> dict[str, Any]:
        """Returns {submission_id, started, status, messages, steps}; raises when nothing started."""
        self.given(submission=submission_id)
        return self.guarded(lambda: self._run(int(submission_id), wait))

    def _run(self, sid: int, wait: Wait | None) -> dict[str, Any]:
        status = self.call("translation.get_submission", submission_id=sid).get("status")
        self.step("get_submission", f"submission {sid} is {status}")
        if status not in STARTABLE:
            raise ToolkitError(f"submission {sid} is {status}: only a submission not started yet "
                               f"({', '.join(STARTABLE)}) can be started")
        if status != "READY":                      # READY is analyzed; the others need (or run) an analysis
            if status != "PREFLIGHT":
                self.step("analyze_submission", self.call("translation.analyze_submission", submission_id=sid))
            answer, waited = self.poll("analysis", lambda: self.conn.call("translation.get_submission_status",
                                                                            submission_id=sid),
                                       lambda a: a.get("status") != "PROCESSING", wait)
            if answer.get("status") == "PROCESSING":
                raise ToolkitError(f"the analysis of submission {sid} is not done after {waited:g} s; "
                                   "run this again later")
        started = self.call("translation.start_submission", submission_id=sid)
        ok = sid in (started.get("startedSubmissionIds") or [])
        messages = started.get("messages") or []
        self.step("start_submission", started, ok)
        self.stale("translation.start_submission")
        if not ok:
            raise ToolkitError(f"submission {sid} was not started: {'; '.join(map(str, messages)) or 'no reason given'}")
        result = {"submission_id": sid, "started": True, "status": "IN_PROCESS", "messages": messages,
                  "steps": [dict(s) for s in self.steps]}
        return self.finish(result, f"submission {sid} started", display=pd.DataFrame(self.steps))


class HandBack(Steps):
    """Upload a translated file → wait for its check → find its phase by file name (→ complete it)."""

    title = "Hand back a translated file"
    action_label = "Upload"

    def __init__(self, conn: Connection, *, wait: Wait | None = None, interval: float = 5.0,
                 timeout: float = 150.0) -> None:
        self.submission = lookup_field(conn, "translation.upload_translatable", "submission_id")
        wide = {"style": {"description_width": LABEL_WIDTH}, "layout": W.Layout(width="420px")}
        self.file = W.FileUpload(multiple=False, description="translated file *",
                                 layout=W.Layout(width="auto", margin=f"2px 0 2px {LABEL_WIDTH}"))
        self.complete = W.Checkbox(value=False, description="complete: finish its phase", **wide)
        super().__init__(conn, [self.submission.row, self.file, self.complete], wait=wait, interval=interval,
                         timeout=timeout)

    def run_from_widgets(self) -> Any:
        self.require({"submission_id": self.submission, "translated file": self.file})
        item = self.file.value[0]
        return self.run(value_of(self.submission), (item["name"], bytes(item["content"])),
                        complete=self.complete.value)

    def run(self, submission_id: int, file: Any, *, complete: bool = False,
            wait: Wait | None = None) -> dict[str, Any]:
        """`file`: a path or (name, bytes); the name must be the one the service gave the target's file.
        Returns {submission_id, process_id, phase, target_id, completed, steps}."""
        self.given(submission=submission_id, complete=complete)
        return self.guarded(lambda: self._run(int(submission_id), file, complete, wait))

    def _run(self, sid: int, file: Any, complete: bool, wait: Wait | None) -> dict[str, Any]:
        name, data = (Path(file).name, Path(file).read_bytes()) if isinstance(file, str | Path) else file
        sent = self.call("translation.upload_translatable", submission_id=sid, file=(name, data))
        pid = sent.get("processId")
        self.step("upload_translatable", f"process {pid}: {name} ({len(data):,} bytes)")
        check, waited = self.poll("check", lambda: self.conn.call("translation.get_translatable_upload",
                                                                  submission_id=sid, upload_process_id=pid),
                                  lambda a: bool(a.get("processingFinished")), wait)
        if not check.get("processingFinished"):
            raise ToolkitError(f"the upload of {name} is not checked after {waited:g} s; run this again later")
        phases = self.call("translation.list_phases", submission_id=sid)
        phase = phase_of_file(phases, name)
        if phase is None:
            known = ", ".join(str(p.get("targetFileName")) for p in phases[:5]) or "none"
            raise ToolkitError(f"no target of submission {sid} has a file named {name!r}: upload it under the "
                               f"name it was given (e.g. {known})")
        self.step("list_phases", f"target {phase['targetId']} in {phase.get('currentPhase')}")
        completed = None
        if complete:
            way = next((t for t in phase.get("transitions") or [] if t.get("default")), None) or \
                next(iter(phase.get("transitions") or []), None)
            if phase.get("currentPhase") in (None, "", MISSING) or way is None:
                raise ToolkitError(f"target {phase['targetId']} is in no phase that can be completed")
            completed = self.call("translation.complete_phase", submission_id=sid,
                                  phase_name=phase["currentPhase"], target_ids=[phase["targetId"]],
                                  transition=way["name"])
            failed = completed.get("failedTargets") or []
            self.step("complete_phase", completed, not failed)
            self.stale("translation.complete_phase")
            if failed:
                raise ToolkitError(f"the phase {phase['currentPhase']} of target {phase['targetId']} was not "
                                   f"completed: {'; '.join(map(str, completed.get('messages') or [])) or failed}")
        result = {"submission_id": sid, "process_id": pid, "phase": phase.get("currentPhase"),
                  "target_id": phase["targetId"], "completed": completed, "steps": [dict(s) for s in self.steps]}
        return self.finish(result, f"{name} handed back for target {phase['targetId']}",
                           display=pd.DataFrame(self.steps))
