"""What an assistant reads of a workspace, a snapshot or a team lake: plain JSON-ready answers.

Every answer goes through `clean`: values under a secret-looking name are masked (catalog.masking) and
any connection string's password too, whatever a view was made to hold. `load_changes` is the one
place that says what each load of a view added, changed and removed (from the row versions); the
store's own history API can stand in for it without the tools changing.

    source = open_source("toolkit-demo.duckdb"); list_views(source); run_sql(source, "select 42")
"""
from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pandas as pd

from toolkit.catalog.masking import mask_passwords, scrub
from toolkit.errors import WorkspaceError
from toolkit.glance.guard import readable
from toolkit.pull.freshness import freshness
from toolkit.storage.file import FILTERED, FINISHED, quote, versions_of
from toolkit.storage.lake import is_lake
from toolkit.storage.query import Query
from toolkit.storage.readback import to_frame
from toolkit.storage.sealed import Limits
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["CAP", "PAGE", "Readable", "Relation", "clean", "describe_view", "list_views", "load_changes",
           "open_source", "resolve", "run_sql", "selected", "view_diff", "view_history", "views"]

Relation = Query | duckdb.DuckDBPyRelation


class Readable(Protocol):
    """What the glance reads rows from: a Store, a Snapshot, or an in-memory DuckDB holding a frame."""

    def sql(self, query: str, *, params: Any = None) -> Relation | None: ...

CAP = 10_000       # rows a query gives at most, over all its pages: an assistant reads, it does not export
PAGE = 200         # rows a page gives by default
MAX_PAGE = 1_000


def open_source(path: str | Path, data_path: str | None = None, wait: float | None = None,
                limits: Limits | None = None) -> Store | Snapshot:
    """A workspace file or team lake opened read-only, or a snapshot (a folder, or a file with `_manifest`);
    `limits` seals its connections (toolkit.storage.sealed): what `toolkit mcp` serves."""
    if is_lake(path):
        return Store(str(path), read_only=True, data_path=data_path, wait=wait, sealed=limits)
    where = Path(path).expanduser()
    if where.is_dir():
        return Snapshot(where, sealed=limits)
    if not where.exists():
        raise WorkspaceError(f"no workspace or snapshot at {where}: toolkit pull (or toolkit export) writes one")
    with duckdb.connect(str(where), read_only=True) as con:
        snapshot = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                               "AND schema_name = 'main' AND table_name = '_manifest'").fetchall()[0][0]
    return Snapshot(where, sealed=limits) if snapshot else Store(where, read_only=True, wait=wait, sealed=limits)


def clean(value: Any) -> Any:
    """JSON-ready data with nothing secret: masked names, masked passwords, no NaN."""
    value = scrub(value)
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, str):
        return mask_passwords(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return clean([{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")])


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date | pd.Timestamp):
        return None if pd.isna(value) else value.isoformat()
    if hasattr(value, "tolist") and not isinstance(value, str):
        return value.tolist()
    if value is not None and not isinstance(value, list | dict) and pd.isna(value):
        return None
    return value


def selected(source: Readable, query: str, params: Any = None) -> Relation:
    """The relation of a query; one that holds no statement (only comments, DuckDB answers None) is a
    WorkspaceError saying so."""
    relation = source.sql(query, params=params)
    if relation is None:
        raise WorkspaceError(f"nothing to show: {' '.join(query.split())[:80]!r} holds no statement; "
                             "the workspace's views are read with a SELECT")
    return relation


def _frame(source: Store | Snapshot, query: str, params: Any = None) -> pd.DataFrame:
    return selected(source, query, params).df()


def views(source: Store | Snapshot) -> list[tuple[str, str]]:
    """(service, resource) of every view held, filtered loads' views included."""
    if isinstance(source, Snapshot):
        return [(m.service, m.resource) for m in source.manifest().itertuples()]
    return [(v.service, v.resource) for v in source.tables().itertuples()]


def resolve(source: Store | Snapshot, view: str) -> tuple[str, str]:
    """("service", "resource") of a view named `service.resource`, or by its resource alone when one service has it."""
    held = views(source)
    named = [v for v in held if f"{v[0]}.{v[1]}" == view] or [v for v in held if v[1] == view]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f"{s}.{r}" for s, r in held[:12]) + (f" and {len(held) - 12} more" if len(held) > 12 else "")
    if named:
        raise WorkspaceError(f"{view!r} is held by several services: name it as service.{view}")
    raise WorkspaceError(f"no view {view!r} here; list_views names them: {listed or 'none yet'}")


def list_views(source: Store | Snapshot, clock: str = "service") -> list[dict[str, Any]]:
    """One entry per view: rows, loads, when its latest load finished, whether filtered, and its freshness
    (hours since its rows were last confirmed, the budget, the rows past it) where the source keeps it:
    by the service's clock, or with `clock="wall"` by this machine's."""
    if isinstance(source, Snapshot):
        shown = [{"view": f"{m.service}.{m.resource}", "rows": m.rows, "loads": len(m.load_ids),
                  "last_load": m.load_id, "exported": m.created, "filtered": m.resource.endswith(FILTERED)}
                 for m in source.manifest().itertuples()]
        return clean([{k: _plain(v) for k, v in entry.items()} for entry in shown])
    fresh = freshness(source, clock).set_index(["service", "resource"])
    shown = []
    for v in source.tables().itertuples():
        entry = {"view": v.table, "rows": int(v.rows), "loads": int(v.loads), "last_load": v.load_id,
                 "finished": _plain(v.finished), "filtered": bool(v.filtered)}
        if (v.service, v.resource) in fresh.index:
            f = fresh.loc[(v.service, v.resource)]
            entry.update({"rows": int(f["rows"]), "confirmed_hours_ago": float(f["oldest_hours"]),
                          "budget_hours": float(f["budget_hours"]), "rows_past_budget": int(f["past_budget"])})
        shown.append(entry)
    return clean(shown)


def describe_view(source: Store | Snapshot, view: str) -> dict[str, Any]:
    """A view's columns and their DuckDB types, and its rows."""
    service, resource = resolve(source, view)
    name = f"{quote(service)}.{quote(resource)}"
    columns = _frame(source, f"SELECT column_name, column_type FROM (DESCRIBE {name})")
    rows = int(_frame(source, f"SELECT count(*) AS n FROM {name}")["n"].iloc[0])
    return clean({"view": f"{service}.{resource}", "rows": rows,
                  "columns": [{"name": c.column_name, "type": c.column_type} for c in columns.itertuples()]})


def _has_versions(source: Store | Snapshot, service: str, resource: str) -> bool:
    found = _frame(source, "SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name = ? AND table_name = ? "
                   "UNION ALL SELECT count(*) FROM duckdb_views() WHERE schema_name = ? AND view_name = ?",
                   [service, resource + "__versions"] * 2)
    return bool(found["n"].sum())


def load_changes(source: Store | Snapshot, service: str, resource: str) -> pd.DataFrame:
    """Per finished load of a view, oldest first: load_id, seq, finished, service_clock (the service's
    own clock at that load), rows, and the rows it added, changed (same key, other values) and removed,
    read from the row versions. A snapshot without history has its latest load only, counts unknown."""
    loads = _frame(source, f"SELECT * FROM _loads WHERE service = ? AND resource = ? AND status IN {FINISHED} "
                   "ORDER BY seq NULLS LAST, finished", [service, resource])
    if "service_clock" not in loads.columns:
        loads["service_clock"] = pd.NaT
    shown = loads[["load_id", "seq", "finished", "service_clock", "rows"]].copy()
    if not _has_versions(source, service, resource) or loads["seq"].isna().all():
        return shown.assign(added=pd.NA, changed=pd.NA, removed=pd.NA)
    key = next((list(k) for k in reversed(loads["key"].tolist()) if k is not None and len(k)), [])
    columns = set(_frame(source, f"SELECT column_name FROM (DESCRIBE {versions_of(service, resource)})")["column_name"])
    key = [k for k in key if k in columns]
    table = versions_of(service, resource)
    if key:
        of = "[" + ", ".join(f"CAST({quote(k)} AS VARCHAR)" for k in key) + "]"
        changed = (f"SELECT n._valid_from AS seq, count(*) AS changed FROM {table} n JOIN {table} o "
                   f"ON o._valid_to = n._valid_from AND {of.replace('CAST(', 'CAST(o.')} = "
                   f"{of.replace('CAST(', 'CAST(n.')} GROUP BY 1")
    else:  # whole rows: a changed row is one removed and one added
        changed = "SELECT NULL::BIGINT AS seq, 0::BIGINT AS changed WHERE false"
    counts = _frame(source, f"""
        WITH new AS (SELECT _valid_from AS seq, count(*) AS n FROM {table} GROUP BY 1),
             gone AS (SELECT _valid_to AS seq, count(*) AS n FROM {table} WHERE _valid_to IS NOT NULL GROUP BY 1),
             changed AS ({changed})
        SELECT s.seq, coalesce(new.n, 0) - coalesce(changed.changed, 0) AS added,
               coalesce(changed.changed, 0) AS changed,
               coalesce(gone.n, 0) - coalesce(changed.changed, 0) AS removed
        FROM (SELECT seq FROM new UNION SELECT seq FROM gone) s LEFT JOIN new USING (seq)
             LEFT JOIN gone USING (seq) LEFT JOIN changed USING (seq)""")
    shown = shown.merge(counts, on="seq", how="left")
    for name in ("added", "changed", "removed"):
        shown[name] = shown[name].fillna(0).astype("int64")
    return shown


def view_history(source: Store | Snapshot, view: str) -> dict[str, Any]:
    """The view's loads over time with what each added, changed and removed (`load_changes`)."""
    service, resource = resolve(source, view)
    return {"view": f"{service}.{resource}", "loads": _records(load_changes(source, service, resource))}


def view_diff(source: Store | Snapshot, view: str, before: str | None = None, after: str | None = None,
              limit: int = 50) -> dict[str, Any]:
    """Rows added, removed and changed between two loads (the last two by default): the counts, and the
    first `limit` rows of each."""
    service, resource = resolve(source, view)
    if isinstance(source, Snapshot):
        raise WorkspaceError("a snapshot's loads are compared in the workspace it came from (ws.diff); "
                             "here, view_history gives each load's counts")
    diff = source.diff(f"{service}.{resource}", before, after)
    limit = max(0, min(int(limit), MAX_PAGE))
    answer: dict[str, Any] = {"view": f"{service}.{resource}", "before": diff.before, "after": diff.after,
                              "key": diff.key, "changed_columns": dict(diff.columns)}
    for name in ("added", "removed", "changed"):
        frame = getattr(diff, name)
        answer[name] = {"count": len(frame), "rows": _records(frame.head(limit))}
    return clean(answer)


def run_sql(source: Store | Snapshot, query: str, page: int = 0, page_size: int = PAGE) -> dict[str, Any]:
    """One page of a SELECT's rows. The query is refused before it runs unless it only reads
    (toolkit.glance.guard); at most CAP rows are ever read, `capped` says the query had more."""
    text = readable(query)
    page_size = max(1, min(int(page_size), MAX_PAGE))
    page = max(0, int(page))
    start = page * page_size
    if start >= CAP:
        return {"columns": [], "rows": [], "page": page, "capped": True,
                "note": f"answers stop at {CAP:,} rows: narrow the query (WHERE, GROUP BY, LIMIT)"}
    take = min(page_size, CAP - start)
    # one row beyond the page says whether another follows, one beyond the cap that the query had more
    table = selected(source, f"SELECT * FROM (\n{text}\n) LIMIT {take + 1} OFFSET {start}").to_arrow_table()
    columns = [{"name": f.name, "type": str(f.type)} for f in table.schema]
    frame = to_frame(table)
    more = len(frame) > take
    reached = start + take >= CAP and more
    answer = {"columns": columns,
              "rows": _records(frame.head(take)), "page": page, "page_size": page_size,
              "next_page": page + 1 if more and not reached else None, "capped": reached}
    if reached:
        answer["note"] = f"answers stop at {CAP:,} rows: narrow the query (WHERE, GROUP BY, LIMIT)"
    return answer
