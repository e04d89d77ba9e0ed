"""The command line for scheduled use (`toolkit pull`, `toolkit export`) against a sandbox given through
TOOLKIT_<SERVICE>_<FIELD> environment variables, and `toolkit demo` end to end at a small scale."""
from __future__ import annotations

import json
import os
import re

import duckdb
import pytest
from stubbed_services import held_elsewhere

import toolkit as tk
from toolkit import catalog
from toolkit.cli import main


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as running:
        yield running


@pytest.fixture
def env(box, monkeypatch):
    """The sandbox's credentials in the environment, as a scheduled job would have them."""
    for service in box.services:
        for field, value in box.credentials(service).items():
            monkeypatch.setenv(f"TOOLKIT_{service.upper()}_{field.upper()}", str(value))
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    return box


def test_pull_every_resource_of_a_service_skips_those_needing_ids(env, tmp_path, capsys):
    workspace = tmp_path / "scheduled.duckdb"
    assert main(["pull", "audience_platform", "--workspace", str(workspace)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("pull audience_platform from http://127.0.0.1:")
    assert re.search(r"ok +audience_platform\.audiences +30 rows +1 requests +[\d.]+ s", out)
    assert "skip audience_platform.memberships: needs profile_ids" in out
    assert "skip audience_platform.analytics_audiences: needs account_id, property_id" in out
    assert lines[-1].endswith("4 skipped, 0 failed")
    assert not [s for s in env.secrets() if len(s) >= 6 and s in out]
    with tk.Workspace(workspace, read_only=True) as ws:
        pulled = set(ws.loads()["resource"])
    names = {name for (service, name) in catalog.RESOURCES if service == "audience_platform"}
    assert pulled == names - {"memberships", "profiles", "metrics", "analytics_audiences"}


def test_pull_named_resources_twice_keeps_history(env, tmp_path, capsys):
    workspace = str(tmp_path / "scheduled.duckdb")
    for _ in range(2):
        assert main(["pull", "translation", "targets", "quotes", "--workspace", workspace]) == 0
    out = capsys.readouterr().out
    assert out.count("ok   translation.targets") == 2 and "2 pulled" in out
    with tk.Workspace(workspace) as ws:
        assert len(ws.history("translation.targets")) == 2
        assert ws.sql("SELECT count(*) FROM translation.quotes").fetchone()[0] > 0


def test_pull_refuses_what_it_cannot_do(env, tmp_path, capsys, monkeypatch):
    workspace = str(tmp_path / "w.duckdb")
    assert main(["pull", "translation", "no_such_thing", "--workspace", workspace]) == 2
    assert "toolkit pull: no resource 'no_such_thing' in translation" in capsys.readouterr().err
    assert main(["pull", "translation", "target", "--workspace", workspace]) == 2
    assert "no resource 'target' in translation; did you mean 'targets'?" in capsys.readouterr().err
    assert main(["pull", "translaton", "--workspace", workspace]) == 2
    assert "no service 'translaton'; did you mean 'translation'?" in capsys.readouterr().err
    assert main(["pull", "audience_platform", "memberships", "--workspace", workspace]) == 1
    assert "skip audience_platform.memberships: needs profile_ids" in capsys.readouterr().out
    monkeypatch.delenv("TOOLKIT_MEDIA_REVIEW_BASE_URL")
    assert main(["pull", "media_review", "--workspace", workspace]) == 2
    assert "TOOLKIT_MEDIA_REVIEW_BASE_URL" in capsys.readouterr().err


def test_export_duckdb_and_parquet(env, tmp_path, capsys):
    workspace = str(tmp_path / "w.duckdb")
    assert main(["pull", "media_review", "--workspace", workspace]) == 0
    snapshot = tmp_path / "snapshot.duckdb"
    assert main(["export", "--workspace", workspace, "--out", str(snapshot)]) == 0
    with tk.open_snapshot(snapshot) as snap:
        assert len(snap.read("media_review", "teams")) == 40
    assert main(["export", "--workspace", workspace, "--out", str(snapshot)]) == 2      # exists
    said = capsys.readouterr().err
    assert "exists: pass --overwrite to replace it" in said and "overwrite=True" not in said
    folder = tmp_path / "parquet"
    assert main(["export", "--workspace", workspace, "--out", str(folder), "--format", "parquet",
                 "--history"]) == 0
    assert "(parquet, every load)" in capsys.readouterr().out
    assert (folder / "manifest.json").exists()
    rows = duckdb.sql(f"SELECT count(*) FROM read_parquet('{folder}/media_review/teams/*.parquet')").fetchall()
    assert rows == [(40,)]
    assert main(["export", "--workspace", str(tmp_path / "missing.duckdb"), "--out", str(tmp_path / "x")]) == 2


def test_demo_writes_the_workspace_the_snapshot_and_the_report(tmp_path, capsys):
    """The README's first command, at a quarter of the seed data to keep the suite quick."""
    assert main(["demo", "--out", str(tmp_path), "--scale", "0.25"]) == 0
    out = capsys.readouterr().out
    database, snapshot, report = (tmp_path / n for n in ("toolkit-demo.duckdb", "snapshot.duckdb", "report.html"))
    assert database.exists() and snapshot.exists() and report.exists()
    assert f"xdg-open {report}" in out and f"open_snapshot('{snapshot}')" in out
    assert "no secret of the sandbox is in these files" in out
    # the closing hint runs as printed, from a shell whose PATH has no venv in it
    import shlex
    import subprocess
    hint, = [line.strip() for line in out.splitlines() if "import toolkit;" in line]
    opened = subprocess.run(shlex.split(hint), capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")})
    assert opened.returncode == 0, opened.stderr[-2000:]
    assert "translation" in opened.stdout and "__versions" not in opened.stdout     # the analyst's views
    with duckdb.connect(str(database), read_only=True) as con:
        schemas = {row[0] for row in con.execute("SELECT DISTINCT table_schema FROM information_schema.tables")
                   .fetchall()}
        targets_loads = con.execute("SELECT count(*) FROM _loads WHERE resource = 'targets'").fetchone()[0]
    assert schemas >= set(catalog.SERVICES)
    assert targets_loads >= 6                                     # history: the first pull and one per step
    with tk.open_snapshot(snapshot) as snap:
        assert set(snap.manifest()["service"]) == set(catalog.SERVICES)
    page = report.read_text()
    assert page.count('src="data:image/png;base64,') >= 15 and "could not be drawn" not in page
    with tk.sandbox.start(scale=0.25) as box:                     # the same seed: the same secrets
        secrets = [s for s in box.secrets() if len(s) >= 6]
    for file in (database, snapshot, report):
        blob = file.read_bytes()
        assert not [s[:4] for s in secrets if s.encode() in blob], file.name


def test_call_answers_as_json(env, capsys):
    assert main(["call", "media_review.list_teams", '{"page_size": 2}']) == 0
    teams = json.loads(capsys.readouterr().out)
    assert len(teams) == 2 and isinstance(teams[0]["id"], str)


def test_call_without_credentials_is_one_line_and_exit_2(monkeypatch, capsys):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    assert main(["call", "media_review.list_teams"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and "TOOLKIT_MEDIA_REVIEW_BASE_URL" in captured.err


@pytest.mark.parametrize(("argv", "words"), [
    (["call", "media_review.no_such_action"], "no action 'media_review.no_such_action'"),
    (["call", "nope.list_teams"], "no action 'nope.list_teams'"),
    (["call", "media_review.list_teams", '{"token": "sbx_not_json'], "not JSON"),
    (["call", "media_review.list_teams", "[1, 2]"], "a JSON object, not list"),
    (["call", "asset_library.get_asset", "{}"], "asset_id"),                    # a required param missing
])
def test_call_refusals_are_one_line_and_exit_2(env, capsys, argv, words):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and words in captured.err
    assert "sbx_not_json" not in captured.err                               # params are never echoed


def test_call_with_wrong_credentials_prints_no_secret(env, capsys, monkeypatch):
    monkeypatch.setenv("TOOLKIT_TRANSLATION_PASSWORD", "wrong-password-42")
    assert main(["call", "translation.list_submissions"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolkit call: AuthError") and err.count("\n") == 1
    held = [s for s in env.secrets() if len(s) >= 6] + ["wrong-password-42"]
    assert not [s[:4] for s in held if s in err]


def test_migrate_brings_an_old_workspace_to_row_versions(tmp_path, capsys):
    import gzip
    from pathlib import Path
    path = tmp_path / "old.duckdb"
    with gzip.open(Path(__file__).parents[1] / "fixtures" / "copy_per_load.duckdb.gz") as packed:
        path.write_bytes(packed.read())
    with pytest.raises(tk.WorkspaceError, match="toolkit migrate --workspace"):
        tk.Workspace(path, read_only=True)
    assert main(["migrate", "--workspace", str(path)]) == 0
    assert "migrated" in capsys.readouterr().out
    with tk.Workspace(path, read_only=True) as ws:        # readable read-only from now on
        assert len(ws.loads()) > 0
    assert main(["migrate", "--workspace", str(path)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["migrate", "--workspace", str(tmp_path / "none.duckdb")]) == 2


def test_refresh_pulls_again_what_a_workspace_holds(env, tmp_path, capsys, monkeypatch):
    workspace = str(tmp_path / "cron.duckdb")
    assert main(["refresh", "--workspace", workspace]) == 2
    assert "no workspace" in capsys.readouterr().err
    assert main(["pull", "translation", "submissions", "projects", "--workspace", workspace]) == 0
    assert main(["pull", "media_review", "--workspace", workspace]) == 0
    capsys.readouterr()
    env.advance(hours=1)
    monkeypatch.delenv("TOOLKIT_MEDIA_REVIEW_BASE_URL")
    assert main(["refresh", "--workspace", workspace]) == 3       # partly: media_review is not connected
    out = capsys.readouterr().out
    assert re.search(r"translation\.submissions: incremental, \+\d+ ~\d+ -\d+ rows, \d+ requests", out)
    assert "translation.projects: full" in out
    assert "media_review: not connected: no credentials: " in out and "media_review.teams: skipped" in out
    assert not [s for s in env.secrets() if len(s) >= 6 and s in out]
    assert main(["refresh", "translation", "--full", "--workspace", workspace]) == 0
    assert "2 full" in capsys.readouterr().out
    assert main(["refresh", "nothing_here", "--workspace", workspace]) == 2
    with tk.Workspace(workspace) as ws:
        assert len(ws.history("translation.submissions")) == 3
    capsys.readouterr()
    assert main(["refresh", "--resource", "translation.projects", "--workspace", workspace]) == 0
    out = capsys.readouterr().out
    assert "translation.projects:" in out and "translation.submissions" not in out
    assert main(["refresh", "--resource", "translation.targets", "--workspace", workspace]) == 2
    assert "translation.submissions" in capsys.readouterr().err, "the refusal lists what is held"


# --- toolkit doctor ----------------------------------------------------------------------------------

def test_doctor_exits_0_when_everything_answered_as_declared(env, tmp_path, capsys):
    before = dict(env.stats()["by_method"])
    report = tmp_path / "doctor.json"
    assert main(["doctor", "asset_library", "translation", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "everything answered as declared" in out and "ok   assets" in out and "ok   targets" in out
    assert f"report written to {report}" in out
    data = json.loads(report.read_text())
    assert data["ok"] is True and [s["service"] for s in data["services"]] == ["asset_library", "translation"]
    sent = {m: n - before.get(m, 0) for m, n in env.stats()["by_method"].items()}
    assert sent.get("POST", 0) == 1 and set(m for m, n in sent.items() if n) <= {"GET", "POST"}   # the login
    for secret in env.secrets():
        assert secret not in out and secret not in report.read_text()


def test_doctor_exits_1_when_a_service_drifts(monkeypatch, capsys):
    with tk.sandbox.start(seed=5, drift="missing_field") as drifting:
        for field, value in drifting.credentials("media_review").items():
            monkeypatch.setenv(f"TOOLKIT_MEDIA_REVIEW_{field.upper()}", str(value))
        assert main(["doctor", "media_review"]) == 1
        assert drifting.stats()["by_method"] == {"GET": 1}
        missing = next(d.field for d in drifting.drift if d.service == "media_review")
    out = capsys.readouterr().out
    assert "differs or failed: media_review" in out and f"missing: {missing}\n" in out


def test_doctor_exits_1_on_wrong_credentials_and_prints_no_secret(env, capsys, monkeypatch):
    monkeypatch.setenv("TOOLKIT_MEDIA_REVIEW_TOKEN", "sbx_wrong-token-77")
    assert main(["doctor", "media_review"]) == 1
    captured = capsys.readouterr()
    assert "auth: AuthError 401" in captured.out
    assert "sbx_wrong-token-77" not in captured.out + captured.err


def test_doctor_takes_a_base_url(env, capsys, monkeypatch):
    url = env.url("media_review")
    monkeypatch.delenv("TOOLKIT_MEDIA_REVIEW_BASE_URL")
    assert main(["doctor", "media_review", "--base-url", url]) == 0
    assert main(["doctor", "media_review", "--base-url", f"media_review={url}"]) == 0
    assert capsys.readouterr().out.count("everything answered as declared") == 2


@pytest.mark.parametrize(("argv", "words"), [
    (["doctor", "no_such_service"], "no service 'no_such_service'"),
    (["doctor", "media_review", "translation", "--base-url", "http://127.0.0.1:9/v2"], "--base-url takes"),
    (["doctor", "asset_library", "--base-url", "nope=http://127.0.0.1:9/v1"], "--base-url takes"),
])
def test_doctor_refuses_bad_usage_with_exit_2(env, capsys, argv, words):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and words in captured.err


def test_doctor_without_credentials_exits_2_and_names_what_is_missing(env, capsys, monkeypatch):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_") and n.endswith(("_BASE_URL", "_API_KEY"))]:
        monkeypatch.delenv(name)
    assert main(["doctor"]) == 2
    assert "none named and none configured" in capsys.readouterr().err
    monkeypatch.setenv("TOOLKIT_ASSET_LIBRARY_BASE_URL", env.url("asset_library"))
    assert main(["doctor", "asset_library"]) == 2
    assert "TOOLKIT_ASSET_LIBRARY_API_KEY" in capsys.readouterr().err


def test_pull_goes_past_a_resource_that_breaks_and_exits_1(env, tmp_path, capsys, monkeypatch):
    """Invalid UTF-8 in one resource ended the run before the resources after it; now its line says
    FAIL, the others are pulled, and the exit code says some failed."""
    from toolkit.connection import connection

    real = connection.Connection.pull

    def breaks(self, name, **options):
        if name == "tags":
            raise UnicodeDecodeError("utf-8", b"\xff\x1b[2J", 0, 1, "invalid start byte\nWARNING: all good")
        return real(self, name, **options)

    monkeypatch.setattr(connection.Connection, "pull", breaks)
    workspace = str(tmp_path / "w.duckdb")
    assert main(["pull", "asset_library", "tags", "boards", "--workspace", workspace]) == 1
    out = capsys.readouterr().out
    assert "FAIL asset_library.tags: unexpected UnicodeDecodeError:" in out
    assert "\x1b" not in out and "\nWARNING: all good" not in out and "\\nWARNING: all good" in out
    assert re.search(r"ok +asset_library\.boards", out) and out.splitlines()[-1].endswith("1 failed")


@pytest.mark.parametrize("command", ["actions", "resources"])
def test_a_service_the_catalog_lacks_is_one_line_and_exit_2(command, capsys):
    assert main([command, "translaton"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err == (f"toolkit {command}: no service 'translaton'; did you mean "
                                           "'translation'? (there are media_review, asset_library, "
                                           "audience_platform, translation)\n")


def test_the_version_is_one_flag_away(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"toolkit {tk.__version__}\n"


def test_every_command_uses_the_credentials_file_the_sandbox_writes(box, tmp_path, capsys, monkeypatch):
    """`toolkit sandbox` wrote its credentials file, but pull, refresh, doctor and call read only the
    TOOLKIT_<SERVICE>_<FIELD> variables: a new user wrote 16 exports by hand."""
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    file = tmp_path / "credentials.json"
    file.write_text(json.dumps({s: box.credentials(s) for s in box.services}))
    workspace = str(tmp_path / "w.duckdb")
    given = ["--credentials", str(file)]
    assert main(["pull", "media_review", "--workspace", workspace, *given]) == 0
    assert main(["refresh", "--workspace", workspace, *given]) == 0
    assert main(["doctor", "media_review", *given]) == 0
    monkeypatch.setenv("TOOLKIT_CREDENTIALS", str(file))
    assert main(["call", "media_review.list_teams", '{"page_size": 2}']) == 0
    said = capsys.readouterr()
    assert re.search(r"ok +media_review\.teams +40 rows", said.out), said.out
    assert "media_review.teams: full, +0 ~0 -0 rows" in said.out and "everything answered as declared" in said.out
    assert '"name":' in said.out.replace(" ", "")      # the call's JSON
    assert not [s for s in box.secrets() if len(s) >= 6 and s in said.out + said.err]
    monkeypatch.setenv("TOOLKIT_CREDENTIALS", str(tmp_path / "missing.json"))
    assert main(["call", "media_review.list_teams"]) == 2
    assert capsys.readouterr().err == f"toolkit call: the credentials file {tmp_path / 'missing.json'} cannot be " \
                                      "read: No such file or directory\n"


@pytest.mark.parametrize("command", [["refresh"], ["pull", "translation", "submissions"], ["export", "--out", "x"]])
def test_a_workspace_still_held_after_the_wait_exits_75_not_2(tmp_path, capsys, command):
    """Busy is not bad arguments: cron may simply run again (EX_TEMPFAIL), and the line says who holds it."""
    path = tmp_path / "ws.duckdb"
    tk.Workspace(path).close()
    with held_elsewhere(path) as keeper:
        argv = [*command[:1], "--workspace", str(path), *command[1:]]
        if command[0] == "export":
            argv[-1] = str(tmp_path / "snapshot.duckdb")
        else:
            argv += ["--wait", "0.5"]
        os.environ["TOOLKIT_WORKSPACE_WAIT"] = "0.5"
        try:
            assert main(argv) == 75
        finally:
            del os.environ["TOOLKIT_WORKSPACE_WAIT"]
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"WorkspaceBusyError: {path} is still held by process {keeper.pid}" in err[0]


def test_the_workspace_may_come_from_the_environment_and_a_missing_one_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TOOLKIT_WORKSPACE", raising=False)
    assert main(["refresh"]) == 2
    assert capsys.readouterr().err.strip() == "toolkit refresh: name the workspace: --workspace FILE (or TOOLKIT_WORKSPACE)"
    path = tmp_path / "ws.duckdb"
    tk.Workspace(path).close()
    monkeypatch.setenv("TOOLKIT_WORKSPACE", str(path))
    assert main(["export", "--out", str(tmp_path / "snap.duckdb")]) == 0
    assert f"exported {path} to" in capsys.readouterr().out


def test_show_says_what_each_view_holds_and_how_fresh_it_is(env, tmp_path, capsys, monkeypatch):
    workspace = str(tmp_path / "shown.duckdb")
    assert main(["pull", "asset_library", "boards", "guests", "--workspace", workspace]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["show", "--workspace", workspace]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["view", "rows", "loads"] and all(len(line) <= 100 for line in lines)
    assert any(line.strip().startswith("asset_library.guests") and re.search(r" \d+ (min|h|d) ago ", line) for line in lines)
    assert main(["show", "--workspace", workspace, "--format", "json"]) == 0
    shown = {row["table"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(shown) == {"asset_library.boards", "asset_library.guests"}
    assert shown["asset_library.guests"]["past_budget"] == 0 and shown["asset_library.guests"]["budget_h"] == 24
    assert main(["show", "--workspace", workspace, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("table,rows,load,")
    assert main(["show", "--workspace", str(tmp_path / "none.duckdb")]) == 2
    assert capsys.readouterr().err.strip() == (f"toolkit show: no workspace at {tmp_path / 'none.duckdb'}; "
                                               f"{tmp_path} holds shown.duckdb")


def test_refresh_takes_the_freshness_budget_as_max_age(env, tmp_path, capsys):
    workspace = str(tmp_path / "budget.duckdb")
    assert main(["pull", "asset_library", "boards", "guests", "--workspace", workspace]) == 0
    assert main(["refresh", "--workspace", workspace, "--max-age", "0"]) == 0
    out = capsys.readouterr().out
    with tk.Workspace(workspace, read_only=True) as ws:
        boards = len(ws.read("asset_library", "boards"))
    # every board asked again (a 429 the sandbox's limits send on a busy machine is asked again, and counts)
    asked = re.search(r"asset_library\.guests: full, .* (\d+) requests", out)
    assert asked and int(asked.group(1)) >= boards, out
    with pytest.raises(SystemExit):
        main(["refresh", "--workspace", workspace, "--max-age", "soon"])
    assert "'soon' is no duration: give seconds, or e.g. 30m, 6h, 1d" in capsys.readouterr().err

@pytest.mark.parametrize("command", ["actions", "resources"])
def test_listings_fit_the_terminal_or_come_whole_as_json_or_csv(command, capsys, monkeypatch):
    """`toolkit actions` printed 231 lines up to 215 characters wide, with no other format."""
    whole = getattr(tk, command)()
    monkeypatch.setenv("COLUMNS", "90")
    assert main([command]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 90
    rows = lines[:next((i for i, line in enumerate(lines) if line.startswith("(")), len(lines))]
    assert rows[0].split()[-1] == "doc" and len(rows) == len(whole) + 1      # one line a row
    assert main([command, "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == len(whole) and set(records[0]) == set(whole.columns)
    assert main([command, "translation", "--format", "csv"]) == 0
    import io

    import pandas as pd
    back = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(back.columns) == list(whole.columns) and set(back["service"]) == {"translation"}


def test_every_option_of_every_command_says_what_it_is_for():
    """The sandbox's --port/--scale/--seed had no help text."""
    from toolkit.cli import parser
    top = parser()
    commands = next(a for a in top._actions if a.dest == "command").choices
    silent = [f"{name} {option.dest}" for name, command in commands.items() for option in command._actions
              if option.dest != "help" and not option.help]
    assert silent == []


def test_pull_takes_the_ids_a_fan_out_needs_from_the_command_or_a_held_view(env, tmp_path, capsys):
    """memberships and profiles could not be pulled from the command line at all."""
    workspace = str(tmp_path / "w.duckdb")
    ids = env.examples("audience_platform")["profile_ids"][:3]
    assert main(["pull", "audience_platform", "profiles", "--ids", ",".join(ids[:2]), "--ids", ids[2],
                 "--workspace", workspace]) == 0
    assert re.search(r"ok +audience_platform\.profiles +3 rows", capsys.readouterr().out)
    assert main(["pull", "audience_platform", "memberships", "--ids-from", "audience_platform.profiles.item_id",
                 "--workspace", workspace]) == 0
    assert re.search(r"ok +audience_platform\.memberships +\d+ rows +3 requests", capsys.readouterr().out)
    with tk.Workspace(workspace, read_only=True) as ws:
        assert set(ws.sql("select profile_id from audience_platform.memberships").df()["profile_id"]) <= set(ids)
    assert main(["pull", "audience_platform", "audiences", "--ids", "x", "--workspace", workspace]) == 2
    assert "--ids go to one kind of ids" in capsys.readouterr().err


def test_ids_given_wrongly_are_said_in_one_line(env, tmp_path, capsys):
    """A resource that takes path params, not ids, beside one that fans out (once a TypeError), an
    --ids-from not naming a column, and a column the view lacks (once a DuckDB traceback)."""
    workspace = str(tmp_path / "w.duckdb")
    ids = env.examples("audience_platform")["profile_ids"][:2]
    assert main(["pull", "audience_platform", "profiles", "--ids", ",".join(ids), "--workspace", workspace]) == 0
    capsys.readouterr()
    assert main(["pull", "audience_platform", "memberships", "analytics_audiences", "--ids", ids[0],
                 "--workspace", workspace]) == 1
    out = capsys.readouterr().out
    assert re.search(r"ok +audience_platform\.memberships", out)
    assert "skip audience_platform.analytics_audiences: needs account_id, property_id (from Python:" in out
    assert main(["pull", "audience_platform", "memberships", "--ids-from", "audience_platform.profiles",
                 "--workspace", workspace]) == 2
    assert "--ids-from names a view's column as SERVICE.RESOURCE.COLUMN" in capsys.readouterr().err
    assert main(["pull", "audience_platform", "memberships", "--ids-from", "audience_platform.profiles.nope",
                 "--workspace", workspace]) == 2
    said = capsys.readouterr().err
    assert "WorkspaceError: audience_platform.profiles has no column 'nope'; it has " in said and "item_id" in said


def test_a_refused_credential_names_the_file_it_came_from(box, tmp_path, capsys, monkeypatch):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    file = tmp_path / "credentials.json"
    file.write_text(json.dumps({"media_review": {**box.credentials("media_review"), "token": "wrong-token"}}))
    assert main(["call", "media_review.list_teams", "--credentials", str(file)]) == 2
    said = capsys.readouterr().err
    assert f"which came from the file {file} (--credentials): check them" in said and "wrong-token" not in said


def test_unknown_services_and_resources_of_refresh_and_doctor_exit_2_with_the_closest(tmp_path, capsys):
    workspace = tmp_path / "w.duckdb"
    tk.Workspace(workspace).close()
    assert main(["refresh", "translaton", "--workspace", str(workspace)]) == 2
    assert "no service 'translaton'; did you mean 'translation'?" in capsys.readouterr().err
    assert main(["refresh", "--resource", "translation.target", "--workspace", str(workspace)]) == 2
    said = capsys.readouterr().err
    assert "no resource 'translation.target'; did you mean 'translation.targets'" in said
    assert "(41 of them: `toolkit resources` lists them)" in said
    assert main(["doctor", "media_reviews"]) == 2
    assert "did you mean 'media_review'?" in capsys.readouterr().err


def test_a_failed_commands_line_never_shows_a_connection_strings_password(capsys):
    from toolkit.cli.options import failed as _failed
    error = tk.WorkspaceError("the team workspace ducklake:postgres:dbname=lake user=cron password=hunter2-pw "
                              "is gone")
    assert _failed("refresh", error) == 2
    said = capsys.readouterr().err
    assert "hunter2-pw" not in said and "password=***" in said and said.startswith("toolkit refresh: WorkspaceError")


def test_export_takes_some_resources_and_the_loads_since_a_date(env, tmp_path, capsys):
    """issue 34: this week's audiences and targets as a snapshot, from the command as from Python."""
    workspace = str(tmp_path / "w.duckdb")
    assert main(["pull", "translation", "submissions", "targets", "--workspace", workspace]) == 0
    out = str(tmp_path / "week.duckdb")
    assert main(["export", "--workspace", workspace, "--out", out, "--resource", "translation.targets",
                 "--since", "2000-01-01"]) == 0
    assert "of translation.targets" in capsys.readouterr().out
    with tk.open_snapshot(out) as snap:
        manifest = snap.manifest()
        assert list(manifest.resource) == ["targets"] and manifest.since.notna().all()
    assert main(["export", "--workspace", workspace, "--out", str(tmp_path / "x.duckdb"), "--since", "soon"]) == 2
    assert main(["export", "--workspace", workspace, "--out", str(tmp_path / "y.duckdb"),
                 "--resource", "translation.nothing"]) == 2
