"""Drift (issue 16, point 1): answers that differ from the declared shapes are kept and reported per
load, or refused with contract="freeze". Clients here answer fixed JSON (`responses` stubs); the
sandbox's drifting mode has its own tests at the end of the module."""
from __future__ import annotations

import pickle
import re
import warnings

import orjson
import pandas as pd
import pyarrow as pa
import pytest
import responses
from stubbed_services import BASE, CREDENTIALS, make_client

import toolkit
from toolkit import Workspace, catalog
from toolkit.errors import ContractError, DriftWarning, ValidationError
from toolkit.pull import decoding, frames, typist
from toolkit.storage.store import Store

NOTIFICATIONS = re.compile(re.escape(BASE["audience_platform"]) + r"/.*notifications")
ASSETS = re.compile(re.escape(BASE["asset_library"]) + r"/assets")


def note(i: int, **changes) -> dict:
    record = {"id": f"n{i}", "type": "IMPORT", "message": f"message {i}", "severity": "INFO",
              "created": "2026-11-02T09:00:00Z", "read": False, "source": "system", "details": {"n": i}}
    return {key: value for key, value in {**record, **changes}.items() if value is not ...}


def answer(stub, records: list, **envelope) -> None:
    """One page of notifications (Offset paging: {list, offset, pageSize, totalSize})."""
    body = {"list": records, "offset": 0, "pageSize": len(records), "totalSize": len(records), **envelope}
    stub.add(responses.GET, NOTIFICATIONS, json={k: v for k, v in body.items() if v is not ...})


def asset(i: int, **cover) -> dict:
    version = {"id": f"v{i}", "fileName": f"f{i}.png", "ext": "png", "title": None, "description": None,
               "summary": None, "type": "image", "size": 100 + i, "createdAt": "2026-11-02T09:00:00Z",
               "uploadedAt": None, "updatedAt": None, "fileCreatedAt": None, "width": 10, "height": 10,
               "duration": None, "tags": ["a"], "smartTags": [],
               "urls": {"thumbnail": "https://x/t.png", "preview": "https://x/p.png"}, **cover}
    return {"id": f"a{i}", "coverVersion": version, "customFields": None}


def answer_assets(stub, records: list) -> None:
    stub.add(responses.GET, ASSETS, json={"data": records, "pagination": {"hasMore": False, "cursor": None},
                                          "total": len(records)})


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


def pull(ws: Workspace, service: str, name: str, **options):
    conn = toolkit.connection.connection.bind(make_client(service), ws)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        result = conn.pull(name, progress=False, **options)
    return result, [w for w in said if issubclass(w.category, DriftWarning)]


def drift_of(ws: Workspace, load_id: str) -> dict:
    frame = ws.drift(load_id=load_id)
    return {(row.field, row.kind): (int(row.count), None if pd.isna(row.example) else row.example)
            for row in frame.itertuples()}


def extra_of(ws: Workspace, table: str) -> dict:
    return {row[0]: orjson.loads(row[1]) if row[1] else None
            for row in ws.sql(f"select id, extra from {table} order by id").fetchall()}


# -- evolve: kept, recorded, warned once per load ---------------------------------------------------

def test_an_answer_that_fits_records_no_drift_and_warns_nothing(stub, ws):
    answer(stub, [note(1), note(2)])
    result, said = pull(ws, "audience_platform", "notifications")
    assert said == [] and result.drift == []
    assert ws.sql("select drift from _loads").fetchone()[0] == "[]"
    frame = ws.drift()
    assert frame.empty and list(frame.columns) == ["load_id", "service", "resource", "field", "kind", "count",
                                                    "example"]


def test_an_undeclared_field_is_kept_in_extra_counted_and_named_by_one_warning(stub, ws):
    answer(stub, [note(1, priority=3), note(2, priority=5), note(3)])
    result, said = pull(ws, "audience_platform", "notifications")
    assert extra_of(ws, "audience_platform.notifications")["n1"] == {"priority": 3}
    assert drift_of(ws, result.load_id) == {("priority", "undeclared"): (2, "3")}
    assert len(said) == 1 and result.load_id in str(said[0].message) and "priority" in str(said[0].message)
    answer(stub, [note(1, priority=3)])
    again, said = pull(ws, "audience_platform", "notifications")
    assert len(said) == 1 and again.load_id in str(said[0].message)       # once per load, each load
    assert set(ws.drift("audience_platform.notifications")["load_id"]) == {result.load_id, again.load_id}


def test_a_value_of_another_type_is_kept_as_its_wire_value_and_the_column_keeps_its_type(stub, ws):
    answer(stub, [note(1, read="yes", created="soon"), note(2)])
    result, _ = pull(ws, "audience_platform", "notifications")
    row = ws.sql("select read, created is null, extra from audience_platform.notifications where id = 'n1'"
                 ).fetchone()
    assert row[0] is None and row[1]
    assert orjson.loads(row[2]) == {"read": "yes", "created": "soon"}
    assert drift_of(ws, result.load_id) == {("read", "type"): (1, '"yes"'), ("created", "type"): (1, '"soon"')}
    kinds = dict(ws.sql("select column_name, data_type from duckdb_columns() where table_name = "
                        "'notifications__versions'").fetchall())
    assert kinds["read"] == "BOOLEAN" and kinds["created"].startswith("TIMESTAMP")


def test_an_integer_column_that_sees_text_or_a_fraction_loads_and_loses_nothing(stub, ws):
    """Before: "42" failed the load (Arrow could not convert it) and 1.5 was truncated to 1."""
    answer_assets(stub, [asset(1), asset(2)])
    pull(ws, "asset_library", "assets")
    answer_assets(stub, [asset(1, size="42"), asset(2, size=1.5), asset(3)])
    result, _ = pull(ws, "asset_library", "assets")
    sizes = dict(ws.sql("select id, cover_version_size from asset_library.assets").fetchall())
    assert sizes == {"a1": None, "a2": None, "a3": 103}
    extra = extra_of(ws, "asset_library.assets")
    assert extra["a1"] == {"coverVersion": {"size": "42"}} and extra["a2"] == {"coverVersion": {"size": 1.5}}
    assert drift_of(ws, result.load_id)[("coverVersion.size", "type")][0] == 2


def test_an_object_where_a_list_is_declared_is_kept_on_the_decoders_fast_path(stub, ws):
    """A list column takes any value in the decoded Structs: the object goes to extra, not into a text column."""
    records = [asset(1, tags={"label": "x"}), asset(2)]
    resource = catalog.resource("asset_library", "assets")
    page = orjson.dumps({"data": records, "pagination": {"hasMore": False, "cursor": None}})
    assert decoding.page_decoder(resource, catalog.ACTIONS[resource.action].paging)(page) is not None
    answer_assets(stub, records)
    result, _ = pull(ws, "asset_library", "assets")
    assert extra_of(ws, "asset_library.assets")["a1"] == {"coverVersion": {"tags": {"label": "x"}}}
    assert ws.sql("select cover_version_tags from asset_library.assets order by id").fetchall() == [(None,), (["a"],)]
    assert drift_of(ws, result.load_id) == {("coverVersion.tags", "type"): (1, '{"label":"x"}')}


def test_a_flattened_object_sent_as_text_is_kept_whole(stub, ws):
    answer_assets(stub, [{"id": "a1", "coverVersion": "gone", "customFields": None}, asset(2)])
    result, _ = pull(ws, "asset_library", "assets")
    assert extra_of(ws, "asset_library.assets")["a1"] == {"coverVersion": "gone"}
    assert ("coverVersion", "type") in drift_of(ws, result.load_id)


def test_a_declared_field_no_record_sends_is_missing_and_one_sent_as_null_is_not(stub, ws):
    answer(stub, [note(1, source=..., read=None), note(2, source=..., read=None)])
    result, _ = pull(ws, "audience_platform", "notifications")
    assert drift_of(ws, result.load_id) == {("source", "missing"): (2, None)}
    answer(stub, [note(1, source=...), note(2)])     # sent by one record: not missing
    again, _ = pull(ws, "audience_platform", "notifications")
    assert drift_of(ws, again.load_id) == {}


def test_a_categorical_value_the_table_never_held_is_drift_from_the_second_load_on(stub, ws):
    answer(stub, [note(1), note(2, severity="WARN")])
    first, _ = pull(ws, "audience_platform", "notifications")
    assert drift_of(ws, first.load_id) == {}
    answer(stub, [note(1, severity="CATASTROPHIC"), note(2, severity="WARN"), note(3, severity="CATASTROPHIC")])
    second, _ = pull(ws, "audience_platform", "notifications")
    assert drift_of(ws, second.load_id) == {("severity", "category"): (2, '"CATASTROPHIC"')}


def answer_imports(stub, statuses: dict) -> None:
    """Each import's status answer: a status, or (status, error type)."""
    for import_id, status in statuses.items():
        status, error = status if isinstance(status, tuple) else (status, None)
        body = {"status": status, **({"error": {"type": error, "message": "m"}} if error else {})}
        stub.add(responses.GET, re.compile(re.escape(BASE["asset_library"]) + f"/imports/{import_id}/status"),
                 json=body)


def test_a_documented_status_seen_for_the_first_time_is_no_drift(stub, ws):
    """The catalog knows the import statuses and failure types: an import going from pending to
    succeeded, or failing, is what the service documents, not drift (the demo warned of both)."""
    answer_imports(stub, {"i1": "pending", "i2": "pending"})
    first, _ = pull(ws, "asset_library", "imports", import_ids=["i1", "i2"])
    answer_imports(stub, {"i1": "succeeded", "i2": ("failed", "SOURCE_URL_BLOCKED")})
    second, said = pull(ws, "asset_library", "imports", import_ids=["i1", "i2"])
    assert drift_of(ws, first.load_id) == drift_of(ws, second.load_id) == {} and said == []


def test_a_status_the_catalog_does_not_know_is_drift_from_the_first_load_on(stub, ws):
    answer_imports(stub, {"i1": "archived", "i2": ("failed", "DISK_ON_FIRE")})
    first, said = pull(ws, "asset_library", "imports", import_ids=["i1", "i2"])
    assert drift_of(ws, first.load_id) == {("status", "category"): (1, '"archived"'),
                                           ("error.type", "category"): (1, '"DISK_ON_FIRE"')}
    assert len(said) == 1
    answer_imports(stub, {"i1": "archived", "i2": "pending"})     # held before, still unknown to the catalog
    second, _ = pull(ws, "asset_library", "imports", import_ids=["i1", "i2"])
    assert drift_of(ws, second.load_id) == {("status", "category"): (1, '"archived"')}
    with pytest.raises(ContractError, match="archived"):
        answer_imports(stub, {"i1": "archived"})
        pull(ws, "asset_library", "imports", import_ids=["i1"], contract="freeze")


def test_known_values_come_from_the_column_or_the_list_actions_filter_choices():
    from toolkit.pull import drift
    targets = drift.known_values(catalog.resource("translation", "targets"))
    assert targets["status"] == set(catalog.translation.TARGET_STATUSES)          # targetStatus's choices
    submissions = drift.known_values(catalog.resource("translation", "submissions"))
    # statuses' choices: IN_ERROR and ARCHIVED too, which the real service sends (docs/public-specs.md, G8)
    assert submissions["status"] == set(catalog.translation.SUBMISSION_FILTER_STATUSES)
    assert {"IN_ERROR", "ARCHIVED"} <= submissions["status"]
    assert submissions["claim_scope"] == set(catalog.translation.CLAIM_SCOPES)    # declared on the column
    assert "severity" not in drift.known_values(catalog.resource("audience_platform", "notifications"))


class Held:
    """A load whose table held `values` before it (toolkit.storage.loads.Load.held_values)."""

    def __init__(self, values: dict) -> None:
        self.values, self.asked = values, []

    def held_values(self, names: list) -> dict:
        self.asked += names
        return {name: set(self.values[name]) for name in names if name in self.values}


def test_a_fan_out_over_given_ids_is_not_compared_with_earlier_loads():
    """Profiles are pulled for the ids the analyst gives: another load's records are other profiles,
    so an item_type they did not have is no drift; a resource pulled whole still is compared."""
    profiles = catalog.resource("audience_platform", "profiles")
    load = Held({"item_type": {"PERSON"}})
    tally = toolkit.pull.drift.Tally(profiles, "evolve", None, load)
    tally.take(frames.to_arrow([{"itemId": "p2", "itemType": "HOUSEHOLD"}], profiles))
    tally.finish()
    assert load.asked == [] and not any(kind == "category" for _, kind in tally.entries)
    notifications = catalog.resource("audience_platform", "notifications")
    tally = toolkit.pull.drift.Tally(notifications, "evolve", None, Held({"severity": {"INFO"}}))
    tally.take(frames.to_arrow([note(1, severity="WARN")], notifications))
    assert ("severity", "category") in tally.entries


def test_rows_under_a_renamed_envelope_key_are_kept_and_the_envelope_reported(stub, ws):
    stub.add(responses.GET, NOTIFICATIONS, json={"items": [note(1), note(2)], "offset": 0, "pageSize": 2})
    result, said = pull(ws, "audience_platform", "notifications")
    assert result.rows == 2 and len(said) == 1
    found = drift_of(ws, result.load_id)
    assert found[("list", "envelope")][0] == 1 and "items" in found[("list", "envelope")][1]
    assert ("totalSize", "envelope") in found


def test_a_type_conflict_between_pages_of_one_load_does_not_fail_it(tms, stub, ws):
    """Ids keep their key's place: a page whose ids are not integers makes its id column text, and the
    load's batch and the stored column are text (before: Arrow could not join the pages, the load failed)."""
    url = re.compile(re.escape(BASE["translation"]) + r"/.*submissions")
    first = [{"submissionId": i, "name": f"s{i}"} for i in range(1, 201)]
    stub.add(responses.GET, url, json=first, headers={"total-size": "201"})
    stub.add(responses.GET, url, json=[{"submissionId": "S-9", "name": "odd"}], headers={"total-size": "201"})
    result, _ = pull(ws, "translation", "submissions")
    assert result.rows == 201
    ids = [row[0] for row in ws.sql("select submission_id from translation.submissions").fetchall()]
    assert "S-9" in ids and "1" in ids
    assert drift_of(ws, result.load_id)[("submissionId", "type")][0] == 1


# -- freeze: refused, nothing written ---------------------------------------------------------------

def test_freeze_refuses_the_first_drift_names_it_and_leaves_the_view_as_it_was(stub, ws):
    answer(stub, [note(1), note(2)])
    kept, _ = pull(ws, "audience_platform", "notifications")
    before = ws.sql("select * from audience_platform.notifications order by id").df()
    answer(stub, [note(1), note(2, read="yes"), note(3)])
    with pytest.raises(ContractError) as refused:
        pull(ws, "audience_platform", "notifications", contract="freeze")
    error = refused.value
    assert (error.resource, error.field, error.kind) == ("audience_platform.notifications", "read", "type")
    assert '"id":"n2"' in error.record and "read" in str(error) and "nothing was written" in str(error)
    pd.testing.assert_frame_equal(ws.sql("select * from audience_platform.notifications order by id").df(), before)
    statuses = dict(ws.sql("select load_id, status from _loads").fetchall())
    assert statuses[kept.load_id] == "complete" and sorted(statuses.values()) == ["complete", "failed"]


def test_freeze_refuses_a_missing_field_at_the_end_and_takes_an_answer_that_fits(stub, ws):
    answer(stub, [note(1, source=...)])
    with pytest.raises(ContractError, match="source: missing"):
        pull(ws, "audience_platform", "notifications", contract="freeze")
    assert ws.sql("select count(*) from _loads where status = 'complete'").fetchone()[0] == 0
    answer(stub, [note(1)])
    assert pull(ws, "audience_platform", "notifications", contract="freeze")[0].rows == 1


def test_a_contract_other_than_evolve_or_freeze_is_refused_before_anything_is_sent(stub, ws):
    with pytest.raises(ValidationError, match="contract"):
        pull(ws, "audience_platform", "notifications", contract="strict")
    assert len(stub.calls) == 0


def test_examples_records_and_errors_hold_no_secret(stub, ws):
    token = CREDENTIALS["audience_platform"]["token"]
    leaky = note(1, apiKey="sk-live-123456", read="yes", message=f"sent with {token}", note=f"Bearer {token}")
    answer(stub, [leaky])
    result, said = pull(ws, "audience_platform", "notifications")
    stored = ws.sql("select drift from _loads").fetchone()[0] + ws.drift().to_string() + str(said[0].message)
    assert "sk-live-123456" not in stored and token not in stored and "***" in stored
    answer(stub, [leaky])
    with pytest.raises(ContractError) as refused:
        pull(ws, "audience_platform", "notifications", contract="freeze")
    assert "sk-live-123456" not in str(refused.value) and token not in str(refused.value)
    assert "***" in refused.value.record


# -- the page's drift travels with its table --------------------------------------------------------

def test_drift_found_in_the_typing_helper_comes_back_with_the_table(monkeypatch):
    monkeypatch.setenv("TOOLKIT_TYPING_HELPER", "1")
    typist.stop()
    typist._start()
    try:
        typist._helper.ready.result(timeout=60)
        page = orjson.dumps({"list": [note(1, read="yes", priority=2)], "totalSize": 1})
        buffer = typist._helper.submit(pickle.dumps(("audience_platform", "notifications", [page], None)))
        table = pa.ipc.open_stream(buffer.result(timeout=30)).read_all()
    finally:
        typist.stop()
    found = orjson.loads(table.schema.metadata[frames.DRIFT])
    assert {(f, k) for f, k, _, _ in found["fields"]} == {("read", "type"), ("priority", "undeclared")}
    assert found["record"]["id"] == "n1"


# -- the _loads column on files written before it ----------------------------------------------------

def test_a_file_without_the_drift_column_gets_it_on_a_read_write_open(tmp_path):
    path = tmp_path / "old.duckdb"
    with Workspace(path) as ws:
        ws.sql("alter table _loads drop column drift")
    with Workspace(path, read_only=True) as ws:
        assert ws.drift().empty                              # read-only: read as it is
    with Workspace(path) as ws:
        assert "drift" in ws.loads().columns and ws.drift().empty


def test_a_load_written_directly_records_no_drift_column_value(ws):
    with Store.load(ws, "asset_library", "http://x", "tags", {}, ("id",)) as load:
        load.write(pa.table({"id": ["a"]}))
    assert ws.sql("select drift from _loads").fetchone()[0] is None and ws.drift().empty


def test_every_resource_of_the_catalog_is_typed_with_drift_on(monkeypatch):
    """frames.to_arrow never raises on a record of another shape: every column sees an object."""
    for resource in catalog.RESOURCES.values():
        odd = {key: {"odd": [1]} for key in frames.declared_keys(resource)}
        table = frames.to_arrow([odd], resource)
        assert table.num_rows == 1 and table.column_names[-1] == "extra"


def test_a_first_load_whose_list_column_holds_only_empty_lists_loads(stub, ws):
    """Arrow types such a column list<null>, which DuckDB spells "NULL"[]: the table was created with a
    broken quote (ParserException) before; now the column is VARCHAR[] until values come."""
    answer_assets(stub, [asset(1), asset(2)])          # smartTags [] in every record
    assert pull(ws, "asset_library", "assets")[0].rows == 2
    kinds = dict(ws.sql("select column_name, data_type from duckdb_columns() where table_name = "
                        "'assets__versions'").fetchall())
    assert kinds["cover_version_smart_tags"] == "VARCHAR[]"


# -- a drifting sandbox (toolkit.sandbox.start(drift=...)): every kind completes, keeps, records ------

SANDBOX_CASES = [("audience_platform", "notifications", kind) for kind in
                 ("extra_field", "renamed_field", "missing_field", "unknown_status", "envelope_key")] + [
    ("asset_library", "assets", "number_as_string"), ("asset_library", "assets", "null_for_list"),
    ("translation", "targets", "envelope_key"), ("translation", "targets", "unknown_status")]
EXPECTED = {"extra_field": "undeclared", "missing_field": "missing", "number_as_string": "type",
            "null_for_list": "type", "unknown_status": "category", "envelope_key": "envelope"}


def sandbox_pull(box, ws: Workspace, service: str, name: str):
    conn = ws.connect(service, **box.credentials(service), transport=toolkit.http.session.Transport(
        budget=toolkit.http.session.RateBudget(None, None)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DriftWarning)
        return conn.pull(name, progress=False)


def at(extra: str | None, path: tuple[str, ...]):
    value = orjson.loads(extra) if extra else {}
    for part in path:
        value = value.get(part, KeyError) if isinstance(value, dict) else KeyError
    return value


@pytest.mark.parametrize("service, name, kind", SANDBOX_CASES)
def test_a_pull_from_a_drifting_sandbox_completes_keeps_every_value_and_records_the_drift(service, name, kind):
    """A load from the same data without drift first (a status is never seen only against what a table
    held), then one with: it completes with as many rows, every value kept, the drift recorded."""
    resource, key = catalog.resource(service, name), catalog.resource(service, name).key[0]
    emulators = {service: toolkit.sandbox.available()[service]}
    with Workspace() as ws:
        with toolkit.sandbox.start(seed=3, emulators=emulators, enforce_limits=False) as box:
            clean = sandbox_pull(box, ws, service, name)
        held = ws.sql(f"select * from {service}.{name} order by {key}").df()
        with toolkit.sandbox.start(seed=3, emulators=emulators, enforce_limits=False, drift=kind) as box:
            drifts = [d for d in box.drift if (d.service, d.resource) == (service, name)]
            result = sandbox_pull(box, ws, service, name)
        assert [d.kind for d in drifts] == [kind]
        assert result.rows == clean.rows                                         # the pull completed
        column = next((c for c in resource.columns if c.name == drifts[0].field), None)
        wire = ".".join(column.path) if column else drifts[0].field
        header = service == "translation" and kind == "envelope_key"     # its paging's totals are headers
        expected = {("header " + wire if header else wire, EXPECTED.get(kind, ""))}
        if kind == "renamed_field":
            expected = {(wire, "missing"), (wire + "V2", "undeclared")}
        found = {(row.field, row.kind) for row in ws.drift(load_id=result.load_id).itertuples()}
        assert expected <= found
        now = ws.sql(f"select * from {service}.{name} order by {key}").df()
        assert now[key].tolist() == held[key].tolist()
        if kind == "number_as_string":                                           # nothing lost
            assert now[column.name].isna().all()
            assert [at(extra, column.path) for extra in now["extra"]] == \
                [KeyError if pd.isna(v) else str(v) for v in held[column.name]]
        elif kind == "renamed_field":
            renamed = (*column.path[:-1], column.path[-1] + "V2")
            assert [at(extra, renamed) for extra in now["extra"]] == \
                [None if pd.isna(v) else v for v in held[column.name]]
        elif kind == "extra_field":
            assert all(at(extra, (drifts[0].field,)) is not KeyError for extra in now["extra"])
        elif kind == "unknown_status":
            assert set(now[column.name].dropna()) == {drifts[0].detail.split("'")[1]}


def test_a_fan_out_members_rows_under_a_renamed_key_are_kept(stub, ws):
    """A fan-out member's list answer (Unpaged, rows under `data`) goes through the same mending."""
    versions = re.compile(re.escape(BASE["asset_library"]) + r"/assets/a1/versions")
    stub.add(responses.GET, versions, json={"items": [{"id": "v1", "fileName": "f.png"}]})
    result, said = pull(ws, "asset_library", "versions", asset_ids=["a1"])
    assert result.rows == 1 and len(said) == 1
    assert drift_of(ws, result.load_id)[("data", "envelope")][0] == 1


def test_a_status_the_catalog_does_not_know_is_refused_on_a_first_frozen_load():
    """Target statuses are known from the catalog (targetStatus's choices): no earlier load is needed."""
    emulators = {"translation": toolkit.sandbox.available()["translation"]}
    with Workspace() as ws, toolkit.sandbox.start(seed=3, emulators=emulators, enforce_limits=False,
                                                  drift="unknown_status") as box:
        conn = ws.connect("translation", **box.credentials("translation"), transport=toolkit.http.session.Transport(
            budget=toolkit.http.session.RateBudget(None, None)))
        with warnings.catch_warnings():          # the parent first (its claimScope drifts), kept
            warnings.simplefilter("ignore", DriftWarning)
            conn.pull("submissions", progress=False)
        with pytest.raises(ContractError, match=r"targets: status: category .*_V2"):
            conn.pull("targets", progress=False, contract="freeze")
