"""The seeded assets' board, tag, custom field and search filters over a whole index range at once.

Each function mirrors a scalar attribute of `BaseAssets` (boards, tags, custom_fields, search_text)
bit for bit on uint64 numpy arrays of the same hashes, so a filter over a million seeded assets
takes a fraction of a second instead of a Python loop's tens of seconds.
tests/sandbox/test_asset_library_seed.py checks that both agree.

    mask = boards_mask(base, np.arange(0, base.count), {0, 5})   # in seed board 0 or 5
"""
from __future__ import annotations

__all__ = ["boards_mask", "field_mask", "hashes", "search_mask", "tags_mask", "versions"]

from collections.abc import Collection
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.sandbox.asset_library.seed import DAY, FIELD_ODDS, GOLDEN, M64, PHOTOGRAPHERS, T0, compose

if TYPE_CHECKING:
    from toolkit.sandbox.asset_library.seed import BaseAssets

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
        days = (T0 + idx.astype(np.int64) * base.step - (pick % _U(200)).astype(np.int64) * DAY) // DAY
        return present & (days == day)
    return np.zeros(len(idx), bool)


def search_mask(base: BaseAssets, idx: np.ndarray, term: str) -> np.ndarray | None:
    """`term in base.search_text(i)` for every i, or None when the term holds a digit (or a line
    break) and only the one-by-one scan can answer. Without digits a term cannot match inside a
    file number, so the text depends only on a few drawn parts: each distinct combination is
    composed once (numbers as NULs) and matched, then looked up per asset."""
    if not term or any(c.isdigit() or c in "\n\x00" for c in term):
        return None
    h = hashes(base, 4, idx)
    subject, detail = (h % _U(24)).astype(np.int64), ((h >> _U(8)) % _U(14)).astype(np.int64)
    style, campaign = ((h >> _U(32)) % _U(10)).astype(np.int64), ((h >> _U(40)) % _U(5)).astype(np.int64)
    described = ((h >> _U(48)) % _U(10)) >= 6
    template, said = ((h >> _U(52)) % _U(6)).astype(np.int64), ((h >> _U(58)) % _U(5)).astype(np.int64)
    cover = versions(base, idx) - 1
    suffix = np.zeros(len(idx), bool)
    for k in (1, 2):
        suffix |= (cover == k) & (hashes(base, 6 + k, idx) % _U(2) == 1)
    # file name and title: the parts a style shows, and whether the name ends in _v<k>
    group = np.where(style < 6, 0, np.where(style < 8, style - 5, 3))
    named = group % 3 == 0
    name_code = (((group * 24 + np.where(named, subject, 0)) * 14 + np.where(named, detail, 0)) * 5
                 + np.where(group == 3, campaign, 0)) * 2 + suffix
    desc_code = np.where(described, 1 + ((template * 24 + subject) * 14 + detail) * 5 + said, 0)
    found = np.zeros(len(idx), bool)
    for code, table in ((name_code, _name_match), (desc_code, _desc_match)):
        unique, inverse = np.unique(code, return_inverse=True)
        hits = np.fromiter((table(int(c), term) for c in unique), bool, len(unique))
        found |= hits[inverse.reshape(-1)]
    return found


def _name_match(code: int, term: str) -> bool:
    code, suffix = divmod(code, 2)
    code, campaign = divmod(code, 5)
    code, detail = divmod(code, 14)
    group, subject = divmod(code, 24)
    style = (0, 6, 7, 8)[group]
    stem, title, _ = compose(subject, detail, None, style, campaign, False, 0, 0)
    return term in f"{stem}{'_v' + chr(0) if suffix else ''}\n{title}".lower()


def _desc_match(code: int, term: str) -> bool:
    if not code:
        return False
    code, said = divmod(code - 1, 5)
    code, detail = divmod(code, 14)
    template, subject = divmod(code, 24)
    return term in (compose(subject, detail, None, 0, 0, True, template, said)[2] or "").lower()
