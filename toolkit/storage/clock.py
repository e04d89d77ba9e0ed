"""The workspace's clock: when a load starts and ends, when an export is made, how old a cache is.
One function, so that every time the workspace writes is timezone-aware UTC (and a test can set it back).
Times order nothing: loads are ordered by their sequence (`_loads.seq`), since a clock can be wrong."""
from __future__ import annotations

__all__ = ["SKEW", "now"]

from datetime import UTC, datetime

# seconds a load may seem to end after this clock's now and still count as fresh: the machines writing one
# lake keep clocks that differ that much; more is a clock set back since, and its ages mean nothing
SKEW = 60.0


def now() -> datetime:
    """The time now, tz-aware UTC."""
    return datetime.now(UTC)
