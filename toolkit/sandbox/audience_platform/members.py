"""Audience memberships of the audience platform emulator: who is in which audience.

Seeded memberships are ranges of the profile index (`Layout`, audience_platform_seed); a profile
written through `segments` keeps its own set, and audiences filled outright (an import, an analytics
synchronisation) keep explicit member sets. Counts follow every change without a scan.
"""
from __future__ import annotations

__all__ = ["Memberships"]

from collections import Counter

from toolkit.sandbox.audience_platform.seed import Layout, Population


class Memberships:
    """Who is in which audience: seeded ranges (Layout), per-profile overrides, explicit audiences."""

    def __init__(self, layout: Layout, population: Population, order: dict[str, int]) -> None:
        self.layout, self.population, self.order = layout, population, order
        self.override: dict[str, set[str]] = {}        # profile → its own audiences (written to)
        self.explicit: dict[str, set[str]] = {}        # audience → members (imported, synchronised)
        self.explicit_of: dict[str, set[str]] = {}     # profile → explicit audiences holding it
        self.lost: Counter[str] = Counter()            # seeded members no longer counted by the layout
        self.added: Counter[str] = Counter()           # members through overrides

    def _base(self, profile_id: str) -> list[str]:
        index = self.population.index(profile_id)
        return self.layout.of(index) if index is not None else []

    def _own(self, profile_id: str) -> set[str] | list[str]:
        return self.override[profile_id] if profile_id in self.override else self._base(profile_id)

    def of(self, profile_id: str) -> list[str]:
        found = {a for a in self._own(profile_id) if a not in self.explicit}
        found |= self.explicit_of.get(profile_id, set())
        return sorted(found, key=lambda a: self.order.get(a, len(self.order)))

    def has(self, audience_id: str, profile_id: str) -> bool:
        if audience_id in self.explicit:
            return profile_id in self.explicit[audience_id]
        if profile_id in self.override:
            return audience_id in self.override[profile_id]
        index = self.population.index(profile_id)
        return index is not None and self.layout.has(audience_id, index)

    def count(self, audience_id: str) -> int:
        if audience_id in self.explicit:
            return len(self.explicit[audience_id])
        return self.layout.size(audience_id) - self.lost[audience_id] + self.added[audience_id]

    def _release(self, profile_id: str, fresh: bool) -> None:
        """Stop counting the profile's own memberships (before they change or the profile goes)."""
        if profile_id in self.override:
            self.added.subtract(self.override.pop(profile_id))
        elif not fresh:
            self.lost.update(self._base(profile_id))

    def set_profile(self, profile_id: str, audiences: set[str], fresh: bool = False) -> None:
        """The profile's audiences, as written through `segments` (fresh: a profile just created)."""
        self._release(profile_id, fresh)
        own = {a for a in audiences if a not in self.explicit}
        self.override[profile_id] = own
        self.added.update(own)
        for audience_id in self.explicit:
            members = self.explicit[audience_id]
            if audience_id in audiences:
                members.add(profile_id)
                self.explicit_of.setdefault(profile_id, set()).add(audience_id)
            elif profile_id in members:
                members.discard(profile_id)
                self.explicit_of[profile_id].discard(audience_id)

    def drop(self, profile_id: str) -> None:
        self._release(profile_id, fresh=False)
        for audience_id in self.explicit_of.pop(profile_id, set()):
            self.explicit[audience_id].discard(profile_id)

    def replace(self, audience_id: str, members: set[str]) -> None:
        """The audience's members set outright (an import, a synchronisation)."""
        for profile_id in self.explicit.get(audience_id, set()):
            self.explicit_of[profile_id].discard(audience_id)
        self.explicit[audience_id] = set(members)
        for profile_id in members:
            self.explicit_of.setdefault(profile_id, set()).add(audience_id)
