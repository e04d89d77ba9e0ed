"""notebooks/40_write_actions.ipynb runs top to bottom against the sandbox and is stored clean."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

BOOK = Path(__file__).resolve().parents[2] / "notebooks" / "40_write_actions.ipynb"


def test_the_notebook_is_stored_without_outputs():
    cells = json.loads(BOOK.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)
    narrated = [c for c in cells if c["cell_type"] == "markdown"]
    assert cells[0]["cell_type"] == "markdown" and len(narrated) >= 8


@pytest.mark.slow
def test_the_notebook_runs_top_to_bottom(tmp_path):
    book = nbformat.read(BOOK, as_version=4)
    NotebookClient(book, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    text = json.dumps([c.get("outputs", []) for c in book.cells])
    assert "***" in text and "sbx_" not in text and "pw_" not in text   # the sandbox's secrets stay masked
