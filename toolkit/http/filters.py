"""The audience platform's notification filter language: a parser that checks it, and a builder.

    type:alert AND NOT (severity:[low, info] OR read:true) AND created>:"2026-11-01"

Conditions are `property op value` or `property op [v1, v2]`; scalar operators `:` `!:` `>` `>:`,
set operators `:` (in) and `!:` (not in); `AND`, `OR`, `NOT` and parentheses combine them. A quoted
value runs to the next unescaped `"`; inside it `\\"` is a quote and `\\\\` a backslash. The document
names `,` `)` `]` among the delimiters of an unquoted value and leaves the full set unshown; we also
end one at whitespace, since otherwise `a:x AND b:y` could not be written.

Where the document is silent, and the sandbox's evaluator reads it the same way:
- A property name is any text, but not one holding the word AND, OR or NOT: the document combines
  conditions with those words, so `foo AND type:alert` is a condition without an operator (`foo`)
  and refused, not a property named `foo AND type`, and `a:1 OR OR x:1` is refused too. Words that
  merely start with one (`ANDROID`, `NOTE`) are names.
- Parentheses and NOTs nest at most MAX_DEPTH deep: a filter is a few conditions, and a deeper one
  is a mistake or an attack on the reader (3,000 open parentheses would exhaust Python's stack).

    F("type") == "alert"                       # type:"alert"
    (F("severity").isin(["low", "info"]) | ~F("read").eq(True)) & (F("created") >= "2026-11-01")
"""
from __future__ import annotations

__all__ = ["BoolOp", "Condition", "Expr", "F", "FilterSyntaxError", "KEYWORDS", "MAX_DEPTH", "Not",
           "OPERATORS", "parse", "quote"]

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolkit.errors import FilterSyntaxError, ValidationError
from toolkit.http.kinds import is_scalar

OPERATORS = ("!:", ">:", ":", ">")
KEYWORDS = ("AND", "OR", "NOT")
MAX_DEPTH = 32
_DELIMITERS = set(",)] \t\r\n")


@dataclass(frozen=True)
class Condition:
    prop: str
    op: str
    value: str | tuple[str, ...]


@dataclass(frozen=True)
class Not:
    operand: Any


@dataclass(frozen=True)
class BoolOp:
    op: str               # AND or OR
    operands: tuple[Any, ...]


def parse(text: str) -> Condition | Not | BoolOp:
    """The expression as a tree; raises FilterSyntaxError where it breaks the language."""
    reader = _Reader(text)
    tree = reader.expression()
    reader.skip_space()
    if reader.pos != len(text):
        raise FilterSyntaxError(f"unexpected {text[reader.pos:reader.pos + 10]!r}", reader.pos)
    return tree


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos, self.depth = text, 0, 0

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def keyword(self, word: str) -> bool:
        self.skip_space()
        end = self.pos + len(word)
        if self.text[self.pos:end] == word and (end == len(self.text) or self.text[end] in " \t\r\n("):
            self.pos = end
            return True
        return False

    def expression(self) -> Any:
        operands = [self.term()]
        while self.keyword("OR"):
            operands.append(self.term())
        return operands[0] if len(operands) == 1 else BoolOp("OR", tuple(operands))

    def term(self) -> Any:
        operands = [self.factor()]
        while self.keyword("AND"):
            operands.append(self.factor())
        return operands[0] if len(operands) == 1 else BoolOp("AND", tuple(operands))

    def factor(self) -> Any:
        self.skip_space()
        start = self.pos
        if self.keyword("NOT"):
            return Not(self.nested(self.factor, start))
        self.skip_space()
        if self.text.startswith("(", self.pos):
            self.pos += 1
            inner = self.nested(self.expression, start)
            self.skip_space()
            if not self.text.startswith(")", self.pos):
                raise FilterSyntaxError("missing ')'", self.pos)
            self.pos += 1
            return inner
        return self.condition()

    def nested(self, read: Any, start: int) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FilterSyntaxError(f"parentheses and NOTs nest deeper than {MAX_DEPTH}", start)
        tree = read()
        self.depth -= 1
        return tree

    def condition(self) -> Condition:
        start = self.pos
        match = re.compile(r"!:|>:|:|>").search(self.text, self.pos)
        if match is None:
            raise FilterSyntaxError("a condition needs an operator (: !: > >:)", start)
        prop = self.text[start:match.start()].strip()
        if not prop or any(c in prop for c in "()[]\""):
            raise FilterSyntaxError("a condition needs a property name", start)
        if any(word in KEYWORDS for word in prop.split()):
            raise FilterSyntaxError(f"{prop!r} is not a property name: AND, OR and NOT join conditions, "
                                    "and a condition needs an operator (: !: > >:)", start)
        self.pos = match.end()
        self.skip_space()
        if self.text.startswith("[", self.pos):
            if match.group() not in (":", "!:"):
                raise FilterSyntaxError(f"a set takes : or !:, not {match.group()}", match.start())
            return Condition(prop, match.group(), self.value_set())
        return Condition(prop, match.group(), self.scalar())

    def value_set(self) -> tuple[str, ...]:
        self.pos += 1
        values = []
        while True:
            self.skip_space()
            values.append(self.scalar())
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif self.text.startswith("]", self.pos):
                self.pos += 1
                return tuple(values)
            else:
                raise FilterSyntaxError("a set needs ',' or ']'", self.pos)

    def scalar(self) -> str:
        self.skip_space()
        if self.text.startswith('"', self.pos):
            out, i = [], self.pos + 1
            while i < len(self.text):
                char = self.text[i]
                if char == "\\" and i + 1 < len(self.text) and self.text[i + 1] in '"\\':
                    out.append(self.text[i + 1])
                    i += 2
                elif char == '"':
                    self.pos = i + 1
                    return "".join(out)
                else:
                    out.append(char)
                    i += 1
            raise FilterSyntaxError("an unterminated quoted value", self.pos)
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _DELIMITERS:
            self.pos += 1
        if self.pos == start:
            raise FilterSyntaxError("a condition needs a value", start)
        return self.text[start:self.pos]


def quote(value: Any) -> str:
    """A value as the language writes it: always quoted, quotes and backslashes escaped."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


class Expr:
    """A built filter expression; `str(expr)` is the text the service takes."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __and__(self, other: Expr) -> Expr:
        return Expr(f"({self.text}) AND ({other.text})")

    def __or__(self, other: Expr) -> Expr:
        return Expr(f"({self.text}) OR ({other.text})")

    def __invert__(self) -> Expr:
        return Expr(f"NOT ({self.text})")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"F<{self.text}>"


class F:
    """A property of a notification, to build a filter: `F("type") == "alert"`."""

    def __init__(self, prop: str) -> None:
        if not isinstance(prop, str):
            raise ValidationError("F", prop, "a filter property is a name: give it as text, e.g. F(\"type\")")
        # a name holding the word AND, OR or NOT would read back as two conditions or a negation
        if not prop.strip() or any(c in prop for c in ':!>()[]"') or any(w in KEYWORDS for w in prop.split()):
            raise ValueError(f"{prop!r} cannot be written as a filter property")
        self.prop = prop.strip()

    def _scalar(self, op: str, value: Any) -> Expr:
        return Expr(f"{self.prop}{op}{quote(self._checked(value))}")

    def _checked(self, value: Any) -> Any:
        """A value the language can spell: text, a number, true/false or a date; an object's repr or
        a list's brackets would be sent as if they were the value."""
        if isinstance(value, bool) or is_scalar(value):
            return value
        raise ValidationError(self.prop, value, "a filter value is text, a number, true/false or a date "
                                                "(a set of them goes in isin/notin)")

    def __eq__(self, value: Any) -> Expr:  # type: ignore[override]
        return self._scalar(":", value)

    def __ne__(self, value: Any) -> Expr:  # type: ignore[override]
        return self._scalar("!:", value)

    def __gt__(self, value: Any) -> Expr:
        return self._scalar(">", value)

    def __ge__(self, value: Any) -> Expr:
        return self._scalar(">:", value)

    eq, ne = __eq__, __ne__

    def isin(self, values: Iterable[Any]) -> Expr:
        return self._set(":", values)

    def notin(self, values: Iterable[Any]) -> Expr:
        return self._set("!:", values)

    def _set(self, op: str, values: Iterable[Any]) -> Expr:
        if isinstance(values, str) or not isinstance(values, Iterable) or isinstance(values, bytes | dict):
            values = [values]      # one value alone is a set of one, never a string's characters
        items = [quote(self._checked(v)) for v in values]
        if not items:       # the language has no empty set
            raise ValueError(f"a set for {self.prop!r} needs at least one value")
        return Expr(f"{self.prop}{op}[{', '.join(items)}]")

    __hash__ = None  # type: ignore[assignment]
