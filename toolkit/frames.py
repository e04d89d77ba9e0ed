"""Records → typed Arrow tables and DataFrames, one Resource's columns at a time.

Columns are snake_case; timestamps tz-aware UTC whether the wire sent ISO strings or epoch ms; ids
keep their wire type; statuses are categoricals; lists stay lists; a field the Resource does not
declare is kept in the `extra` JSON column, so nothing is dropped. An empty result keeps the declared
columns and dtypes. Tables are built column by column from the parsed pages, never row by row.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.decoding import Rows
from toolkit.spec import Column, Resource

if TYPE_CHECKING:    # pandas is imported where a frame is made: the page-typing helper process needs none
    import pandas as pd


def _use_the_system_allocator() -> None:
    """Arrow's buffers from the system allocator, unless the analyst chose one (ARROW_DEFAULT_MEMORY_POOL).

    pyarrow's default, mimalloc, keeps the pages a pull frees mapped around the rows a fetch keeps: a
    fetch of a million assets held 100 MB more with it, and pulled no faster (benchmarks/fetch.py).
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


def _timestamps(values: list) -> pa.Array:
    sample = next((v for v in values if v is not None), None)
    if sample is None:
        return pa.nulls(len(values), TIMESTAMP)
    if isinstance(sample, int | float):
        return pa.array([None if v is None else int(v) for v in values], pa.int64()).cast(TIMESTAMP)
    return _timestamps_of_text(pa.array([None if v is None else str(v) for v in values], pa.string()))


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
    try:  # ISO 8601 with a zone and at most milliseconds, the usual case: one Arrow cast, ~20x faster
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


# ids keep their wire type: integers for the translation service, UUID strings elsewhere
ID_TYPES = {"translation": pa.int64()}
@functools.cache
def _pandas_types() -> dict[pa.DataType, Any]:
    import pandas as pd
    return {pa.string(): pd.StringDtype("pyarrow"), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def _pandas_type(arrow_type: pa.DataType) -> Any:
    if pa.types.is_nested(arrow_type):  # cells read as Python lists, as from the workspace
        import pandas as pd
        return pd.ArrowDtype(arrow_type)
    return _pandas_types().get(arrow_type)


def _column(column: Column, values: list, service: str) -> pa.Array:
    dtype = column.dtype
    if dtype == "id":
        wanted = ID_TYPES.get(service, pa.string())
        try:
            return pa.array(values, wanted)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return pa.array([None if v is None else str(v) for v in values], pa.string())
    if dtype == "timestamp":
        return _timestamps(values)
    if dtype == "json":
        return _json_text(values)
    if dtype == "list":
        if not values:  # no element type to infer: strings, the commonest lists, rather than a null column
            return pa.array([], pa.list_(pa.string()))
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return _json_text(values)
    if dtype in ("string", "category"):
        return pa.array([v if v is None or isinstance(v, str) else
                         orjson.dumps(v).decode() if isinstance(v, dict | list) else str(v) for v in values],
                        pa.string())
    try:
        return pa.array(values, ARROW_TYPES[dtype])
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(values).cast(ARROW_TYPES[dtype], safe=False)


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


def _extra(rows: Sequence[dict], resource: Resource) -> pa.Array:
    """The `extra` column: JSON text of what no column reads, None where a record has nothing more.
    Most records of a well-declared Resource have nothing more: a set comparison tells, per record."""
    known, nested = declared_keys(resource), _read_in_part(resource)
    texts: list | None = None
    for i, row in enumerate(rows):
        if known.issuperset(row):
            for key, fields in nested:
                value = row.get(key)
                if value.__class__ is dict and not fields.issuperset(value):
                    break
            else:
                continue
        rest = _unread(row, known, nested)
        if rest:
            if texts is None:
                texts = [None] * len(rows)
            texts[i] = orjson.dumps(rest).decode()
    return pa.nulls(len(rows), pa.string()) if texts is None else pa.array(texts, pa.string())


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
        out[column.name] = _timestamps_of_wire(wire) if column.dtype == "timestamp" else wire
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

    The texts are joined once and become the Arrow array's data as they are. Copying each value to
    bytes first took 1.2 ms for the details of a page of 1000 notifications, half the page's typing.
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
    """The columns of a page decoded into the Resource's Structs (toolkit.decoding): each value is of
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
                out[column.name] = _timestamps_of_wire(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass  # an integer beyond int64, text and epochs mixed: column by column, as from dicts
    return out


def to_arrow(rows: Sequence[dict] | Rows, resource: Resource, *, parent: dict[str, Any] | None = None) -> pa.Table:
    """One page (or batch) of records as a typed Arrow table with the Resource's columns and `extra`.

    `rows` are dicts as parsed, or the Structs of `toolkit.decoding` (which hold no undeclared field).
    `parent` adds constant columns, such as the profile id a fan-out request was made for.
    """
    parent = parent or {}
    decoded = isinstance(rows, Rows)
    fast = _decoded(rows, resource, parent) if decoded else _scalars(rows, resource, parent)
    arrays, names = [], []
    # a declared parent column keeps its declared place; an undeclared one goes after the declared ones
    declared = [c.name for c in resource.columns]
    for column in (*resource.columns, *(Column(n, "id") for n in parent if n not in declared)):
        if column.name in fast:
            arrays.append(fast[column.name])
        else:
            values = [parent[column.name]] * len(rows) if column.name in parent \
                else rows.values[column.name] if decoded else _pick(rows, source_of(column))
            arrays.append(_column(column, values, resource.service))
        names.append(column.name)
    arrays.append(pa.nulls(len(rows), pa.string()) if decoded else _extra(rows, resource))
    names.append("extra")
    return pa.Table.from_arrays(arrays, names=names)


def empty(resource: Resource) -> pa.Table:
    """No rows, every declared column with its type."""
    return to_arrow([], resource)


def to_pandas(table: pa.Table, resource: Resource) -> pd.DataFrame:
    """An Arrow table as the analyst's DataFrame: categoricals for statuses, tz-aware timestamps."""
    frame = table.to_pandas(types_mapper=_pandas_type, split_blocks=True)
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
