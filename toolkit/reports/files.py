"""A DataFrame out to a file a spreadsheet or another tool opens, and times a plot can draw.

    tk.save(targets, "targets.xlsx")                  # or .csv, .parquet; format= when the name says none
    tk.save(audiences, "audiences.csv", timezone="Europe/Amsterdam")
    tk.plottable(targets).plot(x="due_date", y="word_count", kind="scatter")

What `to_csv` and `to_excel` got wrong for an analyst's first spreadsheet: a list column written as a
numpy repr (`['newsletter' 'email']`), Excel refusing tz-aware times, and nothing saying in what zone
the times are. In CSV and Excel a list is its items joined by "; " and a record its JSON; a time is
written in `timezone` (UTC by default) without a zone, which Excel holds, and its column says the zone
(`due_date (UTC)`). Parquet holds lists, zoned times and categories as they are, so they are written
so. The file is written beside its path and renamed over it when complete: a failure leaves no half.

`plottable` gives the same times without a zone: pandas 3's `.plot()` of a zoned time column with a
gap (NaT) hands matplotlib's `date2num` a NaT it calls `astimezone` on, an 851-line ConversionError.
"""
from __future__ import annotations

__all__ = ["FORMATS", "plottable", "save"]

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit.errors import ToolkitError, ValidationError

FORMATS = {".csv": "csv", ".xlsx": "xlsx", ".parquet": "parquet"}
EXCEL_ROWS = 1_048_576 - 1      # a sheet's rows, its header aside
JOINED = "; "


def plottable(frame: pd.DataFrame, timezone: str = "UTC") -> pd.DataFrame:
    """A copy of `frame` whose zoned time columns hold the same moments in `timezone`, without a zone
    (`attrs["timezone"]` says which), so that `.plot()` draws them and their gaps.

        tk.plottable(targets).plot(x="due_date", y="word_count", kind="scatter")
    """
    _check_frame(frame)
    out = frame.copy()
    for name in _zoned(frame):
        out[name] = _in_zone(frame[name], timezone)
    out.attrs = {**frame.attrs, "timezone": timezone}
    return out


def save(frame: pd.DataFrame, path: str | os.PathLike, *, format: str | None = None, timezone: str = "UTC",
         overwrite: bool = False) -> Path:
    """Write `frame` to a CSV, Excel (.xlsx) or Parquet file, by the path's suffix or `format`; the path.

    CSV and Excel: lists joined by "; ", records as JSON, times in `timezone` without a zone and the
    zone in their column's name (`due_date (UTC)`). Parquet keeps lists, zoned times and categories.
    A file already there is replaced only with `overwrite=True`.

        tk.save(tm.fetch("targets"), "targets.xlsx")
    """
    _check_frame(frame)
    path = Path(path)
    kind = format if format is not None else FORMATS.get(path.suffix.lower())
    if kind not in FORMATS.values():
        given = f"format={format!r}" if format is not None else f"a path ending {path.suffix or 'in no suffix'}"
        raise ValidationError("format", format if format is not None else str(path),
                              f"{given}: write .csv, .xlsx or .parquet (or pass format='csv'|'xlsx'|'parquet')")
    if path.exists() and not overwrite:
        raise ToolkitError(f"{path} exists: nothing was written; pass overwrite=True to replace it")
    if not path.parent.is_dir():
        raise ToolkitError(f"cannot write {path}: the folder {path.parent} does not exist")
    if kind == "xlsx" and len(frame) > EXCEL_ROWS:
        raise ValidationError("frame", f"{len(frame):,} rows", f"a sheet holds {EXCEL_ROWS:,} rows: write .csv "
                                                               "or .parquet, or filter the rows first")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(handle)
    try:
        if kind == "parquet":
            _parquet(frame, temporary)
        elif kind == "csv":
            _flat(frame, timezone).to_csv(temporary, index=False)
        else:
            _excel(_flat(frame, timezone, excel=True), temporary, frame.attrs.get("table"))
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return path


def _check_frame(frame: Any) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValidationError("frame", type(frame).__name__, "a DataFrame (what fetch, ws.read or ws.sql(...).df() "
                                                             "give)")


def _zoned(frame: pd.DataFrame) -> list:
    return [name for name, dtype in frame.dtypes.items() if isinstance(dtype, pd.DatetimeTZDtype)]


def _in_zone(column: pd.Series, timezone: str) -> pd.Series:
    try:
        return column.dt.tz_convert(timezone).dt.tz_localize(None)
    except Exception as error:      # an unknown zone name: pytz's or zoneinfo's error, by the version
        raise ValidationError("timezone", timezone, "not a time zone: give one such as 'UTC' or "
                                                    "'Europe/Amsterdam'") from error


def _flat(frame: pd.DataFrame, timezone: str, excel: bool = False) -> pd.DataFrame:
    """The frame as a sheet holds it: lists joined, records as JSON, times in `timezone` named so."""
    zoned = set(_zoned(frame))
    columns = {}
    for name, column in frame.items():
        if name in zoned:
            columns[f"{name} ({timezone})"] = _in_zone(column, timezone)
        elif column.dtype == object or _nested(column.dtype):
            columns[name] = column.map(lambda value: _cell(value, excel), na_action="ignore")
        elif excel and pd.api.types.is_string_dtype(column.dtype):
            columns[name] = column.map(_printable, na_action="ignore")
        else:
            columns[name] = column
    return pd.DataFrame(columns, index=frame.index)


def _nested(dtype: Any) -> bool:
    """A list or struct column as toolkit types them (Arrow lists: DuckDB LIST)."""
    import pyarrow as pa
    arrow = getattr(dtype, "pyarrow_dtype", None)
    return arrow is not None and (pa.types.is_list(arrow) or pa.types.is_large_list(arrow) or pa.types.is_struct(arrow))


def _cell(value: Any, excel: bool) -> Any:
    if isinstance(value, np.ndarray | list | tuple):
        value = JOINED.join("" if item is None else str(_cell(item, False)) for item in value)
    elif isinstance(value, Mapping):
        value = json.dumps(value, default=str, ensure_ascii=False)
    return _printable(value) if excel and isinstance(value, str) else value


def _printable(text: Any) -> Any:
    """Text without the control characters an .xlsx cell cannot hold (openpyxl refuses the sheet)."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    return ILLEGAL_CHARACTERS_RE.sub("", text) if isinstance(text, str) else text


def _parquet(frame: pd.DataFrame, path: str) -> None:
    """Parquet as every reader reads it: without pandas' own metadata, whose Arrow list dtypes pandas
    itself cannot read back (`data type 'list<item: string>[pyarrow]' not understood`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table.replace_schema_metadata(None), path)


def _excel(flat: pd.DataFrame, path: str, table: str | None) -> None:
    # a sheet's name: at most 31 characters, none of []:*?/\
    sheet = "".join(c for c in (table or "data") if c not in "[]:*?/\\")[:31] or "data"
    flat.to_excel(path, index=False, sheet_name=sheet, engine="openpyxl")
