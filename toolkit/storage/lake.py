"""The team workspace: DuckLake, with its catalog in PostgreSQL (or any catalog DuckLake takes: MySQL,
SQLite, a DuckDB file) and its data as Parquet files in a folder or object storage (`s3://...`).

    ws = toolkit.Workspace("ducklake:postgres:dbname=lake host=db.internal user=analyst", data_path="s3://team/lake/")

The address is DuckDB's own ATTACH string. Many processes on many machines read and write one lake at
once: each commit is a DuckLake snapshot, appends never conflict, and a commit that does (two loads of
one resource at once) is retried by the load (toolkit.storage.loads). The address may hold a password:
it is kept here only to attach, and shown everywhere else masked (`shown`). It never reaches DuckDB
inside the address, where `duckdb_databases()` would show it: a PostgreSQL catalog's password goes in a
temporary DuckDB secret of the connection's own (`password_secret`), and the lake is attached with the
address without it; an address without one leaves it to libpq (PGPASSWORD, ~/.pgpass).
"""
from __future__ import annotations

__all__ = ["CATALOG", "ORPHAN_AGE", "Lake", "PREFIX", "SCANNERS", "T", "TRIES", "conflicted", "is_lake", "masked_error",
           "orphan_age", "orphans", "password_secret", "pause", "settled", "unreachable", "without_password"]

import os
import random
import re
import tempfile
import time
from collections.abc import Callable
from typing import TypeGuard, TypeVar
from urllib.parse import urlsplit

import duckdb

from toolkit.catalog.masking import mask_passwords as masked
from toolkit.errors import LakeUnreachableError, WorkspaceError
from toolkit.storage import extensions
from toolkit.storage.file import literal, query_memory, session

T = TypeVar("T")
PREFIX = "ducklake:"
CATALOG = "workspace"  # the name the lake is attached under in the process's own DuckDB
# the catalog database's extension, by the word after "ducklake:" (none: a DuckDB file)
SCANNERS = {"postgres": "postgres", "postgresql": "postgres", "mysql": "mysql", "sqlite": "sqlite"}


def is_lake(where: object) -> TypeGuard[str]:
    return isinstance(where, str) and where.startswith(PREFIX)


def masked_error(error: duckdb.Error) -> duckdb.Error:
    """A DuckDB error of the same class whose text has every connection string's password masked: the
    postgres extension repeats the catalog's address, password and all, when the connection fails."""
    text = str(error)
    shown = masked(text)
    denied = _DENIED.search(text)
    if denied:   # PostgreSQL names the table, neither the grant nor who gives it
        shown = (f"{shown.strip().splitlines()[0][:300]}\nthe lake's role lacks a grant on {denied.group(1)}: "
                 "`toolkit lake check` lists what it may and may not do; a DBA gives a writer's grants with "
                 "`toolkit lake init ADMIN_ADDRESS --data-path PATH --writer ROLE`")
    return error if shown == text else type(error)(shown)


_DENIED = re.compile(r"permission denied for (?:table|schema|relation|database) \"?(\w+)", re.IGNORECASE)


# DuckDB's and libpq's words for a catalog that went away or cannot be reached, as opposed to one that
# refused (a wrong password, a missing database, a missing grant: trying again changes nothing)
_UNREACHABLE = re.compile(r"connection refused|could not connect|unable to connect|server closed the connection|"
                          r"terminating connection|no connection to the server|connection to server .* failed|"
                          r"database has been invalidated|connection reset|broken pipe|timeout expired|"
                          r"the database system is (starting up|shutting down|in recovery mode)|"
                          r"could not receive data|could not send data|ssl syscall", re.IGNORECASE)
_REFUSED = re.compile(r"authentication failed|does not exist|permission denied|no pg_hba.conf entry", re.IGNORECASE)


def unreachable(error: BaseException) -> bool:
    """Whether a DuckDB error says the lake's catalog went away or cannot be reached (worth trying
    again later), not that it refused."""
    text = str(error)
    return isinstance(error, duckdb.Error) and bool(_UNREACHABLE.search(text)) and not _REFUSED.search(text)


# a libpq connection string's password: `password=word` or `password='a quoted \'word\''`
_PASSWORD = re.compile(r"(?i)(?:^|(?<=\s))password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)\s*")
SECRET = "toolkit_catalog_password"


def without_password(address: str) -> tuple[str, str | None]:
    """(the address without its `password=...`, the password or None): what DuckDB is handed apart."""
    found = _PASSWORD.search(address)
    if found is None:
        return address, None
    word = found.group(1)
    if word.startswith("'"):
        word = re.sub(r"\\(.)", r"\1", word[1:-1])
    return (address[:found.start()] + address[found.end():]).rstrip(), word


def password_secret(con: duckdb.DuckDBPyConnection, password: str | None) -> str | None:
    """A temporary PostgreSQL secret of this connection alone holding `password` (DuckDB shows it
    redacted, and never unredacted once external access is off); its name for ATTACH, or None."""
    if password is None:
        return None
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {SECRET} (TYPE postgres, PASSWORD {literal(password)})")
    return SECRET


def _s3_secret(con: duckdb.DuckDBPyConnection) -> None:
    """Object storage's credentials from the environment AWS's own tools read (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, and AWS_ENDPOINT_URL for a store other than
    AWS's, such as MinIO or a local S3 server), as a DuckDB secret of this process's connection only."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return  # DuckDB's own defaults, or a secret the analyst made
    options = {"KEY_ID": key, "SECRET": secret, "REGION": os.environ.get("AWS_REGION") or
               os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"}
    if os.environ.get("AWS_SESSION_TOKEN"):
        options["SESSION_TOKEN"] = os.environ["AWS_SESSION_TOKEN"]
    endpoint = urlsplit(os.environ.get("AWS_ENDPOINT_URL") or "")
    if endpoint.netloc:
        options.update(ENDPOINT=endpoint.netloc, URL_STYLE="path", USE_SSL="true" if endpoint.scheme == "https" else "false")
    listed = ", ".join(f"{name} {literal(value)}" if name != "USE_SSL" else f"{name} {value}"
                       for name, value in options.items())
    con.execute(f"CREATE OR REPLACE SECRET toolkit_s3 (TYPE s3, {listed})")


TRIES = 8  # a statement or commit that conflicts with another process's is tried this many times in all


def conflicted(error: BaseException) -> bool:
    """Whether a DuckDB error is DuckLake's word that another process committed first."""
    return isinstance(error, duckdb.Error) and "conflict" in str(error).lower()


def pause(attempt: int) -> None:
    """The wait before trying again: growing with each attempt, jittered so that processes part."""
    time.sleep(min(2.0, 0.05 * 2 ** attempt) * (0.5 + random.random()))


def settled(action: Callable[[], T], lake: bool) -> T:
    """`action()`; in a lake, again after a pause while it conflicts with another process's commit
    (two processes creating the same table at once: the one that lost then finds it made)."""
    for attempt in range(1, TRIES + 1):
        try:
            return action()
        except duckdb.Error as error:
            if not lake or not conflicted(error) or attempt == TRIES:
                raise
            pause(attempt)
    raise AssertionError("unreachable")


def _temp_folder() -> str:
    """Where a lake's DuckDB spills: a folder of this user's under the system's temp folder."""
    return os.path.join(tempfile.gettempdir(), f"toolkit-duckdb-{os.getuid() if hasattr(os, 'getuid') else 0}")


class Lake:
    """Where a team workspace lives: the ATTACH string (secret) and the data path; `shown` is safe."""

    def __init__(self, address: str, data_path: str | None = None) -> None:
        self._address, self.data_path = address, data_path
        self.shown = masked(address)
        kind = address[len(PREFIX):].split(":", 1)[0].lower() if ":" in address[len(PREFIX):] else ""
        self.scanner = SCANNERS.get(kind)

    def open(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """A DuckDB of this process's own with the lake attached as its default catalog; `read_only`
        attaches it so (DuckDB refuses every write to it, whatever the role in the catalog may do)."""
        con = session(duckdb.connect(config={"extension_directory": str(extensions.extension_directory())}))
        try:
            for name in ["ducklake", *([self.scanner] if self.scanner else []),
                         *(["httpfs"] if (self.data_path or "").startswith(("s3://", "gs://", "r2://", "http"))
                           else [])]:
                extensions.load(con, name)
            if (self.data_path or "").startswith("s3://"):
                _s3_secret(con)
            # DuckDB's default (80% of the machine) leaves the notebook little, and an in-memory DuckDB
            # spills into `.tmp` of wherever the process started: the analyst's limit, a temp folder
            con.execute(f"SET memory_limit = {literal(query_memory())}")
            con.execute(f"SET temp_directory = {literal(_temp_folder())}")
            address, password = without_password(self._address) if self.scanner == "postgres" else (self._address, None)
            secret = password_secret(con, password)
            listed = ([f"DATA_PATH {literal(self.data_path)}"] if self.data_path else []) + \
                (["READ_ONLY"] if read_only else []) + ([f"META_SECRET {literal(secret)}"] if secret else [])
            options = f" ({', '.join(listed)})" if listed else ""
            for attempt in range(1, TRIES + 1):
                try:
                    con.execute(f"ATTACH {literal(address)} AS {CATALOG}{options}")
                    break
                except duckdb.Error as error:
                    # processes attaching a new lake at once race to create its catalog's tables
                    racing = "Failed to initialize DuckLake" in str(error) or conflicted(error)
                    if not racing or attempt == TRIES:
                        raise
                    pause(attempt)
            con.execute(f"USE {CATALOG}")
        except duckdb.Error as error:
            con.close()
            # DuckDB's words may repeat the address, password and all
            kind = LakeUnreachableError if unreachable(error) else WorkspaceError
            said = str(masked_error(error)).splitlines()
            hint = f"\n{said[-1]}" if _DENIED.search(str(error)) else ""   # the grant it lacks, who gives it
            raise kind(f"the team workspace {self.shown} does not open: {said[0][:300]}{hint}") from None
        except BaseException:
            con.close()
            raise
        return con

    def __repr__(self) -> str:
        return f"<toolkit lake {self.shown}{f' data at {self.data_path}' if self.data_path else ''}>"


ORPHAN_AGE = 600.0  # seconds: a data file no commit names, younger than this, may be a commit still running


def orphan_age() -> float:
    """How old a file no commit names must be to be removed after a commit (TOOLKIT_LAKE_ORPHAN_AGE)."""
    return float(os.environ.get("TOOLKIT_LAKE_ORPHAN_AGE") or ORPHAN_AGE)


def orphans(con: duckdb.DuckDBPyConnection, older_than_seconds: float, dry_run: bool) -> list[str]:
    """The data files in the lake's data path that no snapshot of its catalog names, written more than
    `older_than_seconds` ago (a commit killed between writing its Parquet and committing leaves one;
    a younger file may be another process's commit in flight), and those DuckLake itself scheduled for
    deletion, removed unless `dry_run`: DuckLake's own `ducklake_delete_orphaned_files` and
    `ducklake_cleanup_old_files`, locally and on object storage alike."""
    found: list[str] = []
    for function in ("ducklake_delete_orphaned_files", "ducklake_cleanup_old_files"):
        found += [str(row[0]) for row in con.execute(
            f"SELECT * FROM {function}({literal(CATALOG)}, dry_run => ?, older_than => now() - "
            f"to_seconds(?::DOUBLE))", [dry_run, older_than_seconds]).fetchall()]
    return sorted(set(found))
