"""Answers that drift from the catalog's declared shapes, as a real service's first day may (issue 16).

`start(drift=True)` (or kinds by name) makes the sandbox send, on the list answers behind the
catalog's Resources, what the toolkit must survive and report rather than trust: a field it does not
declare, a declared one renamed or missing, a number as a string, a null where a list was, a status
never seen, an envelope key renamed. Writes, errors and single-record answers go out as they are.

    plan = DriftPlan("extra_field,number_as_string", 0, {"translation": ["translation.list_targets"]})
    plan.drifts        # [Drift("translation", "targets", "number_as_string", "word_count", ...), ...]
    response = plan.apply("translation.list_targets", response)

Which field drifts is read from each Resource's columns by type, in catalog order (the first integer
or number column is sent as a string, the first list column as null, ...), never a key column nor an
id column (rows stay identifiable and their parents findable) nor the field an incremental pull
filters on; names and values put on the wire come from the seed. A kind a resource has no column for
(media review's teams hold no list) is left out of that resource, and out of `drifts`.
"""
from __future__ import annotations

__all__ = ["Drift", "DriftPlan", "KINDS", "kinds_of"]

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from toolkit import catalog
from toolkit.catalog.spec import Column, Cursor, Offset, PageNumber, Paging, Resource, Unpaged
from toolkit.sandbox.exchange import Response

KINDS = ("extra_field", "renamed_field", "missing_field", "number_as_string", "null_for_list",
         "unknown_status", "envelope_key")

# the column types each kind looks for, in order of preference
_WANTED: Mapping[str, tuple[str, ...]] = {
    "renamed_field": ("string", "timestamp", "boolean"),
    "missing_field": ("string", "timestamp", "boolean"),
    "number_as_string": ("integer", "number"),
    "null_for_list": ("list",),
    "unknown_status": ("category",),
}
# what the seed picks from: names no emulator sends, values no service has sent
_EXTRA_NAMES = ("syncToken", "regionHint", "etagV2", "lifecycleStage", "externalRef")
_UNKNOWN_VALUES = ("ARCHIVED_V2", "QUARANTINED_V2", "MIGRATING_V2")
_COUNT_NAMES = ("totalCount", "totalElements", "count")
_ADDED_KEYS = ("requestId", "apiDeprecation", "meta")
_COUNT_HEADERS = ("x-total-count", "x-total-elements")
_ADDED_HEADERS = ("x-request-id", "x-api-deprecation")


class Drift(NamedTuple):
    """One drift on the wire: `field` is the column's name in the catalog (the new field's wire name
    for extra_field, the envelope key or header for envelope_key); `detail` says what is sent."""
    service: str
    resource: str
    kind: str
    field: str
    detail: str


def kinds_of(drift: bool | str | Iterable[str] | None) -> tuple[str, ...]:
    """The kinds asked for: None/False none, True all, or names (a comma string or an iterable)."""
    if drift is None or drift is False:
        return ()
    if drift is True:
        return KINDS
    names = drift.split(",") if isinstance(drift, str) else list(drift)
    chosen = [name.strip() for name in names if name.strip()]
    unknown = [name for name in chosen if name not in KINDS]
    if unknown:
        raise ValueError(f"drift kinds are {', '.join(KINDS)}; not {', '.join(map(repr, unknown))}")
    return tuple(kind for kind in KINDS if kind in chosen)


def _pick(seed: int, where: str, options: tuple[str, ...]) -> str:
    """One of `options`, the same for the same seed and place whatever else drifts."""
    digest = hashlib.blake2b(f"{seed}:{where}".encode(), digest_size=8).digest()
    return options[int.from_bytes(digest, "big") % len(options)]


def _token(seed: int, where: str) -> str:
    return "sbx-" + hashlib.blake2b(f"{seed}:{where}".encode(), digest_size=4).hexdigest()


class _Edit(NamedTuple):
    """What happens to every record (`path` is the wire path) or to the envelope."""
    kind: str
    path: tuple[str, ...]
    value: Any = None


class _Target(NamedTuple):
    """The edits of one list action, and where its records are in an answer."""
    style: Paging
    records: tuple[_Edit, ...]
    envelope: tuple[_Edit, ...]


class DriftPlan:
    """The drifts of a sandbox, decided once from the catalog, applied to every list answer.

    `actions` maps each served service to the action ids its emulator answers; resources behind
    other actions, writes and non-list answers are never touched. Falsy when nothing drifts, so that
    the server does no work at all then.
    """

    def __init__(self, drift: bool | str | Iterable[str] | None, seed: int,
                 actions: Mapping[str, Iterable[str]]) -> None:
        self.kinds = kinds_of(drift)
        self.seed = seed
        self.drifts: list[Drift] = []
        self._targets: dict[str, _Target] = {}
        if not self.kinds:
            return
        served = {service: set(ids) for service, ids in actions.items()}
        for (service, _), resource in catalog.RESOURCES.items():
            action = catalog.ACTIONS.get(resource.action)
            if (action is None or resource.action not in served.get(service, ())
                    or resource.action in self._targets or action.method != "GET" or action.writes
                    or action.response not in ("page", "list")):
                continue
            style = action.paging or catalog.SERVICES[service].paging or Unpaged()
            self._targets[resource.action] = self._plan(resource, style)

    def __bool__(self) -> bool:
        return bool(self._targets)

    def _plan(self, resource: Resource, style: Paging) -> _Target:
        seed, where = self.seed, f"{resource.service}.{resource.name}"
        skip = set(resource.key) | {resource.incremental.field if resource.incremental else ""}
        free = [c for c in resource.columns if c.name not in skip and c.dtype != "id"]
        taken: set[str] = set()
        edits: list[_Edit] = []

        def note(kind: str, field: str, detail: str) -> None:
            self.drifts.append(Drift(resource.service, resource.name, kind, field, detail))

        for kind in self.kinds:
            if kind == "extra_field":
                declared = {c.path[0] for c in resource.columns}
                name = next(n for n in _rotate(_EXTRA_NAMES, _pick(seed, where + ":extra", _EXTRA_NAMES))
                            if n not in declared)
                value = _token(seed, where + ":extra")
                edits.append(_Edit(kind, (name,), value))
                note(kind, name, f"every record gets the undeclared field {name!r}: {value!r}")
            elif kind == "envelope_key":
                edit = self._envelope(resource, style)
                if edit is not None:
                    note(kind, *edit[1])
                    edits.extend(edit[0])
            else:
                column = _first(free, _WANTED[kind], taken)
                if column is None:
                    continue
                taken.add(column.name)
                wire = ".".join(column.path)
                if kind == "renamed_field":
                    new = column.path[-1] + "V2"
                    edits.append(_Edit(kind, column.path, new))
                    note(kind, column.name, f"{wire} arrives as {'.'.join((*column.path[:-1], new))}")
                elif kind == "missing_field":
                    edits.append(_Edit(kind, column.path))
                    note(kind, column.name, f"{wire} is absent from every record")
                elif kind == "number_as_string":
                    edits.append(_Edit(kind, column.path))
                    note(kind, column.name, f"{wire} is sent as a JSON string (42 as \"42\"); null stays null")
                elif kind == "null_for_list":
                    edits.append(_Edit(kind, column.path))
                    note(kind, column.name, f"{wire} is sent as null instead of a list")
                else:
                    value = _pick(seed, where + ":status", _UNKNOWN_VALUES)
                    edits.append(_Edit(kind, column.path, value))
                    note(kind, column.name, f"{wire} is {value!r} in every record, a value never sent before")
        return _Target(style, tuple(e for e in edits if e.kind != "envelope_key"),
                       tuple(e for e in edits if e.kind == "envelope_key"))

    def _envelope(self, resource: Resource, style: Paging) -> tuple[list[_Edit], tuple[str, str]] | None:
        """The count/total key renamed and an undeclared key added, in the body or the headers.

        The items key, `hasMore` and the cursor, the offset and page size, and the page count of the
        media review's headers stay: a client must still be able to page, and a real service that
        renamed those would break every client it has, so would not ship it; a count is what clients
        only display or check, and what a service renames without noticing. An unpaged answer
        declares no envelope to drift from, so nothing drifts there.
        """
        seed, where = self.seed, f"{resource.service}.{resource.name}:envelope"
        if isinstance(style, PageNumber):
            if not style.total_header:
                return None
            new = _pick(seed, where, _COUNT_HEADERS)
            added, value = _pick(seed, where + ":added", _ADDED_HEADERS), _token(seed, where)
            return ([_Edit("envelope_key", ("header", style.total_header), new),
                     _Edit("envelope_key", ("header+", added), value)],
                    (style.total_header, f"the {style.total_header} header arrives as {new}; "
                                         f"the undeclared header {added}: {value} is added"))
        if isinstance(style, Cursor | Offset):
            # the asset library's pages carry `total` beside `pagination` (pages.py), undeclared by Cursor
            old = style.total if isinstance(style, Offset) else "total"
            new = _pick(seed, where, _COUNT_NAMES)
            added, value = _pick(seed, where + ":added", _ADDED_KEYS), _token(seed, where)
            return ([_Edit("envelope_key", ("body", old), new), _Edit("envelope_key", ("body+", added), value)],
                    (old, f"the envelope's {old} arrives as {new}; the undeclared key {added}: {value!r} "
                          f"is added"))
        return None

    def apply(self, action_id: str | None, response: Response) -> Response:
        """`response` as it goes out with its action's drifts; the records are copied, never changed
        in place (they are the emulator's own)."""
        target = self._targets.get(action_id or "")
        if target is None or not 200 <= response.status < 300:
            return response
        body = response.body
        items: str = getattr(target.style, "items", "")       # the rows' key of an envelope, if any
        if isinstance(body, list):
            records, envelope = body, None
        elif isinstance(body, dict) and items:
            envelope = dict(body)
            found = envelope.get(items)
            if not isinstance(found, list):
                return response
            records = found
        else:
            return response
        drifted = [_drifted(record, target.records) if isinstance(record, dict) else record
                   for record in records] if target.records else records
        headers = dict(response.headers)
        if envelope is not None:
            envelope[items] = drifted
            body = envelope
        else:
            body = drifted
        for edit in target.envelope:
            place, name = edit.path
            if place == "header" and name in headers:
                headers[edit.value] = headers.pop(name)
            elif place == "header+":
                headers[name] = edit.value
            elif place == "body" and envelope is not None and name in envelope:
                envelope[edit.value] = envelope.pop(name)
            elif place == "body+" and envelope is not None:
                envelope[name] = edit.value
        return Response(response.status, body, headers, response.content_type)


def _rotate(options: tuple[str, ...], first: str) -> list[str]:
    at = options.index(first)
    return [*options[at:], *options[:at]]


def _first(columns: list[Column], dtypes: tuple[str, ...], taken: set[str]) -> Column | None:
    for dtype in dtypes:
        for column in columns:
            if column.dtype == dtype and column.name not in taken:
                return column
    return None


def _drifted(record: dict[str, Any], edits: tuple[_Edit, ...]) -> dict[str, Any]:
    """A copy of `record` with the edits made; nested objects on an edited path are copied too."""
    out = dict(record)
    copies = {id(out)}          # the dicts made here, edited freely; the others are the emulator's
    for edit in edits:
        node, reached = out, True
        for part in edit.path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                reached = False     # a null parent (an asset without a cover version): nothing to edit
                break
            if id(child) not in copies:
                child = dict(child)
                node[part] = child
                copies.add(id(child))
            node = child
        if not reached:
            continue
        leaf = edit.path[-1]
        if edit.kind in ("extra_field", "unknown_status"):
            node[leaf] = edit.value
        elif edit.kind == "null_for_list":
            node[leaf] = None
        elif leaf not in node:
            continue
        elif edit.kind == "renamed_field":
            node[edit.value] = node.pop(leaf)
        elif edit.kind == "missing_field":
            del node[leaf]
        elif edit.kind == "number_as_string":
            value = node[leaf]
            if isinstance(value, int | float) and not isinstance(value, bool):
                node[leaf] = str(value)
    return out
