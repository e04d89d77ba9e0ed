"""A load's long list of ids is recorded once, in `_given_ids`, and named in its params by digest and
count (toolkit.storage.id_lists): a refresh reads them back and pulls as it did when the params spelled
every id out; workspaces whose loads spelled them out still refresh; listings say how many ids."""
from __future__ import annotations

import orjson
import pandas as pd
import pyarrow as pa
import pytest
from interleaving import view

import toolkit
from toolkit import sandbox
from toolkit.errors import ValidationError
from toolkit.storage import id_lists


@pytest.fixture
def few(monkeypatch):
    """The sandbox's 100 profiles count as a long list."""
    monkeypatch.setattr(id_lists, "INLINE_AT_MOST", 5)


def _refreshed(monkeypatch, inline_at_most: int, then: int | None = None) -> tuple[list, pd.DataFrame, list]:
    """Profiles and their memberships pulled with the sandbox's ids (recorded inline when there are no
    more than `inline_at_most`), an audience changed, then a refresh, incremental (with the ids recorded
    under `then` from the second load on): what the refresh did, the memberships' view, the memberships loads' params."""
    monkeypatch.setattr(id_lists, "INLINE_AT_MOST", inline_at_most)
    with sandbox.start(seed=3) as box:
        ws = toolkit.Workspace()
        ap = ws.connect("audience_platform", **box.credentials("audience_platform"))
        ids = box.examples("audience_platform")["profile_ids"]
        ap.pull("audience_metadata", progress=False)
        ap.pull("profiles", progress=False, profile_ids=ids)
        ap.pull("memberships", progress=False, profile_ids=ids)
        if then is not None:
            monkeypatch.setattr(id_lists, "INLINE_AT_MOST", then)
        box.advance(hours=1)
        audience = ws.sql("select audience_id from audience_platform.memberships m join "
                          "audience_platform.audience_metadata a on a.id = m.audience_id where not a.read_only "
                          "group by all order by count(*) desc, 1 limit 1").fetchone()[0]
        ap.call("audience_platform.update_audience", audience_id=audience, patch={"tags": ["retagged"]})
        done = ws.refresh(incremental=True)
        ap.pull("profiles", progress=False, profile_ids=ids)       # a signal pulled since, as the strategy needs
        again = ap.pull("memberships", progress=False, profile_ids=ids, incremental=True)
        steps = [(row.resource, row.kind, row.requests, row.error) for row in done.itertuples()]
        steps.append(("memberships again", again.kind, again.requests, None))
        params = [orjson.loads(p) for (p,) in ws.sql("select params from _loads where resource = 'memberships' order by started").fetchall()]
        return steps, view(ws, "audience_platform", "memberships"), params


def test_a_refresh_from_ids_recorded_apart_does_what_one_from_ids_inline_did(monkeypatch):
    inline_steps, inline_view, inline_params = _refreshed(monkeypatch, 10_000)
    apart_steps, apart_view, apart_params = _refreshed(monkeypatch, 5)
    assert apart_steps == inline_steps
    assert any(kind == "incremental" for _, kind, _, _ in apart_steps)
    assert apart_view.equals(inline_view)
    assert all(isinstance(p["profile_ids"], list) and len(p["profile_ids"]) == 100 for p in inline_params)
    assert all(id_lists.is_recorded(p["profile_ids"]) and p["profile_ids"]["ids"] == 100 for p in apart_params)


def test_a_workspace_whose_loads_spelled_the_ids_out_still_refreshes_incrementally(monkeypatch):
    inline_steps, inline_view, _ = _refreshed(monkeypatch, 10_000)
    old_steps, old_view, params = _refreshed(monkeypatch, 10_000, then=5)
    assert old_steps == inline_steps       # the load recorded inline is the one the incremental ones build on
    assert old_view.equals(inline_view)
    assert isinstance(params[0]["profile_ids"], list) and id_lists.is_recorded(params[-1]["profile_ids"])


def test_ids_given_as_a_list_a_series_or_arrow_make_the_same_load(few):
    with sandbox.start(seed=3) as box:
        ids = box.examples("audience_platform")["profile_ids"]
        given = {"list": ids, "series": pd.Series(ids, dtype=pd.StringDtype("pyarrow")),
                 "object series": pd.Series(ids, dtype=object), "arrow": pa.array(ids),
                 "chunked": pa.chunked_array([ids[:40], ids[40:]])}
        got = {}
        for how, value in given.items():
            ws = toolkit.Workspace()
            result = ws.connect("audience_platform", **box.credentials("audience_platform")).pull(
                "memberships", progress=False, profile_ids=value)
            got[how] = (result.rows, result.requests, ws.sql("select params from _loads").fetchone()[0],
                        ws.sql("select list(id order by n) from _given_ids").fetchone()[0],
                        view(ws, "audience_platform", "memberships"))
        first = got.pop("list")
        assert first[3] == ids
        for how, same in got.items():
            assert same[:4] == first[:4], how
            assert same[4].equals(first[4]), how


def test_a_list_of_ids_is_written_once_however_many_loads_name_it(few):
    with sandbox.start(seed=3) as box:
        ids = box.examples("audience_platform")["profile_ids"]
        ws = toolkit.Workspace()
        ap = ws.connect("audience_platform", **box.credentials("audience_platform"))
        for _ in range(3):
            ap.pull("memberships", progress=False, profile_ids=ids, refresh=True)
        ap.pull("memberships", progress=False, profile_ids=ids[:50])
        counts = ws.sql("select digest, count(*) from _given_ids group by all order by 2").fetchall()
        assert [n for _, n in counts] == [50, 100]
        assert ap.pull("memberships", progress=False, profile_ids=ids[:50], max_age=3600).cached


def test_listings_say_how_many_ids_a_load_was_given(few):
    with sandbox.start(seed=3) as box:
        ids = box.examples("audience_platform")["profile_ids"]
        ws = toolkit.Workspace()
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull(
            "memberships", progress=False, profile_ids=pd.Series(ids))
        shown = ws.tables().set_index("table").loc["audience_platform.memberships", "params"]
        assert orjson.loads(shown) == {"profile_ids": "100 ids"}
        assert list(ws.history("audience_platform.memberships")["params"]) == ['{"profile_ids":"100 ids"}']


def test_a_short_list_stays_in_the_params_as_it_is():
    with sandbox.start(seed=3) as box:
        ids = box.examples("audience_platform")["profile_ids"][:3]
        ws = toolkit.Workspace()
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull(
            "memberships", progress=False, profile_ids=pa.array(ids))
        assert orjson.loads(ws.sql("select params from _loads").fetchone()[0]) == {"profile_ids": ids}
        assert ws.sql("select count(*) from _given_ids").fetchone()[0] == 0


@pytest.mark.parametrize("bad, said", [(pa.array(["a", None, "b"]), "None among them"),
                                       (pd.Series(["a", "  "], dtype=pd.StringDtype("pyarrow")), "must not be blank")])
def test_ids_given_as_arrow_are_checked_before_anything_is_sent(bad, said):
    with sandbox.start(seed=3) as box:
        ws = toolkit.Workspace()
        ap = ws.connect("audience_platform", **box.credentials("audience_platform"))
        with pytest.raises(ValidationError, match=said):
            ap.pull("memberships", progress=False, profile_ids=bad)
        assert ap.client.requests_sent == 0


@pytest.mark.parametrize("form", ["duckdb", "parquet"])
def test_a_snapshot_keeps_the_ids_its_loads_name(few, tmp_path, form):
    import duckdb
    with sandbox.start(seed=3) as box:
        ids = box.examples("audience_platform")["profile_ids"]
        ws = toolkit.Workspace(tmp_path / "ws.duckdb")
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull(
            "memberships", progress=False, profile_ids=ids)
        target = ws.export(tmp_path / ("snap.duckdb" if form == "duckdb" else "snap"), format=form)
        ws.close()
    con = duckdb.connect()
    source = f"'{target}'" if form == "duckdb" else f"'{target / '_given_ids.parquet'}'"
    if form == "duckdb":
        con.execute(f"ATTACH {source} AS snap (READ_ONLY)")
        source = "snap.main._given_ids"
    assert con.execute(f"SELECT list(id ORDER BY n) FROM {source}").fetchone()[0] == ids
