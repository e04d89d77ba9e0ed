"""The analyst notebooks: stored clean (no outputs, no secret, narrated), and each runs top to bottom
against the sandbox, its outputs holding no secret either.

Each run is `pytest --nbmake --overwrite` on a copy in a child process: a kernel of this interpreter
executes the copy and writes its outputs back, so they can be searched, and nothing of Jupyter's
client is imported into the test process (with `ipykernel` in `sys.modules` the fetchers think they
run in a notebook and draw progress bars). Credentials of real services in the environment would
point the notebooks at them, so the child runs without any TOOLKIT_* variable.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import toolkit as tk

FOLDER = Path(__file__).resolve().parents[2] / "notebooks"
BOOKS = sorted(FOLDER.glob("*.ipynb"))
RUN_ELSEWHERE = {"40_write_actions.ipynb"}      # tests/forms/test_write_actions_notebook.py runs it


@pytest.fixture(scope="module")
def secrets() -> list[str]:
    with tk.sandbox.start() as box:              # seeded: the notebooks' sandboxes hold the same secrets
        return [s for s in box.secrets() if isinstance(s, str) and len(s) >= 6]


def test_there_is_a_notebook_per_job():
    names = " ".join(b.stem for b in BOOKS)
    for job in ("00_start_here", "10_audiences", "20_translation_progress", "30_asset_library",
                "50_snapshots_and_diffs", "60_refresh_and_drift"):
        assert job in names


@pytest.mark.parametrize("book", BOOKS, ids=lambda b: b.stem)
def test_stored_without_outputs_or_secrets(book, secrets):
    text = book.read_text()
    assert not [s[:4] for s in secrets if s in text]
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)
    cells = notebook.cells
    assert len(cells) >= 4 and cells[0].cell_type == "markdown"
    assert sum(c.cell_type == "markdown" for c in cells) >= 3, "narrated: text between the code"
    code = [c for c in cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
@pytest.mark.parametrize("book", [b for b in BOOKS if b.name not in RUN_ELSEWHERE], ids=lambda b: b.stem)
def test_runs_top_to_bottom_against_the_sandbox(book, secrets, tmp_path):
    copy = tmp_path / book.name
    shutil.copy(book, copy)
    env = {name: value for name, value in os.environ.items() if not name.startswith("TOOLKIT_")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake",
                          "--overwrite", "--nbmake-timeout=300", str(copy)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    notebook = nbformat.read(copy, as_version=4)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = json.dumps(outputs)
    assert not [s[:4] for s in secrets if s in text]
    assert "image/png" in text or book.stem.startswith("00"), "the report notebooks show their plots"


@pytest.mark.parametrize("book", [b for b in BOOKS if b.stem[:2] in ("00", "10", "20", "30", "40")],
                         ids=lambda b: b.stem)
def test_a_notebook_keeps_its_workspace_in_a_file_beside_it(book):
    """An in-memory workspace was lost at each kernel restart; the file is named for the notebook."""
    code = "\n".join(c.source for c in nbformat.read(book, as_version=4).cells if c.cell_type == "code")
    assert f'ws = tk.Workspace("{book.stem}.duckdb")' in code and "tk.Workspace()" not in code
