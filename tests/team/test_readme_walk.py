"""The README's team walk, run as printed: from an empty PostgreSQL cluster of the test's own, `toolkit
lake init` as its superuser, a cron role pulling and refreshing, a notebook writing through it, and a
reader role that reads and whose refresh is refused before anything is sent to a service. Only the
README's placeholders change: the server's host and port, the passwords, the data folder."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit as tk

README = Path(__file__).resolve().parents[2] / "README.md"
BIN = Path(sys.executable).parent


def walk() -> tuple[str, str]:
    section = README.read_text().split("## A team workspace on DuckLake", 1)[1].split("\n## ", 1)[0]
    shell, = re.findall(r"```bash\n(.*?)```", section, re.S)
    python, = re.findall(r"```python\n(.*?)```", section, re.S)
    return shell, python


@pytest.fixture
def server(own_postgres):
    return own_postgres


def test_the_team_walk_runs_as_printed_from_an_empty_postgres(server, tmp_path, monkeypatch):
    shell, python = walk()
    passwords = {"postgres": server.password, "cron": "cron-" + os.urandom(6).hex(),
                 "analyst": "analyst-" + os.urandom(6).hex()}

    def placed(text: str) -> str:
        text = text.replace("host=db.internal port=5432", "host=db.internal")     # the init line names the port
        text = text.replace("host=db.internal", f"host=127.0.0.1 port={server.port}")
        for role, secret in passwords.items():
            text = text.replace(f"user={role} password=...", f"user={role} password={secret}")
        text = text.replace("TOOLKIT_LAKE_ADMIN_PASSWORD=...", f"TOOLKIT_LAKE_ADMIN_PASSWORD={passwords['postgres']}")
        text = text.replace("TOOLKIT_LAKE_WRITER_PASSWORD=...", f"TOOLKIT_LAKE_WRITER_PASSWORD={passwords['cron']}")
        text = text.replace("TOOLKIT_LAKE_READER_PASSWORD=...", f"TOOLKIT_LAKE_READER_PASSWORD={passwords['analyst']}")
        return text.replace("/srv/lake", str(tmp_path / "lake"))

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    env.update(PATH=f"{BIN}{os.pathsep}{env['PATH']}", TOOLKIT_PROGRESS="0", TOOLKIT_TYPING_HELPER="0")
    monkeypatch.chdir(tmp_path)
    with tk.sandbox.start(scale=0.2) as box:
        (tmp_path / "sandbox.json").write_text(json.dumps({s: box.credentials(s) for s in box.services}))
        said = {}
        lines = [line for line in shell.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        assert lines[0].startswith("make setup-team"), "the walk starts with the team environment"
        assert (BIN / "toolkit").exists()
        for line in lines[1:]:
            command, _, comment = placed(line).partition("#")
            words = shlex.split(command)
            if words[0] == "export":
                env.update(word.split("=", 1) for word in words[1:])
                continue
            # what `ps` shows of the command: its words, with no password among them
            assert not [s for s in passwords.values() if s in " ".join(words)], f"{line} puts a password in argv"
            before = box.stats()["requests"]
            run = subprocess.run(words, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
            out = run.stdout + run.stderr
            assert not [s for s in passwords.values() if s in out], f"a password was printed by {line}"
            if "refused" in comment:
                assert run.returncode != 0, f"{line}\n{out[-2000:]}"
                assert box.stats()["requests"] == before, f"{line} sent requests before it was refused"
                assert "only read" in out, out
            else:
                assert run.returncode == 0, f"{line}\n{out[-3000:]}"
            said.setdefault(words[1] + " " + words[2] if len(words) > 2 else words[1], []).append(out)
        writer_check, reader_check = said["lake check"]
        assert "can    write" in writer_check and "can    read" in writer_check
        assert "cannot write" in reader_check and "can    read" in reader_check and "missing INSERT" in reader_check
        assert "translation.submissions" in said["show"][0]

        notebook = subprocess.run([sys.executable, "-c", placed(python)], capture_output=True, text=True,
                                  env=env, timeout=300, cwd=tmp_path)
        assert notebook.returncode == 0, notebook.stderr[-3000:]
        assert (tmp_path / "lake-snapshot.duckdb").exists() and (tmp_path / "lake-report.html").stat().st_size
        assert tk.open_snapshot(tmp_path / "lake-snapshot.duckdb").manifest()["duckdb_opens"].iloc[0] == "DuckDB >= 1.0"

        # the reader's notebook: reads what the writers wrote, and a fetch is refused before a request
        reader = placed("ducklake:postgres:dbname=lake host=db.internal user=analyst password=...")
        with tk.Workspace(reader, data_path=str(tmp_path / "lake")) as ws:
            assert ws.read_only
            assert len(ws.read("translation", "targets")) > 0
            assert not ws.freshness().empty
            before = box.stats()["requests"]
            tm = ws.connect("translation", **box.credentials("translation"))
            with pytest.raises(tk.WorkspaceError, match="only read"):
                tm.fetch("targets")
            assert box.stats()["requests"] == before
