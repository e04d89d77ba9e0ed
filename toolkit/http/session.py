"""The HTTP layer: one requests Session per client, auth per scheme, retries, a rate budget, redaction.

Retries cover 408, 429, 5xx and connection errors, with exponential backoff and full jitter bounded by
`max_backoff`, honouring `Retry-After` in seconds or as an HTTP date (a wait of 10 s or more is logged as
a warning; one longer than `max_retry_after` is not waited for and the 429 is returned). Only what is safe
to repeat (GET, PUT, DELETE, a merge patch, a POST declared safe, the token request) is retried on 5xx and
dropped connections; anything is retried on 429, which the service refused before doing anything.
Secrets are held in `Secret` and scrubbed by the client's `Redactor` from every log line and error.
"""
from __future__ import annotations

__all__ = ["ApiKeyAuth", "BasicAuth", "BearerAuth", "HeadersStayHome", "IDEMPOTENT_METHODS",
           "OAuthPasswordAuth", "OneOriginSession", "RETRY_STATUSES", "RateBudget", "Redactor", "RetryPolicy",
           "Secret", "ServiceClock", "Transport", "log", "origin", "request_id", "retry_after", "same_origin",
           "shown_origin"]

import base64
import email.utils
import json
import logging
import os
import random
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter

from toolkit.catalog.masking import MASK

try:
    import fcntl
except ImportError:  # Windows: each process keeps its own budget
    fcntl = None
from toolkit.errors import AuthError, RedirectError, TransportError, error_for, service_message

log = logging.getLogger("toolkit.http.session")

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class Secret:
    """A secret string: shown as *** everywhere; `reveal()` gives it to the one place that sends it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = str(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self):  # pickling would write the secret out
        raise TypeError("a Secret cannot be pickled")


# the credential of an Authorization header, whatever it holds: base64 of a Basic pair does not
# contain the base64 of the password alone unless the username's length fits, so a known-secret
# search cannot be trusted with it
_AUTH_VALUE = re.compile(r"\b(Basic|Bearer)\s+(?!\*\*\*)[A-Za-z0-9+/=._~-]+", re.IGNORECASE)


class Redactor:
    """Replaces every known secret in a text with ***, and the credential of any Authorization header;
    learns tokens as they are issued."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | Secret | None) -> None:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if isinstance(value, str) and len(value) >= 4:
            self._secrets.add(value)

    def add_basic(self, username: str, password: str | Secret) -> None:
        """A Basic pair: the header's whole base64 value is a secret, padding and all."""
        secret = password.reveal() if isinstance(password, Secret) else password
        self.add(secret)
        encoded = base64.b64encode(f"{username}:{secret}".encode()).decode()
        self.add(encoded)
        self.add(encoded.rstrip("="))

    def scrub(self, text: Any) -> str:
        text = str(text)
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return _AUTH_VALUE.sub(lambda match: f"{match.group(1)} {MASK}", text)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5                 # tries in all, the first included
    backoff: float = 0.5              # seconds before the second try; doubles each time
    max_backoff: float = 30.0         # no single wait is longer
    max_retry_after: float = 120.0    # a longer Retry-After is not waited for: the answer is returned
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


class RateBudget:
    """At most `per_second` request starts in any one-second window and `concurrent` at once.

    With `shared` (a path; toolkit.http.client names one per service, address and key), the window
    and the places are shared with every process on this machine that uses the same key, through
    files locked with flock (a notebook and the cron job then split the service's budget instead of
    each taking all of it and meeting 429s); a process that dies lets go of its places with its
    locks. Where flock does not exist (Windows) the budget is this process's own.
    """

    def __init__(self, per_second: float | None, concurrent: int | None, shared: Path | None = None) -> None:
        self.per_second = per_second
        self.waited = 0.0  # seconds requests have waited for the window: what a progress line tells
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(concurrent) if concurrent else None
        self._concurrent = concurrent
        self.shared = shared if shared is not None and fcntl is not None else None
        self._held = threading.local()  # the place file this thread holds, when shared

    def __enter__(self) -> RateBudget:
        if self._slots:
            self._slots.acquire()
            if self.shared is not None:
                self._take_place()
        if self.per_second:
            self._wait_for_window()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._slots:
            held = getattr(self._held, "fd", None)
            if held is not None:
                self._held.fd = None
                fcntl.flock(held, fcntl.LOCK_UN)
                os.close(held)
            self._slots.release()

    def _wait_for_window(self) -> None:
        limit = max(1, int(self.per_second))        # below one a second: still one start per window
        while True:
            with self._lock:
                wait = self._shared_start(limit) if self.shared is not None else None
                if self.shared is None:  # not shared, or its folder cannot be written: this process's own
                    wait = self._start(limit)
                if wait is None:
                    return
                self.waited += wait
            time.sleep(wait)

    def _start(self, limit: int) -> float | None:
        """Start now (None) when the window has room, else how long to wait."""
        now = time.monotonic()
        # a small margin so that the service's own one-second window agrees with ours
        while self._starts and now - self._starts[0] >= 1.05:
            self._starts.popleft()
        if len(self._starts) < limit:
            self._starts.append(now)
            return None
        return max(1.05 - (now - self._starts[0]), 0.001)

    def _shared_start(self, limit: int) -> float | None:
        """`_start` over the window every process with this key shares: its starts (wall-clock
        seconds, 8 bytes each) in a file, read and written under an exclusive flock."""
        try:
            self.shared.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.shared, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            self.shared = None
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, 8 * 1024, 0)
            now = time.time()
            starts = [t for t in struct.unpack(f"<{len(data) // 8}d", data[:len(data) // 8 * 8])
                      if 0 <= now - t < 1.05]
            if len(starts) >= limit:
                return max(1.05 - (now - starts[0]), 0.001)
            starts.append(now)
            os.ftruncate(fd, 0)
            os.pwrite(fd, struct.pack(f"<{len(starts)}d", *starts), 0)
            return None
        finally:
            os.close(fd)  # closing lets go of the lock

    def _take_place(self) -> None:
        """One of the `concurrent` places every process with this key shares: a file of its own per
        place, held with a non-blocking flock; none free, try again shortly."""
        pause = 0.005
        while True:
            for place in range(self._concurrent):
                try:
                    self.shared.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(f"{self.shared}.{place}", os.O_RDWR | os.O_CREAT, 0o600)
                except OSError:  # a folder this process cannot write: the places are its own
                    self.shared = None
                    return
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self._held.fd = fd
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port spelled out where the scheme implies it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def same_origin(sent: str, target: str) -> bool:
    """Whether a redirect from `sent` to `target` stays with the party it was sent to: the same origin,
    or the same host moved from http to https on the default ports (requests' own rule for keeping
    Authorization, which only makes the request safer)."""
    before, after = origin(sent), origin(target)
    return before == after or (before[:2] == ("http", after[1]) and after[0] == "https"
                               and before[2] == 80 and after[2] == 443)


def shown_origin(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


class OneOriginSession(requests.Session):
    """A Session that follows redirects only within the origin a request was sent to.

    requests drops Authorization when a redirect leaves the host, but keeps every other header (the
    asset library's x-api-key and workspace id) and sends a 307/308's body again (a token request's
    password): so a redirect to another origin is refused with RedirectError before anything goes
    there, and nothing it answers reaches a load."""

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        target = super().get_redirect_target(resp)
        if target is not None and not same_origin(resp.url, urljoin(resp.url, target)):
            where = shown_origin(urljoin(resp.url, target))
            raise RedirectError(f"{resp.request.method} {shown_origin(resp.url)}: the service answered "
                                f"{resp.status_code}, a redirect to another origin ({where}); toolkit sends "
                                f"no credentials there and keeps nothing from it. If the service has moved, "
                                f"connect with base_url set to its new address.", where)
        return target

    def resolve_redirects(self, resp: requests.Response, req: requests.PreparedRequest, *args: Any,
                          yield_requests: bool = False, **kwargs: Any) -> Any:
        try:
            yield from super().resolve_redirects(resp, req, *args, yield_requests=yield_requests, **kwargs)
        except RedirectError:
            if not yield_requests:   # requests only peeks at the next hop of one it does not follow
                raise


class HeadersStayHome(requests.Session):
    """A Session that follows redirects anywhere (a download's signed URL moves to a file host) but
    sends the headers named in `private` only to the origin they were first sent to: requests keeps
    every header but Authorization when a redirect leaves the host."""

    def __init__(self, private: Iterable[str] = ()) -> None:
        super().__init__()
        self.private = {name.lower() for name in private}

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        super().rebuild_auth(prepared_request, response)
        # each hop copies the one before: a header dropped where the origin changed stays dropped
        if not same_origin(response.url, prepared_request.url):
            for name in [n for n in prepared_request.headers if n.lower() in self.private]:
                del prepared_request.headers[name]


class BearerAuth(requests.auth.AuthBase):
    def __init__(self, token: Secret) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token.reveal()}"
        return request


class ApiKeyAuth(requests.auth.AuthBase):
    """Credentials sent as headers of their own (the catalog's `Service.key_headers`): header → value."""

    def __init__(self, headers: Mapping[str, Secret | str]) -> None:
        self.headers = dict(headers)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        for name, value in self.headers.items():
            request.headers[name] = value.reveal() if isinstance(value, Secret) else value
        return request


class BasicAuth(requests.auth.AuthBase):
    def __init__(self, username: str, password: Secret) -> None:
        self.username, self.password = username, password

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        pair = f"{self.username}:{self.password.reveal()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        return request


class OAuthPasswordAuth(requests.auth.AuthBase):
    """The OAuth password grant with Basic client credentials; the token is refreshed before it expires
    and once more when the service answers 401 (see `Transport.send`)."""

    def __init__(self, token_url: str, client_id: str, client_secret: Secret, username: str,
                 password: Secret, redactor: Redactor, timeout: tuple[float, float], *, action: str) -> None:
        self.action, self.service = action, action.split(".", 1)[0]      # the catalog's token action
        self.token_url, self.client_id, self.client_secret = token_url, client_id, client_secret
        self.username, self.password, self.redactor, self.timeout = username, password, redactor, timeout
        self._access: Secret | None = None
        self._refresh: Secret | None = None
        self._expires = 0.0
        self._lock = threading.Lock()
        # set by the Transport it is given to, so that the token request is retried like any other
        self.post: Callable[..., requests.Response] | None = None
        self.fetches = 0

    def invalidate(self) -> None:
        with self._lock:
            self._expires = 0.0

    def token(self) -> Secret:
        with self._lock:
            if self._access is None or time.monotonic() >= self._expires - 30:
                self._fetch()
            assert self._access is not None
            return self._access

    def _fetch(self) -> None:
        form = {"grant_type": "password", "username": self.username, "password": self.password.reveal()}
        if self._refresh is not None:
            form = {"grant_type": "refresh_token", "refresh_token": self._refresh.reveal()}
        client = (self.client_id, self.client_secret.reveal())
        # a token request never follows a redirect, even within the origin: its body is the password
        if self.post is not None:
            answer = self.post(self.token_url, data=form, auth=client, allow_redirects=False)
        else:
            answer = requests.post(self.token_url, data=form, timeout=self.timeout, auth=client,
                                   allow_redirects=False)
        if answer.is_redirect:
            raise AuthError(self.service, self.action, answer.status_code,
                            f"the token request was answered with a redirect ({answer.status_code} to "
                            f"{shown_origin(urljoin(self.token_url, answer.headers.get('Location', '')))}); "
                            f"toolkit never sends a password after one: check base_url")
        if answer.status_code in (400, 401) and self._refresh is not None:
            self._refresh = None             # the refresh token expired too: start again from the password
            return self._fetch()
        if answer.status_code != 200:
            try:        # the service's own words ("Bad credentials"), not its JSON
                body = answer.json()
            except ValueError:
                body = answer.text[:300]
            body = json.loads(self.redactor.scrub(json.dumps(body)))
            if answer.status_code == 429 or answer.status_code >= 500:   # still failing after the retries
                raise error_for(self.service, self.action, answer.status_code, "messages", body)
            text = service_message("messages", body, "token request refused")
            raise AuthError(self.service, self.action, answer.status_code, text, body=body)
        try:
            body = answer.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("access_token"), str) or not body["access_token"]:
            raise AuthError(self.service, self.action, answer.status_code,
                            "the token answer holds no access_token: check base_url points at the service")
        self._access = Secret(body["access_token"])
        self.redactor.add(self._access)
        if body.get("refresh_token"):
            self._refresh = Secret(body["refresh_token"])
            self.redactor.add(self._refresh)
        self._expires = time.monotonic() + float(body.get("expires_in") or 3600)
        self.fetches += 1

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        # the token was made fresh before the request took its slot (Transport.send)
        access = self._access if self._access is not None else self.token()
        request.headers["Authorization"] = f"Bearer {access.reveal()}"
        return request


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
    """Sends one request with auth, retries, the rate budget and a timeout; nothing about storage."""

    def __init__(self, *, auth: requests.auth.AuthBase | None, redactor: Redactor,
                 budget: RateBudget | None = None, retry: RetryPolicy | None = None,
                 timeout: tuple[float, float] = (10.0, 60.0), pool: int = 10, trust_env: bool = True,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.session = OneOriginSession()
        # a proxy lookup on every request costs more than a loopback answer; skip it where it can't matter
        self.session.trust_env = trust_env
        adapter = HTTPAdapter(pool_connections=pool, pool_maxsize=pool, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = "toolkit/0.1 (+python-requests)"
        self.auth, self.redactor = auth, redactor
        self.budget = budget or RateBudget(None, None)
        self.retry = retry or RetryPolicy()
        self.timeout, self.sleep = timeout, sleep
        self.requests = 0
        self.clock = ServiceClock()
        if isinstance(auth, OAuthPasswordAuth):
            # the token request is safe to repeat: it follows the same retries as any other
            auth.post = lambda url, **kwargs: self.send("POST", url, idempotent=True, **kwargs)

    def send(self, method: str, url: str, *, idempotent: bool | None = None, repeatable: bool = True,
             auth: Any = None, parts: Callable[[], AbstractContextManager[Any]] | None = None,
             **kwargs: Any) -> requests.Response:
        """The answer to one request, after the retries; raises TransportError when none came.

        `idempotent`: may be sent again after a 5xx or a dropped connection (by default GET, HEAD,
        PUT, DELETE and OPTIONS); any request is sent again after a 429, which the service refused
        before doing anything. `auth` replaces the client's own for this request (the OAuth token
        endpoint takes the client credentials, not a bearer token). `parts`: the multipart files,
        opened afresh for each attempt (a retry must send the whole file again) and closed after it;
        `repeatable=False`: sent once whatever the answer (a stream that cannot be rewound)."""
        if idempotent is None:
            idempotent = method in IDEMPOTENT_METHODS
        reauthed = False
        attempt = 0
        began = time.perf_counter()
        while True:
            attempt += 1
            response, failure = None, None
            if auth is None and isinstance(self.auth, OAuthPasswordAuth):
                self.auth.token()     # outside the rate budget's slots, which the token request takes too
            started = time.perf_counter()
            try:
                with self.budget, (parts() if parts is not None else nullcontext()) as files:
                    self.requests += 1
                    if files is not None:
                        kwargs["files"] = files
                    response = self.session.request(method, url, auth=auth or self.auth, timeout=self.timeout,
                                                    stream=True, **kwargs)
                    _read_body(response)
            # a connection dropped while the body was read surfaces as ChunkedEncodingError
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
                failure = error
            took = (time.perf_counter() - started) * 1000
            if response is not None:
                self.clock.saw(response.headers.get("Date"))
            status = response.status_code if response is not None else type(failure).__name__
            log.debug("%s %s -> %s in %.1f ms (try %d)", method, self.redactor.scrub(url), status, took, attempt)
            if (response is not None and response.status_code == 401 and not reauthed and auth is None
                    and isinstance(self.auth, OAuthPasswordAuth)):
                reauthed = True           # an expired or revoked token: fetch a new one, once
                self.auth.invalidate()
                attempt -= 1
                continue
            retryable = failure is not None or response.status_code in RETRY_STATUSES
            if retryable and not idempotent:
                retryable = response is not None and response.status_code == 429
            retryable = retryable and repeatable
            wait = self.retry.wait(attempt, response) if retryable else 0.0
            if retryable and wait > self.retry.max_retry_after:
                log.warning("%s %s -> %s; the service asks to wait %.0f s, longer than max_retry_after "
                            "(%.0f s): not retried", method, self.redactor.scrub(url), status, wait,
                            self.retry.max_retry_after)
                retryable = False
            if not retryable or attempt >= self.retry.attempts:
                if response is None:
                    error = TransportError(self.redactor.scrub(
                        f"{method} {url}: no answer after {attempt} tries ({type(failure).__name__})"))
                    error.failure, error.tries = type(failure).__name__, attempt
                    error.seconds = time.perf_counter() - began
                    raise error from None
                return response
            level = logging.WARNING if wait >= self.retry.loud_wait else logging.INFO
            log.log(level, "%s %s -> %s; retry %d in %.2f s", method, self.redactor.scrub(url), status, attempt, wait)
            self.sleep(wait)


def _read_body(response: requests.Response) -> None:
    """Read the body in one call: `Response.content` reads it in 10 kB chunks through four layers,
    many times slower for a large page than a single read. Errors as requests raises them."""
    try:
        body = response.raw.read(decode_content=True)
    except urllib3.exceptions.ProtocolError as error:
        raise requests.exceptions.ChunkedEncodingError(error) from error
    except urllib3.exceptions.ReadTimeoutError as error:
        raise requests.ConnectionError(error) from error
    except urllib3.exceptions.DecodeError as error:
        raise requests.exceptions.ContentDecodingError(error) from error
    finally:
        response.raw.release_conn()
    response._content, response._content_consumed = body, True


def request_id(headers: Mapping[str, str]) -> str | None:
    for name in ("x-request-id", "request-id", "x-amzn-requestid", "x-correlation-id"):
        if headers.get(name):
            return headers[name]
    return None
