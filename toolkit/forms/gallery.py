"""The gallery: every write action of one service in one dropdown, grouped as in the documents.

    library.forms()          # pick "Boards · create_board: Create a board…", fill the form below
"""
from __future__ import annotations

__all__ = ["Gallery", "LABEL", "first_action", "option_label", "write_actions"]

from typing import TYPE_CHECKING

import ipywidgets as W

from toolkit import catalog
from toolkit.catalog.spec import Action
from toolkit.forms.form import Form
from toolkit.forms.record import Recorded

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

LABEL = 96


def option_label(entry: Action) -> str:
    text = f"{entry.group} · {entry.name}: {entry.doc}"
    return text if len(text) <= LABEL else text[:LABEL - 1] + "…"


def first_action(actions: list[Action]) -> Action:
    """The form the gallery opens on: a plain, harmless one (few required fields, nothing removed)."""
    return min(actions, key=lambda a: (a.destructive, a.method != "POST", sum(p.required for p in a.params),
                                       len(a.params)))


def write_actions(service: str) -> list[Action]:
    """The service's write actions, grouped in the order the documents give the groups."""
    actions = [a for a in catalog.actions_of(service) if a.writes]
    order = {group: i for i, group in enumerate(dict.fromkeys(a.group for a in actions))}
    return sorted(actions, key=lambda a: order[a.group])       # stable: catalog order inside a group


class Gallery(Recorded, W.VBox):
    """One dropdown of the service's write actions; the chosen action's form below it. Its output keeps
    the plain record of what its forms sent (toolkit.forms.record)."""

    def __init__(self, conn: Connection) -> None:
        super().__init__()
        self.conn = conn
        self.actions = write_actions(conn.service.key)
        self.forms: dict[str, Form] = {}                       # built on first choice, kept after
        self.picker = W.Dropdown(options=[(option_label(a), a.id) for a in self.actions],
                                 description="Action", style={"description_width": "60px"},
                                 layout=W.Layout(width="820px"))
        self.holder = W.Box()
        title = W.HTML(f"<b>{conn.service.title}</b>: {len(self.actions)} write actions")
        self.picker.observe(lambda change: self.show(change["new"]), names="value")
        self.children = [title, self.picker, self.holder]
        if self.actions:
            self.show(first_action(self.actions).id)

    def record(self) -> str:
        sent = [form for form in self.forms.values() if form.sent]
        head = f"toolkit forms of {self.conn.service.key}: " + (
            ", ".join(f"{form.action.name} sent {len(form.sent)} time(s)" for form in sent) if sent
            else "nothing sent yet")
        return "\n\n".join([head, *(line for form in sent for line in form.record().split("\n\n")[1:])])

    @property
    def form(self) -> Form | None:
        """The form on show."""
        return self.forms.get(self.picker.value) if self.picker.value else None

    def show(self, action: str) -> Form:
        """Choose an action (its id or short name); its form is built once and kept with what was typed."""
        entry = self.conn.action(action)
        if entry.id not in self.forms:
            self.forms[entry.id] = Form(self.conn, entry)
            self.forms[entry.id].told.append(self.recorded)      # its sends are the gallery's record too
        else:                      # another form's write may have changed the workspace since it was built
            for choices in self.forms[entry.id].lookups.values():
                choices.load()
        if self.picker.value != entry.id:
            self.picker.value = entry.id               # fires show again, which finds the form built
        self.holder.children = [self.forms[entry.id]]
        return self.forms[entry.id]
