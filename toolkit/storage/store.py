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
failed ("interrupted: ..."), and a read-only one, which may not write, shows them so (`loads()`,
`history()`).
"""
from __future__ import annotations

__all__ = ["INTERRUPTED", "Query", "Store", "UnknownTableError"]

import contextlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.catalog import how_to_fetch
from toolkit.catalog.masking import scrub_url
from toolkit.errors import UnknownTableError, WorkspaceError
from toolkit.storage import clock, exports, ledger
from toolkit.storage.diffs import Diff, diff_loads
from toolkit.storage.file import (
    FILTERED,
    FINISHED,
    MIGRATE_HINT,
    filtered_of,
    history_view_sql,
    literal,
    loads_view_sql,
    migrate,
    old_layout,
    quote,
    usable_path,
    valid_at,
    versions_of,
    view_sql,
)
from toolkit.storage.grants import may_write
from toolkit.storage.handle import FileHandle
from toolkit.storage.lake import Lake, is_lake, orphans, settled
from toolkit.storage.loads import Load, params_json
from toolkit.storage.processes import alive
from toolkit.storage.readback import shaped, to_frame
from toolkit.storage.runs import Run
from toolkit.storage.stage import remove_abandoned
from toolkit.storage.timeline import Timeline, measures, timeline_sql

INTERRUPTED = "interrupted: the process ended during the load"


def _loads_read(dead: Sequence[str]) -> str:
    """`_loads` as a read-only workspace shows it: the running loads whose process died, interrupted."""
    if not dead:
        return "_loads"
    ids = "[" + ", ".join(literal(load_id) for load_id in dead) + "]"
    gone = f"(status = 'running' AND list_contains({ids}, load_id))"
    return (f"(SELECT * REPLACE (CASE WHEN {gone} THEN 'failed' ELSE status END AS status, "
            f"CASE WHEN {gone} THEN coalesce(finished, started) ELSE finished END AS finished, "
            f"CASE WHEN {gone} THEN '{INTERRUPTED}' ELSE error END AS error) FROM _loads)")


# DuckDB's words for a table it cannot find: 'Table with name targets does not exist!' or, when the
# schema is missing too, 'Table with name "translation.targets" does not exist because schema ...'
_MISSING_TABLE = re.compile(r'Table with name "?(?:(?P<schema>[^".\s]+)\.)?(?P<name>[^"\s!]+)"? does not exist')


class Query:
    """A DuckDB relation (`.df()`, `.arrow()`, `.show()`, `.fetchall()`, chaining) that holds the
    workspace's file only while it runs: it keeps the query and the steps chained onto it, and runs
    them anew each time, so it sees the loads committed since it was made. It also answers
    `fetchone()`, which DuckDB 2.0 relations no longer have. Once its workspace is closed, it says
    so (`WorkspaceError`)."""

    def __init__(self, workspace: Store, query: str, params: Any = None, steps: tuple = (),
                 rows: pa.Table | None = None) -> None:
        self._workspace, self._query, self._params, self._steps = workspace, query, params, steps
        self._rows = rows  # what a statement that ran at once gave (INSERT ... RETURNING, PRAGMA): never run again

    def _relation(self, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
        relation = con.from_arrow(self._rows) if self._rows is not None else con.sql(self._query, params=self._params)
        for name, args, kwargs in self._steps:
            relation = getattr(relation, name)(*_live(args, con), **kwargs)
        return relation

    def fetchone(self) -> tuple | None:
        rows = self.limit(1).fetchall()
        return rows[0] if rows else None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or not hasattr(duckdb.DuckDBPyRelation, name):
            raise AttributeError(f"a workspace query has no attribute {name!r}")
        if not callable(getattr(duckdb.DuckDBPyRelation, name)):  # columns, types, shape...
            with self._workspace._file.held() as con:
                return getattr(self._relation(con), name)

        def run(*args: Any, **kwargs: Any) -> Any:
            with self._workspace._file.held() as con:
                result = getattr(self._relation(con), name)(*_live(args, con), **kwargs)
                if isinstance(result, duckdb.DuckDBPyRelation):  # a step: kept, run with the rest
                    return Query(self._workspace, self._query, self._params,
                                 (*self._steps, (name, args, kwargs)), self._rows)
                if isinstance(result, pa.RecordBatchReader):  # a stream would outlive the file's hold
                    result = pa.RecordBatchReader.from_batches(result.schema, list(result))
                return result
        return run

    def __repr__(self) -> str:
        with self._workspace._file.held() as con:
            return repr(self._relation(con))

    def _repr_html_(self) -> str:
        with self._workspace._file.held() as con:
            return self._relation(con).limit(20).df().to_html()


def _live(args: tuple, con: duckdb.DuckDBPyConnection) -> list:
    """A step's arguments with any Query among them (a join's other side) as a relation on `con`."""
    return [arg._relation(con) if isinstance(arg, Query) else arg for arg in args]


class Store:
    """One DuckDB file (in memory without a path): every load, the current view of each resource, history.

        store = Store("reporting.duckdb")        # toolkit.Workspace is a Store that also connects
        store.sql("select target_language, count(*) from translation.targets group by 1").df()

    `read_only=True` opens a file other processes may also read, and never writes it. The file is
    held only while a call reads or commits (the module docstring): a call that finds it held by
    another process waits up to `wait` seconds (TOOLKIT_WORKSPACE_WAIT, 60 by default), saying once
    who holds it, and then raises WorkspaceBusyError. After `close()`, every method raises
    `WorkspaceError`.
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False,
                 wait: float | None = None, data_path: str | Path | None = None) -> None:
        self.lake = Lake(path, None if data_path is None else str(data_path)) if is_lake(path) else None
        if data_path is not None and self.lake is None:
            raise ValueError("data_path is for a team workspace (toolkit.Workspace('ducklake:...', data_path=...)); "
                             "a file workspace keeps its data in its file")
        self.path = Path(path) if path and str(path) != ":memory:" and self.lake is None else None
        if read_only and self.path is None and self.lake is None:
            raise ValueError("read_only needs a file: an in-memory workspace starts empty")
        # what a refused write says to do: a role that may only read (toolkit lake check) gets the lake
        # attached read-only, so that refresh and pull refuse it before anything is sent to a service
        self.read_only_advice = "open it without read_only=True"
        if not read_only and self.lake is not None and self.lake.scanner == "postgres" and not may_write(path):
            read_only = True
            self.read_only_advice = ("its role may only read the lake: a writer's address refreshes it "
                                     "(toolkit lake check says what a role may do)")
        self.read_only = read_only
        if self.path is not None:
            usable_path(self.path)
        if read_only and self.path is not None and not self.path.exists():
            near = sorted(p.name for p in self.path.parent.glob("*.duckdb")) if self.path.parent.is_dir() else []
            there = f"; {self.path.parent} holds {', '.join(near[:5])}" if near else ""
            raise WorkspaceError(f"no workspace at {self.path} to read{there}. A read-write open "
                                 f"(toolkit.Workspace(path)) creates one")
        # the file and the lock this store shares with its loads, and nothing else of it
        self._file = FileHandle(self.path, read_only, wait, self._closed_message, lake=self.lake)
        if not read_only:
            with self._file.held("opening") as con:
                settled(lambda: ledger.create(con, self.lake is not None), self.lake is not None)
                self._mend_interrupted(con)
                if self.lake is None:
                    migrate(con)
                self._mend_views(con)
            if self.path is not None:
                remove_abandoned(self.path)
        else:
            with self._file.held() as con:
                old = old_layout(con)
            if old:
                self.close()
                raise WorkspaceError(f"{self.path} stores a copy of every load (a toolkit before row versions "
                                     f"wrote it); " + MIGRATE_HINT.format(path=str(self.path)))

    def _dead_loads(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """The running loads whose process no longer lives (toolkit.storage.processes)."""
        owned = "owner" if con.execute(
            "SELECT 1 FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' "
            "AND table_name = '_loads' AND column_name = 'owner'").fetchall() else "NULL"
        return [load_id for load_id, owner in con.execute(
            f"SELECT load_id, {owned} FROM _loads WHERE status = 'running'").fetchall() if not alive(owner)]

    def _mend_interrupted(self, con: duckdb.DuckDBPyConnection) -> None:
        dead = self._dead_loads(con)
        if dead:
            settled(lambda: ledger.update_loads(con, self.lake is not None, [("status", "'failed'"), ("finished", "coalesce(finished, started)"),
                                                            ("error", "?")], [INTERRUPTED],
                                "status = 'running' AND list_contains(?, load_id)", [dead]), self.lake is not None)

    def _mend_views(self, con: duckdb.DuckDBPyConnection) -> None:
        """Recreate a resource's views where they are not the ones `storage.file` makes (missing, or written
        by an earlier toolkit: one reading `_loads` unqualified broke in a file attached elsewhere); a
        read-only open reads them as they are."""
        views = dict(con.execute(
            "SELECT schema_name || '.' || view_name, sql FROM duckdb_views() "
            "WHERE database_name = current_database() AND NOT internal").fetchall())
        for service, table in con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() "
                "AND table_name LIKE '%\\_\\_versions' ESCAPE '\\'").fetchall():
            resource = table.removesuffix("__versions")
            plain, every = views.get(f"{service}.{resource}") or "", views.get(f"{service}.{resource}__loads") or ""
            if "__versions" not in plain or "_loads" in plain:  # DuckDB gives views' SQL back reworded
                con.execute(view_sql(service, resource))
            if "__versions" not in every or "main._loads" not in every:
                con.execute(loads_view_sql(service, resource))
            if "valid_from_seq" not in (views.get(f"{service}.{resource}__history") or ""):
                con.execute(history_view_sql(service, resource))

    @contextlib.contextmanager
    def hold(self) -> Iterator[Store]:
        """Hold the file for a block: what `ws.sql` makes that lasts one connection (a temp table, a
        SET, an ATTACH) lasts through the block, and other processes wait for it meanwhile.

            with ws.hold():
                ws.sql("CREATE TEMP TABLE late AS SELECT * FROM translation.targets WHERE ...")
                ws.sql("SELECT count(*) FROM late").fetchone()
        """
        with self._file.held("a block of the analyst's queries"):
            yield self

    @property
    def closed(self) -> bool:
        """Whether `close()` was called: every method then raises `WorkspaceError`."""
        return self._file.closed

    @property
    def where(self) -> str:
        """Where the workspace lives, safe to show: its file, its lake (password masked), or memory."""
        return self.lake.shown if self.lake else str(self.path) if self.path else ":memory:"

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

    def _closed_message(self) -> str:
        again = f"toolkit.Workspace({self.where!r})" if self.path or self.lake else \
            "toolkit.Workspace() (an in-memory one starts empty)"
        return f"workspace {self.where} is closed; open it again with {again}"

    def _check_open(self) -> None:
        if self._file.closed:
            raise WorkspaceError(self._closed_message())

    # -- loads -------------------------------------------------------------------------------------

    def load(self, service: str, base_url: str, resource: str, params: Mapping[str, Any] | None = None,
             key: Sequence[str] = (), keep: bool = False, categoricals: Sequence[str] = (), *,
             builds_on: str | None = None, carry: tuple[str, list] | None = None, resume: bool = False,
             seen: Mapping[str, int] | None = None) -> Load:
        """A load to write batches into inside `with`; it commits on a clean exit, rolls back otherwise.
        With `keep`, the batches stay in memory for `frame_of`, the `categoricals` among their columns
        dictionary-encoded. An incremental load names the load it `builds_on` and `carry`, the SQL
        condition (and its parameters) of the valid versions it keeps when its rows lack their key.
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
        """The latest complete load with the same base URL, resource and params, younger than `max_age`
        (seconds or a timedelta; None: of any age), or None."""
        query = ("SELECT load_id FROM _loads WHERE status = 'complete' AND service = ? AND base_url = ? "
                 "AND resource = ? AND params = ?")
        args: list[Any] = [service, scrub_url(base_url), resource, params_json(params)]
        if max_age is not None:
            seconds = max_age.total_seconds() if isinstance(max_age, timedelta) else float(max_age)
            query += " AND finished >= ?"
            args.append(clock.now() - timedelta(seconds=seconds))
        rows = self._fetch(query + " ORDER BY finished DESC LIMIT 1", args)
        return rows[0][0] if rows else None

    def previous_load(self, service: str, base_url: str, resource: str,
                      params: Mapping[str, Any] | None) -> str | None:
        """The load an incremental pull builds on: the resource's latest finished load (its view), when
        it was complete (or stale) and had the same base URL and params; else None."""
        rows = self._fetch("SELECT load_id, base_url, params FROM _loads WHERE service = ? AND resource = ? "
                           "AND status IN ('complete', 'stale') ORDER BY seq DESC NULLS LAST LIMIT 1",
                           [service, resource])
        if rows and rows[0][1] == scrub_url(base_url) and rows[0][2] == params_json(params):
            return rows[0][0]
        return None

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
        rows = self._fetch("SELECT load_id, status, \"rows\" FROM _loads WHERE service = ? AND resource = ? AND "
                           "status IN ('complete', 'stale') ORDER BY seq DESC NULLS LAST LIMIT 1", [service, resource])
        return rows[0][2] if rows and rows[0][:2] == (load_id, "complete") else None

    def changes(self, service: str, resource: str, load_id: str) -> dict[str, int]:
        """What a finished load changed in its resource's view: rows `added`, `changed` (a key with a
        version ended and one begun by it) and `removed`; a keyless resource has no changed rows."""
        rows = self._fetch("SELECT seq, \"key\" FROM _loads WHERE load_id = ?", [load_id])
        if not rows or rows[0][0] is None or not self._has_table(service, resource):
            return {"added": 0, "changed": 0, "removed": 0}
        seq, key = rows[0][0], [quote(k) for k in rows[0][1] or []]
        versions = versions_of(service, resource)
        if not key:
            begun, ended = self._fetch(f"SELECT count(*) FILTER (_valid_from = $1), count(*) FILTER "
                                       f"(_valid_to = $1) FROM {versions}", [seq])[0]
            return {"added": begun, "changed": 0, "removed": ended}
        keys = ", ".join(key)
        begun, both, ended = self._fetch(
            f"WITH b AS (SELECT DISTINCT {keys} FROM {versions} WHERE _valid_from = $1), "
            f"e AS (SELECT DISTINCT {keys} FROM {versions} WHERE _valid_to = $1) "
            f"SELECT (SELECT count(*) FROM b), (SELECT count(*) FROM b SEMI JOIN e USING ({keys})), "
            f"(SELECT count(*) FROM e)", [seq])[0]
        return {"added": begun - both, "changed": both, "removed": ended - both}

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

    # -- reading -----------------------------------------------------------------------------------

    def read(self, service: str, resource: str, load_id: str | None = None) -> pd.DataFrame:
        """One load's rows (the latest complete one by default) as a DataFrame."""
        load_id = load_id or self.latest(service, resource)
        if load_id is None:
            raise WorkspaceError(self._not_held(service, resource) if not self._fetch(
                "SELECT 1 FROM _loads WHERE service = ? AND resource = ? LIMIT 1", [service, resource])
                else f"no complete load of {service}.{resource} in {self.where}")
        if not self._has_table(service, resource):  # a load that never wrote a batch
            return pd.DataFrame()
        with self._file.held() as con:
            con.execute("BEGIN TRANSACTION")  # the load's number and its rows from the same commits
            try:
                query, args = self._rows_of(con, service, resource, load_id)
                table = con.sql(query, params=args).to_arrow_table()
            finally:
                con.execute("COMMIT")
        return to_frame(table, self.categories(service, resource))

    def as_of(self, resource: str, at: Any = None, *, relation: bool = False) -> pd.DataFrame | Query:
        """A resource as one of its loads saw it: `at` is a load id or a moment (the latest load
        finished by then); None is the latest. A DataFrame, or with `relation=True` a DuckDB relation
        to go on querying (it reads the workspace when it is run).

            ws.as_of("translation.targets", "2026-11-20 09:00+00:00")
            ws.as_of("translation.targets", load_id, relation=True).filter("status = 'DONE'").df()
        """
        service, name = self.resolve(resource)
        load_id = self._load_at(service, name, at)
        if not relation:
            return self.read(service, name, load_id)
        if not self._has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        with self._file.held() as con:
            query, args = self._rows_of(con, service, name, load_id)
        return Query(self, query, args)

    def _load_at(self, service: str, resource: str, at: Any) -> str:
        """The finished load an `as_of` names: a load id, or the latest finished by a moment."""
        if at is None:
            found = self.latest(service, resource)
        elif isinstance(at, str) and self._fetch("SELECT 1 FROM _loads WHERE load_id = ?", [at]):
            found = self._fetch(f"SELECT load_id FROM _loads WHERE load_id = ? AND service = ? AND resource = ? "
                                f"AND status IN {FINISHED}", [at, service, resource])
            if not found:
                raise WorkspaceError(f"{at!r} is not a complete load of {service}.{resource}")
            found = found[0][0]
        else:
            try:
                moment = pd.Timestamp(at)
            except (ValueError, TypeError):
                ids = [row[0] for row in self._fetch(f"SELECT load_id FROM _loads WHERE service = ? AND resource = ? "
                                                     f"AND status IN {FINISHED} ORDER BY seq DESC LIMIT 3",
                                                     [service, resource])]
                raise WorkspaceError(f"{at!r} is neither a load id nor a moment; the latest loads of {service}."
                                     f"{resource} are {', '.join(ids) or 'none'} (ws.history(...) lists them "
                                     "all)") from None
            if pd.isna(moment):
                raise WorkspaceError(f"{at!r} is not a moment: give a load id or a date and time")
            moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
            rows = self._fetch(f"SELECT load_id FROM _loads WHERE service = ? AND resource = ? AND status IN "
                               f"{FINISHED} AND finished <= ? ORDER BY seq DESC LIMIT 1",
                               [service, resource, moment.to_pydatetime()])
            if not rows:
                raise WorkspaceError(f"no load of {service}.{resource} had finished by {moment}")
            found = rows[0][0]
        if found is None:
            raise WorkspaceError(f"no complete load of {service}.{resource} in {self.where}")
        return found

    def _rows_of(self, con: duckdb.DuckDBPyConnection, service: str, resource: str,
                 load_id: str) -> tuple[str, list]:
        """The query of one finished load's rows: the versions valid in its number."""
        rows = con.execute("SELECT seq FROM _loads WHERE load_id = ?", [load_id]).fetchall()
        if not rows or rows[0][0] is None:
            raise WorkspaceError(f"{load_id!r} is not a complete load of {service}.{resource}")
        query = f"SELECT * EXCLUDE (_valid_from, _valid_to) FROM {versions_of(service, resource)}"
        if rows[0][0] == con.execute("SELECT max(seq) FROM _loads WHERE service = ? AND resource = ?",
                                           [service, resource]).fetchall()[0][0]:
            return query + " WHERE _valid_to IS NULL", []  # the latest: what the view shows
        return query + f" WHERE {valid_at('$1')}", [rows[0][0]]

    def frame_of(self, service: str, resource: str, load_id: str, written: list[pa.Table]) -> pd.DataFrame:
        """What `read(service, resource, load_id)` gives, made from the batches that load wrote.

        The batches are shaped as the table reads back now: its columns in its order, NULL where the
        load had none, each cast to the Arrow type DuckDB gives. When a stored type is not one the
        batches' values cast to unchanged (an earlier load widened the column to text, say), the load
        is read back instead. `written` is emptied, so that each column is freed once converted.
        """
        with self._file.held() as con:
            shape = con.sql(f"SELECT * EXCLUDE (_valid_from, _valid_to) FROM "
                                  f"{versions_of(service, resource)} LIMIT 0").to_arrow_table().schema
            self._file.release_memory()
        table = shaped(written, shape)
        if table is None:
            return self.read(service, resource, load_id)
        return to_frame(table, self.categories(service, resource))

    def latest(self, service: str, resource: str) -> str | None:
        """The id of the latest complete (or stale) load of a resource."""
        rows = self._fetch("SELECT load_id FROM _loads WHERE service = ? AND resource = ? AND status IN "
                           "('complete', 'stale') ORDER BY seq DESC NULLS LAST, finished DESC LIMIT 1",
                           [service, resource])
        return rows[0][0] if rows else None

    def categories(self, service: str, resource: str) -> dict[str, list[str]]:
        if self.read_only and not self._has_categories():
            return {}
        rows = self._fetch("SELECT column_name, categories FROM _categories "
                           "WHERE service = ? AND resource = ?",
                           [service, resource])
        return {name: list(values) for name, values in rows}

    def rows(self, query: str, params: Any = None) -> list[tuple]:
        """A query's rows on the workspace's own connection, under its lock: what the pull floor asks of
        `_loads` and of the row versions (toolkit.storage.file names them). `sql` is the analyst's."""
        return self._fetch(query, params)

    def confirm(self, service: str, resource: str, load_id: str, parents: Sequence[str]) -> None:
        """Record that a finished load asked these parents again (a fan-out's ids): what a freshness
        budget reads (`confirmations`)."""
        if parents and not self.read_only:
            with self._file.held("recording what a load confirmed") as con:
                con.execute("INSERT INTO _confirmed SELECT ?, ?, unnest(?::VARCHAR[]), ?",
                            [service, resource, list(parents), load_id])

    def confirmations(self, service: str, resource: str) -> dict[str, Any]:
        """When each parent's rows were last confirmed: by the service's clock where the load saw it,
        else when the load finished; {} when none was ever recorded."""
        if not self._has_own("_confirmed"):
            return {}
        return dict(self._fetch(
            f"SELECT c.parent, max(coalesce(l.service_clock, l.finished)) FROM _confirmed c JOIN _loads l "
            f"ON l.load_id = c.load_id AND l.status IN {FINISHED} WHERE c.service = ? AND c.resource = ? "
            f"GROUP BY 1", [service, resource]))

    def latest_loads(self) -> list[tuple[str, str, str]]:
        """Each resource's latest finished load: (service, resource, its params as JSON)."""
        return self._fetch("SELECT service, resource, params FROM _loads WHERE status IN ('complete', 'stale') "
                           "QUALIFY row_number() OVER (PARTITION BY service, resource ORDER BY seq DESC NULLS "
                           "LAST, finished DESC) = 1 ORDER BY service, resource")

    def sql(self, query: str, params: Any = None) -> Query | None:
        """A DuckDB relation (`.df()`, `.to_arrow_table()`, `.show()`); a statement like UPDATE runs at once.
        A table the workspace does not hold is an UnknownTableError saying what it holds."""
        try:
            with self._file.held() as con:
                relation = con.sql(query, params=params)
                if relation is None:
                    return None
                if relation.type != "QUERY_RELATION":  # it ran already: its rows are kept, it is not run again
                    return Query(self, query, params, rows=relation.to_arrow_table())
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
            raise UnknownTableError(self._not_held(schema, name) + hint) from None
        return Query(self, query, params)

    def _has_loads_table(self) -> bool:
        """Whether this is a workspace at all (a lake's `_loads` is a view: toolkit.storage.ledger)."""
        return self._has_own("_loads")

    def loads(self) -> pd.DataFrame:
        """Every load: when, what, params (JSON), rows, requests, status, error, failed ids, key."""
        return self._frame(f"SELECT * FROM {self._loads_table()} ORDER BY started")

    def history(self, resource: str) -> pd.DataFrame:
        """The loads of one resource ("service.resource", or "resource" when only one service has it):
        `service_clock` is the service's Date when the load ran (its `finished` where none was sent);
        `rows` is what the load itself wrote (an incremental load writes only what changed)."""
        service, name = self.resolve(resource)
        return self._frame("SELECT load_id, started, finished, coalesce(service_clock, finished) AS service_clock, "
                           "status, \"rows\", requests, params, error, "
                           f"failed_ids FROM {self._loads_table()} WHERE service = ? AND resource = ? "
                           "ORDER BY started", [service, name])

    def timeline(self, resource: str, by: str | Sequence[str] | None = None,
                 agg: str | Mapping[str, str] | None = None) -> Timeline:
        """A measure of a resource at every finished load: one row per load × group with the load's id,
        number (`seq`), `finished` and `service_clock`, the `by` columns and the measure (`rows`, the
        rows the view showed then, by default; `agg` an SQL aggregate, or names → aggregates). Read
        from the row versions the store keeps, in one query; `.plot()` draws it over the service's clock.

            ws.timeline("audience_platform.memberships", by="audience_id").plot()
            ws.timeline("translation.targets", by="language", agg={"words": "sum(words)"})
        """
        service, name = self.resolve(resource)
        groups = [by] if isinstance(by, str) else list(by or [])
        asked = measures(agg)
        if not self._has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        try:
            found = self._frame(timeline_sql(service, name, groups, asked))
        except duckdb.Error as error:  # a column or aggregate the resource has not: say which
            raise WorkspaceError(f"the timeline of {service}.{name} by {groups} of {asked} failed: "
                                 f"{str(error).strip().splitlines()[0][:200]}") from None
        timeline = Timeline(found)
        timeline.by, timeline.measure = groups, next(iter(asked))
        return timeline

    def versions(self, resource: str, relation: bool = False) -> pd.DataFrame | Query:
        """Every version of a resource's rows with its validity: the `<resource>__history` view
        (`valid_from_load`/`valid_to_load`, `valid_from`/`valid_to` by the service's clock, and
        `_seq` numbers as `_loads.seq`). A row that went A→B→A has three versions."""
        service, name = self.resolve(resource)
        if not self._has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        query = (f"SELECT * FROM {quote(service)}.{quote(name + '__history')} "
                 "ORDER BY valid_from_seq, valid_to_seq NULLS LAST")
        return Query(self, query) if relation else self._frame(query)

    def drift(self, resource: str | None = None, load_id: str | None = None) -> pd.DataFrame:
        """How loads' answers differed from their resources' declared shapes (toolkit.pull.drift): a row per
        load, field and kind (undeclared, missing, type, category, envelope), with how many records
        (or pages) and one example, secrets masked. Every load by default; one resource's, or one load's.

            ws.drift("translation.targets")
        """
        query, args = f"SELECT load_id, service, resource, drift FROM {self._loads_table()} WHERE drift IS NOT NULL", []
        if resource is not None:
            query += " AND service = ? AND resource = ?"
            args += list(self.resolve(resource))
        if load_id is not None:
            query += " AND load_id = ?"
            args.append(load_id)
        rows = self._fetch(query + " ORDER BY started", args) if self._has_drift() else []
        found = [(load, service, name, entry["field"], entry["kind"], entry["count"], entry["example"])
                 for load, service, name, text in rows for entry in orjson.loads(text)]
        columns = ["load_id", "service", "resource", "field", "kind", "count", "example"]
        table = pa.table({name: pa.array([row[i] for row in found], pa.int64() if name == "count" else pa.string())
                          for i, name in enumerate(columns)})
        return to_frame(table)

    def _has_drift(self) -> bool:
        """Whether `_loads` has its `drift` column: a file written before it, opened read-only, has not."""
        return bool(self._fetch("SELECT 1 FROM duckdb_columns() WHERE database_name = current_database() "
                                "AND schema_name = 'main' AND table_name = '_loads' AND column_name = 'drift'"))

    def _loads_table(self) -> str:
        """`_loads` with the running loads of processes that died marked interrupted: in the file by a
        read-write workspace, in what it shows by a read-only one."""
        with self._file.held() as con:
            if self.read_only:
                return _loads_read(self._dead_loads(con))
            self._mend_interrupted(con)
        return "_loads"

    def diff(self, resource: str, before: str | None = None, after: str | None = None) -> Diff:
        """Rows added, removed and changed between two loads of a resource, matched by its key.

            ws.diff("translation.targets").changed     # the last two complete loads
        """
        service, name = self.resolve(resource)
        numbers = dict(self._fetch(
            "SELECT load_id, seq FROM _loads WHERE service = ? AND resource = ? "
            "AND status IN ('complete', 'stale') ORDER BY seq", [service, name]))
        finished = list(numbers)
        for given in (before, after):
            if given is not None and given not in finished:
                raise WorkspaceError(f"{given!r} is not a complete load of {service}.{name}")
        after = after or (finished[-1] if finished else None)
        if before is None and after in finished and finished.index(after) > 0:
            before = finished[finished.index(after) - 1]
        if before is None or after is None:
            raise WorkspaceError(f"{service}.{name} needs two complete loads to compare; "
                                 f"it has {len(finished)}")
        key = self._fetch("SELECT \"key\" FROM _loads WHERE load_id = ?", [after])[0][0] or []
        categories = self.categories(service, name)
        with self._file.held() as con:
            return diff_loads(con, f"{service}.{name}", versions_of(service, name),
                              (before, numbers[before]), (after, numbers[after]), list(key), categories)

    def resolve(self, resource: str) -> tuple[str, str]:
        """("service", "resource") from "service.resource", or from "resource" if only one service has
        it; a resource the workspace holds no load of is a WorkspaceError naming those it holds."""
        self._check_open()
        if not isinstance(resource, str) or not resource:
            raise WorkspaceError(f"name a resource as 'service.resource', not {resource!r}")
        if "." in resource:
            service, name = resource.split(".", 1)
            if not self._fetch("SELECT 1 FROM _loads WHERE service = ? AND resource = ? LIMIT 1", [service, name]):
                raise WorkspaceError(self._not_held(service, name))
            return service, name
        services = [row[0] for row in self._fetch(
            "SELECT DISTINCT service FROM _loads WHERE resource = ? ORDER BY 1", [resource])]
        if not services:
            raise WorkspaceError(self._not_held(None, resource))
        if len(services) != 1:
            raise WorkspaceError(f"services {', '.join(services)} all have {resource!r}: say which, "
                                 f"as 'service.{resource}'")
        return services[0], resource

    def _not_held(self, service: str | None, name: str) -> str:
        """What to say of a resource the workspace holds no load of: what it holds instead, or that
        its loads all failed and where to read why."""
        rows = self._fetch(f"SELECT service, resource, bool_or(status IN {FINISHED}), count(*) FROM _loads "
                           "GROUP BY ALL ORDER BY 1, 2")
        held = [f"{s}.{r}" for s, r, finished, _ in rows if finished]
        failed = {f"{s}.{r}": n for s, r, finished, n in rows if not finished}
        subsets = [h for h in held if h.endswith("." + filtered_of(name)) and (service is None or
                                                                              h == f"{service}.{filtered_of(name)}")]
        asked = f"{service}.{name}" if service else repr(name)
        if subsets:
            return (f"{asked} has no load of the whole resource, only filtered ones: {subsets[0]}. Fetch it "
                    f"without filters for the whole, or read {subsets[0]}")
        tried = [t for t in failed if t == asked or (service is None and t.endswith("." + name))]
        if tried:
            return (f"{tried[0]} has no view: its {failed[tried[0]]} load(s) failed, none finished. "
                    f"ws.history({tried[0]!r}) says why; fetch it again once that is fixed")
        listed = ", ".join(held[:12]) + (f" and {len(held) - 12} more" if len(held) > 12 else "")
        if service:     # the call that fetches it, or the name the catalog has
            return f"{how_to_fetch(service, name)} (this workspace holds {listed or 'nothing yet'})"
        return f"no load of {asked} in this workspace; it holds {listed or 'nothing yet'}"

    def tables(self, internals: bool = False) -> pd.DataFrame:
        """What each view of the workspace shows: one row per `service.resource` (and its
        `__filtered` loads) with the latest finished load's id, when it finished, `rows` (what the
        view shows, its `count(*)`), `written` (the rows that load itself wrote: fewer for an
        incremental load), the
        filters it was fetched with (JSON, shortened past 120 characters) and how many loads the
        history holds. `internals=True` adds what toolkit keeps for itself (`_loads`, `_audit`, each
        resource's `__versions` and `__loads`), with `internal` True and no load columns."""
        views = self._views()
        if not internals:
            return views
        kept = self._frame("""
            SELECT schema_name || '.' || table_name AS "table", schema_name AS service, table_name AS resource
            FROM duckdb_tables() WHERE database_name = current_database() UNION ALL
            SELECT schema_name || '.' || view_name, schema_name, view_name FROM duckdb_views()
            WHERE database_name = current_database() AND NOT internal ORDER BY 1""")
        kept = kept[~kept["table"].isin(views["table"])]
        return pd.concat([views.assign(internal=False), kept.assign(internal=True)], ignore_index=True)

    def _views(self) -> pd.DataFrame:
        views = self._frame(f"""
            SELECT service || '.' || resource AS "table", service, resource,
                   arg_max(load_id, coalesce(seq, 0)) AS load_id, max(finished) AS finished,
                   0::BIGINT AS "rows", arg_max("rows", coalesce(seq, 0)) AS written,
                   -- a summary: a filter of a hundred ids is shortened (history() has it whole)
                   CASE WHEN length(arg_max(params, coalesce(seq, 0))) > 120
                        THEN left(arg_max(params, coalesce(seq, 0)), 119) || '…'
                        ELSE arg_max(params, coalesce(seq, 0)) END AS params,
                   resource LIKE '%{FILTERED}' AS filtered, count(*) AS loads
            FROM {self._loads_table()} WHERE status IN {FINISHED}
            GROUP BY ALL ORDER BY service, resource""")
        # "rows" is what the view shows (an incremental load writes only what changed: that is `written`)
        counts = self.view_counts()
        views["rows"] = [counts.get((s, r), 0) for s, r in zip(views["service"], views["resource"], strict=True)]
        return views

    def view_counts(self) -> dict[tuple[str, str], int]:
        """The rows each resource's view shows now, `count(*)` of it: the one meaning of "rows" on every
        surface (tables, manifest, freshness, show, reports); a load's own count is `written`."""
        with self._file.held() as con:
            held = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = "
                               "current_database() AND suffix(table_name, '__versions')").fetchall()
            return {(s, t.removesuffix("__versions")): con.execute(
                f"SELECT count(*) FROM {quote(s)}.{quote(t)} WHERE _valid_to IS NULL").fetchall()[0][0]
                for s, t in held}

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
        chosen = None if resources is None else [self.resolve(r) for r in
                                                  ([resources] if isinstance(resources, str) else resources)]
        when = None
        if since is not None:
            stamp = pd.Timestamp(since)
            when = (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")).to_pydatetime()
        with self._file.held("exporting a snapshot") as con:
            return exports.export(con, Path(path), format, history, overwrite, self.path, chosen, when)

    # -- plumbing ----------------------------------------------------------------------------------

    def _fetch(self, query: str, params: Any = None) -> list[tuple]:
        with self._file.held() as con:
            return con.execute(query, params).fetchall()

    def _frame(self, query: str, params: Any = None) -> pd.DataFrame:
        with self._file.held() as con:
            table = con.sql(query, params=params).to_arrow_table()
        return to_frame(table)

    def _has_table(self, service: str, resource: str) -> bool:
        return bool(self._fetch("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                                "AND schema_name = ? AND table_name = ?", [service, resource + "__versions"]))

    def _has_categories(self) -> bool:
        return self._has_own("_categories")

    def _has_own(self, name: str) -> bool:
        """Whether the workspace has one of its own tables in `main` (in a lake, a view: toolkit.storage.ledger)."""
        return bool(self._fetch("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                                "AND schema_name = 'main' AND table_name = ? UNION ALL SELECT 1 FROM duckdb_views() "
                                "WHERE database_name = current_database() AND schema_name = 'main' AND view_name = ?",
                                [name, name]))

    def close(self) -> None:
        """Let the file go for good (other processes hold it as they need it); closing again does nothing."""
        self._file.close()

    def __enter__(self) -> Store:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " (closed)" if self.closed else ""
        return f"<toolkit.{type(self).__name__} {self.where}{state}>"
