"""The look shared by every report figure: size, colours, titles, and PNG bytes for the HTML report.

Figures are `matplotlib.figure.Figure` objects made without pyplot, so building one never touches a
global backend (Agg renders them; Jupyter shows them as they are returned) and threads do not collide.

    fig = plots.figure(height=4); ax = fig.subplots(); ...; plots.finish(ax, "Title", "x", "y")
"""
from __future__ import annotations

__all__ = ["BLUE", "DPI", "FLAG", "GOLD", "GREEN", "GREY", "GRID", "INK", "MUTED", "ORANGE", "PROVIDER",
           "PURPLE", "RED", "ReportFigure", "SERIES", "STATUS", "TEAL", "WIDTH", "bar_axes", "bar_height", "colour",
           "data_uri", "empty", "figure", "finish", "label_bars", "legend", "names", "png", "shorten", "whole_numbers"]

import base64
import io
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import AutoLocator

WIDTH = 9.0          # inches: 900 px at the report's 100 px per inch
DPI = 150            # rendered sharper than shown
INK, MUTED, GRID = "#1f2933", "#616e7c", "#e4e7eb"
BLUE, ORANGE, GREEN, RED, PURPLE, TEAL, GREY, GOLD = (
    "#2f6fb0", "#e07b39", "#3a9a5b", "#c8423b", "#7b5ea7", "#2a9d8f", "#9aa5b1", "#d4a72c")
SERIES = (BLUE, ORANGE, GREEN, PURPLE, TEAL, RED, GOLD, "#8c6d46", "#d36ba6", "#5b7083")
STATUS = {  # translation target and submission statuses, from waiting to done
    "WAITING": "#c3cbd4", "CREATING": "#c3cbd4", "PREFLIGHT": "#aab4be", "READY": "#8fb8e0",
    "IN_PROCESS": BLUE, "PROCESSED": "#7cc08f", "COMPLETED": GREEN, "DELIVERED": "#1f6e3d",
    "CANCELLED": "#e3a6a1",
}
PROVIDER = {"manual": BLUE, "analytics": ORANGE, "warehouse": PURPLE, "import": TEAL}
FLAG = {"overdue": RED, "at risk": GOLD}


class ReportFigure(Figure):
    """A Figure that Jupyter shows as a PNG: made without pyplot, no backend would display it otherwise.

    Its text is the services' data (tags, names), never mathtext: `$` is a dollar sign, and a tag
    such as `$\\frac{$` is drawn as it is instead of failing the figure (and the report with it).
    """

    def draw(self, renderer: Any) -> None:
        with rc_context({"text.parse_math": False}):  # the tick labels a draw makes are plain too
            for text in self.findobj(Text):
                text.set_parse_math(False)
            super().draw(renderer)

    def _repr_png_(self) -> bytes:
        return png(self, dpi=100)


def figure(height: float = 4.0, width: float = WIDTH) -> Figure:
    """A figure at report width, laid out so titles and long tick labels fit."""
    return ReportFigure(figsize=(width, height), dpi=100, layout="constrained", facecolor="white")


def colour(name: str, palette: dict[str, str], index: int = 0) -> str:
    """The fixed colour of a known category, else the series colour for its position."""
    return palette.get(str(name), SERIES[index % len(SERIES)])


def finish(ax: Axes, title: str, xlabel: str, ylabel: str, grid: Literal["x", "y", "both", ""] = "x") -> Axes:
    """Title and axis labels in the report's style, a light grid on one axis, no top or right spine."""
    ax.set_title(title, loc="left", fontsize=12, fontweight="bold", color=INK)
    ax.set_xlabel(xlabel, color=MUTED)
    ax.set_ylabel(ylabel, color=MUTED)
    ax.tick_params(colors=INK, labelsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(GREY)
    if grid:
        ax.grid(axis=grid, color=GRID, linewidth=0.8)
        ax.set_axisbelow(True)
    return ax


def empty(title: str, message: str, xlabel: str = "", ylabel: str = "") -> Figure:
    """A small figure saying there is nothing to draw (and why), titled like the one it stands for."""
    fig = figure(height=1.8)
    ax = fig.subplots()
    ax.text(0.5, 0.5, message, ha="center", va="center", color=MUTED, fontsize=10, wrap=True,
            transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    finish(ax, title, xlabel or " ", ylabel or " ", grid="")
    return fig


def legend(fig: Figure, columns: int = 3, **options: object) -> None:
    """The figure's legend in one row under the plot, where it covers no bar."""
    fig.legend(loc="outside lower center", ncols=columns, frameon=False, fontsize=8, **options)


def bar_height(count: int, per_bar: float = 0.28, least: float = 2.6, most: float = 11.0) -> float:
    """A figure height that gives each of `count` horizontal bars room for its label."""
    return max(least, min(most, 1.3 + per_bar * count))


def bar_axes(count: int, per_bar: float = 0.28, least: float = 2.6) -> tuple[Figure, Axes, np.ndarray]:
    """A figure tall enough for `count` horizontal bars, its one plot, and the bars' positions (0 at the
    bottom: a frame reversed first shows its first row on top)."""
    fig = figure(bar_height(count, per_bar=per_bar, least=least))
    return fig, fig.subplots(), np.arange(count)


def whole_numbers(axis: Axis) -> None:
    """Ticks only at whole numbers on an axis of counts (matplotlib's own spacing otherwise)."""
    locator = AutoLocator()
    locator.set_params(integer=True)
    axis.set_major_locator(locator)


def label_bars(ax: Axes, values: Iterable[float], positions: Iterable[float], fmt: str = "{:,.0f}",
               horizontal: bool = True) -> None:
    """Write each bar's value just past its end."""
    for value, position in zip(values, positions, strict=False):
        if value != value or value == 0:  # NaN or nothing to say
            continue
        text = fmt.format(value)
        if horizontal:
            ax.annotate(text, (value, position), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=8, color=MUTED)
        else:
            ax.annotate(text, (position, value), xytext=(0, 2), textcoords="offset points", ha="center",
                        fontsize=8, color=MUTED)


def shorten(text: object, limit: int = 32) -> str:
    """A label cut to `limit` characters with an ellipsis."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def names(listed: str, width: int = 30, lines: int = 3) -> str:
    """Comma-separated names on up to `lines` lines of about `width` characters, each name whole
    ("LINGUISTI…" was a phase name cut), the rest counted: "+2 more"."""
    parts = [p.strip() for p in str(listed).split(",") if p.strip()]
    rows: list[str] = []
    for i, name in enumerate(parts):
        if rows and len(rows[-1]) + 2 + len(name) <= width:
            rows[-1] += ", " + name
        elif len(rows) < lines:
            rows.append(name)
        else:
            rows[-1] += f" +{len(parts) - i} more"
            break
    return ",\n".join(rows)


def png(fig: Figure, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes, drawn once by Agg (`savefig` would lay it out in a draw of its own)."""
    from PIL import Image

    before = fig.get_dpi()
    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    try:
        canvas.draw()
        size = canvas.get_width_height(physical=True)
        image = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    finally:
        fig.set_dpi(before)
    buffer = io.BytesIO()
    image.save(buffer, format="png")
    return buffer.getvalue()


def data_uri(fig: Figure) -> str:
    """The figure as a `data:image/png;base64,` URI for an <img> that needs no file and no network."""
    return "data:image/png;base64," + base64.b64encode(png(fig)).decode("ascii")
