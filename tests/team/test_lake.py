"""The team workspace on DuckLake with a real PostgreSQL catalog: the file workspace's face, many writers at
once, a process killed mid-commit, object storage, and a password that never shows."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import toolkit as tk
from toolkit.errors import WorkspaceError

TRANSLATION = ("submissions", "targets", "phases")
URL = "http://127.0.0.1:9/PD"


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame as text, columns and rows in one order: two backends' rows compared by content."""
    frame = frame[sorted(c for c in frame.columns if not c.startswith("_"))].astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def pull(ws: tk.Workspace, box) -> tk.Workspace:
    conn = ws.connect("translation", **box.credentials("translation"))
    for name in TRANSLATION:
        conn.pull(name, refresh=True, progress=False)
    return ws


@pytest.fixture
def box():
    with tk.sandbox.start(seed=7) as sandbox:
        yield sandbox


def test_a_lake_answers_as_the_file_does_over_the_same_loads(lake, box, tmp_path):
    dsn, data = lake
    with tk.Workspace(dsn, data_path=data) as team, tk.Workspace(tmp_path / "file.duckdb") as file:
        pull(team, box)
        pull(file, box)
        for _ in range(2):  # both at the same clocks
            box.advance(hours=3)
            for ws in (team, file):
                ws.refresh("translation", progress=False, say=lambda line: None)
        for name in TRANSLATION:
            resource = f"translation.{name}"
            assert comparable(team.sql(f"SELECT * FROM {resource}").df()).equals(
                comparable(file.sql(f"SELECT * FROM {resource}").df())), name
            first_team, first_file = team.history(resource).load_id.iloc[0], file.history(resource).load_id.iloc[0]
            assert comparable(team.as_of(resource, first_team)).equals(comparable(file.as_of(resource, first_file)))
            d_team, d_file = team.diff(resource, first_team), file.diff(resource, first_file)
            assert (len(d_team.added), len(d_team.removed), len(d_team.changed)) == \
                   (len(d_file.added), len(d_file.removed), len(d_file.changed))
        assert team.tables()[["table", "rows", "loads"]].equals(file.tables()[["table", "rows", "loads"]])
        assert set(team.loads().status) == {"complete"} and len(team.loads()) == 9
        snapshot = team.export(tmp_path / "team-snapshot.duckdb")
    with tk.open_snapshot(snapshot) as snap:
        assert len(snap.read("translation", "targets")) == len(file_rows := snap.read("translation", "targets"))
        assert len(file_rows) > 0


def test_a_write_through_a_lake_is_audited_and_marks_its_resource_stale(lake, box):
    dsn, data = lake
    with tk.Workspace(dsn, data_path=data) as ws:
        conn = ws.connect("translation", **box.credentials("translation"))
        conn.pull("submissions", progress=False)
        submission = ws.sql("SELECT submission_id FROM translation.submissions LIMIT 1").fetchone()[0]
        conn.call("translation.save_submission", submission_id=submission)
        assert ws.loads().status.tolist() == ["stale"]
        assert ws.sql("SELECT action, ok FROM _audit").fetchall() == [("translation.save_submission", True)]


def test_categories_and_a_widened_column_keep_every_value_in_a_lake(lake):
    dsn, data = lake
    with tk.Workspace(dsn, data_path=data) as ws:
        for ids, status in (([1, 2], ["READY", "DONE"]), ([3], ["LATE"])):
            with ws.load("translation", URL, "targets", {}, ("id",), categoricals=["status"]) as load:
                load.write(pa.table({"id": ids, "status": pa.array(status).dictionary_encode()}))
        assert ws.categories("translation", "targets") == {"status": ["READY", "DONE", "LATE"]}
        with ws.load("translation", URL, "targets", {}, ("id",)) as load:
            load.write(pa.table({"id": ["t-4"], "status": ["DONE"]}))   # ids turn into text
        assert ws.sql("SELECT id FROM translation.targets").fetchall() == [("t-4",)]
        first = ws.history("translation.targets").load_id.iloc[0]
        assert sorted(ws.as_of("translation.targets", first).id.tolist()) == ["1", "2"]


WRITER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import toolkit as tk
    dsn, data, creds, go = sys.argv[1:5]
    ws = tk.Workspace(dsn, data_path=data)
    conn = ws.connect("translation", **json.loads(Path(creds).read_text()))
    while not Path(go).exists():
        time.sleep(0.01)
    ids = [conn.pull(name, refresh=True, progress=False).load_id for name in ("submissions", "targets", "phases")]
    ws.close()
    print(json.dumps(ids))
""")


def test_writers_pulling_the_same_resources_at_once_lose_no_load_and_agree_with_one(lake, box, tmp_path):
    dsn, data = lake
    creds, go = tmp_path / "creds.json", tmp_path / "go"
    creds.write_text(json.dumps(box.credentials("translation")))
    env = dict(os.environ, TOOLKIT_TEST_LAKE=dsn)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, dsn, data, str(creds), str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    time.sleep(2)  # each opens the lake and connects
    go.touch()
    made = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        made += json.loads(out.strip().splitlines()[-1])
    with tk.Workspace(dsn, data_path=data) as ws, tk.Workspace(tmp_path / "one.duckdb") as one:
        loads = ws.loads()
        assert sorted(loads.load_id) == sorted(made) and set(loads.status) == {"complete"}
        for name in TRANSLATION:
            mine = loads[loads.resource == name].sort_values("seq")
            assert mine.seq.tolist() == [1, 2, 3], f"{name}: commits of one resource took turns"
        conn = one.connect("translation", **box.credentials("translation"))
        for name in TRANSLATION:
            conn.pull(name, refresh=True, progress=False)
            assert comparable(ws.sql(f"SELECT * FROM translation.{name}").df()).equals(
                comparable(one.sql(f"SELECT * FROM translation.{name}").df())), name


KILLED = textwrap.dedent("""
    import sys, time
    import pyarrow as pa
    import toolkit as tk
    from toolkit.storage.loads import Load
    finish = Load._finish
    def slow(self, cursor, began):
        finish(self, cursor, began)
        print("committing", flush=True)
        time.sleep(60)            # killed here: inside the transaction, before COMMIT
    Load._finish = slow
    ws = tk.Workspace(sys.argv[1], data_path=sys.argv[2])
    with ws.load("translation", "http://127.0.0.1:9/PD", "targets", {}, ("id",)) as load:
        load.write(pa.table({"id": list(range(1000)), "name": ["x"] * 1000}))
""")


def test_a_process_killed_mid_commit_leaves_the_lake_readable_and_the_next_load_completes(lake):
    dsn, data = lake
    with tk.Workspace(dsn, data_path=data) as ws, \
            ws.load("translation", URL, "targets", {}, ("id",)) as load:
        load.write(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
    proc = subprocess.Popen([sys.executable, "-c", KILLED, dsn, data], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "committing", proc.stderr.read()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with tk.Workspace(dsn, data_path=data) as ws:
        loads = ws.loads().sort_values("started")
        assert loads.status.tolist() == ["complete", "interrupted"], "the killed load is interrupted, nothing of it kept"
        assert "interrupted" in loads.error.iloc[-1]
        assert ws.sql("SELECT count(*) FROM translation.targets").fetchone()[0] == 3
        with ws.load("translation", URL, "targets", {}, ("id",)) as load:
            load.write(pa.table({"id": [1, 2, 3, 4], "name": ["a", "b", "c", "d"]}))
        assert ws.sql("SELECT count(*) FROM translation.targets").fetchone()[0] == 4


def test_the_catalogs_password_shows_nowhere(lake, box, tmp_path, capsys):
    dsn, data = lake
    password = dsn.rsplit("password=", 1)[1]
    with tk.Workspace(dsn, data_path=data) as ws:
        conn = ws.connect("translation", **box.credentials("translation"))
        conn.pull("submissions", progress=False)
        shown = [repr(ws), str(ws), ws.where, ws.loads().to_csv(), ws.tables().to_csv(), repr(ws.lake)]
        assert "password=***" in repr(ws)
        with pytest.raises(WorkspaceError) as closed:
            ws.close()
            ws.loads()
        shown.append(str(closed.value))
    wrong = dsn.replace("host=127.0.0.1", "host=127.0.0.1 connect_timeout=2").replace("port=", "port=1")
    with pytest.raises(WorkspaceError, match="does not open") as refused:
        tk.Workspace(wrong, data_path=data)
    shown.append(str(refused.value))
    out = capsys.readouterr()
    shown += [out.out, out.err]
    assert not [text for text in shown if password in text]


def test_a_bad_address_or_data_path_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="data_path is for a team workspace"):
        tk.Workspace(tmp_path / "file.duckdb", data_path=tmp_path)
    with pytest.raises(WorkspaceError, match="does not open"):
        tk.Workspace("ducklake:postgres:dbname=nowhere host=127.0.0.1 port=9 user=x password=p connect_timeout=2",
                     data_path=str(tmp_path))


def test_a_lake_keeps_its_data_in_object_storage(postgres, tmp_path, monkeypatch):
    moto = pytest.importorskip("moto")
    from toolkit.storage.extensions import wheel_file
    if wheel_file("httpfs") is None:
        pytest.skip("no httpfs wheel for this DuckDB")
    import socket

    import boto3
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret",
                            "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint}.items():
            monkeypatch.setenv(name, value)
        s3 = boto3.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket="team")
        postgres.create_database("lake_s3")
        with tk.Workspace(postgres.dsn("lake_s3"), data_path="s3://team/lake/") as ws:
            with ws.load("translation", URL, "targets", {}, ("id",)) as load:
                load.write(pa.table({"id": list(range(5000)), "name": [f"target {i}" for i in range(5000)]}))
            assert ws.sql("SELECT count(*) FROM translation.targets").fetchone()[0] == 5000
        stored = [item["Key"] for item in s3.list_objects_v2(Bucket="team").get("Contents", [])]
        assert any(key.endswith(".parquet") for key in stored), stored
        assert moto is not None
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_team_extra_installs_its_extensions_from_the_wheels_into_toolkits_own_folder(tmp_path, monkeypatch):
    import duckdb

    from toolkit.storage import extensions
    monkeypatch.setenv("TOOLKIT_DUCKDB_EXTENSIONS", str(tmp_path / "ext"))
    con = duckdb.connect(config={"extension_directory": str(extensions.extension_directory())})
    extensions.load(con, "ducklake")
    installed = sorted(p.name for p in Path(tmp_path / "ext").rglob("*.duckdb_extension"))
    assert installed == ["ducklake.duckdb_extension"]
    assert con.sql("SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'ducklake'").fetchone()[0]


WRITE = textwrap.dedent("""
    import sys, duckdb, pyarrow as pa, toolkit as tk
    with tk.Workspace(sys.argv[1]) as ws:
        with ws.load("translation", "http://127.0.0.1:9/PD", "targets", {}, ("id",)) as load:
            load.write(pa.table({"id": [1, 2, 3]}))
        ws.export(sys.argv[2])
    print(duckdb.__version__)
""")


@pytest.mark.parametrize("direction", ["other writes, this reads", "this writes, other reads"])
def test_a_workspace_and_its_snapshot_open_in_either_duckdb(tmp_path, direction):
    """The team extra pins DuckDB 1.5.5 while the rest runs on 2.x: the files each writes open in the other."""
    import duckdb
    other = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"
    if not other.exists():
        pytest.skip("no .venv beside .venv-team to write or read with another DuckDB")
    version = subprocess.run([str(other), "-c", "import duckdb; print(duckdb.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    if version == duckdb.__version__:
        pytest.skip(f".venv has the same DuckDB ({version})")
    path, snapshot = tmp_path / "ws.duckdb", tmp_path / "snapshot.duckdb"
    writer, reader = ([str(other)], [sys.executable]) if direction.startswith("other") else \
        ([sys.executable], [str(other)])
    subprocess.run([*writer, "-c", WRITE, str(path), str(snapshot)], check=True, capture_output=True)
    read = ("import sys, toolkit as tk\n"
            "with tk.Workspace(sys.argv[1]) as ws, tk.open_snapshot(sys.argv[2]) as snap:\n"
            "    print(len(ws.read('translation', 'targets')), len(snap.read('translation', 'targets')))")
    done = subprocess.run([*reader, "-c", read, str(path), str(snapshot)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.split() == ["3", "3"]


def test_the_command_pulls_and_refreshes_a_lake_named_in_the_environment_and_never_prints_its_password(
        lake, box, monkeypatch, capsys, tmp_path):
    from toolkit.cli import main
    dsn, data = lake
    monkeypatch.setenv("TOOLKIT_WORKSPACE", dsn)
    monkeypatch.setenv("TOOLKIT_DATA_PATH", data)
    for field, value in box.credentials("translation").items():
        monkeypatch.setenv(f"TOOLKIT_TRANSLATION_{field.upper()}", str(value))
    assert main(["pull", "translation", "submissions", "targets"]) == 0
    box.advance(hours=2)
    assert main(["refresh"]) == 0
    assert main(["export", "--out", str(tmp_path / "team.duckdb")]) == 0
    out = capsys.readouterr()
    assert "password=***" in out.out and dsn.rsplit("password=", 1)[1] not in out.out + out.err
    with tk.Workspace(dsn, data_path=data) as ws:
        assert ws.loads().groupby("resource").size().to_dict() == {"submissions": 2, "targets": 2}


def test_a_read_only_lake_shows_categories_drift_and_names_what_it_lacks(lake):
    dsn, data = lake
    with tk.Workspace(dsn, data_path=data) as ws, \
            ws.load("translation", URL, "targets", {}, ("id",), categoricals=["status"]) as load:
        load.write(pa.table({"id": [1], "status": pa.array(["READY"]).dictionary_encode()}))
        load.drift = [{"field": "x", "kind": "undeclared", "count": 1, "example": "1"}]
    with tk.Workspace(dsn, data_path=data, read_only=True) as reader:
        assert str(reader.read("translation", "targets")["status"].dtype) == "category"
        assert reader.drift()["kind"].tolist() == ["undeclared"]
        with pytest.raises(tk.WorkspaceError, match=r"translation.phases is not fetched yet: ws.connect\('translation', "
                                                    r"...\).fetch\('phases'\) fetches it \(this workspace holds "
                                                    r"translation.targets\)"):
            reader.sql("SELECT * FROM translation.phases")
