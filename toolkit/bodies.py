"""What a JSON body may hold, and the shapes of the documents' bodies the client can check.

    json_problem({"a": float("nan")})     # "holds nan (at a): JSON carries finite numbers of 64 bits"
"""
from __future__ import annotations

import datetime as dt
import numbers
from typing import Any

from toolkit.http import Secret
from toolkit.kinds import is_number

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
