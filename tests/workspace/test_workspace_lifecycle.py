"""A workspace's life: closed, opened twice in one process, left by a process killed mid-load, attached
from another DuckDB session."""
from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import toolkit
from toolkit import Workspace, WorkspaceBusyError, WorkspaceError, WorkspaceInUseError
from toolkit.errors import WorkspaceOpenHereError
from toolkit.sandbox.asset_library import service as asset_library

URL = "http://127.0.0.1:9/PD"


def put(ws: Workspace, ids, resource: str = "targets") -> str:
    with ws.load("translation", URL, resource, {}, ("id",)) as load:
        load.write(pa.table({"id": list(ids), "name": [f"target {i}" for i in ids]}))
    return load.load_id


# -- a closed workspace says so -----------------------------------------------------------------------

CALLS = {
    "connect": lambda ws, tmp: ws.connect("asset_library", api_key="k", base_url=URL),
    "load": lambda ws, tmp: ws.load("translation", URL, "targets"),
    "fresh_load": lambda ws, tmp: ws.fresh_load("translation", URL, "targets", {}, None),
    "mark_stale": lambda ws, tmp: ws.mark_stale("translation", []),
    "read": lambda ws, tmp: ws.read("translation", "targets"),
    "frame_of": lambda ws, tmp: ws.frame_of("translation", "targets", "x", []),
    "latest": lambda ws, tmp: ws.latest("translation", "targets"),
    "categories": lambda ws, tmp: ws.categories("translation", "targets"),
    "sql": lambda ws, tmp: ws.sql("select 1"),
    "loads": lambda ws, tmp: ws.loads(),
    "history": lambda ws, tmp: ws.history("translation.targets"),
    "diff": lambda ws, tmp: ws.diff("translation.targets"),
    "resolve": lambda ws, tmp: ws.resolve("translation.targets"),
    "resolve by name": lambda ws, tmp: ws.resolve("targets"),
    "export": lambda ws, tmp: ws.export(tmp / "snap.duckdb"),
    "export parquet": lambda ws, tmp: ws.export(tmp / "snap", format="parquet"),
    "with": lambda ws, tmp: ws.__enter__(),
}


@pytest.mark.parametrize("where", ["file", "memory"])
@pytest.mark.parametrize("call", CALLS)
def test_every_method_of_a_closed_workspace_says_it_is_closed(tmp_path, call, where):
    path = tmp_path / "ws.duckdb" if where == "file" else None
    ws = Workspace(path)
    put(ws, range(3))
    put(ws, range(4))
    ws.close()
    again = f"toolkit.Workspace({str(path)!r})" if path else "toolkit.Workspace()"
    with pytest.raises(WorkspaceError, match=f"workspace {path or ':memory:'} is closed; open it again with "
                                             + again.replace("(", r"\(").replace(")", r"\)")):
        CALLS[call](ws, tmp_path)
    assert not list(tmp_path.glob("snap*")) and not list(tmp_path.glob(".snap*"))


def test_a_query_made_before_the_close_and_read_after_says_it_is_closed():
    ws = Workspace()
    put(ws, range(3))
    query = ws.sql("select * from translation.targets")
    ws.close()
    for read in (lambda: query.df(), lambda: query.fetchall(), query.fetchone, lambda: query.columns):
        with pytest.raises(WorkspaceError, match="is closed"):
            read()


def test_closing_twice_is_fine_and_the_repr_says_closed(tmp_path):
    ws = Workspace(tmp_path / "ws.duckdb")
    assert not ws.closed
    ws.close()
    ws.close()
    assert ws.closed and repr(ws) == f"<toolkit.Workspace {tmp_path / 'ws.duckdb'} (closed)>"
    with Workspace(tmp_path / "ws.duckdb") as again:  # the file itself is fine
        assert again.loads().empty


def test_a_fetch_through_a_closed_workspace_sends_nothing_and_says_it_is_closed():
    with toolkit.sandbox.start(emulators={"asset_library": asset_library.EMULATOR}) as box:
        ws = Workspace()
        client = ws.connect("asset_library", **box.credentials("asset_library"))
        ws.close()
        sent = box.stats()["requests"]
        for fetch in (lambda: client.fetch("tags"), lambda: client.pull("tags", max_age=60),
                      lambda: client.fetch("versions", asset_ids=["a"])):
            with pytest.raises(WorkspaceError, match="is closed"):
                fetch()
        assert box.stats()["requests"] == sent


# -- one file, held only while used ------------------------------------------------------------------

def test_a_read_only_and_a_read_write_workspace_of_one_process_take_turns(tmp_path):
    """DuckDB opens a file one way per process; each workspace holds it only while it reads or commits,
    so a read-only one beside a read-write one waits its turn instead of being refused."""
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as writer:
        put(writer, range(3))
        with Workspace(path, read_only=True) as reader:
            assert len(reader.read("translation", "targets")) == 3
            put(writer, range(5))
            assert len(reader.read("translation", "targets")) == 5, "the reader sees the writer's new load"
        with pytest.raises(WorkspaceError, match="is a toolkit workspace, not a snapshot"):
            toolkit.open_snapshot(path)       # refused at open, holding nothing (issue 35 item 5)
        with Workspace(path) as second:  # a second read-write one shares the file
            assert len(second.read("translation", "targets")) == 5
        assert len(writer.read("translation", "targets")) == 5, "the writer is unharmed"


def test_a_connection_of_the_analysts_own_that_keeps_the_file_is_named_after_waiting(tmp_path, capsys):
    path = tmp_path / "ws.duckdb"
    Workspace(path).close()
    kept = duckdb.connect(str(path), read_only=True)  # not toolkit's: it never lets go
    try:
        with pytest.raises(WorkspaceOpenHereError, match="open read-only in this process.*close it") as caught:
            Workspace(path, wait=0)
        assert isinstance(caught.value, WorkspaceInUseError) and caught.value.path == path
        ws = Workspace(path, read_only=True)  # the same way: DuckDB shares it
        assert ws.loads().empty
        ws.close()
        capsys.readouterr()
        started = time.monotonic()
        with pytest.raises(WorkspaceBusyError, match="still held by another workspace or connection of this "
                                                     "process after waiting 1 s.*wait=300"):
            Workspace(path, wait=1.3)
        assert 1.25 <= time.monotonic() - started < 6
        assert capsys.readouterr().err.count("is held by another workspace or connection") == 1, "said once"
    finally:
        kept.close()
    with Workspace(path, wait=0) as writer:
        assert writer.loads().empty


# -- a load whose process was killed -----------------------------------------------------------------

KILLED_PULL = textwrap.dedent("""
    import sys, toolkit
    from toolkit.storage import loads
    from toolkit.sandbox.asset_library import service as asset_library
    entered = loads.Load.__enter__

    def enter(self):
        load = entered(self)
        if self.resource == "assets":
            print("pulling", flush=True)
        return load

    loads.Load.__enter__ = enter
    box = toolkit.sandbox.start(emulators={"asset_library": asset_library.EMULATOR}, latency_ms=200)
    ws = toolkit.Workspace(sys.argv[1])
    client = ws.connect("asset_library", **box.credentials("asset_library"))
    client.fetch("tags")
    client.fetch("assets", limit=1)
    print("finished: too quick to kill", flush=True)
""")


def digest(path: Path) -> str:
    files = sorted(f for f in path.parent.glob(path.name + "*") if f.is_file())  # not DuckDB 1.5's .tmp folder
    return hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files)).hexdigest()


def test_a_pull_killed_midway_shows_as_interrupted_read_only_and_is_marked_so_read_write(tmp_path):
    path = tmp_path / "ws.duckdb"
    process = subprocess.Popen([sys.executable, "-c", KILLED_PULL, str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "pulling", process.stderr.read()
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        process.kill()
        process.communicate(timeout=30)
    before = digest(path)

    with Workspace(path, read_only=True) as ws:
        loads = ws.loads().set_index("resource")
        assert loads.loc["tags", "status"] == "complete"
        killed = loads.loc["assets"]
        assert killed["status"] == "interrupted" and killed["error"].startswith("interrupted")
        assert killed["finished"] == killed["started"]
        [row] = ws.history("asset_library.assets").to_dict("records")
        assert row["status"] == "interrupted" and row["error"].startswith("interrupted")
        assert ws.latest("asset_library", "assets") is None
    assert digest(path) == before, "a read-only open writes nothing"
    with duckdb.connect(str(path), read_only=True) as raw:
        assert raw.sql("select status from _loads where resource = 'assets'").fetchall() == [("running",)]

    with Workspace(path) as ws:  # a read-write open records it
        assert ws.history("asset_library.assets")["status"].tolist() == ["interrupted"]
    with duckdb.connect(str(path), read_only=True) as raw:
        assert raw.sql("select status from _loads where resource = 'assets'").fetchall() == [("interrupted",)]


# -- attached from another DuckDB session ----------------------------------------------------------------

def attached(path: Path, name: str) -> duckdb.DuckDBPyConnection:
    """A DuckDB session of its own, with a `_loads` and a `translation.targets__loads` that are not the
    file's: a view that looked for them in the session would read these."""
    con = duckdb.connect()
    con.execute("CREATE TABLE _loads AS SELECT 'not-this' AS load_id, 'translation' AS service, "
                "'targets' AS resource, 'complete' AS status, now() AS finished, now() AS started")
    con.execute("CREATE SCHEMA translation")
    con.execute("CREATE TABLE translation.targets__loads AS SELECT 99 AS id, 'not-this' AS _load_id")
    con.execute(f"ATTACH '{path}' AS {name} (READ_ONLY)")
    return con


@pytest.mark.parametrize("name", ["w", "reporting_2026"])
def test_the_views_work_when_the_file_is_attached_under_any_name(tmp_path, name):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as ws:
        put(ws, range(3))
        put(ws, range(10, 15))
        put(ws, range(2), "phases")
        snapshot = ws.export(tmp_path / "history.duckdb", history=True)
    with attached(path, name) as con:
        assert con.sql(f"select id from {name}.translation.targets order by id").fetchall() == \
            [(i,) for i in range(10, 15)]
        assert con.sql(f"select count(*) from {name}.translation.phases").fetchall() == [(2,)]
    with attached(snapshot, name) as con:
        assert con.sql(f"select count(*) from {name}.translation.targets").fetchall() == [(5,)]


OLD_VIEW = ("CREATE OR REPLACE VIEW translation.targets AS SELECT * EXCLUDE (_load_id) FROM "
            "translation.\"targets__loads\" WHERE _load_id = (SELECT load_id FROM _loads WHERE "
            "service = 'translation' AND resource = 'targets' AND status IN ('complete', 'stale') "
            "ORDER BY finished DESC, started DESC LIMIT 1)")  # as toolkit wrote views before


def test_a_file_written_before_keeps_working_and_is_mended_by_a_read_write_open(tmp_path):
    path = tmp_path / "old.duckdb"
    with Workspace(path) as ws:
        put(ws, range(3))
        ws.sql(OLD_VIEW)
    with attached(path, "w") as con:  # what attaching it did: the session's own `_loads` was read
        assert con.sql("select count(*) from w.translation.targets").fetchall() == [(0,)]
    with Workspace(path, read_only=True) as ws:  # read-only, it cannot be mended, and needs not be
        assert ws.sql("select count(*) from translation.targets").fetchall() == [(3,)]
        assert len(ws.read("translation", "targets")) == 3
    with Workspace(path):
        pass
    with attached(path, "w") as con:
        assert con.sql("select count(*) from w.translation.targets").fetchall() == [(3,)]
