"""The rate budget: a service's documented requests per second and concurrent requests, kept by every
thread of a client and, through flock'd files, by the processes of this machine that use the same key.
"""
from __future__ import annotations

__all__ = ["RateBudget"]

import contextlib
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: each process keeps its own budget
    fcntl = None


# seconds an answered request stays in the window: the service's one second, and 10 ms for timers.
# It arrived before its answer, so no margin for the way there is needed (a window of starts kept 50 ms
# for it, and a request held up longer than that was refused)
WINDOW = 1.01
# seconds an unanswered request holds its place at most: it has reached the service by then (a long
# download does not hold a place for minutes), and one whose process died lets go of it
IN_FLIGHT = 10.0


class RateBudget:
    """At most `per_second` requests in any one-second window and `concurrent` at once.

    A request holds its place in the window from its start until a second after its answer: the
    service counts it when it arrives, somewhere between the two. Counted by their starts alone
    (before), a request that reached the service late (a busy machine, a slow link) shared its
    second with one sent a second after it, and the service refused that one (429).

    With `shared` (a path; toolkit.http.client names one per service, address and key), the window
    and the places are shared with every process on this machine that uses the same key, through
    files locked with flock (a notebook and the cron job then split the service's budget instead of
    each taking all of it and meeting 429s); a process that dies lets go of its places with its
    locks. Where flock does not exist (Windows) the budget is this process's own.
    """

    def __init__(self, per_second: float | None, concurrent: int | None, shared: Path | None = None) -> None:
        self.per_second = per_second
        self.waited = 0.0  # seconds requests have waited for the window: what a progress line tells
        # the window: a request in flight as minus its start, an answered one as its answer (`_kept`)
        self._window: list[float] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(concurrent) if concurrent else None
        self._concurrent = concurrent
        self.shared = shared if shared is not None and fcntl is not None else None
        self._held = threading.local()  # the place file this thread holds, when shared, and its starts

    def __enter__(self) -> RateBudget:
        if self._slots:
            self._slots.acquire()
            if self.shared is not None:
                self._take_place()
        if self.per_second:
            self._wait_for_window()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.per_second:
                self._answered()
        finally:        # the place is let go whatever happened to the window
            if self._slots:
                held = getattr(self._held, "fd", None)
                if held is not None:
                    self._held.fd = None
                    fcntl.flock(held, fcntl.LOCK_UN)
                    os.close(held)
                self._slots.release()

    def _wait_for_window(self) -> None:
        limit = max(1, int(self.per_second))        # below one a second: still one start per window

        def start(window: list[float], now: float) -> float:
            return _start(window, now, limit)
        while True:
            with self._lock:
                started = self._shared(start) if self.shared is not None else None
                shared = started is not None
                if started is None:  # not shared, or its folder cannot be written: this process's own
                    started = self._own(start)
                if started > 0:
                    # a stack: a `with` of the same budget inside another (a login sent for a request)
                    self._starts_held().append((shared, started))
                    return
                wait = -started
                self.waited += wait
            time.sleep(wait)

    def _starts_held(self) -> list[tuple[bool, float]]:
        held = getattr(self._held, "starts", None)
        if held is None:
            held = self._held.starts = []
        return held

    def _answered(self) -> None:
        """The request's place in the window moves from its start to its answer (class docstring)."""
        held = self._starts_held()
        if not held:
            return
        shared, started = held.pop()
        with self._lock:
            if shared and self._shared(lambda window, now: _answer(window, now, started)) is not None:
                return
            # a start kept in the shared file, which has failed since, is not in this process's window
            self._own(lambda window, now: _answer(window, now, 0.0 if shared else started))

    def _own(self, change: Callable[[list[float], float], float]) -> float:
        """`change` made to this process's window (monotonic seconds), under `_lock`, and what it answers."""
        now = time.monotonic()
        self._window = _kept(self._window, now)
        return change(self._window, now)

    def _shared(self, change: Callable[[list[float], float], float]) -> float | None:
        """`change` made to the window every process with this key shares, and what it answers: the
        window (wall-clock seconds, 8 bytes each) is a file, read and written under an exclusive flock,
        written back when `change` answers a positive number. None when the file cannot be used (the
        budget is then this process's own)."""
        try:
            self.shared.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.shared, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                data = os.pread(fd, 8 * 1024, 0)
                now = time.time()
                window = _kept(list(struct.unpack(f"<{len(data) // 8}d", data[:len(data) // 8 * 8])), now)
                answer = change(window, now)
                if answer > 0:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, struct.pack(f"<{len(window)}d", *window), 0)
                return answer
            finally:
                os.close(fd)  # closing lets go of the lock
        except OSError:     # a folder it cannot write, a full disk: this process's own budget from now on
            self.shared = None
            return None

    def _take_place(self) -> None:
        """One of the `concurrent` places every process with this key shares: a file of its own per
        place, held with a non-blocking flock; none free, try again shortly."""
        pause = 0.005
        while True:
            for place in range(self._concurrent):
                try:
                    self.shared.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(f"{self.shared}.{place}", os.O_RDWR | os.O_CREAT, 0o600)
                except OSError:  # a folder this process cannot write: the places are its own
                    self.shared = None
                    return
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self._held.fd = fd
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def _kept(window: list[float], now: float) -> list[float]:
    """The places still held: answered within WINDOW, or in flight since IN_FLIGHT at most."""
    return [t for t in window if (0 <= now - t < WINDOW if t > 0 else 0 <= now + t < IN_FLIGHT)]


def _start(window: list[float], now: float, limit: int) -> float:
    """A start now, taken in `window` (the start, a positive time) when it has room, else minus how
    long to wait: until its first answered place leaves it, or a moment while all are in flight."""
    if len(window) < limit:
        window.append(-now)
        return now
    answered = [t for t in window if t > 0]
    return -max(WINDOW - (now - min(answered)), 0.001) if answered else -0.02


def _answer(window: list[float], now: float, started: float) -> float:
    """The request started at `started` answered now: its place held from now on."""
    with contextlib.suppress(ValueError):   # gone already (in flight past IN_FLIGHT)
        window.remove(-started)
    window.append(now)
    return now
