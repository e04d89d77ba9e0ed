"""The audience platform's own query languages, written for the sandbox (not shared with the client).

The notification filter: `severity:[ERROR, WARNING] AND NOT read:true AND created>:"2026-11-01"`.
Conditions are `property op value` or `property op [v1, v2]`; scalar operators `:` `!:` `>` `>:`,
set operators `:` (in) and `!:` (not in); `AND` binds tighter than `OR`; `NOT` and parentheses.
A quoted value runs to the next unescaped `"` (`\\"` a quote, `\\\\` a backslash, a backslash before
anything else is itself); an unquoted one ends at `,` `)` `]` or whitespace. A property name holding
the word AND, OR or NOT is refused (`foo AND type:alert` is a condition without an operator, not a
property `foo AND type`), and parentheses and NOTs nest at most 32 deep. Numbers compare
numerically, booleans as true/false, everything else (ISO timestamps included) as strings. A
property may be a dotted path (`details.audienceId`); a missing one equals nothing.

Also the comma-list filters of the audience lists (`vip,!test`) and the `name:asc,created:desc` sort.

    matches(parse_filter('type:audienceImport AND severity!:INFO'), notification)
"""
from __future__ import annotations

__all__ = ["MAX_DEPTH", "list_filter", "lookup", "matches", "parse_filter", "sort_records"]

import re
from collections.abc import Callable, Iterable
from typing import Any

from toolkit.sandbox.exchange import Reject

_OPERATOR = re.compile(r"!:|>:|:|>")
_ENDS = frozenset(",)] \t\r\n")
_KEYWORDS = frozenset(("AND", "OR", "NOT"))
MAX_DEPTH = 32          # deeper is no real filter, and 3,000 open parentheses would exhaust the stack


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos, self.depth = text, 0, 0

    def fail(self, message: str) -> Reject:
        return Reject(400, f"invalid filter: {message} at position {self.pos}",
                      errors=[f"filter: {message} at position {self.pos}"])

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def word(self, word: str) -> bool:
        """Consume a keyword (AND, OR, NOT) followed by whitespace or a parenthesis."""
        self.space()
        end = self.pos + len(word)
        if self.text[self.pos:end] == word and end < len(self.text) and self.text[end] in " \t\r\n(":
            self.pos = end
            return True
        return False

    def expression(self) -> tuple:
        node = self.conjunction()
        operands = [node]
        while self.word("OR"):
            operands.append(self.conjunction())
        return operands[0] if len(operands) == 1 else ("or", operands)

    def conjunction(self) -> tuple:
        operands = [self.negation()]
        while self.word("AND"):
            operands.append(self.negation())
        return operands[0] if len(operands) == 1 else ("and", operands)

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"parentheses and NOTs nest deeper than {MAX_DEPTH}")

    def negation(self) -> tuple:
        if self.word("NOT"):
            self.deeper()
            node = ("not", self.negation())
            self.depth -= 1
            return node
        self.space()
        if self.text.startswith("(", self.pos):
            self.pos += 1
            self.deeper()
            inner = self.expression()
            self.depth -= 1
            self.space()
            if not self.text.startswith(")", self.pos):
                raise self.fail("')' expected")
            self.pos += 1
            return inner
        return self.condition()

    def condition(self) -> tuple:
        found = _OPERATOR.search(self.text, self.pos)
        if found is None:
            raise self.fail("operator (: !: > >:) expected")
        prop = self.text[self.pos:found.start()].strip()
        if not prop or any(c in prop for c in '()[]"'):
            raise self.fail("property name expected")
        if _KEYWORDS & set(prop.split()):
            raise self.fail(f"operator (: !: > >:) expected after a condition's property, not {prop!r}")
        op = found.group()
        self.pos = found.end()
        self.space()
        if self.text.startswith("[", self.pos):
            if op not in (":", "!:"):
                raise self.fail(f"a set takes ':' or '!:', not {op!r}")
            self.pos += 1
            values = [self.value()]
            while True:
                self.space()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    values.append(self.value())
                elif self.text.startswith("]", self.pos):
                    self.pos += 1
                    return ("in" if op == ":" else "not in", prop, values)
                else:
                    raise self.fail("',' or ']' expected")
        return (op, prop, self.value())

    def value(self) -> str:
        self.space()
        text = self.text
        if text.startswith('"', self.pos):
            out, i = [], self.pos + 1
            while i < len(text):
                char = text[i]
                if char == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
                    out.append(text[i + 1])          # a backslash before anything else is itself
                    i += 2
                elif char == '"':
                    self.pos = i + 1
                    return "".join(out)
                else:
                    out.append(char)
                    i += 1
            raise self.fail("unterminated quoted value")
        start = self.pos
        while self.pos < len(text) and text[self.pos] not in _ENDS:
            self.pos += 1
        if self.pos == start:
            raise self.fail("value expected")
        return text[start:self.pos]


def parse_filter(text: str) -> tuple:
    """The expression as a tree of tuples; Reject(400) where it breaks the language."""
    parser = _Parser(text)
    if not text.strip():
        raise parser.fail("empty expression")
    tree = parser.expression()
    parser.space()
    if parser.pos != len(text):
        raise parser.fail(f"unexpected {text[parser.pos:parser.pos + 12]!r}")
    return tree


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
    wanted, unwanted = set(), set()
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
        present.sort(key=lambda r, p=prop: _sortable(lookup(r, p)), reverse=descending)
        ordered = present + missing
    return ordered


def _sortable(value: Any) -> Any:
    """A key that orders numbers among numbers and text among text (numbers first)."""
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, list):
        value = ",".join(map(str, value))
    if isinstance(value, bool | int | float):
        return (0, float(value), "")
    return (1, 0.0, str(value).lower())
