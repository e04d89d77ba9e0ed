"""What a value of each param kind may be, checked before anything is built from it.

    SCALAR_PROBLEMS["id"][0](12.0)      # False: a float id from a float64 column is refused, not sent as "12.0"
"""
from __future__ import annotations

__all__ = ["INTEGER_TEXT", "LONG", "Problem", "SCALAR_PROBLEMS", "file_problem", "integer_id_problem",
           "is_long", "is_number", "is_scalar"]

import datetime as dt
import io
import math
import numbers
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from toolkit.http.session import Secret

Problem = str | None

LONG = (-2**63, 2**63 - 1)     # the services' integers are Java longs; orjson carries no wider ones either


def is_long(value: Any) -> bool:
    """An integer a Java long holds, numpy's too (ids taken from a DataFrame column are numpy.int64)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and LONG[0] <= value <= LONG[1]


def is_number(value: Any) -> bool:
    """A finite number: JSON has no NaN or infinity (orjson would send null in their place)."""
    if isinstance(value, numbers.Integral):
        return is_long(value)
    return isinstance(value, numbers.Real) and math.isfinite(value)


def is_scalar(value: Any) -> bool:
    """Text, or a number or date sent as its text; never a container, bytes, a bool or an object's repr."""
    return isinstance(value, str | dt.date) or is_number(value)


SCALAR_PROBLEMS: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "string": (is_scalar, "must be text (a string or a number)"),
    "text": (is_scalar, "must be text (a string or a number)"),
    # translation ids are integers, the others' ids strings
    "id": (lambda v: isinstance(v, str) or is_long(v), "must be an id: a string or an integer"),
    "secret": (lambda v: isinstance(v, str | Secret), "must be a string (or a toolkit Secret)"),
    "integer": (is_long, "must be an integer"),
    "number": (is_number, "must be a finite number"),
    "boolean": (lambda v: isinstance(v, bool) or (isinstance(v, str) and v.lower() in ("true", "false")),
                "must be true or false"),
    "int_list": (lambda v: isinstance(v, list | tuple) and all(is_long(i) for i in v), "must be an array of numbers"),
    "list": (lambda v: isinstance(v, str) or (isinstance(v, list | tuple | set) and all(isinstance(i, str) for i in v)),
             "must be a list of strings"),
    "object": (lambda v: isinstance(v, dict | list), "must be a JSON object or array"),
    "duration": (lambda v: isinstance(v, str | dt.timedelta), "must be an ISO-8601 duration or a timedelta"),
    "url": (lambda v: isinstance(v, str), "must be a valid http(s) URL"),
    "email": (lambda v: isinstance(v, str), "must be an email address"),
    "epoch_ms": (lambda v: is_long(v) or isinstance(v, dt.date), "must be epoch milliseconds or a datetime"),
    "datetime": (lambda v: isinstance(v, str | dt.date), "must be an ISO-8601 date-time"),
}


def integer_id_problem(value: Any) -> Problem:
    """An id of a service whose ids are integers (the catalog's `Service.ids`): an integer, or its
    digits as text (an id read from a text column or typed in a shell); `"first"` is refused here
    rather than sent to come back 404."""
    if isinstance(value, str) and not value.strip():
        return "must not be blank"
    if is_long(value) or (isinstance(value, str) and INTEGER_TEXT.fullmatch(value) and is_long(int(value))):
        return None
    return "must be an integer id (this service's ids are integers)"


INTEGER_TEXT = re.compile(r"-?[0-9]{1,19}")


def file_problem(value: Any) -> Problem:
    if isinstance(value, tuple):        # (file name, bytes or an open file[, content type]) as requests takes it
        ok = 2 <= len(value) <= 3 and isinstance(value[0], str) and isinstance(value[1], bytes | io.IOBase) \
            and (len(value) == 2 or isinstance(value[2], str))
        return None if ok else "must be (file name, bytes or an open file[, content type])"
    if not isinstance(value, bytes | bytearray | io.IOBase | os.PathLike | str):
        return "must be bytes, a path or an open file"
    if isinstance(value, str | os.PathLike) and not os.path.isfile(value):
        return "is not a file"
    return None
