"""What a page's records hold beyond the declared shapes: the `extra` column and the drift noted on a table.

Undeclared fields, values of another type than declared (`Page.mistyped`), flattened objects sent as
something else (`odd_objects`), nulls sent where a list is declared (`null_lists`) and declared fields
no record sent are counted per page; the mistyped and unread values are kept in `extra` as JSON at
their wire path. What was found travels in the table's schema metadata under `DRIFT`.
"""
from __future__ import annotations

__all__ = ["DRIFT", "Page", "as_wire", "declared_keys", "extra_column", "noted", "null_lists", "odd_objects",
           "read_in_part", "sent"]

import functools
import re
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.spec import Column, Resource
from toolkit.pull.columns import source_of
from toolkit.pull.decoding import Rows, items_key


@functools.cache
def declared_keys(resource: Resource) -> frozenset[str]:
    """The wire keys at the top of a record that the Resource's columns read."""
    return frozenset(source_of(c)[0] for c in resource.columns)


@functools.cache
def read_in_part(resource: Resource) -> tuple[tuple[str, frozenset[str]], ...]:
    """Objects the Resource flattens (`coverVersion.fileName`) without a column of their own: their
    top key and the fields it reads of them."""
    whole = {source_of(c)[0] for c in resource.columns if len(source_of(c)) == 1}
    out: dict[str, set[str]] = {}
    for column in resource.columns:
        path = source_of(column)
        if len(path) > 1 and path[0] not in whole:
            out.setdefault(path[0], set()).add(path[1])
    return tuple((key, frozenset(fields)) for key, fields in out.items())


def _unread(row: dict, known: frozenset[str], nested: tuple[tuple[str, frozenset[str]], ...]) -> dict:
    """What no column reads of a record: undeclared keys, and the unread fields of a flattened object."""
    out = {key: value for key, value in row.items() if key not in known}
    for key, fields in nested:
        value = row.get(key)
        if isinstance(value, dict) and not fields.issuperset(value):
            out[key] = {k: v for k, v in value.items() if k not in fields}
    return out


def extra_column(rows: Sequence[dict], resource: Resource, page: Page | None = None) -> pa.Array:
    """The `extra` column: JSON text of what no column reads, None where a record has nothing more.
    Most records of a well-declared Resource have nothing more: a set comparison tells, per record.
    With a `page`, its undeclared fields are counted and its mistyped values join theirs."""
    known, nested = declared_keys(resource), read_in_part(resource)
    texts: list | None = None
    moved = page.moved if page is not None else {}
    for i, row in enumerate(rows):
        if known.issuperset(row) and i not in moved:
            for key, fields in nested:
                value = row.get(key)
                if value.__class__ is dict and not fields.issuperset(value):
                    break
            else:
                continue
        rest = _unread(row, known, nested)
        if page is not None:
            for key, value in rest.items():
                if key in page.nested and value.__class__ is dict and (row.get(key).__class__ is dict):
                    for inner, held in value.items():
                        page.add(f"{key}.{inner}", "undeclared", held, row)
                else:
                    page.add(key, "undeclared", value, row)
            _merge(rest, moved.get(i, ()))
        if rest:
            if texts is None:
                texts = [None] * len(rows)
            texts[i] = orjson.dumps(rest).decode()
    return pa.nulls(len(rows), pa.string()) if texts is None else pa.array(texts, pa.string())


def _merge(rest: dict, moved: Sequence[tuple[tuple[str, ...], Any]]) -> None:
    """Mistyped values into a record's `extra`, each at its wire path (`coverVersion.fileName` under
    `coverVersion`, beside that object's unread fields)."""
    for path, value in moved:
        node = rest
        for part in path[:-1]:
            inner = node.get(part)
            node = node.setdefault(part, {}) if inner is None or inner.__class__ is dict else {}
        node[path[-1]] = value


# a page table's schema metadata key for what its records held beyond the declared shapes (JSON, as
# `Page.attach` writes it); no such key when they held nothing more
DRIFT = b"toolkit.drift"


class Page:
    """What one page's records hold beyond the declared shapes, found while typing them: per (field,
    kind) a count and the first value, the first record that differed, the declared fields no record
    sent, and the mistyped values by row for `extra`."""

    def __init__(self, rows: Sequence, resource: Resource) -> None:
        self.rows, self.resource = rows, resource
        self.entries: dict[tuple[str, str], list] = {}
        self.record: Any = None
        self.absent: list[str] = []
        self.moved: dict[int, list[tuple[tuple[str, ...], Any]]] = {}
        self.nested = frozenset(key for key, _ in read_in_part(resource))

    def add(self, field: str, kind: str, example: Any, record: Any, count: int = 1) -> None:
        entry = self.entries.get((field, kind))
        if entry is None:
            self.entries[field, kind] = [count, example]
            if self.record is None:
                self.record = as_wire(record)
        else:
            entry[0] += count

    def mistyped(self, column: Column, rows: list[int], values: Sequence, keep: bool) -> None:
        """Rows whose value of `column` is not of its type; unless the column keeps them as text
        (`keep`), their values go to `extra`."""
        path = source_of(column)
        for i in rows:
            value = values[i]
            self.add(".".join(path), "type", value, self.rows[i])
            if not keep:
                self.moved.setdefault(i, []).append((path, value))

    def attach(self, table: pa.Table) -> pa.Table:
        if not (self.entries or self.absent):
            return table
        found = {"rows": table.num_rows, "record": self.record, "absent": self.absent,
                 "fields": [[field, kind, count, example] for (field, kind), (count, example) in self.entries.items()]}
        return table.replace_schema_metadata({DRIFT: orjson.dumps(found, default=str)})


def noted(table: pa.Table, fields: list[list]) -> pa.Table:
    """A table with more drift entries ([field, kind, count, example]) under `DRIFT`: what the walk
    saw of the answers' envelopes, which travels with the rows typed after it."""
    metadata = table.schema.metadata or {}
    found = orjson.loads(metadata[DRIFT]) if DRIFT in metadata else \
        {"rows": table.num_rows, "record": None, "absent": [], "fields": []}
    found["fields"] = [*fields, *found["fields"]]
    return table.replace_schema_metadata({**metadata, DRIFT: orjson.dumps(found, default=str)})


def as_wire(record: Any) -> Any:
    """A record as the wire sent it, as far as a decoded Struct holds it."""
    if record is None or record.__class__ is dict:
        return record
    return msgspec.json.decode(msgspec.json.encode(record))


def sent(rows: Sequence, column: Column) -> bool:
    """Whether any record sent the column's field (as null or not): looked up in the records, or, for
    records decoded into Structs (which hold an absent field as None), in the answers' text."""
    path = source_of(column)
    if isinstance(rows, Rows):
        if not rows.contents:
            return True       # nothing to look in: not said to be missing
        name = orjson.dumps(path[-1])
        return any(name in content for content in rows.contents)
    for row in rows:
        value = row
        for part in path[:-1]:
            value = value.get(part) if value.__class__ is dict else None
        if value.__class__ is dict and path[-1] in value:
            return True
    return False


def null_lists(rows: Sequence, column: Column, array: pa.Array, page: Page) -> None:
    """A null sent where a list is declared (`"tags": null`, not an absent field) is a value of
    another type: counted, record by record. Records decoded into Structs hold an absent field as None
    too, so there the answers' text says which records sent it (`_wire_records`)."""
    path = source_of(column)
    moved = {i for i, held in page.moved.items() if any(p == path for p, _ in held)}
    nulls = [i for i in pc.indices_nonzero(array.is_null()).to_pylist() if i not in moved]
    if not nulls:
        return
    records = _wire_records(rows, path[-1]) if isinstance(rows, Rows) else rows
    sent = []
    for i in nulls if records else ():
        value = records[i]
        for part in path[:-1]:
            value = value.get(part) if value.__class__ is dict else None
        if value.__class__ is dict and path[-1] in value:
            sent.append(i)
    if sent:
        page.add(".".join(path), "type", None, records[sent[0]], len(sent))


def _wire_records(rows: Rows, name: str) -> list | None:
    """The records of decoded rows as the answers sent them (dicts), when some answer holds `name`
    with a null value; None when none does (so no record sent it as null: no parse at all, the usual
    case of a field some records lack), or when the answers' records cannot be matched with the rows."""
    sent_null = re.compile(re.escape(orjson.dumps(name)) + rb"\s*:\s*null")
    if not any(sent_null.search(content) for content in rows.contents):
        return None
    action = catalog.ACTIONS.get(rows.resource.action)
    items = items_key(action.paging) if action is not None else None
    if items is None:
        return None
    records: list = []
    for content in rows.contents:
        body = orjson.loads(content)
        records.extend(body if isinstance(body, list) else body.get(items) or [] if isinstance(body, dict) else [])
    return records if len(records) == len(rows) else None


def odd_objects(rows: Sequence[dict], resource: Resource, page: Page) -> None:
    """A flattened object (`coverVersion`) sent as something else (text, a list): its fields cannot be
    read, so its whole value goes to `extra` under its key."""
    for key in page.nested:
        for i, row in enumerate(rows):
            value = row.get(key)
            if value is not None and value.__class__ is not dict:
                page.add(key, "type", value, row)
                page.moved.setdefault(i, []).append(((key,), value))
