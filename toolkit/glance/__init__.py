"""The workspace at a glance: read-only answers about its views (reading.py), served to an assistant by
`toolkit mcp` (mcp_server.py, every query checked by guard.py before it runs)."""
