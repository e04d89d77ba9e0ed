"""The public face in the team environment (DuckDB 1.5.5, which hands a TIMESTAMPTZ to Python through
pytz): on a file and on a lake, a pull and a refresh of the resources whose confirmations are read back
(documents, quotes, word_counts), `toolkit show`, ws.freshness(), ws.tables(), a report and an export.
Without pytz in the team extra each of these ended in "Required module 'pytz' failed to import"."""
from __future__ import annotations

import pytest

import toolkit as tk
from toolkit import reports
from toolkit.cli import main


@pytest.fixture(params=["file", "lake"])
def where(request, tmp_path):
    if request.param == "file":
        return str(tmp_path / "ws.duckdb"), None
    return request.getfixturevalue("lake")


def test_pull_refresh_show_freshness_tables_report_and_export(where, tmp_path, capsys):
    address, data_path = where
    with tk.sandbox.start(scale=0.2) as box, tk.Workspace(address, data_path=data_path) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for resource in ("submissions", "documents", "quotes", "word_counts"):
            tm.fetch(resource)
        box.advance(hours=3)
        done = ws.refresh("translation", max_age=0)
        assert len(done) and not [r for r in done.itertuples() if getattr(r, "error", None)]
        assert {"translation.documents", "translation.quotes", "translation.word_counts"} <= set(ws.tables()["table"])
        assert not ws.freshness().empty
        reports.write_report(ws, tmp_path / "report.html")
        ws.export(tmp_path / "snap.duckdb")
    assert main(["show", "--workspace", address, *(["--data-path", data_path] if data_path else [])]) == 0
    shown = capsys.readouterr()
    assert "translation.word_counts" in shown.out and "pytz" not in shown.out + shown.err
    assert (tmp_path / "report.html").stat().st_size and tk.open_snapshot(tmp_path / "snap.duckdb").tables().shape[0]
