"""What the tests of `toolkit mcp` share: a conversation through the MCP SDK's own client over stdio
(every byte the server sent kept by `tee`), a local HTTP server that counts the requests it gets, and
the queries an attacker would try: files, URLs, extensions, settings, databases, passwords, runaways."""
from __future__ import annotations

import asyncio
import http.server
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLKIT = str(Path(sys.executable).with_name("toolkit"))
LIMIT = 2.0   # seconds a call may run in these tests (TOOLKIT_MCP_TIME_LIMIT)
SMALL = {"TOOLKIT_MCP_TIME_LIMIT": str(LIMIT), "TOOLKIT_MCP_MEMORY_LIMIT": "256MB", "TOOLKIT_MCP_SPILL_LIMIT": "64MB"}


def talk(target: str | Path, calls: list[tuple[str, dict]], tmp_path: Path, data_path: str | None = None,
         env: dict[str, str] | None = None) -> tuple[list, bytes]:
    """Each call's (is_error, structured answer or text, seconds it took) through the SDK's client, and
    every byte the server sent. The first answer is the sorted tool names."""
    sent = tmp_path / "sent.bin"
    extra = f" --data-path {shlex.quote(data_path)}" if data_path else ""
    command = f"{shlex.quote(TOOLKIT)} mcp --workspace \"$TARGET\"{extra} | tee {shlex.quote(str(sent))}"
    params = StdioServerParameters(command=shutil.which("bash") or "/bin/bash", args=["-c", command],
                                   cwd=str(tmp_path),
                                   env={**os.environ, "TARGET": str(target), "TMPDIR": str(tmp_path), **(env or {})})

    async def run() -> list:
        answers = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            answers.append((False, sorted(tool.name for tool in listed.tools), 0.0))
            for name, arguments in calls:
                started = time.monotonic()
                result = await session.call_tool(name, arguments)
                text = "".join(getattr(part, "text", "") for part in result.content)
                answers.append((result.is_error, result.structured_content if not result.is_error else text,
                                time.monotonic() - started))
        return answers

    answers = asyncio.run(run())
    return answers, sent.read_bytes()


class _Counting(http.server.BaseHTTPRequestHandler):
    def _count(self) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(b"1\n")

    do_GET = do_HEAD = do_POST = _count

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def counting_server() -> Iterator[http.server.HTTPServer]:
    """An HTTP server on 127.0.0.1 that answers anything and keeps each request in `.requests`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def attacks(port: int, outside: Path) -> list[str]:
    """Queries that reach beyond the workspace's views: `outside` is a folder with a file `secret.csv`
    and a `schema.sql`; `port` a counting HTTP server's."""
    url = f"http://127.0.0.1:{port}"
    secret = outside / "secret.csv"
    return [
        # files: by table function, by bare path, by PRAGMA and import_database
        f"SELECT * FROM read_csv('{secret}')", f"SELECT * FROM read_text('{secret}')",
        f"SELECT * FROM '{secret}'", f"SELECT * FROM glob('{outside}/*')",
        f"PRAGMA import_database('{outside}')", f"CALL import_database('{outside}')",
        f"SELECT * FROM (FROM '{secret}')",
        # URLs
        f"SELECT * FROM read_csv('{url}/data.csv')", f"SELECT * FROM read_parquet('{url}/data.parquet')",
        f"SELECT * FROM '{url}/data.csv'", f"PRAGMA import_database('{url}/dir')",
        f"SELECT * FROM read_json('{url}/x.json')",
        # extensions
        "INSTALL httpfs", "LOAD httpfs", "PRAGMA tpch(1)", "CALL dbgen(sf = 0.01)", "SELECT * FROM tpch_queries()",
        # settings and databases, by view and by function
        "SELECT * FROM pg_settings", "SELECT * FROM pg_catalog.pg_settings", "SELECT * FROM duckdb_settings()",
        "SELECT * FROM duckdb_settings", "SELECT current_setting('temp_directory')",
        "SELECT * FROM duckdb_databases", "SELECT * FROM duckdb_databases()", "SELECT * FROM pragma_database_list",
        "SELECT * FROM pragma_database_list()", "PRAGMA database_list", "SELECT * FROM duckdb_secrets()",
        "SELECT * FROM information_schema.schemata", "SELECT * FROM duckdb_extensions()",
        # the role's password, by any string function over any catalog view
        "SELECT split_part(path, 'password=', 2) FROM duckdb_databases()",
        "SELECT reverse(path) FROM duckdb_databases", "SELECT replace(path, 'password', 'x') FROM pragma_database_list",
        "SELECT list(path) FROM (SELECT * FROM duckdb_databases())", "SELECT getenv('HOME')",
        "SELECT getenv('TOOLKIT_WORKSPACE')",
        # the lake's own metadata
        "SELECT * FROM __ducklake_metadata_workspace.ducklake_snapshot", "SELECT * FROM ducklake_snapshots('workspace')",
        # writes and settings changed
        "SET enable_external_access = true", "RESET lock_configuration", "SET memory_limit = '100GB'",
        f"ATTACH '{outside}/other.duckdb' AS other", f"COPY (SELECT 1) TO '{outside}/written.csv'",
    ]


RUNAWAYS = [
    "SELECT count(*) FROM range(1000000000000)",
    "SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b",
    # a whole sort over more than the memory limit, which would spill: ends within the limit either way
    "SELECT max(n) AS n FROM (SELECT row_number() OVER (ORDER BY md5(range::VARCHAR)) AS n FROM range(200000000))",
]


def outside_folder(tmp_path: Path) -> Path:
    """A folder beyond the workspace with what an attacker would read: a secret file, a `schema.sql`."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("secret\nouts1de-c0ntent-91f2\n")
    (outside / "schema.sql").write_text("SELECT 'outs1de-c0ntent-91f2';\n")
    (outside / "load.sql").write_text("SELECT 'outs1de-c0ntent-91f2';\n")
    return outside
