"""What a Store shares with the loads it opens, and nothing more: the DuckDB file and how it is held,
the locks that make loads of one resource follow each other in this process, and DuckDB's threads and
memory while loads commit. A Load is handed this, never the Store.

A file workspace is held only while it is read or committed: `held()` opens DuckDB's file (which locks
it: one process writes a file, or several read it) and lets it go once it has been idle for `LINGER`,
so that a cron refresh and a notebook take turns rather than lock each other out. A process that finds
the file held waits, saying once who holds it and what for if the wait lasts a second, up to `wait` seconds (60 by default, or
TOOLKIT_WORKSPACE_WAIT), and then raises WorkspaceBusyError. A workspace in memory is held for good.

    handle = FileHandle(path)
    with handle.held("committing translation.targets") as con: con.execute(...)
"""
from __future__ import annotations

__all__ = ["FileHandle", "LINGER", "RECONNECT_SECONDS", "SAY_AFTER", "WAIT", "holder_note", "load_threads",
           "wait_seconds"]

import contextlib
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb

from toolkit.errors import (
    LakeUnreachableError,
    WorkspaceBusyError,
    WorkspaceDamagedError,
    WorkspaceError,
    WorkspaceInUseError,
    WorkspaceOpenHereError,
)
from toolkit.storage.file import damaged, load_memory, open_duckdb, query_memory, session
from toolkit.storage.lake import CATALOG, Lake, masked, masked_error, orphan_age, orphans, unreachable

# seconds the file stays open after its last use: a pull's bookkeeping reads in bursts, and an open
# costs about 25 ms, while a process waiting for the file waits this long at most beyond the last use
LINGER = 0.1
WAIT = 60.0  # seconds a call waits for a file another process holds, unless told (TOOLKIT_WORKSPACE_WAIT)
RECONNECT_SECONDS = 10.0  # how long a lake whose catalog went away is tried again before its load fails
SAY_AFTER = 1.0  # a wait is told once it has lasted this long: most last one commit, a fraction of a second


def load_threads() -> int:
    """DuckDB's threads while loads are open: all cores but two (a pull's walk keeps one busy; other
    work, or its typing helper when on, another). On two cores DuckDB's parallel insert took more CPU than
    one thread, CPU the walk and the helper were waiting for (docs/architecture/pull-speed.md)."""
    return int(os.environ.get("TOOLKIT_DUCKDB_LOAD_THREADS") or max(1, (os.cpu_count() or 2) - 2))


def wait_seconds(given: float | None = None) -> float:
    """How long a call waits for the file: `given`, else TOOLKIT_WORKSPACE_WAIT, else 60 s."""
    if given is not None:
        return max(0.0, float(given))
    text = os.environ.get("TOOLKIT_WORKSPACE_WAIT")
    try:
        return max(0.0, float(text)) if text else WAIT
    except ValueError:
        raise WorkspaceError(f"TOOLKIT_WORKSPACE_WAIT={text!r} is not a number of seconds") from None


def holder_note(path: Path) -> Path:
    """The small file beside a workspace saying which process holds it, and what for."""
    return path.with_name(f".{path.name}.holder")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class FileHandle:
    """The workspace's DuckDB file, held under `lock` by the Store and its loads, and only while used."""

    def __init__(self, path: Path | None, read_only: bool = False, wait: float | None = None,
                 closed: Callable[[], str] = lambda: "the workspace is closed",
                 say: Callable[[str], None] | None = None, lake: Lake | None = None,
                 seal: Callable[[duckdb.DuckDBPyConnection], object] | None = None) -> None:
        self.path, self.read_only, self._closed, self.lake = path, read_only, closed, lake
        self.seal = seal  # applied to every connection opened, before any query (toolkit.storage.sealed)
        self.wait, self.say = wait_seconds(wait), say or _to_stderr
        self.lock = threading.RLock()
        self._idle = threading.Condition(self.lock)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._depth, self._last_used, self._shut = 0, 0.0, False
        self._closer: threading.Thread | None = None
        self._resource_locks: dict[tuple[str, str], threading.Lock] = {}
        self.owners: dict[tuple[str, str], int] = {}  # which thread has a load of a resource open
        self._loads_open, self._threads_before = 0, 0   # DuckDB's threads before the first load set them
        self._memory_before: str | None = None
        self._memory_setting = self._memory_shown = ""
        self.opened = 0  # how many times the file was opened: what holding it only while used costs
        self._gave_up = False  # a lake's last reconnection waited its whole time in vain
        self._swept = False    # a lake's files of killed commits were looked for by this process
        if path is None:  # in memory, or a lake (whose catalog serves many processes): held until closed
            self._adopt(lake.open(read_only) if lake is not None else open_duckdb(None))

    @property
    def closed(self) -> bool:
        return self._shut

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection, inside `held()`; a closed workspace says so instead of failing in DuckDB."""
        if self._shut:
            raise WorkspaceError(self._closed())
        if self._con is None or not self._depth:
            raise RuntimeError("the workspace's connection is used outside FileHandle.held()")
        return self._con

    @contextlib.contextmanager
    def held(self, what: str = "reading") -> Iterator[duckdb.DuckDBPyConnection]:
        """The file, opened (after waiting for another process that holds it) and kept for the block;
        `what` is what another process waiting for it is told this one holds it for."""
        with self.lock:
            if self._shut:
                raise WorkspaceError(self._closed())
            if self._con is None:
                self._adopt(self._reconnect(self.lake) if self.lake is not None else self._open(what))
            elif what != "reading" and not self._depth:
                self._note(what)
            self._depth += 1
            try:
                yield self.con
            except duckdb.Error as error:
                if self.lake is None:
                    detail = damaged(error) if self.path is not None else None
                    if detail is None:
                        raise
                    raise WorkspaceDamagedError(self.path, detail) from None
                if unreachable(error):    # the next held() connects again, and the other loads go on
                    self._lose()
                    raise LakeUnreachableError(f"the team workspace {self.lake.shown} lost its catalog "
                                               f"({masked(str(error).splitlines()[0])[:200]}); nothing of this "
                                               "step was kept: try again once it is back") from None
                shown = masked_error(error)   # one place for every statement a lake's workspace runs
                if shown is error:
                    raise
                raise shown from None
            finally:
                self._depth -= 1
                if not self._depth and self.path is not None:
                    self._last_used = time.monotonic()
                    self._close_when_idle()

    def _lose(self) -> None:
        """Let go of a lake's connection whose catalog went away: DuckDB may have invalidated its
        database, and every later statement on it would fail the same way."""
        con, self._con = self._con, None
        with contextlib.suppress(Exception):
            if con is not None:
                con.close()

    def _reconnect(self, lake: Lake) -> duckdb.DuckDBPyConnection:
        """A lake's connection again after its catalog went away: tried with a growing pause for up to
        `RECONNECT_SECONDS` (TOOLKIT_LAKE_RECONNECT), once only while the previous try already waited
        that long in vain, so that a refresh's remaining resources each fail at once, not a minute each."""
        patience = 0.0 if self._gave_up else float(os.environ.get("TOOLKIT_LAKE_RECONNECT", RECONNECT_SECONDS))
        started, pause = time.monotonic(), 0.25
        while True:
            try:
                con = lake.open(self.read_only)
                self._gave_up = False
                return con
            except LakeUnreachableError:
                if time.monotonic() - started + pause > patience:
                    self._gave_up = True
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 4.0)

    def sweep_once(self) -> list[str]:
        """After this process's first commit to a lake, the files killed commits left removed (those
        older than TOOLKIT_LAKE_ORPHAN_AGE, 600 s): once a process, since listing an object store's
        folder on every commit would cost more than the files do. The paths removed; never raises."""
        if self.lake is None or self.read_only or self._swept:
            return []
        self._swept = True
        try:
            with self.held("removing files of killed commits") as con:
                return orphans(con, orphan_age(), dry_run=False)
        except Exception:   # the load committed all the same; the next process tries again
            return []

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of the held connection, with its settings and, in a lake, the lake as its catalog."""
        cursor = self.con.cursor()
        if self.seal is None:  # a sealed connection's settings are locked, and its cursors inherit them
            session(cursor)
        if self.lake is not None:
            cursor.execute(f"USE {CATALOG}")
        return cursor

    def close(self) -> None:
        with self.lock:
            self._shut = True
            self._release()
            self._idle.notify_all()

    def resource_lock(self, service: str, resource: str) -> threading.Lock:
        with self.lock:
            return self._resource_locks.setdefault((service, resource), threading.Lock())

    # -- opening and letting go ------------------------------------------------------------------------

    def _open(self, what: str) -> duckdb.DuckDBPyConnection:
        """A connection to the file, waiting while another process holds it (the module docstring)."""
        started, said, pause = time.monotonic(), False, 0.01
        while True:
            try:
                con = open_duckdb(self.path, self.read_only)
                break
            except WorkspaceInUseError as busy:
                waited = time.monotonic() - started
                holder = self._holder(busy)
                if waited >= self.wait:     # the whole wait, the last try at its end
                    if isinstance(busy, WorkspaceOpenHereError) and waited < LINGER:
                        raise   # nothing was waited for: say what is open in this process, and how
                    raise WorkspaceBusyError(self.path, waited, holder, busy.pid) from None
                if not said and waited >= SAY_AFTER:
                    self.say(f"toolkit: {self.path} is held by {holder}; waiting up to {self.wait:.0f} s")
                    said = True
                time.sleep(min(pause, self.wait - waited))
                pause = min(pause * 2, 0.1)
        self.opened += 1
        if not self.read_only:
            self._note(what)
        return con

    def interrupt(self) -> None:
        """Stop the query running on the connection now, from another thread (a call past its time)."""
        con = self._con
        if con is not None:
            with contextlib.suppress(Exception):
                con.interrupt()

    def _adopt(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.seal is not None:
            try:
                self.seal(con)
            except BaseException:
                con.close()
                raise
        self._con = con
        self._memory_setting = query_memory()  # what the analyst's queries get (file.query_memory)
        self._memory_shown = self._shown_memory(con)

    def _note(self, what: str) -> None:
        """Tell a process that waits for the file who holds it and what for (best effort: a folder
        this process may not write to only makes the waiting message vaguer)."""
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            holder_note(self.path).write_text(json.dumps({"pid": os.getpid(), "what": what, "since": time.time()}))

    def _holder(self, busy: WorkspaceInUseError) -> str:
        """Who holds the file, as a waiting process is told: the PID DuckDB names, and what for from
        the holder's note when the note is that process's."""
        if isinstance(busy, WorkspaceOpenHereError):
            return "another workspace or connection of this process"
        pid = busy.pid
        try:
            note = json.loads(holder_note(self.path).read_text()) if self.path is not None else {}
        except (OSError, ValueError):
            note = {}
        if pid and note.get("pid") == pid:
            return f"process {pid} ({note.get('what', 'reading')}, for {time.time() - note.get('since', 0):.1f} s)"
        return f"process {pid}" if pid else "another process"

    def _close_when_idle(self) -> None:
        """Let the file go LINGER seconds after its last use, on a thread that lives while it is open."""
        if self._closer is None:
            # not a daemon: the interpreter waits for it (LINGER at most) rather than stopping it inside
            # DuckDB at exit, which aborts the process ("FATAL: exception not rethrown")
            self._closer = threading.Thread(target=self._closing, name="toolkit-workspace-closer")
            self._closer.start()
        else:
            self._idle.notify()

    def _closing(self) -> None:
        with self.lock:
            try:
                while self._con is not None and not self._shut:
                    if self._depth:
                        self._idle.wait()
                        continue
                    left = self._last_used + LINGER - time.monotonic()
                    if left > 0:
                        self._idle.wait(left)
                    else:
                        self._release()
            finally:
                self._closer = None

    def _release(self) -> None:
        con, self._con = self._con, None
        if con is not None:
            con.close()
            if not self.read_only and self.path is not None:
                with contextlib.suppress(OSError, ValueError):
                    note = holder_note(self.path)
                    if json.loads(note.read_text()).get("pid") == os.getpid():
                        note.unlink()

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

    def _shown_memory(self, con: duckdb.DuckDBPyConnection | None = None) -> str:
        return (con or self.con).execute("SELECT current_setting('memory_limit')").fetchall()[0][0]

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
