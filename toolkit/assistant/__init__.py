"""Read-only access to a workspace for an assistant: `toolkit mcp` (server.py) over reading.py's answers,
every query checked by guard.py before it runs."""
