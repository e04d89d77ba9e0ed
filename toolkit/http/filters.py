"""The audience platform's notification filter language: its builder, and its reader handed on.

    F("type") == "alert"                       # type:"alert"
    (F("severity").isin(["low", "info"]) | ~F("read").eq(True)) & (F("created") >= "2026-11-01")

The language itself (what `parse` reads, where the document is silent) is the catalog's
(toolkit.catalog.audience_platform_filters), read the same way by the sandbox's evaluator.
"""
from __future__ import annotations

__all__ = ["BoolOp", "Condition", "Expr", "F", "FilterSyntaxError", "KEYWORDS", "MAX_DEPTH", "Not",
           "OPERATORS", "parse", "quote"]

from collections.abc import Iterable
from typing import Any

from toolkit.catalog.audience_platform_filters import (
    KEYWORDS,
    MAX_DEPTH,
    OPERATORS,
    BoolOp,
    Condition,
    FilterSyntaxError,
    Not,
    parse,
)
from toolkit.errors import ValidationError
from toolkit.http.kinds import is_scalar


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
