"""Paging envelopes, one per paging style of the catalog, answered the way each real service does.

Cursor: `{data, pagination: {hasMore, cursor}, total}` with opaque cursors (asset library).
Offset: `{list, offset, pageSize, totalSize, totalSizeRelation}`, size -1 = all (audience platform).
PageNumber: a bare array with the totals in headers; 0-based `pageNumber`/`pageSize` with
`total-size`/`page-size` (translation) or 1-based `page`/`page_size` with the Scrivener headers
`total`, `total-pages`, `per-page`, `page-number` and `link` (media review, where `pages_header` is set).
Unpaged: `{items: [...]}`, or the bare array when `items` is empty.

Pages are list slices handed to orjson as they are: no per-record work, so big pages stay fast.

    answer_list(request, action, collection.all())
"""
from __future__ import annotations

__all__ = ["Records", "answer_list", "decode_cursor", "encode_cursor"]

import base64
import binascii
from typing import Any, Protocol
from urllib.parse import urlencode

from toolkit.catalog.spec import Action, Cursor, Offset, PageNumber, Paging, Unpaged
from toolkit.sandbox.exchange import Reject, Request, Response


class Records(Protocol):
    """What a page is cut from: a list, or a collection that makes its records as they are sliced."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> Any: ...


def answer_list(request: Request, action: Action | None, records: Records, clamp: bool = False,
                paging: Paging | None = None) -> Response:
    """The page of `records` that the request asks for, in the action's paging envelope (`action`: the
    request's routed action, which every list handler has).

    `clamp`: a page size above the maximum is cut to it instead of refused (media review).
    """
    if action is None:
        raise ValueError("answer_list answers a routed request: it has no action")
    style = paging or action.paging or Unpaged()
    if isinstance(style, Cursor):
        return _cursor(request, action, style, records)
    if isinstance(style, Offset):
        return _offset(request, action, style, records)
    if isinstance(style, PageNumber):
        return _page_number(request, action, style, records, clamp)
    return Response(200, _nest(style.items, records) if style.items else records)


def _default(action: Action, wire: str, fallback: int) -> int:
    """The page size a request without one gets: the catalog's declared default, else `fallback`."""
    for param in action.params:
        if param.wire == wire and isinstance(param.default, int):
            return param.default
    return fallback


def _nest(path: str, value: Any, into: dict[str, Any] | None = None) -> dict[str, Any]:
    """Put `value` at a dotted path (`pagination.hasMore`) of a dict."""
    into = {} if into is None else into
    *heads, last = path.split(".")
    node = into
    for head in heads:
        node = node.setdefault(head, {})
    node[last] = value
    return into


# --- cursor ------------------------------------------------------------------------------------

def encode_cursor(position: int) -> str:
    """An opaque cursor: clients must hand it back, never build one."""
    return base64.urlsafe_b64encode(f"sbx:{position}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        tag, _, position = text.partition(":")
        if tag != "sbx" or not position.isdigit():
            raise ValueError(cursor)
        return int(position)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise Reject(400, f"invalid cursor {cursor!r}") from None


def _cursor(request: Request, action: Action, style: Cursor, records: Records) -> Response:
    limit = request.int_arg(style.limit, _default(action, style.limit, min(100, style.max_size)))
    if limit is None or not 1 <= limit <= style.max_size:
        raise Reject(400, f"{style.limit} must be between 1 and {style.max_size}")
    token = request.arg(style.cursor)
    start = decode_cursor(token) if token else 0
    end = start + limit
    more = end < len(records)
    body = _nest(style.items, records[start:end])
    _nest(style.has_more, more, body)
    _nest(style.next_cursor, encode_cursor(end) if more else None, body)
    body["total"] = len(records)
    return Response(200, body)


# --- offset ------------------------------------------------------------------------------------

def _offset(request: Request, action: Action, style: Offset, records: Records) -> Response:
    offset = request.int_arg(style.offset, 0)
    size = request.int_arg(style.size, _default(action, style.size, 50))
    assert offset is not None and size is not None
    if offset < 0:
        raise Reject(400, f"{style.offset} must be 0 or positive")
    if size == 0 or size < -1:
        raise Reject(400, f"{style.size} must be a positive integer or -1")
    if size == -1 and offset != 0:
        raise Reject(400, f"{style.offset} must be 0 when {style.size} is -1")
    if size == -1 and style.max_size != -1:
        raise Reject(400, f"{style.size} -1 is not accepted here")
    if style.max_size > 0 and size > style.max_size:
        raise Reject(400, f"{style.size} must be at most {style.max_size}")
    count = len(records) if size == -1 else size
    if style.cap is not None:
        count = min(count, style.cap)
    chunk = records[offset:offset + count]
    body = _nest(style.items, chunk)
    body.update({"offset": offset, "pageSize": size if size != -1 else len(chunk)})
    _nest(style.total, len(records), body)
    body["totalSizeRelation"] = "EQUAL"
    return Response(200, body)


# --- page number -------------------------------------------------------------------------------

def _page_number(request: Request, action: Action, style: PageNumber, records: Records,
                 clamp: bool) -> Response:
    page = request.int_arg(style.page, style.first)
    size = request.int_arg(style.size, _default(action, style.size, min(50, style.max_size)))
    assert page is not None and size is not None
    if page < style.first:
        raise Reject(400, f"{style.page} must be at least {style.first}")
    if size < 1:
        raise Reject(400, f"{style.size} must be positive")
    if size > style.max_size:
        if not clamp:
            raise Reject(400, f"{style.size} must be at most {style.max_size}")
        size = style.max_size
    start = (page - style.first) * size
    total = len(records)
    headers: dict[str, str] = {}
    if style.total_header:
        headers[style.total_header] = str(total)
    if style.pages_header:
        # Scrivener's headers (the media review's server): one page even when there are no rows
        pages = max(-(-total // size), 1)
        headers[style.pages_header] = str(pages)
        headers["per-page"] = str(size)
        headers["page-number"] = str(page)
        headers["link"] = _links(request, style, page, size, pages)
    else:
        headers["page-size"] = str(size)
    return Response(200, records[start:start + size], headers)


def _links(request: Request, style: PageNumber, page: int, size: int, pages: int) -> str:
    """RFC 8288 links to the first, previous, next and last pages, keeping the other query params."""
    others = urlencode([(k, v) for k, values in request.query.items() if k not in (style.page, style.size)
                        for v in values])
    head = f"{request.url}?{others}&" if others else f"{request.url}?"
    last = pages - 1 + style.first

    def link(number: int, rel: str) -> str:
        return f'<{head}{style.page}={number}&{style.size}={size}>; rel="{rel}"'

    links = [link(style.first, "first")]
    if page > style.first:
        links.append(link(page - 1, "prev"))
    if page < last:
        links.append(link(page + 1, "next"))
    links.append(link(last, "last"))
    return ", ".join(links)
