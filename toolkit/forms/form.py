"""The form of one write action: fields from the catalog, preview, checks, confirm, send, result.

    form = library.form("create_board")
    form.fields["title"].value = "Quarterly review"
    form.preview()          # the exact request, secrets masked
    form.submit()           # checks, sends through conn.call, shows the answer, marks caches stale

A form calls the same `conn.call` as code does; it only adds the screen. `submit()` never raises:
it returns the parsed answer, or None when it refused (problems, no confirmation) or the call failed;
`form.state` says which ("invalid", "refused", "failed", "sent") and `form.error` holds the error.
"""
from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from toolkit import audit, effects, rules
from toolkit.errors import ApiError, ToolkitError, ValidationError
from toolkit.forms.fields import MISSING, Field, build
from toolkit.forms.lookups import Choices, lookup_for
from toolkit.spec import CONTENT_TYPES

if TYPE_CHECKING:
    from toolkit.connection import Connection

LOOKUP_KINDS = ("id", "string", "list", "int_list", "object")
SPINNER = '<i class="fa fa-spinner fa-spin"></i> '


def note(text: str, color: str = "#333") -> str:
    return f'<div style="color:{color};margin:4px 0">{text}</div>'


def show(output: W.Output, value: Any) -> None:
    """Append a result to an Output: records and lists as DataFrames, the rest as text."""
    output.append_display_data(as_display(value))


def as_display(value: Any) -> Any:
    from IPython.display import HTML
    if value is None:
        return HTML(note("✓ done: the service answered with no content", "#2e7d32"))
    if isinstance(value, dict):
        flat = pd.json_normalize(value, max_level=1) if value else pd.DataFrame()
        return flat.T.rename(columns={0: "value"}) if len(flat) == 1 else flat
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return pd.json_normalize(value, max_level=1)
        return pd.DataFrame({"value": value})
    if isinstance(value, bytes | bytearray):
        return HTML(note(f"✓ {len(value):,} bytes received"))
    return HTML(note(html.escape(str(value))))


def error_html(error: BaseException) -> str:
    if isinstance(error, ApiError):
        rid = f" · request {html.escape(error.request_id)}" if error.request_id else ""
        text = f"<b>{error.status}</b> {html.escape(error.message)}{rid}"
    else:
        text = f"<b>{type(error).__name__}</b>: {html.escape(str(error))}"
    return note(f"✗ {text}", "#c62828")


class Form(W.VBox):
    """An ipywidgets form for one write action, derived from its catalog entry alone."""

    def __init__(self, conn: Connection, action: Any) -> None:
        super().__init__(layout=W.Layout(border="1px solid #ddd", padding="8px", width="auto"))
        entry = conn.action(action)
        if not entry.writes:
            raise ToolkitError(f"{entry.id} does not write: read it with conn.call or conn.fetch")
        self.conn, self.action = conn, entry
        self.result: Any = None
        self.error: BaseException | None = None
        self.state = "new"
        wanted = {p.name: lookup_for(entry, p.name) for p in entry.params if p.kind in LOOKUP_KINDS}
        wanted = {name: found for name, found in wanted.items() if found is not None}
        self._fields: dict[str, Field] = {p.name: build(p, p.name in wanted) for p in entry.params}
        self.fields: dict[str, W.Widget] = {name: f.widget for name, f in self._fields.items()}
        self.lookups: dict[str, Choices] = {
            name: Choices(conn, found, self._fields[name],
                          self._fields.get(found.parent[0]) if found.parent else None)
            for name, found in wanted.items()}
        for choices in self.lookups.values():
            choices.peers = [c for c in self.lookups.values()
                             if c is not choices and c.lookup.resource == choices.lookup.resource]
            choices.load()
        # an action that takes two body formats (JSON Merge Patch or JSON Patch) lets the person choose
        self.content_type = W.Dropdown(
            options=[(CONTENT_TYPES[k], k) for k in entry.content_types], value=entry.body,
            description="content type", style={"description_width": "190px"},
            layout=W.Layout(display=None if len(entry.content_types) > 1 else "none"))
        self.confirm = W.Checkbox(value=False, indent=False, description="I understand: send it",
                                  layout=W.Layout(display=None if entry.destructive else "none"))
        self.loss = W.HTML(layout=W.Layout(display=None if entry.destructive else "none"))
        self.button = W.Button(description="Send", icon="paper-plane",
                               button_style="danger" if entry.destructive else "primary")
        self.preview_button = W.Button(description="Preview", icon="eye")
        self.status = W.HTML()
        self.preview_output = W.Output(layout=W.Layout(max_width="900px"))
        self.output = W.Output()
        self.button.on_click(lambda _: self.submit())
        self.preview_button.on_click(lambda _: self.preview())
        if entry.destructive:
            for field in self._fields.values():
                field.widget.observe(lambda _: self._update_loss(), names="value")
            self._update_loss()
        self.children = [self._header(), *(f.row for f in self._fields.values()), self.content_type,
                         self.loss, self.confirm,
                         W.HBox([self.button, self.preview_button]), self.status, self.preview_output,
                         self.output]

    def __repr__(self) -> str:
        return f"<toolkit Form {self.action.id} ({self.state})>"

    def _header(self) -> W.HTML:
        entry = self.action
        badge = ' <span style="color:#c62828">· destructive</span>' if entry.destructive else ""
        return W.HTML(f"<b>{html.escape(self.conn.service.title)} · {html.escape(entry.group)} · "
                      f"{entry.name}</b>{badge}<br>{html.escape(entry.doc)}<br>"
                      f"<code>{entry.method} {html.escape(self.url_template())}</code>"
                      '<div style="color:#666;font-size:85%">* required</div>')

    def url_template(self) -> str:
        entry, conn = self.action, self.conn
        version = "" if entry.versions == ("",) else (
            conn.version if conn.version in entry.versions else entry.versions[-1])
        prefix = conn.service.version_prefix.format(version=version) if version else ""
        return conn.base_url + prefix + entry.path_for(version)

    # --- values ------------------------------------------------------------------------------------

    def fill(self, **values: Any) -> Form:
        """Set fields from Python values (an example, a DataFrame row's fields); returns the form."""
        for name, value in values.items():
            if name not in self._fields:
                raise KeyError(f"{self.action.id} has no field {name!r}; it has {', '.join(self._fields)}")
            self._fields[name].show(value)
        return self

    def collect(self) -> tuple[dict[str, Any], dict[str, str]]:
        """(params to send, problems by field): blank optional fields are left out."""
        values: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for name, field in self._fields.items():
            try:
                value = field.read()
            except ValueError as error:
                problems[name] = str(error)
                continue
            if value is not MISSING:
                values[name] = value
                if field.param.secret:
                    self.conn.redactor.add(str(value))      # never shown back, not even in an error
        for found in rules.problems(self.action, values):
            problems.setdefault(found.param, found.rule)
        return values, problems

    def _options(self) -> dict[str, Any]:
        chosen = self.content_type.value
        return {"content_type": CONTENT_TYPES[chosen]} if chosen and chosen != self.action.body else {}

    def _flag(self, problems: dict[str, str]) -> None:
        for name, field in self._fields.items():
            field.flag(problems.get(name))

    # --- preview -------------------------------------------------------------------------------------

    def preview(self) -> str:
        """The exact request as text (method, URL, headers, body), every secret masked; also shown."""
        values, problems = self.collect()
        self._flag(problems)
        head = f"{self.action.method} {self.url_template()}"
        if problems:
            text = head + "\n\nnot ready:\n" + "\n".join(f"  {k}: {v}" for k, v in problems.items())
        else:
            try:
                prepared = self.conn.prepare(self.action, **self._options(), **values)
                text = prepared.describe(self.conn.redactor, self.conn.auth_headers())
            except ToolkitError as error:
                text = f"{head}\n\nnot ready: {error}"
        text = self.conn.redactor.scrub(text)
        self.preview_output.outputs = ()
        self.preview_output.append_stdout(text + "\n")
        return text

    # --- send ----------------------------------------------------------------------------------------

    def submit(self) -> Any:
        """Check, confirm, send, show: the parsed answer, or None when refused or failed (see `state`)."""
        self.result, self.error = None, None
        self.output.outputs = ()
        values, problems = self.collect()
        self._flag(problems)
        if problems:
            self.state = "invalid"
            name, rule = next(iter(problems.items()))
            self.error = ValidationError(name, None, rule, self.action.id)
            stray = {k: v for k, v in problems.items() if k not in self._fields}
            self.status.value = note(f"✗ nothing sent: fix the {len(problems)} problem(s) marked "
                                     f"{'below' if not stray else ': ' + html.escape(str(stray))}", "#c62828")
            return None
        if self.action.destructive and not self.confirm.value:
            self.state = "refused"
            self._update_loss()
            self.status.value = note("✋ nothing sent: tick “I understand: send it” first. "
                                     + html.escape(effects.loss(self.conn.workspace, self.action, values)), "#c62828")
            return None
        self._busy(True)
        try:
            with audit.source(f"form:{self.action.name}"):
                result = self.conn.call(self.action, **self._options(), **values)
        except Exception as error:                    # shown, kept, never lost
            self.state, self.error = "failed", error
            if isinstance(error, ValidationError) and error.param in self._fields:
                self._fields[error.param].flag(error.rule)
            self.status.value = error_html(error)
            self.output.append_display_data(_html(error_html(error)))
            return None
        finally:
            self._busy(False)
            if self.action.destructive:
                self.confirm.value = False            # the next click must be confirmed again
        self.state, self.result = "sent", result
        self.status.value = note(f"✓ sent {self.action.id}", "#2e7d32")
        show(self.output, result)          # conn.call has audited the write and marked its loads stale
        return result

    def _busy(self, on: bool) -> None:
        self.button.description = "Sending…" if on else "Send"
        self.button.icon = "spinner" if on else "paper-plane"
        self.button.disabled = on
        if on:
            self.status.value = note(SPINNER + "Sending…")

    def _update_loss(self) -> None:
        if not self.action.destructive:
            return
        values = {}
        for name, field in self._fields.items():
            try:
                value = field.read()
            except ValueError:
                continue
            if value is not MISSING:
                values[name] = value
        try:
            text = effects.loss(self.conn.workspace, self.action, values)
        except Exception as error:
            text = f"{self.action.doc} (could not count what it removes: {error})"
        self.loss.value = note("⚠ " + html.escape(text), "#c62828")


def _html(text: str) -> Any:
    from IPython.display import HTML
    return HTML(text)
