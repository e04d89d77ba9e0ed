"""`toolkit mcp` through the MCP SDK's own client over stdio: every tool, on a workspace file, a snapshot
and (tests/team) a lake; writes refused in every spelling with nothing changed; answers capped and
paged; no secret of the sandbox in any byte the server sent (its stdout is kept by `tee`)."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from assistant_attacks import LIMIT, RUNAWAYS, SMALL, attacks, counting_server, outside_folder, talk
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import toolkit as tk
from toolkit.sandbox import available

SERVICE = "audience_platform"
TOOLKIT = str(Path(sys.executable).with_name("toolkit"))

WRITES = [
    "INSERT INTO audience_platform.users__versions (username) VALUES ('intruder')",
    "COPY audience_platform.users TO 'stolen.csv'",
    "ATTACH 'other.duckdb' AS other",
    "CREATE TABLE audience_platform.mine AS SELECT 1 AS one",
    "PRAGMA enable_checkpoint_on_shutdown",
    "SET threads = 1",
    "CALL pragma_version()",
    "SELECT 1; DELETE FROM audience_platform.users__versions",
    "/* only reading */ DELETE FROM audience_platform.users__versions -- honest",
    "uPdAtE audience_platform.users__versions SeT username = 'x'",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A workspace with two loads of the users (a user created between them, through the audit with its
    password) and a snapshot of it with history; the sandbox's secrets."""
    where = tmp_path_factory.mktemp("mcp")
    path, snapshot = where / "ws.duckdb", where / "snapshot.duckdb"
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as box, \
            tk.Workspace(path) as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        cdp.pull("users")
        cdp.call("create_user", username="mcp-bot", email="mcp.bot@example.com", password="pw-mcp-7d3f1a")
        cdp.pull("users")
        ws.export(snapshot, history=True)
        ws.export(where / "snapshot-parquet", format="parquet", history=True)
        secrets = [*box.secrets(), "pw-mcp-7d3f1a"]
    return path, snapshot, secrets


def _talk(target: Path, calls: list[tuple[str, dict]], tmp_path: Path) -> tuple[list, bytes]:
    """Each call's (is_error, structured answer or text) through the SDK's client, and every byte sent."""
    sent = tmp_path / "sent.bin"
    command = f"{shlex.quote(TOOLKIT)} mcp --workspace {shlex.quote(str(target))} | tee {shlex.quote(str(sent))}"
    params = StdioServerParameters(command=shutil.which("bash") or "/bin/bash", args=["-c", command],
                                   cwd=str(tmp_path))

    async def run() -> list:
        answers = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            answers.append((False, sorted(tool.name for tool in listed.tools)))
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                text = "".join(getattr(part, "text", "") for part in result.content)
                answers.append((result.is_error, result.structured_content if not result.is_error else text))
        return answers

    answers = asyncio.run(run())
    return answers, sent.read_bytes()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_tool_answers_on_a_workspace_and_no_secret_is_sent(built, tmp_path):
    path, _, secrets = built
    before = _digest(path)
    calls = [("list_views", {}), ("describe_view", {"view": "audience_platform.users"}),
             ("view_history", {"view": "users"}), ("view_diff", {"view": "audience_platform.users"}),
             ("run_sql", {"query": "SELECT username FROM audience_platform.users ORDER BY 1"}),
             ("run_sql", {"query": "SELECT * FROM _loads"}),
             ("run_sql", {"query": "SELECT * FROM _audit"}),
             ("describe_view", {"view": "nothing.here"})]
    answers, sent = _talk(path, calls, tmp_path)
    tools, views, described, history, diff, users, loads, audit, unknown = answers
    assert tools[1] == ["describe_view", "list_views", "run_sql", "view_diff", "view_history"]
    listed = {v["view"]: v for v in views[1]["views"]}
    assert listed["audience_platform.users"]["loads"] == 2
    assert listed["audience_platform.users"]["budget_hours"] == 24.0
    assert "confirmed_hours_ago" in listed["audience_platform.users"]
    names = {c["name"] for c in described[1]["columns"]}
    assert "username" in names and described[1]["rows"] == listed["audience_platform.users"]["rows"]
    first, second = history[1]["loads"]
    assert (second["added"], second["changed"], second["removed"]) == (1, 0, 0)
    assert second["service_clock"] and first["added"] == first["rows"]
    assert diff[1]["added"]["count"] == 1 and diff[1]["added"]["rows"][0]["username"] == "mcp-bot"
    assert "mcp-bot" in [row["username"] for row in users[1]["rows"]]
    assert not loads[0] and loads[1]["rows"]
    assert audit[0] and "not shared" in audit[1]
    assert unknown[0] and "list_views" in unknown[1]
    assert b"mcp-bot" in sent                                   # the bytes kept are what the client read
    leaked = [s for s in secrets if len(s) >= 6 and any(form.encode() in sent for form in
                                                         (s, json.dumps(s)[1:-1]))]
    assert not leaked
    assert _digest(path) == before


def test_ten_spellings_of_a_write_are_refused_and_nothing_changes(built, tmp_path):
    path, _, _ = built
    before = _digest(path)
    answers, _ = _talk(path, [("run_sql", {"query": q}) for q in WRITES] +
                       [("run_sql", {"query": "SELECT count(*) AS n FROM audience_platform.users__versions"})],
                       tmp_path)
    refused = answers[1:-1]
    assert all(is_error for is_error, _ in refused), refused
    assert all("refused" in text or "statements given" in text for _, text in refused), refused
    assert answers[-1][1]["rows"][0]["n"] > 0
    assert not (tmp_path / "stolen.csv").exists() and not (tmp_path / "other.duckdb").exists()
    assert _digest(path) == before


def test_a_query_of_more_than_100000_rows_is_capped_and_paged(built, tmp_path):
    path, _, _ = built
    query = "SELECT range AS n FROM range(250000)"
    answers, sent = _talk(path, [("run_sql", {"query": query}),
                                 ("run_sql", {"query": query, "page": 1, "page_size": 1000}),
                                 ("run_sql", {"query": query, "page": 9, "page_size": 1000}),
                                 ("run_sql", {"query": query, "page": 10, "page_size": 1000})], tmp_path)
    first, second, last, beyond = (a[1] for a in answers[1:])
    assert len(first["rows"]) == 200 and first["next_page"] == 1 and not first["capped"]
    assert [r["n"] for r in second["rows"][:2]] == [1000, 1001]
    assert len(last["rows"]) == 1000 and last["capped"] and last["next_page"] is None
    assert beyond["capped"] and beyond["rows"] == []
    assert len(sent) < 2_000_000


def test_a_snapshot_is_served_the_same_way(built, tmp_path):
    _, snapshot, secrets = built
    answers, sent = _talk(snapshot, [("list_views", {}), ("describe_view", {"view": "users"}),
                                     ("view_history", {"view": "users"}),
                                     ("run_sql", {"query": "SELECT count(*) AS n FROM audience_platform.users"}),
                                     ("run_sql", {"query": "DROP VIEW audience_platform.users"})], tmp_path)
    views, described, history, count, drop = answers[1:]
    assert [v["view"] for v in views[1]["views"]] == ["audience_platform.users"]
    assert "username" in {c["name"] for c in described[1]["columns"]}
    assert history[1]["loads"][-1]["added"] == 1
    assert count[1]["rows"][0]["n"] == described[1]["rows"]
    assert drop[0] and "refused" in drop[1]
    assert not [s for s in secrets if len(s) >= 6 and s.encode() in sent]


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM '/etc/passwd'", "SELECT * FROM _audit",
    "SELECT * FROM main._audit_events", "SELECT current_setting('threads')", "SELECT * FROM duckdb_settings()",
    "SELECT * FROM other.main.users", "EXPLAIN SELECT 1", "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a",
    "SELECT * FROM glob('*')", "", "SELEC 1"])
def test_the_guard_refuses_what_reaches_beyond_the_views(query):
    from toolkit.errors import QueryRefusedError
    from toolkit.glance.guard import readable
    with pytest.raises(QueryRefusedError):
        readable(query)


def test_the_guard_passes_a_select_and_drops_its_trailing_semicolon():
    from toolkit.glance.guard import readable
    assert readable("WITH a AS (SELECT 1 AS x) SELECT * FROM a; ") == "WITH a AS (SELECT 1 AS x) SELECT * FROM a"
    assert readable("select count(*) from audience_platform.users -- a comment") == \
        "select count(*) from audience_platform.users -- a comment"


def _leaked(sent: bytes, secrets: list[str]) -> list[str]:
    return [s for s in secrets if len(s) >= 6 and any(form.encode() in sent for form in (s, json.dumps(s)[1:-1]))]


def _tree_digest(path: Path) -> dict[str, str]:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(f): _digest(f) for f in files}


@pytest.mark.parametrize("kind", ["file", "snapshot", "parquet"])
def test_every_attempt_beyond_the_views_is_refused_or_stopped_within_the_limit(built, tmp_path, kind):
    """Files, URLs, extensions, settings, databases, passwords, the lake's metadata: refused; a runaway, a
    cross join, a sort past memory: stopped within the limit, and the next call answered at once. The
    HTTP server gets no request, the target is unchanged, nothing outside is read or written."""
    path, snapshot, secrets = built
    target = {"file": path, "snapshot": snapshot, "parquet": path.parent / "snapshot-parquet"}[kind]
    before = _tree_digest(target)
    outside = outside_folder(tmp_path)
    with counting_server() as http:
        calls = [("run_sql", {"query": q}) for q in attacks(http.server_address[1], outside)]
        for runaway in RUNAWAYS:
            calls += [("run_sql", {"query": runaway}), ("run_sql", {"query": "SELECT 42 AS n"})]
        answers, sent = _talk_sealed(target, calls, tmp_path)
        assert http.requests == []
    refused, stopped = answers[1:1 + len(calls) - 2 * len(RUNAWAYS)], answers[1 + len(calls) - 2 * len(RUNAWAYS):]
    assert [q for (q, _), (is_error, _, _) in zip(calls, refused, strict=False) if not is_error] == [], refused
    for (is_error, said, took), (_, after, next_took) in zip(stopped[::2], stopped[1::2], strict=True):
        assert took < LIMIT + 3, (said, took)
        assert is_error or said["rows"], said   # refused, stopped, or done in time
        assert after["rows"] == [{"n": 42}] and next_took < 1.5
    assert any("ran past its limit of 2 s" in said for is_error, said, _ in stopped[::2] if is_error)
    assert b"outs1de-c0ntent-91f2" not in sent and not _leaked(sent, secrets)
    assert not (outside / "written.csv").exists() and not (outside / "other.duckdb").exists()
    assert not (tmp_path / ".tmp").exists() and not list(tmp_path.glob("toolkit-sealed-*"))  # spill: removed
    assert _tree_digest(target) == before


def _talk_sealed(target, calls, tmp_path):
    answers, sent = talk(target, calls, tmp_path, env=SMALL)
    return answers, sent


def test_the_guard_cannot_run_what_it_checks(tmp_path):
    """A PRAGMA with a side effect handed to the parse step leaves no trace: no request, no file read
    (DuckDB 1.5's extract_statements runs PRAGMAs; the parse happens on a sealed connection)."""
    from toolkit.errors import QueryRefusedError
    from toolkit.glance.guard import readable
    outside = outside_folder(tmp_path)
    with counting_server() as http:
        url = f"http://127.0.0.1:{http.server_address[1]}"
        for query in [f"PRAGMA import_database('{url}/dir')", f"PRAGMA import_database('{outside}')",
                      "PRAGMA tpch(1)", f"SELECT 1; PRAGMA import_database('{url}/two')",
                      f"CALL import_database('{outside}')"]:
            with pytest.raises(QueryRefusedError) as refused:
                readable(query)
            assert "outs1de-c0ntent-91f2" not in str(refused.value)
        assert http.requests == []


def test_a_read_only_pivot_runs_and_a_dynamic_one_says_how(built, tmp_path):
    from toolkit.errors import QueryRefusedError
    from toolkit.glance.guard import readable
    assert readable("PIVOT (SELECT 'a' AS k, 1 AS v) ON k IN ('a', 'b') USING sum(v)")
    with pytest.raises(QueryRefusedError, match="list them with IN"):
        readable("PIVOT (SELECT 'a' AS k, 1 AS v) ON k USING sum(v)")


def test_a_line_that_is_not_json_rpc_gets_an_error_and_closing_stdin_ends_a_running_call(built, tmp_path):
    path, _, _ = built
    server = subprocess.Popen([TOOLKIT, "mcp", "--workspace", str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path,
                              env={**os.environ, **SMALL, "TOOLKIT_MCP_TIME_LIMIT": "60", "TMPDIR": str(tmp_path)})
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                 "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for line in lines:
        server.stdin.write(json.dumps(line).encode() + b"\n")
    server.stdin.write(b"{this is not json\n")
    server.stdin.write(b'{"jsonrpc": "2.0", "id": 7, "no": "method"}\n')
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_sql", "arguments": {"query": RUNAWAYS[0]}}}).encode() + b"\n")
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(3)]
    time.sleep(1.0)   # the runaway is running now, with a minute of limit
    started = time.monotonic()
    server.stdin.close()
    try:
        server.wait(timeout=15)
    finally:
        server.kill()
    assert time.monotonic() - started < 15
    codes = sorted(a["error"]["code"] for a in answers if "error" in a)
    assert codes == [-32700, -32600], answers
