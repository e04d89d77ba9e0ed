"""Fetchers against the sandbox: every resource typed, page walks through faults, atomic loads, fan-out
failures, the cache, diffs, snapshots, secrets, progress and the translation service below 5.20.

One sandbox per module (scale 1) serves most tests; tests that inject faults or change data get their own.
The clients' rate budget is off and their retry waits are recorded instead of slept: pacing and backoff
have their own tests (tests/http/test_http.py), here they would only cost time.
"""
from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import toolkit
from toolkit import Workspace, WorkspaceError, catalog
from toolkit.errors import ToolkitError
from toolkit.http.session import RateBudget, RetryPolicy, Transport
from toolkit.pull import decoding, fetch, frames, page_drift, plans
from toolkit.sandbox import Fault, available
from toolkit.storage import readback, writer

SERVICES = tuple(catalog.SERVICES)


class Sleeps(list):
    """Records the retry waits instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def connect(ws: Workspace, box, service: str, budget: RateBudget | None = None, **extra) -> toolkit.Client:
    transport = Transport(retry=RetryPolicy(backoff=0.01, max_backoff=0.05), sleep=Sleeps(),
                          budget=budget or RateBudget(None, None))
    return ws.connect(service, **{**box.credentials(service), **extra}, transport=transport)


def only(*services: str, **options):
    """A sandbox serving just these services: it starts in a few milliseconds."""
    emulators = available()
    return toolkit.sandbox.start(emulators={s: emulators[s] for s in services}, **options)


@pytest.fixture(scope="module")
def box():
    with toolkit.sandbox.start(seed=0, scale=1, enforce_limits=False) as sandbox:
        yield sandbox


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


def faults_delta(box, before: dict) -> dict:
    after = box.stats()["faults"]
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}


def last_load(ws: Workspace) -> dict:
    return ws.loads().iloc[-1].to_dict()


def by_key(frame: pd.DataFrame, key) -> pd.DataFrame:
    return frame.sort_values(list(key)).reset_index(drop=True)


# -- 1. every resource, typed -------------------------------------------------------------------------------

def filters_for(box, service: str, name: str) -> dict:
    """What the analyst passes: their own ids (the sandbox's examples stand in) or a required filter."""
    ex = box.examples(service)
    return {
        ("asset_library", "versions"): {"asset_ids": ex.get("asset_ids")},
        ("asset_library", "asset_boards"): {"asset_ids": ex.get("asset_ids")},
        ("asset_library", "guests"): {"board_ids": [ex.get("board_id"), ex.get("parent_board_id")]},
        ("asset_library", "imports"): {"import_ids": ex.get("import_ids")},
        ("audience_platform", "memberships"): {"profile_ids": (ex.get("profile_ids") or [])[:20]},
        ("audience_platform", "profiles"): {"profile_ids": (ex.get("profile_ids") or [])[:20]},
        ("audience_platform", "metrics"): {"metric_ids": ex.get("metric_ids")},
        ("audience_platform", "analytics_audiences"): {"account_id": ex.get("account_id"),
                                                       "property_id": ex.get("property_id")},
    }.get((service, name), {})


@pytest.fixture(scope="module")
def everything(box, tmp_path_factory):
    """A file workspace and `get(service, name)`: the resource fetched into it once per module."""
    path = tmp_path_factory.mktemp("fetch") / "everything.duckdb"
    with Workspace(path) as workspace:
        clients = {s: connect(workspace, box, s) for s in SERVICES}
        fetched: dict[tuple[str, str], pd.DataFrame] = {}

        def get(service: str, name: str) -> pd.DataFrame:
            if (service, name) not in fetched:
                fetched[service, name] = clients[service].fetch(name, **filters_for(box, service, name))
            return fetched[service, name]

        yield workspace, get, path


def check_dtypes(frame: pd.DataFrame, resource) -> None:
    assert list(frame.columns) == [c.name for c in resource.columns] + ["extra"]
    assert isinstance(frame["extra"].dtype, pd.StringDtype)
    for column in resource.columns:
        series, where = frame[column.name], f"{resource.service}.{resource.name}.{column.name}"
        dtype, values = series.dtype, series.dropna()
        if column.dtype == "id":
            wanted = pd.Int64Dtype() if resource.service == "translation" else pd.StringDtype("pyarrow")
            assert dtype == wanted, where
        elif column.dtype == "timestamp":
            assert isinstance(dtype, pd.DatetimeTZDtype) and str(dtype.tz) == "UTC", where
        elif column.dtype == "category":
            assert isinstance(dtype, pd.CategoricalDtype), where
        elif column.dtype == "list" and pd.api.types.is_object_dtype(dtype):  # lists inside structs
            # as DuckDB's .df(): the top a 1-d object array, everything inside Python lists and dicts
            assert all(isinstance(v, np.ndarray) and v.ndim == 1 and not any(holds_arrays(i) for i in v)
                       for v in values), where
        elif column.dtype == "list":
            assert isinstance(dtype, pd.ArrowDtype) and pa.types.is_list(dtype.pyarrow_dtype), where
            assert not readback.lists_in_structs(dtype.pyarrow_dtype), where
            assert all(isinstance(v, list) for v in values), where
        elif column.dtype == "integer":
            assert dtype == pd.Int64Dtype(), where
        elif column.dtype == "number":
            assert pd.api.types.is_float_dtype(dtype), where
        elif column.dtype == "boolean":
            assert dtype == pd.BooleanDtype(), where
        else:
            assert isinstance(dtype, pd.StringDtype), where
            if column.dtype == "json":
                [orjson.loads(v) for v in values]


def holds_arrays(value) -> bool:
    """Whether a numpy array hides anywhere in a cell's lists and dicts."""
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, dict):
        return any(holds_arrays(v) for v in value.values())
    return isinstance(value, list) and any(holds_arrays(v) for v in value)


@pytest.mark.parametrize(("service", "name"), sorted(catalog.RESOURCES), ids=[f"{s}.{n}" for s, n in sorted(catalog.RESOURCES)])
def test_every_resource_is_fetched_with_its_dtypes(everything, service, name):
    ws, get, _ = everything
    resource = catalog.resource(service, name)
    frame = get(service, name)
    assert len(frame) > 0, "the sandbox has data for every resource"
    check_dtypes(frame, resource)
    assert not frame.duplicated(list(resource.key)).any(), f"{resource.key} is not a key"
    load = ws.history(frame.attrs["table"]).iloc[-1]  # where a load narrowed by the ids asked for is
    assert load["status"] == "complete" and load["rows"] == len(frame) and load["requests"] >= 1


@pytest.mark.parametrize(("service", "name"), sorted(catalog.RESOURCES), ids=[f"{s}.{n}" for s, n in sorted(catalog.RESOURCES)])
def test_a_fresh_fetch_gives_what_reading_the_load_back_gives(everything, service, name):
    """A fresh fetch makes its DataFrame from the batches it wrote, not from DuckDB: the same frame."""
    ws, get, _ = everything
    frame = get(service, name)
    stored = ws.read(*frame.attrs["table"].split(".", 1))
    pd.testing.assert_frame_equal(frame, frames.conform(stored, catalog.resource(service, name)))


def test_a_fetch_shows_lists_inside_structs_as_the_workspace_sql_does(everything):
    """Submissions' owners are users with roles lists: pandas showed the roles of a fetch's frame as
    numpy arrays (`astype`, display, `map`), DuckDB's `.df()` as lists, so the refresh check found a
    fetch and the refreshed view different though every value was equal."""
    ws, get, _ = everything
    frame = get("translation", "submissions").sort_values("submission_id").reset_index(drop=True)
    sql = ws.sql("select * from translation.submissions order by submission_id").df()
    owners = frame["owners"].dropna()
    assert len(owners) and any(owner["roles"] for cell in owners for owner in cell), "the sandbox gives roles"
    assert not any(holds_arrays(item) for cell in frame["owners"].to_numpy() for item in cell)
    assert frame["owners"].astype("string").tolist() == sql["owners"].astype("string").tolist()
    assert frame["target_languages"].astype("string").tolist() == sql["target_languages"].astype("string").tolist()


def test_a_load_into_a_widened_column_is_read_back(ws):
    """A stored type the batches do not cast to unchanged (text, after an earlier load) comes from DuckDB."""
    with ws.load("asset_library", "http://x", "tags", {}, ("id",)) as load:
        load.write(pa.table({"id": ["a"], "count": ["many"]}))
    with ws.load("asset_library", "http://x", "tags", {}, ("id",), keep=True) as load:
        load.write(pa.table({"id": ["b", "c"], "count": [3, 4]}))
    frame = ws.frame_of("asset_library", "tags", load.load_id, load.kept)
    assert frame["count"].tolist() == ["3", "4"] and load.kept == []
    pd.testing.assert_frame_equal(frame, ws.read("asset_library", "tags", load.load_id))
    assert ws.loads()["status"].tolist() == ["complete", "complete"]  # widening left no open result


def test_batches_of_one_load_that_arrow_cannot_unify_are_read_back(ws):
    with ws.load("asset_library", "http://x", "tags", {}, ("id",), keep=True) as load:
        load.write(pa.table({"id": ["a"], "count": pa.array([None], pa.string())}))
        load.write(pa.table({"id": ["b"], "count": ["many"]}))
        load.write(pa.table({"id": ["c"], "count": [3]}))
    frame = ws.frame_of("asset_library", "tags", load.load_id, load.kept)
    assert frame["count"].tolist()[1:] == ["many", "3"]
    pd.testing.assert_frame_equal(frame, ws.read("asset_library", "tags", load.load_id))


def test_categoricals_kept_encoded_give_the_frame_reading_back_gives(ws):
    """A fetch keeps a status as its codes; batches with different dictionaries, and categories an
    earlier load set in another order, still give the categoricals reading the load back gives."""
    status = lambda *values: pa.array(values).dictionary_encode()  # noqa: E731
    with ws.load("asset_library", "http://x", "tags", {}, ("id",)) as load:
        load.write(pa.table({"id": ["a"], "status": status("DONE")}))
    with ws.load("asset_library", "http://x", "tags", {}, ("id",), keep=True) as load:
        load.write(pa.table({"id": ["b", "c", "d"], "status": status("READY", None, "DONE")}))
        load.write(pa.table({"id": ["e", "f"], "status": status("NEW", "READY")}))
        assert pa.types.is_dictionary(load.kept[0].schema.field("status").type)
    frame = ws.frame_of("asset_library", "tags", load.load_id, load.kept)
    assert frame["status"].tolist()[:1] + frame["status"].tolist()[2:] == ["READY", "DONE", "NEW", "READY"]
    assert list(frame["status"].cat.categories) == ["DONE", "READY", "NEW"]
    pd.testing.assert_frame_equal(frame, ws.read("asset_library", "tags", load.load_id))


def test_a_status_column_is_kept_encoded_and_gives_the_categorical_conform_gives(ws):
    with ws.load("asset_library", "http://x", "tags", {}, ("id",), keep=True, categoricals=["status"]) as load:
        load.write(pa.table({"id": ["a", "b"], "status": pa.array([None, None], pa.string())}))
        load.write(pa.table({"id": ["c", "d", "e"], "status": ["video", "Audio", "video"]}))
        load.write(pa.table({"id": ["f"], "status": pa.nulls(1)}))
        load.write(pa.table({"id": ["g"], "status": ["audio"]}))
        assert pa.types.is_dictionary(load.kept[1].schema.field("status").type)
    frame = ws.frame_of("asset_library", "tags", load.load_id, load.kept)
    read = ws.read("asset_library", "tags", load.load_id)
    read["status"] = read["status"].astype("category")
    pd.testing.assert_frame_equal(frame, read)
    assert list(frame["status"].cat.categories) == ["Audio", "audio", "video"]


def test_a_load_without_a_column_the_table_has_reads_it_as_null(ws):
    with ws.load("asset_library", "http://x", "tags", {}, ("id",)) as load:
        load.write(pa.table({"id": ["a"], "color": ["red"], "at": pa.array([0], pa.timestamp("ms", tz="UTC"))}))
    with ws.load("asset_library", "http://x", "tags", {}, ("id",), keep=True) as load:
        load.write(pa.table({"id": ["b"], "at": pa.array([1], pa.timestamp("ms", tz="UTC"))}))
        load.write(pa.table({"id": ["c"], "at": pa.array([2], pa.timestamp("ms", tz="UTC"))}))
    frame = ws.frame_of("asset_library", "tags", load.load_id, load.kept)
    assert frame["id"].tolist() == ["b", "c"] and frame["color"].isna().all()
    pd.testing.assert_frame_equal(frame, ws.read("asset_library", "tags", load.load_id))


def test_nothing_of_a_flattened_object_is_dropped(everything, box):
    _, get, _ = everything
    assets = get("asset_library", "assets").set_index("id")
    wire = toolkit.connect("asset_library", **box.credentials("asset_library")).rows("list_assets")
    assert len(wire) == len(assets)
    declared = {frames.source_of(c)[1] for c in catalog.resource("asset_library", "assets").columns
                if frames.source_of(c)[0] == "coverVersion"}
    for record in wire:
        extra = assets.loc[record["id"], "extra"]
        kept = set(orjson.loads(extra).get("coverVersion", {})) if isinstance(extra, str) else set()
        assert set(record["coverVersion"]) <= declared | kept, record["id"]
        assert not declared & kept           # what a column has is not repeated in extra
    assert assets["cover_version_urls_thumbnail"].str.startswith("https://").all()


@pytest.mark.parametrize("service, name", [(r.service, r.name) for r in catalog.RESOURCES.values()
                                           if not r.fan_out and r.chunks is None and r.settings is None
                                           and catalog.ACTIONS[r.action].paging is not None])
def test_one_pass_conversion_matches_column_by_column(box, service, name, monkeypatch):
    """Arrow's converter reads the declared scalars of every paged resource's records in one pass, and
    the page decoder reads them into Structs; both give exactly what the general path gives, and the
    declared wire types and fields fit the sandbox's."""
    resource = catalog.resource(service, name)
    action = catalog.ACTIONS[resource.action]
    client = toolkit.connect(service, **box.credentials(service))
    _, params = plans.split_filters(client, resource, action, filters_for(box, service, name))
    page = next(client.pages(action, **params))
    rows = decoding.rows_of(resource, action, page.body)
    assert rows, f"the sandbox has {name}"
    assert frames._scalars(rows, resource, {}), "a record did not fit the declared types"
    fast = frames.to_arrow(rows, resource)
    # the same page decoded straight into the Resource's Structs gives the same table; the decoder
    # declines a page with something for `extra` (a field no column reads), and only such a page
    body = decoding.page_decoder(resource, action.paging)(page.response.content)
    assert (body is None) == (page_drift.extra_column(rows, resource).null_count < len(rows))
    if body is not None:
        decoded = decoding.rows_of(resource, action, body)
        assert isinstance(decoded, decoding.Rows) and len(decoded) == len(rows)
        assert frames.to_arrow(decoded, resource).equals(fast)
    monkeypatch.setattr(frames, "_scalars", lambda *args: {})
    assert frames.to_arrow(rows, resource).equals(fast)


def test_the_decoder_declines_a_page_with_a_value_of_another_type(box):
    """A number where text is declared, or text where a boolean is: the page goes the general way."""
    resource = catalog.resource("audience_platform", "notifications")
    action = catalog.ACTIONS[resource.action]
    client = toolkit.connect("audience_platform", **box.credentials("audience_platform"))
    page = next(client.pages(action, size=5))
    decode = decoding.page_decoder(resource, action.paging)
    assert decode(page.response.content) is not None
    for field, value in (("message", 5), ("read", "no"), ("severity", ["INFO"])):
        body = orjson.loads(page.response.content)
        records = decoding.rows_of(resource, action, body)
        records[2] = {**records[2], field: value}
        items = next(key for key, held in body.items() if isinstance(held, list))
        body[items] = records
        assert decode(orjson.dumps(body)) is None, field


def test_an_empty_result_keeps_the_declared_columns_and_dtypes(box, ws):
    for service, name, none in (("translation", "submissions", {"name": "no such submission"}),
                                ("asset_library", "assets", {"search": "no such asset anywhere"})):
        frame = connect(ws, box, service).fetch(name, **none)
        assert len(frame) == 0
        check_dtypes(frame, catalog.resource(service, name))


# -- 2. page walks against faults -------------------------------------------------------------------------

WALKS = {  # style: service, resource, its list action, a page size small enough for ten pages or so
    "cursor": ("asset_library", "assets", "list_assets", {"limit": 25}),
    "offset": ("audience_platform", "notifications", "list_notifications", {"size": 25}),
    "page_number": ("translation", "submissions", "list_submissions", {"page_size": 8}),
    "page_number_from_1": ("media_review", "teams", "list_teams", {"page_size": 4}),
}
STUCK = ("audience_platform", "get_profile_audiences")  # a fan-out member that fails five times, twice


@pytest.fixture(scope="module")
def faulty():
    """A 429 (Retry-After: 0) on the 3rd request and a 500 on the 6th of each walk's action."""
    faults = [Fault(kind, on=(n,), service=service, action=action, retry_after=0)
              for service, _, action, _ in WALKS.values() for kind, n in (("429", 3), ("500", 6))]
    faults.append(Fault("500", on=tuple(range(1, 11)), service=STUCK[0], action=STUCK[1]))
    with toolkit.sandbox.start(seed=0, scale=1, enforce_limits=False, faults=faults) as sandbox:
        yield sandbox


@pytest.mark.parametrize("style", WALKS)
def test_a_walk_through_a_429_and_a_500_gives_exactly_the_rows(faulty, ws, style):
    service, name, _, page = WALKS[style]
    resource = catalog.resource(service, name)
    client = connect(ws, faulty, service)
    before, logins = faulty.stats()["faults"], getattr(client.client.auth, "fetches", 0)
    walked = client.fetch(name, **page)
    # the translation login goes through the transport and counts as a request of the load that made it
    logins = getattr(client.client.auth, "fetches", 0) - logins
    assert faults_delta(faulty, before) == {"429": 1, "500": 1}
    assert len(client.transport.sleep) == 2, "each fault was retried once"
    faulted = last_load(ws)
    assert faulted["status"] == "complete"

    before = faulty.stats()["faults"]
    clean = client.fetch(name, refresh=True, **page)  # the faulted request numbers are behind us
    assert faults_delta(faulty, before) == {}
    pages = last_load(ws)["requests"]
    assert pages >= 5 and faulted["requests"] == pages + 2 + logins
    whole = client.fetch(name)  # the service's largest page: one or two requests
    assert last_load(ws)["requests"] < pages

    assert not walked.duplicated(list(resource.key)).any()
    assert len(walked) == len(whole) == faulted["rows"]
    assert math.ceil(len(whole) / next(iter(page.values()))) <= pages
    pd.testing.assert_frame_equal(by_key(walked, resource.key), by_key(clean, resource.key))
    pd.testing.assert_frame_equal(by_key(walked, resource.key), by_key(whole, resource.key))


@pytest.mark.parametrize("style", ["offset", "page_number", "page_number_from_1"])
def test_pages_asked_ahead_give_the_rows_and_requests_of_a_walk_one_at_a_time(box, style):
    service, name, _, page = WALKS[style]
    with Workspace() as one, Workspace() as other:
        sequential = connect(one, box, service).fetch(name, workers=1, **page)
        ahead = connect(other, box, service).fetch(name, workers=6, **page)
        pd.testing.assert_frame_equal(ahead, sequential)
        assert last_load(other)["requests"] == last_load(one)["requests"] >= 5   # none wasted: totals known


# -- 3. interrupted loads ---------------------------------------------------------------------------------

def break_on_third_page(monkeypatch, client, where: str, error: BaseException) -> None:
    if where == "to_arrow":
        real, calls = frames.to_arrow, []

        def to_arrow(*args, **kwargs):
            calls.append(1)
            if len(calls) == 3:
                raise error
            return real(*args, **kwargs)

        monkeypatch.setattr(frames, "to_arrow", to_arrow)
    else:
        pages = client.client.pages        # the connection's client walks the pages for fetch

        def broken(*args, **kwargs):
            for number, page in enumerate(pages(*args, **kwargs), 1):
                if number == 3:
                    raise error
                yield page

        monkeypatch.setattr(client.client, "pages", broken)


@pytest.mark.parametrize("where", ["to_arrow", "pages"])
@pytest.mark.parametrize("error", [RuntimeError("page 3 broke"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_an_interrupted_load_leaves_no_visible_rows(box, ws, monkeypatch, where, error):
    monkeypatch.setattr(writer, "BATCH_ROWS", 10)  # every page is written before the failure
    client = connect(ws, box, "asset_library")
    break_on_third_page(monkeypatch, client, where, error)
    with pytest.raises(type(error)):
        client.fetch("assets", limit=25)
    with pytest.raises(duckdb.CatalogException):  # the table and view were never committed
        ws.sql("select count(*) from asset_library.assets").fetchall()
    with pytest.raises(WorkspaceError):
        ws.read("asset_library", "assets")
    [load] = ws.loads().to_dict("records")
    assert load["rows"] == 0
    if isinstance(error, KeyboardInterrupt):
        # Ctrl-C is recorded interrupted, as the one line the analyst saw (toolkit.errors.Interrupted), not as
        # failed with "Interrupted: interrupted: ..." (issue 45): nothing of a page walk kept
        assert load["status"] == "interrupted"
        assert load["error"] == ("interrupted: nothing of asset_library.assets kept (a paged walk is not "
                                 "checkpointed); run the same pull again to start it over")
    else:
        assert load["status"] == "failed" and "RuntimeError: page 3 broke" in load["error"]
        # where typing breaks, the walk's latest page is still kept back (it carries what the walk's end says)
        assert load["error"].endswith("(after 25 rows in 1 batches, rolled back)")


@pytest.mark.parametrize("error", [RuntimeError("page 3 broke"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_an_interrupted_load_leaves_the_previous_load_visible(box, ws, monkeypatch, error):
    monkeypatch.setattr(writer, "BATCH_ROWS", 10)
    client = connect(ws, box, "asset_library")
    first = client.fetch("assets", limit=100)
    break_on_third_page(monkeypatch, client, "pages", error)
    with pytest.raises(type(error)):
        client.fetch("assets", limit=25)
    assert ws.sql("select count(*) from asset_library.assets").fetchall() == [(len(first),)]
    assert ws.sql('select count(*) from asset_library."assets__loads"').fetchall() == [(len(first),)]
    read = frames.conform(ws.read("asset_library", "assets"), catalog.resource("asset_library", "assets"))
    pd.testing.assert_frame_equal(read, first)
    assert ws.loads()["status"].tolist() == ["complete", "interrupted" if isinstance(error, KeyboardInterrupt)
                                             else "failed"]


# -- 4. fan-out failures ------------------------------------------------------------------------------------

def test_a_member_that_keeps_failing_fails_the_load_unless_skipped(faulty, ws):
    client = connect(ws, faulty, "audience_platform")
    profile = faulty.examples("audience_platform")["profile_ids"][0]
    before = faulty.stats()["faults"]
    with pytest.raises(ToolkitError, match=f"profile_id={profile} failed"):
        client.fetch("memberships", profile_ids=[profile])
    assert faults_delta(faulty, before) == {"500": 5}, "five tries, then it gave up"
    assert last_load(ws)["status"] == "failed" and "500 Internal Server Error" in last_load(ws)["error"]
    with pytest.raises(WorkspaceError):
        ws.read("audience_platform", "memberships")

    before = faulty.stats()["faults"]
    result = client.pull("memberships", profile_ids=[profile], on_error="skip")
    assert faults_delta(faulty, before) == {"500": 5}
    assert (result.rows, result.failed_ids) == (0, [profile])
    load = last_load(ws)
    assert load["status"] == "complete" and list(load["failed_ids"]) == [profile]


def test_a_missing_member_fails_the_load_and_nothing_is_written(box, ws, monkeypatch):
    monkeypatch.setattr(writer, "BATCH_ROWS", 1)  # the members that came back were written in batches
    client = connect(ws, box, "audience_platform")
    profiles = box.examples("audience_platform")["profile_ids"][:8]
    with pytest.raises(ToolkitError, match="profile_id=no-such-profile failed.*404"):
        client.fetch("memberships", profile_ids=[*profiles, "no-such-profile"])
    assert last_load(ws)["status"] == "failed" and last_load(ws)["rows"] == 0
    with pytest.raises(duckdb.CatalogException):
        ws.sql('select * from audience_platform."memberships__loads"').fetchall()


def test_a_missing_member_is_skipped_and_recorded_with_on_error_skip(box, ws):
    client = connect(ws, box, "audience_platform")
    profiles = box.examples("audience_platform")["profile_ids"][:8]
    complete = client.fetch("memberships", profile_ids=profiles)
    skipped = client.fetch("memberships", profile_ids=[*profiles[:4], "no-such-profile", *profiles[4:]],
                           on_error="skip")
    key = ["profile_id", "audience_id"]
    pd.testing.assert_frame_equal(by_key(skipped, key), by_key(complete, key))
    loads = ws.loads()
    assert loads["status"].tolist() == ["complete", "complete"]
    assert [list(ids) for ids in loads["failed_ids"]] == [[], ["no-such-profile"]]
    assert ws.history("audience_platform.memberships")["failed_ids"].map(list).tolist()[-1] == ["no-such-profile"]


@pytest.mark.parametrize("style", ["cursor", "offset"])
def test_a_failed_load_records_the_requests_it_made(ws, style):
    service, name, action, page = WALKS[style]
    # the third page keeps failing with a 500: two pages, then the retries of the third, then it gives up
    fault = Fault("500", on=tuple(range(3, 30)), service=service, action=action)
    with only(service, seed=0, faults=[fault]) as sandbox:
        client = connect(ws, sandbox, service)
        before = sandbox.stats()["requests"]
        with pytest.raises(ToolkitError, match="500"):
            client.pull(name, workers=1, **page)
        sent = sandbox.stats()["requests"] - before
    load = last_load(ws)
    assert load["status"] == "failed" and sent >= 4
    assert load["requests"] == sent == client.requests_sent
    assert ws.history(f"{service}.{name}")["requests"].tolist() == [sent]


# -- 5. the cache ---------------------------------------------------------------------------------------------

def test_max_age_reuses_a_load_refresh_and_new_filters_pull_again(box, ws):
    client = connect(ws, box, "asset_library")
    requests = lambda: box.stats()["requests"]  # noqa: E731
    first = client.fetch("tags")
    n = requests()
    again = client.fetch("tags", max_age=3600)
    assert requests() == n and len(ws.loads()) == 1
    pd.testing.assert_frame_equal(again, first)
    assert client.pull("tags", max_age=3600).cached

    client.fetch("tags", max_age=3600, refresh=True)
    assert requests() == n + 1 and len(ws.loads()) == 2

    hero = first["name"].iloc[0]
    named = client.fetch("tags", max_age=3600, name=hero)
    assert requests() == n + 2 and len(ws.loads()) == 3
    assert hero in named["name"].tolist() and len(named) < len(first)
    assert orjson.loads(last_load(ws)["params"]) == {"name": hero}
    client.fetch("tags", max_age=3600, name=hero)
    client.fetch("tags", max_age=3600)
    assert requests() == n + 2, "each filter set has its own cached load"

    assert client.pull("tags", max_age=0.000001).cached is False  # older than that: pulled again
    assert requests() == n + 3

    ws.mark_stale("asset_library", "tags")
    client.fetch("tags", max_age=3600)
    assert requests() == n + 4
    assert ws.loads()["status"].tolist().count("stale") == 4


def test_fetch_without_max_age_always_pulls(box, ws):
    client = connect(ws, box, "audience_platform")
    n = box.stats()["requests"]
    client.fetch("health")
    client.fetch("health")
    assert box.stats()["requests"] == n + 2


# -- 6. diffs -----------------------------------------------------------------------------------------------

def test_diff_names_the_added_removed_and_changed_boards(ws):
    with only("asset_library", seed=0) as sandbox:
        client = connect(ws, sandbox, "asset_library")
        before = client.fetch("boards")
        first = last_load(ws)["load_id"]
        parents = set(before["parent_board_id"].dropna())
        leaves = [b for b in before["id"] if b not in parents]
        renamed, deleted = before["id"][~before["id"].isin([leaves[0]])].iloc[0], leaves[0]
        old_title = before.set_index("id").loc[renamed, "title"]
        client.call("asset_library.update_board", board_id=renamed, title="Renamed in the diff test")
        created = client.call("asset_library.create_board", title="Made in the diff test")
        client.call("asset_library.delete_board", board_id=deleted)
        after = client.fetch("boards")
        second = last_load(ws)["load_id"]

    assert len(after) == len(before)
    diff = ws.diff("asset_library.boards")
    assert (diff.before, diff.after, diff.key) == (first, second, ["id"])
    assert diff.added["id"].tolist() == [created["id"]]
    assert diff.added["title"].tolist() == ["Made in the diff test"]
    assert diff.removed["id"].tolist() == [deleted]
    assert diff.changed["id"].tolist() == [renamed]
    assert list(diff.changed["changed_columns"].iloc[0]) == ["title", "updated_at"]  # the service stamps it
    assert diff.changed[["title_before", "title_after"]].iloc[0].tolist() == [old_title,
                                                                                "Renamed in the diff test"]
    assert dict(diff.columns) == {"title": 1, "updated_at": 1}
    assert "1 added, 1 removed, 1 changed" in diff.summary()
    explicit = ws.diff("asset_library.boards", first, second)
    assert explicit.added["id"].tolist() == [created["id"]] and explicit.removed["id"].tolist() == [deleted]
    backwards = ws.diff("boards", second, first)
    assert backwards.added["id"].tolist() == [deleted] and backwards.removed["id"].tolist() == [created["id"]]


# -- 7. snapshots -----------------------------------------------------------------------------------------

SNAPSHOT = (("media_review", "teams"), ("asset_library", "tags"), ("asset_library", "boards"),
            ("audience_platform", "audiences"), ("translation", "submissions"))


@pytest.fixture
def filled(box, tmp_path):
    with Workspace(tmp_path / "work.duckdb") as workspace:
        clients = {s: connect(workspace, box, s) for s in SERVICES}
        fetched = {(s, n): clients[s].fetch(n) for s, n in SNAPSHOT}
        clients["asset_library"].fetch("tags")  # two loads of one resource: the snapshot holds the latest
        yield workspace, fetched


def test_an_exported_snapshot_opens_with_plain_duckdb_and_open_snapshot(filled, tmp_path):
    ws, fetched = filled
    path = ws.export(tmp_path / "snapshot.duckdb")
    with duckdb.connect(str(path), read_only=True) as con:
        tables = {(s, t) for s, t in con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database()")
            .fetchall()}
        assert tables == {*SNAPSHOT, ("main", "_loads"), ("main", "_manifest")}
        for (service, name), frame in fetched.items():
            assert con.execute(f"select count(*) from {service}.{name}").fetchall() == [(len(frame),)]
        manifest = {(s, r): n for s, r, n in con.execute('select service, resource, "rows" from _manifest')
                    .fetchall()}
        assert manifest == {key: len(frame) for key, frame in fetched.items()}
        assert con.execute("select count(*) from _loads").fetchall() == [(len(SNAPSHOT),)]
    with toolkit.open_snapshot(path) as snapshot:
        assert len(snapshot.manifest()) == len(SNAPSHOT)
        assert snapshot.manifest()["toolkit_version"].unique().tolist() == [toolkit.__version__]
        for (service, name), frame in fetched.items():
            resource = catalog.resource(service, name)
            pd.testing.assert_frame_equal(frames.conform(snapshot.read(service, name), resource), frame)


def test_a_parquet_export_reads_back_with_pyarrow_and_duckdb(filled, tmp_path):
    ws, fetched = filled
    folder = ws.export(tmp_path / "snapshot", format="parquet")
    manifest = orjson.loads((folder / "manifest.json").read_bytes())
    assert {(r["service"], r["resource"]) for r in manifest["resources"]} == set(fetched)
    assert (folder / "_loads.parquet").exists()
    for (service, name), frame in fetched.items():
        file = folder / service / name / "data.parquet"
        table = pq.read_table(file)
        assert table.num_rows == len(frame) and table.column_names == list(frame.columns)
        assert duckdb.sql(f"select count(*) from read_parquet('{file}')").fetchall() == [(len(frame),)]
    with toolkit.open_snapshot(folder) as snapshot:
        for (service, name), frame in fetched.items():
            resource = catalog.resource(service, name)
            pd.testing.assert_frame_equal(frames.conform(snapshot.read(service, name), resource), frame)


# -- 8. no secret anywhere ------------------------------------------------------------------------------------

def text_of(con: duckdb.DuckDBPyConnection) -> str:
    """Every value of every table and view, as text."""
    relations = con.execute("select schema_name, table_name from duckdb_tables() where database_name = "
                            "current_database() union all select schema_name, view_name from duckdb_views() "
                            "where database_name = current_database() and not internal").fetchall()
    return "\n".join(con.sql(f'select coalesce(string_agg(cast(r as varchar), chr(10)), \'\') '
                             f'from "{s}"."{t}" r').fetchall()[0][0] for s, t in relations)


def test_no_secret_in_the_workspace_file_or_its_exports(everything, box, tmp_path):
    ws, get, path = everything
    for service, name in catalog.RESOURCES:
        get(service, name)
    exports = [ws.export(tmp_path / "secrets.duckdb"), ws.export(tmp_path / "secrets-parquet", format="parquet")]
    ws.sql("CHECKPOINT")
    secrets = box.secrets()  # after the pulls: tokens the translation service issued are in it
    assert len(secrets) > 5
    files = [path, Path(f"{path}.wal"), exports[0], *exports[1].rglob("*")]
    raw = b"".join(f.read_bytes() for f in files if f.is_file())
    with ws.hold(), ws._file.held() as con:
        text = text_of(con) + (exports[1] / "manifest.json").read_text()
    with duckdb.connect(str(exports[0]), read_only=True) as con:
        text += text_of(con)
    for file in exports[1].rglob("*.parquet"):
        text += str(pq.read_table(file).to_pylist())
    assert "configurations" in text and "***" in text  # the masked configurations are in there
    for secret in secrets:
        assert secret.encode() not in raw, f"{secret[:6]}… in the raw bytes"
        assert secret not in text, f"{secret[:6]}… in a stored value"


# -- 9. progress ----------------------------------------------------------------------------------------

def test_progress_shows_rows_and_requests_on_stderr_when_asked(box, ws, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TOOLKIT_PROGRESS", raising=False)
    made = fetch.progress_bar

    def eager(*args, **kwargs):  # draw on every page, however fast the sandbox answers
        bar = made(*args, **kwargs)
        bar.mininterval = 0
        return bar

    monkeypatch.setattr(fetch, "progress_bar", eager)
    client = connect(ws, box, "audience_platform")
    client.fetch("notifications", size=50, progress=True)
    err = capsys.readouterr().err
    assert "audience_platform.notifications" in err and "pages" in err
    assert "rows=" in err and "requests=" in err


def test_a_walk_held_back_by_the_rate_budget_says_so_and_how_long_is_left(box, ws, capsys, monkeypatch):
    """300 versions at 15 requests a second took 21 s and never said why."""
    from toolkit.http.session import RateBudget
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TOOLKIT_PROGRESS", raising=False)
    made = fetch.progress_bar

    def eager(*args, **kwargs):
        bar = made(*args, **kwargs)
        bar.mininterval = 0
        return bar

    monkeypatch.setattr(fetch, "progress_bar", eager)
    client = connect(ws, box, "asset_library", budget=RateBudget(None, 10))
    ids = client.fetch("assets", progress=False)["id"].tolist()[:16]
    client = connect(ws, box, "asset_library", budget=RateBudget(4, 10))
    client.fetch("versions", asset_ids=ids, progress=True)
    err = capsys.readouterr().err
    assert "4 requests/s, the service's limit; about " in err and " s left" in err
    client = connect(ws, box, "asset_library", budget=RateBudget(None, 10))
    client.fetch("versions", asset_ids=ids, progress=True, refresh=True)
    assert "the service's limit" not in capsys.readouterr().err, "not said when the budget holds nothing back"


def test_progress_is_silent_by_default_under_pytest(box, ws, capsys):
    client = connect(ws, box, "audience_platform")
    client.fetch("notifications", size=50)
    client.fetch("memberships", profile_ids=box.examples("audience_platform")["profile_ids"][:5])
    client.fetch("notifications", size=50, progress=False)
    assert capsys.readouterr() == ("", "")


# -- 10. translation targets below 5.20 -------------------------------------------------------------------------

def test_targets_below_5_20_go_per_submission_and_give_the_same_rows(box, ws):
    resource = catalog.resource("translation", "targets")
    modern = connect(ws, box, "translation")
    with only("translation", seed=0, system_version="5.19") as old:
        legacy = connect(ws, old, "translation", system_version="5.19")
        assert old.credentials("translation")["system_version"] == "5.19"
        submissions = legacy.fetch("submissions")
        rows = legacy.fetch("targets")
        by_action = old.stats()["by_action"]
        picked = legacy.fetch("targets", submission_ids=submissions["submission_id"][:5],
                              status=["READY", "COMPLETED"])
    assert not any("list_targets" in a for a in by_action)
    per_submission = sum(n for a, n in by_action.items() if "list_submission_targets" in a)
    assert per_submission == len(submissions) > 1

    n = box.stats()["by_action"]
    expected = modern.fetch("targets")
    used = {a: c - n.get(a, 0) for a, c in box.stats()["by_action"].items() if c != n.get(a, 0)}
    assert any("list_targets" in a for a in used) and not any("list_submission_targets" in a for a in used)
    declared = [c.name for c in resource.columns]
    assert len(rows) == len(expected) > 0
    pd.testing.assert_frame_equal(by_key(rows, resource.key)[declared], by_key(expected, resource.key)[declared])

    # the service's filter words are not the targets' statuses: COMPLETED finds PROCESSED targets
    wanted = expected[expected["submission_id"].isin(submissions["submission_id"][:5])
                      & expected["status"].isin(["READY", "PROCESSED"])]
    assert len(picked) == len(wanted) > 0
    pd.testing.assert_frame_equal(by_key(picked, resource.key)[declared],
                                  by_key(wanted, resource.key)[declared], check_categorical=False)
    # the same filter through /targets (5.20 and later)
    modern_picked = modern.fetch("targets", submission_ids=submissions["submission_id"][:5],
                                 status=["READY", "COMPLETED"])
    pd.testing.assert_frame_equal(by_key(modern_picked, resource.key)[declared],
                                  by_key(wanted, resource.key)[declared], check_categorical=False)


def test_progress_false_holds_for_the_parent_a_fetch_pulls_first(box, ws, monkeypatch):
    """fetch("targets", progress=False) on a workspace without submissions showed the submissions'
    bar all the same."""
    asked = []
    real = fetch.progress_bar

    def recorded(total, description, unit, show=None):
        asked.append((description, show))
        return real(total, description, unit, show)

    monkeypatch.setattr(fetch, "progress_bar", recorded)
    connect(ws, box, "translation").fetch("targets", progress=False)
    assert asked == [("translation.submissions", False), ("translation.targets", False)]


def test_a_notebook_line_says_the_time_left_once():
    """Issue 45: "about 14 s left · 6.2 s, 00:14 left" said it twice."""
    from toolkit.pull.progress import notebook_line
    limited = ("\rasset_library.versions: 6/20 ids (30%) · rows=6, requests=6 · 4 requests/s, the service's limit; "
               "about 14 s left · 6.2 s, 00:14 left")
    assert notebook_line(limited) == limited.strip().removesuffix(", 00:14 left")
    plain = "\rtranslation.targets: 1/4 ids (25%) · rows=5 · 0.6 s, 00:02 left"
    assert notebook_line(plain) == plain.strip()            # the bar's own, the one time left said
    assert notebook_line("\rtranslation.targets: 4/4 ids (100%) · , 1.0 s, 00:00 left") == \
        "translation.targets: 4/4 ids (100%) · 1.0 s"
