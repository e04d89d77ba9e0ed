"""The client-side download step of a URL, with its try count, timeouts and size limit (the seed's
document lists it), and what a download is written with: whole or not at all, never over a file unless
told. The translation service's own three download steps are toolkit.http.translation_downloads;
`toolkit.downloads` offers both under the name analysts use.

    page = downloads.fetch_url("https://files.example.com/terms.csv", as_text=True).text
"""
from __future__ import annotations

__all__ = ["MAX_TEXT_BYTES", "RETRY_STATUSES", "TEXT_TYPES", "Calls", "Fetched", "fetch_url", "write"]

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import requests

from toolkit.errors import ToolkitError
from toolkit.http.session import HeadersStayHome

# Loading a download as text holds it in memory twice (bytes and str) and prints it in a notebook;
# the document says a limit applies without giving it, so 5 MiB, the largest part the toolkit uploads.
MAX_TEXT_BYTES = 5 * 1024 * 1024
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/yaml", "application/x-yaml",
              "application/csv", "+json", "+xml")
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)


class Calls(Protocol):
    def call(self, action: str, **params: Any) -> Any: ...


def write(target: Path, data: bytes, overwrite: bool, example: str) -> Path:
    """`data` written to `target` whole or not at all; an existing file is replaced only with `overwrite`."""
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a folder: give a file name such as {target / example}")
    if not overwrite:
        try:  # created exclusively: a file that appears meanwhile is not ours to replace either
            file = target.open("xb")
        except FileExistsError:
            raise FileExistsError(f"{target} exists: pass overwrite=True to replace it, "
                                  "or save to another path") from None
        with file:
            try:
                file.write(data)
            except BaseException:  # a full disk: no half a file left behind
                target.unlink(missing_ok=True)
                raise
        return target
    handle, scratch = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
    return target


@dataclass
class Fetched:
    """What the client-side download step got: the asset's name, its bytes, its text when asked for."""
    name: str
    content: bytes
    content_type: str
    text: str | None = None


def fetch_url(url: str, *, method: str = "GET", name: str | None = None, tries: int = 3,
              connect_timeout: float = 10.0, read_timeout: float = 60.0, as_text: bool = False,
              follow_redirects: bool = True, headers: Mapping[str, str] | None = None,
              max_text_bytes: int = MAX_TEXT_BYTES, session: requests.Session | None = None,
              wait: Callable[[float], None] = time.sleep) -> Fetched:
    """The document's client-side download step: fetch a URL, trying up to `tries` times on a dropped
    connection, a timeout or a 408/429/5xx (1, 2, 4 s apart). `as_text` loads text content (JSON, XML,
    YAML, CSV, plain text) as `text`: binary content or more than `max_text_bytes` is refused."""
    if tries < 1:
        raise ToolkitError(f"tries must be at least 1, not {tries}")
    # the caller's headers (a file server's key) go to the URL given, never to where it redirects
    http = session or HeadersStayHome(private=(headers or {}).keys())
    last: str = ""
    for attempt in range(tries):
        if attempt:
            wait(float(2 ** (attempt - 1)))
        try:
            answer = http.request(method, url, headers=dict(headers or {}), timeout=(connect_timeout, read_timeout),
                                  allow_redirects=follow_redirects, stream=as_text)
        except (requests.ConnectionError, requests.Timeout) as error:
            last = type(error).__name__
            continue
        if answer.status_code in RETRY_STATUSES:
            last = f"{answer.status_code} {answer.reason}"
            answer.close()
            continue
        if answer.status_code >= 400:
            raise ToolkitError(f"{method} {url}: {answer.status_code} {answer.reason}")
        kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower()
        label = name or Path(requests.utils.urlparse(answer.url or url).path).name or "download"
        if not as_text:
            return Fetched(label, answer.content, kind)
        return _as_text(answer, label, kind, max_text_bytes)
    raise ToolkitError(f"{method} {url}: failed {tries} time(s), last with {last}")


def _as_text(answer: requests.Response, name: str, kind: str, limit: int) -> Fetched:
    if not any(kind.startswith(t) or kind.endswith(t) for t in TEXT_TYPES):
        answer.close()
        raise ToolkitError(f"{name} is {kind or 'of no content type'}: only text (JSON, XML, YAML, CSV, plain "
                           "text) can be loaded as text; fetch it without as_text for its bytes")
    chunks, size = [], 0
    for chunk in answer.iter_content(64 * 1024):       # stop reading at the limit, not after the whole body
        size += len(chunk)
        if size > limit:
            answer.close()
            raise ToolkitError(f"{name} is larger than {limit:,} bytes, the limit for loading it as text")
        chunks.append(chunk)
    content = b"".join(chunks)
    # requests guesses ISO-8859-1 for text/* without a charset; the formats named here are UTF-8 by default
    charset = answer.encoding if "charset=" in answer.headers.get("Content-Type", "").lower() else "utf-8"
    return Fetched(name, content, kind, content.decode(charset, errors="replace"))
