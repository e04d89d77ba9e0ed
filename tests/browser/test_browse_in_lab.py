"""Notebook 70 in JupyterLab, driven through Debian's chromium: the browser widget over the demo
workspace; a view picked in its dropdown shows its rows, two loads picked show their diff. The last
screen is saved as docs/browser.png (the README's picture).

Run by `make test-browser` only (TOOLKIT_BROWSER_TEST=1); skipped everywhere else.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

if not os.environ.get("TOOLKIT_BROWSER_TEST"):
    pytest.skip("browser test: run it with make test-browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "notebooks" / "70_browse.ipynb"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SLOW = 240_000
VIEW = "translation.targets"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on 127.0.0.1 serving notebook 70 beside a demo workspace it finds (demo-output/)."""
    from toolkit import demo
    assert demo.run(tmp_path / "demo-output") == 0
    shutil.copy(BOOK, tmp_path / BOOK.name)
    settings = tmp_path / "lab-settings" / "@jupyterlab"
    (settings / "apputils-extension").mkdir(parents=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = free_port(), secrets.token_hex(16)
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         f"--LabApp.user_settings_dir={tmp_path / 'lab-settings'}", f"--LabApp.workspaces_dir={tmp_path / 'ws'}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if os.geteuid() == 0 else [])], stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    yield f"http://127.0.0.1:{port}", token
    server.terminate()
    server.wait(timeout=30)
    log.close()


def dropdown(area, label: str):
    return area.locator(".widget-dropdown", has=area.page.locator("label", has_text=re.compile(rf"^{label}$"))) \
        .locator("select")


def test_the_browser_picks_a_view_and_two_loads(lab, tmp_path):
    base, token = lab
    with sync_api.sync_playwright() as play:
        context = play.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1100})
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(f"{base}/lab/tree/{BOOK.name}?token={token}")
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
        time.sleep(5)                                   # the kernel starts; keystrokes before are lost
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name=re.compile("^Run All Cells")).click()
        widget = page.locator(".jp-OutputArea-output", has=page.locator("label", has_text=re.compile("^sort by$"))).first
        widget.wait_for(timeout=SLOW)
        assert VIEW in widget.locator("table.toolkit-views").first.inner_text()
        dropdown(widget, "view").select_option(VIEW)
        widget.locator("th", has_text="VARCHAR").first.wait_for(timeout=60_000)     # its rows, with types
        widget.get_by_role("tab", name="diff").click()
        options = dropdown(widget, "before").locator("option")
        options.first.wait_for(state="attached", timeout=60_000)
        loads = [re.sub(r"\s+", " ", text).strip() for text in options.all_text_contents()]    # nbsp too
        assert len(loads) >= 3
        dropdown(widget, "before").select_option(index=0)
        dropdown(widget, "after").select_option(index=len(loads) - 1)
        first, last = loads[0].split(": ")[1], loads[-1].split(": ")[1]
        shown = widget.locator("p", has_text=f"{first} → {last}")
        shown.wait_for(timeout=60_000)
        assert re.search(r"\d+ added, \d+ removed, \d+ changed", shown.inner_text())
        widget.screenshot(path=str(ROOT / "docs" / "browser.png"))
        context.close()
