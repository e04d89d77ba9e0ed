"""The workspace browser over the demo workspace: the time to open it, to pick a view, and to scroll a
100,000-row view a page at a time; with --compare, the grids it could have been built on.

    python benchmarks/browse.py [WORKSPACE] [--repeat N] [--rows N] [--compare]

WORKSPACE is a demo workspace (`toolkit demo` writes demo-output/toolkit-demo.duckdb); without one the
demo is run first into a temporary folder. The workspace is opened read-only; the imports (ipywidgets,
Perspective, matplotlib) are paid once before timing, as a notebook has paid them by its second cell.

Printed: the median of N opens (`ws.browse()`: every view's rows, freshness on the wall clock, drift,
the views grid); the median time to pick a view (its rows grid, column summary, loads plot, last diff);
for a view of --rows rows (the demo's metrics repeated, in a scratch DuckDB beside it) the time to open
its grid and, for pages of 60 rows (a screenful) read as the page asks the kernel for them (Perspective's
`to_arrow` of a window, sorted by a column as a header click asks), the median and the slowest page over
pages spread through the view. Goals (issue 46): open under 1 s, a page under 0.5 s.
--compare builds the same 100,000 rows in itables' ITable and ipydatagrid's DataGrid where installed:
the time to build, the bytes sent to the page at once, and the memory held.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

import toolkit as tk
from toolkit import demo
from toolkit.glance.grid import Grid

PAGE = 60


def median_seconds(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def big_view(path: str, rows: int) -> duckdb.DuckDBPyConnection:
    """A scratch DuckDB with `rows` rows of the demo's audience metrics, repeated as needed."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{path}' AS demo (READ_ONLY)")
    con.execute(f"CREATE TABLE big AS SELECT m.*, r.range AS copy FROM demo.audience_platform.metrics m, "
                f"range(({rows} // (SELECT count(*) FROM demo.audience_platform.metrics)) + 1) r LIMIT {rows}")
    return con


def sent_bytes(widget) -> int:
    """What a widget sends to the page when shown: its state, buffers included."""
    from ipywidgets.widgets.widget import _remove_buffers
    state, _, buffers = _remove_buffers(widget.get_state())
    return len(json.dumps(state, default=str)) + sum(len(b) for b in buffers)


def scroll(grid: Grid, pages: int = 25) -> list[float]:
    """Seconds per page: a sorted view's windows at pages spread from the top to the bottom."""
    began = time.perf_counter()
    view = grid.widget.table.view(sort=[[grid.columns["column_name"].iloc[-2], "desc"]])
    times = [time.perf_counter() - began]     # the sort itself, as the first page after a header click
    for i in range(1, pages):
        start = (grid.rows - PAGE) * i // (pages - 1)
        began = time.perf_counter()
        view.to_arrow(start_row=start, end_row=start + PAGE)
        times.append(time.perf_counter() - began)
    return times


def compare(con: duckdb.DuckDBPyConnection) -> None:
    import psutil
    frame = con.sql("SELECT * FROM big").df()
    process = psutil.Process()
    for name, build in (("perspective", lambda: Grid(con, "SELECT * FROM big").widget),
                        ("itables", lambda: __import__("itables.widget").widget.ITable(frame, maxBytes=0)),
                        ("ipydatagrid", lambda: __import__("ipydatagrid").DataGrid(frame))):
        try:
            before = process.memory_info().rss
            began = time.perf_counter()
            widget = build()
            built = time.perf_counter() - began
            print(f"  {name:12} built {built:.2f} s, sends {sent_bytes(widget) / 1e6:.1f} MB when shown, "
                  f"RSS +{(process.memory_info().rss - before) / 1e6:.0f} MB")
        except ImportError:
            print(f"  {name:12} not installed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", nargs="?")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--compare", action="store_true")
    asked = parser.parse_args()
    path = asked.workspace
    if path is None:
        out = Path(tempfile.mkdtemp(prefix="toolkit-browse-"))
        demo.run(out)
        path = str(out / "toolkit-demo.duckdb")
    with tk.Workspace(path, read_only=True) as ws:
        ws.browse().select("translation.targets")          # imports and DuckDB's first open, not timed
        opened = median_seconds(ws.browse, asked.repeat)
        browser = ws.browse()
        views = ["audience_platform.audiences", "translation.targets", "audience_platform.metrics"]
        picked = {view: median_seconds(lambda v=view: browser.select(v), asked.repeat) for view in views}
    print(f"{len(browser.views)} views; open: {opened:.3f} s (goal < 1 s), median of {asked.repeat}")
    for view, seconds in picked.items():
        print(f"pick {view}: {seconds:.3f} s")
    con = big_view(path, asked.rows)
    began = time.perf_counter()
    grid = Grid(con, "SELECT * FROM big")
    built = time.perf_counter() - began
    pages = scroll(grid)
    print(f"a {grid.rows:,}-row view: grid open {built:.3f} s, sends {sent_bytes(grid.widget) / 1e6:.1f} MB "
          f"when shown (the grid's code; rows follow a page at a time)")
    print(f"scroll, sorted by a header: {PAGE} rows a page, median {statistics.median(pages) * 1000:.1f} ms, "
          f"slowest {max(pages) * 1000:.1f} ms over {len(pages)} pages, the first with the sort "
          f"({pages[0] * 1000:.1f} ms) (goal < 0.5 s)")
    if asked.compare:
        print(f"the same {asked.rows:,} rows in each grid:")
        compare(con)


if __name__ == "__main__":
    main()
