"""One-call refresh (issue 15 item 3): every held resource pulled again, parents before children, a
service not connected skipped with its reason, one line per resource and a table of what each did."""
from __future__ import annotations

import dataclasses
import shutil
from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit import bulk, catalog, demo, sandbox
from toolkit.catalog.spec import Incremental
from toolkit.errors import ValidationError
from toolkit.pull import refresh


@pytest.fixture
def box():
    with sandbox.start(seed=5) as running:
        yield running


def test_parents_come_before_children():
    assert refresh.depth("translation", "submissions") == 0
    assert refresh.depth("translation", "targets") > refresh.depth("translation", "submissions")
    assert refresh.depth("translation", "phases") > refresh.depth("translation", "targets")
    assert refresh.depth("translation", "documents") > refresh.depth("translation", "submissions")
    assert refresh.depth("audience_platform", "memberships") > refresh.depth("audience_platform", "profiles")


def test_a_resource_whose_rows_copy_another_comes_after_it(monkeypatch):
    # changed_parents reads the copied resource's versions since the previous load: it must be fresh
    resources = dict(catalog.RESOURCES)
    documents = resources["translation", "documents"]
    resources["translation", "documents"] = dataclasses.replace(documents, incremental=Incremental(
        "changed_parents", parent="submissions", field="submission_id", copies="phases", via="phase_id"))
    monkeypatch.setattr(catalog, "RESOURCES", resources)
    assert refresh.depth("translation", "documents") > refresh.depth("translation", "phases")


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


@pytest.fixture
def held(box, tmp_path):
    """A workspace file holding translation's submissions, targets, phases and projects, and the
    audience platform's audiences; the sandbox clock two hours on since they were pulled."""
    path = tmp_path / "held.duckdb"
    with toolkit.Workspace(path) as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        for name in ("submissions", "targets", "phases", "projects"):
            tm.pull(name, progress=False)
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull("audiences", progress=False)
    box.advance(hours=2)
    return path


def connected(path, box, services=("translation", "audience_platform")):
    ws = toolkit.Workspace(path)
    for service in services:
        ws.connect(service, **box.credentials(service))
    return ws


def test_resources_refreshes_only_the_chosen_ones_parents_first(box, held):
    with connected(held, box) as ws:
        before = ws.loads()
        # named child first, both spellings
        table = ws.refresh(resources=["translation.phases", ("translation", "submissions")], say=lambda line: None)
        assert list(table["resource"]) == ["translation.submissions", "translation.phases"]
        assert set(table["kind"]) <= {"full", "incremental"}
        new = ws.loads().merge(before[["load_id"]], how="left", indicator=True).query("_merge == 'left_only'")
        assert sorted(new["resource"]) == ["phases", "submissions"]       # nothing else was pulled
        one = ws.refresh(resources="audience_platform.audiences", say=lambda line: None)
        assert list(one["resource"]) == ["audience_platform.audiences"]
        # a service named too narrows further; an empty choice pulls nothing
        assert list(ws.refresh("translation", resources=["translation.projects"],
                               say=lambda line: None)["resource"]) == ["translation.projects"]
        assert ws.refresh(resources=[], say=lambda line: None).empty


@pytest.mark.parametrize("names", [["translation.targets", "translation.documents"],   # in the catalog, not held
                                   ["translation.no_such"], ["targets"], [("translation",)]])
def test_a_resource_not_held_is_refused_and_nothing_is_pulled(box, held, names):
    with connected(held, box) as ws:
        loads, sent = len(ws.loads()), box.stats()["requests"]
        with pytest.raises(ValidationError) as refused:
            ws.refresh(resources=names, say=lambda line: None)
        assert box.stats()["requests"] == sent and len(ws.loads()) == loads
        message = str(refused.value)
        assert "not held" in message and "translation.targets" not in message.split("it holds")[0]
        listed = message.split("it holds ")[1].split(", ")                 # what is held, listed
        assert sorted(listed) == sorted(f"{s}.{r}" for s, r in ws.loads()[["service", "resource"]].values)


def test_a_resource_of_a_service_not_named_is_refused(box, held):
    with connected(held, box) as ws, pytest.raises(ValidationError, match="audience_platform.audiences"):
        ws.refresh("translation", resources=["audience_platform.audiences"], say=lambda line: None)


def test_progress_on_or_off_gives_the_same_table_and_lines(box, held, tmp_path, capsys):
    twin = tmp_path / "twin.duckdb"
    shutil.copy(held, twin)
    tables, said = [], []
    for path, progress in ((held, True), (twin, False)):
        lines: list[str] = []
        with connected(path, box) as ws:
            tables.append(ws.refresh(progress=progress, say=lines.append).drop(columns="seconds"))
        said.append(sorted(line.rsplit(",", 1)[0] for line in lines))    # all but the seconds; services
        # run at once, so their lines interleave in any order
        shown = capsys.readouterr().err
        if progress:
            assert "refresh" in shown and f"/{len(tables[-1])}" in shown    # one bar over the resources
        else:
            assert shown == ""
    pd.testing.assert_frame_equal(tables[0], tables[1])
    assert said[0] == said[1] and len(said[0]) == len(tables[0])


def test_the_demos_clock_step_refreshes_only_what_moves(box):
    ws = toolkit.Workspace()
    conns = {service: ws.connect(service, **box.credentials(service)) for service in demo.DAILY}
    inputs = {service: box.examples(service) for service in demo.DAILY}
    for service, names in demo.DAILY.items():
        for name in names:
            conns[service].pull(name, progress=False, **{need: inputs[service][need]
                                                          for need in bulk.needs(catalog.resource(service, name))})
    conns["translation"].pull("projects", progress=False)             # held, but it does not move
    before, clock = ws.loads(), box.clock.now()
    lines: list[str] = []
    table = demo.clock_step(ws, box, lines.append)
    assert box.clock.now() - clock == timedelta(hours=demo.HOURS)
    assert sorted(table["resource"]) == sorted(demo.MOVING) and (table["clock"] == box.clock.now()).all()
    order = list(table["resource"])
    assert order.index("translation.submissions") < order.index("translation.targets") \
        < order.index("translation.phases")
    assert table.set_index("resource").loc["translation.submissions", "kind"] == "incremental"
    new = ws.loads().merge(before[["load_id"]], how="left", indicator=True).query("_merge == 'left_only'")
    assert sorted(f"{s}.{r}" for s, r in new[["service", "resource"]].values) == sorted(demo.MOVING)
    [line] = lines                                                     # one line: requests per resource
    assert f"{table['requests'].sum()} requests" in line and "targets open" in line
    assert all(f"{r.split('.')[1]} {n}" in line for r, n in table[["resource", "requests"]].values)


def test_a_refresh_says_which_loads_drifted_from_the_catalog(tmp_path):
    with sandbox.start(seed=5, drift="extra_field") as drifting, toolkit.Workspace(tmp_path / "w.duckdb") as ws:
        tm = ws.connect("translation", **drifting.credentials("translation"))
        with pytest.warns(toolkit.DriftWarning):
            tm.pull("projects", progress=False)
            lines: list[str] = []
            table = ws.refresh(say=lines.append, progress=False)
    row = table.set_index("resource").loc["translation.projects"]
    assert row["drift"] >= 1 and row["error"] is None
    assert "differ from the catalog (ws.drift())" in lines[0]


def test_a_load_whose_params_were_recorded_masked_is_not_refreshed_with_the_mask(box, tmp_path):
    with toolkit.Workspace(tmp_path / "w.duckdb") as ws:
        cdp = ws.connect("audience_platform", **box.credentials("audience_platform"))
        ids = box.examples("audience_platform")["profile_ids"][:3]
        cdp.pull("memberships", progress=False, profile_ids=ids)   # ids it needs: a whole load of them
        # a filter named like a secret is stored as "***" (toolkit.storage.loads.scrub): here, as if one had been
        ws.sql("""update _loads set params = '{"profile_ids": "***"}' where resource = 'memberships'""")
        before = box.stats()["requests"]
        table = ws.refresh(say=lambda line: None, progress=False)
    row = table.set_index("resource").loc["audience_platform.memberships"]
    assert row["kind"] == "skipped" and "recorded masked" in row["error"] and "profile_ids" in row["error"]
    assert box.stats()["requests"] == before, "nothing was asked for with the mask"
