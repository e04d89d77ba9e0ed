"""The translation service's downloads in one call: a submission's three steps (start, poll until
prepared, fetch the zip) and one target's file. A module named for its service: it spells the
service's own actions, as the catalog names them.

    got = downloads.submission_files(tm, 1001, deliverable_target_ids=[90001])
    got.save("deliverables.zip"); got.names          # the zip's files
    got = downloads.deliverables(tm, 1001, languages=["fr-FR"])     # every fr-FR file; None: every language
    got.translated()["fr-FR"]["home.html"]; got.extract("translated/")
    downloads.target_file(tm, 1001, 90001).save("home.fr-FR.html")  # one target's file, no zip, no polling

A submission's download is started, polled with its download id until `processingFinished` (at most
`polls` times, `interval` seconds apart), then fetched as a zip. Whatever has a `call(action, **params)`
can run it: a Client, or a workspace's Connection (which records the calls it makes).
"""
from __future__ import annotations

__all__ = ["INTERVAL", "POLLS", "Downloaded", "TargetFile", "deliverables", "prepare", "submission_files",
           "target_file"]

import io
import re
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.errors import ToolkitError
from toolkit.http.downloads import Calls, write

POLLS = 300                  # 300 polls 2 s apart: ten minutes for the service to prepare a zip
INTERVAL = 2.0

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
