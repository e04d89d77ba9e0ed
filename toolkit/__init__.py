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
# (the helper that types pages, toolkit.typist) does not import pandas, DuckDB and the widgets.
_ERRORS = ("AnswerError", "ApiError", "AuthError", "ContractError", "DriftWarning", "ModeError", "NotFoundError", "PagingError",
           "RateLimitError", "ServerError", "ToolkitError", "TransportError", "ValidationError", "VersionError",
           "WorkspaceError", "WorkspaceInUseError", "WorkspaceOpenHereError")
_WHERE = {"Client": "toolkit.client", "connect": "toolkit.client", "Connection": "toolkit.connection", "doctor": "toolkit.checkup", "F": "toolkit.filters", "Secret": "toolkit.http",
          "Snapshot": "toolkit.snapshots", "open_snapshot": "toolkit.snapshots", "actions": "toolkit.tables",
          "resources": "toolkit.tables", "Workspace": "toolkit.workspace", **dict.fromkeys(_ERRORS, "toolkit.errors")}

if _TYPE_CHECKING:
    from toolkit import sandbox
    from toolkit.checkup import doctor
    from toolkit.client import Client, connect
    from toolkit.connection import Connection
    from toolkit.errors import (
        AnswerError,
        ApiError,
        AuthError,
        ContractError,
        DriftWarning,
        ModeError,
        NotFoundError,
        PagingError,
        RateLimitError,
        ServerError,
        ToolkitError,
        TransportError,
        ValidationError,
        VersionError,
        WorkspaceError,
        WorkspaceInUseError,
        WorkspaceOpenHereError,
    )
    from toolkit.filters import F
    from toolkit.http import Secret
    from toolkit.snapshots import Snapshot, open_snapshot
    from toolkit.tables import actions, resources
    from toolkit.workspace import Workspace


def __getattr__(name: str) -> _Any:
    if name in _WHERE:
        value = getattr(_importlib.import_module(_WHERE[name]), name)
    elif name == "sandbox":
        value = _importlib.import_module("toolkit.sandbox")
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
    "ModeError",
    "NotFoundError",
    "PagingError",
    "RateLimitError",
    "Secret",
    "ServerError",
    "Snapshot",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "VersionError",
    "Workspace",
    "WorkspaceError",
    "WorkspaceInUseError",
    "WorkspaceOpenHereError",
    "actions",
    "connect",
    "doctor",
    "open_snapshot",
    "resources",
    "sandbox",
]
