"""A load's batches, kept until its commit without holding the workspace's file.

A pull walks for seconds or hours; the workspace's file is held only for its commit
(toolkit.storage.handle). Until then its typed batches wait here: in memory up to `STAGE_MEMORY`, then
each as an Arrow IPC file in a folder beside the workspace (on the disk the analyst chose for it, not
in a /tmp that may be memory), read back memory-mapped at the commit, so a pull of millions of rows
stays within bounded memory. A folder left by a process that died is removed by the next read-write
open of the workspace (`remove_abandoned`), unless it holds a checkpoint.

A long load checkpoints (`Stage.checkpoint`): every batch goes to disk and a note says what the batches
hold (for a fan-out, the parents whose rows are all in them). A process killed mid-pull thus leaves a
folder that the next load with the same signature (workspace, service, base URL, resource, params,
and the load it builds on) takes over (`resumable`, `Stage.adopt`): it asks only for what the note
does not name, and commits the adopted batches with its own. Nothing of it is visible before that
commit. Each batch file's BLAKE2 digest is in the note, and a checkpoint is taken over only when every
file still matches it, and the note its own (`check`). A stage that may checkpoint (`checkpoints=True`:
a fan-out's) digests each file as it writes it; one that may not (a walk's, which has nothing to resume
from) spends nothing on digests unless a checkpoint comes all the same, which digests the files it
finds without one: hashing every batch cost a walk about a tenth of its CPU (benchmarks/fetch.py).
Without the digests a byte flipped on disk would be committed as data (a list read back as NULL) or
take a parent for done, so a damaged checkpoint is discarded, with one line saying so, and its parents
asked again. The parents done are kept in files of their own, one per checkpoint with those done since
the one before (`done-NNNNNN.json`, digested like the batches), which the note names: a note that
named every parent done grew with the pull, and a pull of 600,000 parents rewrote it hundreds of
times (quadratic time, and a note of tens of MB in memory at each). A checkpoint no load took over within `KEEP_CHECKPOINT` is removed like any abandoned folder.

    stage = Stage(workspace_path, load_id); stage.add(table); for table in stage: ...; stage.close()
"""
from __future__ import annotations

__all__ = ["Checkpoint", "KEEP_CHECKPOINT", "NOTE", "STAGE_MEMORY", "Stage", "digest", "discard",
           "remove_abandoned", "resumable"]

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from toolkit.storage.processes import alive, this_process

STAGE_MEMORY = 32 * 2**20  # bytes of batches kept in memory before they go to disk
_PREFIX = ".toolkit-stage-"
NOTE = "checkpoint.json"
KEEP_CHECKPOINT = 7 * 86_400  # seconds an abandoned checkpoint waits for a load to take it over


def _folder_of(workspace: Path | None) -> Path:
    return workspace.resolve().parent if workspace is not None else Path(tempfile.gettempdir())


class Stage:
    """The batches of one load, in the order they came."""

    def __init__(self, workspace: Path | None, load_id: str, memory: int = STAGE_MEMORY, *,
                 checkpoints: bool = True) -> None:
        # the owner is in the name, so a folder is never taken for abandoned before it says whose it is
        owner = this_process().replace("/", "~")
        self._where, self._name, self._memory = _folder_of(workspace), f"{_PREFIX}{owner}~{load_id}", memory
        self._entries: list[pa.Table | Path] = []
        self._held = 0
        self._folder: Path | None = None    # made on the first batch that spills
        self._digests: dict[str, str] = {}   # each batch file's digest, by name
        self._digesting = checkpoints        # digest each file as it is written (module docstring)
        self._done_files: list[str] = []     # the files of parents done, one per checkpoint
        self.damaged: str | None = None      # why a checkpoint offered to `adopt` was discarded

    def add(self, table: pa.Table) -> None:
        if self._folder is None and self._held + table.nbytes <= self._memory:
            self._entries.append(table)
            self._held += table.nbytes
            return
        path = self._own_folder() / f"{len(self._entries):06d}.arrow"
        self._write(table, path)
        self._entries.append(path)

    def _write(self, table: pa.Table, path: Path) -> None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        data = sink.getvalue()
        if self._digesting:
            self._digests[path.name] = digest(data)
        with open(path, "wb") as out:
            out.write(memoryview(data))

    def _own_folder(self) -> Path:
        if self._folder is None:
            self._folder = self._where / self._name
            self._folder.mkdir(mode=0o700)
        return self._folder

    def checkpoint(self, note: dict[str, Any], done: list | None = None) -> None:
        """Every batch so far to disk, then `note` (what they hold) beside them, replaced whole: a
        process killed at any moment leaves the previous note or this one, each true of its files.
        `done`: what was done since the previous checkpoint (a fan-out's parents), kept in a file of
        its own that the note names; `Checkpoint.done` gives all of it back."""
        folder = self._own_folder()
        # the file of what was done is this stage's only once the note names it: a checkpoint cut short
        # (Ctrl-C) before that leaves a file the next one writes over
        done_files = [*self._done_files, self._write_done(done)] if done else self._done_files
        for i, entry in enumerate(self._entries):
            if isinstance(entry, pa.Table):
                path = folder / f"{i:06d}.arrow"
                self._write(entry, path)
                self._entries[i] = path
        self._held = 0
        files = [entry.name for entry in self._entries]
        for name in files:          # written by a stage that did not expect to checkpoint
            if name not in self._digests:
                self._digests[name] = digest((folder / name).read_bytes())
        self._digesting = True
        written = folder / f".{NOTE}.tmp"
        named = [*files, *done_files]
        written.write_bytes(orjson.dumps(_sealed({**note, "files": files, "done_files": done_files,
                                                  "written": time.time(),
                                                  "digests": {name: self._digests[name] for name in named}})))
        os.replace(written, folder / NOTE)
        self._done_files = done_files

    def _write_done(self, done: list) -> str:
        name = f"done-{len(self._done_files):06d}.json"
        data = orjson.dumps(done)
        self._digests[name] = digest(data)
        (self._own_folder() / name).write_bytes(data)
        return name

    def adopt(self, checkpoint: Checkpoint) -> bool:
        """Take over an abandoned checkpoint's batches, before any batch of this stage's own; False when
        another process took it first (the folder is claimed by renaming it, which only one can)."""
        if self._entries or self._folder is not None:
            raise RuntimeError("a stage adopts a checkpoint before its own batches")
        mine = self._where / self._name
        try:
            os.rename(checkpoint.folder, mine)
        except OSError:
            return False
        self._folder = mine
        (mine / NOTE).unlink(missing_ok=True)   # the note is the dead load's; this one writes its own
        files, digests = checkpoint.note["files"], checkpoint.note.get("digests") or {}
        done_files = list(checkpoint.note.get("done_files") or [])
        for name in [None, *files, *done_files]:
            self.damaged = checkpoint.damaged if name is None else _damage(mine / name, digests.get(name))
            if self.damaged:
                self.close()
                return False
        self._entries = [mine / name for name in files]
        self._digests = {name: digests[name] for name in [*files, *done_files]}
        self._done_files = done_files
        if checkpoint.note.get("done"):     # an older note's own list: kept as this stage's first file
            self._done_files = [self._write_done(checkpoint.note["done"])]
        return True

    def __iter__(self) -> Iterator[pa.Table]:
        for entry in self._entries:
            yield entry if isinstance(entry, pa.Table) else pa.ipc.open_file(pa.memory_map(str(entry))).read_all()

    @property
    def checkpointed(self) -> bool:
        return self._folder is not None and (self._folder / NOTE).exists()

    def release(self) -> None:
        """Leave a checkpointed folder for a later load, of this process or another, to take over (a
        pull that failed in this process, where its owner still lives: it is renamed as no one's)."""
        if self.checkpointed and self._folder is not None:
            host = self._name.removeprefix(_PREFIX).split("~")[0]
            load = self._name.rsplit("~", 1)[-1]
            os.rename(self._folder, self._where / f"{_PREFIX}{host}~0~~{load}")
            self._entries, self._held, self._folder = [], 0, None
        self.close()

    def close(self) -> None:
        self._entries, self._held = [], 0
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def digest(data: Any) -> str:
    return hashlib.blake2b(memoryview(data), digest_size=16).hexdigest()


def _sealed(note: dict[str, Any]) -> dict[str, Any]:
    """The note with the digest of its own canonical JSON (`check`): a flipped digit in its `done`
    list is still JSON, and would have a parent taken for done whose rows no batch holds."""
    return {**note, "check": digest(orjson.dumps(note, option=orjson.OPT_SORT_KEYS))}


def _note_damage(note: dict[str, Any]) -> str | None:
    """Why a checkpoint's note cannot be trusted, or None when it matches its own digest."""
    rest = {key: value for key, value in note.items() if key != "check"}
    if "check" not in note:
        return f"{NOTE} has no checksum (a checkpoint of an older toolkit)"
    return None if note["check"] == digest(orjson.dumps(rest, option=orjson.OPT_SORT_KEYS)) \
        else f"{NOTE} does not match its checksum"


def _damage(path: Path, expected: str | None) -> str | None:
    """Why a checkpoint's batch file cannot be taken over, or None when it matches its digest."""
    if expected is None:
        return f"{path.name} has no checksum (a checkpoint of an older toolkit)"
    try:
        found = digest(path.read_bytes())
    except OSError as error:
        return f"{path.name} cannot be read ({error.strerror or error})"
    return None if found == expected else f"{path.name} does not match its checksum"


@dataclass(frozen=True)
class Checkpoint:
    """A stage folder whose process died after a checkpoint: its note, and where it is; `damaged` says
    why its note fails its own digest (it is then discarded, never taken over)."""
    folder: Path
    note: dict[str, Any]
    damaged: str | None = None

    def done(self) -> list | None:
        """Everything the checkpoints said was done (`Stage.checkpoint`), in order; None when a file of
        it is damaged (taking the checkpoint over then discards it, and says so)."""
        if self.damaged:
            return None
        found = list(self.note.get("done") or [])       # a note of an older toolkit lists them itself
        digests = self.note.get("digests") or {}
        for name in self.note.get("done_files") or []:
            if _damage(self.folder / name, digests.get(name)):
                return None
            found.extend(orjson.loads((self.folder / name).read_bytes()))
        # a checkpoint cut short after its note was written, before the pull counted it, has the next
        # one name some parents again
        return list(dict.fromkeys(found))


def _abandoned(workspace: Path | None) -> Iterator[Path]:
    for folder in _folder_of(workspace).glob(_PREFIX + "*"):
        owner = "/".join(folder.name.removeprefix(_PREFIX).split("~")[:3])
        if folder.is_dir() and not alive(owner) and os.access(folder, os.W_OK):
            yield folder


def _note(folder: Path) -> dict[str, Any] | None:
    try:
        note = orjson.loads((folder / NOTE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return note if isinstance(note, dict) and isinstance(note.get("files"), list) else None


def resumable(workspace: Path | None, signature: dict[str, Any]) -> Checkpoint | None:
    """The newest abandoned checkpoint of a load with this signature, or None."""
    found = [Checkpoint(folder, note, _note_damage(note)) for folder in _abandoned(workspace)
             if (note := _note(folder)) is not None and note.get("signature") == signature]
    return max(found, key=lambda c: _written(c.note), default=None)


def _written(note: dict[str, Any]) -> float:
    written = note.get("written")
    return float(written) if isinstance(written, int | float) else 0.0


def discard(workspace: Path | None, signature: dict[str, Any]) -> None:
    """Remove the abandoned checkpoints of loads with this signature: a load like theirs committed."""
    for folder in _abandoned(workspace):
        note = _note(folder)
        if note is not None and note.get("signature") == signature:
            shutil.rmtree(folder, ignore_errors=True)


def remove_abandoned(workspace: Path) -> list[Path]:
    """Remove the stage folders beside a workspace whose process no longer lives, but for checkpoints
    younger than KEEP_CHECKPOINT (a load may take them over); the ones removed."""
    removed = []
    for folder in _abandoned(workspace):
        note = _note(folder)
        if note is not None and time.time() - _written(note) < KEEP_CHECKPOINT:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
