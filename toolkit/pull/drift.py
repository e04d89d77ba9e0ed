"""Drift: how one load's answers differed from its Resource's declared shapes, counted per load.

    undeclared  a field no column reads (its values are in `extra`)
    missing     a declared field no record of the load sent
    type        a value of another type than its column declares (kept: see toolkit.pull.frames)
    category    a categorical column's value outside its known ones (`known_values`)
    envelope    the rows key, a paging key or a paging header of the declared paging style absent

Pages are looked at where they are typed (`toolkit.pull.frames`, in the typing helper too: what it finds
travels back in the table's schema metadata) and where they are walked (the envelope); a `Tally`
gathers one load's, compares its categorical values with the known ones, and then either
reports (contract="evolve": `_loads.drift`, read by `ws.drift()`, and one `DriftWarning` per load) or
refuses at the first drift (contract="freeze": `ContractError`, and the load rolls back).

Examples and records are masked the way requests and params are: a field that the service's catalog
marks secret as a param (toolkit.http.wire) or that is named like a secret (toolkit.storage.loads), as ***, and
then every secret the client knows (its `Redactor`, toolkit.http.session).
"""
from __future__ import annotations

__all__ = ["CONTRACTS", "EXAMPLE_CHARS", "RECORD_CHARS", "Tally", "Told", "contract_of", "envelope",
           "given_ids", "known_values", "masked", "shown", "warning"]

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit import catalog
from toolkit.catalog.masking import MASK, looks_secret, scrub
from toolkit.catalog.paging import PageNumber, Paging, absent
from toolkit.catalog.spec import Action, Column, Resource
from toolkit.errors import ContractError, ValidationError, printable
from toolkit.pull.frames import DRIFT

if TYPE_CHECKING:
    from toolkit.http.session import Redactor
    from toolkit.storage.loads import Load

CONTRACTS = ("evolve", "freeze")
EXAMPLE_CHARS = 200          # an example is a hint, not a copy of the record
RECORD_CHARS = 1000


def contract_of(value: Any) -> str:
    """The contract asked for, or the ValidationError naming the ones there are."""
    if value not in CONTRACTS:
        raise ValidationError("contract", value, "must be evolve (keep and report drift) or freeze (refuse it)")
    return value


@functools.cache
def _secret_wires(service: str) -> frozenset[str]:
    """The wire names the service's catalog marks secret in any action's params: a record's field of
    the same name holds the same secret."""
    return frozenset(p.wire for action in catalog.actions_of(service) for p in action.params if p.secret)


def masked(value: Any, service: str, field: str = "") -> Any:
    """A value with every secret field's value as ***: named like a secret, or a secret param's wire name."""
    wires = _secret_wires(service)
    name = field.split(".")[-1]
    if name and value is not None and (name in wires or looks_secret(name)):
        return MASK
    return scrub(value, wires)


def shown(value: Any, service: str, redactor: Redactor, field: str = "", limit: int = EXAMPLE_CHARS) -> str:
    """A value as masked JSON text, cut to `limit` characters."""
    text = orjson.dumps(masked(value, service, field), default=str).decode()
    if redactor is not None:
        text = redactor.scrub(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def envelope(style: Paging | None, body: Any, headers: Mapping[str, str]) -> list[list]:
    """The paging keys (or headers) the declared style reads and this answer lacks: [field, kind,
    count, example] entries (the rows key is `toolkit.pull.decoding.mend`'s)."""
    rows_key = getattr(style, "items", None)
    keys = f"absent (keys: {', '.join(map(str, body))})" if isinstance(body, Mapping) else "absent"
    return [[path, "envelope", 1, "absent" if path.startswith("header ") else keys]
            for path in absent(style, body, headers) if path != rows_key]


class Told:
    """The total a walk's answers gave against the rows that came: a total that disagrees is drift of
    the envelope (the walk itself went on while pages came back full, whatever the total said)."""

    def __init__(self, style: Paging | None) -> None:
        self.style, self.rows, self.total = style, 0, None

    def page(self, rows: list, total: int | None) -> None:
        self.rows += len(rows)
        self.total = total if total is not None else self.total

    def differs(self) -> list[list]:
        if self.total is None or self.total == self.rows:
            return []
        style = self.style
        field = f"header {style.total_header}" if isinstance(style, PageNumber) else getattr(style, "total", "total")
        return [[field, "envelope", 1, f"the service said {self.total:,} rows; the walk got {self.rows:,}"]]


def _filter_choices(action: Action | None, column: Column) -> tuple[str, ...]:
    """The choices of the list action's query filter on the column (targets' `status`, wired as
    `targetStatus`; submissions' `statuses`): the values the service documents for it."""
    for param in action.params if action is not None else ():
        if param.choices and param.where == "query" and \
                (param.name in (column.name, f"{column.name}s", f"{column.name}es") or param.wire == column.path[-1]):
            return tuple(map(str, param.choices))
    return ()


@functools.cache
def known_values(resource: Resource) -> dict[str, frozenset[str]]:
    """The values the catalog knows of each categorical column that it knows them for, by column
    name: the column's `values`, or else its list action's filter choices."""
    action = catalog.ACTIONS.get(resource.action)
    out = {}
    for column in resource.columns:
        if column.dtype == "category":
            values = column.values or _filter_choices(action, column)
            if values:
                out[column.name] = frozenset(values)
    return out


def given_ids(resource: Resource) -> bool:
    """Whether the resource fans out over ids the analyst gives (imports' import_ids, not another
    resource's keys): two of its loads may hold different records."""
    return bool(resource.fan_out) and (resource.service, resource.parent) not in catalog.RESOURCES


class Tally:
    """One load's drift: `take` each typed table (the page's drift read from it and the metadata
    removed), `finish` at the end, `found` for the record; with contract="freeze" the first drift
    raises `ContractError`.

    A categorical value is drift when it is outside the values the catalog knows for its column
    (`known_values`), in every load that sends it, until the catalog knows it. A column the catalog
    knows no values for is compared with what the table held before this load (`Load.held_values`),
    so a value is drift once a table has some, not on its first load; and not at all for a resource
    fanned out over ids the analyst gives (`given_ids`): a load for other ids holds other records,
    whose statuses an earlier load could not have shown (an import succeeded where the last was pending).
    """

    def __init__(self, resource: Resource, contract: str, redactor: Redactor, load: Load) -> None:
        self.resource, self.contract, self.redactor = resource, contract, redactor
        self.name = f"{resource.service}.{resource.name}"
        self.entries: dict[tuple[str, str], list] = {}    # (field, kind) → [count, example]
        self.absent: dict[str, int] = {}                   # declared field → rows of pages that lacked it
        self.rows = 0
        self.first: Any = None                              # the load's first record, for a missing field
        categorical = {c.name: ".".join(c.path) for c in resource.columns if c.dtype == "category"}
        known = known_values(resource)
        unknown = [name for name in categorical if name not in known]
        held = load.held_values(unknown) if unknown and not given_ids(resource) else {}
        self.held = {name: (categorical[name], values) for name, values in {**held, **known}.items() if values}

    def take(self, table: pa.Table) -> pa.Table:
        metadata = table.schema.metadata
        if metadata and DRIFT in metadata:
            table = table.replace_schema_metadata(None)
            page = orjson.loads(metadata[DRIFT])
            for field, kind, count, example in page["fields"]:
                self._add(field, kind, count, example, page["record"])
            for field in page["absent"]:
                self.absent[field] = self.absent.get(field, 0) + page["rows"]
        if self.first is None and table.num_rows:
            self.first = table.slice(0, 1).drop_columns(["extra"]).to_pylist()[0]
        self.rows += table.num_rows
        for name, (field, values) in self.held.items():
            if name in table.column_names:
                self._categories(table, name, field, values)
        return table

    def _categories(self, table: pa.Table, name: str, field: str, held: set) -> None:
        column = table.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        for value in pc.unique(column).to_pylist():
            if value is not None and value not in held:
                matches = pc.equal(column, value)
                record = table.filter(matches).slice(0, 1).drop_columns(["extra"]).to_pylist()[0]
                self._add(field, "category", pc.sum(matches).as_py(), value, record)

    def _add(self, field: str, kind: str, count: int, example: Any, record: Any) -> None:
        entry = self.entries.get((field, kind))
        if entry is None:
            self.entries[field, kind] = [count, example]
        else:
            entry[0] += count
        if self.contract == "freeze":
            service = self.resource.service
            shown_record = "none (the answer's envelope)" if record is None else \
                shown(record, service, self.redactor, limit=RECORD_CHARS)
            example = "" if example is None else f", e.g. {shown(example, service, self.redactor, field)}"
            raise ContractError(self.name, field, kind, shown_record, f"{count}{example}")

    def finish(self) -> None:
        """At the end of the load: a declared field no page sent is missing (frozen: refused)."""
        for field, rows in self.absent.items():
            if self.rows and rows >= self.rows:
                self._add(field, "missing", rows, None, self.first)
        self.absent.clear()

    def state(self) -> dict:
        """What a checkpoint keeps of the tally (examples masked), for `restore` in the load that takes
        the checkpoint over: its adopted rows were taken here, not there."""
        return {"found": self.found(), "absent": self.absent, "rows": self.rows}

    def restore(self, state: dict) -> None:
        for entry in state.get("found") or []:
            self.entries[entry["field"], entry["kind"]] = [entry["count"], entry["example"]]
        for field, rows in (state.get("absent") or {}).items():
            self.absent[field] = self.absent.get(field, 0) + rows
        self.rows += int(state.get("rows") or 0)

    def found(self) -> list[dict]:
        """The load's drift so far, examples masked: what `_loads.drift` keeps."""
        service = self.resource.service
        return [{"field": field, "kind": kind, "count": count,
                 "example": None if kind == "missing" else shown(example, service, self.redactor, field)}
                for (field, kind), (count, example) in self.entries.items()]


def warning(resource: Resource, load_id: str, found: list[dict]) -> str:
    """The line a `DriftWarning` says for one load."""
    # a field name is the service's text: escaped, so that it cannot clear a terminal or forge a line
    kinds = ", ".join(f"{printable(entry['field'])} {entry['kind']} ({entry['count']})" for entry in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    name = f"{resource.service}.{resource.name}"
    kept = "every value is kept" if not any(entry["kind"] == "duplicate_key" for entry in found) else \
        "every value is kept but the earlier rows of a repeated key"
    return (f"{name}: load {load_id} kept answers that differ from the declared shapes: {kinds}{more}; "
            f"{kept} (ws.drift({name!r}, {load_id!r}) lists them)")
