"""What a scheduled `toolkit refresh` exits with, said in the command's words, and `toolkit sandbox` on a
port already taken (issue 45 items 2 and 3): a cron job that refreshed nothing must fail loudly."""
from __future__ import annotations

import json
import os
import socket

import pytest

import toolkit as tk
from toolkit.cli import main


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as running:
        yield running


@pytest.fixture
def held(box, tmp_path, monkeypatch):
    """A workspace holding a resource of two services, no TOOLKIT_ variable set: (its path, a file of
    both services' credentials, a file of translation's alone)."""
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    path = tmp_path / "cron.duckdb"
    with tk.Workspace(path) as ws:
        ws.connect("translation", **box.credentials("translation")).pull("submissions", progress=False)
        ws.connect("media_review", **box.credentials("media_review")).pull("teams", progress=False)
    both, one = tmp_path / "both.json", tmp_path / "one.json"
    both.write_text(json.dumps({s: box.credentials(s) for s in ("translation", "media_review")}))
    one.write_text(json.dumps({"translation": box.credentials("translation")}))
    for file in (both, one):
        file.chmod(0o600)
    return str(path), str(both), str(one)


def test_a_refresh_of_everything_exits_0(held, capsys):
    path, both, _ = held
    assert main(["refresh", "--workspace", path, "--credentials", both]) == 0
    assert capsys.readouterr().err == ""


def test_a_refresh_with_nothing_connected_exits_1_naming_the_flag_and_the_variables(held, box, capsys):
    path = held[0]
    before = box.stats()["requests"]
    assert main(["refresh", "--workspace", path]) == 1
    said = capsys.readouterr()
    assert "ws.connect" not in said.out + said.err, "a command speaks of flags and variables, not Python"
    assert ("translation: not connected: no credentials: give --credentials FILE (or TOOLKIT_CREDENTIALS=FILE; "
            "`toolkit sandbox` writes one), or set TOOLKIT_TRANSLATION_BASE_URL, TOOLKIT_TRANSLATION_USERNAME, "
            "TOOLKIT_TRANSLATION_PASSWORD, TOOLKIT_TRANSLATION_CLIENT_ID, TOOLKIT_TRANSLATION_CLIENT_SECRET") in said.out
    assert said.out.count("not connected: no credentials: give") == 2      # once a service, not once a resource
    assert "translation.submissions: skipped: translation is not connected: no credentials (said above)" in said.out
    assert said.err == ("toolkit refresh: nothing refreshed: of 2 resources, 0 failed, 2 skipped (the lines above "
                        "say why) (exit 1)\n")
    assert box.stats()["requests"] == before


def test_a_refresh_whose_every_resource_fails_exits_1(held, tmp_path, capsys):
    path = held[0]
    with tk.sandbox.start() as gone:
        file = tmp_path / "gone.json"
        file.write_text(json.dumps({s: gone.credentials(s) for s in ("translation", "media_review")}))
        file.chmod(0o600)
    assert main(["refresh", "--workspace", path, "--credentials", str(file), "--full"]) == 1
    said = capsys.readouterr()
    assert "translation.submissions: failed: TransportError" in said.out
    assert said.err.startswith("toolkit refresh: nothing refreshed: of 2 resources, 2 failed, 0 skipped")


def test_a_partial_refresh_says_what_it_did_and_exits_3(held, capsys):
    path, _, one = held
    assert main(["refresh", "--workspace", path, "--credentials", one]) == 3
    said = capsys.readouterr()
    assert f'media_review: not connected: no credentials: the file {one} holds no "media_review"; add it ' \
           "there, or set TOOLKIT_MEDIA_REVIEW_BASE_URL, TOOLKIT_MEDIA_REVIEW_TOKEN" in said.out
    assert "translation.submissions: incremental" in said.out or "translation.submissions: full" in said.out
    assert said.err == ("toolkit refresh: partly refreshed: 1 of 2 resources; 0 failed, 1 skipped (the lines "
                        "above say why) (exit 3)\n")


def test_a_refresh_of_a_workspace_holding_nothing_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    path = tmp_path / "empty.duckdb"
    tk.Workspace(path).close()
    assert main(["refresh", "--workspace", str(path)]) == 1
    assert "nothing refreshed: the workspace holds no load; `toolkit pull SERVICE ...` fills it first" in \
        capsys.readouterr().err


def test_the_readme_documents_the_exit_codes_beside_the_cron_example():
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    cron = readme[readme.index("For a scheduled job (cron, CI)"):]
    cron = cron[:cron.index("\n## ")]
    for code, meaning in [("0", "everything"), ("1", "nothing"), ("3", "partly"), ("75", "busy"), ("130", "interrupted")]:
        assert f"`{code}`" in cron and meaning in cron, (code, meaning)


def test_a_sandbox_on_a_taken_port_says_so_in_one_line_and_leaves_the_running_ones_file(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        file = tmp_path / "sandbox.json"
        file.write_text("{}")
        assert main(["sandbox", "--port", str(port), "--credentials", str(file)]) == 2
    said = capsys.readouterr()
    assert said.err == (f"toolkit sandbox: port {port} on 127.0.0.1 is taken (a sandbox already running? `jobs` "
                        f"lists it, `kill %1` stops it); or serve on another: --port {port + 1}, or --port 0 for any "
                        "free one\n")
    assert file.read_text() == "{}", "the running sandbox's credentials stay as they were"
    assert main(["sandbox", "--port", "0", "--credentials", str(tmp_path / "no" / "such" / "x.json")]) == 2
    assert capsys.readouterr().err == (f"toolkit sandbox: cannot write the credentials file "
                                       f"{tmp_path / 'no' / 'such' / 'x.json'}: No such file or directory\n")


def test_a_workspace_not_found_from_another_folder_is_named_whole(tmp_path, capsys, monkeypatch):
    """Issue 45: "no workspace at reporting.duckdb" named no place when run from another folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tk.Workspace(elsewhere / "kept.duckdb").close()
    monkeypatch.chdir(elsewhere)
    for command in ("show", "refresh", "export"):
        extra = ["--out", "x.duckdb"] if command == "export" else []
        assert main([command, "--workspace", "reporting.duckdb", *extra]) == 2
        assert capsys.readouterr().err == (f"toolkit {command}: no workspace at {elsewhere / 'reporting.duckdb'}; "
                                           f"{elsewhere} holds kept.duckdb\n")
    with pytest.raises(tk.WorkspaceError, match=f"no workspace at {elsewhere / 'reporting.duckdb'} to read"):
        tk.Workspace("reporting.duckdb", read_only=True)
    with pytest.raises(tk.WorkspaceError, match=f"no snapshot at {elsewhere / 'week.duckdb'}: "):
        tk.open_snapshot("week.duckdb")
