"""How a Python value goes on the wire, and a request ready to send (what previews show).

    prepared = client.prepare("asset_library.create_board", title="Q4")
    print(prepared.describe(client.redactor, client.auth_headers()))   # secrets masked
"""
from __future__ import annotations

import datetime as dt
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

from toolkit.errors import ToolkitError
from toolkit.http import Redactor, Secret
from toolkit.spec import Action, Param

MASK = "***"


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

    def query_string(self) -> str:
        """The query as sent: commas of comma-separated lists stay commas (RFC 3986 allows them there).
        Encoded as %2C, each made the query longer and cost urllib3 about 0.1 ms per request to check
        again, twice: 100 submission ids on every page of targets."""
        return urlencode(self.query, safe=",")

    def describe(self, redactor: Redactor, auth_headers: Mapping[str, str]) -> str:
        """The request as text, every secret masked."""
        url = self.url + (f"?{self.query_string()}" if self.query else "")
        lines = [f"{self.method} {url}"]
        lines += [f"{k}: {v}" for k, v in {**auth_headers, **self.headers}.items()]
        if self.json is not None:
            lines += ["", orjson.dumps(masked_body(self.json, self.action), option=orjson.OPT_INDENT_2).decode()]
        elif self.data:
            lines += ["", "&".join(f"{k}={v}" for k, v in masked_body(dict(self.data), self.action).items())]
        if self.files:
            lines += [f"[file {name}: {len(part[1]) if isinstance(part[1], bytes) else '…'} bytes]"
                      for name, part in self.files.items()]
        return redactor.scrub("\n".join(lines))


def masked_body(body: Any, action: Action) -> Any:
    secret_wires = {p.wire for p in action.params if p.secret}
    if isinstance(body, dict):
        return {k: (MASK if k in secret_wires and v else masked_body(v, action)) for k, v in body.items()}
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


def file_part(value: Any) -> tuple[str, Any]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, bytes | bytearray):
        return ("upload.bin", bytes(value))
    if isinstance(value, str | os.PathLike):
        return (os.path.basename(value), open(value, "rb"))  # streamed by requests as the part's body
    if isinstance(value, io.IOBase):
        return (os.path.basename(getattr(value, "name", "upload.bin")), value)
    raise ToolkitError(f"cannot upload a {type(value).__name__}")


