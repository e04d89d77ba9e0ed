"""What a JSON body may hold, and the shape of a patch (a service's own body shapes are its catalog's:
`toolkit/catalog/<service>_checks.py`).

    json_problem({"a": float("nan")})     # "holds nan (at a): JSON carries finite numbers of 64 bits"
"""
from __future__ import annotations

__all__ = ["JSON_PATCH_OPS", "MAX_JSON_DEPTH", "Problem", "json_problem", "patch_problem"]

import datetime as dt
import numbers
from typing import Any

from toolkit.http.kinds import is_number
from toolkit.http.session import Secret

Problem = str | None

MAX_JSON_DEPTH = 64       # the documents' bodies nest a few levels; orjson stops at 254, repr sooner


def json_problem(value: Any, where: str = "", depth: int = 0) -> Problem:
    """Why a body value cannot go out as the JSON it reads as (None when it can). At the top a Secret,
    a timedelta or a set of strings are fine: the client writes them out before encoding."""
    at = f" (at {where})" if where else ""
    if depth > MAX_JSON_DEPTH:
        return f"nests deeper than {MAX_JSON_DEPTH} levels"
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):     # sent with OPT_SERIALIZE_NUMPY
        return json_problem(value.tolist(), where, depth)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"has a key that is not a string{at}: {type(key).__name__}"
            found = json_problem(item, f"{where}.{key}" if where else key, depth + 1)
            if found:
                return found
        return None
    if isinstance(value, list | tuple) or (depth == 0 and isinstance(value, set)):
        for index, item in enumerate(value):
            found = json_problem(item, f"{where}[{index}]", depth + 1)
            if found:
                return found
        return None
    if isinstance(value, bool | str | dt.date | dt.time) or value is None:
        return None
    if depth == 0 and isinstance(value, Secret | dt.timedelta):
        return None
    if isinstance(value, numbers.Real):
        return None if is_number(value) else f"holds {value!r}{at}: JSON carries finite numbers of 64 bits"
    if isinstance(value, bytes | bytearray):
        return f"cannot send bytes in a JSON body{at}: decode them to text"
    return f"cannot send a {type(value).__name__} in a JSON body{at}"


JSON_PATCH_OPS = ("add", "remove", "replace", "move", "copy", "test")      # RFC 6902, 4


def patch_problem(kind: str, patch: Any) -> Problem:
    """A merge patch is an object (RFC 7386); a JSON Patch a list of operations (RFC 6902), each an
    object with an `op` and a `path`: sent under the other content type, either is a 400."""
    if kind == "merge_patch":
        return None if isinstance(patch, dict) else \
            "a JSON Merge Patch is an object; a list of operations is a JSON Patch (content_type json_patch)"
    if kind == "json_patch":
        if not isinstance(patch, list | tuple):
            return "a JSON Patch is a list of operations; an object is a JSON Merge Patch (content_type merge_patch)"
        for index, op in enumerate(patch):
            if not isinstance(op, dict) or op.get("op") not in JSON_PATCH_OPS or not isinstance(op.get("path"), str):
                return (f"operation [{index}] must be an object with an op ({', '.join(JSON_PATCH_OPS)}) "
                        "and a path")
    return None
