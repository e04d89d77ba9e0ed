"""One input widget per param, chosen by its kind, and the two conversions a form needs.

`Field.read()` turns what the person typed into the value `conn.call` takes (or `MISSING` when the
field is blank, so an optional param is left out rather than sent as 0 or ""); a value that cannot be
parsed raises `ValueError` with the problem text shown under the field. `Field.show(value)` does the
reverse, for `Form.fill` and for tests.

    kind          widget                               read() gives
    string, url…  Text (Dropdown with choices)         str
    text          Textarea                             str
    secret        Password                             str (masked in previews and the audit)
    id            Text, or Combobox with a lookup      str, int for integer-id services
    integer       Text parsed as int                   int (blank: left out, never 0)
    number        Text parsed as float                 float
    boolean       Checkbox, or Dropdown '', true, false  bool (optional: blank left out)
    datetime      NaiveDatetimePicker (UTC)            aware datetime; the client sends ISO or epoch ms
    list          Text, comma-separated                list[str] (a TagsInput's Enter adds nothing in
                                                       JupyterLab, and "fr-FR, de-DE" typed in one went as one value)
    int_list      Text, comma-separated                list[int]
    object        Textarea holding JSON                dict or list
    file          FileUpload                           (file name, bytes)
"""
from __future__ import annotations

__all__ = ["Field", "ID_WIDTH", "LABEL_WIDTH", "LONG_TEXT", "MISSING", "WIDE", "build", "label", "placeholder",
           "read", "shown"]

import datetime as dt
import html
import json
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W

from toolkit.catalog.spec import Param
from toolkit.http import rules


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
LABEL_WIDTH = "190px"
WIDE = W.Layout(width="720px")
# an id input holds a whole UUID (36 characters) after its label: 520px cut them short
ID_WIDTH = W.Layout(width=f"calc({LABEL_WIDTH} + 44ch)")
LONG_TEXT = ("text",)


@dataclass
class Field:
    """A param's input widget, the row the form shows it in, and its problem label."""
    param: Param
    widget: W.Widget
    help: W.HTML
    problem: W.HTML
    extras: list[W.Widget] = field(default_factory=list)      # beside the input: a lookup's picker, ↻
    notes: list[W.Widget] = field(default_factory=list)       # under it: a lookup's note
    choices: dict[str, Any] = field(default_factory=dict)      # a lookup's labels → ids

    @property
    def row(self) -> W.Widget:
        inline = [self.widget, *self.extras]
        line = W.HBox(inline) if len(inline) > 1 else self.widget
        # the hint right under its input, then what is wrong with it, then a lookup's note: a note
        # beside the input floated to the far right of a wide row, away from the id it spoke of
        return W.VBox([line, self.help, self.problem, *self.notes], layout=W.Layout(margin="0 0 6px 0"))

    def read(self) -> Any:
        return read(self.param, self.widget, self.choices)

    def show(self, value: Any) -> None:
        self.widget.value = shown(self.param, value, self.widget)

    def flag(self, text: str | None) -> None:
        """Show (or clear, with None) a problem under the field."""
        # ✗ marks what stops the send, as the form's summary counts it; ⚠ is a lookup's warning only
        self.problem.value = f'<span style="color:#c62828;font-size:90%">✗ {html.escape(text)}</span>' if text else ""
        self.problem.layout.display = None if text else "none"


def label(param: Param) -> str:
    return f"{param.name} *" if param.required else param.name


def placeholder(param: Param) -> str:
    """The example as a grey hint, marked "e.g." so that an example id is not taken for a value."""
    example = param.example
    if example is None or param.kind == "file":
        return ""
    if param.kind == "object":
        return "e.g. " + json.dumps(example)
    if isinstance(example, list | tuple):
        return "e.g. " + ", ".join(map(str, example))
    return f"e.g. {example}"


def build(param: Param, lookup: bool = False) -> Field:
    """The Field of one param; `lookup` asks for a Combobox the form fills with live choices."""
    style = {"description_width": LABEL_WIDTH}
    common = {"description": label(param), "style": style, "tooltip": param.doc or param.name}
    kind, hint = param.kind, placeholder(param)
    widget: W.Widget
    if param.choices and kind != "list":
        options = [("", None)] if not param.required or param.default is None else []
        options += [(str(c), c) for c in param.choices]
        widget = W.Dropdown(options=options, value=param.default if param.required else None, **common)
    elif kind == "boolean" and param.required:
        widget = W.Checkbox(value=bool(param.default), indent=True, **common)
    elif kind == "boolean":
        widget = W.Dropdown(options=[("", None), ("true", True), ("false", False)], value=None, **common)
    elif kind in ("datetime", "epoch_ms"):
        widget = W.NaiveDatetimePicker(**common)
    elif kind in ("list", "int_list"):
        widget = W.Text(placeholder=hint or "comma-separated", layout=W.Layout(width="520px"), **common)
    elif kind == "file":
        widget = W.FileUpload(multiple=False, description=label(param), tooltip=param.doc or param.name)
    elif kind in ("object",) or kind in LONG_TEXT:
        rows = 5 if kind == "object" else 3
        widget = W.Textarea(placeholder=hint, rows=rows, layout=W.Layout(width="640px"), **common)
    elif param.secret:
        widget = W.Password(placeholder="(secret: masked in previews)", layout=W.Layout(width="520px"), **common)
    elif lookup and kind in ("id", "string"):
        widget = W.Combobox(placeholder=hint or "type or pick", ensure_option=False, layout=ID_WIDTH, **common)
    elif kind == "id":
        widget = W.Text(placeholder=hint, layout=ID_WIDTH, **common)
    else:
        widget = W.Text(placeholder=hint, layout=W.Layout(width="520px"), **common)
    where = f"{param.where} {param.wire}" if param.where != "local" else "checked here, not sent"
    if kind in ("list", "int_list"):
        where = "separate values with commas · " + where
    if param.choices and kind == "list":
        where += " · one or more of " + ", ".join(map(str, param.choices))
    for said in rules.said_of(param):        # what a refusal would say, shown before anything is typed
        where += " · " + said
    help_text = f"{html.escape(param.doc)} <i>({param.kind}, {html.escape(where)})</i>" if param.doc else \
        f"<i>({param.kind}, {html.escape(where)})</i>"
    help_widget = W.HTML(f'<div style="color:#666;font-size:85%;margin:-2px 0 0 {LABEL_WIDTH};line-height:1.3">'
                         f'{help_text}</div>')
    problem = W.HTML(layout=W.Layout(display="none", margin=f"0 0 0 {LABEL_WIDTH}"))
    return Field(param, widget, help_widget, problem)


# --- widget → value --------------------------------------------------------------------------------

def read(param: Param, widget: W.Widget, choices: dict[str, Any] | None = None) -> Any:
    """The value to send, MISSING for a blank field; ValueError(problem) when it does not parse."""
    value = widget.value
    kind = param.kind
    if isinstance(widget, W.FileUpload):
        if not value:
            return MISSING
        item = value[0]
        return (item["name"], bytes(item["content"]))
    if isinstance(widget, W.NaiveDatetimePicker):
        return MISSING if value is None else value.replace(tzinfo=dt.UTC)
    if isinstance(widget, W.Checkbox):
        return bool(value)
    if isinstance(widget, W.Dropdown):
        return MISSING if value is None else value
    text = value if kind in LONG_TEXT or param.secret else str(value).strip()
    if not str(text).strip():
        return MISSING
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("must be a whole number") from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError("must be a number") from None
    if kind in ("list", "int_list"):
        items = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
        items = [(choices or {}).get(item, item) for item in items]
        if kind == "int_list":
            try:
                return [int(item) for item in items]
            except ValueError:
                raise ValueError("must be whole numbers separated by commas") from None
        unknown = [item for item in items if param.choices and item not in map(str, param.choices)]
        if unknown:
            raise ValueError(f"{', '.join(map(str, unknown))}: not one of {', '.join(map(str, param.choices))}")
        return items
    if kind == "object":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") \
                from None
    if kind == "id":
        text = (choices or {}).get(text, text)
        if isinstance(param.example, int) and isinstance(text, str) and text.isdigit():
            return int(text)
    return text


# --- value → widget --------------------------------------------------------------------------------

def shown(param: Param, value: Any, widget: W.Widget) -> Any:
    """What the widget holds for a Python value (an example, a row of a DataFrame)."""
    if isinstance(widget, W.FileUpload):
        if value is None:
            return ()
        name, data = value if isinstance(value, tuple) else ("upload.bin", value)
        return ({"name": name, "type": "application/octet-stream", "size": len(data),
                 "content": memoryview(bytes(data)), "last_modified": dt.datetime.now(dt.UTC)},)
    if isinstance(widget, W.NaiveDatetimePicker):
        return None if value is None else _naive_utc(value)
    if isinstance(widget, W.Checkbox):
        return bool(value) if not isinstance(value, str) else value.lower() == "true"
    if isinstance(widget, W.Dropdown):
        if isinstance(value, str) and param.kind == "boolean":
            return value.lower() == "true"
        return value
    if value is None:
        return ""
    if param.kind == "object" or (isinstance(value, dict | list) and param.kind not in ("int_list", "list")):
        return json.dumps(value, indent=2)
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def _naive_utc(value: Any) -> dt.datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC).replace(tzinfo=None)
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value
