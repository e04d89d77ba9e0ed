"""Pages decoded straight into a Resource's declared fields (msgspec), for the fetchers' walks.

Parsing a page into dicts and then reading every declared field out of every dict costs the GIL
twice per value; a walk spends most of its time there. msgspec decodes the answer into Structs made
from the Resource's columns instead (declared types checked as it goes, no dict per record), and
`frames.to_arrow` reads their fields column by column.

A page is decoded this way only when every record fits: each key a declared one, each value of its
declared type (an integer for a number is fine), and each flattened object (`coverVersion`) with
only the fields the columns read. Anything else (an undeclared field for `extra`, a number where
text is declared) makes `decode` return None, and the page is parsed the general way
(`frames.to_arrow` over dicts), which types it the same. The tables are equal either way
(tests/pull/test_fetch.py checks every paged resource of the sandbox).

So an answer that drifts from the declared shapes costs the general parse, never a failure, and a
page that fits costs nothing more for drift: `frames` looks for what it can still hold (a list
column's value, a declared field absent from every record: a `Rows` keeps the answers' bytes to
look for the field's name in) and `toolkit.pull.drift` for the rest. An envelope without the declared
rows key is parsed the general way too, and `mend` finds its rows under the one key that holds a list.
"""
from __future__ import annotations

__all__ = ["FAILURES_BEFORE_GIVING_UP", "PageDecoder", "RawRows", "Rows", "WIRE_KINDS",
           "id_kind", "items_key", "joined", "mend", "page_decoder", "record_type", "rows_of", "values_by_column"]

import functools
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from toolkit.catalog import SERVICES
from toolkit.catalog.paging import Cursor, Offset, PageNumber, Paging, Unpaged
from toolkit.catalog.spec import Action, Column, Resource

# what the wire may carry for a column of each declared type; lists and JSON are taken as they come
# (JSON columns are kept as their text: msgspec.Raw)
WIRE_KINDS: dict[str, Any] = {"string": str, "category": str, "integer": int, "number": float, "boolean": bool,
                              "timestamp": str | int | float}
FAILURES_BEFORE_GIVING_UP = 3          # pages of a walk that did not fit: the rest go the general way


class Rows(list):
    """A page's records as Structs of `record_type(resource)`, for `frames.to_arrow`; `values` reads
    them column by column (once). `contents` are the answers they were decoded from: a Struct holds
    an absent field as None, so whether a field was sent at all is read there (`frames`)."""

    def __init__(self, records: Iterable, resource: Resource, contents: tuple[bytes, ...] = ()) -> None:
        super().__init__(records)
        self.resource, self.contents = resource, contents

    @functools.cached_property
    def values(self) -> dict[str, list]:
        return values_by_column(self)


def id_kind(service: str) -> type:
    """What the wire carries for the service's ids: integers where its catalog says so (`Service.ids`),
    UUID or name strings elsewhere; ids keep their wire type."""
    return int if SERVICES[service].ids == "integer" else str


def _kind(column: Column, service: str) -> Any:
    if column.dtype == "json":            # the value's JSON text as it came (frames.json_of_raw)
        return msgspec.Raw
    if column.dtype == "id":
        return id_kind(service) | None
    kind = WIRE_KINDS.get(column.dtype)
    return Any if kind is None else kind | None


@functools.cache
def record_type(resource: Resource) -> type[msgspec.Struct] | None:
    """A Struct with the Resource's columns at their wire paths (objects nested), unknown fields
    refused; None when a path is read both whole and in part (no Struct can hold both)."""
    tree: dict[str, Any] = {}
    for column in resource.columns:
        *heads, leaf = column.path
        node = tree
        for part in heads:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                return None
        if leaf in node:
            return None
        node[leaf] = column
    names = itertools.count()

    def build(node: dict[str, Any], name: str) -> type[msgspec.Struct]:
        fields, rename = [], {}
        for wire, value in node.items():
            attribute = f"f{next(names)}"       # wire names need not be identifiers (`@type`)
            rename[attribute] = wire
            kind = build(value, f"{name}_{wire}") | None if isinstance(value, dict) else \
                _kind(value, resource.service)
            fields.append((attribute, kind, None))
        return msgspec.defstruct(name, fields, rename=rename, forbid_unknown_fields=True)
    return build(tree, f"{resource.service}_{resource.name}")


@functools.cache
def _plan(resource: Resource) -> tuple[tuple[str, tuple[tuple[tuple[str, ...], str, type | None], ...]], ...]:
    """Per column: its steps from the record down, each the attribute path so far (a key shared by the
    columns under one object), the attribute, and the Struct it holds (None at the leaf)."""
    record = record_type(resource)
    by_wire: dict[type, dict[str, tuple[str, type | None]]] = {}

    def attributes(struct: type) -> dict[str, tuple[str, type | None]]:
        if struct not in by_wire:
            found = {}
            for field in msgspec.structs.fields(struct):
                nested = [t for t in getattr(field.type, "__args__", ()) if isinstance(t, type)
                          and issubclass(t, msgspec.Struct)]
                found[field.encode_name] = (field.name, nested[0] if nested else None)
            by_wire[struct] = found
        return by_wire[struct]

    plan = []
    for column in resource.columns:
        steps, struct, key = [], record, ()
        for part in column.path:
            attribute, inner = attributes(struct)[part]
            key += (attribute,)
            steps.append((key, attribute, inner))
            struct = inner
        plan.append((column.name, tuple(steps)))
    return tuple(plan)


def values_by_column(rows: Rows) -> dict[str, list]:
    """Each column's values down the page, read from the Structs (None under an absent object).

    The Structs of each level are turned into tuples and transposed once (`astuple`, `zip`), which
    is quicker than reading each column's attribute from every record (benchmarks/fetch.py)."""
    record = record_type(rows.resource)
    levels: dict[tuple[str, ...], list] = {(): rows}
    fields: dict[tuple[str, ...], dict[str, list]] = {}
    out = {}
    for name, steps in _plan(rows.resource):
        objects, struct, at = rows, record, ()
        for key, attribute, inner in steps:
            if key not in levels:
                if at not in fields:
                    names = struct.__struct_fields__
                    columns = zip(*map(msgspec.structs.astuple, objects), strict=True) if objects \
                        else [()] * len(names)
                    fields[at] = dict(zip(names, map(list, columns), strict=True))
                values = fields[at][attribute]
                if inner is not None:      # an object read in part: its absence reads as all fields null
                    empty = inner()
                    values = [empty if o is None else o for o in values]
                levels[key] = values
            objects, struct, at = levels[key], inner, key
        out[name] = objects
    return out


def items_key(style: Paging | None) -> str | None:
    """The envelope key a style's rows are under; '' for a bare array; None when not known simply."""
    if isinstance(style, PageNumber):
        return ""
    if isinstance(style, Cursor | Offset | Unpaged):
        return style.items if "." not in style.items else None
    return None


def _envelope_keys(style: Paging) -> tuple[str, ...]:
    """The top keys of the answer the style reads besides its rows (`pagination` for `pagination.cursor`)."""
    paths = [style.has_more, style.next_cursor] if isinstance(style, Cursor) else \
        [style.total] if isinstance(style, Offset) else []
    return tuple(dict.fromkeys(path.split(".")[0] for path in paths if path))


class RawRows(list):
    """A page's records as their JSON text (msgspec.Raw), undecoded: what a walk needs to go on
    (how many rows came) when the page is typed elsewhere (toolkit.pull.typist)."""


@functools.cache
def _decoder(resource: Resource, style: Paging, items: str, raw: bool) -> msgspec.json.Decoder | None:
    """A decoder of the answers: the rows as a bare array, or in an envelope (a Struct of the rows and
    the keys the style reads); each row a Struct of the Resource, or its JSON text when `raw`. None
    when no Struct can hold the Resource's columns."""
    record = msgspec.Raw if raw else record_type(resource)
    if record is None:
        return None
    if not items:
        return msgspec.json.Decoder(list[record])
    others = _envelope_keys(style)
    # UNSET where a key is absent, so that an envelope without its rows key is told from an empty page
    envelope = msgspec.defstruct(
        "Envelope", [("rows", list[record] | None | msgspec.UnsetType, msgspec.UNSET),
                     *((f"k{i}", Any, msgspec.UNSET) for i in range(len(others)))],
        rename={"rows": items, **{f"k{i}": key for i, key in enumerate(others)}})
    return msgspec.json.Decoder(list[record] | envelope)


class PageDecoder:
    """Decodes one walk's pages: `decode(content)` gives the answer with its rows as `Rows` (or
    `RawRows`), or None when the page does not fit the Resource (the caller then parses it as JSON).
    After a few pages that did not fit, it stops trying for the rest of the walk."""

    def __init__(self, resource: Resource, style: Paging, decoder: msgspec.json.Decoder, items: str,
                 raw: bool = False) -> None:
        self.resource, self.items, self.decoder, self.failures, self.raw = resource, items, decoder, 0, raw
        self.others = _envelope_keys(style) if items else ()

    def _rows(self, records: list, content: bytes) -> list:
        return RawRows(records) if self.raw else Rows(records, self.resource, (content,))

    def decode(self, content: bytes) -> Any | None:
        if self.failures >= FAILURES_BEFORE_GIVING_UP:
            return None
        try:
            body = self.decoder.decode(content)
        except msgspec.DecodeError:        # ValidationError too: a record that does not fit, or not JSON
            self.failures += 1
            return None
        if isinstance(body, list):
            return self._rows(body, content)
        if body.rows is msgspec.UNSET:     # no rows key: the general parse, which `mend` looks into
            self.failures += 1
            return None
        # the envelope as the paging style reads it: the rows and the keys it needs (those sent), nothing else
        out: dict[str, Any] = {self.items: self._rows(body.rows or [], content)}
        for i, key in enumerate(self.others):
            value = getattr(body, f"k{i}")
            if value is not msgspec.UNSET:
                out[key] = value
        return out


def page_decoder(resource: Resource, style: Paging | None, *, raw: bool = False
                 ) -> Callable[[bytes], Any | None] | None:
    """A decoder for a walk of `resource` with `style`, or None when its answers need the general
    parse (rows inside a record answer, a dotted items path, columns no Struct can hold).
    With `raw`, the rows are left as JSON text: only their number and the paging keys are read."""
    items = items_key(style)
    if style is None or items is None or resource.items is not None:
        return None
    decoder = _decoder(resource, style, items, raw)
    return None if decoder is None else PageDecoder(resource, style, decoder, items, raw).decode


def rows_of(resource: Resource, action: Action, body: Any) -> list:
    """The rows of one answer: under the Resource's `items`, the answer itself for a record, or where
    the action's paging style says."""
    if resource.items:
        found = body.get(resource.items) if isinstance(body, dict) else None
        return found or []
    if action.response == "record":
        return [body] if isinstance(body, dict) else []
    style = action.paging
    return style.rows(body) if style else (body if isinstance(body, list) else [])


def joined(pages: list[list], resource: Resource) -> list:
    """The rows of several pages as one list for `frames.to_arrow`: `Rows` when every page was
    decoded, else dicts (a decoded page's Structs turned back into what the wire sent, as far as the
    columns read it)."""
    if all(isinstance(page, Rows) for page in pages):
        return Rows(itertools.chain.from_iterable(pages), resource,
                    tuple(itertools.chain.from_iterable(page.contents for page in pages)))
    return [msgspec.json.decode(msgspec.json.encode(row)) if isinstance(page, Rows) else row
            for page in pages for row in page]


def mend(resource: Resource, style: Paging | None, body: Any) -> tuple[Any, str | None]:
    """An envelope without the rows key its paging style declares, with its rows put there when one
    other key holds a list (a renamed key: the rows are kept), and what was found, for the drift
    report; the body as it is and None when its rows key is there, or it is no envelope."""
    items = items_key(style)
    if not items or resource.items is not None or not isinstance(body, dict) or items in body:
        return body, None
    lists = [key for key, value in body.items() if isinstance(value, list)]
    if len(lists) == 1:
        return {**body, items: body[lists[0]]}, f"no {items!r} key: the rows were under {lists[0]!r}"
    return body, f"no {items!r} key (keys: {', '.join(map(repr, body))})"
