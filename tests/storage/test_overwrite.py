"""`overwrite=True` replaces only what toolkit itself wrote as that kind of output: a snapshot file or
folder it can recognise, never the open workspace, another workspace with history, a folder of the
analyst's or a file it did not write; a download is saved over a file only when asked to."""
from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from toolkit import Workspace, open_snapshot
from toolkit.errors import WorkspaceError
from toolkit.http.translation_downloads import Downloaded

URL = "http://127.0.0.1:9/PD"


def put(ws: Workspace, ids: range, resource: str = "targets") -> str:
    with ws.load("translation", URL, resource, {}, ("id",)) as load:
        load.write(pa.table({"id": list(ids), "name": [f"target {i} of {len(ids)}" for i in ids]}))
    return load.load_id


def loads_in(path) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.sql("select count(*) from _loads").fetchall()[0][0]


@pytest.fixture
def ws(tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as workspace:
        for size in (100, 120, 90, 130):
            put(workspace, range(size))
        put(workspace, range(10), "phases")
        yield workspace


@pytest.mark.parametrize("format", ["duckdb", "parquet"])
def test_the_open_workspace_is_never_replaced(ws, format):
    versions = ws.sql("select count(*) from translation.targets__versions").fetchall()[0][0]
    with pytest.raises(WorkspaceError, match="is the open workspace"):
        ws.export(ws.path, format=format, overwrite=True)
    assert len(ws.loads()) == 5
    assert ws.sql("select count(*) from translation.targets__versions").fetchall()[0][0] == versions


def test_the_open_workspace_is_not_replaced_through_a_link_either(ws, tmp_path):
    link = tmp_path / "link.duckdb"
    link.symlink_to(ws.path)
    with pytest.raises(WorkspaceError, match="open workspace"):
        ws.export(link, overwrite=True)
    assert len(ws.loads()) == 5 and link.is_symlink()


def test_another_workspace_with_history_is_never_replaced(ws, tmp_path):
    other = tmp_path / "other.duckdb"
    with Workspace(other) as second:
        put(second, range(3))
        put(second, range(4))
    with pytest.raises(WorkspaceError, match="toolkit workspace with 2 load"):
        ws.export(other, overwrite=True)
    assert loads_in(other) == 2


def test_a_duckdb_file_toolkit_did_not_write_and_any_other_file_stay(ws, tmp_path):
    theirs = tmp_path / "theirs.duckdb"
    with duckdb.connect(str(theirs)) as con:
        con.execute("create table prices as select 1 as price")
    notes = tmp_path / "notes.txt"
    notes.write_text("thesis")
    with pytest.raises(WorkspaceError, match="toolkit did not write"):
        ws.export(theirs, overwrite=True)
    with pytest.raises(WorkspaceError, match="not a DuckDB file"):
        ws.export(notes, overwrite=True)
    with duckdb.connect(str(theirs), read_only=True) as con:
        assert con.sql("select price from prices").fetchall() == [(1,)]
    assert notes.read_text() == "thesis"


@pytest.mark.parametrize("history", [False, True])
def test_a_snapshot_toolkit_wrote_is_replaced(ws, tmp_path, history):
    path = ws.export(tmp_path / "snap.duckdb", history=history)
    put(ws, range(140))
    assert ws.export(path, history=history, overwrite=True) == path
    with open_snapshot(path) as snap:
        assert len(snap.read("translation", "targets")) == 140
        assert len(snap.loads()) == (6 if history else 2)


def test_a_snapshot_used_as_a_workspace_since_is_not_replaced(ws, tmp_path):
    path = ws.export(tmp_path / "snap.duckdb", history=True)
    with Workspace(path) as grown:
        put(grown, range(7))
    with pytest.raises(WorkspaceError, match="1 load.* not in its manifest"):
        ws.export(path, overwrite=True)
    assert loads_in(path) == 6


def test_a_parquet_export_never_deletes_a_folder_holding_other_files(ws, tmp_path):
    folder = tmp_path / "exports"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "thesis.txt").write_text("three years of work")
    with pytest.raises(WorkspaceError, match="1 file.* notes/thesis.txt"):
        ws.export(folder, format="parquet", overwrite=True)
    assert (folder / "notes" / "thesis.txt").read_text() == "three years of work"


def test_a_parquet_snapshot_is_replaced_but_not_once_someone_added_to_it(ws, tmp_path):
    folder = ws.export(tmp_path / "snap", format="parquet")
    put(ws, range(140))
    ws.export(folder, format="parquet", overwrite=True)
    with open_snapshot(folder) as snap:
        assert len(snap.read("translation", "targets")) == 140
    (folder / "translation" / "targets" / "my-analysis.parquet").write_bytes(b"PAR1")
    with pytest.raises(WorkspaceError, match="translation/targets/my-analysis.parquet"):
        ws.export(folder, format="parquet", overwrite=True)
    assert (folder / "translation" / "targets" / "my-analysis.parquet").exists()


def test_a_snapshot_is_replaced_only_by_one_of_its_own_format(ws, tmp_path):
    file, folder = ws.export(tmp_path / "snap.duckdb"), ws.export(tmp_path / "snap", format="parquet")
    with pytest.raises(WorkspaceError, match="is a file, not a Parquet snapshot folder"):
        ws.export(file, format="parquet", overwrite=True)
    with pytest.raises(WorkspaceError, match="is a folder, not a DuckDB snapshot"):
        ws.export(folder, overwrite=True)
    assert file.is_file() and (folder / "manifest.json").is_file()


def test_a_download_replaces_a_file_only_when_asked(tmp_path):
    got = Downloaded(7001, b"PK\x05\x06" + bytes(18), polls=1)
    target = tmp_path / "files.zip"
    target.write_bytes(b"the earlier deliverables")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        got.save(target)
    assert target.read_bytes() == b"the earlier deliverables"
    assert got.save(target, overwrite=True).read_bytes() == got.data
    assert got.save(tmp_path / "new.zip").read_bytes() == got.data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["files.zip", "new.zip"]
    with pytest.raises(IsADirectoryError):
        got.save(tmp_path, overwrite=True)
