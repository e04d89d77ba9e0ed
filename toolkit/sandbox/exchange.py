"""The sandbox's view of one exchange: Request (routed, with path params), Response, Reject, Part.

Kept apart from the emulator and the store so both can use them without importing each other.

    raise Reject(404, f"no asset {request.params['asset_id']}")
"""
from __future__ import annotations

__all__ = ["Headers", "INT64_MAX", "INT64_MIN", "Part", "Reject", "Request", "Response", "url_parts"]

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import Message
from typing import Any
from urllib.parse import SplitResult, parse_qs, urlsplit

import orjson

from toolkit.catalog.spec import Action

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Headers(dict):
    """Request headers; names are case-insensitive, as HTTP says."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__((k.lower(), v) for k, v in (items.items() if hasattr(items, "items") else items))

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


@dataclass(frozen=True)
class Part:
    """One part of a multipart body: a form field (`filename` None) or a file."""
    name: str
    data: bytes
    filename: str | None = None
    content_type: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


@dataclass
class Request:
    """An incoming request, already routed: `params` are the path params by their Python names."""
    method: str
    path: str                                   # after `/<service>`, without the query
    query: dict[str, list[str]]
    headers: Headers
    body: bytes
    service: str
    root: str                                   # http://host:port/<service>, as the client sees it
    base_url: str                               # root + the service's base path
    params: dict[str, str] = field(default_factory=dict)
    action: Action | None = None
    version: str = ""

    @property
    def url(self) -> str:
        """The request's own URL without its query, for links the service sends back."""
        return self.root + self.path

    def arg(self, name: str, default: Any = None) -> Any:
        """The first value of a query parameter (wire name), or `default`."""
        values = self.query.get(name)
        return values[0] if values else default

    def args(self, name: str, split: bool = False) -> list[str]:
        """Every value of a repeated query parameter; `split` also splits comma lists (`a,b`)."""
        values = self.query.get(name, [])
        if split:
            values = [v.strip() for value in values for v in value.split(",") if v.strip()]
        return values

    def int_arg(self, name: str, default: int | None = None) -> int | None:
        """An integer query parameter; a malformed one is the caller's 400, as on the real services."""
        value = self.arg(name)
        if value is None or value == "":
            return default
        try:
            number = int(value)
        except ValueError:
            raise Reject(400, f"{name} must be an integer, not {value[:40]!r}") from None
        # the services parse query numbers into 64-bit integers: a wider one is refused there too,
        # and here it would reach orjson, which cannot write it (a 500)
        if not INT64_MIN <= number <= INT64_MAX:
            raise Reject(400, f"{name} is out of range: {value[:40]!r} does not fit a 64-bit integer")
        return number

    def json(self) -> Any:
        if not self.body:
            return None
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError as error:
            raise Reject(400, f"malformed JSON body: {error}") from None

    def form(self) -> dict[str, str]:
        """An urlencoded body as a dict (the first value of a repeated field)."""
        fields = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[0] for k, v in fields.items()}

    def parts(self) -> list[Part]:
        """A multipart/form-data body, part by part, bytes kept exactly."""
        message = Message()
        message["content-type"] = self.headers.get("content-type", "")
        boundary = message.get_param("boundary")
        if not isinstance(boundary, str):
            raise Reject(400, "expected a multipart/form-data body")
        # the parts sit between "--boundary" lines; the body ends with "--boundary--"
        sections = self.body.split(b"--" + boundary.encode())[1:-1]
        parts = []
        for section in sections:
            head, _, data = section.removeprefix(b"\r\n").partition(b"\r\n\r\n")
            info = Message()
            for line in head.decode("utf-8", "replace").split("\r\n"):
                key, _, value = line.partition(":")
                info[key.strip()] = value.strip()
            name = info.get_param("name", header="content-disposition")
            filename = info.get_param("filename", header="content-disposition")
            parts.append(Part(str(name or ""), data.removesuffix(b"\r\n"),
                              str(filename) if filename is not None else None, info.get("content-type")))
        return parts

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts() if p.name == name), None)

    def bearer(self) -> str | None:
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None

    def basic(self) -> tuple[str, str] | None:
        """(user, password) from a Basic Authorization header."""
        scheme, _, encoded = self.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, _, password = base64.b64decode(encoded.strip()).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return user, password


def url_parts(value: str, name: str) -> SplitResult:
    """`value` split as a URL for a handler to check; one that cannot be split (`http://[::1`, a bad
    port) is the client's 400, as on the services, where urlsplit would raise a ValueError (a 500).

        parts = url_parts(body["sourceUrl"], "sourceUrl")
    """
    try:
        parts = urlsplit(value)
        parts.port      # noqa: B018 - a port that is not a number raises only when read
    except ValueError as error:
        raise Reject(400, f"{name} is not a valid URL ({error}): {value[:200]!r}") from None
    return parts


@dataclass
class Response:
    """An answer: `body` is a JSON-able object (serialised with orjson), bytes, or None (no body)."""
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None


class Reject(Exception):
    """Raised in a handler to answer an error in the service's own shape."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None, /, **extra: Any):
        # positional-only, so that an error body may carry fields named status, message or headers
        super().__init__(message)
        self.status, self.message, self.headers, self.extra = status, message, dict(headers or {}), extra
