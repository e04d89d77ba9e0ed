"""Notifications and metrics of the audience platform emulator (a part it holds).

The notifications are the log of audience_platform_log: seeded ones computed from their index,
deleted ones remembered as indices, those raised at run time (imports, synchronisations,
anonymizations, through `State.notify`) first. A list answers at most 1000 per request, even with size -1. A filter or a sort reads
every notification once; the default order is newest first.

Metric readings are hourly from two weeks before the clock's start up to the clock's hour now.

    GET /api/v2/notifications?filter=severity:[ERROR,WARNING] AND read:false&sort=created:desc
"""
from __future__ import annotations

__all__ = ["METRICS", "METRIC_DAYS", "Notices", "metric_value"]

import math
from datetime import timedelta
from typing import Any

from toolkit.sandbox.audience_platform.filter import parse_filter
from toolkit.sandbox.audience_platform.log import NOTIFICATIONS_MAX  # noqa: F401 (benchmarks/fetch.py reads it here)
from toolkit.sandbox.audience_platform.seed import (
    Lazy,
    key64,
    mix64,
)
from toolkit.sandbox.audience_platform.state import State
from toolkit.sandbox.clock import iso
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.pages import answer_list

# id, name, unit, base value, daily amplitude (share), counter
METRICS = (
    ("profiles.created", "Profiles created", "count", 120, 0.6, True),
    ("profiles.updated", "Profiles updated", "count", 900, 0.5, True),
    ("profiles.deleted", "Profiles deleted", "count", 4, 0.3, True),
    ("profiles.merged", "Profiles merged", "count", 15, 0.4, True),
    ("profiles.total", "Profiles in store", "count", 200000, 0.0, False),
    ("audiences.total", "Audiences", "count", 30, 0.0, False),
    ("memberships.total", "Audience memberships", "count", 960000, 0.01, False),
    ("imports.started", "Imports started", "count", 2, 0.8, True),
    ("imports.succeeded", "Imports succeeded", "count", 2, 0.8, True),
    ("imports.failed", "Imports failed", "count", 0.2, 1.0, True),
    ("analytics.sync.duration", "Analytics sync duration", "ms", 42000, 0.3, False),
    ("warehouse.query.duration", "Warehouse query duration", "ms", 18000, 0.4, False),
    ("warehouse.rows.read", "Warehouse rows read", "count", 250000, 0.5, True),
    ("api.requests", "API requests", "count", 36000, 0.7, True),
    ("api.errors", "API errors", "count", 40, 0.7, True),
    ("api.latency.p95", "API latency p95", "ms", 180, 0.35, False),
    ("notifications.created", "Notifications created", "count", 1, 0.5, True),
    ("docgen.communications", "Communications started", "count", 60, 0.8, True),
    ("privacy.anonymizations", "Profiles anonymized", "count", 0.5, 0.5, True),
    ("events.collected", "Events collected", "count", 520000, 0.75, True),
)
METRIC_DAYS = 14


def metric_value(seed: int, metric: tuple, hour: int, total: tuple[int, int] | None = None) -> float:
    """Reading `hour` (hours since the series started) of a metric: daily wave, trend and noise.

    `total`: (the live figure, the last hour) for a running total, which grows slowly up to it."""
    _, _, _, base, amplitude, counter = metric
    noise = mix64(key64(seed, metric[0]) ^ hour) / 2**64
    if total is not None:
        figure, last = total
        return float(round(figure * (1 - 0.0004 * (last - hour)) * (0.999 + 0.002 * noise)))
    wave = 1 + amplitude * math.sin(2 * math.pi * ((hour % 24) - 9) / 24)
    value = base * wave * (1 + 0.002 * hour) * (0.85 + 0.3 * noise)
    return float(round(value)) if counter else round(value, 2)


class Notices:
    """Notification lists and deletes, and metric readings, over the platform's state (the other parts
    raise notifications with `State.notify`)."""

    def __init__(self, state: State) -> None:
        self.state = state

    def _filter(self, request: Request) -> tuple | None:
        text = request.arg("filter")
        return None if text is None or not text.strip() else parse_filter(text)

    def list_notifications(self, request: Request) -> Response:
        tree, sort = self._filter(request), request.arg("sort")
        if tree is None and not (sort or "").strip():
            return answer_list(request, request.action, self.state.notices)
        return answer_list(request, request.action, self.state.notices.select(tree, sort))

    def delete_notification(self, request: Request) -> Response:
        notification_id = request.params["notification_id"]
        if not notification_id.strip():
            raise Reject(400, "notificationId must not be blank")
        if not self.state.notices.remove(notification_id):
            raise Reject(404, f"notification {notification_id} not found")
        return Response(204)

    def delete_notifications(self, request: Request) -> Response:
        self.state.notices.remove_where(self._filter(request))
        return Response(204)

    def get_metric(self, request: Request) -> Response:
        metric_id = request.arg("metricId")
        if metric_id is None or not metric_id.strip():
            raise Reject(400, "metricId must not be blank")
        metric = next((m for m in METRICS if m[0] == metric_id), None)
        if metric is None:
            raise Reject(404, f"metric {metric_id} not found")
        first = self.state.epoch.replace(minute=0, second=0, microsecond=0) - timedelta(days=METRIC_DAYS)
        hours = int((self.state.clock.now() - first) / timedelta(hours=1)) + 1
        audiences = self.state.store["audiences"]
        live = {"profiles.total": lambda: self.state.population.count + len(self.state.profiles) - len(self.state.deleted),
                "audiences.total": lambda: len(audiences),
                "memberships.total": lambda: sum(self.state.members.count(a["id"]) for a in audiences)}
        total = (live[metric_id](), hours - 1) if metric_id in live else None

        def reading(hour: int) -> dict[str, Any]:
            return {"metricId": metric_id, "name": metric[1], "unit": metric[2],
                    "timestamp": iso(first + timedelta(hours=hour)),
                    "value": metric_value(self.state.seed, metric, hour, total)}
        return answer_list(request, request.action, Lazy(hours, reading))
