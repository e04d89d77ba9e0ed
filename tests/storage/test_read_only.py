"""A workspace opened read-only never writes and never asks a service for a load it could not keep:
refresh, pull and fetch are refused before the first request."""
from __future__ import annotations

import pytest

import toolkit as tk
from toolkit.errors import WorkspaceError


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start(seed=3) as sandbox:
        yield sandbox


@pytest.fixture
def held(box, tmp_path):
    """A file workspace holding submissions and targets (incremental: a refresh would plan first)."""
    path = tmp_path / "held.duckdb"
    with tk.Workspace(path) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        tm.pull("submissions", progress=False)
        tm.pull("targets", progress=False)
    return path


@pytest.mark.parametrize("attempt", [
    lambda ws, tm: ws.refresh(progress=False),
    lambda ws, tm: ws.refresh("translation", resources=["targets"], progress=False),
    lambda ws, tm: tm.pull("targets", progress=False),
    lambda ws, tm: tm.pull("targets", incremental=True, progress=False),
    lambda ws, tm: tm.fetch("submissions", refresh=True),
    lambda ws, tm: tm.fetch("quotes"),
], ids=["refresh", "refresh-one", "pull", "pull-incremental", "fetch-refresh", "fetch-new"])
def test_a_read_only_workspace_refuses_a_pull_before_any_request(box, held, attempt):
    with tk.Workspace(held, read_only=True) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        before = box.stats()["requests"]
        loads = len(ws.loads())
        with pytest.raises(WorkspaceError, match="read-only"):
            attempt(ws, tm)
        assert box.stats()["requests"] == before
        assert len(ws.loads()) == loads


def test_a_read_only_workspace_still_serves_what_it_holds(box, held):
    with tk.Workspace(held, read_only=True) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        before = box.stats()["requests"]
        assert len(tm.fetch("submissions", max_age=10**9)) > 0     # a fresh load is read, not pulled
        assert box.stats()["requests"] == before


@pytest.mark.parametrize("statement", [
    "DELETE FROM _loads", "DELETE FROM main._loads", "INSERT INTO _loads SELECT * FROM _loads",
    "DROP VIEW translation.targets", "CREATE TABLE translation.mine AS SELECT 1 AS x",
])
def test_a_read_only_file_refuses_every_write_statement(held, statement):
    with tk.Workspace(held) as ws:
        loads, tables = len(ws.loads()), len(ws.tables())
    with tk.Workspace(held, read_only=True) as ws, pytest.raises(Exception, match="(?i)read.only"):
        ws.sql(statement).fetchall()
    with tk.Workspace(held) as ws:
        assert (len(ws.loads()), len(ws.tables())) == (loads, tables)
