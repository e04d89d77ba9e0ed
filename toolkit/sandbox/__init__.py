"""The embedded sandbox: the four services emulated on 127.0.0.1, seeded, stateful, with faults.

    with toolkit.sandbox.start(seed=0) as box:
        creds = box.credentials("media_review")   # {"base_url": "http://127.0.0.1:PORT/media_review/v2", "token": ...}

One HTTP server on an ephemeral port serves every service under `/<service><base path>`; each
service is an Emulator (toolkit/sandbox/emulator.py says how to write one) listed in REGISTRY.
The sandbox reads the catalog but never the client, the workspace or the frames: an emulator that
shared the client's assumptions could not catch its mistakes.
"""
from __future__ import annotations

import importlib
import json
import tempfile
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from toolkit.sandbox.clock import Clock
from toolkit.sandbox.emulator import Emulator
from toolkit.sandbox.faults import Fault, FaultPlan
from toolkit.sandbox.server import App, SandboxServer

__all__ = ["REGISTRY", "Fault", "Sandbox", "available", "serve", "start"]

# service key → module whose EMULATOR attribute is the service's Emulator subclass
REGISTRY: dict[str, str] = {
    "media_review": "toolkit.sandbox.media_review",
    "asset_library": "toolkit.sandbox.asset_library",
    "audience_platform": "toolkit.sandbox.audience_platform",
    "translation": "toolkit.sandbox.translation",
}


def available() -> dict[str, type[Emulator]]:
    """The emulators whose modules import; one still being written is skipped, not an error."""
    found = {}
    for key, module_name in REGISTRY.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            # only "this emulator (or its catalog module) is not there yet" is skipped; a broken
            # import inside a module that exists still raises
            if error.name == module_name or (error.name or "").startswith("toolkit.catalog."):
                continue
            raise
        found[key] = module.EMULATOR
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
            raise KeyError(f"the sandbox serves {', '.join(self.services) or 'nothing'}, not {service!r}"
                           " (its emulator may not be written yet)") from None

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
        return held

    def stats(self) -> dict[str, Any]:
        """requests, by_service, by_action, max_concurrent, max_per_second, faults, limited (429s of limits)."""
        return self._app.traffic.snapshot()

    def advance(self, **delta: float) -> datetime:
        """Move the virtual clock (`advance(hours=2)`); imports and translation work catch up."""
        now = self.clock.advance(**delta)
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
          emulators: Mapping[str, type[Emulator]] | None = None, cache_reads: bool = False) -> Sandbox:
    """Serve the emulated services on 127.0.0.1 from a background thread.

    `scale` multiplies the seed data; `faults` as Fault records or `"429@0.05,500#3"`;
    `mode` ("client" or "hosted") and `system_version` shape the translation service;
    `emulators` replaces the registry (tests and benchmarks serve their own); `cache_reads` answers a
    repeated GET from the bytes of its first answer until a write or a clock move, so that client
    benchmarks measure the client rather than the emulator's record rendering.
    """
    if mode not in ("client", "hosted"):
        raise ValueError(f"mode must be 'client' or 'hosted', not {mode!r}")
    clock = Clock()
    options = {"mode": mode, "system_version": system_version}
    classes = available() if emulators is None else dict(emulators)
    built = {key: cls(seed, scale, clock, options) for key, cls in classes.items()}
    app = App(built, FaultPlan(faults, seed), latency_ms, enforce_limits, cache_reads)
    server = SandboxServer(app, port)
    server.start()
    return Sandbox(server, app, clock)


def serve(port: int = 8000, scale: float = 1, seed: int = 0, credentials_file: str | None = None,
          **options: Any) -> None:
    """Serve until Ctrl-C: `toolkit sandbox --port N --scale S`.

    The credentials go to a JSON file readable by the user alone (secrets are never printed), so that
    another process connects with `ws.connect(service, **json.load(open(path))[service])`.
    """
    with start(seed=seed, scale=scale, port=port, **options) as box:
        path = Path(credentials_file or Path(tempfile.gettempdir()) / f"toolkit-sandbox-{box.port}.json")
        path.touch(mode=0o600)
        path.chmod(0o600)
        path.write_text(json.dumps({s: box.credentials(s) for s in box.services}, indent=2))
        print(f"toolkit sandbox on http://127.0.0.1:{box.port} (seed {seed}, scale {scale}); Ctrl-C stops it")
        for service in box.services:
            print(f"  {service:18s} {box.url(service)}")
        print(f"credentials (readable by you alone): {path}")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("sandbox stopped")
        finally:
            path.unlink(missing_ok=True)
