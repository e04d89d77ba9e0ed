"""The README's five-minute tour runs as printed: its Python block in a fresh interpreter, then its
shell block against `toolkit sandbox` (on a free port in place of 8765), every command given
`--credentials` and exiting 0, no secret on the screen."""
from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TOOLKIT = Path(sys.executable).with_name("toolkit")


def tour_blocks() -> tuple[str, str]:
    tour = README.read_text().split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    python, = re.findall(r"```python\n(.*?)```", tour, re.S)
    shell, = re.findall(r"```bash\n(.*?)```", tour, re.S)
    return python, shell


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    monkeypatch.setenv("PATH", f"{TOOLKIT.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_the_python_tour_runs_as_printed(clean_env):
    python, _ = tour_blocks()
    run = subprocess.run([sys.executable, "-c", python + "\nsandbox.stop()\n"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (clean_env / "reporting.duckdb").exists()


@pytest.mark.slow
def test_the_shell_tour_runs_as_printed_with_its_credentials_file(clean_env):
    _, shell = tour_blocks()
    lines = [line.split("#", 1)[0].strip() for line in shell.splitlines() if line.strip()]
    serve, rest = lines[0], lines[1:]
    assert serve.endswith("&") and "--credentials sandbox.json" in serve
    assert all("--credentials sandbox.json" in line for line in rest if " pull " in f" {line} " or "call" in line)
    port = str(free_port())
    box = subprocess.Popen(shlex.split(serve.rstrip("&").replace("8765", port)), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (clean_env / "sandbox.json").exists():
            assert box.poll() is None and time.monotonic() < deadline, "the sandbox did not start"
            time.sleep(0.2)
        secrets = [v for creds in __import__("json").loads((clean_env / "sandbox.json").read_text()).values()
                   for k, v in creds.items() if k not in ("base_url", "mode", "system_version", "username",
                                                            "client_id", "workspace_id") and len(str(v)) >= 6]
        for line in rest:
            run = subprocess.run(shlex.split(line), capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, f"{line}\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
            assert not [s for s in secrets if s in run.stdout + run.stderr], line
    finally:
        os.killpg(box.pid, signal.SIGTERM)
        box.wait(timeout=30)
    assert not (clean_env / "sandbox.json").exists(), "the live secrets go when the sandbox stops"


def test_the_counts_the_readme_gives_of_the_catalog_are_what_it_holds():
    """Issue 45: the tour said `tk.actions()` has 231 rows when it gave 233."""
    import toolkit as tk
    text = README.read_text()
    counts = [int(n) for n in re.findall(r"one row per endpoint \((\d+) rows\)", text)]
    counts += [int(n) for n in re.findall(r"# (\d+) replays", text)]
    assert len(counts) == 2, "the README names the catalog's size twice: the tour and the cassettes"
    assert counts == [len(tk.actions())] * 2


def test_the_first_notebook_names_every_other_as_next():
    """Issue 45: notebook 00's "Next" left out 60 and 70."""
    import json
    folder = README.parent / "notebooks"
    book = json.loads((folder / "00_start_here.ipynb").read_text())
    [following] = ["".join(c["source"]) for c in book["cells"] if "".join(c["source"]).startswith("## Next")]
    others = sorted(p.stem for p in folder.glob("*.ipynb") if p.stem != "00_start_here")
    assert re.findall(r"^\* `(\w+)`", following, re.M) == others


def test_what_the_readmes_walks_write_is_not_offered_to_git():
    """Issue 45: `sandbox.json` (live secrets) and `lake-report.html` showed in `git status`."""
    import shutil
    if shutil.which("git") is None or not (README.parent / ".git").exists():
        pytest.skip("not a git clone")
    written = set(re.findall(r"--credentials (\S+\.json)", README.read_text()))
    written |= set(re.findall(r"""["']([\w-]+\.(?:html|duckdb))["']""", README.read_text()))
    assert {"sandbox.json", "lake-report.html", "report.html", "reporting.duckdb"} <= written
    for name in sorted(written):
        checked = subprocess.run(["git", "check-ignore", "-q", name], cwd=README.parent)
        assert checked.returncode == 0, f"{name} is not in .gitignore"
