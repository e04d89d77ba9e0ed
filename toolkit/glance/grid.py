"""One data grid over the rows of a SELECT: Perspective's Jupyter widget, fed from DuckDB.

Perspective keeps the rows in its engine on the kernel's side and the page asks only for the rows it
scrolls to, so a 100,000-row view opens in well under a second and scrolls a page at a time; sort by a
header, filter per column and hide columns are the grid's own, and it tells the kernel what it does
(its `sort`, `filter` and `columns` traits), so `shown()` is what the analyst sees, read again from
DuckDB with its own types (lists stay lists). Search over every column is DuckDB's (`ILIKE`). Why
Perspective and not itables or ipydatagrid: docs/architecture/glance.md.

    grid = Grid(ws, 'SELECT * FROM "translation"."targets"'); grid.search("fr"); grid.shown()
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from toolkit.errors import WorkspaceError
from toolkit.glance.reading import Readable, selected
from toolkit.storage.file import quote

__all__ = ["CAP", "Grid", "for_grid", "grid_class", "save_frame"]

CAP = 1_000_000     # rows a grid holds at most; beyond, it says "first N of M"
# DuckDB types Perspective has no column for are shown as text (the DataFrame keeps them)
_AS_TEXT = ("[]", "STRUCT", "MAP", "UNION", "UUID", "JSON", "BLOB", "INTERVAL", "BIT", "HUGEINT", "UBIGINT",
            "DECIMAL", "TIME")
# Perspective's filter operators in SQL (its "contains" family is case-sensitive, as LIKE is)
_OPERATORS = {"==": "=", "!=": "<>", ">": ">", "<": "<", ">=": ">=", "<=": "<="}


@functools.cache
def grid_class() -> type:
    """Perspective's widget, its code evaluated once per page however many grids it shows.

    anywidget imports each widget's code from a blob URL of its own, and Perspective's code defines
    custom elements, which a page can define once: a second grid on a page failed ("the name
    "regular-layout" has already been used"). This one imports the same code once per page (keyed
    by its hash) and hands every grid to it."""
    from perspective.widget import _STATIC, PerspectiveWidget

    source = (_STATIC / "perspective-anywidget.js").read_text(encoding="utf-8")
    key = "__toolkit_perspective_" + hashlib.sha256(source.encode()).hexdigest()[:16]
    shared = (f"globalThis.{key} ??= import(URL.createObjectURL(new Blob([{json.dumps(source)}], "
              "{type: 'text/javascript'})));\n"
              f"export default {{ async render(context) {{ return (await globalThis.{key}).default.render(context); }} }};\n")
    return type("Perspective", (PerspectiveWidget,), {"_esm": shared, "__module__": __name__})


def for_grid(columns: pd.DataFrame) -> str:
    """The select list that shows every column of a DESCRIBE in the grid: what it cannot hold as text."""
    shown = []
    for name, kind in zip(columns["column_name"], columns["column_type"], strict=True):
        text = any(part in kind for part in _AS_TEXT)
        shown.append(f"CAST({quote(name)} AS VARCHAR) AS {quote(name)}" if text else quote(name))
    return ", ".join(shown) or "*"


def save_frame(frame: pd.DataFrame, path: str | Path) -> Path:
    """A DataFrame written by DuckDB as CSV or Parquet (by the path's suffix), lists kept."""
    where = Path(path).expanduser()
    kind = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(where.suffix.lower())
    if kind is None:
        raise WorkspaceError(f"save as .csv or .parquet, not {where.name!r}")
    where.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect() as con:
        con.register("shown", frame)
        con.execute(f"COPY shown TO {_literal(str(where))} (FORMAT {kind}{', HEADER' if kind == 'csv' else ''})")
    return where


def _ipc(table: pa.Table) -> bytes:
    """An Arrow table as the IPC stream Perspective's `replace` reads."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Grid:
    """A Perspective grid of `query`'s rows in a box of fixed height: `widget`, `rows` (held), `total`
    (the query's rows before the cap), `search(text)`, `shown()` (a DataFrame of what the grid shows)
    and `save(path)`."""

    def __init__(self, source: Readable, query: str, height: str = "360px", title: str = "") -> None:
        self.source, self.query, self.text = source, query, ""
        self.frames: duckdb.DuckDBPyConnection | None = None   # where a grid `of_frame` holds its frame
        self.columns = selected(source, f"DESCRIBE {query}").df()[["column_name", "column_type"]]
        self.rows, self.total = 0, 0
        first = self._arrow()
        # settings=False: the grid alone; its column menus (sort, filter) stay a header click away
        self.widget = grid_class()(first, plugin="Datagrid", settings=False, title=title or None,
                                        theme="Pro Light")
        # its stylesheet's `flex: 1` drew a grid in a VBox 5 px tall (perspective issue 2248)
        self.widget.layout = {"height": height, "min_height": height, "flex": "0 0 auto", "width": "100%"}

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, height: str = "360px", title: str = "") -> Grid:
        """A grid over a DataFrame (a diff's rows), held in an in-memory DuckDB for search and `shown()`."""
        con = duckdb.connect()
        con.register("frame", frame)
        grid = cls(con, "SELECT * FROM frame", height, title)
        grid.frames, grid.frame = con, frame       # the connection reads the frame while the grid lives
        return grid

    def replace_frame(self, frame: pd.DataFrame) -> None:
        """A grid `of_frame` shows other rows of the same columns (the views after a refresh)."""
        if self.frames is None:
            raise WorkspaceError("only a grid made `Grid.of_frame` shows another frame; this one shows a query")
        self.frames.register("frame", frame)
        self.frame = frame
        self.widget.table.replace(_ipc(self._arrow()))

    def _where(self) -> tuple[str, list[Any]]:
        if not self.text:
            return "", []
        cells = ", ".join(f"CAST({quote(c)} AS VARCHAR)" for c in self.columns["column_name"])
        return f" WHERE concat_ws(' ', {cells}) ILIKE {_literal('%' + self.text + '%')}", []

    def searched(self) -> str:
        """The query of the rows the grid holds: the view's, with the search."""
        return f"SELECT * FROM ({self.query}) q{self._where()[0]}"

    def _arrow(self) -> pa.Table:
        where, params = self._where()
        counted = selected(self.source, f"SELECT count(*) AS n FROM ({self.query}) q{where}", params or None)
        self.total = int(counted.df()["n"].iloc[0])
        relation = selected(self.source, f"SELECT {for_grid(self.columns)} FROM ({self.query}) q{where} LIMIT {CAP}",
                            params or None)
        table = relation.to_arrow_table()
        self.rows = table.num_rows
        return table

    def search(self, text: str) -> None:
        """Keep the rows any of whose cells holds `text` (case aside); "" shows every row again."""
        self.text = text.strip()
        self.widget.table.replace(_ipc(self._arrow()))

    def describe(self) -> str:
        """"31 rows" or "first 1,000,000 of 1,200,000 rows", and the search when one is set."""
        held = f"{self.rows:,} rows" if self.rows == self.total else f"first {self.rows:,} of {self.total:,} rows"
        return held + (f" holding {self.text!r}" if self.text else "")

    def _shown_sql(self) -> tuple[str, list[Any]]:
        where, params = self._where()
        names = set(self.columns["column_name"])
        clauses = [where.removeprefix(" WHERE ")] if where else []
        for column, operator, *value in self.widget.filter or []:
            if column not in names:
                continue
            value = value[0] if value else None
            field = quote(column)
            if operator in _OPERATORS and value is not None:
                clauses.append(f"{field} {_OPERATORS[operator]} ?")
                params.append(value)
            elif operator in ("contains", "begins with", "ends with") and value is not None:
                pattern = {"contains": "%{}%", "begins with": "{}%", "ends with": "%{}"}[operator]
                clauses.append(f"CAST({field} AS VARCHAR) LIKE ?")
                params.append(pattern.format(value))
            elif operator in ("in", "not in") and value:
                marks = ", ".join("?" for _ in value)
                clauses.append(f"CAST({field} AS VARCHAR) {'NOT ' if operator == 'not in' else ''}IN ({marks})")
                params.extend(str(v) for v in value)
            elif operator in ("is null", "is not null"):
                clauses.append(f"{field} {operator.upper()}")
        order = [f"{quote(c)} {'DESC' if 'desc' in how else 'ASC'} NULLS LAST"
                 for c, how, *_ in (self.widget.sort or []) if c in names and how != "none"]
        shown = [c for c in (self.widget.columns or []) if c in names] or list(self.columns["column_name"])
        query = (f"SELECT {', '.join(quote(c) for c in shown)} FROM ({self.query}) q"
                 + (" WHERE " + " AND ".join(f"({c})" for c in clauses) if clauses else "")
                 + (" ORDER BY " + ", ".join(order) if order else "") + f" LIMIT {CAP}")
        return query, params

    def shown(self) -> pd.DataFrame:
        """What the grid shows, as a DataFrame with the view's own types: its search, the filters, the
        sort and the columns picked in the grid (a grid grouped or pivoted gives its own cells)."""
        grouped = any(getattr(self.widget, name, None) for name in ("group_by", "split_by", "expressions"))
        if grouped:
            config = {name: getattr(self.widget, name) for name in
                      ("columns", "filter", "sort", "group_by", "split_by", "aggregates", "expressions")}
            return self.widget.table.view(**{k: v for k, v in config.items() if v}).to_pandas()
        query, params = self._shown_sql()
        return selected(self.source, query, params or None).df()

    def save(self, path: str | Path) -> Path:
        """What the grid shows written as CSV or Parquet (by the path's suffix)."""
        return save_frame(self.shown(), path)
