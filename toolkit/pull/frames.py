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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.catalog.spec import Column, Resource
from toolkit.http import answers
from toolkit.pull.columns import (
    ARROW_TYPES,
    ID_TYPES,
    TIMESTAMP,
    json_text,
    pandas_type,
    pick,
    source_of,
    timestamps_of_wire,
    typed,
    unparsed,
)
from toolkit.pull.decoding import Rows
from toolkit.pull.page_drift import (
    DRIFT,
    Page,
    as_wire,
    declared_keys,
    extra_column,
    noted,
    null_lists,
    odd_objects,
    sent,
)

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
        value: Any = row
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
    return _struct_of_tree(tree)


def _struct_of_tree(node: dict) -> pa.StructType:
    # a function of the module, not a closure that calls itself: such a closure is a reference cycle,
    # made for every page, which only the garbage collector frees, and it is paused during a pull (a
    # fan-out over 600,000 parents held some 150 MB of them at its end)
    return pa.struct([(k, _struct_of_tree(v) if isinstance(v, dict) else v) for k, v in node.items()])


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
        typed = timestamps_of_wire(wire) if column.dtype == "timestamp" else wire
        # what Arrow's converter takes without a word: a float for an integer (truncated), a boolean
        # for a number, text that is no moment (null); such a column goes value by value (`typed`)
        if column.dtype == "timestamp" and unparsed(wire, typed):
            continue
        if pa.types.is_integer(wire.type) or pa.types.is_floating(wire.type) and column.dtype != "timestamp":
            odd = float if pa.types.is_integer(wire.type) else bool
            if any(v.__class__ is odd for v in pick(rows, path)):
                continue
        out[column.name] = typed
    return out


# signs that a service's JSON is not orjson's compact form: whitespace between tokens, or escapes
# orjson does not write; structural marks only, which text inside a string cannot hold (its quotes
# are escaped) or rarely does. A control byte or a backslash is found with memchr (2 us over a page
# of details). The spaced marks are read around each space at once (numpy): searching the joined
# texts once per mark took some 0.8 ms a page of assets' custom fields, a tenth of the page's typing.
_ESCAPED = (b"\\u", b"\\/")
_QUOTE, _COLON, _COMMA = ord('"'), ord(":"), ord(",")
_CLOSES = np.zeros(256, bool)
_CLOSES[[_QUOTE, ord("}"), ord("]")]] = True
_OPENS = np.zeros(256, bool)
_OPENS[[ord("{"), ord("[")]] = True


def _spaced(data: bytes) -> bool:
    """A space between tokens: after `":`, after a comma that follows `"`, `}` or `]`, or between a
    comma and `{` or `[` (the marks `": `, `", `, `}, `, `], `, `, {`, `, [`)."""
    text = np.frombuffer(data, np.uint8)
    at = np.flatnonzero(text[1:] == 32) + 1
    if not at.size:
        return False
    before, after = text[at - 1], text[np.minimum(at + 1, text.size - 1)]
    twice = text[np.maximum(at - 2, 0)] * (at >= 2)     # no byte before the first: 0, no mark
    return bool(((before == _COLON) & (twice == _QUOTE)).any()
                or ((before == _COMMA) & (_CLOSES[twice] | _OPENS[after])).any())


def _not_compact(data: bytes) -> bool:
    return b"\n" in data or b"\r" in data or b"\t" in data \
        or (b" " in data and _spaced(data)) \
        or (b"\\" in data and any(mark in data for mark in _ESCAPED))


def json_of_raw(values: list) -> pa.Array:
    """A JSON column from the values' own text (msgspec.Raw, or None where the field was absent),
    without parsing it: the same text `json_text` writes (orjson's compact form) when the service
    writes compact JSON, as the sandbox does. A page with a sign of spacing or escapes goes through
    orjson; a spelling the signs miss (`[1, 2]`) stays as the service sent it, the same JSON value.

    The texts are joined once and become the Arrow array's data as they are: copying each value to
    bytes first took about half of a page's typing.
    """
    present = [v for v in values if v is not None]
    # one search over the joined texts: no value can end, and the next begin, a mark between them
    data = b"".join(present)
    if _not_compact(data):
        return json_text([None if v is None else answers.loads(bytes(v)) for v in values])
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
                typed = timestamps_of_wire(wire)
                if not unparsed(wire, typed):    # else value by value, to keep the text no parser reads
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
    page = Page(rows, resource)
    if not decoded:
        odd_objects(rows, resource, page)
    fast = _decoded(rows, resource, parent) if isinstance(rows, Rows) else _scalars(rows, resource, parent)
    arrays, names = [], []
    # a declared parent column keeps its declared place; an undeclared one goes after the declared ones
    declared = [c.name for c in resource.columns]
    for column in (*resource.columns, *(Column(n, "id") for n in parent if n not in declared)):
        if column.name in fast:
            array = fast[column.name]
        elif column.name in parent:
            array = typed(column, [parent[column.name]] * len(rows), resource.service)[0]
        else:
            values = rows.values[column.name] if isinstance(rows, Rows) else pick(rows, source_of(column))
            array, bad = typed(column, values, resource.service)
            if bad:
                keep = pa.types.is_string(array.type) and column.dtype in ("string", "category", "id")
                page.mistyped(column, bad, values, keep)
        if column.dtype == "list" and array.null_count and column.name not in parent:
            null_lists(rows, column, array, page)
        if rows and column.name not in parent and not column.optional and array.null_count == len(rows) \
                and not sent(rows, column):
            page.absent.append(".".join(source_of(column)))
        arrays.append(array)
        names.append(column.name)
    if decoded and not page.moved:
        arrays.append(pa.nulls(len(rows), pa.string()))
    else:
        # decoded records hold no undeclared field: only those with a mistyped value are looked at
        records = [as_wire(row) if i in page.moved else {} for i, row in enumerate(rows)] if decoded else rows
        arrays.append(extra_column(records, resource, page))
    names.append("extra")
    return page.attach(pa.Table.from_arrays(arrays, names=names))


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
    frame = with_python_nested(table.to_pandas(types_mapper=pandas_type, split_blocks=True), nested)
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
