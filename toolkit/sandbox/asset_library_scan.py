"""The seeded assets' board, tag and custom field filters over a whole index range at once, in numpy.

Each function mirrors a scalar attribute of `BaseAssets` (boards, tags, custom_fields) bit for bit,
on uint64 arrays of the same hashes, so a filter over a million seeded assets takes a fraction of a
second instead of a Python loop's tens of seconds. tests/sandbox/test_asset_library_seed.py checks
that both agree.

    mask = boards_mask(base, np.arange(0, base.count), {0, 5})   # in seed board 0 or 5
"""
from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.sandbox.asset_library_seed import DAY, FIELD_ODDS, GOLDEN, M64, PHOTOGRAPHERS, T0

if TYPE_CHECKING:
    from toolkit.sandbox.asset_library_seed import BaseAssets

_U = np.uint64


def hashes(base: BaseAssets, salt: int, idx: np.ndarray) -> np.ndarray:
    """`base.h(i, salt)` for every i in idx (uint64 arithmetic wraps, as the scalar's `& M64` does)."""
    start = _U((base.key ^ ((salt * 0xD1B54A32D192ED03) & M64)) & M64)
    with np.errstate(over="ignore"):
        x = start + idx.astype(_U) * _U(GOLDEN)
        x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


def versions(base: BaseAssets, idx: np.ndarray) -> np.ndarray:
    r = hashes(base, 2, idx) % _U(100)
    return np.where(r < 60, 1, np.where(r < 88, 2, 3))


def boards_mask(base: BaseAssets, idx: np.ndarray, wanted: Collection[int]) -> np.ndarray:
    """Whether each asset is in one of the seed boards at positions `wanted` (of base.board_ids)."""
    count = len(base.board_ids)
    if not count or not wanted:
        return np.zeros(len(idx), bool)
    h = hashes(base, 5, idx)
    r = h % _U(100)
    first, second = (h >> _U(8)) % _U(count), (h >> _U(24)) % _U(count)
    want = np.fromiter(wanted, _U)
    return (r >= 7) & (np.isin(first, want) | ((r >= 80) & (second != first) & np.isin(second, want)))


def tags_mask(base: BaseAssets, idx: np.ndarray, wanted: Collection[int]) -> np.ndarray:
    """Whether any version of each asset carries a seed tag at positions `wanted` (of base.tag_ids)."""
    count = len(base.tag_ids)
    found = np.zeros(len(idx), bool)
    if not count or not wanted:
        return found
    want = np.fromiter(wanted, _U)
    have = versions(base, idx)
    for k in range(3):
        h = hashes(base, 10 + k, idx)
        r = h % _U(100)
        picks = np.where(r < 30, 0, np.where(r < 65, 1, np.where(r < 88, 2, 3)))
        for n in range(3):
            tag = (h >> _U(8 + 12 * n)) % _U(count)
            found |= (k < have) & (n < picks) & np.isin(tag, want)
    return found


def field_mask(base: BaseAssets, idx: np.ndarray, j: int, want: Any) -> np.ndarray:
    """Whether each asset's value of seed field j (base.fields[j]) meets `want`: None (any value),
    a frozenset of value ids, or the lower-cased text (the normalised day for date fields)."""
    _, kind, value_ids = base.fields[j]
    h = hashes(base, 20 + 3 * (j // 3), idx)
    bits = (h >> _U(21 * (j % 3))) & _U(0x1FFFFF)
    present = (bits & _U(0x3FF)) % _U(100) < FIELD_ODDS[j % len(FIELD_ODDS)]
    pick = bits >> _U(10)
    if want is None:
        return present
    if isinstance(want, frozenset):
        count = len(value_ids)
        if not count:
            return np.zeros(len(idx), bool)
        positions = [n for n, v in enumerate(value_ids) if v in want]
        single = np.isin(pick % _U(count), np.array(positions, _U))
        if kind == "single-select":
            return present & single
        chosen = ((pick >> _U(8)) & _U(1)).astype(bool) & ((pick & _U((1 << count) - 1)) != 0)
        any_bit = np.zeros(len(idx), bool)
        for n in positions:
            any_bit |= ((pick >> _U(n)) & _U(1)).astype(bool)
        return present & np.where(chosen, any_bit, single)
    if kind == "plain-text":
        names = [n for n, name in enumerate(PHOTOGRAPHERS) if name.lower() == want]
        return present & np.isin(pick % _U(len(PHOTOGRAPHERS)), np.array(names, _U))
    if kind == "date":
        day = (date.fromisoformat(want[:10]) - date(1970, 1, 1)).days     # want: the normalised ISO day
        days = (T0 + idx.astype(np.int64) * base._step - (pick % _U(200)).astype(np.int64) * DAY) // DAY
        return present & (days == day)
    return np.zeros(len(idx), bool)
