"""Workspace write and read speed: 1M rows of 10 columns in 10 batches, read back against DuckDB's own.

    python benchmarks/workspace_io.py [rows]

Prints medians (of 3 for writes, of 5 interleaved for reads). `read()` is compared with DuckDB's `.to_arrow_table().to_pandas()` (and `.df()`) of
a plain table holding the same rows, in the same run; the goal for a cached fetch is at most 1.2x.
"""
from __future__ import annotations

import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from toolkit import Workspace


def batch(start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(start)
    ids = np.arange(start, start + n)
    statuses = np.array(["NEW", "IN_PROCESS", "READY", "DONE"])
    return pa.table({
        "id": ids,
        "submission_id": ids // 7,
        "name": pa.array([f"document-{i:08d}.docx" for i in ids]),
        "target_language": pa.array(rng.choice(["de-DE", "fr-FR", "ja-JP", "es-ES"], n)),
        "status": pa.array(statuses[rng.integers(0, 4, n)]),
        "words": rng.integers(0, 5000, n),
        "progress": rng.random(n),
        "cost": rng.random(n) * 100,
        "urgent": rng.random(n) < 0.1,
        "updated": pa.array(np.datetime64(datetime(2026, 1, 1)) + ids.astype("timedelta64[s]"),
                            pa.timestamp("us", tz="UTC")),
    })


def median(fn, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(rows: int = 1_000_000, batches: int = 10) -> None:
    size = rows // batches
    data = [batch(i * size, size) for i in range(batches)]
    print(f"{rows:,} rows x {data[0].num_columns} columns in {batches} batches "
          f"({sum(t.nbytes for t in data) / 1e6:.0f} MB of Arrow)")
    with tempfile.TemporaryDirectory() as folder:
        for label, path in (("file", Path(folder) / "ws.duckdb"), ("memory", None)):
            ws = Workspace(path)

            def write(ws: Workspace = ws, resource: str = "targets") -> str:
                with ws.load("translation", "http://bench", resource, {}, ("id",)) as load:
                    for table in data:
                        load.write(table)
                return load.load_id

            seconds, _ = median(write)
            print(f"write ({label}): {seconds:.2f} s = {rows / seconds / 1e3:.0f}k rows/s; peak RSS {rss_mb():.0f} MB")
            write(resource="single")
            ws.sql("CREATE TABLE plain AS SELECT * FROM translation.targets")
            for resource, what in (("single", "the only load in its table"), ("targets", "latest of 3 loads")):
                reads, raws = [], []
                for _ in range(5):  # interleaved, so a busy neighbour slows both alike
                    read, frame = median(lambda ws=ws, r=resource: ws.read("translation", r), repeat=1)
                    raw, _ = median(lambda ws=ws: ws.sql("SELECT * FROM plain").to_arrow_table().to_pandas(),
                                    repeat=1)
                    reads.append(read)
                    raws.append(raw)
                    assert len(frame) == rows
                read, raw = statistics.median(reads), statistics.median(raws)
                print(f"read ({label}, {what}): {read:.2f} s; DuckDB .to_arrow_table().to_pandas() of a plain "
                      f"table {raw:.2f} s: ratio {read / raw:.2f}")
            df, _ = median(lambda ws=ws: ws.sql("SELECT * FROM plain").df(), repeat=1)
            print(f"(DuckDB .df() of the plain table: {df:.2f} s)")
            ws.close()
    print(f"peak RSS {rss_mb():.0f} MB at {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
