"""The example call of every catalog row: its params, the requests it makes, and what its answer looks like.

Recording and replay run the same `exercise()`, so a cassette holds exactly the requests the replay
makes: the example call (`client.call` with the catalog's example params, real ids substituted), and
for a list action also a walk of up to three small pages (`client.pages`) with the required params
only, so that rows come back whatever the example's filters select. `summary()` reduces the parsed
result to what a cassette promises (types, row counts, ids, a digest) and is stored with it.

    params = example_params(action, "v2", box.examples("audience_platform"))
"""
from __future__ import annotations

__all__ = ["WALK_PAGES", "WALK_SIZE", "example_params", "exercise", "is_token_action",
           "row_ids", "summary", "walk_params"]

import hashlib
import itertools
from collections.abc import Mapping
from typing import Any

import orjson

from toolkit import catalog
from toolkit.catalog.paging import Cursor, Offset, PageNumber, Unpaged
from toolkit.catalog.spec import Action, camel
from toolkit.errors import ApiError, ToolkitError
from toolkit.http.client import Client

WALK_PAGES = 3          # pages walked at most: enough to show paging replays in order
WALK_SIZE = 10          # rows per page of the walk

def _candidates(action: Action, version: str, name: str) -> list[str]:
    """Keys of examples() that may hold a path param, most specific first: the param prefixed with the
    path segments before it (`schemas/.../{property_id}` → `schema_property_id`), then its own name."""
    head = action.path_for(version).split("{" + name + "}")[0]
    segments = [s.lower() for s in head.split("/") if s and not s.startswith("{")]
    keys = []
    for segment in reversed(segments):
        keys += [f"{segment}_{name}", f"{segment.removesuffix('s')}_{name}"]
    return [*keys, name]


def example_params(action: Action, version: str, examples: Mapping[str, Any],
                   credentials: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The catalog's example params with real values from `sandbox.examples(service)`.

    A path param takes the most specific example key (see `_candidates`); any other param that
    examples() names takes its value; examples()["overrides"][action id] wins over both. The token
    action takes the connection's own credentials.
    """
    values = dict(action.example)
    overrides = (examples.get("overrides") or {}).get(action.id, {})
    for param in action.params:
        if param.name in overrides:
            values[param.name] = overrides[param.name]
        elif param.where == "path":
            key = next((k for k in _candidates(action, version, param.name) if k in examples), None)
            if key is not None:
                values[param.name] = examples[key]
        elif param.name in values and param.name in examples and param.name != "overrides":
            values[param.name] = examples[param.name]
    if credentials and is_token_action(action):
        values.update({k: v for k, v in credentials.items() if k in values})
    return values


def is_token_action(action: Action) -> bool:
    """The OAuth token endpoint: the action its service's catalog names for the login."""
    return catalog.SERVICES[action.service].token_action == action.id


def walk_params(action: Action, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The params of the page walk (required params, small pages), or None for a non-list action."""
    if action.response not in ("page", "list") or action.writes or action.paging is None:
        return None
    style = action.paging
    size_wire = {Cursor: "limit", PageNumber: "size", Offset: "size"}.get(type(style))
    walk = {p.name: params[p.name] for p in action.params if p.required and p.name in params}
    for param in action.params:
        if size_wire and param.where == "query" and param.wire == getattr(style, size_wire):
            walk[param.name] = WALK_SIZE
    if isinstance(style, Unpaged) and walk == {k: v for k, v in params.items()}:
        return None         # the example call already is the walk's only request
    return walk


def exercise(client: Client, action: Action, version: str, params: Mapping[str, Any],
             walk: Mapping[str, Any] | None) -> dict[str, Any]:
    """Run the example call (and the walk); an ApiError is an outcome too, for real services."""
    outcome: dict[str, Any] = {}
    version_arg = version or None
    try:
        outcome["call"] = _call(client, action, version_arg, dict(params))
    except ApiError as error:
        outcome["call_error"] = error
    if walk is not None:
        try:
            pages = client.pages(action, version=version_arg, **walk)
            outcome["pages"] = [page.rows for page in itertools.islice(pages, WALK_PAGES)]
        except ApiError as error:
            outcome["pages_error"] = error
    return outcome


def _call(client: Client, action: Action, version: str | None, params: dict[str, Any]) -> Any:
    params = {k: tuple(v) if action.param(k).where == "file" and isinstance(v, list) else v
              for k, v in params.items()}           # a file part is a (name, bytes) pair; YAML keeps lists
    return client.call(action, version=version, **params)


# --- what a cassette promises -------------------------------------------------------------------

def summary(action: Action, outcome: Mapping[str, Any]) -> dict[str, Any]:
    """Types, row counts, ids and a digest of the parsed result: stored with the cassette at recording,
    compared with the replay's."""
    found: dict[str, Any] = {}
    if "call_error" in outcome:
        found["call"] = _error(outcome["call_error"])
    else:
        found["call"] = _describe(action, outcome.get("call"))
    if "pages_error" in outcome:
        found["pages"] = _error(outcome["pages_error"])
    elif "pages" in outcome:
        rows = [row for page in outcome["pages"] for row in page]
        found["pages"] = {"rows": [len(page) for page in outcome["pages"]], "ids": row_ids(action, rows),
                          "sha256": _digest(outcome["pages"])}
    return found


def _error(error: ToolkitError) -> dict[str, Any]:
    return {"error": type(error).__name__, "status": getattr(error, "status", None)}


def _describe(action: Action, result: Any) -> dict[str, Any]:
    described: dict[str, Any] = {"type": type(result).__name__}
    if isinstance(result, bytes):
        described["length"] = len(result)
        described["sha256"] = hashlib.sha256(result).hexdigest()
        return described
    if isinstance(result, dict):
        described["keys"] = sorted(map(str, result))[:40]
    if isinstance(result, list):
        described["length"] = len(result)
        described["ids"] = row_ids(action, result)
    if result is not None:
        described["sha256"] = _digest(result)
    return described


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


def row_ids(action: Action, rows: list, limit: int = 10) -> list:
    """The ids of the first rows: the key columns of type id of the action's resource, else `id`."""
    from toolkit import catalog
    fields = [c.source or camel(c.name) for r in catalog.RESOURCES.values() if r.action == action.id
              for c in r.columns if c.name in r.key and c.dtype == "id"] or ["id"]
    ids = []
    for row in rows[:limit]:
        if isinstance(row, dict):
            ids += [row[f] for f in dict.fromkeys(fields) if f in row and row[f] is not None]
    return ids

