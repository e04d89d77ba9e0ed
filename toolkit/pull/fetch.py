"""Resources into the workspace: walk the pages or fan out over ids, type the rows, load them atomically.

Every function takes the client that sends and the store that keeps (a connection hands both); this
module imports neither the connection nor the workspace.

A plain resource walks its list action's pages; a fan-out resource calls its action once per id,
the ids given by the analyst (`profile_ids=...`) or read from the parent resource's latest load, with
bounded concurrency over the client's Session (the HTTP layer keeps the service's rate budget).
Rows are typed per page and written to the workspace in batches inside one load, so a failure leaves
nothing visible. Answers are decoded straight into the Resource's declared fields where they fit
(`toolkit.pull.decoding`); once a walk proves long, its pages are typed in a helper process while the
walk goes on with the next request (`toolkit.pull.typist`), and a batch is written on a thread of its own
while the next fills (DuckDB releases the GIL). With page numbers or offsets, `workers - 1` following
pages are asked for ahead (Client.pages), so a walk over a slow link does not wait for one answer at a
time; a cursor walk cannot. Python's garbage collector is paused while pages are parsed: with
millions of fresh objects alive it would otherwise spend most of the pull scanning them.

Answers that differ from the declared shapes are kept and the load records how (`toolkit.pull.drift`,
`ws.drift()`, a `DriftWarning`), or with `contract="freeze"` the first difference refuses the load.
"""
from __future__ import annotations

__all__ = ["KeyWatch", "LoadResult", "fetch", "narrowing", "pull"]

import gc
import itertools
import logging
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit import catalog
from toolkit.catalog.masking import MASK, looks_secret, mask_settings
from toolkit.catalog.spec import Action, Resource, camel
from toolkit.errors import (
    AnswerError,
    ApiError,
    ContractError,
    DriftWarning,
    Interrupted,
    PagingError,
    ToolkitError,
    TransportError,
    ValidationError,
    WorkspaceError,
    did_you_mean,
    shortened,
)
from toolkit.http.rules import problems, version_tuple
from toolkit.pull import decoding, drift, frames, given, increments, sides
from toolkit.pull.progress import bar as progress_bar
from toolkit.pull.resume import Checkpoints, member_key
from toolkit.pull.typist import Typist
from toolkit.storage.file import FINISHED, filtered_of

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import threading

    import pandas as pd

    from toolkit.http.client import Client
    from toolkit.storage.store import Store



@dataclass
class LoadResult:
    """What one pull did: its load id, rows, requests, the ids that failed, whether it came from cache,
    and how its answers differed from the declared shapes (`ws.drift()` has the same)."""
    load_id: str
    resource: str
    rows: int = 0
    requests: int = 0
    failed_ids: list = field(default_factory=list)
    cached: bool = False
    kind: str = "full"  # or "incremental" (toolkit.pull.increments), or "cached"
    drift: list = field(default_factory=list)
    table: str = ""     # where the load's rows are: "service.resource", or "service.resource__filtered"
    resumed: int = 0    # parents whose rows an interrupted pull had fetched (Load.resume)
    saved: int = 0      # parents a freshness budget did not ask again (their rows carried over)


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _split_filters(client: Client, resource: Resource, action: Action, filters: dict) -> tuple[list | None, dict]:
    """The fan-out ids (or None) and the action params from what the analyst passed."""
    ids = None
    params = {}
    names = {p.name for p in action.params}
    plural = f"{resource.fan_out}s" if resource.fan_out else None
    for name, value in filters.items():
        if value is None:
            continue
        if name in (resource.parent, plural) and resource.fan_out:
            ids = list(value.tolist() if hasattr(value, "tolist") else value)
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


def _parent_ids(client: Client, store: Store, service: str, parent_name: str, column: str | None = None,
                contract: str = "evolve", progress: bool | None = None) -> list:
    """The ids of the parent resource, from its latest load (pulled now when there is none, under the
    child's contract and progress: a frozen fetch writes nothing, its parent's load included, and a
    quiet one shows nothing for its parent either)."""
    parent = catalog.resource(service, parent_name)
    if store.fresh_load(service, client.base_url, parent.name, {}, None) is None:
        pull(client, store, parent.name, contract=contract, progress=progress)
    frame = store.read(service, parent.name)
    return frame[column or parent.key[0]].dropna().tolist()


def pull(client: Client, store: Store, name: str, /, *, refresh: bool = False, max_age: float | str | timedelta | None = None,
         on_error: str = "raise", workers: int | None = None, progress: bool | None = None,
         incremental: bool = False, contract: str = "evolve", budget: float | str | timedelta | None = None,
         cancel: threading.Event | None = None, **filters: Any) -> LoadResult:
    """Pull one resource with the client into the store; the load is reused when younger than max_age.
    With `incremental=True` only what may have changed since the resource's previous complete load
    with the same filters is asked for, as its catalog entry declares (toolkit.pull.increments); without
    such a load or a declaration, a full pull. A fan-out under a freshness budget asks again for the
    parents confirmed longest ago, every one within `budget` (seconds; None: the catalog's default;
    0: all of them). Answers that differ from the declared shapes are kept
    and reported (`contract="evolve"`), or refused with nothing written (`contract="freeze"`:
    `ContractError` at the first difference). `cancel` set (a refresh's Ctrl-C, in another thread)
    stops the pull at its next page or parent as Ctrl-C does: `Interrupted`, with what was checkpointed."""
    return _pull(client, store, name, False, refresh=refresh, max_age=max_age, on_error=on_error, workers=workers,
                 progress=progress, incremental=incremental, contract=contract, budget=budget, cancel=cancel,
                 **filters)[0]


def _pull(client: Client, store: Store, name: str, keep: bool, /, *, refresh: bool = False,
          max_age: float | str | timedelta | None = None, on_error: str = "raise", workers: int | None = None,
          progress: bool | None = None, incremental: bool = False, contract: str = "evolve",
          budget: float | str | timedelta | None = None, cancel: threading.Event | None = None,
          **filters: Any) -> tuple[LoadResult, list[pa.Table] | None]:
    """The pull; with `keep`, also the batches it wrote (None when the load was reused or builds on
    another, whose batches are not the whole view)."""
    # everything given is checked before anything is sent or stored (toolkit.pull.given)
    checked = given.options(max_age=max_age, budget=budget, on_error=on_error, workers=workers, refresh=refresh,
                            incremental=incremental, progress=progress)
    max_age, budget, workers = checked["max_age"], checked["budget"], checked["workers"]
    contract = drift.contract_of(contract)
    resource = catalog.resource(client.service.key, name)
    filters = given.check_filters(resource, filters)
    ws = store
    key = _params_key(filters)
    narrowed = narrowing(resource, filters)
    stored = filtered_of(name) if narrowed else name  # a subset never becomes the resource's view
    where = f"{resource.service}.{stored}"
    incremental = incremental and not narrowed
    if not refresh and max_age is not None:
        cached = ws.fresh_load(resource.service, client.base_url, stored, key, max_age)
        if cached:
            return LoadResult(cached, name, cached=True, kind="cached", table=where), None
    if ws.read_only:        # before any request, an incremental plan's included
        raise WorkspaceError(f"{where} was not pulled: the workspace {ws.where} is open read-only and "
                             "nothing was sent. Read what it holds with ws.read(...) or ws.sql(...); to pull, "
                             f"{ws.read_only_advice}.")
    workers = workers or client.service.max_concurrency
    before = client.requests_sent  # an incremental plan's own questions count as the load's requests
    step, previous = None, None
    seen = increments.seen_now(ws, resource)   # first: what the sources had committed before any read of them
    if incremental and resource.incremental is not None:
        previous = ws.previous_load(resource.service, client.base_url, stored, key)
        step = previous and increments.plan(client, store, resource, filters, previous, budget)
    if step:
        plan = _Plan(lambda: iter(()), None, "pages", planned=step.members)
        failed = plan.failed

        def run(given: dict) -> Iterator[tuple[pa.Table, int]]:
            part = _plan(client, store, resource, given, workers, on_error, contract, progress)
            part.skip, part.done = plan.skip, plan.done   # a resumed fan-out's parents done, and those done now
            try:
                yield from part.tables()
            finally:
                failed.extend(part.failed)

        plan.tables = lambda: step.tables(run)
        keep, builds_on, carry = False, previous, step.carry
        asked = step.asked
    else:
        plan = _plan(client, store, resource, filters, workers, on_error, contract, progress)
        builds_on, carry = None, None
        asked = plan.members
    budgeted = step.saved if step else 0
    categoricals = [column.name for column in resource.columns if column.dtype == "category"]
    resumed = 0
    with ws.load(resource.service, client.base_url, stored, key, resource.key, keep, categoricals,
                 builds_on=builds_on, carry=carry, resume=plan.planned is not None, seen=seen) as load, _gc_paused(), \
            load.writer() as batcher:
        tally = drift.Tally(resource, contract, client.redactor, load)
        saver = Checkpoints(load, batcher, plan, tally)
        resumed = saver.take_over()
        # a resumed walk says so and counts what it has left, so that its time left is the rest's
        left = plan.total - resumed if plan.total is not None else None
        told = f" (resuming: {resumed:,} of {plan.total:,} already pulled)" if resumed and plan.total else ""
        if told:
            log.info("%s.%s: resuming: %s of %s already pulled", resource.service, name, f"{resumed:,}",
                     f"{plan.total:,}")
        try:
            with progress_bar(left, f"{resource.service}.{name}{told}", plan.unit, progress) as bar:
                limited = _RateTold(client, left)
                for table, advance in plan.tables():
                    batcher.add(tally.take(table))
                    bar.update(advance)
                    bar.set_postfix_str(f"rows={batcher.rows:,}, requests={client.requests_sent - before:,}"
                                        + limited.told(bar.n), refresh=False)
                    saver.maybe()
                    if cancel is not None and cancel.is_set():
                        raise KeyboardInterrupt     # Ctrl-C in the refresh's main thread: stopped here as by one
            batcher.flush(wait=True)
            if batcher.rows == 0:
                load.write(frames.empty(resource))
            tally.finish()
        except BaseException as error:   # what was walked survives a lost network or Ctrl-C (not a refusal)
            if not isinstance(error, ValidationError | ContractError):
                saver.last()
            if isinstance(error, KeyboardInterrupt) and not isinstance(error, Interrupted):
                # one line of what was kept, instead of the frames of the walk's threads
                raise Interrupted(where, saver.saved if plan.planned is not None else 0,
                                  len(plan.planned) if plan.planned is not None else None) from None
            raise
        finally:  # a failed load records the requests it made too: they are what the failure cost
            load.requests = client.requests_sent - before
            load.failed_ids.extend(plan.failed)
            load.drift = tally.found()  # and its drift (contract="freeze": what refused it)
            load.service_clock = client.service_clock
    if resource.incremental is not None and resource.incremental.strategy == "rotation" and asked is not None \
            and not narrowed:  # what a freshness budget counts as confirmed: the ids asked that answered
        failed = {str(i) for i in plan.failed}
        ws.confirm(resource.service, stored, load.load_id, [str(i) for i in asked if str(i) not in failed])
    # after the commit, which keeps one row per key (and counts the others as drift)
    result = LoadResult(load.load_id, name, load.rows, load.requests, list(plan.failed), kind=load.kind,
                        drift=load.drift, table=where, resumed=resumed, saved=budgeted)
    if load.drift:
        warnings.warn(drift.warning(resource, load.load_id, load.drift), DriftWarning, stacklevel=3)
    return result, load.kept


class _RateTold:
    """Why a walk is slow, for its progress line: once requests spend more than a quarter of the walk
    waiting for the service's rate budget, "15 requests/s, the service's limit; about 20 s left"."""

    def __init__(self, client: Client, total: int | None) -> None:
        self.budget = getattr(client.transport, "budget", None)
        self.total, self.began = total, time.monotonic()
        self.waited = getattr(self.budget, "waited", 0.0)

    def told(self, done: float) -> str:
        rate = getattr(self.budget, "per_second", None)
        elapsed = time.monotonic() - self.began
        if not rate or elapsed < 2 or self.budget.waited - self.waited < 0.25 * elapsed:
            return ""
        left = f"; about {max(0.0, self.total - done) / rate:.0f} s left" if self.total else ""
        return f" · {rate:g} requests/s, the service's limit{left}"


def fetch(client: Client, store: Store, name: str, /, **options: Any) -> pd.DataFrame:
    """Pull (or reuse) one resource and return it as a typed DataFrame.

    A fresh load's DataFrame is made from the batches it wrote, which are in memory already: reading
    them back from DuckDB would hold DuckDB's buffers and the Arrow result besides the DataFrame.
    """
    result, written = _pull(client, store, name, True, **options)
    service, ws = client.service.key, store
    stored = result.table.split(".", 1)[1]
    frame = ws.read(service, stored, result.load_id) if written is None else \
        ws.frame_of(service, stored, result.load_id, written)
    frame = frames.conform(frame, catalog.resource(service, name))
    frame.attrs["table"] = result.table
    return frame


def narrowing(resource: Resource, filters: dict) -> list[str]:
    """The filters given that the resource does not need: they narrow its rows to a subset, which is
    stored apart (`storage.file.filtered_of`). Params the action requires, and the ids of a fan-out
    whose parent is no resource (the analyst's to give), are part of what the resource is."""
    action = catalog.ACTIONS[resource.action]
    style = action.paging or catalog.SERVICES[resource.service].paging
    walking = {getattr(style, name) for name in ("limit", "cursor", "page", "size", "offset")
               if isinstance(getattr(style, name, None), str)}
    # a page size or a place in the walk changes how the rows come, not which
    needed = {param.name for param in action.params if param.required or param.wire in walking}
    if resource.fan_out and (resource.service, resource.parent) not in catalog.RESOURCES:
        needed |= {resource.parent, f"{resource.fan_out}s"}
    return sorted(name for name, value in filters.items() if value is not None and name not in needed)


def _params_key(filters: dict) -> dict:
    out = {}
    for name, value in sorted(filters.items()):
        if value is None:
            continue
        if looks_secret(name):
            value = MASK
        elif hasattr(value, "tolist"):
            value = value.tolist()
        elif isinstance(value, set | tuple):
            value = sorted(value)
        out[name] = value if isinstance(value, int | float | bool | list | dict) else str(value)
    return out


@dataclass
class _Plan:
    tables: Callable[[], Iterator[tuple[pa.Table, int]]]
    total: int | None
    unit: str
    failed: list = field(default_factory=list)
    members: list | None = None  # the ids a fan-out over its parent asks
    planned: list | None = None  # a fan-out's members (ids or chunks of them): what makes it resumable
    done: list = field(default_factory=list)   # members whose rows were all handed on, in that order
    skip: set = field(default_factory=set)     # members (as resume.member_key) a resumed load holds already


def _plan(client: Client, store: Store, resource: Resource, filters: dict, workers: int, on_error: str,
          contract: str = "evolve", progress: bool | None = None) -> _Plan:
    if resource.chunks is not None:
        return _chunked(client, store, resource, filters, workers, on_error, contract, progress)
    if resource.settings is not None:
        return _settings(client, store, resource, filters, workers, on_error, contract)
    action = catalog.ACTIONS[resource.action]
    ids, params = _split_filters(client, resource, action, filters)
    if resource.fan_out:
        if ids is None:
            if (resource.service, resource.parent) in catalog.RESOURCES:
                _check_given(action, params)
                ids = _parent_ids(client, store, resource.service, resource.parent, resource.parent_key, contract,
                                  progress)
                other = _other_side(client, store, resource, filters, ids, workers, on_error)
                if other is not None:
                    return other
            else:
                raise ValidationError(resource.parent, None, f"{resource.name} needs the ids to fetch: "
                                      f"pass {resource.parent}=[...]")
        return _fan_out(client, resource, action, ids, params, workers, on_error)
    if action.response == "page" or action.paging:
        return _Plan(lambda: _walk(client, resource, action, params, ahead=workers - 1), None, "pages")
    return _Plan(lambda: _single(client, resource, action, params), 1, "requests")


def _walk(client: Client, resource: Resource, action: Action, params: dict,
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
             on_error: str, member_rows: Callable | None = None, tag_rows: bool = True, unit: str = "ids") -> _Plan:
    plan = _Plan(lambda: iter(()), len(ids), unit, members=list(ids) if tag_rows else None, planned=list(ids))
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

        # a bounded window of futures: memory stays flat however many ids there are
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="toolkit-fetch") as pool:
            queue = iter([member for member in ids if member_key(member) not in plan.skip] if plan.skip else ids)
            running = {}
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
                        parent = {column: running_member} if column else None
                        if isinstance(rows, _Pages):
                            typist.put_pages(rows, parent=parent)
                        else:
                            typist.put(rows, None, parent=parent)
                        put.append(member)
                        yield from typed()
                        for nxt in _take(queue, 1):
                            running[pool.submit(fetch_member, nxt, typist)] = nxt
                yield from typed(everything=True)
            finally:
                typist.close()

    plan.tables = tables
    return plan


def _other_side(client: Client, store: Store, resource: Resource, filters: dict, ids: Sequence, workers: int,
                on_error: str) -> _Plan | None:
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
             contract: str = "evolve", progress: bool | None = None) -> _Plan:
    """The rows of the parent's ids (all of them when none are given), `chunks.size` ids a request;
    one id a request through `chunks.older` where the service is older than `chunks.since`."""
    how = resource.chunks
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
        ids = _parent_ids(client, store, resource.service, resource.parent, resource.parent_key, contract, progress)
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


def _settings(client: Client, store: Store, resource: Resource, filters: dict, workers: int, on_error: str,
              contract: str = "evolve") -> _Plan:
    """One row per settings object, each read by its own action: its name, whether it is enabled, and
    the settings themselves with every secret masked."""
    reads = resource.settings.reads

    def tables() -> Iterator[tuple[pa.Table, int]]:
        rows = []
        for name, action in reads:
            settings = mask_settings(client.call(action))
            enabled = settings.get("enabled") if isinstance(settings, dict) else None
            rows.append({"configuration": name, "enabled": enabled, "settings": settings})
        yield frames.to_arrow(rows, resource), len(reads)
    return _Plan(tables, len(reads), "requests")
