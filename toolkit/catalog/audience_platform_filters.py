"""The audience platform's notification filter language, read one way by the client's check and the
sandbox's evaluator (toolkit.http.filters builds it; toolkit.sandbox.audience_platform.filter evaluates it).

    type:alert AND NOT (severity:[low, info] OR read:true) AND created>:"2026-11-01"

Conditions are `property op value` or `property op [v1, v2]`; scalar operators `:` `!:` `>` `>:`,
set operators `:` (in) and `!:` (not in); `AND` binds tighter than `OR`; `NOT` and parentheses combine
them. A quoted value runs to the next unescaped `"`; inside it `\\"` is a quote and `\\\\` a backslash
(a backslash before anything else is itself). The document names `,` `)` `]` among the delimiters of an
unquoted value and leaves the full set unshown; we also end one at whitespace, since otherwise
`a:x AND b:y` could not be written.

Where the document is silent:
- A property name is any text, but not one holding the word AND, OR or NOT: the document combines
  conditions with those words, so `foo AND type:alert` is a condition without an operator (`foo`)
  and refused, not a property named `foo AND type`, and `a:1 OR OR x:1` is refused too. Words that
  merely start with one (`ANDROID`, `NOTE`) are names. A keyword is one where whitespace, a
  parenthesis or the end of the text follows it (`a:1 AND` is a conjunction missing its condition).
- Parentheses and NOTs nest at most MAX_DEPTH deep: a filter is a few conditions, and a deeper one
  is a mistake or an attack on the reader (3,000 open parentheses would exhaust Python's stack).

    parse('severity:[low, info] AND NOT read:true')   # BoolOp("AND", (Condition(...), Not(...)))
"""
from __future__ import annotations

__all__ = ["BoolOp", "Condition", "FilterSyntaxError", "KEYWORDS", "MAX_DEPTH", "Node", "Not", "OPERATORS", "parse"]

import re
from dataclasses import dataclass
from typing import Any

from toolkit.errors import FilterSyntaxError

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


Node = Condition | Not | BoolOp


def parse(text: str) -> Node:
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
