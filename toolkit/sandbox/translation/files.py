"""Downloads, quotes and webhooks of the translation emulator.

The three-step download: GET `.../download` with `sourceFiles`, `deliverableTargetIds`,
`deliverableLanguages` (every target not cancelled in those languages; public integrations send it,
docs/public-specs.md) or `languageReferenceFiles` starts a download activity
(`processingFinished: false`) named by a GUID `downloadId` (the vendor's own client types it so, G9); GET it again with `downloadId` to poll: the second poll answers true,
or any poll once the clock has moved 5 seconds past the start; then `GET /submissions/download/{id}`
gives a zip (earlier it is a 400). A deliverable not ready yet (its target not PROCESSED or DELIVERED)
is a 400 that names it, at the start. Zip entries carry the virtual time, so the bytes are the same
for the same seed. Deliverables sit where a public plugin reads them:
`Sub_{submissionId}_{locale}/{name without extension}_{locale}_Translated/{name}` (`deliverable_path`);
sources under
`source/`, reference files under `reference/{locale}/`.

`GET .../targets/{targetId}/download/deliverable` answers one target's translated file as the body.
A deliverable is the source pseudo-translated with its structure kept (translation_pseudo).

Quotes are PROVIDED until approved; approving releases a submission on hold (WAITING → READY). The
report is a CSV or a one-page PDF.

Webhooks are the metadata `_webhookURL` and `_webhookScope` (a comma list of events; all when
absent). The sandbox opens no connection: a delivery fails when the URL is not https or its host
ends in .invalid, .local, .internal or .test, and goes to `GET /webhooks/failed`, one row per
submission and event (a target event's row gathers its `targetIds`);
`POST /webhooks/reset` takes them off the list and they are sent again when the clock next moves.
"""
from __future__ import annotations

__all__ = ["Files", "READY_AFTER_MS", "UNREACHABLE", "deliverable_path", "pdf", "query_flag", "reachable"]

import csv
import io
import zipfile
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote as percent_encoded
from urllib.parse import urlsplit

import orjson

from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.translation.model import (
    CANCELLED,
    DELIVERED,
    LANG_INDEX,
    LANGUAGES,
    PROCESSED,
    READY,
    TARGET_STATUS,
    WAITING,
    Submission,
)
from toolkit.sandbox.translation.pseudo import translate
from toolkit.sandbox.translation.records import HOOK_EVENTS, body_object, int_list
from toolkit.sandbox.translation.seed import API_USER, STEMS
from toolkit.sandbox.translation.state import State

READY_AFTER_MS = 5_000
UNREACHABLE = (".invalid", ".local", ".internal", ".test")


def query_flag(request: Request, name: str) -> bool:
    value = (request.arg(name) or "").strip().lower()
    if value not in ("", "true", "false"):
        raise Reject(400, f"{name} must be true or false, not {request.arg(name)!r}")
    return value == "true"


def deliverable_path(sid: int, lang: str, name: str) -> str:
    """Where a deliverable sits in the zip: `Sub_1081_fr-FR/home_fr-FR_Translated/home.html`; a name
    with folders (from an extracted archive) keeps them above its own folder, so names cannot collide."""
    folder, _, base = name.rpartition("/")
    stem = base.rsplit(".", 1)[0] or base
    return f"Sub_{sid}_{lang}/{folder + '/' if folder else ''}{stem}_{lang}_Translated/{base}"


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and not (parts.hostname or "").endswith(UNREACHABLE)


def pdf(lines: list[str]) -> bytes:
    """A one-page PDF showing `lines` in Helvetica: enough for any viewer."""
    def escape(text: str) -> str:
        return text.encode("latin-1", "replace").decode("latin-1").replace("\\", "\\\\").replace(
            "(", "\\(").replace(")", "\\)")
    stream = "BT /F1 10 Tf 50 800 Td 14 TL " + " ".join(f"({escape(line)}) '" for line in lines) + " ET"
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
               "/Resources << /Font << /F1 5 0 R >> >> >>",
               f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class Files:
    """Downloads, quotes and webhooks, over the server's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    # --- downloads -------------------------------------------------------------------------------

    def do_start_download(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        if request.arg("downloadId"):
            activity_id = str(request.arg("downloadId")).strip().lower()
            activity = self.state.downloads.get(activity_id)
            if activity is None or activity["submissionId"] != s.id:
                raise Reject(404, f"download {activity_id} not found in submission {s.id}")
            activity["polls"] += 1
            finished = self._finished(activity)
            return {"downloadId": activity_id, "processingFinished": finished,
                    "message": "ready: GET /submissions/download/{downloadId}" if finished
                    else "the download is being prepared"}
        sources = query_flag(request, "sourceFiles")
        wanted = int_list(request.args("deliverableTargetIds", split=True), "deliverableTargetIds")
        deliverable_languages = request.args("deliverableLanguages", split=True)
        languages = request.args("languageReferenceFiles", split=True)
        if not (sources or wanted or deliverable_languages or languages):
            raise Reject(400, "give sourceFiles=true, deliverableTargetIds, deliverableLanguages or "
                              "languageReferenceFiles")
        wrong = [lang for lang in (*deliverable_languages, *languages) if lang not in s.languages()]
        if wrong:
            raise Reject(400, f"{', '.join(dict.fromkeys(wrong))} are not target languages of submission {s.id}")
        targets = self.state.own_targets(s, wanted)
        targets += [n for n in self._language_targets(s, deliverable_languages) if n not in targets]
        self._ready(targets)
        activity_id = self.state.guid()
        self.state.downloads[activity_id] = {
            "submissionId": s.id, "created": self.state.now_ms(), "polls": 0, "finished": False,
            "sourceFiles": sources, "targets": targets, "languages": languages,
            "manifest": query_flag(request, "includeManifest")}
        return {"downloadId": activity_id, "processingFinished": False, "message": "the download is being prepared"}

    def _language_targets(self, s: Submission, languages: list[str]) -> list[int]:
        """The targets of the submission in `languages` that are not cancelled; a language with none
        left is a 400 (there is nothing to deliver in it)."""
        targets, chosen = self.state.targets, []
        for lang in dict.fromkeys(languages):
            live = [n for n in s.targets if targets.lang[n] == LANG_INDEX[lang] and targets.status[n] != CANCELLED]
            if not live:
                raise Reject(400, f"submission {s.id} has no target in {lang} left to deliver (all cancelled)")
            chosen += live
        return chosen

    def _ready(self, positions: list[int]) -> None:
        """A 400 naming the targets whose deliverable is not ready yet, with their statuses."""
        targets = self.state.targets
        pending = [n for n in positions if targets.status[n] not in (PROCESSED, DELIVERED)]
        if pending:
            shown = ", ".join(f"{targets.BASE + n} ({TARGET_STATUS[targets.status[n]]})" for n in pending[:10])
            more = f" and {len(pending) - 10} more" if len(pending) > 10 else ""
            raise Reject(400, f"no deliverable yet for targets {shown}{more}: download when they are PROCESSED")

    def do_download_target_deliverable(self, request: Request) -> Response:
        s = self.state.sub(request.params["submission_id"])
        n = self.state.target_of(s, request.params["target_id"])
        self._ready([n])
        name, data = self.deliverable(n)
        # a name from an uploaded zip may hold folders, quotes or any letter: the header gets its last
        # part, in ASCII for old clients and in full as RFC 6266's filename*
        base = name.rpartition("/")[2]
        plain = base.encode("ascii", "replace").decode().replace('"', "'").replace("\\", "_")
        headers = {"Content-Disposition": f"attachment; filename=\"{plain}\"; filename*=UTF-8''{percent_encoded(base)}"}
        return Response(200, data, headers, "application/octet-stream")

    def deliverable(self, n: int) -> tuple[str, bytes]:
        """One target's translated file: (its document's name, the source pseudo-translated)."""
        d, lang = self.state.targets.doc[n], LANGUAGES[self.state.targets.lang[n]]
        name = self.state.docs.name[d]
        return name, translate(self.source_bytes(d), name, lang)

    def _finished(self, activity: dict[str, Any]) -> bool:
        if not activity["finished"]:
            activity["finished"] = activity["polls"] >= 2 or self.state.now_ms() - activity["created"] >= READY_AFTER_MS
        return activity["finished"]

    def do_download_files(self, request: Request) -> Response:
        activity_id = str(request.params["download_id"]).strip().lower()
        activity = self.state.downloads.get(activity_id)
        if activity is None:
            raise Reject(404, f"download {request.params['download_id']} not found")
        if not self._finished(activity):
            raise Reject(400, f"download {activity_id} is still being prepared; poll .../download?downloadId="
                              f"{activity_id} until processingFinished is true")
        s = self.state.subs[activity["submissionId"]]
        files = self._download_files(s, activity)
        stamp = datetime.fromtimestamp(activity["created"] / 1000, UTC).timetuple()[:6]
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files:
                archive.writestr(zipfile.ZipInfo(name, stamp), data, zipfile.ZIP_DEFLATED)
            if activity["manifest"]:
                manifest = [{"path": name, "size": len(data)} for name, data in files]
                archive.writestr(zipfile.ZipInfo("manifest.json", stamp),
                                 orjson.dumps({"submissionId": s.id, "downloadId": activity_id, "files": manifest},
                                              option=orjson.OPT_INDENT_2))
        disposition = f'attachment; filename="submission-{s.id}-{activity_id}.zip"'
        return Response(200, buffer.getvalue(), {"Content-Disposition": disposition}, "application/zip")

    def source_bytes(self, d: int) -> bytes:
        """An uploaded document's bytes, or a small made-up file for a seeded one."""
        if d in self.state.docs.content:
            return self.state.docs.content[d]
        name = self.state.docs.name[d]
        title = STEMS[d % len(STEMS)].replace("-", " ").capitalize()
        if name.endswith(".html"):
            return f"<html><body><h1>{title}</h1><p>Welcome to our store.</p></body></html>\n".encode()
        if name.endswith(".json"):
            return orjson.dumps({"title": title, "body": "Welcome to our store.", "id": f"doc-{d}"},
                                option=orjson.OPT_INDENT_2)
        if name.endswith(".xlf"):
            return (f'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" '
                    f'xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en-US" '
                    f'datatype="plaintext" original="{name}"><body><trans-unit id="1"><source>{title}</source>'
                    f'</trans-unit><trans-unit id="2"><source>Welcome to our store.</source></trans-unit>'
                    f'</body></file></xliff>\n').encode()
        return f"{title}\nWelcome to our store.\nYour order has shipped.\n".encode()

    def _download_files(self, s: Submission, activity: dict[str, Any]) -> list[tuple[str, bytes]]:
        docs, files = self.state.docs, []
        if activity["sourceFiles"]:
            files += [(f"source/{docs.name[d]}", self.source_bytes(d)) for d in s.docs if not docs.cancelled[d]]
        for n in activity["targets"]:
            lang = LANGUAGES[self.state.targets.lang[n]]
            name, data = self.deliverable(n)
            files.append((deliverable_path(s.id, lang, name), data))
        for lang in activity["languages"]:
            files += [(f"reference/{lang}/{ref['name']}", ref["content"]) for ref in s.references
                      if ref["submissionLevel"] or lang in ref["targetLanguages"]]
        return files

    # --- quotes ----------------------------------------------------------------------------------

    def do_list_quotes(self, request: Request) -> Any:
        return [dict(q) for q in self.state.sub(request.params["submission_id"]).quotes]

    def do_approve_quote(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        comment = body_object(request).get("comment")
        if comment is not None and not isinstance(comment, str):
            raise Reject(400, "comment must be a string")
        provided = [q for q in s.quotes if q["status"] == "PROVIDED"]
        if not provided:
            raise Reject(400, f"submission {s.id} has no quote awaiting approval")
        now = self.state.now_ms()
        for quote in provided:
            quote.update(status="APPROVED", comment=comment, dateApproved=now, approvedBy=API_USER)
        messages = [f"quote {q['quoteId']} approved" for q in provided]
        if s.status == "WAITING":
            for n in s.targets:
                if self.state.targets.status[n] == WAITING:
                    self.state.targets.set(n, READY)
            s.status, s.analysis_done = "READY", now
            messages.append(f"submission {s.id} released from hold")
        return {"submissionId": s.id, "approvedQuoteIds": [q["quoteId"] for q in provided], "status": s.status,
                "messages": messages}

    def do_get_quote_report(self, request: Request) -> Response:
        s = self.state.sub(request.params["submission_id"])
        body = body_object(request)
        for name in ("approvedQuotesSelected", "providedQuotesSelected", "emailEnabled"):
            if not isinstance(body.get(name, False), bool):
                raise Reject(400, f"{name} must be true or false")
        selected = {status for status, key in (("APPROVED", "approvedQuotesSelected"),
                                               ("PROVIDED", "providedQuotesSelected")) if body.get(key)}
        if not selected:
            raise Reject(400, "select approved quotes, provided quotes or both")
        output = str(body.get("outputFormat") or "PDF").upper()
        if output not in ("PDF", "CSV"):
            raise Reject(400, f"outputFormat must be PDF or CSV, not {body.get('outputFormat')!r}")
        quotes = [q for q in s.quotes if q["status"] in selected]
        fields = ("quoteId", "submissionId", "status", "amount", "currency", "wordCount", "dateProvided",
                  "dateApproved", "approvedBy", "comment")
        name = f"quote-report-{s.id}.{output.lower()}"
        headers = {"Content-Disposition": f'attachment; filename="{name}"'}
        if output == "CSV":
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(fields)
            writer.writerows([q.get(f) for f in fields] for q in quotes)
            return Response(200, text.getvalue().encode(), headers, "text/csv; charset=utf-8")
        lines = [f"Quote report - submission {s.id}: {s.name}", ""]
        lines += [f"Quote {q['quoteId']}  {q['status']}  {q['amount']:.2f} {q['currency']}  "
                  f"{q['wordCount']} words" for q in quotes] or ["No quotes selected."]
        return Response(200, pdf(lines), headers, "application/pdf")

    # --- webhooks --------------------------------------------------------------------------------

    def fire(self, s: Submission, event: str, targets: list[int] | None = None) -> None:
        """Deliver `event` (about `targets`, for a target event) to the submission's webhook, if it has
        one whose scope names the event."""
        url = s.metadata.get("_webhookURL")
        scope = [e.strip() for e in s.metadata.get("_webhookScope", ",".join(HOOK_EVENTS)).split(",")]
        if url and event in scope:
            self.deliver(s.id, url, event, attempts=0, targets=targets)

    def deliver(self, sid: int, url: str, event: str, attempts: int, first: int | None = None,
                targets: list[int] | None = None) -> None:
        now = self.state.now_ms()
        about = {"targetIds": list(targets or ())}
        if reachable(url):
            self.state.sent_hooks.append({"submissionId": sid, "url": url, "event": event, "date": now, **about})
            return
        held = next((h for h in self.state.failed_hooks if (h["submissionId"], h["event"]) == (sid, event)), None)
        if held is not None:                     # one row per submission and event: a later failure joins it
            held.update(url=url, lastAttempt=now, attempts=max(held["attempts"], attempts + 1))
            held["targetIds"] = [*held["targetIds"], *(targets or ())]
            return
        host = urlsplit(url).hostname or url
        self.state.failed_hooks.append({"submissionId": sid, "url": url, "event": event, "attempts": attempts + 1,
                                        "firstAttempt": first or now, "lastAttempt": now, **about,
                                        "message": f"could not connect to {host}"})

    def do_list_failed_webhooks(self, request: Request) -> Any:
        return [dict(hook) for hook in self.state.failed_hooks]

    def do_reset_failed_webhooks(self, request: Request) -> Any:
        ids = int_list(body_object(request).get("submissionIds"), "submissionIds")
        if not ids:
            raise Reject(400, "submissionIds is required")
        unknown = [str(i) for i in ids if i not in self.state.subs]
        if unknown:
            raise Reject(400, f"submissions {', '.join(unknown)} not found")
        chosen = [h for h in self.state.failed_hooks if h["submissionId"] in ids]
        self.state.failed_hooks = [h for h in self.state.failed_hooks if h["submissionId"] not in ids]
        self.state.retry_hooks += chosen
        reset = sorted({h["submissionId"] for h in chosen})
        return {"resetSubmissionIds": reset,
                "messages": [f"{len(chosen)} failed webhooks reset; they are sent again shortly"]}

    def retry(self) -> None:
        hooks, self.state.retry_hooks = self.state.retry_hooks, []
        for hook in hooks:
            self.deliver(hook["submissionId"], hook["url"], hook["event"], hook["attempts"], hook["firstAttempt"],
                         hook.get("targetIds"))
