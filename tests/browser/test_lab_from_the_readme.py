"""The README's JupyterLab line, run as printed from the clone, opens notebook 00 (issue 45 item 1): a
newcomer got "Jupyter command 'jupyter-lab' not found" from .venv/bin/jupyter lab.

Run by `make test-browser` only (TOOLKIT_BROWSER_TEST=1), like the other tests of this folder. The
server's address, token and root permission come from a Jupyter config folder of the test's own
(JUPYTER_CONFIG_DIR), so that the line runs exactly as the README prints it.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

if not os.environ.get("TOOLKIT_BROWSER_TEST"):
    pytest.skip("browser test: run it with make test-browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

CLONE = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def the_readmes_lab_line() -> str:
    """The one line of the bash block after the README's two set-up commands."""
    text = (CLONE / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert blocks[0].split() == ["make", "demo", "make", "test"], "the README opens with the two commands"
    [line] = blocks[1].strip().splitlines()
    return line


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_readmes_lab_line_opens_notebook_00(tmp_path):
    line = the_readmes_lab_line()
    assert line == "make lab"
    port, token = free_port(), secrets.token_hex(16)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 0, "open_browser": False,
                      "allow_root": True},
        "IdentityProvider": {"token": token},
        "LabApp": {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}}))
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen(line.split(), cwd=CLONE, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                           env={**os.environ, "JUPYTER_CONFIG_DIR": str(config), "BROWSER": "true"})
    try:
        deadline = time.monotonic() + 600          # the first run installs the lab extra
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                assert lab.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
                time.sleep(1)
        else:
            pytest.fail("make lab did not serve within 10 minutes")
        served = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/?token={token}"))
        assert "00_start_here.ipynb" in {item["name"] for item in served["content"]}, "it serves notebooks/"
        with sync_api.sync_playwright() as play:
            browser = play.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/00_start_here.ipynb?token={token}")
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=180_000)
            page.locator(".jp-RenderedMarkdown h1", has_text="00 · Start here").first.wait_for(timeout=60_000)
            page.screenshot(path=str(tmp_path / "notebook-00.png"))
            browser.close()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/sessions",
                                         headers={"Authorization": f"token {token}"})
        sessions = json.load(urllib.request.urlopen(request, timeout=10))
        assert [s["path"] for s in sessions] == ["00_start_here.ipynb"], "its kernel started"
    finally:
        os.killpg(lab.pid, signal.SIGTERM)          # make and the lab it started, its own session
        lab.wait(timeout=60)
        log.close()
