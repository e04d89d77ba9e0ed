"""What a cassette may hold: the vcrpy hooks that scrub every exchange before it is written.

Scrubbed on the way in (`Scrubber.request`, `Scrubber.response`, run by vcrpy before an exchange is
stored, and on every request it looks up while replaying, so both sides compare scrubbed):
- the auth headers (`Authorization` keeps its scheme: `Bearer ***`; `x-api-key`, `x-air-workspace-id`),
  cookies; the request headers that depend on the machine (`Accept-Encoding` lists what is installed);
- secret fields of JSON and form bodies, at any depth: the catalog's secret params, the services'
  secret credentials and the usual names (`access_token`, `refresh_token`, `clientSecret`,
  `credentialsJson`, `googleCredentialsJson`, `password`, `apiKey`, ...) → `***`;
- secret-looking query params (`access_token`, `X-Amz-Signature`, ...) in the URI and in any URL a
  body carries;
- every literal secret the recorder knows (the sandbox's `secrets()`, the client's redactor), wherever
  it appears;
- the origin: `http://127.0.0.1:<port>` becomes `http://sandbox`, a real base URL
  `https://real/<service><base path>`, so files are byte-stable and replay ignores where they came from;
- the response headers that change from run to run (`Date`, `Server`, request ids).

Binary bodies (zip downloads, upload parts) are left as bytes: vcrpy writes them as `!!binary`
base64 and reads them back byte for byte. A changed body gets a matching `Content-Length`.

    scrubber = Scrubber(origins={"http://127.0.0.1:40111": "http://sandbox"}, secrets=box.secrets)
"""
from __future__ import annotations

__all__ = ["AUTH_HEADERS", "DROP_REQUEST_HEADERS", "DROP_RESPONSE_HEADERS", "FORM_SECRET_FIELDS",
           "SECRET_FIELDS", "SECRET_QUERY", "Scrubber", "json_body", "mask_fields", "scrub_url",
           "value_is_set"]

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolkit import catalog
from toolkit.catalog.masking import MASK, body_secrets, form_secrets, norm, query_secrets

# Field, query and form names whose value is a secret, normalised (`client_secret`, `clientSecret` →
# `clientsecret`): toolkit.catalog.masking's, the catalog's secret params among them.
SECRET_FIELDS, SECRET_QUERY, FORM_SECRET_FIELDS = body_secrets(), query_secrets(), form_secrets()

# the services' own credential headers from the catalog (Service.key_headers: x-api-key, ...)
AUTH_HEADERS = ("authorization", "proxy-authorization",
                *sorted({h.lower() for s in catalog.SERVICES.values() for h in s.key_headers.values()}))
DROP_REQUEST_HEADERS = ("accept-encoding", "connection", "content-length", "cookie")
DROP_RESPONSE_HEADERS = frozenset((
    "date", "server", "set-cookie", "x-request-id", "request-id", "x-amzn-requestid", "x-amzn-trace-id",
    "x-amz-request-id", "x-amz-id-2", "x-correlation-id", "cf-ray", "x-runtime", "age",
))
_URL = re.compile(r"https?://[^\s\"'<>\\]+")


class Scrubber:
    """The before_record_request / before_record_response hooks of one recording (or a replay).

    `origins` maps what to rewrite to what (longest first): the sandbox's `http://127.0.0.1:PORT`,
    a real base URL. `secrets` is a callable giving the literal secrets known now (tokens are issued
    during the recording, so it is asked at each exchange); `redact` a function masking them in a text.
    """

    def __init__(self, origins: Mapping[str, str] | None = None,
                 secrets: Callable[[], Iterable[str]] | None = None,
                 redact: Callable[[str], str] | None = None) -> None:
        self.origins = dict(sorted((origins or {}).items(), key=lambda kv: -len(kv[0])))
        self.secrets = secrets or (lambda: ())
        self.redact = redact            # a client's Redactor.scrub: the secrets it was given or issued

    # --- text -----------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """Origins rewritten, known secrets masked, secret query params in URLs masked."""
        for old, new in self.origins.items():
            text = text.replace(old, new)
            bare = old.split("://", 1)[-1]
            if bare != old:
                text = text.replace(bare, new.split("://", 1)[-1])
        for secret in sorted((s for s in self.secrets() if isinstance(s, str) and len(s) >= 6),
                             key=len, reverse=True):
            text = text.replace(secret, MASK)
        if self.redact is not None:
            text = self.redact(text)
        return _URL.sub(lambda m: scrub_url(m.group(0)), text)

    # --- the hooks ------------------------------------------------------------------------------

    def request(self, request: Any) -> Any:
        """vcrpy's before_record_request: gets a copy, returns it scrubbed."""
        request.uri = self.text(request.uri)
        headers = {}
        for name, value in request.headers.items():
            lower = name.lower()
            if lower in DROP_REQUEST_HEADERS:
                continue
            if lower in AUTH_HEADERS:
                scheme = str(value).split(" ", 1)[0] if " " in str(value) else ""
                value = f"{scheme} {MASK}".strip()
            headers[name] = value
        request.headers = headers
        kind = _content_type(headers)
        body = request.body
        if isinstance(body, bytes) and body:
            request.body = self.body(body, kind)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """vcrpy's before_record_response: a dict with status, headers and body."""
        headers = {}
        for name, values in response.get("headers", {}).items():
            if name.lower() in DROP_RESPONSE_HEADERS:
                continue
            headers[name] = [self.text(v) if isinstance(v, str) else v for v in values]
        body = response.get("body", {}).get("string")
        if isinstance(body, bytes) and body:
            kind = next((v[0] for k, v in headers.items() if k.lower() == "content-type" and v), "")
            new = self.body(body, kind)
            if new != body:
                response["body"]["string"] = new
                for name in headers:
                    if name.lower() == "content-length":
                        headers[name] = [str(len(new))]
        response["headers"] = headers
        return response

    def body(self, body: bytes, content_type: str) -> bytes:
        """A body scrubbed by its kind; binary (not UTF-8) and multipart bodies are left as they are."""
        if "multipart/" in content_type:
            return body
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        if "x-www-form-urlencoded" in content_type:
            pairs = [(k, MASK if norm(k) in FORM_SECRET_FIELDS and v else v)
                     for k, v in parse_qsl(text, keep_blank_values=True)]
            text = urlencode(pairs)
        elif "json" in content_type or text[:1] in "{[":
            try:
                data = json.loads(text)
            except ValueError:
                pass
            else:
                masked = mask_fields(data)
                if masked != data:
                    text = json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
        new = self.text(text).encode("utf-8")
        return body if new == body else new


def mask_fields(value: Any) -> Any:
    """A JSON value with every secret field (at any depth) set to ***; empty values stay empty."""
    if isinstance(value, dict):
        return {k: (MASK if norm(k) in SECRET_FIELDS and value_is_set(v) else mask_fields(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask_fields(v) for v in value]
    return value


def value_is_set(value: Any) -> bool:
    return value not in (None, "", MASK, {}, [])


def scrub_url(url: str) -> str:
    """A URL with its secret query params masked."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(norm(k) in SECRET_QUERY for k, _ in pairs):
        return url
    query = urlencode([(k, MASK if norm(k) in SECRET_QUERY and v else v) for k, v in pairs], safe="*")
    return urlunsplit(parts._replace(query=query))


def _content_type(headers: Mapping[str, Any]) -> str:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return str(value[0] if isinstance(value, list) else value).lower()
    return ""


# --- matching -----------------------------------------------------------------------------------

def json_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: JSON bodies equal as parsed JSON (key order aside), forms as parsed pairs;
    multipart bodies are not compared (their boundary is the recorder's choice)."""
    t1, t2 = _content_type(r1.headers), _content_type(r2.headers)
    if "multipart/" in t1 or "multipart/" in t2:
        return
    b1, b2 = _bytes(r1.body), _bytes(r2.body)
    if b1 == b2:
        return
    if "x-www-form-urlencoded" in t1:
        assert sorted(parse_qsl(b1.decode(), keep_blank_values=True)) == \
            sorted(parse_qsl(b2.decode(), keep_blank_values=True)), f"form {b1!r} != {b2!r}"
        return
    try:
        assert json.loads(b1 or b"null") == json.loads(b2 or b"null"), f"JSON body {b1[:200]!r} != {b2[:200]!r}"
    except ValueError:
        raise AssertionError(f"body {b1[:200]!r} != {b2[:200]!r}") from None


def _bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        return body.read()
    if not isinstance(body, bytes):
        return b"".join(body)
    return body
