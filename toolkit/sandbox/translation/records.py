"""The translation emulator's records on the wire, and the submission reads: submissions, owners,
backgrounds, instructions, documents, and the custom attributes and metadata of a submission.

Wire records are camelCase with integer ids and epoch-millisecond timestamps; a target is built from
its columns only when a page needs it. A custom attribute must be defined in the submission's
project and its value must fit the definition (a COMBO takes one of its values, a TEXT any text);
adding one that is already set, or a metadata key that exists, is a 400 (edit it with PUT).
"""
from __future__ import annotations

__all__ = ["ATTRIBUTES", "HOOK_EVENTS", "HOOK_KEYS", "METADATA", "Pairs", "Records", "body_object",
           "check_hook", "done", "int_list", "metadata_entries", "number"]

import re
from dataclasses import dataclass
from typing import Any

from toolkit.sandbox.exchange import Reject, Request, Response, url_parts
from toolkit.sandbox.translation.model import (
    LANGUAGES,
    NO_FORMAT,
    NO_PHASE,
    SUBMISSION_STATUSES,
    TARGET_STATUS,
    UNMODELLED_STATUSES,
    Rows,
    Submission,
)
from toolkit.sandbox.translation.state import State

HOOK_KEYS = ("_webhookURL", "_webhookScope")
# services.md names the submission events; the vendor's own client registers the target ones too
# (`WebHookScope`, docs/public-specs.md, G9)
HOOK_EVENTS = ("submission.completed", "submission.cancelled", "submission.analyzed", "submission.started",
               "target.completed", "target.cancelled", "target.reopened")


def done() -> Response:
    """What a delete answers: 200 and no body, as the catalog says (a Spring controller's void method)."""
    return Response(200)


def body_object(request: Request) -> dict[str, Any]:
    """The JSON body as an object; an empty body is an empty object."""
    body = request.json()
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise Reject(400, "the body must be a JSON object")
    return body


def number(value: Any) -> Any:
    """An integer field as the service's JSON reader takes it: a number, or a string of digits
    (Jackson coerces `"10"` to a long by default, and a public plugin sends its project id so);
    anything else comes back as it was, for the caller's own 400."""
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value):
        return int(value)
    return value


def int_list(value: Any, name: str) -> list[int]:
    """A list of integer ids from a JSON array or a comma-separated string; anything else is a 400."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise Reject(400, f"{name} must be an array of integers")
    out = []
    for item in items:
        if isinstance(item, bool):
            raise Reject(400, f"{name} must be an array of integers, not {item!r}")
        try:
            out.append(int(str(item).strip()))
        except ValueError:
            raise Reject(400, f"{name} must be an array of integers, not {item!r}") from None
    return out


def check_hook(key: str, value: Any) -> None:
    """Webhook metadata: an http(s) URL, or a comma list of known events."""
    if key == "_webhookURL":
        parts = url_parts(str(value), "_webhookURL")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise Reject(400, f"_webhookURL must be an http or https URL, not {value!r}")
    elif key == "_webhookScope":
        unknown = [e for e in str(value).split(",") if e.strip() not in HOOK_EVENTS]
        if unknown:
            raise Reject(400, f"unknown webhook events {', '.join(unknown)}; known: {', '.join(HOOK_EVENTS)}")


def metadata_entries(items: Any) -> dict[str, str]:
    """Metadata given as an array of {key, value} (or an object), checked: webhook keys need valid values."""
    if not isinstance(items, list | dict):
        raise Reject(400, "metadata must be an array of {key, value}")
    pairs = items.items() if isinstance(items, dict) else [
        (i.get("key"), i.get("value")) if isinstance(i, dict) else (None, None) for i in items]
    out = {}
    for key, value in pairs:
        if not isinstance(key, str) or value is None:
            raise Reject(400, "metadata must be an array of {key, value}")
        check_hook(key, value)
        out[key] = str(value)
    return out



@dataclass(frozen=True)
class Pairs:
    """A submission's name → value pairs as the wire shows them (custom attributes, metadata): read,
    listed and removed alike; adding and changing them check what each allows."""
    field: str      # the Submission attribute that holds them
    param: str      # the path param naming one
    name: str       # the wire key of a pair's name
    what: str       # how messages call one

    def listed(self, s: Submission) -> list[dict[str, Any]]:
        return [self.wire(k, v) for k, v in getattr(s, self.field).items()]

    def one(self, state: State, request: Request) -> tuple[Submission, str, Any]:
        """(submission, name, value) of the pair the path names; 404 when the submission lacks it."""
        s = state.sub(request.params["submission_id"])
        name, held = request.params[self.param], getattr(s, self.field)
        if name not in held:
            raise Reject(404, f"submission {s.id} has no {self.what} {name!r}")
        return s, name, held[name]

    def wire(self, name: str, value: Any) -> dict[str, Any]:
        """One pair as the wire shows it."""
        return {self.name: name, "value": value}

    def delete(self, state: State, request: Request) -> Response:
        s, name, _ = self.one(state, request)
        del getattr(s, self.field)[name]
        return done()

    def clear(self, state: State, request: Request) -> Response:
        getattr(state.sub(request.params["submission_id"]), self.field).clear()
        return done()


ATTRIBUTES = Pairs("attributes", "attribute_name", "name", "custom attribute")
METADATA = Pairs("metadata", "metadata_name", "key", "metadata")

class Records:
    """Wire records and the submission reads, over the server's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    # --- wire records ----------------------------------------------------------------------------

    def sub_wire(self, s: Submission) -> dict[str, Any]:
        docs = self.state.docs
        words = [0] * len(s.batches)
        for d in s.docs:
            if not docs.cancelled[d]:
                words[docs.batch[d]] += docs.words[d]
        return {
            "submissionId": s.id, "projectId": s.project_id, "projectName": self.state.projects[s.project_id]["name"],
            "paClientId": s.pa_client_id, "name": s.name, "status": s.status, "sourceLanguage": s.source,
            "targetLanguages": s.languages(), "dueDate": s.due, "dateCreated": s.created,
            "dateStarted": s.started, "dateCompleted": s.completed, "dateCanceled": s.canceled,
            "claimScope": s.claim_scope, "owners": self.owners_wire(s),
            "batchInfos": [{"batchId": b.id, "name": b.name, "wordCount": words[n], "targetFormat": b.target_format,
                            "workflowId": b.workflow_id, "workflowName": self.state.workflows[b.workflow_id].name,
                            "targetLanguageInfos": [{"targetLanguage": lang} for lang in b.languages]}
                           for n, b in enumerate(s.batches)],
            "customAttributes": [{"name": k, "value": v} for k, v in s.attributes.items()],
            "instructions": s.instructions, "background": s.background,
        }

    def target_wire(self, n: int) -> dict[str, Any]:
        targets, docs = self.state.targets, self.state.docs
        d = targets.doc[n]
        s = self.state.subs[docs.sub[d]]
        batch = s.batches[docs.batch[d]]
        workflow = self.state.workflows[batch.workflow_id]
        lang = LANGUAGES[targets.lang[n]]
        phase = targets.phase[n]
        langs = s.languages()
        meta = targets.meta.get(n)
        return {
            "targetId": targets.BASE + n, "submissionId": s.id, "documentId": docs.BASE + d,
            "jobId": s.id * 10 + (langs.index(lang) if lang in langs else 9), "documentName": docs.name[d],
            "batchName": batch.name, "sourceLanguage": s.source, "targetLanguage": lang,
            "status": TARGET_STATUS[targets.status[n]],
            "currentPhase": None if phase == NO_PHASE else workflow.phases[phase],
            "phaseDueDate": None if phase == NO_PHASE else self.phase_due(s, phase, len(workflow.phases)),
            "workflowName": workflow.name, "dueDate": s.due, "dateCompleted": targets.done[n] or None,
            "fileFormatName": docs.format_name(d), **self.format_id(d), "wordCount": docs.words[d],
            "metadata": [{"key": k, "value": v} for k, v in meta.items()] if meta else [],
        }

    def format_id(self, d: int) -> dict[str, int]:
        """`fileFormatId` of a document's target (the id /fileformats gives its format), which two public
        clients read; none for a NON_PARSABLE document, which has no format (the vendor's client reads
        it into a `long`, which a null would break)."""
        code = self.state.docs.fmt[d]
        return {} if code == NO_FORMAT else {"fileFormatId": code + 1}

    def target_file_name(self, n: int) -> str:
        """The name the service gives a target's file, which a translated upload must keep: the source's
        stem, the language and a code of the target between `#TR_` and `#`, as in the one public
        example, a production connector's test file `3 random sentences-Non-Parsable-es-ES#TR_FQQS#.txt`
        (docs/public-specs.md, G8); a parsable batch's file is its target format (`.txlf`, `.txml`)."""
        targets, docs = self.state.targets, self.state.docs
        d = targets.doc[n]
        fmt = self.state.subs[docs.sub[d]].batches[docs.batch[d]].target_format
        stem, dot, ext = docs.name[d].rpartition("/")[2].rpartition(".")
        stem, ext = (stem, dot + ext) if dot and stem else (docs.name[d].rpartition("/")[2], "")
        code, number = "", targets.BASE + n
        for _ in range(4):
            number, letter = divmod(number, 26)
            code = chr(ord("A") + letter) + code
        lang = LANGUAGES[targets.lang[n]]
        if fmt == "NON_PARSABLE":
            return f"{stem}-Non-Parsable-{lang}#TR_{code}#{ext}"
        return f"{stem}{ext}-{lang}#TR_{code}#.{fmt.lower()}"

    def phase_due(self, s: Submission, phase: int, phases: int) -> int:
        """Phases share the time between the start and the due date evenly."""
        begin = s.started or s.created
        return begin + (s.due - begin) * (phase + 1) // phases

    def doc_wire(self, d: int) -> dict[str, Any]:
        docs = self.state.docs
        s = self.state.subs[docs.sub[d]]
        batch = s.batches[docs.batch[d]]
        return {"documentId": docs.BASE + d, "submissionId": s.id, "name": docs.name[d], "batchName": batch.name,
                "fileFormatName": docs.format_name(d), "wordCount": docs.words[d], "sourceLanguage": s.source,
                "targetLanguages": list(batch.languages),
                "status": "CANCELLED" if docs.cancelled[d] else "ACTIVE", "dateCreated": docs.created[d]}

    def target_rows(self, positions: Any) -> Rows:
        return Rows(positions, self.target_wire)

    # --- submissions -----------------------------------------------------------------------------

    def do_list_submissions(self, request: Request) -> Response:
        subs: Any = self.state.subs.values()
        ids = int_list(request.args("submissionIds", split=True), "submissionIds")
        if ids:
            subs = [self.state.subs[i] for i in sorted(set(ids)) if i in self.state.subs]
        statuses = request.args("statuses", split=True)
        known = SUBMISSION_STATUSES + UNMODELLED_STATUSES
        unknown = [s for s in statuses if s not in known]
        if unknown:
            raise Reject(400, f"unknown statuses {', '.join(unknown)}; known: {', '.join(known)}")
        if statuses:
            subs = [s for s in subs if s.status in statuses]
        name = (request.arg("name") or "").lower()
        if name:
            subs = [s for s in subs if name in s.name.lower()]
        low, high = request.int_arg("dueDateFrom"), request.int_arg("dueDateTo")
        if low is not None:
            subs = [s for s in subs if s.due >= low]
        if high is not None:
            subs = [s for s in subs if s.due <= high]
        return self.state.page(request, Rows(list(subs), self.sub_wire))

    def do_get_submission(self, request: Request) -> Any:
        return self.sub_wire(self.state.sub(request.params["submission_id"]))

    def owners_wire(self, s: Submission) -> list[dict[str, Any]]:
        """The owners as user objects: bb-io/GlobalLink reads a submission's `owners` as a list of
        {userId, userName, firstName, lastName, email, enabled, ...}, not of names."""
        users = {u["userName"]: u for u in self.state.users[self.state.projects[s.project_id]["organizationId"]]}
        return [dict(users[name]) if name in users else {"userName": name} for name in s.owners]

    def do_list_submission_owners(self, request: Request) -> Any:
        return self.owners_wire(self.state.sub(request.params["submission_id"]))

    def do_list_backgrounds(self, request: Request) -> Any:
        return [{"submissionId": s.id, "background": s.background} for s in self.state.subs.values()]

    def do_get_background(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        return {"submissionId": s.id, "background": s.background}

    def do_list_instructions(self, request: Request) -> Any:
        return [{"submissionId": s.id, "instructions": s.instructions} for s in self.state.subs.values()]

    def do_get_instructions(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        return {"submissionId": s.id, "instructions": s.instructions}

    def do_list_documents(self, request: Request) -> Any:
        return [self.doc_wire(d) for d in self.state.sub(request.params["submission_id"]).docs]

    def do_get_document(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        return self.doc_wire(self.state.doc_of(s, request.params["document_id"]))

    # --- custom attributes -----------------------------------------------------------------------

    def checked_attribute(self, project_id: int, name: Any, value: Any) -> tuple[str, str]:
        """(name, value) when the project defines the attribute and the value fits it; else a 400."""
        defined = {a["name"]: a for a in self.state.projects[project_id]["attributes"]}
        if name not in defined:
            raise Reject(400, f"custom attribute {name!r} is not defined in project {project_id}; "
                              f"defined: {', '.join(defined)}")
        attr = defined[name]
        if not isinstance(value, str) or not value.strip():
            raise Reject(400, f"custom attribute {name} needs a non-empty string value")
        if attr["type"] == "COMBO" and value not in attr["values"]:
            raise Reject(400, f"custom attribute {name} must be one of {', '.join(attr['values'])}")
        return name, value

    def do_list_custom_attributes(self, request: Request) -> Any:
        return ATTRIBUTES.listed(self.state.sub(request.params["submission_id"]))

    def do_get_custom_attribute(self, request: Request) -> Any:
        _, name, value = ATTRIBUTES.one(self.state, request)
        return ATTRIBUTES.wire(name, value)

    def do_add_custom_attribute(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        name, value = self.checked_attribute(s.project_id, body.get("name"), body.get("value"))
        if name in s.attributes:
            raise Reject(400, f"custom attribute {name} is already set on submission {s.id}; change it with PUT")
        s.attributes[name] = value
        return ATTRIBUTES.wire(name, value)

    def do_update_custom_attribute(self, request: Request) -> Any:
        s, name, _ = ATTRIBUTES.one(self.state, request)
        name, value = self.checked_attribute(s.project_id, name, body_object(request).get("value"))
        s.attributes[name] = value
        return ATTRIBUTES.wire(name, value)

    def do_delete_custom_attribute(self, request: Request) -> Response:
        return ATTRIBUTES.delete(self.state, request)

    def do_delete_custom_attributes(self, request: Request) -> Response:
        return ATTRIBUTES.clear(self.state, request)

    # --- metadata --------------------------------------------------------------------------------

    def do_list_metadata(self, request: Request) -> Any:
        return METADATA.listed(self.state.sub(request.params["submission_id"]))

    def do_get_metadata_entry(self, request: Request) -> Any:
        _, key, value = METADATA.one(self.state, request)
        return METADATA.wire(key, value)

    def _key_value(self, request: Request) -> tuple[Submission, str, str]:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        key, value = body.get("key"), body.get("value")
        if not isinstance(key, str) or not key.strip() or value is None:
            raise Reject(400, "metadata needs a key and a value")
        check_hook(key, value)
        return s, key, str(value)

    def do_add_metadata(self, request: Request) -> Any:
        s, key, value = self._key_value(request)
        if key in s.metadata:
            raise Reject(400, f"metadata {key!r} already exists on submission {s.id}; change it with PUT")
        s.metadata[key] = value
        return METADATA.wire(key, value)

    def do_set_webhook_metadata(self, request: Request) -> Any:
        s, key, value = self._key_value(request)
        if key not in HOOK_KEYS:
            raise Reject(400, f"webhook metadata keys are {' and '.join(HOOK_KEYS)}, not {key!r}")
        if key in s.metadata:
            raise Reject(400, f"submission {s.id} already has {key}; change it with PUT .../metadata/{key}")
        s.metadata[key] = value
        return METADATA.wire(key, value)

    def do_update_metadata_entry(self, request: Request) -> Any:
        s, key, _ = METADATA.one(self.state, request)
        value = body_object(request).get("value")
        if value is None:
            raise Reject(400, "metadata needs a value")
        check_hook(key, value)
        s.metadata[key] = str(value)
        return {"key": key, "value": s.metadata[key]}

    def do_delete_metadata(self, request: Request) -> Response:
        return METADATA.clear(self.state, request)

    def do_delete_metadata_entry(self, request: Request) -> Response:
        return METADATA.delete(self.state, request)
