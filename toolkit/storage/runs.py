"""A run of many loads (`toolkit pull`, `ws.refresh()`), resumable when its process dies.

A run notes each resource it completes in a small file beside the workspace, named by a hash of what
the run was asked (so it holds no secret and no param), with its owner. A run asked the same thing
after its owner died finds the note and does not pull again what was completed then and is still the
resource's latest load; the load that was walking when it died resumes from its own checkpoint
(toolkit.storage.stage). A run that ends removes its note (a failed resource is asked again by the
next run anyway); one interrupted by Ctrl-C leaves it, as no one's, for the next.

    with Run(store_path, where, {"pull": "translation", ...}) as run:
        if run.resumed.get("translation.targets") ...; run.done("translation.targets", load_id)
"""
from __future__ import annotations

__all__ = ["Run"]

import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import orjson

from toolkit.storage.processes import alive, this_process

_PREFIX = ".toolkit-run-"


class Run:
    """One run's note: `resumed` (resource → load id) is what a dead run of the same ask completed."""

    def __init__(self, workspace: Path | None, where: str, asked: dict[str, Any]) -> None:
        folder = workspace.resolve().parent if workspace is not None else Path(tempfile.gettempdir())
        where = str(workspace.resolve()) if workspace is not None else where   # however the path was spelt
        digest = hashlib.sha256(orjson.dumps({"where": where, **asked}, option=orjson.OPT_SORT_KEYS,
                                             default=str)).hexdigest()[:20]
        self.path = folder / f"{_PREFIX}{digest}.json"
        self.resumed: dict[str, str] = {}
        self._done: dict[str, str] = {}
        self._lock = threading.Lock()
        self._mine = True
        found = self._read()
        if found is not None:
            if alive(found.get("owner")):
                self._mine = False      # the same run in another process, still going: leave it be
            else:
                self.resumed = dict(found.get("done") or {})
                self._done = dict(self.resumed)
        if self._mine:
            self._write()

    def _read(self) -> dict[str, Any] | None:
        try:
            found = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        return found if isinstance(found, dict) else None

    def _write(self) -> None:
        written = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            written.write_bytes(orjson.dumps({"owner": this_process(), "done": self._done}))
            os.replace(written, self.path)
        except OSError:             # a folder we may not write: the run is simply not resumable
            self._mine = False

    def done(self, resource: str, load_id: str) -> None:
        """A resource the run completed (its load committed)."""
        if self._mine:
            with self._lock:
                self._done[resource] = load_id
                self._write()

    def close(self, interrupted: bool = False) -> None:
        """The run ended: its note goes, unless it was interrupted (Ctrl-C), when it is left as no
        one's for the next run to resume."""
        if self._mine:
            if interrupted:
                with self._lock:
                    self._done = {**self._done}
                    written = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
                    written.write_bytes(orjson.dumps({"owner": "", "done": self._done}))
                    os.replace(written, self.path)
            else:
                self.path.unlink(missing_ok=True)
            self._mine = False

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(interrupted=kind is not None and not issubclass(kind, Exception))
