"""HTTP/1.1 messages on a connection: reading a request (its head, its body's length, its body) and
encoding an answer in one buffer.

Whatever a client sends, a malformed request ends in `Malformed(status, message)`, the answer a real
server gives (RFC 9112), never in a traceback: a bad request line or header 400, an unsupported
version 505, a head too large 431, a Content-Length that is not one number 400 (a duplicate with the
same value is the one allowed repetition), a body-bearing method with no length 411, a body larger
than the server takes 413, a transfer coding other than chunked 501, a bad chunk 400, a body that
stops arriving 408.

    method, target, version, headers = read_head(rfile, first_line)
    length = body_length(method, headers, max_body)     # CHUNKED or a byte count
    body = read_body(rfile, length, max_body)
    connection.sendall(encode(Response(200, {"ok": True})))
"""
from __future__ import annotations

__all__ = ["ByteStream", "CHUNKED", "MAX_HEADERS", "MAX_LINE", "Malformed", "PHRASES", "body_length", "encode", "read_body",
           "read_head"]

import re
from http import HTTPStatus
from typing import Protocol

import orjson

from toolkit.sandbox.exchange import Headers, Response

CHUNKED = -1                       # body_length's answer for a chunked body
MAX_LINE = 65536                   # a request line or a header line, as http.server allows
MAX_HEADERS = 100                  # header lines, as http.client and http.server allow
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")   # RFC 9110 methods
_VERSION = re.compile(r"HTTP/\d\.\d\Z")
_DIGITS = re.compile(r"\d{1,18}\Z")                        # fits an int64; anything longer is refused
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,15}\Z")
_BODY_METHODS = ("POST", "PUT", "PATCH")
PHRASES = {s.value: s.phrase for s in HTTPStatus}


class Malformed(Exception):
    """A request the server answers with `status` and closes the connection after."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class ByteStream(Protocol):
    """A connection's buffered reader (the server's rfile, or a test's BytesIO)."""
    def read(self, size: int = -1, /) -> bytes: ...
    def readline(self, size: int = -1, /) -> bytes: ...


def read_head(rfile: ByteStream, line: bytes) -> tuple[str, str, str, Headers]:
    """(method, target, version, headers) of the request whose first line is `line`."""
    if len(line) > MAX_LINE:
        raise Malformed(414, "request line too long")
    words = line.decode("latin-1").split()
    if len(words) != 3 or not _TOKEN.match(words[0]) or not _VERSION.match(words[2]):
        raise Malformed(400, "malformed request line")
    method, target, version = words
    if not version.startswith("HTTP/1."):
        raise Malformed(505, f"{version} is not supported; speak HTTP/1.1")
    headers = Headers()
    for _ in range(MAX_HEADERS + 1):
        raw = rfile.readline(MAX_LINE + 1)
        if raw in (b"\r\n", b"\n"):
            return method, target, version, headers
        if not raw.endswith(b"\n"):
            if len(raw) > MAX_LINE:
                raise Malformed(431, "a header line is too long")
            raise Malformed(400, "the request head ended before its blank line")
        text = raw.decode("latin-1")
        name, colon, value = text.partition(":")
        # no space before the colon, no folded continuation lines: both are smuggling vectors (a
        # whitespace test, not the token regex: this runs for every header of every request)
        if not colon or not name or name.strip() != name or " " in name:
            raise Malformed(400, f"malformed header line {text.strip()[:80]!r}")
        name, value = name.lower(), value.strip()
        if dict.__contains__(headers, name):
            value = f"{dict.__getitem__(headers, name)}, {value}"
        dict.__setitem__(headers, name, value)
    raise Malformed(431, f"more than {MAX_HEADERS} header lines")


def body_length(method: str, headers: Headers, max_body: int) -> int:
    """The announced body's size in bytes, or CHUNKED."""
    coding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if coding is not None:
        if length is not None:
            raise Malformed(400, "Content-Length and Transfer-Encoding together")
        if coding.strip().lower() != "chunked":
            raise Malformed(501, f"transfer coding {coding!r} is not supported; send chunked or a Content-Length")
        return CHUNKED
    if length is None:
        if method in _BODY_METHODS:
            raise Malformed(411, f"{method} needs a Content-Length (0 for no body) or a chunked body")
        return 0
    values = {v.strip() for v in length.split(",")}
    if len(values) != 1 or not _DIGITS.match(next(iter(values))):
        raise Malformed(400, f"Content-Length must be one non-negative integer, not {length[:40]!r}")
    size = int(values.pop())
    if size > max_body:
        raise Malformed(413, f"the body of {size:,} bytes is larger than the {max_body:,} this server takes")
    return size


def read_body(rfile: ByteStream, length: int, max_body: int) -> bytes:
    """The body of `length` bytes (or chunked); a read that times out raises TimeoutError."""
    if length == CHUNKED:
        return _chunked(rfile, max_body)
    body = rfile.read(length) if length else b""
    if len(body) < length:
        raise Malformed(400, f"the body ended after {len(body):,} of the {length:,} bytes announced")
    return body


def _chunked(rfile: ByteStream, max_body: int) -> bytes:
    chunks, total = [], 0
    while True:
        line = rfile.readline(MAX_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        if not line.endswith(b"\n") or not _CHUNK_SIZE.match(size_text):
            raise Malformed(400, f"malformed chunk size line {line[:40]!r}")
        size = int(size_text, 16)
        if size == 0:
            break
        total += size
        if total > max_body:
            raise Malformed(413, f"the chunked body is larger than the {max_body:,} bytes this server takes")
        chunk = rfile.read(size)
        if len(chunk) < size or rfile.readline(3) not in (b"\r\n", b"\n"):
            raise Malformed(400, "a chunk is shorter than its size or not followed by CRLF")
        chunks.append(chunk)
    for _ in range(MAX_HEADERS + 1):      # trailers, read and dropped
        line = rfile.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return b"".join(chunks)
        if not line.endswith(b"\n"):
            raise Malformed(400, "the chunked body ended before its last CRLF")
    raise Malformed(431, f"more than {MAX_HEADERS} trailer lines")


def encode(response: Response, close: bool = False, date: str | None = None) -> bytes:
    """Status line, headers and body as one buffer, written with one call; `date` is the Date header
    (RFC 9110: a server with a clock sends one), the sandbox's virtual clock as an HTTP date."""
    body = response.body
    content_type = response.content_type
    if body is None:
        payload = b""
    elif isinstance(body, bytes | bytearray):
        payload = bytes(body)
        content_type = content_type or "application/octet-stream"
    elif isinstance(body, str) and content_type:
        payload = body.encode()
    else:
        try:
            payload = orjson.dumps(body)
        except TypeError:
            # integer keys (counts by id) are rare; the option that allows them halves orjson's speed
            payload = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
        content_type = content_type or "application/json"
    lines = [f"HTTP/1.1 {response.status} {PHRASES.get(response.status, 'Unknown')}"]
    if date:
        lines.append(f"Date: {date}")
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if response.status != 204 and response.status >= 200:   # RFC 9110: 204 carries no Content-Length
        lines.append(f"Content-Length: {len(payload)}")
    lines.extend(f"{k}: {v}" for k, v in response.headers.items())
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
