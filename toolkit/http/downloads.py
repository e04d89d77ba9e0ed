"""Downloads in one call: the translation service's three steps, and the client-side download step of
a URL, each with its try count, timeouts and size limit (the seed's document lists both).

    got = downloads.submission_files(tm, 1001, deliverable_target_ids=[90001])
    got.save("deliverables.zip"); got.names          # the zip's files
    got = downloads.deliverables(tm, 1001, languages=["fr-FR"])     # every fr-FR file; None: every language
    got.translated()["fr-FR"]["home.html"]; got.extract("translated/")
    downloads.target_file(tm, 1001, 90001).save("home.fr-FR.html")  # one target's file, no zip, no polling
    page = downloads.fetch_url("https://files.example.com/terms.csv", as_text=True).text

A submission's download is started, polled with its download id until `processingFinished` (at most
`polls` times, `interval` seconds apart), then fetched as a zip. Whatever has a `call(action, **params)`
can run it: a Client, or a workspace's Connection (which records the calls it makes).
"""
from __future__ import annotations

__all__ = ["Calls", "Downloaded", "Fetched", "INTERVAL", "MAX_TEXT_BYTES", "POLLS", "RETRY_STATUSES",
           "TEXT_TYPES", "TargetFile", "deliverables", "fetch_url", "prepare", "submission_files",
           "target_file", "write"]

import contextlib
import io
import os
import re
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import requests

from toolkit.errors import ToolkitError
from toolkit.http.session import HeadersStayHome

POLLS = 300                  # 300 polls 2 s apart: ten minutes for the service to prepare a zip
INTERVAL = 2.0
# Loading a download as text holds it in memory twice (bytes and str) and prints it in a notebook;
# the document says a limit applies without giving it, so 5 MiB, the largest part the toolkit uploads.
MAX_TEXT_BYTES = 5 * 1024 * 1024
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/yaml", "application/x-yaml",
              "application/csv", "+json", "+xml")
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)


class Calls(Protocol):
    def call(self, action: str, **params: Any) -> Any: ...


@dataclass
class Downloaded:
    """A submission's prepared zip: its bytes, its download id and how many polls it took."""
    download_id: Any
    data: bytes
    polls: int

    @property
    def names(self) -> list[str]:
        return [info.filename for info in self.files()]

    def files(self) -> list[zipfile.ZipInfo]:
        """The zip's entries (name, file_size, compress_size)."""
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            return archive.infolist()

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the zip to `path`, whole or not at all; an existing file is replaced only with
        `overwrite=True`."""
        return write(Path(path).expanduser(), self.data, overwrite, "files.zip")

    def read(self, name: str) -> bytes:
        """One file of the zip, by its name in `names`."""
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            try:
                return archive.read(name)
            except KeyError:
                raise KeyError(f"{name!r} is not in the download; its files: {self.names[:5]}") from None

    def translated(self) -> dict[str, dict[str, bytes]]:
        """The deliverables by language, then by the path of the source file they translate: the zip's
        `Sub_<id>_<locale>/[folders/]<stem>_<locale>_Translated/<name>` read back (sources, references
        and the manifest are left out)."""
        out: dict[str, dict[str, bytes]] = {}
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            for info in archive.infolist():
                found = _DELIVERABLE.match(info.filename)
                if found and not info.is_dir():
                    source = found["folders"] + found["name"]
                    out.setdefault(found["locale"], {})[source] = archive.read(info)
        return out

    def extract(self, folder: str | Path, overwrite: bool = False) -> list[Path]:
        """Every file of the zip written under `folder` with its path in the zip. Nothing is written
        when a name would land outside the folder, or a file exists and `overwrite` is not given."""
        root = Path(folder).expanduser()
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir()]
            targets = [_inside(root, info.filename) for info in infos]
            taken = [t for t in targets if t.exists()]
            if taken and not overwrite:
                raise FileExistsError(f"{len(taken)} file(s) exist under {root}, e.g. {taken[0]}: pass "
                                      "overwrite=True to replace them, or extract into another folder")
            for info, target in zip(infos, targets, strict=True):
                target.parent.mkdir(parents=True, exist_ok=True)
                write(target, archive.read(info), True, info.filename)
        return targets


@dataclass
class TargetFile:
    """One target's translated file, fetched as the body of one request."""
    submission_id: Any
    target_id: Any
    data: bytes

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the file to `path`, whole or not at all; an existing file only with `overwrite=True`."""
        return write(Path(path).expanduser(), self.data, overwrite, f"target-{self.target_id}")


_DELIVERABLE = re.compile(r"Sub_[^/]+_(?P<locale>[^/_]+)/(?P<folders>(?:[^/]+/)*?)[^/]+_(?P=locale)_Translated/"
                          r"(?P<name>[^/]+)\Z")


def _inside(root: Path, name: str) -> Path:
    """Where a zip entry goes under `root`; a name that would leave it (absolute, `..`) is refused."""
    target = (root / name).resolve()
    if name.startswith(("/", "\\")) or not target.is_relative_to(root.resolve()):
        raise ToolkitError(f"the download holds {name!r}, which would be written outside {root}; nothing was "
                           "written")
    return target


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


def prepare(client: Calls, submission_id: Any, *, polls: int = POLLS, interval: float = INTERVAL,
            wait: Callable[[float], None] = time.sleep, **what: Any) -> tuple[Any, int]:
    """Steps 1 and 2: start the download (source_files=True, deliverable_target_ids=[...],
    language_reference_files=[...]) and poll until it is prepared; (download id, polls made).
    Raises ToolkitError when it is not prepared after `polls` polls."""
    if polls < 1:
        raise ToolkitError(f"polls must be at least 1, not {polls}")
    started = client.call("translation.start_download", submission_id=submission_id, **what)
    download_id = started.get("downloadId") if isinstance(started, Mapping) else None
    if download_id is None:
        raise ToolkitError(f"translation.start_download gave no downloadId: {started!r}"[:300])
    if started.get("processingFinished"):
        return download_id, 0
    for made in range(1, polls + 1):
        wait(interval)
        answer = client.call("translation.start_download", submission_id=submission_id, download_id=download_id)
        if isinstance(answer, Mapping) and answer.get("processingFinished"):
            return download_id, made
    raise ToolkitError(f"download {download_id} of submission {submission_id} is still being prepared after "
                       f"{polls} polls {interval:g} s apart; poll again with prepare(..., download_id) or "
                       "raise polls")


def submission_files(client: Calls, submission_id: Any, *, polls: int = POLLS, interval: float = INTERVAL,
                     wait: Callable[[float], None] = time.sleep, **what: Any) -> Downloaded:
    """The three steps: start, poll until prepared, fetch the zip. Timeouts are the client's."""
    download_id, made = prepare(client, submission_id, polls=polls, interval=interval, wait=wait, **what)
    data = client.call("translation.download_files", download_id=download_id)
    return Downloaded(download_id, data, made)


def deliverables(client: Calls, submission_id: Any, languages: str | list[str] | None = None, *,
                 include_manifest: bool = False, polls: int = POLLS, interval: float = INTERVAL,
                 wait: Callable[[float], None] = time.sleep) -> Downloaded:
    """The translated files of a submission in `languages` (every target language of the submission when
    None), one zip through the three steps; `translated()` reads them back by language. A target not
    PROCESSED yet is the service's 400, which names it: nothing is downloaded then; so is a language
    whose every target was cancelled (name the other languages).

        downloads.deliverables(tm, 1001, ["fr-FR", "de-DE"]).extract("translated/")
    """
    if isinstance(languages, str):
        languages = [languages]
    if languages is None:
        record = client.call("translation.get_submission", submission_id=submission_id)
        languages = list(record.get("targetLanguages") or []) if isinstance(record, Mapping) else []
        if not languages:
            raise ToolkitError(f"submission {submission_id} names no target language; give languages=[...]")
    languages = list(dict.fromkeys(languages))
    if not languages:
        raise ToolkitError("give at least one language, or languages=None for all of them")
    return submission_files(client, submission_id, deliverable_languages=languages,
                            include_manifest=include_manifest, polls=polls, interval=interval, wait=wait)


def target_file(client: Calls, submission_id: Any, target_id: Any) -> TargetFile:
    """One target's translated file, as the body of one request (no zip, no polling); the target must be
    PROCESSED or DELIVERED, else the service's 400 says what it is."""
    data = client.call("translation.download_target_deliverable", submission_id=submission_id,
                       target_id=target_id)
    return TargetFile(submission_id, target_id, data)


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
