"""What a Store shares with the loads it opens, and nothing more: the DuckDB connection and the lock it
is used under, the locks that make loads of one resource follow each other (their DDL would
conflict), and DuckDB's threads and memory while loads run. A Load is handed this, never the Store.

    handle = FileHandle(open_duckdb(path), path); with handle.lock: handle.con.execute(...)
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb

from toolkit.errors import WorkspaceError
from toolkit.storage.file import load_memory, query_memory


def load_threads() -> int:
    """DuckDB's threads while loads are open: all cores but the two a pull's walk and its typing
    helper keep busy (toolkit.pull.typist). On two cores DuckDB's parallel insert took more CPU than
    one thread, CPU the walk and the helper were waiting for (ARCHITECTURE.md)."""
    return int(os.environ.get("TOOLKIT_DUCKDB_LOAD_THREADS") or max(1, (os.cpu_count() or 2) - 2))


class FileHandle:
    """The workspace's DuckDB connection, shared under `lock` by the Store and its loads."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None,
                 closed: Callable[[], str] = lambda: "the workspace is closed") -> None:
        self._con: duckdb.DuckDBPyConnection | None = con
        self.path, self._closed = path, closed
        self.lock = threading.RLock()
        self._resource_locks: dict[tuple[str, str], threading.Lock] = {}
        self.owners: dict[tuple[str, str], int] = {}  # which thread has a load of a resource open
        self._loads_open, self._threads_before, self._memory_before = 0, None, None
        self._memory_setting = query_memory()  # what the analyst's queries get (file.query_memory)
        self._memory_shown = self._shown_memory()

    @property
    def closed(self) -> bool:
        return self._con is None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The shared connection; a closed workspace says so instead of failing somewhere in DuckDB."""
        if self._con is None:
            raise WorkspaceError(self._closed())
        return self._con

    def close(self) -> None:
        con, self._con = self._con, None
        if con is not None:
            con.close()

    def resource_lock(self, service: str, resource: str) -> threading.Lock:
        with self.lock:
            return self._resource_locks.setdefault((service, resource), threading.Lock())

    # -- DuckDB's threads and memory while loads run ---------------------------------------------------

    def loads_begin(self) -> None:
        """A load starts (under `lock`): the first sets DuckDB's threads to load_threads() and, in a
        file, its memory to load_memory()."""
        self._loads_open += 1
        if self._loads_open > 1:
            return
        self._threads_before = self.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        self.con.execute(f"SET threads = {load_threads()}")
        self._memory_before = None
        if self.path is not None:
            memory = self._memory_to_restore()
            try:
                self._set_memory(load_memory())
                self._memory_before = memory
            except duckdb.Error:  # a query of the analyst's holds more right now: the load shares its limit
                pass

    def loads_end(self) -> None:
        """A load ends (under `lock`): the last puts back the threads and the analyst's memory limit."""
        self._loads_open -= 1
        if self._loads_open:
            return
        self.con.execute(f"SET threads = {int(self._threads_before)}")
        if self._memory_before:
            self._restore_memory(self._memory_before)

    def release_memory(self) -> None:
        """Have DuckDB hand back the memory it keeps after a load, before a DataFrame is
        made: lowering the memory limit for a moment evicts its buffers and flushes its allocator.
        Only when no load is running in the workspace, which could need the memory meanwhile."""
        if self.path is None or self.owners:
            return
        setting = self._memory_to_restore()
        try:
            self._set_memory("8MB")
        except duckdb.Error:  # something holds more than that (a result being read): leave it be
            return
        self._restore_memory(setting)

    def _shown_memory(self) -> str:
        return self.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]

    def _memory_to_restore(self) -> str:
        """The memory limit to put back after lowering it: ours exactly while DuckDB shows what we set,
        else what it shows (the analyst SET another, which DuckDB shows rounded down)."""
        shown = self._shown_memory()
        if shown != self._memory_shown:
            shown_as = re.fullmatch(r"([\d.]+)\s*([A-Za-z]+)", shown)
            # DuckDB shows a tenth of the unit, rounded down: half a tenth more shows the same again
            self._memory_setting = f"{float(shown_as[1]) + 0.05:.2f}{shown_as[2]}" if shown_as else shown
        return self._memory_setting

    def _set_memory(self, setting: str) -> None:
        self.con.execute(f"SET memory_limit = '{setting}'")

    def _restore_memory(self, setting: str) -> None:
        self._set_memory(setting)
        self._memory_shown = self._shown_memory()
