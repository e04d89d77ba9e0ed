"""The translation service's own checks, where no field of a Param or an Action says it: read by the one
check of toolkit.http.rules from its catalog entries (`Action(checks=(...))`).
"""
from __future__ import annotations

__all__ = ["TARGET_FORMATS", "batch_target_formats", "non_parsable_file_format"]

from collections.abc import Mapping
from typing import Any

from toolkit.catalog.spec import Caller, Found

TARGET_FORMATS = ("TXML", "TXLF", "NON_PARSABLE")


def non_parsable_file_format(params: Mapping[str, Any], caller: Caller) -> Found:
    if params.get("target_format") == "NON_PARSABLE" and params.get("file_format_name"):
        return "file_format_name", params["file_format_name"], "must be blank when the target format is NON_PARSABLE"
    return None


def batch_target_formats(params: Mapping[str, Any], caller: Caller) -> Found:
    batches = params.get("batch_infos") or []
    for batch in batches if isinstance(batches, list) else [batches]:
        if isinstance(batch, dict) and batch.get("targetFormat", "TXML") not in TARGET_FORMATS:
            return "batch_infos", batches, f"targetFormat {batch['targetFormat']!r} must be TXML, TXLF or NON_PARSABLE"
    return None
