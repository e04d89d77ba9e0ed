"""The audience platform's own query languages, evaluated for the sandbox.

The notification filter: `severity:[ERROR, WARNING] AND NOT read:true AND created>:"2026-11-01"`, in
the grammar of the catalog (toolkit.catalog.audience_platform_filters), which the client's check
reads too: one language, read one way. What is the sandbox's own is its meaning: numbers compare
numerically, booleans as true/false, everything else (ISO timestamps included) as strings. A
property may be a dotted path (`details.audienceId`); a missing one equals nothing.

Also the comma-list filters of the audience lists (`vip,!test`) and the `name:asc,created:desc` sort.

    matches(parse_filter('type:audienceImport AND severity!:INFO'), notification)
"""
from __future__ import annotations

__all__ = ["MAX_DEPTH", "list_filter", "lookup", "matches", "parse_filter", "sort_records"]

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from toolkit.catalog.audience_platform_filters import MAX_DEPTH, BoolOp, FilterSyntaxError, Node, Not, parse
from toolkit.sandbox.exchange import Reject


def _tuples(node: Node) -> tuple:
    """The catalog's tree as the evaluator's tuples: ("and"|"or", [...]), ("not", x), (op, prop, value),
    ("in"|"not in", prop, [values])."""
    if isinstance(node, BoolOp):
        return (node.op.lower(), [_tuples(operand) for operand in node.operands])
    if isinstance(node, Not):
        return ("not", _tuples(node.operand))
    if isinstance(node.value, tuple):
        return ("in" if node.op == ":" else "not in", node.prop, list(node.value))
    return (node.op, node.prop, node.value)


def parse_filter(text: str) -> tuple:
    """The expression as a tree of tuples; Reject(400) where it breaks the language (the catalog's, which
    the client reads too: toolkit.catalog.audience_platform_filters)."""
    try:
        if not text.strip():
            raise FilterSyntaxError("empty expression", 0)
        return _tuples(parse(text))
    except FilterSyntaxError as error:
        raise Reject(400, f"invalid filter: {error}", errors=[f"filter: {error}"]) from None


def lookup(record: dict[str, Any], path: str) -> Any:
    node: Any = record
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _equal(actual: Any, wanted: str) -> bool:
    if actual is None:
        return False
    if isinstance(actual, list):
        return any(_equal(item, wanted) for item in actual)
    if isinstance(actual, bool):
        return wanted.lower() == ("true" if actual else "false")
    if isinstance(actual, int | float):
        number = _number(wanted)
        return number is not None and actual == number
    return str(actual) == wanted


def _greater(actual: Any, wanted: str, prop: str, inclusive: bool) -> bool:
    if actual is None or isinstance(actual, bool | list | dict):
        return False
    if isinstance(actual, int | float):
        number = _number(wanted)
        if number is None:
            raise Reject(400, f"invalid filter: {prop} is a number, {wanted!r} is not",
                         errors=[f"filter: {prop} is a number, {wanted!r} is not"])
        return actual >= number if inclusive else actual > number
    return str(actual) >= wanted if inclusive else str(actual) > wanted


def matches(tree: tuple, record: dict[str, Any]) -> bool:
    kind = tree[0]
    if kind == "and":
        return all(matches(t, record) for t in tree[1])
    if kind == "or":
        return any(matches(t, record) for t in tree[1])
    if kind == "not":
        return not matches(tree[1], record)
    _, prop, wanted = tree
    actual = lookup(record, prop)
    if kind == ":":
        return _equal(actual, wanted)
    if kind == "!:":
        return not _equal(actual, wanted)
    if kind in (">", ">:"):
        return _greater(actual, wanted, prop, kind == ">:")
    if kind == "in":
        return any(_equal(actual, w) for w in wanted)
    return not any(_equal(actual, w) for w in wanted)       # not in


# --- audience list filters and sort -----------------------------------------------------------

def list_filter(records: Iterable[dict[str, Any]], raw: str | None,
                values_of: Callable[[dict[str, Any]], Iterable[Any]], name: str) -> list[dict[str, Any]]:
    """Keep records matching any listed value and none of the `!` ones; an empty filter keeps all."""
    records = list(records)
    if raw is None or not raw.strip():
        return records
    wanted: set[str] = set()
    unwanted: set[str] = set()
    for item in raw.split(","):
        item = item.strip()
        if not item or item == "!":
            raise Reject(400, f"{name} must be a comma separated list of values, each optionally "
                              "prefixed with '!'")
        (unwanted if item.startswith("!") else wanted).add(item.removeprefix("!"))
    kept = []
    for record in records:
        have = {str(v) for v in values_of(record) if v is not None}
        if wanted and not have & wanted:
            continue
        if have & unwanted:
            continue
        kept.append(record)
    return kept


_SORT_ITEM = re.compile(r"\s*([A-Za-z0-9_.]+)(?::(asc|desc))?\s*")


def sort_records(records: list[dict[str, Any]], raw: str | None) -> list[dict[str, Any]]:
    """Sorted by `name`, `name:asc`, `name:desc`, several keys; empty: as they are. Missing values last."""
    if raw is None or not raw.strip():
        return records
    keys = []
    for item in raw.split(","):
        found = _SORT_ITEM.fullmatch(item)
        if found is None:
            raise Reject(400, f"sort must be a comma separated list of name, name:asc or name:desc, not {raw!r}")
        keys.append((found.group(1), found.group(2) == "desc"))
    ordered = list(records)
    for prop, descending in reversed(keys):      # stable sorts, least significant key first
        present = [r for r in ordered if _sortable(lookup(r, prop)) is not None]
        missing = [r for r in ordered if _sortable(lookup(r, prop)) is None]
        present.sort(key=partial(_sort_key, prop), reverse=descending)
        ordered = present + missing
    return ordered


def _sort_key(prop: str, record: dict[str, Any]) -> Any:
    return _sortable(lookup(record, prop))


def _sortable(value: Any) -> Any:
    """A key that orders numbers among numbers and text among text (numbers first)."""
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, list):
        value = ",".join(map(str, value))
    if isinstance(value, bool | int | float):
        return (0, float(value), "")
    return (1, 0.0, str(value).lower())
