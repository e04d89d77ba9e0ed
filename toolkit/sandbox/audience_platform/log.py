"""The audience platform's notification log: seeded notifications computed from their index (0 the
newest, spread over the last two weeks before the clock's start), deletions kept as indices, and
those raised at run time in front, so a million of them cost nothing until a page is read.
"""
from __future__ import annotations

__all__ = ["NOTICE_DAYS", "NOTICE_TYPES", "NOTIFICATIONS_MAX", "NotificationLog", "POSITION"]

from bisect import bisect_right, insort
from datetime import datetime, timedelta
from typing import Any

from toolkit.sandbox.audience_platform.filter import matches, sort_records
from toolkit.sandbox.audience_platform.seed import (
    ANALYTICS_PROPERTIES,
    AUDIENCES,
    WAREHOUSE_AUDIENCES,
    IdCodec,
    Lazy,
    key64,
    mix64,
)
from toolkit.sandbox.clock import EPOCH, iso

# type, source, weight, ((severity, weight, template, smallest n, largest n), ...); templates take
# {audience}, {definition}, {account}, {comm} and {n}
NOTICE_TYPES = (
    ("audienceImport", "import", 14, (
        ("INFO", 8, "Audience {audience} imported: {n} members", 5, 5000),
        ("WARNING", 2, "Audience {audience} imported with {n} unknown profiles skipped", 1, 40),
        ("ERROR", 1, "Import of audience {audience} failed: package rejected ({n} problems)", 1, 6))),
    ("audienceRefresh", "scheduler", 24, (
        ("INFO", 10, "Memberships of {audience} refreshed: {n} profiles", 10, 90000),
        ("WARNING", 2, "Refresh of {audience} took {n} s, above the 600 s budget", 601, 2400))),
    ("analyticsSync", "analytics", 16, (
        ("INFO", 6, "Analytics audience {audience} synchronised ({n} members)", 10, 50000),
        ("WARNING", 2, "Analytics API quota at {n}% for account {account}", 80, 99),
        ("ERROR", 1, "Analytics account {account}: permission denied ({n} retries)", 1, 5))),
    ("warehouseQuery", "warehouse", 14, (
        ("INFO", 6, "Warehouse query {definition} read {n} rows", 100, 250000),
        ("ERROR", 1, "Warehouse query {definition} failed after {n} ms: table not found", 200, 9000))),
    ("profileMerge", "profiles", 8, (("INFO", 1, "Merged {n} duplicate profiles", 1, 60),)),
    ("privacy", "privacy", 6, (("INFO", 1, "Profile anonymized on request ({n} properties removed)", 3, 12),)),
    ("docgen", "docgen", 8, (
        ("INFO", 5, "Communication {comm} started for {n} profiles", 1, 800),
        ("ERROR", 1, "Communication {comm}: token endpoint answered 401 ({n} attempts)", 1, 3))),
    ("system", "monitor", 6, (
        ("WARNING", 3, "Vault answered in {n} ms (slow)", 800, 4000),
        ("ERROR", 1, "Core data service unreachable for {n} s", 5, 180))),
)
NOTICE_DAYS = 14
POSITION = "\0position"          # where a sort keeps a row's place (no filter can name it)


def _names(tree: tuple | None, sort: str | None) -> set[str]:
    """The top-level fields a filter and a sort read."""
    names = {key.split(":")[0].strip().split(".")[0] for key in (sort or "").split(",") if key.strip()}
    stack = [tree] if tree is not None else []
    while stack:
        node = stack.pop()
        if node[0] in ("and", "or"):
            stack.extend(node[1])
        elif node[0] == "not":
            stack.append(node[1])
        else:
            names.add(node[1].split(".")[0])
    return names


# 300 per unit of scale up to this: a million notifications, enough for the offset-paging benchmark
NOTIFICATIONS_MAX = 1_000_000


class NotificationLog:
    """Seeded notifications by index, deletions as indices, run-time ones in front: a sliceable list.

    A filter or sort reads only the fields it names from each seeded notification and builds the full
    records of the page it answers, so a filter over 150,000 of them takes about a second (a million, the most there are, about five).
    """

    def __init__(self, seed: int, count: int, epoch: datetime) -> None:
        self.count, self.epoch = count, epoch
        self.codec = IdCodec(seed, "audience_platform:notifications")
        self.key = key64(seed, "audience_platform:notices")
        self.gone: list[int] = []
        self.gone_set: set[int] = set()
        self.fresh: list[dict[str, Any]] = []
        # ticket → entry tables: a weighted pick is one index
        self._types = [(kind, source, [sev for sev in severities for _ in range(sev[1])])
                       for kind, source, weight, severities in NOTICE_TYPES for _ in range(weight)]
        self._step = NOTICE_DAYS * 86400 / count
        self._start = int(epoch.timestamp())
        self._days: dict[int, str] = {}

    def _stamp(self, seconds: int) -> str:
        """iso() of an epoch second, with the date part cached: most of the cost of a record."""
        day, rest = divmod(seconds, 86400)
        text = self._days.get(day)
        if text is None:
            text = self._days[day] = iso(EPOCH + timedelta(days=day))[:11]
        hours, rest = divmod(rest, 3600)
        return f"{text}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}Z"

    def base(self, i: int, names: set[str] | None = None) -> dict[str, Any]:
        """Seeded notification i; only the fields in `names` when given (for filters and sorts)."""
        h = mix64(self.key ^ i)
        kind, source, severities = self._types[(h >> 16) % len(self._types)]
        severity, _, template, low, high = severities[(h >> 24) % len(severities)]
        n = low + (h >> 32) % (high - low + 1)
        audience = AUDIENCES[(h >> 40) % len(AUDIENCES)][0]
        definition = WAREHOUSE_AUDIENCES[(h >> 44) % len(WAREHOUSE_AUDIENCES)][0]
        account = ANALYTICS_PROPERTIES[(h >> 48) % len(ANALYTICS_PROPERTIES)][0]
        comm = f"COMM-{(h >> 50) % 12 + 1:04d}"
        record: dict[str, Any] = {}
        if names is None or "id" in names:
            record["id"] = self.codec.encode(i)
        record["type"] = kind
        record["severity"] = severity
        if names is None or "message" in names:
            record["message"] = template.format(audience=audience, definition=definition, account=account,
                                                comm=comm, n=n)
        if names is None or "created" in names:
            record["created"] = self._stamp(self._start - round(self._step * (i + (h & 0xFFFF) / 65536)))
        record["read"] = ((h >> 56) & 0xFF) / 256 < 0.1 + 0.8 * i / self.count
        record["source"] = source
        details: dict[str, Any] = {"value": n}
        if kind in ("audienceImport", "audienceRefresh", "analyticsSync"):
            details["audienceId"] = audience
        if kind == "analyticsSync":
            details["accountId"] = account
        if kind == "warehouseQuery":
            details["definitionId"] = definition
        if kind == "docgen":
            details["communicationId"] = comm
        record["details"] = details
        return record

    def __len__(self) -> int:
        return len(self.fresh) + self.count - len(self.gone)

    def _index(self, position: int) -> int:
        """The index of the position-th seeded notification still there."""
        index = position
        while True:
            moved = position + bisect_right(self.gone, index)
            if moved == index:
                return index
            index = moved

    def __getitem__(self, key: slice) -> list[dict[str, Any]]:
        start, stop, _ = key.indices(len(self))
        head = self.fresh[start:stop]
        first = max(0, start - len(self.fresh))
        last = max(0, stop - len(self.fresh))
        return head + [self.base(self._index(p)) for p in range(first, last)]

    def select(self, tree: tuple | None, sort: str | None) -> Lazy:
        """The notifications matching `tree` in `sort` order, as a list whose pages build on demand."""
        names = _names(tree, sort)
        refs: list[Any] = []            # a run-time record, or the index of a seeded one
        rows: list[dict[str, Any]] = []
        for record in self.fresh:
            if tree is None or matches(tree, record):
                refs.append(record)
                rows.append(record)
        for i in range(self.count):
            if i not in self.gone_set:
                row = self.base(i, names)
                if tree is None or matches(tree, row):
                    refs.append(i)
                    rows.append(row)
        if sort and sort.strip():
            for position, row in enumerate(rows):
                rows[position] = {**row, POSITION: position}
            refs = [refs[row[POSITION]] for row in sort_records(rows, sort)]
        return Lazy(len(refs), lambda k: refs[k] if isinstance(refs[k], dict) else self.base(refs[k]))

    def add(self, record: dict[str, Any]) -> None:
        self.fresh.insert(0, record)

    def _drop_base(self, index: int) -> None:
        self.gone_set.add(index)
        insort(self.gone, index)

    def remove(self, notification_id: str) -> bool:
        for k, record in enumerate(self.fresh):
            if record["id"] == notification_id:
                del self.fresh[k]
                return True
        index = self.codec.decode(notification_id)
        if index is None or index >= self.count or index in self.gone_set:
            return False
        self._drop_base(index)
        return True

    def remove_where(self, tree: tuple | None) -> int:
        before = len(self)
        self.fresh = [r for r in self.fresh if tree is not None and not matches(tree, r)]
        if tree is None:
            self.gone, self.gone_set = list(range(self.count)), set(range(self.count))
        else:
            names = _names(tree, None)
            for i in range(self.count):
                if i not in self.gone_set and matches(tree, self.base(i, names)):
                    self._drop_base(i)
        return before - len(self)
