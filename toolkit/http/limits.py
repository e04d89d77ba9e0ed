"""What one answer may cost: its bytes after decoding, its time, the wait it asks for, its nesting.

A broken or hostile service could otherwise take the analyst's machine: a gzip page that inflates to
4 GiB, a chunked body that never ends, one byte every 5 s (a read timeout restarts with every byte),
JSON nested 100,000 deep. Each limit has a default no real service meets, and each is raised by an
argument of `connect` (and `Workspace.connect`) or by an environment variable; the `LimitError` a limit
raises names both:

    limit              default    connect(...)         environment
    bytes of answer    256 MiB    max_answer_bytes=    TOOLKIT_MAX_ANSWER_BYTES   (after decoding)
    time of a request  300 s      deadline=            TOOLKIT_REQUEST_DEADLINE   (sent to last byte)
    a Retry-After      120 s      max_retry_after=     TOOLKIT_MAX_RETRY_AFTER    (waited, with a line)
    nesting of JSON    128        max_depth=           TOOLKIT_MAX_DEPTH          (at most 250)

    Limits.resolved(max_depth=64)     # the others from the environment or their defaults
"""
from __future__ import annotations

__all__ = ["DEEPEST", "Limits", "depth_past"]

import os
import re
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from toolkit.errors import ValidationError

MiB = 1 << 20
# orjson writes JSON at most 254 deep, and a row's values are written again (`extra`, JSON columns)
DEEPEST = 250


@dataclass(frozen=True)
class Limits:
    """What one answer may cost (the module docstring); `resolved` fills what is not given."""
    max_answer_bytes: int = 256 * MiB
    deadline: float = 300.0
    max_retry_after: float = 120.0
    max_depth: int = 128

    @classmethod
    def resolved(cls, **given: float | int | None) -> Limits:
        """The limits given, else from TOOLKIT_<NAME>, else the defaults; refuses a value that is not a
        positive number (naming where it came from)."""
        chosen: dict[str, Any] = {}
        for field in fields(cls):
            value: float | int | str | None = given.get(field.name)
            source = field.name
            if value is None and os.environ.get(_VARIABLES[field.name], "").strip():
                value, source = os.environ[_VARIABLES[field.name]].strip(), _VARIABLES[field.name]
            if value is None:
                continue
            chosen[field.name] = _positive(source, value, int if field.type == "int" else float)
        if chosen.get("max_depth", 0) > DEEPEST:
            raise ValidationError("max_depth", chosen["max_depth"], f"must be at most {DEEPEST}: the deepest JSON "
                                  "a row's values can be written again")
        return cls(**chosen)

    @staticmethod
    def how_to_raise(name: str) -> str:
        """`connect(..., deadline=) or TOOLKIT_REQUEST_DEADLINE`: where a limit is raised."""
        return f"connect(..., {name}=) or {_VARIABLES[name]}"


_VARIABLES = {"max_answer_bytes": "TOOLKIT_MAX_ANSWER_BYTES", "deadline": "TOOLKIT_REQUEST_DEADLINE",
              "max_retry_after": "TOOLKIT_MAX_RETRY_AFTER", "max_depth": "TOOLKIT_MAX_DEPTH"}


def _positive(name: str, value: object, kind: type) -> int | float:
    try:
        number = kind(float(value)) if isinstance(value, str) else kind(value)      # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or isinstance(value, bool) or not number > 0 or number == float("inf"):
        raise ValidationError(name, value, f"must be a positive {'whole ' if kind is int else ''}number")
    return number


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STRINGS = re.compile(rb'"[^"]*"')
_PAIRS = re.compile(rb"\[\]|\{\}")
# what each quote or bracket adds to the depth (a quote is marked 2, and counts nothing)
_STEPS = np.zeros(256, np.int8)
_STEPS[[ord("["), ord("{")]], _STEPS[[ord("]"), ord("}")]], _STEPS[ord('"')] = 1, -1, 2


def depth_past(content: bytes, limit: int) -> bool:
    """Whether JSON text nests deeper than `limit` arrays and objects, brackets inside strings not
    counted. Text that is not JSON gives False: the parser says what it is.

    It runs on every page before a parser does (a parser recurses, and fails at a depth of its own: a
    traceback, or a value orjson cannot write again), so it is made of whole-buffer operations: escapes
    go (looked for only where a backslash occurs), then everything but quotes and brackets, then the
    `""` each string without brackets leaves (what is left is mostly brackets alone, a fortieth of the
    page); a bracket is inside a string where an odd number of quotes comes before it, and the depth
    at each bracket outside is the running sum of +1 for an opening one and -1 for a closing one (numpy
    over what is left). No pair can nest deeper than that sum rises from its lowest point, so within
    the limit it is answered there; beyond it `_nests_past` decides exactly, as this check did for every
    page before: it cost a cursor walk of assets 0.38 CPU-s per 100,000 records, as much as its
    decoding and typing together (docs/architecture/pull-speed.md)."""
    kept = content
    if b"\\" in kept and (b'\\"' in kept or b"\\\\" in kept):
        kept = kept.replace(b"\\\\", b"").replace(b'\\"', b"")
    # a string without brackets is left as an adjacent `""` pair: taking the pairs away leaves every
    # other character's side of the quotes as it was, and most pages with no quote at all
    kept = kept.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    steps = _STEPS[np.frombuffer(kept, np.uint8)]
    if b'"' in kept:
        quotes = steps == 2
        strings = np.cumsum(quotes, dtype=np.int32)
        if strings[-1] & 1:     # a quote left open: no JSON, and which quote is left is `_nests_past`'s to say
            return _nests_past(kept, limit)
        steps[(strings & 1).astype(bool) | quotes] = 0
    depths = np.cumsum(steps, dtype=np.int32)
    if not len(depths) or int(depths.max()) - min(0, int(depths.min())) <= limit:
        return False
    return _nests_past(kept, limit)


def _nests_past(kept: bytes, limit: int) -> bool:
    """`depth_past` exactly, over the quotes and brackets of the text: strings go (an adjacent `""` pair
    leaves every other character's side of the quotes as it was), then each round takes away the
    innermost `[]` and `{}`; text left after `limit` rounds nests deeper."""
    kept = kept.replace(b'""', b"")
    if b'"' in kept:
        kept = _STRINGS.sub(b"", kept)
    for _ in range(limit):
        if not kept:
            return False
        # one pass for both kinds: `[]` then `{}` took `{[]}` away whole, two levels in one round
        inner = _PAIRS.sub(b"", kept)
        if len(inner) == len(kept):
            return False            # brackets that do not pair: not JSON
        kept = inner
    return _PAIRS.search(kept) is not None
