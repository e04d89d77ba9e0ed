"""Typing a long walk's pages in a helper process, so that the walk uses a second core: off unless
TOOLKIT_TYPING_HELPER=1 says so.

Off by default because on a busy machine it does not pay: starting it costs some 0.7 CPU-seconds and
120 MB, and handing each page over and back adds CPU the walk would not spend typing it itself; with two
cores shared by other work a cold pull of 300,000 notifications took 2.1-2.6 CPU-s with it against
1.6-1.7 without, at no better speed (docs/architecture/pull-speed.md, benchmarks/fetch.py). It can
still pay on an idle machine with cores to spare.

A walk holds the GIL for the HTTP exchange, for decoding each answer and for typing its rows into
Arrow; typing is the larger part, so one process cannot go faster than one core however many
threads it has. Once a walk proves long (a few pages of some size), its pages go to one helper
process, spawned once per session and kept: the walk only reads how many rows came and where the
next page is (`decoding.page_decoder(raw=True)`), sends the answer's bytes, and gets an Arrow table
back (the IPC format: a copy of buffers, no Python objects). Tables come back in page order and at
most IN_FLIGHT pages wait, so memory stays bounded. Once the helper is up, every page of every walk
goes to it, whatever its size, so that a fan-out member's pages travel together.

The helper imports only what typing needs, no pandas, DuckDB or widgets, so it stays small (its
size is in docs/architecture/pull-speed.md). Pages are typed here until it is up, and here for good if it cannot start or dies (the pages in flight are
typed again here): the result is the same table either way.
"""
from __future__ import annotations

__all__ = ["IN_FLIGHT", "PIPE_BYTES", "SMALLEST_PAGE", "START_AFTER_PAGES", "Typist", "enabled", "log", "stop",
           "type_pages"]

import atexit
import contextlib
import gc
import logging
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, BinaryIO

import pyarrow as pa

from toolkit import catalog
from toolkit.catalog.paging import Paging
from toolkit.catalog.spec import Action, Resource
from toolkit.http.answers import loads as exact_json
from toolkit.pull import decoding, frames

START_AFTER_PAGES = 2         # a walk this long is likely long: start the helper (once per session)
SMALLEST_PAGE = 32 * 1024     # bytes: START_AFTER_PAGES pages this large start the helper
IN_FLIGHT = 4                 # pages sent and not yet typed, at most
PIPE_BYTES = 1 << 20          # Linux's default upper bound for an unprivileged process
_FRAME = struct.Struct("<Q")

log = logging.getLogger(__name__)


def enabled() -> bool:
    """Whether long walks type their pages in the helper: TOOLKIT_TYPING_HELPER=1 (module docstring)."""
    return os.environ.get("TOOLKIT_TYPING_HELPER", "0").lower() in ("1", "true", "on", "yes")


class _Helper:
    """The helper process and the two threads that talk to it over its stdin and stdout.

    A plain `python -m toolkit.pull.typist`, not multiprocessing: a spawned multiprocessing child imports
    the analyst's `__main__`, which re-runs a script that has no `if __name__ == "__main__"` guard.
    Requests are answered in order, so the answers resolve the waiting futures first in, first out.
    """

    def __init__(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               "TOOLKIT_TYPIST_PARENT": str(os.getpid())}
        self.process = subprocess.Popen([sys.executable, "-m", "toolkit.pull.typist"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        for pipe in (self.process.stdin, self.process.stdout):
            _widen(pipe)
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.answers: deque[Future] = deque()
        self.lock = threading.Lock()
        self.broken = False
        threading.Thread(target=self._send, name="toolkit-typist-send", daemon=True).start()
        threading.Thread(target=self._receive, name="toolkit-typist-receive", daemon=True).start()
        self.ready = self.submit(b"hello")

    def submit(self, payload: bytes) -> Future:
        future: Future = Future()
        with self.lock:
            if self.broken:
                raise BrokenPipeError("the typing helper has stopped")
            self.answers.append(future)
            self.outbox.put(payload)
        return future

    def _send(self) -> None:
        pipe = self.process.stdin
        try:
            while (payload := self.outbox.get()) is not None:
                pipe.write(_FRAME.pack(len(payload)))
                pipe.write(payload)
                pipe.flush()
        except (OSError, ValueError):
            self._fail()

    def _receive(self) -> None:
        pipe = self.process.stdout
        try:
            while header := pipe.read(_FRAME.size):
                answer = pipe.read(_FRAME.unpack(header)[0])
                with self.lock:
                    future = self.answers.popleft()
                if not future.set_running_or_notify_cancel():
                    continue          # the walk that asked has ended (Typist.close)
                kind, value = answer[:1], answer[1:]
                if kind == b"+":
                    future.set_result(pa.py_buffer(value))
                else:
                    future.set_exception(_error_of(value))
        except (OSError, ValueError, IndexError):
            pass
        finally:                      # whatever ended the loop, nobody waits for ever
            self._fail()

    def _fail(self) -> None:
        with self.lock:
            self.broken, waiting = True, list(self.answers)
            self.answers.clear()
        for future in waiting:
            if future.set_running_or_notify_cancel():
                future.set_exception(BrokenPipeError("the typing helper has stopped"))

    def stop(self) -> None:
        self.outbox.put(None)
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._fail()


def _widen(pipe: BinaryIO) -> None:
    """A pipe that holds a whole page (Linux): a 64 kB pipe splits each page into a dozen writes and
    reads, and each of those waits for the GIL, which the walk holds for milliseconds at a time."""
    with contextlib.suppress(OSError, AttributeError):
        import fcntl
        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)


def _error_of(pickled: bytes) -> BaseException:
    try:
        error = pickle.loads(pickled)
    except Exception as failure:      # an exception class that does not unpickle
        return RuntimeError(f"typing a page failed in the helper, and its error did not come back: {failure}")
    return error if isinstance(error, BaseException) else RuntimeError(repr(error))


_lock = threading.Lock()
_helper: _Helper | None = None


def _start() -> None:
    global _helper
    with _lock:
        if _helper is None:
            try:
                _helper = _Helper()
            except OSError as error:      # no interpreter to start: type here
                log.warning("toolkit: the typing helper did not start (%s); pages are typed in this process", error)


def _up() -> _Helper | None:
    """The helper if it has started and answered, else None."""
    helper = _helper
    if helper is None or helper.broken or not helper.ready.done():
        return None
    if helper.ready.exception() is not None:
        helper.broken = True
        return None
    return helper


def stop() -> None:
    """Stop the helper (it starts again on the next long walk)."""
    global _helper
    with _lock:
        helper, _helper = _helper, None
    if helper is not None:
        helper.stop()


atexit.register(stop)


def _typed(pages: list[list], resource: Resource, parent: dict | None) -> pa.Table:
    """Pages' rows as one typed table, wherever they are typed."""
    return frames.to_arrow(pages[0] if len(pages) == 1 else decoding.joined(pages, resource), resource,
                           parent=parent)


# --- in the helper ---------------------------------------------------------------------------------

_decoders: dict[tuple[str, str], Any] = {}


def type_pages(service: str, name: str, contents: list[bytes], parent: dict | None) -> pa.Buffer:
    """Answers of a walk of `service.name`, typed together as `frames.to_arrow` types their rows, as an
    Arrow IPC stream."""
    resource = catalog.resource(service, name)
    action = catalog.ACTIONS[resource.action]
    if (service, name) not in _decoders:
        _decoders[service, name] = decoding.page_decoder(resource, action.paging)
    decode = _decoders[service, name]
    pages = []
    for content in contents:
        body = decode(content) if decode is not None else None
        pages.append(decoding.rows_of(resource, action, exact_json(content) if body is None else body))
    table = _typed(pages, resource, parent)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    """The helper's loop: a framed pickle (service, name, answer bytes, parent) in, `+` and an Arrow
    IPC stream out, or `-` and the pickled exception."""
    gc.disable()      # pages are typed and dropped; nothing here lives long enough to form cycles
    while header := inbox.read(_FRAME.size):
        request = inbox.read(_FRAME.unpack(header)[0])
        try:
            answer = b"+" + (b"" if request == b"hello" else type_pages(*pickle.loads(request)).to_pybytes())
        except Exception as error:     # the walk raises it, as if typed there
            try:
                answer = b"-" + pickle.dumps(error)
                pickle.loads(answer[1:])         # an exception whose __init__ takes other arguments
            except Exception:
                answer = b"-" + pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
        outbox.write(_FRAME.pack(len(answer)))
        outbox.write(answer)
        outbox.flush()



# --- in the walk -----------------------------------------------------------------------------------

class Typist:
    """Types one walk's pages, here or in the helper, and gives the tables back in page order.

        typist = Typist(resource, action)
        for page in client.pages(action, decode=typist.decode):
            typist.put(page.rows, page.response.content)
            yield from typist.typed()
        yield from typist.typed(everything=True)
    """

    def __init__(self, resource: Resource, action: Action, style: Paging | None = None) -> None:
        self.resource, self.action = resource, action
        self.style = style or action.paging
        record = action.response == "record"      # rows inside one record: parsed whole, typed here
        self.here = None if record else decoding.page_decoder(resource, action.paging)
        self.counted = None if record else decoding.page_decoder(resource, action.paging, raw=True)
        self.on = enabled() and self.counted is not None
        self.large = 0               # pages large enough to be worth sending
        # in page order: [table or Future, the pages (rows, answer bytes), parent columns, progress step]
        self.waiting: deque[list] = deque()
        # drift entries the walk saw (envelopes), put on the next table typed (toolkit.pull.drift reads them)
        self.notes: deque[list] = deque()

    def decode(self, content: bytes) -> Any | None:
        """For Client.pages: the answer with its rows Structs to type here, or JSON text to send.
        Once the helper is up every page goes to it, so that a fan-out member's pages go together.
        An answer that does not fit is parsed here, and an envelope whose rows are not under the
        declared key has them put there (`decoding.mend`), so that the walk goes on with them."""
        up = self.on and _up() is not None
        if self.on and not up and len(content) >= SMALLEST_PAGE:
            self.large += 1
            if self.large == START_AFTER_PAGES:
                _start()
        decode = self.counted if up else self.here
        body = decode(content) if decode is not None else None
        if body is not None or self.action.response == "record":
            return body
        try:    # a number past a double (1e400) as its text, as the client's own parse keeps it
            body = exact_json(content)
        except (ValueError, RecursionError):    # not JSON: Client.parse says what it is
            return None
        body, found = decoding.mend(self.resource, self.style, body)
        if found:
            self.note([[decoding.items_key(self.style), "envelope", 1, found]])
        return body

    def note(self, entries: list[list]) -> None:
        self.notes.extend(entries)

    def put(self, rows: list, content: bytes | None, *, parent: dict | None = None, step: int = 1) -> None:
        """A page's rows (from `decode` or parsed); `content` is the answer they came from."""
        self.put_pages([(rows, content)], parent=parent, step=step)

    def put_pages(self, pages: list[tuple[list, bytes | None]], *, parent: dict | None = None,
                  step: int = 1) -> None:
        """Several pages' rows and answers (a fan-out member's), typed into one table."""
        helper = _up() if pages and all(isinstance(rows, decoding.RawRows) for rows, _ in pages) else None
        typed: Any = None
        if helper is not None:
            request = (self.resource.service, self.resource.name, [content for _, content in pages], parent)
            with contextlib.suppress(BrokenPipeError):
                typed = helper.submit(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        if typed is None:
            typed = self._here(pages, parent)
        self.waiting.append([typed, pages, parent, step])

    def _here(self, pages: list[tuple[list, bytes | None]], parent: dict | None) -> pa.Table:
        rows = [decoding.rows_of(self.resource, self.action, exact_json(content))
                if isinstance(rows, decoding.RawRows) else rows   # meant for the helper, which is gone
                for rows, content in pages]
        return _typed(rows, self.resource, parent)

    def typed(self, *, everything: bool = False) -> Iterator[tuple[pa.Table, int]]:
        """The tables typed so far in page order, with their progress steps; with `everything`, all of
        them (waiting for the helper). Waits for the oldest page when too many are in flight."""
        while self.waiting:
            entry = self.waiting[0]
            typed = entry[0]
            if isinstance(typed, Future):
                in_flight = sum(isinstance(e[0], Future) for e in self.waiting)
                if not (everything or typed.done() or in_flight > IN_FLIGHT):
                    return
                try:
                    table = pa.ipc.open_stream(typed.result()).read_all()
                except BrokenPipeError:         # the helper died: these pages are typed here
                    table = self._here(entry[1], entry[2])
            else:
                table = typed
            self.waiting.popleft()
            if self.notes:
                notes = []
                while self.notes:       # fan-out threads may note meanwhile: taken one by one
                    notes.append(self.notes.popleft())
                table = frames.noted(table, notes)
            yield table, entry[3]

    def close(self) -> None:
        """Drop what is still waiting (an abandoned or failed walk)."""
        for typed, *_ in self.waiting:
            if isinstance(typed, Future):
                typed.cancel()
        self.waiting.clear()


def _die_with(parent: int) -> None:
    """End this helper when the process that started it is gone (kill -9 leaves no one to close its
    stdin while another process may hold the pipe): a thread looks at the parent's pid every half
    second. Not PR_SET_PDEATHSIG: it fires when the starting thread ends (a refresh's worker), not
    the process."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)
    if os.getppid() != parent:
        os._exit(0)
    threading.Thread(target=watch, name="toolkit-typist-parent", daemon=True).start()


if __name__ == "__main__":
    _die_with(int(os.environ.get("TOOLKIT_TYPIST_PARENT") or os.getppid()))
    # the answers keep stdout's pipe to themselves: anything a library prints goes where stderr goes
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, answers)
