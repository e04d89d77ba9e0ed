"""The one HTTP server of a sandbox: every emulated service under `/<service><base path>` on 127.0.0.1.

The stdlib ThreadingHTTPServer speaking HTTP/1.1 with keep-alive: a thread per connection, so
concurrent clients really overlap (the asset library's limit of 10 at once can be hit), and each
answer goes out in a single write. Measured by benchmarks/sandbox_throughput.py.

One request: the head read and checked (toolkit/sandbox/framing.py: malformed framing 4xx, a body
over `max_body` 413) → what a real server refuses before it reads a body (`App.screen`: a dot
segment 400, missing credentials 401, a content type the action does not take 415) → body → service
from the first segment → route from the catalog → by_action count → the service's own rate limit →
injected fault → 404/405 → 401 → handler (under the emulator's lock) → drift (a list answer sent
in another shape than the catalog declares, `start(drift=...)`, toolkit/sandbox/drifting.py) → latency
→ answer.
A connection waits `idle_timeout` for a request and `read_timeout` for each read within one; a
request that stops arriving is answered 408 and its connection closed.
"""
from __future__ import annotations

__all__ = ["App", "DROP", "IDLE_TIMEOUT", "LIMITS", "LINGER", "MAX_BODY", "MIB", "READ_TIMEOUT", "SMALL_BODY",
           "SandboxServer"]

import contextlib
import email.utils
import socket
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from socketserver import StreamRequestHandler
from typing import Any
from urllib.parse import parse_qs

from toolkit.catalog.spec import CONTENT_TYPES
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.control import CONTROL, Controller
from toolkit.sandbox.drifting import DriftPlan
from toolkit.sandbox.emulator import Emulator
from toolkit.sandbox.exchange import Headers, Reject, Request, Response
from toolkit.sandbox.faults import FaultPlan
from toolkit.sandbox.framing import PHRASES, Malformed, body_length, encode, read_body, read_head
from toolkit.sandbox.routing import Router, dot_segment
from toolkit.sandbox.traffic import Limit, Traffic

# the limits the real services enforce (reference/services.md); only the asset library documents one
LIMITS: Mapping[str, Limit] = {"asset_library": Limit(per_second=15, concurrent=10)}

MIB = 1024 * 1024
# The largest request the toolkit sends is one part of an asset upload (5 MiB by default, more if the
# analyst picks a larger part size) or a translation source file or zip in a multipart form; the
# seeds and tests send at most 6 MiB. 32 MiB leaves room for both, and bounds what one connection
# can make the process hold (a thread per connection: 10 connections hold at most 320 MiB).
MAX_BODY = 32 * MIB
# Each read within a request waits this long for bytes (loopback clients send a body at once; a
# request that stops arriving is a client gone or an attack, answered 408 instead of holding a
# thread forever); an idle keep-alive connection is closed after IDLE_TIMEOUT, which clients notice
# and reconnect (urllib3 checks a pooled connection before reusing it).
READ_TIMEOUT = 30.0
IDLE_TIMEOUT = 300.0
# After a refusal, the unread body is read and dropped for at most this long before closing, so
# that the client is not cut off (a TCP reset) before it reads the answer.
LINGER = 2.0
SMALL_BODY = 65536         # a refused body this small is read and dropped, keeping the connection

DROP = object()   # the answer that is no answer: the connection closes


class App:
    """Routes requests to emulators and applies limits, faults, drift and latency."""

    def __init__(self, emulators: Mapping[str, Emulator], faults: FaultPlan, latency_ms: float = 0,
                 enforce_limits: bool = True, cache_reads: bool = False, max_body: int = MAX_BODY,
                 drift: DriftPlan | None = None, clock: Clock | None = None) -> None:
        self.emulators = dict(emulators)
        self.clock = clock
        self._date: tuple[datetime, str] | None = None
        # None unless something drifts: an answer is then encoded exactly as the handler gave it
        self.drift = drift or None
        self.max_body = max_body
        # Benchmarks measure the client, not the emulator: with cache_reads, a GET answered once is
        # answered again from its bytes until a write to that service or a clock move.
        self.cache: dict[tuple[str, str, str], bytes] | None = {} if cache_reads else None
        self.cache_lock = threading.Lock()
        self.routers = {key: Router(e.service, e.actions, e.extra_routes) for key, e in emulators.items()}
        self.faults = faults
        self.latency = latency_ms / 1000
        self.limits = dict(LIMITS) if enforce_limits else {}
        self.traffic = Traffic()
        self.controller: Controller | None = None    # the clock route of a served sandbox (sandbox.control)

    def http_date(self) -> str | None:
        """The Date every answer carries: the virtual clock's now (None without a clock)."""
        if self.clock is None:
            return None
        now, known = self.clock.now(), self._date
        if known is None or known[0] != now:  # formatted once per clock move, not per answer
            known = self._date = (now, email.utils.format_datetime(now.astimezone(UTC), usegmt=True))
        return known[1]

    def dispatch(self, method: str, target: str, headers: Headers, body: bytes, host: str) -> Any:
        """The encoded answer for one request, or DROP."""
        path, _, query = target.partition("?")
        _, _, rest = path.partition("/")
        key, slash, tail = rest.partition("/")
        emulator = self.emulators.get(key)
        refusal = self._bad_path(emulator, path)
        if key == CONTROL and self.controller is not None and refusal is None:
            return self.controller.answer(method, tail, headers, body)
        if emulator is None or refusal is not None:
            counted = key if emulator else "-"
            self.traffic.arrive(counted, method)
            try:
                if refusal is not None:
                    return refusal
                known = ", ".join(f"/{k}{e.service.base_path}" for k, e in self.emulators.items())
                return Response(404, {"message": f"no service at {path!r}; served: {known}"})
            finally:
                self.traffic.leave(counted)
        self.traffic.arrive(key, method)
        try:
            return self._serve(emulator, method, slash + tail, query, headers, body, host)
        finally:
            self.traffic.leave(key)

    def _bad_path(self, emulator: Emulator | None, path: str) -> Response | None:
        """A 400 for a target that is not a path or holds a dot segment: never resolved, never routed."""
        if not path.startswith("/"):
            problem = f"the request target must be a path starting with /, not {path[:80]!r}"
        elif (segment := dot_segment(path)) is not None:
            problem = f"the path {path[:200]!r} holds the dot segment {segment!r}; send the path without it"
        else:
            return None
        return emulator.error(400, problem) if emulator else Response(400, {"message": problem})

    def screen(self, method: str, target: str, headers: Headers, length: int) -> Response | None:
        """What is refused before a body of `length` bytes (or CHUNKED) is read, or None to read it.

        A real server checks the path, the credentials and the content type from the head,
        so that nobody makes it read (and hold) a body it will not take; a request with no route is
        left to dispatch, after its (bounded) body.
        """
        if length == 0:
            return None
        path = target.partition("?")[0]
        key, _, tail = path.removeprefix("/").partition("/")
        emulator = self.emulators.get(key)
        answer = self._bad_path(emulator, path)      # (a body over max_body was refused by its framing)
        if answer is None and emulator is not None:
            route, params, _ = self.routers[key].match(method, "/" + tail)
            if route is None:
                return None
            request = Request(method, "/" + tail, {}, headers, b"", key, "", "", params, route.action,
                              route.version)
            if not route.public and not emulator.authenticate(request):
                answer = emulator.error(401, "Unauthorized: missing or invalid credentials")
            elif route.action is not None and (problem := _unaccepted(route.action, headers)):
                answer = emulator.error(415, problem)
            if answer is not None:
                self.traffic.routed(route.name)
        if answer is not None:
            self.traffic.arrive(key if emulator else "-", method)
            self.traffic.leave(key if emulator else "-")
        return answer

    def _serve(self, emulator: Emulator, method: str, path: str, query: str, headers: Headers,
               body: bytes, host: str) -> Any:
        key = emulator.service.key
        route, params, allowed = self.routers[key].match(method, path)
        self.traffic.routed(route.name if route else f"{key}:unrouted")
        response = self._limit(emulator, route.action.id if route and route.action else None)
        if response is DROP:
            return DROP
        if response is None:
            if route is None:
                response = (emulator.error(405, f"{method} is not allowed on {path}")
                            if allowed else emulator.error(404, f"no route for {method} {path}"))
                if allowed:
                    response.headers["Allow"] = ", ".join(sorted(set(allowed)))
            else:
                root = f"http://{host}/{key}"
                request = Request(method, path, parse_qs(query, keep_blank_values=True), headers, body, key,
                                  root, root + emulator.service.base_path, params, route.action,
                                  route.version)
                response = self._cached(emulator, route, request, query)
        if self.latency:
            time.sleep(self.latency)
        return response

    def _limit(self, emulator: Emulator, action_id: str | None) -> Any:
        """The service's own 429, an injected fault's answer, DROP, or None to go on."""
        key = emulator.service.key
        limit = self.limits.get(key)
        if limit is not None and not self.traffic.admit(key, limit):
            return _with_headers(emulator.error(429, "Too Many Requests"), {"Retry-After": "1"})
        fault = self.faults.decide(key, action_id) if self.faults else None
        if fault is None:
            return None
        self.traffic.fault(fault.kind)
        if fault.kind == "drop":
            return DROP
        if fault.kind == "slow":
            time.sleep(fault.delay_ms / 1000)
            return None
        status = int(fault.kind)
        answer = emulator.error(status, f"{PHRASES[status]} (injected by the sandbox)")
        if status == 429:
            seconds = fault.retry_after
            answer.headers["Retry-After"] = str(int(seconds)) if float(seconds).is_integer() else str(seconds)
        return answer

    def _cached(self, emulator: Emulator, route: Any, request: Request, query: str) -> bytes | Response:
        if self.cache is None:
            return self._answer(emulator, route, request)
        key = (emulator.service.key, request.path, query)
        if request.method == "GET":
            found = self.cache.get(key)
            if found is not None and (route.public or emulator.authenticate(request)):
                return found
        answer = self._answer(emulator, route, request)
        with self.cache_lock:
            if request.method != "GET":
                for stale in [k for k in self.cache if k[0] == key[0]]:
                    del self.cache[stale]
            elif isinstance(answer, bytes) and answer.startswith(b"HTTP/1.1 200"):
                self.cache[key] = answer
        return answer

    def clear_cache(self) -> None:
        if self.cache is not None:
            with self.cache_lock:
                self.cache.clear()

    def _answer(self, emulator: Emulator, route: Any, request: Request) -> bytes | Response:
        if not route.public and not emulator.authenticate(request):
            return emulator.error(401, "Unauthorized: missing or invalid credentials")
        handler = route.handler or emulator.handlers.get(route.name)
        if handler is None:
            return emulator.error(501, f"the sandbox does not emulate {route.name} yet")
        with emulator.lock:
            try:
                result = handler(request)
                if not isinstance(result, Response):
                    status = route.action.status if route.action else 200
                    result = Response(status, None if status == 204 else result)
                if self.drift is not None:
                    result = self.drift.apply(route.action.id if route.action else None, result)
                # serialised under the lock: another request may be changing these records
                return encode(result, date=self.http_date())
            except Reject as reject:
                return _with_headers(emulator.error(reject.status, reject.message, **reject.extra),
                                     reject.headers)
            except Exception as error:
                traceback.print_exc(file=sys.stderr)
                return emulator.error(500, f"sandbox error in {route.name}: {type(error).__name__}: {error}")


def _unaccepted(action: Any, headers: Headers) -> str | None:
    """Why a body's Content-Type is not one the action takes, or None when it is.

    A JSON family type (merge patch, JSON patch) also takes plain application/json, as the services'
    frameworks do; no Content-Type at all is refused like any other, since the body cannot be read.
    """
    if not action.body:
        return None
    accepted = {CONTENT_TYPES[kind] for kind in action.content_types}
    if accepted & {CONTENT_TYPES["merge_patch"], CONTENT_TYPES["json_patch"]}:
        accepted.add(CONTENT_TYPES["json"])
    given = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if given in accepted:
        return None
    return (f"Content-Type {given or 'none'!r} is not supported by {action.id}; "
            f"send {' or '.join(sorted(accepted))}")


def _with_headers(response: Response, headers: Mapping[str, str]) -> Response:
    response.headers.update(headers)
    return response


class _Handler(StreamRequestHandler):
    """HTTP/1.1 with keep-alive, parsed by hand: the stdlib's email-based header parser and its
    per-request logging cost more than answering a small request does."""

    disable_nagle_algorithm = True
    server: SandboxServer

    def setup(self) -> None:
        super().setup()
        self.server.connections.add(self.connection)

    def finish(self) -> None:
        self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):      # a client gone before its answer was flushed
            super().finish()

    def handle(self) -> None:
        try:
            while self._one():
                pass
        except (ConnectionError, TimeoutError, OSError):
            pass    # the client went away, stopped sending, or stop() shut the socket

    def _one(self) -> bool:
        """Serve one request; False when the connection is to close."""
        self.connection.settimeout(self.server.idle_timeout)
        line = self.rfile.readline(65537)
        if not line:
            return False
        self.connection.settimeout(self.server.read_timeout)
        app = self.server.app
        try:
            method, target, version, headers = read_head(self.rfile, line)
            length = body_length(method, headers, app.max_body)
        except Malformed as error:
            return self._refuse(Response(error.status, {"message": error.message}), unread=True)
        except TimeoutError:
            return self._refuse(Response(408, {"message": "the request head did not arrive in time"}))
        connection = headers.get("connection", "").lower()
        keep = connection != "close" and (version != "HTTP/1.0" or connection == "keep-alive")
        refusal = app.screen(method, target, headers, length)
        if refusal is not None:
            # the body is not read (or only a small one, dropped), so that nothing it holds is kept
            small = 0 <= length <= SMALL_BODY and "100-continue" not in headers.get("expect", "").lower()
            if small and self._drop(length):
                self.wfile.write(encode(refusal, not keep, app.http_date()))
                return keep
            return self._refuse(refusal, unread=True)
        if headers.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = read_body(self.rfile, length, app.max_body)
        except Malformed as error:
            return self._refuse(Response(error.status, {"message": error.message}), unread=True)
        except TimeoutError:
            return self._refuse(Response(408, {"message": f"the body did not arrive within "
                                                          f"{self.server.read_timeout:g} s"}))
        host = headers.get("host") or "{}:{}".format(*self.server.server_address[:2])
        answer = app.dispatch(method, target, headers, body, host)
        if answer is DROP:
            self.connection.shutdown(socket.SHUT_RDWR)
            return False
        if isinstance(answer, Response):
            answer = encode(answer, not keep, app.http_date())
        elif not keep:
            answer = answer.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
        self.wfile.write(answer)
        return keep

    def _drop(self, length: int) -> bool:
        """Read and drop a small body announced by Content-Length; False if it did not all come."""
        try:
            return len(self.rfile.read(length)) == length
        except TimeoutError:
            return False

    def _refuse(self, answer: Response, unread: bool = False) -> bool:
        """Answer and close; with a body left `unread`, drop what still arrives for a moment first,
        so that the client reads the answer instead of a connection reset."""
        self.wfile.write(encode(answer, close=True, date=self.server.app.http_date()))
        self.wfile.flush()
        if unread:
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)
                self.connection.settimeout(LINGER / 4)
                deadline = time.monotonic() + LINGER
                while time.monotonic() < deadline and self.connection.recv(65536):
                    pass
        return False


class SandboxServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False           # stop() must not wait for idle keep-alive connections
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, app: App, port: int = 0, read_timeout: float = READ_TIMEOUT,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        self.app = app
        self.read_timeout, self.idle_timeout = read_timeout, idle_timeout
        self.connections: set[socket.socket] = set()
        super().__init__(("127.0.0.1", port), _Handler)
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"toolkit-sandbox:{self.port}", daemon=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        # wake the threads that wait on idle keep-alive connections, so nothing answers after stop
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self.server_close()
