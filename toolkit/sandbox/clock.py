"""The sandbox's virtual clock and the ways the services write an instant.

Answers never read wall time: the clock starts at a fixed instant, so a recording made today and one
made next month are byte for byte the same, and only `advance()` moves it (imports finish,
translation work progresses).

    clock = Clock(); clock.advance(hours=2); iso(clock.now())  # '2026-11-02T11:00:00Z'
"""
from __future__ import annotations

__all__ = ["Clock", "EPOCH", "START", "epoch_ms", "iso"]

import threading
from datetime import UTC, datetime, timedelta
from typing import overload

START = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Clock:
    """A settable UTC clock shared by the emulators of one sandbox."""

    def __init__(self, start: datetime = START) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        """Move forward by `delta` or by timedelta keywords (`hours=2`); never backwards."""
        step = delta if delta is not None else timedelta(**kwargs)
        if step < timedelta(0):
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            self._now += step
            return self._now

    def epoch_ms(self) -> int:
        return epoch_ms(self._now)


@overload
def iso(moment: datetime, digits: int = 0) -> str: ...
@overload
def iso(moment: None, digits: int = 0) -> None: ...
def iso(moment: datetime | None, digits: int = 0) -> str | None:
    """ISO-8601 in UTC with `Z`; `digits` fractional digits (3 for the asset library, 6 for media review)."""
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += f".{moment.microsecond:06d}"[: digits + 1]
    return text + "Z"


@overload
def epoch_ms(moment: datetime) -> int: ...
@overload
def epoch_ms(moment: None) -> None: ...
def epoch_ms(moment: datetime | None) -> int | None:
    """Milliseconds since 1970, how the translation service writes every timestamp."""
    if moment is None:
        return None
    # integer arithmetic: float timestamps lose a millisecond now and then
    return (moment - EPOCH) // timedelta(milliseconds=1)
