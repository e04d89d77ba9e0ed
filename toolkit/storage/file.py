"""The DuckDB file under a workspace or a snapshot: how it is opened, and the names inside it.

    <service>.<resource>__versions  the resource's row versions (`versions_of`): a row is written when it
                                    first appears or any of its values change, valid from the load
                                    numbered `_valid_from` until the one numbered `_valid_to` (NULL: still
                                    valid); the numbers are `_loads.seq`, counted per resource
    <service>.<resource>            a view of the latest finished load: the versions still valid (`view_sql`)
    <service>.<resource>__loads     a view of every finished load's rows, with `_load_id` (`loads_view_sql`):
                                    what the copy-per-load layout stored, now computed from the versions
    <service>.<resource>__history   the row versions with their validity, by load and by the service's
                                    clock (`history_view_sql`): "as of every load" is one join with `_loads`
    <service>.<resource>__filtered  the loads a fetch narrowed by filters the resource does not need
                                    (`status=[...]`, a few parents' ids), stored as a resource of their
                                    own (`filtered_of`) so that `<resource>` always shows a whole load

A load's rows are `_valid_from <= seq AND (_valid_to IS NULL OR _valid_to > seq)` (`valid_at`).
"""
from __future__ import annotations

__all__ = ["FILTERED", "FINISHED", "MIGRATE_HINT", "STORAGE_VERSION", "VALIDITY", "damage_said", "damaged",
           "filtered_of", "history_view_sql", "literal", "load_memory", "loads_view_sql", "mend_views", "migrate", "not_there", "old_layout", "old_table_of",
           "open_duckdb", "query_memory", "quote", "row_hash", "session", "valid_at", "versions_of",
           "usable_path", "view_sql", "written_by_newer"]

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb

from toolkit.errors import WorkspaceDamagedError, WorkspaceError, WorkspaceInUseError, WorkspaceOpenHereError

# the storage new files are written in: DuckDB 2.x writes by default a format 1.5 cannot read, and the
# team extra runs 1.5.5 (toolkit.storage.extensions): a workspace or snapshot must open in both
STORAGE_VERSION = "v1.5.0"
FINISHED = ("complete", "stale")  # loads whose rows are data; only "complete" ones are reused as a cache
VALIDITY = ("_valid_from", "_valid_to")  # the columns a versions table adds to the resource's own


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def versions_of(service: str, resource: str) -> str:
    """The table of a resource's row versions."""
    return f"{quote(service)}.{quote(resource + '__versions')}"


FILTERED = "__filtered"


def filtered_of(resource: str) -> str:
    """The name a resource's filtered loads are stored under: its view shows the latest of them, and
    the resource's own view, history and diffs never see them."""
    return resource + FILTERED


def old_table_of(service: str, resource: str) -> str:
    """The table of every load's rows with `_load_id` that toolkits before row versions wrote."""
    return f"{quote(service)}.{quote(resource + '__loads')}"


def valid_at(seq: str, alias: str = "") -> str:
    """The condition of the versions valid in the load numbered `seq` (SQL: a parameter or a column)."""
    a = alias + "." if alias else ""
    return f"{a}_valid_from <= {seq} AND ({a}_valid_to IS NULL OR {a}_valid_to > {seq})"


def row_hash(columns: list[str], alias: str = "") -> str:
    """SQL of a row's hash over `columns`: how a load's rows are matched to the versions still valid."""
    a = alias + "." if alias else ""
    return f"hash({', '.join(a + quote(c) for c in columns)})" if columns else "0::UBIGINT"


def view_sql(service: str, resource: str, catalog: str | None = None) -> str:
    """The view of the latest finished load, created in `catalog` (the workspace's own by default).

    The versions still valid are the latest load's rows: a failed load rolled back its own, so the
    view needs no look at `_loads`. Its names are qualified by schema and never by catalog: DuckDB
    binds them in the view's own database first, so the view reads its own file when that file is
    attached under any name (`ATTACH 'ws.duckdb' AS w; FROM w.translation.targets`) or copied.
    """
    name = f"{catalog + '.' if catalog else ''}{quote(service)}.{quote(resource)}"
    return (f"CREATE OR REPLACE VIEW {name} AS SELECT * EXCLUDE (_valid_from, _valid_to) "
            f"FROM {versions_of(service, resource)} WHERE _valid_to IS NULL")


def loads_view_sql(service: str, resource: str, catalog: str | None = None) -> str:
    """The view of every finished load's rows with `_load_id`, as the copy-per-load layout had them
    (reports over time and analysts' queries read it): each version joined to the loads it was valid
    in. `main._loads` is qualified for the reason `view_sql` gives."""
    name = f"{catalog + '.' if catalog else ''}{quote(service)}.{quote(resource + '__loads')}"
    return (f"CREATE OR REPLACE VIEW {name} AS SELECT v.* EXCLUDE (_valid_from, _valid_to), "
            f"l.load_id AS _load_id FROM {versions_of(service, resource)} v JOIN main._loads l "
            f"ON l.service = {literal(service)} AND l.resource = {literal(resource)} "
            f"AND l.status IN {FINISHED} AND {valid_at('l.seq', 'v')}")


def history_view_sql(service: str, resource: str, catalog: str | None = None) -> str:
    """The view of a resource's row versions for analysts: each version's own columns, then the load it
    appeared in and the one that ended it (`valid_from_load`, `valid_to_load`: NULL while it is valid),
    the same by the service's clock (`valid_from`, `valid_to`: its Date, or the load's end where the
    service sent none) and by number (`valid_from_seq`, `valid_to_seq`, as `_loads.seq`). A row that
    goes A→B→A has three versions. Nothing is copied: it reads `__versions` and `main._loads`.

        SELECT l.load_id, count(*) FROM main._loads l JOIN audience_platform.memberships__history h
          ON l.service = 'audience_platform' AND l.resource = 'memberships' AND l.status IN ('complete', 'stale')
          AND h.valid_from_seq <= l.seq AND (h.valid_to_seq IS NULL OR h.valid_to_seq > l.seq) GROUP BY 1
    """
    name = f"{catalog + '.' if catalog else ''}{quote(service)}.{quote(resource + '__history')}"
    on = f"service = {literal(service)} AND {{0}}.resource = {literal(resource)} AND {{0}}.status IN {FINISHED}"
    return (f"CREATE OR REPLACE VIEW {name} AS SELECT v.* EXCLUDE (_valid_from, _valid_to), "
            f"f.load_id AS valid_from_load, t.load_id AS valid_to_load, "
            f"coalesce(f.service_clock, f.finished) AS valid_from, coalesce(t.service_clock, t.finished) AS valid_to, "
            f"v._valid_from AS valid_from_seq, v._valid_to AS valid_to_seq "
            f"FROM {versions_of(service, resource)} v "
            f"LEFT JOIN main._loads f ON f.{on.format('f')} AND f.seq = v._valid_from "
            f"LEFT JOIN main._loads t ON t.{on.format('t')} AND t.seq = v._valid_to")


def session(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Settings every connection needs: no progress bar of DuckDB's own, timestamps handed out in UTC."""
    con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")
    return con


def query_memory() -> str:
    """DuckDB's memory limit for what the analyst asks of a file workspace: half of this machine's
    memory (DuckDB's own default, 80%, leaves little to the notebook's pandas), or
    `TOOLKIT_DUCKDB_MEMORY_LIMIT` ("8GB"). A load lowers it to `load_memory()` while it runs."""
    given = os.environ.get("TOOLKIT_DUCKDB_MEMORY_LIMIT")
    if given:
        return given
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): DuckDB's way of telling
        return "80%"
    return f"{max(256, physical // 2 // 2**20)}MB"


def load_memory() -> str:
    """DuckDB's memory limit while a load writes into a file workspace: DuckDB keeps written blocks in
    its buffer pool up to the limit, so a big load would grow the process with N; bounded, it spills
    to the file and stays flat (`TOOLKIT_LOAD_MEMORY_LIMIT`, 64MB by default)."""
    return os.environ.get("TOOLKIT_LOAD_MEMORY_LIMIT", "64MB")


# DuckDB's words for a file it cannot trust: a block whose checksum does not match, a structure it cannot
# read back, a file that is not (or no longer) a database
_DAMAGED = re.compile(r"corrupt|checksum|serialization error|not a valid duckdb database|"
                      r"could not read enough bytes|failed to deserialize|invalid .* register|"
                      r"block .* (out of range|does not exist)|database file .* (truncated|too small)", re.IGNORECASE)


def damaged(error: BaseException) -> str | None:
    """What DuckDB said of a damaged file (its first line, shortened), or None for any other error."""
    if not isinstance(error, duckdb.Error):
        return None
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return first[:160] if _DAMAGED.search(str(error)) else None


@contextlib.contextmanager
def damage_said(path: Path | None) -> Iterator[None]:
    """Inside: a DuckDB error that says the file is damaged becomes WorkspaceDamagedError."""
    try:
        yield
    except duckdb.Error as error:
        detail = damaged(error) if path is not None else None
        if detail is None:
            raise
        raise WorkspaceDamagedError(path, detail) from None


# what DuckDB reads in a path as more than a name: `\\` a folder separator, `*?[]` a pattern (read_parquet's
# glob, and `?` cuts the name of a write-ahead log); a file named with them opens as another or fails later
_NOT_IN_A_NAME = re.compile(r"[\\*?\[\]]")


def usable_path(path: Path, what: str = "workspace") -> Path:
    """`path`, or a WorkspaceError saying what DuckDB would make of it: a character it reads as more than a
    name, or a folder that does not exist."""
    odd = _NOT_IN_A_NAME.search(str(path))
    if odd:
        raise WorkspaceError(f"the {what} path {str(path)!r} holds the character {odd.group()}, which DuckDB reads as a "
                             "folder separator or a pattern (\\ * ? [ ]): name it without them")
    parent = path.expanduser().absolute().parent
    if not parent.is_dir():
        raise WorkspaceError(f"no folder {parent} to hold the {what} {path.name}: create it first "
                             f"(mkdir -p {parent}), or name a file in a folder that exists")
    return path


def not_there(path: Path, what: str, why: str = "") -> str:
    """"no workspace at /abs/path.duckdb; /abs holds a.duckdb": the path whole, whatever folder the
    process runs in (a relative one read from another folder named no place), and what is there."""
    path = Path(path).absolute()
    near = sorted(p.name for p in path.parent.glob("*.duckdb")) if path.parent.is_dir() else []
    there = f"; {path.parent} holds {', '.join(near[:5])}" if near else ""
    return f"no {what} at {path}{f' {why}' if why else ''}{there}"


def open_duckdb(path: Path | None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection; a file locked by another process becomes `WorkspaceInUseError`, one open in this
    process the other way (read-write against read-only) `WorkspaceOpenHereError`."""
    if path is not None:
        usable_path(path)
    if read_only and path is not None and not path.exists():
        raise WorkspaceError(not_there(path, "workspace", "to read") + ". A read-write open "
                             "(toolkit.Workspace(path)) creates one")
    # a new file in the oldest storage this toolkit runs on (DuckDB 1.5), so that either DuckDB opens it
    config: dict[str, str | bool | int | float | list[str]] = (
        {"storage_compatibility_version": STORAGE_VERSION} if path and not path.exists() else {})
    try:
        try:
            with damage_said(path):
                con = session(duckdb.connect(str(path) if path else ":memory:", read_only=read_only, config=config))
        except (duckdb.Error, WorkspaceDamagedError):
            newer = written_by_newer(path)
            if newer:
                raise WorkspaceError(f"{path} was written by DuckDB {newer} in a storage format this DuckDB "
                                     f"({duckdb.__version__}) cannot read: open it where DuckDB {newer.lstrip('v')} or "
                                     f"newer is installed (pip install 'duckdb>={newer.lstrip('v')}'), or ask for it "
                                     "exported again (toolkit export writes for DuckDB 1.0 and newer where its types "
                                     "allow)") from None
            raise
        if path:
            con.execute(f"SET memory_limit = '{query_memory()}'")
        return con
    except duckdb.ConnectionException as error:
        if "different configuration" not in str(error):
            raise
        raise WorkspaceOpenHereError(path, read_only) from None
    except duckdb.IOException as error:
        if "lock" not in str(error).lower():
            raise
        pid = re.search(r"PID (\d+)", str(error))
        raise WorkspaceInUseError(path, int(pid.group(1)) if pid else None, read_only) from None


def written_by_newer(path: Path | None) -> str | None:
    """The DuckDB release that wrote a file (`v2.0.1`, from its header: DuckDB 0.10 and newer record it),
    when it is newer than this one; else None. A DuckDB file names its writer where the manifest inside,
    which says the oldest DuckDB that opens it, cannot be read."""
    try:
        with open(path, "rb") as file:          # type: ignore[arg-type]
            header = file.read(116)
    except (OSError, TypeError):
        return None
    if header[8:12] != b"DUCK":
        return None
    writer = header[52:84].split(b"\0")[0].decode("ascii", "replace")
    return writer if _release(writer) > _release(duckdb.__version__) else None


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-")[0])[:3])


MIGRATE_HINT = ("migrate it with `toolkit migrate --workspace {path}` (or open it read-write once: "
                "toolkit.Workspace({path!r}).close())")


def old_layout(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """The resources stored as a copy per load (`<resource>__loads` tables with `_load_id`), which
    toolkits before row versions wrote: (service, resource) pairs."""
    return [(s, t.removesuffix("__loads")) for s, t in con.execute(
        "SELECT t.schema_name, t.table_name FROM duckdb_tables() t JOIN duckdb_columns() c "
        "ON c.database_name = t.database_name AND c.schema_name = t.schema_name AND c.table_name = t.table_name "
        "WHERE t.database_name = current_database() AND t.table_name LIKE '%\\_\\_loads' ESCAPE '\\' "
        "AND c.column_name = '_load_id' ORDER BY 1, 2").fetchall()]


def migrate(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Turn a file of the copy-per-load layout into row versions, in one transaction; the resources migrated.

    The finished loads of each resource are numbered in the order they finished; a row's copies in
    consecutive loads (matched by the hash of all its values, and its place among equal rows) become
    one version, valid from the first of them until the load after the last. Set-based: one statement
    per resource, however many loads.
    """
    con.execute("ALTER TABLE _loads ADD COLUMN IF NOT EXISTS seq BIGINT")
    old = old_layout(con)
    if not old:
        return old
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"UPDATE _loads SET seq = n.seq FROM (SELECT load_id, row_number() OVER (PARTITION BY "
                    f"service, resource ORDER BY finished, started) AS seq FROM _loads WHERE status IN "
                    f"{FINISHED}) n WHERE _loads.load_id = n.load_id AND _loads.seq IS NULL")
        for service, resource in old:
            _migrate_one(con, service, resource)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return old


def _migrate_one(con: duckdb.DuckDBPyConnection, service: str, resource: str) -> None:
    table = old_table_of(service, resource)
    data = [name for (name,) in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ? "
        "AND table_name = ? AND column_name != '_load_id' ORDER BY column_index",
        [service, resource + "__loads"]).fetchall()]
    last = con.execute(f"SELECT coalesce(max(seq), 0) FROM _loads WHERE service = ? AND resource = ? "
                       f"AND status IN {FINISHED}", [service, resource]).fetchall()[0][0]
    columns = ", ".join(quote(c) for c in data)
    con.execute(
        f"CREATE TABLE {versions_of(service, resource)} AS "
        f"WITH copies AS (SELECT t.* EXCLUDE (_load_id), l.seq AS _seq, {row_hash(data, 't')} AS _h "
        f"  FROM {table} t JOIN main._loads l ON l.load_id = t._load_id AND l.status IN {FINISHED}), "
        f"numbered AS (SELECT *, row_number() OVER (PARTITION BY _seq, _h) AS _n FROM copies), "
        f"runs AS (SELECT *, _seq - row_number() OVER (PARTITION BY _h, _n ORDER BY _seq) AS _run FROM numbered), "
        f"spans AS (SELECT *, min(_seq) OVER w AS _first, max(_seq) OVER w AS _last FROM runs "
        f"  WINDOW w AS (PARTITION BY _h, _n, _run)) "
        f"SELECT {columns}{', ' if columns else ''}_first::BIGINT AS _valid_from, "
        f"CASE WHEN _last = {int(last)} THEN NULL ELSE _last + 1 END::BIGINT AS _valid_to "
        f"FROM spans WHERE _seq = _first ORDER BY _valid_from")
    con.execute(f"DROP TABLE {table}")
    con.execute(view_sql(service, resource))
    con.execute(loads_view_sql(service, resource))
    con.execute(history_view_sql(service, resource))


def mend_views(con: duckdb.DuckDBPyConnection) -> None:
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
