"""A load's long lists of ids, recorded once in `_given_ids` rather than spelled out in its params.

A fan-out's params name every parent it asks: the memberships of 600,000 profiles made 23 MB of
params text, which each load of them (a refresh's too) wrote into `_loads.params` again, and which
DuckDB held at some four times its size while the file was open. A list of more than
`INLINE_AT_MOST` ids is now written once, as Arrow, into `_given_ids` (one row an id, in the order
given, keyed by the digest of the list), and the params name it by its count and that digest:

    {"profile_ids": {"digest": "5b0c…", "ids": 600000}}     # `_loads.params`: 600,000 ids given

`recorded` makes that text (and the lists to store), `store` writes the lists not held yet, and
`expanded` gives the params back with the ids in place, as a refresh pulls them again. A shorter list
stays in the params as it is; params recorded before, with every id inline, read as they always did.
"""
from __future__ import annotations

__all__ = ["CREATE", "INLINE_AT_MOST", "INLINE_RECORD", "SHOWN", "expanded", "inline_json", "is_recorded", "named_by",
           "recorded", "shown", "store", "texts"]

import hashlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import duckdb
import numpy as np
import orjson
import pyarrow as pa

from toolkit.catalog.masking import looks_secret, scrub, secret_pair
from toolkit.errors import WorkspaceError

# lists up to this many ids stay in the params as they are: they read as they are in every listing
INLINE_AT_MOST = 100
_SLICE = 65_536     # ids made Python values at a time, to digest
CREATE = "CREATE TABLE IF NOT EXISTS _given_ids (digest VARCHAR, n BIGINT, id VARCHAR)"
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _arrow(value: Any) -> pa.Array | None:
    """A long list of ids (text or integers) as one Arrow array; None for anything else."""
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    if isinstance(value, pa.Array):
        if value.null_count or not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)
                                    or pa.types.is_integer(value.type)):
            return None
        return value if len(value) > INLINE_AT_MOST else None
    if not isinstance(value, list | tuple) or len(value) <= INLINE_AT_MOST:
        return None
    kinds = {type(v) for v in value}
    if kinds not in ({str}, {int}):
        return None
    try:
        return pa.array(value, pa.string() if kinds == {str} else pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        return None


def _slices(ids: pa.Array) -> Iterator[list]:
    for start in range(0, len(ids), _SLICE):
        yield ids.slice(start, _SLICE).to_pylist()


def _digest(ids: pa.Array) -> str:
    """The same for the same ids in the same order, however they were handed (a list, a Series, Arrow)."""
    digest = hashlib.blake2b(f"{'integers' if pa.types.is_integer(ids.type) else 'text'} {len(ids)}".encode(),
                             digest_size=16)
    for part in _slices(ids):
        digest.update(orjson.dumps(part))
    return digest.hexdigest()


def _reference(ids: pa.Array, digest: str) -> dict:
    reference: dict[str, Any] = {"digest": digest, "ids": len(ids)}
    if pa.types.is_integer(ids.type):
        reference["integers"] = True
    return reference


def recorded(params: Mapping[str, Any] | None) -> tuple[str, dict[str, pa.Array]]:
    """The params' stable text (keys sorted at every level, secrets masked), each list of more than
    `INLINE_AT_MOST` ids named by its digest and count; and those lists by digest, for `store`."""
    given: dict[str, pa.Array] = {}
    named: dict[str, Any] = {}
    params = params or {}
    hidden = secret_pair(params)
    for name, value in params.items():
        # a secret's value is masked, never recorded anywhere
        ids = None if name == hidden or looks_secret(str(name)) else _arrow(value)
        if ids is None:
            named[name] = value.tolist() if isinstance(value, pa.Array | pa.ChunkedArray) else value
            continue
        digest = _digest(ids)
        given[digest] = ids
        named[name] = _reference(ids, digest)
    # a reference is plain already; scrub still masks a secret-looking name whatever its value
    return orjson.dumps(scrub(named), option=_OPTIONS).decode(), given


def inline_json(params: Mapping[str, Any] | None) -> str:
    """The params' text as loads recorded it before lists were named by digest: every id spelled out."""
    plain = {name: value.tolist() if isinstance(value, pa.Array | pa.ChunkedArray) else value
             for name, value in (params or {}).items()}
    return orjson.dumps(scrub(plain), option=_OPTIONS).decode()


def store(con: duckdb.DuckDBPyConnection, given: Mapping[str, pa.Array]) -> None:
    """Write the lists not held yet (by digest) into `_given_ids`, each as one Arrow table."""
    for digest, ids in given.items():
        if con.execute("SELECT 1 FROM _given_ids WHERE digest = ? LIMIT 1", [digest]).fetchall():
            continue
        _toolkit_ids = pa.table({"n": np.arange(len(ids), dtype=np.int64),
                                 "id": ids.cast(pa.string())})
        con.execute("INSERT INTO _given_ids SELECT ? AS digest, n, id FROM _toolkit_ids", [digest])


def is_recorded(value: Any) -> bool:
    """Whether a recorded param's value names a list of ids by digest (what `recorded` writes)."""
    return isinstance(value, dict) and set(value) in ({"digest", "ids"}, {"digest", "ids", "integers"}) \
        and isinstance(value["digest"], str) and isinstance(value["ids"], int)


def expanded(con: duckdb.DuckDBPyConnection, params: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded params (`orjson.loads` of `_loads.params`) with every list named by digest read back
    from `_given_ids`, as an Arrow array in the order given; params with the ids inline as they are.
    A list that is not there (its workspace's `_given_ids` lost) is a WorkspaceError naming it."""
    out = dict(params)
    for name, value in params.items():
        if not is_recorded(value):
            continue
        kind = "BIGINT" if value.get("integers") else "VARCHAR"
        # one row a place: two processes of a lake that wrote the same list at once wrote it twice
        ids = con.sql(f"SELECT any_value(id)::{kind} AS id FROM _given_ids WHERE digest = ? GROUP BY n ORDER BY n",
                      params=[value["digest"]]).to_arrow_table().column("id").combine_chunks()
        if len(ids) != value["ids"]:
            raise WorkspaceError(f"the {value['ids']:,} ids of {name} a load was given are not in the workspace's "
                                 f"_given_ids (digest {value['digest']}, {len(ids):,} found): pull it again with "
                                 "the ids given")
        out[name] = ids
    return out


# the digests of the lists a load's params name (SQL, over `_loads.params`)
_DIGESTS = "regexp_extract_all(params, '\"digest\":\"([0-9a-f]+)\"', 1)"


def named_by(con: duckdb.DuckDBPyConnection, loads: str, where: str = "TRUE") -> str | None:
    """The query of the `_given_ids` rows that the loads of `loads` (a table like `_loads`) matching
    `where` name, in order; None when they name none, or the workspace has no `_given_ids`: a snapshot
    holds the lists its loads name, and no empty table when there are none."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() AND "
                       "schema_name = 'main' AND table_name = '_given_ids'").fetchall():
        return None
    if not con.execute(f"SELECT 1 FROM {loads} WHERE ({where}) AND len({_DIGESTS}) > 0 LIMIT 1").fetchall():
        return None
    return (f"SELECT * FROM _given_ids WHERE digest IN (SELECT unnest({_DIGESTS}) FROM {loads} WHERE {where}) "
            "ORDER BY digest, n")


# `_loads.params` as a listing shows it: a list named by digest as "600000 ids" (SQL, over the column)
SHOWN = ("regexp_replace(params, '\\{\"digest\":\"[0-9a-f]+\",\"ids\":([0-9]+)(,\"integers\":true)?\\}', "
         "'\"\\1 ids\"', 'g')")


def shown(params: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded params as a person reads them: a list named by digest as "600,000 ids"."""
    return {name: f"{value['ids']:,} ids" if is_recorded(value) else value for name, value in params.items()}


# a load recorded before lists were named by digest, with more than INLINE_AT_MOST ids spelled out (each id
# takes at least four characters of the text)
INLINE_RECORD = f"length(params) > {4 * INLINE_AT_MOST} AND NOT contains(params, '{{\"digest\":')"


def texts(params: Mapping[str, Any] | None, older: Callable[[], bool]) -> list[str]:
    """The texts a load with these params may have recorded: as loads record them now and, where
    `older()` says the resource has loads recorded before (`INLINE_RECORD`), with every id inline."""
    text, given = recorded(params)
    return [text, inline_json(params)] if given and older() else [text]
