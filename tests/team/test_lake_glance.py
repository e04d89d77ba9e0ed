"""`toolkit mcp`'s answers over a team lake: opened read-only, the same tools as a file, writes refused
by the guard and, past it, by the lake's READ_ONLY attach; the catalog's password in no answer."""
from __future__ import annotations

import json

import pytest

import toolkit as tk
from toolkit.errors import QueryRefusedError
from toolkit.glance import reading
from toolkit.sandbox import available

SERVICE = "audience_platform"


def test_the_assistant_reads_a_lake_and_cannot_write_it(lake):
    dsn, data = lake
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as box, \
            tk.Workspace(dsn, data_path=data) as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        cdp.pull("users")
        cdp.call("create_user", username="lake-bot", email="lake.bot@example.com", password="pw-lake-5c1e")
        cdp.pull("users")
        secrets = box.secrets()
    source = reading.open_source(dsn, data)
    try:
        answers = [reading.list_views(source), reading.describe_view(source, "users"),
                   reading.view_history(source, "users"), reading.view_diff(source, "users"),
                   reading.run_sql(source, "SELECT username FROM audience_platform.users ORDER BY 1")]
        views, described, history, diff, users = answers
        assert [v["view"] for v in views] == ["audience_platform.users"] and views[0]["loads"] == 2
        assert history["loads"][-1]["added"] == 1 and diff["added"]["rows"][0]["username"] == "lake-bot"
        assert "lake-bot" in [row["username"] for row in users["rows"]]
        with pytest.raises(QueryRefusedError):
            reading.run_sql(source, "DELETE FROM audience_platform.users__versions")
        with pytest.raises(Exception, match="(?i)read.only"):     # past the guard, the attach refuses it too
            source.sql("DELETE FROM audience_platform.users__versions")
        assert reading.run_sql(source, "SELECT count(*) AS n FROM audience_platform.users")["rows"][0]["n"] == \
            described["rows"]
        text = json.dumps(answers, default=str)
        password = dsn.split("password=")[1].split()[0] if "password=" in dsn else None
        assert not [s for s in [*secrets, "pw-lake-5c1e", password] if s and len(s) >= 6 and s in text]
    finally:
        source.close()


def _lake_state(dsn: str, data: str) -> tuple[list, dict]:
    """The lake's snapshots (from its catalog) and its data files with their digests."""
    import hashlib
    from pathlib import Path
    with tk.Workspace(dsn, data_path=data, read_only=True) as ws:
        snapshots = ws.sql("SELECT snapshot_id FROM __ducklake_metadata_workspace.ducklake_snapshot "
                           "ORDER BY 1").fetchall()
    files = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(data).rglob("*")) if p.is_file()}
    return snapshots, files


def test_the_assistant_over_stdio_reaches_nothing_beyond_the_lake(lake, tmp_path, monkeypatch):
    """`toolkit mcp` on a lake as its read-only role, through the SDK's client: every attempt refused or
    stopped within the limit, no request to the counting server, the lake's snapshots and data files
    unchanged, and neither the role's password nor the sandbox's secrets in any byte sent."""
    from assistant_attacks import RUNAWAYS, SMALL, attacks, counting_server, outside_folder, talk
    dsn, data = lake
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as box, \
            tk.Workspace(dsn, data_path=data) as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        cdp.pull("users")
        secrets = box.secrets()
    password = dsn.split("password=")[1].split()[0]
    before = _lake_state(dsn, data)
    outside = outside_folder(tmp_path)
    with counting_server() as http:
        calls = [("list_views", {}), ("run_sql", {"query": "SELECT count(*) AS n FROM audience_platform.users"})]
        calls += [("run_sql", {"query": q}) for q in attacks(http.server_address[1], outside)]
        calls += [("run_sql", {"query": RUNAWAYS[0]}), ("run_sql", {"query": "SELECT 42 AS n"})]
        monkeypatch.setenv("TOOLKIT_WORKSPACE", dsn)   # the address in the environment, never in argv
        answers, sent = talk(dsn, calls, tmp_path, data_path=data, env=SMALL)
        assert http.requests == []
    views, count, *tried, runaway, after = answers[1:]
    assert views[1]["views"][0]["view"] == "audience_platform.users" and count[1]["rows"][0]["n"] > 0
    assert [q for (_, q), (is_error, _, _) in zip(calls[2:-2], tried, strict=True) if not is_error] == []
    assert runaway[0] and "ran past its limit" in runaway[1] and runaway[2] < 5
    assert after[1]["rows"] == [{"n": 42}]
    assert password.encode() not in sent and not [s for s in secrets if len(s) >= 6 and s.encode() in sent]
    assert b"outs1de-c0ntent-91f2" not in sent
    assert _lake_state(dsn, data) == before


def test_a_sealed_lake_shows_no_password_even_past_the_guard(lake):
    """Past the guard (its list is the readable first answer, not the wall): the lake is attached with
    its password in a DuckDB secret, so no catalog view or function holds it, and no setting changes."""
    dsn, data = lake
    tk.Workspace(dsn, data_path=data).close()
    password = dsn.split("password=")[1].split()[0]
    from toolkit.storage.sealed import Limits
    source = reading.open_source(dsn, data, limits=Limits(seconds=5, memory="256MB", spill="64MB"))
    try:
        shown = source.sql("SELECT list(path), list(options::VARCHAR) FROM duckdb_databases()").fetchall()
        shown += source.sql("SELECT * FROM duckdb_secrets()").fetchall()
        shown += source.sql("SELECT * FROM pg_settings").fetchall()
        assert password not in repr(shown)
        for statement in ("SET lock_configuration = false", "SET enable_external_access = true",
                          "SELECT * FROM duckdb_secrets(redact = false)", "SELECT * FROM read_csv('/etc/hostname')"):
            with pytest.raises(Exception, match="(?i)locked|disabled|permission"):
                source.sql(statement).fetchall()
    finally:
        source.close()
