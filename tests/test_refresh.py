"""One-call refresh (issue 15 item 3): every held resource pulled again, parents before children, a
service not connected skipped with its reason, one line per resource and a table of what each did."""
from __future__ import annotations

import pytest

import toolkit
from toolkit import refresh, sandbox


@pytest.fixture
def box():
    with sandbox.start(seed=5) as running:
        yield running


def test_parents_come_before_children():
    assert refresh.depth("translation", "submissions") == 0
    assert refresh.depth("translation", "targets") > refresh.depth("translation", "submissions")
    assert refresh.depth("translation", "phases") > refresh.depth("translation", "targets")
    assert refresh.depth("translation", "documents") > refresh.depth("translation", "submissions")


def test_refresh_pulls_what_is_held_and_says_what_each_did(box, tmp_path):
    path = tmp_path / "work.duckdb"
    with toolkit.Workspace(path) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        cdp = ws.connect("audience_platform", **box.credentials("audience_platform"))
        for name in ("phases", "targets", "submissions", "projects"):   # children pulled first on purpose
            tm.pull(name, progress=False)
        cdp.pull("notifications", progress=False)
        cdp.pull("audiences", progress=False)
    box.advance(hours=2)
    with toolkit.Workspace(path) as ws:
        ws.connect("translation", **box.credentials("translation"))   # the audience platform is not
        lines: list[str] = []
        table = ws.refresh(say=lines.append)
        assert list(table.columns) == refresh.COLUMNS
        rows = table.set_index("resource")
        assert set(rows.index) == {"translation.phases", "translation.targets", "translation.submissions",
                                   "translation.projects", "audience_platform.notifications",
                                   "audience_platform.audiences"}
        order = list(table[table["service"] == "translation"]["resource"])
        assert order.index("translation.submissions") < order.index("translation.targets") \
            < order.index("translation.phases")
        for name in ("notifications", "audiences"):
            assert rows.loc[f"audience_platform.{name}", "kind"] == "skipped"
            assert "not connected" in rows.loc[f"audience_platform.{name}", "error"]
        assert rows.loc["translation.submissions", "kind"] == "incremental"
        assert rows.loc["translation.projects", "kind"] == "full"
        assert (rows.loc[rows["kind"] != "skipped", "requests"] >= 0).all()
        assert sorted(line.split(":")[0] for line in lines) == sorted(table["resource"])   # one line each
        loads = ws.loads()
        assert set(loads["kind"].dropna()) >= {"full", "incremental"}
        # again, with a max_age: the loads just made are kept
        again = ws.refresh("translation", max_age=3600, say=lines.append)
        assert set(again["kind"]) == {"cached"} and set(again["service"]) == {"translation"}


def test_a_failed_resource_is_its_row_and_the_others_go_on(box):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.pull("submissions", progress=False)
    tm.pull("projects", progress=False)
    ws.sql("UPDATE _loads SET params = '{\"name\": 12, \"no_such_filter\": 1}' WHERE resource = 'projects'")
    table = ws.refresh(say=lambda line: None).set_index("resource")
    assert table.loc["translation.projects", "kind"] == "failed"
    assert "unknown filter" in table.loc["translation.projects", "error"]
    assert table.loc["translation.submissions", "kind"] == "incremental"


def test_the_table_counts_added_changed_and_removed_rows(box):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.pull("targets", progress=False)
    box.advance(hours=6)
    table = ws.refresh(incremental=False, say=lambda line: None).set_index("resource")
    diff = ws.diff("translation.targets")
    row = table.loc["translation.targets"]
    assert row["kind"] == "full"
    assert (row["added"], row["changed"], row["removed"]) == (len(diff.added), len(diff.changed), len(diff.removed))
    assert row["changed"] > 0
