"""A connection: one service's client bound to a workspace; the object a notebook works with.

    tm = ws.connect("translation", **sandbox.credentials("translation"))
    tm.get_submission(submission_id=1001)            # any action, checked, sent by the client
    tm.call("translation.save_submission", ...)      # a write: sent, audited, its loads marked stale
    targets = tm.fetch("targets")                    # pages → typed DataFrame → a load of the workspace

The client speaks HTTP and knows no storage; the workspace stores and knows no HTTP; the connection
holds one of each and is the only place where they meet (with `toolkit.pull.fetch`, `toolkit.connection.audit` and
`toolkit.connection.effects`, which it hands both). It owns neither: closing the workspace ends what the
connection can do with it, and a write sent then is refused before it leaves, never sent unrecorded.
The screen is above it: `form` and `forms` build what the `Screens` given at construction build
(`toolkit.Workspace.connect` gives toolkit.forms'), so this module imports no widget.
"""
from __future__ import annotations

__all__ = ["Connection", "Screens", "bind", "connection_class"]

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolkit.catalog.spec import Action, Service
from toolkit.connection import audit
from toolkit.errors import ToolkitError, WorkspaceError
from toolkit.http.client import Client, Page
from toolkit.http.methods import with_methods
from toolkit.pull import fetch
from toolkit.pull.fetch import LoadResult

if TYPE_CHECKING:
    from toolkit.http.redaction import Redactor
    from toolkit.http.session import Transport
    from toolkit.http.wire import Prepared
    from toolkit.storage.store import Store


@dataclass(frozen=True)
class Screens:
    """What the screen floor builds for a connection: a form for one write action, a gallery of all."""
    form: Callable[[Connection, str | Action], Any]
    gallery: Callable[[Connection], Any]


class Connection:
    """One service's client bound to a workspace: `call`, `pages`, `fetch`, `pull`, one method per action."""

    def __init__(self, client: Client, workspace: Store, screens: Screens | None = None) -> None:
        self.client, self.workspace, self.screens = client, workspace, screens

    def __repr__(self) -> str:
        return f"<toolkit.Connection {self.client!r} → {self.workspace!r}>"

    # --- what the client knows, said again here so that a notebook needs one object ------------------

    @property
    def service(self) -> Service:
        return self.client.service

    @property
    def base_url(self) -> str:
        return self.client.base_url

    @property
    def version(self) -> str:
        return self.client.version

    @property
    def redactor(self) -> Redactor:
        return self.client.redactor

    @property
    def transport(self) -> Transport:
        return self.client.transport

    @property
    def requests_sent(self) -> int:
        return self.client.requests_sent

    @property
    def service_clock(self) -> datetime | None:
        """The service's clock at its latest answer (its Date header), None before one carried it."""
        return self.client.service_clock

    def action(self, action: str | Action) -> Action:
        return self.client.action(action)

    def prepare(self, action: str | Action, **params: Any) -> Prepared:
        """Check the params and build the request, without sending it (what a preview shows)."""
        return self.client.prepare(action, **params)

    def auth_headers(self) -> dict[str, str]:
        return self.client.auth_headers()

    def pages(self, action: str | Action, **params: Any) -> Iterator[Page]:
        """Walk every page of a list action (`Client.pages`)."""
        return self.client.pages(action, **params)

    def rows(self, action: str | Action, **params: Any) -> list:
        return self.client.rows(action, **params)

    # --- writes are audited ------------------------------------------------------------------------

    def call(self, action: str | Action, *, version: str | None = None,
             headers: Mapping[str, str] | None = None, content_type: str | None = None, **params: Any) -> Any:
        """Check, send and parse one action. A write is recorded in the workspace's `_audit` table and
        marks the loads it changes stale; with the workspace closed or read-only it is refused before
        it is sent (`conn.client.call(...)` sends it without the record, if that is what you want)."""
        prepared = self.client.prepare(action, version=version, headers=headers, content_type=content_type,
                                       **params)
        if not prepared.action.writes:
            return self.client.result_of(prepared.action, self.client.send(prepared))
        self._writable(prepared.action)
        return audit.sent(self.client, self.workspace, prepared, params)

    def _writable(self, entry: Action) -> None:
        if getattr(self.workspace, "closed", False):
            raise WorkspaceError(f"{entry.id} was not sent: the workspace {self.workspace.where} "
                                 "is closed, and a write is recorded in it. Open it again "
                                 "(toolkit.Workspace(path).connect(...)), or send it unrecorded with "
                                 "conn.client.call(...)")
        if getattr(self.workspace, "read_only", False):
            raise WorkspaceError(f"{entry.id} was not sent: the workspace {self.workspace.where} is open "
                                 "read-only and cannot record the write. Open it for writing, or send it "
                                 "unrecorded with conn.client.call(...)")

    # --- datasets ------------------------------------------------------------------------------------

    def fetch(self, resource: str, *, max_age: float | str | timedelta | None = None, refresh: bool = False,
              contract: str = "evolve", **filters: Any) -> Any:
        """A resource as a typed DataFrame, cached in the workspace; reused when younger than max_age
        (seconds, a timedelta, or "90s", "30m", "6h", "2d" as the CLI's --max-age takes them).

            tm.fetch("targets", status=["IN_PROCESS", "READY"], max_age="1h")

        Filters the resource does not need narrow it to a subset, stored as `<resource>__filtered`
        (the frame's `attrs["table"]` says where): the resource's own view keeps its latest whole load.

        Options besides the resource's filters: `refresh=True` pulls again whatever the cache holds;
        `workers=N` bounds the requests in flight (a fan-out's members, or the pages a page-number or
        offset walk asks for ahead; the service's own limit by default, 1 for one at a time);
        `on_error="skip"` completes a fan-out without the members that keep failing, and records them;
        `progress=False` hides the progress bar. Answers that differ from the declared shapes are kept
        and reported (`ws.drift()`, a `DriftWarning`); `contract="freeze"` refuses them instead
        (`ContractError`, nothing written).
        """
        return fetch.fetch(self.client, self.workspace, resource, max_age=max_age, refresh=refresh,
                           contract=contract, **filters)

    def pull(self, resource: str, *, contract: str = "evolve", **options: Any) -> LoadResult:
        """Load a resource into the workspace without building a DataFrame; returns the LoadResult.
        `contract` as for `fetch`."""
        return fetch.pull(self.client, self.workspace, resource, contract=contract, **options)

    # --- the screen, built by what was given ---------------------------------------------------------

    def form(self, action: str | Action) -> Any:
        """An ipywidgets form for a write action: fields, preview, checks, confirm, send.

            library.form("create_board")
        """
        return self._screens().form(self, action)

    def forms(self) -> Any:
        """A gallery of the service's write actions: pick one, fill its form, send it."""
        return self._screens().gallery(self)

    def _screens(self) -> Screens:
        if self.screens is None:
            raise ToolkitError("this connection was made without forms: connect through "
                               "toolkit.Workspace(...).connect(...) to get them")
        return self.screens


def connection_class(service: str) -> type[Connection]:
    """The Connection subclass of a service, with one method per action (built once)."""
    return with_methods(Connection, service)


def bind(client: Client, workspace: Store, screens: Screens | None = None) -> Connection:
    """A connection of the client's service to the workspace."""
    return connection_class(client.service.key)(client, workspace, screens)
