"""The checkup `toolkit.doctor` runs: read-only calls to real services, and a report (toolkit.checkup.report)
of what answered differently from the catalog.

Per service: whether auth works, each readable resource's first page (one request with a small page:
status, the paging style seen against the declared one, the declared fields seen, missing and extra,
the JSON types seen per field), the rate-limit headers, the clock skew from the Date header, the
translation system version or the audience platform's API versions, and the time of every call.
Fan-out resources take one id from their parent's first page. It sends GET only, the translation
service's OAuth login excepted, and refuses anything else in code (`_Recorder`).

The report holds names, types, statuses and timings, never a record's value nor a secret, so that it
can be attached to a bug report as it is (`report.to_json("doctor.json")`).

    report = toolkit.doctor("translation", "asset_library")      # credentials from TOOLKIT_<SERVICE>_<FIELD>
"""
from __future__ import annotations

import email.utils
import importlib.metadata
import re
import statistics
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

from toolkit import catalog
from toolkit.catalog.masking import MASK
from toolkit.catalog.paging import Cursor, Offset, PageNumber, Paging, Unpaged, absent, dig
from toolkit.catalog.spec import Action, Column, Resource
from toolkit.checkup.report import CallSeen, Report, ResourceCheck, ServiceCheck, declared_types, json_type
from toolkit.errors import ApiError, ModeError, ToolkitError, TransportError, ValidationError, VersionError
from toolkit.http.client import Client, connect, credentials_from_env
from toolkit.http.session import RetryPolicy, Transport
from toolkit.pull.decoding import rows_of

__all__ = ["doctor"]

# few and short retries: the doctor reports a service's trouble, it does not wait it out
RETRY = RetryPolicy(attempts=3, backoff=0.5, max_backoff=4.0, max_retry_after=10.0)
RATE_HEADER = re.compile(r"rate-?limit|retry-after", re.IGNORECASE)
# a wire key shown in the report: an identifier, not a value used as a key (an id, an email, a date)
NAME = re.compile(r"[A-Za-z_@$][A-Za-z0-9_$-]{0,63}")
VALUE_LIKE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-|\d{4,}|@.*\.", re.IGNORECASE)
VERSION_TEXT = re.compile(r"v?\d+(\.\d+){0,3}([.+_-][0-9A-Za-z]{1,12}){0,2}")


# --- running it -------------------------------------------------------------------------------------

def doctor(*services: str, credentials: Mapping[str, Mapping[str, Any]] | None = None,
           base_urls: Mapping[str, str] | None = None, page_size: int = 1,
           say: Callable[[str], None] | None = print, source: str | None = None) -> Report:
    """Check services with read-only calls: auth, each readable resource's first page, limits, clock, version.

    `credentials`: per service, the keys `toolkit.connect` takes (the environment's
    TOOLKIT_<SERVICE>_<FIELD> fill what is not given); `base_urls` per service likewise. With no
    service named, every one with a base URL given or in the environment. `page_size`: rows asked
    for on each first page. `say` gets one line per resource as it is checked. `source` says where the
    credentials came from (a file), for the errors that ask to check them.

        toolkit.doctor("asset_library", credentials={"asset_library": {"api_key": ..., "workspace_id": ...}})
    """
    credentials, base_urls = dict(credentials or {}), dict(base_urls or {})
    unknown = [s for s in services if s not in catalog.SERVICES]
    if unknown:
        catalog.service(unknown[0])         # says the closest service the catalog has
    if not services:
        services = tuple(s for s in catalog.SERVICES if base_urls.get(s) or (credentials.get(s) or {}).get("base_url")
                         or credentials_from_env(s, {}).get("base_url"))
        if not services:
            raise ValidationError("services", None, "none named and none configured: name one, or set "
                                  "TOOLKIT_<SERVICE>_BASE_URL")
    # every client is made before anything is sent: a credential missing is said at once
    clients = {s: _client(s, {**credentials.get(s, {}), **({"base_url": base_urls[s]} if base_urls.get(s) else {})},
                          source) for s in services}
    report = Report([], datetime.now(UTC).isoformat(timespec="seconds"), _toolkit_version())
    for service, (client, recorder) in clients.items():
        if say:
            say(f"{service}:")
        report.services.append(_check_service(client, recorder, page_size, say))
    return report


class _Recorder(Transport):
    """The transport a client of the doctor sends through: it refuses anything but GET (and the OAuth
    login, a POST to `login`) and notes every answer, the login's among them."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.seen: list[tuple[str, str, int | str, float, requests.Response | None, float]] = []
        self.path = ""
        self.login: str | None = None            # the token request's URL, once the client is made
        self.login_path = ""

    def send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        login = self.login is not None and url == self.login
        if method != "GET" and not (method == "POST" and login):
            raise ToolkitError(f"the doctor sends GET only (and the OAuth login); refused a {method}")
        path = self.login_path if login else self.path
        started = time.perf_counter()
        try:
            response = super().send(method, url, **kwargs)
        except TransportError as error:      # no answer; a login refused was noted as its POST
            self.seen.append((method, path, type(error).__name__, (time.perf_counter() - started) * 1000, None,
                              time.time()))
            raise
        # the moment between sending and answering, to set the Date header against
        middle = time.time() - (time.perf_counter() - started) / 2
        self.seen.append((method, path, response.status_code, (time.perf_counter() - started) * 1000, response,
                          middle))
        return response


def _client(service: str, given: Mapping[str, Any], source: str | None) -> tuple[Client, _Recorder]:
    """A client of the service sending through a recorder of its own."""
    recorder = _Recorder(retry=RETRY)
    client = connect(service, source=source, transport=recorder, **given)
    token = client.service.token_action
    if token:
        recorder.login_path = catalog.action(token).path
        recorder.login = getattr(client.auth, "token_url", None)
    return client, recorder


def _check_service(client: Client, recorder: _Recorder, page_size: int,
                   say: Callable[[str], None] | None) -> ServiceCheck:
    service = client.service
    check = ServiceCheck(service.key, _shown_url(client.base_url),
                         declared_rate=(f"{service.rate_per_second:g}/s" if service.rate_per_second else "no rate")
                         + f", {service.max_concurrency} at once",
                         on_this_machine=urlsplit(client.base_url).hostname in ("127.0.0.1", "localhost", "::1"))
    firsts: dict[str, list] = {}
    for resource in _parents_first(service.key):
        result = _check_resource(client, recorder, resource, firsts, page_size)
        check.resources.append(result)
        if say:
            say(result.line())
        if _stops(result):
            break                   # the rest would fail alike: the report says why once
    answered = [r for r in check.resources if r.status is not None and r.status < 400]
    login = [c for c in recorder.seen if recorder.login_path and c[1] == recorder.login_path]
    refused = next((r for r in check.resources if _stops(r)), None)
    if login and login[-1][2] != 200:
        check.auth = f"the OAuth login answered {login[-1][2]}"
    elif refused is not None:
        check.auth = f"{refused.error} ({refused.action})"
    elif answered:
        check.auth_ok = True
        check.auth = "ok" + (" (OAuth login, then a bearer token)" if login else f" ({client.scheme})")
    else:
        check.auth = "not known: no resource answered"
    check.version = _version(client, recorder, check.resources) if check.auth_ok else {}
    check.calls = [CallSeen(m, p, s, round(ms, 1)) for m, p, s, ms, _, _ in recorder.seen]
    responses = [(r, middle) for *_, r, middle in recorder.seen if r is not None]
    for response, _ in responses:
        check.rate_limit_headers.update({k.lower(): _header_value(client, v) for k, v in response.headers.items()
                                         if RATE_HEADER.search(k)})
    skews = [s for r, middle in responses if (s := _skew(r.headers.get("Date"), middle)) is not None]
    check.clock_skew_s = round(statistics.median(skews), 1) if skews else None
    return check


def _check_resource(client: Client, recorder: _Recorder, resource: Resource, firsts: dict[str, list],
                    page_size: int) -> ResourceCheck:
    action = catalog.ACTIONS[resource.action]
    style = action.paging or (client.service.paging if action.response == "page" else None)
    result = ResourceCheck(resource.name, action.id, action.path_for(client.version if action.versions != ("",)
                                                                     else ""),
                           paging_declared=_style_name(style, action))
    result.declared = sorted(_wire_columns(resource))
    if action.method != "GET" or action.writes:
        result.skipped = f"read with {action.method}; the doctor sends GET only"
        return result
    params: dict[str, Any] = {}
    if resource.fan_out:
        if resource.parent not in firsts:
            result.skipped = (f"needs one {resource.fan_out}: {resource.parent} come from you, not from a resource"
                              if (resource.service, resource.parent) not in catalog.RESOURCES else
                              f"needs one {resource.fan_out} from {resource.parent}, which did not answer")
            return result
        parent = catalog.resource(resource.service, resource.parent)
        column = next(c for c in parent.columns if c.name == (resource.parent_key or parent.key[0]))
        ids = [dig(row, ".".join(column.path)) for row in firsts[resource.parent] if isinstance(row, dict)]
        ids = [i for i in ids if i not in (None, "")]
        if not ids:
            result.skipped = f"needs one {resource.fan_out}: the first page of {resource.parent} had none"
            return result
        params[resource.fan_out] = ids[0]
    needed = [p for p in action.params if p.required and p.name not in params and p.where != "local"]
    for param in needed:
        if param.choices:           # e.g. the roles' type: any of its choices reads
            params[param.name] = param.choices[0]
    # the fullest answer: a declared column may come only when asked for (asset_boards' customFields)
    params.update({p.name: True for p in action.params if p.name in resource.filters and p.kind == "boolean"
                   and p.name.startswith("include_")})
    lacking = [p.name for p in needed if p.name not in params]
    if lacking:
        result.skipped = f"needs {', '.join(lacking)}, which only you know"
        return result
    params.update(_small_page(style, action, page_size))
    recorder.path = result.path
    started = time.perf_counter()
    try:
        prepared = client.prepare(action, **params)
        response = client.send(prepared)
    except (VersionError, ModeError) as error:
        result.skipped = str(error)
        return result
    except ApiError as error:
        result.ms = round((time.perf_counter() - started) * 1000, 1)
        result.status, result.error = error.status, f"{type(error).__name__} {error.status}"
        if error.status == 404 and action.min_version:
            result.error += f" (needs system version {action.min_version})"
        return result
    except ToolkitError as error:
        result.ms = round((time.perf_counter() - started) * 1000, 1)
        result.error = type(error).__name__
        return result
    result.ms = round((time.perf_counter() - started) * 1000, 1)
    result.status = response.status_code
    body = client.parse(action, response)
    result.paging_seen, result.paging_differs = _paging(style, action, resource, body, response.headers)
    if isinstance(body, dict) and action.response != "record":
        result.envelope = sorted(_name(k) for k in body)
    try:
        rows = [row for row in rows_of(resource, action, body) if isinstance(row, dict)]
    except ToolkitError:
        rows = []
    result.rows = len(rows)
    firsts[resource.name] = rows
    _fields(result, resource, rows)
    return result


def _fields(result: ResourceCheck, resource: Resource, rows: list[dict]) -> None:
    """Declared fields seen, missing and extra, and the JSON types seen, from a page's records."""
    columns = _wire_columns(resource)
    prefixes = {".".join(c.path[:i]) for c in columns.values() for i in range(1, len(c.path))}
    seen_types: dict[str, set[str]] = {}

    def walk(record: Mapping, at: str) -> None:
        for key, value in record.items():
            name = f"{at}{_name(key)}"
            seen_types.setdefault(name, set()).add(json_type(value))
            if name in prefixes and isinstance(value, Mapping):     # read in part: look inside
                walk(value, name + ".")

    for row in rows:
        walk(row, "")
    result.types = {name: sorted(kinds) for name, kinds in sorted(seen_types.items())}
    result.seen = sorted(name for name in seen_types if name in columns)
    # the fan-out id may be sent or not: the fetcher adds it to each row from the request it made;
    # an optional column may be absent from a whole answer (a schema keyword no property of the page has)
    added = {name for name, column in columns.items() if column.name == resource.fan_out or column.optional}
    if rows:
        result.missing = sorted(name for name in columns if name not in seen_types and name not in added)
    if resource.settings is None:       # a settings row keeps the rest of its answer whole: nothing is extra
        result.extra = sorted(name for name in seen_types if name not in columns and name not in prefixes)
    for name, column in columns.items():
        allowed = declared_types(column.dtype, resource.service)
        kinds = seen_types.get(name, set())
        if allowed is not None and kinds - allowed:
            result.types_differ[name] = f"declared {column.dtype}, seen {'/'.join(sorted(kinds))}"


def _paging(style: Paging | None, action: Action, resource: Resource, body: Any, headers: Mapping[str, str]) -> tuple[str, list[str]]:
    """The paging style the answer shows, and where it differs from the declared one."""
    differs: list[str] = []
    keys = sorted(_name(k) for k in body) if isinstance(body, dict) else []
    envelope = f"envelope keys {', '.join(keys)}" if keys else "a bare array"
    if isinstance(body, dict) and isinstance(body.get("pagination"), dict):
        seen = "cursor"
    elif isinstance(body, dict) and isinstance(body.get("list"), list):
        seen = "offset"
    elif isinstance(body, list) and any(h.lower() in ("total-size", "total", "total-pages", "page-number")
                                        for h in headers):
        seen = "page number"
    elif isinstance(body, list):
        seen = "bare array"
    elif isinstance(body, dict) and isinstance(body.get(resource.items or "data"), list):
        seen = "unpaged"
    else:
        seen = "record"
    differs += [f"no {name}" if name.startswith("header ") else
                f"no list at {name} ({envelope})" if name == getattr(style, "items", None) else f"no {name} ({envelope})"
                for name in absent(style, body, headers)]
    if isinstance(style, Offset) and not isinstance(body, dict | list):
        differs.append(f"neither {style.items} nor a bare array")
    elif isinstance(style, PageNumber) and not isinstance(body, list):
        differs.append(f"not a bare array ({envelope})")
    elif isinstance(style, Unpaged) and action.response in ("list", "page") and not style.items \
            and not isinstance(body, list):
        differs.append(f"no list at the top ({envelope})")
    elif not isinstance(style, Cursor | Offset | PageNumber | Unpaged) and resource.items \
            and not (isinstance(body, dict) and isinstance(body.get(resource.items), list)):
        differs.append(f"no list at {resource.items} ({envelope})")
    return seen, differs


def _version(client: Client, recorder: _Recorder, checked: list[ResourceCheck]) -> dict[str, Any]:
    """The system version the answers bound (a service whose actions need one, the translation
    service's), or which API versions answer (the audience platform's)."""
    service = client.service.key
    if any(a.min_version for a in catalog.actions_of(service)):
        found: dict[str, Any] = {"configured": client.system_version or "not set"}
        gated = [(v, r) for r in checked if (v := catalog.ACTIONS[r.action].min_version)]
        answered = [v for v, r in gated if r.status is not None and r.status < 400]
        refused = [v for v, r in gated if r.status == 404]
        if answered:
            found["on the wire"] = f"at least {max(answered, key=_version_key)}"
        if refused:
            found["on the wire"] = (found.get("on the wire", "") + " and " if answered else "") + \
                f"below {min(refused, key=_version_key)} (an action of that version answered 404)"
        found.setdefault("on the wire", "not shown (no version-gated resource answered)")
        return found
    versions = sorted({v for a in catalog.actions_of(service) for v in a.versions if v})
    if not versions:
        return {}
    found = {"client uses": client.version}
    probe = catalog.ACTIONS.get(f"{service}.get_version")
    if probe is None or probe.writes:
        return found
    for version in versions:
        recorder.path = probe.path_for(version)
        try:
            body = client.parse(probe, client.send(client.prepare(probe, version=version)))
        except ApiError as error:
            found[f"api {version}"] = f"{type(error).__name__} {error.status}"
            continue
        except ToolkitError as error:
            found[f"api {version}"] = type(error).__name__
            continue
        shown = body.get("version") if isinstance(body, dict) else None
        found[f"api {version}"] = "answers" + (f" (platform version {shown})" if isinstance(shown, str) and
                                               VERSION_TEXT.fullmatch(shown) else "")
    return found


# --- small pieces -------------------------------------------------------------------------------------

def _stops(result: ResourceCheck) -> bool:
    """Auth refused or the service unreachable: every other request would end the same."""
    return (result.error or "").split(" ")[0] in ("AuthError", "TransportError")


def _parents_first(service: str) -> list[Resource]:
    resources = [r for (s, _), r in catalog.RESOURCES.items() if s == service]
    names = {r.name for r in resources}
    done: list[Resource] = []
    while len(done) < len(resources):
        for r in resources:
            if r not in done and (r.parent not in names or any(d.name == r.parent for d in done)):
                done.append(r)
    return done


def _wire_columns(resource: Resource) -> dict[str, Column]:
    """The declared columns the wire carries, by dotted wire path (a resource made by the fetcher: those it reads)."""
    made = resource.settings.fields if resource.settings is not None else None
    return {".".join(c.path): c for c in resource.columns if made is None or ".".join(c.path) in made}


def _small_page(style: Paging | None, action: Action, size: int) -> dict[str, Any]:
    """The params asking for the first page of `size` rows, by Python name."""
    by_wire = {p.wire: p.name for p in action.params if p.where == "query"}
    wanted = {}
    if isinstance(style, Cursor):
        wanted = {style.limit: size}
    elif isinstance(style, PageNumber):
        wanted = {style.page: style.first, style.size: size}
    elif isinstance(style, Offset):
        wanted = {style.offset: 0, style.size: size}
    return {by_wire[w]: v for w, v in wanted.items() if w in by_wire}


def _style_name(style: Paging | None, action: Action) -> str:
    if style is None:
        return "record"
    return {Cursor: "cursor", PageNumber: "page number", Offset: "offset"}.get(type(style), "unpaged")


def _name(key: Any) -> str:
    """A wire key as the report may show it: a key that looks like a value (an id, an email) is masked."""
    key = str(key)
    return key if NAME.fullmatch(key) and not VALUE_LIKE.search(key) else "<key>"


def _shown_url(url: str) -> str:
    """The base URL without its host, port or credentials: the path says which service and version."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, MASK, parts.path, "", ""))


def _header_value(client: Client, value: str) -> str:
    value = client.redactor.scrub(value)
    return value if re.fullmatch(r"[\w .,;:=/+-]{0,60}", value) else MASK


def _skew(date: str | None, middle: float) -> float | None:
    if not date:
        return None
    try:
        return email.utils.parsedate_to_datetime(date).timestamp() - middle
    except (TypeError, ValueError):
        return None


def _toolkit_version() -> str:
    try:
        return importlib.metadata.version("toolkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))
