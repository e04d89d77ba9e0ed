"""Translation progress: targets by status and language, the phase funnel, percent complete per
submission, overdue and at-risk targets, the burndown over the loads, word counts and quotes.

A target is done once PROCESSED, DELIVERED or COMPLETED; CANCELLED ones are left out of progress;
every other status is open. "Now" is `source.clock_of`: the service's clock at the latest load of
targets (its Date header; the sandbox sends its virtual clock), or `now=`; the frames say which in
`attrs["now"]` and `attrs["clock"]`, and so does the HTML report.

    late = reports.translation.overdue(ws); reports.translation.plot_overdue(late)
"""
from __future__ import annotations

__all__ = ["AT_RISK_HOURS", "CANCELLED", "DONE", "SERVICE", "burndown", "overdue", "overdue_by", "percent_complete",
           "phase_funnel", "plot_burndown", "plot_overdue", "plot_percent_complete", "plot_phase_funnel",
           "plot_quotes", "plot_status_by_language", "plot_word_counts", "quotes", "status_by_language",
           "word_counts"]

from toolkit.reports.translation.progress import (
           burndown,
           overdue,
           overdue_by,
           percent_complete,
           phase_funnel,
           plot_burndown,
           plot_overdue,
           plot_percent_complete,
           plot_phase_funnel,
           plot_status_by_language,
           status_by_language,
)
from toolkit.reports.translation.statuses import AT_RISK_HOURS, CANCELLED, DONE, SERVICE
from toolkit.reports.translation.volume import plot_quotes, plot_word_counts, quotes, word_counts
