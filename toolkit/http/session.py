"""The HTTP layer: one requests Session per transport (made here, or handed in), retries, the service's
clock, and the Transport that sends each request through them within the rate budget's slots; the
client hands it the auth of each request and the secrets to scrub (toolkit.http.client).

Retries cover 408, 429, 5xx and connection errors, with exponential backoff and full jitter bounded by
`max_backoff`, honouring `Retry-After` in seconds or as an HTTP date (a wait of 10 s or more is said in a
warning, with how long and until when; one longer than `max_retry_after` is not waited for and the 429 is
returned). What one answer may cost is bounded (toolkit.http.limits): its body is read in pieces, counted
as it inflates, up to `max_answer_bytes`; an attempt has a `deadline` from sending to its last byte
(toolkit.http.deadlines); past either, `LimitError`, not retried. Only what is safe
to repeat (GET, PUT, DELETE, a merge patch, a POST declared safe, the token request) is retried on 5xx and
dropped connections; anything is retried on 429, which the service refused before doing anything.
Secrets are held in `Secret` and scrubbed by the client's `Redactor` from every log line and error.

Its parts live beside it and are importable from here as before: auth per scheme (toolkit.http.auth; the
scheme registry the catalog names, toolkit.http.schemes),
the rate budget (toolkit.http.budget), Secret and Redactor (toolkit.http.redaction), origins and the
Sessions that follow redirects only so far (toolkit.http.origins).
"""
from __future__ import annotations

__all__ = ["ApiKeyAuth", "BasicAuth", "BearerAuth", "HeadersStayHome", "IDEMPOTENT_METHODS",
           "OAuthPasswordAuth", "OneOriginSession", "RETRY_STATUSES", "RateBudget", "ReadBody", "Redactor", "RetryPolicy",
           "Secret", "ServiceClock", "Transport", "log", "loopback", "origin", "request_id", "retry_after", "same_origin",
           "shown_origin"]

import email.utils
import io
import ipaddress
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3

from toolkit.errors import LimitError, TransportError
from toolkit.http.auth import ApiKeyAuth, BasicAuth, BearerAuth, OAuthPasswordAuth
from toolkit.http.budget import RateBudget
from toolkit.http.deadlines import Deadline, DeadlineAdapter
from toolkit.http.limits import Limits
from toolkit.http.origins import HeadersStayHome, OneOriginSession, origin, same_origin, shown_origin
from toolkit.http.redaction import Redactor, Secret

log = logging.getLogger("toolkit.http.session")

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5                 # tries in all, the first included
    backoff: float = 0.5              # seconds before the second try; doubles each time
    max_backoff: float = 30.0         # no single wait is longer
    max_retry_after: float | None = None   # a longer Retry-After is not waited for (None: the Limits')
    loud_wait: float = 10.0           # a wait this long or longer is logged as a warning, not as info

    def wait(self, attempt: int, response: requests.Response | None) -> float:
        """Seconds to wait before try `attempt + 1`: Retry-After when given, else jittered backoff."""
        after = retry_after(response.headers.get("Retry-After")) if response is not None else None
        if after is not None:
            return after
        ceiling = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.replace(".", "", 1).isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ServiceClock:
    """The service's clock as its answers tell it: the latest `Date` header seen (RFC 9110 §6.6.1 asks
    a server with a clock to send one). Reports measure deadlines by it, since this machine's clock
    may be off, and a sandbox's virtual clock is not this machine's at all."""

    def __init__(self) -> None:
        self.latest: datetime | None = None
        self.seen: float | None = None    # time.monotonic() when `latest` came
        self._lock = threading.Lock()

    def now(self) -> datetime | None:
        """The service's clock now: the latest Date moved on by the whole seconds passed here since it
        came (a Date counts whole seconds: a fraction would only add noise)."""
        with self._lock:
            if self.latest is None or self.seen is None:
                return None
            return self.latest + timedelta(seconds=int(time.monotonic() - self.seen))

    def age(self) -> float | None:
        """Seconds since the latest Date came (None: none yet)."""
        return None if self.seen is None else time.monotonic() - self.seen

    def saw(self, header: str | None) -> None:
        """Note an answer's Date; one that is missing or not an HTTP date is ignored."""
        if not header:
            return
        try:
            moment = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        with self._lock:  # answers of several threads: the clock never goes back
            if self.latest is None or moment > self.latest:
                self.latest = moment
            self.seen = time.monotonic()


class Transport:
    """Sends one request with retries, the rate budget, a timeout and the limits of an answer; it knows
    no service, no credentials and nothing about storage. A client is handed one as httpx's is
    (`Client(transport=...)`), or makes its own; a subclass may wrap `send` (the doctor's refuses
    anything but a read and notes every answer).

    `session`: the requests Session to send through (made here unless handed in: one origin, `pool`
    connections, proxies from the environment unless `trust_env` is False, or, when None, unless the
    first request goes to a loopback address). `budget`: the rate budget every request sent through
    it takes, whatever its client; None: each request takes the one its client hands `send`.
    """

    def __init__(self, *, budget: RateBudget | None = None, retry: RetryPolicy | None = None,
                 timeout: tuple[float, float] = (10.0, 60.0), pool: int = 10, trust_env: bool | None = None,
                 sleep: Callable[[float], None] = time.sleep, session: requests.Session | None = None,
                 limits: Limits | None = None) -> None:
        # a session handed in (a test's whose adapter answers from a function, as httpx users hand a
        # MockTransport; or one with the caller's own adapters) is used as it is: its redirects, proxies
        # and headers are the caller's. The one made here follows redirects within one origin only.
        self._session = session
        self._pool, self._trust_env = pool, trust_env
        self._made = threading.Lock()
        self.budget = budget
        self.retry = retry or RetryPolicy()
        self.timeout, self.sleep = timeout, sleep
        self.limits = limits or Limits.resolved()
        self.requests = 0
        self.clock = ServiceClock()

    @property
    def session(self) -> requests.Session:
        """The requests Session sent through: the one handed in, else made at the first request."""
        return self._session if self._session is not None else self._session_for(None)

    def _session_for(self, url: str | None) -> requests.Session:
        with self._made:
            if self._session is None:
                trust = self._trust_env if self._trust_env is not None else not (url and loopback(url))
                self._session = _own_session(self._pool, trust)
            return self._session

    def send(self, method: str, url: str, *, idempotent: bool | None = None, repeatable: bool = True,
             parts: Callable[[], AbstractContextManager[Any]] | None = None, budget: RateBudget | None = None,
             redactor: Redactor | None = None, **kwargs: Any) -> requests.Response:
        """The answer to one request, after the retries; raises TransportError when none came.

        `idempotent`: may be sent again after a 5xx or a dropped connection (by default GET, HEAD,
        PUT, DELETE and OPTIONS); any request is sent again after a 429, which the service refused
        before doing anything. `parts`: the multipart files,
        opened afresh for each attempt (a retry must send the whole file again) and closed after it;
        `repeatable=False`: sent once whatever the answer (a stream that cannot be rewound). `budget`: the
        rate budget of the caller's service, taken by each attempt unless this transport has its own;
        `redactor`: the caller's secrets, scrubbed from log lines and errors. The rest (`auth`,
        `params`, `data`, `headers`, ...) goes to requests' `Session.request`."""
        if idempotent is None:
            idempotent = method in IDEMPOTENT_METHODS
        slots = self.budget if self.budget is not None else budget if budget is not None else _UNPACED
        redactor = redactor if redactor is not None else _NO_SECRETS
        session = self._session if self._session is not None else self._session_for(url)
        attempt = 0
        began = time.perf_counter()
        while True:
            attempt += 1
            response, failure = None, None
            started = time.perf_counter()
            deadline: Deadline | None = None
            try:
                with slots, (parts() if parts is not None else nullcontext()) as files:
                    self.requests += 1
                    if files is not None:
                        kwargs["files"] = files
                    deadline = Deadline.start(self.limits.deadline)
                    response = session.request(method, url, timeout=self.timeout, stream=True, **kwargs)
                    deadline.answered(response)
                    _read_body(response, self.limits.max_answer_bytes, deadline, f"{method} {redactor.scrub(url)}")
            # a connection dropped while the body was read surfaces as ChunkedEncodingError
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
                failure = error
            finally:
                if deadline is not None:
                    deadline.finish()
            if deadline is not None and deadline.passed:
                if response is not None:
                    response.close()
                raise LimitError(f"{method} {redactor.scrub(url)}: no whole answer within the deadline of "
                                 f"{self.limits.deadline:g} s (the service may be trickling its answer); nothing was "
                                 f"kept. Raise it with {Limits.how_to_raise('deadline')} if the service is that "
                                 "slow", "deadline", self.limits.deadline)
            took = (time.perf_counter() - started) * 1000
            if response is not None:
                self.clock.saw(response.headers.get("Date"))
            status = response.status_code if response is not None else type(failure).__name__
            log.debug("%s %s -> %s in %.1f ms (try %d)", method, redactor.scrub(url), status, took, attempt)
            # a body cut short fails with its answer's head already in `response`: a failure all the same
            retryable = failure is not None or (response is not None and response.status_code in RETRY_STATUSES)
            if retryable and not idempotent:
                retryable = response is not None and response.status_code == 429
            retryable = retryable and repeatable
            wait = self.retry.wait(attempt, response) if retryable else 0.0
            asked = response is not None and retry_after(response.headers.get("Retry-After")) is not None
            if retryable and wait > self.max_retry_after:
                log.warning("%s %s -> %s; the service asks to wait %.0f s, longer than max_retry_after "
                            "(%.0f s): not retried", method, redactor.scrub(url), status, wait,
                            self.max_retry_after)
                retryable = False
            if not retryable or attempt >= self.retry.attempts:
                if response is None:
                    unanswered = TransportError(redactor.scrub(
                        f"{method} {url}: no answer after {attempt} tries ({type(failure).__name__})"))
                    unanswered.failure, unanswered.tries = type(failure).__name__, attempt
                    unanswered.seconds = time.perf_counter() - began
                    raise unanswered from None
                return response
            if wait >= self.retry.loud_wait:     # said where the analyst looks: a pull seems stuck otherwise
                until = datetime.now().astimezone() + timedelta(seconds=wait)
                log.warning("%s %s -> %s; waiting %.0f s (until %s) %s, then retry %d; a wait longer than "
                            "%.0f s is not made (%s)", method, redactor.scrub(url), status, wait,
                            until.strftime("%H:%M:%S"), "as the service asks (Retry-After)" if asked else
                            "before asking again", attempt, self.max_retry_after, Limits.how_to_raise("max_retry_after"))
            else:
                log.info("%s %s -> %s; retry %d in %.2f s", method, redactor.scrub(url), status, attempt, wait)
            self.sleep(wait)

    @property
    def max_retry_after(self) -> float:
        """The longest Retry-After waited for: the retry policy's, else the limits'."""
        return self.retry.max_retry_after if self.retry.max_retry_after is not None else self.limits.max_retry_after


def _own_session(pool: int, trust_env: bool) -> OneOriginSession:
    """The Session a Transport makes when none is handed in: one origin, `pool` connections, no retries
    of urllib3's own (the Transport retries)."""
    session = OneOriginSession()
    # a proxy lookup on every request costs more than a loopback answer; skip it where it can't matter
    session.trust_env = trust_env
    adapter = DeadlineAdapter(pool_connections=pool, pool_maxsize=pool, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = "toolkit/0.1 (+python-requests)"
    return session


_PIECE = 1 << 20


def _read_body(response: requests.Response, limit: int, deadline: Deadline, what: str) -> None:
    """Read the body in pieces of 1 MiB, decoded as they come (urllib3 inflates a gzip or deflate piece
    to at most the size asked), counted against `limit`: a bomb stops at the limit, not after.
    `Response.content` reads 10 kB chunks through four layers, many times slower for a large page.
    A body past the limit raises LimitError; other errors as requests raises them."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit and not response.headers.get("Content-Encoding"):
        response.close()
        raise _too_large(what, limit, int(declared))
    body, size = io.BytesIO(), 0      # getvalue() hands over BytesIO's buffer: the body is held once
    try:
        while True:
            piece = response.raw.read(_PIECE, decode_content=True)
            if not piece or deadline.passed:
                break
            size += len(piece)
            if size > limit:
                response.close()
                raise _too_large(what, limit, None)
            body.write(piece)
    except urllib3.exceptions.ProtocolError as error:
        raise requests.exceptions.ChunkedEncodingError(error) from error
    except urllib3.exceptions.ReadTimeoutError as error:
        raise requests.ConnectionError(error) from error
    except urllib3.exceptions.DecodeError as error:
        raise requests.exceptions.ContentDecodingError(error) from error
    finally:
        response.raw.release_conn()
    response.raw = ReadBody(body.getvalue())


class ReadBody(io.BytesIO):
    """An answer's body read whole (counted and bounded, `_read_body`), handed to requests as the
    response's `raw`: `Response.content` reads it through `stream`, which gives it in one piece, so
    the content is this very bytes object, held once."""

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        whole = self.getvalue()
        if whole:
            yield whole

    def release_conn(self) -> None:
        """Nothing to release: the connection went back to its pool when the body was read."""


_UNPACED = RateBudget(None, None)
_NO_SECRETS = Redactor()


def loopback(url: str) -> bool:
    """Whether the URL's host is this machine (a proxy lookup on every request costs more than a
    loopback answer; skip it where it cannot matter)."""
    host = urlsplit(url).hostname or ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _too_large(what: str, limit: int, declared: int | None) -> LimitError:
    said = f"says it holds {declared:,} bytes" if declared is not None else "holds more"
    return LimitError(f"{what}: the answer {said}, past the limit of {limit:,} bytes (after decoding); it was not "
                      f"read on and nothing was kept. Raise it with {Limits.how_to_raise('max_answer_bytes')} if the "
                      "service sends answers that large", "max_answer_bytes", limit)


def request_id(headers: Mapping[str, str]) -> str | None:
    for name in ("x-request-id", "request-id", "x-amzn-requestid", "x-correlation-id"):
        if headers.get(name):
            return headers[name]
    return None
