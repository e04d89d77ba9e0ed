"""Seeded randomness: ids, secrets, names and instants that are the same for the same seed.

Each purpose draws from its own stream (`Seeds(seed, "media_review:data")`), so growing `scale` or
adding a record type does not change the secrets or the ids drawn elsewhere.

    rng = Seeds(0, "asset_library:data"); rng.uuid()  # a uuid4-shaped string, always the same
"""
from __future__ import annotations

__all__ = ["Seeds", "T"]

import random
import string
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypeVar

T = TypeVar("T")

_ALPHABET = string.ascii_letters + string.digits


class Seeds(random.Random):
    """A `random.Random` seeded with `(seed, salt)`, plus the shapes the emulators need."""

    def __init__(self, seed: int, salt: str) -> None:
        # a str seed is hashed with SHA-512 by random.Random: stable across runs and platforms
        super().__init__(f"{seed}:{salt}")

    def uuid(self) -> str:
        """A version-4 UUID string drawn from this stream (uuid.uuid4 would use the OS's randomness)."""
        bits = self.getrandbits(128)
        bits = (bits & ~(0xF << 76)) | (0x4 << 76)          # version 4
        bits = (bits & ~(0x3 << 62)) | (0x2 << 62)          # RFC 4122 variant
        text = f"{bits:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def secret(self, prefix: str = "", length: int = 32) -> str:
        """A token-like string; the prefix makes leaked secrets recognisable in tests and scrubbers."""
        return prefix + "".join(self.choices(_ALPHABET, k=length))

    def hex(self, length: int = 16) -> str:
        return f"{self.getrandbits(length * 4):0{length}x}"

    def instant(self, start: datetime, end: datetime) -> datetime:
        """A moment between start and end, to the microsecond."""
        span = int((end - start) / timedelta(microseconds=1))
        return start + timedelta(microseconds=self.randrange(max(span, 1)))

    def weighted(self, options: Sequence[T], weights: Sequence[float]) -> T:
        return self.choices(options, weights=weights, k=1)[0]
