"""Incremental pulls (issue 15 item 2): against the sandbox, an incremental load's view equals a full
pull into a fresh workspace, step after step of the clock; a failed one leaves the view as it was."""
from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit import catalog, fetch, sandbox
from toolkit.errors import TransportError

WITH_STRATEGY = [(s, n) for (s, n), r in catalog.RESOURCES.items() if r.incremental is not None]


def view(ws: toolkit.Workspace, service: str, name: str) -> pd.DataFrame:
    frame = ws.sql(f"select * from {service}.{name}").df()
    key = list(catalog.RESOURCES[service, name].key)
    return frame.astype("string").fillna("<NA>").sort_values(key).reset_index(drop=True)


@pytest.fixture
def box():
    with sandbox.start(seed=3, faults="429@0.05") as running:
        yield running


def test_the_strategies_cover_what_the_issue_names():
    assert set(WITH_STRATEGY) >= {("translation", "submissions"), ("translation", "targets"),
                                  ("translation", "phases"), ("audience_platform", "notifications")}


def test_incremental_equals_a_full_pull_over_several_clock_steps(box):
    ws = toolkit.Workspace()
    conns = {s: ws.connect(s, **box.credentials(s)) for s in {s for s, _ in WITH_STRATEGY}}
    for service, name in WITH_STRATEGY:
        conns[service].pull(name, progress=False)
    kinds, cheaper = set(), 0
    for step in range(3):
        box.advance(hours=3)
        if step == 1:   # an old notification deleted: no filtered answer shows it, the total does
            oldest = ws.sql("select id from audience_platform.notifications order by created limit 1").fetchone()[0]
            conns["audience_platform"].call("audience_platform.delete_notification", notification_id=str(oldest))
        fresh = toolkit.Workspace()
        fresh_conns = {s: fresh.connect(s, **box.credentials(s)) for s in conns}
        for service, name in WITH_STRATEGY:
            mine = conns[service].pull(name, incremental=True, progress=False)
            theirs = fresh_conns[service].pull(name, progress=False)
            kinds.add((name, mine.kind))
            if step == 1 and name == "notifications":
                assert mine.kind == "full", "a deletion among old notifications needs a full pull"
            cheaper += mine.requests < theirs.requests
            assert view(ws, service, name).equals(view(fresh, service, name)), (step, name, mine.kind)
        fresh.close()
    assert {("submissions", "incremental"), ("targets", "incremental"), ("phases", "incremental"),
            ("notifications", "incremental")} <= kinds
    assert cheaper >= 6


def test_loads_say_their_kind_and_what_they_build_on(box):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    first = tm.pull("submissions", progress=False)
    again = tm.pull("submissions", incremental=True, progress=False)
    other = tm.pull("submissions", incremental=True, progress=False, name="nothing like it")
    loads = ws.loads().set_index("load_id")
    assert loads.loc[first.load_id, "kind"] == "full" and pd.isna(loads.loc[first.load_id, "builds_on"])
    assert loads.loc[again.load_id, "kind"] == "incremental"
    assert loads.loc[again.load_id, "builds_on"] == first.load_id
    assert loads.loc[other.load_id, "kind"] == "full"   # other filters: nothing to build on


def test_a_resource_without_a_strategy_is_pulled_in_full(box):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.pull("projects", progress=False)
    assert tm.pull("projects", incremental=True, progress=False).kind == "full"


def test_a_fetch_gives_the_whole_view_after_an_incremental_load(box):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.fetch("submissions")
    box.advance(hours=2)
    frame = tm.fetch("submissions", incremental=True)
    assert ws.loads()["kind"].iloc[-1] == "incremental"
    assert len(frame) == len(ws.sql("select * from translation.submissions").df())


def test_an_interrupted_incremental_load_leaves_the_previous_view(box, monkeypatch):
    ws = toolkit.Workspace()
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.pull("submissions", progress=False)
    box.advance(hours=6)
    before = view(ws, "translation", "submissions")
    real = fetch._plan

    def breaking(*args, **kwargs):
        part = real(*args, **kwargs)
        tables = part.tables

        def some_then_fail():
            yield from tables()
            raise TransportError("the link went down")
        part.tables = some_then_fail
        return part

    monkeypatch.setattr(fetch, "_plan", breaking)
    with pytest.raises(TransportError):
        tm.pull("submissions", incremental=True, progress=False)
    last = ws.loads().iloc[-1]
    assert (last["status"], last["kind"]) == ("failed", "incremental")
    assert view(ws, "translation", "submissions").equals(before)
    monkeypatch.setattr(fetch, "_plan", real)
    assert tm.pull("submissions", incremental=True, progress=False).kind == "incremental"
