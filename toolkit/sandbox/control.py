"""The sandbox's own route, for another shell: `POST /_sandbox/clock` moves the virtual clock of a
sandbox that `toolkit sandbox` serves, so that a scheduled refresh against it sees time pass
(`toolkit sandbox advance 3h`).

Only the user who started it can: the route takes a bearer token that is written nowhere but the
credentials file (readable by that user alone), under `CONTROL`, and answers 401 without it. The
clock only moves forward, at most a year a call.
"""
from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Callable
from datetime import datetime

from toolkit.sandbox.exchange import Headers, Response

__all__ = ["CONTROL", "MAX_STEP", "Controller"]

CONTROL = "_sandbox"             # the path's first segment, and the credentials file's entry
MAX_STEP = 366 * 86_400          # seconds: a step further than that is a typo


class Controller:
    """Answers the control route: checks the token, moves the clock with `advance(seconds)`."""

    def __init__(self, advance: Callable[[float], datetime]) -> None:
        self.token = secrets.token_urlsafe(24)
        self._advance = advance

    def answer(self, method: str, tail: str, headers: Headers, body: bytes) -> Response:
        given = headers.get("authorization") or ""
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            return Response(401, {"message": "the sandbox's control route takes the token of its credentials file"})
        if tail.strip("/") != "clock":
            return Response(404, {"message": "the sandbox's control route is POST /_sandbox/clock"})
        if method != "POST":
            return Response(405, {"message": "POST /_sandbox/clock {\"seconds\": N} moves the clock"},
                            {"Allow": "POST"})
        try:
            seconds = json.loads(body or b"{}").get("seconds")
        except (ValueError, AttributeError):
            seconds = None
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not 0 <= seconds <= MAX_STEP:
            return Response(400, {"message": f"send {{\"seconds\": N}}, 0 <= N <= {MAX_STEP}"})
        now = self._advance(float(seconds))
        return Response(200, {"now": now.isoformat().replace("+00:00", "Z"), "advanced_seconds": seconds})
