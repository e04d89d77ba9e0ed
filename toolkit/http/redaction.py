"""Secrets kept out of sight: `Secret`, a string shown as *** everywhere but where it is sent, and the
`Redactor`, which scrubs every known secret (and any Authorization header's credential) from a text
before it reaches a log line or an error.
"""
from __future__ import annotations

__all__ = ["Redactor", "Secret"]

import base64
import re
from collections.abc import Iterable
from typing import Any

from toolkit.catalog.masking import MASK


class Secret:
    """A secret string: shown as *** everywhere; `reveal()` gives it to the one place that sends it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = str(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self):  # pickling would write the secret out
        raise TypeError("a Secret cannot be pickled")


# the credential of an Authorization header, whatever it holds: base64 of a Basic pair does not
# contain the base64 of the password alone unless the username's length fits, so a known-secret
# search cannot be trusted with it
_AUTH_VALUE = re.compile(r"\b(Basic|Bearer)\s+(?!\*\*\*)[A-Za-z0-9+/=._~-]+", re.IGNORECASE)


class Redactor:
    """Replaces every known secret in a text with ***, and the credential of any Authorization header;
    learns tokens as they are issued."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | Secret | None) -> None:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if isinstance(value, str) and len(value) >= 4:
            self._secrets.add(value)

    def add_basic(self, username: str, password: str | Secret) -> None:
        """A Basic pair: the header's whole base64 value is a secret, padding and all."""
        secret = password.reveal() if isinstance(password, Secret) else password
        self.add(secret)
        encoded = base64.b64encode(f"{username}:{secret}".encode()).decode()
        self.add(encoded)
        self.add(encoded.rstrip("="))

    def scrub(self, text: Any) -> str:
        text = str(text)
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return _AUTH_VALUE.sub(lambda match: f"{match.group(1)} {MASK}", text)
