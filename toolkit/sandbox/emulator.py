"""What an emulated service is made of: Request, Response, Reject, Extra and the Emulator base class.

How to add an emulator (asset_library, audience_platform, translation):

1. Write `toolkit/sandbox/<service>.py` with a subclass of `Emulator` and name it in the module's
   `EMULATOR` attribute. Set `catalog` to the service's catalog module: the routes come from its
   ACTIONS, the base path from its SERVICE, so the emulator never repeats a path.
2. Map the plain actions to store collections in the class attribute `collections`
   (`{"asset_library.list_tags": "tags", "asset_library.get_tag": "tags", ...}`, or
   `Bind("guests", parents={"board_id": "boardId"})` for nested ones). The generic handlers in
   `toolkit.sandbox.memory` then list (with the action's paging envelope), get, create, merge-patch,
   replace and delete them, honouring `Action.status` (201, 204).
3. In `__init__` call `super().__init__(...)`, then build the seed data from `self.rng` (a seeded
   `random.Random`; scale multiplies the record counts) into `self.store`, then add hand-written
   handlers for the special behaviour: `self.handlers["asset_library.delete_board"] = self._delete_board`.
   A handler takes a `Request` and returns a `Response`, or a JSON-able object answered with the
   action's status; `raise Reject(404, "...")` answers in the service's own error shape.
4. Override what differs: `authenticate` (the base checks the service's auth scheme against
   `credentials()` and `self.issued`), `new_id` (integers for translation), `created` (timestamps),
   `credentials`, `secrets` (add secret configuration values), `examples`, `on_advance(now)` (move
   imports and work forward with the virtual clock), `extra_routes` (signed upload/download URLs,
   the OAuth token endpoint: patterns matched against the path after `/<service>`, public by default).
5. A service too big for one module is split into parts that the emulator holds: objects or
   functions in `<service>_*.py` given what they need (the store or a state object, the clock's time,
   the id maker, the other parts they call), never mixins that import the emulator back
   (asset_library: Fields, Boards, Transfers; translation and audience_platform: a shared State
   and the parts over it).
6. Name the module `toolkit/sandbox/<service>/service.py` and its class `EMULATOR`: `REGISTRY` in
   `toolkit/sandbox/__init__.py` finds it by the catalog's service key; a module that is missing or
   does not import is an `EmulatorImportError` naming it, never a service quietly left out.

The server does the rest for every service: routing from the catalog (404/405 in the service's
shape), 401 when `authenticate` says no, the service's own rate limit (`LIMITS` in server.py),
injected faults and latency, statistics. `clamp_page_size = True` makes a page size above the
paging style's maximum be cut instead of refused.

Handlers of one emulator run one at a time (under `self.lock`), so they need no locking of their own;
never sleep in a handler (latency and slow faults are the server's job) and never read wall time.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from types import ModuleType
from typing import Any

from toolkit.catalog.spec import Action, Service
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.exchange import Part, Reject, Request, Response
from toolkit.sandbox.memory import Bind, Memory, generic_handler
from toolkit.sandbox.seeds import Seeds

__all__ = ["ERROR_BODIES", "Bind", "Emulator", "Extra", "Part", "Reject", "Request", "Response"]


@dataclass(frozen=True)
class Extra:
    """A route outside the catalog (signed URLs, the token endpoint), matched after `/<service>`."""
    method: str
    pattern: str                     # a regex with named groups; they become Request.params
    handler: Callable[[Request], Any]
    public: bool = True
    name: str = ""                   # how stats count it; the pattern when empty


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# Each service's own error body (reference/services.md); keyed by service so a new emulator gets it free.
ERROR_BODIES: dict[str, Callable[[int, str, dict[str, Any]], Any]] = {
    "media_review": lambda status, message, extra: {
        "code": status, "message": message,
        "errors": extra.pop("errors", None) or [
            {"code": status, "detail": message, "status": status, "title": _phrase(status)}],
        **extra},
    "asset_library": lambda status, message, extra: {"message": message, **extra},
    "audience_platform": lambda status, message, extra: {
        "message": message, "errors": extra.pop("errors", None) or [message], **extra},
    "translation": lambda status, message, extra: {"messages": extra.pop("messages", None) or [message], **extra},
}


class Emulator:
    """One emulated service; see the module docstring for how to write one."""

    catalog: ModuleType                          # toolkit.catalog.<service>: SERVICE and ACTIONS
    collections: Mapping[str, str | Bind] = {}   # action id → collection answered by the generic handlers

    def __init__(self, seed: int, scale: float, clock: Clock, options: Mapping[str, Any]) -> None:
        self.seed, self.scale, self.clock, self.options = seed, scale, clock, dict(options)
        self.service: Service = self.catalog.SERVICE
        self.actions: tuple[Action, ...] = tuple(self.catalog.ACTIONS)
        key = self.service.key
        self.rng = Seeds(seed, f"{key}:data")           # seed data
        self.ids = Seeds(seed, f"{key}:ids")            # ids of records created through the API
        self.secret_rng = Seeds(seed, f"{key}:secrets")  # its own stream: secrets do not move with scale
        self.store = Memory()
        self.lock = threading.RLock()
        self.issued: list[str] = []                     # tokens handed out at run time
        self.extra_routes: list[Extra] = []
        self._credentials = self.make_credentials()
        self.handlers: dict[str, Callable[[Request], Any]] = {
            action_id: generic_handler(self.catalog_action(action_id), bind, self.store, new_id=self.new_id,
                                       created=self.created, clamp=bool(getattr(self, "clamp_page_size", False)))
            for action_id, bind in self.collections.items()}

    # --- identity -------------------------------------------------------------------------------

    def make_credentials(self) -> dict[str, str]:
        """One value per key `ws.connect` takes: uuids for `*_id` keys, seeded tokens for the rest."""
        return {name: self.secret_rng.uuid() if name.endswith("_id") else self.secret_rng.secret("sbx_")
                for name in self.service.credentials}

    def credentials(self) -> dict[str, str]:
        """The service's own credential keys (the handle adds base_url)."""
        return dict(self._credentials)

    def secrets(self) -> list[str]:
        """Every secret string this emulator holds; subclasses add secret configuration values."""
        held = [self._credentials[k] for k in self.service.secrets if k in self._credentials]
        return held + list(self.issued)

    def examples(self) -> dict[str, Any]:
        """Ids that stand in for the analyst's own lists (`profile_ids`, `metric_ids`, ...)."""
        return {}

    def authenticate(self, request: Request) -> bool:
        """Whether the request carries valid credentials for this service's auth scheme."""
        creds = self._credentials
        if self.service.auth == "api_key":
            return (request.headers.get("x-api-key") == creds.get("api_key")
                    and request.headers.get("x-air-workspace-id") == creds.get("workspace_id"))
        token = request.bearer()
        return token is not None and (token == creds.get("token") or token in self.issued)

    # --- answers --------------------------------------------------------------------------------

    def error(self, status: int, message: str, /, **extra: Any) -> Response:
        """An error answer in the service's own body shape; `extra` may name any field, `status` too."""
        shape = ERROR_BODIES.get(self.service.key, ERROR_BODIES["asset_library"])
        return Response(status, shape(status, message, dict(extra)))

    def new_id(self, collection: str) -> Any:
        """The id of a record created through the API (uuid strings; translation overrides with ints)."""
        return self.ids.uuid()

    def created(self, collection: str, record: dict[str, Any], request: Request) -> dict[str, Any]:
        """Fill what the service adds to a created record (timestamps, defaults); the default adds nothing."""
        return record

    def on_advance(self, now: datetime) -> None:
        """Called after the virtual clock moved; state machines catch up here."""

    def catalog_action(self, action_id: str) -> Action:
        for action in self.actions:
            if action.id == action_id:
                return action
        raise KeyError(f"{self.service.key} catalog has no action {action_id!r}")
