"""Exports: a workspace written to one standalone snapshot (a DuckDB file, or a Parquet folder) that
says what it holds (toolkit.storage.snapshots reads it back).

A snapshot is written in a hidden folder next to its path and moved into place only when complete;
`overwrite=True` replaces only a snapshot toolkit wrote in the same format (`replaceable`).

    exports.export(con, Path("snapshot.duckdb"), history=True)
"""
from __future__ import annotations

__all__ = ["DUCKDB_MAGIC", "FORMATS", "JUST_MADE", "UNLOCKED_AFTER", "export", "opened_by", "remove_leftovers", "replaceable"]

import contextlib
import errno
import importlib.metadata
import os
import re
import secrets
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson

from toolkit.errors import SnapshotExistsError, SnapshotStorageWarning, ValidationError, WorkspaceError
from toolkit.storage import clock, id_lists
from toolkit.storage.file import (
    FINISHED,
    history_view_sql,
    literal,
    loads_view_sql,
    quote,
    usable_path,
    versions_of,
    view_sql,
)
from toolkit.storage.loads import params_json
from toolkit.storage.snapshots import manifest_table

try:
    import fcntl
    _LOCKS = True
except ImportError:  # Windows: leftovers are told by their age only
    _LOCKS = False

FORMATS = ("duckdb", "parquet")
# A snapshot goes to colleagues on whatever DuckDB they have, and a DuckDB opens only the storage
# versions it knows (1.1 reads v1.0.0's, 1.4 up to v1.4.0's): it is written in the oldest storage that
# holds its types. DuckDB refuses a type an older storage cannot hold and names the one it needs
# ('VARIANT columns are not supported in storage versions prior to v1.5.0'): that one is used then.
OLDEST_STORAGE = "v1.0.0"
_NEEDS = re.compile(r"storage versions? prior to (v\d+\.\d+\.\d+)")


def opened_by(storage_version: str) -> str:
    """The oldest DuckDB that opens a file of this storage version: v1.5.0's needs DuckDB 1.5."""
    major, minor = storage_version.lstrip("v").split(".")[:2]
    return f"DuckDB >= {major}.{minor}"
def export(con: duckdb.DuckDBPyConnection, path: Path, format: str = "duckdb", history: bool = False,
           overwrite: bool = False, workspace: Path | None = None,
           resources: Sequence[tuple[str, str]] | None = None, since: datetime | None = None) -> Path:
    """Write the snapshot in a hidden folder next to `path` and move it into place only when complete.

    `overwrite` replaces only a snapshot of the same format that toolkit wrote (`replaceable`), never
    `workspace` (the open one), another workspace, a file or a folder that holds anything else.

    The folder (`.NAME.tmp-PID-XXXXXXXX`) is locked while it is written and removed whatever happens; one
    left by an export whose process died (kill -9, a crash) is removed by the next export to the same
    folder, once its lock shows that no process holds it any more.

    `resources` (service, resource) keeps only those; `since` keeps the loads finished since then
    (and each resource's latest, its view), with the row versions valid in them: "this week's data".
    """
    if format not in FORMATS:
        raise ValidationError("format", format, f"is one of {', '.join(FORMATS)}")
    path = usable_path(path.expanduser().absolute(), "snapshot")
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise SnapshotExistsError(f"{path} exists: pass overwrite=True to replace it, or export to another path")
        replaceable(path, format, workspace)
    remove_leftovers(path.parent)
    entries = _resources(con, history or since is not None, resources, since)
    try:
        with _scratch(path) as scratch:
            target = scratch / path.name
            if format == "duckdb":
                _in_oldest_storage(con, target, entries, history or since is not None)
            else:
                _to_parquet(con, target, entries, history or since is not None)
            _put_in_place(target, path, scratch)
    except (duckdb.Error, OSError) as error:   # the scratch folder is gone with whatever it held
        full = "no space left" in str(error).lower() or getattr(error, "errno", None) == errno.ENOSPC
        why = (f"{path.parent} has no space left" if full else
               f"{type(error).__name__}: {str(error).strip().splitlines()[0][:160] if str(error).strip() else ''}")
        raise WorkspaceError(f"the snapshot {path} was not written ({why}); nothing of it was left behind"
                             f"{' and ' + str(path.name) + ' is as it was' if path.exists() else ''}. "
                             f"{'Free some space there, or export elsewhere' if full else 'Export again'}") from None
    return path


# a hidden folder per export; PID says who wrote it, for a person looking; the lock says whether it still is
_SCRATCH = re.compile(r"\.(?P<name>.+)\.tmp-(?:(?P<pid>\d+)-)?[0-9a-f]{8}(?:\.wal)?")
# leftovers of toolkit before the lock (a file or folder of that name without a PID) are removed once this
# old: an export writes its file all along, so one untouched this long has no writer
UNLOCKED_AFTER = timedelta(hours=6)
# a folder this young may be one an export has made and not locked yet: it is left to a later export
JUST_MADE = timedelta(seconds=30)


@contextlib.contextmanager
def _scratch(path: Path) -> Iterator[Path]:
    """A hidden folder next to `path`, locked for as long as the export runs, removed on the way out."""
    scratch = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    scratch.mkdir()
    held = _lock(scratch)
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if held is not None:
            os.close(held)


def _put_in_place(built: Path, path: Path, scratch: Path) -> None:
    """Replace `path` by `built`: a snapshot being replaced is moved aside first and put back if the
    move fails, so that an export that fails never leaves the folder without either."""
    aside = scratch / "replaced"
    if path.exists():
        os.replace(path, aside)
    try:
        os.replace(built, path)
    except BaseException:
        if aside.exists():
            os.replace(aside, path)
        raise


def _lock(folder: Path) -> int | None:
    """An exclusive lock on the folder, held until its descriptor is closed (the process's end included)."""
    if not _LOCKS:
        return None
    held = os.open(folder, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return held


def _folder_clock(folder: Path) -> datetime:
    """Now by the clock that dates the folder's files: a network share's server stamps them by its
    own clock, which may differ from this machine's by more than JUST_MADE."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".toolkit-clock-") as probe:
            return datetime.fromtimestamp(os.fstat(probe.fileno()).st_mtime, UTC)
    except OSError:
        return datetime.now(UTC)


def _abandoned(entry: Path, now: datetime) -> bool:
    """Whether no export writes this leftover any more: its lock is free, or (an old one) it is long untouched."""
    try:
        age = now - datetime.fromtimestamp(entry.lstat().st_mtime, UTC)
        scratch = _SCRATCH.fullmatch(entry.name)
        if _LOCKS and entry.is_dir() and scratch is not None and scratch["pid"]:
            if age < JUST_MADE:
                return False
            probe = os.open(entry, os.O_RDONLY)
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a live export holds it
            finally:
                os.close(probe)  # closing drops the probe's lock at once
            return True
        return age > UNLOCKED_AFTER
    except OSError:  # its export finished meanwhile, or it is not ours to look into
        return False


def remove_leftovers(folder: Path) -> list[Path]:
    """Remove what exports that died left in `folder` (never a running export's folder); what was removed."""
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    now = _folder_clock(folder) if any(_SCRATCH.fullmatch(entry.name) for entry in entries) else None
    for entry in entries:
        if now is not None and _SCRATCH.fullmatch(entry.name) and _abandoned(entry, now):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


DUCKDB_MAGIC = (8, b"DUCK")  # the file format's magic bytes and where they are


def replaceable(path: Path, format: str, workspace: Path | None = None) -> None:
    """Raise WorkspaceError unless `path` is a snapshot toolkit wrote in `format`, safe to replace:
    a DuckDB file with a `_manifest` and no load beyond it, or a folder holding only what its
    `manifest.json` lists. Anything else may be someone's work: it is never replaced."""
    def refuse(what: str) -> WorkspaceError:
        return WorkspaceError(f"{path} {what}: export to another path, or remove it yourself if it can go")

    if workspace is not None and workspace.exists() and os.path.samefile(path, workspace):
        raise refuse("is the open workspace, not a snapshot")
    if path.is_symlink():
        raise refuse("is a symbolic link; toolkit replaces only the snapshots it wrote")
    if format == "parquet":
        if not path.is_dir():
            raise refuse("is a file, not a Parquet snapshot folder")
        strangers = _not_in_manifest(path)
        if strangers:
            raise refuse(f"holds {len(strangers):,} file(s) its manifest.json does not list, "
                         f"{strangers[0]} the first")
        return
    if path.is_dir():
        raise refuse("is a folder, not a DuckDB snapshot")
    with path.open("rb") as file:
        file.seek(DUCKDB_MAGIC[0])
        if file.read(len(DUCKDB_MAGIC[1])) != DUCKDB_MAGIC[1]:
            raise refuse("is not a DuckDB file")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as error:
        raise refuse(f"cannot be opened to see what it holds ({str(error).splitlines()[0][:120]})") from None
    try:
        names = {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE "
                                                 "schema_name = 'main'").fetchall()}
        if "_manifest" not in names:
            if "_loads" in names:
                loads = con.execute("SELECT count(*) FROM _loads").fetchall()[0][0]
                raise refuse(f"is a toolkit workspace with {loads:,} load(s) and their history")
            raise refuse("is a DuckDB file toolkit did not write")
        if "_loads" in names:
            beyond = con.execute("SELECT count(*) FROM _loads WHERE load_id NOT IN "
                                 "(SELECT unnest(load_ids) FROM _manifest)").fetchall()[0][0]
            if beyond:
                raise refuse(f"is a snapshot used as a workspace since: {beyond:,} load(s) are not "
                             "in its manifest")
    finally:
        con.close()


def _not_in_manifest(folder: Path) -> list[str]:
    """The files of a folder its toolkit manifest does not list (all of them without a manifest)."""
    try:
        document = orjson.loads((folder / "manifest.json").read_bytes())
        listed = {"manifest.json", "_loads.parquet", "_given_ids.parquet"}
        if document.get("format") == "toolkit snapshot":
            listed |= {f for entry in document.get("resources", []) for f in entry.get("files", [])}
        else:
            listed = set()
    except (OSError, orjson.JSONDecodeError, AttributeError, TypeError):
        listed = set()
    found = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if not p.is_dir() or p.is_symlink())
    return [name for name in found if name not in listed]


def _resources(con: duckdb.DuckDBPyConnection, history: bool, chosen: Sequence[tuple[str, str]] | None = None,
               since: datetime | None = None) -> list[dict[str, Any]]:
    """One entry per resource with a finished load: what goes in and what the manifest says of it.

    `rows` is what the resource's view shows (its `count(*)`), in the workspace and in the snapshot
    alike; `written` is what its latest load itself wrote (fewer for an incremental load)."""
    loads = con.execute(f"SELECT service, resource, load_id, base_url, params, \"key\", \"rows\", seq, finished "
                        f"FROM _loads WHERE status IN {FINISHED} "
                        "ORDER BY service, resource, finished, started").fetchall()
    tables = {(s, t) for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database()").fetchall()}
    by_resource: dict[tuple[str, str], list[tuple]] = {}
    for row in loads:
        if chosen is None or (row[0], row[1]) in chosen:
            by_resource.setdefault((row[0], row[1]), []).append(row)
    created, entries = clock.now(), []
    for (service, resource), rows in by_resource.items():
        latest = rows[-1]
        included = ([r for r in rows if since is None or (r[8] is not None and r[8] >= since) or r is latest]
                    if history else [latest])
        stored = (service, resource + "__versions") in tables
        categories = dict(con.execute("SELECT column_name, categories FROM _categories WHERE service = ? "
                                      "AND resource = ?", [service, resource]).fetchall())
        schema = [{"name": name, "type": kind, **({"categories": list(categories[name])}
                                                   if name in categories else {})}
                  for name, kind in con.execute(
                      "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                      "current_database() AND schema_name = ? AND table_name = ? "
                      "AND column_name NOT IN ('_valid_from', '_valid_to') ORDER BY column_index",
                      [service, resource + "__versions"]).fetchall()]
        first = min((r[7] for r in included if r[7] is not None), default=None)
        # the versions valid in the first load kept or after it: no more, no less
        kept = "TRUE" if first is None else f"(_valid_to IS NULL OR _valid_to > {int(first)})"
        table = versions_of(service, resource)

        def count(where: str, table: str = table, stored: bool = stored) -> int:
            return con.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchall()[0][0] if stored else 0
        entries.append({
            "toolkit_version": _version(), "created": created, "history": history,
            "service": service, "resource": resource, "base_url": latest[3], "key": list(latest[5] or []),
            "load_id": latest[2], "load_ids": [r[2] for r in included],
            "params": params_json(orjson.loads(latest[4] or "{}")),  # scrubbed again, to be sure
            "rows": count("_valid_to IS NULL"), "written": latest[6],
            "versions": count(kept) if history else count("_valid_to IS NULL"), "since": since,
            "schema": schema, "files": [], "stored": stored, "kept": kept,
        })
    return entries


def _included(resources: list[dict[str, Any]]) -> list[str]:
    return [load_id for entry in resources for load_id in entry["load_ids"]]


def _in_oldest_storage(con: duckdb.DuckDBPyConnection, target: Path, resources: list[dict[str, Any]],
                       history: bool) -> None:
    """The DuckDB snapshot in the oldest storage version that holds its types, the manifest saying
    which DuckDB opens it; a SnapshotStorageWarning when that is newer than the oldest, naming Parquet."""
    storage = OLDEST_STORAGE
    while True:
        for entry in resources:
            entry.update(storage_version=storage, duckdb_opens=opened_by(storage))
        try:
            _to_duckdb(con, target, resources, history, storage)
            break
        except duckdb.Error as error:
            needed = _NEEDS.search(str(error))
            if not needed or needed.group(1) == storage:
                raise
            for leftover in (target, target.with_name(target.name + ".wal")):
                leftover.unlink(missing_ok=True)
            storage, why = needed.group(1), str(error).strip().splitlines()[0]
    if storage != OLDEST_STORAGE:
        warnings.warn(f"the snapshot {target.name} opens only in {opened_by(storage)} ({why[:120]}); "
                      f"colleagues on an older DuckDB can open a Parquet export (format='parquet')",
                      SnapshotStorageWarning, stacklevel=4)


def _to_duckdb(con: duckdb.DuckDBPyConnection, target: Path, resources: list[dict[str, Any]],
               history: bool, storage: str) -> None:
    """The snapshot written through the workspace's connection, the new file attached under a name of
    its own for the time it takes.

    Everything, views included, is written while it is attached and checkpointed before it is
    detached: a query of another thread that started meanwhile (one that fails looks at every attached
    database for a name like the one it lacks) can keep the detached file open a moment longer, so
    nothing may need to open it again, and nothing may be left in its WAL.
    """
    alias = f"_toolkit_export_{secrets.token_hex(4)}"
    con.execute(f"ATTACH {literal(str(target))} AS {alias} (STORAGE_VERSION {literal(storage)})")
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            for entry in resources:
                service, resource = entry["service"], entry["resource"]
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {alias}.{quote(service)}")
                if not entry["stored"]:
                    continue
                if history:  # the versions hold finished loads only: a failed one rolled its rows back
                    con.execute(f"CREATE TABLE {alias}.{versions_of(service, resource)} AS SELECT * FROM "
                                f"{versions_of(service, resource)} WHERE {entry['kept']} ORDER BY _valid_from")
                else:
                    con.execute(f"CREATE TABLE {alias}.{quote(service)}.{quote(resource)} AS "
                                f"SELECT * EXCLUDE (_valid_from, _valid_to) FROM "
                                f"{versions_of(service, resource)} WHERE _valid_to IS NULL")
            con.execute(f"CREATE TABLE {alias}.main._loads AS SELECT * FROM _loads "
                        "WHERE list_contains(?, load_id) ORDER BY started", [_included(resources)])
            given = id_lists.named_by(con, f"{alias}.main._loads")     # the ids its loads name by digest
            if given is not None:
                con.execute(f"CREATE TABLE {alias}.main._given_ids AS {given}")
            con.register("_toolkit_manifest", manifest_table(resources))
            con.execute(f"CREATE TABLE {alias}.main._manifest AS SELECT * FROM _toolkit_manifest")
            if history:  # a view binds the names it qualifies by schema only in its own file (loads.view_sql)
                for entry in resources:
                    if entry["stored"]:
                        con.execute(view_sql(entry["service"], entry["resource"], alias))
                        con.execute(loads_view_sql(entry["service"], entry["resource"], alias))
                        con.execute(history_view_sql(entry["service"], entry["resource"], alias))
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed statement may have ended it already
                con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_toolkit_manifest")
        con.execute(f"FORCE CHECKPOINT {alias}")  # waits for the lock; a plain one fails if others read
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute(f"DETACH {alias}")
        raise
    con.execute(f"DETACH {alias}")


def _to_parquet(con: duckdb.DuckDBPyConnection, target: Path, resources: list[dict[str, Any]],
                history: bool) -> None:
    target.mkdir(parents=True)
    for entry in resources:   # Parquet is no DuckDB storage: any reader of Parquet opens it
        entry.update(storage_version=None, duckdb_opens=None)

    def copy(query: str, file: Path) -> None:
        con.execute(f"COPY ({query}) TO {literal(str(file))} (FORMAT parquet, COMPRESSION zstd)")

    for entry in resources:
        service, resource = entry["service"], entry["resource"]
        folder = target / service / resource
        folder.mkdir(parents=True)
        if not entry["stored"]:
            continue
        table = versions_of(service, resource)
        if history:
            copy(f"SELECT * FROM {table} WHERE {entry['kept']} ORDER BY _valid_from", folder / "versions.parquet")
        else:
            copy(f"SELECT * EXCLUDE (_valid_from, _valid_to) FROM {table} WHERE _valid_to IS NULL",
                 folder / "data.parquet")
        entry["files"] = sorted(p.relative_to(target).as_posix() for p in folder.glob("*.parquet"))
    ids = ", ".join(literal(i) for i in _included(resources)) or "NULL"
    copy(f"SELECT * FROM _loads WHERE load_id IN ({ids}) ORDER BY started", target / "_loads.parquet")
    given = id_lists.named_by(con, "_loads", f"load_id IN ({ids})")
    if given is not None:
        copy(given, target / "_given_ids.parquet")
    document = {"format": "toolkit snapshot", "format_version": 2,
                "sources": sorted({(e["service"], e["base_url"]) for e in resources}),
                "resources": [{k: v for k, v in e.items() if k not in ("stored", "kept")} for e in resources]}
    (target / "manifest.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))


def _version() -> str:
    """toolkit's version as installed (the manifest says which toolkit wrote a snapshot)."""
    try:
        return importlib.metadata.version("toolkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
