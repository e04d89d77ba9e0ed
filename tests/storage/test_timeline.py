"""History as a question: the row versions' view, `ws.timeline`, and a row that goes A→B→A."""
from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pyarrow as pa
import pytest

from toolkit import Workspace, WorkspaceError, open_snapshot

URL = "http://127.0.0.1:9/AP"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def members(pairs) -> pa.Table:
    """(profile_id, audience_id) pairs as memberships."""
    pairs = list(pairs)
    return pa.table({"id": pa.array([p for p, _ in pairs], pa.int64()),
                     "audience_id": pa.array([a for _, a in pairs], pa.int64())})


def put(ws: Workspace, table: pa.Table, resource: str = "memberships") -> str:
    with ws.load("audience_platform", URL, resource, {}, ("id",)) as load:
        load.write(table)
    return load.load_id


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


def test_a_row_that_goes_a_b_a_has_three_versions_and_every_load_sees_its_own_value(ws):
    # profile 1 moves to audience 20 and back; profile 2 stays in 10 throughout
    loads = [put(ws, members([(1, 10), (2, 10)])), put(ws, members([(1, 20), (2, 10)])),
             put(ws, members([(1, 10), (2, 10)]))]
    versions = ws.versions("audience_platform.memberships")
    one = versions[versions["id"] == 1]
    assert one["audience_id"].tolist() == [10, 20, 10]
    assert one["valid_from_load"].tolist() == loads
    assert one["valid_to_load"].tolist()[:2] == loads[1:] and pd.isna(one["valid_to_load"].iloc[2])
    assert one["valid_from"].notna().all() and one["valid_to"].notna().sum() == 2
    assert len(versions[versions["id"] == 2]) == 1  # unchanged: one version, no copies
    for load_id, expected in zip(loads, [10, 20, 10], strict=True):
        held = ws.as_of("audience_platform.memberships", load_id).set_index("id")
        assert held.loc[1, "audience_id"] == expected
    timeline = ws.timeline("audience_platform.memberships", by="audience_id")
    counts = {(row.load_id, row.audience_id): row.rows for row in timeline.itertuples()}
    assert counts == {(loads[0], 10): 2, (loads[1], 10): 1, (loads[1], 20): 1, (loads[2], 10): 2}
    assert list(timeline.columns[:4]) == ["load_id", "seq", "finished", "service_clock"]


def test_as_of_every_load_is_one_join_with_the_history_view(ws):
    put(ws, members([(1, 10)]))
    put(ws, members([(1, 10), (2, 10), (3, 20)]))
    put(ws, members([(3, 20)]))
    joined = ws.sql("""
        SELECT l.seq, count(h.id) AS n FROM main._loads l JOIN audience_platform.memberships__history h
          ON l.service = 'audience_platform' AND l.resource = 'memberships' AND l.status IN ('complete', 'stale')
          AND h.valid_from_seq <= l.seq AND (h.valid_to_seq IS NULL OR h.valid_to_seq > l.seq)
        GROUP BY 1 ORDER BY 1""").fetchall()
    assert joined == [(1, 1), (2, 3), (3, 1)]
    whole = ws.timeline("audience_platform.memberships")
    assert whole["rows"].tolist() == [1, 3, 1]


def test_a_timeline_takes_an_aggregate_and_plots_a_line_per_group(ws):
    put(ws, members([(1, 10), (2, 10), (3, 20)]))
    put(ws, members([(1, 10), (3, 20), (4, 20)]))
    summed = ws.timeline("memberships", by="audience_id", agg={"ids": "sum(id)"})
    assert summed.set_index(["seq", "audience_id"])["ids"].to_dict() == {
        (1, 10): 3, (1, 20): 3, (2, 10): 1, (2, 20): 7}
    wide = ws.timeline("memberships", by="audience_id").wide()
    assert wide.shape == (2, 2) and wide.to_numpy().tolist() == [[2, 1], [1, 2]]
    axes = ws.timeline("memberships", by="audience_id").plot()
    assert len(axes.get_lines()) == 2
    with pytest.raises(WorkspaceError, match="timeline of audience_platform.memberships"):
        ws.timeline("memberships", by="no_such_column")


def test_history_has_the_service_clock(ws):
    put(ws, members([(1, 10)]))
    history = ws.history("memberships")
    assert "service_clock" in history.columns and history["service_clock"].notna().all()


def test_a_snapshot_with_history_keeps_the_history_view(ws, tmp_path):
    put(ws, members([(1, 10)]))
    put(ws, members([(1, 20)]))
    ws.export(tmp_path / "s.duckdb", history=True)
    with open_snapshot(tmp_path / "s.duckdb") as snap:
        kept = snap.sql("SELECT audience_id FROM audience_platform.memberships__history "
                        "ORDER BY valid_from_seq").fetchall()
        assert kept == [(10,), (20,)]


def test_a_snapshot_with_history_asks_the_same_timeline(ws, tmp_path):
    put(ws, members([(1, 10), (2, 10)]))
    put(ws, members([(1, 20), (2, 10)]))
    ws.export(tmp_path / "s.duckdb", history=True)
    ws.export(tmp_path / "latest.duckdb")
    mine = ws.timeline("audience_platform.memberships", by="audience_id")
    with open_snapshot(tmp_path / "s.duckdb") as snap:
        theirs = snap.timeline("audience_platform.memberships", by="audience_id")
        assert theirs[["seq", "audience_id", "rows"]].values.tolist() == mine[["seq", "audience_id", "rows"]].values.tolist()
    with open_snapshot(tmp_path / "latest.duckdb") as snap, pytest.raises(WorkspaceError, match="history=True"):
        snap.timeline("audience_platform.memberships")


def put_at(ws: Workspace, table: pa.Table, clock: datetime) -> str:
    """A load whose service said its clock was `clock` (a sandbox's runs hours ahead of this machine's)."""
    with ws.load("audience_platform", URL, "memberships", {}, ("id",)) as load:
        load.write(table)
        load.service_clock = clock
    return load.load_id


def test_as_of_reads_either_clock_and_says_which_when_none_matched(ws):
    first = put_at(ws, members([(1, 10)]), T0)
    second = put_at(ws, members([(1, 20)]), T0 + pd.Timedelta(hours=3))
    between = T0 + pd.Timedelta(hours=1)      # a moment a report shows: the service's clock
    with pytest.raises(WorkspaceError) as said:
        ws.as_of("audience_platform.memberships", between)
    message = str(said.value)
    assert "on this machine's clock" in message and f"on the service's clock it is load {first}" in message
    assert "clock='service'" in message
    held = ws.as_of("audience_platform.memberships", between, clock="service")
    assert held["audience_id"].tolist() == [10]
    assert ws.as_of("audience_platform.memberships", T0 + pd.Timedelta(hours=4), clock="service")[
        "audience_id"].tolist() == [20]
    finished = ws.history("audience_platform.memberships")["finished"].iloc[-1]
    assert ws.as_of("audience_platform.memberships", finished)["audience_id"].tolist() == [20]   # the wall clock
    with pytest.raises(WorkspaceError, match="on the service's clock .its first: 2026-03-01 12:00"):
        ws.as_of("audience_platform.memberships", T0 - pd.Timedelta(days=1), clock="service")
    with pytest.raises(WorkspaceError, match="clock is 'wall'"):
        ws.as_of("audience_platform.memberships", second, clock="sandbox")


def test_a_timelines_plot_labels_what_changed_and_counts_the_rest(ws):
    import matplotlib
    matplotlib.use("Agg")
    # 31 groups: audience 0 grows, audience 1 shrinks, 29 stay as they are
    still = [(100 + a * 10 + k, a) for a in range(2, 31) for k in range(2)]
    put(ws, members([(1, 0), (2, 1), (3, 1), *still]))
    put(ws, members([(1, 0), (4, 0), (5, 0), (2, 1), *still]))
    timeline = ws.timeline("audience_platform.memberships", by="audience_id")
    assert timeline.moved().to_dict() == {0: 2.0, 1: -1.0}
    ax = timeline.plot(title="Members per audience")
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["and 29 unchanged", "0 (+2)", "1 (-1)"]
    assert ax.get_title() == "Members per audience\n2 of 31 changed, in colour; 29 unchanged in grey"
    assert len(ax.get_lines()) == 31
    ax = timeline.plot(top=1)
    assert ax.get_title() == ("the 1 that changed most of the 2 that changed, of 31, in colour; 29 unchanged "
                              "and the rest in grey")
    assert [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")] == \
        ["and 30 more (29 unchanged)", "0 (+2)"]
