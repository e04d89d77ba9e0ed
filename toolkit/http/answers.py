"""An answer's body read as the JSON its action declares: exactly, or an `AnswerError`.

A 200 whose body is a proxy's HTML page, empty, or cut short is not an empty page: read as one, it
ended walks early and the load was marked complete with a third of its rows. So a body that does not
parse is an error of its own, which the client retries like a 5xx (proxies serve such pages for a
moment) before it gives up.

Valid JSON that orjson cannot hold exactly is read by the standard library instead, keeping every
digit: a number past a double's range (`1e400`) or an integer past 64 bits becomes its text, as the
service wrote it, rather than a failure or a rounded float; a lone surrogate (`"\\ud800"`, valid JSON
that no UTF-8 text can hold) becomes U+FFFD.
"""
from __future__ import annotations

__all__ = ["INT64", "body_of", "loads"]

import json
import math
import re
from typing import Any

import orjson

from toolkit.errors import AnswerError

# a run of 20 digits may be an integer past 64 bits, which orjson reads as a rounded float
_LONG_DIGITS = re.compile(rb"\d{20}")
_SURROGATE = re.compile("[\ud800-\udfff]")
INT64 = range(-2**63, 2**63)


def loads(content: bytes) -> Any:
    """JSON with every number as exact as Python holds it; raises ValueError when it is not JSON."""
    if not _LONG_DIGITS.search(content):
        try:
            return orjson.loads(content)
        except orjson.JSONDecodeError:
            pass            # 1e400 and lone surrogates are valid JSON orjson refuses: read them below
    return _mended(json.loads(content, parse_float=_float, parse_int=_int, parse_constant=_refused))


def body_of(action: str, status: int, content_type: str | None, content: bytes, tries: int = 1) -> Any:
    """The parsed body of an answer declared JSON, or the AnswerError saying what it is instead."""
    if not content.strip():
        raise AnswerError(action, status, content_type, content, "empty", tries)
    try:
        return loads(content)
    except (ValueError, RecursionError):
        raise AnswerError(action, status, content_type, content[:200], _what(content, content_type), tries) \
            from None


def _what(content: bytes, content_type: str | None) -> str:
    head = content.lstrip()[:20].lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml", b"<")) or "html" in (content_type or ""):
        return "a markup page"
    if head[:1] in (b"{", b"[", b'"'):
        return f"JSON cut short or broken ({len(content):,} bytes)"
    return f"text of {len(content):,} bytes"


def _float(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text


def _int(text: str) -> int | str:
    value = int(text)
    return value if value in INT64 else text


def _refused(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")        # Python's json reads NaN and Infinity; JSON has neither


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mended(v) for v in value]
    return value
