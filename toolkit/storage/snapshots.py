"""Snapshots: what a workspace exported (toolkit.storage.exports) to one standalone file, read back.

A DuckDB snapshot has a schema per service and a table per resource with its latest complete load; with
`history=True`, the workspace's own layout instead (toolkit.storage.file): `<resource>__versions` with the
row versions, the `<resource>` view of the latest load and the `<resource>__loads` view of every load's
rows with `_load_id`. `_loads` lists the loads included and `_manifest` has one row per resource:
toolkit version, when it was made, the source (service, base URL), key, params, loads, `rows` (what
the resource's view shows, its `count(*)`), `written` (what its latest load itself wrote), `versions`
(the row versions kept), `since` (the loads kept, when exported with `since=`) and the schema as JSON. A Parquet snapshot is a folder: `<service>/<resource>/*.parquet`, `_loads.parquet` and
`manifest.json`, which Spark, Trino, BigQuery and DuckDB read as they are; with history, a resource's
file is `versions.parquet` (format_version 2; version 1 had a file per load, with `_load_id`).

    ws.export("snapshot.duckdb"); toolkit.open_snapshot("snapshot.duckdb").read("translation", "targets")
"""
from __future__ import annotations

__all__ = ["MANIFEST_SCHEMA", "Snapshot", "manifest_table", "open_snapshot"]

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.errors import SnapshotNotFoundError, WorkspaceError
from toolkit.storage.file import (
    damage_said,
    history_view_sql,
    literal,
    loads_view_sql,
    old_table_of,
    open_duckdb,
    quote,
    session,
    usable_path,
    versions_of,
    view_sql,
)
from toolkit.storage.ledger import IN_ORDER
from toolkit.storage.readback import to_frame
from toolkit.storage.sealed import Limits, seal
from toolkit.storage.timeline import Timeline, measures, timeline_sql

MANIFEST_SCHEMA = pa.schema([
    ("toolkit_version", pa.string()), ("created", pa.timestamp("us", tz="UTC")), ("history", pa.bool_()),
    ("service", pa.string()), ("resource", pa.string()), ("base_url", pa.string()),
    ("key", pa.list_(pa.string())), ("load_id", pa.string()), ("load_ids", pa.list_(pa.string())),
    ("params", pa.string()), ("rows", pa.int64()), ("written", pa.int64()), ("versions", pa.int64()),
    ("since", pa.timestamp("us", tz="UTC")), ("schema", pa.string()), ("files", pa.list_(pa.string())),
    # the DuckDB storage version a DuckDB snapshot is written in and the oldest DuckDB that opens it
    # (toolkit.storage.exports); none for Parquet or a snapshot written before they were recorded
    ("storage_version", pa.string()), ("duckdb_opens", pa.string()),
])


def open_snapshot(path: str | Path) -> Snapshot:
    """A snapshot (DuckDB file or Parquet folder) opened read-only.

        snap = toolkit.open_snapshot("snapshot-2026-11-22.duckdb"); snap.read("translation", "targets")
    """
    return Snapshot(path)


class Snapshot:
    """An exported snapshot, read-only: `.read()`, `.sql()`, `.tables()`, `.manifest()`, `.loads()`."""

    def __init__(self, path: str | Path, sealed: Limits | None = None) -> None:
        """`sealed=Limits(...)` seals its connection with DuckDB's own switches once its views are made
        (toolkit.storage.sealed): what an assistant is served through."""
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise SnapshotNotFoundError(f"no snapshot at {Path(self.path).absolute()}: toolkit export (or ws.export(path)) "
                                        "writes one")
        usable_path(self.path, "snapshot")
        if self.path.is_dir():
            if not (self.path / "manifest.json").is_file():
                raise SnapshotNotFoundError(f"{self.path} is a folder but no Parquet snapshot (it has no "
                                            "manifest.json): toolkit export --format parquet writes one")
            self._con = session(duckdb.connect())
            self._views_over_parquet()
        else:
            self._con = open_duckdb(self.path, read_only=True)
            self._refuse_a_workspace()
        if sealed is not None:
            try:
                seal(self._con, sealed, readable=[self.path] if self.path.is_dir() else [])
            except BaseException:
                self._con.close()
                raise
        self._closed = False

    def interrupt(self) -> None:
        """Stop the query running now, from another thread: a call past its time limit."""
        with contextlib.suppress(Exception):
            self._con.interrupt()

    def _refuse_a_workspace(self) -> None:
        """A workspace is not a snapshot: reading it as one would hold its file against the processes
        that pull into it. Let it go at once and say what to open instead."""
        names = {name for (name,) in self._con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND "
            "schema_name = 'main'").fetchall()}
        if "_manifest" in names:
            return
        self._con.close()
        what = "a toolkit workspace" if "_loads" in names else "a DuckDB file toolkit did not export"
        raise WorkspaceError(f"{self.path} is {what}, not a snapshot: read it with "
                             f"toolkit.Workspace({str(self.path)!r}, read_only=True), or export a snapshot "
                             "of it (ws.export(path))")

    @property
    def closed(self) -> bool:
        return self._closed

    def _open(self) -> duckdb.DuckDBPyConnection:
        """The connection; a closed snapshot says so instead of failing somewhere in DuckDB."""
        if self._closed:
            raise WorkspaceError(f"snapshot {self.path} is closed; open it again with "
                                 f"toolkit.open_snapshot({str(self.path)!r})")
        return self._con

    def _said(self) -> contextlib.AbstractContextManager[None]:
        """A read of the snapshot, whose damaged file says so (WorkspaceDamagedError)."""
        return damage_said(None if self.path.is_dir() else self.path)

    def _views_over_parquet(self) -> None:
        document = orjson.loads((self.path / "manifest.json").read_bytes())
        con, root = self._con, self.path.absolute()
        loads = literal(str(root / "_loads.parquet"))
        con.execute(f"CREATE VIEW _loads AS SELECT * FROM read_parquet({loads})")
        for entry in document["resources"]:
            service, resource = entry["service"], entry["resource"]
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(service)}")
            if not entry["files"]:
                continue
            files = ", ".join(literal(str(root / f)) for f in entry["files"])
            source = f"SELECT * FROM read_parquet([{files}], union_by_name = true)"
            if entry["history"] and document.get("format_version", 1) >= 2:
                con.execute(f"CREATE VIEW {versions_of(service, resource)} AS {source}")
                con.execute(view_sql(service, resource))
                con.execute(loads_view_sql(service, resource))
                with contextlib.suppress(duckdb.BinderException):  # a snapshot older than `service_clock`
                    con.execute(history_view_sql(service, resource))
            elif entry["history"]:  # a copy of every load, each file with its `_load_id`
                con.execute(f"CREATE VIEW {old_table_of(service, resource)} AS {source}")
                con.execute(f"CREATE VIEW {quote(service)}.{quote(resource)} AS SELECT * EXCLUDE "
                            f"(_load_id) FROM {old_table_of(service, resource)} "
                            f"WHERE _load_id = {literal(entry['load_id'])}")
            else:
                con.execute(f"CREATE VIEW {quote(service)}.{quote(resource)} AS {source}")
        for entry in document["resources"]:
            entry["created"] = datetime.fromisoformat(entry["created"])
            if entry.get("since"):
                entry["since"] = datetime.fromisoformat(entry["since"])
        con.register("_toolkit_manifest", manifest_table(document["resources"]))
        con.execute("CREATE TABLE _manifest AS SELECT * FROM _toolkit_manifest")
        con.unregister("_toolkit_manifest")

    def sql(self, query: str, params: Any = None) -> duckdb.DuckDBPyRelation | None:
        """A DuckDB relation over the snapshot (`.df()`, `.to_arrow_table()`, `.show()`)."""
        return self._open().sql(query, params=params)

    def tables(self, internals: bool = False) -> pd.DataFrame:
        """The analyst's tables and views: schema, name, kind, rows (their `count(*)`). `internals=True` adds what toolkit keeps
        for itself: `_loads`, `_manifest`, and each resource's `__versions`, `__loads` and `__history`."""
        query = ("SELECT schema_name AS schema, table_name AS name, 'table' AS kind "
                 "FROM duckdb_tables() WHERE database_name = current_database() UNION ALL "
                 "SELECT schema_name, view_name, 'view' FROM duckdb_views() "
                 "WHERE database_name = current_database() AND NOT internal")
        if not internals:
            query = (f"SELECT * FROM ({query}) WHERE NOT starts_with(name, '_') "
                     "AND NOT suffix(name, '__versions') AND NOT suffix(name, '__loads') "
                     "AND NOT suffix(name, '__history')")
        found = self._frame(query + " ORDER BY 1, 2")
        # the one meaning of "rows": what each table or view shows, as in ws.tables() and the manifest
        with self._said():
            found["rows"] = [self._open().execute(f"SELECT count(*) FROM {quote(schema)}.{quote(name)}")
                             .fetchall()[0][0] for schema, name in zip(found["schema"], found["name"], strict=True)]
        return found

    def manifest(self) -> pd.DataFrame:
        """One row per resource: toolkit version, created, source, key, params, loads, rows, schema (JSON)."""
        try:
            return self._frame("SELECT * FROM _manifest ORDER BY service, resource")
        except duckdb.CatalogException:
            raise WorkspaceError(f"{self.path} has no _manifest: it is not an exported snapshot") from None

    def timeline(self, resource: str, by: str | Sequence[str] | None = None,
                 agg: str | Mapping[str, str] | None = None) -> Timeline:
        """`Store.timeline` over the loads a snapshot exported with history holds ("service.resource")."""
        service, _, name = resource.partition(".")
        groups = [by] if isinstance(by, str) else list(by or [])
        asked = measures(agg)
        try:
            with self._said():
                found = to_frame(self._open().sql(timeline_sql(service, name, groups, asked)).to_arrow_table())
        except duckdb.CatalogException:
            raise WorkspaceError(f"{self.path} has no history of {resource} (export it with history=True)") from None
        except duckdb.Error as error:
            raise WorkspaceError(f"the timeline of {resource} by {groups} of {asked} failed: "
                                 f"{str(error).strip().splitlines()[0][:200]}") from None
        timeline = Timeline(found)
        timeline.by, timeline.measure = groups, next(iter(asked))
        return timeline

    def loads(self) -> pd.DataFrame:
        """The loads the snapshot holds."""
        return self._frame(f"SELECT * FROM _loads ORDER BY {IN_ORDER}")

    def read(self, service: str, resource: str, load_id: str | None = None) -> pd.DataFrame:
        """A resource as a DataFrame: its latest load, or `load_id` of a snapshot exported with history."""
        if load_id is None:
            query, args = f"SELECT * FROM {quote(service)}.{quote(resource)}", None
        else:
            # every load's rows: a view over the versions, or the table of copies an older export wrote
            query = f"SELECT * EXCLUDE (_load_id) FROM {old_table_of(service, resource)} WHERE _load_id = ?"
            args = [load_id]
        try:
            with self._said():
                table = self._open().sql(query, params=args).to_arrow_table()
        except duckdb.CatalogException:
            what = "with history=True" if load_id else "holding it"
            raise WorkspaceError(f"{self.path} has no {service}.{resource} (export it {what})") from None
        return to_frame(table, self._categories(service, resource))

    def _categories(self, service: str, resource: str) -> dict[str, list[str]]:
        try:
            with self._said():
                rows = self._open().execute("SELECT schema FROM _manifest WHERE service = ? AND resource = ?",
                                            [service, resource]).fetchall()
        except duckdb.CatalogException:
            return {}
        schema = orjson.loads(rows[0][0]) if rows else []
        return {c["name"]: c["categories"] for c in schema if "categories" in c}

    def _frame(self, query: str) -> pd.DataFrame:
        with self._said():
            return to_frame(self._open().sql(query).to_arrow_table())

    def close(self) -> None:
        """Close the snapshot's connection; closing again is fine."""
        if not self._closed:
            self._closed = True
            self._con.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "Parquet folder" if self.path.is_dir() else "DuckDB file"
        state = ", closed" if self._closed else ""
        return f"<toolkit.Snapshot {self.path} ({kind}{state})>"


def manifest_table(resources: list[dict[str, Any]]) -> pa.Table:
    rows = [{**entry, "schema": orjson.dumps(entry["schema"]).decode()} for entry in resources]
    # a snapshot written before a column was added has none of it (`rows_total` of old is not `versions`)
    return pa.Table.from_pylist([{k: r.get(k) for k in MANIFEST_SCHEMA.names} for r in rows], MANIFEST_SCHEMA)
