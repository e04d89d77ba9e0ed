"""The asset library's seeded assets, computed from their index: nothing stored until written.

Asset `i` (0 ≤ i < count) and its versions are a pure function of (seed key, i): a 64-bit mixer
(splitmix64's finaliser) gives each attribute its own hash, so a filter that needs only an asset's
boards or tags computes just those, and a million assets cost no memory. Ids are UUID v4 strings
whose low 48 bits are a keyed Feistel permutation of the index: `index_of(id)` inverts it and checks
the rest, so a lookup by id needs no table. Creation times grow with the index (a bisect answers the
`createdAt` filters), spread from 2023 to the day before the sandbox clock starts.

    base = BaseAssets(key, 300, board_ids, tag_ids, fields); base.state(7)["versions"][-1]["fileName"]
"""
from __future__ import annotations

__all__ = ["BOARD_TREE", "BaseAssets", "CAMPAIGN_WORDS", "DAY", "DESCRIPTIONS", "DETAILS", "FIELDS",
           "FIELD_ODDS", "GOLDEN", "GUEST_DOMAINS", "GUEST_NAMES", "GUEST_ROLES", "HOUR", "KIND_ASSET",
           "KIND_VERSION", "LEAVES", "LOW48", "M64", "MEMBER_ROLES", "NOW", "PHOTOGRAPHERS", "SMART_TAGS",
           "SUBJECTS", "T0", "TAG_NAMES", "TYPES", "T_END", "compose", "iso_ms", "mix", "type_of_ext"]

import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, overload

from toolkit.sandbox.clock import START

M64 = (1 << 64) - 1
LOW48 = (1 << 48) - 1
GOLDEN = 0x9E3779B97F4A7C15
KIND_ASSET, KIND_VERSION = 1, 2

T0 = int(datetime(2023, 1, 2, tzinfo=UTC).timestamp() * 1000)
NOW = int(START.timestamp() * 1000)
T_END = NOW - 86_400_000                       # seeded assets were all created before yesterday
DAY, HOUR = 86_400_000, 3_600_000

# --- vocabulary ------------------------------------------------------------------------------------
# the sizes of SUBJECTS, DETAILS, CAMPAIGN_WORDS and DESCRIPTIONS are part of the seed (24, 14, 5, 6)
SUBJECTS = ("beach", "city", "mountain", "studio", "office", "team", "product", "portrait", "street",
            "forest", "kitchen", "warehouse", "rooftop", "market", "desert", "lake", "stadium", "concert",
            "workshop", "garden", "harbor", "cafe", "bridge", "runway")
DETAILS = ("sunset", "morning", "aerial", "close-up", "wide", "detail", "night", "golden-hour", "flatlay",
           "lifestyle", "candid", "overhead", "hero", "texture")
CAMPAIGN_WORDS = ("Spring launch", "Summer sale", "Back to school", "Holiday", "Brand refresh")
DESCRIPTIONS = ("{S} {d} shot for the {c} campaign.", "Selected frame from the {s} shoot ({d}).",
                "{S} {d}; cleared for paid social.", "Alternate {d} take, {s} location.",
                "{S} {d} — retouched, colour graded.", "Raw {s} {d} from the agency upload.")
# type, weight, extensions, size range in bytes (log-uniform), dimensions, duration range in seconds
TYPES = (
    ("photo", 52, ("jpg", "jpg", "jpg", "png", "heic", "tif"), (400_000, 28_000_000),
     ((6000, 4000), (4032, 3024), (3000, 2000), (1080, 1350), (2048, 2048), (5472, 3648)), None),
    ("video", 20, ("mp4", "mov"), (15_000_000, 3_500_000_000),
     ((1920, 1080), (3840, 2160), (1080, 1920), (1280, 720)), (5, 900)),
    ("animated", 5, ("gif",), (200_000, 18_000_000), ((480, 270), (800, 600), (1080, 1080)), (1, 12)),
    ("audio", 6, ("mp3", "wav"), (800_000, 120_000_000), (), (20, 3600)),
    ("nonMedia", 17, ("pdf", "psd", "ai", "pptx", "docx", "zip"), (40_000, 400_000_000), (), None),
)
_TYPE_TABLE = tuple(t for t in TYPES for _ in range(t[1]))          # 100 slots, weighted
SMART_TAGS = ("person", "outdoor", "sky", "water", "building", "food", "text", "animal", "plant",
              "vehicle", "smile", "crowd", "night", "indoor", "furniture")
PHOTOGRAPHERS = ("Ana López", "Kenji Watanabe", "Amara Okafor", "Luca Romano", "Sofia Lindqvist",
                 "Mateus Costa", "Priya Nair", "Jonas Weber", "Chloé Martin", "Diego Herrera")

TAG_NAMES = ("hero", "q2", "lifestyle", "product", "social", "approved", "draft", "print", "web",
             "behind-the-scenes", "portrait", "landscape", "logo", "team", "event", "archive", "ugc",
             "campaign", "seasonal", "b-roll", "interview", "stock", "brand", "holiday", "packaging")

BOARD_TREE = (
    ("Brand", ("Logos", "Fonts", "Guidelines", "Colour palettes")),
    ("Campaigns", ("Spring launch 2026", "Summer sale 2026", "Back to school", "Holiday 2025")),
    ("Product", ("Packshots", "Packaging", "Lifestyle", "3D renders")),
    ("Social", ("Instagram", "TikTok", "LinkedIn", "YouTube")),
    ("Events", ("Trade show Berlin", "Customer summit", "Team offsite")),
    ("Photography", ("Studio", "Location", "Archive")),
    ("Video", ("B-roll", "Interviews", "Ads")),
    ("Partners", ("Agency uploads", "Retailers")),
)
LEAVES = ("Selects", "Raw", "Approved", "Drafts", "Final cuts", "Week 1", "Week 2", "Retouched")

# name, description, type, select values
FIELDS = (
    ("Campaign", "Marketing campaign the asset belongs to", "single-select",
     ("Spring launch", "Summer sale", "Back to school", "Holiday 2025", "Brand refresh")),
    ("Channels", "Where the asset may be published", "multi-select",
     ("Instagram", "TikTok", "YouTube", "Website", "Print", "Email")),
    ("Usage rights", "Licence status of the asset", "single-select",
     ("Unlimited", "Internal only", "Licensed 1 year", "Expired")),
    ("Photographer", "Who shot or made it", "plain-text", None),
    ("Shoot date", "Day of the shoot", "date", None),
    ("Regions", "Markets the asset is cleared for", "multi-select", ("EMEA", "North America", "LATAM", "APAC")),
)
FIELD_ODDS = (45, 30, 35, 25, 30, 20)            # percent of assets with a value, per field above

# guest role name, description, billable; then the member roles
GUEST_ROLES = (("Viewer", "Can view and download assets in the board", False),
               ("Commenter", "Can view, download and comment", False),
               ("Contributor", "Can upload assets and edit their details", True),
               ("Editor", "Can organise, edit and share the board", True))
MEMBER_ROLES = (("Admin", "Manages the workspace, its members and billing", True),
                ("Member", "Works with every board of the workspace", True))
GUEST_NAMES = ("ana.lopez", "tom.becker", "mei.chen", "omar.haddad", "julia.novak", "sam.okoro",
               "lena.fischer", "raj.patel", "emma.dubois", "noah.silva", "yuki.sato", "ines.garcia")
GUEST_DOMAINS = ("brightagency.com", "northstudio.io", "retailpartner.example", "freelance.example",
                 "printhouse.co")


def mix(x: int) -> int:
    """splitmix64's finaliser: 64 well-mixed bits from any integer."""
    x &= M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return time.strftime("%Y-%m-%dT", time.gmtime(days * 86400))


@overload
def iso_ms(ms: int) -> str: ...
@overload
def iso_ms(ms: None) -> None: ...
def iso_ms(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 with milliseconds and `Z` (the asset library's spelling), fast."""
    if ms is None:
        return None
    days, rest = divmod(ms, DAY)
    seconds, millis = divmod(rest, 1000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_day(days)}{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def compose(subject_at: int, detail_at: int, number: int | None, style: int, campaign_at: int, described: bool,
            template_at: int, described_campaign_at: int) -> tuple[str, str, str | None]:
    """(stem, title, description) of a seeded file from its drawn parts; number None writes NULs in its
    place (what the vectorised `search` compares words against, see asset_library_scan.search_mask)."""
    subject, detail = SUBJECTS[subject_at], DETAILS[detail_at]

    def digits(width: int) -> str:
        return "\x00" * width if number is None else f"{number:0{width}d}"

    if style < 6:
        stem, title = f"{subject}-{detail}-{digits(4)}", f"{subject.capitalize()} {detail}"
    elif style < 8:
        stem = f"IMG_{digits(4)}" if style == 6 else f"DSC{digits(5)}"
        title = stem
    else:
        campaign = CAMPAIGN_WORDS[campaign_at]
        stem = f"{campaign.replace(' ', '_')}_{subject}_{detail}"
        title = f"{campaign}: {subject} {detail}"
    description = None
    if described:
        description = DESCRIPTIONS[template_at].format(S=subject.capitalize(), s=subject, d=detail,
                                                       c=CAMPAIGN_WORDS[described_campaign_at])
    return stem, title, description


def type_of_ext(ext: str) -> str:
    for name, _, exts, *_ in TYPES:
        if ext.lower() in exts:
            return name
    return "nonMedia"


class BaseAssets:
    """The seeded assets as functions of their index (see the module docstring)."""

    def __init__(self, key: int, count: int, board_ids: list[str], tag_ids: list[str],
                 fields: list[tuple[str, str, list[str]]]) -> None:
        self.key, self.count = key & M64, count
        self.board_ids, self.tag_ids, self.fields = board_ids, tag_ids, fields
        self._rounds = {kind: [mix(self.key + 0x51ED * (r + 1) + kind * GOLDEN) & 0xFFFFFFFFFF for r in range(4)]
                        for kind in (KIND_ASSET, KIND_VERSION)}
        # the time between consecutive assets' creation (a scan computes their dates column-wise from it)
        self.step = max(1, (T_END - T0) // max(count, 1))
        self.board_pos = {b: n for n, b in enumerate(board_ids)}
        self.tag_pos = {t: n for n, t in enumerate(tag_ids)}
        self.field_pos = {f[0]: n for n, f in enumerate(fields)}

    def h(self, i: int, salt: int) -> int:
        x = ((self.key ^ (salt * 0xD1B54A32D192ED03)) + i * GOLDEN) & M64      # mix(), inlined: it is hot
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
        return x ^ (x >> 31)

    # --- ids -----------------------------------------------------------------------------------

    def _permute(self, kind: int, value: int, inverse: bool = False) -> int:
        """A keyed Feistel permutation of 48 bits: any round function makes it invertible."""
        left, right = value >> 24, value & 0xFFFFFF
        rounds = reversed(self._rounds[kind]) if inverse else self._rounds[kind]
        for k in rounds:
            if inverse:
                left, right = right ^ ((((left ^ k) * 0x9E3779B1) >> 13) & 0xFFFFFF), left
            else:
                left, right = right, left ^ ((((right ^ k) * 0x9E3779B1) >> 13) & 0xFFFFFF)
        return (left << 24) | right

    def _uuid(self, kind: int, payload: int) -> str:
        low = self._permute(kind, payload)
        high = mix(self.key + kind * GOLDEN + low)
        high = (high & ~0xF000) | 0x4000                                   # version 4
        mid = (((high * 0xD6E8FEB86659FD93) >> 48) & 0x3FFF) | 0x8000       # RFC 4122 variant
        text = f"{high:016x}"
        tail = f"{low:012x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:]}-{mid:04x}-{tail}"

    def _payload(self, kind: int, uuid: str) -> int | None:
        try:
            low = int(uuid[-12:], 16)
        except ValueError:
            return None
        payload = self._permute(kind, low, inverse=True)
        return payload if self._uuid(kind, payload) == uuid.lower() else None

    def asset_id(self, i: int) -> str:
        return self._uuid(KIND_ASSET, i)

    def version_id(self, i: int, k: int) -> str:
        return self._uuid(KIND_VERSION, i * 4 + k)

    def index_of(self, asset_id: str) -> int | None:
        i = self._payload(KIND_ASSET, asset_id) if len(asset_id) == 36 else None
        return i if i is not None and i < self.count else None

    def version_of(self, version_id: str) -> tuple[int, int] | None:
        payload = self._payload(KIND_VERSION, version_id) if len(version_id) == 36 else None
        if payload is None or payload // 4 >= self.count or payload % 4 >= self.versions(payload // 4):
            return None
        return payload // 4, payload % 4

    # --- attributes, each from its own hash ------------------------------------------------------

    def created(self, i: int) -> int:
        return T0 + i * self.step + self.h(i, 1) % self.step

    def versions(self, i: int) -> int:
        r = self.h(i, 2) % 100
        return 1 if r < 60 else 2 if r < 88 else 3

    def kind(self, i: int) -> tuple[Any, ...]:
        return _TYPE_TABLE[self.h(i, 3) % 100]

    def text(self, i: int) -> tuple[str, str, str | None]:
        """(stem, title, description) of the asset's file."""
        h = self.h(i, 4)
        return compose(h % 24, (h >> 8) % 14, (h >> 16) % 9000 + 100, (h >> 32) % 10, (h >> 40) % 5,
                       (h >> 48) % 10 >= 6, (h >> 52) % 6, (h >> 58) % 5)

    def file_name(self, i: int, k: int, stem: str) -> str:
        return f"{stem}_v{k + 1}" if k and self.h(i, 6 + k) % 2 else stem

    def search_text(self, i: int) -> str:
        """The cover version's file name, title and description, lower-cased, for `search`."""
        stem, title, description = self.text(i)
        name = self.file_name(i, self.versions(i) - 1, stem)
        return f"{name}\n{title}\n{description or ''}".lower()

    def boards(self, i: int) -> list[str]:
        ids, h = self.board_ids, self.h(i, 5)
        if not ids or h % 100 < 7:
            return []
        first = ids[(h >> 8) % len(ids)]
        second = ids[(h >> 24) % len(ids)]
        return [first, second] if h % 100 >= 80 and second != first else [first]

    def version_tags(self, i: int, k: int) -> list[str]:
        ids, h = self.tag_ids, self.h(i, 10 + k)
        r = h % 100
        count = 0 if r < 30 else 1 if r < 65 else 2 if r < 88 else 3
        picked: list[str] = []
        for n in range(count):
            tag = ids[(h >> (8 + 12 * n)) % len(ids)] if ids else None
            if tag and tag not in picked:
                picked.append(tag)
        return picked

    def tags(self, i: int) -> set[str]:
        return {t for k in range(self.versions(i)) for t in self.version_tags(i, k)}

    def custom_fields(self, i: int) -> dict[str, dict[str, Any]]:
        """{field id: {"value": str} or {"values": [value ids]}} as set on asset i (21 bits per field)."""
        found: dict[str, dict[str, Any]] = {}
        h = 0
        for j, (field_id, kind, value_ids) in enumerate(self.fields):
            if j % 3 == 0:
                h = self.h(i, 20 + j)
            bits = (h >> (21 * (j % 3))) & 0x1FFFFF
            if (bits & 0x3FF) % 100 >= FIELD_ODDS[j % len(FIELD_ODDS)]:
                continue
            pick = bits >> 10
            if kind == "single-select" and value_ids:
                found[field_id] = {"values": [value_ids[pick % len(value_ids)]]}
            elif kind == "multi-select" and value_ids:
                chosen = [v for n, v in enumerate(value_ids) if pick >> n & 1 and (pick >> 8) % 2]
                found[field_id] = {"values": chosen or [value_ids[pick % len(value_ids)]]}
            elif kind == "plain-text":
                found[field_id] = {"value": PHOTOGRAPHERS[pick % len(PHOTOGRAPHERS)]}
            elif kind == "date":
                day = (T0 + i * self.step - (pick % 200) * DAY) // DAY * DAY
                found[field_id] = {"value": iso_ms(day)}
        return found

    # --- the whole record --------------------------------------------------------------------------

    def version(self, i: int, k: int, created: int, kind: tuple[Any, ...],
                text: tuple[str, str, str | None]) -> dict[str, Any]:
        name, _, exts, (low, high), dims, durations = kind
        h, g = self.h(i, 30 + k), self.h(i, 40 + k)
        size = int(low * (high / low) ** ((h % 10_000) / 10_000))
        width = height = None
        if dims:
            width, height = dims[(h >> 16) % len(dims)]
            if name == "photo" and (h >> 20) % 3 == 0:
                width, height = height, width
        duration = 0.0
        if durations:
            duration = round(durations[0] + ((h >> 24) % 10_000) * (durations[1] - durations[0]) / 10_000, 2)
        recorded = None
        if (h >> 40) % 10 >= (5 if name == "nonMedia" else 2):
            recorded = created - ((h >> 44) % 400) * HOUR * 3
        updated = created if (g >> 8) % 2 else min(created + (g % 10) * DAY // 3, NOW - 60_000)
        # the file's bytes arrive after the version is made (the public types' uploadedAt), never after
        # its last change: a version never edited was uploaded when it was made
        uploaded = created + min(((g >> 44) % 900 + 2) * 1000, updated - created)
        smart: list[str] = []
        if name in ("photo", "video", "animated"):
            smart = list(dict.fromkeys(SMART_TAGS[(g >> s) % 15] for s in (16, 20, 24, 28, 32)[: 2 + (g >> 36) % 4]))
        stem, title, description = text
        return {
            "id": self.version_id(i, k), "fileName": self.file_name(i, k, stem),
            "ext": exts[(self.h(i, 3) >> 8) % len(exts)], "title": title, "description": description,
            "type": name, "size": size, "createdAt": created, "uploadedAt": uploaded, "updatedAt": updated,
            "fileCreatedAt": recorded,
            "width": width, "height": height, "duration": duration, "tags": self.version_tags(i, k),
            "smartTags": smart,
        }

    def _times(self, i: int) -> list[int]:
        """Creation times of asset i's versions: the asset's own, then later ones."""
        at = self.created(i)
        times = [at]
        for k in range(1, self.versions(i)):
            at = min(at + (self.h(i, 50 + k) % (60 * DAY)) + HOUR, T_END + k * HOUR)
            times.append(at)
        return times

    def state(self, i: int) -> dict[str, Any]:
        """Asset i as the overlay stores it: timestamps in epoch ms, tags and values by id."""
        kind, text = self.kind(i), self.text(i)
        times = self._times(i)
        return {"index": i, "id": self.asset_id(i), "created": times[0], "boards": self.boards(i),
                "versions": [self.version(i, k, at, kind, text) for k, at in enumerate(times)],
                "fields": self.custom_fields(i)}

    def cover(self, i: int) -> dict[str, Any]:
        """Only what a list shows of asset i: id, cover version and custom fields."""
        times = self._times(i)
        return {"id": self.asset_id(i), "versions": [self.version(i, len(times) - 1, times[-1], self.kind(i),
                                                                  self.text(i))],
                "fields": self.custom_fields(i)}
