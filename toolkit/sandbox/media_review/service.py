"""The media review emulator: the teams of the user, a bare array paged with Scrivener headers.

Teams are snake_case records with nested `account` and `user_role` objects; a property without a
value is null, never absent; timestamps are ISO-8601 with microseconds and `Z`. Storage and member
counts sit against their plan's limits, a few teams over them (what a usage report looks for).
A page size above 100 is cut to 100 rather than refused, as Scrivener does.
"""
from __future__ import annotations

__all__ = ["ACCESS", "COLORS", "EMULATOR", "GB", "KINDS", "LOCATIONS", "MediaReview", "PLANS", "PLAN_WEIGHTS",
           "ROLES", "STUDIOS", "UNITS"]

from datetime import timedelta
from typing import Any

from toolkit.catalog import media_review as catalog
from toolkit.sandbox.clock import iso
from toolkit.sandbox.emulator import Emulator

GB = 1024**3

# name, storage limit, member limit (None: unlimited)
PLANS = (
    ("free", 2 * GB, 2),
    ("pro", 250 * GB, 5),
    ("team", 500 * GB, 15),
    ("enterprise", 10_000 * GB, None),
)
PLAN_WEIGHTS = (1, 3, 4, 2)

STUDIOS = ("Harbor", "Northlight", "Red Kite", "Bluebird", "Atlas", "Sierra", "Granite", "Lumen",
           "Cedar", "Foxglove", "Juniper", "Marlow", "Orchard", "Paper Moon", "Quarry", "Saltwater",
           "Tidewater", "Union Street", "Westwind", "Yellowtail")
KINDS = ("Post", "Edit", "Creative", "Studios", "Color", "Sound", "Motion", "Pictures", "Films",
         "Review", "Agency", "Productions")
UNITS = ("", "", "", " Social Cuts", " Promos", " Dailies", " Brand Team", " Documentary Unit")
LOCATIONS = ("Los Angeles, CA", "New York, NY", "London, UK", "Berlin, DE", "Toronto, ON",
             "Austin, TX", "Sydney, AU", None, None)
ACCESS = ("private", "public", "restricted")
ROLES = ("owner", "admin", "member", "member", "member")
COLORS = ("#5B53FF", "#0AA37F", "#E0544A", "#F2B705", "#1F2A44", "#8E44AD")


class MediaReview(Emulator):
    """Teams of the user, `scale` × 40 of them across `scale` × 3 accounts."""

    catalog = catalog
    collections = {"media_review.list_teams": "teams"}
    clamp_page_size = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user_id = self.rng.uuid()
        accounts = [self._account(n) for n in range(max(1, round(3 * self.scale)))]
        teams = [self._team(n, self.rng.choice(accounts)) for n in range(max(1, round(40 * self.scale)))]
        teams.sort(key=lambda team: team["inserted_at"])
        self.store.collection("teams").extend(teams)

    def _account(self, number: int) -> dict[str, Any]:
        rng = self.rng
        plan, storage_limit, member_limit = rng.weighted(PLANS, PLAN_WEIGHTS)
        created = rng.instant(self.clock.now() - timedelta(days=1500), self.clock.now() - timedelta(days=400))
        return {
            "_type": "account", "id": rng.uuid(), "display_name": f"{rng.choice(STUDIOS)} Media Group",
            "owner_id": self.user_id if number == 0 else rng.uuid(),
            "plan": {"id": rng.uuid(), "name": plan, "title": plan.title(),
                     "storage_limit": storage_limit, "member_limit": member_limit},
            "storage_limit": storage_limit, "member_limit": member_limit,
            "inserted_at": iso(created, 6), "deleted_at": None,
        }

    def _name(self, number: int) -> str:
        studio, kind = STUDIOS[number % len(STUDIOS)], KINDS[(number * 7) % len(KINDS)]
        cycle = number // (len(STUDIOS) * len(KINDS))
        return f"{studio} {kind}{self.rng.choice(UNITS)}" + (f" {cycle + 1}" if cycle else "")

    def _team(self, number: int, account: dict[str, Any]) -> dict[str, Any]:
        rng, now = self.rng, self.clock.now()
        storage_limit, member_limit = account["storage_limit"], account["member_limit"]
        # most teams well inside their limits, about one in twelve over them
        used = rng.uniform(1.0, 1.25) if rng.random() < 0.08 else rng.betavariate(2, 5)
        members = max(1, round((member_limit or 60) * (rng.uniform(1.0, 1.4) if rng.random() < 0.08
                                                       else rng.uniform(0.1, 1.0))))
        projects = rng.randint(0, 60)
        folders = projects * rng.randint(1, 12)
        inserted = rng.instant(now - timedelta(days=900), now - timedelta(days=2))
        updated = rng.instant(inserted, now)
        role = rng.choice(ROLES)
        watermarked = rng.random() < 0.2
        return {
            "_type": "team",
            "id": rng.uuid(),
            "name": self._name(number),
            "account_id": account["id"],
            "creator_id": self.user_id if role == "owner" else rng.uuid(),
            "access": rng.weighted(ACCESS, (6, 1.5, 2.5)),
            "bio": None,
            "location": rng.choice(LOCATIONS),
            "link": None,
            "color": rng.choice(COLORS),
            "dark_theme": rng.random() < 0.5,
            "solo": members == 1,
            "image_64": None, "image_128": None, "image_256": None,
            "storage": int(storage_limit * used),
            "storage_limit": storage_limit,
            "archived_storage": rng.randrange(0, storage_limit // 10),
            "file_count": folders * rng.randint(0, 40),
            "folder_count": folders,
            "project_count": projects,
            "member_count": members,
            "member_limit": member_limit,
            "collaborator_count": rng.randint(0, 3 * members),
            "watermark": {"id": rng.uuid(), "position": "bottom_right", "opacity": 0.4,
                          "text": "CONFIDENTIAL"} if watermarked else None,
            "inserted_at": iso(inserted, 6),
            "updated_at": iso(updated, 6),
            "deleted_at": None,
            "account": account,
            "user_role": {"role": role, "owner": role == "owner", "admin": role in ("owner", "admin"),
                          "team_member": True},
        }

    def examples(self) -> dict[str, Any]:
        teams = self.store["teams"].all()
        return {"team_ids": [t["id"] for t in teams[:5]],
                "account_ids": sorted({t["account_id"] for t in teams})}


EMULATOR = MediaReview
