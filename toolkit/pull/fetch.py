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

import contextlib

__all__ = ["KeyWatch", "LoadResult", "fetch", "narrowing", "pull"]

import gc
import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit import catalog
from toolkit.catalog.masking import MASK, looks_secret
from toolkit.catalog.spec import Resource
from toolkit.errors import (
    ContractError,
    DriftWarning,
    Interrupted,
    ValidationError,
    WorkspaceError,
)
from toolkit.pull import drift, frames, given, increments, plans
from toolkit.pull.plans import KeyWatch, Plan
from toolkit.pull.progress import bar as progress_bar
from toolkit.pull.resume import Checkpoints, members_of
from toolkit.storage.file import filtered_of
from toolkit.storage.merge import Carry

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import threading

    import pandas as pd

    from toolkit.http.client import Client
    from toolkit.storage.loads import Load
    from toolkit.storage.store import Store
    from toolkit.storage.writer import Writer


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
    asked = _Asked.of(client, name, filters, drift.contract_of(contract), progress)
    if not refresh and checked["max_age"] is not None:
        cached = store.fresh_load(asked.resource.service, client.base_url, asked.stored, asked.key, checked["max_age"])
        if cached:
            return LoadResult(cached, name, cached=True, kind="cached", table=asked.where), None
    _refuse_read_only(store, asked.where)   # before any request, an incremental plan's included
    before = client.requests_sent  # an incremental plan's own questions count as the load's requests
    seen = increments.seen_now(store, asked.resource)  # first: what the sources had committed before any read
    chosen = _plan_of(client, store, asked, incremental and not asked.narrowed, checked["budget"],
                      checked["workers"] or client.service.max_concurrency, on_error)
    keep = keep and chosen.builds_on is None
    resource = asked.resource
    categoricals = [column.name for column in resource.columns if column.dtype == "category"]
    plan = chosen.plan
    with store.load(resource.service, client.base_url, asked.stored, asked.key, resource.key, keep, categoricals,
                    builds_on=chosen.builds_on, carry=chosen.carry, resume=plan.planned is not None,
                    seen=seen) as load, _gc_paused(), load.writer() as batcher:
        tally = drift.Tally(resource, asked.contract, client.redactor, load)
        resumed = _walk_into(client, load, batcher, plan, tally, asked, before, cancel)
    load_id, found = str(load.load_id), load.drift or []     # a load that committed has both
    _confirm(store, asked, load_id, plan, chosen.members)
    # after the commit, which keeps one row per key (and counts the others as drift)
    result = LoadResult(load_id, name, load.rows, load.requests, list(plan.failed), kind=load.kind,
                        drift=found, table=asked.where, resumed=resumed, saved=chosen.saved)
    if found:
        warnings.warn(drift.warning(resource, load_id, found), DriftWarning, stacklevel=3)
    return result, load.kept


@dataclass(frozen=True)
class _Asked:
    """What a pull is asked for, checked: the resource, its filters and their stored key, and where its
    rows go (a narrowed pull into the resource's `__filtered` table, never its view)."""
    resource: Resource
    filters: dict
    key: dict
    narrowed: list[str]
    stored: str
    contract: str
    progress: bool | None

    @classmethod
    def of(cls, client: Client, name: str, filters: dict, contract: str, progress: bool | None) -> _Asked:
        resource = catalog.resource(client.service.key, name)
        filters = given.check_filters(resource, filters)
        narrowed = narrowing(resource, filters)
        return cls(resource, filters, _params_key(filters), narrowed,
                   filtered_of(name) if narrowed else name, contract, progress)

    @property
    def where(self) -> str:
        return f"{self.resource.service}.{self.stored}"


def _refuse_read_only(store: Store, where: str) -> None:
    if store.read_only:
        raise WorkspaceError(f"{where} was not pulled: the workspace {store.where} is open read-only and "
                             "nothing was sent. Read what it holds with ws.read(...) or ws.sql(...); to pull, "
                             f"{store.read_only_advice}.")


@dataclass
class _Chosen:
    """How a pull's rows come: its plan, and for an incremental one the load it builds on, the rows it
    carries over, the ids it asks (`members`) and those a freshness budget did not ask again (`saved`)."""
    plan: Plan
    members: list | None
    builds_on: str | None = None
    carry: Carry | None = None
    saved: int = 0


def _plan_of(client: Client, store: Store, asked: _Asked, incremental: bool, budget: float | None, workers: int,
             on_error: str) -> _Chosen:
    """The plan of a full pull, or of an incremental one where the resource declares how and a previous
    complete load with the same filters is there (toolkit.pull.increments)."""
    resource = asked.resource

    def parent_ids(child: Resource) -> list:     # asked of a fan-out over its parent, which names it
        return _parent_ids(client, store, child.service, str(child.parent), child.parent_key, asked.contract,
                           asked.progress)
    step = None
    if incremental and resource.incremental is not None:
        previous = store.previous_load(resource.service, client.base_url, asked.stored, asked.key)
        step = previous and increments.plan(client, store, resource, asked.filters, previous, budget)
    if not step:
        plan = plans.plan(client, store, resource, asked.filters, workers, on_error, parent_ids)
        return _Chosen(plan, plan.members)
    plan = Plan(lambda: iter(()), None, "pages", planned=step.members)
    failed = plan.failed

    def run(given: dict) -> Iterator[tuple[pa.Table, int]]:
        part = plans.plan(client, store, resource, given, workers, on_error, parent_ids)
        # a resumed fan-out's parents done, those done now, and those answered when Ctrl-C came
        part.skip, part.done, part.leftover = plan.skip, plan.done, plan.leftover
        try:
            yield from part.tables()
        finally:
            failed.extend(part.failed)

    plan.tables = lambda: step.tables(run)
    return _Chosen(plan, step.asked, previous, step.carry, step.saved)


def _walk_into(client: Client, load: Load, batcher: Writer, plan: Plan, tally: drift.Tally, asked: _Asked,
               before: int, cancel: threading.Event | None) -> int:
    """The plan's tables into the load, with progress and checkpoints: the parents a checkpoint it took
    over had done. What was walked survives a lost network or Ctrl-C (not a refusal); a failed load
    records the requests it made, its failed ids and its drift too."""
    saver = Checkpoints(load, batcher, plan, tally)
    resumed = saver.take_over()
    # a resumed walk says so and counts what it has left, so that its time left is the rest's
    left = plan.total - resumed if plan.total is not None else None
    told = f" (resuming: {resumed:,} of {plan.total:,} already pulled)" if resumed and plan.total else ""
    if told:
        log.info("%s.%s: resuming: %s of %s already pulled", asked.resource.service, asked.resource.name,
                 f"{resumed:,}", f"{plan.total:,}")
    try:
        with progress_bar(left, f"{asked.resource.service}.{asked.resource.name}{told}", plan.unit,
                          asked.progress) as bar:
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
            load.write(frames.empty(asked.resource))
        tally.finish()
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):   # the answers in flight when it came: kept, not asked again
            with contextlib.suppress(Exception):
                for table, _ in plan.leftover:
                    batcher.add(tally.take(table))
        if not isinstance(error, ValidationError | ContractError):
            saver.last()
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, Interrupted):
            # one line of what was kept, instead of the frames of the walk's threads
            raise Interrupted(asked.where, saver.saved if plan.planned is not None else 0,
                              len(plan.planned) if plan.planned is not None else None) from None
        raise
    finally:  # a failed load records the requests it made too: they are what the failure cost
        load.requests = client.requests_sent - before
        load.failed_ids.extend(plan.failed)
        load.drift = tally.found()  # and its drift (contract="freeze": what refused it)
        load.service_clock = client.service_clock
    return resumed


def _confirm(store: Store, asked: _Asked, load_id: str, plan: Plan, members: list | None) -> None:
    """What a freshness budget counts as confirmed (a rotation's): the ids asked that answered."""
    resource = asked.resource
    if resource.incremental is not None and resource.incremental.strategy == "rotation" and members is not None \
            and not asked.narrowed:
        failed = {str(i) for i in plan.failed}
        store.confirm(resource.service, asked.stored, load_id,
                      [str(i) for i in members_of(members) if str(i) not in failed])


class _RateTold:
    """Why a walk is slow, for its progress line: once requests spend more than a quarter of the walk
    waiting for the service's rate budget, "15 requests/s, the service's limit; about 20 s left"."""

    def __init__(self, client: Client, total: int | None) -> None:
        # the transport's own budget, else the client's (a transport handed in without one)
        self.budget = getattr(client.transport, "budget", None) or getattr(client, "budget", None)
        self.total, self.began = total, time.monotonic()
        self.waited = getattr(self.budget, "waited", 0.0)

    def told(self, done: float) -> str:
        budget, rate = self.budget, getattr(self.budget, "per_second", None)
        elapsed = time.monotonic() - self.began
        if not rate or budget is None or elapsed < 2 or budget.waited - self.waited < 0.25 * elapsed:
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
        needed |= {name for name in (resource.parent, f"{resource.fan_out}s") if name}
    return sorted(name for name, value in filters.items() if value is not None and name not in needed)


def _params_key(filters: dict) -> dict:
    out = {}
    for name, value in sorted(filters.items()):
        if value is None:
            continue
        if looks_secret(name):
            value = MASK
        elif isinstance(value, pa.Array):  # text ids as given: recorded by digest (toolkit.storage.id_lists)
            out[name] = value
            continue
        elif hasattr(value, "tolist"):
            value = value.tolist()
        elif isinstance(value, set | tuple):
            value = sorted(value)
        out[name] = value if isinstance(value, int | float | bool | list | dict) else str(value)
    return out




