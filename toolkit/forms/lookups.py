"""Live choices for id fields, read from the workspace: roles for role_id, boards for board_id, ...

A lookup (toolkit.catalog.spec.Lookup, declared in each service's catalog: `Service.lookups` by param
name, a Param's own `lookup`) names the resource that holds the ids, the column of the id and how a
choice is labelled; a dependent one (a custom field's values, a submission's targets) also names the
field whose value narrows the rows. The form reads only what the workspace already holds, so building
a form sends nothing; the ↻ button pulls the resource again (`conn.fetch(resource, refresh=True)`). A
lookup that cannot load says why in a note under its field and never stops the form.
"""
from __future__ import annotations

__all__ = ["LOOKUPS", "Choices", "Lookup", "frame", "lookup_for", "options", "refresh"]

import html
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from toolkit import catalog
from toolkit.catalog.spec import Lookup
from toolkit.forms.fields import MISSING

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.catalog.spec import Action
    from toolkit.connection.connection import Connection
    from toolkit.forms.fields import Field


# service key → param name → Lookup: what each catalog declares (Service.lookups), to read; a form asks
# catalog.lookup, which also reads the param's own
LOOKUPS: Mapping[str, Mapping[str, Lookup]] = MappingProxyType(
    {key: service.lookups for key, service in catalog.SERVICES.items() if service.lookups})


def lookup_for(action: Action, name: str) -> Lookup | None:
    """Where the choices of the action's param `name` come from (toolkit.catalog.lookup); None: no choices."""
    return catalog.lookup(action, name)


def frame(conn: Connection, resource: str) -> pd.DataFrame:
    """The resource's latest load in the client's workspace; LookupError saying why when there is none."""
    ws = conn.workspace
    if ws is None:
        raise LookupError("no workspace: connect through toolkit.Workspace to get choices")
    if ws.latest(conn.service.key, resource) is None:
        raise LookupError(f"no {resource} in the workspace yet: ↻ loads them")
    return ws.read(conn.service.key, resource)


def refresh(conn: Connection, resource: str) -> None:
    """Pull the resource again; a resource fanned out over ids the analyst gives cannot be pulled bare."""
    found = catalog.resource(conn.service.key, resource)
    if found.parent and (conn.service.key, found.parent) not in catalog.RESOURCES:
        raise LookupError(f"{resource} are pulled for ids you give: conn.fetch({resource!r}, "
                          f"{found.parent}=[...]) first")
    conn.fetch(resource, refresh=True)


def options(lookup: Lookup, rows: pd.DataFrame, parent_value: Any = None) -> dict[str, Any]:
    """label → id for the rows (those matching the parent field's value when it has one)."""
    if lookup.parent and parent_value not in (None, "") and lookup.parent[1] in rows.columns:
        column = rows[lookup.parent[1]]
        rows = rows[column.astype(str) == str(parent_value)]
    found: dict[str, Any] = {}
    for row in rows.to_dict("records"):
        if lookup.nested:
            for item in _json_list(row.get(lookup.nested)):
                name = item.get("name") if isinstance(item, dict) else item
                if name:
                    found.setdefault(str(name), str(name))
            continue
        value = row.get(lookup.key)
        if value is None or value != value:      # None or NaN/NA
            continue
        text = _label(lookup, row, value)
        found.setdefault(text if text == str(value) else f"{text} ({value})", value)
    return found


def _label(lookup: Lookup, row: dict[str, Any], value: Any) -> str:
    try:
        text = lookup.label.format(key=value, **{k: ("" if v is None or v != v else v) for k, v in row.items()})
    except (KeyError, ValueError, TypeError):
        text = str(value)
    text = " ".join(text.split()).strip(" ·→") or str(value)
    return text if len(text) <= 70 else text[:67] + "…"


def _json_list(value: Any) -> list:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return list(value) if isinstance(value, list | tuple) else []


class Choices:
    """The live choices of one field: its picker (the Combobox itself, or one beside a list or a JSON list of
    {id}s that adds the picked id to it), ↻ and a note."""

    def __init__(self, conn: Connection, lookup: Lookup, field: Field, parent: Field | None) -> None:
        self.conn, self.lookup, self.field, self.parent = conn, lookup, field, parent
        self.rows: pd.DataFrame | None = None
        self.narrowed = ""                      # " of <parent> <value>" when a parent narrows the choices
        self.peers: list[Choices] = []          # other fields of the form reading the same resource
        self.button = W.Button(icon="refresh", tooltip=f"load {lookup.resource} again",
                               layout=W.Layout(width="36px"))
        self.note = W.HTML(layout=W.Layout(display="none", margin="0 0 0 190px"))
        single = isinstance(field.widget, W.Combobox)
        self.picker = field.widget if single else W.Combobox(
            placeholder=f"add from {lookup.resource}", ensure_option=False, layout=W.Layout(width="300px"))
        field.extras = [self.button] if single else [self.picker, self.button]
        field.notes = [self.note]
        self.deleted: set[str] = set()          # ids this form's own delete removed: not warned of
        self.button.on_click(lambda _: self.reload())
        if not single:
            self.picker.observe(self._picked, names="value")
        if parent is not None:
            parent.widget.observe(lambda _: self.update(), names="value")
        field.widget.observe(lambda _: self.check(), names="value")

    def load(self) -> None:
        """Read the rows from the workspace (nothing is sent)."""
        try:
            self.rows = frame(self.conn, self.lookup.resource)
        except Exception as error:
            self.rows = None
            self.say(str(error))
        self.update()

    def reload(self) -> None:
        """↻: pull the resource again, then read it."""
        self.button.disabled = True
        try:
            refresh(self.conn, self.lookup.resource)
        except Exception as error:
            self.say(f"could not load {self.lookup.resource}: {error}")
            return
        finally:
            self.button.disabled = False
        for choices in (self, *self.peers):
            choices.load()

    def update(self) -> None:
        if self.rows is None:
            return
        parent_value = None
        if self.parent is not None:
            try:
                parent_value = self.parent.read()
            except ValueError:
                parent_value = None
        found = options(self.lookup, self.rows, None if parent_value is MISSING else parent_value)
        self.field.choices = found
        self.picker.options = list(found)
        self.narrowed = f" of {self.lookup.parent[0]} {parent_value}" if self.lookup.parent and \
            parent_value not in (None, MISSING) else ""
        self.check()

    def unknown(self) -> list[Any]:
        """The field's values that are not among the workspace's choices (none when there are no rows to
        compare with): a board's title typed as its id, an id of another service, a deleted record."""
        if self.rows is None:
            return []
        try:
            value = self.field.read()
        except ValueError:
            return []
        if value is MISSING:
            return []
        if self.field.param.kind == "object":
            value = [v.get("id") if isinstance(v, dict) else v for v in (value if isinstance(value, list) else [])]
        known = {str(v) for v in self.field.choices.values()}
        return [v for v in (value if isinstance(value, list) else [value]) if str(v) not in known]

    def check(self) -> None:
        """Say under the field when a value is not one the workspace knows, or when there is nothing to pick."""
        if self.rows is None:
            return
        unknown = self.unknown()
        count = len(self.field.choices)
        gone = [v for v in unknown if str(v) in self.deleted]
        if gone and len(gone) == len(unknown):      # after "✓ sent", not "Pick from the list"
            self.say(f"{', '.join(f'‘{v}’' for v in gone[:3])} deleted: no longer among the "
                     f"{count} {self.lookup.resource}{self.narrowed} in the workspace", color="#2e7d32")
        elif unknown:
            shown = ", ".join(f"‘{v}’" for v in unknown[:3]) + (" …" if len(unknown) > 3 else "")
            self.say(f"⚠ {shown}: not among the {count} {self.lookup.resource}{self.narrowed} in the workspace. "
                     "Pick from the list (an id, not a name), or ↻ if it is new.")
        else:
            self.say(None if count else f"no {self.lookup.resource}{self.narrowed} in the workspace")

    def say(self, text: str | None, color: str = "#8a6d00") -> None:
        self.note.value = f'<span style="color:{color};font-size:85%">{html.escape(text)}</span>' if text else ""
        self.note.layout.display = None if text else "none"

    def _picked(self, change: dict) -> None:
        chosen = change["new"]
        if chosen not in self.field.choices:
            return
        value = self.field.choices[chosen]
        widget = self.field.widget
        if self.field.param.kind == "object":           # a select field's values: [{"id": ...}, ...]
            current = _json_list(widget.value) if widget.value.strip() else []
            if {"id": value} not in current:
                widget.value = json.dumps([*current, {"id": value}], indent=2)
        else:
            current = [v.strip() for v in str(widget.value).split(",") if v.strip()]
            if str(value) not in current:
                widget.value = ", ".join([*current, str(value)])
        self.picker.value = ""
