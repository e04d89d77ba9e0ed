"""The catalog's schema: Service, Action, Param, Resource and the paging styles, as frozen data.

Everything else is derived from these records: the client's methods and request building, the
client-side rules, the fetchers, the forms, the sandbox's routes and the catalog-wide tests.
This module imports nothing of the engine, so the catalog stays plain data.

    Param("asset_id", "path", "id", required=True, example="4b7c…", rules=("not_blank",))
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolkit.catalog.paging import Cursor, Offset, PageNumber, Paging, Unpaged

__all__ = ["NO_LOOKUP", "Action", "Caller", "Check", "Chunks", "Column", "Cursor", "Found", "Incremental", "Lookup",
           "Offset", "OtherSide", "PageNumber", "Paging", "Param", "Resource", "Service", "Settings", "Unpaged",
           "ValueCheck", "camel", "snake"]

Where = Literal["path", "query", "body", "raw", "form", "file", "local"]
Kind = Literal[
    "string", "text", "id", "integer", "number", "boolean", "datetime", "epoch_ms", "duration",
    "url", "email", "list", "int_list", "object", "file", "secret",
]
BodyKind = Literal["json", "merge_patch", "json_patch", "form", "multipart"]
ResponseKind = Literal["record", "list", "page", "bytes", "none", "boolean", "text"]

CONTENT_TYPES: Mapping[str, str] = {
    "json": "application/json",
    "merge_patch": "application/merge-patch+json",
    "json_patch": "application/json-patch+json",
    "form": "application/x-www-form-urlencoded",
    "multipart": "multipart/form-data",
}


def camel(name: str) -> str:
    """snake_case → camelCase, the wire spelling of every service but the media review one."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake(name: str) -> str:
    """camelCase or any wire spelling → snake_case, for DataFrame columns and Python names."""
    name = re.sub(r"[^0-9A-Za-z]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return name.strip("_").lower()


# The paging styles are declared with the catalog but live in toolkit.catalog.paging with their one method.


@dataclass(frozen=True)
class Caller:
    """What a client knows of itself that some checks read: its mode (a service's `modes`), and the user
    it logs in as when it can know it (HTTP Basic; behind a token the login is the service's secret)."""
    mode: str | None = None
    login: str | None = None


# A service's own checks, where no field of a Param or an Action says it (written in the service's
# `<service>_checks.py` beside its catalog module): of one value → the rule it breaks, or None; of the
# params of one call → (the param, its value, the rule it breaks), or None.
ValueCheck = Callable[[Any], "str | None"]
Found = tuple[str, Any, str] | None
Check = Callable[[Mapping[str, Any], Caller], Found]


# --- the records -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Lookup:
    """Where a param's values come from: a resource of its service held in the workspace, so that a form
    offers its rows as choices (toolkit.forms.lookups) instead of a bare id field.

    `key` is the column the value is; `label` a format string over the row's columns; `parent` is
    (param, column): only rows whose column equals that param's value; `nested` names a JSON column
    of objects whose `name`s are the choices (a target's transitions).
    """
    resource: str
    key: str
    label: str = "{key}"
    parent: tuple[str, str] | None = None
    nested: str | None = None


# a param whose name picks from a resource elsewhere in its service, but not here (Param.lookup)
NO_LOOKUP = Lookup("", "")


@dataclass(frozen=True)
class Param:
    """One input of an action.

    `name` is the Python keyword; `wire` its spelling on the wire (camelCase of `name` unless given).
    `where`: path, query, body (a field of the JSON or form body), raw (the value is the whole body),
    form (a field of a form or multipart body), file (a multipart file part), local (checked by the
    client-side rules but never sent, e.g. the batch's target format at a source upload).
    `repeatable`: a list goes out as the key repeated (`tag=a&tag=b`); otherwise a query list is
    joined with commas.

    What a value may be is said by fields and checked by one generic check (toolkit.http.rules) before
    anything is sent: `minimum`/`maximum` (numbers; durations as ISO text, "PT1H"), `also` (values
    beyond that range the service reads too: `size=-1`, every row), `pattern` (a regular expression the
    whole text must match; `pattern_rule` is what the error says), `listed` (a comma-separated list, or
    a Python list of its items: `pattern` reads each item), `immutable` (documented on an update but
    refused there), `required_in` (the modes in which it is required), `check` (a check of the
    service's own); `rules` name the checks every service shares (`not_blank`, `url`, `email`).
    `origin`: empty for what the interface document lists; otherwise the public integrations that
    show the param on the wire, by their keys in docs/public-specs.md (`("G4",)`).
    `lookup`: where its values come from, where it differs from what `Service.lookups` says for its
    name (`NO_LOOKUP`: from nowhere); toolkit.catalog.lookup reads both.
    """
    name: str
    where: Where
    kind: Kind = "string"
    required: bool = False
    doc: str = ""
    example: Any = None
    wire: str = ""
    choices: tuple[Any, ...] = ()
    repeatable: bool = False
    rules: tuple[str, ...] = ()
    default: Any = None
    secret: bool = False
    min_version: str | None = None
    origin: tuple[str, ...] = ()
    lookup: Lookup | None = None
    minimum: Any = None
    maximum: Any = None
    also: tuple[Any, ...] = ()
    pattern: str = ""
    pattern_rule: str = ""
    listed: bool = False
    immutable: bool = False
    required_in: tuple[str, ...] = ()
    check: ValueCheck | None = None

    def __post_init__(self) -> None:
        if not self.wire:
            object.__setattr__(self, "wire", self.name if self.where == "path" else camel(self.name))
        if self.kind == "secret":
            object.__setattr__(self, "secret", True)


@dataclass(frozen=True)
class Action:
    """One callable endpoint (or one per version where `versions` lists several).

    `path` is relative to the service's base URL and to its version prefix; `version_paths` gives a
    different path for a version where the document says so. Placeholders use the Python names of
    the path params (`/assets/{asset_id}`). `origin`: as a Param's, for an endpoint the interface
    document does not list but public integrations call. `changes`: the resources a successful call
    also changes where its path does not say so (a board delete cascades to assets; an import makes
    assets): toolkit.connection.effects marks them stale with those sharing a noun of the path.
    """
    id: str
    group: str
    method: str
    path: str
    doc: str
    params: tuple[Param, ...] = ()
    versions: tuple[str, ...] = ("",)
    version_paths: Mapping[str, str] = field(default_factory=dict)
    body: BodyKind | None = None
    body_in_list: bool = False          # the body params go as the one object of a JSON array (a batch)
    content_types: tuple[BodyKind, ...] = ()
    response: ResponseKind = "record"
    paging: Paging | None = None
    writes: bool | None = None
    destructive: bool | None = None
    retry_safe: bool = False            # a POST that may be repeated (reads that happen to POST)
    modes: tuple[str, ...] = ("client", "hosted")
    min_version: str | None = None
    exclusive: tuple[str, ...] = ()     # params of which at most one may be given
    checks: tuple[Check, ...] = ()      # the service's own checks of several params at once
    status: int = 200                   # the success status the service answers with
    origin: tuple[str, ...] = ()        # the public integrations it comes from; () = the seed
    changes: tuple[str, ...] = ()       # resources it changes beyond those its path names

    def __post_init__(self) -> None:
        if self.writes is None:
            object.__setattr__(self, "writes", self.method != "GET")
        if self.destructive is None:
            object.__setattr__(self, "destructive", self.method == "DELETE")
        if self.body and not self.content_types:
            object.__setattr__(self, "content_types", (self.body,))

    @property
    def service(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        """The method name on the client: the id without its service."""
        return self.id.split(".", 1)[1]

    def path_for(self, version: str = "") -> str:
        return self.version_paths.get(version, self.path)

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    @property
    def example(self) -> dict[str, Any]:
        """The example params, enough to make the call."""
        return {p.name: p.example for p in self.params if p.example is not None}


@dataclass(frozen=True)
class Service:
    """A service: its auth, its version prefix, its limits and its default paging.

    `auth`: the auth scheme by name (toolkit.http.schemes), or several, the first whose credentials
    are given used. `error_shape`: how its error bodies read into one message (toolkit.wording's
    ERROR_SHAPES). `lookups`: param name → where its values come from, for every action of the service that has a
    param of that name (a Param's own `lookup` says otherwise). `modes`: the modes a client of it runs
    in (the translation service's client and hosted), each action offered in its `modes`; empty: one
    mode, nothing to check. `token_action`: the action that gives an access token (auth
    "oauth_password"); its path is where the client asks for one. `key_headers`: auth "api_key", the
    header each credential is sent in (`{"api_key": "x-api-key"}`). `position`: where the service stands
    in listings, lowest first (the same position: by key). `logins`: the sets of credentials that
    each log in, the first the usual one (the audience platform's token, or a username and password);
    what `credentials` holds beyond them a client may go without (the translation service's mode and
    system version); empty: all of `credentials`, together.
    """
    key: str
    title: str
    auth: str | tuple[str, ...]
    credentials: tuple[str, ...]                  # the keys ws.connect takes besides base_url
    secrets: tuple[str, ...]                      # which of them are secret
    base_path: str                                # the path part of the real base URL (`/v1`, `/PD`)
    error_shape: str                              # how the service's error body reads (above)
    version_prefix: str = ""                      # `/api/{version}`
    default_version: str = ""
    paging: Paging | None = None
    rate_per_second: float | None = None
    max_concurrency: int = 8
    doc: str = ""
    ids: str = "string"                           # what its ids are: "string" (UUIDs, names) or "integer"
    lookups: Mapping[str, Lookup] = field(default_factory=dict, hash=False)
    modes: tuple[str, ...] = ()
    token_action: str = ""
    key_headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    position: int = 100                           # where listings show it among the services
    logins: tuple[tuple[str, ...], ...] = ()

    @property
    def login(self) -> tuple[str, ...]:
        """The credentials of the usual login: what a client of the service is given."""
        return self.logins[0] if self.logins else self.credentials


@dataclass(frozen=True)
class Column:
    """A typed column of a Resource: `dtype` is string, id, integer, number, boolean, timestamp,
    category, list or json. `source` is the dotted wire path when it differs from camel(name).

    `optional`: the field may be absent from every record of a load without being drift (a JSON
    Schema keyword only some properties have, a field sent only when a request asks for it).
    `values`: a category column's documented values; any other is drift (toolkit.pull.drift), where a
    column without them is compared with what earlier loads held.
    """
    name: str
    dtype: str = "string"
    source: str = ""
    doc: str = ""
    optional: bool = False
    values: tuple[str, ...] = ()

    @property
    def path(self) -> tuple[str, ...]:
        """The wire path the column reads: `("coverVersion", "fileName")`."""
        return tuple((self.source or camel(self.name)).split("."))


@dataclass(frozen=True)
class Incremental:
    """How a resource is pulled again with only what may have changed since its last complete load
    (toolkit.pull.increments runs it). `strategy` is one of:

    - "open_statuses": ask for the rows whose `field` is not in a `final` status (the list action's
      `filter` param takes the open ones) and again for the ones held open (`ids`, the param taking
      keys); the held rows in a final status stay as they are.
    - "open_parents": pull again only the rows of the `parent` resource's rows that are open now or
      were in its previous load (`field` is the column naming the parent's key); the others stay.
    - "created_after": ask with the list action's filter language for rows whose `field` is at or
      after the newest held (`filter` is the param); held rows stay, unless the envelope's `total`
      of every row disagrees with what is held (something was deleted): then a full pull.
    - "changed_parents" (a fan-out): fan out again only over the ids whose `parent` row is new or
      changed since the previous load (`field` is the fan-out's column naming it, `parent_field` the
      parent's, when its name differs); the other ids' rows stay, those of ids no longer fanned over
      go. Sound only where a child row cannot change without its parent row changing, or where
      what else changes it is declared: the rows copy fields of the `copies` resource's row that
      their `via` column names, and an id with a held row naming a row of it that is new, changed
      or gone since is fanned over again too. Both resources must have been loaded before and since
      the previous load (refresh orders them first), else a full pull.
    - "open_members" (a fan-out): fan out again only over the ids not held in a `final` status of
      `field` (new ids, open ones, those that failed last time); a row in a final status stays.
    - "rotation" (a fan-out with no sound change signal): fan out again over the ids whose rows were
      confirmed longest ago, so that every row is confirmed within `max_age` seconds (a freshness
      budget, at most a day: analysts report daily): new ids, failed ones, those that would pass the
      budget before the next refresh, and at least the share of ids the time since the last load is
      of the budget. `field` is the fan-out's column; the other ids' rows stay as they are.
    """
    strategy: str
    field: str = ""
    final: tuple[str, ...] = ()
    filter: str = ""
    ids: str = ""
    parent: str = ""
    total: str = ""
    parent_field: str = ""
    copies: str = ""
    via: str = ""
    max_age: float = 0.0


@dataclass(frozen=True)
class Chunks:
    """A resource read for its parent's ids many at a time: its action's `param` takes up to `size`
    of them per request. A service older than `since` lacks that action: there the resource is read
    one id per request (in param `one`) through `older`, and a list given for a param that takes one
    value is asked for one value at a time."""
    param: str
    size: int
    since: str | None = None
    older: str | None = None
    one: str | None = None


@dataclass(frozen=True)
class Settings:
    """A resource of one row per settings object, each read by a GET action of its own:
    (the row's name, the action). A row holds whether the settings are enabled and the rest of them,
    secrets masked. Its rows are made by the fetcher, not read as sent: of each answer, only `fields`
    are columns of their own (what the doctor compares with the declared ones); the rest is kept
    whole in the `settings` column."""
    reads: tuple[tuple[str, str], ...]
    fields: tuple[str, ...] = ("enabled",)


@dataclass(frozen=True)
class OtherSide:
    """The same rows read from the relation's other side: a fan-out over `parent`'s rows (another
    resource of the service, listed by its own action) where `action`, given one parent's id in
    `param`, lists the records whose id is the resource's fan-out column; each row is then the
    parent's own record with that id (an asset's boards: each board's assets, with the board's
    record). `omit`: fields of the parent's record this side's rows lack; `unless`: filters only this
    side answers. Fetch reads the side that needs fewer requests (toolkit.pull.sides)."""
    parent: str
    action: str
    param: str
    omit: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resource:
    """A dataset an analyst reports on: how it is pulled, its key and its typed columns.

    Pulled by one `action` (paged or not), fanned out over ids: `fan_out` names the action param that
    takes one id per request and `parent` where the ids come from (a filter the analyst gives, such as
    `profile_ids`, or another resource's key).
    """
    name: str
    service: str
    action: str
    key: tuple[str, ...]
    columns: tuple[Column, ...]
    doc: str
    fan_out: str | None = None
    parent: str | None = None
    parent_key: str | None = None
    filters: tuple[str, ...] = ()
    items: str | None = None            # where the rows are in a record answer
    incremental: Incremental | None = None  # how to pull only what changed; None: a full pull
    max_pages: int | None = None        # a walk's ceiling; None: from the service's total (paging.Watch)
    chunks: Chunks | None = None        # the parent's ids many to a request (`parent`, `parent_key`)
    settings: Settings | None = None    # one row per settings object, read by actions of their own
    other_side: OtherSide | None = None  # the same rows read the other way round (toolkit.pull.sides)
