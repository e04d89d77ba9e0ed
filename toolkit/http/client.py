"""The client: any catalog action, checked, sent and parsed; pages walked; methods from the catalog.

It speaks HTTP and nothing else: no workspace, no DataFrame, no widget (`toolkit.connection.connection` binds a
client to a workspace; importing this module loads none of pandas, DuckDB, Arrow or ipywidgets).

    tm = toolkit.connect("translation", base_url=..., username=..., password=..., client_id=..., client_secret=...)
    tm.call("translation.get_submission", submission_id=12)
    tm.get_submission(submission_id=12)             # the same, with a real signature for Tab and ?
    for page in tm.pages("translation.list_submissions"): ...
"""
from __future__ import annotations

__all__ = ["Client", "Page", "client_class", "connect", "credentials_from_env", "log"]

import hashlib
import ipaddress
import logging
import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import requests

from toolkit import catalog
from toolkit.catalog.masking import scrub_url
from toolkit.catalog.spec import CONTENT_TYPES, Action, Service
from toolkit.errors import (
    AnswerError,
    AuthError,
    LimitError,
    RedirectError,
    ToolkitError,
    TransportError,
    VersionError,
    error_for,
)
from toolkit.http import answers, rules
from toolkit.http import credentials as resolution
from toolkit.http.bodies import patch_problem
from toolkit.http.failures import Failures, scrubbed
from toolkit.http.limits import Limits, depth_past
from toolkit.http.methods import with_methods
from toolkit.http.session import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    OAuthPasswordAuth,
    RateBudget,
    Redactor,
    RetryPolicy,
    Secret,
    Transport,
    request_id,
    retry_after,
)
from toolkit.http.walks import Page, Walks
from toolkit.http.wire import MASK, Prepared, Upload, file_part, opened_files, wire_value

log = logging.getLogger("toolkit.http.session")


class Client(Walks, Failures):
    """A connection to one service: `call`, `pages`, and one method per action of the service.

    Its requests go through a requests Session it makes (one origin, pooled), or through `session`
    when one is handed in: any object with Session's `request` (a Session whose adapter answers from
    a function, say), used as it is.
    """

    def __init__(self, service: str, *, base_url: str, version: str | None = None, mode: str = "client",
                 system_version: str | None = None, timeout: tuple[float, float] = (10.0, 60.0),
                 retry: RetryPolicy | None = None, source: str = "the arguments given",
                 session: requests.Session | None = None, limits: Limits | None = None,
                 **credentials: Any) -> None:
        self.service: Service = catalog.SERVICES[service]
        self.base_url = base_url.rstrip("/")
        self.source = source      # where the base URL and credentials came from, for the errors that need them
        self.version = version or self.service.default_version
        self.mode, self.system_version = mode, system_version
        if mode not in ("client", "hosted"):
            raise rules.ValidationError("mode", mode, "must be client or hosted")
        self._secrets = {k: Secret(v.reveal() if isinstance(v, Secret) else v)
                         for k, v in credentials.items() if k in self.service.secrets and v is not None}
        self._plain = {k: v for k, v in credentials.items() if k not in self.service.secrets}
        unknown = set(credentials) - set(self.service.credentials)
        if unknown:
            raise rules.ValidationError(sorted(unknown)[0], MASK, f"unknown credential; {service} takes "
                                        f"base_url, {', '.join(self.service.credentials)}")
        # who the client logs in as, where it can know it: HTTP Basic names the user, a token does not
        self.login: str | None = self._plain.get("username") \
            if self.service.auth == "basic_or_bearer" and "token" not in self._secrets else None
        self.redactor = Redactor(s.reveal() for s in self._secrets.values())
        if self._plain.get("username") and "password" in self._secrets:
            self.redactor.add_basic(self._plain["username"], self._secrets["password"])
        host = urlsplit(self.base_url).hostname or ""
        self.transport = Transport(
            auth=self._auth(timeout), redactor=self.redactor, timeout=timeout, retry=retry,
            budget=RateBudget(self.service.rate_per_second, self.service.max_concurrency, self._shared_budget()),
            pool=max(10, self.service.max_concurrency), trust_env=not _loopback(host), session=session,
            limits=limits)

    def _shared_budget(self) -> Path | None:
        """Where the processes of this machine that use the same key share the service's documented
        rate budget (http.session.RateBudget): a file named by a hash of the service, the address
        and the credentials, so that nothing of a secret is in it. None for a service that documents
        no rate, or with TOOLKIT_SHARED_BUDGET=0."""
        if not self.service.rate_per_second or os.environ.get("TOOLKIT_SHARED_BUDGET", "").lower() in ("0", "off"):
            return None
        who = hashlib.sha256("\0".join([self.service.key, self.base_url, *sorted(
            f"{k}={v.reveal() if isinstance(v, Secret) else v}" for k, v in {**self._plain, **self._secrets}.items())])
            .encode()).hexdigest()[:32]
        base = os.environ.get("TOOLKIT_BUDGETS") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "toolkit", "budgets")
        return Path(base) / who

    def __repr__(self) -> str:
        return f"<toolkit.Client {self.service.key} {self.base_url} ({len(self._secrets)} secrets ***)>"

    # --- auth ------------------------------------------------------------------------------------

    def _auth(self, timeout: tuple[float, float]) -> Any:
        s, p, kind = self._secrets, self._plain, self.service.auth
        if kind == "bearer":
            return BearerAuth(self._need(s, "token"))
        if kind == "api_key":
            return ApiKeyAuth({header: self._need(s if name in s else p, name)
                               for name, header in self.service.key_headers.items()})
        if kind == "basic_or_bearer":
            if "token" in s:
                return BearerAuth(s["token"])
            return BasicAuth(self._need(p, "username"), self._need(s, "password"))
        token = catalog.action(self.service.token_action)
        return OAuthPasswordAuth(self.base_url + token.path, self._need(p, "client_id"),
                                 self._need(s, "client_secret"), self._need(p, "username"),
                                 self._need(s, "password"), self.redactor, timeout, action=token.id)

    def _need(self, given: Mapping[str, Any], key: str) -> Any:
        if not given.get(key):
            raise rules.ValidationError(key, None, f"{self.service.key} needs the credential {key} "
                                        f"(or TOOLKIT_{self.service.key.upper()}_{key.upper()})")
        return given[key]

    def auth_headers(self) -> dict[str, str]:
        """The auth headers as a preview shows them: names real, values masked."""
        kind = self.service.auth
        if kind == "api_key":
            return {header: MASK if name in self.service.secrets else str(self._plain.get(name))
                    for name, header in self.service.key_headers.items()}
        return {"Authorization": ("Basic " if kind == "basic_or_bearer" and "token" not in self._secrets
                                  else "Bearer ") + MASK}

    # --- building and sending ----------------------------------------------------------------------

    def action(self, action: str | Action) -> Action:
        found = action if isinstance(action, Action) else catalog.action(action, self.service.key)
        if found.service != self.service.key:
            raise ToolkitError(f"{found.id} belongs to {found.service}, not {self.service.key}")
        return found

    def prepare(self, action: str | Action, *, version: str | None = None,
                headers: Mapping[str, str] | None = None, content_type: str | None = None,
                **params: Any) -> Prepared:
        """Check the params and build the request, without sending it."""
        entry = self.action(action)
        version = self._version(entry, version)
        rules.check(entry, params, mode=self.mode if self.service.modes else None,
                    system_version=self.system_version, login=self.login)
        path = entry.path_for(version)
        prefix = self.service.version_prefix.format(version=version) if version else ""
        prepared = Prepared(entry, entry.method, "", headers=dict(headers or {}), redactor=self.redactor)
        body: dict[str, Any] = {}
        form: dict[str, Any] = {}
        files: dict[str, Any] = {}
        for param in entry.params:
            if param.name not in params or param.where == "local":
                continue
            value = params[param.name]
            if param.secret and value is not None:
                self.redactor.add(value)        # a service may echo it back in an error
            if param.where == "path":
                path = path.replace(f"{{{param.name}}}", requests.utils.quote(str(value), safe=""))
            elif param.where == "query":
                if value is None:
                    continue
                wire = wire_value(param, value, True)
                for item in wire if isinstance(wire, list) else [wire]:
                    prepared.query.append((param.wire, str(item)))
            elif param.where == "raw":
                body = wire_value(param, value, False)
            elif param.where == "body":
                body[param.wire] = wire_value(param, value, False)
            elif param.where == "form" and value is not None:
                form[param.wire] = str(wire_value(param, value, True))
            elif param.where == "file":
                files[param.wire] = file_part(value)
        prepared.url = _unchanged_by_sending(self.base_url + prefix + path, entry)
        kind = content_type or _patch_kind(entry, body)
        if kind and kind not in CONTENT_TYPES:
            kind = next((k for k, v in CONTENT_TYPES.items() if v == content_type), kind)
        if content_type and kind not in entry.content_types:
            raise rules.ValidationError("content_type", content_type, "must be one of " + ", ".join(
                CONTENT_TYPES[k] for k in entry.content_types), entry.id)
        raw = next((p for p in entry.params if p.where == "raw" and p.name in params), None)
        problem = patch_problem(kind, body) if raw is not None else None
        if problem:
            raise rules.ValidationError(raw.name, params[raw.name], problem, entry.id)
        if kind == "multipart" and not files:
            # requests writes a multipart body only around files: alone, the fields go as parts without a
            # file name (the token request, which Spring takes multipart as well as urlencoded)
            prepared.files = {k: Upload(None, v.encode("utf-8")) for k, v in form.items()}
        elif kind == "multipart":
            prepared.files, prepared.data = files, form
        elif kind == "form":
            prepared.data = form
        elif kind:
            prepared.json = [body] if entry.body_in_list and raw is None else body
            prepared.headers.setdefault("Content-Type", CONTENT_TYPES[kind])
        return prepared

    def _version(self, entry: Action, version: str | None) -> str:
        if entry.versions == ("",):
            return ""
        # a client set to v1 is refused a v2-only action as a call with version="v1" is: quietly calling
        # v2 would reach a server the caller chose v1 for (v2 is the default, which has every action)
        wanted = version or self.version
        if wanted in entry.versions:
            return wanted
        raise VersionError(entry.id, " or ".join(entry.versions), wanted)

    def _auth_for(self, entry: Action) -> Any:
        """The token endpoint authenticates the client itself (HTTP Basic), never with a bearer token."""
        auth = self.transport.auth
        if isinstance(auth, OAuthPasswordAuth) and entry.path.rstrip("/").endswith("/oauth/token"):
            return (auth.client_id, auth.client_secret.reveal())
        return None

    def send(self, prepared: Prepared) -> requests.Response:
        """Send a prepared request; an error status raises the service's error class."""
        entry = prepared.action
        data = prepared.data
        if prepared.json is not None:
            data = orjson.dumps(prepared.json, option=orjson.OPT_SERIALIZE_NUMPY)   # ids from a DataFrame
        uploads = prepared.files or {}
        try:
            response = self.transport.send(
                prepared.method, prepared.url, params=prepared.query_string() or None, data=data,
                parts=(lambda: opened_files(uploads)) if uploads else None, headers=prepared.headers or None,
                idempotent=prepared.idempotent, auth=self._auth_for(entry),
                repeatable=all(u.repeatable for u in uploads.values()))   # a file object that cannot be rewound
        except TransportError as error:
            raise scrubbed(self._unreached(entry, error), self.redactor) from None
        except AuthError as error:      # the login a request needed first was refused
            raise scrubbed(self._refused(error), self.redactor) from None
        except RedirectError as error:
            error.args = (f"{entry.id}: {error.args[0]}",)
            raise scrubbed(error, self.redactor) from None
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = response.text[:500]
            error = error_for(self.service.key, entry.id, response.status_code, self.service.error_shape,
                              body, response.reason, request_id(response.headers))
            wait = retry_after(response.headers.get("Retry-After")) if response.status_code == 429 else None
            longest = self.transport.max_retry_after
            if wait is not None and wait > longest:
                error.message += (f" (the service asks to wait {wait:.0f} s, longer than this client's "
                                  f"max_retry_after of {longest:.0f} s: try again later, or raise it with "
                                  f"{Limits.how_to_raise('max_retry_after')})")
                error.args = (f"{entry.id}: {response.status_code} {error.message}",)
            if isinstance(error, AuthError):
                error = self._refused(error)
            raise scrubbed(error, self.redactor)
        return response

    def call(self, action: str | Action, *, version: str | None = None,
             headers: Mapping[str, str] | None = None, content_type: str | None = None, **params: Any) -> Any:
        """Check, send and parse one action: parsed JSON, bytes for downloads, None for empty answers."""
        prepared = self.prepare(action, version=version, headers=headers, content_type=content_type, **params)
        return self.result_of(prepared.action, self.send(prepared), prepared)

    def result_of(self, entry: Action, response: requests.Response, prepared: Prepared | None = None) -> Any:
        """The parsed answer of a sent request; tokens it hands out are learnt by the redactor. Given
        the request, an unreadable answer to a read is asked for again (`exchange`)."""
        result = self.exchange(prepared, response=response)[0] if prepared is not None else \
            self.parse(entry, response)
        if isinstance(result, dict):
            for key in ("access_token", "refresh_token"):      # tokens the caller asked for: never shown
                self.redactor.add(result.get(key))
        return result

    @staticmethod
    def parse(entry: Action, response: requests.Response, tries: int = 1) -> Any:
        """The answer as its action declares it. A read's answer that is not JSON raises AnswerError
        (an empty page is `[]` or an envelope, never an empty body); a write's is given as text, since
        the write was done whatever its answer says."""
        if entry.response == "bytes":
            return response.content
        reads = entry.method == "GET" or entry.response in ("page", "list")
        if entry.response == "none" or response.status_code == 204 or (not response.content and not reads):
            return None
        if entry.response == "text":
            return response.text
        if reads:
            return answers.body_of(entry.id, response.status_code, response.headers.get("Content-Type"),
                                   response.content, tries)
        try:
            return answers.loads(response.content)
        except ValueError:
            return response.text

    def exchange(self, prepared: Prepared, decode: Callable[[bytes], Any | None] | None = None,
                 response: requests.Response | None = None) -> tuple[Any, requests.Response]:
        """Send (unless `response` is its answer already) and read: the body and the answer. A read
        whose 2xx body is not JSON is sent again like a 5xx (proxies serve their error pages for a
        moment) up to the retry policy's attempts, then raises AnswerError."""
        entry, tries = prepared.action, 1
        response = response if response is not None else self.send(prepared)
        while True:
            self._within_depth(entry, response)
            body = decode(response.content) if decode is not None else None
            if body is not None:
                return body, response
            try:
                return self.parse(entry, response, tries), response
            except AnswerError as error:
                policy = self.transport.retry
                if not prepared.idempotent or tries >= policy.attempts:
                    raise scrubbed(error, self.redactor) from None
                wait = policy.wait(tries, None)
                log.info("%s: %s; retry %d in %.2f s", entry.id, error.problem, tries, wait)
                self.transport.sleep(wait)
                tries += 1
                response = self.send(prepared)

    def _within_depth(self, entry: Action, response: requests.Response) -> None:
        """Refuse an answer nested deeper than `max_depth` before any parser recurses into it (they fail
        at depths of their own, with a traceback, or read what orjson cannot write again)."""
        limit = self.transport.limits.max_depth
        if entry.response != "bytes" and response.content[:1] != b"<" and depth_past(response.content, limit):
            raise scrubbed(LimitError(
                f"{entry.id}: the answer nests deeper than {limit} arrays and objects, the limit; nothing was kept "
                f"from it. Raise it (up to 250) with {Limits.how_to_raise('max_depth')} if the service's data is "
                "that deep", "max_depth", limit), self.redactor)

    @property
    def requests_sent(self) -> int:
        return self.transport.requests

    @property
    def service_clock(self) -> datetime | None:
        """The service's clock at its latest answer (its Date header), None before one carried it."""
        return self.transport.clock.latest


def _unchanged_by_sending(url: str, entry: Action) -> str:
    """The URL, refused if the URL library would send another path: it resolves `.` and `..`
    segments (RFC 3986, 5.2.4), so `/boards/../assets/X` would reach `DELETE /assets/X`."""
    if any(segment in (".", "..") for segment in urlsplit(url).path.split("/")):
        raise rules.ValidationError("url", url, "a path param holds a dot segment ('.' or '..') that would "
                                    "send the request to another path", entry.id)
    return url


def _patch_kind(entry: Action, body: Any) -> str | None:
    """The body kind when the caller names none: where an action takes both patches, a list of
    operations is a JSON Patch and an object a merge patch (RFC 6902 and 7386 tell them apart so)."""
    if entry.body == "merge_patch" and "json_patch" in entry.content_types and isinstance(body, list | tuple):
        return "json_patch"
    return entry.body


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def client_class(service: str) -> type[Client]:
    """The Client subclass of a service, with one method per action (built once)."""
    return with_methods(Client, service)


def credentials_from_env(service: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The credentials given, completed from TOOLKIT_<SERVICE>_<FIELD> environment variables."""
    return resolution.from_env(service, given)


def connect(service: str, *, source: str | None = None, credentials_file: str | os.PathLike[str] | None = None,
            session: requests.Session | None = None, max_answer_bytes: int | None = None,
            deadline: float | None = None, max_retry_after: float | None = None, max_depth: int | None = None,
            **given: Any) -> Client:
    """A client of one service: `base_url` plus its credentials; what is not given comes from the
    credentials file (`credentials_file`, else TOOLKIT_CREDENTIALS), then TOOLKIT_<SERVICE>_<FIELD>
    (toolkit.http.credentials: the one resolution the `toolkit` command uses too). `source` says where
    the caller found them, for the errors that ask the analyst to check them; `session`, the requests
    Session to send through instead of the client's own (`Client`).

    What one answer may cost (toolkit.http.limits; not given: TOOLKIT_<NAME>, else the default):
    `max_answer_bytes` after decoding (256 MiB), `deadline` seconds from sending to the last byte (300),
    `max_retry_after` seconds waited when the service asks (120), `max_depth` of its JSON (128)."""
    limits = Limits.resolved(max_answer_bytes=max_answer_bytes, deadline=deadline, max_retry_after=max_retry_after,
                             max_depth=max_depth)
    if service not in catalog.SERVICES:
        catalog.service(service)
    found, told = resolution.resolve(service, given, credentials_file, source)
    if not found.get("base_url"):
        raise rules.ValidationError("base_url", None, f"is required (or TOOLKIT_{service.upper()}_BASE_URL, "
                                    "or a credentials file in TOOLKIT_CREDENTIALS)")
    base = found["base_url"]
    if not isinstance(base, str) or urlsplit(base).scheme.lower() not in ("http", "https") \
            or not urlsplit(base).hostname:
        shown = scrub_url(base) if isinstance(base, str) else type(base).__name__
        raise rules.ValidationError("base_url", shown, f"is no http:// or https:// address (it came from {told})")
    return client_class(service)(service, source=told, session=session, limits=limits, **found)
