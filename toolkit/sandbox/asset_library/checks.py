"""What the asset library accepts in a request: a JSON object body without unknown properties,
strings, ISO-8601 instants and true/false query flags, each refused with a 400 in the service's shape.

Functions, not methods, so that every part of the emulator (assets, boards, fields, transfers) checks
its input the same way without holding the emulator.
"""
from __future__ import annotations

__all__ = ["flag", "instant", "object_body", "text"]

from datetime import UTC, datetime
from typing import Any

from toolkit.sandbox.clock import epoch_ms
from toolkit.sandbox.exchange import Reject, Request


def object_body(request: Request, allowed: set[str]) -> dict[str, Any]:
    """The JSON object body; a property the action does not take is a 400 (catches snake_case)."""
    body = request.json()
    if not isinstance(body, dict):
        raise Reject(400, "the body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise Reject(400, f"unknown propert{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)}")
    return body


def text(body: dict[str, Any], name: str, required: bool = False) -> str | None:
    """A string property (None when absent); a required one must not be blank."""
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise Reject(400, f"{name} must be a string")
    if required and not (value or "").strip():
        raise Reject(400, f"{name} is required")
    return value


def instant(value: Any, name: str) -> int:
    """An ISO-8601 date or datetime as epoch ms (UTC when no offset is given); 400 otherwise."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise Reject(400, f"{name} must be an ISO-8601 date-time, not {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(epoch_ms(moment) or 0)


def flag(request: Request, name: str) -> bool:
    """A query flag: true or false (any case), false when absent."""
    value = (request.arg(name) or "false").lower()
    if value not in ("true", "false"):
        raise Reject(400, f"{name} must be true or false, not {value!r}")
    return value == "true"
