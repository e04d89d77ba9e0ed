"""Typed frames: timestamps in every wire spelling, ids that keep their type, flattening, `extra`, empty results."""
from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pandas as pd
import pyarrow as pa
import pytest

from toolkit import Workspace, catalog
from toolkit.catalog.spec import Column, Resource
from toolkit.pull import columns, frames

INSTANT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
INSTANT_MS = int(INSTANT.timestamp() * 1000)


def resource(service: str = "asset_library", *columns: Column) -> Resource:
    return Resource("things", service, f"{service}.list_things", key=("id",), doc="", columns=columns or (
        Column("id", "id"), Column("name"), Column("status", "category"), Column("created_at", "timestamp"),
        Column("size", "integer"), Column("score", "number"), Column("active", "boolean"),
        Column("tags", "list"), Column("owner_id", "id", source="owner.id"),
        Column("owner_name", source="owner.name"), Column("settings", "json"),
    ))


THINGS = resource()


def instants(values: list) -> list:
    table = frames.to_arrow([{"id": "a", "createdAt": v} for v in values], THINGS)
    assert table.schema.field("created_at").type == pa.timestamp("ms", tz="UTC")
    return table.column("created_at").to_pylist()


# -- timestamps -------------------------------------------------------------------------------------

@pytest.mark.parametrize("wire", [
    "2026-11-02T09:00:00Z",
    "2026-11-02T09:00:00.000Z",
    "2026-11-02T09:00:00.000000Z",
    "2026-11-02T09:00:00",
    "2026-11-02T09:00:00+00:00",
    "2026-11-02T11:00:00+02:00",
    "2026-11-02T11:00:00.000+02:00",
    "2026-11-02T03:30:00-05:30",
    "2026-11-02T11:00:00.000+0200",
    "2026-11-02T04:00:00-0500",
    INSTANT_MS,
    float(INSTANT_MS),
])
def test_every_timestamp_spelling_is_the_same_utc_instant(wire):
    assert instants([wire, None]) == [INSTANT, None]


def test_fractions_are_kept_to_the_millisecond():
    got = instants(["2026-11-02T09:00:00.5Z", "2026-11-02T09:00:00.123Z", "2026-11-02T09:00:00.123456Z"])
    assert [t.microsecond for t in got] == [500_000, 123_000, 123_000]
    assert instants([INSTANT_MS + 123])[0].microsecond == 123_000


def test_the_fallback_parser_takes_microseconds_and_odd_spellings():
    got = instants(["2026-11-02", "2026-11-02 09:00:00.123456Z", "Mon, 02 Nov 2026 09:00:00 GMT", "garbage"])
    assert got == [INSTANT.replace(hour=0), INSTANT.replace(microsecond=123_000), INSTANT, None]


def test_timestamps_are_tz_aware_utc_in_pandas():
    frame = frames.to_pandas(frames.to_arrow([{"id": "a", "createdAt": "2026-11-02T11:00:00+02:00"}], THINGS),
                             THINGS)
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype)
    assert str(frame["created_at"].dtype.tz) == "UTC"
    assert frame["created_at"].iloc[0] == pd.Timestamp(INSTANT)


def test_an_all_null_timestamp_column_is_still_a_timestamp():
    assert frames.to_arrow([{"id": "a"}], THINGS).schema.field("created_at").type == pa.timestamp("ms", tz="UTC")


def test_a_date_without_a_time_falls_back_to_midnight_utc():
    assert instants(["2026-11-02", "2026-11-02T09:00:00Z"]) == [INSTANT.replace(hour=0), INSTANT]


# -- ids and scalar types -------------------------------------------------------------------------------

def test_ids_are_strings_for_uuid_services():
    table = frames.to_arrow([{"id": "4b7c0a1e-0000-4000-8000-000000000001"}, {"id": None}], THINGS)
    assert table.schema.field("id").type == pa.string()
    assert frames.to_pandas(table, THINGS)["id"].dtype == pd.StringDtype("pyarrow")


def test_ids_are_integers_for_the_translation_service():
    tm = resource("translation", Column("submission_id", "id"), Column("project_id", "id"))
    table = frames.to_arrow([{"submissionId": 1001, "projectId": 10}, {"submissionId": 1002}], tm)
    assert table.schema.field("submission_id").type == pa.int64()
    frame = frames.to_pandas(table, tm)
    assert frame["submission_id"].dtype == pd.Int64Dtype()
    assert frame["submission_id"].tolist() == [1001, 1002]
    assert frame["project_id"].isna().tolist() == [False, True]  # a gap keeps the integer type


def test_an_id_that_is_not_an_integer_is_kept_as_text_not_lost():
    tm = resource("translation", Column("submission_id", "id"))
    table = frames.to_arrow([{"submissionId": 1001}, {"submissionId": "S-1002"}], tm)
    assert table.column("submission_id").to_pylist() == ["1001", "S-1002"]


def test_scalars_get_their_declared_types():
    table = frames.to_arrow([{"id": "a", "size": 12, "score": 1, "active": True, "status": "READY"},
                             {"id": "b", "size": None, "score": 2.5, "active": None, "status": "DONE"}], THINGS)
    types = {f.name: f.type for f in table.schema}
    assert (types["size"], types["score"], types["active"]) == (pa.int64(), pa.float64(), pa.bool_())
    frame = frames.to_pandas(table, THINGS)
    assert frame["size"].dtype == pd.Int64Dtype() and frame["active"].dtype == pd.BooleanDtype()
    assert isinstance(frame["status"].dtype, pd.CategoricalDtype)
    assert sorted(frame["status"].cat.categories) == ["DONE", "READY"]


def test_a_string_column_given_an_object_keeps_it_as_json_text():
    table = frames.to_arrow([{"id": "a", "name": {"first": "Ana"}}, {"id": "b", "name": 7}], THINGS)
    assert table.column("name").to_pylist() == ['{"first":"Ana"}', "7"]


# -- shape: columns, flattening, lists, extra -------------------------------------------------------------

def test_columns_are_the_declared_ones_in_order_then_extra():
    table = frames.to_arrow([{"id": "a", "zeta": 1}], THINGS)
    assert table.column_names == [c.name for c in THINGS.columns] + ["extra"]


def test_a_parent_column_keeps_its_declared_place():
    versions = catalog.resource("asset_library", "versions")
    table = frames.to_arrow([{"id": "v1", "fileName": "x"}], versions, parent={"asset_id": "a1"})
    assert table.column_names == [c.name for c in versions.columns] + ["extra"]
    assert table.column("asset_id").to_pylist() == ["a1"]


def test_an_undeclared_parent_column_comes_after_the_declared_ones():
    table = frames.to_arrow([{"id": "a"}, {"id": "b"}], THINGS, parent={"board_id": "b1"})
    assert table.column_names[-2:] == ["board_id", "extra"]
    assert table.column("board_id").to_pylist() == ["b1", "b1"]


def test_nested_objects_are_flattened_one_level():
    table = frames.to_arrow([{"id": "a", "owner": {"id": "u1", "name": "Ana"}}, {"id": "b", "owner": None},
                             {"id": "c"}], THINGS)
    assert table.column("owner_id").to_pylist() == ["u1", None, None]
    assert table.column("owner_name").to_pylist() == ["Ana", None, None]
    assert table.column("extra").to_pylist() == [None, None, None]


def test_undeclared_fields_are_kept_in_extra_as_json():
    rows = [{"id": "a", "name": "x", "zeta": 1, "deep": {"k": [1, 2]}},
            {"id": "b", "owner": {"id": "u1", "name": "Ana", "email": "ana@example.org"}},
            {"id": "c"}]
    extra = frames.to_arrow(rows, THINGS).column("extra").to_pylist()
    assert orjson.loads(extra[0]) == {"zeta": 1, "deep": {"k": [1, 2]}}
    # the unread field of a flattened object is kept under the object's key, not dropped
    assert orjson.loads(extra[1]) == {"owner": {"email": "ana@example.org"}}
    assert extra[2] is None


def test_json_columns_hold_the_object_as_json_text():
    table = frames.to_arrow([{"id": "a", "settings": {"b": [1, {"c": None}]}}, {"id": "b"}], THINGS)
    assert [None if v is None else orjson.loads(v) for v in table.column("settings").to_pylist()] == \
        [{"b": [1, {"c": None}]}, None]


def test_lists_stay_lists():
    rows = [{"id": "a", "tags": ["x", "y"]}, {"id": "b", "tags": []}, {"id": "c", "tags": None}]
    table = frames.to_arrow(rows, THINGS)
    assert pa.types.is_list(table.schema.field("tags").type)
    frame = frames.to_pandas(table, THINGS)
    assert isinstance(frame["tags"].dtype, pd.ArrowDtype)
    assert frame["tags"].iloc[0] == ["x", "y"] and isinstance(frame["tags"].iloc[0], list)
    assert frame["tags"].iloc[1] == [] and pd.isna(frame["tags"].iloc[2])


def test_lists_of_objects_stay_lists_of_dicts():
    table = frames.to_arrow([{"id": "a", "tags": [{"id": "t1", "name": "hero"}]}], THINGS)
    assert frames.to_pandas(table, THINGS)["tags"].iloc[0] == [{"id": "t1", "name": "hero"}]


def test_column_names_are_snake_case_for_every_catalog_resource():
    for resource_ in catalog.RESOURCES.values():
        for name in frames.empty(resource_).column_names:
            assert name == name.lower() and " " not in name and "." not in name, (resource_.name, name)


# -- empty results ---------------------------------------------------------------------------------------

EXPECTED = {"id": pd.StringDtype("pyarrow"), "name": pd.StringDtype("pyarrow"), "size": pd.Int64Dtype(),
            "score": "float64", "active": pd.BooleanDtype(), "settings": pd.StringDtype("pyarrow")}


def check_empty(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == [c.name for c in THINGS.columns] + ["extra"]
    assert len(frame) == 0
    for name, dtype in EXPECTED.items():
        assert frame[name].dtype == dtype, name
    assert isinstance(frame["status"].dtype, pd.CategoricalDtype)
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype) and str(frame["created_at"].dtype.tz) == "UTC"
    assert isinstance(frame["tags"].dtype, pd.ArrowDtype) and pa.types.is_list(frame["tags"].dtype.pyarrow_dtype)


def test_an_empty_result_keeps_the_declared_columns_and_dtypes():
    table = frames.empty(THINGS)
    assert table.num_rows == 0 and table.column_names == [c.name for c in THINGS.columns] + ["extra"]
    check_empty(frames.to_pandas(table, THINGS))
    assert frames.to_arrow([], THINGS).schema == table.schema


def test_an_empty_result_keeps_its_dtypes_through_the_workspace():
    with Workspace() as ws:
        with ws.load("asset_library", "http://127.0.0.1:9/v1", "things", {}, ("id",)) as load:
            load.write(frames.empty(THINGS))
        check_empty(frames.conform(ws.read("asset_library", "things"), THINGS))


def test_a_workspace_round_trip_gives_the_same_values_and_dtypes():
    rows = [{"id": "a", "name": "x", "status": "READY", "createdAt": "2026-11-02T11:00:00+02:00", "size": 3,
             "score": 0.5, "active": True, "tags": ["t"], "owner": {"id": "u1", "name": "Ana"}, "zeta": 1}]
    fresh = frames.to_pandas(frames.to_arrow(rows, THINGS), THINGS)
    with Workspace() as ws:
        with ws.load("asset_library", "http://127.0.0.1:9/v1", "things", {}, ("id",)) as load:
            load.write(frames.to_arrow(rows, THINGS))
        back = frames.conform(ws.read("asset_library", "things"), THINGS)
    assert list(back.columns) == list(fresh.columns)
    assert back.drop(columns="created_at").astype(object).to_dict("records") == \
        fresh.drop(columns="created_at").astype(object).to_dict("records")
    assert back["created_at"].iloc[0] == fresh["created_at"].iloc[0] == pd.Timestamp(INSTANT)


@pytest.mark.parametrize("text", [
    b'[{"a":1,"b":[true,null]},null,"x",{"n":"Smith, John: \\"x\\""}]',           # compact: kept as it is
    b'[{"a": 1, "b": [true, null]}, null, "x", {"n": "caf\\u00e9"}]',              # spaced, escaped: orjson
    b'[\n  {"a":1},\n  null\n]',
    b'[{"url":"http:\\/\\/x"},{"a":[1,{"b":2}]}]',                                   # escaped slash: orjson
    b'[{"a":\t1}]',
    b'[{"note":"a, b: c"},["x", "y"]]',                                               # spaced after a string
    b'[]', b'[null,null]',
])
def test_json_text_from_the_wire_equals_orjsons_of_the_parsed_value(text):
    import msgspec
    raw = msgspec.json.decode(text, type=list[msgspec.Raw]) + [None]          # None: the field was absent
    parsed = orjson.loads(text) + [None]
    assert frames.json_of_raw(raw).equals(columns.json_text(parsed))


def test_the_spacing_check_finds_each_mark_wherever_it_stands():
    import random
    marks = (b'": ', b'", ', b"}, ", b"], ", b", {", b", [")
    pieces = [b'"', b":", b",", b" ", b"{", b"}", b"[", b"]", b"a", b"1"]
    texts = [b"".join(random.Random(seed).choices(pieces, k=random.Random(-seed).randint(0, 12)))
             for seed in range(20_000)]
    texts += [mark for mark in marks] + [b" " + mark for mark in marks] + [mark[1:] for mark in marks]
    for text in texts:
        assert frames._spaced(text) is any(mark in text for mark in marks), text


def test_json_text_from_the_wire_keeps_no_object_alive():
    import gc

    import msgspec
    raw = msgspec.json.decode(b'[{"a":1},[2,3],null]' * 1, type=list[msgspec.Raw])
    frames.json_of_raw(raw)
    before = len(gc.get_objects())
    for _ in range(200):
        frames.json_of_raw(raw)
    assert len(gc.get_objects()) - before < 50      # pa.array over memoryviews kept one per value


# -- what a page held beyond the declared shapes (toolkit.pull.drift reads it) ---------------------------

def drift_in(table: pa.Table) -> dict:
    metadata = table.schema.metadata or {}
    found = orjson.loads(metadata[frames.DRIFT]) if frames.DRIFT in metadata else {"absent": [], "fields": []}
    return {"absent": found["absent"], **{(field, kind): count for field, kind, count, _ in found["fields"]}}


def test_an_optional_column_absent_from_every_record_is_not_missing_and_a_required_one_is():
    things = resource("asset_library", Column("id", "id"), Column("name"), Column("note", optional=True))
    assert drift_in(frames.to_arrow([{"id": "a"}, {"id": "b"}], things)) == {"absent": ["name"]}
    assert drift_in(frames.to_arrow([{"id": "a", "name": "x"}], things)) == {"absent": []}


PROPERTIES = catalog.resource("audience_platform", "profile_properties")


def prop(i: int, **keywords) -> dict:
    return {"id": f"p{i}", "name": f"p{i}", "description": None, "type": "string", "multivalued": False,
            "tags": [], "systemTags": [], **keywords}


def properties_page(records: list) -> bytes:
    return orjson.dumps({"list": records, "offset": 0, "pageSize": 50, "totalSize": len(records)})


def decoded(content: bytes):
    from toolkit.pull import decoding
    action = catalog.ACTIONS[PROPERTIES.action]
    body = decoding.page_decoder(PROPERTIES, action.paging)(content)
    assert body is not None, "the page fits the declared Structs"
    return body["list"]


def test_a_list_field_some_records_lack_is_no_sent_null_in_a_decoded_page():
    """Structs hold an absent field as None: whether a record sent `enum` is read per record, not
    from the whole page's text (which held it for the first record: 2 false type entries before)."""
    page = properties_page([prop(1, enum=["a", "b"]), prop(2, format="email"), prop(3, maxLength=9)])
    for rows in (decoded(page), orjson.loads(page)["list"]):
        table = frames.to_arrow(rows, PROPERTIES)
        assert table.column("enum").to_pylist() == [["a", "b"], None, None]
        assert drift_in(table) == {"absent": []}


def test_a_null_sent_for_a_list_counts_once_per_record_that_sent_it_in_a_decoded_page():
    page = properties_page([prop(1, enum=["a"]), prop(2, enum=None), prop(3), prop(4, enum=None)])
    for rows in (decoded(page), orjson.loads(page)["list"]):
        table = frames.to_arrow(rows, PROPERTIES)
        assert drift_in(table) == {"absent": [], ("enum", "type"): 2}
        assert orjson.loads(table.schema.metadata[frames.DRIFT])["record"]["id"] == "p2"
