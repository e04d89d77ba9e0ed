"""`toolkit mcp`: a workspace, snapshot or team lake served read-only to an assistant over the Model
Context Protocol (stdio), with the `mcp` SDK (the `mcp` extra).

Five tools, each a function of toolkit.glance.reading: list_views, describe_view, view_history,
view_diff and run_sql. The source is opened read-only and nothing here holds a client, so no service
is ever contacted; a tool's error is one short line (a ToolkitError's text, passwords masked).

    toolkit mcp --workspace toolkit-demo.duckdb      # an assistant's MCP configuration runs this
"""
from __future__ import annotations

from typing import Any

from toolkit.catalog.masking import mask_passwords
from toolkit.errors import ToolkitError
from toolkit.glance import reading
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["TOOLS", "server", "serve"]

TOOLS = ("list_views", "describe_view", "view_history", "view_diff", "run_sql")

INSTRUCTIONS = """A toolkit workspace, read-only: one view per service.resource holding its latest load.
list_views first; describe_view for a view's columns; view_history for its loads over time; view_diff to
compare two loads; run_sql for one SELECT (DuckDB SQL; views are named service.resource), paged and
capped at 10,000 rows."""


def _answer(work: Any) -> Any:
    """The work's answer; the SDK's ToolError (an error result with its text, no traceback) when it failed."""
    from mcp.server.mcpserver.exceptions import ToolError
    try:
        return work()
    except ToolkitError as error:
        raise ToolError(mask_passwords(str(error))) from None
    except Exception as error:  # DuckDB's own error about the query asked: its first line says it
        first = (str(error).splitlines() or [""])[0]
        raise ToolError(mask_passwords(f"{type(error).__name__}: {first}")) from None


def server(source: Store | Snapshot) -> Any:
    """The MCP server over an opened source."""
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("toolkit", instructions=INSTRUCTIONS)

    @mcp.tool()
    def list_views() -> dict[str, Any]:
        """Every view: rows, loads, the latest load, whether filtered, and its freshness (hours since
        its rows were confirmed by the service, its budget, the rows past it)."""
        return {"views": _answer(lambda: reading.list_views(source))}

    @mcp.tool()
    def describe_view(view: str) -> dict[str, Any]:
        """A view's columns with their types, and its rows. `view` is service.resource."""
        return _answer(lambda: reading.describe_view(source, view))

    @mcp.tool()
    def view_history(view: str) -> dict[str, Any]:
        """A view's loads, oldest first, by the service's clock: rows, and rows added, changed, removed."""
        return _answer(lambda: reading.view_history(source, view))

    @mcp.tool()
    def view_diff(view: str, before: str | None = None, after: str | None = None, limit: int = 50) -> dict[str, Any]:
        """Rows added, removed and changed between two loads (ids from view_history; the last two by default)."""
        return _answer(lambda: reading.view_diff(source, view, before, after, limit))

    @mcp.tool()
    def run_sql(query: str, page: int = 0, page_size: int = reading.PAGE) -> dict[str, Any]:
        """One SELECT over the views, read-only (anything else is refused before it runs): one page of its
        rows, `next_page` while more follow, `capped` once 10,000 rows were given."""
        return _answer(lambda: reading.run_sql(source, query, page, page_size))

    return mcp


def serve(source: Store | Snapshot) -> None:
    """Serve over stdin and stdout until the assistant closes them."""
    server(source).run("stdio")
