"""The workspace's clock: when a load starts and ends, when an export is made, how old a cache is.
One function, so that every time the workspace writes is timezone-aware UTC."""
from __future__ import annotations

__all__ = ["now"]

from datetime import UTC, datetime


def now() -> datetime:
    """The time now, tz-aware UTC."""
    return datetime.now(UTC)
