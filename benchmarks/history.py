"""History at the price of change: 10 loads of a 1M-row resource, ~1% of rows changing between loads.

    python benchmarks/history.py [rows] [loads]

Prints the file size and write time of the row-versions workspace against one load and against the
copy-per-load layout (every load's rows again with `_load_id`, written with plain DuckDB the way toolkits
before row versions did), then the time of `as_of` an earlier load and `ws.diff` of the last two loads
against plain DuckDB reading one load of, and diffing two, full copies (medians of 5, interleaved).
Goals (issue 15): the file at most 1.3x one load; `as_of` and `diff` at most 1.2x plain DuckDB.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import Workspace
from toolkit.storage.readback import to_frame

sys.path.insert(0, str(Path(__file__).parent))
from workspace_io import batch

BATCH_ROWS = 122_880  # what fetch writes at once: one DuckDB row group
URL = "http://127.0.0.1:9/bench"


def loads_of(rows: int, loads: int) -> list[pa.Table]:
    """The resource as each load sees it: the first load's rows, then ~1% changed (status, words) per load."""
    base = pa.concat_tables(batch(start, min(BATCH_ROWS, rows - start)) for start in range(0, rows, BATCH_ROWS))
    rng, out, current = np.random.default_rng(15), [base], base
    statuses = pa.array(["NEW", "IN_PROCESS", "READY", "DONE"])
    for _ in range(loads - 1):
        changed = np.zeros(rows, bool)
        changed[rng.choice(rows, rows // 100, replace=False)] = True
        mask = pa.array(changed)
        status = pc.if_else(mask, pc.take(statuses, pa.array(rng.integers(0, 4, rows))), current["status"])
        words = pc.if_else(mask, pa.array(rng.integers(5000, 9000, rows)), current["words"])
        current = current.set_column(current.schema.get_field_index("status"), "status", status)
        current = current.set_column(current.schema.get_field_index("words"), "words", words)
        out.append(current)
    return out


def write_versions(path: Path, tables: list[pa.Table]) -> tuple[list[float], list[str]]:
    times, ids = [], []
    with Workspace(path) as ws:
        for table in tables:
            start = time.perf_counter()
            with ws.load("translation", URL, "targets", {}, ("id",)) as load:
                for piece in table.to_batches(BATCH_ROWS):
                    load.write(pa.Table.from_batches([piece]))
            ws.sql("checkpoint")
            times.append(time.perf_counter() - start)
            ids.append(load.load_id)
    return times, ids


def write_copies(path: Path, tables: list[pa.Table]) -> list[float]:
    """The copy-per-load layout: every load's rows inserted again, with `_load_id`, in one transaction each."""
    times = []
    con = duckdb.connect(str(path))
    con.execute("SET memory_limit = '64MB'")
    for n, table in enumerate(tables):
        start = time.perf_counter()
        con.execute("BEGIN TRANSACTION")
        for piece in table.to_batches(BATCH_ROWS):
            _piece = pa.Table.from_batches([piece])
            if n == 0 and not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'copies'"
                                          ).fetchall()[0][0]:
                con.execute("CREATE TABLE copies AS SELECT *, 'load-00' AS _load_id FROM _piece")
            else:
                con.execute(f"INSERT INTO copies SELECT *, 'load-{n:02d}' FROM _piece")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        times.append(time.perf_counter() - start)
    con.close()
    return times


def interleaved(fns: dict[str, object], repeat: int = 5) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def plain_diff(con: duckdb.DuckDBPyConnection, before: str, after: str) -> None:
    """What ws.diff computes, over two full copies: added, removed, changed rows by key."""
    a = f"(SELECT * EXCLUDE (_load_id) FROM copies WHERE _load_id = '{after}')"
    b = f"(SELECT * EXCLUDE (_load_id) FROM copies WHERE _load_id = '{before}')"
    values = [c for (c,) in con.execute("SELECT column_name FROM (DESCRIBE copies)").fetchall()
              if c not in ("id", "_load_id")]
    differs = " OR ".join(f"n.{c} IS DISTINCT FROM o.{c}" for c in values)
    sides = ", ".join(f"o.{c} AS {c}_before, n.{c} AS {c}_after" for c in values)
    con.sql(f"SELECT n.* FROM {a} n ANTI JOIN {b} o ON n.id = o.id ORDER BY id").to_arrow_table().to_pandas()
    con.sql(f"SELECT o.* FROM {b} o ANTI JOIN {a} n ON n.id = o.id ORDER BY id").to_arrow_table().to_pandas()
    con.sql(f"SELECT n.id, {sides} FROM {a} n JOIN {b} o ON n.id = o.id WHERE {differs} ORDER BY n.id"
            ).to_arrow_table().to_pandas()


def main(rows: int = 1_000_000, loads: int = 10) -> None:
    tables = loads_of(rows, loads)
    print(f"{loads} loads of {rows:,} rows x {tables[0].num_columns} columns, {rows // 100:,} rows changing "
          "between loads")
    with tempfile.TemporaryDirectory() as folder:
        one, versions, copies = (Path(folder) / name for name in ("one.duckdb", "versions.duckdb", "copies.duckdb"))
        [first], _ = write_versions(one, tables[:1])
        times, ids = write_versions(versions, tables)
        copy_times = write_copies(copies, tables)
        size = {name: path.stat().st_size / 1e6 for name, path in
                (("one", one), ("versions", versions), ("copies", copies))}
        print(f"one load:        {size['one']:7.1f} MB, written in {first:.2f} s")
        print(f"row versions:    {size['versions']:7.1f} MB = {size['versions'] / size['one']:.2f}x one load, "
              f"written in {sum(times):.2f} s (first {times[0]:.2f} s, then median "
              f"{statistics.median(times[1:]) if loads > 1 else 0:.2f} s a load)")
        print(f"copy per load:   {size['copies']:7.1f} MB = {size['copies'] / size['one']:.2f}x one load, "
              f"written in {sum(copy_times):.2f} s (median {statistics.median(copy_times):.2f} s a load)")
        if loads < 2:
            return
        earlier = loads // 2
        with Workspace(versions, read_only=True) as ws, duckdb.connect(str(copies), read_only=True) as con:
            con.execute("SET memory_limit = '64MB'")
            con.execute("SET TimeZone = 'UTC'")
            plain = f"SELECT * EXCLUDE (_load_id) FROM copies WHERE _load_id = 'load-{earlier - 1:02d}'"
            got = interleaved({
                "as_of": lambda: ws.as_of("translation.targets", ids[earlier - 1]),
                "plain read": lambda: to_frame(con.sql(plain).to_arrow_table()),
                "as_of arrow": lambda: ws.as_of("translation.targets", ids[earlier - 1],
                                                relation=True).to_arrow_table(),
                "plain arrow": lambda: con.sql(plain).to_arrow_table(),
                "diff": lambda: ws.diff("translation.targets"),
                "plain diff": lambda: plain_diff(con, f"load-{loads - 2:02d}", f"load-{loads - 1:02d}"),
            })
            changed = len(ws.diff("translation.targets").changed)
        print(f"as_of load {earlier} of {loads}, DataFrame: {got['as_of']:.3f} s against {got['plain read']:.3f} s "
              f"plain DuckDB over full copies (same DataFrame types) = {got['as_of'] / got['plain read']:.2f}x")
        print(f"as_of load {earlier} of {loads}, Arrow: {got['as_of arrow']:.3f} s against {got['plain arrow']:.3f} s "
              f"= {got['as_of arrow'] / got['plain arrow']:.2f}x")
        print(f"diff of the last two loads ({changed:,} changed): {got['diff']:.3f} s against "
              f"{got['plain diff']:.3f} s plain DuckDB over two full copies = {got['diff'] / got['plain diff']:.2f}x")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
