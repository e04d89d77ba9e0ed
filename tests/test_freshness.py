"""Freshness budgets: a fan-out with no sound change signal asks again, each refresh, for the parents
confirmed longest ago, so that every row is confirmed within its budget (a day by default)."""
from __future__ import annotations

import pandas as pd
import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.http.session import RateBudget

BUDGET_HOURS = catalog.resource("asset_library", "versions").incremental.max_age / 3600


@pytest.fixture
def rotating():
    with tk.sandbox.start(seed=7, enforce_limits=False) as box, tk.Workspace() as ws:
        conn = ws.connect("asset_library", **box.credentials("asset_library"))
        conn.client.transport.budget = RateBudget(None, 10)
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
        other = fresh.connect("asset_library", **box.credentials("asset_library"))
        other.client.transport.budget = RateBudget(None, 10)
        whole = other.fetch("versions", asset_ids=asked, progress=False)
    mine = ws.read("asset_library", "versions")
    assert comparable(mine[mine.asset_id.astype(str).isin(asked)]).equals(comparable(whole))
    assert len(ws.diff("asset_library.versions").removed) == 0, "the parents not asked keep their rows"
