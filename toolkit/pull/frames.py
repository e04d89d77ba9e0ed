"""Records → typed Arrow tables and DataFrames, one Resource's columns at a time.

Columns are snake_case; timestamps tz-aware UTC whether the wire sent ISO strings or epoch ms; ids
keep their wire type; statuses are categoricals; lists stay lists; a field the Resource does not
declare is kept in the `extra` JSON column, so nothing is dropped. An empty result keeps the declared
columns and dtypes. Tables are built column by column from the parsed pages, never row by row.

A value of another type than its column declares (`"42"` for an integer, an object where a list is,
text that is no moment) is kept too, as its wire value in `extra` under the field's wire name (a
flattened field under its object's key), and the column holds null there. Not a text column of its
own beside each column: the column keeps its declared type whatever the service sends, so a later
load never conflicts with an earlier one and SQL over it keeps working, and `extra` is already where
an analyst looks for what the columns do not hold (`json_extract(extra, '$.count')`). Text columns
are the exception, since text holds any value: a number where text is declared is kept there as its
JSON text, and so is every id of a page where one id is not an integer (an id is a row's key: it
stays in its column, which is then text, and the workspace widens the stored column to text).

What a page held beyond the declared shapes (an undeclared field, a mistyped value, a declared field
no record sent) is counted and put in the table's schema metadata under `DRIFT`, so that it travels
with the table from the typing helper (Arrow IPC keeps it); `toolkit.pull.drift` reads it per load.
"""
from __future__ import annotations

__all__ = ["ARROW_TYPES", "DRIFT", "ID_TYPES", "TIMESTAMP", "WIRE_TYPES", "conform", "declared_keys", "empty",
           "json_of_raw", "noted", "source_of", "to_arrow", "to_pandas"]

import functools
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.spec import Column, Resource
from toolkit.pull.decoding import Rows, items_key

if TYPE_CHECKING:    # pandas is imported where a frame is made: the page-typing helper process needs none
    import pandas as pd


def _use_the_system_allocator() -> None:
    """Arrow's buffers from the system allocator, unless the analyst chose one (ARROW_DEFAULT_MEMORY_POOL).

    pyarrow's default, mimalloc, keeps the pages a pull frees mapped around the rows a fetch keeps, so
    a big fetch held more memory with it and pulled no faster (benchmarks/fetch.py).
    """
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pa.set_memory_pool(pa.system_memory_pool())


_use_the_system_allocator()

TIMESTAMP = pa.timestamp("ms", tz="UTC")
ARROW_TYPES = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(),
               "boolean": pa.bool_(), "timestamp": TIMESTAMP, "category": pa.string(), "json": pa.string()}


def source_of(column: Column) -> tuple[str, ...]:
    return column.path


def _pick(rows: Sequence[dict], path: tuple[str, ...]) -> list:
    if len(path) == 1:
        key = path[0]
        return [row.get(key) for row in rows]
    head, rest = path[0], path[1:]
    out = []
    for row in rows:
        value = row.get(head)
        for part in rest:
            value = value.get(part) if isinstance(value, dict) else None
        out.append(value)
    return out


def _timestamps(values: list) -> tuple[pa.Array, list[int]]:
    """Moments from epoch milliseconds or ISO text (both may come in one page), and the rows whose
    value is neither, or text no parser reads."""
    kinds = {v.__class__ for v in values} - {type(None)}
    if not kinds:
        return pa.nulls(len(values), TIMESTAMP), []
    numbers = [v if v.__class__ in (int, float) and _in_int64(v) else None for v in values]
    texts = pa.array([v if v.__class__ is str else None for v in values], pa.string())
    epochs = pa.array([None if v is None else int(v) for v in numbers], pa.int64()).cast(TIMESTAMP)
    moments = None if kinds <= {int, float} else _timestamps_of_text(texts)
    parsed = epochs if moments is None else moments if kinds == {str} else pc.coalesce(epochs, moments)
    bad = [i for i, v in enumerate(values) if v is not None and v.__class__ is not str and numbers[i] is None]
    return parsed, sorted(bad + (_unparsed(texts, moments) if moments is not None else []))


def _in_int64(value: int | float) -> bool:
    return -2**63 <= value < 2**63


def _unparsed(wire: pa.Array, parsed: pa.Array) -> list[int]:
    """The rows whose wire text no parser read as a moment (the parsers give null for them)."""
    if not (pa.types.is_string(wire.type) or pa.types.is_large_string(wire.type)) \
            or parsed.null_count <= wire.null_count:
        return []
    lost = pc.and_(pc.is_valid(wire), pc.is_null(parsed))
    return pc.indices_nonzero(lost).to_pylist()


def _timestamps_of_wire(wire: pa.Array) -> pa.Array:
    """Timestamps from an Arrow array of what the wire sent: epoch milliseconds or ISO text."""
    if pa.types.is_null(wire.type) or wire.null_count == len(wire):
        return pa.nulls(len(wire), TIMESTAMP)
    if pa.types.is_floating(wire.type):
        wire = wire.cast(pa.int64(), safe=False)     # whole milliseconds, as int() gives them
    if pa.types.is_integer(wire.type):
        return wire.cast(TIMESTAMP)
    return _timestamps_of_text(wire)


def _timestamps_of_text(text: pa.Array) -> pa.Array:
    try:  # ISO 8601 with a zone and at most milliseconds, the usual case: one Arrow cast, the quick way
        return text.cast(TIMESTAMP)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass  # no zone, finer fractions, a date alone: the general path below
    # `2026-11-02T09:00:00.000Z`, with or without fractions, a Z or an offset (`+02:00` or `+0200`)
    text = pc.replace_substring_regex(text, r"Z$", "+00:00")
    try:
        parsed = pc.strptime(pc.utf8_slice_codeunits(text, 0, 19), "%Y-%m-%dT%H:%M:%S", "ms")
        fraction = pc.extract_regex(text, r"^.{19}\.(?P<f>\d{1,3})")
        millis = pc.cast(pc.utf8_rpad(pc.struct_field(fraction, [0]), 3, "0"), pa.int64())
        offset = pc.extract_regex(text, r"(?P<s>[+-])(?P<h>\d\d):?(?P<m>\d\d)$")
        sign = pc.if_else(pc.equal(pc.struct_field(offset, [0]), "-"), -1, 1)
        minutes = pc.add(pc.multiply(pc.cast(pc.struct_field(offset, [1]), pa.int64()), 60),
                         pc.cast(pc.struct_field(offset, [2]), pa.int64()))
        shift = pc.multiply(pc.multiply(pc.fill_null(pc.multiply(sign, minutes), 0), 60_000), -1)
        epoch = pc.add(pc.add(parsed.cast(pa.int64()), pc.fill_null(millis, 0)), shift)
        return epoch.cast(TIMESTAMP)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        import pandas as pd
        parsed = pd.to_datetime(pd.Series(text.to_pylist(), dtype=object), utc=True, errors="coerce",
                                format="mixed")
        return pa.array(parsed).cast(TIMESTAMP, safe=False)  # microseconds truncated, as on the fast path


def _json_text(values: list) -> pa.Array:
    return pa.array([None if v is None else orjson.dumps(v).decode() for v in values], pa.string())


# ids keep their wire type: integers where the catalog says a service's ids are, UUID strings elsewhere
ID_TYPES = {key: pa.int64() for key, service in catalog.SERVICES.items() if service.ids == "integer"}
@functools.cache
def _pandas_types() -> dict[pa.DataType, Any]:
    import pandas as pd
    return {pa.string(): pd.StringDtype("pyarrow"), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def _pandas_type(arrow_type: pa.DataType) -> Any:
    if pa.types.is_nested(arrow_type):  # cells read as Python lists, as from the workspace
        import pandas as pd
        return pd.ArrowDtype(arrow_type)
    return _pandas_types().get(arrow_type)


def _fits(value: Any, dtype: str, service: str) -> bool:
    """Whether a wire value is of the type a non-text column declares (booleans are not numbers)."""
    kind = value.__class__
    if dtype in ("integer", "id"):
        return kind is int and _in_int64(value)
    if dtype == "number":
        return kind is float or (kind is int and _in_int64(value))
    if dtype == "boolean":
        return kind is bool
    return True


def _text(value: Any) -> str:
    return value if value.__class__ is str else orjson.dumps(value).decode()


def _typed(column: Column, values: list, service: str) -> tuple[pa.Array, list[int]]:
    """A column's array from its wire values, and the rows whose value is not of the declared type:
    a text column holds their JSON text, any other null (the caller keeps their values in `extra`)."""
    dtype = column.dtype
    if dtype == "id" and service not in ID_TYPES:
        dtype = "string"
    if dtype == "timestamp":
        return _timestamps(values)
    if dtype == "json":
        return _json_text(values), []
    if dtype == "list":
        return _lists(values)
    if dtype in ("string", "category"):
        bad = [i for i, v in enumerate(values) if v is not None and v.__class__ is not str]
        return pa.array([v if v is None else _text(v) for v in values] if bad else values, pa.string()), bad
    bad = [i for i, v in enumerate(values) if v is not None and not _fits(v, dtype, service)]
    if dtype == "id":      # the row's key stays in its column: every id of the page as text
        return (pa.array([v if v is None else _text(v) for v in values], pa.string()) if bad
                else pa.array(values, ID_TYPES[service])), bad
    if bad:
        values = list(values)
        for i in bad:
            values[i] = None
    return pa.array(values, ARROW_TYPES[dtype]), bad


def _lists(values: list) -> tuple[pa.Array, list[int]]:
    if not values:  # no element type to infer: strings, the commonest lists, rather than a null column
        return pa.array([], pa.list_(pa.string())), []
    try:
        array = pa.array(values)
        if pa.types.is_list(array.type) or pa.types.is_null(array.type):
            return array, []
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    bad = [i for i, v in enumerate(values) if v is not None and v.__class__ is not list]
    if bad:
        values = list(values)
        for i in bad:
            values[i] = None
    try:
        array = pa.array(values)
        return (array if not pa.types.is_null(array.type) else pa.nulls(len(values), pa.list_(pa.string()))), bad
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _json_text(values), bad   # lists of mixed elements: their JSON text


@functools.cache
def declared_keys(resource: Resource) -> frozenset[str]:
    """The wire keys at the top of a record that the Resource's columns read."""
    return frozenset(source_of(c)[0] for c in resource.columns)


@functools.cache
def _read_in_part(resource: Resource) -> tuple[tuple[str, frozenset[str]], ...]:
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


def _extra(rows: Sequence[dict], resource: Resource, page: _Page | None = None) -> pa.Array:
    """The `extra` column: JSON text of what no column reads, None where a record has nothing more.
    Most records of a well-declared Resource have nothing more: a set comparison tells, per record.
    With a `page`, its undeclared fields are counted and its mistyped values join theirs."""
    known, nested = declared_keys(resource), _read_in_part(resource)
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
# `_Page.attach` writes it); no such key when they held nothing more
DRIFT = b"toolkit.drift"


class _Page:
    """What one page's records hold beyond the declared shapes, found while typing them: per (field,
    kind) a count and the first value, the first record that differed, the declared fields no record
    sent, and the mistyped values by row for `extra`."""

    def __init__(self, rows: Sequence, resource: Resource) -> None:
        self.rows, self.resource = rows, resource
        self.entries: dict[tuple[str, str], list] = {}
        self.record: Any = None
        self.absent: list[str] = []
        self.moved: dict[int, list[tuple[tuple[str, ...], Any]]] = {}
        self.nested = frozenset(key for key, _ in _read_in_part(resource))

    def add(self, field: str, kind: str, example: Any, record: Any, count: int = 1) -> None:
        entry = self.entries.get((field, kind))
        if entry is None:
            self.entries[field, kind] = [count, example]
            if self.record is None:
                self.record = _as_wire(record)
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


def _as_wire(record: Any) -> Any:
    """A record as the wire sent it, as far as a decoded Struct holds it."""
    if record is None or record.__class__ is dict:
        return record
    return msgspec.json.decode(msgspec.json.encode(record))


def _sent(rows: Sequence, column: Column) -> bool:
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


# the wire type a declared scalar column is read as by Arrow's own converter (timestamps by sample)
WIRE_TYPES = {"string": pa.string(), "category": pa.string(), "integer": pa.int64(), "number": pa.float64(),
              "boolean": pa.bool_()}


@functools.cache
def _scalar_paths(resource: Resource, parent: frozenset[str]) -> tuple[tuple[Column, tuple[str, ...]], ...]:
    """The columns Arrow can convert in one pass as a struct: scalars whose wire path is no other
    column's prefix (an object read whole and in part cannot be both a struct and a value)."""
    paths = {c.name: source_of(c) for c in resource.columns if c.name not in parent}
    scalar = [c for c in resource.columns if c.name in paths
              and (c.dtype in WIRE_TYPES or c.dtype in ("id", "timestamp"))]
    out, taken = [], set()
    for column in scalar:
        path = paths[column.name]
        clashes = any(other != path and (other[:len(path)] == path or path[:len(other)] == other)
                      for other in paths.values())
        if not clashes and path not in taken:
            out.append((column, path))
            taken.add(path)
    return tuple(out)


def _wire_type(column: Column, path: tuple[str, ...], rows: Sequence[dict], service: str) -> pa.DataType:
    if column.dtype == "id":
        return ID_TYPES.get(service, pa.string())
    if column.dtype != "timestamp":
        return WIRE_TYPES[column.dtype]
    for row in rows:          # epoch milliseconds or ISO text: the first value says which
        value = row
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            return pa.int64() if isinstance(value, int) else pa.float64() if isinstance(value, float) \
                else pa.string()
    return pa.null()


def _struct_of(leaves: dict[tuple[str, ...], pa.DataType]) -> pa.StructType:
    tree: dict = {}
    for path, kind in leaves.items():
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = kind

    def build(node: dict) -> pa.StructType:
        return pa.struct([(k, build(v) if isinstance(v, dict) else v) for k, v in node.items()])
    return build(tree)


def _fields(array: pa.StructArray) -> dict[str, pa.Array]:
    """A struct array's fields by name, the struct's own nulls merged into each (StructArray.flatten)."""
    return dict(zip(array.type.names, array.flatten(), strict=True))


def _scalars(rows: Sequence[dict], resource: Resource, parent: dict) -> dict[str, pa.Array]:
    """The scalar columns of a page in one pass of Arrow's C++ converter over the records; {} when a
    record does not fit the declared types (the caller then converts column by column)."""
    plan = _scalar_paths(resource, frozenset(parent))
    if not plan or not rows:
        return {}
    leaves = {path: _wire_type(column, path, rows, resource.service) for column, path in plan}
    try:
        records = pa.array(rows, type=_struct_of(leaves))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return {}
    levels: dict[tuple[str, ...], dict[str, pa.Array]] = {(): _fields(records)}
    out = {}
    for column, path in plan:
        for depth in range(1, len(path)):
            prefix = path[:depth]
            if prefix not in levels:
                parent_array = levels[path[:depth - 1]][path[depth - 1]]
                levels[prefix] = _fields(parent_array)
        wire = levels[path[:-1]][path[-1]]
        typed = _timestamps_of_wire(wire) if column.dtype == "timestamp" else wire
        # what Arrow's converter takes without a word: a float for an integer (truncated), a boolean
        # for a number, text that is no moment (null); such a column goes value by value (`_typed`)
        if column.dtype == "timestamp" and _unparsed(wire, typed):
            continue
        if pa.types.is_integer(wire.type) or pa.types.is_floating(wire.type) and column.dtype != "timestamp":
            odd = float if pa.types.is_integer(wire.type) else bool
            if any(v.__class__ is odd for v in _pick(rows, path)):
                continue
        out[column.name] = typed
    return out


# signs that a service's JSON is not orjson's compact form: whitespace between tokens, or escapes
# orjson does not write; structural marks only, which text inside a string cannot hold (its quotes
# are escaped) or rarely does. Each is looked for only when its first byte occurs: a byte is found
# with memchr (2 us over a page of details), a sequence beginning with a quote is not (90 us).
_SPACED = (b'": ', b'", ', b"}, ", b"], ", b", {", b", [")
_ESCAPED = (b"\\u", b"\\/")


def _not_compact(data: bytes) -> bool:
    return b"\n" in data or b"\r" in data or b"\t" in data \
        or (b" " in data and any(mark in data for mark in _SPACED)) \
        or (b"\\" in data and any(mark in data for mark in _ESCAPED))


def json_of_raw(values: list) -> pa.Array:
    """A JSON column from the values' own text (msgspec.Raw, or None where the field was absent),
    without parsing it: the same text `_json_text` writes (orjson's compact form) when the service
    writes compact JSON, as the sandbox does. A page with a sign of spacing or escapes goes through
    orjson; a spelling the signs miss (`[1, 2]`) stays as the service sent it, the same JSON value.

    The texts are joined once and become the Arrow array's data as they are: copying each value to
    bytes first took about half of a page's typing.
    """
    present = [v for v in values if v is not None]
    # one search over the joined texts: no value can end, and the next begin, a mark between them
    data = b"".join(present)
    if _not_compact(data):
        return _json_text([None if v is None else orjson.loads(bytes(v)) for v in values])
    lengths = pa.array([0 if v is None else len(v) for v in values], pa.int64())
    offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(lengths)])
    valid = None if len(present) == len(values) else pa.array([v is not None for v in values]).buffers()[1]
    array = pa.Array.from_buffers(pa.large_binary(), len(values), [valid, offsets.buffers()[1], pa.py_buffer(data)],
                                  len(values) - len(present))
    array = pc.if_else(pc.equal(array, pa.scalar(b"null", pa.large_binary())), pa.scalar(None, pa.large_binary()),
                       array)
    return array.cast(pa.string())


def _decoded(rows: Rows, resource: Resource, parent: dict) -> dict[str, pa.Array]:
    """The columns of a page decoded into the Resource's Structs (toolkit.pull.decoding): each value is of
    its declared wire type already, so scalars go to Arrow as they are; lists and JSON as from dicts."""
    out = {}
    for column in resource.columns:
        if column.name in parent:
            continue
        values = rows.values[column.name]
        kind = WIRE_TYPES.get(column.dtype) if column.dtype != "id" else ID_TYPES.get(resource.service, pa.string())
        try:
            if kind is not None:
                out[column.name] = pa.array(values, kind)
            elif column.dtype == "json":
                out[column.name] = json_of_raw(values)
            elif column.dtype == "timestamp":
                wire = pa.array(values)
                typed = _timestamps_of_wire(wire)
                if not _unparsed(wire, typed):    # else value by value, to keep the text no parser reads
                    out[column.name] = typed
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass  # an integer beyond int64, text and epochs mixed: column by column, as from dicts
    return out


def to_arrow(rows: Sequence[dict] | Rows, resource: Resource, *, parent: dict[str, Any] | None = None) -> pa.Table:
    """One page (or batch) of records as a typed Arrow table with the Resource's columns and `extra`.

    `rows` are dicts as parsed, or the Structs of `toolkit.pull.decoding` (which hold no undeclared field).
    `parent` adds constant columns, such as the profile id a fan-out request was made for. What the
    records held beyond the declared shapes is in the schema metadata under `DRIFT` (module docstring).
    """
    parent = parent or {}
    decoded = isinstance(rows, Rows)
    page = _Page(rows, resource)
    if not decoded:
        _odd_objects(rows, resource, page)
    fast = _decoded(rows, resource, parent) if decoded else _scalars(rows, resource, parent)
    arrays, names = [], []
    # a declared parent column keeps its declared place; an undeclared one goes after the declared ones
    declared = [c.name for c in resource.columns]
    for column in (*resource.columns, *(Column(n, "id") for n in parent if n not in declared)):
        if column.name in fast:
            array = fast[column.name]
        elif column.name in parent:
            array = _typed(column, [parent[column.name]] * len(rows), resource.service)[0]
        else:
            values = rows.values[column.name] if decoded else _pick(rows, source_of(column))
            array, bad = _typed(column, values, resource.service)
            if bad:
                keep = pa.types.is_string(array.type) and column.dtype in ("string", "category", "id")
                page.mistyped(column, bad, values, keep)
        if column.dtype == "list" and array.null_count and column.name not in parent:
            _null_lists(rows, column, array, page)
        if rows and column.name not in parent and not column.optional and array.null_count == len(rows) \
                and not _sent(rows, column):
            page.absent.append(".".join(source_of(column)))
        arrays.append(array)
        names.append(column.name)
    if decoded and not page.moved:
        arrays.append(pa.nulls(len(rows), pa.string()))
    else:
        # decoded records hold no undeclared field: only those with a mistyped value are looked at
        records = [_as_wire(row) if i in page.moved else {} for i, row in enumerate(rows)] if decoded else rows
        arrays.append(_extra(records, resource, page))
    names.append("extra")
    return page.attach(pa.Table.from_arrays(arrays, names=names))


def _null_lists(rows: Sequence, column: Column, array: pa.Array, page: _Page) -> None:
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


def _odd_objects(rows: Sequence[dict], resource: Resource, page: _Page) -> None:
    """A flattened object (`coverVersion`) sent as something else (text, a list): its fields cannot be
    read, so its whole value goes to `extra` under its key."""
    for key in page.nested:
        for i, row in enumerate(rows):
            value = row.get(key)
            if value is not None and value.__class__ is not dict:
                page.add(key, "type", value, row)
                page.moved.setdefault(i, []).append(((key,), value))


def empty(resource: Resource) -> pa.Table:
    """No rows, every declared column with its type."""
    return to_arrow([], resource)


def to_pandas(table: pa.Table, resource: Resource) -> pd.DataFrame:
    """An Arrow table as the analyst's DataFrame: categoricals for statuses, tz-aware timestamps; a
    column with lists inside structs as Python objects, as the workspace reads it (toolkit.storage.readback)."""
    from toolkit.storage.readback import (  # it imports pandas: not at the top
        python_nested,
        with_python_nested,
    )
    table, nested = python_nested(table)
    frame = with_python_nested(table.to_pandas(types_mapper=_pandas_type, split_blocks=True), nested)
    return conform(frame, resource)


def conform(frame: pd.DataFrame, resource: Resource) -> pd.DataFrame:
    """Give a frame read back from DuckDB the same dtypes as a fresh one."""
    import pandas as pd
    for column in resource.columns:
        if column.name not in frame.columns:
            continue
        series = frame[column.name]
        if column.dtype == "category" and not isinstance(series.dtype, pd.CategoricalDtype):
            frame[column.name] = series.astype("category")
        elif column.dtype == "timestamp" and not isinstance(series.dtype, pd.DatetimeTZDtype):
            frame[column.name] = pd.to_datetime(series, utc=True)
    return frame
