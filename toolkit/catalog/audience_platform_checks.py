"""The audience platform's own checks, where no field of a Param or an Action says it: read by the one
check of toolkit.http.rules from its catalog entries (`Param(check=...)`, `Action(checks=(...))`).

    filter_or_all({"filter": ""}, Caller())   # ("filter", "", "give a filter, or all=True to delete ...")
"""
from __future__ import annotations

__all__ = ["filter_or_all", "grant_type_fields", "import_package", "not_logged_in_user", "notification_filter",
           "offset_with_size"]

from collections.abc import Mapping
from typing import Any

from toolkit.catalog import audience_platform_filters as filters
from toolkit.catalog.spec import Caller, Found


def notification_filter(value: Any) -> str | None:
    if not str(value).strip():          # the services read an empty filter as none (delete: see filter_or_all)
        return None
    try:
        filters.parse(str(value))
    except filters.FilterSyntaxError as error:
        return f"is not a valid filter expression: {error}"
    return None


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def import_package(package: Any) -> str | None:
    """What the audience platform's import refuses, where its document and the sandbox agree: type
    `url` carries an http(s) URL; type `enclosed` an audience with an id and a name, and its members."""
    if not isinstance(package, dict):
        return "must be a JSON object with a type"
    kind = package.get("type")
    if kind == "url":
        from_url = package.get("url")
        if not isinstance(from_url, str) or _blank(from_url) or not from_url.startswith(("http://", "https://")):
            return "url must be an http(s) URL of a file holding the enclosed package"
        return None
    if kind != "enclosed":
        return "type must be enclosed (the audience and its members) or url (a URL to such a file)"
    audience = package.get("audience")
    if not isinstance(audience, dict):
        return "audience must be an object with an id and a name"
    for field in ("id", "name"):
        if _blank(audience.get(field)):
            return f"audience.{field} must not be blank"
    tags = audience.get("tags", [])
    if not isinstance(tags, list) or any(_blank(tag) for tag in tags):
        return "audience.tags must be a list of non-blank strings"
    members = package.get("members")
    if not isinstance(members, list) or any(_blank(member) for member in members):
        return "members must be a list of profile ids"
    return None


def offset_with_size(params: Mapping[str, Any], caller: Caller) -> Found:
    if params.get("size") == -1 and params.get("offset") not in (None, 0):
        return "offset", params["offset"], "must be 0 when size is -1"
    return None


def grant_type_fields(params: Mapping[str, Any], caller: Caller) -> Found:
    if params.get("grant_type") == "password" and not params.get("username"):
        return "username", params.get("username"), "the password grant needs a username"
    return None


def filter_or_all(params: Mapping[str, Any], caller: Caller) -> Found:
    """A delete with no filter removes every notification: that must be asked for, not fallen into."""
    blank = not str(params.get("filter") or "").strip()
    everything = str(params.get("all")).lower() == "true"      # a boolean param may come as "true"
    if blank and not everything:
        return "filter", params.get("filter"), "give a filter, or all=True to delete every notification"
    if not blank and everything:
        return "all", params["all"], "give a filter or all=True, not both"
    return None


def not_logged_in_user(params: Mapping[str, Any], caller: Caller) -> Found:
    if caller.login is not None and params.get("username") == caller.login:
        return "username", params["username"], "is the logged-in user, who cannot delete itself"
    return None
