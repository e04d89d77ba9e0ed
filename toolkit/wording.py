"""How text from outside, and values in a message, are shown: escaped (`printable`), bounded
(`shortened`), with the closest known name (`did_you_mean`), and a service's own error message read
from its body (`service_message`). The floor under `toolkit.errors`, which builds every message with
them and hands them on; it imports nothing of toolkit.
"""
from __future__ import annotations

__all__ = ["ERROR_SHAPES", "bounded_repr", "did_you_mean", "printable", "service_message", "shortened"]

import difflib
import re
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

# Text from the services made safe to print: a field name, a cursor or a message holding terminal
# escapes (`\x1b[2J`), a newline that forges a line of its own (`\nWARNING: all good`) or a
# right-to-left override is shown as its escape, never acted on by a terminal, a log or a notebook:
# C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides and
# isolates, zero-width joiners).
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(value: object, keep_lines: bool = False) -> str:
    """`value` as text with every control and hiding character escaped; `keep_lines` leaves the
    newlines of a message toolkit itself wrote on several lines."""
    text = str(value)
    if not keep_lines:
        return _HIDDEN.sub(_escape, text)
    return "\n".join(_HIDDEN.sub(_escape, line) for line in text.split("\n"))


def did_you_mean(name: Any, known: Any) -> str:
    """"; did you mean 'targets'?" for the closest of `known` (difflib), or "" when none is close."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


# a value shown in a message: bounded in depth and length, so that a value nested thousands deep or a
# megabyte long still makes a one-line error (repr() would recurse or print it all)
_SHOWN = reprlib.Repr()     # Python 3.11's Repr takes its bounds as attributes, not arguments
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, 60, 60, 40


def shortened(value: Any, keep: int = 3) -> str:
    """A value for a message, a long list of ids cut to its first few and its count: a fan-out's
    chunk of 80 submission ids once made a 600-character error."""
    if isinstance(value, list | tuple | set | frozenset) and len(value) > 2 * keep:
        shown = ", ".join(bounded_repr(v) for v in list(value)[:keep])
        return f"[{shown}, … {len(value)} in all]"
    return str(value) if isinstance(value, int | str) and len(str(value)) <= 80 else bounded_repr(value)


def bounded_repr(value: Any) -> str:
    """A value's repr bounded in depth and length: at most 80 characters, however nested or long."""
    text = _SHOWN.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _message_and_errors(body: Mapping[str, Any]) -> list[str]:
    """`message`, then each of `errors` (an object's detail, title or message, or the item itself)."""
    parts = [str(body["message"])] if body.get("message") else []
    for error in body.get("errors") or []:
        if isinstance(error, dict):
            parts.append(str(error.get("detail") or error.get("title") or error.get("message") or ""))
        elif error:
            parts.append(str(error))
    return parts


def _messages(body: Mapping[str, Any]) -> list[str]:
    """A list of `messages` first, then as `_message_and_errors`."""
    return [str(m) for m in body.get("messages") or []] + _message_and_errors(body)


# How each error shape a service's catalog entry names (`Service.error_shape`) reads an error body's
# parts: media review {code, message, errors: [{detail, title}]}, asset library {message}, audience
# platform {message, errors}, translation {messages: [...]}. A new shape is one entry.
ERROR_SHAPES: Mapping[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "code_message_errors": _message_and_errors,
    "message": _message_and_errors,
    "unomi": _message_and_errors,
    "messages": _messages,
}


def service_message(shape: str, body: Any, fallback: str) -> str:
    """The human message in a service's own error body, read by its shape (`ERROR_SHAPES`); an OAuth
    error's description where the shape finds nothing; `fallback` where there is nothing at all."""
    if not isinstance(body, dict):
        return printable(str(body).strip() if body else "") or fallback
    parts = ERROR_SHAPES[shape](body)
    if not parts and body.get("error"):
        parts.append(str(body.get("error_description") or body["error"]))
    text = "; ".join(dict.fromkeys(p for p in parts if p))    # a message repeated in `errors` once
    return printable(text) if text else fallback
