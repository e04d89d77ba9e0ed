"""The asset library's computed assets: ids that invert, numpy filters that agree with the scalar
attributes, and a million assets built in seconds."""
from __future__ import annotations

import time
import uuid

import pytest

from toolkit.sandbox.asset_library.service import AssetLibrary
from toolkit.sandbox.asset_library.space import AssetFilter
from toolkit.sandbox.clock import Clock


@pytest.fixture(scope="module")
def emu():
    return AssetLibrary(3, 8, Clock(), {})           # about 3,500 seeded assets


def test_ids_are_uuid4_and_invert(emu):
    base = emu.space.base
    for i in (0, 1, 17, base.count // 2, base.count - 1):
        asset_id = base.asset_id(i)
        parsed = uuid.UUID(asset_id)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == asset_id
        assert base.index_of(asset_id) == i
        for k in range(base.versions(i)):
            assert base.version_of(base.version_id(i, k)) == (i, k)
        assert base.version_of(base.version_id(i, 3)) is None
    assert base.index_of(base.version_id(0, 0)) is None
    assert base.index_of(str(uuid.UUID(int=12345, version=4))) is None
    assert len({base.asset_id(i)[-12:] for i in range(2000)}) == 2000


def test_numpy_filters_agree_with_the_scalar_attributes(emu):
    space, base = emu.space, emu.space.base
    filters = [AssetFilter(boards=frozenset([b])) for b in base.board_ids[:12]]
    filters += [AssetFilter(boards=frozenset(base.board_ids[3:9]))]
    filters += [AssetFilter(tags=(frozenset([t]),)) for t in base.tag_ids[:10]]
    filters += [AssetFilter(tags=(frozenset([base.tag_ids[0]]), frozenset(base.tag_ids[1:3])))]
    for field_id, _, values in base.fields:
        filters.append(AssetFilter(fields=((field_id, None),)))
        for value in values:
            filters.append(AssetFilter(fields=((field_id, frozenset([value])),)))
        if len(values) > 2:
            filters.append(AssetFilter(fields=((field_id, frozenset(values[1:3])),)))
    samples = {}
    for i in range(0, base.count, 37):
        for field_id, setting in base.custom_fields(i).items():
            if "value" in setting:
                samples.setdefault(field_id, set()).add(setting["value"].lower())
    for field_id, values in samples.items():
        filters += [AssetFilter(fields=((field_id, v),)) for v in sorted(values)[:5]]
    words = ["beach", "BEACH".lower(), "sunset", "golden-hour", "img_", "dsc", "_v", "spring_launch", "holiday:",
             "retouched", "—", "location.", "e h", "-", "zzz", "beach-sunset-", " shoot (", "y\n"[:1]]
    filters += [AssetFilter(search=w) for w in words]
    filters += [AssetFilter(search="beach", tags=(frozenset(base.tag_ids[:3]),))]
    for flt in filters:
        seeded, rest = space._scan_seeded(flt, 0, base.count)
        assert rest is None
        vector = [i for i in seeded if i not in space.changed]
        scalar = [i for i in range(base.count) if i not in space.changed and space._match(flt, i)]
        assert vector == scalar, flt
        assert scalar or flt.fields or flt.search, flt   # boards and tags all have seeded assets


def test_a_million_assets_build_in_seconds():
    began = time.perf_counter()
    big = AssetLibrary(0, 1000, Clock(), {})
    built = time.perf_counter() - began
    assert big.space.base.count >= 990_000 and built < 10
    rows = big.space.rows(big.space.live())
    assert len(rows) == big.space.base.count and len(rows[999_500:1_000_000]) == min(500, len(rows) - 999_500)
    assert rows[123_456]["id"] == big.space.base.asset_id(123_456)


def test_a_search_with_digits_falls_back_to_the_scan(emu):
    space = emu.space
    flt = AssetFilter(search="_v2")
    assert space._scan_seeded(flt, 0, space.base.count)[1] == "_v2"
    expected = [i for i in range(space.end) if i not in space.deleted and space._match(flt, i)]
    assert expected and space.select(flt) == expected
