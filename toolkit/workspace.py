"""The workspace: where clients are connected, and (with the fetch issue) the DuckDB file of loads."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from toolkit.client import Client, connect


class Workspace:
    """One DuckDB file (in memory without a path) that the clients connected through it share.

        ws = toolkit.Workspace("reporting.duckdb")
        tm = ws.connect("translation", **sandbox.credentials("translation"))
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self.clients: dict[str, Client] = {}

    def connect(self, service: str, **credentials: Any) -> Client:
        client = connect(service, **credentials)
        client.workspace = self
        self.clients[service] = client
        return client

    def __repr__(self) -> str:
        return f"<toolkit.Workspace {self.path or ':memory:'} ({', '.join(self.clients) or 'no clients'})>"
