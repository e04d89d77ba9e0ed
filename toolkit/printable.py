"""Text from the services made safe to print: a field name, a cursor or a message holding terminal
escapes (`\\x1b[2J`), a newline that forges a line of its own (`\\nWARNING: all good`) or a
right-to-left override is shown as its escape, never acted on by a terminal, a log or a notebook.

    printable("name\\x1b[2J\\nWARNING: all good")   # 'name\\\\x1b[2J\\\\nWARNING: all good'
"""
from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides and
# isolates, zero-width joiners): what a terminal or a renderer acts on instead of showing
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(value: object, keep_lines: bool = False) -> str:
    """`value` as text with every control and hiding character escaped; `keep_lines` leaves the
    newlines of a message toolkit itself wrote on several lines."""
    text = str(value)
    if not keep_lines:
        return _HIDDEN.sub(_escape, text)
    return "\n".join(_HIDDEN.sub(_escape, line) for line in text.split("\n"))

