"""The team workspace: DuckLake, with its catalog in PostgreSQL (or any catalog DuckLake takes: MySQL,
SQLite, a DuckDB file) and its data as Parquet files in a folder or object storage (`s3://...`).

    ws = toolkit.Workspace("ducklake:postgres:dbname=lake host=db.internal user=analyst", data_path="s3://team/lake/")

The address is DuckDB's own ATTACH string. Many processes on many machines read and write one lake at
once: each commit is a DuckLake snapshot, appends never conflict, and a commit that does (two loads of
one resource at once) is retried by the load (toolkit.storage.loads). The address may hold a password:
it is kept here only to attach, and shown everywhere else masked (`shown`).
"""
from __future__ import annotations

import re

import duckdb

from toolkit.catalog.masking import MASK
from toolkit.errors import WorkspaceError
from toolkit.storage import extensions
from toolkit.storage.file import literal, session

PREFIX = "ducklake:"
CATALOG = "workspace"  # the name the lake is attached under in the process's own DuckDB
# the catalog database's extension, by the word after "ducklake:" (none: a DuckDB file)
SCANNERS = {"postgres": "postgres", "postgresql": "postgres", "mysql": "mysql", "sqlite": "sqlite"}
# a password as libpq's key=value strings, URIs and DuckDB's secrets spell it
_PASSWORDS = (re.compile(r"(?i)(\bpassword\s*=\s*)('[^']*'|\"[^\"]*\"|\S+)"),
              re.compile(r"(://[^:/@\s]+:)([^@\s]+)(@)"))


def is_lake(where: object) -> bool:
    return isinstance(where, str) and where.startswith(PREFIX)


def masked(text: str) -> str:
    """Text with every password in a connection string masked."""
    for pattern in _PASSWORDS:
        text = pattern.sub(lambda m: m.group(1) + MASK + (m.group(3) if m.re.groups > 2 else ""), text)
    return text


class Lake:
    """Where a team workspace lives: the ATTACH string (secret) and the data path; `shown` is safe."""

    def __init__(self, address: str, data_path: str | None = None) -> None:
        self._address, self.data_path = address, data_path
        self.shown = masked(address)
        kind = address[len(PREFIX):].split(":", 1)[0].lower() if ":" in address[len(PREFIX):] else ""
        self.scanner = SCANNERS.get(kind)

    def open(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB of this process's own with the lake attached as its default catalog."""
        con = session(duckdb.connect(config={"extension_directory": str(extensions.extension_directory())}))
        try:
            for name in ["ducklake", *([self.scanner] if self.scanner else []),
                         *(["httpfs"] if (self.data_path or "").startswith(("s3://", "gs://", "r2://", "http"))
                           else [])]:
                extensions.load(con, name)
            options = f" (DATA_PATH {literal(self.data_path)})" if self.data_path else ""
            con.execute(f"ATTACH {literal(self._address)} AS {CATALOG}{options}")
            con.execute(f"USE {CATALOG}")
        except duckdb.Error as error:
            con.close()
            # DuckDB's words may repeat the address, password and all
            raise WorkspaceError(f"the team workspace {self.shown} does not open: "
                                 f"{masked(str(error).splitlines()[0])[:300]}") from None
        except BaseException:
            con.close()
            raise
        return con

    def __repr__(self) -> str:
        return f"<toolkit lake {self.shown}{f' data at {self.data_path}' if self.data_path else ''}>"
