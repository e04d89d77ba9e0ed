"""The translation service's multi-step jobs: a new submission, and the three-step download.

    wizard = SubmissionWizard(tm, wait=lambda s: sandbox.advance(seconds=s))
    wizard.run(name="Autumn site", project_id=10, workflow_id=22, source_language="en-US",
               target_languages=["fr-FR", "de-DE"], file=("home.html", b"<p>Hello</p>"), file_format_name="HTML")
    Download(tm).run(1001, "deliverables.zip", deliverable_target_ids=[90001])   # the zip's files
    Download(tm).run(1001, "french.zip", deliverable_languages=["fr-FR"])         # a language's files
    Download(tm).run(1001, "home.fr.html", target_id=90001)                        # one target's file

A submission is created (with one batch), its source uploaded into the batch, analyzed (the status
answers PROCESSING until the analysis is done) and saved, started when `auto_start`. A download is
started, polled with its download id until `processingFinished`, then fetched as a zip, written to a
path and listed; or one target's translated file is fetched in one request and written.
"""
from __future__ import annotations

__all__ = ["Download", "LANGUAGES", "SubmissionWizard", "TARGET_FORMATS", "WORKFLOW"]

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from toolkit.catalog.spec import Param
from toolkit.catalog.translation_checks import TARGET_FORMATS
from toolkit.errors import ToolkitError
from toolkit.forms.fields import LABEL_WIDTH, MISSING, build
from toolkit.forms.steps import Steps, Wait, lookup_field, value_of
from toolkit.http import translation_downloads

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

WORKFLOW = Param("workflow_id", "body", "id", required=True, example=22, doc="workflow of the batch")
LANGUAGES = Param("target_languages", "body", "list", required=True, example=["fr-FR", "de-DE"],
                  doc="target languages of the batch, separated by commas")


class SubmissionWizard(Steps):
    """Create → upload source → analyze → save (and start): each step's answer shown as it comes."""

    title = "New translation submission"
    action_label = "Create, upload, analyze, save"

    def __init__(self, conn: Connection, *, wait: Wait | None = None, interval: float = 60.0,
                 timeout: float = 3600.0) -> None:
        create = "translation.create_submission"
        self.name = lookup_field(conn, create, "name")
        self.project = lookup_field(conn, create, "project_id")
        self.workflow = lookup_field(conn, create, WORKFLOW, parent=self.project)
        self.source = lookup_field(conn, create, "source_language")
        self.languages = build(LANGUAGES)
        # labelled like the fields built from params, so no label is cut at ipywidgets' default width
        wide = {"style": {"description_width": LABEL_WIDTH}, "layout": W.Layout(width="420px")}
        self.file = W.FileUpload(multiple=False, description="source file *",
                                 layout=W.Layout(width="auto", margin=f"2px 0 2px {LABEL_WIDTH}"))
        self.format = lookup_field(conn, "translation.upload_source", "file_format_name")
        self.target_format = W.Dropdown(options=TARGET_FORMATS, value="TXLF", description="target_format", **wide)
        self.auto_start = W.Checkbox(value=True, description="auto_start: start the jobs once saved", **wide)
        inputs = [f.row for f in (self.name, self.project, self.workflow, self.source, self.languages)]
        super().__init__(conn, [*inputs, self.file, self.format.row, self.target_format, self.auto_start],
                         wait=wait, interval=interval, timeout=timeout)

    def run_from_widgets(self) -> Any:
        self.require({"name": self.name, "project_id": self.project, "workflow_id": self.workflow,
                      "source_language": self.source, "target_languages": self.languages,
                      "source file": self.file})
        item = self.file.value[0]
        fmt = value_of(self.format)
        return self.run(name=value_of(self.name), project_id=value_of(self.project),
                        workflow_id=value_of(self.workflow), source_language=value_of(self.source),
                        target_languages=value_of(self.languages, []), file=(item["name"], bytes(item["content"])),
                        file_format_name=fmt, target_format=self.target_format.value,
                        auto_start=self.auto_start.value)

    def run(self, *, name: str, project_id: int, workflow_id: int, source_language: str,
            target_languages: list[str], file: Any, file_format_name: str | None = None,
            batch_name: str = "Batch1", target_format: str = "TXLF", auto_start: bool = True,
            due_date: dt.datetime | int | None = None, wait: Wait | None = None,
            **create: Any) -> dict[str, Any]:
        """Run the four steps; returns {submission_id, document_ids, started, messages, steps}."""
        self.given(name=name, project=project_id, workflow=workflow_id, source=source_language,
                   languages=list(target_languages), format=file_format_name, target_format=target_format,
                   auto_start=auto_start)
        return self.guarded(lambda: self._run(name, int(project_id), int(workflow_id), source_language,
                                              list(target_languages), file, file_format_name, batch_name,
                                              target_format, auto_start, due_date, wait, create))

    def _run(self, name: str, project_id: int, workflow_id: int, source: str, languages: list[str],
             file: Any, file_format: str | None, batch: str, target_format: str, auto_start: bool,
             due_date: Any, wait: Wait | None, create: dict[str, Any]) -> dict[str, Any]:
        if not languages:
            raise ToolkitError("give at least one target language")
        batch_infos = [{"workflowId": workflow_id, "targetFormat": target_format, "name": batch,
                        "targetLanguageInfos": [{"targetLanguage": lang} for lang in languages]}]
        if due_date is not None:
            create["due_date"] = due_date
        made = self.call("translation.create_submission", name=name, project_id=project_id,
                         source_language=source, batch_infos=batch_infos, **create)
        sid = made["submissionId"]
        self.step("create_submission", f"submission {sid} in project {project_id}")
        upload = {"file_format_name": file_format} if file_format else {}
        sent = self.call("translation.upload_source", submission_id=sid, file=file, batch_name=batch,
                         target_format=target_format, **upload)
        documents = [d.get("documentId") for d in sent.get("documentIds") or []]
        self.step("upload_source", f"process {sent.get('processId')}: documents {documents}")
        self.step("analyze_submission", self.call("translation.analyze_submission", submission_id=sid))
        status, waited = self.poll("analysis", lambda: self.conn.call("translation.get_submission_status",
                                                                        submission_id=sid),
                                   lambda a: a.get("status") == "PROCESSED", wait)
        if status.get("status") != "PROCESSED":
            raise ToolkitError(f"the analysis of submission {sid} is not done after {waited:g} s")
        saved = self.call("translation.save_submission", submission_id=sid, auto_start=auto_start)
        started = sid in (saved.get("startedSubmissionIds") or [])
        self.step("save_submission", saved, started or not auto_start)
        self.stale("translation.save_submission")
        result = {"submission_id": sid, "document_ids": documents, "started": started,
                  "messages": saved.get("messages") or [], "steps": [dict(s) for s in self.steps]}
        return self.finish(result, f"submission {sid} {'started' if started else 'saved'}",
                           display=pd.DataFrame(self.steps))


class Download(Steps):
    """Start a download, poll until it is prepared, save the zip to a path and list its files."""

    title = "Download files of a submission"
    action_label = "Download"

    def __init__(self, conn: Connection, *, wait: Wait | None = None, interval: float = 2.0,
                 timeout: float = 600.0) -> None:
        start = "translation.start_download"
        self.submission = lookup_field(conn, start, "submission_id")
        self.source_files = lookup_field(conn, start, "source_files")
        self.targets = lookup_field(conn, start, "deliverable_target_ids", parent=self.submission)
        self.languages = lookup_field(conn, start, "deliverable_languages", parent=self.submission)
        self.references = lookup_field(conn, start, "language_reference_files", parent=self.submission)
        self.target = lookup_field(conn, "translation.download_target_deliverable", "target_id",
                                   parent=self.submission)
        self.path = W.Text(description="save as", placeholder="submission-<id>.zip",
                           style={"description_width": "190px"})
        self.overwrite = W.Checkbox(description="replace a file of that name", value=False, indent=False)
        self.path_written: Path | None = None
        inputs = [f.row for f in (self.submission, self.source_files, self.targets, self.languages,
                                  self.references, self.target)]
        super().__init__(conn, [*inputs, self.path, self.overwrite], wait=wait, interval=interval,
                         timeout=timeout)

    def run_from_widgets(self) -> Any:
        what = {name: value_of(field) for name, field in (("source_files", self.source_files),
                                                           ("deliverable_target_ids", self.targets),
                                                           ("deliverable_languages", self.languages),
                                                           ("language_reference_files", self.references),
                                                           ("target_id", self.target))}
        if what["source_files"] is False:
            del what["source_files"]                 # an unticked box asks for nothing
        return self.run(value_of(self.submission), self.path.value.strip() or None,
                        overwrite=self.overwrite.value, **{k: v for k, v in what.items() if v is not None})

    def run(self, submission_id: int, path: str | Path | None = None, *, overwrite: bool = False,
            wait: Wait | None = None, target_id: Any = None, **what: Any) -> pd.DataFrame:
        """Start (source_files=True, deliverable_target_ids=[...], deliverable_languages=[...],
        language_reference_files=[...]), poll, save the zip to `path` (submission-<id>.zip by default;
        an existing file only with `overwrite=True`); returns its files as a DataFrame. With
        `target_id` alone, that target's translated file is saved instead (target-<id> by default)."""
        one = target_id not in (None, "", MISSING)
        self.given(submission=submission_id, path=str(path) if path else None, overwrite=overwrite,
                   source_files=what.get("source_files"), targets=what.get("deliverable_target_ids"),
                   languages=what.get("deliverable_languages"), references=what.get("language_reference_files"),
                   target=target_id if one else None)
        if one:
            return self.guarded(lambda: self._one(submission_id, target_id, path, overwrite, what))
        return self.guarded(lambda: self._run(submission_id, path, overwrite, wait, what))

    def _one(self, sid: Any, target_id: Any, path: str | Path | None, overwrite: bool,
             what: dict[str, Any]) -> pd.DataFrame:
        if sid in (None, "", MISSING):
            raise ToolkitError("give a submission id")
        if what:
            raise ToolkitError(f"one target's file comes alone: leave {', '.join(sorted(what))} blank, or the "
                               "target blank for a zip")
        target = Path(path or f"target-{target_id}").expanduser()
        if target.exists() and not overwrite:
            raise ToolkitError(f"{target} exists: tick 'replace a file of that name' (overwrite=True) "
                               "or give another path")
        got = translation_downloads.target_file(self.conn, sid, target_id)
        self.step("download_target_deliverable", f"target {target_id}: {len(got.data):,} bytes")
        target = got.save(target, overwrite=overwrite)
        self.path_written = target
        self.path.value = str(target)
        self.step("save", f"saved to {target}", True)
        files = pd.DataFrame([(target.name, len(got.data), len(got.data))], columns=["name", "size", "compressed"])
        return self.finish(files, f"target {target_id}'s file saved in {target}")

    def _run(self, sid: Any, path: str | Path | None, overwrite: bool, wait: Wait | None,
             what: dict[str, Any]) -> pd.DataFrame:
        if sid in (None, "", MISSING):
            raise ToolkitError("give a submission id")
        target = Path(path or f"submission-{sid}.zip").expanduser()
        if target.exists() and not overwrite:  # said before the service prepares a zip for nothing
            raise ToolkitError(f"{target} exists: tick 'replace a file of that name' (overwrite=True) "
                               "or give another path")
        # the three steps (toolkit.http.translation_downloads), through the connection so that its calls are
        # the form's
        got = translation_downloads.submission_files(self.conn, sid, polls=max(1, int(self.timeout // self.interval)),
                                                     interval=self.interval, wait=wait or self.wait, **what)
        self.step("start_download", f"download {got.download_id}")
        self.step("prepare", f"prepared after {got.polls} poll(s) {self.interval:g} s apart", True)
        target = got.save(target, overwrite=overwrite)
        self.path_written = target
        self.step("download_files", f"{len(got.data):,} bytes saved to {target}")
        files = pd.DataFrame([(i.filename, i.file_size, i.compress_size) for i in got.files()],
                             columns=["name", "size", "compressed"])
        self.step("list", f"{len(files)} file(s) in the zip")
        self.path.value = str(target)
        return self.finish(files, f"{len(files)} file(s) saved in {target}")

