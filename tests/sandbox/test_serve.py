"""`toolkit sandbox` serves from the command line; its credentials go to a private file, never to output."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit as tk


def test_the_command_serves_and_keeps_its_secrets_off_the_screen(tmp_path):
    target = tmp_path / "credentials.json"
    code = ("import sys; from toolkit.sandbox import serve; "
            f"serve(port=0, credentials_file={str(target)!r})")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        while not lines or not lines[-1].startswith("credentials"):
            lines.append(process.stdout.readline().strip())
        assert Path(lines[-1].split(": ", 1)[1]) == target
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
        credentials = json.loads(target.read_text())
        teams = tk.connect("media_review", **credentials["media_review"]).rows("list_teams")
        assert teams and isinstance(teams[0]["id"], str)
        shown = "\n".join(lines)
        assert credentials["media_review"]["token"] not in shown
        assert credentials["translation"]["password"] not in shown
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert not target.exists(), "the credentials file goes when the sandbox stops"


def start_command(tmp_path: Path, *more: str) -> tuple[subprocess.Popen, Path]:
    """`toolkit sandbox` in a child process; (the process, its credentials file) once it serves."""
    process = subprocess.Popen([sys.executable, "-m", "toolkit.cli", "sandbox", "--port", "0", "--scale", "0.1",
                                *more],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp_path)})
    line = ""
    while not line.startswith("credentials"):
        line = process.stdout.readline()
        assert line, f"the sandbox ended before serving: {process.stderr.read()}"
    path = Path(line.strip().split(": ", 1)[1])
    # in a folder of its own, made exclusively and private to the user
    assert path.parent.parent == tmp_path and path.parent.name.startswith("toolkit-sandbox-") and path.exists()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    return process, path


def test_the_credentials_never_go_through_a_planted_link(tmp_path):
    # before: the default name in the shared temp folder was predictable, and the file was written
    # through a link planted there, overwriting the link's target with live secrets
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's notes")
    for port in range(8000, 8003):
        (tmp_path / f"toolkit-sandbox-{port}.json").symlink_to(victim)
    given = tmp_path / "given.json"
    given.symlink_to(victim)
    code = ("from toolkit.sandbox import serve; "
            f"serve(port=0, scale=0.1, credentials_file={str(given)!r})")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        line = ""
        while not line.startswith("credentials"):
            line = process.stdout.readline()
            assert line, "the sandbox ended before serving"
        assert not given.is_symlink() and json.loads(given.read_text())["media_review"]["token"]
        assert stat.S_IMODE(given.stat().st_mode) == 0o600
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert victim.read_text() == "someone's notes"
    process, path = start_command(tmp_path)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=20)
    assert victim.read_text() == "someone's notes" and not path.parent.exists()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_command_removes_its_credentials_however_it_is_stopped(tmp_path, stop):
    process, path = start_command(tmp_path)
    try:
        process.send_signal(stop)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0 and "Traceback" not in err, err
    assert "sandbox stopped" in out
    assert not path.exists(), "the credentials file goes when the sandbox stops"


def test_the_command_serves_drifting_answers_when_asked(tmp_path):
    process, path = start_command(tmp_path, "--drift", "extra_field")
    try:
        credentials = json.loads(path.read_text())
        conn = tk.connect("audience_platform", **credentials["audience_platform"])
        first = conn.rows("list_notifications", size=5)[0]
        declared = {c.source or c.name for c in tk.catalog.resource("audience_platform", "notifications").columns}
        assert set(first) - declared, "an undeclared field in every record"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
