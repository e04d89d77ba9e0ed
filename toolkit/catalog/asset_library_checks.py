"""The asset library's own checks, where no field of a Param or an Action says it: read by the one
check of toolkit.http.rules from its catalog entries (`Action(checks=(...))`).
"""
from __future__ import annotations

__all__ = ["SELECT_TYPES", "custom_field_value", "select_values"]

from collections.abc import Mapping
from typing import Any

from toolkit.catalog.spec import Caller, Found

SELECT_TYPES = ("single-select", "multi-select")


def custom_field_value(params: Mapping[str, Any], caller: Caller) -> Found:
    if "value" in params and "values" in params:
        return "values", params["values"], "give value (plain-text, date) or values (select types), not both"
    if "value" not in params and "values" not in params:
        return "value", None, "give value (plain-text, date) or values (select types); None unsets"
    values = params.get("values")
    if values is not None and not (isinstance(values, list)
                                   and all(isinstance(v, dict) and v.get("id") for v in values)):
        return "values", values, "must be a list of objects each with the id of a value"
    return None


def select_values(params: Mapping[str, Any], caller: Caller) -> Found:
    if params.get("values") and params.get("type") not in SELECT_TYPES:
        return "values", params["values"], "only single-select and multi-select fields take values"
    return None
