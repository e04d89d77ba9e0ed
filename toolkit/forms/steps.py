"""What the multi-step helpers share: a table of steps, a status line, a progress bar, a wait.

A helper is a widget with its own inputs and a button, and a `run(...)` method doing the same from
code. `run` returns the result and raises when a step fails (the table and `output` show how far it
got); the button shows the error instead of raising. Helpers that follow a job (an import, an analysis,
a download being prepared) poll with `wait(seconds)` between requests: `time.sleep` by default; against
the sandbox, `lambda s: sandbox.advance(seconds=s)` moves its virtual clock instead. `timeout` counts
the seconds waited, so it holds for both.
"""
from __future__ import annotations

__all__ = ["Steps", "Wait", "lookup_field", "value_of"]

import html
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from toolkit.catalog.spec import Param
from toolkit.connection import audit, effects
from toolkit.errors import ToolkitError
from toolkit.forms.fields import Field, build
from toolkit.forms.form import LOOKUP_KINDS, error_html, note, show
from toolkit.forms.lookups import Choices, lookup_for
from toolkit.forms.record import Recorded

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection

Wait = Callable[[float], Any]


class Steps(Recorded, W.VBox):
    """Base of the helpers: `steps` (one dict per step), `status`, `progress`, `output`, `button`.
    Its output keeps a plain record of the steps (toolkit.forms.record)."""

    title = ""
    action_label = "Run"

    def __init__(self, conn: Connection, inputs: list[W.Widget], *, wait: Wait | None = None,
                 interval: float = 5.0, timeout: float = 900.0) -> None:
        super().__init__(layout=W.Layout(border="1px solid #ddd", padding="8px"))
        self.conn = conn
        self.wait, self.interval, self.timeout = wait or time.sleep, interval, timeout
        self.steps: list[dict[str, Any]] = []
        self.result: Any = None
        self.error: BaseException | None = None
        self.state = "new"
        self.button = W.Button(description=self.action_label, button_style="primary", icon="play",
                               layout=W.Layout(width="auto", margin="6px 0 4px 190px"))
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="420px", display="none"))
        self.table = W.HTML()
        self.status = W.HTML()
        self.output = W.Output()
        self.button.on_click(lambda _: self.click())
        self.children = [W.HTML(f"<b>{html.escape(self.title)}</b>"), *inputs, self.button, self.progress,
                         self.status, self.table, self.output]

    # --- for subclasses ------------------------------------------------------------------------------

    def begin(self) -> None:
        self.steps, self.result, self.error, self.state = [], None, None, "running"
        self.output.outputs = ()
        self._render()

    def step(self, name: str, detail: Any, ok: bool | None = True) -> None:
        """Record (or update, by name) one step's outcome in the table."""
        row = {"step": name, "ok": ok, "detail": detail if isinstance(detail, str) else _short(detail)}
        for i, old in enumerate(self.steps):
            if old["step"] == name:
                self.steps[i] = row
                break
        else:
            self.steps.append(row)
        self._render()

    def call(self, action: str, **params: Any) -> Any:
        """conn.call, recorded in the audit as sent by this helper."""
        with audit.source(f"helper:{type(self).__name__}"):
            return self.conn.call(action, **params)

    def poll(self, name: str, ask: Callable[[], Any], done: Callable[[Any], bool],
             wait: Wait | None = None, interval: float | None = None, timeout: float | None = None
             ) -> tuple[Any, float]:
        """Ask until `done(answer)` or `timeout` seconds waited: (last answer, seconds waited)."""
        wait, interval = wait or self.wait, interval or self.interval
        limit = self.timeout if timeout is None else timeout
        waited = 0.0
        while True:
            answer = ask()
            finished = done(answer)
            self.step(name, f"{_short(answer)} · after {waited:g} s", True if finished else None)
            if finished or waited >= limit:
                return answer, waited
            wait(interval)
            waited += interval

    def stale(self, action: str) -> None:
        ws = self.conn.workspace
        if ws is not None:
            try:
                ws.mark_stale(self.conn.service.key, effects.affected_resources(self.conn.action(action)))
            except Exception as error:
                self.step("mark stale", f"could not: {error}", False)

    def finish(self, result: Any, message: str, display: Any = None, ok: bool = True) -> Any:
        """Show the result; `ok=False` for a job the service ran and reports failed (an import)."""
        self.result, self.state = result, "done" if ok else "failed"
        self.status.value = note(f"✓ {html.escape(message)}", "#2e7d32") if ok else \
            note(f"✗ {html.escape(message)}", "#c62828")
        show(self.output, result if display is None else display)
        self.recorded()
        return result

    def record(self) -> str:
        marks = {True: "✓", False: "✗", None: "…"}
        lines = [f"toolkit helper: {self.title} ({self.state})"]
        lines += [f"{marks[r['ok']]} {r['step']}: {r['detail']}" for r in self.steps]
        return "\n".join(lines)

    def given(self, **values: Any) -> None:
        """Show in the helper's inputs the values `run(...)` was called with from code: its fields stayed
        blank, so the screen did not say what had run. Each name is an input attribute of the helper."""
        for name, value in values.items():
            widget = getattr(self, name)
            if value is None or isinstance(widget, W.FileUpload):
                continue
            try:
                if isinstance(widget, Field):
                    if widget.read() != value:
                        widget.show(value)
                elif widget.value != value:
                    widget.value = value
            except (ValueError, TypeError):      # a value the input cannot show: the steps still say it
                continue

    def require(self, fields: dict[str, Any]) -> None:
        """Mark each blank required input (a Field, or a FileUpload) and raise naming them; clear the rest."""
        from toolkit.forms.fields import MISSING
        blank = []
        for name, field in fields.items():
            if isinstance(field, Field):
                try:
                    empty = field.read() in (MISSING, [])
                except ValueError as error:
                    field.flag(str(error))
                    blank.append(name)
                    continue
                field.flag("is required" if empty else None)
            else:
                empty = not field.value
            if empty:
                blank.append(name)
        if blank:
            raise ToolkitError(f"nothing sent: fill in {', '.join(blank)}")

    def fail(self, error: BaseException) -> None:
        self.error, self.state = error, "failed"
        if self.steps and self.steps[-1]["ok"] is not False:
            self.step(self.steps[-1]["step"], f"{self.steps[-1]['detail']} → {error}", False)
        self.status.value = error_html(error)
        self.recorded()

    # --- the button ----------------------------------------------------------------------------------

    def click(self) -> Any:
        """What the button does: run with the widgets' values, show (never raise) an error."""
        self.button.disabled, self.button.icon = True, "spinner"
        self.status.value = note('<i class="fa fa-spinner fa-spin"></i> working…')
        self.begin()                 # a new press: the table shows this run only, never the last one's steps
        try:
            return self.run_from_widgets()
        except Exception as error:
            if self.error is not error:
                self.fail(error)
            return None
        finally:
            self.button.disabled, self.button.icon = False, "play"

    def run_from_widgets(self) -> Any:
        raise NotImplementedError

    def guarded(self, work: Callable[[], Any]) -> Any:
        """Run the steps; a failure is recorded and shown, then raised."""
        self.begin()
        try:
            return work()
        except Exception as error:
            self.fail(error)
            raise

    def _render(self) -> None:
        marks = {True: "✓", False: "✗", None: "…"}
        rows = "".join(f"<tr><td>{marks[r['ok']]}</td><td>{html.escape(r['step'])}</td>"
                       f"<td style='text-align:left'>{html.escape(str(r['detail']))}</td></tr>" for r in self.steps)
        self.table.value = f"<table>{rows}</table>" if rows else ""


def lookup_field(conn: Connection, action: str, param: str | Param, parent: Field | None = None) -> Field:
    """An input for a param of an action, with live choices when the catalog has a lookup for it
    (narrowed by `parent`'s value for a dependent one, such as a submission's targets)."""
    entry = conn.action(action)
    param = entry.param(param) if isinstance(param, str) else param
    found = lookup_for(entry, param.name)
    made = build(param, found is not None and param.kind in LOOKUP_KINDS)
    if found is not None and param.kind in LOOKUP_KINDS:
        Choices(conn, found, made, parent if found.parent else None).load()
    return made


def value_of(field: Field, default: Any = None) -> Any:
    """A field's value for a helper: its parsed value, or `default` when blank."""
    from toolkit.forms.fields import MISSING
    value = field.read()
    return default if value is MISSING else value


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 160 else text[:157] + "…"
