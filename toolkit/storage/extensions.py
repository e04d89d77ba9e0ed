"""DuckDB's extensions a team workspace needs (ducklake, a catalog's scanner, httpfs), installed offline.

DuckDB downloads an extension on first use; the machines analysts and CI run on often cannot. PyPI
ships the binaries as wheels for DuckDB 1.5.5 (`duckdb-extension-ducklake`, `-postgres`, `-httpfs`,
brought by `pip install 'toolkit[team]'`), each holding `extensions/v<duckdb>/<name>.duckdb_extension`.
`load` installs such a file with `FORCE INSTALL` into an extension directory of toolkit's own
(`TOOLKIT_DUCKDB_EXTENSIONS`, else ~/.cache/toolkit/duckdb-extensions): DuckDB files the postgres and
sqlite binaries under their `*_scanner` names, which is what it autoloads for `ducklake:postgres:...`.
Where no wheel fits this DuckDB, its own `INSTALL` is tried (it needs the network).
"""
from __future__ import annotations

__all__ = ["WHEELS", "extension_directory", "load", "wheel_file"]

import importlib.util
import os
from pathlib import Path

import duckdb

from toolkit.errors import WorkspaceError
from toolkit.storage.file import literal

# the wheel that carries each extension, by the name it is loaded with
WHEELS = {"ducklake": "duckdb_extension_ducklake", "postgres": "duckdb_extension_postgres",
          "httpfs": "duckdb_extension_httpfs", "sqlite": "duckdb_extension_sqlite",
          "mysql": "duckdb_extension_mysql"}


def extension_directory() -> Path:
    """Where toolkit installs DuckDB's extensions (created when missing)."""
    given = os.environ.get("TOOLKIT_DUCKDB_EXTENSIONS")
    base = Path(given) if given else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / \
        "toolkit" / "duckdb-extensions"
    base.mkdir(parents=True, exist_ok=True)
    return base


def wheel_file(name: str) -> Path | None:
    """The extension's binary for this DuckDB in an installed wheel, or None."""
    module = WHEELS.get(name)
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = Path(folder) / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
        if found.is_file():
            return found
    return None


def load(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Load an extension, installing it first from its wheel (else DuckDB's own INSTALL) when needed."""
    try:
        con.execute(f"LOAD {name}")
        return
    except duckdb.Error:
        pass
    found = wheel_file(name)
    try:
        con.execute(f"FORCE INSTALL {literal(str(found))}" if found else f"INSTALL {name}")
        con.execute(f"LOAD {name}")
    except duckdb.Error as error:
        why = str(error).splitlines()[0][:200]
        raise WorkspaceError(
            f"DuckDB {duckdb.__version__} cannot load its {name} extension ({why}). A team workspace needs "
            f"it: `pip install 'toolkit[team]'` brings it for DuckDB 1.5.5 with no download, or let DuckDB "
            f"download it (INSTALL {name}) where the network allows") from None
