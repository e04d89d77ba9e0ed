"""The in-memory store and the generic handlers that answer plain actions from their catalog entry.

A Collection holds records (dicts, as the wire shows them) by id in insertion order. The generic
handler of an action is chosen by its method and response kind: GET of a list or page → the page the
request asks for; GET of a record → that record; POST → create (the emulator's `new_id`, then
`created`); PATCH → JSON Merge Patch (null deletes); PUT → replace or set; DELETE → remove. Each
answers with the action's own success status (201, 204: no body).

    handler = generic_handler(action, Bind("guests", parents={"board_id": "boardId"}), store,
                              new_id=emulator.new_id, created=emulator.created)

A handler gets what it needs of its emulator (the id maker, the `created` hook) as callables, so the
store knows nothing of the emulator that holds it.
"""
from __future__ import annotations

__all__ = ["Bind", "Collection", "Created", "Memory", "NewId", "generic_handler", "merge_patch"]

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import json_merge_patch

from toolkit.catalog.spec import Action
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.pages import answer_list

NewId = Callable[[str], Any]                                            # collection → a new record's id
Created = Callable[[str, dict[str, Any], Request], dict[str, Any]]     # collection, record, request → record


class Collection:
    """Records of one kind by id, in insertion order; `all()` is a cached list for fast slicing."""

    def __init__(self, name: str, key: str = "id", id_type: type = str) -> None:
        self.name, self.key, self.id_type = name, key, id_type
        self.records: dict[Any, dict[str, Any]] = {}
        self._list: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.all())

    def __contains__(self, record_id: object) -> bool:
        return self.coerce(record_id) in self.records

    def coerce(self, record_id: Any) -> Any:
        """A path param (always a string) as the type of this collection's ids; None if it cannot be."""
        if isinstance(record_id, self.id_type):
            return record_id
        try:
            return self.id_type(record_id)
        except (TypeError, ValueError):
            return None

    def all(self) -> list[dict[str, Any]]:
        if self._list is None:
            self._list = list(self.records.values())
        return self._list

    def get(self, record_id: Any) -> dict[str, Any] | None:
        return self.records.get(self.coerce(record_id))

    def require(self, record_id: Any, what: str = "") -> dict[str, Any]:
        """The record, or a 404 in the service's shape."""
        record = self.get(record_id)
        if record is None:
            raise Reject(404, f"{what or self.name.rstrip('s')} {record_id} not found")
        return record

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        self.records[record[self.key]] = record
        self._list = None
        return record

    def extend(self, records: list[dict[str, Any]]) -> None:
        """Many records at once: seed data at scale is built in one pass."""
        self.records.update((r[self.key], r) for r in records)
        self._list = None

    def remove(self, record_id: Any) -> dict[str, Any] | None:
        record = self.records.pop(self.coerce(record_id), None)
        if record is not None:
            self._list = None
        return record

    def where(self, **fields: Any) -> list[dict[str, Any]]:
        """Records whose fields equal the given values."""
        items = list(fields.items())
        return [r for r in self.all() if all(r.get(k) == v for k, v in items)]


class Memory:
    """The collections of one emulator, created on first use."""

    def __init__(self) -> None:
        self.collections: dict[str, Collection] = {}

    def collection(self, name: str, key: str = "id", id_type: type = str) -> Collection:
        if name not in self.collections:
            self.collections[name] = Collection(name, key, id_type)
        return self.collections[name]

    def __getitem__(self, name: str) -> Collection:
        return self.collection(name)


@dataclass(frozen=True)
class Bind:
    """How an action maps onto a collection.

    `id_param`: the path param naming the record (default: the last path placeholder that is not a
    parent). `parents`: path param → record field that must equal it (nested lists) and that a
    create sets. `filters`: query wire name → record field; a request value (comma list or repeated
    key) keeps records whose field is any of the values.
    """
    collection: str
    id_param: str | None = None
    parents: Mapping[str, str] = field(default_factory=dict)
    filters: Mapping[str, str] = field(default_factory=dict)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch (json-merge-patch), on a copy: the library merges in place, and a
    record must stay as it was when a patch is refused after merging."""
    return json_merge_patch.merge(copy.deepcopy(target), patch) if isinstance(target, dict) else \
        json_merge_patch.merge({}, patch) if isinstance(patch, dict) else patch


_PLACEHOLDER = re.compile(r"{(\w+)}")


def generic_handler(action: Action, bind: str | Bind, store: Memory, *, new_id: NewId, created: Created,
                    clamp: bool = False) -> Callable[[Request], Response]:
    """The handler answering `action` from `store`, chosen by the action's method and response.

    `new_id` names a record created without an id; `created` fills what the service adds to a new
    record; `clamp`: a page size above the maximum is cut instead of refused.
    """
    bind = Bind(bind) if isinstance(bind, str) else bind
    placeholders = _PLACEHOLDER.findall(action.path)
    own = [p for p in placeholders if p not in bind.parents]
    id_param = bind.id_param or (own[-1] if own else None)

    def collection() -> Collection:
        return store[bind.collection]

    def parent_fields(request: Request) -> dict[str, Any]:
        return {fld: request.params[param] for param, fld in bind.parents.items()}

    def find(request: Request) -> dict[str, Any]:
        if id_param is None:
            raise Reject(500, f"sandbox: {action.id} has no path param naming the record")
        record = collection().require(request.params[id_param])
        for fld, value in parent_fields(request).items():
            if str(record.get(fld)) != value:
                raise Reject(404, f"{bind.collection.rstrip('s')} {request.params[id_param]} not found")
        return record

    def answer(record: dict[str, Any] | None) -> Response:
        return Response(action.status, None if action.status == 204 else record)

    def body_object(request: Request) -> dict[str, Any]:
        body = request.json()
        if not isinstance(body, dict):
            raise Reject(400, "the body must be a JSON object")
        return body

    def list_records(request: Request) -> Response:
        records = collection().all()
        wanted = {fld: str(v) for fld, v in parent_fields(request).items()}
        for wire, fld in bind.filters.items():
            values = request.args(wire, split=True)
            if values:
                wanted_values = set(values)
                records = [r for r in records if str(r.get(fld)) in wanted_values]
        if wanted:
            records = [r for r in records if all(str(r.get(k)) == v for k, v in wanted.items())]
        return answer_list(request, action, records, clamp=clamp)

    def get_record(request: Request) -> Response:
        return Response(action.status, find(request))

    def create(request: Request) -> Response:
        target = collection()
        record = body_object(request)
        record.update(parent_fields(request))
        if record.get(target.key) in (None, ""):
            record[target.key] = new_id(bind.collection)
        elif record[target.key] in target:
            raise Reject(409, f"{bind.collection.rstrip('s')} {record[target.key]} already exists")
        record = created(bind.collection, record, request)
        return answer(target.add(record))

    def patch(request: Request) -> Response:
        record = find(request)
        merged = merge_patch(record, body_object(request))
        merged[collection().key] = record[collection().key]   # the id is not patchable
        record.clear()
        record.update(merged)                                  # in place: the cached list stays valid
        return answer(record)

    def put(request: Request) -> Response:
        target = collection()
        record = body_object(request)
        record.update(parent_fields(request))
        if id_param is not None:
            record[target.key] = target.coerce(request.params[id_param])
        elif record.get(target.key) in (None, ""):
            record[target.key] = new_id(bind.collection)
        if record[target.key] not in target:
            record = created(bind.collection, record, request)
        return answer(target.add(record))

    def delete(request: Request) -> Response:
        record = find(request)
        collection().remove(record[collection().key])
        return answer(record)

    if action.method == "GET":
        return list_records if action.response in ("page", "list") else get_record
    operations = {"POST": create, "PATCH": patch, "PUT": put, "DELETE": delete}
    if action.method not in operations:
        raise ValueError(f"no generic handler for {action.method} ({action.id})")
    return operations[action.method]
