"""`toolkit mcp` through the MCP SDK's own client over stdio: every tool, on a workspace file, a snapshot
and (tests/team) a lake; writes refused in every spelling with nothing changed; answers capped and
paged; no secret of the sandbox in any byte the server sent (its stdout is kept by `tee`)."""
from __future__ import annotations

import asyncio
import hashlib
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
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
