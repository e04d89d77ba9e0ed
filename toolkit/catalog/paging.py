"""Paging styles: where the page request goes, where the rows come back, and what comes next.

Each style is a small immutable object. `start(params)` gives the first page's params, `rows(body)`
the rows of an answer, and `next(params, body, headers, rows, seen)` the next page's params or None.
Page numbers and offsets also answer `after_full(params, body, headers, seen)`: the page that follows
one that comes back full, so that a walk may ask for the pages ahead before this one is in; a cursor
is only known from the answer that carries it.
One loop in the client runs them all; a cursor or page that does not advance raises `PagingError`
instead of looping. This module imports nothing of the engine: the catalog declares its styles here.
"""
from __future__ import annotations

__all__ = ["Cursor", "MAX_PAGES", "Offset", "PageNumber", "Paging", "Unpaged", "Watch", "absent", "dig",
           "full", "total_of"]

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolkit.errors import PagingError


def dig(body: Any, path: str) -> Any:
    """The value at a dotted path of a JSON body (`pagination.cursor`), None when absent."""
    for part in path.split(".") if path else ():
        if not isinstance(body, Mapping):
            return None
        body = body.get(part)
    return body


def _header_int(headers: Mapping[str, str], name: str | None) -> int | None:
    value = headers.get(name) if name else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Cursor:
    """`{data: [...], pagination: {hasMore, cursor}}`; the next page repeats the filters plus the cursor."""
    limit: str = "limit"
    cursor: str = "cursor"
    items: str = "data"
    has_more: str = "pagination.hasMore"
    next_cursor: str = "pagination.cursor"
    max_size: int = 500

    def start(self, params: dict[str, Any]) -> dict[str, Any]:
        return {self.limit: self.max_size, **params}

    def rows(self, body: Any) -> list:
        return _rows(body, self.items)

    def next(self, params: dict, body: Any, headers: Mapping, rows: list, seen: int) -> dict | None:
        cursor = dig(body, self.next_cursor)
        if not rows or not dig(body, self.has_more) or cursor in (None, ""):
            return None
        if cursor == params.get(self.cursor):
            raise PagingError(f"the service gave cursor {cursor!r} twice")
        return {**params, self.cursor: cursor}


@dataclass(frozen=True)
class PageNumber:
    """Page numbers and sizes; the rows are a bare array, the totals come in headers."""
    page: str = "pageNumber"
    size: str = "pageSize"
    first: int = 0
    max_size: int = 200
    total_header: str | None = "total-size"        # total number of rows
    pages_header: str | None = None                # total number of pages

    def start(self, params: dict[str, Any]) -> dict[str, Any]:
        return {self.page: self.first, self.size: self.max_size, **params}

    def rows(self, body: Any) -> list:
        return _rows(body, "")

    def next(self, params: dict, body: Any, headers: Mapping, rows: list, seen: int) -> dict | None:
        # A count of pages is counted in the service's own page size, so it decides where it comes: a
        # service that cuts pages below the size asked for (its maximum) sends short pages that are
        # not the last. A count of rows does not: the data may have moved, and a short page ends.
        # The walk ends only when every signal says so: a full page is followed by another request
        # whatever a total says, since a total that lies (or data that grew) would otherwise cut it.
        page, size = int(params[self.page]), int(params[self.size])
        pages = _header_int(headers, self.pages_header)
        if not rows:
            return None
        if len(rows) < size and (pages is None or page - self.first + 1 >= pages):
            return None
        return {**params, self.page: page + 1}

    def after_full(self, params: dict, body: Any, headers: Mapping, seen: int) -> dict | None:
        """The page after `params` (with `seen` rows before it) if it comes back full and the totals
        say more follow: a guess to ask for ahead, which `next` confirms or drops."""
        size = int(params[self.size])
        total = _header_int(headers, self.total_header)
        pages = _header_int(headers, self.pages_header)
        page = int(params[self.page]) + 1
        if size < 1 or (total is not None and seen + size >= total) or \
                (pages is not None and page - self.first >= pages):
            return None
        return {**params, self.page: page}

    def total_in(self, body: Any, headers: Mapping) -> int | None:
        return _header_int(headers, self.total_header)


@dataclass(frozen=True)
class Offset:
    """Unomi-style offset/size with `{list, offset, pageSize, totalSize}`; a bare array is accepted too."""
    offset: str = "offset"
    size: str = "size"
    items: str = "list"
    total: str = "totalSize"
    page_size: int = 1000         # what the client asks for: -1 (everything) only works at offset 0
    max_size: int = -1            # the largest size the service takes (-1: unbounded)
    cap: int | None = None        # rows the service returns at most per request, whatever the size

    def start(self, params: dict[str, Any]) -> dict[str, Any]:
        size = self.page_size if self.cap is None else min(self.page_size, self.cap)
        return {self.offset: 0, self.size: size, **params}

    def rows(self, body: Any) -> list:
        return _rows(body, self.items)

    def next(self, params: dict, body: Any, headers: Mapping, rows: list, seen: int) -> dict | None:
        # Ends when the page is short and the total (if any) is reached: a full page is followed by
        # another request whatever the total says, and a short one too while the total says more
        # follow (a service that caps its pages below the size asked for).
        if not rows:
            return None
        offset, size = int(params.get(self.offset, 0)), int(params[self.size])
        total = self.total_in(body, headers)
        if size == -1:
            if self.cap is None or len(rows) < self.cap:
                return None
            size = self.cap        # -1 only works at offset 0: walk on in pages of the cap
        elif len(rows) < size and (total is None or offset + len(rows) >= total):
            return None
        return {**params, self.offset: offset + len(rows), self.size: size}

    def after_full(self, params: dict, body: Any, headers: Mapping, seen: int) -> dict | None:
        """The page after `params` (with `seen` rows before it) if it comes back full and the total
        says more follow: a guess to ask for ahead, which `next` confirms or drops."""
        offset, size = int(params.get(self.offset, 0)), int(params[self.size])
        total = self.total_in(body, headers)
        if size < 1 or (total is not None and offset + size >= total):
            return None
        return {**params, self.offset: offset + size}

    def total_in(self, body: Any, headers: Mapping) -> int | None:
        value = dig(body, self.total) if isinstance(body, Mapping) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Unpaged:
    """One request holds every row; `items` is where they are (empty: the body is the array)."""
    items: str = ""

    def start(self, params: dict[str, Any]) -> dict[str, Any]:
        return dict(params)

    def rows(self, body: Any) -> list:
        return _rows(body, self.items)

    def next(self, params: dict, body: Any, headers: Mapping, rows: list, seen: int) -> dict | None:
        return None


Paging = Cursor | PageNumber | Offset | Unpaged


def total_of(style: Paging | None, body: Any, headers: Mapping[str, str]) -> int | None:
    """The rows the service says the whole walk holds, where the style reads a total."""
    return style.total_in(body, headers) if isinstance(style, PageNumber | Offset) else None


def full(style: Paging | None, params: Mapping[str, Any], rows: list) -> bool:
    """Whether a page came back with as many rows as were asked for."""
    key = {Cursor: "limit", PageNumber: "size", Offset: "size"}.get(type(style))
    size = params.get(getattr(style, key)) if key else None
    try:
        return size is not None and int(size) > 0 and len(rows) >= int(size)
    except (TypeError, ValueError):
        return False


# a walk's ceiling where nothing better is known: 100,000 pages is 20-100 million rows at the
# services' page sizes, past any collection they hold, and minutes of requests, not days
MAX_PAGES = 100_000


def _sha1(content: bytes) -> tuple[int, bytes]:
    return len(content), hashlib.sha1(content, usedforsecurity=False).digest()


def _siphash(content: bytes) -> tuple[int, int]:
    return len(content), hash(content)


# Python's own hash of bytes is SipHash-1-3 with a key drawn at the process's start: 64 bits, and 2.5x
# cheaper than SHA-1 in hardware (0.024 against 0.061 CPU-s per 100,000 assets, pages of 574 kB;
# BLAKE2b 0.12, MD5 0.15; CRC-32 0.027 but 32 bits, too few). SHA-1 where the hash is narrower or another.
_digest = _siphash if sys.hash_info.width >= 64 and sys.hash_info.algorithm.startswith("siphash") else _sha1


class Watch:
    """What one walk has asked for and been given, so that it cannot loop or run away: a cursor,
    page or offset asked for twice, a page whose rows are a page that came before (a service that
    ignores the paging param, or answers page numbers modulo something), or more pages than its
    ceiling (`max_pages`, or ten times the pages the service's own total needs, plus 100) raise
    PagingError. Pages are compared by a 64-bit digest of their answer's bytes and their length
    (`_digest`): two pages of a walk of 100,000 collide by chance once in some 10^9 walks."""

    def __init__(self, action: str, style: Paging, max_pages: int | None = None) -> None:
        self.action, self.style, self.max_pages = action, style, max_pages
        self.asked: set[str] = set()
        self.pages: dict[tuple[int, Any], int] = {}
        self.count = 0
        self.ceiling = max_pages or MAX_PAGES
        self.why = "declared for the resource" if max_pages else f"toolkit's default of {MAX_PAGES:,}"

    def asking(self, request: Mapping[str, Any]) -> None:
        where = repr(sorted(request.items()))
        if where in self.asked:
            shown = {k: v for k, v in request.items() if k in _position_keys(self.style)} or dict(request)
            raise PagingError(f"{self.action}: the service led the walk back to {shown} after "
                              f"{self.count} pages; walking on would loop. Nothing of this walk was kept")
        self.asked.add(where)
        if self.count >= self.ceiling:
            raise PagingError(f"{self.action}: the walk reached its ceiling of {self.ceiling:,} pages "
                              f"({self.why}) and the service still said more follow. Nothing of this "
                              f"walk was kept; pass max_pages= if the collection is really that large")

    def answered(self, request: Mapping[str, Any], rows: list, content: bytes, total: int | None = None) -> None:
        self.count += 1
        if self.count == 1:
            self._expect(total, request)
        if rows:
            digest = _digest(content)
            if digest in self.pages:
                raise PagingError(f"{self.action}: page {self.count} of the walk is page {self.pages[digest]} "
                                  f"again: the service ignores where the walk is. Nothing of this walk was kept")
            self.pages[digest] = self.count

    def _expect(self, total: int | None, request: Mapping[str, Any]) -> None:
        """The service's own total sets the ceiling, unless one was declared."""
        key = {PageNumber: "size", Offset: "size"}.get(type(self.style))
        try:
            size = int(request.get(getattr(self.style, key), 0)) if key else 0
        except (TypeError, ValueError):
            size = 0
        if self.max_pages is None and total is not None and size > 0:
            self.ceiling = min(MAX_PAGES, 10 * -(-total // size) + 100)
            self.why = f"ten times the {total:,} rows the service says it holds, plus 100 pages"


def _position_keys(style: Paging) -> tuple[str, ...]:
    if isinstance(style, Cursor):
        return (style.cursor,)
    if isinstance(style, PageNumber):
        return (style.page,)
    if isinstance(style, Offset):
        return (style.offset,)
    return ()


def absent(style: Paging | None, body: Any, headers: Mapping[str, str]) -> list[str]:
    """What the declared paging style reads and this answer lacks: body paths (the rows key, which
    must hold a list, and the paging keys) and headers, as `header NAME`. A bare array is an offset
    answer too (it has no envelope to lack anything); a page-number answer's keys are its headers.
    The pull reports them as drift (toolkit.pull.drift), the doctor as paging that differs."""
    paths: list[str] = []
    if isinstance(style, Cursor):
        paths = [style.items, style.has_more, style.next_cursor]
    elif isinstance(style, Offset) and isinstance(body, Mapping):
        paths = [style.items, style.total]
    elif isinstance(style, Unpaged) and style.items and not isinstance(body, list):
        paths = [style.items]
    items = getattr(style, "items", None)
    found = [path for path in paths if not _holds(body, path, list if path == items else object)]
    if isinstance(style, PageNumber):
        names = {name.lower() for name in headers}
        found += [f"header {name}" for name in (style.total_header, style.pages_header)
                  if name and name.lower() not in names]
    return found


def _holds(body: Any, path: str, kind: type) -> bool:
    for part in path.split("."):
        if not isinstance(body, Mapping) or part not in body:
            return False
        body = body[part]
    return isinstance(body, kind)


def _rows(body: Any, items: str) -> list:
    if isinstance(body, list):
        return body
    found = dig(body, items) if items else body
    if found is None:
        return []
    if isinstance(found, list):
        return found
    raise PagingError(f"expected a list at {items or 'the top'} of the answer, got {type(found).__name__}")
