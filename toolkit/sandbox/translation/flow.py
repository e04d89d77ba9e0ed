"""The submission lifecycle of the translation emulator: create → upload → analyze → save/start →
phases (with the clock) → PROCESSED, and cancel.

Submission statuses: CREATING (files being added; its targets WAITING), PREFLIGHT (analysis
running: GET status says PROCESSING for 2 virtual minutes), WAITING (on hold: until its quote is
approved, or saved without `autoStart` before an analysis, until someone analyzes and starts it; its
targets WAITING), READY (analyzed; targets READY), IN_PROCESS (started), PROCESSED
(every live target through its last phase), DELIVERED, CANCELLED. Start and save answer 200 with the
started ids; an empty `startedSubmissionIds` and a message say why nothing started. A save also
answers `linkedSubmissionIds`, which the vendor's own client joins (docs/public-specs.md, G9): always
empty, as the sandbox never splits a submission into linked ones.

A word count answers `{submissionId, submissionName, totalWordCount, targetCount, breakdown}` and,
narrowed to one language, document, target or batch, what names it (`targetLanguage`; `documentId`,
`documentName`, `batchName`; `targetId` with those of its document and its language; `batchName`):
the vendor's client reads these names (`WordCountResponseModel`) into non-nullable numbers, so a
field that names nothing is left out rather than sent as null.

Webhooks: `submission.*` events as the submission moves, `target.completed` when the clock finishes
targets and `target.cancelled` when targets are cancelled, one delivery per event naming its
`targetIds` (`target.reopened` is taken in a scope; the sandbox never reopens a target).

The clock: every hour of virtual time, each target in a phase takes a step on its own period of 3
to 6 hours (READY → IN_PROCESS → the next phase READY ... → PROCESSED), so a share of the work moves
each hour, the same for the same seed (`translation_model.steps_between`). Uploads are in
translation_uploads.
"""
from __future__ import annotations

__all__ = ["ANALYSIS", "CLAIM_SCOPES", "Flow", "TARGET_FORMATS", "saved"]

from typing import Any

from toolkit.catalog.translation_checks import TARGET_FORMATS
from toolkit.sandbox.exchange import Reject, Request
from toolkit.sandbox.translation.files import Files
from toolkit.sandbox.translation.model import (
    CANCELLED,
    DELIVERED,
    FINISHED,
    IN_PROCESS,
    LANG_INDEX,
    LANGUAGES,
    NO_PHASE,
    PROCESSED,
    READY,
    WAITING,
    Batch,
    Submission,
    steps_between,
)
from toolkit.sandbox.translation.records import Records, body_object, int_list, metadata_entries, number
from toolkit.sandbox.translation.seed import API_USER, DAY, HOUR, MINUTE
from toolkit.sandbox.translation.state import State

# no duration is published; two public clients poll the status for at most 150 s before giving up
# (docs/public-specs.md, G2 and G8), so a sandbox analysis ends within that
ANALYSIS = 2 * MINUTE
CLAIM_SCOPES = ("LANGUAGE", "BATCH", "FILE")


def saved(started: list[int], message: str) -> dict[str, Any]:
    """What a save answers: the started ids, the linked ones (none: the sandbox never links) and why."""
    return {"startedSubmissionIds": started, "linkedSubmissionIds": [], "messages": [message]}


class Flow:
    """Create, analyze, save, start, word count, cancel and the clock's work, over the server's state;
    it checks custom attributes with `records` and sends webhooks through `files`."""

    def __init__(self, state: State, records: Records, files: Files) -> None:
        self.state, self.records, self.files = state, records, files

    # --- create --------------------------------------------------------------------------------

    def do_create_submission(self, request: Request) -> Any:
        body = body_object(request)
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise Reject(400, "name is required")
        project_id = number(body.get("projectId"))
        project = self.state.projects.get(project_id) if isinstance(project_id, int) else None
        if project is None:
            raise Reject(400, f"projectId {body.get('projectId')!r} is not a project of this user")
        pa_client = number(body.get("paClientId"))
        if pa_client is None and self.state.mode == "hosted":
            raise Reject(400, "paClientId is required in hosted mode")
        if pa_client is not None and pa_client not in project["paClientIds"]:
            raise Reject(400, f"paClientId {pa_client!r} is not a PA client of project {project['projectId']}")
        source = body.get("sourceLanguage")
        if not isinstance(source, str) or source not in project["sources"]:
            raise Reject(400, f"sourceLanguage {source!r} is not a source language of project "
                              f"{project['projectId']} ({', '.join(project['sources'])})")
        now = self.state.now_ms()
        due = number(body.get("dueDate", now + 14 * DAY))
        if not isinstance(due, int) or isinstance(due, bool):
            raise Reject(400, "dueDate must be a Unix timestamp in milliseconds")
        if due <= now:
            raise Reject(400, "dueDate must be in the future")
        scope = body.get("claimScope") or "LANGUAGE"
        if scope not in CLAIM_SCOPES:
            raise Reject(400, f"claimScope must be one of {', '.join(CLAIM_SCOPES)}")
        batches = self._batches(project, source, body.get("batchInfos") or [])
        metadata = metadata_entries(body.get("metadata") or [])
        attributes = {}
        for item in body.get("customAttributes") or []:
            if not isinstance(item, dict):
                raise Reject(400, "customAttributes must be an array of {name, value}")
            self.records.checked_attribute(project["projectId"], item.get("name"), item.get("value"))
            attributes[item["name"]] = item["value"]
        missing = [a["name"] for a in project["attributes"] if a["mandatory"] and a["name"] not in attributes]
        if missing:
            raise Reject(400, f"mandatory custom attributes missing: {', '.join(missing)}")
        sid = self.state.next_id("submission")
        self.state.subs[sid] = Submission(
            sid, project["projectId"], name.strip(), "CREATING", source, batches, due, now, claim_scope=scope,
            pa_client_id=pa_client, owners=[API_USER], instructions=str(body.get("instructions") or ""),
            background=str(body.get("background") or ""), attributes=attributes, metadata=metadata,
            docs=[], targets=[])
        return {"submissionId": sid}

    def _batches(self, project: dict[str, Any], source: str, infos: Any) -> list[Batch]:
        if not isinstance(infos, list):
            raise Reject(400, "batchInfos must be an array")
        targets = {t for s, t in project["directions"] if s == source}
        batches: list[Batch] = []
        for n, info in enumerate(infos):
            if not isinstance(info, dict):
                raise Reject(400, "each batchInfos item must be an object")
            # without a workflow the batch takes the project's default one (its first), as the
            # integrations that send none rely on (docs/public-specs.md)
            workflow = number(info.get("workflowId", project["workflowIds"][0]))
            if workflow is None:
                workflow = project["workflowIds"][0]
            if isinstance(workflow, bool) or workflow not in project["workflowIds"]:
                raise Reject(400, f"workflowId {workflow!r} is not a workflow of project {project['projectId']}")
            fmt = info.get("targetFormat") or "TXLF"
            if fmt not in TARGET_FORMATS:
                raise Reject(400, f"targetFormat must be one of {', '.join(TARGET_FORMATS)}, not {fmt!r}")
            name = info.get("name") or f"Batch{n + 1}"
            if any(b.name == name for b in batches):
                raise Reject(400, f"two batches are named {name!r}")
            langs: list[Any] = [i.get("targetLanguage") for i in info.get("targetLanguageInfos") or []
                                if isinstance(i, dict)]
            if not langs:
                raise Reject(400, f"batch {name} needs targetLanguageInfos [{{targetLanguage}}]")
            wrong = [str(lang) for lang in langs if lang not in targets]
            if wrong:
                raise Reject(400, f"no language direction {source} → {', '.join(wrong)} in project "
                                  f"{project['projectId']}")
            batches.append(Batch(self.state.next_id("batch"), name, fmt, workflow, tuple(dict.fromkeys(langs))))
        return batches

    # --- analyze, status, save, start --------------------------------------------------------------

    @staticmethod
    def quote_pending(s: Submission) -> bool:
        """On hold for its quote, not merely saved without a start."""
        return any(q["status"] == "PROVIDED" for q in s.quotes)

    def do_analyze_submission(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        if s.status in FINISHED or (s.status == "WAITING" and self.quote_pending(s)):
            raise Reject(400, f"submission {s.id} is {s.status} and cannot be analyzed")
        if not any(not self.state.docs.cancelled[d] for d in s.docs):
            raise Reject(400, f"submission {s.id} has no documents to analyze; upload source files first")
        if s.analysis_until is None:
            s.analysis_until = self.state.now_ms() + ANALYSIS
            if s.status in ("CREATING", "READY", "WAITING"):
                s.status = "PREFLIGHT"
        return {"submissionId": s.id, "status": "PROCESSING",
                "message": "analysis running; GET .../status answers PROCESSED when it is done"}

    def do_get_submission_status(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        if s.analysis_until is not None:
            status, message = "PROCESSING", "analysis in progress"
        elif s.analysis_done is not None:
            status, message = "PROCESSED", "analysis finished"
        else:
            status, message = "PROCESSED", "uploads processed; the submission has not been analyzed"
        return {"submissionId": s.id, "status": status, "message": message, "submissionStatus": s.status}

    def finish_analysis(self, s: Submission, at: int) -> None:
        """Every WAITING target becomes READY (in the first phase when the submission runs)."""
        running = s.status == "IN_PROCESS"
        for n in s.targets:
            if self.state.targets.status[n] == WAITING:
                self.state.targets.set(n, READY, 0 if running else NO_PHASE)
        s.analysis_until, s.analysis_done = None, at
        if s.status in ("PREFLIGHT", "CREATING"):
            s.status = "READY"
        self.files.fire(s, "submission.analyzed")

    def start(self, s: Submission, analyze: bool) -> tuple[bool, str]:
        """Start the submission if it can start; (started, why)."""
        if s.status == "IN_PROCESS":
            return False, f"submission {s.id} is already started"
        if s.status in FINISHED:
            return False, f"submission {s.id} is {s.status}"
        if s.status == "WAITING" and self.quote_pending(s):
            return False, f"submission {s.id} is on hold until its quote is approved"
        if s.status == "PREFLIGHT":
            return False, f"submission {s.id} is being analyzed; start it when GET status answers PROCESSED"
        if not any(not self.state.docs.cancelled[d] for d in s.docs):
            return False, f"submission {s.id} has no documents; upload source files first"
        if s.status in ("CREATING", "WAITING"):
            if not analyze:
                return False, f"submission {s.id} has not been analyzed; call analyze first"
            self.finish_analysis(s, self.state.now_ms())
        for n in s.targets:
            if self.state.targets.status[n] == READY and self.state.targets.phase[n] == NO_PHASE:
                self.state.targets.set(n, READY, 0)
        s.status, s.started = "IN_PROCESS", self.state.now_ms()
        self.state.active.add(s.id)
        self.files.fire(s, "submission.started")
        return True, f"submission {s.id} started"

    def do_save_submission(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        auto = body_object(request).get("autoStart", False)
        if not isinstance(auto, bool):
            raise Reject(400, "autoStart must be true or false")
        if not auto:
            # saved without a start before any analysis: on hold, its targets WAITING (the seed's
            # WAITING); the production connector starts only a WAITING or PREFLIGHT submission
            # (docs/public-specs.md, G8)
            if s.status == "CREATING":
                s.status = "WAITING"
                return saved([], f"submission {s.id} saved and on hold")
            return saved([], f"submission {s.id} saved")
        started, message = self.start(s, analyze=True)
        return saved([s.id] if started else [], message)

    def do_start_submission(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        started, message = self.start(s, analyze=False)
        return {"startedSubmissionIds": [s.id] if started else [], "messages": [message]}

    # --- word count ----------------------------------------------------------------------------

    def do_get_word_count(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        fields = ("targetLanguage", "documentId", "targetId", "batchName")
        given = [f for f in fields if body.get(f) not in (None, "")]
        if len(given) > 1:
            raise Reject(400, f"give at most one of {', '.join(fields)}, not {', '.join(given)}")
        targets, docs = self.state.targets, self.state.docs
        chosen = [n for n in s.targets if targets.status[n] != CANCELLED]
        scope: dict[str, Any] = {}
        if given:
            field, value = given[0], body[given[0]]
            if field == "targetLanguage":
                if value not in s.languages():
                    raise Reject(400, f"{value!r} is not a target language of submission {s.id}")
                chosen = [n for n in chosen if targets.lang[n] == LANG_INDEX[value]]
                scope = {"targetLanguage": value}
            elif field == "documentId":
                d = docs.position(value)
                if d is None or docs.sub[d] != s.id:
                    raise Reject(400, f"document {value} is not in submission {s.id}")
                chosen = [n for n in chosen if targets.doc[n] == d]
                scope = self._document_scope(s, d)
            elif field == "targetId":
                chosen = self.state.own_targets(s, int_list([value], "targetId"))
                n = chosen[0]
                scope = {"targetId": targets.BASE + n, **self._document_scope(s, targets.doc[n]),
                         "targetLanguage": LANGUAGES[targets.lang[n]]}
            else:
                batch = s.batch(str(value))
                if batch is None:
                    raise Reject(400, f"{value!r} is not a batch of submission {s.id}")
                chosen = [n for n in chosen if docs.batch[targets.doc[n]] == s.batches.index(batch)]
                scope = {"batchName": batch.name}
        words = [docs.words[targets.doc[n]] for n in chosen]
        total = sum(words)
        exact, fuzzy, repeated = total * 22 // 100, total * 31 // 100, total * 8 // 100
        return {"submissionId": s.id, "submissionName": s.name, **scope, "totalWordCount": total,
                "targetCount": len(chosen),
                "breakdown": {"repetitions": repeated, "exactMatch": exact, "fuzzyMatch": fuzzy,
                              "noMatch": total - exact - fuzzy - repeated}}

    def _document_scope(self, s: Submission, d: int) -> dict[str, Any]:
        docs = self.state.docs
        return {"documentId": docs.BASE + d, "documentName": docs.name[d], "batchName": s.batches[docs.batch[d]].name}

    # --- cancel --------------------------------------------------------------------------------

    def do_cancel_submission(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        target_ids = int_list(body.get("targetIds"), "targetIds")
        doc_ids = int_list(body.get("documentIds"), "documentIds")
        if s.status in ("CANCELLED", "DELIVERED"):
            raise Reject(400, f"submission {s.id} is {s.status} and cannot be cancelled")
        targets, docs = self.state.targets, self.state.docs
        if not target_ids and not doc_ids:
            chosen_docs, chosen = list(s.docs), list(s.targets)
        else:
            if s.status == "WAITING":
                raise Reject(400, f"submission {s.id} is on hold: documents and targets cannot be cancelled")
            found = {i: docs.position(i) for i in doc_ids}
            strangers = [str(i) for i, d in found.items() if d is None or docs.sub[d] != s.id]
            if strangers:
                raise Reject(400, f"documents {', '.join(strangers)} do not belong to submission {s.id}")
            chosen_docs = [d for d in found.values() if d is not None]
            chosen = self.state.own_targets(s, target_ids)
            gone = set(chosen_docs)
            chosen += [n for n in s.targets if targets.doc[n] in gone]
        cancelled, kept = [], []
        for n in dict.fromkeys(chosen):
            if targets.status[n] in (DELIVERED, CANCELLED):
                kept.append(n)
            else:
                targets.set(n, CANCELLED, NO_PHASE)
                cancelled.append(targets.BASE + n)
        for d in chosen_docs:
            docs.cancelled[d] = 1
        messages = [f"{len(cancelled)} targets cancelled"]
        if kept:
            messages.append(f"{len(kept)} targets were already delivered or cancelled")
        if cancelled:
            self.files.fire(s, "target.cancelled", cancelled)
        if not target_ids and not doc_ids:
            self.close(s, "CANCELLED")
        else:
            self.settle(s)
        return {"submissionId": s.id, "status": s.status, "cancelledTargetIds": cancelled,
                "cancelledDocumentIds": [docs.BASE + d for d in chosen_docs], "messages": messages}

    # --- state of a submission from its targets ----------------------------------------------------

    def close(self, s: Submission, status: str) -> None:
        s.status = status
        self.state.active.discard(s.id)
        if status == "CANCELLED":
            s.canceled = self.state.now_ms()
            self.files.fire(s, "submission.cancelled")
        elif s.completed is None:
            s.completed = self.state.now_ms()
            self.files.fire(s, "submission.completed")

    def settle(self, s: Submission) -> None:
        """PROCESSED when every live target is done, DELIVERED when every one is delivered,
        CANCELLED when none is live."""
        if s.status in ("CANCELLED", "DELIVERED") or not s.targets:
            return
        codes = {self.state.targets.status[n] for n in s.targets}
        live = codes - {CANCELLED}
        if not live:
            self.close(s, "CANCELLED")
        elif live == {DELIVERED}:
            self.close(s, "DELIVERED")
        elif live <= {PROCESSED, DELIVERED} and s.status == "IN_PROCESS":
            self.close(s, "PROCESSED")

    # --- the clock -----------------------------------------------------------------------------

    def progress(self, now: int) -> None:
        for s in [s for s in self.state.subs.values() if s.analysis_until is not None and s.analysis_until <= now]:
            self.finish_analysis(s, s.analysis_until or now)
        hour = now // HOUR
        if hour <= self.state.hour:
            return
        targets, docs, base = self.state.targets, self.state.docs, self.state.targets.BASE
        status, phase = targets.status, targets.phase
        for sid in sorted(self.state.active):
            s = self.state.subs[sid]
            completed = []
            for n in s.targets:
                if status[n] not in (READY, IN_PROCESS) or phase[n] == NO_PHASE:
                    continue
                steps = steps_between(base + n, self.state.hour, hour)
                if not steps:
                    continue
                phases = len(self.state.workflows[s.batches[docs.batch[targets.doc[n]]].workflow_id].phases)
                step = phase[n] * 2 + (status[n] == IN_PROCESS) + steps
                if step >= 2 * phases:
                    targets.set(n, PROCESSED, NO_PHASE, now)
                    completed.append(base + n)
                else:
                    targets.set(n, IN_PROCESS if step % 2 else READY, step // 2)
            if completed:
                self.files.fire(s, "target.completed", completed)
            self.settle(s)
        self.state.hour = hour
