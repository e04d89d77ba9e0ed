"""`toolkit.downloads`, the name analysts and the README use: the translation service's downloads in one
call (toolkit.http.translation_downloads) and the client-side download step of a URL
(toolkit.http.downloads), handed on as they are.

    tk.downloads.deliverables(tm, 1001, ["fr-FR"]).extract("translated/")
"""
from toolkit.http.downloads import fetch_url
from toolkit.http.translation_downloads import Downloaded, deliverables, submission_files, target_file

__all__ = ["Downloaded", "deliverables", "fetch_url", "submission_files", "target_file"]
