"""Targets and workflow phases of the translation emulator: the target lists and filters, claim and
unclaim, phase info, phase completion, delivery, target metadata and the editor info.

Phase names are case-sensitive and may not hold spaces (400). A claim moves READY targets of the
given languages in the phase to IN_PROCESS (claim scope LANGUAGE only); unclaim moves them back.
Completing a phase moves each target along the named transition (the next phase, READY; back to
the previous one; or COMPLETE, which makes it PROCESSED); a target not in that phase lands in
`failedTargets`, a transition the phase does not have is a 400. Ids that are not the submission's
are a 400. `/targets` across submissions filters by `submissionIds` and `targetStatus` (comma
lists) over the compact columns, caching the filtered positions until the next change.
"""
from __future__ import annotations

__all__ = ["EDITORS", "Work", "check_phase_name", "status_codes"]

from typing import Any

from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.translation.flow import Flow
from toolkit.sandbox.translation.model import (
    DELIVERED,
    IN_PROCESS,
    LANG_INDEX,
    LANGUAGES,
    NO_PHASE,
    PROCESSED,
    READY,
    STATUS_FILTER,
    Submission,
    Workflow,
)
from toolkit.sandbox.translation.records import Records, body_object, int_list, metadata_entries
from toolkit.sandbox.translation.state import State

EDITORS = ("TranslationEditor", "ReviewEditor", "PostEditEditor")


def check_phase_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise Reject(400, "phaseName is required")
    if " " in name:
        raise Reject(400, f"phase names with spaces are not supported: {name!r}")
    return name


def status_codes(values: list[str], name: str) -> set[int]:
    unknown = [v for v in values if v not in STATUS_FILTER]
    if unknown:
        raise Reject(400, f"unknown {name} {', '.join(unknown)}; known: {', '.join(STATUS_FILTER)}")
    return set().union(*(STATUS_FILTER[v] for v in values)) if values else set()


class Work:
    """Target lists, claims, phases and delivery, over the server's state; targets are rendered by
    `records`, and a submission settles (PROCESSED, DELIVERED, CANCELLED) through `flow`."""

    def __init__(self, state: State, records: Records, flow: Flow) -> None:
        self.state, self.records, self.flow = state, records, flow

    def workflow_of(self, n: int) -> Workflow:
        docs = self.state.docs
        d = self.state.targets.doc[n]
        return self.state.workflows[self.state.subs[docs.sub[d]].batches[docs.batch[d]].workflow_id]

    def phase_name(self, n: int) -> str | None:
        phase = self.state.targets.phase[n]
        return None if phase == NO_PHASE else self.workflow_of(n).phases[phase]

    def known_phase(self, s: Submission, name: str) -> None:
        phases = [p for b in s.batches for p in self.state.workflows[b.workflow_id].phases]
        if name not in phases:
            near = [p for p in phases if p.lower() == name.lower()]
            hint = f" (names are case-sensitive: {near[0]})" if near else f"; phases: {', '.join(dict.fromkeys(phases))}"
            raise Reject(400, f"{name} is not a phase of submission {s.id}{hint}")

    # --- target lists ----------------------------------------------------------------------------

    def do_list_submission_targets(self, request: Request) -> Response:
        s = self.state.sub(request.params["submission_id"])
        positions: Any = s.targets
        # an older server knows neither filter and ignores it, as it ignores any unknown parameter
        if self.state.at_least("5.15") and request.arg("status"):
            positions = self.state.targets.having(positions, status_codes([request.arg("status")], "status"))
        if self.state.at_least("5.20") and request.arg("targetLanguage"):
            code = LANG_INDEX.get(request.arg("targetLanguage"), -1)
            positions = [n for n in positions if self.state.targets.lang[n] == code]
        return self.state.page(request, self.records.target_rows(positions))

    def do_list_document_targets(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        d = self.state.doc_of(s, request.params["document_id"])
        return [self.records.target_wire(n) for n in s.targets if self.state.targets.doc[n] == d]

    def do_list_targets(self, request: Request) -> Response:
        ids = tuple(sorted(set(int_list(request.args("submissionIds", split=True), "submissionIds"))))
        codes = status_codes(request.args("targetStatus", split=True), "targetStatus")
        key = (ids, frozenset(codes), self.state.targets.version)
        if self.state.view[0] != key:
            positions: Any = range(len(self.state.targets))
            if ids:
                positions = sorted(n for i in ids if i in self.state.subs for n in self.state.subs[i].targets)
            if codes:
                positions = self.state.targets.having(positions, codes)
            self.state.view = (key, positions)
        return self.state.page(request, self.records.target_rows(self.state.view[1]))

    def do_add_target_metadata(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        ids = int_list(body.get("targetIds"), "targetIds")
        if not ids:
            raise Reject(400, "targetIds is required")
        positions = self.state.own_targets(s, ids)
        entries = metadata_entries(body.get("metadata") or [])
        entries.update({k: str(v) for k, v in body.items() if k not in ("targetIds", "metadata")})
        if not entries:
            raise Reject(400, "give metadata [{key, value}] to add")
        for n in positions:
            self.state.targets.meta.setdefault(n, {}).update(entries)
        return {"submissionId": s.id, "targetIds": ids,
                "metadata": [{"key": k, "value": v} for k, v in entries.items()]}

    def do_set_targets_delivered(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        ids = int_list(body_object(request).get("targetIds"), "targetIds")
        if not ids:
            raise Reject(400, "targetIds is required")
        delivered, failed, messages = [], [], []
        for n in self.state.own_targets(s, ids):
            status = self.state.targets.status[n]
            if status in (PROCESSED, DELIVERED):
                if status == PROCESSED:
                    self.state.targets.set(n, DELIVERED)
                delivered.append(self.state.targets.BASE + n)
            else:
                failed.append(self.state.targets.BASE + n)
                messages.append(f"target {self.state.targets.BASE + n} has no deliverable yet "
                                f"({self.records.target_wire(n)['status']})")
        self.flow.settle(s)
        return {"deliveredTargetIds": delivered, "failedTargetIds": failed, "messages": messages}

    # --- phases ----------------------------------------------------------------------------------

    def _phase_info(self, n: int) -> dict[str, Any]:
        record = self.records.target_wire(n)
        workflow = self.workflow_of(n)
        phase = self.state.targets.phase[n]
        return {"targetId": record["targetId"], "submissionId": record["submissionId"],
                "documentId": record["documentId"], "targetLanguage": record["targetLanguage"],
                "currentPhase": record["currentPhase"], "status": record["status"],
                "phaseDueDate": record["phaseDueDate"], "workflowName": workflow.name,
                "transitions": [] if phase == NO_PHASE else workflow.transitions(phase),
                # a connector finds the phase of a file it uploads by this name (G8)
                "targetFileName": self.records.target_file_name(n)}

    def do_list_phases(self, request: Request) -> Any:
        return [self._phase_info(n) for n in self.state.sub(request.params["submission_id"]).targets]

    def do_get_target_phase(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        n = self.state.target_of(s, request.params["target_id"])
        return {**self._phase_info(n), "phases": list(self.workflow_of(n).phases)}

    def do_get_target_editor_info(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        n = self.state.target_of(s, request.params["target_id"])
        editor = body_object(request).get("editor")
        if editor not in EDITORS:
            raise Reject(400, f"editor must be a valid editor name ({', '.join(EDITORS)}), not {editor!r}")
        phase = self.phase_name(n)
        if phase is None:
            raise Reject(400, f"target {self.state.targets.BASE + n} is not in a workflow phase")
        lang = LANGUAGES[self.state.targets.lang[n]]
        return {"targetId": self.state.targets.BASE + n, "phaseName": phase, "editor": editor,
                "mtProfile": {"name": f"{s.source}_{lang}_General", "engine": "NeuralMT",
                              "enabled": phase in ("TRANSLATION", "MT_POST_EDIT")}}

    def do_complete_phase(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        name = check_phase_name(request.params["phase_name"])
        self.known_phase(s, name)
        body = body_object(request)
        ids = int_list(body.get("targetIds"), "targetIds")
        transition = body.get("transition")
        if not ids or not isinstance(transition, str) or not transition:
            raise Reject(400, "targetIds and transition are required")
        ways = {w for b in s.batches for wf in [self.state.workflows[b.workflow_id]] if name in wf.phases
                for t in wf.transitions(wf.phases.index(name)) for w in (t["name"], t["targetPhase"]) if w}
        if transition not in ways:
            raise Reject(400, f"{transition!r} is not a transition of phase {name}; "
                              f"transitions: {', '.join(sorted(ways))}")
        positions = self.state.own_targets(s, ids)
        targets, done, failed, messages = self.state.targets, [], [], []
        for n in positions:
            workflow = self.workflow_of(n)
            if self.phase_name(n) != name or targets.status[n] not in (READY, IN_PROCESS):
                failed.append(targets.BASE + n)
                messages.append(f"target {targets.BASE + n} is not in phase {name} "
                                f"({self.phase_name(n) or self.records.target_wire(n)['status']})")
                continue
            # batches may run different workflows: the transition must be one of this target's
            own = workflow.transitions(targets.phase[n])
            way = next((t for t in own if transition in (t["name"], t["targetPhase"])), None)
            if way is None:
                failed.append(targets.BASE + n)
                messages.append(f"target {targets.BASE + n}: {transition} is not a transition of {name} "
                                f"in workflow {workflow.name}")
                continue
            if way["targetPhase"] is None:
                targets.set(n, PROCESSED, NO_PHASE, self.state.now_ms())
            else:
                targets.set(n, READY, workflow.phases.index(way["targetPhase"]))
            done.append(targets.BASE + n)
        self.flow.settle(s)
        return {"completedTargets": done, "failedTargets": failed, "messages": messages}

    # --- claims ----------------------------------------------------------------------------------

    def _claims(self, request: Request) -> list[dict[str, Any]]:
        """The claims of a body: bb-io/GlobalLink sends an array of {submissionId, phaseName,
        languages}; a single object (the seed's table lists the three fields) is one claim."""
        body = request.json()
        if isinstance(body, dict):
            return [body]
        if not isinstance(body, list) or not body or not all(isinstance(c, dict) for c in body):
            raise Reject(400, "the body must be a claim object or a non-empty array of them")
        return body

    def _claim_body(self, body: dict[str, Any]) -> tuple[Submission, str, list[str]]:
        s = self.state.sub(body.get("submissionId"))
        name = check_phase_name(body.get("phaseName"))
        self.known_phase(s, name)
        languages = body.get("languages")
        if isinstance(languages, str):
            languages = [lang.strip() for lang in languages.split(",") if lang.strip()]
        if not languages or not isinstance(languages, list):
            raise Reject(400, "languages is required")
        wrong = [str(lang) for lang in languages if lang not in s.languages()]
        if wrong:
            raise Reject(400, f"{', '.join(wrong)} are not target languages of submission {s.id}")
        if s.claim_scope != "LANGUAGE":
            raise Reject(400, f"submission {s.id} is claimed by {s.claim_scope}, not by language")
        return s, name, languages

    def _move(self, request: Request, before: int, after: int, key: str) -> Any:
        body = request.json()
        claims = [self._claim_body(c) for c in self._claims(request)]      # all checked before any moves
        answers = []
        for s, name, languages in claims:
            codes = {LANG_INDEX[lang] for lang in languages}
            moved = []
            for n in s.targets:
                if self.state.targets.status[n] == before and self.state.targets.lang[n] in codes \
                        and self.phase_name(n) == name:
                    self.state.targets.set(n, after)
                    moved.append(self.state.targets.BASE + n)
            verb = "claimed" if after == IN_PROCESS else "released"
            answers.append({"submissionId": s.id, "phaseName": name, "languages": languages, key: moved,
                            "messages": [f"{len(moved)} targets {verb}" if moved else f"nothing to be {verb} in {name}"]})
        return answers if isinstance(body, list) else answers[0]

    def do_claim_submission(self, request: Request) -> Any:
        return self._move(request, READY, IN_PROCESS, "claimedTargetIds")

    def do_unclaim_submission(self, request: Request) -> Any:
        return self._move(request, IN_PROCESS, READY, "unclaimedTargetIds")

    def _open_work(self, request: Request, code: int) -> list[dict[str, Any]]:
        """One row per submission with targets in `code` (READY: claimable, IN_PROCESS: claimed)."""
        wanted = request.arg("phaseName")
        if wanted is not None:
            check_phase_name(wanted)
        key = ("open", code, wanted, self.state.targets.version, len(self.state.subs))
        if self.state.view[0] == key:           # the next page of the same listing: nothing moved since
            return self.state.view[1]
        rows = []
        for sid in sorted(self.state.active):
            s = self.state.subs[sid]
            found = [(self.phase_name(n), n) for n in s.targets if self.state.targets.status[n] == code]
            found = [(p, n) for p, n in found if p is not None and (wanted is None or p == wanted)]
            if not found:
                continue
            phases = list(dict.fromkeys(p for p, _ in found))
            langs = list(dict.fromkeys(LANGUAGES[self.state.targets.lang[n]] for _, n in found))
            # submissionName, languages and claimLevel: what bb-io/GlobalLink reads of a claimable row
            pairs = list(dict.fromkeys((p, LANGUAGES[self.state.targets.lang[n]]) for p, n in found))
            rows.append({"submissionId": s.id, "submissionName": s.name, "claimLevel": s.claim_scope,
                         "languages": [{"phaseName": p, "sourceLanguageCode": s.source, "targetLanguageCode": lang}
                                       for p, lang in pairs],
                         "projectId": s.project_id, "name": s.name,
                         "sourceLanguage": s.source, "targetLanguages": langs, "dueDate": s.due,
                         "claimScope": s.claim_scope, "phaseName": wanted or phases[0], "phaseNames": phases,
                         "batchNames": list(dict.fromkeys(s.batches[self.state.docs.batch[self.state.targets.doc[n]]].name
                                                          for _, n in found)),
                         "targetCount": len(found)})
        self.state.view = (key, rows)
        return rows

    def _open_targets(self, request: Request, code: int) -> list[dict[str, Any]]:
        s = self.state.sub(request.params["submission_id"])
        wanted = request.arg("phaseName")
        if wanted is not None:
            check_phase_name(wanted)
        out = []
        for n in s.targets:
            phase = self.phase_name(n)
            if self.state.targets.status[n] == code and phase is not None and wanted in (None, phase):
                out.append({**self.records.target_wire(n), "phaseName": phase})
        return out

    def do_list_claimable_submissions(self, request: Request) -> Response:
        return self.state.page(request, self._open_work(request, READY))

    def do_list_claimed_submissions(self, request: Request) -> Response:
        return self.state.page(request, self._open_work(request, IN_PROCESS))

    def do_list_claimable_targets(self, request: Request) -> Any:
        return self._open_targets(request, READY)

    def do_list_claimed_targets(self, request: Request) -> Any:
        return self._open_targets(request, IN_PROCESS)
