"""A parent committed by another process while a child's incremental load is under way is never taken
as seen: whatever step of the child's pull the parent's commit falls between, the next incremental
refresh of the child equals a full pull (issue 39: a target's phase stayed stale for good)."""
from __future__ import annotations

import pytest
from interleaving import interleave, view

import toolkit

# (child, the parents pulled again in the middle of its load): each strategy that reads a parent
CASES = [("phases", ("submissions", "targets")), ("targets", ("submissions",))]
STEPS = ["sources read", "plan made", "load started", "before the commit"]


@pytest.fixture
def box():
    with toolkit.sandbox.start(seed=5) as running:
        yield running


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("child, parents", CASES, ids=[c for c, _ in CASES])
def test_a_parent_committed_during_a_childs_load_is_asked_for_by_the_next_refresh(box, tmp_path, monkeypatch,
                                                                                  step, child, parents):
    ws = toolkit.Workspace(tmp_path / "w.duckdb")
    other = toolkit.Workspace(tmp_path / "w.duckdb")   # another writer of the same file
    tm, theirs = (w.connect("translation", **box.credentials("translation")) for w in (ws, other))
    for name in ("submissions", "targets", "phases"):
        tm.pull(name, progress=False)
    box.advance(hours=6)                   # work moves on: targets and their phases change

    def commit_parents() -> None:
        for name in parents:
            theirs.pull(name, incremental=True, progress=False)

    ran = interleave(monkeypatch, step, child, commit_parents)
    tm.pull(child, incremental=True, progress=False)
    assert ran == [step]
    monkeypatch.undo()
    again = tm.pull(child, incremental=True, progress=False)      # the next refresh, nothing moved since
    fresh = toolkit.Workspace()
    fresh.connect("translation", **box.credentials("translation")).pull(child, progress=False)
    stale = view(ws, "translation", child).compare(view(fresh, "translation", child)) \
        if len(view(ws, "translation", child)) == len(view(fresh, "translation", child)) else None
    assert stale is not None and stale.empty, (step, again.kind, stale)
    for w in (ws, other, fresh):
        w.close()
