"""Trust at the lake's edges: its PostgreSQL password never shows, even when PostgreSQL goes away under a
refresh; a workspace opened read-only writes nothing, whatever the role may do."""
from __future__ import annotations

import logging
import warnings

import pytest

import toolkit as tk


def test_a_lost_catalog_never_shows_its_password(own_postgres, tmp_path, capsys, caplog, monkeypatch):
    monkeypatch.setenv("TOOLKIT_LAKE_RECONNECT", "1")
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
    from interleaving import interleave, view
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


def test_a_catalog_lost_mid_refresh_fails_only_the_resources_it_reached(own_postgres, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_LAKE_RECONNECT", "2")
    own_postgres.create_database("lake")
    dsn = own_postgres.dsn("lake")
    names = ("submissions", "targets", "phases", "quotes", "documents", "word_counts")
    with tk.sandbox.start(seed=7) as box, tk.Workspace(dsn, data_path=str(tmp_path)) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in names:
            tm.pull(name, progress=False)
        box.advance(hours=3)
        said: list[str] = []

        def say(line: str) -> None:   # PostgreSQL goes away after the first resource, back after the third
            said.append(line)
            if len(said) == 1:
                own_postgres.halt()
            if len(said) == 3:
                own_postgres.resume()
        done = ws.refresh("translation", say=say, progress=False)
        assert len(done) == len(names) and len(said) == len(names)
        lost = done.error.fillna("").str.contains("LakeUnreachableError")
        assert 1 <= lost.sum() <= 2 and lost.iloc[1], "the resources said while it was down failed, no more"
        assert not lost.iloc[-1] and done.kind.iloc[-1] != "failed", "once it is back the others go on"
        assert done[~lost].error.isna().all()
        assert not any(own_postgres.password in line for line in said)
        again = ws.refresh("translation", progress=False)          # the next run recovers everything
        assert set(again.kind) <= {"incremental", "full"}
        assert not ws.loads()["status"].eq("running").any()


def test_the_command_exits_75_when_the_lake_cannot_be_reached_at_start(own_postgres, tmp_path, capsys):
    from toolkit.cli import main
    own_postgres.create_database("lake")
    dsn = own_postgres.dsn("lake")
    with tk.Workspace(dsn, data_path=str(tmp_path)):
        pass
    own_postgres.halt()
    code = main(["refresh", "--workspace", dsn, "--data-path", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 75, err
    assert own_postgres.password not in err and len(err.strip().splitlines()) <= 3


def test_orphan_files_of_killed_commits_are_removed_and_nothing_else(lake, capsys):
    import glob
    import os
    import shutil
    import time

    from toolkit.cli import main
    dsn, data = lake
    with tk.sandbox.start(seed=7) as box, tk.Workspace(dsn, data_path=data) as ws:
        ws.connect("translation", **box.credentials("translation")).pull("submissions", progress=False)
        rows = ws.sql("SELECT count(*) FROM translation.submissions").fetchone()[0]
    kept = sorted(glob.glob(f"{data}/**/*.parquet", recursive=True))
    old = os.path.join(os.path.dirname(kept[0]), "ducklake-killed-commit.parquet")
    young = os.path.join(os.path.dirname(kept[0]), "ducklake-commit-in-flight.parquet")
    for orphan in (old, young):
        shutil.copy(kept[0], orphan)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert main(["lake", "clean", "--workspace", dsn, "--data-path", data, "--dry-run"]) == 0
    assert os.path.exists(old) and old in capsys.readouterr().out
    assert main(["lake", "clean", "--workspace", dsn, "--data-path", data]) == 0
    out = capsys.readouterr().out
    assert "1 orphan file(s) removed" in out and not os.path.exists(old)
    assert os.path.exists(young), "a file younger than --older-than may be a commit in flight"
    assert all(os.path.exists(f) for f in kept)
    with tk.Workspace(dsn, data_path=data, read_only=True) as ws:
        assert ws.sql("SELECT count(*) FROM translation.submissions").fetchone()[0] == rows


def test_a_commit_whose_answer_was_lost_is_said_committed(lake, monkeypatch):
    from toolkit.storage.loads import Load
    dsn, data = lake
    real = Load._commit_once

    def answer_lost(self):
        real(self)
        raise tk.LakeUnreachableError("the answer to COMMIT was lost")
    with tk.sandbox.start(seed=7) as box, tk.Workspace(dsn, data_path=data) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        monkeypatch.setattr(Load, "_commit_once", answer_lost)
        done = tm.pull("submissions", progress=False)
        monkeypatch.undo()
        assert done.rows > 0
        loads = ws.loads()
        assert list(loads.status) == ["complete"]
        assert ws.sql("SELECT count(*) FROM translation.submissions").fetchone()[0] == done.rows


def test_a_process_first_commit_removes_what_killed_commits_left(lake):
    import glob
    import os
    import shutil
    import time
    dsn, data = lake
    with tk.sandbox.start(seed=7) as box:
        with tk.Workspace(dsn, data_path=data) as ws:
            ws.connect("translation", **box.credentials("translation")).pull("submissions", progress=False)
        kept = sorted(glob.glob(f"{data}/**/*.parquet", recursive=True))
        old = os.path.join(os.path.dirname(kept[0]), "ducklake-killed-commit.parquet")
        shutil.copy(kept[0], old)
        os.utime(old, (time.time() - 3600, time.time() - 3600))
        with tk.Workspace(dsn, data_path=data) as ws:            # the next process, the next commit
            ws.connect("translation", **box.credentials("translation")).pull("targets", progress=False)
        assert not os.path.exists(old) and all(os.path.exists(f) for f in kept)
