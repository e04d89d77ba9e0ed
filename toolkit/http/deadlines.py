"""One request's deadline, from sending to its answer's last byte: past it, the socket the request reads
from is shut, so that a read blocked on a trickle returns at once. A read timeout alone starts again
with every byte: a service sending one byte every 5 s held a pull for good.

One thread (started when a deadline is set, ending when none has been for a while) waits for the
soonest deadline of the process. `DeadlineAdapter`, the adapter of the sessions toolkit makes, notes
which connection each request uses, so that a deadline reaches the socket before the answer's headers
are whole; a session handed in is reached once its headers came (`Deadline.answered`).

    deadline = Deadline.start(300.0)
    try: ...send and read...
    finally: deadline.finish()
    deadline.passed            # True: the socket was shut at the deadline
"""
from __future__ import annotations

__all__ = ["Deadline", "DeadlineAdapter"]

import contextlib
import heapq
import itertools
import socket
import threading
import time
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_current = threading.local()        # the deadline of the request this thread is sending
_IDLE = 10.0                        # seconds the waiting thread stays with no deadline set


class Deadline:
    """The deadline of one attempt (the module docstring)."""

    __slots__ = ("connection", "finished", "passed", "seconds", "when")
    _soonest: list[tuple[float, int, Deadline]] = []
    _changed = threading.Condition()
    _waiting = False
    _order = itertools.count()

    def __init__(self, seconds: float) -> None:
        self.seconds, self.when = seconds, time.monotonic() + seconds
        self.passed = self.finished = False
        self.connection: Any = None

    @classmethod
    def start(cls, seconds: float) -> Deadline:
        """A deadline `seconds` from now for the request this thread sends next."""
        deadline = cls(seconds)
        _current.deadline = deadline
        with cls._changed:
            heapq.heappush(cls._soonest, (deadline.when, next(cls._order), deadline))
            if not cls._waiting:
                cls._waiting = True
                threading.Thread(target=cls._wait, name="toolkit-deadlines", daemon=True).start()
            elif cls._soonest[0][2] is deadline:
                cls._changed.notify()
        return deadline

    def left(self) -> float:
        return self.when - time.monotonic()

    def answered(self, response: Any) -> None:
        """The connection an answer is read from (a session handed in is reached only so)."""
        raw = getattr(response, "raw", None)
        connection = getattr(raw, "connection", None) or getattr(raw, "_connection", None)
        if connection is not None:
            self.connection = connection
        if self.passed:
            self._shut()

    def finish(self) -> None:
        self.finished = True
        if getattr(_current, "deadline", None) is self:
            _current.deadline = None
        with self._changed:
            if self._soonest and self._soonest[0][2] is self:
                self._changed.notify()          # finished ones at the head go; the wait moves to the next

    def _shut(self) -> None:
        sock = getattr(self.connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    @classmethod
    def _wait(cls) -> None:
        while True:
            with cls._changed:
                while cls._soonest and cls._soonest[0][2].finished:
                    heapq.heappop(cls._soonest)
                if not cls._soonest:
                    if not cls._changed.wait(_IDLE) and not cls._soonest:
                        cls._waiting = False
                        return
                    continue
                when, _, due = cls._soonest[0]
                if when > time.monotonic():
                    cls._changed.wait(when - time.monotonic())
                    continue
                heapq.heappop(cls._soonest)
            if not due.finished:
                due.passed = True
                due._shut()


class _Noted:
    """A pool that notes, for this thread's deadline, the connection its request goes out on."""

    def _get_conn(self, timeout: float | None = None) -> Any:
        connection = super()._get_conn(timeout)       # type: ignore[misc]
        deadline = getattr(_current, "deadline", None)
        if deadline is not None:
            deadline.connection = connection
        return connection


class _Pool(_Noted, HTTPConnectionPool):
    pass


class _TLSPool(_Noted, HTTPSConnectionPool):
    pass


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with pools that let a deadline reach a request's socket from its start."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
