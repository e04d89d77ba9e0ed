"""A column summary of a SELECT's rows, in one DuckDB query: each column's type, how many of its values
are empty, how many distinct, the smallest and the largest.

    column_summary(ws, 'SELECT * FROM "audience_platform"."audiences"')
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from toolkit.glance.reading import Readable, selected
from toolkit.storage.file import quote

__all__ = ["SUMMARY_COLUMNS", "column_summary"]

SUMMARY_COLUMNS = ["column", "type", "rows", "nulls", "distinct", "min", "max"]
# no order to speak of: their smallest and largest are left empty
_UNORDERED = ("STRUCT", "MAP", "UNION", "JSON", "BLOB")


def column_summary(source: Readable, query: str, params: Any = None) -> pd.DataFrame:
    """One row per column of `query`: column, type (DuckDB's), rows, nulls, distinct (exact, empty values
    aside), min and max (as text; empty for types without an order)."""
    described = selected(source, f"DESCRIBE {query}", params).df()
    if described.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    parts: list[str] = []
    for name, kind in zip(described["column_name"], described["column_type"], strict=True):
        field = quote(name)
        ordered = not any(word in kind for word in _UNORDERED)
        low = f"CAST(min({field}) AS VARCHAR)" if ordered else "NULL::VARCHAR"
        high = f"CAST(max({field}) AS VARCHAR)" if ordered else "NULL::VARCHAR"
        parts.append(f"SELECT {len(parts)} AS at, count(*) AS rows, count(*) - count({field}) AS nulls, "
                     f"count(DISTINCT {field}) AS distinct_values, {low} AS low, {high} AS high FROM q")
    found = selected(source, f"WITH q AS ({query}) " + " UNION ALL ".join(parts), params).df()
    found = found.sort_values("at").reset_index(drop=True)
    return pd.DataFrame({"column": described["column_name"], "type": described["column_type"],
                         "rows": found["rows"].astype("int64"), "nulls": found["nulls"].astype("int64"),
                         "distinct": found["distinct_values"].astype("int64"),
                         "min": found["low"], "max": found["high"]}, columns=SUMMARY_COLUMNS)
