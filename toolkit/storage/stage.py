"""A load's batches, kept until its commit without holding the workspace's file.

A pull walks for seconds or hours; the workspace's file is held only for its commit
(toolkit.storage.handle). Until then its typed batches wait here: in memory up to `STAGE_MEMORY`, then
each as an Arrow IPC file in a folder beside the workspace (on the disk the analyst chose for it, not
in a /tmp that may be memory), read back memory-mapped at the commit, so a pull of millions of rows
stays within bounded memory. A folder left by a process that died is removed by the next read-write
open of the workspace (`remove_abandoned`).

    stage = Stage(workspace_path, load_id); stage.add(table); for table in stage: ...; stage.close()
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from toolkit.storage.processes import alive, this_process

STAGE_MEMORY = 32 * 2**20  # bytes of batches kept in memory before they go to disk
_PREFIX = ".toolkit-stage-"


def _folder_of(workspace: Path | None) -> Path:
    return workspace.resolve().parent if workspace is not None else Path(tempfile.gettempdir())


class Stage:
    """The batches of one load, in the order they came."""

    def __init__(self, workspace: Path | None, load_id: str, memory: int = STAGE_MEMORY) -> None:
        # the owner is in the name, so a folder is never taken for abandoned before it says whose it is
        owner = this_process().replace("/", "~")
        self._where, self._name, self._memory = _folder_of(workspace), f"{_PREFIX}{owner}~{load_id}", memory
        self._entries: list[pa.Table | Path] = []
        self._held, self._folder = 0, None

    def add(self, table: pa.Table) -> None:
        if self._folder is None and self._held + table.nbytes <= self._memory:
            self._entries.append(table)
            self._held += table.nbytes
            return
        if self._folder is None:
            self._folder = self._where / self._name
            self._folder.mkdir(mode=0o700)
        path = self._folder / f"{len(self._entries):06d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self._entries.append(path)

    def __iter__(self) -> Iterator[pa.Table]:
        for entry in self._entries:
            yield entry if isinstance(entry, pa.Table) else pa.ipc.open_file(pa.memory_map(str(entry))).read_all()

    def close(self) -> None:
        self._entries, self._held = [], 0
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def remove_abandoned(workspace: Path) -> list[Path]:
    """Remove the stage folders beside a workspace whose process no longer lives; the ones removed."""
    removed = []
    for folder in _folder_of(workspace).glob(_PREFIX + "*"):
        owner = "/".join(folder.name.removeprefix(_PREFIX).split("~")[:3])
        if folder.is_dir() and not alive(owner) and os.access(folder, os.W_OK):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
