"""The form of one write action: fields from the catalog, preview, checks, confirm, send, result.

    form = library.form("create_board")
    form.fields["title"].value = "Quarterly review"
    form.preview()          # the exact request, secrets masked
    form.submit()           # checks, sends through conn.call, shows the answer, marks caches stale

A form calls the same `conn.call` as code does; it only adds the screen. `submit()` never raises:
it returns the parsed answer, or None when it refused (problems, no confirmation) or the call failed;
`form.state` says which ("invalid", "refused", "failed", "sent") and `form.error` holds the error.

What is shown is what is sent, once: Send shows the request it sends in place of any earlier preview,
a changed field clears a preview made before it, and after a send the button stays off until a field
changes, so a double-click (two clicks queued in the kernel before the first is answered) sends once.
"""
from __future__ import annotations

__all__ = ["Form", "LOOKUP_KINDS", "SPINNER", "as_display", "error_html", "note", "show"]

import html
import threading
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from toolkit.catalog.spec import CONTENT_TYPES, Action
from toolkit.connection import audit, effects
from toolkit.errors import ApiError, ToolkitError, UnknownNameError, ValidationError
from toolkit.forms.fields import MISSING, Field, build
from toolkit.forms.lookups import Choices, lookup_for
from toolkit.forms.record import Recorded
from toolkit.http import rules

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

LOOKUP_KINDS = ("id", "string", "list", "int_list", "object")
SPINNER = '<i class="fa fa-spinner fa-spin"></i> '


def note(text: str, color: str = "#333") -> str:
    return f'<div style="color:{color};margin:4px 0">{text}</div>'


def show(output: W.Output, value: Any) -> None:
    """Append a result to an Output: records and lists as DataFrames, the rest as text."""
    output.append_display_data(as_display(value))


def as_display(value: Any) -> Any:
    from IPython.display import HTML
    if isinstance(value, pd.DataFrame | pd.Series):
        return value                                   # Jupyter draws it as a table
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
    """One sentence: what the service said, what the toolkit refused and why, or what broke unexpectedly."""
    if isinstance(error, ApiError):
        rid = f" · request {html.escape(error.request_id)}" if error.request_id else ""
        text = f"<b>{error.status}</b> {html.escape(error.message)}{rid}"
    elif isinstance(error, ToolkitError):             # its message says what happened and what to do
        text = html.escape(str(error))
    else:
        text = (f"something failed inside the toolkit: <b>{type(error).__name__}</b>: {html.escape(str(error))}. "
                "Run the cell that made this form again; if it happens again, report it with this line")
    return note(f"✗ {text}", "#c62828")


class Form(Recorded, W.VBox):
    """An ipywidgets form for one write action, derived from its catalog entry alone. Its output also
    keeps a plain record of what it sent (toolkit.forms.record), for a notebook read without a kernel."""

    def __init__(self, conn: Connection, action: str | Action) -> None:
        super().__init__(layout=W.Layout(border="1px solid #ddd", padding="8px", width="auto"))
        entry = conn.action(action)
        if not entry.writes:
            raise ToolkitError(f"{entry.id} does not write: read it with conn.call or conn.fetch")
        self.conn, self.action = conn, entry
        self.result: Any = None
        self.error: BaseException | None = None
        self.state = "new"
        self.sent: list[str] = []               # what each send went out as, and what came back
        self.told: list = []                    # callables to tell of a send (a gallery's record)
        self._clicked = threading.Lock()       # a click while one is being handled is dropped
        lookups = {p.name: lookup_for(entry, p.name) for p in entry.params if p.kind in LOOKUP_KINDS}
        wanted = {name: found for name, found in lookups.items() if found is not None}
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
        self.button.on_click(lambda _: self._click())
        self.preview_button.on_click(lambda _: self.preview())
        for name, field in self._fields.items():
            field.widget.observe(lambda _, name=name: self._changed(name), names="value")
        for widget in (self.content_type, self.confirm):
            widget.observe(lambda _: self._changed(None), names="value")
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
                raise UnknownNameError("field", name, list(self._fields), where=f" in {self.action.id}")
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
                text = self._describe(values)
            except ToolkitError as error:
                text = f"{head}\n\nnot ready: {error}"
        return self._show_request("preview", text)

    def _describe(self, values: dict[str, Any]) -> str:
        prepared = self.conn.prepare(self.action, **self._options(), **values)
        return self.conn.redactor.scrub(prepared.describe(self.conn.redactor, self.conn.auth_headers()))

    def _show_request(self, heading: str, text: str) -> str:
        """Put one request in the preview area, replacing whatever was there."""
        text = self.conn.redactor.scrub(text)
        self.preview_output.outputs = ()
        self.preview_output.append_stdout(f"{heading}:\n{text}\n")
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
            self._say_problems(problems)
            return None
        if self.action.destructive and not self.confirm.value:
            self.state = "refused"
            self._update_loss()
            self.status.value = note("✗ nothing sent: tick “I understand: send it” first. "
                                     + html.escape(self._loss_text(values)), "#c62828")
            return None
        self.state = "sending"                        # changes made while sending are not the user's
        self._busy(True)
        failure: Exception | None = None
        request = ""
        try:
            # the request shown is the one about to go, in place of a preview of other values
            request = self._show_request("sent", self._describe(values))
            with audit.source(f"form:{self.action.name}"):
                result = self.conn.call(self.action, **self._options(), **values)
        except Exception as error:                    # shown once, in the output, and kept
            failure = error
        if self.action.destructive:
            self.confirm.value = False                # the next click must be confirmed again
        if failure is not None:
            self.state, self.error = "failed", failure
            if isinstance(failure, ValidationError) and failure.param in self._fields:
                self._fields[failure.param].flag(failure.rule)
            if not isinstance(failure, ApiError):
                self.preview_output.outputs = ()      # refused before it went: no request to show
            self.status.value = note("✗ not sent" if not isinstance(failure, ApiError) else
                                     f"✗ the service refused it ({failure.status})", "#c62828")
            self.output.append_display_data(_html(error_html(failure)))
            self._busy(False)
            if isinstance(failure, ApiError):       # it went: the record says so, and what came back
                self._keep(request, f"✗ {failure.status} {failure.message}")
            return None
        self.result = result
        self._busy(False, sent=True)
        self.status.value = note(f"✓ sent {self.action.id}", "#2e7d32")
        show(self.output, result)          # conn.call has audited the write and marked its loads stale
        # still "sending": the choices this write refreshes change fields, and those changes are not the
        # user's, so they must not turn Send back on for a second click waiting in the queue
        self._after_write()
        self.state = "sent"
        self._keep(request, f"✓ {_outcome(result)}")
        return result

    def record(self) -> str:
        """What this form sent, as plain text: the request (secrets masked) and what came back."""
        head = f"toolkit form {self.action.id}: " + (f"sent {len(self.sent)} time(s)" if self.sent
                                                       else "nothing sent yet")
        return "\n\n".join([head, *self.sent])

    def _keep(self, request: str, outcome: str) -> None:
        self.sent.append(self.conn.redactor.scrub(f"{request}\n→ {outcome}"))
        self.recorded()
        for tell in self.told:
            tell()

    def _click(self) -> Any:
        # clicks queue in the kernel while a send runs: one arriving after it finished finds the button
        # still off (it stays off after a send until a field changes) and is dropped
        if self.button.disabled or not self._clicked.acquire(blocking=False):
            return None
        try:
            return self.submit()
        finally:
            self._clicked.release()

    def _busy(self, on: bool, sent: bool = False) -> None:
        self.button.description = "Sending…" if on else "Sent" if sent else "Send"
        self.button.icon = "spinner" if on else "check" if sent else "paper-plane"
        self.button.tooltip = "change a field to send again" if sent else ""
        self.button.disabled = on or sent
        if on:
            self.status.value = note(SPINNER + "Sending…")

    def _say_problems(self, problems: dict[str, str]) -> None:
        """The count of the ✗ marks the fields show (a lookup's ⚠ warnings stop nothing, and are said
        apart: three marks once stood beside "fix the 2 problem(s)")."""
        stray = {k: v for k, v in problems.items() if k not in self._fields}
        marked = len(problems) - len(stray)
        warned = sum(bool(c.unknown()) for c in self.lookups.values())
        parts = [f"{marked} problem{'s' if marked != 1 else ''} marked ✗ below"] if marked else []
        parts += [f"{html.escape(k)}: {html.escape(v)}" for k, v in stray.items()]
        also = f" ({warned} ⚠ warning{'s' if warned != 1 else ''} only)" if warned else ""
        self.status.value = note(f"✗ nothing sent: fix the {'; '.join(parts)}{also}", "#c62828")

    def _changed(self, name: str | None) -> None:
        """A field changed: what was previewed, sent or flagged for the old values no longer stands."""
        if self.state == "sending":
            return
        if self.preview_output.outputs:
            self.preview_output.outputs = ()
        if self.state == "sent" and self.button.disabled:
            self._busy(False)
        if self.state == "invalid":                   # recount, so the status never names a fixed problem
            _, problems = self.collect()
            self._flag(problems)
            if problems:
                self._say_problems(problems)
            else:
                self.state, self.status.value = "new", note("ready: Preview or Send")
        elif name is not None:
            field = self._fields[name]
            try:
                field.read()
                field.flag(None)
            except ValueError as error:
                field.flag(str(error))
        if name is not None:
            self._update_loss()

    def _after_write(self) -> None:
        """Read again the choices the write changed (a deleted board must not be offered)."""
        changed = set(effects.affected_resources(self.action))
        done: set[str] = set()
        if self.action.method == "DELETE" or self.action.destructive:
            for choices in self.lookups.values():
                choices.deleted |= {str(v) for v in choices.unknown() or _values(choices.field)}
        for choices in self.lookups.values():
            resource = choices.lookup.resource
            if resource in changed and resource not in done:
                done.add(resource)
                choices.reload()

    def _loss_text(self, values: dict[str, Any]) -> str:
        try:
            text = effects.loss(self.conn.workspace, self.action, values)
        except Exception as error:
            text = f"{self.action.doc} (could not count what it removes: {error})"
        unknown = [f"{name} {', '.join(map(str, c.unknown()))}" for name, c in self.lookups.items() if c.unknown()]
        if unknown:
            text = (f"{'; '.join(unknown)}: not in the workspace, so what it removes cannot be counted. "
                    + text)
        return text

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
        self.loss.value = note("⚠ " + html.escape(self._loss_text(values)), "#c62828")


def _outcome(result: Any) -> str:
    """An answer in one line for the record: its id where it has one."""
    if isinstance(result, dict):
        named = {k: result[k] for k in ("id", "name", "title", "status") if result.get(k) is not None}
        return ", ".join(f"{k}: {v}" for k, v in named.items()) or f"{len(result)} fields"
    if result is None:
        return "done (no content)"
    if isinstance(result, list):
        return f"{len(result)} items"
    text = str(result)
    return text if len(text) <= 200 else text[:199] + "…"


def _values(field: Field) -> list[Any]:
    """A field's values as a list (none when blank or unreadable)."""
    try:
        value = field.read()
    except ValueError:
        return []
    return [] if value is MISSING else value if isinstance(value, list) else [value]


def _html(text: str) -> Any:
    from IPython.display import HTML
    return HTML(text)
