"""Trust at the lake's edges: its PostgreSQL password never shows, even when PostgreSQL goes away under a
refresh; a workspace opened read-only writes nothing, whatever the role may do."""
from __future__ import annotations

import logging
import warnings

import pytest
from local_postgres import LocalPostgres, binaries

import toolkit as tk


@pytest.fixture
def own_postgres():
    """A PostgreSQL of this test's own, since the test stops it."""
    server = LocalPostgres(binaries())
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_a_lost_catalog_never_shows_its_password(own_postgres, tmp_path, capsys, caplog):
    own_postgres.create_database("lake")
    dsn, password = own_postgres.dsn("lake"), own_postgres.password
    shown: list[str] = []
    with tk.sandbox.start(seed=7) as box, warnings.catch_warnings(record=True) as warned, \
            caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        ws = tk.Workspace(dsn, data_path=str(tmp_path))
        tm = ws.connect("translation", **box.credentials("translation"))
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull("audiences", progress=False)
        tm.pull("submissions", progress=False)
        own_postgres.halt()
        try:
            done = ws.refresh(progress=False)
            shown += [done.to_csv(), *map(str, done["error"])]
        except Exception as error:  # whatever ends it, its words are the analyst's
            shown += [repr(error), str(error), *map(str, error.args)]
        for attempt in (lambda: ws.loads(), lambda: ws.tables(), lambda: tm.pull("targets", progress=False)):
            try:
                shown.append(str(attempt()))
            except Exception as error:
                shown += [repr(error), str(error)]
        own_postgres.resume()
        with tk.Workspace(dsn, data_path=str(tmp_path)) as again:
            shown.append(again.loads().to_csv())
        try:
            ws.close()
        except Exception as error:
            shown.append(str(error))
    out = capsys.readouterr()
    shown += [out.out, out.err, *(str(w.message) for w in warned), caplog.text]
    assert sum(len(text) for text in shown) > 200      # something was said of the lost catalog
    assert [text[:200] for text in shown if password in text] == []


@pytest.mark.parametrize("statement", [
    "DELETE FROM main._load_events", "DELETE FROM _load_events",
    "INSERT INTO _load_events SELECT * FROM _load_events", "DROP VIEW translation.submissions",
    "CREATE TABLE translation.mine AS SELECT 1 AS x", "UPDATE _load_events SET status = 'x'",
])
def test_a_read_only_lake_refuses_every_write_even_for_a_role_that_may_write(lake, statement):
    dsn, data = lake
    with tk.sandbox.start(seed=7) as box:
        with tk.Workspace(dsn, data_path=data) as ws:
            ws.connect("translation", **box.credentials("translation")).pull("submissions", progress=False)
            loads, rows = len(ws.loads()), ws.sql("SELECT count(*) FROM translation.submissions").fetchone()[0]
        with tk.Workspace(dsn, data_path=data, read_only=True) as ws:
            with pytest.raises(Exception, match="(?i)read.only"):
                ws.sql(statement).fetchall()
            tm = ws.connect("translation", **box.credentials("translation"))
            sent = box.stats()["requests"]
            with pytest.raises(tk.WorkspaceError, match="read-only"):
                ws.refresh(progress=False)
            with pytest.raises(tk.WorkspaceError, match="read-only"):
                tm.pull("targets", progress=False)
            assert box.stats()["requests"] == sent
        with tk.Workspace(dsn, data_path=data) as ws:
            assert len(ws.loads()) == loads
            assert ws.sql("SELECT count(*) FROM translation.submissions").fetchone()[0] == rows


@pytest.mark.parametrize("step", ["sources read", "plan made", "load started", "before the commit"])
def test_a_parent_committed_by_another_writer_during_a_childs_load_is_not_missed_on_a_lake(lake, monkeypatch, step):
    from test_concurrent_refresh import interleave
    from test_incremental import view
    dsn, data = lake
    with tk.sandbox.start(seed=5) as box, tk.Workspace(dsn, data_path=data) as ws, \
            tk.Workspace(dsn, data_path=data) as other:
        tm, theirs = (w.connect("translation", **box.credentials("translation")) for w in (ws, other))
        for name in ("submissions", "targets", "phases"):
            tm.pull(name, progress=False)
        box.advance(hours=6)
        ran = interleave(monkeypatch, step, "phases", lambda: [
            theirs.pull(name, incremental=True, progress=False) for name in ("submissions", "targets")])
        tm.pull("phases", incremental=True, progress=False)
        assert ran == [step]
        monkeypatch.undo()
        tm.pull("phases", incremental=True, progress=False)
        fresh = tk.Workspace()
        fresh.connect("translation", **box.credentials("translation")).pull("phases", progress=False)
        assert view(ws, "translation", "phases").equals(view(fresh, "translation", "phases"))
        fresh.close()
