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
import logging
import os
from collections.abc import Callable, Iterator, Mapping
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
from toolkit.http import answers, rules, schemes
from toolkit.http import credentials as resolution
from toolkit.http.auth import OAuthPasswordAuth
from toolkit.http.bodies import patch_problem
from toolkit.http.failures import Failures, scrubbed
from toolkit.http.limits import Limits, depth_past
from toolkit.http.methods import with_methods
from toolkit.http.schemes import Given
from toolkit.http.session import (
    RateBudget,
    Redactor,
    RetryPolicy,
    Secret,
    Transport,
    loopback,
    request_id,
    retry_after,
)
from toolkit.http.walks import Page, Walker
from toolkit.http.wire import MASK, Prepared, Upload, file_part, opened_files, wire_value

log = logging.getLogger("toolkit.http.session")


class Client:
    """A connection to one service: `call`, `pages`, and one method per action of the service.

    Its requests go through its `transport` (toolkit.http.session.Transport: retries, the rate budget,
    the limits of an answer), handed in as httpx's is, or made here with `retry`, `timeout`, `limits`
    and `session`: the requests Session it makes (one origin, pooled), or any object with Session's
    `request` (a Session whose adapter answers from a function, say), used as it is. The client adds
    what it alone knows: its service's auth scheme (toolkit.http.schemes), its rate budget where the
    transport has none, and its secrets, scrubbed from what is logged and raised.
    """

    def __init__(self, service: str, *, base_url: str, version: str | None = None, mode: str | None = None,
                 system_version: str | None = None, timeout: tuple[float, float] = (10.0, 60.0),
                 retry: RetryPolicy | None = None, source: str = "the arguments given",
                 session: requests.Session | None = None, limits: Limits | None = None,
                 transport: Transport | None = None, **credentials: Any) -> None:
        self.service: Service = catalog.SERVICES[service]
        self.base_url = base_url.rstrip("/")
        self.source = source      # where the base URL and credentials came from, for the errors that need them
        self.version = version or self.service.default_version
        modes = self.service.modes
        self.mode: str | None = mode if mode is not None else (modes[0] if modes else None)
        self.system_version = system_version
        if modes and self.mode not in modes:
            raise rules.ValidationError("mode", mode, "must be " + " or ".join(modes))
        if transport is not None and (session is not None or retry is not None or limits is not None):
            raise rules.ValidationError("transport", type(transport).__name__, "is given with session, retry or "
                                        "limits: give those to the Transport")
        secrets = {k: Secret(v.reveal() if isinstance(v, Secret) else v)
                   for k, v in credentials.items() if k in self.service.secrets and v is not None}
        plain = {k: v for k, v in credentials.items() if k not in self.service.secrets}
        unknown = set(credentials) - set(self.service.credentials)
        if unknown:
            raise rules.ValidationError(sorted(unknown)[0], MASK, f"unknown credential; {service} takes "
                                        f"base_url, {', '.join(self.service.credentials)}")
        self.redactor = Redactor(s.reveal() for s in secrets.values())
        if plain.get("username") and "password" in secrets:
            self.redactor.add_basic(plain["username"], secrets["password"])
        # the service's documented rate budget, taken by every request unless the transport has its own
        self.budget = RateBudget(self.service.rate_per_second, self.service.max_concurrency,
                                 _shared_budget(self.service, self.base_url, {**plain, **secrets}))
        self.transport = transport if transport is not None else Transport(
            budget=self.budget, timeout=timeout, retry=retry, pool=max(10, self.service.max_concurrency),
            trust_env=not loopback(self.base_url), session=session, limits=limits)
        self._given = Given(self.service, self.base_url, secrets, plain, self.redactor, timeout, post=self._post)
        self.scheme, self.auth = schemes.authorise(self._given)
        # who the client logs in as, where its scheme says (HTTP Basic names the user, a token does not)
        login = schemes.SCHEMES[self.scheme].login
        self.login: str | None = plain.get(login) if login else None
        self._secrets = len(secrets)
        self.failures = Failures(self.service, self.base_url, source)
        self.walker = Walker(self)

    def __repr__(self) -> str:
        return f"<toolkit.Client {self.service.key} {self.base_url} ({self._secrets} secrets ***)>"

    # --- auth ------------------------------------------------------------------------------------

    def auth_headers(self) -> dict[str, str]:
        """The auth headers as a preview shows them: names real, values masked."""
        return schemes.SCHEMES[self.scheme].shown(self._given)

    def _post(self, url: str, **kwargs: Any) -> requests.Response:
        """The token request of a login, through the transport (retried and paced like any other)."""
        return self.transport.send("POST", url, idempotent=True, budget=self.budget, redactor=self.redactor,
                                   **kwargs)

    def _sent(self, method: str, url: str, *, auth: Any = None, **kwargs: Any) -> requests.Response:
        """One request through the transport with the client's auth (or `auth`, the token request's
        own): made ready before it takes its budget's slot, renewed once after a 401."""
        for renewing in (False, True):
            if auth is None:
                self.auth.ready()
            response = self.transport.send(method, url, auth=auth if auth is not None else self.auth,
                                           budget=self.budget, redactor=self.redactor, **kwargs)
            if renewing or auth is not None or response.status_code != 401 or not self.auth.renewed():
                return response
        raise AssertionError("unreachable")

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
        problem = patch_problem(kind, body) if raw is not None and kind is not None else None
        if raw is not None and problem:
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
        """The catalog's token action authenticates the client itself (HTTP Basic), never with a bearer token."""
        if entry.id == self.service.token_action and isinstance(self.auth, OAuthPasswordAuth):
            return self.auth.client_credentials()
        return None

    def send(self, prepared: Prepared) -> requests.Response:
        """Send a prepared request; an error status raises the service's error class."""
        entry = prepared.action
        data = prepared.data
        if prepared.json is not None:
            data = orjson.dumps(prepared.json, option=orjson.OPT_SERIALIZE_NUMPY)   # ids from a DataFrame
        uploads = prepared.files or {}
        try:
            response = self._sent(
                prepared.method, prepared.url, params=prepared.query_string() or None, data=data,
                parts=(lambda: opened_files(uploads)) if uploads else None, headers=prepared.headers or None,
                idempotent=prepared.idempotent, auth=self._auth_for(entry),
                repeatable=all(u.repeatable for u in uploads.values()))   # a file object that cannot be rewound
        except TransportError as error:
            raise scrubbed(self.failures.unreached(entry, error), self.redactor) from None
        except AuthError as error:      # the login a request needed first was refused
            raise scrubbed(self.failures.refused(error), self.redactor) from None
        except RedirectError as error:
            error.args = (f"{entry.id}: {error.args[0]}",)
            raise scrubbed(error, self.redactor) from None
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = response.text[:500]
            answered = error_for(self.service.key, entry.id, response.status_code, self.service.error_shape,
                                 body, response.reason, request_id(response.headers))
            wait = retry_after(response.headers.get("Retry-After")) if response.status_code == 429 else None
            longest = self.transport.max_retry_after
            if wait is not None and wait > longest:
                answered.message += (f" (the service asks to wait {wait:.0f} s, longer than this client's "
                                     f"max_retry_after of {longest:.0f} s: try again later, or raise it with "
                                     f"{Limits.how_to_raise('max_retry_after')})")
                answered.args = (f"{entry.id}: {response.status_code} {answered.message}",)
            if isinstance(answered, AuthError):
                answered = self.failures.refused(answered)
            raise scrubbed(answered, self.redactor)
        return response

    def pages(self, action: str | Action, *, version: str | None = None,
              headers: Mapping[str, str] | None = None, ahead: int = 0,
              decode: Callable[[bytes], Any | None] | None = None, max_pages: int | None = None,
              **params: Any) -> Iterator[Page]:
        return self.walker.pages(action, version=version, headers=headers, ahead=ahead, decode=decode,
                                 max_pages=max_pages, **params)

    pages.__doc__ = Walker.pages.__doc__

    def rows(self, action: str | Action, **params: Any) -> list:
        """Every row of a list action, all pages walked."""
        return self.walker.rows(action, **params)

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


def _shared_budget(service: Service, base_url: str, credentials: Mapping[str, Any]) -> Path | None:
    """Where the processes of this machine that use the same key share the service's documented
    rate budget (http.session.RateBudget): a file named by a hash of the service, the address
    and the credentials, so that nothing of a secret is in it. None for a service that documents
    no rate, or with TOOLKIT_SHARED_BUDGET=0."""
    if not service.rate_per_second or os.environ.get("TOOLKIT_SHARED_BUDGET", "").lower() in ("0", "off"):
        return None
    who = hashlib.sha256("\0".join([service.key, base_url, *sorted(
        f"{k}={v.reveal() if isinstance(v, Secret) else v}" for k, v in credentials.items())])
        .encode()).hexdigest()[:32]
    base = os.environ.get("TOOLKIT_BUDGETS") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "toolkit", "budgets")
    return Path(base) / who


def client_class(service: str) -> type[Client]:
    """The Client subclass of a service, with one method per action (built once)."""
    return with_methods(Client, service)


def credentials_from_env(service: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The credentials given, completed from TOOLKIT_<SERVICE>_<FIELD> environment variables."""
    return resolution.from_env(service, given)


def connect(service: str, *, source: str | None = None, credentials_file: str | os.PathLike[str] | None = None,
            session: requests.Session | None = None, max_answer_bytes: int | None = None,
            deadline: float | None = None, max_retry_after: float | None = None, max_depth: int | None = None,
            transport: Transport | None = None, **given: Any) -> Client:
    """A client of one service: `base_url` plus its credentials; what is not given comes from the
    credentials file (`credentials_file`, else TOOLKIT_CREDENTIALS), then TOOLKIT_<SERVICE>_<FIELD>
    (toolkit.http.credentials: the one resolution the `toolkit` command uses too). `source` says where
    the caller found them, for the errors that ask the analyst to check them; `session`, the requests
    Session to send through instead of the client's own; `transport`, the Transport to send through
    instead of one made here (`Client`: its retries, budget and limits are then the transport's).

    What one answer may cost (toolkit.http.limits; not given: TOOLKIT_<NAME>, else the default):
    `max_answer_bytes` after decoding (256 MiB), `deadline` seconds from sending to the last byte (300),
    `max_retry_after` seconds waited when the service asks (120), `max_depth` of its JSON (128)."""
    bounds = {"max_answer_bytes": max_answer_bytes, "deadline": deadline, "max_retry_after": max_retry_after,
              "max_depth": max_depth}
    limits = Limits.resolved(**bounds) if transport is None else None
    if transport is not None and any(v is not None for v in bounds.values()):
        raise rules.ValidationError(next(k for k, v in bounds.items() if v is not None), None,
                                    "is given with a transport: give it to the Transport's limits")
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
    return client_class(service)(service, source=told, session=session, limits=limits, transport=transport, **found)
