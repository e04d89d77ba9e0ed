"""What `toolkit lake init` runs and prints, and how a refused grant is said, without a PostgreSQL
(tests/team/test_readme_walk.py runs them against one)."""
from __future__ import annotations

import duckdb
import pytest

from toolkit.cli import main
from toolkit.errors import WorkspaceError
from toolkit.storage import grants
from toolkit.storage.lake import masked_error

ADMIN = "ducklake:postgres:dbname=lake host=127.0.0.1 port=5432 user=postgres password=hunter2-admin"


def test_the_plan_gives_the_writer_writes_and_the_reader_reads_and_no_more():
    plan = grants.plan(ADMIN, "cron", "analyst", {"cron": "pw-cron-1", "analyst": "pw-an-2"})
    assert plan.server[0] == 'CREATE DATABASE "lake"'
    assert 'CREATE ROLE "cron" LOGIN PASSWORD \'pw-cron-1\'' in plan.server
    writer = [s for s in plan.database_sql if s.endswith('TO "cron"')]
    reader = [s for s in plan.database_sql if s.endswith('TO "analyst"')]
    assert any("SELECT, INSERT, UPDATE, DELETE ON ALL TABLES" in s for s in writer)
    assert any("USAGE, CREATE ON SCHEMA" in s for s in writer)   # DuckLake's inlined-data tables
    assert not [s for s in reader if any(w in s for w in ("INSERT", "UPDATE", "DELETE", "CREATE"))]
    # what the writer creates as it commits reaches the reader
    assert 'ALTER DEFAULT PRIVILEGES FOR ROLE "cron" IN SCHEMA public GRANT SELECT ON TABLES TO "analyst"' in plan.database_sql
    existing = grants.plan(ADMIN, "cron", None, {}, {"database lake": True, "role cron": True})
    assert not [s for s in existing.server if s.startswith("CREATE")]


def test_the_printed_sql_holds_no_password(capsys, monkeypatch):
    monkeypatch.setenv("TOOLKIT_LAKE_WRITER_PASSWORD", "pw-cron-secret")
    assert main(["lake", "init", ADMIN, "--writer", "cron", "--reader", "analyst", "--print-sql"]) == 0
    out = capsys.readouterr().out
    assert "hunter2-admin" not in out and "pw-cron-secret" not in out
    assert "PASSWORD :'cron_password'" in out and 'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "analyst"' in out


def test_the_printed_sql_names_the_psql_variables_of_the_roles_given(capsys):
    """Issue 45: its last line named cron_password whatever the writer was called."""
    assert main(["lake", "init", ADMIN, "--writer", "etl", "--reader", "viewer", "--print-sql"]) == 0
    out = capsys.readouterr().out
    assert "PASSWORD :'etl_password'" in out and "PASSWORD :'viewer_password'" in out
    assert out.rstrip().endswith("psql -v etl_password=... -v viewer_password=...") and "cron" not in out


@pytest.mark.parametrize("name", ["bad name", "x;drop", ""])
def test_a_role_name_that_is_not_one_is_refused(name):
    with pytest.raises(WorkspaceError):
        grants.plan(ADMIN, name or "1x", None)


def test_a_lake_address_that_is_not_postgres_is_refused():
    with pytest.raises(WorkspaceError, match="PostgreSQL"):
        grants.libpq_of("ducklake:metadata.duckdb")


def test_a_refused_grant_names_the_table_and_the_command_that_gives_it():
    error = duckdb.IOException('Failed to execute query "INSERT INTO ducklake_snapshot ...": ERROR:  '
                               'permission denied for table ducklake_snapshot')
    said = str(masked_error(error))
    assert type(masked_error(error)) is duckdb.IOException
    assert "lacks a grant on ducklake_snapshot" in said
    assert "toolkit lake check" in said and "toolkit lake init" in said and "--writer" in said
    assert len(said.splitlines()) <= 3
