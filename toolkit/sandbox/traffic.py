"""What the sandbox has seen: request counts, peaks of concurrency and rate, faults, and rate limits.

Peaks are what tests of the client's rate budget read: `max_concurrent` is the most requests of a
service in flight at once (arrival to answer written), `max_per_second` the most arrivals in any
sliding window of one second. Wall time is right here (unlike in answers): limits are about real
pacing, and nothing of it goes out on the wire.

    traffic.snapshot()["max_per_second"]["asset_library"]
    traffic.snapshot()["by_method"]       # {"GET": 12, "POST": 1}: what a read-only tool may not send
"""
from __future__ import annotations

__all__ = ["Limit", "Traffic"]

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limit:
    """A service's own rate limit: at most `per_second` accepted requests per second, `concurrent` at once."""
    per_second: int
    concurrent: int


class Traffic:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.by_service: Counter[str] = Counter()
        self.by_action: Counter[str] = Counter()
        self.by_method: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.limited: Counter[str] = Counter()
        self.in_flight: Counter[str] = Counter()
        self.max_concurrent: Counter[str] = Counter()
        self.max_per_second: Counter[str] = Counter()
        self._arrivals: dict[str, deque[float]] = {}
        self._accepted: dict[str, deque[float]] = {}

    def arrive(self, service: str, method: str = "") -> None:
        """A request has arrived; `method` is counted as its request line spells it."""
        now = time.monotonic()
        with self._lock:
            self.requests += 1
            self.by_service[service] += 1
            if method:
                self.by_method[method] += 1
            self.in_flight[service] += 1
            if self.in_flight[service] > self.max_concurrent[service]:
                self.max_concurrent[service] = self.in_flight[service]
            window = self._arrivals.setdefault(service, deque())
            window.append(now)
            while window[0] <= now - 1.0:
                window.popleft()
            if len(window) > self.max_per_second[service]:
                self.max_per_second[service] = len(window)

    def leave(self, service: str) -> None:
        with self._lock:
            self.in_flight[service] -= 1

    def routed(self, name: str) -> None:
        with self._lock:
            self.by_action[name] += 1

    def fault(self, kind: str) -> None:
        with self._lock:
            self.faults[kind] += 1

    def admit(self, service: str, limit: Limit) -> bool:
        """Whether a request that has arrived stays within the limit; refused ones do not use it up."""
        now = time.monotonic()
        with self._lock:
            window = self._accepted.setdefault(service, deque())
            while window and window[0] <= now - 1.0:
                window.popleft()
            if self.in_flight[service] > limit.concurrent or len(window) >= limit.per_second:
                self.limited[service] += 1
                return False
            window.append(now)
            return True

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "by_service": dict(self.by_service),
                "by_action": dict(self.by_action),
                "by_method": dict(self.by_method),
                "max_concurrent": dict(self.max_concurrent),
                "max_per_second": dict(self.max_per_second),
                "faults": dict(self.faults),
                "limited": dict(self.limited),
            }
