"""Reports over a workspace or a snapshot: DataFrames, matplotlib figures and one HTML report.

Each module holds the questions of one service: `audiences`, `translation`, `assets`, `media`. A
function returns a DataFrame; the `plot_` function of the same name draws it. `write_report` puts them
all in one self-contained HTML file (images embedded, no network), each part under a sentence of what it
counts (`captions`).

    from toolkit import reports
    reports.translation.plot_burndown(reports.translation.burndown(ws))
    reports.write_report(ws, "report.html")
"""
from toolkit.reports import assets, audiences, captions, media, plots, translation
from toolkit.reports.html import write_report

__all__ = ["assets", "audiences", "captions", "media", "plots", "translation", "write_report"]
