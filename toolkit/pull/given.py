"""What an analyst hands a pull, checked against the catalog before anything is sent or stored.

A pull's own options (`max_age`, `budget`, `workers`, ...) and every filter are checked here, first:
a value the catalog could have refused never reaches the service, and never reaches the record of
loads either (an integer wider than 64 bits was a raw TypeError from the JSON of the load's params).

The ids of a fan-out (`profile_ids=`) or of a chunked resource (`submission_ids=`) are a list (text ids
handed as a Series or a pyarrow array stay Arrow: 600,000 of them are 25 MB there, 56 MB as Python
strings); one id alone is natural there (the fan-out's own param takes one id a request), so a lone string or integer
is that one id, never a string's characters one request each.

    ids_of(resource, "profile_ids", "0dafbbf9-…")    # ["0dafbbf9-…"]
    options(max_age="6h")                            # {"max_age": 21600.0, ...}
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.spec import Action, Resource
from toolkit.errors import ValidationError
from toolkit.http.durations import span_seconds
from toolkit.http.kinds import SCALAR_PROBLEMS, integer_id_problem, is_long
from toolkit.http.rules import problems

__all__ = ["ids_of", "id_filters", "check_filters", "options", "Options"]

Options = dict[str, Any]


def options(*, max_age: Any = None, budget: Any = None, on_error: Any = "raise", workers: Any = None,
            refresh: Any = False, incremental: Any = False, progress: Any = None) -> Options:
    """A pull's own options, checked; spans of time in seconds (`"6h"`, 3600, a timedelta)."""
    if on_error not in ("raise", "skip"):
        raise ValidationError("on_error", on_error, "must be raise or skip")
    if workers is not None and not (is_long(workers) and 1 <= workers <= 256):
        raise ValidationError("workers", workers, "must be a whole number of threads from 1 to 256 (or None)")
    for name, value in (("refresh", refresh), ("incremental", incremental)):
        if not isinstance(value, bool):
            raise ValidationError(name, value, "must be True or False")
    if progress is not None and not isinstance(progress, bool):
        raise ValidationError("progress", progress, "must be True, False or None (shown where it can be)")
    return {"max_age": None if max_age is None else span_seconds(max_age, "max_age"),
            "budget": None if budget is None else span_seconds(budget, "budget"),
            "on_error": on_error, "workers": None if workers is None else int(workers),
            "refresh": refresh, "incremental": incremental, "progress": progress}


def id_filters(resource: Resource) -> set[str]:
    """The filters of a resource that take its parents' ids."""
    if resource.chunks is not None:
        return {resource.chunks.param}
    if resource.fan_out:
        return {name for name in (resource.parent, f"{resource.fan_out}s") if name}
    return set()


def _id_problem(value: Any, integers: bool) -> str | None:
    if integers:
        return integer_id_problem(value)
    fits, problem = SCALAR_PROBLEMS["id"]
    if not fits(value):
        return problem
    return "must not be blank" if isinstance(value, str) and not value.strip() else None


def ids_of(resource: Resource, name: str, value: Any) -> list | pa.Array:
    """The ids given for `name`: a list, a tuple, a set, a numpy array, a pandas Series or a pyarrow
    array of them, or one id alone. Each is checked as an id of the resource's service; the first wrong
    one is refused. Text ids handed as a Series or Arrow stay an Arrow array (toolkit.pull.plans asks
    them one at a time), never a Python list of them as large as the pull."""
    integers = catalog.SERVICES[resource.service].ids == "integer"
    compact = None if integers else _text_ids(value)
    if compact is not None:
        _check_text(resource, name, value, compact)
        return compact
    if isinstance(value, pa.ChunkedArray | pa.Array):
        value = value.to_pylist()
    if isinstance(value, str) or (isinstance(value, numbers.Integral) and not isinstance(value, bool)):
        items = [value]
    elif hasattr(value, "tolist") and not isinstance(value, bytes | bytearray):
        items = value.tolist()
        items = items if isinstance(items, list) else [items]     # a numpy scalar's tolist is the scalar
    elif isinstance(value, list | tuple | set | frozenset | range) or (
            isinstance(value, Iterable) and not isinstance(value, bytes | bytearray | str | Mapping)):
        items = list(value)
    else:
        kind = "integers" if integers else "strings"
        raise ValidationError(name, value, f"must be an id or a list of ids ({resource.service}'s ids are {kind})",
                              resource.action)
    for item in items:
        problem = _id_problem(item, integers)
        if problem:
            if len(items) > 1:
                problem = f"{item!r} among them: {problem}"
            raise ValidationError(name, value if len(items) > 1 else item, problem, resource.action)
    # an integer id typed as its digits goes out as the integer the service's lists take
    return [int(item) for item in items] if integers else items


def _text_ids(value: Any) -> pa.Array | None:
    """Text ids handed as a pandas Series, a pyarrow array (or a chunked one) as one Arrow array of
    text, without a Python string an id; None for anything else (a list, numbers, mixed values)."""
    if isinstance(value, pd.Series | pd.Index):
        if not isinstance(value.dtype, pd.ArrowDtype | pd.StringDtype) and value.dtype != object:
            return None
        try:
            value = pa.array(value, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    if isinstance(value, pa.Array) and (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        return value
    return None


def _check_text(resource: Resource, name: str, value: Any, ids: pa.Array) -> None:
    """The checks `_id_problem` makes of each id, on the whole array at once."""
    wrong = pc.is_null(ids) if ids.null_count else None
    problem = SCALAR_PROBLEMS["id"][1]
    if wrong is None or not pc.any(wrong).as_py():
        wrong, problem = pc.equal(pc.utf8_trim_whitespace(ids), ""), "must not be blank"
        if not pc.any(wrong).as_py():
            return
    first = pc.index(wrong, True).as_py()
    item = ids[first].as_py()
    if len(ids) > 1:
        problem = f"{item!r} among them: {problem}"
    raise ValidationError(name, value if len(ids) > 1 else item, problem, resource.action)


def _actions(resource: Resource) -> list[Action]:
    found = [catalog.ACTIONS[resource.action]]
    if resource.chunks is not None and resource.chunks.older:
        found.append(catalog.ACTIONS[resource.chunks.older])
    return found


def check_filters(resource: Resource, filters: Mapping[str, Any]) -> dict:
    """The filters with their ids as lists, every value checked against its param's kind and rules
    in the resource's action (where the action takes it) before anything is sent. Names the resource
    does not take are left for the pull to refuse with the names it does take."""
    out = dict(filters)
    ids = id_filters(resource)
    for name, value in filters.items():
        if value is None:
            continue
        if name in ids:
            out[name] = ids_of(resource, name, value)
            continue
        for action in _actions(resource):
            if name in {p.name for p in action.params} and name != resource.fan_out:
                # the older action of a chunked resource takes a list where it takes one value: one
                # request a value (toolkit.pull.fetch), so each value is checked on its own there
                spread = action.id != resource.action and isinstance(value, list | tuple)
                for one in (value if spread else [value]):
                    found = [p for p in problems(action, {name: one}) if p.param == name]
                    if found:
                        raise found[0]
                break
        else:
            if name in resource.filters and not _plain(value):
                raise ValidationError(name, value, "must be text, a number, a date or a list of them",
                                      resource.action)
    return out


def _plain(value: Any) -> bool:
    """What a filter no action param declares may be: the load's record keeps it as JSON."""
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return is_long(value)
    return isinstance(value, str | bool | float | timedelta) or SCALAR_PROBLEMS["datetime"][0](value)
