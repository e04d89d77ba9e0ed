"""What a form leaves in a saved notebook: a plain record of what it sent, beside the live widget.

A widget's output holds only a reference to a model that lives in the kernel: reopened after the
kernel has gone, JupyterLab shows "Error displaying widget: model not found" where the form and its
"✓ sent" were. So a form shown in a notebook has a second output under the widget's: text/plain and
text/html (folded) saying what it sent and what came back, which each send updates in place (its
display id). Whatever cannot draw the widget (a kernel gone, an untrusted notebook, nbconvert, a
notebook viewer) reads the record there, once: the widget's own output carries only a label. Outside
IPython's display (`_repr_mimebundle_`), the bundle carries the record itself.

    form = library.form("create_board")     # its output: the widget, and "create_board: nothing sent yet"
"""
from __future__ import annotations

__all__ = ["Recorded"]

import html
from typing import Any


class Recorded:
    """A widget whose display carries a plain record (`record()`), refreshed by `recorded()`."""

    def record(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(super()._repr_mimebundle_(**kwargs))  # type: ignore[misc]
        text = self.record()
        bundle["text/plain"] = text
        bundle["text/html"] = f'<pre style="white-space:pre-wrap">{html.escape(text)}</pre>'
        return bundle

    def _widget_only(self) -> dict[str, Any]:
        """The widget's output in a notebook: the view and a one-line label, no record. The record is in
        the output below it; both carrying it, a saved notebook rendered by nbconvert or a viewer
        (which draws no widget) showed every record twice."""
        bundle = {k: v for k, v in super()._repr_mimebundle_().items()  # type: ignore[misc]
                  if k not in ("text/plain", "text/html")}
        label = self.record().partition("\n")[0].partition(":")[0]
        bundle["text/plain"] = f"{label} (a widget; what it sent is recorded below)"
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display
        handles = self.__dict__.setdefault("_record_handles", [])
        handles.append((display(self._widget_only(), raw=True, display_id=True), False))
        # and an output of its own under the widget: JupyterLab draws a trusted notebook's widget output
        # as its widget whatever else the bundle holds, and "model not found" once the kernel is gone
        handles.append((display(self._folded(), raw=True, display_id=True), True))

    def _folded(self) -> dict[str, str]:
        text = self.record()
        head, _, rest = text.partition("\n")
        body = f'<pre style="white-space:pre-wrap;margin:2px 0">{html.escape(rest.strip())}</pre>' if rest.strip() else ""
        return {"text/plain": text,
                "text/html": f'<details style="color:#666;font-size:85%"><summary>{html.escape(head)}</summary>'
                             f"{body}</details>"}

    def recorded(self) -> None:
        """Bring every output showing this widget up to date with what it has sent."""
        for handle, folded in self.__dict__.get("_record_handles", []):
            handle.update(self._folded() if folded else self._widget_only(), raw=True)
