"""The store: one DuckDB file holding every load, the current view of each resource, and its history.

It knows no HTTP: `toolkit.Workspace` is a Store that connects clients to it (toolkit/workspace.py).
Inside the file (`toolkit.storage.loads` writes it, `toolkit.storage.file` names it):

    _loads                          one row per load: service, base URL, resource, params, times, status,
                                    `seq`, its number among the resource's finished loads, and `drift`
                                    (JSON), how its answers differed from the declared shapes
    _categories                     the categories of categorical columns, per resource
    <service>.<resource>__versions  the resource's row versions, valid from one load's `seq` to another's
    <service>.<resource>            a view of the latest complete load ("stale" still counts: it is data)
    <service>.<resource>__loads     a view of every finished load's rows, with `_load_id`
    <service>.<resource>__history   the row versions with validity by load and by the service's clock

A file written by toolkits that stored a copy of every load is migrated to row versions when it is
opened read-write (`toolkit.storage.file.migrate`); a read-only open of one says how to migrate it.

The file is held only while a read or a commit needs it (toolkit.storage.handle): a load walks,
decodes and types with the file free, its batches staged beside it (toolkit.storage.stage), and holds
the file only to commit. So a notebook and a cron refresh take turns; a call that finds the file held
waits for it. `ws.sql()` gives a relation that holds the file each time it is run, and so sees the
loads committed since; what must outlast one statement (a temp table, a SET) goes inside `ws.hold()`.

A load whose process died (kill -9, a crash) stays "running" in the file. Each load records its owner
(toolkit.storage.processes): a read-write workspace marks the loads of owners that no longer live
interrupted ("interrupted: the process ended during the load"), and a read-only one, which may not write, shows them so (`loads()`,
`history()`).

The Store is composed of two readers it hands its reads on to, each given only what it needs:
`Holdings` (toolkit.storage.holdings, handed the FileHandle) reads what the file holds (names, views, one
load's rows, `_loads`), and `History` (toolkit.storage.history, handed the Holdings and the FileHandle)
reads across loads (as_of, history, versions, timeline, drift, diff). This module opens the file,
loads, runs the analyst's SQL and exports. `Query` (toolkit.storage.query) is what `sql` gives.
"""
from __future__ import annotations

__all__ = ["INTERRUPTED", "Query", "Store", "UnknownTableError"]

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Self, TypeVar

import duckdb
import pandas as pd
import pyarrow as pa

from toolkit.catalog.masking import scrub_url
from toolkit.errors import UnknownTableError, ValidationError, WorkspaceArgumentError, WorkspaceError
from toolkit.storage import clock, exports, ledger
from toolkit.storage.diffs import Diff
from toolkit.storage.file import (
    MIGRATE_HINT,
    filtered_of,
    mend_views,
    migrate,
    not_there,
    old_layout,
    usable_path,
)
from toolkit.storage.grants import may_write
from toolkit.storage.handle import FileHandle
from toolkit.storage.history import History
from toolkit.storage.holdings import INTERRUPTED, Holdings, closed_message
from toolkit.storage.lake import Lake, is_lake, orphans, settled
from toolkit.storage.loads import Load
from toolkit.storage.merge import Carry
from toolkit.storage.query import Query
from toolkit.storage.runs import Run
from toolkit.storage.sealed import Limits, seal
from toolkit.storage.stage import remove_abandoned
from toolkit.storage.timeline import Timeline

# DuckDB's words for a table it cannot find: 'Table with name targets does not exist!' or, when the
# schema is missing too, 'Table with name "translation.targets" does not exist because schema ...'
_MISSING_TABLE = re.compile(r'Table with name "?(?:(?P<schema>[^".\s]+)\.)?(?P<name>[^"\s!]+)"? does not exist')


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _told_by(source: Callable[..., Any]) -> Callable[[_Method], _Method]:
    """A method the Store hands on to a collaborator, given the collaborator's docstring, which `?` shows."""
    def told(method: _Method) -> _Method:
        method.__doc__ = source.__doc__
        return method
    return told


class Store:
    """One DuckDB file (in memory without a path): every load, the current view of each resource, history.

        store = Store("reporting.duckdb")        # toolkit.Workspace is a Store that also connects
        store.sql("select target_language, count(*) from translation.targets group by 1").df()

    `read_only=True` opens a file other processes may also read, and never writes it. The file is
    held only while a call reads or commits (the module docstring): a call that finds it held by
    another process waits up to `wait` seconds (TOOLKIT_WORKSPACE_WAIT, 60 by default), saying once
    who holds it, and then raises WorkspaceBusyError. After `close()`, every method raises
    `WorkspaceError`. `sealed=Limits(...)` (read-only only) seals every connection it opens with
    DuckDB's own switches (toolkit.storage.sealed): what an assistant is served through.
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False,
                 wait: float | None = None, data_path: str | Path | None = None,
                 sealed: Limits | None = None) -> None:
        if sealed is not None and not read_only:
            raise WorkspaceArgumentError("sealed=Limits(...) is for a reader: open it with read_only=True")
        self.lake = Lake(str(path), None if data_path is None else str(data_path)) if is_lake(path) else None
        if data_path is not None and self.lake is None:
            raise WorkspaceArgumentError("data_path is for a team workspace (toolkit.Workspace('ducklake:...', "
                                         "data_path=...)); a file workspace keeps its data in its file: leave it out")
        self.path = Path(path) if path and str(path) != ":memory:" and self.lake is None else None
        if read_only and self.path is None and self.lake is None:
            raise WorkspaceArgumentError("read_only=True needs a file: an in-memory workspace starts empty; give "
                                         "the workspace's path")
        # what a refused write says to do: a role that may only read (toolkit lake check) gets the lake
        # attached read-only, so that refresh and pull refuse it before anything is sent to a service
        self.read_only_advice = "open it without read_only=True"
        if not read_only and self.lake is not None and self.lake.scanner == "postgres" and not may_write(str(path)):
            read_only = True
            self.read_only_advice = ("its role may only read the lake: a writer's address refreshes it "
                                     "(toolkit lake check says what a role may do)")
        self.read_only = read_only
        if self.path is not None:
            usable_path(self.path)
        if read_only and self.path is not None and not self.path.exists():
            raise WorkspaceError(not_there(self.path, "workspace", "to read") + ". A read-write open "
                                 "(toolkit.Workspace(path)) creates one")
        # the file and the lock this store shares with its loads, and nothing else of it
        self._file = FileHandle(self.path, read_only, wait, partial(closed_message, self.path, self.lake),
                                lake=self.lake, seal=None if sealed is None else partial(
                                    seal, limits=sealed, readable=self._readable()))
        self._holdings = Holdings(self._file)
        self._history = History(self._holdings, self._file)
        if not read_only:
            with self._file.held("opening") as con:
                settled(lambda: ledger.create(con, self.lake is not None), self.lake is not None)
                self._holdings.mend_interrupted(con)
                if self.lake is None:
                    migrate(con)
                mend_views(con)
            if self.path is not None:
                remove_abandoned(self.path)
        else:
            with self._file.held() as con:
                old = old_layout(con)
            if old:
                self.close()
                raise WorkspaceError(f"{self.path} stores a copy of every load (a toolkit before row versions "
                                     f"wrote it); " + MIGRATE_HINT.format(path=str(self.path)))

    def _readable(self) -> list[str]:
        """The folders a sealed connection still reads: a lake's data, when it is a local folder."""
        where = self.lake.data_path if self.lake is not None else None
        return [where] if where and "://" not in where else []

    @property
    def closed(self) -> bool:
        """Whether `close()` was called: every method then raises `WorkspaceError`."""
        return self._file.closed

    @property
    def where(self) -> str:
        """Where the workspace lives, safe to show: its file, its lake (password masked), or memory."""
        return self._holdings.where

    def _check_open(self) -> None:
        self._holdings.check_open()

    def interrupt(self) -> None:
        """Stop the query running now, from another thread: a call past its time limit."""
        self._file.interrupt()

    @contextlib.contextmanager
    def hold(self) -> Iterator[Self]:
        """Hold the file for a block: what `ws.sql` makes that lasts one connection (a temp table, a
        SET, an ATTACH) lasts through the block, and other processes wait for it meanwhile.

            with ws.hold():
                ws.sql("CREATE TEMP TABLE late AS SELECT * FROM translation.targets WHERE ...")
                ws.sql("SELECT count(*) FROM late").fetchone()
        """
        with self._file.held("a block of the analyst's queries"):
            yield self

    def remove_orphans(self, older_than: float = 3600.0, dry_run: bool = False) -> list[str]:
        """A team workspace's data files that no commit names (what commits killed mid-way left),
        older than `older_than` seconds, removed (`dry_run`: only listed); the files. A file workspace
        has none: a load's batches wait beside it until its commit, and an abandoned stage is removed
        by the next read-write open.

            ws.remove_orphans(older_than=86_400)     # or, from cron: toolkit lake clean
        """
        self._check_open()
        if self.lake is None:
            return []
        if self.read_only:   # DuckLake looks for them only through a writable attach, even to list them
            raise WorkspaceError(f"{self.where} is open read-only: open it without read_only=True to look "
                                 "for orphan files")
        with self._file.held("removing orphan files") as con:
            return orphans(con, float(older_than), dry_run)

    # -- loads -------------------------------------------------------------------------------------

    def load(self, service: str, base_url: str, resource: str, params: Mapping[str, Any] | None = None,
             key: Sequence[str] = (), keep: bool = False, categoricals: Sequence[str] = (), *,
             builds_on: str | None = None, carry: Carry | tuple[str, list] | None = None, resume: bool = False,
             seen: Mapping[str, int] | None = None) -> Load:
        """A load to write batches into inside `with`; it commits on a clean exit, rolls back otherwise.
        With `keep`, the batches stay in memory for `frame_of`, the `categoricals` among their columns
        dictionary-encoded. An incremental load names the load it `builds_on` and `carry`, the valid
        versions it keeps when its rows lack their key (`merge.Carry`, or an SQL condition and its parameters).
        With `resume`, the load finds an abandoned checkpoint of a load like it (`load.resumable`), which
        `load.resume` takes over, and may `load.checkpoint` what it has written. `seen`: the `seq` of each
        resource the load's rows were drawn from, read before anything of them was (`Store.seen`); the
        next incremental load asks again for what those resources committed after it.

            with ws.load("translation", url, "targets", {"status": ["READY"]}, ("id",)) as load:
                load.write(table)
        """
        self._check_open()
        if self.read_only:
            raise WorkspaceError(f"{self.where} is open read-only: no loads")
        return Load(self._file, service, base_url, resource, params or {}, tuple(key), keep, categoricals,
                    builds_on=builds_on, carry=carry, resume=resume, seen=seen)

    def fresh_load(self, service: str, base_url: str, resource: str, params: Mapping[str, Any] | None,
                   max_age: float | timedelta | None) -> str | None:
        """The latest complete load with the same base URL, resource and params, by the loads' order
        (`seq`), when it ended less than `max_age` ago (seconds or a timedelta; None: of any age); else
        None. Never an older load because a clock says it is younger: a load made while this machine's
        clock ran behind is not picked over a later one, and one that ended in the future of this clock
        (a clock set back since) is not trusted to be fresh."""
        texts = self._holdings.params_texts(service, resource, params)
        rows = self._holdings.rows("SELECT load_id, finished FROM _loads WHERE status = 'complete' AND service = ? AND "
                                   f"base_url = ? AND resource = ? AND params IN ({', '.join('?' for _ in texts)}) "
                                   "ORDER BY seq DESC NULLS LAST LIMIT 1", [service, scrub_url(base_url), resource, *texts])
        if not rows:
            return None
        load_id, finished = rows[0]
        if max_age is None:
            return load_id
        seconds = max_age.total_seconds() if isinstance(max_age, timedelta) else float(max_age)
        age = (clock.now() - finished).total_seconds()
        return load_id if -clock.SKEW <= age <= seconds else None

    def previous_load(self, service: str, base_url: str, resource: str,
                      params: Mapping[str, Any] | None) -> str | None:
        """The load an incremental pull builds on: the resource's latest finished load (its view), when
        it was complete (or stale) and had the same base URL and params; else None."""
        texts = self._holdings.params_texts(service, resource, params)
        rows = self._holdings.rows(f"SELECT load_id, base_url = ? AND params IN ({', '.join('?' for _ in texts)}) "
                                   "FROM _loads WHERE service = ? AND resource = ? AND status IN ('complete', 'stale') "
                                   "ORDER BY seq DESC NULLS LAST LIMIT 1", [scrub_url(base_url), *texts, service, resource])
        return rows[0][0] if rows and rows[0][1] else None

    def recorded_params(self, text: str | None) -> dict[str, Any]:
        """A load's recorded params (`_loads.params`) as a pull takes them (Holdings.recorded_params)."""
        return self._holdings.recorded_params(text)

    def run(self, asked: Mapping[str, Any]) -> Run:
        """A run of many loads (toolkit.storage.runs): what a dead run of the same `asked` completed,
        and a note of what this one completes, for the next should it die."""
        self._check_open()
        return Run(self.path, self.where, dict(asked))

    def completed_rows(self, service: str, resource: str, load_id: str | None) -> int | None:
        """The rows of a load a dead run completed (`Run.resumed`), when it is still its resource's
        latest finished load and complete (not stale since); else None: the resource is pulled again."""
        if not load_id:
            return None
        rows = self._holdings.rows("SELECT load_id, status, \"rows\" FROM _loads WHERE service = ? AND resource = ? AND "
                           "status IN ('complete', 'stale') ORDER BY seq DESC NULLS LAST LIMIT 1", [service, resource])
        return rows[0][2] if rows and rows[0][:2] == (load_id, "complete") else None

    def mark_stale(self, service: str, resources: str | Iterable[str]) -> None:
        """After a write: the cached loads of these resources, filtered ones too, are not reused any more
        (they stay readable)."""
        self._check_open()
        names = [resources] if isinstance(resources, str) else list(resources)
        names += [filtered_of(name) for name in names]  # a subset is as out of date as the whole
        if names and not self.read_only:
            with self._file.held("marking loads stale") as con:
                ledger.update_loads(con, self.lake is not None, [("status", "'stale'")], [],
                                    "status = 'complete' AND service = ? AND list_contains(?, resource)",
                                    [service, names])

    def confirm(self, service: str, resource: str, load_id: str, parents: Sequence[str]) -> None:
        """Record that a finished load asked these parents again (a fan-out's ids): what a freshness
        budget reads (`confirmations`)."""
        if parents and not self.read_only:
            with self._file.held("recording what a load confirmed") as con:
                con.execute("INSERT INTO _confirmed SELECT ?, ?, unnest(?::VARCHAR[]), ?",
                            [service, resource, list(parents), load_id])

    def sql(self, query: str, params: Any = None) -> Query | None:
        """A DuckDB relation (`.df()`, `.to_arrow_table()`, `.show()`); a statement like UPDATE runs at once.
        A table the workspace does not hold is an UnknownTableError saying what it holds."""
        try:
            with self._file.held() as con:
                relation = con.sql(query, params=params)
                if relation is None:
                    return None
                if relation.type != "QUERY_RELATION":  # it ran already: its rows are kept, it is not run again
                    return Query(self._file, query, params, rows=relation.to_arrow_table())
        except duckdb.CatalogException as error:
            missing = _MISSING_TABLE.search(str(error))
            if missing is None or not self._has_loads_table():
                raise
            schema, name = missing.group("schema"), missing.group("name")
            if schema is None:  # DuckDB names the schema only when that is missing too: the query has it
                named = re.search(rf'"?(\w+)"?\s*\.\s*"?{re.escape(name)}\b', query)
                schema = named.group(1) if named else None
            # DuckDB's guess names its own catalog ("pg_catalog.pg_class") for a view not fetched yet
            hint = "".join(f" ({line.strip()})" for line in str(error).splitlines()[1:2]
                           if schema is None and "pg_catalog" not in line and "information_schema" not in line)
            raise UnknownTableError(self._holdings.not_held(schema, name) + hint) from None
        return Query(self._file, query, params)

    def _has_loads_table(self) -> bool:
        """Whether this is a workspace at all (a lake's `_loads` is a view: toolkit.storage.ledger)."""
        return self._holdings.has_own("_loads")

    # -- snapshots ---------------------------------------------------------------------------------

    def export(self, path: str | Path, format: str = "duckdb", history: bool = False,
               overwrite: bool = False, *, resources: Iterable[str] | None = None, since: Any = None) -> Path:
        """A standalone, self-describing file (or Parquet folder) of the latest loads, or of every load.
        `resources` keeps only those; `since` (a time, a date or "2026-11-20") keeps the loads finished
        since then with their row versions, and each resource's latest; the manifest says which.

            ws.export("snapshot-2026-11-22.duckdb"); toolkit.open_snapshot("snapshot-2026-11-22.duckdb")
            ws.export("week.duckdb", resources=["audience_platform.audiences", "translation.targets"],
                      since="2026-11-20")
        """
        chosen = None if resources is None else [self._holdings.resolve(r) for r in
                                                  ([resources] if isinstance(resources, str) else resources)]
        when = None if since is None else _moment("since", since)
        with self._file.held("exporting a snapshot") as con:
            return exports.export(con, Path(path), format, history, overwrite, self.path, chosen, when)

    # -- reads, handed on to the Holdings and the History ------------------------------------------

    @_told_by(Holdings.resolve)
    def resolve(self, resource: str) -> tuple[str, str]:
        return self._holdings.resolve(resource)

    @_told_by(Holdings.read)
    def read(self, service: str, resource: str, load_id: str | None = None) -> pd.DataFrame:
        return self._holdings.read(service, resource, load_id)

    @_told_by(Holdings.frame_of)
    def frame_of(self, service: str, resource: str, load_id: str, written: list[pa.Table]) -> pd.DataFrame:
        return self._holdings.frame_of(service, resource, load_id, written)

    @_told_by(Holdings.latest)
    def latest(self, service: str, resource: str) -> str | None:
        return self._holdings.latest(service, resource)

    @_told_by(Holdings.categories)
    def categories(self, service: str, resource: str) -> dict[str, list[str]]:
        return self._holdings.categories(service, resource)

    @_told_by(Holdings.rows)
    def rows(self, query: str, params: Any = None) -> list[tuple]:
        return self._holdings.rows(query, params)

    @_told_by(Holdings.arrow)
    def arrow(self, query: str, params: Any = None, tables: Mapping[str, pa.Table] | None = None) -> pa.Table:
        return self._holdings.arrow(query, params, tables)

    @_told_by(Holdings.loads)
    def loads(self) -> pd.DataFrame:
        return self._holdings.loads()

    @_told_by(Holdings.latest_loads)
    def latest_loads(self) -> list[tuple[str, str, str]]:
        return self._holdings.latest_loads()

    @_told_by(Holdings.confirmations)
    def confirmations(self, service: str, resource: str, clock: str = "service") -> dict[str, Any]:
        return self._holdings.confirmations(service, resource, clock)

    @_told_by(Holdings.tables)
    def tables(self, internals: bool = False) -> pd.DataFrame:
        return self._holdings.tables(internals)

    @_told_by(Holdings.view_counts)
    def view_counts(self) -> dict[tuple[str, str], int]:
        return self._holdings.view_counts()

    @_told_by(History.as_of)
    def as_of(self, resource: str, at: Any = None, *, relation: bool = False,
              clock: str = "wall") -> pd.DataFrame | Query:
        return self._history.as_of(resource, at, relation=relation, clock=clock)

    @_told_by(History.versions)
    def versions(self, resource: str, relation: bool = False) -> pd.DataFrame | Query:
        return self._history.versions(resource, relation)

    @_told_by(History.history)
    def history(self, resource: str) -> pd.DataFrame:
        return self._history.history(resource)

    @_told_by(History.timeline)
    def timeline(self, resource: str, by: str | Sequence[str] | None = None,
                 agg: str | Mapping[str, str] | None = None) -> Timeline:
        return self._history.timeline(resource, by, agg)

    @_told_by(History.drift)
    def drift(self, resource: str | None = None, load_id: str | None = None) -> pd.DataFrame:
        return self._history.drift(resource, load_id)

    @_told_by(History.diff)
    def diff(self, resource: str, before: str | None = None, after: str | None = None) -> Diff:
        return self._history.diff(resource, before, after)

    @_told_by(History.changes)
    def changes(self, service: str, resource: str, load_id: str) -> dict[str, int]:
        return self._history.changes(service, resource, load_id)

    def close(self) -> None:
        """Let the file go for good (other processes hold it as they need it); closing again does nothing."""
        self._file.close()

    def __enter__(self) -> Self:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return f"<toolkit.{type(self).__name__} {self.where}{state}>"


def _moment(name: str, given: Any) -> datetime:
    """A moment the analyst gave (a time, a date, or text), in UTC."""
    try:
        stamp = pd.Timestamp(given)
    except (ValueError, TypeError, OverflowError):
        stamp = pd.NaT
    if pd.isna(stamp):
        raise ValidationError(name, given, "must be a time, a date, or text such as 2026-11-20 or 2026-11-20T09:00:00Z")
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")).to_pydatetime()
