"""A workspace or snapshot file that is damaged (bytes flipped on disk) is always found out, and says
so in toolkit's words: WorkspaceDamagedError, never DuckDB's raw error, nothing changed."""
from __future__ import annotations

import random
import shutil

import pytest

import toolkit as tk
from toolkit.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("damaged")
    with tk.sandbox.start(seed=3) as box, tk.Workspace(folder / "ws.duckdb") as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        tm.pull("submissions", progress=False)
        tm.pull("targets", progress=False)
        ws.export(folder / "snap.duckdb")
    return folder


def damage(source, target, seed: int) -> None:
    shutil.copy(source, target)
    data = bytearray(target.read_bytes())
    rng = random.Random(seed)
    for _ in range(8):
        data[rng.randrange(len(data))] ^= 0xFF
    target.write_bytes(bytes(data))


def rendered(error: BaseException) -> list[str]:
    return error._render_traceback_()


@pytest.mark.parametrize("seed", range(6))
def test_a_damaged_workspace_says_so(files, tmp_path, seed):
    path = tmp_path / "ws.duckdb"
    damage(files / "ws.duckdb", path, seed)
    with pytest.raises(tk.WorkspaceDamagedError) as raised, tk.Workspace(path, read_only=True) as ws:
        ws.tables()
        ws.loads()
        ws.read("translation", "targets")
        ws.read("translation", "submissions")
    assert "is damaged" in str(raised.value) and len(rendered(raised.value)) <= 3


@pytest.mark.parametrize("seed", range(6))
def test_a_damaged_snapshot_says_so(files, tmp_path, seed):
    path = tmp_path / "snap.duckdb"
    damage(files / "snap.duckdb", path, seed)
    with pytest.raises(tk.WorkspaceDamagedError) as raised, tk.open_snapshot(path) as snap:
        snap.tables()
        snap.manifest()
        snap.read("translation", "targets")
        snap.read("translation", "submissions")
    assert "is damaged" in str(raised.value) and len(rendered(raised.value)) <= 3


def test_toolkit_show_of_a_damaged_workspace_is_one_line(files, tmp_path, capsys):
    path = tmp_path / "ws.duckdb"
    damage(files / "ws.duckdb", path, 1)
    code = main(["show", "--workspace", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "is damaged" in err and len(err.strip().splitlines()) == 1
