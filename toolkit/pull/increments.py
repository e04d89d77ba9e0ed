"""Incremental pulls: what to ask a service for so that only rows that may have changed since a
resource's previous complete load come back, and which held rows stay as they are.

A Resource declares its strategy as data (`spec.Incremental`); this module turns it into the pulls to
run (each a dict of filters `toolkit.pull.fetch` plans like any other) and `carry`, the SQL condition of the
valid versions the load keeps when its rows lack their key (`toolkit.storage.loads.Load`). `plan` answers
None where a full pull is the honest answer (no strategy, filters the strategy would override, or a
deletion it cannot see otherwise); row versions then make the unchanged rows free anyway.

Given the client and the store, like fetch; it imports neither the fetcher nor anything above.
"""
from __future__ import annotations

__all__ = ["CLOCK_STALE", "IDS_PER_REQUEST", "STRATEGIES", "Step", "Tables", "plan", "seen_now", "sources"]

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.paging import Offset, PageNumber, dig
from toolkit.catalog.spec import Incremental, Resource
from toolkit.storage.file import quote, versions_of
from toolkit.storage.merge import Carry

if TYPE_CHECKING:
    from toolkit.http.client import Client
    from toolkit.storage.store import Store

IDS_PER_REQUEST = 100  # held keys asked for again per request: a query string stays well under 8 kB
Tables = Iterator[tuple[pa.Table, int]]


@dataclass
class Step:
    """An incremental load: its tables (given how to pull one set of filters) and what it carries;
    `asked`, the ids a fan-out asks again (what a freshness budget records as confirmed); `members`,
    the ids of the one fan-out it runs (what lets a killed load be resumed); `saved`, the parents a
    freshness budget did not ask again."""
    tables: Callable[[Callable[[dict], Tables]], Tables]
    carry: Carry
    asked: list | None = None
    members: list | None = None
    saved: int = 0


def sources(resource: Resource) -> list[str]:
    """The resources of the same service an incremental load of `resource` reads to choose what to ask
    (its parent, and what it copies): what its load records having seen."""
    how = resource.incremental
    if how is None:
        return []
    return [name for name in (how.parent, how.copies)
            if name and (resource.service, name) in catalog.RESOURCES]


def seen_now(store: Store, resource: Resource) -> dict[str, int] | None:
    """The latest `seq` of each of `resource`'s sources, read before anything else of them: the load
    records it (`_loads.seen`), and the next incremental load asks again for whatever they committed
    after it. Another process's commit between this read and the plan's own is then asked for twice,
    never missed (a time comparison took such a commit as seen, and the child row stayed stale)."""
    names = sources(resource)
    if not names:
        return None
    found = dict(store.rows("SELECT resource, max(seq) FROM _loads WHERE service = ? AND list_contains(?, resource) "
                            "AND status IN ('complete', 'stale') AND seq IS NOT NULL GROUP BY resource",
                            [resource.service, names]))
    return {name: int(found.get(name) or 0) for name in names}


def _seen_by(store: Store, previous: str, parent: str) -> int | None:
    """The `seq` of `parent` the `previous` load recorded having seen, or None (a load from before
    toolkit recorded it: the time comparison stands in)."""
    value = store.rows("SELECT seen FROM _loads WHERE load_id = ?", [previous])[0][0]
    if not value:
        return None
    seen = orjson.loads(value) if isinstance(value, str | bytes) else value
    return int(seen[parent]) if parent in seen else None


def plan(client: Client, store: Store, resource: Resource, filters: dict, previous: str,
         budget: float | None = None) -> Step | None:
    """The incremental load of `resource` over its `previous` load, or None for a full pull; `budget`
    overrides a freshness budget's `max_age` (0: every parent asked again, a full pull)."""
    how = resource.incremental
    if how is None:
        return None
    if budget is not None and how.strategy == "rotation":
        how = dataclasses.replace(how, max_age=float(budget))
    strategy = STRATEGIES.get(how.strategy)
    if strategy is None:
        raise ValueError(f"{resource.service}.{resource.name}: unknown incremental strategy {how.strategy!r}")
    return strategy(client, store, resource, how, filters, previous)


def _text(name: str, table: str = "") -> str:
    """A column (of the `table` alias) as text: keys and statuses compared with the values the filters
    send, and values of two resources compared whatever type each table gave them."""
    return f"CAST({table + '.' if table else ''}{quote(name)} AS VARCHAR)"


def _among(text: str) -> str:
    """SQL true where `text` (a column as text) is one of the `?` parameter's values: an IN over their
    unnested list, which DuckDB answers with a hash join. `list_contains(?, x)` is one only where it
    stands alone in a WHERE: negated or inside another expression it searched the list for every row
    (41 s for 300,000 rows against 60,000 ids, where this takes 0.04 s)."""
    return f"({text} IN (SELECT unnest(?::VARCHAR[])))"


def _held(resource: Resource) -> str:
    """The previous view: the valid versions (the view itself may be being replaced by a load)."""
    return f"(SELECT * FROM {versions_of(resource.service, resource.name)} WHERE _valid_to IS NULL)"


def _open_statuses(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
                   previous: str) -> Step | None:
    """The rows in an open status, then the held open ones the first answer lacks (they may have
    become final since), by key; held rows in a final status stay.

    A row created and finished between two loads is in neither answer. So the service's count of
    every row (one small page) is compared with the held rows plus the new ones the open answer
    brought; where they differ, the rows in a final status are asked for instead of the held open
    ones (the open and final answers do not overlap, so no row comes twice)."""
    if how.filter in filters or how.ids in filters:
        return None
    action = catalog.ACTIONS[resource.action]
    choices = next((p.choices for p in action.params if p.name == how.filter), ())
    open_ones = [c for c in choices if c not in how.final]
    final = list(how.final)
    key = resource.key[0]
    held = [row[0] for row in store.rows(
        f"SELECT {quote(key)} FROM {_held(resource)} "
        f"WHERE {_text(how.field)} IS NULL OR NOT list_contains(?, {_text(how.field)})",
        [final])]
    every = {str(row[0]) for row in store.rows(f"SELECT {quote(key)} FROM {_held(resource)}")}
    total = _count(client, action, filters)

    def tables(run: Callable[[dict], Tables]) -> Tables:
        seen: set[str] = set()
        for table, step in run({**filters, how.filter: open_ones}):
            seen.update(str(v) for v in table.column(key).to_pylist() if v is not None)
            yield table, step
        if total is not None and total != len(every) + len(seen - every):
            yield from run({**filters, how.filter: final})
            return
        again = [i for i in held if str(i) not in seen]
        for start in range(0, len(again), IDS_PER_REQUEST):
            yield from run({**filters, how.ids: again[start:start + IDS_PER_REQUEST]})

    return Step(tables, Carry(_among(_text(how.field)), [final]))


def _count(client: Client, action: Any, filters: dict) -> int | None:
    """The service's count of every row the filters select, from a page of one (None: it gives none)."""
    style = action.paging
    size = getattr(style, "size", None) or getattr(style, "limit", None)
    if size is None:
        return None
    page = next(iter(client.pages(action, **{**filters, size: 1})), None)
    if page is None:
        return None
    if isinstance(style, PageNumber):
        value = page.response.headers.get(style.total_header) if style.total_header else None
    else:
        value = dig(page.body, getattr(style, "total", "total")) if isinstance(page.body, dict) else None
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _open_parents(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
                  previous: str) -> Step | None:
    """The rows of the parents that may have changed since the previous load: with a version begun or
    ended in the parent's loads since, or open now (when the parent has final statuses); the other
    parents' rows stay."""
    parent = catalog.resource(resource.service, how.parent)
    ids_param = how.ids or f"{how.field}s"
    if parent.incremental is None or ids_param in filters or how.parent in filters:
        return None
    since = _seen_by(store, previous, parent.name)
    if since is None:
        since = store.rows("SELECT max(p.seq) FROM _loads p, _loads c WHERE c.load_id = ? AND p.service = ? "
                           "AND p.resource = ? AND p.status IN ('complete', 'stale') AND p.finished <= c.started",
                           [previous, resource.service, parent.name])[0][0]
    if not since:
        return None
    changed, args = "_valid_from > ? OR _valid_to > ?", [since, since]
    if parent.incremental.final:  # an open parent's rows may change while its own row does not
        status = _text(parent.incremental.field)
        changed += f" OR (_valid_to IS NULL AND ({status} IS NULL OR NOT list_contains(?, {status})))"
        args.append(list(parent.incremental.final))
    ids = [row[0] for row in store.rows(
        f"SELECT DISTINCT {quote(how.field)} FROM {versions_of(parent.service, parent.name)} "
        f"WHERE {quote(how.field)} IS NOT NULL AND ({changed})", args)]

    def tables(run: Callable[[dict], Tables]) -> Tables:
        return run({**filters, ids_param: ids})

    return Step(tables, Carry(f"NOT {_among(_text(how.field))}", [[str(i) for i in ids]]))


def _created_after(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
                   previous: str) -> Step | None:
    """The rows created at or after the second of the newest held, when the service's count of every
    row equals the held rows before that second plus its count of the newer ones (else a row was
    deleted, which no filtered answer shows: a full pull)."""
    if how.filter in filters:
        return None
    column = quote(how.field)
    newest = store.rows(f"SELECT strftime(max({column}) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S') "
                          f"FROM {_held(resource)}")[0][0]
    if newest is None:
        return None
    older = f"({column} IS NULL OR strftime({column} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S') < ?)"
    held = store.rows(f"SELECT count(*) FROM {_held(resource)} WHERE {older}",
                        [newest])[0][0]
    action = catalog.ACTIONS[resource.action]
    paging = action.paging
    if not isinstance(paging, Offset):      # the catalog gives created_after only to offset-paged lists
        return None
    after = f'{how.field} >: "{newest}"'
    first_row: dict[str, Any] = {paging.offset: 0, paging.size: 1}

    def total(**params: Any) -> int | None:
        body = client.call(action, **first_row, **params)
        value = dig(body, how.total) if isinstance(body, dict) else None
        return None if value is None else int(value)

    every, newer = total(**filters), total(**filters, **{how.filter: after})
    if every is None or newer is None or every != held + newer:
        return None

    def tables(run: Callable[[dict], Tables]) -> Tables:
        return run({**filters, how.filter: after})

    return Step(tables, Carry(older, [newest]))


def _changed_parents(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
                     previous: str) -> Step | None:
    """The fan-out again over the ids whose parent row is new or changed since the previous load, that
    hold a row naming a `copies` row new, changed or gone since, or that failed in the previous load;
    the other ids' rows stay, and the rows of ids no longer fanned over go.

    The sets are DuckDB's: the ids asked (Arrow, as given) are set against the parent's unchanged rows
    and the ids to ask again inside the engine, and only those asked again become Python values; the
    ids kept stay Arrow to the commit (`_kept`). Read into Python sets and handed to the merge as a
    list, the unchanged profiles made a refresh of 3,000,000 memberships peak at 535 MB, where their
    full pull peaked at 322 MB."""
    fanned = _fanned(store, resource, filters)
    if fanned is None:
        return None
    asked, plural, rest = fanned
    parent = catalog.resource(resource.service, how.parent)
    unchanged = _unchanged(store, parent, how.parent_field or how.field, previous)
    if unchanged is None:
        return None
    failed = [str(i) for i in store.rows("SELECT failed_ids FROM _loads WHERE load_id = ?", [previous])[0][0] or ()]
    again, args = "SELECT unnest(?::VARCHAR[]) AS v", [*unchanged[1], failed]
    if how.copies:
        source = catalog.resource(resource.service, how.copies)
        same = _unchanged(store, source, source.key[0], previous)
        if same is None:
            return None
        again += (f" UNION ALL SELECT {_text(how.field)} FROM {_held(resource)} WHERE {quote(how.via)} IS NULL "
                  f"OR NOT ({_text(how.via)} IN ({same[0]}))")
        args += same[1]
    # in the order given: the fan-out asks again in the order a full pull would
    kept = store.arrow(f"WITH unchanged AS ({unchanged[0]}), again AS ({again}) "
                       f"SELECT coalesce(id IN (SELECT v FROM unchanged) AND id NOT IN "
                       f"(SELECT v FROM again WHERE v IS NOT NULL), false) AS kept FROM {_ASKED} ORDER BY n",
                       args, {_ASKED: _numbered(asked)}).column("kept").combine_chunks()
    ids = asked.filter(pc.invert(kept)).to_pylist()

    def tables(run: Callable[[dict], Tables]) -> Tables:
        return run({**rest, plural: ids})

    return Step(tables, _kept(_text(how.field), asked.filter(kept)), members=ids)


_ASKED = "_toolkit_asked"      # the ids a fan-out asks, as a plan sets them against the held rows
_KEPT = "_toolkit_kept"        # the ids whose rows a load carries, as its merge reads them


def _numbered(ids: pa.Array) -> pa.Table:
    return pa.table({"n": np.arange(len(ids), dtype=np.int64), "id": ids})


def _kept(text: str, ids: pa.Array | list) -> Carry:
    """The carry of the rows whose `text` (a column as text) is one of `ids`: an Arrow table the merge
    reads in place (`Carry.tables`), never a DuckDB value per id."""
    return Carry(f"({text} IN (SELECT id FROM {_KEPT}))", [],
                 {_KEPT: pa.table({"id": ids if isinstance(ids, pa.Array) else pa.array(ids, pa.string())})})


def _fanned(store: Store, resource: Resource, filters: dict) -> tuple[pa.Array, str, dict] | None:
    """The ids a full pull of a fan-out asks for (given by the analyst, or its parent resource's held
    keys) as Arrow text, the filter taking them, and the other filters; None for a resource that is not one."""
    if not resource.fan_out:
        return None
    plural = f"{resource.fan_out}s"
    given = filters.get(resource.parent) if resource.parent in filters else filters.get(plural)
    rest = {k: v for k, v in filters.items() if k not in (resource.parent, plural)}
    if isinstance(given, pa.ChunkedArray):
        given = given.combine_chunks()
    if isinstance(given, pa.Array) and (pa.types.is_string(given.type) or pa.types.is_large_string(given.type)):
        return given, plural, rest        # text ids as handed stay Arrow, not copied (pull/given.py)
    if given is not None:
        return pa.array([str(i) for i in (given.tolist() if hasattr(given, "tolist") else given)],
                        pa.string()), plural, rest
    if (resource.service, resource.parent) in catalog.RESOURCES:   # the ids a full pull reads
        source = catalog.resource(resource.service, resource.parent)
        column = resource.parent_key or source.key[0]
        return store.arrow(f"SELECT DISTINCT {_text(column)} AS id FROM {_held(source)} "
                           f"WHERE {quote(column)} IS NOT NULL").column("id").combine_chunks(), plural, rest
    return None


def _open_members(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
                  previous: str) -> Step | None:
    """The fan-out again over the ids not held in a `final` status of `field` (new ids, open ones,
    those that failed in the previous load); a row in a final status stays as it is, and the rows of
    ids no longer asked for go."""
    fanned = _fanned(store, resource, filters)
    if fanned is None:
        return None
    asked, plural, rest = fanned[0].to_pylist(), fanned[1], fanned[2]
    key = resource.fan_out if any(c.name == resource.fan_out for c in resource.columns) else resource.key[0]
    done = {row[0] for row in store.rows(
        f"SELECT {_text(key)} FROM {_held(resource)} WHERE list_contains(?, {_text(how.field)})",
        [list(how.final)])}
    done -= {str(i) for i in store.rows("SELECT failed_ids FROM _loads WHERE load_id = ?",
                                           [previous])[0][0] or ()}
    keep = [i for i in asked if i in done]
    kept = set(keep)
    ids = [i for i in asked if i not in kept]

    def tables(run: Callable[[dict], Tables]) -> Tables:
        return run({**rest, plural: ids})

    return Step(tables, _kept(_text(key), keep), members=ids)


def _unchanged(store: Store, resource: Resource, column: str, previous: str) -> tuple[str, list] | None:
    """The query (and its parameters) of the values of `column`, as text `v`, whose rows of `resource`
    are the same in its last load before the `previous` load started and in its latest, which began
    after that load finished: one version valid throughout. None when it has no load on either side
    (nothing to compare). Where the `previous` load recorded the `seq` it had seen of `resource`, that
    is the first side and any later commit the other."""
    seen = _seen_by(store, previous, resource.name)
    if seen is not None:
        newest = store.rows("SELECT max(seq) FROM _loads WHERE service = ? AND resource = ? "
                            "AND status IN ('complete', 'stale')", [resource.service, resource.name])[0][0]
        if not seen or newest is None or newest <= seen:
            return None
        since = seen
    else:
        since, newer = store.rows(
            "SELECT max(p.seq) FILTER (WHERE p.finished <= c.started), "
            "max(p.seq) FILTER (WHERE p.started >= c.finished) FROM _loads p, _loads c WHERE c.load_id = ? "
            "AND p.service = ? AND p.resource = ? AND p.status IN ('complete', 'stale') AND p.seq IS NOT NULL",
            [previous, resource.service, resource.name])[0]
        if since is None or newer is None:
            return None
    return (f"SELECT {_text(column)} AS v FROM {_held(resource)} WHERE {quote(column)} IS NOT NULL "
            "GROUP BY ALL HAVING max(_valid_from) <= ?", [since])


def _rotation(client: Client, store: Store, resource: Resource, how: Incremental, filters: dict,
              previous: str) -> Step | None:
    """The fan-out again over the ids due within the freshness budget (spec.Incremental "rotation"),
    by the service's clock: confirmations are the `_confirmed` rows of loads that asked an id
    (`Store.confirmations`); the time since the previous load is the refresh's cadence."""
    fanned = _fanned(store, resource, filters)
    if fanned is None or not how.max_age:
        return None
    if store.rows("SELECT status FROM _loads WHERE load_id = ?", [previous])[0][0] == "stale":
        return None   # a write through a connection changed it since: every parent is asked again
    asked, plural, rest = fanned[0].to_pylist(), fanned[1], fanned[2]
    confirmed = store.confirmations(resource.service, resource.name)
    if not confirmed:
        return None   # nothing confirmed yet (a workspace from before budgets): a full pull records all
    now = _service_now(client, store, resource, previous)
    last_load = store.rows("SELECT coalesce(service_clock, finished) FROM _loads WHERE load_id = ?", [previous])[0][0]
    cadence = max(0.0, (now - last_load).total_seconds()) if last_load else how.max_age
    failed = {str(i) for i in store.rows("SELECT failed_ids FROM _loads WHERE load_id = ?", [previous])[0][0] or ()}
    # due: never confirmed, failed, or older than the budget by the next refresh (a cadence from now);
    # exactly the budget's age then is still within it
    due = {i for i in asked if i not in confirmed or i in failed
           or (now - confirmed[i]).total_seconds() + cadence > how.max_age}
    share = min(len(asked), math.ceil(len(asked) * min(1.0, cadence / how.max_age)))
    for i in sorted((i for i in asked if i not in due), key=lambda i: confirmed[i]):
        if len(due) >= share:
            break
        due.add(i)   # the oldest, so that the work spreads evenly over the budget
    keep = [i for i in asked if i not in due]
    ids = [i for i in asked if i in due]

    def tables(run: Callable[[dict], Tables]) -> Tables:
        return run({**rest, plural: ids})

    return Step(tables, _kept(_text(how.field), keep), asked=ids, members=ids, saved=len(keep))


CLOCK_STALE = 60.0  # seconds after which the service's latest Date is asked for again, not extrapolated


def _service_now(client: Client, store: Store, resource: Resource, previous: str) -> Any:
    """The service's clock now: its latest Date moved on by the time since. Where that Date is old, or
    the parent was not pulled since the previous load (a refresh that kept it), a page of one of the
    parent's list is asked first: a clock that jumps (the sandbox's, or a service's Date after a long
    pause here) would otherwise make every parent look fresher than it is."""
    clock = client.transport.clock
    age = clock.age()
    if (resource.service, resource.parent) in catalog.RESOURCES:
        pulled = store.rows("SELECT max(p.finished) > max(c.finished) FROM _loads p, _loads c WHERE c.load_id = ? "
                            "AND p.service = ? AND p.resource = ? AND p.status IN ('complete', 'stale')",
                            [previous, resource.service, resource.parent])[0][0]
        if age is None or age > CLOCK_STALE or not pulled:
            _count(client, catalog.ACTIONS[catalog.resource(resource.service, resource.parent).action], {})
    return clock.now() or store.rows("SELECT now()")[0][0]


STRATEGIES: dict[str, Callable[..., Step | None]] = {
    "rotation": _rotation,
    "open_members": _open_members,
    "open_statuses": _open_statuses,
    "open_parents": _open_parents,
    "created_after": _created_after,
    "changed_parents": _changed_parents,
}
