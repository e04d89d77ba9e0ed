"""The `toolkit` command's details a new user and a cron log meet (issue 35 item 6): names never cut,
`show` without NaN or 0.0, a timestamped refresh line, --wait wherever a workspace opens, and a
sandbox clock that another shell moves."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

import pytest
from stubbed_services import held_elsewhere

import toolkit as tk
from toolkit.cli import main, parser


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as running:
        yield running


@pytest.mark.parametrize("columns", [200, 100, 60])
@pytest.mark.parametrize("command", ["actions", "resources"])
def test_the_names_a_user_copies_are_never_cut_whatever_the_width(command, columns, capsys, monkeypatch):
    """`translation.create_submissi…` even with COLUMNS=200: the one column a user must copy."""
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main([command]) == 0
    out = capsys.readouterr().out
    whole = getattr(tk, command)()
    names = whole["action"] if command == "actions" else whole["resource"]
    shown = {line.split()[0 if command == "actions" else 1] for line in out.splitlines()[1:] if line.strip()
             and not line.startswith("(")}
    assert set(names) <= shown, sorted(set(names) - shown)[:3]
    assert "translation.create_submission " in out or command == "resources"
    if columns == 200:        # the doc gives way, not the names
        assert max(map(len, out.splitlines())) <= 200


def test_show_prints_no_nan_and_no_float_counts(box, tmp_path, capsys):
    path = tmp_path / "w.duckdb"
    ws = tk.Workspace(path)
    tm = ws.connect("translation", **box.credentials("translation"))
    tm.fetch("submissions", progress=False)
    tm.fetch("targets", status=["READY"], progress=False)      # a filtered view: no freshness budget
    ws.close()
    assert main(["show", "--workspace", str(path)]) == 0
    out = capsys.readouterr().out
    assert "targets__filtered" in out
    assert "NaN" not in out and not re.search(r"\b0\.0\b", out) and " {} " not in out + " ", out


def test_refresh_ends_with_a_timestamped_line_naming_the_workspace_and_what_changed(box, tmp_path, capsys,
                                                                                     monkeypatch):
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    path = tmp_path / "w.duckdb"
    ws = tk.Workspace(path)
    ws.connect("media_review", **box.credentials("media_review")).fetch("teams", progress=False)
    ws.close()
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"media_review": box.credentials("media_review")}))
    file.chmod(0o600)
    assert main(["refresh", "--workspace", str(path), "--credentials", str(file)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(rf"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 refresh {re.escape(str(path))}: "
                        r"1 (full|incremental|cached), \+0 ~0 -0 rows \(\d+ requests\)", last), last


def test_every_command_that_opens_a_workspace_takes_wait():
    commands = next(a for a in parser()._actions if a.dest == "command").choices
    opening = [name for name, command in commands.items()
               if any(o.dest == "workspace" for o in command._actions)]
    assert {"pull", "refresh", "show", "export", "migrate"} <= set(opening)
    assert [name for name in opening if not any(o.dest == "wait" for o in commands[name]._actions)] == []


@pytest.mark.parametrize("command", [["export", "--out", "snap.duckdb"], ["show"], ["migrate"]])
def test_the_busy_error_names_the_flag_the_command_takes(tmp_path, capsys, command):
    path = tmp_path / "ws.duckdb"
    tk.Workspace(path).close()
    with held_elsewhere(path):
        argv = [command[0], "--workspace", str(path), *command[1:], "--wait", "0.5"]
        if command[0] == "export":
            argv[argv.index("snap.duckdb")] = str(tmp_path / "snap.duckdb")
        started = time.monotonic()
        code = main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 75 and time.monotonic() - started < 30
        assert "--wait 300" in err and "toolkit.Workspace(path, wait=300)" not in err, err


def test_another_shell_moves_the_clock_of_a_served_sandbox_and_a_refresh_sees_time_pass(tmp_path, capsys,
                                                                                        monkeypatch):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    file = tmp_path / "sandbox.json"
    served = subprocess.Popen([sys.executable, "-c", "import sys; from toolkit.cli import main; "
                               f"sys.exit(main(['sandbox', '--port', '0', '--credentials', {str(file)!r}]))"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if file.exists():
                break
            time.sleep(0.1)
        path = str(tmp_path / "w.duckdb")
        given = ["--workspace", path, "--credentials", str(file)]
        assert main(["pull", "translation", "submissions", "targets", *given]) == 0
        assert main(["refresh", *given]) == 0
        assert capsys.readouterr().out.strip().splitlines()[-1].split(": ", 1)[1].startswith("2 ")
        assert main(["sandbox", "advance", "3h", "--credentials", str(file)]) == 0
        said = capsys.readouterr().out
        assert re.fullmatch(r"sandbox clock advanced 3h: now 2026-11-02T12:00:00Z\n", said), said
        assert main(["refresh", *given]) == 0
        last = capsys.readouterr().out.strip().splitlines()[-1]
        assert not last.endswith(", +0 ~0 -0 rows") and "+0 ~0 -0 rows" not in last, last
        # nobody else moves it: the route takes the token of the file, readable by its user alone
        import requests
        control = json.loads(file.read_text())["_sandbox"]
        assert requests.post(control["base_url"] + "/clock", json={"seconds": 60}).status_code == 401
        assert requests.post(control["base_url"] + "/clock", json={"seconds": -1},
                             headers={"Authorization": f"Bearer {control['token']}"}).status_code == 400
    finally:
        served.terminate()
        out, err = served.communicate(timeout=30)
    assert json.loads(file.read_text() if file.exists() else "{}") == {}        # the file went with it
    assert control["token"] not in out + err


def test_lake_init_refuses_a_password_on_its_command_line_and_says_what_to_do(capsys, monkeypatch):
    """`ps` shows a command's words to every user of the machine: the superuser's password comes from
    the environment or a prompt. Refused before anything is reached (no server listens on port 1)."""
    from toolkit.cli import main
    monkeypatch.delenv("TOOLKIT_LAKE_ADMIN_PASSWORD", raising=False)
    code = main(["lake", "init", "ducklake:postgres:dbname=lake host=127.0.0.1 port=1 user=postgres password=s3cr3t-pw",
                 "--data-path", "/nonexistent/lake"])
    said = capsys.readouterr()
    assert code == 2
    assert "refused" in said.err and "TOOLKIT_LAKE_ADMIN_PASSWORD" in said.err and "ps" in said.err
    assert "s3cr3t-pw" not in said.err + said.out


def test_a_password_in_workspace_on_the_command_line_is_warned_about(capsys, monkeypatch):
    from toolkit.cli.options import password_on_command_line
    monkeypatch.delenv("TOOLKIT_WORKSPACE", raising=False)
    password_on_command_line(argparse.Namespace(workspace="ducklake:postgres:dbname=l user=u password=s3cr3t-pw"))
    said = capsys.readouterr().err
    assert "deprecated" in said and "TOOLKIT_WORKSPACE" in said and "s3cr3t-pw" not in said
    monkeypatch.setenv("TOOLKIT_WORKSPACE", "ducklake:postgres:dbname=l user=u password=s3cr3t-pw")
    password_on_command_line(argparse.Namespace(workspace="ducklake:postgres:dbname=l user=u password=s3cr3t-pw"))
    assert capsys.readouterr().err == ""    # from the environment: not in argv
