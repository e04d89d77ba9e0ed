"""`toolkit.downloads`, the name analysts and the README use: the translation service's downloads in one
call (toolkit.http.translation_downloads) and the client-side download step of a URL
(toolkit.http.downloads), handed on as they are.

    tk.downloads.deliverables(tm, 1001, ["fr-FR"]).extract("translated/")
"""
from toolkit.http.downloads import (
    MAX_TEXT_BYTES,
    RETRY_STATUSES,
    TEXT_TYPES,
    Calls,
    Fetched,
    fetch_url,
    write,
)
from toolkit.http.translation_downloads import (
    INTERVAL,
    POLLS,
    Downloaded,
    TargetFile,
    deliverables,
    prepare,
    submission_files,
    target_file,
)

__all__ = ["INTERVAL", "MAX_TEXT_BYTES", "POLLS", "RETRY_STATUSES", "TEXT_TYPES", "Calls", "Downloaded", "Fetched",
           "TargetFile", "deliverables", "fetch_url", "prepare", "submission_files", "target_file", "write"]
