"""What a workspace holds, read: its loads (`_loads`, with those of dead processes shown interrupted),
the names of its resources and views, one load's rows, and the plumbing every reader shares.

`Holdings` is the collaborator of `toolkit.storage.store.Store` that reads the file and changes nothing
in it but the mark of loads whose process died. It is handed the Store's FileHandle and nothing else;
`toolkit.storage.history` reads across loads through its public methods (`rows`, `frame`, `has_table`,
`rows_of`, `loads_table`), and the Store hands its public reads on to it.
"""
from __future__ import annotations

__all__ = ["INTERRUPTED", "Holdings", "closed_message", "shown_place"]

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.catalog import how_to_fetch
from toolkit.errors import WorkspaceError
from toolkit.storage import id_lists, ledger
from toolkit.storage.file import FILTERED, FINISHED, filtered_of, literal, quote, valid_at, versions_of
from toolkit.storage.handle import FileHandle
from toolkit.storage.lake import Lake, settled
from toolkit.storage.processes import alive
from toolkit.storage.readback import shaped, to_frame

INTERRUPTED = "interrupted: the process ended during the load"


def _loads_read(dead: Sequence[str]) -> str:
    """`_loads` as a read-only workspace shows it: the running loads whose process died, interrupted."""
    if not dead:
        return "_loads"
    ids = "[" + ", ".join(literal(load_id) for load_id in dead) + "]"
    gone = f"(status = 'running' AND list_contains({ids}, load_id))"
    return (f"(SELECT * REPLACE (CASE WHEN {gone} THEN 'interrupted' ELSE status END AS status, "
            f"CASE WHEN {gone} THEN coalesce(finished, started) ELSE finished END AS finished, "
            f"CASE WHEN {gone} THEN '{INTERRUPTED}' ELSE error END AS error) FROM _loads)")


def shown_place(path: Path | None, lake: Lake | None) -> str:
    """Where a workspace lives, safe to show: its file, its lake (password masked), or memory."""
    return lake.shown if lake else str(path) if path else ":memory:"


def closed_message(path: Path | None, lake: Lake | None) -> str:
    """What every call of a closed workspace says: how to open it again."""
    where = shown_place(path, lake)
    again = f"toolkit.Workspace({where!r})" if path or lake else "toolkit.Workspace() (an in-memory one starts empty)"
    return f"workspace {where} is closed; open it again with {again}"


class Holdings:
    """The workspace's file read: names resolved, views listed and counted, one load's rows, `_loads`.

    Handed the Store's FileHandle, which knows the file's path, its lake and whether it is read-only."""

    def __init__(self, file: FileHandle) -> None:
        self._file = file

    @property
    def where(self) -> str:
        return shown_place(self._file.path, self._file.lake)

    def check_open(self) -> None:
        if self._file.closed:
            raise WorkspaceError(closed_message(self._file.path, self._file.lake))

    def _dead_loads(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """The running loads whose process no longer lives (toolkit.storage.processes)."""
        owned = "owner" if con.execute(
            "SELECT 1 FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' "
            "AND table_name = '_loads' AND column_name = 'owner'").fetchall() else "NULL"
        return [load_id for load_id, owner in con.execute(
            f"SELECT load_id, {owned} FROM _loads WHERE status = 'running'").fetchall() if not alive(owner)]

    def mend_interrupted(self, con: duckdb.DuckDBPyConnection) -> None:
        """Mark the running loads whose process died interrupted, in the file (a read-write workspace)."""
        dead, lake = self._dead_loads(con), self._file.lake is not None
        if dead:
            settled(lambda: ledger.update_loads(
                con, lake, [("status", "'interrupted'"), ("finished", "coalesce(finished, started)"), ("error", "?")],
                [INTERRUPTED], "status = 'running' AND list_contains(?, load_id)", [dead]), lake)

    def loads_table(self) -> str:
        """`_loads` with the running loads of processes that died marked interrupted: in the file by a
        read-write workspace, in what it shows by a read-only one."""
        with self._file.held() as con:
            if self._file.read_only:
                return _loads_read(self._dead_loads(con))
            self.mend_interrupted(con)
        return "_loads"

    def resolve(self, resource: str) -> tuple[str, str]:
        """("service", "resource") from "service.resource", or from "resource" if only one service has
        it; a resource the workspace holds no load of is a WorkspaceError naming those it holds."""
        self.check_open()
        if not isinstance(resource, str) or not resource:
            raise WorkspaceError(f"name a resource as 'service.resource', not {resource!r}")
        if "." in resource:
            service, name = resource.split(".", 1)
            if not self.rows("SELECT 1 FROM _loads WHERE service = ? AND resource = ? LIMIT 1", [service, name]):
                raise WorkspaceError(self.not_held(service, name))
            return service, name
        services = [row[0] for row in self.rows(
            "SELECT DISTINCT service FROM _loads WHERE resource = ? ORDER BY 1", [resource])]
        if not services:
            raise WorkspaceError(self.not_held(None, resource))
        if len(services) != 1:
            raise WorkspaceError(f"services {', '.join(services)} all have {resource!r}: say which, "
                                 f"as 'service.{resource}'")
        return services[0], resource

    def not_held(self, service: str | None, name: str) -> str:
        """What to say of a resource the workspace holds no load of: what it holds instead, or that
        its loads all failed and where to read why."""
        rows = self.rows(f"SELECT service, resource, bool_or(status IN {FINISHED}), count(*) FROM _loads "
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

    def read(self, service: str, resource: str, load_id: str | None = None) -> pd.DataFrame:
        """One load's rows (the latest complete one by default) as a DataFrame."""
        load_id = load_id or self.latest(service, resource)
        if load_id is None:
            raise WorkspaceError(self.not_held(service, resource) if not self.rows(
                "SELECT 1 FROM _loads WHERE service = ? AND resource = ? LIMIT 1", [service, resource])
                else f"no complete load of {service}.{resource} in {self.where}")
        if not self.has_table(service, resource):  # a load that never wrote a batch
            return pd.DataFrame()
        with self._file.held() as con:
            con.execute("BEGIN TRANSACTION")  # the load's number and its rows from the same commits
            try:
                query, args = self.rows_of(con, service, resource, load_id)
                table = con.sql(query, params=args).to_arrow_table()
            finally:
                con.execute("COMMIT")
        return to_frame(table, self.categories(service, resource))

    def rows_of(self, con: duckdb.DuckDBPyConnection, service: str, resource: str,
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
        rows = self.rows("SELECT load_id FROM _loads WHERE service = ? AND resource = ? AND status IN "
                           "('complete', 'stale') ORDER BY seq DESC NULLS LAST, finished DESC LIMIT 1",
                           [service, resource])
        return rows[0][0] if rows else None

    def categories(self, service: str, resource: str) -> dict[str, list[str]]:
        if self._file.read_only and not self.has_categories():
            return {}
        rows = self.rows("SELECT column_name, categories FROM _categories "
                           "WHERE service = ? AND resource = ?",
                           [service, resource])
        return {name: list(values) for name, values in rows}

    def loads(self) -> pd.DataFrame:
        """Every load: when, what, params (JSON), rows, requests, status, error, failed ids, key; in
        their order (a resource's by `seq`, never before one numbered earlier whatever the clock said)."""
        return self.frame(f"SELECT * FROM {self.loads_table()} ORDER BY {ledger.IN_ORDER}")

    def latest_loads(self) -> list[tuple[str, str, str]]:
        """Each resource's latest finished load: (service, resource, its params as JSON)."""
        return self.rows("SELECT service, resource, params FROM _loads WHERE status IN ('complete', 'stale') "
                           "QUALIFY row_number() OVER (PARTITION BY service, resource ORDER BY seq DESC NULLS "
                           "LAST, finished DESC) = 1 ORDER BY service, resource")

    def confirmations(self, service: str, resource: str, clock: str = "service") -> dict[str, Any]:
        """When each parent's rows were last confirmed: by the service's clock where the load saw it,
        else when the load finished (`clock="wall"`: when the load finished, this machine's clock);
        {} when none was ever recorded."""
        if not self.has_own("_confirmed"):
            return {}
        moment = "l.finished" if clock == "wall" else "coalesce(l.service_clock, l.finished)"
        return dict(self.rows(
            f"SELECT c.parent, max({moment}) FROM _confirmed c JOIN _loads l "
            f"ON l.load_id = c.load_id AND l.status IN {FINISHED} WHERE c.service = ? AND c.resource = ? "
            f"GROUP BY 1", [service, resource]))

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
        kept = self.frame("""
            SELECT schema_name || '.' || table_name AS "table", schema_name AS service, table_name AS resource
            FROM duckdb_tables() WHERE database_name = current_database() UNION ALL
            SELECT schema_name || '.' || view_name, schema_name, view_name FROM duckdb_views()
            WHERE database_name = current_database() AND NOT internal ORDER BY 1""")
        kept = kept[~kept["table"].isin(views["table"])]
        return pd.concat([views.assign(internal=False), kept.assign(internal=True)], ignore_index=True)

    def _views(self) -> pd.DataFrame:
        views = self.frame(f"""
            SELECT service || '.' || resource AS "table", service, resource,
                   arg_max(load_id, coalesce(seq, 0)) AS load_id, max(finished) AS finished,
                   0::BIGINT AS "rows", arg_max("rows", coalesce(seq, 0)) AS written,
                   -- a summary: a filter of a hundred ids is shortened (history() has it whole)
                   CASE WHEN length(arg_max(params, coalesce(seq, 0))) > 120
                        THEN left(arg_max(params, coalesce(seq, 0)), 119) || '…'
                        ELSE arg_max(params, coalesce(seq, 0)) END AS params,
                   resource LIKE '%{FILTERED}' AS filtered, count(*) AS loads
            FROM (SELECT * REPLACE ({id_lists.SHOWN} AS params) FROM {self.loads_table()}) WHERE status IN {FINISHED}
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

    def params_texts(self, service: str, resource: str, params: Mapping[str, Any] | None) -> list[str]:
        """What a load of these params recorded: now, or (a resource's loads from before) ids inline."""
        return id_lists.texts(params, lambda: bool(self.rows(
            f"SELECT 1 FROM _loads WHERE service = ? AND resource = ? AND {id_lists.INLINE_RECORD} LIMIT 1",
            [service, resource])))

    def recorded_params(self, text: str | None) -> dict[str, Any]:
        """A load's recorded params (`_loads.params`) as a pull takes them, every list of ids named by
        digest read back (toolkit.storage.id_lists)."""
        params = orjson.loads(text or "{}")
        if not any(id_lists.is_recorded(value) for value in params.values()):
            return params
        with self._file.held() as con:
            return id_lists.expanded(con, params)

    def rows(self, query: str, params: Any = None) -> list[tuple]:
        """A query's rows on the workspace's own connection, under its lock: what the pull floor asks of
        `_loads` and of the row versions (toolkit.storage.file names them). `sql` is the analyst's."""
        with self._file.held() as con:
            return con.execute(query, params).fetchall()

    def arrow(self, query: str, params: Any = None, tables: Mapping[str, pa.Table] | None = None) -> pa.Table:
        """A query's rows as Arrow, on the workspace's own connection under its lock, with a load's
        threads and memory limit (`FileHandle.loads_begin`); `tables`, Arrow tables the query names,
        registered for it alone. What the pull floor sets against the held rows to plan a load (a
        refresh's ids against the unchanged parents), in DuckDB rather than Python sets: under the
        analyst's limit DuckDB kept the blocks it read, and a refresh of the memberships of 200,000
        profiles held 70 MB more after its plan than before, against 20 MB under a load's."""
        with self._file.held() as con:
            self._file.loads_begin()
            for name, table in (tables or {}).items():
                con.register(name, table)
            try:
                return con.sql(query, params=params).to_arrow_table()
            finally:
                for name in tables or {}:
                    con.unregister(name)
                self._file.loads_end()

    def frame(self, query: str, params: Any = None) -> pd.DataFrame:
        with self._file.held() as con:
            table = con.sql(query, params=params).to_arrow_table()
        return to_frame(table)

    def has_table(self, service: str, resource: str) -> bool:
        return bool(self.rows("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                                "AND schema_name = ? AND table_name = ?", [service, resource + "__versions"]))

    def has_categories(self) -> bool:
        return self.has_own("_categories")

    def has_own(self, name: str) -> bool:
        """Whether the workspace has one of its own tables in `main` (in a lake, a view: toolkit.storage.ledger)."""
        return bool(self.rows("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                                "AND schema_name = 'main' AND table_name = ? UNION ALL SELECT 1 FROM duckdb_views() "
                                "WHERE database_name = current_database() AND schema_name = 'main' AND view_name = ?",
                                [name, name]))
