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
        page, size = int(params[self.page]), int(params[self.size])
        total = _header_int(headers, self.total_header)
        pages = _header_int(headers, self.pages_header)
        if not rows:
            return None
        if pages is not None:
            return {**params, self.page: page + 1} if page - self.first + 1 < pages else None
        if len(rows) < size or (total is not None and seen >= total):
            return None
        return {**params, self.page: page + 1}

    def after_full(self, params: dict, body: Any, headers: Mapping, seen: int) -> dict | None:
        """`next` if the page of `params` (with `seen` rows before it) comes back full."""
        return _after_full(self, params, body, headers, seen)


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
        if not rows:
            return None
        offset, size = int(params.get(self.offset, 0)), int(params[self.size])
        total = dig(body, self.total) if isinstance(body, Mapping) else None
        if total is not None and offset + len(rows) >= int(total):
            return None
        if total is None and size != -1 and len(rows) < size:
            return None
        if size == -1:
            if self.cap is None or len(rows) < self.cap:
                return None
            size = self.cap        # -1 only works at offset 0: walk on in pages of the cap
        return {**params, self.offset: offset + len(rows), self.size: size}

    def after_full(self, params: dict, body: Any, headers: Mapping, seen: int) -> dict | None:
        """`next` if the page of `params` (with `seen` rows before it) comes back full."""
        return _after_full(self, params, body, headers, seen)


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


def _after_full(style: PageNumber | Offset, params: dict, body: Any, headers: Mapping, seen: int) -> dict | None:
    # `body` and `headers` are those of any page already in: they carry the totals that end the walk
    size = int(params[style.size])
    return None if size < 1 else style.next(params, body, headers, [None] * size, seen + size)


def absent(style: Paging | None, body: Any, headers: Mapping[str, str]) -> list[str]:
    """What the declared paging style reads and this answer lacks: body paths (the rows key, which
    must hold a list, and the paging keys) and headers, as `header NAME`. A bare array is an offset
    answer too (it has no envelope to lack anything); a page-number answer's keys are its headers.
    The pull reports them as drift (toolkit.drift), the doctor as paging that differs."""
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
