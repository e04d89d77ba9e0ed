"""Client-side checks: every condition the documents say fails, found before anything is sent.

Param rules are named in the catalog (`Param(rules=("not_blank",))`) and checked per value; action
checks (`Action(checks=("offset_with_size",))`) look at several params at once. Kinds, choices,
required params, modes and system versions are checked for every action from its entry alone.

    check(action, {"limit": 900})   # ValidationError: limit=900: at most 500 (asset_library.list_assets)
"""
from __future__ import annotations

__all__ = ["ACTION_CHECKS", "CALLER_CHECKS", "Caller", "Found", "LIST_RULES", "MAX_PATH_VALUE", "PARAM_RULES",
           "Problem", "SELECT_TYPES", "TARGET_FORMATS", "WORD_COUNT_FIELDS", "alphanumeric", "audience_filter",
           "audience_import_package", "batch_target_formats", "check", "custom_field_value",
           "duration_pt1h_p30d", "email", "filter_or_all", "grant_type_fields", "immutable", "language",
           "limit_500", "no_spaces", "non_negative", "non_parsable_file_format", "not_blank",
           "not_logged_in_user", "notification_filter", "offset_with_size", "pa_client_in_hosted_mode",
           "page_size_200", "positive", "problems", "select_values", "size", "sort", "url", "version_tuple",
           "word_count_body"]

import datetime as dt
import numbers
import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolkit.catalog import SERVICES
from toolkit.catalog.masking import MASK
from toolkit.catalog.spec import Action, Param
from toolkit.errors import ModeError, ValidationError, VersionError, did_you_mean
from toolkit.http import filters
from toolkit.http.bodies import import_package_problem, json_problem
from toolkit.http.durations import HOUR, THIRTY_DAYS, duration_nanos
from toolkit.http.kinds import SCALAR_PROBLEMS, file_problem, integer_id_problem, is_long

Problem = str | None

# --- param rules: value → problem text or None ----------------------------------------------------


def not_blank(value: Any) -> Problem:
    return "must not be blank" if value is None or not str(value).strip() else None


def positive(value: Any) -> Problem:
    return None if is_long(value) and value > 0 else "must be a positive integer"


def non_negative(value: Any) -> Problem:
    return None if is_long(value) and value >= 0 else "must be 0 or a positive integer"


def size(value: Any) -> Problem:
    return None if is_long(value) and (value > 0 or value == -1) else "must be a positive integer or -1"


def limit_500(value: Any) -> Problem:
    return None if is_long(value) and 1 <= value <= 500 else "must be between 1 and 500"


def page_size_200(value: Any) -> Problem:
    return None if is_long(value) and 1 <= value <= 200 else "must be between 1 and 200"


def duration_pt1h_p30d(value: Any) -> Problem:
    if isinstance(value, dt.timedelta):
        nanos = (value // dt.timedelta(microseconds=1)) * 1000
    else:
        try:
            nanos = duration_nanos(value)
        except ValueError:
            return "must be an ISO-8601 duration of days, hours, minutes and seconds such as PT1H or P7D"
    return None if HOUR <= nanos <= THIRTY_DAYS else "must be between PT1H and P30D inclusive"


def url(value: Any) -> Problem:
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
        ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:          # urlsplit refuses an unclosed IPv6 host (`http://[::1`)
        ok = False
    return None if ok else "must be a valid http(s) URL"


def email(value: Any) -> Problem:
    ok = isinstance(value, str) and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value)
    return None if ok else "must be an email address"


def alphanumeric(value: Any) -> Problem:
    ok = isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9]+", value)
    return None if ok else "must be one or more alphanumeric characters"


def no_spaces(value: Any) -> Problem:
    return "must not contain spaces (phase names with spaces are not supported)" if " " in str(value) else None


def audience_filter(value: Any) -> Problem:
    items = value if isinstance(value, list | tuple) else str(value).split(",") if str(value) else []
    for item in items:
        text = str(item).strip()
        if not text or text == "!":
            return "must be a comma separated list of values, each optionally prefixed with '!'"
    return None


def sort(value: Any) -> Problem:
    items = value if isinstance(value, list | tuple) else str(value).split(",") if str(value) else []
    for item in items:
        if not re.fullmatch(r"\s*[A-Za-z0-9_.]+(:(asc|desc))?\s*", str(item)):
            return "must be a comma separated list of name, name:asc or name:desc"
    return None


def notification_filter(value: Any) -> Problem:
    if not str(value).strip():          # the services read an empty filter as none (delete: see filter_or_all)
        return None
    try:
        filters.parse(str(value))
    except filters.FilterSyntaxError as error:
        return f"is not a valid filter expression: {error}"
    return None


def immutable(value: Any) -> Problem:
    return "cannot be changed after creation"


def language(value: Any) -> Problem:
    ok = isinstance(value, str) and re.fullmatch(r"[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*", value)
    return None if ok else "must be a language code such as en-US or fr"


def audience_import_package(value: Any) -> Problem:
    return import_package_problem(value)


PARAM_RULES: Mapping[str, Callable[[Any], Problem]] = {
    f.__name__: f for f in (
        not_blank, positive, non_negative, size, limit_500, page_size_200, duration_pt1h_p30d, url,
        email, alphanumeric, no_spaces, audience_filter, sort, notification_filter, immutable, language,
        audience_import_package)
}

# --- kinds: every value is checked against its param's kind -----------------------------------------

# rules that read a comma-separated list take a Python list of its items as well
LIST_RULES = ("audience_filter", "sort")


def _kind_problem(param: Param, value: Any, integer_ids: bool = False) -> Problem:
    kind = param.kind
    items = value if isinstance(value, list | tuple) else [value]
    if any(isinstance(i, numbers.Integral) and not isinstance(i, bool) and not is_long(i) for i in items):
        return "is outside the 64-bit range of the services' integers"
    if kind == "string" and isinstance(value, list | tuple) and set(param.rules) & set(LIST_RULES):
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


# --- action checks: several params at once --------------------------------------------------------

Found = tuple[str, Any, str] | None


def offset_with_size(params: Mapping[str, Any]) -> Found:
    if params.get("size") == -1 and params.get("offset") not in (None, 0):
        return "offset", params["offset"], "must be 0 when size is -1"
    return None


WORD_COUNT_FIELDS = ("target_language", "document_id", "target_id", "batch_name")


def word_count_body(params: Mapping[str, Any]) -> Found:
    given = [name for name in WORD_COUNT_FIELDS if params.get(name) not in (None, "")]
    if len(given) > 1:
        return given[1], params[given[1]], f"give at most one of {', '.join(WORD_COUNT_FIELDS)} (also got {given[0]})"
    return None


def non_parsable_file_format(params: Mapping[str, Any]) -> Found:
    if params.get("target_format") == "NON_PARSABLE" and params.get("file_format_name"):
        return "file_format_name", params["file_format_name"], "must be blank when the target format is NON_PARSABLE"
    return None


TARGET_FORMATS = ("TXML", "TXLF", "NON_PARSABLE")


def batch_target_formats(params: Mapping[str, Any]) -> Found:
    batches = params.get("batch_infos") or []
    for batch in batches if isinstance(batches, list) else [batches]:
        if isinstance(batch, dict) and batch.get("targetFormat", "TXML") not in TARGET_FORMATS:
            return "batch_infos", batches, f"targetFormat {batch['targetFormat']!r} must be TXML, TXLF or NON_PARSABLE"
    return None


def custom_field_value(params: Mapping[str, Any]) -> Found:
    if "value" in params and "values" in params:
        return "values", params["values"], "give value (plain-text, date) or values (select types), not both"
    if "value" not in params and "values" not in params:
        return "value", None, "give value (plain-text, date) or values (select types); None unsets"
    values = params.get("values")
    if values is not None and not (isinstance(values, list) and all(isinstance(v, dict) and v.get("id") for v in values)):
        return "values", values, "must be a list of objects each with the id of a value"
    return None


SELECT_TYPES = ("single-select", "multi-select")


def select_values(params: Mapping[str, Any]) -> Found:
    if params.get("values") and params.get("type") not in SELECT_TYPES:
        return "values", params["values"], "only single-select and multi-select fields take values"
    return None


def grant_type_fields(params: Mapping[str, Any]) -> Found:
    if params.get("grant_type") == "password" and not params.get("username"):
        return "username", params.get("username"), "the password grant needs a username"
    return None


def filter_or_all(params: Mapping[str, Any]) -> Found:
    """A delete with no filter removes every notification: that must be asked for, not fallen into."""
    blank = not str(params.get("filter") or "").strip()
    everything = str(params.get("all")).lower() == "true"      # a boolean param may come as "true"
    if blank and not everything:
        return "filter", params.get("filter"), "give a filter, or all=True to delete every notification"
    if not blank and everything:
        return "all", params["all"], "give a filter or all=True, not both"
    return None


ACTION_CHECKS: Mapping[str, Callable[[Mapping[str, Any]], Found]] = {
    f.__name__: f for f in (offset_with_size, word_count_body, non_parsable_file_format, batch_target_formats,
                            custom_field_value, select_values, grant_type_fields, filter_or_all)
}


# --- caller checks: the params and what the client knows of itself ---------------------------------------

@dataclass(frozen=True)
class Caller:
    """What a client knows of itself that some rules read: its translation mode, and the user it logs
    in as when it can know it (HTTP Basic; behind a token the login is the service's secret)."""
    mode: str | None = None
    login: str | None = None


def pa_client_in_hosted_mode(params: Mapping[str, Any], caller: Caller) -> Found:
    if caller.mode == "hosted" and params.get("pa_client_id") in (None, ""):
        return "pa_client_id", params.get("pa_client_id"), "is required in hosted mode"
    return None


def not_logged_in_user(params: Mapping[str, Any], caller: Caller) -> Found:
    if caller.login is not None and params.get("username") == caller.login:
        return "username", params["username"], "is the logged-in user, who cannot delete itself"
    return None


CALLER_CHECKS: Mapping[str, Callable[[Mapping[str, Any], Caller], Found]] = {
    f.__name__: f for f in (pa_client_in_hosted_mode, not_logged_in_user)
}

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
        for name in action.checks:
            hit = ACTION_CHECKS[name](params) if name in ACTION_CHECKS else \
                CALLER_CHECKS[name](params, caller or Caller())
            if hit:
                found.append(_error(known.get(hit[0]), *hit, action.id))
    return found


def _param_problem(param: Param, value: Any, integer_ids: bool = False) -> Problem:
    problem = _kind_problem(param, value, integer_ids)
    if problem is None and param.choices:
        values = value if isinstance(value, list | tuple | set) else [value]
        if param.kind == "list" and isinstance(value, str):      # a list may come as "A,B"
            values = [v.strip() for v in value.split(",")]
        bad = [v for v in values if v not in param.choices]
        if bad:
            problem = f"must be one of {', '.join(map(str, param.choices))}"
    for rule in param.rules:
        if problem is None:
            problem = PARAM_RULES[rule](value)
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
