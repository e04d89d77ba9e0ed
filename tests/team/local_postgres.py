"""A PostgreSQL of the tests' own: Debian's binaries, initdb in a temp folder, on 127.0.0.1 and a free port.

Run as the `postgres` user when the tests run as root (initdb refuses root); stopped by its own pg_ctl,
and its folder removed, whatever happens. The catalog of a team workspace in tests/team.
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def binaries() -> Path | None:
    """The newest Debian PostgreSQL's bin folder with initdb, pg_ctl and psql, or None."""
    found = [Path(d) for d in glob.glob("/usr/lib/postgresql/*/bin")
             if all((Path(d) / tool).exists() for tool in ("initdb", "pg_ctl", "psql"))]
    return max(found, key=lambda d: int(re.sub(r"\D", "", d.parent.name) or 0)) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalPostgres:
    """initdb + pg_ctl; `dsn(database)` is a team workspace's address, password included."""

    def __init__(self, bindir: Path) -> None:
        self.bin, self.port = bindir, _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="toolkit-test-pg-"))
        self.data, self.password = self.dir / "data", "pw" + secrets.token_hex(12)
        self.user: dict = {}
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            self.user = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        os.chmod(self.dir, 0o700)
        self.started = False

    def run(self, tool: str, *args: str, timeout: float = 90, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / tool), *args], cwd=self.dir, capture_output=True, text=True,
                              timeout=timeout, env=env, check=False, **self.user)

    def start(self) -> None:
        secret = self.dir / "pw"
        secret.write_text(self.password + "\n")
        if self.user:
            os.chown(secret, self.user["user"], self.user["group"])
        done = self.run("initdb", "-D", str(self.data), "-A", "scram-sha-256", f"--pwfile={secret}", "-U", "postgres",
                        "-E", "UTF8", "--locale=C", "-N")
        secret.unlink()
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-300:]}")
        self.started = True
        self.resume()

    def create_database(self, name: str) -> None:
        done = self.run("psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d",
                        "postgres", "-v", "ON_ERROR_STOP=1", "-c", f'CREATE DATABASE "{name}"',
                        env=dict(os.environ, PGPASSWORD=self.password))
        if done.returncode:
            raise RuntimeError(f"CREATE DATABASE failed: {done.stderr.strip()[-300:]}")

    def dsn(self, database: str) -> str:
        return (f"ducklake:postgres:dbname={database} host=127.0.0.1 port={self.port} user=postgres "
                f"password={self.password}")

    def halt(self) -> None:
        """Stop the server at once (as a crash would), keeping its data: `resume()` starts it again."""
        self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop", timeout=40)

    def resume(self) -> None:
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c max_connections=100")
        done = self.run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                        "-o", options, "start")
        if done.returncode:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-300:]}")

    def stop(self) -> None:
        try:
            if self.started:
                with contextlib.suppress(Exception):
                    self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop", timeout=40)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
