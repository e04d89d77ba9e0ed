"""A workspace's history: a resource as any load saw it (`as_of`), its loads (`history`), its row
versions, a measure at every load (`timeline`), what loads' answers held beyond their shapes (`drift`),
and what changed between two loads (`diff`, `changes`). `History` is the collaborator of
`toolkit.storage.store.Store` that reads them: it is handed the Store's `Holdings` (names resolved,
`_loads` and one load's rows read) and its FileHandle (for the relations it gives), nothing else.
"""
from __future__ import annotations

__all__ = ["History"]

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.errors import WorkspaceError
from toolkit.storage import id_lists
from toolkit.storage.diffs import Diff, diff_loads
from toolkit.storage.file import FINISHED, quote, versions_of
from toolkit.storage.handle import FileHandle
from toolkit.storage.holdings import Holdings
from toolkit.storage.ledger import IN_ORDER
from toolkit.storage.query import Query
from toolkit.storage.readback import to_frame
from toolkit.storage.timeline import Timeline, measures, timeline_sql

# the moment of a load on each clock: this machine's when it finished; the service's Date (its end where none)
CLOCKS = {"wall": "finished", "service": "coalesce(service_clock, finished)"}
CLOCK_NAMES = {"wall": "this machine's clock", "service": "the service's clock"}


class History:
    """Reads across a resource's loads: as_of, history, versions, timeline, drift, diff, changes."""

    def __init__(self, holdings: Holdings, file: FileHandle) -> None:
        self._holdings, self._file = holdings, file

    def as_of(self, resource: str, at: Any = None, *, relation: bool = False,
              clock: str = "wall") -> pd.DataFrame | Query:
        """A resource as one of its loads saw it: `at` is a load id or a moment (the latest load
        finished by then); None is the latest. A moment is read on this machine's clock (`finished`),
        or with `clock="service"` on the service's (`service_clock`, the moments reports and timelines
        show); a moment before every load says which clock it read and what the other would give.
        A DataFrame, or with `relation=True` a DuckDB relation to go on querying (it reads the
        workspace when it is run).

            ws.as_of("translation.targets", "2026-11-20 09:00+00:00")
            ws.as_of("translation.targets", "2026-11-02 13:00", clock="service")
            ws.as_of("translation.targets", load_id, relation=True).filter("status = 'DONE'").df()
        """
        service, name = self._holdings.resolve(resource)
        if clock not in CLOCKS:
            raise WorkspaceError(f"clock is 'wall' (this machine's) or 'service' (the service's), not {clock!r}")
        load_id = self._load_at(service, name, at, clock)
        if not relation:
            return self._holdings.read(service, name, load_id)
        if not self._holdings.has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        with self._file.held() as con:
            query, args = self._holdings.rows_of(con, service, name, load_id)
        return Query(self._file, query, args)

    def _load_at(self, service: str, resource: str, at: Any, clock: str = "wall") -> str:
        """The finished load an `as_of` names: a load id, or the latest finished by a moment."""
        if at is None:
            found = self._holdings.latest(service, resource)
        elif isinstance(at, str) and self._holdings.rows("SELECT 1 FROM _loads WHERE load_id = ?", [at]):
            named = self._holdings.rows(f"SELECT load_id FROM _loads WHERE load_id = ? AND service = ? AND "
                                        f"resource = ? AND status IN {FINISHED}", [at, service, resource])
            if not named:
                raise WorkspaceError(f"{at!r} is not a complete load of {service}.{resource}")
            found = named[0][0]
        else:
            try:
                moment = pd.Timestamp(at)
            except (ValueError, TypeError):
                ids = [row[0] for row in self._holdings.rows(f"SELECT load_id FROM _loads WHERE service = ? AND resource = ? "
                                                     f"AND status IN {FINISHED} ORDER BY seq DESC LIMIT 3",
                                                     [service, resource])]
                raise WorkspaceError(f"{at!r} is neither a load id nor a moment; the latest loads of {service}."
                                     f"{resource} are {', '.join(ids) or 'none'} (ws.history(...) lists them "
                                     "all)") from None
            if pd.isna(moment):
                raise WorkspaceError(f"{at!r} is not a moment: give a load id or a date and time")
            moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
            rows = self._loaded_by(service, resource, moment, clock)
            if not rows:
                raise WorkspaceError(self._none_by(service, resource, moment, clock))
            found = rows[0][0]
        if found is None:
            raise WorkspaceError(f"no complete load of {service}.{resource} in {self._holdings.where}")
        return found

    def _loaded_by(self, service: str, resource: str, moment: pd.Timestamp, clock: str) -> list[tuple]:
        return self._holdings.rows(f"SELECT load_id, {CLOCKS[clock]} FROM _loads WHERE service = ? AND resource = ? AND "
                           f"status IN {FINISHED} AND {CLOCKS[clock]} <= ? ORDER BY seq DESC LIMIT 1",
                           [service, resource, moment.to_pydatetime()])

    def _none_by(self, service: str, resource: str, moment: pd.Timestamp, clock: str) -> str:
        """Why no load was found by a moment: the clock read, its first load, and what the other clock gives."""
        first = self._holdings.rows(f"SELECT min({CLOCKS[clock]}) FROM _loads WHERE service = ? AND resource = ? "
                            f"AND status IN {FINISHED}", [service, resource])[0][0]
        said = (f"no load of {service}.{resource} had finished by {moment:%Y-%m-%d %H:%M} UTC on "
                f"{CLOCK_NAMES[clock]}" + (f" (its first: {pd.Timestamp(first):%Y-%m-%d %H:%M} UTC)" if first else ""))
        other = "service" if clock == "wall" else "wall"
        found = self._loaded_by(service, resource, moment, other)
        if found:
            said += (f"; on {CLOCK_NAMES[other]} it is load {found[0][0]}: "
                     f"ws.as_of({service + '.' + resource!r}, {str(moment)!r}, clock={other!r})")
        return said

    def versions(self, resource: str, relation: bool = False) -> pd.DataFrame | Query:
        """Every version of a resource's rows with its validity: the `<resource>__history` view
        (`valid_from_load`/`valid_to_load`, `valid_from`/`valid_to` by the service's clock, and
        `_seq` numbers as `_loads.seq`). A row that went A→B→A has three versions."""
        service, name = self._holdings.resolve(resource)
        if not self._holdings.has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        query = (f"SELECT * FROM {quote(service)}.{quote(name + '__history')} "
                 "ORDER BY valid_from_seq, valid_to_seq NULLS LAST")
        return Query(self._file, query) if relation else self._holdings.frame(query)

    def history(self, resource: str) -> pd.DataFrame:
        """The loads of one resource ("service.resource", or "resource" when only one service has it):
        `service_clock` is the service's Date when the load ran (its `finished` where none was sent);
        `rows` is what the load itself wrote (an incremental load writes only what changed). In the
        loads' order (`seq`), not their clock's: a load made while the clock ran behind comes after."""
        service, name = self._holdings.resolve(resource)
        return self._holdings.frame("SELECT load_id, started, finished, coalesce(service_clock, finished) AS service_clock, "
                           f"status, \"rows\", requests, {id_lists.SHOWN} AS params, error, "
                           f"failed_ids FROM {self._holdings.loads_table()} WHERE service = ? AND resource = ? "
                           f"ORDER BY {IN_ORDER}", [service, name])

    def timeline(self, resource: str, by: str | Sequence[str] | None = None,
                 agg: str | Mapping[str, str] | None = None) -> Timeline:
        """A measure of a resource at every finished load: one row per load × group with the load's id,
        number (`seq`), `finished` and `service_clock`, the `by` columns and the measure (`rows`, the
        rows the view showed then, by default; `agg` an SQL aggregate, or names → aggregates). Read
        from the row versions the store keeps, in one query; `.plot()` draws it over the service's clock.

            ws.timeline("audience_platform.memberships", by="audience_id").plot()
            ws.timeline("translation.targets", by="language", agg={"words": "sum(words)"})
        """
        service, name = self._holdings.resolve(resource)
        groups = [by] if isinstance(by, str) else list(by or [])
        asked = measures(agg)
        if not self._holdings.has_table(service, name):
            raise WorkspaceError(f"{service}.{name} has no rows stored")
        try:
            found = self._holdings.frame(timeline_sql(service, name, groups, asked))
        except duckdb.Error as error:  # a column or aggregate the resource has not: say which
            raise WorkspaceError(f"the timeline of {service}.{name} by {groups} of {asked} failed: "
                                 f"{str(error).strip().splitlines()[0][:200]}") from None
        timeline = Timeline(found)
        timeline.by, timeline.measure = groups, next(iter(asked))
        return timeline

    def drift(self, resource: str | None = None, load_id: str | None = None) -> pd.DataFrame:
        """How loads' answers differed from their resources' declared shapes (toolkit.pull.drift): a row per
        load, field and kind (undeclared, missing, type, category, envelope), with how many records
        (or pages) and one example, secrets masked. Every load by default; one resource's, or one load's.

            ws.drift("translation.targets")
        """
        query, args = f"SELECT load_id, service, resource, drift FROM {self._holdings.loads_table()} WHERE drift IS NOT NULL", []
        if resource is not None:
            query += " AND service = ? AND resource = ?"
            args += list(self._holdings.resolve(resource))
        if load_id is not None:
            query += " AND load_id = ?"
            args.append(load_id)
        rows = self._holdings.rows(query + f" ORDER BY {IN_ORDER}", args) if self._has_drift() else []
        found = [(load, service, name, entry["field"], entry["kind"], entry["count"], entry["example"])
                 for load, service, name, text in rows for entry in orjson.loads(text)]
        columns = ["load_id", "service", "resource", "field", "kind", "count", "example"]
        table = pa.table({name: pa.array([row[i] for row in found], pa.int64() if name == "count" else pa.string())
                          for i, name in enumerate(columns)})
        return to_frame(table)

    def _has_drift(self) -> bool:
        """Whether `_loads` has its `drift` column: a file written before it, opened read-only, has not."""
        return bool(self._holdings.rows("SELECT 1 FROM duckdb_columns() WHERE database_name = current_database() "
                                "AND schema_name = 'main' AND table_name = '_loads' AND column_name = 'drift'"))

    def diff(self, resource: str, before: str | None = None, after: str | None = None) -> Diff:
        """Rows added, removed and changed between two loads of a resource, matched by its key.

            ws.diff("translation.targets").changed     # the last two complete loads
        """
        service, name = self._holdings.resolve(resource)
        numbers = dict(self._holdings.rows(
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
        key = self._holdings.rows("SELECT \"key\" FROM _loads WHERE load_id = ?", [after])[0][0] or []
        categories = self._holdings.categories(service, name)
        with self._file.held() as con:
            return diff_loads(con, f"{service}.{name}", versions_of(service, name),
                              (before, numbers[before]), (after, numbers[after]), list(key), categories)

    def changes(self, service: str, resource: str, load_id: str) -> dict[str, int]:
        """What a finished load changed in its resource's view: rows `added`, `changed` (a key with a
        version ended and one begun by it) and `removed`; a keyless resource has no changed rows."""
        rows = self._holdings.rows("SELECT seq, \"key\" FROM _loads WHERE load_id = ?", [load_id])
        if not rows or rows[0][0] is None or not self._holdings.has_table(service, resource):
            return {"added": 0, "changed": 0, "removed": 0}
        seq, key = rows[0][0], [quote(k) for k in rows[0][1] or []]
        versions = versions_of(service, resource)
        if not key:
            begun, ended = self._holdings.rows(f"SELECT count(*) FILTER (_valid_from = $1), count(*) FILTER "
                                       f"(_valid_to = $1) FROM {versions}", [seq])[0]
            return {"added": begun, "changed": 0, "removed": ended}
        keys = ", ".join(key)
        begun, both, ended = self._holdings.rows(
            f"WITH b AS (SELECT DISTINCT {keys} FROM {versions} WHERE _valid_from = $1), "
            f"e AS (SELECT DISTINCT {keys} FROM {versions} WHERE _valid_to = $1) "
            f"SELECT (SELECT count(*) FROM b), (SELECT count(*) FROM b SEMI JOIN e USING ({keys})), "
            f"(SELECT count(*) FROM e)", [seq])[0]
        return {"added": begun - both, "changed": both, "removed": ended - both}
