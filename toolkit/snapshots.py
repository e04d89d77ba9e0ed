"""Snapshots: a workspace exported to one standalone file that says what it holds, and read back.

A DuckDB snapshot has a schema per service and a table per resource with its latest complete load; with
`history=True`, the workspace's own layout instead: `<resource>__loads` with every load's rows and
`_load_id`, and the `<resource>` view of the latest. `_loads` lists the loads included and `_manifest`
has one row per resource: toolkit version, when it was made, the source (service, base URL), key, params,
loads, rows and the schema as JSON. A Parquet snapshot is a folder: `<service>/<resource>/*.parquet`,
`_loads.parquet` and `manifest.json`, which Spark, Trino, BigQuery and DuckDB read as they are.

    ws.export("snapshot.duckdb"); toolkit.open_snapshot("snapshot.duckdb").read("translation", "targets")
"""
from __future__ import annotations

import os
import secrets
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.errors import WorkspaceError
from toolkit.loads import FINISHED, _now, literal, params_json, quote, session, table_of, view_sql
from toolkit.workspace import open_duckdb, to_frame

FORMATS = ("duckdb", "parquet")
MANIFEST_SCHEMA = pa.schema([
    ("toolkit_version", pa.string()), ("created", pa.timestamp("us", tz="UTC")), ("history", pa.bool_()),
    ("service", pa.string()), ("resource", pa.string()), ("base_url", pa.string()),
    ("key", pa.list_(pa.string())), ("load_id", pa.string()), ("load_ids", pa.list_(pa.string())),
    ("params", pa.string()), ("rows", pa.int64()), ("rows_total", pa.int64()), ("schema", pa.string()),
    ("files", pa.list_(pa.string())),
])


def export(con: duckdb.DuckDBPyConnection, path: Path, format: str = "duckdb", history: bool = False,
           overwrite: bool = False) -> Path:
    """Write the snapshot next to `path` and move it into place only when complete."""
    if format not in FORMATS:
        raise ValueError(f"format is one of {', '.join(FORMATS)}, not {format!r}")
    path = path.expanduser().absolute()
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists: pass overwrite=True to replace it")
    resources = _resources(con, history)
    temporary = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        if format == "duckdb":
            _to_duckdb(con, temporary, resources, history)
        else:
            _to_parquet(con, temporary, resources, history)
        if path.exists():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        os.replace(temporary, path)
    finally:
        if temporary.is_dir():
            shutil.rmtree(temporary)
        temporary.unlink(missing_ok=True)
        Path(f"{temporary}.wal").unlink(missing_ok=True)
    return path


def _resources(con: duckdb.DuckDBPyConnection, history: bool) -> list[dict[str, Any]]:
    """One entry per resource with a finished load: what goes in and what the manifest says of it."""
    import toolkit

    loads = con.execute(f"SELECT service, resource, load_id, base_url, params, \"key\", \"rows\" "
                        f"FROM _loads WHERE status IN {FINISHED} "
                        "ORDER BY service, resource, finished, started").fetchall()
    tables = {(s, t) for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database()").fetchall()}
    by_resource: dict[tuple[str, str], list[tuple]] = {}
    for row in loads:
        by_resource.setdefault((row[0], row[1]), []).append(row)
    created, entries = _now(), []
    for (service, resource), rows in by_resource.items():
        latest = rows[-1]
        included = rows if history else [latest]
        stored = (service, resource + "__loads") in tables
        categories = dict(con.execute("SELECT column_name, categories FROM _categories WHERE service = ? "
                                      "AND resource = ?", [service, resource]).fetchall())
        schema = [{"name": name, "type": kind, **({"categories": list(categories[name])}
                                                   if name in categories else {})}
                  for name, kind in con.execute(
                      "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                      "current_database() AND schema_name = ? AND table_name = ? "
                      "AND column_name != '_load_id' ORDER BY column_index",
                      [service, resource + "__loads"]).fetchall()]
        entries.append({
            "toolkit_version": toolkit.__version__, "created": created, "history": history,
            "service": service, "resource": resource, "base_url": latest[3], "key": list(latest[5] or []),
            "load_id": latest[2], "load_ids": [r[2] for r in included],
            "params": params_json(orjson.loads(latest[4] or "{}")),  # scrubbed again, to be sure
            "rows": latest[6], "rows_total": sum(r[6] or 0 for r in included), "schema": schema,
            "files": [], "stored": stored,
        })
    return entries


def _manifest_table(resources: list[dict[str, Any]]) -> pa.Table:
    rows = [{**entry, "schema": orjson.dumps(entry["schema"]).decode()} for entry in resources]
    return pa.Table.from_pylist([{k: r[k] for k in MANIFEST_SCHEMA.names} for r in rows], MANIFEST_SCHEMA)


def _included(resources: list[dict[str, Any]]) -> list[str]:
    return [load_id for entry in resources for load_id in entry["load_ids"]]


def _to_duckdb(con: duckdb.DuckDBPyConnection, target: Path, resources: list[dict[str, Any]],
               history: bool) -> None:
    alias = "_toolkit_export"
    con.execute(f"ATTACH {literal(str(target))} AS {alias}")
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            for entry in resources:
                service, resource = entry["service"], entry["resource"]
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {alias}.{quote(service)}")
                if not entry["stored"]:
                    continue
                if history:
                    con.execute(f"CREATE TABLE {alias}.{table_of(service, resource)} AS SELECT * FROM "
                                f"{table_of(service, resource)} WHERE list_contains(?, _load_id)",
                                [entry["load_ids"]])
                else:
                    con.execute(f"CREATE TABLE {alias}.{quote(service)}.{quote(resource)} AS "
                                f"SELECT * EXCLUDE (_load_id) FROM {table_of(service, resource)} "
                                "WHERE _load_id = ?",
                                [entry["load_id"]])
            con.execute(f"CREATE TABLE {alias}.main._loads AS SELECT * FROM _loads "
                        "WHERE list_contains(?, load_id) ORDER BY started", [_included(resources)])
            con.register("_toolkit_manifest", _manifest_table(resources))
            con.execute(f"CREATE TABLE {alias}.main._manifest AS SELECT * FROM _toolkit_manifest")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_toolkit_manifest")
    finally:
        con.execute(f"DETACH {alias}")
    if history:  # views bind in the file itself, so they read its own `_loads`
        with duckdb.connect(str(target)) as own:
            for entry in resources:
                if entry["stored"]:
                    own.execute(view_sql(entry["service"], entry["resource"]))


def _to_parquet(con: duckdb.DuckDBPyConnection, target: Path, resources: list[dict[str, Any]],
                history: bool) -> None:
    target.mkdir(parents=True)

    def copy(query: str, file: Path) -> None:
        con.execute(f"COPY ({query}) TO {literal(str(file))} (FORMAT parquet, COMPRESSION zstd)")

    for entry in resources:
        service, resource = entry["service"], entry["resource"]
        folder = target / service / resource
        folder.mkdir(parents=True)
        if not entry["stored"]:
            continue
        table = table_of(service, resource)
        if history:
            for load_id in entry["load_ids"]:
                copy(f"SELECT * FROM {table} WHERE _load_id = {literal(load_id)}",
                     folder / f"{load_id}.parquet")
        else:
            copy(f"SELECT * EXCLUDE (_load_id) FROM {table} WHERE _load_id = {literal(entry['load_id'])}",
                 folder / "data.parquet")
        entry["files"] = sorted(p.relative_to(target).as_posix() for p in folder.glob("*.parquet"))
    ids = ", ".join(literal(i) for i in _included(resources)) or "NULL"
    copy(f"SELECT * FROM _loads WHERE load_id IN ({ids}) ORDER BY started", target / "_loads.parquet")
    document = {"format": "toolkit snapshot", "format_version": 1,
                "sources": sorted({(e["service"], e["base_url"]) for e in resources}),
                "resources": [{k: v for k, v in e.items() if k != "stored"} for e in resources]}
    (target / "manifest.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))


def open_snapshot(path: str | Path) -> Snapshot:
    """A snapshot (DuckDB file or Parquet folder) opened read-only.

        snap = toolkit.open_snapshot("snapshot-2026-11-22.duckdb"); snap.read("translation", "targets")
    """
    return Snapshot(path)


class Snapshot:
    """An exported snapshot, read-only: `.read()`, `.sql()`, `.tables()`, `.manifest()`, `.loads()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise FileNotFoundError(f"no snapshot at {self.path}")
        if self.path.is_dir():
            self._con = session(duckdb.connect())
            self._views_over_parquet()
        else:
            self._con = open_duckdb(self.path, read_only=True)

    def _views_over_parquet(self) -> None:
        document = orjson.loads((self.path / "manifest.json").read_bytes())
        con, root = self._con, self.path.absolute()
        for entry in document["resources"]:
            service, resource = entry["service"], entry["resource"]
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(service)}")
            if not entry["files"]:
                continue
            files = ", ".join(literal(str(root / f)) for f in entry["files"])
            source = f"SELECT * FROM read_parquet([{files}], union_by_name = true)"
            if entry["history"]:
                con.execute(f"CREATE VIEW {table_of(service, resource)} AS {source}")
                con.execute(f"CREATE VIEW {quote(service)}.{quote(resource)} AS SELECT * EXCLUDE "
                            f"(_load_id) FROM {table_of(service, resource)} "
                            f"WHERE _load_id = {literal(entry['load_id'])}")
            else:
                con.execute(f"CREATE VIEW {quote(service)}.{quote(resource)} AS {source}")
        loads = literal(str(root / "_loads.parquet"))
        con.execute(f"CREATE VIEW _loads AS SELECT * FROM read_parquet({loads})")
        for entry in document["resources"]:
            entry["created"] = datetime.fromisoformat(entry["created"])
        con.register("_toolkit_manifest", _manifest_table(document["resources"]))
        con.execute("CREATE TABLE _manifest AS SELECT * FROM _toolkit_manifest")
        con.unregister("_toolkit_manifest")

    def sql(self, query: str, params: Any = None) -> duckdb.DuckDBPyRelation | None:
        """A DuckDB relation over the snapshot (`.df()`, `.to_arrow_table()`, `.show()`)."""
        return self._con.sql(query, params=params)

    def tables(self) -> pd.DataFrame:
        """Every table and view: schema, name, kind."""
        return self._frame("SELECT schema_name AS schema, table_name AS name, 'table' AS kind "
                           "FROM duckdb_tables() WHERE database_name = current_database() UNION ALL "
                           "SELECT schema_name, view_name, 'view' FROM duckdb_views() "
                           "WHERE database_name = current_database() AND NOT internal ORDER BY 1, 2")

    def manifest(self) -> pd.DataFrame:
        """One row per resource: toolkit version, created, source, key, params, loads, rows, schema (JSON)."""
        try:
            return self._frame("SELECT * FROM _manifest ORDER BY service, resource")
        except duckdb.CatalogException:
            raise WorkspaceError(f"{self.path} has no _manifest: it is not an exported snapshot") from None

    def loads(self) -> pd.DataFrame:
        """The loads the snapshot holds."""
        return self._frame("SELECT * FROM _loads ORDER BY started")

    def read(self, service: str, resource: str, load_id: str | None = None) -> pd.DataFrame:
        """A resource as a DataFrame: its latest load, or `load_id` of a snapshot exported with history."""
        if load_id is None:
            query, args = f"SELECT * FROM {quote(service)}.{quote(resource)}", None
        else:
            query = f"SELECT * EXCLUDE (_load_id) FROM {table_of(service, resource)} WHERE _load_id = ?"
            args = [load_id]
        try:
            table = self._con.sql(query, params=args).to_arrow_table()
        except duckdb.CatalogException:
            what = "with history=True" if load_id else "holding it"
            raise WorkspaceError(f"{self.path} has no {service}.{resource} (export it {what})") from None
        return to_frame(table, self._categories(service, resource))

    def _categories(self, service: str, resource: str) -> dict[str, list[str]]:
        try:
            rows = self._con.execute("SELECT schema FROM _manifest WHERE service = ? AND resource = ?",
                                     [service, resource]).fetchall()
        except duckdb.CatalogException:
            return {}
        schema = orjson.loads(rows[0][0]) if rows else []
        return {c["name"]: c["categories"] for c in schema if "categories" in c}

    def _frame(self, query: str) -> pd.DataFrame:
        return to_frame(self._con.sql(query).to_arrow_table())

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "Parquet folder" if self.path.is_dir() else "DuckDB file"
        return f"<toolkit.Snapshot {self.path} ({kind})>"
