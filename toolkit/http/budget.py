"""The rate budget: a service's documented requests per second and concurrent requests, kept by every
thread of a client and, through flock'd files, by the processes of this machine that use the same key.
"""
from __future__ import annotations

__all__ = ["RateBudget"]

import os
import struct
import threading
import time
from collections import deque
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: each process keeps its own budget
    fcntl = None


class RateBudget:
    """At most `per_second` request starts in any one-second window and `concurrent` at once.

    With `shared` (a path; toolkit.http.client names one per service, address and key), the window
    and the places are shared with every process on this machine that uses the same key, through
    files locked with flock (a notebook and the cron job then split the service's budget instead of
    each taking all of it and meeting 429s); a process that dies lets go of its places with its
    locks. Where flock does not exist (Windows) the budget is this process's own.
    """

    def __init__(self, per_second: float | None, concurrent: int | None, shared: Path | None = None) -> None:
        self.per_second = per_second
        self.waited = 0.0  # seconds requests have waited for the window: what a progress line tells
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(concurrent) if concurrent else None
        self._concurrent = concurrent
        self.shared = shared if shared is not None and fcntl is not None else None
        self._held = threading.local()  # the place file this thread holds, when shared

    def __enter__(self) -> RateBudget:
        if self._slots:
            self._slots.acquire()
            if self.shared is not None:
                self._take_place()
        if self.per_second:
            self._wait_for_window()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._slots:
            held = getattr(self._held, "fd", None)
            if held is not None:
                self._held.fd = None
                fcntl.flock(held, fcntl.LOCK_UN)
                os.close(held)
            self._slots.release()

    def _wait_for_window(self) -> None:
        limit = max(1, int(self.per_second))        # below one a second: still one start per window
        while True:
            with self._lock:
                wait = self._shared_start(limit) if self.shared is not None else None
                if self.shared is None:  # not shared, or its folder cannot be written: this process's own
                    wait = self._start(limit)
                if wait is None:
                    return
                self.waited += wait
            time.sleep(wait)

    def _start(self, limit: int) -> float | None:
        """Start now (None) when the window has room, else how long to wait."""
        now = time.monotonic()
        # a small margin so that the service's own one-second window agrees with ours
        while self._starts and now - self._starts[0] >= 1.05:
            self._starts.popleft()
        if len(self._starts) < limit:
            self._starts.append(now)
            return None
        return max(1.05 - (now - self._starts[0]), 0.001)

    def _shared_start(self, limit: int) -> float | None:
        """`_start` over the window every process with this key shares: its starts (wall-clock
        seconds, 8 bytes each) in a file, read and written under an exclusive flock."""
        try:
            self.shared.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.shared, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            self.shared = None
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, 8 * 1024, 0)
            now = time.time()
            starts = [t for t in struct.unpack(f"<{len(data) // 8}d", data[:len(data) // 8 * 8])
                      if 0 <= now - t < 1.05]
            if len(starts) >= limit:
                return max(1.05 - (now - starts[0]), 0.001)
            starts.append(now)
            os.ftruncate(fd, 0)
            os.pwrite(fd, struct.pack(f"<{len(starts)}d", *starts), 0)
            return None
        finally:
            os.close(fd)  # closing lets go of the lock

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
