"""A column's typed Arrow array from the values the wire sent for it (toolkit.pull.frames builds tables of them).

Timestamps are tz-aware UTC whether the wire sent ISO strings or epoch ms; ids keep their wire type
(`ID_TYPES`); lists stay lists; JSON is kept as its compact text. A value of another type than its
column declares is reported by row (`typed` gives them), so that the caller keeps it in `extra`;
a text column keeps it as its JSON text instead.
"""
from __future__ import annotations

__all__ = ["ARROW_TYPES", "ID_TYPES", "TIMESTAMP", "in_int64", "json_text", "pandas_type", "pick", "source_of",
           "timestamps", "timestamps_of_wire", "typed", "unparsed"]

import functools
from collections.abc import Sequence
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.spec import Column

TIMESTAMP = pa.timestamp("ms", tz="UTC")


ARROW_TYPES = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(),
               "boolean": pa.bool_(), "timestamp": TIMESTAMP, "category": pa.string(), "json": pa.string()}


def source_of(column: Column) -> tuple[str, ...]:
    return column.path


def pick(rows: Sequence[dict], path: tuple[str, ...]) -> list:
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


def timestamps(values: list) -> tuple[pa.Array, list[int]]:
    """Moments from epoch milliseconds or ISO text (both may come in one page), and the rows whose
    value is neither, or text no parser reads."""
    kinds = {v.__class__ for v in values} - {type(None)}
    if not kinds:
        return pa.nulls(len(values), TIMESTAMP), []
    numbers = [v if v.__class__ in (int, float) and in_int64(v) else None for v in values]
    texts = pa.array([v if v.__class__ is str else None for v in values], pa.string())
    epochs = pa.array([None if v is None else int(v) for v in numbers], pa.int64()).cast(TIMESTAMP)
    moments = None if kinds <= {int, float} else _timestamps_of_text(texts)
    parsed = epochs if moments is None else moments if kinds == {str} else pc.coalesce(epochs, moments)
    bad = [i for i, v in enumerate(values) if v is not None and v.__class__ is not str and numbers[i] is None]
    return parsed, sorted(bad + (unparsed(texts, moments) if moments is not None else []))


def in_int64(value: int | float) -> bool:
    return -2**63 <= value < 2**63


def unparsed(wire: pa.Array, parsed: pa.Array) -> list[int]:
    """The rows whose wire text no parser read as a moment (the parsers give null for them)."""
    if not (pa.types.is_string(wire.type) or pa.types.is_large_string(wire.type)) \
            or parsed.null_count <= wire.null_count:
        return []
    lost = pc.and_(pc.is_valid(wire), pc.is_null(parsed))
    return pc.indices_nonzero(lost).to_pylist()


def timestamps_of_wire(wire: pa.Array) -> pa.Array:
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


def json_text(values: list) -> pa.Array:
    return pa.array([None if v is None else orjson.dumps(v).decode() for v in values], pa.string())


# ids keep their wire type: integers where the catalog says a service's ids are, UUID strings elsewhere
ID_TYPES = {key: pa.int64() for key, service in catalog.SERVICES.items() if service.ids == "integer"}


@functools.cache
def _pandas_types() -> dict[pa.DataType, Any]:
    import pandas as pd
    return {pa.string(): pd.StringDtype("pyarrow"), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def pandas_type(arrow_type: pa.DataType) -> Any:
    if pa.types.is_nested(arrow_type):  # cells read as Python lists, as from the workspace
        import pandas as pd
        return pd.ArrowDtype(arrow_type)
    return _pandas_types().get(arrow_type)


def _fits(value: Any, dtype: str, service: str) -> bool:
    """Whether a wire value is of the type a non-text column declares (booleans are not numbers)."""
    kind = value.__class__
    if dtype in ("integer", "id"):
        return kind is int and in_int64(value)
    if dtype == "number":
        return kind is float or (kind is int and in_int64(value))
    if dtype == "boolean":
        return kind is bool
    return True


def _text(value: Any) -> str:
    return value if value.__class__ is str else orjson.dumps(value).decode()


def typed(column: Column, values: list, service: str) -> tuple[pa.Array, list[int]]:
    """A column's array from its wire values, and the rows whose value is not of the declared type:
    a text column holds their JSON text, any other null (the caller keeps their values in `extra`)."""
    dtype = column.dtype
    if dtype == "id" and service not in ID_TYPES:
        dtype = "string"
    if dtype == "timestamp":
        return timestamps(values)
    if dtype == "json":
        return json_text(values), []
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
        return json_text(values), bad   # lists of mixed elements: their JSON text
