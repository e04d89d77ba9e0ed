"""toolkit: the four services an analyst's data lives behind, in DataFrames, DuckDB and forms.

    import toolkit as tk
    sandbox = tk.sandbox.start()
    ws = tk.Workspace("reporting.duckdb")
    tm = ws.connect("translation", **sandbox.credentials("translation"))
"""
from toolkit import sandbox
from toolkit.client import Client, connect
from toolkit.errors import (
    ApiError,
    AuthError,
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
)
from toolkit.filters import F
from toolkit.http import Secret
from toolkit.snapshots import Snapshot, open_snapshot
from toolkit.tables import actions, resources
from toolkit.workspace import Workspace

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "AuthError",
    "Client",
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
    "actions",
    "connect",
    "open_snapshot",
    "resources",
    "sandbox",
]
