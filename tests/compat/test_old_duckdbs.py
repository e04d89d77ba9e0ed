"""`make test-compat` (not part of `make test`: it needs other DuckDB wheels from PyPI, each in its own
venv): the demo's snapshot, with history and without, opened by each DuckDB a colleague may have, as
they would open it, with DuckDB alone. Each must open it and read every table and view as the toolkit
that wrote it does, or the manifest must have said that DuckDB cannot (its `duckdb_opens`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit import Workspace, open_snapshot

# "1.1.3 1.4.5 ..." : each DuckDB's venv is .venv-duckdb-<version> in the clone (the Makefile makes them)
VERSIONS = os.environ.get("TOOLKIT_COMPAT_DUCKDB", "").split()
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not VERSIONS, reason="make test-compat runs these (TOOLKIT_COMPAT_DUCKDB)")

# what a colleague runs: every table and view of the file, its rows counted, and the manifest's word
READ = """
import duckdb, json, sys
con = duckdb.connect(sys.argv[1], read_only=True)
names = con.execute("SELECT schema_name, table_name FROM duckdb_tables() UNION ALL "
                    "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal").fetchall()
counts = {f"{s}.{n}": con.execute(f'SELECT count(*) FROM "{s}"."{n}"').fetchone()[0] for s, n in names}
opens = sorted({r[0] for r in con.execute("SELECT duckdb_opens FROM _manifest").fetchall()})
print(json.dumps({"duckdb": duckdb.__version__, "counts": counts, "opens": opens}))
"""


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    """The demo's own snapshot (with history) and one of its latest loads, made by this toolkit."""
    from toolkit import demo
    out = tmp_path_factory.mktemp("demo")
    assert demo.run(out=out, scale=0.2) == 0
    with Workspace(out / "toolkit-demo.duckdb") as ws:
        ws.export(out / "latest.duckdb")
    return {"history": out / "snapshot.duckdb", "latest": out / "latest.duckdb"}


def expected(path: Path) -> dict[str, int]:
    snap = open_snapshot(path)
    tables = snap.tables(internals=True)
    return {f"{s}.{n}": int(snap.sql(f'SELECT count(*) FROM "{s}"."{n}"').fetchall()[0][0])
            for s, n in zip(tables["schema"], tables["name"], strict=True)}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", ["history", "latest"])
def test_each_duckdb_opens_the_demo_snapshot(snapshots, kind, version):
    python = ROOT / f".venv-duckdb-{version}" / "bin" / "python"
    assert python.exists(), f"no venv for DuckDB {version}: make test-compat makes it"
    done = subprocess.run([str(python), "-c", READ, str(snapshots[kind])], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"DuckDB {version} cannot open the {kind} snapshot: {done.stderr[-600:]}"
    found = json.loads(done.stdout)
    assert found["duckdb"] == version
    assert found["opens"] == ["DuckDB >= 1.0"]
    assert found["counts"] == expected(snapshots[kind])
    print(f"DuckDB {version}: the {kind} snapshot opened, {len(found['counts'])} tables and views, "
          f"{sum(found['counts'].values()):,} rows", file=sys.stderr)
