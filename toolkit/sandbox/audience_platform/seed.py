"""Seed data of the audience platform: the tables it starts from and the records computed from an index.

Big collections are never built as dicts: a profile, its base memberships, a notification and a
metric reading are computed from their index (a seeded hash), and the ids encode the index through
an invertible mix with a checksum, so `id → record` needs no table. At scale 1000 there are 200,000
profiles with about a million memberships and 300,000 notifications, and start() stays instant.

    codec = IdCodec(0, "profiles"); codec.decode(codec.encode(7))  # 7
"""
from __future__ import annotations

__all__ = ["ANALYTICS_PROPERTIES", "AUDIENCES", "BROWSERS", "CATEGORIES", "COMPANIES", "GENERATED", "GROUPS",
           "INACTIVE_NAMES", "INTERESTS", "IdCodec", "JOB_TITLES", "LANGUAGES", "LOCALES", "Layout", "Lazy",
           "MAIL_DOMAINS", "MASK", "PII", "PROPERTIES", "Population", "SEGMENTS", "SYSTEMS", "TIERS",
           "TRACKED", "USERS", "WAREHOUSE_AUDIENCES", "WAREHOUSE_PROFILES", "key64", "mix64",
           "property_records"]

import hashlib
import math
import random
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from toolkit.sandbox.clock import iso

MASK = (1 << 64) - 1


def mix64(x: int) -> int:
    """splitmix64: a well-spread 64-bit hash of an integer."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def key64(*parts: Any) -> int:
    """A 64-bit key from any parts (seed, salt): stable across runs, unlike hash()."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _unshift(y: int, shift: int) -> int:
    """Inverse of y = x ^ (x >> shift) on 64 bits."""
    x = y
    for _ in range(64 // shift + 1):
        x = y ^ (x >> shift)
    return x


class IdCodec:
    """uuid4-shaped ids that encode an index: 64 bits of an invertible mix plus 58 bits of checksum."""

    def __init__(self, seed: int, salt: str) -> None:
        self.k1, self.k2 = key64(seed, salt, "k1"), key64(seed, salt, "k2")
        self.m1, self.m2 = key64(seed, salt, "m1") | 1, key64(seed, salt, "m2") | 1
        self.i1, self.i2 = pow(self.m1, -1, 1 << 64), pow(self.m2, -1, 1 << 64)

    def _mix(self, x: int) -> int:
        x = ((x ^ self.k1) * self.m1) & MASK
        x ^= x >> 31
        x = (x * self.m2) & MASK
        return x ^ (x >> 29)

    def _unmix(self, y: int) -> int:
        y = (_unshift(y, 29) * self.i2) & MASK
        return ((_unshift(y, 31) * self.i1) & MASK) ^ self.k1

    def _check(self, x: int) -> int:
        return mix64(x ^ self.k2) >> 6          # 58 bits

    def encode(self, index: int) -> str:
        x = self._mix(index)
        check = self._check(x)
        h = f"{x:016x}{check >> 2:014x}"
        return f"{h[:8]}-{h[8:12]}-4{h[12:15]}-{'89ab'[check & 3]}{h[15:18]}-{h[18:30]}"

    def decode(self, text: str) -> int | None:
        """The index an id encodes, or None for any other string."""
        s = text.replace("-", "").lower()
        if len(s) != 32 or len(text) != 36 or s[12] != "4" or s[16] not in "89ab":
            return None
        h = s[:12] + s[13:16] + s[17:]
        try:
            x, rest = int(h[:16], 16), int(h[16:], 16)
        except ValueError:
            return None
        check = self._check(x)
        if check >> 2 != rest or "89ab"[check & 3] != s[16]:
            return None
        return self._unmix(x)


class Lazy(Sequence):
    """A read-only list whose items are computed from their index: slices build only that page."""

    def __init__(self, length: int, make: Callable[[int], Any]) -> None:
        self.length, self.make = length, make

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return [self.make(i) for i in range(*key.indices(self.length))]
        if key < 0:
            key += self.length
        if not 0 <= key < self.length:
            raise IndexError(key)
        return self.make(key)

    def __iter__(self) -> Iterator[Any]:
        return (self.make(i) for i in range(self.length))


# --- locales and people ---------------------------------------------------------------------------

# language, country, first names, last names, cities, phone prefix, time zone, weight
LOCALES = (
    ("en-US", "US", ("James", "Olivia", "Liam", "Emma", "Noah", "Ava", "Ethan", "Sophia", "Mason", "Harper"),
     ("Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson", "Taylor", "Clark"),
     ("New York", "Chicago", "Austin", "Seattle", "Denver", "Boston", "Atlanta"), "+1", "America/New_York", 24),
    ("en-GB", "GB", ("Oliver", "Amelia", "George", "Isla", "Harry", "Ava", "Jack", "Freya"),
     ("Jones", "Evans", "Walker", "Wright", "Robinson", "Hughes", "Green", "Hall"),
     ("London", "Manchester", "Leeds", "Bristol", "Glasgow", "Cardiff"), "+44", "Europe/London", 12),
    ("fr-FR", "FR", ("Camille", "Louis", "Chloé", "Hugo", "Léa", "Lucas", "Manon", "Théo"),
     ("Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand"),
     ("Paris", "Lyon", "Marseille", "Toulouse", "Nantes", "Lille"), "+33", "Europe/Paris", 12),
    ("de-DE", "DE", ("Lukas", "Anna", "Leon", "Mia", "Felix", "Hannah", "Jonas", "Lena"),
     ("Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker"),
     ("Berlin", "Hamburg", "München", "Köln", "Frankfurt", "Stuttgart"), "+49", "Europe/Berlin", 12),
    ("es-ES", "ES", ("Lucía", "Hugo", "Martina", "Mateo", "Sofía", "Pablo", "Julia", "Daniel"),
     ("García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez", "Pérez"),
     ("Madrid", "Barcelona", "Valencia", "Sevilla", "Bilbao", "Málaga"), "+34", "Europe/Madrid", 8),
    ("it-IT", "IT", ("Giulia", "Leonardo", "Sofia", "Francesco", "Aurora", "Alessandro", "Ginevra", "Lorenzo"),
     ("Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci"),
     ("Roma", "Milano", "Napoli", "Torino", "Bologna", "Firenze"), "+39", "Europe/Rome", 7),
    ("ja-JP", "JP", ("Haruto", "Yui", "Sota", "Hina", "Yuto", "Sakura", "Ren", "Aoi"),
     ("Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura"),
     ("Tokyo", "Osaka", "Yokohama", "Nagoya", "Sapporo", "Fukuoka"), "+81", "Asia/Tokyo", 6),
    ("pt-BR", "BR", ("Miguel", "Helena", "Arthur", "Alice", "Heitor", "Laura", "Davi", "Valentina"),
     ("Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira"),
     ("São Paulo", "Rio de Janeiro", "Belo Horizonte", "Curitiba", "Recife"), "+55", "America/Sao_Paulo", 7),
    ("nl-NL", "NL", ("Emma", "Noah", "Julia", "Sem", "Tess", "Lucas", "Mila", "Finn"),
     ("de Jong", "Jansen", "de Vries", "van den Berg", "Bakker", "Visser", "Smit", "Meijer"),
     ("Amsterdam", "Rotterdam", "Utrecht", "Den Haag", "Eindhoven"), "+31", "Europe/Amsterdam", 5),
    ("pl-PL", "PL", ("Zuzanna", "Antoni", "Julia", "Jan", "Hanna", "Aleksander", "Maja", "Franciszek"),
     ("Nowak", "Kowalski", "Wiśniewski", "Wójcik", "Kowalczyk", "Kamiński", "Lewandowski", "Zieliński"),
     ("Warszawa", "Kraków", "Wrocław", "Poznań", "Gdańsk"), "+48", "Europe/Warsaw", 4),
)
LANGUAGES = tuple(locale[0] for locale in LOCALES)
MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me", "gmx.net", "orange.fr")
COMPANIES = ("Northwind Traders", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella Retail",
             "Stark Logistics", "Wayne Foods", "Acme Analytics", "Tyrell Health")
JOB_TITLES = ("Marketing Manager", "Head of CRM", "Data Analyst", "Buyer", "Store Manager", "CTO",
              "Product Owner", "Procurement Lead")
INTERESTS = ("running", "cooking", "travel", "gaming", "fashion", "photography", "gardening", "music",
             "cycling", "books", "home-decor", "outdoor")
CATEGORIES = ("shoes", "outerwear", "electronics", "kitchen", "beauty", "toys", "sports", "books")
SEGMENTS = ("bargain-hunter", "loyalist", "new-customer", "at-risk", "high-spender", "browser")
BROWSERS = ("Chrome", "Safari", "Firefox", "Edge", "Samsung Internet")
SYSTEMS = {"desktop": ("Windows 11", "macOS 15", "Ubuntu 24.04"), "mobile": ("iOS 18", "Android 15"),
           "tablet": ("iPadOS 18", "Android 14")}
TIERS = ("bronze", "silver", "gold", "platinum")

# --- the profile schema's properties ---------------------------------------------------------------

PII = "personalIdentifierProperties"
# id, name, type, extra JSON Schema keywords, multivalued, tags, personal identifier
PROPERTIES: tuple[tuple[str, str, str, dict[str, Any], bool, tuple[str, ...], bool], ...] = (
    ("firstName", "First name", "string", {"maxLength": 100}, False, ("contact",), True),
    ("lastName", "Last name", "string", {"maxLength": 100}, False, ("contact",), True),
    ("email", "E-mail address", "email", {}, False, ("contact",), True),
    ("phoneNumber", "Phone number", "string", {"pattern": r"^\+[0-9 ]{6,20}$"}, False, ("contact",), True),
    ("birthDate", "Date of birth", "date", {}, False, ("demographics",), True),
    ("gender", "Gender", "string", {"enum": ["female", "male", "nonBinary", "unknown"]}, False,
     ("demographics",), False),
    ("address", "Street address", "string", {}, False, ("contact",), True),
    ("zipCode", "Postal code", "string", {"maxLength": 12}, False, ("contact",), True),
    ("city", "City", "string", {}, False, ("demographics",), False),
    ("countryCode", "Country", "string", {"pattern": "^[A-Z]{2}$"}, False, ("demographics",), False),
    ("preferredLanguage", "Preferred language", "string", {"enum": list(LANGUAGES)}, False,
     ("demographics",), False),
    ("company", "Company", "string", {}, False, ("b2b",), False),
    ("jobTitle", "Job title", "string", {}, False, ("b2b",), False),
    ("loyaltyTier", "Loyalty tier", "string", {"enum": list(TIERS)}, False, ("loyalty",), False),
    ("loyaltyPoints", "Loyalty points", "integer", {"minimum": 0}, False, ("loyalty",), False),
    ("lifetimeValue", "Lifetime value (EUR)", "float", {"minimum": 0}, False, ("commerce",), False),
    ("nbOfVisits", "Number of visits", "integer", {"minimum": 0}, False, ("behaviour",), False),
    ("firstVisit", "First visit", "date", {}, False, ("behaviour",), False),
    ("lastVisit", "Last visit", "date", {}, False, ("behaviour",), False),
    ("newsletterOptIn", "Newsletter opt-in", "boolean", {}, False, ("consent",), False),
    ("smsOptIn", "SMS opt-in", "boolean", {}, False, ("consent",), False),
    ("interests", "Interests", "string", {"uniqueItems": True}, True, ("behaviour",), False),
    ("preferredChannel", "Preferred channel", "string", {"enum": ["email", "sms", "push", "web"]}, False,
     ("consent",), False),
    ("deviceType", "Device type", "string", {"enum": ["desktop", "mobile", "tablet"]}, False,
     ("technical",), False),
    ("browser", "Browser", "string", {}, False, ("technical",), False),
    ("operatingSystem", "Operating system", "string", {}, False, ("technical",), False),
    ("ipAddress", "Last IP address", "string", {"format": "ipv4"}, False, ("technical",), True),
    ("customerSegment", "Customer segment", "string", {"enum": list(SEGMENTS)}, False, ("commerce",), False),
    ("accountStatus", "Account status", "string", {"enum": ["active", "dormant", "churned"]}, False,
     ("commerce",), False),
    ("lastPurchaseDate", "Last purchase", "date", {}, False, ("commerce",), False),
    ("totalOrders", "Orders", "integer", {"minimum": 0}, False, ("commerce",), False),
    ("averageOrderValue", "Average order value (EUR)", "float", {"minimum": 0}, False, ("commerce",), False),
    ("favoriteCategory", "Favourite category", "string", {"enum": list(CATEGORIES)}, False,
     ("commerce",), False),
    ("crmId", "CRM id", "string", {"pattern": "^CRM-[0-9]{7}$"}, False, ("crm",), True),
    ("clientId", "Analytics client id", "string", {}, False, ("technical",), True),
    ("timezone", "Time zone", "string", {}, False, ("demographics",), False),
    ("marketingConsent", "Marketing consent", "boolean", {}, False, ("consent",), False),
    ("nps", "Net promoter score", "integer", {"minimum": 0, "maximum": 10}, False, ("survey",), False),
    ("churnRiskScore", "Churn risk score", "float", {"minimum": 0, "maximum": 1}, False, ("retention",), False),
    ("signupSource", "Sign-up source", "string", {"enum": ["web", "store", "app", "partner", "import"]},
     False, ("acquisition",), False),
)
GENERATED = frozenset(p[0] for p in PROPERTIES)     # the properties seeded profiles may hold


def property_records() -> list[dict[str, Any]]:
    """The seeded schema entries as the wire shows them."""
    records = []
    for pid, name, kind, extra, multivalued, tags, pii in PROPERTIES:
        records.append({"id": pid, "name": name, "description": f"{name} of the profile", "type": kind,
                        "multivalued": multivalued, "tags": list(tags),
                        "systemTags": ["profileProperties", *([PII] if pii else [])], **extra})
    return records


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(c for c in folded.lower() if c.isalnum())


class Population:
    """The seeded profiles: profile `i` computed from its index, its id from IdCodec."""

    def __init__(self, seed: int, count: int, epoch: datetime) -> None:
        self.seed, self.count, self.epoch = seed, count, epoch
        self.codec = IdCodec(seed, "audience_platform:profiles")
        self._weights = [locale[-1] for locale in LOCALES]

    def id(self, index: int) -> str:
        return self.codec.encode(index)

    def index(self, profile_id: str) -> int | None:
        found = self.codec.decode(profile_id)
        return found if found is not None and found < self.count else None

    def profile(self, i: int) -> dict[str, Any]:
        rng = random.Random(f"{self.seed}:profile:{i}")
        lang, country, firsts, lasts, cities, phone, zone, _ = rng.choices(LOCALES, self._weights)[0]
        first, last = rng.choice(firsts), rng.choice(lasts)
        now = self.epoch
        first_visit = now - timedelta(days=rng.uniform(1, 1400))
        last_visit = first_visit + (now - first_visit) * rng.betavariate(3, 1)
        device = rng.choices(("desktop", "mobile", "tablet"), (5, 6, 1))[0]
        visits = max(1, int(rng.paretovariate(1.2) * 2))
        p: dict[str, Any] = {
            "firstName": first, "lastName": last,
            "email": f"{_ascii(first)}.{_ascii(last)}{rng.choice(('', '', rng.randrange(1, 99)))}"
                     f"@{rng.choice(MAIL_DOMAINS)}",
            "gender": rng.choices(("female", "male", "nonBinary", "unknown"), (46, 46, 2, 6))[0],
            "city": rng.choice(cities), "countryCode": country, "preferredLanguage": lang,
            "nbOfVisits": visits, "firstVisit": iso(first_visit), "lastVisit": iso(last_visit),
            "newsletterOptIn": rng.random() < 0.45, "deviceType": device,
            "browser": "Safari" if device != "desktop" and rng.random() < 0.5 else rng.choice(BROWSERS),
            "operatingSystem": rng.choice(SYSTEMS[device]), "timezone": zone,
            "clientId": f"{rng.randrange(10**9, 10**10)}.{int(first_visit.timestamp())}",
            "accountStatus": rng.choices(("active", "dormant", "churned"), (70, 20, 10))[0],
            "signupSource": rng.choices(("web", "store", "app", "partner", "import"), (50, 20, 20, 5, 5))[0],
            "marketingConsent": rng.random() < 0.6,
        }
        if rng.random() < 0.7:
            p["phoneNumber"] = f"{phone} {rng.randrange(100, 999)} {rng.randrange(1000000, 9999999)}"
        if rng.random() < 0.5:
            p["birthDate"] = iso(datetime(1950, 1, 1, tzinfo=now.tzinfo) + timedelta(days=rng.randrange(20000)))
        if rng.random() < 0.45:
            p["address"] = f"{rng.randrange(1, 250)} {rng.choice(('Market', 'Station', 'Park', 'Church', 'Mill'))}"\
                           f" {rng.choice(('Street', 'Road', 'Lane', 'Avenue'))}"
            p["zipCode"] = f"{rng.randrange(10000, 99999)}"
        if rng.random() < 0.3:
            p["company"], p["jobTitle"] = rng.choice(COMPANIES), rng.choice(JOB_TITLES)
        if rng.random() < 0.65:
            tier = rng.choices(TIERS, (50, 30, 15, 5))[0]
            p["loyaltyTier"] = tier
            p["loyaltyPoints"] = int(rng.expovariate(1 / (300 * (TIERS.index(tier) + 1))))
        if rng.random() < 0.75:
            orders = max(1, int(rng.expovariate(1 / 6)))
            aov = round(rng.lognormvariate(4, 0.5), 2)
            p.update(totalOrders=orders, averageOrderValue=aov, lifetimeValue=round(orders * aov, 2),
                     lastPurchaseDate=iso(first_visit + (now - first_visit) * rng.random()),
                     favoriteCategory=rng.choice(CATEGORIES))
        if rng.random() < 0.5:
            p["smsOptIn"] = rng.random() < 0.4
        if rng.random() < 0.7:
            p["interests"] = rng.sample(INTERESTS, rng.randrange(1, 4))
        if rng.random() < 0.8:
            p["preferredChannel"] = rng.choices(("email", "sms", "push", "web"), (5, 2, 2, 1))[0]
            p["customerSegment"] = rng.choice(SEGMENTS)
        if rng.random() < 0.6:
            p["ipAddress"] = f"{rng.randrange(2, 223)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            p["churnRiskScore"] = round(rng.betavariate(2, 5), 3)
        if rng.random() < 0.4:
            p["crmId"] = f"CRM-{rng.randrange(10**6, 10**7):07d}"
        if rng.random() < 0.3:
            p["nps"] = rng.choices(range(11), (1, 1, 1, 1, 2, 3, 4, 6, 9, 8, 6))[0]
        updated = last_visit + timedelta(minutes=rng.randrange(1, 600))
        return {
            "itemId": self.id(i), "itemType": "profile", "version": 1 + visits // 3,
            "properties": p,
            "systemProperties": {"lastUpdated": iso(min(updated, now)),
                                 "origin": p["signupSource"], "mergeIdentifier": p["email"]},
            "scores": {"engagement": min(100, visits * 3), "purchaseIntent": rng.randrange(0, 100)},
            "consents": {"web/newsletter": {
                "scope": "web", "typeIdentifier": "newsletter",
                "status": "GRANTED" if p["newsletterOptIn"] else "DENIED",
                "statusDate": iso(first_visit), "revokeDate": None}},
        }


# --- audiences and their base memberships ------------------------------------------------------

# id, name, provider, tags, system tags, share of the profiles that are members, scope
AUDIENCES = (
    ("newsletter-subscribers", "Newsletter subscribers", "manual", ("newsletter", "email"), (), 0.42, "web"),
    ("high-value-customers", "High-value customers", "manual", ("vip", "revenue"), (), 0.08, "crm"),
    ("cart-abandoners", "Cart abandoners (7 days)", "manual", ("retargeting", "ecommerce"), (), 0.12, "web"),
    ("new-signups", "New sign-ups (30 days)", "manual", ("onboarding",), (), 0.10, "web"),
    ("dormant-accounts", "Dormant accounts", "manual", ("winback",), (), 0.15, "crm"),
    ("loyalty-gold", "Loyalty gold and platinum", "manual", ("loyalty", "vip"), (), 0.11, "crm"),
    ("sms-reachable", "SMS reachable", "manual", ("sms",), (), 0.30, "mobile"),
    ("qa-test-audience", "QA test audience", "manual", ("test",), ("hidden",), 0.01, "web"),
    ("b2b-decision-makers", "B2B decision makers", "manual", ("b2b",), (), 0.05, "crm"),
    ("mobile-app-users", "Mobile app users", "manual", ("mobile", "app"), (), 0.35, "mobile"),
    ("spring-sale-2026", "Spring sale responders", "manual", ("campaign",), (), 0.14, "web"),
    ("gdpr-restricted", "Processing restricted (GDPR)", "manual", ("privacy",), ("restricted", "hidden"),
     0.01, "crm"),
    ("8765432101", "Engaged visitors (30 days)", "analytics", ("engagement",), ("analytics",), 0.38, "web"),
    ("8765432102", "Product page viewers", "analytics", ("ecommerce",), ("analytics",), 0.33, "web"),
    ("8765432117", "Checkout starters", "analytics", ("ecommerce", "retargeting"), ("analytics",), 0.09, "web"),
    ("9123456701", "Returning mobile visitors", "analytics", ("mobile",), ("analytics",), 0.27, "mobile"),
    ("9123456705", "Blog readers", "analytics", ("content",), ("analytics",), 0.20, "web"),
    ("9123456712", "Video watchers", "analytics", ("content", "video"), ("analytics",), 0.16, "web"),
    ("churn-risk-high", "Churn risk: high", "warehouse", ("retention", "churn"), ("warehouse",), 0.07, "crm"),
    ("crm-customers", "CRM customers", "warehouse", ("crm",), ("warehouse",), 0.55, "crm"),
    ("ltv-top-decile", "Top 10% lifetime value", "warehouse", ("vip", "revenue"), ("warehouse",), 0.10, "crm"),
    ("store-shoppers", "In-store shoppers", "warehouse", ("retail", "omnichannel"), ("warehouse",), 0.22, "crm"),
    ("subscription-renewals", "Subscription renewals due", "warehouse", ("subscriptions",), ("warehouse",),
     0.06, "crm"),
    ("email-engaged-90d", "E-mail engaged (90 days)", "warehouse", ("email", "engagement"), ("warehouse",),
     0.29, "crm"),
    ("vip-event-2026", "VIP event guest list 2026", "import", ("vip", "events"), ("imported",), 0.02, "crm"),
    ("partner-leads-q3", "Partner leads Q3", "import", ("b2b", "partners"), ("imported",), 0.04, "crm"),
    ("trade-show-berlin", "Trade show Berlin contacts", "import", ("events", "b2b"), ("imported",), 0.03, "crm"),
    ("customer-advisory-board", "Customer advisory board", "import", ("vip",), ("imported",), 0.005, "crm"),
    ("webinar-attendees", "Webinar attendees", "import", ("content", "b2b"), ("imported",), 0.09, "web"),
    ("nps-promoters", "NPS promoters", "import", ("survey",), ("imported",), 0.12, "crm"),
)
GROUPS = 8          # a profile is in at most one audience per group: 0 to 8 audiences


class Layout:
    """Base memberships: in group g, profile i sits at r = (i·m_g + c_g) mod N, and each audience of
    the group owns a range of r; so counts are exact, membership is O(1) and nothing is stored."""

    def __init__(self, rng: random.Random, count: int) -> None:
        self.count = count
        loads = [0.0] * GROUPS
        members: list[list[tuple[str, float]]] = [[] for _ in range(GROUPS)]
        for aid, *_, share, _scope in sorted(AUDIENCES, key=lambda a: -a[5]):
            g = min(range(GROUPS), key=lambda k: loads[k])
            loads[g] += share
            members[g].append((aid, share))
        self.groups: list[tuple[int, int, list[int], list[str]]] = []
        self.where: dict[str, tuple[int, int, int]] = {}          # audience → (group, start, end)
        for g, entries in enumerate(members):
            m = rng.randrange(1, max(2, count)) | 1
            while math.gcd(m, count) != 1:
                m += 2
            c = rng.randrange(count)
            starts, ids, start = [], [], 0
            for aid, share in entries:
                end = min(count, start + round(share * count))
                starts.append(start)
                ids.append(aid)
                self.where[aid] = (g, start, end)
                start = end
            starts.append(start)
            self.groups.append((m, c, starts, ids))

    def size(self, audience_id: str) -> int:
        found = self.where.get(audience_id)
        return found[2] - found[1] if found else 0

    def of(self, i: int) -> list[str]:
        """The base audiences of profile index i."""
        out = []
        n = self.count
        for m, c, starts, ids in self.groups:
            k = bisect_right(starts, (i * m + c) % n) - 1
            if k < len(ids):
                out.append(ids[k])
        return out

    def has(self, audience_id: str, i: int) -> bool:
        found = self.where.get(audience_id)
        if found is None:
            return False
        g, start, end = found
        m, c, _, _ = self.groups[g]
        return start <= (i * m + c) % self.count < end


# --- analytics, warehouse, users ---------------------------------------------------------------

# account, property, property type
ANALYTICS_PROPERTIES = (
    ("123456789", "UA-123456789-1", "webProperty"), ("123456789", "312345678", "property"),
    ("987654321", "UA-987654321-1", "webProperty"), ("987654321", "398765432", "property"),
)
# audience id → (account, property) for the audiences the platform tracks (active)
TRACKED = {"8765432101": 0, "8765432102": 0, "8765432117": 1, "9123456701": 2, "9123456705": 2,
           "9123456712": 3}
INACTIVE_NAMES = ("All users", "Purchasers", "Newsletter sign-ups", "Android users", "Site search users",
                  "Lapsed visitors (90 days)", "High scroll depth", "Coupon users", "iOS users")

# id, name, table, audience id, audience name, tags, active
WAREHOUSE_AUDIENCES = (
    ("dw-crm-customers", "CRM customers", "crm_customers", "crm-customers", "CRM customers", ("crm",), True),
    ("dw-churn-high", "High churn risk", "churn_scores_high", "churn-risk-high", "Churn risk: high",
     ("retention", "churn"), True),
    ("dw-ltv-top-decile", "Lifetime value top decile", "ltv_deciles", "ltv-top-decile",
     "Top 10% lifetime value", ("vip", "revenue"), True),
    ("dw-store-shoppers", "Store shoppers", "pos_customers", "store-shoppers", "In-store shoppers",
     ("retail", "omnichannel"), True),
    ("dw-subscription-renewals", "Renewals due", "subscription_renewals", "subscription-renewals",
     "Subscription renewals due", ("subscriptions",), True),
    ("dw-email-engaged", "E-mail engaged", "email_engagement_90d", "email-engaged-90d",
     "E-mail engaged (90 days)", ("email", "engagement"), True),
    ("dw-lookalike-test", "Lookalike model test", "lookalike_scores", "lookalike-test", "Lookalike test",
     ("test",), False),
)
# id, name, table, id column, active
WAREHOUSE_PROFILES = (
    ("dw-crm-customers", "CRM customers", "crm_customers", "customer_id", True),
    ("dw-loyalty-members", "Loyalty members", "loyalty_members", "member_uuid", True),
    ("dw-pos-customers", "Point-of-sale customers", "pos_customers", "cdp_profile_id", False),
)

# username, first name, last name, roles, enabled
USERS = (
    ("m.keller", "Miriam", "Keller", ("administrator",), True),
    ("a.dubois", "Antoine", "Dubois", ("marketer",), True),
    ("s.tanaka", "Saki", "Tanaka", ("analyst",), True),
    ("l.rossi", "Luca", "Rossi", ("privacy-officer",), True),
    ("j.okafor", "Jide", "Okafor", ("analyst", "marketer"), True),
    ("p.nowak", "Piotr", "Nowak", ("viewer",), False),
)
