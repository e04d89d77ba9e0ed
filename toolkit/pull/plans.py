"""How a resource's rows come, as a Plan of typed tables: a walk of pages, one request, a fan-out over ids,
chunks of ids, or settings objects (toolkit.pull.fetch loads what a plan yields).

A fan-out asks with bounded concurrency over the client's Session and hands each member's rows to
the typist in the order they were put, so that the members done (`Plan.done`) are exactly those
whose rows went on: what a checkpoint names. `KeyWatch` refuses a walk whose service ignores where
it is. The parent's ids are read through `parent_ids`, which the caller hands in: reading them may
pull the parent, and the pull is the caller's.
"""
from __future__ import annotations

__all__ = ["KeyWatch", "ParentIds", "Plan", "plan", "split_filters", "walk"]

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit import catalog
from toolkit.catalog.masking import mask_settings
from toolkit.catalog.spec import Action, Resource, camel
from toolkit.errors import (
    AnswerError,
    ApiError,
    PagingError,
    ToolkitError,
    TransportError,
    ValidationError,
    did_you_mean,
    shortened,
)
from toolkit.http.rules import problems, version_tuple
from toolkit.pull import decoding, drift, frames, sides
from toolkit.pull.resume import Done, member_key, members_of
from toolkit.pull.typist import Typist
from toolkit.storage.file import FINISHED

if TYPE_CHECKING:
    from toolkit.http.client import Client
    from toolkit.storage.store import Store

# the ids of a fan-out's parent resource, for the child resource given (read from the parent's latest load)
ParentIds = Callable[[Resource], list]


def split_filters(client: Client, resource: Resource, action: Action, filters: dict) -> tuple[list | None, dict]:
    """The fan-out ids (or None) and the action params from what the analyst passed."""
    ids = None
    params = {}
    names = {p.name for p in action.params}
    plural = f"{resource.fan_out}s" if resource.fan_out else None
    for name, value in filters.items():
        if value is None:
            continue
        if name in (resource.parent, plural) and resource.fan_out:
            # text ids handed as Arrow stay Arrow (toolkit.pull.given): the fan-out asks them one at a time
            ids = value if isinstance(value, pa.Array) else list(value.tolist() if hasattr(value, "tolist") else value)
        elif name in names and name != resource.fan_out:
            params[name] = value
        elif name not in resource.filters:
            takes = sorted({*resource.filters, *(n for n in names if n != resource.fan_out)}
                           | ({plural} if plural else set()))
            raise ValidationError(name, value, f"unknown filter{did_you_mean(name, takes) or ';'} {resource.name} "
                                  f"takes {', '.join(takes)}")
        else:
            params[name] = value
    for param in action.params:
        if param.required and param.name not in params and param.name != resource.fan_out \
                and param.default is not None:
            params[param.name] = param.default
    return ids, params


def _check_given(action: Action, given: dict) -> None:
    """The analyst's own filters checked before the parent is pulled: status=['DONE'] was refused
    only after every submission had come down. The ids the parent gives are checked as they go."""
    found = [problem for problem in problems(action, given) if problem.param in given]
    if found:
        raise found[0]


@dataclass
class Plan:
    tables: Callable[[], Iterator[tuple[pa.Table, int]]]
    total: int | None
    unit: str
    failed: list = field(default_factory=list)
    members: list | pa.Array | None = None  # the ids a fan-out over its parent asks
    planned: list | pa.Array | None = None  # a fan-out's members (ids or chunks of them): what makes it resumable
    done: Done = field(default_factory=Done)   # members whose rows were all handed on, in that order
    skip: set = field(default_factory=set)     # members (as resume.member_key) a resumed load holds already
    # the tables of members answered when Ctrl-C stopped the walk, typed and counted in `done` but not yet
    # handed on: the load keeps them at its last checkpoint, so the pull that goes on does not ask again
    leftover: list = field(default_factory=list)


def plan(client: Client, store: Store, resource: Resource, filters: dict, workers: int, on_error: str,
          parent_ids: ParentIds) -> Plan:
    """How the resource's rows come: a walk of pages, one request, a fan-out over ids (given, or the
    parent's as `parent_ids` reads them), chunks of ids, or settings objects one action each."""
    if resource.chunks is not None:
        return _chunked(client, store, resource, filters, workers, on_error, parent_ids)
    if resource.settings is not None:
        return _settings(client, resource)
    action = catalog.ACTIONS[resource.action]
    ids, params = split_filters(client, resource, action, filters)
    if resource.fan_out:
        if ids is None:
            if (resource.service, resource.parent) in catalog.RESOURCES:
                _check_given(action, params)
                ids = parent_ids(resource)
                other = _other_side(client, store, resource, filters, ids, workers, on_error)
                if other is not None:
                    return other
            else:
                raise ValidationError(resource.parent or "ids", None, f"{resource.name} needs the ids to fetch: "
                                      f"pass {resource.parent}=[...]")
        return _fan_out(client, resource, action, ids, params, workers, on_error)
    if action.response == "page" or action.paging:
        return Plan(lambda: walk(client, resource, action, params, ahead=workers - 1), None, "pages")
    return Plan(lambda: _single(client, resource, action, params), 1, "requests")


def walk(client: Client, resource: Resource, action: Action, params: dict,
          parent: dict | None = None, ahead: int = 0) -> Iterator[tuple[pa.Table, int]]:
    style = action.paging or client.service.paging
    typist = Typist(resource, action, style)
    told = drift.Told(style)
    keys = KeyWatch(resource, action.id)
    held: list = []         # the latest table, kept back to carry what the walk's end tells (its total)

    def passing(tables: Iterator[tuple[pa.Table, int]]) -> Iterator[tuple[pa.Table, int]]:
        for table in keys.watched(tables):
            yield from held
            held[:] = [table]

    try:
        for page in client.pages(action, ahead=ahead, decode=typist.decode, max_pages=resource.max_pages,
                                 **params):
            typist.note(drift.envelope(style, page.body, page.response.headers))
            told.page(page.rows, page.total)
            if not page.rows and held:
                continue        # the empty page after a full one: nothing to type (a walk of none types one)
            typist.put(decoding.rows_of(resource, action, page.body), page.response.content, parent=parent)
            keys.expect(page.full)
            yield from passing(typist.typed())
        yield from passing(typist.typed(everything=True))
        notes = told.differs()
        table, step = held[0] if held else (frames.empty(resource), 0)
        if held or notes:
            yield (frames.noted(table, notes) if notes else table), step
    finally:
        typist.close()


class KeyWatch:
    """A walk whose full page holds only keys it has seen already is a service that ignores where
    the walk is (it answers its first page forever, or page numbers modulo something): PagingError,
    where a byte-identical page (paging.Watch) would not show it because an envelope or a timestamp
    differs. The keys of the first and the latest 8 pages are kept, so memory stays flat; a loop of a
    longer period meets the walk's ceiling instead. Pages typed elsewhere come back in page order."""

    KEPT = 8

    def __init__(self, resource: Resource, action: str) -> None:
        self.names, self.action = [k for k in resource.key if k], action
        self.full: deque[bool] = deque()
        self.first: set = set()
        self.latest: deque[set] = deque(maxlen=self.KEPT)
        self.pages = 0

    def expect(self, full: bool) -> None:
        self.full.append(full)

    def watched(self, tables: Iterator[tuple[pa.Table, int]]) -> Iterator[tuple[pa.Table, int]]:
        for table, step in tables:
            if self.full and step:
                self._check(table, self.full.popleft())
            yield table, step

    def _check(self, table: pa.Table, full: bool) -> None:
        self.pages += 1
        if not self.names or not all(name in table.column_names for name in self.names) or not table.num_rows:
            return
        columns = [table.column(name).to_pylist() for name in self.names]
        keys = set(zip(*columns, strict=True))
        if full and self.pages > 1 and all(key in self.first or any(key in s for s in self.latest) for key in keys):
            raise PagingError(f"{self.action}: page {self.pages} of the walk holds only rows the walk has "
                              f"had already ({len(keys)} keys): the service ignores where the walk is. "
                              f"Nothing of this walk was kept")
        if self.pages <= self.KEPT:
            self.first |= keys
        else:
            self.latest.append(keys)


def _single(client: Client, resource: Resource, action: Action, params: dict) -> Iterator[tuple[pa.Table, int]]:
    body, found = decoding.mend(resource, action.paging, client.call(action, **params))
    table = frames.to_arrow(decoding.rows_of(resource, action, body), resource)
    yield (frames.noted(table, [[decoding.items_key(action.paging), "envelope", 1, found]]) if found else table), 1


def _member_rows(client: Client, resource: Resource, action: Action, params: dict, member: Any,
                 typist: Typist) -> list | _Pages:
    """Every row for one fan-out id (all its pages)."""
    call = {**params, resource.fan_out: member}
    if action.response == "page":
        return _paged_rows(client, resource, action, call, typist)
    body, found = decoding.mend(resource, action.paging, client.call(action, **call))
    if found:
        typist.note([[decoding.items_key(action.paging), "envelope", 1, found]])
    return decoding.rows_of(resource, action, body)


class _Pages(list):
    """A fan-out member's pages as (rows, answer bytes), some left for the typing helper."""


def _paged_rows(client: Client, resource: Resource, action: Action, call: dict, typist: Typist) -> list | _Pages:
    """Every row of a walk, decoded into the Resource's Structs where the pages fit them; the pages
    themselves when some are for the typing helper."""
    style = action.paging or client.service.paging
    pages = []
    told = drift.Told(style)
    for page in client.pages(action, decode=typist.decode, max_pages=resource.max_pages, **call):
        typist.note(drift.envelope(style, page.body, page.response.headers))
        told.page(page.rows, page.total)
        pages.append((decoding.rows_of(resource, action, page.body), page.response.content))
    typist.note(told.differs())
    if any(isinstance(rows, decoding.RawRows) for rows, _ in pages):
        return _Pages(pages)
    return decoding.joined([rows for rows, _ in pages], resource)


def _fan_out(client: Client, resource: Resource, action: Action, ids: Sequence, params: dict, workers: int,
             on_error: str, member_rows: Callable | None = None, tag_rows: bool = True, unit: str = "ids") -> Plan:
    # one list (or the Arrow array given) for both: they are read, never changed, and a copy costs 8 bytes a parent
    members = ids if isinstance(ids, list | pa.Array) else list(ids)
    plan = Plan(lambda: iter(()), len(ids), unit, members=members if tag_rows else None, planned=members)
    fetch_member = member_rows or (lambda member, typist: _member_rows(client, resource, action, params, member,
                                                                       typist))
    column = resource.fan_out if tag_rows else None

    def tables() -> Iterator[tuple[pa.Table, int]]:
        typist = Typist(resource, action, action.paging or client.service.paging)
        put: deque = deque()  # members in the order their rows went to the typist, which keeps it

        def typed(everything: bool = False) -> Iterator[tuple[pa.Table, int]]:
            for table, step in typist.typed(everything=everything):
                member = put.popleft()
                if member is not _FAILED:
                    plan.done.append(member)   # before the table goes on: a checkpoint after it names it
                yield table, step

        def hand_on(rows: Any, parent_id: Any, member: Any) -> None:
            """A member's answer to the typist, its rows tagged with the parent they were asked for."""
            parent = {column: parent_id} if column else None
            if isinstance(rows, _Pages):
                typist.put_pages(rows, parent=parent)
            else:
                typist.put(rows, None, parent=parent)
            put.append(member)

        def drained() -> None:
            """On Ctrl-C: the members not started are not asked; the answers of those in flight (a request
            each, which the pool's exit waits for anyway) and of those waiting to be typed go to
            `plan.leftover`, so that what was asked is kept: before, a window of 16 translation documents'
            answers was dropped and asked again by the pull that went on. Anything going wrong here
            (a second Ctrl-C, a member that failed) leaves them to that pull, as before."""
            for future in running:
                future.cancel()
            try:
                for future, member in running.items():
                    if not future.cancelled():
                        hand_on(future.result(), member, member)
                plan.leftover.extend(typed(everything=True))
            except BaseException:
                return

        running: dict = {}
        # a bounded window of futures: memory stays flat however many ids there are
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="toolkit-fetch") as pool:
            queue = (member for member in members_of(ids) if not plan.skip or member_key(member) not in plan.skip)
            for member in _take(queue, workers * 2):
                running[pool.submit(fetch_member, member, typist)] = member
            try:
                while running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        member = running_member = running.pop(future)
                        try:
                            rows = future.result()
                        except (ApiError, AnswerError, TransportError) as error:
                            if on_error == "raise":
                                for other in running:
                                    other.cancel()
                                raise ToolkitError(f"{resource.name}: {resource.fan_out or 'chunk'}="
                                                   f"{shortened(member)} failed: {error}") from error
                            plan.failed.append(member)
                            rows, member = [], _FAILED
                        hand_on(rows, running_member, member)
                        yield from typed()
                        for nxt in _take(queue, 1):
                            running[pool.submit(fetch_member, nxt, typist)] = nxt
                yield from typed(everything=True)
            except (KeyboardInterrupt, GeneratorExit):
                drained()
                raise
            finally:
                typist.close()

    plan.tables = tables
    return plan


def _other_side(client: Client, store: Store, resource: Resource, filters: dict, ids: Sequence, workers: int,
                on_error: str) -> Plan | None:
    """The resource read from its relation's other side when that needs fewer requests
    (toolkit.pull.sides), else None: the parents listed first (that listing decides), then each
    parent's children, each row the parent's record with a child's id, typed as this side's rows."""
    side = resource.other_side
    if side is None or any(name in filters for name in side.unless):
        return None
    parent = catalog.resource(resource.service, side.parent)
    listing, children = catalog.ACTIONS[parent.action], catalog.ACTIONS[side.action]
    style = children.paging or client.service.paging
    held = store.rows(f"SELECT \"rows\" FROM _loads WHERE service = ? AND resource = ? AND status IN {FINISHED} "
                      "ORDER BY seq DESC NULLS LAST LIMIT 1", [resource.service, resource.name])
    records = [row for page in client.pages(listing) for row in decoding.rows_of(parent, listing, page.body)]
    if not sides.cheaper_the_other_way(len(ids), len(records), held[0][0] if held else None,
                                       getattr(style, "max_size", 100)):
        return None
    parent_id, child_id = camel(parent.key[0]), camel(resource.parent_key or "id")
    by_id = {record.get(parent_id): {k: v for k, v in record.items() if k not in side.omit} for record in records}
    wanted, column = {str(i) for i in ids}, camel(resource.fan_out)

    def member_rows(member: Any, typist: Typist) -> list:
        rows = []
        for page in client.pages(children, **{side.param: member}):
            for child in decoding.rows_of(resource, children, page.body):
                if str(child.get(child_id)) in wanted:  # only children the resource's own parent holds
                    rows.append({**by_id[member], column: child.get(child_id)})
        return rows

    return _fan_out(client, resource, catalog.ACTIONS[resource.action], list(by_id), {}, workers, on_error,
                    member_rows=member_rows, tag_rows=False)


_FAILED = object()  # a member whose rows did not come (on_error="skip"): not done


def _take(iterator: Iterator, n: int) -> Iterable:
    for _ in range(n):
        try:
            yield next(iterator)
        except StopIteration:
            return


# --- resources that one list action cannot describe (Resource.chunks, Resource.settings) -------------

def _chunked(client: Client, store: Store, resource: Resource, filters: dict, workers: int, on_error: str,
             parent_ids: ParentIds) -> Plan:
    """The rows of the parent's ids (all of them when none are given), `chunks.size` ids a request;
    one id a request through `chunks.older` where the service is older than `chunks.since`."""
    how = resource.chunks
    if how is None:
        raise ValidationError("resource", resource.name, "takes no chunks of ids (Resource.chunks)")
    filters = dict(filters)
    ids = filters.pop(how.param, None)
    unknown = [name for name in filters if name not in resource.filters]
    if unknown:
        raise ValidationError(unknown[0], filters[unknown[0]], f"unknown filter"
                              f"{did_you_mean(unknown[0], {how.param, *resource.filters}) or ';'} {resource.name} takes "
                              f"{', '.join(dict.fromkeys([how.param, *resource.filters]))}")
    given = {name: value for name, value in filters.items() if value is not None}
    if ids is None:
        _check_given(catalog.ACTIONS[resource.action], given)
        ids = parent_ids(resource)
    ids = list(ids.tolist() if hasattr(ids, "tolist") else ids)
    if how.since is None or version_tuple(client.system_version or "99") >= version_tuple(how.since):
        action = catalog.ACTIONS[resource.action]
        chunks = [ids[i:i + how.size] for i in range(0, len(ids), how.size)]

        lists = {param.name for param in action.params if param.kind.endswith("list") or param.repeatable}
        asked = {name: [value] if name in lists and isinstance(value, str) else value
                 for name, value in given.items()}

        def chunk_rows(chunk: list, typist: Typist) -> list | _Pages:
            return _paged_rows(client, resource, action, {how.param: chunk, **asked}, typist)

        # a request asks for many parents at once: the progress counts those requests, not ids
        return _fan_out(client, resource, action, chunks, {}, workers, on_error, member_rows=chunk_rows,
                        tag_rows=False, unit=f"batches of {resource.parent}")
    older = catalog.ACTIONS[how.older]
    single = {param.name for param in older.params if param.kind != "list" and not param.repeatable}

    def one_id_rows(member: Any, typist: Typist) -> list:
        # a list for a param that takes one value is one request per value, the rows united by key:
        # a service's filter words need not be the rows' own values (COMPLETED finds PROCESSED targets)
        spread = [dict(zip(given, values, strict=True)) for values in itertools.product(
            *[(value if name in single and isinstance(value, list | tuple) else [value])
              for name, value in given.items()])]
        rows: dict = {}
        for params in spread or [{}]:
            for page in client.pages(older, **{how.one: member, **params}):
                rows.update((tuple(row.get(k) for k in _wire_key(resource)), row) for row in page.body)
        return list(rows.values())

    return _fan_out(client, resource, older, ids, {}, workers, on_error, tag_rows=False, member_rows=one_id_rows,
                    unit=resource.parent)


def _wire_key(resource: Resource) -> list[str]:
    """The wire names of the resource's key columns (a row of an answer is keyed by them)."""
    by_name = {column.name: column for column in resource.columns}
    return [".".join(by_name[k].path) if k in by_name else k for k in resource.key]


def _settings(client: Client, resource: Resource) -> Plan:
    """One row per settings object, each read by its own action: its name, whether it is enabled, and
    the settings themselves with every secret masked."""
    if resource.settings is None:
        raise ValidationError("resource", resource.name, "has no settings objects (Resource.settings)")
    reads = resource.settings.reads

    def tables() -> Iterator[tuple[pa.Table, int]]:
        rows = []
        for name, action in reads:
            settings = mask_settings(client.call(action))
            enabled = settings.get("enabled") if isinstance(settings, dict) else None
            rows.append({"configuration": name, "enabled": enabled, "settings": settings})
        yield frames.to_arrow(rows, resource), len(reads)
    return Plan(tables, len(reads), "requests")
