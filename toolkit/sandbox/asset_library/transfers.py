"""The asset library's file transfers: imports from URLs, small and multipart uploads, downloads.

Imports run on the virtual clock: `pending` for 5 s after creation, then `inProgress`, then after
30 s more `succeeded` (the asset, or a new version of `assetId`, appears in `parentBoardId`) or
`failed`. The source URL decides the outcome, checked in this order:

- host `blocked.example` (or a subdomain), `localhost` or a private address → SOURCE_URL_BLOCKED;
- a path segment `/status/<4xx or 5xx>`, e.g. `https://files.example/status/404` → SOURCE_URL_INVALID;
- `missing` anywhere in the path, e.g. `https://files.example/missing.jpg` → SOURCE_FILE_NOT_FOUND;
- `slow` anywhere in the path → stays `inProgress` for 10 minutes, then PROCESS_TIMED_OUT;
- anything else succeeds.

Uploads: `POST /uploads` with `size` ≤ 5 MiB answers an `uploadUrl` (PUT the bytes: 200 with an
`ETag`, the asset appears); above it a `multiPartUploadId` and `key`. `uploadPart` answers a URL per
part; each PUT there answers `ETag: "<md5 of the bytes>"`. `completeMultipart` checks every listed
part (uploaded, same ETag, ascending partNumber, all but the last ≥ 5 MiB, sizes adding up to the
declared size) and creates the asset or version. The storage URLs stand for pre-signed S3 URLs:
public, outside `/v1`, errors in S3's XML. Download answers `{url, expiresAt}` (the public OpenAPI
types' shape): the URL is signed together with its expiry, an hour of the virtual clock after it was
asked for, and refused after it (403, as S3 refuses an expired pre-signed URL). It serves the uploaded
bytes, or for seeded and imported files deterministic bytes of the file's size cut at 1 MiB (header
`x-sandbox-truncated: true` then).

`recordedAt` of an upload is optional (the vendor SDK's type), now when omitted; an import may set the
new version's `title` and `description` (the vendor SDK's create params).
"""
from __future__ import annotations

__all__ = ["DOWNLOAD_TTL_MS", "IMPORT_FIELDS", "MAX_PART_NUMBER", "MIB", "MIME", "MIN_PART", "PENDING_MS",
           "RUN_MS", "SMALL_UPLOAD", "SYNTHETIC_CAP", "TIMEOUT_MS", "Transfers", "UPLOAD_FIELDS", "etag",
           "outcome", "s3_error"]

import hashlib
import ipaddress
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

from toolkit.sandbox.asset_library.boards import Boards
from toolkit.sandbox.asset_library.checks import instant, object_body, text
from toolkit.sandbox.asset_library.fields import Fields
from toolkit.sandbox.asset_library.seed import HOUR, TYPES, iso_ms, mix, type_of_ext
from toolkit.sandbox.asset_library.space import AssetSpace
from toolkit.sandbox.emulator import Extra
from toolkit.sandbox.exchange import Reject, Request, Response, url_parts
from toolkit.sandbox.seeds import Seeds

MIB = 1024 * 1024
SMALL_UPLOAD = 5 * MIB                # at most this: one PUT; above: multipart
MIN_PART = 5 * MIB                    # every part but the last, as S3 requires
MAX_PART_NUMBER = 10_000
SYNTHETIC_CAP = MIB
PENDING_MS, RUN_MS, TIMEOUT_MS = 5_000, 30_000, 600_000
DOWNLOAD_TTL_MS = 3_600_000          # how long a download URL stays valid (a decision: none is documented)

MIME = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "heic": "image/heic",
        "tif": "image/tiff", "gif": "image/gif", "mp4": "video/mp4", "mov": "video/quicktime",
        "mp3": "audio/mpeg", "wav": "audio/wav", "pdf": "application/pdf", "zip": "application/zip"}
IMPORT_FIELDS = {"sourceUrl", "fileName", "ext", "recordedAt", "assetId", "parentBoardId", "customFields", "tags",
                 "title", "description"}
UPLOAD_FIELDS = {"fileName", "ext", "size", "mime", "recordedAt", "parentBoardId", "assetId", "customFields",
                 "tags"}


def s3_error(status: int, code: str, message: str) -> Response:
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>'
    return Response(status, body, content_type="application/xml")


def etag(data: bytes) -> str:
    return f'"{hashlib.md5(data).hexdigest()}"'


def outcome(url: str) -> tuple[str, str] | None:
    """(error type, message) an import of `url` fails with, or None when it succeeds."""
    parts = urlsplit(url)
    host, path = (parts.hostname or "").lower(), parts.path.lower()
    try:
        private = not ipaddress.ip_address(host).is_global
    except ValueError:
        private = False
    if host == "blocked.example" or host.endswith(".blocked.example") or host == "localhost" or private:
        return "SOURCE_URL_BLOCKED", f"the source URL host {host} is blocked by the block rules"
    status = re.search(r"/status/(\d{3})(?:/|$)", path)
    if status and 400 <= int(status.group(1)) <= 599:
        return "SOURCE_URL_INVALID", f"the source URL answered HTTP {status.group(1)}"
    if "missing" in path:
        return "SOURCE_FILE_NOT_FOUND", "no file was found at the source URL"
    if "slow" in path:
        return "PROCESS_TIMED_OUT", "the import exceeded the maximum allowed time of 10 minutes"
    return None


class Transfers:
    """Imports, uploads and downloads of one asset library, a part its emulator holds.

    It is given the assets, the boards and fields parts, the clock's time, the id maker, the stream
    of run-time ids (upload tokens) and the key that signs download URLs; `routes()` are the storage
    URLs the emulator serves outside the catalog.
    """

    def __init__(self, space: AssetSpace, boards: Boards, fields: Fields, now_ms: Callable[[], int],
                 new_id: Callable[[str], Any], ids: Seeds, signing_key: str) -> None:
        self.space, self.boards, self.fields = space, boards, fields
        self.now_ms, self.new_id, self.ids, self.signing_key = now_ms, new_id, ids, signing_key
        self.imports: dict[str, dict[str, Any]] = {}
        self.uploads: dict[str, dict[str, Any]] = {}     # multipart, by multiPartUploadId
        self.tokens: dict[str, tuple[str, Any]] = {}     # pre-signed URL token → what it writes
        self.blobs: dict[str, bytes] = {}                 # version id → uploaded bytes

    def routes(self) -> list[Extra]:
        """The pre-signed storage URLs: public, outside the catalog."""
        return [
            Extra("PUT", r"/storage/uploads/(?P<token>[0-9a-f]+)", self.put_small, name="storage:put_upload"),
            Extra("PUT", r"/storage/parts/(?P<token>[0-9a-f]+)", self.put_part, name="storage:put_part"),
            Extra("GET", r"/storage/files/(?P<version_id>[0-9a-f-]+)/(?P<name>[^/]+)", self.get_file,
                  name="storage:get_file"),
        ]

    # --- the common part of imports and uploads ------------------------------------------------

    def target(self, body: dict[str, Any]) -> dict[str, Any]:
        """assetId, parentBoardId, customFields and tags of an import or upload body, checked."""
        asset_id, board_id = body.get("assetId"), body.get("parentBoardId")
        if asset_id is not None:
            self.space.require(str(asset_id))
        if board_id is not None:
            self.boards.board(str(board_id))
        fields = {}
        entries = body.get("customFields")
        if entries is not None:
            if not isinstance(entries, list) or not all(isinstance(e, dict) and e.get("id") for e in entries):
                raise Reject(400, "customFields must be a list of objects with an id and a value or values")
            known = self.fields.store["customfields"]
            for entry in entries:
                field = known.get(entry["id"])
                if field is not None:      # ids of fields the workspace does not have are ignored
                    setting = self.fields.field_setting(field, {k: v for k, v in entry.items() if k != "id"})
                    if setting is not None:
                        fields[field["id"]] = setting
        tags = body.get("tags")
        if tags is not None and not (isinstance(tags, list) and all(
                isinstance(t, str) or (isinstance(t, dict) and (t.get("id") or t.get("name"))) for t in tags)):
            raise Reject(400, "tags must be a list of tag names, or of objects with an id or a name")
        return {"assetId": asset_id, "parentBoardId": board_id, "fields": fields, "tags": tags or []}

    def place(self, target: dict[str, Any], version: dict[str, Any]) -> None:
        """Create the asset (or the new version of target's asset) that an import or upload made."""
        space = self.space
        version["tags"] = self.fields.resolve_tags(target["tags"])
        board = target["parentBoardId"]
        boards = [board] if board and board in self.boards.store["boards"] else []
        i = space.index(target["assetId"]) if target["existing"] else None
        if i is None:
            space.add(target["assetId"], version, boards, dict(target["fields"]))
            return
        space.add_version(i, version)
        state = space.own(i)
        state["fields"].update(target["fields"])
        state["boards"].extend(b for b in boards if b not in state["boards"])

    def version(self, version_id: str, file_name: str, ext: str, size: int, at: int, recorded: int | None,
                seed: int) -> dict[str, Any]:
        kind = type_of_ext(ext)
        spec = next(t for t in TYPES if t[0] == kind)
        width = height = None
        if spec[4]:
            width, height = spec[4][seed % len(spec[4])]
        duration = float(seed % 300 + 5) if spec[5] else 0.0
        return {"id": version_id, "fileName": file_name, "ext": ext, "title": file_name, "description": None,
                "type": kind, "size": size, "createdAt": at, "uploadedAt": at, "updatedAt": at,
                "fileCreatedAt": recorded,
                "width": width, "height": height, "duration": duration, "tags": [], "smartTags": []}

    # --- imports -------------------------------------------------------------------------------

    def create_import(self, request: Request) -> Response:
        body = object_body(request, IMPORT_FIELDS)
        url = body.get("sourceUrl")
        parts = url_parts(url, "sourceUrl") if isinstance(url, str) else None
        if not isinstance(url, str) or parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise Reject(400, "sourceUrl must be a publicly accessible http(s) URL")
        target = self.target(body)
        name = parts.path.rstrip("/").rsplit("/", 1)[-1]
        stem, dot, url_ext = name.rpartition(".")
        file_name = text(body, "fileName") or (stem if dot else name) or "file"
        ext = (text(body, "ext") or (url_ext if dot else "") or "file").lstrip(".")
        title, description = text(body, "title"), text(body, "description")
        now = self.now_ms()
        recorded = instant(body.get("recordedAt"), "recordedAt") if body.get("recordedAt") else now
        record = {"title": title, "description": description, "id": self.new_id("imports"), "assetId": target["assetId"] or self.new_id("assets"),
                  "versionId": self.new_id("versions"), "status": "pending", "error": None, "sourceUrl": url,
                  "fileName": file_name, "ext": ext, "recordedAt": recorded, "created": now,
                  "outcome": outcome(url), "target": {**target, "existing": target["assetId"] is not None}}
        record["target"]["assetId"] = record["assetId"]
        self.imports[record["id"]] = record
        return Response(201, {"id": record["id"], "assetId": record["assetId"], "versionId": record["versionId"]})

    def import_status(self, request: Request) -> dict[str, Any]:
        record = self.imports.get(request.params["import_id"])
        if record is None:
            raise Reject(404, f"import {request.params['import_id']} not found")
        self.catch_up(self.now_ms())
        answer: dict[str, Any] = {"status": record["status"]}
        if record["error"]:
            answer["error"] = record["error"]
        return answer

    def catch_up(self, now: int) -> None:
        """Move every unfinished import to where the clock says it is."""
        for record in self.imports.values():
            if record["status"] in ("succeeded", "failed"):
                continue
            elapsed, failure = now - record["created"], record["outcome"]
            limit = TIMEOUT_MS if failure and failure[0] == "PROCESS_TIMED_OUT" else RUN_MS
            if elapsed < PENDING_MS:
                continue
            if elapsed < PENDING_MS + limit:
                record["status"] = "inProgress"
            elif failure:
                record["status"], record["error"] = "failed", {"type": failure[0], "message": failure[1]}
            else:
                record["status"] = "succeeded"
                done = record["created"] + PENDING_MS + RUN_MS
                seed = mix(int(hashlib.md5(record["sourceUrl"].encode()).hexdigest()[:15], 16))
                size = 100_000 + seed % 20_000_000
                version = self.version(record["versionId"], record["fileName"], record["ext"], size, done,
                                       record["recordedAt"], seed)
                if record.get("title"):
                    version["title"] = record["title"]
                if record.get("description") is not None:
                    version["description"] = record["description"]
                self.place(record["target"], version)

    # --- uploads -------------------------------------------------------------------------------

    def create_upload(self, request: Request) -> Response:
        body = object_body(request, UPLOAD_FIELDS)
        file_name, ext, mime = (text(body, name) for name in ("fileName", "ext", "mime"))
        for name, given in (("fileName", file_name), ("ext", ext), ("mime", mime)):
            if not given:
                raise Reject(400, f"{name} is required")
        size = body.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise Reject(400, "size is required: the file size in bytes, a positive integer")
        recorded = instant(body["recordedAt"], "recordedAt") if body.get("recordedAt") is not None else self.now_ms()
        target = self.target(body)
        asset_id, version_id = target["assetId"] or self.new_id("assets"), self.new_id("versions")
        upload = {"assetId": asset_id, "versionId": version_id, "fileName": file_name,
                  "ext": (ext or "").lstrip("."), "mime": mime, "size": size,
                  "recordedAt": recorded, "parts": {}, "done": None,
                  "target": {**target, "assetId": asset_id, "existing": target["assetId"] is not None}}
        if size <= SMALL_UPLOAD:
            token = self.ids.hex(32)
            self.tokens[token] = ("upload", upload)
            return Response(201, {"assetId": asset_id, "versionId": version_id,
                                  "uploadUrl": f"{request.root}/storage/uploads/{token}"})
        upload_id = self.new_id("uploads")
        upload["key"] = f"uploads/{asset_id}/{version_id}/{upload['fileName']}.{upload['ext']}"
        self.uploads[upload_id] = upload
        return Response(201, {"assetId": asset_id, "versionId": version_id, "multiPartUploadId": upload_id,
                              "key": upload["key"]})

    def _multipart(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        upload_id, key = text(body, "multiPartUploadId"), text(body, "key")
        if not upload_id or not key:
            raise Reject(400, "multiPartUploadId and key are required")
        upload = self.uploads.get(upload_id)
        if upload is None:
            raise Reject(404, f"multipart upload {upload_id} not found")
        if upload["key"] != key:
            raise Reject(400, f"key {key!r} does not belong to multipart upload {upload_id}")
        return upload_id, upload

    def upload_part(self, request: Request) -> Response:
        body = object_body(request, {"multiPartUploadId", "key", "partNumber"})
        upload_id, upload = self._multipart(body)
        number = body.get("partNumber")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_PART_NUMBER:
            raise Reject(400, f"partNumber must be an integer from 1 to {MAX_PART_NUMBER}")
        if upload["done"] is not None:
            raise Reject(404, f"multipart upload {upload_id} is already complete")
        token = self.ids.hex(32)
        self.tokens[token] = ("part", (upload_id, number))
        return Response(201, {"url": f"{request.root}/storage/parts/{token}"})

    def complete(self, request: Request) -> Response:
        body = object_body(request, {"multiPartUploadId", "key", "parts"})
        upload_id, upload = self._multipart(body)
        listed = body.get("parts")
        if not isinstance(listed, list) or not listed or not all(
                isinstance(p, dict) and isinstance(p.get("partNumber"), int) and isinstance(p.get("etag"), str)
                for p in listed):
            raise Reject(400, "parts must be a non-empty list of {etag, partNumber}")
        wanted = [(p["partNumber"], p["etag"].strip('"')) for p in listed]
        if upload["done"] is not None:
            if upload["done"] == wanted:
                return Response(204)                    # completing again with the same parts is a no-op
            raise Reject(404, f"multipart upload {upload_id} is already complete")
        numbers = [n for n, _ in wanted]
        if numbers != sorted(set(numbers)):
            raise Reject(400, "parts must be listed once each, in ascending partNumber order")
        chunks = []
        for position, (number, tag) in enumerate(wanted):
            part = upload["parts"].get(number)
            if part is None:
                raise Reject(400, f"part {number} was not uploaded")
            if part["etag"].strip('"') != tag:
                raise Reject(400, f"the etag of part {number} does not match the uploaded part")
            if position < len(wanted) - 1 and len(part["data"]) < MIN_PART:
                raise Reject(400, f"part {number} is smaller than 5 MiB and is not the last part")
            chunks.append(part["data"])
        data = b"".join(chunks)
        if len(data) != upload["size"]:
            raise Reject(400, f"the parts add up to {len(data)} bytes; the upload declared {upload['size']}")
        self._finish(upload, data)
        upload["done"] = wanted
        upload["parts"] = {}
        return Response(204)

    def _finish(self, upload: dict[str, Any], data: bytes) -> None:
        now = self.now_ms()
        self.blobs[upload["versionId"]] = data
        seed = int(hashlib.md5(data[:4096]).hexdigest()[:15], 16)
        self.place(upload["target"], self.version(upload["versionId"], upload["fileName"], upload["ext"],
                                                  len(data), now, upload["recordedAt"], seed))

    # --- the storage routes (pre-signed URLs: no credentials) ------------------------------------

    def put_small(self, request: Request) -> Response:
        kind, upload = self.tokens.get(request.params["token"], (None, None))
        if kind != "upload" or upload is None:
            return s3_error(403, "AccessDenied", "the upload URL is not valid")
        if len(request.body) != upload["size"]:
            return s3_error(400, "IncompleteBody",
                            f"the body has {len(request.body)} bytes; the upload declared {upload['size']}")
        if upload["done"] is None:
            self._finish(upload, request.body)
            upload["done"] = True
        else:
            self.blobs[upload["versionId"]] = request.body
        return Response(200, None, {"ETag": etag(request.body)})

    def put_part(self, request: Request) -> Response:
        kind, found = self.tokens.get(request.params["token"], (None, None))
        if kind != "part" or found is None:
            return s3_error(403, "AccessDenied", "the part upload URL is not valid")
        upload_id, number = found
        upload = self.uploads.get(upload_id)
        if upload is None or upload["done"] is not None:
            return s3_error(404, "NoSuchUpload", f"multipart upload {upload_id} is not in progress")
        tag = etag(request.body)
        upload["parts"][number] = {"etag": tag, "data": request.body}
        return Response(200, None, {"ETag": tag})

    def download(self, request: Request, version: dict[str, Any]) -> dict[str, Any]:
        """`{url, expiresAt}`: a URL signed with its expiry, valid for DOWNLOAD_TTL_MS of the clock."""
        expires = self.now_ms() + DOWNLOAD_TTL_MS
        name = quote(f"{version['fileName']}.{version['ext']}")
        url = (f"{request.root}/storage/files/{version['id']}/{name}"
               f"?expires={expires // 1000}&signature={self.signature(version['id'], expires // 1000)}")
        return {"url": url, "expiresAt": iso_ms(expires // 1000 * 1000)}

    def signature(self, version_id: str, expires: int) -> str:
        return hashlib.sha256(f"{self.signing_key}:{version_id}:{expires}".encode()).hexdigest()[:40]

    def get_file(self, request: Request) -> Response:
        version_id = request.params["version_id"]
        expires = request.arg("expires") or ""
        if not expires.isdigit() or request.arg("signature") != self.signature(version_id, int(expires)):
            return s3_error(403, "AccessDenied", "the download URL's signature does not match")
        if self.now_ms() > int(expires) * 1000:
            return s3_error(403, "AccessDenied", "Request has expired")
        i = self.space.version_asset(version_id)
        if i is None:
            return s3_error(404, "NoSuchKey", "the file no longer exists")
        version = self.space.version(i, version_id)
        headers = {"Content-Disposition": f"attachment; filename*=UTF-8''{quote(request.params['name'])}"}
        data = self.blobs.get(version_id)
        if data is None:
            length = min(version["size"], SYNTHETIC_CAP)
            line = f"{version_id} {version['fileName']}.{version['ext']}\n".encode()
            data = (line * (length // len(line) + 1))[:length]
            if version["size"] > SYNTHETIC_CAP:
                headers["x-sandbox-truncated"] = "true"
        headers["ETag"] = etag(data)
        return Response(200, data, headers, content_type=MIME.get(version["ext"].lower(), "application/octet-stream"))

    # --- seed -----------------------------------------------------------------------------------

    def seed(self, rng: Seeds, pick: list[tuple[str, str]], boards: list[str], now: int) -> None:
        """A few imports in each state and one multipart upload waiting for completion."""
        urls = [("https://media.partner-cdn.example/shoots/{n}/beach-golden-hour.jpg", 0),
                ("https://files.example.org/press/{n}/product-launch.mp4", 0),
                ("https://downloads.agency.example/{n}/logo-pack.zip", -10_000),
                ("https://media.partner-cdn.example/slow/{n}/conference-keynote.mov", -12_000),
                ("https://blocked.example/{n}/leaked.jpg", -HOUR),
                ("https://files.example.org/missing/{n}/brochure.pdf", -2 * HOUR),
                ("https://cdn.retailer.example/status/404/{n}/banner.png", -3 * HOUR),
                ("https://media.partner-cdn.example/slow/{n}/raw-footage.mov", -4 * HOUR)]
        for url, offset in urls:
            board = rng.choice(boards) if boards else None
            source = url.format(n=rng.randint(1000, 9999))
            name = source.rsplit("/", 1)[-1]
            record: dict[str, Any] = {
                "id": rng.uuid(), "assetId": rng.uuid(), "versionId": rng.uuid(), "status": "pending", "error": None,
                "sourceUrl": source, "fileName": name.rsplit(".", 1)[0], "ext": name.rsplit(".", 1)[1],
                "recordedAt": now + offset, "created": now + offset, "outcome": outcome(source),
                "target": {"assetId": None, "parentBoardId": board, "fields": {}, "tags": ["campaign"], "existing": False}}
            record["target"]["assetId"] = record["assetId"]
            self.imports[record["id"]] = record
        for asset_id, version_id in pick:            # imports that made seeded assets
            key = rng.uuid()
            self.imports[key] = {"id": key, "assetId": asset_id, "versionId": version_id, "status": "succeeded",
                                 "error": None, "created": now - 30 * HOUR, "outcome": None,
                                 "sourceUrl": f"https://media.partner-cdn.example/archive/{version_id[:8]}.jpg"}
        self.catch_up(now)
        # an upload of 6 MiB in one part, uploaded and waiting for completeMultipart
        asset_id, version_id, upload_id = rng.uuid(), rng.uuid(), rng.uuid()
        data = (b"sandbox multipart seed part\n" * (6 * MIB // 28 + 1))[:6 * MIB]
        self.uploads[upload_id] = {
            "assetId": asset_id, "versionId": version_id, "fileName": "keynote-cut", "ext": "mp4",
            "mime": "video/mp4", "size": len(data), "recordedAt": now - 48 * HOUR, "done": None,
            "key": f"uploads/{asset_id}/{version_id}/keynote-cut.mp4",
            "parts": {1: {"etag": etag(data), "data": data}},
            "target": {"assetId": asset_id, "parentBoardId": boards[0] if boards else None, "fields": {},
                       "tags": [], "existing": False}}
