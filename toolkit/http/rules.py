"""Client-side checks: every condition the documents say fails, found before anything is sent.

One generic check reads what the catalog says of each param and action: its kind, choices, range
(`minimum`, `maximum`, `also`), `pattern`, `immutable`, `required_in` (modes), a service's own
`check`, and the rules every service shares, named in `Param.rules` (PARAM_RULES: `not_blank`,
`url`, `email`); of an action, `exclusive` (at most one of) and a service's own `checks`
(toolkit/catalog/<service>_checks.py). Modes and system versions are checked for every action
from its entry alone.

    check(action, {"limit": 900})   # ValidationError: limit=900: must be between 1 and 500 (asset_library.list_assets)
"""
from __future__ import annotations

__all__ = ["Caller", "Found", "MAX_PATH_VALUE", "PARAM_RULES", "Problem", "SHARED_RULE_WORDS", "check", "constraint_problem", "email",
           "not_blank", "problems", "said_of", "url", "version_tuple"]

import datetime as dt
import numbers
import re
import reprlib
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from toolkit.catalog import SERVICES
from toolkit.catalog.masking import MASK
from toolkit.catalog.spec import Action, Caller, Found, Param
from toolkit.errors import ModeError, ValidationError, VersionError, did_you_mean
from toolkit.http.bodies import json_problem
from toolkit.http.durations import duration_nanos
from toolkit.http.kinds import SCALAR_PROBLEMS, file_problem, integer_id_problem, is_long

Problem = str | None

# --- the rules every service shares, named in Param.rules -----------------------------------------

# what each says when it refuses a value (and what a docstring or a form's hint says before: said_of)
SHARED_RULE_WORDS = {"not_blank": "must not be blank", "url": "must be a valid http(s) URL",
                     "email": "must be an email address"}


def not_blank(value: Any) -> Problem:
    return SHARED_RULE_WORDS["not_blank"] if value is None or not str(value).strip() else None


def url(value: Any) -> Problem:
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
        ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:          # urlsplit refuses an unclosed IPv6 host (`http://[::1`)
        ok = False
    return None if ok else SHARED_RULE_WORDS["url"]


def email(value: Any) -> Problem:
    ok = isinstance(value, str) and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value)
    return None if ok else SHARED_RULE_WORDS["email"]


PARAM_RULES: Mapping[str, Callable[[Any], Problem]] = {f.__name__: f for f in (not_blank, url, email)}

# --- what a Param's fields say it may be --------------------------------------------------------------

_DURATION = "must be an ISO-8601 duration of days, hours, minutes and seconds such as PT1H or P7D"


def _nanos(value: Any) -> int:
    if isinstance(value, dt.timedelta):
        return (value // dt.timedelta(microseconds=1)) * 1000
    return duration_nanos(value)


def _range_rule(param: Param) -> str:
    low, high, also = param.minimum, param.maximum, "".join(f" or {v}" for v in param.also)
    if param.kind == "duration" and low is not None and high is not None:
        return f"must be between {low} and {high} inclusive"
    if high is None and param.kind != "duration":
        said = {0: "must be 0 or a positive integer", 1: "must be a positive integer"}
        return said.get(low, f"must be at least {low}") + also
    if high is None:
        return f"must be at least {low}{also}"
    if low is None:
        return f"must be at most {high}{also}"
    return f"must be between {low} and {high}{also}"


def _range_problem(param: Param, value: Any) -> Problem:
    """Within `minimum`..`maximum` (or one of `also`): an integer the services' longs hold, or a duration."""
    if value in param.also and not isinstance(value, bool):
        return None
    if param.kind == "duration":
        try:
            nanos = _nanos(value)
        except ValueError:
            return _DURATION
        low = _nanos(param.minimum) if param.minimum is not None else nanos
        high = _nanos(param.maximum) if param.maximum is not None else nanos
        return None if low <= nanos <= high else _range_rule(param)
    within = is_long(value) and (param.minimum is None or value >= param.minimum) \
        and (param.maximum is None or value <= param.maximum)
    return None if within else _range_rule(param)


def _items(value: Any) -> list[Any]:
    """A listed param's items: a list as it is, a text split at its commas (none in an empty text)."""
    return list(value) if isinstance(value, list | tuple) else str(value).split(",") if str(value) else []


def _pattern_problem(param: Param, value: Any) -> Problem:
    if param.listed:
        fits = all(re.fullmatch(param.pattern, str(item)) for item in _items(value))
    else:
        fits = isinstance(value, str) and re.fullmatch(param.pattern, value) is not None
    return None if fits else param.pattern_rule or f"must match {param.pattern}"


def constraint_problem(param: Param, value: Any) -> Problem:
    """What the param's own fields refuse of a value that has its kind (None when they take it): its
    range, pattern, immutability, the shared rules it names and its service's own check."""
    if param.immutable:
        return "cannot be changed after creation"
    if param.minimum is not None or param.maximum is not None:
        problem = _range_problem(param, value)
        if problem:
            return problem
    for rule in param.rules:
        problem = PARAM_RULES[rule](value)
        if problem:
            return problem
    if param.pattern:
        problem = _pattern_problem(param, value)
        if problem:
            return problem
    return param.check(value) if param.check else None



def said_of(param: Param) -> list[str]:
    """What the catalog says a param's value must be beyond its kind and choices, in the words an error
    uses (a docstring and a form's hint show them before anything is typed): its range, pattern, the
    shared rules, immutability and the modes that require it."""
    said = []
    if param.immutable:
        said.append("cannot be changed after creation")
    if param.minimum is not None or param.maximum is not None:
        said.append(_range_rule(param))
    said += [SHARED_RULE_WORDS[rule] for rule in param.rules]
    if param.pattern:
        said.append(param.pattern_rule or f"must match {param.pattern}")
    if param.required_in:
        said.append(f"required in {' and '.join(param.required_in)} mode")
    return said

# --- kinds: every value is checked against its param's kind -----------------------------------------

def _kind_problem(param: Param, value: Any, integer_ids: bool = False) -> Problem:
    kind = param.kind
    items = value if isinstance(value, list | tuple) else [value]
    if any(isinstance(i, numbers.Integral) and not isinstance(i, bool) and not is_long(i) for i in items):
        return "is outside the 64-bit range of the services' integers"
    if kind == "string" and isinstance(value, list | tuple) and param.listed:
        return None if all(isinstance(i, str) for i in value) else "must be text or a list of strings"
    fits, problem = SCALAR_PROBLEMS.get(kind, (lambda v: True, ""))
    if not fits(value):
        return problem
    if kind == "id" and integer_ids:
        return integer_id_problem(value)
    if kind == "datetime" and isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return "must be an ISO-8601 date-time"
    if kind == "file":
        return file_problem(value)
    if kind in ("url", "email") and value != "":
        return PARAM_RULES[kind](value)
    return None


# An id or name is tens of characters; past a few kB of request line servers answer 414, and a value's
# percent-encoding may triple it, so 1,000 characters leaves room for every real one and refuses a file.
MAX_PATH_VALUE = 1000


def _path_problem(value: Any) -> Problem:
    """A path value fills exactly one segment. The client percent-encodes `/ ? #` and `%`, but `.` and
    `..` stay as they are and the URL library resolves them: `/boards/../assets/X` is `/assets/X`.
    A `%2e%2e` typed by a user is their text and goes out as `%252e%252e`: a name, never a dot segment."""
    text = str(value)
    if text in (".", ".."):
        return f"cannot be {text!r}: as a path segment it would send the request to another path"
    if not text:
        return "must not be empty: an empty path segment sends the request to another path"
    if len(text) > MAX_PATH_VALUE:
        return f"is {len(text):,} characters long; a path value takes at most {MAX_PATH_VALUE:,}"
    return None


# --- the one entry point ---------------------------------------------------------------------------


def version_tuple(version: str | None) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version or "")) or (0,)




def _error(param: Param | None, name: str, value: Any, rule: str, action: str) -> ValidationError:
    """The error naming param, value and rule; a secret param's value shows as ***, in the text and
    in `.value`, since a notebook prints both. So does an unknown param's: it may be a secret under a
    misspelt name (`pasword=`), and its value says nothing about what the action takes."""
    if (param is None or param.secret) and value is not None:
        value = MASK
    try:
        return ValidationError(name, value, rule, action)
    except RecursionError:      # a value nested too deep for repr() to show
        error = ValidationError(name, reprlib.repr(value), rule, action)
        error.value = value
        return error


def problems(action: Action, params: Mapping[str, Any], caller: Caller | None = None) -> list[ValidationError]:
    """Every rule the params break, in param order; empty when they may be sent. Without a `caller`
    the checks that need one (its mode, its login) find nothing."""
    found: list[ValidationError] = []
    known = {p.name: p for p in action.params}
    service = SERVICES.get(action.service)
    integer_ids = service is not None and service.ids == "integer"
    for name in params:
        if name not in known:
            found.append(_error(None, name, params[name], f"unknown param{did_you_mean(name, known) or ';'} "
                                f"{action.id} takes {', '.join(known) or 'none'}", action.id))
    for param in action.params:
        value = params.get(param.name)
        if value is None:
            if param.required and param.name not in params:
                found.append(_error(param, param.name, None, "is required", action.id))
            elif param.required:        # given as None: nothing would be sent for a param the service needs
                rule = "must not be blank" if "not_blank" in param.rules else "is required"
                found.append(_error(param, param.name, None, rule, action.id))
            continue
        try:
            problem = _param_problem(param, value, integer_ids)
        except (TypeError, ValueError, OverflowError, RecursionError) as error:
            # a value no rule foresaw: refused as one, never sent and never a traceback from inside a rule
            problem = f"cannot be checked ({type(error).__name__})"
        if problem:
            found.append(_error(param, param.name, value, problem, action.id))
    if not found:
        for hit in _action_found(action, params, caller or Caller()):
            found.append(_error(known.get(hit[0]), *hit, action.id))
    return found


def _action_found(action: Action, params: Mapping[str, Any], caller: Caller) -> list[tuple[str, Any, str]]:
    """What the action's params break together: a param required in the caller's mode, `exclusive`,
    and the service's own checks."""
    hits: list[Found] = [(p.name, params.get(p.name), f"is required in {caller.mode} mode") for p in action.params
                         if caller.mode in p.required_in and params.get(p.name) in (None, "")]
    given = [name for name in action.exclusive if params.get(name) not in (None, "")]
    if len(given) > 1:
        hits.append((given[1], params[given[1]],
                     f"give at most one of {', '.join(action.exclusive)} (also got {given[0]})"))
    hits.extend(own(params, caller) for own in action.checks)
    return [hit for hit in hits if hit]


def _param_problem(param: Param, value: Any, integer_ids: bool = False) -> Problem:
    problem = _kind_problem(param, value, integer_ids)
    if problem is None and param.choices:
        values = value if isinstance(value, list | tuple | set) else [value]
        if param.kind == "list" and isinstance(value, str):      # a list may come as "A,B"
            values = [v.strip() for v in value.split(",")]
        bad = [v for v in values if v not in param.choices]
        if bad:
            problem = f"must be one of {', '.join(map(str, param.choices))}"
    if problem is None:
        problem = constraint_problem(param, value)
    if problem is None and param.where == "path":
        problem = _path_problem(value)
    if problem is None and param.where in ("body", "raw"):
        problem = json_problem(value)
    return problem


def check(action: Action, params: Mapping[str, Any], *, mode: str | None = None,
          system_version: str | None = None, login: str | None = None) -> None:
    """Raise the first broken rule (the error's `problems` lists them all), a ModeError or a VersionError.
    `login`: the user the client logs in as, where it knows it (HTTP Basic)."""
    if mode and mode not in action.modes:
        other = " and ".join(action.modes)
        raise ModeError(f"{action.id} is offered only in {other} mode; this client is in {mode} mode")
    if system_version:
        if action.min_version and version_tuple(system_version) < version_tuple(action.min_version):
            raise VersionError(action.id, action.min_version, system_version)
        for param in action.params:
            if (param.min_version and params.get(param.name) is not None
                    and version_tuple(system_version) < version_tuple(param.min_version)):
                raise VersionError(f"{action.id} param {param.name}", param.min_version, system_version)
    found = problems(action, params, Caller(mode, login))
    if found:
        first = found[0]
        first.problems = found
        raise first
