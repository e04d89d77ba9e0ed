"""DuckDB's Arrow answers as the analyst's DataFrames: pandas strings, nullable integers, categoricals.

Lists and structs stay Arrow (`pd.ArrowDtype`, zero copy), except a column with a list inside a struct
(submissions' `owners`: users with `roles` lists): pandas turns the lists of such a column into numpy
arrays wherever it goes through numpy (display, `astype`, `map`, `iterrows`), while DuckDB's `.df()`
gives them as lists. Such a column holds its cells as DuckDB's `.df()` does instead (a top-level list
as a 1-d object array, everything inside as Python lists and dicts), so that a fetch, `ws.read` and
`ws.as_of` show and compare its cells as `ws.sql(...).df()` does. Columns of that
shape are small (a few users per row); a plain list column stays Arrow, which costs no copy where
Python lists would cost memory and seconds for every million rows.

    to_frame(con.sql("from translation.targets").to_arrow_table(), categories={"status": [...]})
"""
from __future__ import annotations

__all__ = ["casts_unchanged", "categorical", "kept_batch", "lists_in_structs", "pandas_type", "python_nested", "shaped",
           "to_frame", "with_python_nested"]

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_NULLABLE = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
             pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
             pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(), pa.bool_(): pd.BooleanDtype()}


def pandas_type(arrow_type: pa.DataType) -> Any:
    if pa.types.is_nested(arrow_type):  # lists and structs stay Arrow: zero copy, cells come out as lists
        return pd.ArrowDtype(arrow_type)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_string_view(arrow_type):
        return pd.StringDtype("pyarrow")
    return _NULLABLE.get(arrow_type)  # nullable, so an id column with a gap keeps its type


def lists_in_structs(kind: pa.DataType, inside: bool = False) -> bool:
    """Whether an Arrow type holds a list inside a struct (at any depth), which pandas would show as
    a numpy array in a dict."""
    t = pa.types
    if t.is_list(kind) or t.is_large_list(kind) or t.is_fixed_size_list(kind) or t.is_list_view(kind) \
            or t.is_large_list_view(kind):
        return inside or lists_in_structs(kind.value_type, inside)
    if t.is_struct(kind):
        return any(lists_in_structs(field.type, True) for field in kind)
    return False


def _as_array(cell: list) -> np.ndarray:
    """A top-level list as DuckDB's `.df()` gives it: a 1-d object array (its items stay Python)."""
    array = np.empty(len(cell), dtype=object)
    for i, item in enumerate(cell):
        array[i] = item
    return array


def python_nested(table: pa.Table) -> tuple[pa.Table, dict[int, tuple[str, pd.Series]]]:
    """The table without its columns that hold lists inside structs, and those columns as Series of
    Python lists and dicts (NA where null, as DuckDB's `.df()` has it), by their place;
    `with_python_nested` puts them back."""
    taken = {}
    for i, field in enumerate(table.schema):
        if lists_in_structs(field.type):
            top = _as_array if not pa.types.is_struct(field.type) else (lambda cell: cell)
            cells = [pd.NA if cell is None else top(cell) for cell in table.column(i).to_pylist()]
            taken[i] = (field.name, pd.Series(cells, dtype=object))
    for i in sorted(taken, reverse=True):
        table = table.remove_column(i)
    return table, taken


def with_python_nested(frame: pd.DataFrame, taken: dict[int, tuple[str, pd.Series]]) -> pd.DataFrame:
    if taken and frame.shape[1] == 0:  # every column was taken: the rows' count is the Series'
        frame = pd.DataFrame(index=pd.RangeIndex(len(next(iter(taken.values()))[1])))
    for i in sorted(taken):
        name, series = taken[i]
        frame.insert(i, name, series.set_axis(frame.index))
    return frame


def to_frame(table: pa.Table, categories: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """An Arrow table read back from DuckDB as the analyst's DataFrame.

    Strings are pandas strings, integers and booleans nullable, lists and structs `pd.ArrowDtype`
    (cells read as Python lists and dicts) but for lists inside structs (Python objects, module
    docstring), timestamps tz-aware UTC, `categories` columns categoricals.
    """
    categories, encoded = categories or {}, []
    table, nested = python_nested(table)
    for i, field in enumerate(table.schema):
        kind = field.type
        if field.name in categories and (pa.types.is_dictionary(kind) or pa.types.is_string(kind)
                                         or pa.types.is_large_string(kind)):
            table = table.set_column(i, field.name, categorical(table.column(i), categories[field.name]))
        elif pa.types.is_dictionary(kind):  # kept encoded: a categorical as pandas makes one, values sorted
            column = pa.chunked_array([table.column(i).combine_chunks()])  # unifies the chunks' dictionaries
            values = sorted(v for v in column.chunk(0).dictionary.to_pylist() if v is not None)
            table = table.set_column(i, field.name, categorical(column, values))
            encoded.append(field.name)
    # self_destruct: each Arrow column is freed once converted, so the peak is the frame plus a column
    frame = table.to_pandas(types_mapper=pandas_type, split_blocks=True, self_destruct=True)
    frame = with_python_nested(frame, nested)
    for name in encoded:  # categories of pandas strings, as `astype("category")` of a string column has
        frame[name] = frame[name].cat.set_categories(pd.Index(frame[name].cat.categories, dtype="string"))
    return frame


def shaped(written: list[pa.Table], shape: pa.Schema) -> pa.Table | None:
    """The batches as one table of `shape`, or None when a column would not cast unchanged."""
    try:
        table = pa.concat_tables(written, promote_options="permissive") if written else shape.empty_table()
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # batches of one load that DuckDB had to widen
        return None
    finally:
        written.clear()
    columns = []
    for field in shape:
        if field.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(field.name)
        if not casts_unchanged(column.type, field.type):
            return None
        # large strings stay large: pandas would make them so, copying their offsets
        keep = column.type == field.type or pa.types.is_dictionary(column.type) or \
            (pa.types.is_large_string(column.type) and pa.types.is_string(field.type))
        columns.append(column if keep else column.cast(field.type))
    return pa.Table.from_arrays(columns, names=shape.names)


_UTC = {"UTC", "Etc/UTC", "+00:00", "Z"}
_UNITS = {"s": 0, "ms": 1, "us": 2, "ns": 3}


def casts_unchanged(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether every value of `source` casts to `target` as DuckDB would store and read it back."""
    if source.equals(target) or pa.types.is_null(source):
        return True
    t = pa.types
    if t.is_dictionary(source):  # a categorical kept encoded: its values are what was stored
        return casts_unchanged(source.value_type, target)
    if t.is_timestamp(source) and t.is_timestamp(target):
        return _UNITS[source.unit] <= _UNITS[target.unit] and \
            (source.tz == target.tz or (source.tz in _UTC and target.tz in _UTC))
    if (t.is_string(source) or t.is_large_string(source)) and (t.is_string(target) or t.is_large_string(target)):
        return True
    if t.is_integer(source) and t.is_integer(target):
        return t.is_signed_integer(source) <= t.is_signed_integer(target) and \
            source.bit_width + (t.is_signed_integer(target) and not t.is_signed_integer(source)) <= target.bit_width
    if t.is_floating(source) and t.is_floating(target):
        return source.bit_width <= target.bit_width
    if (t.is_list(source) or t.is_large_list(source)) and (t.is_list(target) or t.is_large_list(target)):
        return casts_unchanged(source.value_type, target.value_type)
    if t.is_struct(source) and t.is_struct(target):
        return [f.name for f in source] == [f.name for f in target] and \
            all(casts_unchanged(a.type, b.type) for a, b in zip(source, target, strict=True))
    return False


def categorical(column: pa.ChunkedArray, known: Sequence[str]) -> pa.ChunkedArray:
    """Dictionary-encode against the known categories, appending any value they lack (nothing is lost).

    A column already encoded has only its dictionary looked up: its codes are mapped, not its text."""
    if pa.types.is_dictionary(column.type):
        column = column.combine_chunks()  # unifies the chunks' dictionaries
        values, codes = column.dictionary.cast(pa.string()), column.indices
    else:
        values, codes = column.combine_chunks().cast(pa.string()), None
    dictionary = pa.array(list(known), pa.string())
    indices = pc.index_in(values, value_set=dictionary)
    missing = pc.and_(pc.is_null(indices), pc.is_valid(values))
    if pc.any(missing).as_py():
        dictionary = pa.concat_arrays([dictionary, pc.unique(pc.filter(values, missing))])
        indices = pc.index_in(values, value_set=dictionary)
    if codes is not None:  # the encoded column's codes, through its dictionary, to the known ones
        indices = pc.take(indices, codes)
    return pa.chunked_array([pa.DictionaryArray.from_arrays(indices.cast(pa.int32()), dictionary)])


def kept_batch(table: pa.Table, categoricals: frozenset[str] = frozenset()) -> pa.Table:
    """A batch as a fetch keeps it for its DataFrame: each column already as the DataFrame will hold it,
    so that making the frame at the end allocates as little as it can beside the rows it keeps.

    Contiguous, so the pages' many small buffers are freed and memory does not fragment; strings
    large, as pandas holds them, so that making the frame copies none of them; categoricals still
    dictionary-encoded (a status is then a byte, not its text); timestamps in microseconds, the unit
    DuckDB gives back, cast batch by batch rather than all at once at the end.
    """
    table = table.unify_dictionaries().combine_chunks()
    return pa.Table.from_arrays([_as_kept(column, name in categoricals) for name, column in
                                 zip(table.column_names, table.columns, strict=True)], names=table.column_names)


def _as_kept(column: pa.ChunkedArray, categorical: bool) -> pa.ChunkedArray:
    kind = column.type
    if categorical and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return column.dictionary_encode()
    if pa.types.is_string(kind):
        return column.cast(pa.large_string())
    if pa.types.is_timestamp(kind) and kind.unit in ("s", "ms"):
        return column.cast(pa.timestamp("us", tz=kind.tz))
    return column
