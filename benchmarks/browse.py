"""The workspace browser over the demo workspace: the time to open it and to draw a view's history plot.

    python benchmarks/browse.py [WORKSPACE] [repeat]

WORKSPACE is a demo workspace (`toolkit demo` writes demo-output/toolkit-demo.duckdb); without one the
demo is run first into a temporary folder. The workspace is opened read-only; the imports (ipywidgets,
matplotlib) are paid once before timing, as a notebook has paid them by its second cell. Printed: the
median of `repeat` opens (`Browser(ws)`: every view's rows, freshness and drift, the table drawn), and
per view the median time of its history: the per-load counts from the row versions (reading.load_changes)
and the plot drawn to PNG. Goals (issue 38): open under 1 s, a view's history plot under 0.5 s.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import toolkit as tk
from toolkit import demo
from toolkit.glance import reading
from toolkit.glance.browser import Browser, history_figure, png


def median_seconds(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main(path: str | None = None, repeat: int = 5) -> None:
    if path is None:
        out = Path(tempfile.mkdtemp(prefix="toolkit-browse-"))
        demo.run(out)
        path = str(out / "toolkit-demo.duckdb")
    with tk.Workspace(path, read_only=True) as ws:
        Browser(ws)                                   # imports and DuckDB's first open, not timed
        opened = median_seconds(lambda: Browser(ws), repeat)
        views = list(ws.tables()["table"])
        plots = {}
        for view in views:
            service, resource = reading.resolve(ws, view)
            plots[view] = median_seconds(
                lambda s=service, r=resource, v=view: png(history_figure(reading.load_changes(ws, s, r), v)), repeat)
    slowest = max(plots, key=plots.get)
    print(f"{len(views)} views; open: {opened:.3f} s (goal < 1 s), median of {repeat}")
    print(f"history plot: median over views {statistics.median(plots.values()):.3f} s, slowest {slowest} "
          f"{plots[slowest]:.3f} s (goal < 0.5 s)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
