"""What one translation server holds, shared by the parts of its emulator: the reference data
(organizations, users, PA clients, projects, workflows, glossaries and TMs), the submissions with
their documents and targets (columns, see translation_model), upload processes, download activities,
webhook deliveries, id counters, the configured mode and system version, and the virtual clock.

The parts (records, flow, uploads, work, files, projects) are each given this state and the other
parts they call; none of them knows the emulator. The lookups that answer 404 or 400 for an id the
server does not hold live here, because every part needs them.

    state = State(clock, rng, scale, mode="client", version="6.2", paging=actions[0]); seed(state)
"""
from __future__ import annotations

__all__ = ["State", "version_tuple"]

from collections.abc import Mapping
from typing import Any

from toolkit.catalog.spec import Action
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.pages import answer_list
from toolkit.sandbox.seeds import Seeds
from toolkit.sandbox.translation.model import Documents, Rows, Submission, Targets, Workflow


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in str(text).split(".") if part.isdigit())


class State:
    """The data of one translation server and the lookups over it (see the module docstring)."""

    def __init__(self, clock: Clock, rng: Seeds, scale: float, mode: str, version: str, paging: Action,
                 guids: Seeds) -> None:
        self.clock, self.rng, self.scale = clock, rng, scale
        self.guids = guids                          # its own stream: upload processes and downloads
        self.mode, self.version = mode, version
        self.paging = paging                        # the action whose paging a request without one gets
        self.orgs: dict[int, dict[str, Any]] = {}
        self.users: dict[int, list[dict[str, Any]]] = {}
        self.paclients: dict[int, dict[str, Any]] = {}
        self.projects: dict[int, dict[str, Any]] = {}
        self.workflows: dict[int, Workflow] = {}
        self.resources: dict[tuple[str, int], dict[str, list[dict[str, Any]]]] = {}
        self.weighted_projects: list[dict[str, Any]] = []
        self.subs: dict[int, Submission] = {}
        self.docs, self.targets = Documents(), Targets()
        self.active: set[int] = set()                # IN_PROCESS submissions: the clock moves their work
        self.uploads: dict[str, dict[str, Any]] = {}     # by process id (a GUID)
        self.downloads: dict[str, dict[str, Any]] = {}   # by download id (a GUID)
        self.failed_hooks: list[dict[str, Any]] = []
        self.sent_hooks: list[dict[str, Any]] = []
        self.retry_hooks: list[dict[str, Any]] = []
        self.view: tuple[Any, Any] = (None, None)    # the last filtered listing and its rows, for paging
        self.counters = {"submission": 1000, "batch": 0, "quote": 3000, "file": 6000}
        self.example_id = self.counters["submission"] + 1
        self.hour = 0                                # the last hour of virtual time the work moved to

    # --- plumbing --------------------------------------------------------------------------------

    def now_ms(self) -> int:
        return self.clock.epoch_ms()

    def next_id(self, kind: str) -> int:
        self.counters[kind] += 1
        return self.counters[kind]

    def guid(self) -> str:
        """The id of an upload process or a download activity: a GUID, where every record id is an
        integer (the vendor's own client types both as `Guid`, docs/public-specs.md, G9)."""
        return self.guids.uuid()

    def at_least(self, version: str) -> bool:
        return version_tuple(self.version) >= version_tuple(version)

    def page(self, request: Request, rows: Rows | list[Any]) -> Response:
        return answer_list(request, request.action or self.paging, rows)

    # --- lookups ---------------------------------------------------------------------------------

    def lookup(self, table: Mapping[int, Any], value: Any, what: str) -> Any:
        try:
            found = table.get(int(value))
        except (TypeError, ValueError):
            found = None
        if found is None:
            raise Reject(404, f"{what} {value} not found")
        return found

    def sub(self, value: Any) -> Submission:
        """The submission of a path or body id: 404 when there is none."""
        try:
            found = self.subs.get(int(value))
        except (TypeError, ValueError):
            found = None
        if found is None:
            raise Reject(404, f"submission {value} not found")
        return found

    def doc_of(self, s: Submission, value: Any) -> int:
        d = self.docs.position(value)
        if d is None or self.docs.sub[d] != s.id:
            raise Reject(404, f"document {value} not found in submission {s.id}")
        return d

    def target_of(self, s: Submission, value: Any) -> int:
        n = self.targets.position(value)
        if n is None or self.docs.sub[self.targets.doc[n]] != s.id:
            raise Reject(404, f"target {value} not found in submission {s.id}")
        return n

    def own_targets(self, s: Submission, ids: list[int]) -> list[int]:
        """Positions of target ids that must all belong to the submission (else 400, as the service says)."""
        out, strangers = [], []
        for target_id in ids:
            n = self.targets.position(target_id)
            if n is None or self.docs.sub[self.targets.doc[n]] != s.id:
                strangers.append(str(target_id))
            else:
                out.append(n)
        if strangers:
            raise Reject(400, f"targets {', '.join(strangers)} do not belong to submission {s.id}")
        return out
