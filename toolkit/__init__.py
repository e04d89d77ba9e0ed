"""toolkit: the four services an analyst's data lives behind, in DataFrames, DuckDB and forms.

    import toolkit as tk
    sandbox = tk.sandbox.start()
    ws = tk.Workspace("reporting.duckdb")
    tm = ws.connect("translation", **sandbox.credentials("translation"))
"""
import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

# Public names load their modules when first used, so that a process that needs only part of toolkit
# (the helper that types pages, toolkit.pull.typist) does not import pandas, DuckDB and the widgets.
_ERRORS = ("AnswerError", "ApiError", "AuthError", "ContractError", "DriftWarning", "LakeUnreachableError", "LimitError", "ModeError", "NotFoundError", "PagingError",
           "RateLimitError", "RedirectError", "ServerError", "ToolkitError", "TransportError", "UnknownNameError", "ValidationError", "VersionError",
           "WorkspaceBusyError", "WorkspaceDamagedError", "WorkspaceError", "WorkspaceInUseError", "WorkspaceOpenHereError")
_WHERE = {"Client": "toolkit.http.client", "connect": "toolkit.http.client", "Connection": "toolkit.connection.connection", "doctor": "toolkit.checkup.doctor", "F": "toolkit.http.filters", "Secret": "toolkit.http.redaction",
          "Snapshot": "toolkit.workspace", "open_snapshot": "toolkit.workspace", "actions": "toolkit.catalog.tables",
          "resources": "toolkit.catalog.tables", "Workspace": "toolkit.workspace", "plottable": "toolkit.reports.files",
          "save": "toolkit.reports.files", **dict.fromkeys(_ERRORS, "toolkit.errors")}

if _TYPE_CHECKING:
    from toolkit import downloads, sandbox
    from toolkit.catalog.tables import actions, resources
    from toolkit.checkup.doctor import doctor
    from toolkit.connection.connection import Connection
    from toolkit.errors import (
        AnswerError,
        ApiError,
        AuthError,
        ContractError,
        DriftWarning,
        LakeUnreachableError,
        LimitError,
        ModeError,
        NotFoundError,
        PagingError,
        RateLimitError,
        RedirectError,
        ServerError,
        ToolkitError,
        TransportError,
        UnknownNameError,
        ValidationError,
        VersionError,
        WorkspaceBusyError,
        WorkspaceDamagedError,
        WorkspaceError,
        WorkspaceInUseError,
        WorkspaceOpenHereError,
    )
    from toolkit.http.client import Client, connect
    from toolkit.http.filters import F
    from toolkit.http.redaction import Secret
    from toolkit.reports.files import plottable, save
    from toolkit.workspace import Snapshot, Workspace, open_snapshot


def __getattr__(name: str) -> _Any:
    if name in _WHERE:
        value = getattr(_importlib.import_module(_WHERE[name]), name)
    elif name in ("downloads", "sandbox"):
        value = _importlib.import_module(f"toolkit.{name}")   # tk.downloads without importing it first
    else:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


__version__ = "0.1.0"

__all__ = [
    "AnswerError",
    "ApiError",
    "AuthError",
    "Client",
    "Connection",
    "ContractError",
    "DriftWarning",
    "F",
    "LakeUnreachableError",
    "LimitError",
    "ModeError",
    "NotFoundError",
    "PagingError",
    "RateLimitError",
    "RedirectError",
    "Secret",
    "ServerError",
    "Snapshot",
    "ToolkitError",
    "TransportError",
    "UnknownNameError",
    "ValidationError",
    "VersionError",
    "Workspace",
    "WorkspaceBusyError",
    "WorkspaceDamagedError",
    "WorkspaceError",
    "WorkspaceInUseError",
    "WorkspaceOpenHereError",
    "actions",
    "connect",
    "doctor",
    "downloads",
    "open_snapshot",
    "plottable",
    "resources",
    "sandbox",
    "save",
]
