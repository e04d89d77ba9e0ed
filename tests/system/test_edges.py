"""Toolkit's short errors at the edges a new analyst meets first: paths, snapshots, exports, a view
whose loads all failed (issue 35 item 5). Each is a ToolkitError of at most 3 rendered lines."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import toolkit as tk
from toolkit.errors import SnapshotExistsError, SnapshotNotFoundError, ToolkitError, WorkspaceError


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as running:
        yield running


def short(error: BaseException) -> bool:
    return isinstance(error, ToolkitError) and len(error._render_traceback_()) <= 3


def test_a_workspace_in_a_folder_that_does_not_exist_says_to_create_it(tmp_path):
    with pytest.raises(WorkspaceError, match=r"no folder .*missing-dir to hold the workspace x.duckdb: create "
                                             r"it first \(mkdir -p ") as raised:
        tk.Workspace(tmp_path / "missing-dir" / "x.duckdb")
    assert short(raised.value) and not (tmp_path / "missing-dir").exists()


@pytest.mark.parametrize("name", ["a\\b.duckdb", "a*b.duckdb", "a?b.duckdb", "a[1].duckdb", "a]b.duckdb"])
def test_a_path_duckdb_reads_as_a_pattern_or_separator_is_refused_before_anything_is_written(tmp_path, name):
    for opening in (lambda: tk.Workspace(tmp_path / name), lambda: tk.Workspace(tmp_path / name, read_only=True)):
        with pytest.raises(WorkspaceError, match="DuckDB reads as a folder separator or a pattern") as raised:
            opening()
        assert short(raised.value)
    assert os.listdir(tmp_path) == []


def test_an_export_to_an_odd_path_or_onto_a_file_that_exists_is_one_short_error(box, tmp_path):
    ws = tk.Workspace(tmp_path / "w.duckdb")
    ws.connect("media_review", **box.credentials("media_review")).fetch("teams", progress=False)
    ws.export(tmp_path / "s.duckdb")
    with pytest.raises(SnapshotExistsError, match="exists: pass overwrite=True to replace it") as raised:
        ws.export(tmp_path / "s.duckdb")
    assert isinstance(raised.value, FileExistsError) and short(raised.value)
    with pytest.raises(WorkspaceError, match="holds the character ?") as raised:
        ws.export(tmp_path / "s?.duckdb", format="parquet")
    assert short(raised.value)
    ws.close()


def test_the_cli_says_overwrite_in_its_own_words(box, tmp_path, capsys):
    from toolkit.cli import main
    ws = tk.Workspace(tmp_path / "w.duckdb")
    ws.connect("media_review", **box.credentials("media_review")).fetch("teams", progress=False)
    ws.close()
    (tmp_path / "s.duckdb").write_text("")
    assert main(["export", "--workspace", str(tmp_path / "w.duckdb"), "--out", str(tmp_path / "s.duckdb")]) == 2
    assert "pass --overwrite" in capsys.readouterr().err


def test_a_folder_that_is_no_snapshot_says_so_not_filenotfound_manifest_json(tmp_path):
    with pytest.raises(SnapshotNotFoundError, match="is a folder but no Parquet snapshot") as raised:
        tk.open_snapshot(tmp_path)
    assert short(raised.value) and "manifest.json:" not in str(raised.value)


def test_a_workspace_opened_as_a_snapshot_is_refused_at_open_and_held_by_nobody(box, tmp_path):
    path = tmp_path / "workspace.duckdb"
    ws = tk.Workspace(path)
    ws.connect("media_review", **box.credentials("media_review")).fetch("teams", progress=False)
    ws.close()
    with pytest.raises(WorkspaceError, match=r"is a toolkit workspace, not a snapshot: read it with "
                                             r"toolkit.Workspace\(.*read_only=True\)") as raised:
        tk.open_snapshot(path)
    assert short(raised.value)
    # another process writes to it at once: nothing of the refused open holds the file
    code = ("import toolkit as tk\n"
            f"ws = tk.Workspace({str(path)!r}, wait=0)\n"
            "with ws._file.held() as con: con.execute('CREATE TABLE main.x AS SELECT 1')\nprint('wrote')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "wrote", run.stderr


def test_a_view_whose_loads_all_failed_says_they_failed_not_that_it_was_never_fetched(box):
    ws = tk.Workspace(":memory:")
    wrong = ws.connect("asset_library", **{**box.credentials("asset_library"), "api_key": "wrong-key"})
    with pytest.raises(tk.AuthError):
        wrong.fetch("tags", progress=False)
    with pytest.raises(tk.WorkspaceError) as raised:
        ws.sql("select * from asset_library.tags")
    said = str(raised.value)
    assert said.startswith("asset_library.tags has no view: its 1 load(s) failed, none finished. "
                           "ws.history('asset_library.tags') says why")
    assert "not fetched yet" not in said and "this workspace holds" not in said and short(raised.value)
    ws.connect("media_review", **box.credentials("media_review")).fetch("teams", progress=False)
    with pytest.raises(tk.WorkspaceError) as raised:      # one never fetched: its call, and what is held
        ws.sql("select * from media_review.projects")
    assert "this workspace holds media_review.teams)" in str(raised.value)
    assert "asset_library.tags" not in str(raised.value)
