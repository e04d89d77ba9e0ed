"""The workspace: atomic loads, schema evolution, types, cache reuse, history, diffs, snapshots, locking."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta

import duckdb
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import toolkit
from toolkit import Workspace, WorkspaceBusyError, WorkspaceError, WorkspaceInUseError, open_snapshot
from toolkit.http.session import Secret

URL = "http://127.0.0.1:9/PD"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def targets(ids, status="READY", words=None) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "status": [status] * len(ids),
        "words": pa.array(words if words is not None else [i * 10 for i in ids], pa.int64()),
        "updated": pa.array([T0 + timedelta(hours=i) for i in ids], pa.timestamp("ms", tz="UTC")),
    })


def put(ws: Workspace, *batches: pa.Table, resource="targets", params=None, service="translation") -> str:
    with ws.load(service, URL, resource, params or {}, ("id",)) as load:
        for batch in batches:
            load.write(batch)
        load.requests += len(batches)
    return load.load_id


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


def count(ws: Workspace, table: str) -> int:
    return ws.sql(f"select count(*) from {table}").fetchall()[0][0]


# -- loads are atomic -------------------------------------------------------------------------------

def test_a_load_commits_its_rows_and_records_itself(ws):
    load_id = put(ws, targets(range(3)), targets(range(3, 5)), params={"status": ["READY"], "b": 1, "a": 2})
    assert count(ws, "translation.targets") == 5
    assert count(ws, 'translation."targets__loads"') == 5
    [load] = ws.loads().to_dict("records")
    assert load["load_id"] == load_id and load["status"] == "complete"
    assert (load["service"], load["base_url"], load["resource"]) == ("translation", URL, "targets")
    assert (load["rows"], load["requests"]) == (5, 2)
    assert load["params"] == '{"a":2,"b":1,"status":["READY"]}'  # stable key order
    assert str(load["started"].tz) == "UTC" and load["finished"] >= load["started"]
    assert list(load["key"]) == ["id"] and list(load["failed_ids"]) == []
    types = dict(ws.sql("select column_name, data_type from duckdb_columns() where table_name = '_loads'").fetchall())
    assert types["started"] == types["finished"] == "TIMESTAMP WITH TIME ZONE"


@pytest.mark.parametrize("interruption", [RuntimeError("page 3 failed"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_load_leaves_no_rows_and_says_which(ws, interruption):
    first = put(ws, targets(range(3)))
    with pytest.raises(type(interruption)), ws.load("translation", URL, "targets", {}, ("id",)) as load:
        load.write(targets(range(10, 20)))
        assert count(ws, 'translation."targets__loads"') == 3  # not visible before the commit either
        load.write(targets(range(20, 30)))
        raise interruption
    assert count(ws, 'translation."targets__loads"') == 3
    assert ws.read("translation", "targets")["id"].tolist() == [0, 1, 2]
    assert ws.latest("translation", "targets") == first
    failed = ws.loads().iloc[-1]
    assert failed["rows"] == 0
    if isinstance(interruption, KeyboardInterrupt):     # issue 45: not failed, with "Interrupted: interrupted: ..."
        assert failed["status"] == "interrupted" and failed["error"] == "interrupted"
    else:
        assert failed["status"] == "failed" and failed["error"] == "RuntimeError: page 3 failed (after 20 rows in 2 " \
                                                                   "batches, rolled back)"
    assert ws.fresh_load("translation", URL, "targets", {}, None) == first


def test_a_failed_first_load_leaves_no_table_or_view(ws):
    with pytest.raises(ValueError), ws.load("translation", URL, "targets", {}, ("id",)) as load:
        load.write(targets(range(5)))
        raise ValueError("boom")
    names = ws.sql("select table_name from duckdb_tables() union all "
                   "select view_name from duckdb_views() where not internal").fetchall()
    assert ("targets__loads",) not in names and ("targets",) not in names
    with pytest.raises(WorkspaceError, match="no complete load"):
        ws.read("translation", "targets")


def test_a_load_with_no_batches_completes_empty(ws):
    put(ws)
    assert ws.loads()["status"].tolist() == ["complete"]
    assert ws.read("translation", "targets").empty


def test_an_empty_batch_still_creates_the_typed_table(ws):
    put(ws, targets([]))
    frame = ws.read("translation", "targets")
    assert frame.empty and list(frame.columns) == ["id", "status", "words", "updated"]
    assert str(frame["id"].dtype) == "Int64" and str(frame["updated"].dtype).endswith("UTC]")


# -- schema evolution and types ---------------------------------------------------------------------

def test_batches_and_loads_with_differing_columns_union_by_name(ws):
    put(ws,
        pa.table({"id": [1, 2], "a": ["x", "y"], "n": pa.nulls(2)}),
        pa.table({"id": [3], "b": [True], "n": [7]}),          # new column b; a missing; n typed at last
        pa.table({"id": [4], "a": ["z"], "n": [2.5]}))        # n widens from BIGINT to DOUBLE
    frame = ws.read("translation", "targets")
    assert frame["id"].tolist() == [1, 2, 3, 4]
    assert frame["a"].tolist()[:2] == ["x", "y"] and pd.isna(frame["a"][2]) and frame["a"][3] == "z"
    assert pd.isna(frame["b"][0]) and bool(frame["b"][2]) is True
    assert frame["n"].tolist()[2:] == [7.0, 2.5] and str(frame["n"].dtype) == "float64"
    put(ws, pa.table({"id": [9], "c": ["new"], "a": [5]}))   # a later load: new column, int into text
    latest = ws.read("translation", "targets")
    assert list(latest.columns) == ["id", "a", "n", "b", "c"] and latest["a"].tolist() == ["5"]
    assert pd.isna(latest["n"][0]) and latest["c"].tolist() == ["new"]
    assert ws.sql("select count(*) from translation.targets").fetchall()[0][0] == 1  # the view follows


def test_lists_and_structs_round_trip(ws):
    tags = [["a", "b"], [], None]
    owner = [{"id": 1, "name": "Ann", "roles": ["pm"]}, None, {"id": 3, "name": None, "roles": []}]
    put(ws, pa.table({"id": [1, 2, 3], "tags": tags, "owner": owner}))
    frame = ws.read("translation", "targets")
    # a list inside a struct: Python objects, as DuckDB's .df() gives them (toolkit.storage.readback)
    assert isinstance(frame["tags"].dtype, pd.ArrowDtype) and frame["owner"].dtype == object
    assert frame["owner"].to_numpy()[0]["roles"] == ["pm"]
    assert frame["tags"][0] == ["a", "b"] and frame["tags"][1] == [] and pd.isna(frame["tags"][2])
    assert frame["owner"][0] == owner[0] and pd.isna(frame["owner"][1]) and frame["owner"][2] == owner[2]
    types = dict(ws.sql("select column_name, data_type from duckdb_columns() where table_name = 'targets__loads'")
                 .fetchall())
    assert types["tags"] == "VARCHAR[]" and types["owner"].startswith("STRUCT(")


def test_tz_aware_timestamps_come_back_as_utc(ws):
    berlin = pd.Series(pd.to_datetime(["2026-03-01 13:00", "2026-07-01 14:30"]).tz_localize("Europe/Berlin"))
    frame = pd.DataFrame({"id": [1, 2], "at": berlin, "at_ns_utc": berlin.dt.tz_convert("UTC")})
    put(ws, frame)
    back = ws.read("translation", "targets")
    for column in ("at", "at_ns_utc"):
        assert str(back[column].dt.tz) == "UTC"
        assert back[column].tolist() == berlin.dt.tz_convert("UTC").tolist()


def test_read_gives_the_analyst_dtypes(ws):
    frame = pd.DataFrame({
        "id": pd.array([1, None, 3], "Int64"), "name": ["a", "b", None], "done": [True, False, True],
        "share": [0.5, 1.0, None], "status": pd.Categorical(["READY", "NEW", "READY"],
                                                             categories=["NEW", "READY", "DONE"]),
        "at": pd.to_datetime(["2026-01-01", "2026-01-02", None]).tz_localize("UTC"),
    })
    put(ws, frame)
    back = ws.read("translation", "targets")
    dtypes = {name: str(dtype) for name, dtype in back.dtypes.items()}
    assert dtypes["id"] == "Int64" and dtypes["done"] == "boolean" and dtypes["share"] == "float64"
    assert dtypes["name"] == "string" and dtypes["at"].startswith("datetime64") and dtypes["at"].endswith("UTC]")
    assert isinstance(back["status"].dtype, pd.CategoricalDtype)
    assert list(back["status"].cat.categories) == ["NEW", "READY", "DONE"]
    assert back["status"].tolist() == ["READY", "NEW", "READY"] and pd.isna(back["id"][1])
    assert "_load_id" not in back.columns
    # a later load with a status the first did not know keeps it: nothing is lost to the categories
    put(ws, pd.DataFrame({"id": [4], "status": ["ARCHIVED"]}))
    assert ws.read("translation", "targets")["status"].tolist() == ["ARCHIVED"]
    stored = ws.sql("select data_type from duckdb_columns() where column_name = 'status'").fetchall()[0][0]
    assert stored == "VARCHAR"  # not an ENUM, which would refuse the new value


def test_read_of_one_load_by_id(ws):
    first = put(ws, targets(range(2)))
    put(ws, targets(range(5)))
    assert len(ws.read("translation", "targets")) == 5
    assert len(ws.read("translation", "targets", first)) == 2


# -- cache reuse ------------------------------------------------------------------------------------

def test_fresh_load_by_max_age_params_and_base_url(ws):
    load_id = put(ws, targets(range(3)), params={"status": ["READY", "NEW"], "lang": "de"})
    same = {"lang": "de", "status": ["READY", "NEW"]}
    assert ws.fresh_load("translation", URL, "targets", same, 60) == load_id
    assert ws.fresh_load("translation", URL, "targets", same, timedelta(minutes=1)) == load_id
    assert ws.fresh_load("translation", URL, "targets", same, None) == load_id  # None: of any age
    assert ws.fresh_load("translation", URL, "targets", {**same, "lang": "fr"}, 60) is None
    assert ws.fresh_load("translation", URL, "targets", {"lang": "de"}, 60) is None
    assert ws.fresh_load("translation", URL + "/other", "targets", same, 60) is None
    assert ws.fresh_load("translation", URL, "phases", same, 60) is None
    ws.sql("update _loads set finished = finished - interval 2 hour")
    assert ws.fresh_load("translation", URL, "targets", same, 3600) is None
    assert ws.fresh_load("translation", URL, "targets", same, timedelta(hours=3)) == load_id


def test_mark_stale_stops_reuse_but_keeps_the_data(ws):
    load_id = put(ws, targets(range(3)))
    put(ws, targets(range(2)), resource="phases")
    ws.mark_stale("translation", ["targets"])
    assert ws.fresh_load("translation", URL, "targets", {}, None) is None
    assert ws.fresh_load("translation", URL, "phases", {}, None) is not None
    assert ws.loads().set_index("load_id").loc[load_id, "status"] == "stale"
    assert len(ws.read("translation", "targets")) == 3 and count(ws, "translation.targets") == 3


# -- history and diffs ------------------------------------------------------------------------------

def test_history_of_one_resource(ws):
    put(ws, targets(range(3)))
    put(ws, targets(range(4)))
    put(ws, targets(range(1)), resource="phases")
    history = ws.history("targets")
    assert history["rows"].tolist() == [3, 4] and history["status"].tolist() == ["complete"] * 2
    assert ws.history("translation.targets")["load_id"].tolist() == history["load_id"].tolist()
    put(ws, targets(range(1)), resource="targets", service="media_review")
    with pytest.raises(WorkspaceError, match="say which"):
        ws.history("targets")


def test_diff_finds_added_removed_and_changed_rows(ws):
    before = put(ws, targets([1, 2, 3, 4]))
    after_rows = targets([2, 3, 4, 5]).to_pandas()
    after_rows.loc[after_rows["id"] == 3, "status"] = "DONE"
    after_rows.loc[after_rows["id"] == 4, ["status", "words"]] = ["DONE", 99]
    after = put(ws, pa.Table.from_pandas(after_rows, preserve_index=False))
    diff = ws.diff("translation.targets")
    assert (diff.before, diff.after, diff.key) == (before, after, ["id"])
    assert diff.added["id"].tolist() == [5] and diff.removed["id"].tolist() == [1]
    changed = diff.changed
    assert changed["id"].tolist() == [3, 4]
    assert [list(c) for c in changed["changed_columns"]] == [["status"], ["status", "words"]]
    assert changed["status_before"].tolist() == ["READY", "READY"]
    assert changed["status_after"].tolist() == ["DONE", "DONE"]
    assert changed["words_before"].tolist() == [30, 40] and changed["words_after"].tolist() == [30, 99]
    assert "updated_before" not in changed.columns  # columns that changed nowhere are left out
    assert diff.columns == {"status": 2, "words": 1}
    assert "1 added, 1 removed, 2 changed" in repr(diff) and "<table" in diff._repr_html_()
    assert ws.diff("targets", before=after, after=before).added["id"].tolist() == [1]
    with pytest.raises(WorkspaceError):
        ws.diff("targets", before="nope")


# -- snapshots --------------------------------------------------------------------------------------

@pytest.fixture
def filled(ws):
    first = put(ws, targets(range(3)), params={"status": ["READY"], "token": "tm-secret-1"})
    second = put(ws, targets(range(4)), params={"status": ["READY"]})
    put(ws, pa.table({"id": [1], "tags": [["x", "y"]]}), resource="phases")
    with pytest.raises(RuntimeError), ws.load("translation", URL, "phases", {}, ("id",)):
        raise RuntimeError("not exported")
    return ws, first, second


def test_export_duckdb_opens_with_plain_duckdb_and_open_snapshot(filled, tmp_path):
    ws, _, second = filled
    path = ws.export(tmp_path / "snap.duckdb")
    assert path == tmp_path / "snap.duckdb" and path.is_file()
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.sql("select count(*) from translation.targets").fetchall()[0][0] == 4
        assert con.sql("select status from _loads order by started").fetchall() == [("complete",), ("complete",)]
        assert con.sql("select count(*) from _manifest").fetchall()[0][0] == 2
    with open_snapshot(path) as snap:
        pd.testing.assert_frame_equal(snap.read("translation", "targets"), ws.read("translation", "targets"))
        assert snap.read("translation", "phases")["tags"][0] == ["x", "y"]
        tables = set(map(tuple, snap.tables(internals=True)[["schema", "name", "kind"]].values.tolist()))
        assert set(map(tuple, snap.tables()[["schema", "name"]].values.tolist())) == {
            ("translation", "phases"), ("translation", "targets")}, "the analyst's own, without internals"
        assert {("translation", "targets", "table"), ("main", "_manifest", "table")} <= tables
        manifest = snap.manifest().set_index("resource")
        assert set(snap.loads()["load_id"]) == set(manifest["load_id"])
    targets_row = manifest.loc["targets"]
    assert targets_row["toolkit_version"] == toolkit.__version__ and targets_row["service"] == "translation"
    assert targets_row["base_url"] == URL and list(targets_row["key"]) == ["id"]
    assert targets_row["load_id"] == second and list(targets_row["load_ids"]) == [second]
    assert json.loads(targets_row["params"]) == {"status": ["READY"]} and targets_row["rows"] == 4
    schema = json.loads(targets_row["schema"])
    assert [c["name"] for c in schema] == ["id", "status", "words", "updated"]
    assert schema[0]["type"] == "BIGINT" and schema[3]["type"] == "TIMESTAMP WITH TIME ZONE"
    assert str(targets_row["created"].tz) == "UTC"
    with pytest.raises(FileExistsError):
        ws.export(path)
    assert ws.export(path, overwrite=True) == path


def test_export_with_history_keeps_every_load_and_the_workspace_layout(filled, tmp_path):
    ws, first, second = filled
    path = ws.export(tmp_path / "history.duckdb", history=True)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.sql('select count(*) from translation."targets__loads"').fetchall()[0][0] == 7
        assert con.sql("select count(*) from translation.targets").fetchall()[0][0] == 4  # the view: latest
        statuses = con.sql("select status, count(*) from _loads group by 1").fetchall()
        assert statuses == [("complete", 3)]  # the failed load is not part of it
    with open_snapshot(path) as snap:
        assert len(snap.read("translation", "targets", first)) == 3
        assert len(snap.read("translation", "targets")) == 4
        assert list(snap.manifest().set_index("resource").loc["targets", "load_ids"]) == [first, second]


def test_export_parquet_reads_back(filled, tmp_path):
    ws, first, second = filled
    folder = ws.export(tmp_path / "snap", format="parquet")
    assert (folder / "manifest.json").is_file() and (folder / "_loads.parquet").is_file()
    table = pq.read_table(folder / "translation" / "targets")
    assert table.num_rows == 4 and str(table.schema.field("updated").type) == "timestamp[us, tz=UTC]"
    document = orjson.loads((folder / "manifest.json").read_bytes())
    assert document["sources"] == [["translation", URL]]
    entry = {e["resource"]: e for e in document["resources"]}["targets"]
    assert entry["files"] == ["translation/targets/data.parquet"] and entry["load_id"] == second
    with open_snapshot(folder) as snap:
        pd.testing.assert_frame_equal(snap.read("translation", "targets"), ws.read("translation", "targets"))
        assert snap.manifest()["rows"].tolist() == [1, 4]
        assert snap.sql("select count(*) from translation.phases").fetchall()[0][0] == 1
    history = ws.export(tmp_path / "history", format="parquet", history=True)
    # one file of row versions, not a copy per load
    assert [p.name for p in (history / "translation" / "targets").glob("*.parquet")] == ["versions.parquet"]
    with open_snapshot(history) as snap:
        assert len(snap.read("translation", "targets", first)) == 3
        assert len(snap.read("translation", "targets")) == 4


def test_no_secret_is_stored_anywhere(tmp_path):
    path = tmp_path / "ws.duckdb"
    params = {"status": ["READY"], "token": "tm-token-9d8c", "Password": "tm-pass-7a6b",
              "auth": {"api_key": "al-key-5e4f", "client_secret": Secret("tm-secret-3c2d")},
              "credentials": {"user": "x"}, "note": Secret("tm-hidden-1b0a")}
    with Workspace(path) as ws:
        put(ws, targets(range(2)), params=params)
        stored = json.loads(ws.loads()["params"][0])
        snapshot = ws.export(tmp_path / "snap.duckdb")
        folder = ws.export(tmp_path / "snap", format="parquet")
    assert stored == {"Password": "***", "auth": {"api_key": "***", "client_secret": "***"},
                      "credentials": "***", "note": "***", "status": ["READY"], "token": "***"}
    files = [path, snapshot, *folder.rglob("*.*")]
    for file in files:
        data = file.read_bytes()
        for secret in (b"tm-token-9d8c", b"tm-pass-7a6b", b"al-key-5e4f", b"tm-secret-3c2d", b"tm-hidden-1b0a"):
            assert secret not in data, (file, secret)


def test_base_url_is_stored_without_a_password(ws):
    with ws.load("translation", "http://pm:tm-pass-1@127.0.0.1:9/PD?apiKey=abc&x=1", "targets") as load:
        load.write(targets(range(1)))
    assert ws.loads()["base_url"][0] == "http://***@127.0.0.1:9/PD?apiKey=%2A%2A%2A&x=1"


# -- threads, processes and files -------------------------------------------------------------------

def test_a_load_in_a_thread_while_the_notebook_reads(ws):
    put(ws, targets(range(3)))
    started, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def fetcher(resource: str) -> None:
        try:
            with ws.load("translation", URL, resource, {}, ("id",)) as load:
                load.write(targets(range(100)))
                started.set()
                release.wait(5)
                load.write(targets(range(100, 200)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=fetcher, args=(name,)) for name in ("targets", "phases")]
    for thread in threads:
        thread.start()
    started.wait(5)
    assert len(ws.read("translation", "targets")) == 3  # the running load is invisible
    ws.loads()
    release.set()
    for thread in threads:
        thread.join(10)
    assert not errors
    assert len(ws.read("translation", "targets")) == 200 and len(ws.read("translation", "phases")) == 200


def test_two_processes_take_turns_and_one_that_keeps_the_file_is_named_after_waiting(tmp_path, capsys):
    """A workspace holds its file only while it reads or commits: another process's workspace reads and
    loads between; one that keeps the file (a block of `ws.hold()`, a duckdb.connect of its own) makes
    the others wait, told once who holds it and what for, and then raise WorkspaceBusyError."""
    path = tmp_path / "ws.duckdb"
    other = textwrap.dedent(f"""
        import duckdb, pyarrow as pa, toolkit
        ws = toolkit.Workspace({str(path)!r})
        with ws.load("translation", "http://x", "targets", {{}}, ("id",)) as load:
            load.write(pa.table({{"id": [1, 2, 3]}}))
        print("loaded", flush=True)
        input()
        with ws.hold():
            print("holding", flush=True)
            input()
        ws.close()
        con = duckdb.connect({str(path)!r})
        print("keeping", flush=True)
        input()
    """)
    process = subprocess.Popen([sys.executable, "-c", other], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)

    def step(expected):
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == expected, process.stderr.read()

    try:
        assert process.stdout.readline().strip() == "loaded", process.stderr.read()
        with Workspace(path) as ws:  # the other's workspace is still open, and idle
            assert len(ws.read("translation", "targets")) == 3
            with ws.load("translation", URL, "targets", {}, ("id",)) as load:
                load.write(pa.table({"id": [1, 2, 3, 4]}))
        capsys.readouterr()
        step("holding")
        with pytest.raises(WorkspaceBusyError, match=rf"still held by process {process.pid} \(a block of the "
                                                     r"analyst's queries, for [\d.]+ s\) after waiting 1 s"):
            Workspace(path, wait=1.3)
        assert capsys.readouterr().err.count(f"is held by process {process.pid}") == 1, "said once"
        step("keeping")
        with pytest.raises(WorkspaceBusyError, match=rf"still held by process {process.pid} after") as caught:
            Workspace(path, read_only=True, wait=0.2)
        assert caught.value.pid == process.pid and isinstance(caught.value, WorkspaceInUseError)
    finally:
        process.communicate("\n", timeout=30)
    with Workspace(path, read_only=True) as reader:
        assert len(reader.read("translation", "targets")) == 4 and len(reader.loads()) == 2
        with pytest.raises(WorkspaceError, match="read-only"):
            reader.load("translation", URL, "targets")


def test_a_second_load_of_a_resource_in_the_same_thread_is_refused_not_deadlocked(ws):
    with ws.load("translation", URL, "targets") as load:
        load.write(targets(range(2)))
        with pytest.raises(WorkspaceError, match="already open"), ws.load("translation", URL, "targets"):
            pass
        with ws.load("translation", URL, "phases") as other:  # another resource is fine
            other.write(targets(range(1)))
    assert len(ws.read("translation", "targets")) == 2 and len(ws.read("translation", "phases")) == 1


def test_a_running_load_of_a_dead_process_is_marked_interrupted_on_open(tmp_path):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as ws:
        ws.sql("insert into _loads (load_id, service, resource, started, status) "
               "values ('x', 'translation', 'targets', now(), 'running')")
    with Workspace(path) as ws:
        load = ws.loads().iloc[0]
        assert load["status"] == "interrupted" and load["error"] == "interrupted: the process ended during the load"


def test_long_text_is_stored_with_zstd_and_short_text_and_keys_with_duckdbs_default(tmp_path):
    rows = 5000
    batch = pa.table({
        "id": [f"{i:08d}-{'k' * 40}" for i in range(rows)],            # long, but the key
        "status": ["READY", "DONE"] * (rows // 2),
        "name": [f"name {i}" for i in range(rows)],
        "details": [f'{{"value": {i}, "audienceId": "subscription-renewals-{i % 7}"}}' for i in range(rows)],
        "empty": pa.nulls(rows, pa.string()),
    })
    with Workspace(tmp_path / "ws.duckdb") as ws:
        with ws.load("audience_platform", URL, "notifications", {}, ("id",)) as load:
            load.write(batch)
        ws.sql("checkpoint")
        stored = dict(ws.sql("select column_name, any_value(compression) from pragma_storage_info("
                             "'audience_platform.notifications__versions') where segment_type = 'VARCHAR' "
                             "and compression != 'Constant' group by 1").fetchall())
        assert stored["details"] == "ZSTD"
        assert stored["id"] != "ZSTD" and stored["name"] != "ZSTD" and stored["status"] != "ZSTD"
        assert ws.read("audience_platform", "notifications")["details"].tolist() == batch["details"].to_pylist()


def test_a_duckdb_without_per_column_compression_stores_long_text_its_own_way(tmp_path, monkeypatch):
    from toolkit.storage import schema
    monkeypatch.setattr(schema, "_per_column_compression", lambda: False)
    details = [f'{{"value": {i}, "audienceId": "subscription-renewals-{i % 7}"}}' for i in range(5000)]
    with Workspace(tmp_path / "ws.duckdb") as ws:
        with ws.load("audience_platform", URL, "notifications", {}, ("id",)) as load:
            load.write(pa.table({"id": [str(i) for i in range(5000)], "details": details}))
        ws.sql("checkpoint")
        stored = ws.sql("select any_value(compression) from pragma_storage_info('audience_platform."
                        "notifications__versions') where column_name = 'details' and compression != 'Constant'")
        assert stored.fetchall()[0][0] not in (None, "ZSTD")
        assert ws.read("audience_platform", "notifications")["details"].tolist() == details


def test_duckdbs_version_says_what_asking_it_would_of_per_column_compression(monkeypatch):
    import duckdb

    from toolkit.storage import schema
    answer = schema._per_column_compression.__wrapped__
    monkeypatch.setattr(duckdb, "__version__", "1.2.9")       # too old to be taken at its word: asked
    asked = answer()
    assert asked is True                                      # this DuckDB takes it
    monkeypatch.setattr(duckdb, "__version__", "1.0.0")
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: (_ for _ in ()).throw(duckdb.Error("no")))
    assert answer() is False                                  # an old one that refuses the clause
    monkeypatch.setattr(duckdb, "__version__", "1.3.0-dev42")
    assert answer() is True                                   # taken at its word, no connection made


def during_commit(monkeypatch, query: str) -> list:
    """What `query` answers on each load's commit cursor, inside its transaction."""
    from toolkit.storage.loads import Load
    seen, finish = [], Load._finish

    def watched(self, cursor, *rest):
        seen.append(cursor.sql(query).fetchall()[0][0])
        return finish(self, cursor, *rest)

    monkeypatch.setattr(Load, "_finish", watched)
    return seen


def test_settings_on_every_connection(tmp_path, monkeypatch):
    progress = during_commit(monkeypatch, "select current_setting('enable_progress_bar')")
    zone = during_commit(monkeypatch, "select current_setting('TimeZone')")
    with Workspace(tmp_path / "ws.duckdb") as ws:
        assert ws.sql("select current_setting('enable_progress_bar')").fetchall()[0][0] is False
        assert ws.sql("select current_setting('TimeZone')").fetchall()[0][0] == "UTC"
        with ws.load("translation", URL, "targets") as load:
            load.write(pa.table({"id": [1]}))
    assert progress == [False] and zone == ["UTC"]


def test_a_frame_from_kept_batches_leaves_the_memory_limit_as_it_was(tmp_path):
    """Making a fetch's DataFrame lowers DuckDB's memory limit for a moment, to have it give memory back."""
    with Workspace(tmp_path / "ws.duckdb") as ws:
        before = ws.sql("select current_setting('memory_limit')").fetchall()[0][0]
        with ws.load("translation", URL, "targets", keep=True) as load:
            load.write(pa.table({"id": [1, 2], "status": ["READY", "DONE"]}))
        frame = ws.frame_of("translation", "targets", load.load_id, load.kept)
        assert frame["id"].tolist() == [1, 2]
        assert ws.sql("select current_setting('memory_limit')").fetchall()[0][0] == before


def test_the_analysts_queries_get_the_machines_memory_and_a_load_64_mb(tmp_path, monkeypatch):
    """A file workspace held every query at 64 MB: a sort of 300k rows of text ran out of memory."""
    monkeypatch.delenv("TOOLKIT_DUCKDB_MEMORY_LIMIT", raising=False)
    limit = "select current_setting('memory_limit')"
    during = during_commit(monkeypatch, limit)
    with Workspace(tmp_path / "ws.duckdb") as ws:
        ws.sql("create table t as select range as id, 'asset-' || range as name, "
               "repeat('description ', 20) as d from range(300000)")
        assert len(ws.sql("select * from t order by d, name").fetchall()) == 300000
        whole = ws.sql(limit).fetchall()[0][0]
        with ws.load("translation", URL, "targets") as load:
            load.write(pa.table({"id": [1]}))
        assert during == ["61.0 MiB"] and ws.sql(limit).fetchall()[0][0] == whole
        with ws.hold():  # the analyst's own choice outlasts a load while the file is held
            ws.sql("SET memory_limit = '300MB'")
            with ws.load("translation", URL, "targets") as load:
                load.write(pa.table({"id": [2]}))
            assert ws.sql(limit).fetchall()[0][0] == "286.1 MiB"
    monkeypatch.setenv("TOOLKIT_DUCKDB_MEMORY_LIMIT", "200MB")
    with Workspace(tmp_path / "ws.duckdb") as ws:
        assert ws.sql(limit).fetchall()[0][0] == "190.7 MiB"


@pytest.mark.parametrize(("chosen", "backend"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_arrow_uses_the_system_allocator_unless_the_analyst_chose_one(chosen, backend):
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if chosen:
        env["ARROW_DEFAULT_MEMORY_POOL"] = chosen
    code = "import toolkit.pull.frames, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == backend


@pytest.mark.parametrize(("source", "target", "unchanged"), [
    (pa.int32(), pa.int64(), True), (pa.int64(), pa.int32(), False), (pa.uint32(), pa.int64(), True),
    (pa.uint64(), pa.int64(), False), (pa.int64(), pa.uint64(), False), (pa.int64(), pa.float64(), False),
    (pa.float32(), pa.float64(), True), (pa.int64(), pa.string(), False), (pa.null(), pa.string(), True),
    (pa.large_string(), pa.string(), True),
    (pa.timestamp("ms", tz="UTC"), pa.timestamp("us", tz="Etc/UTC"), True),
    (pa.timestamp("ns", tz="UTC"), pa.timestamp("us", tz="UTC"), False),
    (pa.timestamp("ms", tz="Europe/Paris"), pa.timestamp("us", tz="UTC"), False),
    (pa.list_(pa.struct([("id", pa.string())])), pa.list_(pa.field("l", pa.struct([("id", pa.string())]))), True),
    (pa.struct([("a", pa.int64()), ("b", pa.string())]), pa.struct([("b", pa.string()), ("a", pa.int64())]), False),
])
def test_a_kept_column_is_used_only_when_it_casts_to_the_stored_type_unchanged(source, target, unchanged):
    from toolkit.storage.readback import casts_unchanged as _casts_unchanged
    assert _casts_unchanged(source, target) is unchanged


def test_duckdb_leaves_cores_to_the_walk_while_loads_commit_and_gets_them_back(monkeypatch):
    monkeypatch.setenv("TOOLKIT_DUCKDB_LOAD_THREADS", "1")
    during = during_commit(monkeypatch, "select current_setting('threads')")
    with Workspace() as ws:
        threads = lambda: int(ws.sql("select current_setting('threads')").fetchall()[0][0])  # noqa: E731
        ws.sql("SET threads = 3")
        with ws.load("asset_library", "http://x", "tags", {}, ("id",)) as load:
            load.write(pa.table({"id": ["a"]}))
            with ws.load("asset_library", "http://x", "boards", {}, ("id",)) as other:
                other.write(pa.table({"id": ["b"]}))
            assert threads() == 3, "a load walking leaves the analyst's threads be"
        assert during == [1, 1] and threads() == 3
        with pytest.raises(RuntimeError), ws.load("asset_library", "http://x", "tags", {}, ("id",)):
            raise RuntimeError("a failed load gives them back too")
        assert threads() == 3


def test_a_query_answers_fetchone_and_fetchall():
    with Workspace() as ws:
        query = ws.sql("select * from range(3) t(n) order by n")
        assert query.fetchone() == (0,) and query.fetchall() == [(0,), (1,), (2,)]


def test_a_list_whose_items_change_shape_never_fails_a_later_load(ws):
    """Text tags that come back as objects (the asset library's tags did): DuckDB's union of the two
    types is a list of structs, into which the stored text cannot cast; the column becomes text and
    every value stays (the load failed with a ConversionException)."""
    first = put(ws, pa.table({"id": [1, 2], "tags": [["a", "b"], ["c"]]}))
    put(ws, pa.table({"id": [3], "tags": [[{"id": "t1", "name": "hero"}]]}))
    stored = dict(ws.sql("select column_name, data_type from duckdb_columns() "
                         "where table_name = 'targets__versions'").fetchall())
    assert stored["tags"] == "VARCHAR"
    # as JSON, which reads back exactly (DuckDB's own text of a list drops the quotes)
    assert ws.sql("select id, tags from translation.targets").fetchall() == [(3, '[{"id":"t1","name":"hero"}]')]
    earlier = ws.as_of("translation.targets", first).sort_values("id")
    assert earlier["tags"].tolist() == ['["a","b"]', '["c"]']
    put(ws, pa.table({"id": [4], "tags": [[1, 2]]}))        # later lists go in as JSON too
    assert ws.sql("select tags from translation.targets").fetchall() == [("[1,2]",)]


def test_long_text_that_later_comes_as_lists_of_objects_takes_their_type(tmp_path):
    """Long text is stored with zstd, which DuckDB gives no list or struct: retyping such a column in
    place failed the commit (BinderException: Can't compress column "tags"), as it did for two
    processes pulling versions while the service refused some of their requests."""
    with Workspace(tmp_path / "ws.duckdb") as ws:
        text = '[{"id": "t1", "name": "the harbour at dawn, a hero shot"}]'
        first = put(ws, pa.table({"id": [1, 2], "tags": [text, None]}))
        put(ws, pa.table({"id": [1, 3], "tags": [[{"id": "t1", "name": "the harbour at dawn, a hero shot"}],
                                                 [{"id": "t2", "name": "x"}]]}))
        stored = dict(ws.sql("select column_name, data_type from duckdb_columns() "
                             "where table_name = 'targets__versions'").fetchall())
        assert stored["tags"] == 'STRUCT(id VARCHAR, "name" VARCHAR)[]'
        assert sorted(ws.sql("select id, tags from translation.targets").fetchall()) == [
            (1, [{"id": "t1", "name": "the harbour at dawn, a hero shot"}]), (3, [{"id": "t2", "name": "x"}])]
        assert ws.as_of("translation.targets", first).sort_values("id")["tags"].tolist()[0] == \
            [{"id": "t1", "name": "the harbour at dawn, a hero shot"}]


def test_numbers_that_widen_inside_a_list_stay_a_list(ws):
    put(ws, pa.table({"id": [1], "scores": [[1, 2]]}))
    put(ws, pa.table({"id": [1, 2], "scores": [[1, 2], [1.5]]}))
    stored = dict(ws.sql("select column_name, data_type from duckdb_columns() "
                         "where table_name = 'targets__versions'").fetchall())
    assert stored["scores"] == "DOUBLE[]"
    assert sorted(ws.sql("select scores from translation.targets").fetchall()) == [([1.0, 2.0],), ([1.5],)]


def test_ws_sql_is_safe_from_several_threads(tmp_path):
    # before: 420 of 600 calls failed with "connection is busy" (one cursor shared by every thread)
    with Workspace(tmp_path / "ws.duckdb") as ws:
        ws.sql("create table numbers as select range as n from range(1000)")
        failures: list[BaseException] = []
        sums: list[int] = []

        def work() -> None:
            for i in range(300):
                try:
                    frame = ws.sql("select sum(n) as s from numbers where n >= ?", [i % 7]).df()
                    sums.append(int(frame["s"][0]))
                except Exception as error:
                    failures.append(error)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for thread in threads:
            thread.start()
        work()
        for thread in threads:
            thread.join()
        assert not failures, failures[:3]
        assert len(sums) == 900 and set(sums) <= {sum(range(k, 1000)) for k in range(7)}
    with pytest.raises(WorkspaceError):
        ws.sql("select 1")


def test_a_read_only_open_of_a_missing_file_says_so(tmp_path):
    # before: DuckDB's raw IOException ("Cannot open database ... in read-only mode: database does not exist")
    Workspace(tmp_path / "kept.duckdb").close()
    with pytest.raises(WorkspaceError, match=r"no workspace at .*typo\.duckdb to read; .* holds kept\.duckdb"):
        Workspace(tmp_path / "typo.duckdb", read_only=True)
    assert not (tmp_path / "typo.duckdb").exists()


def test_ws_tables_lists_the_analysts_views_and_the_internals_only_when_asked(filled):
    ws, _, _ = filled
    views = ws.tables()
    assert list(views["table"]) == ["translation.phases", "translation.targets"]
    every = ws.tables(internals=True)
    inside = set(every.loc[every["internal"], "table"])
    assert {"main._loads", "translation.targets__versions", "translation.targets__loads"} <= inside
    assert not inside & set(views["table"]) and not every.loc[~every["internal"], "table"].str.contains("__").any()
