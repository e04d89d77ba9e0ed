"""The embedded sandbox: the four services emulated on 127.0.0.1, seeded, stateful, with faults.

    with toolkit.sandbox.start(seed=0) as box:
        creds = box.credentials("media_review")   # {"base_url": "http://127.0.0.1:PORT/media_review/v2", "token": ...}
    with toolkit.sandbox.start(drift=True) as box:  # list answers that differ from the catalog
        box.drift                                  # [Drift(service, resource, kind, field, detail), ...]

One HTTP server on an ephemeral port serves every service under `/<service><base path>`; each
service is an Emulator (toolkit/sandbox/emulator.py says how to write one) listed in REGISTRY.
The sandbox reads the catalog but never the client, the workspace or the frames: an emulator that
shared the client's assumptions could not catch its mistakes.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from toolkit import catalog
from toolkit.errors import EmulatorImportError
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.control import CONTROL, Controller
from toolkit.sandbox.drifting import Drift, DriftPlan
from toolkit.sandbox.emulator import Emulator
from toolkit.sandbox.faults import Fault, FaultPlan
from toolkit.sandbox.server import IDLE_TIMEOUT, MAX_BODY, READ_TIMEOUT, App, SandboxServer

__all__ = ["REGISTRY", "Drift", "EmulatorImportError", "Fault", "Sandbox", "available", "serve", "start"]

# service key → module whose EMULATOR attribute is the service's Emulator subclass: one for every
# service of the catalog, in the folder named for it
REGISTRY: dict[str, str] = {key: f"toolkit.sandbox.{key}.service" for key in catalog.SERVICES}


def available() -> dict[str, type[Emulator]]:
    """Every registered emulator; one whose module is missing or fails to import is an error naming it.

    All four services have emulators, so a missing one is a broken checkout or a broken module, and
    serving without it would let its tests pass by skipping and a demo go quietly without it.
    """
    found = {}
    for key, module_name in REGISTRY.items():
        try:
            found[key] = importlib.import_module(module_name).EMULATOR
        except Exception as error:
            raise EmulatorImportError(f"the sandbox's {key} emulator ({module_name}) does not import: "
                                      f"{type(error).__name__}: {error}", name=module_name) from error
    return found


class Sandbox:
    """A running sandbox: URLs, credentials, example ids, secrets, statistics and the virtual clock."""

    def __init__(self, server: SandboxServer, app: App, clock: Clock) -> None:
        self._server, self._app, self.clock = server, app, clock
        self._stopped = False

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def services(self) -> tuple[str, ...]:
        """The services this sandbox serves."""
        return tuple(self._app.emulators)

    def emulator(self, service: str) -> Emulator:
        """The emulator behind a service, for tests that look at its state."""
        try:
            return self._app.emulators[service]
        except KeyError:
            raise KeyError(f"the sandbox serves {', '.join(self.services) or 'nothing'}, not {service!r}") from None

    def url(self, service: str) -> str:
        """The service's base URL, mirroring the real one's path (`.../translation/PD`)."""
        return f"http://127.0.0.1:{self.port}/{service}{self.emulator(service).service.base_path}"

    def credentials(self, service: str) -> dict[str, str]:
        """`base_url` and the service's own secrets: exactly the keys `ws.connect` takes."""
        return {"base_url": self.url(service), **self.emulator(service).credentials()}

    def examples(self, service: str) -> dict[str, Any]:
        """Ids standing in for the analyst's own lists (`profile_ids`, `metric_ids`, ...)."""
        emulator = self.emulator(service)
        with emulator.lock:
            return emulator.examples()

    def secrets(self) -> list[str]:
        """Every secret string the sandbox holds: credentials, issued tokens, secret configuration."""
        held: list[str] = []
        for emulator in self._app.emulators.values():
            with emulator.lock:
                held.extend(s for s in emulator.secrets() if s and s not in held)
        if self._app.controller is not None:
            held.append(self._app.controller.token)
        return held

    def stats(self) -> dict[str, Any]:
        """What the sandbox has seen since it started, as plain dicts of counts:

        `requests`; `by_service`, `by_action` (action id) and `by_method` (`{"GET": 40, "POST": 2}`, the
        HTTP method as sent: what proves a read-only tool sent no write) count them; `max_concurrent`
        and `max_per_second` per service; `faults` injected by kind; `limited` (429s of the services'
        own limits). Every request that reaches a service's routing counts, refused ones too; one
        whose framing is malformed is answered before it is counted.
        """
        return self._app.traffic.snapshot()

    @property
    def drift(self) -> list[Drift]:
        """What this sandbox's list answers send differently from the catalog (`start(drift=...)`):
        one (service, resource, kind, field, detail) per drift, empty when nothing drifts."""
        return list(self._app.drift.drifts) if self._app.drift is not None else []

    def advance(self, **delta: float) -> datetime:
        """Move the virtual clock (`advance(hours=2)`); imports and translation work catch up."""
        now = self.clock.advance(timedelta(**delta))
        for emulator in self._app.emulators.values():
            with emulator.lock:
                emulator.on_advance(now)
        self._app.clear_cache()
        return now

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.stop()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else f"http://127.0.0.1:{self.port}"
        return f"<Sandbox {state} {', '.join(self.services)}>"


def start(seed: int = 0, scale: float = 1, latency_ms: float = 0,
          faults: str | Fault | Iterable[Fault | str] | None = None, mode: str = "client",
          system_version: str = "6.2", port: int = 0, enforce_limits: bool = True,
          emulators: Mapping[str, type[Emulator]] | None = None, cache_reads: bool = False,
          max_body: int = MAX_BODY, read_timeout: float = READ_TIMEOUT,
          idle_timeout: float = IDLE_TIMEOUT, drift: bool | str | Iterable[str] | None = None) -> Sandbox:
    """Serve the emulated services on 127.0.0.1 from a background thread.

    `scale` multiplies the seed data; `faults` as Fault records or `"429@0.05,500#3"`;
    `mode` ("client" or "hosted") and `system_version` shape the translation service;
    `emulators` replaces the registry (tests and benchmarks serve their own); `cache_reads` answers a
    repeated GET from the bytes of its first answer until a write or a clock move, so that client
    benchmarks measure the client rather than the emulator's record rendering. `max_body` is the
    largest request body taken (413 above it); `read_timeout` how long a read within a request waits
    (408 after it), `idle_timeout` how long a kept-alive connection waits for its next request.
    `drift` makes the list answers behind the catalog's Resources differ from their declared shapes,
    the same way for the same seed: True for every kind, or kinds by name (`"extra_field,envelope_key"`
    or a list; toolkit/sandbox/drifting.py lists them); `box.drift` says what drifts where. None or
    False (the default) sends every answer exactly as without it.
    """
    if mode not in ("client", "hosted"):
        raise ValueError(f"mode must be 'client' or 'hosted', not {mode!r}")
    clock = Clock()
    options = {"mode": mode, "system_version": system_version}
    classes = available() if emulators is None else dict(emulators)
    built = {key: cls(seed, scale, clock, options) for key, cls in classes.items()}
    plan = DriftPlan(drift, seed, {key: [action.id for action in emulator.actions]
                                   for key, emulator in built.items()})
    app = App(built, FaultPlan(faults, seed), latency_ms, enforce_limits, cache_reads, max_body, plan, clock)
    server = SandboxServer(app, port, read_timeout, idle_timeout)
    server.start()
    return Sandbox(server, app, clock)


def serve(port: int = 8000, scale: float = 1, seed: int = 0, credentials_file: str | None = None,
          **options: Any) -> None:
    """Serve until Ctrl-C or SIGTERM: `toolkit sandbox --port N --scale S`.

    The credentials go to a JSON file readable by the user alone (secrets are never printed), so that
    another process connects with `ws.connect(service, **json.load(open(path))[service])`. The file
    goes when the sandbox stops, however it is stopped short of SIGKILL (Ctrl-C, `kill`, a closed
    terminal): it holds live secrets.
    """
    with start(seed=seed, scale=scale, port=port, **options) as box, _interrupted_by(*_STOP_SIGNALS):
        # by default in a folder made for it (mode 0700, made exclusively): a predictable name in the
        # shared temp folder let another user plant a link there that the secrets were written through
        folder = None if credentials_file else Path(tempfile.mkdtemp(prefix="toolkit-sandbox-"))
        path = folder / f"credentials-{box.port}.json" if folder else Path(credentials_file or "")
        try:
            box._app.controller = Controller(lambda seconds: box.advance(seconds=seconds))
            control = {CONTROL: {"base_url": f"http://127.0.0.1:{box.port}/{CONTROL}",
                                 "token": box._app.controller.token}}
            _write_privately(path, json.dumps({**{s: box.credentials(s) for s in box.services}, **control},
                                              indent=2))
            print(f"toolkit sandbox on http://127.0.0.1:{box.port} (seed {seed}, scale {scale}); Ctrl-C stops it")
            for service in box.services:
                print(f"  {service:18s} {box.url(service)}")
            print(f"credentials (readable by you alone): {path}", flush=True)
            threading.Event().wait()
        except KeyboardInterrupt:
            print("sandbox stopped", flush=True)
        finally:
            path.unlink(missing_ok=True)
            if folder is not None:
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _write_privately(path: Path, text: str) -> None:
    """`text` in a file only the user can read, never written through a link: a new file made
    exclusively beside `path`, then renamed over it (a rename replaces a link, not what it points to)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)   # O_EXCL, mode 0600
    try:
        with os.fdopen(handle, "w") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# the signals that stop `toolkit sandbox` as Ctrl-C does: `kill`, and a terminal closing
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _interrupted_by(*signals: int) -> Iterator[None]:
    """Within the block, `signals` raise KeyboardInterrupt like SIGINT; the old handlers come back after.

    Only the main thread may set handlers; elsewhere (serve() run from a thread) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _interrupt) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
