"""Uploads of the translation emulator: source (one document per file, or per member of a zip when
`extractArchive` is true, each with a WAITING target per target language of its batch), reference,
collateral and translatable files, and the check of a translatable upload. Each upload answers its
`processId`, a GUID (the vendor's own client reads it into a `Guid`, docs/public-specs.md, G9), which
the check takes in any case.

A source upload needs a batch of the submission and, unless the batch is NON_PARSABLE (then it must be
blank), a file format of the project (left out, the format of the file's extension). Files can be added until the submission is PROCESSED, DELIVERED
or CANCELLED; a READY submission goes back to CREATING (its new files need an analysis). A
translatable upload fails for a file that is not XLIFF, TXLF or TXML (any file will do for a submission
with a NON_PARSABLE batch), or is empty: checking it then
answers 400 with those messages, `{messages, processId, status: "FAILED"}` (the document: "upload
verification returns the error messages of a failed upload", under its errors).
"""
from __future__ import annotations

__all__ = ["TRANSLATABLE", "Uploads", "count_words", "flag", "unpack"]

import io
import zipfile
from typing import Any

from toolkit.sandbox.exchange import Part, Reject, Request, Response
from toolkit.sandbox.translation.model import (
    FINISHED,
    FORMAT_BY_EXTENSION,
    FORMAT_INDEX,
    LANG_INDEX,
    NO_FORMAT,
    Submission,
)
from toolkit.sandbox.translation.state import State

TRANSLATABLE = (".xlf", ".xliff", ".txlf", ".txml", ".sdlxliff")


def flag(parts: dict[str, Part], name: str) -> bool:
    """A boolean form field: true/false (any case), absent or blank is false."""
    part = parts.get(name)
    text = part.text.strip() if part else ""
    if text.lower() not in ("", "true", "false"):
        raise Reject(400, f"{name} must be true or false, not {text!r}")
    return text.lower() == "true"


def unpack(part: Part, extract: bool) -> list[tuple[str, bytes]]:
    """The uploaded file, or the files of a zip archive when `extract` is true."""
    if not extract:
        return [(part.filename or "file", part.data)]
    try:
        with zipfile.ZipFile(io.BytesIO(part.data)) as archive:
            files = [(info.filename, archive.read(info)) for info in archive.infolist() if not info.is_dir()]
    except zipfile.BadZipFile:
        raise Reject(400, f"extractArchive is true but {part.filename} is not a zip archive") from None
    if not files:
        raise Reject(400, f"the archive {part.filename} holds no files")
    return files


def count_words(data: bytes) -> int:
    text = data.decode("utf-8", "replace")
    return max(1, len(text.split()) if text.isprintable() or "\n" in text else len(data) // 6)


class Uploads:
    """The upload actions, over the server's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    def _open(self, request: Request) -> tuple[Submission, dict[str, Part], Part]:
        s = self.state.sub(request.params["submission_id"])
        if s.status in FINISHED:
            raise Reject(400, f"submission {s.id} is {s.status}; files can no longer be added")
        parts = {p.name: p for p in request.parts()}
        file = parts.get("file")
        if file is None or file.filename is None:
            raise Reject(400, "file is required (a multipart part named 'file')")
        return s, parts, file

    def _process(self, s: Submission, kind: str, name: str, **extra: Any) -> str:
        pid = self.state.guid()
        self.state.uploads[pid] = {"submissionId": s.id, "kind": kind, "name": name, "status": "PROCESSED",
                             "messages": [], "dateCreated": self.state.now_ms(), **extra}
        return pid

    def do_upload_source(self, request: Request) -> Any:
        s, parts, file = self._open(request)
        batch_name = parts["batchName"].text.strip() if "batchName" in parts else ""
        batch = s.batch(batch_name)
        if batch is None:
            raise Reject(400, f"batchName {batch_name!r} is not a batch of submission {s.id} "
                              f"({', '.join(b.name for b in s.batches) or 'it has none'})")
        fmt_name = parts["fileFormatName"].text.strip() if "fileFormatName" in parts else ""
        formats = self.state.projects[s.project_id]["formats"]
        if not fmt_name and batch.target_format != "NON_PARSABLE":
            # a production connector never sends one (docs/public-specs.md, G8): the project's format
            # for the file's extension, when it has one
            suffix = (file.filename or "").rpartition(".")[2].lower()
            fmt_name = FORMAT_BY_EXTENSION.get("." + suffix, "") if "." in (file.filename or "") else ""
        if batch.target_format == "NON_PARSABLE":
            if fmt_name:
                raise Reject(400, "leave fileFormatName blank for a NON_PARSABLE batch")
            fmt = NO_FORMAT
        elif fmt_name not in formats:
            raise Reject(400, f"fileFormatName {fmt_name!r} is not a file format of project {s.project_id} "
                              f"({', '.join(formats)})")
        else:
            fmt = FORMAT_INDEX[fmt_name]
        now, position = self.state.now_ms(), s.batches.index(batch)
        created, new_targets = [], []
        for name, data in unpack(file, flag(parts, "extractArchive")):
            d = self.state.docs.add(s.id, position, name, count_words(data), fmt, now)
            self.state.docs.content[d] = data
            created.append(d)
            new_targets += [self.state.targets.add(d, LANG_INDEX[lang]) for lang in batch.languages]
        s.add_docs(created)
        s.add_targets(new_targets)
        if s.status == "READY":
            s.status = "CREATING"            # new files need a new analysis before the start
        pid = self._process(s, "source", file.filename or "file", documents=created)
        return {"processId": pid, "submissionId": s.id,
                "documentIds": [{"name": self.state.docs.name[d], "documentId": self.state.docs.BASE + d,
                                 "submissionId": s.id} for d in created]}

    def do_upload_reference(self, request: Request) -> Any:
        s, parts, file = self._open(request)
        whole = flag(parts, "submissionLevel")
        text = parts["targetLanguageLevel"].text if "targetLanguageLevel" in parts else ""
        langs = [lang.strip() for lang in text.split(",") if lang.strip()]
        if not whole and not langs:
            raise Reject(400, "give submissionLevel=true or the languages in targetLanguageLevel")
        wrong = [lang for lang in langs if lang not in s.languages()]
        if wrong:
            raise Reject(400, f"{', '.join(wrong)} are not target languages of submission {s.id}")
        ref = {"referenceFileId": self.state.next_id("file"), "name": file.filename, "submissionLevel": whole,
               "targetLanguages": langs, "content": file.data, "dateCreated": self.state.now_ms()}
        s.references.append(ref)
        pid = self._process(s, "reference", file.filename or "file")
        return {"processId": pid, "submissionId": s.id, **{k: v for k, v in ref.items() if k != "content"}}

    def do_upload_collateral(self, request: Request) -> Any:
        s, parts, file = self._open(request)
        whole = flag(parts, "submissionLevel")
        ids = []
        for name, data in unpack(file, flag(parts, "extractArchive")):
            item = {"collateralFileId": self.state.next_id("file"), "name": name, "submissionLevel": whole,
                    "content": data, "dateCreated": self.state.now_ms()}
            s.collaterals.append(item)
            ids.append({"name": name, "collateralFileId": item["collateralFileId"]})
        return {"processId": self._process(s, "collateral", file.filename or "file"), "submissionId": s.id,
                "collateralFileIds": ids}

    def do_upload_translatable(self, request: Request) -> Any:
        s, parts, file = self._open(request)
        messages = []
        # a NON_PARSABLE batch's translation is the file itself, whatever its type (a production
        # connector uploads the `.txt` it downloaded, docs/public-specs.md, G8)
        any_file = any(b.target_format == "NON_PARSABLE" for b in s.batches)
        for name, data in unpack(file, flag(parts, "extractArchive")):
            if not any_file and not name.lower().endswith(TRANSLATABLE):
                messages.append(f"{name}: not a translatable file (XLIFF, TXLF or TXML expected)")
            elif not data.strip():
                messages.append(f"{name}: the file is empty")
        pid = self._process(s, "translatable", file.filename or "file")
        if messages:
            self.state.uploads[pid].update(status="FAILED", messages=messages)
        return {"processId": pid, "submissionId": s.id}

    def do_get_translatable_upload(self, request: Request) -> Any:
        s = self.state.sub(request.params["submission_id"])
        pid = str(request.params["upload_process_id"]).strip().lower()
        upload = self.state.uploads.get(pid)
        if upload is None or upload["submissionId"] != s.id or upload["kind"] != "translatable":
            raise Reject(404, f"no translatable upload {request.params['upload_process_id']} in submission {s.id}")
        if upload["status"] == "FAILED":
            # the service's error body with the process and its status: built here because a Reject
            # cannot carry a field named `status`, the name of its own first parameter
            return Response(400, {"messages": list(upload["messages"]), "processId": pid, "status": "FAILED",
                                  "processingFinished": True})
        # bb-io/GlobalLink reads `processingFinished` and takes a first message holding "Upload
        # successfully!" for success
        return {"processId": pid, "submissionId": s.id, "fileName": upload["name"], "status": "PROCESSED",
                "processingFinished": True, "messages": ["Upload successfully!"]}
