"""One credential resolution for Python and the `toolkit` command (toolkit.http.credentials): the
credentials file of TOOLKIT_CREDENTIALS, then TOOLKIT_<SERVICE>_<FIELD>; and a credentials file read as
something hostile could have put there (issue 35 item 4, issue 39 item 7)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest

import toolkit as tk
from toolkit.cli import main
from toolkit.errors import CredentialsError, ToolkitError, ValidationError
from toolkit.http.credentials import MAX_BYTES, read_file


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start() as running:
        yield running


@pytest.fixture
def clean_env(monkeypatch):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    return monkeypatch


def private(path, text: str | bytes):
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    path.chmod(0o600)
    return path


def test_ws_connect_in_a_notebook_honours_toolkit_credentials_like_the_cli(box, tmp_path, clean_env):
    file = private(tmp_path / "c.json", json.dumps({s: box.credentials(s) for s in box.services}))
    clean_env.setenv("TOOLKIT_CREDENTIALS", str(file))
    conn = tk.Workspace(":memory:").connect("asset_library")
    assert len(conn.fetch("tags", progress=False)) > 0
    assert conn.client.base_url == box.credentials("asset_library")["base_url"]
    assert str(file) in conn.client.source and "TOOLKIT_CREDENTIALS" in conn.client.source


def test_the_file_comes_first_then_the_variables_fill_what_it_lacks_and_arguments_win(box, tmp_path, clean_env):
    given = box.credentials("asset_library")
    file = private(tmp_path / "c.json", json.dumps({"asset_library": {"base_url": given["base_url"],
                                                                      "api_key": given["api_key"]}}))
    clean_env.setenv("TOOLKIT_CREDENTIALS", str(file))
    clean_env.setenv("TOOLKIT_ASSET_LIBRARY_API_KEY", "not-this-one")
    clean_env.setenv("TOOLKIT_ASSET_LIBRARY_WORKSPACE_ID", given["workspace_id"])
    client = tk.connect("asset_library")
    assert client.call("asset_library.list_tags")          # the file's key, not the variable's
    assert "TOOLKIT_ASSET_LIBRARY_WORKSPACE_ID" in client.source and "API_KEY" not in client.source
    with pytest.raises(tk.AuthError):
        tk.connect("asset_library", api_key="wrong-key").call("asset_library.list_tags")


HOSTILE = {
    "non-UTF-8": (b"\xff\xfe{}", "is not UTF-8 text"),
    "100,000 deep": ("[" * 100_000, "nests deeper than"),
    "a number for the base URL": (json.dumps({"asset_library": {"base_url": 5}}), "asset_library.base_url as a number"),
    "a list of services": (json.dumps([1, 2]), "is not an object of services"),
    "not JSON": ("{'asset_library': 1}", "is not JSON (line 1, column 2)"),
    "too big": (" " * (MAX_BYTES + 1), "more than a credentials file holds"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_credentials_file_is_one_toolkit_error_not_a_traceback(kind, tmp_path, clean_env):
    text, said = HOSTILE[kind]
    file = private(tmp_path / "c.json", text)
    clean_env.setenv("TOOLKIT_CREDENTIALS", str(file))
    with pytest.raises(CredentialsError) as raised:
        tk.Workspace(":memory:").connect("asset_library")
    assert said in str(raised.value) and len(str(raised.value).splitlines()) == 1
    assert main(["call", "asset_library.list_tags"]) == 2


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "folder"])
def test_only_regular_files_are_read_a_fifo_does_not_hang_and_dev_zero_does_not_fill_memory(special, tmp_path):
    path = {"fifo": tmp_path / "fifo", "/dev/zero": "/dev/zero", "folder": tmp_path}[special]
    if special == "fifo":
        os.mkfifo(path)
    # a child of its own, so that a hang fails the test instead of stopping the suite
    code = ("from toolkit.http.credentials import read_file\n"
            f"try:\n read_file({str(path)!r})\nexcept Exception as e: print(type(e).__name__, e)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.startswith("CredentialsError") and "is not a regular file" in run.stdout, run


def test_a_file_base_url_is_refused_before_anything_is_sent(tmp_path, clean_env):
    file = private(tmp_path / "c.json", json.dumps({"asset_library": {
        "base_url": "file:///etc/passwd", "api_key": "k", "workspace_id": "w"}}))
    clean_env.setenv("TOOLKIT_CREDENTIALS", str(file))
    with pytest.raises(ValidationError, match=r"is no http:// or https:// address \(it came from the file"):
        tk.connect("asset_library")


@pytest.mark.parametrize("mode, said", [(0o644, "other users can read it"), (0o640, "other users can read it"),
                                        (0o602, "anyone can change it")])
def test_a_file_others_can_read_or_change_is_taken_with_a_warning(box, tmp_path, mode, said):
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"media_review": box.credentials("media_review")}))
    file.chmod(mode)
    with pytest.warns(UserWarning, match=said) as seen:
        assert read_file(file)["media_review"]["base_url"]
    assert seen[0].filename == __file__           # the line that read it, not toolkit's
    assert not [s for s in box.secrets() if len(s) >= 6 and s in str(seen[0].message)]
    file.chmod(0o600)
    os.utime(file, ns=(1, 1))                      # a change: read again, and nothing to warn of
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_file(file)


def test_nothing_of_the_file_is_quoted_in_its_errors(tmp_path):
    file = private(tmp_path / "c.json", '{"asset_library": {"api_key": "s3cr3t-value", "x": ["s3cr3t-value"]}}')
    with pytest.raises(ToolkitError) as raised:
        read_file(file)
    assert "s3cr3t" not in str(raised.value) and "asset_library.x as a list" in str(raised.value)


def test_the_files_secrets_never_go_to_another_address_than_the_files(box, tmp_path, clean_env):
    given = box.credentials("asset_library")
    file = private(tmp_path / "c.json", json.dumps({"asset_library": given}))
    clean_env.setenv("TOOLKIT_CREDENTIALS", str(file))
    with pytest.raises(ValidationError, match="needs the credential api_key|api_key"):
        tk.connect("asset_library", base_url="http://127.0.0.1:9/v1").call("asset_library.list_tags")
    assert tk.connect("asset_library", base_url=given["base_url"]).call("asset_library.list_tags")
