"""The team workspace's tests: a PostgreSQL of their own (local_postgres.py) holds each test's DuckLake
catalog. They run in `.venv-team` (the `team` extra: DuckDB 1.5.5 and the extensions' wheels), which
`make test` makes and runs after the rest; elsewhere they are skipped, saying what is missing."""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest
from local_postgres import LocalPostgres, binaries

from toolkit.storage import extensions

os.environ["TOOLKIT_TYPING_HELPER"] = "0"
_numbers = itertools.count()


def _missing() -> str | None:
    if extensions.wheel_file("ducklake") is None or extensions.wheel_file("postgres") is None:
        return "the team extra's extension wheels are not installed for this DuckDB (make test runs these in .venv-team)"
    if binaries() is None:
        return "no PostgreSQL (Debian's postgresql package: /usr/lib/postgresql/*/bin)"
    return None


def pytest_collection_modifyitems(config, items):
    why = _missing()
    if why:
        for item in items:
            if "tests/team/" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.skip(reason=why))


def _running() -> Iterator[LocalPostgres]:
    server = LocalPostgres(binaries())
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """The session's PostgreSQL: each test's lake is a database of its own on it."""
    yield from _running()


@pytest.fixture
def own_postgres():
    """A PostgreSQL of the test's own, for a test that stops it, or makes roles and databases of its own."""
    yield from _running()


@pytest.fixture
def lake(postgres, tmp_path):
    """(address, data folder) of a fresh team workspace: a database of its own on the tests' PostgreSQL."""
    name = f"lake_{os.getpid()}_{next(_numbers)}"
    postgres.create_database(name)
    data = tmp_path / "lake-data"
    data.mkdir()
    return postgres.dsn(name), str(data)
