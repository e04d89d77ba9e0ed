"""What a secret is and how it is shown: the one home of the mask, the secret names and the scrubbing
every floor uses (the client's previews and errors, the audit, the stored params, drift examples, the
cassettes, the CLI).

    MASK                      what a secret shows as, everywhere
    looks_secret(name)        a param, field or query name that holds a secret (token, password, API key,
                              client secret, credentials, authorization, private key, cookie)
    ends_secret(name)         a settings key whose value is a secret (`clientSecret`, `credentialsJson`;
                              not `tokenUrl`, which only names where a token comes from)
    scrub(value)              params or a record as JSON-ready data, secrets masked
    secret_pair(mapping)      the value field of a `{key, value}` pair whose key names a secret
                              (a webhook's `_webhookBasicAuthPass` metadata entry)
    scrub_url(url)            a URL without a password or a secret-looking query value
    mask_passwords(text)      text with every connection string's password masked (a DuckLake address:
                              libpq's `password=`, a URI's `user:password@`), as DuckDB's errors repeat it
    mask_settings(body)       a settings object with every secret-ending key's value masked
    body_secrets(), query_secrets(), form_secrets()  normalised names for recorded exchanges (`norm`)

The catalog declares which params of an action are secret (`Param.secret`, `Service.secrets`); these
names catch the rest: a secret under a name the documents give no flag, in an answer or a URL.
"""
from __future__ import annotations

__all__ = ["MASK", "body_secrets", "ends_secret", "form_secrets", "looks_secret", "mask_passwords",
           "mask_settings", "norm", "query_secrets", "scrub", "scrub_url", "secret_pair"]

import functools
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolkit import catalog

MASK = "***"

# a password as libpq's key=value strings, URIs and DuckDB's secrets spell it
_PASSWORDS = (re.compile(r"(?i)(\bpassword\s*=\s*)('[^']*'|\"[^\"]*\"|\S+)"),
              re.compile(r"(://[^:/@\s]+:)([^@\s]+)(@)"))
_SECRET_NAME = re.compile(r"token|passw|secret|api_?key|credential|authorization|private_?key|cookie", re.I)
_SECRET_ENDINGS = ("secret", "password", "credentialsjson", "apikey", "token")


def looks_secret(name: str) -> bool:
    """Whether a name (any case, with or without `_`) holds a secret."""
    return bool(_SECRET_NAME.search(name))


def ends_secret(name: str) -> bool:
    """Whether a settings key's value is a secret: its name ends in one of the secret words."""
    return norm(name).endswith(_SECRET_ENDINGS)


def norm(name: str) -> str:
    """A name as the secret lists compare it: lower case, letters and digits only."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


_PAIR_LABELS = ("key", "name")


def secret_pair(value: Mapping) -> Any:
    """The `value` field of a name/value pair (`{key, value}` or `{name, value}`, any case) whose name
    holds a secret, or None: a secret given as data, such as the translation service's webhook
    metadata `{"key": "_webhookBasicAuthPass", "value": ...}`, hides under no secret field name."""
    fields = {str(k).lower(): k for k in value}
    if len(fields) != 2 or "value" not in fields:
        return None
    label = next((value[fields[n]] for n in _PAIR_LABELS if n in fields), None)
    if not isinstance(label, str):
        return None
    # a label is a name someone chose: `...AuthPass`, `...Pwd` as well as the usual words
    return fields["value"] if looks_secret(label) or norm(label).endswith(("pass", "pwd")) else None


_PLAIN = frozenset({str, int, float, bool, type(None)})   # exactly these types: a subclass may be a secret


def scrub(value: Any, secret_names: frozenset[str] = frozenset()) -> Any:
    """Params (or a record) as JSON-ready data with the value of every secret-looking name, or of one
    of `secret_names`, and any `Secret`, as the mask."""
    if isinstance(value, Mapping):
        hidden = secret_pair(value)
        return {str(k): MASK if k == hidden or str(k) in secret_names or looks_secret(str(k))
                else scrub(v, secret_names) for k, v in value.items()}
    if type(value).__name__ == "Secret":
        return MASK
    if isinstance(value, set | frozenset):
        return sorted((scrub(v, secret_names) for v in value), key=repr)
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):  # Series, Index, ndarray, numpy
        return scrub(value.tolist(), secret_names)
    if isinstance(value, list | tuple):
        if all(type(v) in _PLAIN for v in value):    # a fan-out's ids: 600,000 calls saved a load
            return list(value)
        return [scrub(v, secret_names) for v in value]
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def scrub_url(url: str) -> str:
    """A URL without a password or a secret-looking query value."""
    parts = urlsplit(url or "")
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@" + netloc.rsplit("@", 1)[1]
    query = urlencode([(k, MASK if looks_secret(k) else v) for k, v in parse_qsl(parts.query)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_passwords(text: str) -> str:
    """Text with every password of a connection string masked."""
    for pattern in _PASSWORDS:
        text = pattern.sub(lambda m: m.group(1) + MASK + (m.group(3) if m.re.groups > 2 else ""), text)
    return text


def mask_settings(body: Any) -> Any:
    """A settings object (an integration's configuration) with the value of every key ending in a
    secret word masked, at any depth."""
    if isinstance(body, dict):
        return {k: (MASK if v and ends_secret(k) else mask_settings(v)) for k, v in body.items()}
    if isinstance(body, list):
        return [mask_settings(v) for v in body]
    return body


@functools.cache
def body_secrets() -> frozenset[str]:
    """Field names (normalised) whose value is a secret wherever they appear in a body: the usual
    ones, and every param and credential the catalog declares secret."""
    usual = ("access_token", "refresh_token", "id_token", "token", "password", "passphrase", "client_secret",
             "secret", "api_key", "api_secret", "private_key", "secret_key", "session_token", "credentials_json",
             "google_credentials_json", "authorization")
    return (frozenset(norm(name) for name in usual)
            | frozenset(norm(p.wire) for a in catalog.ACTIONS.values() for p in a.params if p.secret)
            | frozenset(norm(name) for s in catalog.SERVICES.values() for name in s.secrets))


def query_secrets() -> frozenset[str]:
    """Query param names (normalised) that carry a secret: tokens in a URL, presigned URLs' signatures."""
    return frozenset(norm(name) for name in (
        "access_token", "refresh_token", "token", "api_key", "apikey", "password", "client_secret",
        "signature", "sig", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
        "X-Goog-Signature", "X-Goog-Credential"))


def form_secrets() -> frozenset[str]:
    """A form body is the OAuth password grant: its user name is an account's login, secret too."""
    return body_secrets() | {"username"}
