"""A DuckDB connection sealed for a reader that must reach nothing beyond what it was opened on: an
assistant's (`toolkit mcp`), and the throwaway connection its queries are parsed on.

The seal is DuckDB's own switches, set after the workspace is opened (or the lake attached) and in this
order, since each closes a door the next steps would need: the memory limit, a temp folder of the
reader's own and a cap on what spills there, the folders it may still read (a lake's data, a Parquet
snapshot's files), then `enable_external_access=false` (no file, no URL, no extension installed or
loaded, no ATTACH), no extension autoloaded or autoinstalled, `max_execution_time` where this DuckDB has
it (2.0 does, 1.5 does not: `Deadline` interrupts the call instead), and `lock_configuration=true`
last, so that no query can SET any of it back. What a sealed connection refuses it refuses whatever
the query's spelling: a list of statements can miss one, the engine's switch cannot.

    limits = Limits.from_environment(); seal(con, limits)          # after the file is opened
    with Deadline(con.interrupt, limits.seconds): con.sql(query).fetchall()
"""
from __future__ import annotations

__all__ = ["Deadline", "Limits", "TIME_LIMIT", "has_execution_time", "parser", "seal"]

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from toolkit.errors import WorkspaceError
from toolkit.storage.file import literal, session

TIME_LIMIT = 30.0    # seconds a call may run, unless TOOLKIT_MCP_TIME_LIMIT says otherwise
MEMORY_LIMIT = "1GB"  # what a sealed connection's queries may hold in memory (TOOLKIT_MCP_MEMORY_LIMIT)
SPILL_LIMIT = "1GB"   # what they may write to the temp folder beyond it (TOOLKIT_MCP_SPILL_LIMIT)


def _seconds(text: str | None, name: str) -> float:
    try:
        value = float(text) if text else TIME_LIMIT
    except ValueError:
        raise WorkspaceError(f"{name}={text!r} is not a number of seconds") from None
    if value <= 0:
        raise WorkspaceError(f"{name}={text!r}: a call needs some time, more than 0 seconds")
    return value


@dataclass
class Limits:
    """What a sealed connection may spend: seconds a call runs, memory, the temp folder's spill."""

    seconds: float = TIME_LIMIT
    memory: str = MEMORY_LIMIT
    spill: str = SPILL_LIMIT
    temp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="toolkit-sealed-")))

    @classmethod
    def from_environment(cls, seconds: float | None = None, memory: str | None = None,
                         spill: str | None = None) -> Limits:
        """The limits given, else TOOLKIT_MCP_TIME_LIMIT, TOOLKIT_MCP_MEMORY_LIMIT, TOOLKIT_MCP_SPILL_LIMIT,
        else 30 s, 1GB and 1GB; the temp folder is a new one of this process's own."""
        return cls(seconds=seconds if seconds is not None else
                   _seconds(os.environ.get("TOOLKIT_MCP_TIME_LIMIT"), "TOOLKIT_MCP_TIME_LIMIT"),
                   memory=memory or os.environ.get("TOOLKIT_MCP_MEMORY_LIMIT") or MEMORY_LIMIT,
                   spill=spill or os.environ.get("TOOLKIT_MCP_SPILL_LIMIT") or SPILL_LIMIT)

    def remove_temp(self) -> None:
        """The temp folder removed, with whatever a query spilled there."""
        shutil.rmtree(self.temp, ignore_errors=True)


def has_execution_time(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this DuckDB stops a query past `max_execution_time` itself (2.0 does, 1.5 does not)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_settings() WHERE name = 'max_execution_time'").fetchall()[0][0])


def seal(con: duckdb.DuckDBPyConnection, limits: Limits, readable: Iterable[str | Path] = ()) -> duckdb.DuckDBPyConnection:
    """Seal an opened connection (the module docstring): `readable` are the folders its own views read
    (a lake's local data path, a Parquet snapshot's folder); nothing else outside it is reached."""
    session(con)
    folders = [str(Path(f).expanduser().absolute()) + os.sep for f in readable]
    statements = [f"SET memory_limit = {literal(limits.memory)}",
                  f"SET temp_directory = {literal(str(limits.temp))}",
                  f"SET max_temp_directory_size = {literal(limits.spill)}",
                  f"SET allowed_directories = [{', '.join(literal(f) for f in folders)}]",
                  "SET enable_external_access = false",
                  "SET autoinstall_known_extensions = false",
                  "SET autoload_known_extensions = false"]
    if has_execution_time(con):
        statements.append(f"SET max_execution_time = {max(1, round(limits.seconds * 1000))}")
    for statement in [*statements, "SET lock_configuration = true"]:
        try:
            con.execute(statement)
        except duckdb.Error as error:
            raise WorkspaceError(f"DuckDB {duckdb.__version__} refused `{statement}` ({str(error).splitlines()[0]}): "
                                 "check TOOLKIT_MCP_MEMORY_LIMIT and TOOLKIT_MCP_SPILL_LIMIT (sizes such as '1GB')") from None
    return con


def parser(limits: Limits | None = None) -> duckdb.DuckDBPyConnection:
    """An empty in-memory connection sealed before anything is parsed on it: DuckDB 1.5 runs a PRAGMA
    while it splits statements (`import_database` reads files, `tpch` installs an extension), so a
    check that parses a query must do so where that reaches nothing."""
    return seal(duckdb.connect(), limits or Limits(seconds=5.0, memory="64MB", spill="0KB",
                                                   temp=Path(tempfile.gettempdir()) / "toolkit-sealed-parser"))


class Deadline:
    """A call's time limit: `stop()` (a connection's interrupt) once `seconds` pass inside the block;
    `passed` says whether it came. DuckDB's own `max_execution_time` bounds each query where it exists;
    this bounds the whole call, on any DuckDB."""

    def __init__(self, stop: Callable[[], None], seconds: float) -> None:
        self._stop, self.seconds, self.passed = stop, seconds, False
        self._timer: threading.Timer | None = None

    def _fire(self) -> None:
        self.passed = True
        self._stop()

    def __enter__(self) -> Deadline:
        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
