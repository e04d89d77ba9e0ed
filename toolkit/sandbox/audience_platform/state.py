"""What one audience platform holds, shared by the parts of its emulator: the store (audiences,
properties, users, query definitions), the profiles (seeded ones computed from their index by
`Population`, written ones kept as dicts, deleted ones remembered), the memberships, the
notification log, the scheduled imports, the files the import can read, and the integrations'
configurations, analytics audiences and JWKS endpoints.

The parts (profiles, audiences, integrations, notices) are each given this state; none of them knows
the emulator. What several parts need lives here: finding a profile, and raising a notification.

    state = State(store, clock, seed, ids, new_id, population, members, log, order, files_root)
"""
from __future__ import annotations

__all__ = ["State"]

from collections.abc import Callable
from typing import Any

from toolkit.sandbox.audience_platform.log import NOTICE_TYPES, NotificationLog
from toolkit.sandbox.audience_platform.members import Memberships
from toolkit.sandbox.audience_platform.seed import Population
from toolkit.sandbox.clock import Clock, iso
from toolkit.sandbox.exchange import Reject
from toolkit.sandbox.memory import Memory
from toolkit.sandbox.seeds import Seeds


class State:
    """The data of one audience platform (see the module docstring).

    `new_id` names a record created through the API; `ids` draws run-time ids (notifications,
    communication requests); `files_root` is the path under which the sandbox serves import files.
    """

    def __init__(self, store: Memory, clock: Clock, seed: int, ids: Seeds, new_id: Callable[[str], Any],
                 population: Population, members: Memberships, notices: NotificationLog,
                 audience_order: dict[str, int], files_root: str) -> None:
        self.store, self.clock, self.seed, self.ids, self.new_id = store, clock, seed, ids, new_id
        self.epoch = clock.now()
        self.population, self.members, self.notices = population, members, notices
        self.audience_order = audience_order         # audience id → its place (memberships sort by it)
        self.files_root = files_root
        self.profiles: dict[str, dict[str, Any]] = {}      # profiles written to (or created)
        self.deleted: set[str] = set()                     # seeded profiles deleted
        self.jobs: list[dict[str, Any]] = []               # imports waiting for the clock
        self.files: dict[str, bytes] = {}                  # import packages served under files_root
        self.remote_files: dict[str, bytes] = {}           # example URLs the import can read
        self.configs: dict[str, dict[str, Any]] = {}
        self.analytics: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.stale_definitions: set[str] = set()
        self.jwks: dict[str, Any] = {}

    def profile(self, profile_id: str) -> dict[str, Any] | None:
        record = self.profiles.get(profile_id)
        if record is not None or profile_id in self.deleted:
            return record
        index = self.population.index(profile_id)
        return None if index is None else self.population.profile(index)

    def require_profile(self, profile_id: str) -> dict[str, Any]:
        if not profile_id.strip():
            raise Reject(400, "profileId must not be blank")
        record = self.profile(profile_id)
        if record is None:
            raise Reject(404, f"profile {profile_id} not found")
        return record

    def notify(self, kind: str, severity: str, message: str, details: dict[str, Any]) -> None:
        """Raise a notification, newest first in the log."""
        source = next((s for t, s, *_ in NOTICE_TYPES if t == kind), "platform")
        self.notices.add({"id": self.ids.uuid(), "type": kind, "severity": severity, "message": message,
                          "created": iso(self.clock.now()), "read": False, "source": source,
                          "details": details})
