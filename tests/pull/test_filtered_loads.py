"""A view never silently shows a subset: a fetch narrowed by filters the resource does not need is
kept as `<resource>__filtered`, readable and dated like any load, while `<resource>` keeps showing the
latest whole load, its history and diffs untouched. A resource held only through filtered loads has
no view, and asking for it says where its rows are. Asking for what the workspace does not hold is a
WorkspaceError naming what it does hold."""
from __future__ import annotations

import pandas as pd
import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.errors import WorkspaceError
from toolkit.pull import frames
from toolkit.pull.fetch import narrowing
from toolkit.storage.store import UnknownTableError


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start(scale=1) as running:
        yield running


@pytest.fixture
def ws(box):
    with tk.Workspace() as workspace:
        workspace.tm = workspace.connect("translation", **box.credentials("translation"))
        yield workspace


def count(ws, table: str) -> int:
    return ws.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def test_a_filtered_fetch_keeps_the_view_whole(ws):
    """The README tour fetched targets with status=["READY"]: the view held 163 rows where the service
    has 892, and reports built on it were wrong."""
    everything = ws.tm.fetch("targets")
    ready = ws.tm.fetch("targets", status=["READY"])
    assert 0 < len(ready) < len(everything)
    assert set(ready["status"]) == {"READY"}
    assert ready.attrs["table"] == "translation.targets__filtered"
    assert everything.attrs["table"] == "translation.targets"
    assert count(ws, "translation.targets") == len(everything)
    assert count(ws, "translation.targets__filtered") == len(ready)
    assert len(ws.history("translation.targets")) == 1, "the subset is no load of the whole"
    held = ws.tables().set_index("table")
    assert held.loc["translation.targets", "rows"] == len(everything)
    assert held.loc["translation.targets__filtered", "params"] == '{"status":["READY"]}'
    assert bool(held.loc["translation.targets__filtered", "filtered"])


def test_the_filtered_load_is_read_by_its_id_and_the_whole_refreshes_whole(ws):
    ws.tm.fetch("targets")
    ready = ws.tm.fetch("targets", status=["READY"])
    subset_id = ws.latest("translation", "targets__filtered")
    read = frames.conform(ws.as_of("translation.targets__filtered", subset_id), catalog.resource("translation",
                                                                                               "targets"))
    pd.testing.assert_frame_equal(read, ready)
    table = ws.refresh(say=lambda line: None)
    assert set(table["resource"]) == {"translation.submissions", "translation.targets"}, "the whole ones"
    assert ws.history("translation.targets")["params"].tolist() == ["{}", "{}"]


def test_a_resource_held_only_filtered_has_no_view_and_says_where_its_rows_are(ws):
    ws.tm.fetch("targets", status=["READY"])
    with pytest.raises(UnknownTableError, match=r"translation\.targets has no load of the whole resource, "
                                                r"only filtered ones: translation\.targets__filtered"):
        ws.sql("SELECT count(*) FROM translation.targets")
    with pytest.raises(WorkspaceError, match="only filtered ones"):
        ws.read("translation", "targets")
    with pytest.raises(WorkspaceError, match="only filtered ones"):
        ws.history("translation.targets")


def test_filters_the_resource_needs_are_what_it_is():
    targets = catalog.resource("translation", "targets")
    assert narrowing(targets, {}) == [] and narrowing(targets, {"status": None}) == []
    assert narrowing(targets, {"status": ["READY"], "submission_ids": [1]}) == ["status", "submission_ids"]
    needs_ids = [r for r in catalog.RESOURCES.values()
                 if r.fan_out and (r.service, r.parent) not in catalog.RESOURCES]
    assert needs_ids, "some resource fans out over ids only the analyst holds"
    for resource in needs_ids:
        assert narrowing(resource, {resource.parent: [1, 2]}) == [], resource.name


def test_unknown_names_and_load_ids_say_what_exists(ws):
    ws.tm.fetch("submissions")
    with pytest.raises(WorkspaceError, match=r"translation\.phases is not fetched yet: ws\.connect\('translation', "
                                             r"\.\.\.\)\.fetch\('phases'\) fetches it \(this workspace holds "
                                             r"translation\.submissions\)"):
        ws.history("translation.phases")
    with pytest.raises(WorkspaceError, match=r"no load of 'phases'.*it holds translation\.submissions"):
        ws.drift("phases")
    latest = ws.latest("translation", "submissions")
    with pytest.raises(WorkspaceError, match=f"'last tuesday' is neither a load id nor a moment; the latest "
                                             f"loads of translation.submissions are {latest}"):
        ws.as_of("translation.submissions", "last tuesday")
    with pytest.raises(UnknownTableError) as info:      # not DuckDB's 'Did you mean "pg_catalog.pg_class"?'
        ws.sql("SELECT * FROM translation.phases")
    assert str(info.value).startswith("translation.phases is not fetched yet: ws.connect('translation', ...)"
                                      ".fetch('phases') fetches it") and "pg_catalog" not in str(info.value)
    with pytest.raises(UnknownTableError, match=r"translation has no resource 'phase'; did you mean 'phases'\?"):
        ws.sql("SELECT * FROM translation.phase")
    with pytest.raises(UnknownTableError, match=r"audience_platform.memberships is not fetched yet: .*"
                                                r"fetch\('memberships', profile_ids=\[\.\.\.\]\)"):
        ws.sql("SELECT * FROM audience_platform.memberships")
    with pytest.raises(WorkspaceError, match="no load of 'nothing'"):
        ws.sql("SELECT * FROM nothing")


def test_the_summary_of_views_shortens_a_long_filter(box):
    with tk.Workspace() as ws:
        cdp = ws.connect("audience_platform", **box.credentials("audience_platform"))
        ids = box.examples("audience_platform")["profile_ids"][:20]
        cdp.fetch("memberships", profile_ids=ids)
        shown = ws.tables().set_index("table").loc["audience_platform.memberships", "params"]
        assert len(shown) == 120 and shown.endswith("…") and ids[0] in shown
        assert ids[-1] in ws.history("audience_platform.memberships")["params"].iloc[-1], "whole in history"
