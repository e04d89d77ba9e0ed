"""A DuckDB snapshot is written in the oldest storage version that holds its types, so that colleagues
on older DuckDBs open it (make test-compat opens one with DuckDB 1.1, 1.4, 1.5 and 2.0); the manifest
says which DuckDB opens it, and a type that needs a newer storage makes the export say so."""
from __future__ import annotations

import warnings

import duckdb
import pyarrow as pa
import pytest

from toolkit import Workspace, open_snapshot
from toolkit.errors import SnapshotStorageWarning, ValidationError, WorkspaceError
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


def test_a_snapshot_a_newer_duckdb_wrote_says_which_duckdb_opens_it_in_one_line(tmp_path):
    """A snapshot DuckDB 2.0 wrote in its own storage, opened under the team's 1.5.5, was a 16-34 line
    traceback. Here the file's header names a DuckDB far newer than any (v99.0.0) in a storage version
    none reads: the open says which DuckDB it needs, in one line."""
    filled(tmp_path / "ws.duckdb")
    with Workspace(tmp_path / "ws.duckdb") as ws:
        ws.export(tmp_path / "snap.duckdb")
    with open(tmp_path / "snap.duckdb", "r+b") as file:
        file.seek(12)
        file.write((65_000).to_bytes(8, "little"))            # a storage version no DuckDB reads
        file.seek(52)
        file.write(b"v99.0.0".ljust(32, b"\0"))               # the release that wrote it
    with pytest.raises(WorkspaceError) as raised:
        open_snapshot(tmp_path / "snap.duckdb")
    said = str(raised.value)
    assert "written by DuckDB v99.0.0" in said and f"this DuckDB ({duckdb.__version__}) cannot read" in said
    assert "pip install 'duckdb>=99.0.0'" in said and "\n" not in said


@pytest.mark.parametrize("since", ["not a date", "2026-13-45", object()])
def test_an_export_since_what_is_no_time_is_a_validation_error(tmp_path, since):
    filled(tmp_path / "ws.duckdb")
    with Workspace(tmp_path / "ws.duckdb") as ws, pytest.raises(ValidationError, match="since=.*must be a time"):
        ws.export(tmp_path / "snap.duckdb", since=since)
    assert not (tmp_path / "snap.duckdb").exists()
