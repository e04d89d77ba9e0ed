"""The catalog's listings as the `toolkit` command prints them: a table that fits the terminal, JSON or CSV.

`toolkit actions` printed 231 lines up to 215 characters wide (`resources` 299): pandas' own text
wraps each row over several lines once the terminal is narrower. Here the names an analyst copies
(`NAMES`: the action, the service, the resource) are never cut; every other column is as wide as its
longest value (up to 28 characters when the terminal has no room for that), the last column (the doc)
gives way and takes what the terminal leaves, and the columns that leave it too little are left out,
saying so; `--format json|csv` gives every column whole.

    print(listings.shown(tk.actions("translation"), "table", width=100))
"""
from __future__ import annotations

__all__ = ["FORMATS", "GAP", "fitted", "shown"]

import shutil
import textwrap

import pandas as pd

FORMATS = ("table", "json", "csv")
GAP = "  "
NAMES = ("action", "service", "resource")    # what a user copies into a call: never cut


def shown(table: pd.DataFrame, format: str = "table", width: int | None = None) -> str:
    """`table` as text: `table` fits `width` (the terminal's, else 100), `json` is a list of records,
    `csv` has a header row."""
    if format == "json":
        return table.to_json(orient="records", indent=1, force_ascii=False)
    if format == "csv":
        return table.to_csv(index=False).rstrip("\n")
    if format != "table":
        raise ValueError(f"format {format!r}: one of {', '.join(FORMATS)}")
    return fitted(table, width or shutil.get_terminal_size((100, 24)).columns)


def fitted(table: pd.DataFrame, width: int) -> str:
    """The table in at most `width` characters a line where the names allow: the `NAMES` columns are
    whole, the others whole when they fit and else at most 28 wide, and the last one (the doc) takes
    what is left, at least 20; columns before it that are not names are left out from the right until
    it fits, and named under the table. Cut values end in '…'."""
    texts = {column: [str(value) for value in table[column]] for column in table.columns}
    whole = {column: max([len(column), *map(len, values)]) for column, values in texts.items()}
    kept = list(table.columns)
    last = kept[-1]

    def used() -> int:
        return sum(widths[column] + len(GAP) for column in kept[:-1])

    widths = dict(whole)
    if used() + 20 > width:        # no room for every column whole: the ones not copied give way first
        widths = {column: whole[column] if column in NAMES else min(28, whole[column]) for column in whole}
    while used() + 20 > width and [c for c in kept[:-1] if c not in NAMES]:
        kept.remove([c for c in kept[:-1] if c not in NAMES][-1])
    widths[last] = max(8, min(whole[last], width - used()))

    def cell(text: str, column: str) -> str:
        room = widths[column]
        return (text if len(text) <= room else text[:room - 1] + "…").ljust(room)

    lines = [GAP.join(cell(column, column) for column in kept).rstrip()]
    lines += [GAP.join(cell(texts[column][row], column) for column in kept).rstrip() for row in range(len(table))]
    left_out = [column for column in table.columns if column not in kept]
    if left_out:
        lines += textwrap.wrap(f"({', '.join(left_out)} left out to fit {width} columns; --format csv or json "
                               "gives every column)", width)
    return "\n".join(lines)
