"""One-call refresh: every resource a store holds pulled again through the connections it is handed.

    ws.refresh()                          # toolkit.Workspace.refresh hands its connections and itself
    ws.refresh("translation", max_age=3600, incremental=False)
    ws.refresh(resources=["translation.targets", ("audience_platform", "audiences")])

Each resource is pulled again with the filters its latest load recorded (`_loads.params`, a long list
of ids read back from `_given_ids`),
incrementally where its catalog entry says how (toolkit.pull.increments). Within a service, parents come
before children (a fan-out's parent resource, an incremental strategy's parent), so children read
fresh ids; services run at once, a thread each, every client keeping its own rate budget. One plain
line per resource says what happened (a scheduled run's log), one progress display counts the
resources done (toolkit.pull.progress.bar: a line on a terminal, text updated in place in Jupyter,
nothing in a log); the returned DataFrame says it again as a table.

On the binding floor: given the connections (anything with a `client`) and the store, it imports
neither the workspace nor the connection module.
"""
from __future__ import annotations

__all__ = ["COLUMNS", "Bound", "chosen", "depth", "held", "refresh", "with_parents"]

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from toolkit import catalog
from toolkit.catalog.masking import MASK, mask_passwords
from toolkit.errors import Interrupted, RefreshInterrupted, ValidationError, WorkspaceError, printable
from toolkit.http.durations import span_seconds
from toolkit.pull import fetch
from toolkit.pull.progress import bar as progress_bar

if TYPE_CHECKING:
    from toolkit.http.client import Client
    from toolkit.storage.store import Store

# saved: the parents a freshness budget did not ask again (a request each at least); resumed: the parents
# an interrupted pull had fetched, taken from its checkpoint
# written: the rows the load itself wrote (an incremental load's changes, not the rows its view shows);
COLUMNS = ["service", "resource", "kind", "added", "changed", "removed", "written", "requests", "saved", "resumed",
           "seconds", "drift", "error"]


def held(store: Store, services: tuple[str, ...] = ()) -> list[tuple[str, str, dict]]:
    """The resources the store holds (of the named services, or all), each with the filters of its
    latest finished load, parents before children within a service."""
    rows = store.latest_loads()
    # a long list of ids the load was given is recorded apart (toolkit.storage.id_lists): read back here
    found = [(service, name, store.recorded_params(params)) for service, name, params in rows
             if (not services or service in services) and (service, name) in catalog.RESOURCES]
    return sorted(found, key=lambda row: (row[0], depth(row[0], row[1])))


def chosen(found: list[tuple[str, str, dict]], resources: Iterable[str | tuple[str, str]] | None
           ) -> list[tuple[str, str, dict]]:
    """Of the held resources `found`, those named in `resources` ("translation.targets" or
    ("translation", "targets")), in `found`'s order (parents first); all of them when None. A name
    not held is refused before anything is sent, with what is held."""
    if resources is None:
        return found
    names = [resources] if isinstance(resources, str) else list(resources)
    wanted, unknown = set(), []
    for name in names:
        pair = tuple(name.split(".", 1)) if isinstance(name, str) else tuple(name)
        if len(pair) != 2 or not all(isinstance(part, str) for part in pair):
            unknown.append(name)
        else:
            wanted.add(pair)
    holds = {(service, name) for service, name, _ in found}
    unknown += [f"{service}.{name}" for service, name in sorted(wanted - holds)]
    if unknown:
        listed = ", ".join(f"{service}.{name}" for service, name, _ in found) or "nothing"
        raise ValidationError("resources", unknown, f"not held by this workspace (as service.resource); "
                                                    f"it holds {listed}")
    return [row for row in found if row[:2] in wanted]


def _above(service: str, name: str) -> set[str]:
    """The resources one stands on: its fan-out parent and its strategy's signals (what `depth` counts)."""
    resource = catalog.RESOURCES[service, name]
    how = resource.incremental
    found = {resource.parent, how.parent if how else None, how.copies if how else None}
    return {p for p in found if p and (service, p) in catalog.RESOURCES and p != name}


def with_parents(store: Store, resources: Iterable[str]) -> list[str]:
    """The held resources named ("service.resource") and every held one they stand on, so that a refresh
    of a fan-out can ask only for what changed under its parents (the browser's refresh button)."""
    holds = {(service, name) for service, name, _ in held(store)}
    found: list[str] = []
    todo = [tuple(r.split(".", 1)) for r in resources]
    while todo:
        service, name = todo.pop()
        if f"{service}.{name}" in found or (service, name) not in holds:
            continue
        found.append(f"{service}.{name}")
        todo.extend((service, parent) for parent in _above(service, name))
    return found


def depth(service: str, name: str, seen: frozenset[str] = frozenset()) -> int:
    """How many resources stand above this one: its fan-out parent's and its strategy's signals' chains
    (the parent it follows, the resource its rows copy)."""
    above = [p for p in _above(service, name) if p not in seen]
    return max((1 + depth(service, p, seen | {name}) for p in above), default=0)


def refresh(store: Store, connections: Mapping[str, Bound], services: tuple[str, ...] = (), *,
            resources: Iterable[str | tuple[str, str]] | None = None, max_age: float | str | timedelta | None = None,
            incremental: bool = True, say: Callable[[str], None] | None = None,
            progress: bool | None = None, unconnected: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Pull again every resource the store holds (or those of `services`, or only the held ones named
    in `resources`) through `connections` (service → an object with a `client`); a load younger
    than `max_age` is kept ("cached"). A service held but not connected is skipped with a reason; a
    failed resource keeps its previous view, says its error, and the others go on. One line per
    resource goes to `say` (stdout by default); `progress=False` turns the progress display off
    (None: shown on a terminal or in Jupyter, not in a log). `unconnected` says, per service, why it is
    not connected, in the caller's words (the command's: which credentials it lacks); by default, the
    notebook's `ws.connect(...)`.

    Chosen resources still go parents first. A parent that is held but not chosen is not added: its
    children read its latest load as it stands (a fan-out's ids; `open_parents` asks again for the rows
    of the parents open there, and misses a parent new since; `changed_parents` finds no newer load of
    the parent to compare and pulls in full), so choose the parent too when it may have moved.
    """
    if max_age is not None:     # "6h" as --max-age 6h; a wrong one refused before anything is asked
        max_age = span_seconds(max_age, "max_age")
    if store.read_only:     # before any request: a plan's own questions are requests too
        raise WorkspaceError(f"nothing was refreshed: the workspace {store.where} is open read-only. "
                             f"To refresh it, {store.read_only_advice}.")
    lock = threading.Lock()
    todo = chosen(held(store, services), resources)
    by_service: dict[str, list[tuple[str, dict]]] = {}
    for service, name, params in todo:
        by_service.setdefault(service, []).append((name, params))
    rows: list[dict] = []
    stopped: list[Interrupted] = []     # the pulls an interrupt stopped, each with what it kept
    cancel = threading.Event()          # set on Ctrl-C: every worker stops at its pull's next safe point
    asked = {"run": "refresh", "resources": [f"{service}.{name}" for service, name, _ in todo],
             "max_age": str(max_age), "incremental": incremental}
    with store.run(asked) as run:
        earlier = _earlier(store, run, todo)
        # a run that goes on says so and counts what it has left, as a resumed pull does
        told = f" (resuming: {len(earlier):,} of {len(todo):,} already refreshed)" if earlier else ""
        if told:
            _say(f"refresh: resuming: {len(earlier):,} of {len(todo):,} resources already refreshed by the "
                 "interrupted run", say)
        bar = progress_bar(len(todo) - len(earlier), f"refresh{told}", "resources", progress)

        def line(text: str, resource: str, counted: bool = True) -> None:
            with lock:
                # the plain line first, with a bar on the terminal lifted out of its way, then the bar on
                if bar.disable:
                    _say(text, say)
                else:
                    with type(bar).external_write_mode():
                        _say(text, say)
                if counted:
                    bar.set_postfix_str(resource, refresh=False)
                    bar.update(1)

        def one_service(service: str) -> list[dict]:
            conn = connections.get(service)
            done = []
            for name, params in by_service[service]:
                if cancel.is_set():     # the resources not begun are the next run's
                    break
                try:   # everything a resource does is its own row: a lost lake fails it, not the refresh
                    if conn is None:
                        why = (unconnected or {}).get(service, f"ws.connect({service!r}, ...) first")
                        row = _row(service, name, "skipped", error=f"{service} is not connected: {why}")
                    elif (service, name) in earlier:
                        row = _row(service, name, "resumed", written=earlier[service, name])
                    else:
                        row, load_id = _pull(conn.client, store, service, name, params, max_age, incremental,
                                             cancel)
                        if load_id:
                            run.done(f"{service}.{name}", load_id)
                except Interrupted as stop:   # it checkpointed what it walked; the run keeps what is done
                    # kept without its frames, so that the walk they hold (its threads, its typing helper)
                    # closes now rather than when the notebook lets go of the error
                    stop.__context__ = None
                    with lock:
                        stopped.append(stop.with_traceback(None))
                    break
                except Exception as error:
                    row = _row(service, name, "failed",
                               error=f"{type(error).__name__}: {mask_passwords(printable(error))}")
                line(_said(row), row["resource"], row["kind"] != "resumed")
                done.append(row)
            return done

        with bar:
            if by_service:
                with ThreadPoolExecutor(max_workers=len(by_service), thread_name_prefix="toolkit-refresh") as pool:
                    futures = [pool.submit(one_service, service) for service in by_service]
                    _waited(futures, cancel)
                for future in futures:
                    rows.extend(future.result())
        if cancel.is_set() and (stopped or len(rows) < len(todo)):
            refreshed = sum(row["kind"] not in ("failed", "skipped") for row in rows)
            raise RefreshInterrupted(refreshed, len(todo), stopped)
    return pd.DataFrame(rows, columns=COLUMNS)


def _earlier(store: Store, run: Any, todo: list[tuple[str, str, dict]]) -> dict[tuple[str, str], int]:
    """The resources an interrupted run of the same ask completed that are still as it left them, with
    their rows; one that cannot be read is pulled again (and fails there, as its own row)."""
    found = {}
    for service, name, _ in todo:
        with contextlib.suppress(Exception):
            rows = store.completed_rows(service, name, run.resumed.get(f"{service}.{name}"))
            if rows is not None:
                found[service, name] = rows
    return found


def _waited(futures: list[Future], cancel: threading.Event) -> None:
    """Wait for the workers. Ctrl-C (SIGINT, SIGTERM in the command) lands here, in the main thread:
    it tells them to stop at their next safe point, and the wait goes on until they have checkpointed
    (a request or a page away), however many more interrupts come, so that nothing walked is lost."""
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            cancel.set()


class Bound(Protocol):
    """What refresh is handed for a service: anything holding its client (a Connection, from the floor
    above, which this module cannot name)."""
    client: Client


def _say(text: str, say: Callable[[str], None] | None) -> None:
    if say is None:
        print(text, file=sys.stdout, flush=True)
    else:
        say(text)


def _pull(client: Client, store: Store, service: str, name: str, params: dict,
          max_age: float | timedelta | None, incremental: bool, cancel: threading.Event | None = None
          ) -> tuple[dict, str | None]:
    """The resource's row of the table, and its load when one completed; `Interrupted` (what the pull
    kept) when `cancel` is set before it ends."""
    started, before = time.perf_counter(), client.requests_sent
    masked = sorted(k for k, v in params.items() if _holds_mask(v))
    if masked:  # a secret is never stored: sending its mask would ask the service for something else
        return _row(service, name, "skipped", error=f"its load's {', '.join(masked)} were recorded masked (***): "
                    f"pull it again with them given"), None
    how = catalog.RESOURCES[service, name].incremental
    # under a freshness budget the latest load confirmed only some parents: its age says nothing of the
    # others', so max_age is the budget the parents are asked again by, never a reason to keep the load
    budgeted = incremental and how is not None and how.strategy == "rotation"
    try:
        result = fetch.pull(client, store, name, refresh=max_age is None or budgeted, max_age=max_age,
                            incremental=incremental, progress=False, budget=max_age, cancel=cancel, **params)
    except Exception as error:  # one resource's failure is its row; the others go on
        return _row(service, name, "failed", requests=client.requests_sent - before,
                    seconds=time.perf_counter() - started,
                    error=f"{type(error).__name__}: {mask_passwords(printable(error))}"), None
    try:
        counts = {} if result.cached else store.changes(service, name, result.load_id)
    except Exception as error:   # the load committed: say so, whatever its counts could not be read for
        return _row(service, name, result.kind, written=result.rows, requests=client.requests_sent - before,
                    seconds=time.perf_counter() - started,
                    error=f"committed, but its changes could not be counted: {type(error).__name__}: "
                          f"{mask_passwords(printable(error))}"), result.load_id
    return _row(service, name, result.kind, written=result.rows, requests=client.requests_sent - before,
                seconds=time.perf_counter() - started, drift=len(result.drift), saved=result.saved,
                resumed=result.resumed, **counts), result.load_id


def _holds_mask(value: Any) -> bool:
    """Whether a recorded param holds a secret's mask (masking.scrub writes it for one)."""
    if isinstance(value, dict):
        return any(_holds_mask(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_mask(v) for v in value)
    return isinstance(value, str) and value == MASK     # ids read back as Arrow hold no mask


def _row(service: str, name: str, kind: str, *, added: int = 0, changed: int = 0, removed: int = 0,
         written: int = 0, requests: int = 0, saved: int = 0, resumed: int = 0, seconds: float = 0.0, drift: int = 0,
         error: str | None = None) -> dict:
    return {"service": service, "resource": f"{service}.{name}", "kind": kind, "added": added,
            "changed": changed, "removed": removed, "written": written, "requests": requests, "saved": saved,
            "resumed": resumed, "seconds": round(seconds, 3), "drift": drift, "error": error}


def _said(row: dict) -> str:
    if row["error"]:
        return f"{row['resource']}: {row['kind']}: {row['error']}"
    if row["kind"] == "resumed":
        return f"{row['resource']}: pulled by the interrupted refresh, {row['written']:,} rows written"
    drifted = f", {row['drift']} fields differ from the catalog (ws.drift())" if row["drift"] else ""
    saved = f" ({row['saved']:,} parents within their freshness budget not asked)" if row["saved"] else ""
    resumed = f" ({row['resumed']:,} parents from the interrupted pull)" if row["resumed"] else ""
    return (f"{row['resource']}: {row['kind']}, +{row['added']} ~{row['changed']} -{row['removed']} rows, "
            f"{row['requests']} requests{saved}{resumed}, {row['seconds']:.1f} s{drifted}")
