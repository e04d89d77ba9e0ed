"""How fresh each view is: when its rows were last confirmed by the service, against their budget.

A resource pulled whole (or incrementally, by a sound change signal) is confirmed by its latest load:
every row it holds was true then. A fan-out under a freshness budget (`Incremental("rotation")`) is
asked again a share of its parents at a time, so its rows are confirmed parent by parent
(`Store.confirmations`). Either way the budget is the catalog's `max_age` where it declares one, else
`DEFAULT_BUDGET` (a day: analysts report daily). Ages are read on the service's clock as it is now:
the latest `Date` a load of that service saw, moved on by the time passed here since that load ended
(the sandbox's clock is its own; a real service's is the wall clock, give or take its skew).

    ws.freshness()        # one row per view: rows, oldest confirmation, its age, rows past the budget
"""
from __future__ import annotations

__all__ = ["COLUMNS", "DEFAULT_BUDGET", "freshness", "service_now"]

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pandas as pd

from toolkit import catalog
from toolkit.storage.file import FILTERED, quote

if TYPE_CHECKING:
    from toolkit.storage.store import Store

DEFAULT_BUDGET = 86_400.0
COLUMNS = ["service", "resource", "rows", "budget_hours", "oldest_confirmed", "oldest_hours", "past_budget",
           "rotation"]


def service_now(store: Store, service: str) -> datetime:
    """The service's clock now, by its latest load (module docstring); the wall clock without one."""
    # the latest Date the service sent, not the load this machine's clock says ended last (it may run behind)
    found = store.rows("SELECT service_clock, finished FROM _loads WHERE service = ? AND service_clock IS NOT "
                       "NULL ORDER BY service_clock DESC LIMIT 1", [service])
    now = datetime.now(UTC)
    if not found:
        return now
    clock, finished = found[0]
    return clock + (now - finished)


def freshness(store: Store, clock: str = "service") -> pd.DataFrame:
    """One row per view the store holds (filtered loads aside): its rows, its freshness budget in hours,
    its oldest confirmation, how many hours ago that was, the rows confirmed longer ago than the
    budget, and whether its parents are asked again in rotation. By the service's clock, or with
    `clock="wall"` by this machine's (when the confirming loads finished, and now)."""
    wall = clock == "wall"
    moment = "finished" if wall else "coalesce(service_clock, finished)"
    rows, clocks = [], {}
    for view in store.tables().itertuples():
        if view.resource.endswith(FILTERED) or (view.service, view.resource) not in catalog.RESOURCES:
            continue
        resource = catalog.RESOURCES[view.service, view.resource]
        how = resource.incremental
        rotating = how is not None and how.strategy == "rotation"
        budget = how.max_age if rotating and how.max_age else DEFAULT_BUDGET
        now = datetime.now(UTC) if wall else (
            clocks.get(view.service) or clocks.setdefault(view.service, service_now(store, view.service)))
        # the view's rows: an incremental load's own count is only the rows it wrote
        count = store.rows(f"SELECT count(*) FROM {quote(view.service)}.{quote(view.resource)}")[0][0]
        confirmed = _by_parent(store, view.service, view.resource, how.field, clock) if rotating else None
        if not confirmed:
            at = store.rows(f"SELECT {moment} FROM _loads WHERE load_id = ?",
                            [view.load_id])[0][0]
            confirmed = {None: (at, count)}
        oldest = min(at for at, _ in confirmed.values())
        past = sum(count for at, count in confirmed.values() if (now - at).total_seconds() > budget)
        rows.append({"service": view.service, "resource": view.resource, "rows": count,
                     "budget_hours": budget / 3600, "oldest_confirmed": oldest,
                     "oldest_hours": round((now - oldest).total_seconds() / 3600, 2), "past_budget": past,
                     "rotation": rotating})
    return pd.DataFrame(rows, columns=COLUMNS)


def _by_parent(store: Store, service: str, name: str, field: str, clock: str = "service") -> dict:
    """Each parent's last confirmation and the rows it holds in the view, for the parents a pull asks
    now: the parent resource's rows (or, for ids the analyst gives, those the latest load asked);
    a parent without rows counts too, its emptiness was confirmed."""
    resource = catalog.RESOURCES[service, name]
    confirmations = store.confirmations(service, name, clock)
    held = dict(store.rows(f"SELECT CAST({quote(field)} AS VARCHAR), count(*) FROM {quote(service)}.{quote(name)} "
                           f"GROUP BY 1"))
    if (service, resource.parent) in catalog.RESOURCES:
        parent = catalog.RESOURCES[service, resource.parent]
        column = resource.parent_key or parent.key[0]
        asked = {row[0] for row in store.rows(f"SELECT CAST({quote(column)} AS VARCHAR) FROM "
                                              f"{quote(service)}.{quote(parent.name)}")}
    else:
        asked = {row[0] for row in store.rows(
            "SELECT parent FROM _confirmed WHERE service = ? AND resource = ? AND load_id = (SELECT load_id FROM "
            "_loads WHERE service = ? AND resource = ? AND status IN ('complete', 'stale') ORDER BY seq DESC "
            "NULLS LAST LIMIT 1)", [service, name, service, name])} | set(held)
    found = {parent: (at, held.get(parent, 0)) for parent, at in confirmations.items() if parent in asked}
    moment = "finished" if clock == "wall" else "coalesce(service_clock, finished)"
    latest = store.rows(f"SELECT {moment} FROM _loads WHERE service = ? AND resource = ? "
                        "AND status IN ('complete', 'stale') ORDER BY seq DESC NULLS LAST LIMIT 1",
                        [service, name])
    for parent, count in held.items():   # rows of a load from before budgets: confirmed by their load
        if parent not in found and latest:
            found[parent] = (latest[0][0], count)
    return found
