"""Which side of a relation to read it from: what a pull costs is requests, not rows.

An asset's boards can be read an asset at a time (`GET /assets/{id}/boards`: one request per asset)
or a board at a time (`GET /assets?parentBoardId=...`: one request per board and page of its assets,
each row completed with the board's own record). The catalog declares such pairs
(`Resource.other_side`); fetch asks `requests_each_way` and reads the side that costs fewer. The
estimate needs only what is known before either walk: how many parents each side has, the rows the
resource held at its last load (or one per parent when it never loaded), and the page size.

    asset_side, board_side = requests_each_way(children=20_000, parents=38, rows=21_000, page=500)
"""
from __future__ import annotations

__all__ = ["cheaper_the_other_way", "requests_each_way"]

import math


def requests_each_way(children: int, parents: int, rows: int | None, page: int) -> tuple[int, int]:
    """Requests to read the relation from this side (one per child) and from the other (a listing of
    the parents, then each parent's pages of children, supposing its rows spread evenly)."""
    rows = children if rows is None else rows
    per_parent = rows / parents if parents else 0
    listing = max(1, math.ceil(parents / page))
    return children, listing + parents * max(1, math.ceil(per_parent / page))


def cheaper_the_other_way(children: int, parents: int, rows: int | None, page: int) -> bool:
    """Whether the other side needs fewer requests (a tie reads this side, the one the resource names)."""
    this_side, other_side = requests_each_way(children, parents, rows, page)
    return other_side < this_side
