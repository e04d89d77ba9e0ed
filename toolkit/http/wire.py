"""How a Python value goes on the wire, and a request ready to send (what previews show).

    prepared = client.prepare("asset_library.create_board", title="Q4")
    print(prepared.describe(client.redactor, client.auth_headers()))   # secrets masked
"""
from __future__ import annotations

__all__ = ["Prepared", "Upload", "file_part", "masked_body", "opened_files", "wire_value"]

import dataclasses
import datetime as dt
import io
import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson
import requests

from toolkit.catalog.masking import MASK, secret_pair
from toolkit.catalog.spec import CONTENT_TYPES, Action, Param
from toolkit.errors import ToolkitError
from toolkit.http.session import IDEMPOTENT_METHODS, Redactor, Secret


@dataclass
class Prepared:
    """A request ready to send: what `preview()` shows (with secrets masked) and what `send` takes."""
    action: Action
    method: str
    url: str
    query: list[tuple[str, str]] = field(default_factory=list)
    json: Any = None
    data: Any = None
    files: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    redactor: Redactor | None = field(default=None, compare=False)

    @property
    def idempotent(self) -> bool:
        """Safe to send again after a 5xx or a dropped connection: GET, PUT, DELETE, a POST the catalog
        declares safe, a merge patch (applying it twice gives the same record). A JSON Patch is not:
        `add /tags/-` twice adds two tags."""
        if self.action.retry_safe or self.method in IDEMPOTENT_METHODS:
            return True
        return self.method == "PATCH" and self.headers.get("Content-Type") == CONTENT_TYPES["merge_patch"]

    @property
    def sent_url(self) -> str:
        """The URL exactly as it goes out, query included: what requests and urllib3 make of it."""
        request = requests.models.PreparedRequest()
        request.prepare_url(self.url, self.query_string() or None)
        return request.url

    def __repr__(self) -> str:
        lines = self.describe(self.redactor or Redactor(), {}).splitlines()
        return f"<Prepared {self.action.id}: {' | '.join(line for line in lines if line)}>"

    def query_string(self) -> str:
        """The query as sent: commas of comma-separated lists stay commas (RFC 3986 allows them there).
        Encoded as %2C, each made the query longer and urllib3 checked it again, twice, on every
        request: a hundred submission ids on every page of targets."""
        return urlencode(self.query, safe=",")

    def describe(self, redactor: Redactor, auth_headers: Mapping[str, str]) -> str:
        """The request as text, every secret masked."""
        secret_wires = {p.wire for p in self.action.params if p.secret}
        shown = dataclasses.replace(self, query=[(k, MASK if k in secret_wires else v) for k, v in self.query])
        lines = [f"{self.method} {shown.sent_url}"]
        lines += [f"{k}: {v}" for k, v in {**auth_headers, **self.headers}.items()]
        if self.json is not None:
            lines += ["", orjson.dumps(masked_body(self.json, self.action), option=orjson.OPT_INDENT_2).decode()]
        elif self.data:
            lines += ["", "&".join(f"{k}={v}" for k, v in masked_body(dict(self.data), self.action).items())]
        if self.files:
            lines += [f"[file {wire}: {part.name}, {_size(part)} bytes]" if part.name is not None
                      else f"[field {wire}: {_size(part)} bytes]" for wire, part in self.files.items()]
        return redactor.scrub("\n".join(lines))


def masked_body(body: Any, action: Action) -> Any:
    secret_wires = {p.wire for p in action.params if p.secret}
    if isinstance(body, dict):
        hidden = secret_pair(body)
        return {k: (MASK if (k in secret_wires or k == hidden) and v else masked_body(v, action))
                for k, v in body.items()}
    if isinstance(body, list):
        return [masked_body(v, action) for v in body]
    return body


def wire_value(param: Param, value: Any, in_query: bool) -> Any:
    """A Python value as the service wants it on the wire."""
    if isinstance(value, Secret):
        return value.reveal()
    if param.kind == "epoch_ms" and isinstance(value, dt.datetime | dt.date):
        if not isinstance(value, dt.datetime):
            value = dt.datetime.combine(value, dt.time(), dt.UTC)
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, dt.timedelta) and param.kind == "duration":
        return f"PT{int(value.total_seconds())}S"
    if in_query:
        if isinstance(value, bool):
            return "true" if value else "false"
        if param.kind == "boolean" and isinstance(value, str):
            return value.lower()
        if isinstance(value, list | tuple | set):
            values = [str(wire_value(param, v, True)) for v in value]
            return values if param.repeatable else ",".join(values)
    if param.kind == "boolean" and isinstance(value, str):
        return value.lower() == "true"
    if param.kind == "list" and isinstance(value, str) and not in_query:
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, set):
        return sorted(value)
    return value


class Upload:
    """A file part of a multipart request, opened afresh for each attempt and closed after it.

    A retried upload must send the whole file again: a file object read to its end by the first
    attempt would send an empty part and the call would still succeed. A path is opened per attempt
    and always closed; a file object of the caller's is rewound to where it stood and left open
    (it is theirs); one that cannot seek is sent once and never retried."""

    def __init__(self, name: str | None, source: Any, content_type: str | None = None) -> None:
        self.name, self.source, self.content_type = name, source, content_type
        self._start = source.tell() if _seekable(source) else None

    @property
    def repeatable(self) -> bool:
        return not isinstance(self.source, io.IOBase) or self._start is not None

    def size(self) -> int | None:
        if isinstance(self.source, bytes | bytearray):
            return len(self.source)
        if isinstance(self.source, str | os.PathLike):
            return os.path.getsize(self.source)
        return None

    @contextmanager
    def opened(self) -> Iterator[tuple]:
        """The part as requests takes it: (file name, bytes or an open file[, content type])."""
        extra = (self.content_type,) if self.content_type else ()
        if isinstance(self.source, bytes | bytearray):
            yield (self.name, bytes(self.source), *extra)
        elif isinstance(self.source, str | os.PathLike):
            with open(self.source, "rb") as handle:      # streamed by requests as the part's body
                yield (self.name, handle, *extra)
        else:
            if self._start is not None:
                self.source.seek(self._start)
            yield (self.name, self.source, *extra)

    def __repr__(self) -> str:
        return f"<file {self.name}: {_size(self)} bytes>"


def _size(part: Upload) -> str:
    size = part.size()
    return "…" if size is None else str(size)


def _seekable(source: Any) -> bool:
    try:
        return isinstance(source, io.IOBase) and source.seekable()
    except (OSError, ValueError):
        return False


def file_part(value: Any) -> Upload:
    if isinstance(value, tuple) and len(value) in (2, 3) and isinstance(value[0], str):
        return Upload(*value)
    if isinstance(value, bytes | bytearray):
        return Upload("upload.bin", bytes(value))
    if isinstance(value, str | os.PathLike):
        return Upload(os.path.basename(value), value)
    if isinstance(value, io.IOBase):
        return Upload(os.path.basename(str(getattr(value, "name", "upload.bin"))), value)
    raise ToolkitError(f"cannot upload a {type(value).__name__}")


@contextmanager
def opened_files(files: Mapping[str, Upload] | None) -> Iterator[dict[str, tuple] | None]:
    """Every file part opened for one attempt, all closed when it is over."""
    if not files:
        yield None
        return
    with ExitStack() as stack:
        yield {wire: stack.enter_context(part.opened()) for wire, part in files.items()}
