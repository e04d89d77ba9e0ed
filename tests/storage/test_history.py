"""Row versions: a row is stored when it appears or changes; every load stays a complete view of its rows."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from toolkit import Workspace, WorkspaceError, open_snapshot

URL = "http://127.0.0.1:9/PD"
FIXTURES = Path(__file__).parents[1] / "fixtures"


def rows(*pairs: tuple[int, str]) -> pa.Table:
    return pa.table({"id": pa.array([i for i, _ in pairs], pa.int64()), "status": [s for _, s in pairs]})


def put(ws: Workspace, *batches: pa.Table, resource: str = "targets", key: tuple = ("id",)) -> str:
    with ws.load("translation", URL, resource, {}, key) as load:
        for batch in batches:
            load.write(batch)
    return load.load_id


def versions(ws: Workspace, resource: str = "targets") -> list[tuple]:
    return ws.sql(f'select * from translation."{resource}__versions" '
                  "order by _valid_from, id nulls first").fetchall()


def as_set(frame: pd.DataFrame) -> list[tuple]:
    return sorted(frame.astype(object).itertuples(index=False, name=None), key=repr)


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


def test_rows_are_versions_added_changed_removed_and_re_added(ws):
    loads = [put(ws, rows((1, "READY"), (2, "READY"), (3, "DONE"))),
             put(ws, rows((1, "DONE"), (2, "READY"), (3, "DONE"))),      # 1 changed
             put(ws, rows((1, "DONE"), (3, "DONE"), (4, "READY"))),      # 2 removed, 4 added
             put(ws, rows((1, "DONE"), (2, "READY"), (3, "DONE"), (4, "READY")))]  # 2 back
    assert versions(ws) == [(1, "READY", 1, 2), (2, "READY", 1, 3), (3, "DONE", 1, None),
                            (1, "DONE", 2, None), (4, "READY", 3, None), (2, "READY", 4, None)]
    assert ws.loads()["seq"].tolist() == [1, 2, 3, 4]
    seen = [as_set(ws.as_of("translation.targets", load)) for load in loads]
    assert seen == [[(1, "READY"), (2, "READY"), (3, "DONE")], [(1, "DONE"), (2, "READY"), (3, "DONE")],
                    [(1, "DONE"), (3, "DONE"), (4, "READY")], [(1, "DONE"), (2, "READY"), (3, "DONE"), (4, "READY")]]
    assert as_set(ws.sql("select * from translation.targets").df()) == seen[-1]
    assert [as_set(ws.read("translation", "targets", load)) for load in loads] == seen
    every = ws.sql('select _load_id, count(*) from translation."targets__loads" group by 1 order by 1').fetchall()
    assert every == [(load, len(s)) for load, s in zip(loads, seen, strict=True)]


def test_lists_inside_structs_read_back_as_duckdb_gives_them(ws):
    """A column of users with roles lists: `read` and `as_of` give its cells as Python lists and dicts at
    every depth, as `ws.sql(...).df()` does (pandas showed the roles as numpy arrays), and a plain list
    column as Arrow, which shows as DuckDB's does."""
    owners = [[{"id": 1, "roles": ["pm", "qa"]}], [], None, [{"id": 2, "roles": []}, {"id": 3, "roles": ["x"]}]]
    load = put(ws, pa.table({"id": [1, 2, 3, 4], "owners": owners, "tags": [["a", "b"], [], None, ["c"]]}))
    sql = ws.sql("select * from translation.targets order by id").df()
    for frame in (ws.read("translation", "targets"), ws.as_of("translation.targets", load)):
        frame = frame.sort_values("id").reset_index(drop=True)
        assert frame["owners"].to_numpy()[0][0]["roles"] == ["pm", "qa"]
        assert list(frame["owners"][0]) == owners[0] and list(frame["owners"][1]) == []
        assert pd.isna(frame["owners"][2]) and list(frame["owners"][3]) == owners[3]
        assert isinstance(frame["tags"].dtype, pd.ArrowDtype)
        pd.testing.assert_frame_equal(frame.astype("string"), sql.astype("string"))


def stored_types(ws: Workspace) -> dict[str, str]:
    return dict(ws.sql("select column_name, data_type from duckdb_columns() where schema_name = 'translation' "
                       "and table_name = 'targets__versions'").fetchall())


def test_a_later_batch_of_only_empty_lists_keeps_the_stored_list_types(ws):
    """`pa.array([[], []])` is list<null> (DuckDB's `"NULL"[]`), and roles all empty a struct's `"NULL"[]`
    field: no value to widen for, so the stored types and the lists already stored stay as they were
    (they were widened to VARCHAR, every stored list turned text)."""
    owners = pa.array([[{"id": 1, "roles": ["pm"]}], []])
    first = put(ws, pa.table({"id": [1, 2], "tags": [["a"], ["b", "c"]], "owners": owners}))
    typed = stored_types(ws)
    assert typed["tags"] == "VARCHAR[]" and typed["owners"] == "STRUCT(id BIGINT, roles VARCHAR[])[]"
    put(ws, pa.table({"id": [1, 2], "tags": pa.array([[], []]), "owners": pa.array([[], []])}))
    put(ws, pa.table({"id": [1, 2], "tags": pa.array([[], None]),
                      "owners": pa.array([[{"id": 1, "roles": []}], [{"id": 2, "roles": []}]])}))
    assert stored_types(ws) == typed
    assert ws.as_of("translation.targets", first).sort_values("id")["tags"].tolist() == [["a"], ["b", "c"]]
    assert ws.sql("select owners from translation.targets order by id").fetchall() == \
        [([{"id": 1, "roles": []}],), ([{"id": 2, "roles": []}],)]


def test_a_first_load_of_only_empty_lists_creates_text_lists(ws):
    """A first batch whose list holds only empty lists, or whose structs' lists do, has no element type
    to create: text lists, not DuckDB's `"NULL"[]` (which CREATE TABLE refuses); a later batch with
    values takes the column over."""
    put(ws, pa.table({"id": [1], "tags": pa.array([[]]), "owners": pa.array([[{"id": 1, "roles": []}]])}))
    assert stored_types(ws)["tags"] == "VARCHAR[]"
    assert stored_types(ws)["owners"] == "STRUCT(id BIGINT, roles VARCHAR[])[]"
    put(ws, pa.table({"id": [1], "tags": [["a"]], "owners": [[{"id": 1, "roles": ["pm"]}]]}))
    assert ws.sql("select tags, owners from translation.targets").fetchall() == [(["a"], [{"id": 1, "roles": ["pm"]}])]


def test_diff_reads_only_the_versions_that_differ_and_matches_by_key(ws):
    first = put(ws, rows((1, "READY"), (2, "READY"), (3, "DONE")))
    put(ws, rows((1, "DONE"), (3, "DONE"), (4, "READY")))
    third = put(ws, rows((1, "DONE"), (2, "READY"), (3, "DONE"), (4, "READY")))
    latest = ws.diff("translation.targets")
    assert latest.added["id"].tolist() == [2] and latest.removed.empty and latest.changed.empty
    across = ws.diff("translation.targets", first, third)  # 2 was gone in between and came back the same
    assert across.added["id"].tolist() == [4] and across.removed.empty
    assert across.changed[["id", "status_before", "status_after"]].astype(object).values.tolist() == \
        [[1, "READY", "DONE"]]
    backwards = ws.diff("translation.targets", third, first)
    assert backwards.removed["id"].tolist() == [4] and backwards.changed["status_after"].tolist() == ["READY"]
    assert ws.diff("translation.targets", first, first).summary().endswith("0 added, 0 removed, 0 changed")


def test_a_keyless_resource_keeps_whole_row_versions_and_counts_duplicates(ws):
    tags = lambda *values: pa.table({"tag": list(values)})  # noqa: E731
    put(ws, tags("a", "a", "b"), resource="tags", key=())
    put(ws, tags("a", "b"), resource="tags", key=())       # one of the two "a" gone
    put(ws, tags("b", "a", "c"), resource="tags", key=())  # order alone is no change
    stored = ws.sql('select * from translation."tags__versions" order by _valid_from, tag').fetchall()
    assert stored == [("a", 1, None), ("a", 1, 2), ("b", 1, None), ("c", 3, None)]
    assert sorted(ws.read("translation", "tags")["tag"]) == ["a", "b", "c"]
    first = ws.loads()["load_id"].iloc[0]
    assert sorted(ws.as_of("translation.tags", first)["tag"]) == ["a", "a", "b"]


def test_a_failed_load_after_others_changes_no_version(ws):
    put(ws, rows((1, "READY"), (2, "READY")))
    before = versions(ws)
    with pytest.raises(RuntimeError), ws.load("translation", URL, "targets", {}, ("id",)) as load:
        load.write(rows((1, "DONE"), (3, "NEW")))
        raise RuntimeError("page 3 broke")
    assert versions(ws) == before
    assert ws.loads()["status"].tolist() == ["complete", "failed"]
    later = put(ws, rows((2, "READY")))
    assert ws.loads().set_index("load_id").loc[later, "seq"] == 2  # the failed load took no number
    assert as_set(ws.read("translation", "targets")) == [(2, "READY")]


def test_a_load_of_no_rows_ends_every_version_and_a_new_column_changes_none(ws):
    first = put(ws, rows((1, "READY"), (2, "READY")))
    put(ws, rows((1, "READY"), (2, "READY")).append_column("words", pa.nulls(2, pa.int64())))
    assert len(versions(ws)) == 2, "a column that is NULL everywhere changes no row"
    put(ws, rows((1, "READY"), (2, "READY")).append_column("words", pa.array([5, None], pa.int64())))
    stored = ws.sql('select id, words, _valid_from, _valid_to from translation."targets__versions" order by all')
    assert stored.fetchall() == [(1, 5, 3, None), (1, None, 1, 3), (2, None, 1, None)]
    put(ws)
    assert ws.read("translation", "targets").empty
    assert len(ws.as_of("translation.targets", first)) == 2


def test_as_of_a_moment_and_as_a_relation(tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as ws:
        first = put(ws, rows((1, "READY"), (2, "READY")))
        put(ws, rows((1, "DONE")))
        finished = ws.loads()["finished"].tolist()
        between = finished[0] + (finished[1] - finished[0]) / 2
        assert as_set(ws.as_of("translation.targets", between)) == [(1, "READY"), (2, "READY")]
        assert as_set(ws.as_of("targets", finished[1])) == [(1, "DONE")]
        with pytest.raises(WorkspaceError, match="had finished by"):
            ws.as_of("translation.targets", finished[0] - pd.Timedelta(days=1))
        relation = ws.as_of("translation.targets", first, relation=True)
        assert relation.filter("id = 2").fetchall() == [(2, "READY")]
        assert relation.df()["status"].tolist() == ["READY", "READY"]


def test_an_export_with_history_keeps_every_load_in_both_formats(tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as ws:
        first = put(ws, rows((1, "READY"), (2, "READY")))
        put(ws, rows((1, "DONE")))
        for name, fmt in (("snap.duckdb", "duckdb"), ("snap", "parquet")):
            with open_snapshot(ws.export(tmp_path / name, format=fmt, history=True)) as snap:
                assert as_set(snap.read("translation", "targets", first)) == [(1, "READY"), (2, "READY")]
                assert as_set(snap.read("translation", "targets")) == [(1, "DONE")]
                assert snap.sql('select count(*) from translation."targets__versions"').fetchall() == [(3,)]


# -- a file of the copy-per-load layout -------------------------------------------------------------

def old_file(tmp_path: Path) -> Path:
    """A workspace written by the toolkit before row versions: 4 complete and 1 failed load of keyed
    targets (a change, a removal, an addition, a return) and 3 stale loads of keyless tags, the first
    with a duplicate row."""
    path = tmp_path / "old.duckdb"
    with gzip.open(FIXTURES / "copy_per_load.duckdb.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return path


OLD_TARGETS = [[(1, "READY", 10), (2, "READY", 20), (3, "DONE", 30)],
               [(1, "DONE", 10), (2, "READY", 20), (3, "DONE", 30)],
               [(1, "DONE", 10), (3, "DONE", 30), (4, "READY", 40)],
               [(1, "DONE", 10), (2, "READY", 20), (3, "DONE", 30), (4, "READY", 40)]]


def test_a_copy_per_load_file_is_migrated_to_versions_on_a_read_write_open(tmp_path):
    path = old_file(tmp_path)
    with Workspace(path) as ws:
        loads = ws.loads()
        targets = loads[(loads["resource"] == "targets") & (loads["status"] == "complete")]["load_id"].tolist()
        assert [as_set(ws.as_of("translation.targets", load)) for load in targets] == OLD_TARGETS
        assert len(versions(ws)) == 6  # 3 + the change + the addition + the return, not 13 copies
        assert ws.read("translation", "targets")["status"].dtype == "category"
        tags = loads[loads["resource"] == "tags"]["load_id"].tolist()
        assert [sorted(ws.read("media", "tags", load)["tag"]) for load in tags] == \
            [["a", "a", "b"], ["a", "b"], ["a", "b", "c"]]
        assert ws.diff("translation.targets").added["id"].tolist() == [2]
        assert ws.sql("select count(*) from duckdb_tables() where table_name like '%\\_\\_loads' escape '\\'"
                      ).fetchall() == [(0,)]
        later = put(ws, rows((1, "DONE")).append_column("words", pa.array([10], pa.int64())))
        assert ws.loads().set_index("load_id").loc[later, "seq"] == 5
        assert as_set(ws.as_of("translation.targets", targets[-1])) == OLD_TARGETS[-1]
    with Workspace(path, read_only=True) as ws:
        assert as_set(ws.read("translation", "targets")) == [(1, "DONE", 10)]


def test_a_read_only_open_of_a_copy_per_load_file_says_how_to_migrate_it(tmp_path):
    path = old_file(tmp_path)
    with pytest.raises(WorkspaceError, match=r"copy of every load.*toolkit\.Workspace\(.*\)\.close\(\)"):
        Workspace(path, read_only=True)


def test_a_frame_from_a_query_raises_no_deprecation_from_toolkits_code(tmp_path):
    """Issue 45: under DuckDB 1.5 and pandas 3.1 (the team's environment, where `make test` runs this file
    again) every `.df()` was a Pandas4Warning, 97 of them in a run; deprecations are errors here."""
    import subprocess
    import sys
    code = ("import toolkit as tk\nws = tk.Workspace(r'%s')\nws.sql('create table t as select 1 as a, [1, 2] AS l, "
            "now() AS t')\nprint(len(ws.sql('select * from t').df()))\n" % (tmp_path / "w.duckdb"))
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and run.stdout == "1\n", run.stderr[-2000:]


def test_loads_and_history_list_loads_in_their_order_when_the_clock_ran_behind(ws, monkeypatch):
    """A load at the real time, then one made while this machine's clock ran a day behind, then a failed
    one: `history` and `loads` list them in the order they were made (the loads' `seq`), not by the
    clock that started them, which puts the second a day before the first."""
    from datetime import timedelta

    from toolkit.storage import clock
    real = clock.now
    first = put(ws, rows((1, "NEW")))
    monkeypatch.setattr(clock, "now", lambda: real() - timedelta(days=1))
    second = put(ws, rows((1, "DONE")))
    monkeypatch.setattr(clock, "now", real)
    other = put(ws, rows((7, "NEW")), resource="jobs")
    with pytest.raises(RuntimeError), ws.load("translation", URL, "targets", {}, ("id",)) as load:
        failed = load.load_id
        raise RuntimeError("the network went away")
    history = ws.history("translation.targets")
    assert list(history.load_id) == [first, second, failed]
    assert history.started.iloc[1] < history.started.iloc[0], "the second load's clock ran behind"
    listed = list(ws.loads().load_id)
    assert listed.index(first) < listed.index(second) < listed.index(failed)
    assert listed.index(other) < listed.index(failed)
    assert ws.as_of("translation.targets").status.tolist() == ["DONE"]
