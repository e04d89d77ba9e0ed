"""The asset library's multi-step writes: a file upload (single or multipart) and an import from a URL.

    up = MultipartUpload(library)                       # a file picker, a board, a progress bar
    up.run("keynote.mp4", parent_board_id=board)        # from code: {asset_id, version_id, parts, ...}
    imp = AssetImport(library, wait=lambda s: sandbox.advance(seconds=s))
    imp.run("https://files.example.org/beach.jpg")      # {status: succeeded | failed, error_type, ...}

An upload of at most 5 MiB gets one pre-signed URL to PUT the bytes to; a larger one is split into
parts of `part_size` (at least 5 MiB, as S3 wants every part but the last), each PUT to the URL
`create_upload_part` gives, its ETag kept, and `complete_upload` lists them. The pre-signed storage
URLs take no API key: the PUTs go through the client's Session without its auth.
"""
from __future__ import annotations

__all__ = ["AssetImport", "DONE", "MIB", "MultipartUpload", "PART", "Source"]

import datetime as dt
import mimetypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import requests

from toolkit import catalog
from toolkit.errors import ToolkitError, ValidationError
from toolkit.forms.steps import Steps, Wait, lookup_field, value_of
from toolkit.http.session import RETRY_STATUSES

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

MIB = 1024 * 1024
PART = 5 * MIB
DONE = ("succeeded", "failed")

Source = bytes | bytearray | str | os.PathLike[str] | tuple[str, bytes | bytearray]


def _source(source: Source, file_name: str | None) -> tuple[str, int, Callable[[int, int], bytes]]:
    """(name, size, read(offset, length)) of bytes, a (name, bytes) pair or a path (read part by part)."""
    if isinstance(source, tuple):
        file_name, source = file_name or source[0], source[1]
    if isinstance(source, bytes | bytearray):
        data = bytes(source)
        return file_name or "upload.bin", len(data), lambda offset, length: data[offset:offset + length]
    path = Path(source)

    def read(offset: int, length: int) -> bytes:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    return file_name or path.name, path.stat().st_size, read


class MultipartUpload(Steps):
    """Upload one file as a new asset (or a new version of one): parts, ETags and progress handled."""

    title = "Upload a file to the asset library"
    action_label = "Upload"

    def __init__(self, conn: Connection, *, part_size: int = PART) -> None:
        if part_size < PART:
            raise ValidationError("part_size", part_size, f"must be at least {PART:,} bytes (5 MiB): storage refuses "
                                  "smaller parts but the last")
        self.part_size = part_size
        create = catalog.action("asset_library.create_upload")
        self.file = W.FileUpload(multiple=False, description="file *")
        self.board = lookup_field(conn, create.id, "parent_board_id")
        super().__init__(conn, [self.file, self.board.row])
        self.progress.layout.display = None
        self.progress.description = "parts"

    def run_from_widgets(self) -> Any:
        if not self.file.value:
            raise ToolkitError("choose a file first")
        item = self.file.value[0]
        return self.run((item["name"], bytes(item["content"])), parent_board_id=value_of(self.board))

    def run(self, source: Source, *, file_name: str | None = None, ext: str | None = None,
            mime: str | None = None, parent_board_id: str | None = None, asset_id: str | None = None,
            recorded_at: dt.datetime | None = None, tags: list[str | dict] | None = None) -> dict[str, Any]:
        """Upload bytes, a (name, bytes) pair or a file path; returns the new asset's and version's ids.
        `tags` are names (found, or created when the workspace has none of that name) or `{"id": ...}`."""
        self.given(board=parent_board_id)
        return self.guarded(lambda: self._upload(source, file_name, ext, mime, parent_board_id, asset_id,
                                                 recorded_at, tags))

    def _tag_refs(self, tags: list[str | dict]) -> list[dict]:
        """The service takes tags as [{id}] (its SDK sends them so): each name is looked up, and
        created where the workspace has none of that name."""
        refs, said = [], []
        for tag in tags:
            if isinstance(tag, dict):
                refs.append(tag)
                continue
            # the name filter searches within names: only an equal name is the tag
            found = [row for row in self.conn.rows("list_tags", name=tag) if row.get("name") == tag]
            tag_id = found[0]["id"] if found else self.call("asset_library.create_tag", name=tag)["id"]
            said.append(f"{tag} {'found' if found else 'created'}")
            refs.append({"id": tag_id})
        if said:
            self.step("tags", ", ".join(said))
        return refs

    def _upload(self, source: Source, file_name: str | None, ext: str | None, mime: str | None,
                board: str | None, asset_id: str | None, recorded_at: dt.datetime | None,
                tags: list[str | dict] | None) -> dict[str, Any]:
        name, size, read = _source(source, file_name)
        stem, dot, suffix = name.rpartition(".")
        stem, ext = (stem, ext or suffix) if dot else (name, ext or "bin")
        mime = mime or mimetypes.guess_type(f"x.{ext}")[0] or "application/octet-stream"
        refs = self._tag_refs(tags) if tags else None
        extra = {k: v for k, v in {"parent_board_id": board, "asset_id": asset_id, "tags": refs}.items() if v}
        started = self.call("asset_library.create_upload", file_name=stem, ext=ext, size=size, mime=mime,
                            recorded_at=recorded_at or dt.datetime.now(dt.UTC), **extra)
        result = {"asset_id": started.get("assetId"), "version_id": started.get("versionId"), "size": size,
                  "file_name": f"{stem}.{ext}"}
        if started.get("uploadUrl"):
            self.step("create_upload", f"{size:,} bytes: one upload URL")
            self.progress.max, self.progress.value = 1, 0
            tag = self._put(started["uploadUrl"], read(0, size), "the file")
            self.progress.value = 1
            self.step("PUT file", f"ETag {tag}")
            result["parts"] = 1
        else:
            count = max(1, -(-size // self.part_size))
            upload_id, key = started["multiPartUploadId"], started["key"]
            self.step("create_upload", f"{size:,} bytes: multipart upload {upload_id} in {count} parts")
            self.progress.max, self.progress.value = count, 0
            parts = []
            for number in range(1, count + 1):
                url = self.call("asset_library.create_upload_part", multi_part_upload_id=upload_id, key=key,
                                part_number=number)["url"]
                chunk = read((number - 1) * self.part_size, self.part_size)
                parts.append({"etag": self._put(url, chunk, f"part {number}"), "partNumber": number})
                self.progress.value = number
                self.step("upload parts", f"{number} of {count} parts ({len(chunk):,} bytes last)", number == count)
            self.call("asset_library.complete_upload", multi_part_upload_id=upload_id, key=key, parts=parts)
            self.step("complete_upload", f"{count} parts with their ETags")
            result["parts"] = count
        self.stale("asset_library.complete_upload")
        return self.finish(result, f"uploaded {result['file_name']} as asset {result['asset_id']}")

    def _put(self, url: str, data: bytes, what: str) -> str:
        """PUT bytes to a pre-signed URL: no API key (the URL is the credential), the client's rate
        budget and retry policy (a part PUT may be repeated), the ETag of the stored bytes back."""
        transport = self.conn.transport
        attempt = 0
        while True:
            attempt += 1
            response = None
            try:
                with transport.budget or self.conn.client.budget:     # the transport's own, else the client's
                    response = transport.session.put(url, data=data, timeout=transport.timeout)
            except (requests.ConnectionError, requests.Timeout) as error:
                if attempt >= transport.retry.attempts:
                    raise ToolkitError(f"storage did not answer for {what}: {type(error).__name__}") from None
            if response is not None and (response.status_code not in RETRY_STATUSES
                                         or attempt >= transport.retry.attempts):
                break
            transport.sleep(transport.retry.wait(attempt, response))
        if response.status_code >= 400:
            raise ToolkitError(f"storage refused {what}: {response.status_code} "
                               f"{self.conn.redactor.scrub(response.text[:300])}")
        return response.headers.get("ETag", "")


class AssetImport(Steps):
    """Import a file from a public URL and follow the import until it succeeds or fails."""

    title = "Import a file from a URL"
    action_label = "Import"

    def __init__(self, conn: Connection, *, wait: Wait | None = None, interval: float = 5.0,
                 timeout: float = 900.0) -> None:
        create = catalog.action("asset_library.create_import")
        self.url = W.Text(description="source_url *", placeholder=str(create.param("source_url").example),
                          style={"description_width": "120px"}, layout=W.Layout(width="620px"))
        self.board = lookup_field(conn, create.id, "parent_board_id")
        super().__init__(conn, [self.url, self.board.row], wait=wait, interval=interval, timeout=timeout)

    def run_from_widgets(self) -> Any:
        board = value_of(self.board)
        return self.run(self.url.value.strip(), **({"parent_board_id": board} if board else {}))

    def run(self, source_url: str, *, wait: Wait | None = None, interval: float | None = None,
            timeout: float | None = None, **params: Any) -> dict[str, Any]:
        """Start the import and follow it: {import_id, asset_id, status, error_type, error_message, waited}."""
        self.given(url=source_url, board=params.get("parent_board_id"))
        return self.guarded(lambda: self._import(source_url, wait, interval, timeout, params))

    def _import(self, source_url: str, wait: Wait | None, interval: float | None, timeout: float | None,
                params: dict[str, Any]) -> dict[str, Any]:
        started = self.call("asset_library.create_import", source_url=source_url, **params)
        import_id = started["id"]
        self.step("create_import", f"import {import_id} for asset {started.get('assetId')}")
        answer, waited = self.poll("status", lambda: self.conn.call("asset_library.get_import_status",
                                                                      import_id=import_id),
                                   lambda a: a.get("status") in DONE, wait, interval, timeout)
        error = answer.get("error") or {}
        status = answer.get("status") if answer.get("status") in DONE else f"still {answer.get('status')}"
        result = {"import_id": import_id, "asset_id": started.get("assetId"),
                  "version_id": started.get("versionId"), "status": status,
                  "error_type": error.get("type"), "error_message": error.get("message"), "waited": waited}
        self.step("status", f"{status}{' · ' + error.get('type', '') if error else ''} after {waited:g} s",
                  status == "succeeded")
        if status == "succeeded":
            self.stale("asset_library.create_import")
        self.finish(result, f"import {import_id}: {status}"
                    + (f" ({error.get('type')}: {error.get('message')})" if error else ""), ok=status == "succeeded")
        if status.startswith("still"):
            self.state = "timed out"
        return result
