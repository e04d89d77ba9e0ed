"""The progress a long pull or refresh shows: a tqdm line on a terminal, nothing in a log or CI, and in
a notebook one plain text output updated in place that ends as a summary.

    with progress.bar(total, "translation.targets", "pages") as shown: shown.update(1)
"""
from __future__ import annotations

__all__ = ["SINGULAR", "bar", "in_notebook_kernel", "notebook_line", "unit_of"]

import functools
import os
import re
import sys


def bar(total: int | None, description: str, unit: str, show: bool | None = None):
    """tqdm: a line on a terminal, nothing when output is a log or CI, and in a notebook one plain text
    output updated in place that ends as a summary (pages, rows, requests, seconds).

    Not tqdm's notebook widget: a closed widget stays in the saved notebook, and after a reload each
    one reads "Error displaying widget: model not found"; text is saved and reads the same.
    """
    from tqdm.auto import tqdm
    in_notebook = in_notebook_kernel()
    quiet = os.environ.get("TOOLKIT_PROGRESS", "").lower() in ("0", "false", "off") or os.environ.get("CI")
    # an explicit show=True wins over the environment; otherwise tqdm decides by the terminal
    disable = False if show else True if quiet or show is False else (False if in_notebook else None)
    if not (in_notebook and disable is False):
        return tqdm(total=total, desc=description, unit=unit, disable=disable, leave=False, dynamic_ncols=True)
    from types import SimpleNamespace

    from IPython.display import DisplayHandle, Pretty
    # a handle to an output not shown yet: display(display_id=True) shows an empty output at once
    # (IPython 9), which the first line's display then doubled, each line saved twice
    handle = DisplayHandle()
    shown: list[str] = []

    def write(text: str) -> None:           # tqdm writes "\r<line>" and, on close, "\n"
        line = notebook_line(text)
        if line and line != (shown[-1] if shown else None):
            (handle.update if shown else handle.display)(Pretty(line))
            shown.append(line)

    line = SimpleNamespace(write=write, flush=lambda: None)
    # with a total, how far (a percent) and how long to go, as the terminal's bar shows them
    of = "/{total_fmt} {unit} ({percentage:.0f}%)" if total else " {unit}"
    left = ", {remaining} left" if total else ""
    # tqdm is imported here, where a bar is shown, so the class is made here too
    return _counted()(total=total, desc=description, unit=unit, file=line, leave=True, mininterval=0.5,
                      bar_format="{desc}: {n_fmt}" + of + " · {postfix} · {elapsed_s:.1f} s" + left)


def notebook_line(text: str) -> str:
    """What tqdm writes ("\r<line>"), as a notebook's line shows it: without tqdm's ", " before an empty
    postfix, the "00:00 left" a finished walk ends with, or tqdm's own time left where the postfix said
    it already ("15 requests/s, the service's limit; about 14 s left · 6.2 s", not "..., 00:14 left")."""
    line = text.strip().replace(" · , ", " · ").replace(" ·  · ", " · ")
    line = line.removesuffix(", 00:00 left")
    if " s left · " in line:
        line = re.sub(r", [\d:]+ left$", "", line)
    return line


# units as a line names one of them ("1 page", "1/1 batch of submissions")
SINGULAR = {"pages": "page", "ids": "id", "requests": "request", "resources": "resource", "parents": "parent"}


def unit_of(count: float, unit: str) -> str:
    """The unit for `count` of it: the singular for exactly one, "1 pages" read wrong."""
    if count != 1:
        return unit
    first, _, rest = unit.partition(" ")
    one = SINGULAR.get(first) or (first[:-2] if first.endswith("ches") else first.removesuffix("s"))
    return f"{one} {rest}".strip()


@functools.cache
def _counted() -> type:
    from tqdm.std import tqdm as plain

    class Counted(plain):
        """tqdm's plain bar whose unit agrees with its number: the total where it has one, else the count."""

        @property
        def format_dict(self) -> dict:
            found = super().format_dict
            found["unit"] = unit_of(found["total"] or found["n"], found["unit"])
            return found

    return Counted



def in_notebook_kernel() -> bool:
    """A running Jupyter kernel, not merely ipykernel imported (nbclient imports it in tests)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None
