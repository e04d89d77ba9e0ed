"""Freshness budgets: a fan-out with no sound change signal asks again, each refresh, for the parents
confirmed longest ago, so that every row is confirmed within its budget (a day by default)."""
from __future__ import annotations

import pandas as pd
import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.http.session import RateBudget, Transport

BUDGET_HOURS = catalog.resource("asset_library", "versions").incremental.max_age / 3600


@pytest.fixture
def rotating():
    with tk.sandbox.start(seed=7, enforce_limits=False) as box, tk.Workspace() as ws:
        conn = ws.connect("asset_library", **box.credentials("asset_library"),
                          transport=Transport(budget=RateBudget(None, 10)))
        conn.pull("assets", progress=False)
        first = conn.pull("versions", progress=False)
        yield box, ws, conn, first


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    columns = sorted(frame.columns)
    return frame[columns].astype(str).sort_values(columns).reset_index(drop=True)


@pytest.mark.parametrize("hours", [1, 6])
def test_every_parent_is_confirmed_within_the_budget_over_many_refreshes(rotating, hours):
    box, ws, conn, first = rotating
    assets = len(ws.read("asset_library", "assets"))
    assert first.requests == assets and len(ws.confirmations("asset_library", "versions")) == assets
    asked = []
    for _ in range(int(2 * BUDGET_HOURS / hours)):   # two budgets' worth of refreshes
        box.advance(hours=hours)
        table = ws.refresh("asset_library", resources=["asset_library.assets", "asset_library.versions"],
                           progress=False, say=lambda line: None)
        row = table[table.resource == "asset_library.versions"].iloc[0]
        assert row["kind"] == "incremental"
        asked.append(int(row["requests"]))
        now = conn.client.service_clock
        held = {str(i) for i in ws.read("asset_library", "assets")["id"]}
        confirmed = ws.confirmations("asset_library", "versions")
        assert held <= set(confirmed), "every held asset has been asked at least once"
        oldest = max((now - confirmed[i]).total_seconds() / 3600 for i in held)
        assert oldest <= BUDGET_HOURS, f"an asset's versions went {oldest:.1f} h unconfirmed"
    share = hours / BUDGET_HOURS
    # a refresh asks about its share of the budget (the first day spreads the full pull's clump)
    assert sum(asked) <= assets * (len(asked) * share + 1.5)
    assert min(asked) >= int(assets * share)


def test_the_parents_asked_again_give_what_a_full_pull_gives(rotating):
    box, ws, conn, _ = rotating
    box.advance(hours=6)
    ws.refresh("asset_library", resources=["asset_library.assets", "asset_library.versions"], progress=False,
               say=lambda line: None)
    latest = ws.history("asset_library.versions").load_id.iloc[-1]
    asked = ws.sql("SELECT parent FROM _confirmed WHERE load_id = ?", [latest]).df()["parent"].tolist()
    assert 0 < len(asked) < len(ws.read("asset_library", "assets"))
    with tk.Workspace() as fresh:
        other = fresh.connect("asset_library", **box.credentials("asset_library"),
                              transport=Transport(budget=RateBudget(None, 10)))
        whole = other.fetch("versions", asset_ids=asked, progress=False)
    mine = ws.read("asset_library", "versions")
    assert comparable(mine[mine.asset_id.astype(str).isin(asked)]).equals(comparable(whole))
    assert len(ws.diff("asset_library.versions").removed) == 0, "the parents not asked keep their rows"


def test_max_age_is_the_budget_of_a_refresh(rotating):
    box, ws, conn, _ = rotating
    assets = len(ws.read("asset_library", "assets"))
    resources = ["asset_library.assets", "asset_library.versions"]

    def versions(table: pd.DataFrame) -> pd.Series:
        return table[table.resource == "asset_library.versions"].iloc[0]

    box.advance(hours=1)
    quiet = versions(ws.refresh(resources=resources, progress=False, say=lambda line: None))
    # the day's budget: about an hour's share asked (and the assets new since), the rest saved and said so
    now = len(ws.read("asset_library", "assets"))
    assert quiet["requests"] <= now / 24 + (now - assets) + 1 and quiet["saved"] == now - quiet["requests"]
    box.advance(hours=1)
    whole = versions(ws.refresh(resources=resources, max_age=0, progress=False, say=lambda line: None))
    assert whole["requests"] == len(ws.read("asset_library", "assets")) and whole["saved"] == 0
    # a budget of two hours at an hourly cadence: half the parents each time, every one within two hours
    for _ in range(3):
        box.advance(hours=1)
        half = versions(ws.refresh(resources=resources, max_age=2 * 3600, progress=False, say=lambda line: None))
        now = len(ws.read("asset_library", "assets"))
        # the parent's page of one that reads the service's clock, when the parent's load was kept
        assert half["kind"] == "incremental" and now / 2 - 2 <= half["requests"] <= now / 2 + 5, half
        confirmed = ws.confirmations("asset_library", "versions")
        assert max((conn.client.service_clock - at).total_seconds() for at in confirmed.values()) <= 2 * 3600


def test_freshness_says_how_old_each_view_is_against_its_budget(rotating):
    box, ws, conn, _ = rotating
    assets = len(ws.read("asset_library", "assets"))
    fresh = ws.freshness().set_index("resource")
    assert set(fresh.index) == {"assets", "versions"}
    assert fresh.loc["versions", "rotation"] and not fresh.loc["assets", "rotation"]
    assert fresh.loc["versions", "oldest_hours"] < 0.1 and fresh.loc["versions", "past_budget"] == 0
    box.advance(hours=30)               # a day and more without a refresh: every row is past its budget
    ws.refresh(resources=["asset_library.assets"], progress=False, say=lambda line: None)
    fresh = ws.freshness().set_index("resource")
    assert 29.9 < fresh.loc["versions", "oldest_hours"] < 30.2
    assert fresh.loc["versions", "past_budget"] == fresh.loc["versions", "rows"] > 0
    assert fresh.loc["assets", "past_budget"] == 0
    box.advance(hours=1)
    ws.refresh(resources=["asset_library.assets", "asset_library.versions"], progress=False, say=lambda line: None)
    fresh = ws.freshness().set_index("resource")
    assert fresh.loc["versions", "past_budget"] == 0 and fresh.loc["versions", "oldest_hours"] < 0.1
    assert len(ws.confirmations("asset_library", "versions")) == len(ws.read("asset_library", "assets")) > assets


def test_freshness_counts_the_rows_a_view_shows_not_those_a_load_wrote(rotating):
    box, ws, conn, _ = rotating
    box.advance(hours=1)
    table = ws.refresh(resources=["asset_library.assets", "asset_library.versions"], progress=False,
                       say=lambda line: None)
    written = int(table[table.resource == "asset_library.versions"]["written"].iloc[0])
    fresh = ws.freshness().set_index("resource")
    assert fresh.loc["versions", "rows"] == len(ws.read("asset_library", "versions")) > written


def test_a_write_through_the_connection_has_every_parent_asked_again(rotating):
    box, ws, conn, _ = rotating
    version = ws.read("asset_library", "versions").iloc[0]
    conn.call("asset_library.update_asset_version", asset_id=version["asset_id"], version_id=version["id"],
              title="retitled by the analyst")
    box.advance(hours=1)
    table = ws.refresh(resources=["asset_library.assets", "asset_library.versions"], progress=False,
                       say=lambda line: None)
    row = table[table.resource == "asset_library.versions"].iloc[0]
    # the write marked versions stale: the budget does not wait for that asset's turn
    assert row["requests"] == len(ws.read("asset_library", "assets")) and row["saved"] == 0
    titles = ws.read("asset_library", "versions").set_index("id")["title"]
    assert titles[version["id"]] == "retitled by the analyst"


def test_a_load_made_while_the_clock_ran_behind_never_makes_max_age_serve_an_older_load(monkeypatch):
    """A load at the real time, then one made while this machine's clock ran a day behind (an injected
    clock): `fetch(max_age=1h)` at the real time gave the first, older load (891 rows differing from the
    view). Loads are picked by their order; the late clock is said as drift."""
    from datetime import timedelta

    from toolkit.storage import clock
    real = clock.now
    with tk.sandbox.start(seed=7) as box, tk.Workspace() as ws:
        conn = ws.connect("translation", **box.credentials("translation"))
        conn.fetch("targets", progress=False)
        first = ws.loads().load_id.iloc[-1]
        box.advance(hours=48)                           # the targets move on: the two loads differ
        monkeypatch.setattr(clock, "now", lambda: real() - timedelta(days=1))
        with pytest.warns(tk.DriftWarning, match="finished clock_behind"):
            conn.fetch("targets", progress=False, refresh=True)
        monkeypatch.setattr(clock, "now", real)
        drift = ws.drift("translation.targets")
        assert "clock ran 1 day" in drift[drift.kind == "clock_behind"].iloc[0]["example"]
        view = comparable(ws.sql("SELECT * EXCLUDE (extra) FROM translation.targets").df())
        older = ws.read("translation", "targets", load_id=first)
        assert not comparable(older[view.columns]).equals(view), "the older load differs from the view"
        again = conn.fetch("targets", progress=False, max_age=3600)
        assert comparable(again[view.columns]).equals(view)
