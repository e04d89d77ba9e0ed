"""Errors and progress in a notebook, counted in the outputs a kernel saves (nbclient, as Jupyter stores them):
one output per bar, updated in place, its line with the count, the percent and the time left while
it runs; nothing with progress=False, parents included; refresh's lines go to `say` only.

A kernel runs in a child process (nbclient starts it), so nothing of ipykernel enters this process.
"""
from __future__ import annotations

import os

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")

SETUP = """
import toolkit as tk
box = tk.sandbox.start()
ws = tk.Workspace(':memory:')
tm = ws.connect('translation', **box.credentials('translation'))
"""


@pytest.fixture(autouse=True)
def kernel_environment(monkeypatch):
    """The kernel inherits this environment: CI or TOOLKIT_PROGRESS=0 would turn progress off there."""
    for name in [n for n in os.environ if n.startswith("TOOLKIT_") or n == "CI"]:
        monkeypatch.delenv(name)


def run(*cells: str, errors: bool = False) -> list[list[dict]]:
    """The outputs of each cell after SETUP, as the saved notebook holds them."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(SETUP), *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbclient.NotebookClient(book, timeout=240, kernel_name="python3", allow_errors=errors).execute()
    return [list(cell.outputs) for cell in book.cells[1:]]


def texts(outputs: list[dict]) -> list[str]:
    return [o.get("text") or o.get("data", {}).get("text/plain", "") for o in outputs]


@pytest.mark.slow
def test_one_output_per_bar_and_none_when_turned_off():
    quiet, parent_and_child, again, refresh, lines = run(
        "tm.fetch('targets', progress=False);",              # pulls submissions first, quietly too
        "tm.fetch('targets', refresh=True);",                # one bar: the targets'
        "for _ in range(3): tm.fetch('submissions', refresh=True)",
        "said = []; ws.refresh(say=said.append);",
        "print(len(said))")
    assert quiet == []
    shown = texts(parent_and_child)
    assert len(shown) == 1 and shown[0].startswith("translation.targets: "), shown
    assert "(100%)" in shown[0] and "rows=" in shown[0]
    # targets are asked for 100 submissions a request, not by ids: "1/1 batch of submissions", not "1/1 ids"
    assert shown[0].startswith("translation.targets: 1/1 batch of submissions (100%)") and " ids" not in shown[0]
    # one page is "1 page" ("1 pages" before)
    assert len(again) == 3 and all(t.startswith("translation.submissions: 1 page ·") for t in texts(again))
    assert len(texts(refresh)) == 1 and texts(refresh)[0].startswith("refresh: 2/2 resources (100%)")
    assert texts(lines) == ["2\n"]       # the refresh's own lines went to say, not to the cell


@pytest.mark.slow
def test_a_running_line_shows_count_percent_and_time_left():
    """While a walk runs, its line says how far and how long to go, as the terminal bar does."""
    outputs, = run("""
import time
from toolkit.pull import progress
bar = progress.bar(4, 'translation.targets', 'ids', show=True)
time.sleep(0.6)
bar.update(1);      # a quarter in 0.6 s: about 2 s left
""")
    assert len(outputs) == 1
    # the saved output is the last line; the one before it was replaced in place
    assert texts(outputs)[0].startswith("translation.targets: 1/4 ids (25%)")
    assert texts(outputs)[0].endswith(" left") and "00:0" in texts(outputs)[0]


@pytest.mark.slow
def test_a_bad_value_shows_the_cells_line_and_the_message_before_anything_is_pulled():
    """A 103-line traceback through fetch.py and concurrent.futures, after the submissions were pulled."""
    refused, held = run("x = 1\ntm.fetch('targets', status=['DONE'])", "print(len(ws.tables()), tm.client.requests_sent)",
                        errors=True)
    error, = refused
    assert error["output_type"] == "error" and error["ename"] == "ValidationError"
    shown = "\n".join(error["traceback"])
    assert len(shown.splitlines()) == 3, shown
    assert "line 2: tm.fetch('targets', status=['DONE'])" in shown
    assert "ValidationError: status=['DONE']: must be one of COMPLETED" in shown
    assert "TOOLKIT_TRACEBACKS=full" in shown and "concurrent" not in shown and "fetch.py" not in shown
    assert texts(held) == ["0 0\n"]     # nothing pulled, nothing sent
