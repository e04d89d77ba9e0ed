"""`toolkit mcp`: a workspace, snapshot or team lake served read-only to an assistant over the Model
Context Protocol (stdio), with the `mcp` SDK (the `mcp` extra).

Five tools, each a function of toolkit.glance.reading: list_views, describe_view, view_history,
view_diff and run_sql. The source is opened read-only and sealed by DuckDB's own switches
(toolkit.storage.sealed: no file, URL, extension or setting beyond it), and nothing here holds a
client, so no service is ever contacted; a tool's error is one short line (a ToolkitError's text,
passwords masked). Calls run one at a time, each within `Limits.seconds`: past it, the query is
interrupted, the call says so, and the next is answered. A line on stdin that is not JSON-RPC gets a
JSON-RPC error (-32700, or -32600 for JSON that is no message); closing stdin stops the query running
and ends the server.

    toolkit mcp --workspace toolkit-demo.duckdb      # an assistant's MCP configuration runs this
"""
from __future__ import annotations

import threading
from typing import Any

import duckdb

from toolkit.catalog.masking import mask_passwords
from toolkit.errors import ToolkitError
from toolkit.glance import reading
from toolkit.storage.sealed import Deadline
from toolkit.storage.snapshots import Snapshot
from toolkit.storage.store import Store

__all__ = ["Calls", "TOOLS", "server", "serve"]

TOOLS = ("list_views", "describe_view", "view_history", "view_diff", "run_sql")

INSTRUCTIONS = """A toolkit workspace, read-only: one view per service.resource holding its latest load.
list_views first; describe_view for a view's columns; view_history for its loads over time; view_diff to
compare two loads; run_sql for one SELECT (DuckDB SQL; views are named service.resource), paged and
capped at 10,000 rows."""


class Calls:
    """The source's calls, one at a time, each stopped (`source.interrupt()`) once `seconds` pass."""

    def __init__(self, source: Store | Snapshot, seconds: float) -> None:
        self.source, self.seconds = source, seconds
        self._one = threading.Lock()

    def run(self, work: Any) -> Any:
        """The work's answer; the SDK's ToolError (an error result with its text, no traceback) when it
        failed or ran past its time."""
        from mcp.server.mcpserver.exceptions import ToolError
        with self._one, Deadline(self.source.interrupt, self.seconds) as deadline:
            try:
                return _answer(work)
            except ToolError:
                if deadline.passed:
                    raise ToolError(self.too_long()) from None
                raise
            except duckdb.InterruptException:
                raise ToolError(self.too_long()) from None

    def too_long(self) -> str:
        return (f"stopped: the call ran past its limit of {self.seconds:g} s. Narrow the query (WHERE, GROUP BY, "
                "LIMIT, fewer joins); the server's operator sets the limit (toolkit mcp --time-limit, "
                "TOOLKIT_MCP_TIME_LIMIT)")


def _answer(work: Any) -> Any:
    """The work's answer; the SDK's ToolError (an error result with its text, no traceback) when it failed."""
    from mcp.server.mcpserver.exceptions import ToolError
    try:
        return work()
    except duckdb.InterruptException:
        raise
    except ToolkitError as error:
        raise ToolError(mask_passwords(str(error))) from None
    except Exception as error:  # DuckDB's own error about the query asked: its first line says it
        first = (str(error).splitlines() or [""])[0]
        raise ToolError(mask_passwords(f"{type(error).__name__}: {first}")) from None


def server(source: Store | Snapshot, seconds: float = 30.0) -> Any:
    """The MCP server over an opened source, each call within `seconds`."""
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("toolkit", instructions=INSTRUCTIONS)
    answered = Calls(source, seconds).run  # every tool's one door: one call at a time, within its time

    @mcp.tool()
    def list_views() -> dict[str, Any]:
        """Every view: rows, loads, the latest load, whether filtered, and its freshness (hours since
        its rows were confirmed by the service, its budget, the rows past it)."""
        return {"views": answered(lambda: reading.list_views(source))}

    @mcp.tool()
    def describe_view(view: str) -> dict[str, Any]:
        """A view's columns with their types, and its rows. `view` is service.resource."""
        return answered(lambda: reading.describe_view(source, view))

    @mcp.tool()
    def view_history(view: str) -> dict[str, Any]:
        """A view's loads, oldest first, by the service's clock: rows, and rows added, changed, removed."""
        return answered(lambda: reading.view_history(source, view))

    @mcp.tool()
    def view_diff(view: str, before: str | None = None, after: str | None = None, limit: int = 50) -> dict[str, Any]:
        """Rows added, removed and changed between two loads (ids from view_history; the last two by default)."""
        return answered(lambda: reading.view_diff(source, view, before, after, limit))

    @mcp.tool()
    def run_sql(query: str, page: int = 0, page_size: int = reading.PAGE) -> dict[str, Any]:
        """One SELECT over the views, read-only (anything else is refused before it runs): one page of its
        rows, `next_page` while more follow, `capped` once 10,000 rows were given."""
        return answered(lambda: reading.run_sql(source, query, page, page_size))

    return mcp


def serve(source: Store | Snapshot, seconds: float = 30.0) -> None:
    """Serve over stdin and stdout until the assistant closes stdin."""
    import anyio
    anyio.run(_stdio, server(source, seconds), source)


def _refusal(problem: Exception) -> Any:
    """The JSON-RPC error of a line that is not a message: -32700 when it is not JSON, -32600 else."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage
    kinds = {e.get("type") for e in getattr(problem, "errors", lambda: [])()}
    code, said = ((types.PARSE_ERROR, "Parse error: the line is not JSON") if "json_invalid" in kinds else
                  (types.INVALID_REQUEST, "Invalid Request: the line is JSON but no JSON-RPC 2.0 message"))
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=said)))


async def _stdio(mcp: Any, source: Store | Snapshot) -> None:
    """The SDK's stdio transport, with what it leaves unsaid: each line that is not a message answered
    with a JSON-RPC error, and the end of stdin stopping the query running so that the server ends."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read, write):
        relay_in, relayed = anyio.create_memory_object_stream[SessionMessage](0)

        async def relay() -> None:
            async with relay_in:
                async for item in read:
                    if isinstance(item, Exception):
                        await write.send(_refusal(item))
                    else:
                        await relay_in.send(item)
            source.interrupt()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            lowlevel = mcp._lowlevel_server
            await lowlevel.run(relayed, write, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
