"""A DuckDB snapshot is written in the oldest storage version that holds its types, so that colleagues
on older DuckDBs open it (make test-compat opens one with DuckDB 1.1, 1.4, 1.5 and 2.0); the manifest
says which DuckDB opens it, and a type that needs a newer storage makes the export say so."""
from __future__ import annotations

import warnings

import duckdb
import pyarrow as pa
import pytest

from toolkit import Workspace, open_snapshot
from toolkit.errors import SnapshotStorageWarning
from toolkit.storage import exports

URL = "http://127.0.0.1:9/PD"


def filled(path) -> None:
    with Workspace(path) as ws, ws.load("translation", URL, "targets", {}, ("id",)) as load:
        load.write(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "tags": [["x"], [], None]}))


def storage_of(path) -> str:
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{path}' AS snap (READ_ONLY)")
        return con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'snap'").fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("history", [False, True])
def test_a_snapshot_is_written_in_the_oldest_storage_and_its_manifest_says_which_duckdb_opens_it(tmp_path, history):
    filled(tmp_path / "ws.duckdb")
    with Workspace(tmp_path / "ws.duckdb") as ws, warnings.catch_warnings():
        warnings.simplefilter("error", SnapshotStorageWarning)
        ws.export(tmp_path / "snap.duckdb", history=history)
    manifest = open_snapshot(tmp_path / "snap.duckdb").manifest()
    assert manifest["storage_version"].tolist() == [exports.OLDEST_STORAGE] == ["v1.0.0"]
    assert manifest["duckdb_opens"].tolist() == ["DuckDB >= 1.0"]
    assert "v1.0.0" in str(storage_of(tmp_path / "snap.duckdb")), "the file itself is not in v1.0.0's storage"
    assert open_snapshot(tmp_path / "snap.duckdb").read("translation", "targets")["id"].tolist() == [1, 2, 3]


def test_a_type_older_storage_cannot_hold_takes_the_storage_duckdb_names_and_the_export_says_so(tmp_path):
    filled(tmp_path / "ws.duckdb")
    con = duckdb.connect(str(tmp_path / "ws.duckdb"))
    try:
        con.execute("ALTER TABLE translation.targets__versions ADD COLUMN extra VARIANT")
    except duckdb.Error as error:
        pytest.skip(f"this DuckDB has no VARIANT type: {error}")
    finally:
        con.close()
    with Workspace(tmp_path / "ws.duckdb") as ws, pytest.warns(SnapshotStorageWarning, match=r"DuckDB >= 1\.5.*parquet"):
        ws.export(tmp_path / "snap.duckdb")
    manifest = open_snapshot(tmp_path / "snap.duckdb").manifest()
    assert manifest["storage_version"].tolist() == ["v1.5.0"]
    assert manifest["duckdb_opens"].tolist() == ["DuckDB >= 1.5"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_parquet_snapshot_names_no_duckdb_storage(tmp_path):
    filled(tmp_path / "ws.duckdb")
    with Workspace(tmp_path / "ws.duckdb") as ws:
        ws.export(tmp_path / "snap", format="parquet")
    manifest = open_snapshot(tmp_path / "snap").manifest()
    assert manifest["storage_version"].isna().all() and manifest["duckdb_opens"].isna().all()
