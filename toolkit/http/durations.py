"""ISO-8601 durations as Java's `Duration.parse` reads them, the grammar the audience platform's
durations are read with (client and sandbox agree on it).

    duration_nanos("PT1H30M")     # 5_400_000_000_000
    parse_duration("P1DT12H")     # timedelta(days=1, seconds=43200)
    span_seconds("6h")            # 21600.0: max_age= and --max-age, numbers and timedeltas too
"""
from __future__ import annotations

__all__ = ["HOUR", "NANOS", "SPAN_HINT", "THIRTY_DAYS", "duration_nanos", "parse_duration", "span_seconds"]

import datetime as dt
import math
import numbers
import re

from toolkit.errors import ValidationError
from toolkit.http.kinds import LONG

# Java's Duration.parse, which the audience platform reads durations with: days, hours, minutes and
# seconds (no weeks, months or years, whose length varies), each with an optional sign, up to nine
# digits of a second after `.` or `,`, a sign before the P that negates the whole; letters in either case.
_DURATION = re.compile(r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?"
                       r"(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?", re.IGNORECASE | re.ASCII)
NANOS = 10**9


def duration_nanos(text: str) -> int:
    """An ISO-8601 duration as Java's `Duration.parse` reads it, in nanoseconds.

    Raises ValueError where Java would: another grammar (`P1W`, `P1M`, `P1Y`, `PT`, `P1DT`), or a
    number of seconds no Java long holds.

        duration_nanos("PT1H30M")    # 5_400_000_000_000
    """
    found = _DURATION.fullmatch(text) if isinstance(text, str) else None
    # Java also refuses a P with no part after it, and a T with none after it
    if found is None or not any(found.group(i) for i in (2, 4, 5, 6)) or (found.group(3) or "").upper() == "T":
        raise ValueError(f"{text!r} is not an ISO-8601 duration of days, hours, minutes and seconds")
    sign, days, _, hours, minutes, seconds, fraction = found.groups()
    total = 0
    for number, unit in ((days, 86_400), (hours, 3_600), (minutes, 60), (seconds, 1)):
        if number:
            value = int(number)
            if not LONG[0] <= value <= LONG[1] or not LONG[0] <= value * unit <= LONG[1]:
                raise ValueError(f"{text!r} holds more seconds than a Java long")
            total += value * unit
    if not LONG[0] <= total <= LONG[1]:
        raise ValueError(f"{text!r} holds more seconds than a Java long")
    nanos = total * NANOS
    if fraction:
        part = int(fraction.ljust(9, "0"))
        nanos += -part if seconds.startswith("-") else part
    return -nanos if sign == "-" else nanos


def parse_duration(text: str) -> dt.timedelta:
    """An ISO-8601 duration (`PT1H`, `P30D`, `P1DT12H`) as Java's `Duration.parse` takes it.

    Raises ValueError for another grammar, and for a span longer than a timedelta holds (999,999,999 days).
    """
    nanos = duration_nanos(text)
    try:
        return dt.timedelta(microseconds=nanos // 1000)
    except OverflowError:
        raise ValueError(f"{text!r} is longer than a timedelta holds") from None


HOUR, THIRTY_DAYS = 3_600 * NANOS, 30 * 86_400 * NANOS

# a span as an analyst writes one, in Python (`max_age="6h"`) as in the CLI (`--max-age 6h`)
_SPAN = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([smhd]?)\s*", re.IGNORECASE | re.ASCII)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3_600, "d": 86_400}
SPAN_HINT = "must be a duration: seconds, a timedelta, or text such as 90s, 30m, 6h, 2d (or PT6H)"


def span_seconds(value: object, name: str = "max_age") -> float:
    """A span of time in seconds from a number of seconds, a timedelta, `"90s"`, `"30m"`, `"6h"`,
    `"2d"` or an ISO-8601 duration (`"PT6H"`). Raises ValidationError naming `name` for anything else,
    a negative span or one no float holds finitely.

        span_seconds("6h")     # 21600.0
    """
    seconds: float | None = None
    if isinstance(value, dt.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:       # an integer wider than any float
            seconds = None
    elif isinstance(value, str) and len(value) < 100:
        found = _SPAN.fullmatch(value)
        if found:
            seconds = float(found.group(1)) * _UNITS[found.group(2).lower()]
        else:
            try:
                seconds = duration_nanos(value.strip()) / NANOS
            except ValueError:
                seconds = None
    if seconds is None or not math.isfinite(seconds):
        raise ValidationError(name, value, SPAN_HINT)
    if seconds < 0:
        raise ValidationError(name, value, "must not be negative: a duration is a span of time")
    return seconds
