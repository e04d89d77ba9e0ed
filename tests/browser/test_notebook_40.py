"""Notebook 40 in JupyterLab, driven through Debian's chromium: what the screen shows is what was sent, once.

Run by `make test-browser` only (it installs chromium, JupyterLab and Playwright and sets
TOOLKIT_BROWSER_TEST=1); skipped everywhere else, so `make test` never starts a browser.
"""
from __future__ import annotations

import os
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

BOOK = Path(__file__).resolve().parents[2] / "notebooks" / "40_write_actions.ipynb"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SETUP_CELLS = 6          # title, setup, gallery text, gallery, form text, the create_board form


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab on 127.0.0.1 serving a copy of notebook 40: (url of the notebook)."""
    shutil.copy(BOOK, tmp_path / BOOK.name)
    port, token = free_port(), secrets.token_hex(16)
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if os.geteuid() == 0 else [])],      # CI and this machine run as root
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode} before it listened")
            time.sleep(0.5)
    else:
        pytest.fail("JupyterLab did not listen within 60 s")
    yield f"http://127.0.0.1:{port}/lab/tree/{BOOK.name}?token={token}"
    server.terminate()
    server.wait(timeout=30)


@pytest.fixture
def page(tmp_path):
    with sync_api.sync_playwright() as play:
        context = play.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000})
        yield context.pages[0] if context.pages else context.new_page()
        context.close()


def run_cell(page, code: str | None = None) -> None:
    """Run the active cell and move on (Shift+Enter); with `code`, first type it into a new cell."""
    if code is not None:
        page.keyboard.press("Escape")
        page.keyboard.press("b")
        page.keyboard.press("Enter")
        page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")


def widget_text_input(form, label: str):
    return form.locator(".widget-text", has=form.page.locator("label", has_text=label)).locator("input")


def test_two_forms_sent_from_the_page_agree_with_the_audit(lab, page, tmp_path):
    page.goto(lab)
    page.locator(".jp-Notebook").wait_for(timeout=60_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=60_000)
    page.locator(".jp-Cell").first.click()
    for _ in range(SETUP_CELLS):
        run_cell(page)
    forms = page.locator(".widget-vbox", has=page.locator("button", has_text="Preview"))
    forms.nth(1).wait_for(timeout=120_000)                      # the gallery's form, then create_board's
    page.screenshot(path=str(tmp_path / "forms.png"), full_page=True)

    board = forms.filter(has_text="create_board").last
    title = widget_text_input(board, "title")
    title.fill("Typed in the browser")
    title.press("Tab")
    board.locator("button", has_text="Send").dblclick()
    board.get_by_text("✓ sent asset_library.create_board").wait_for(timeout=30_000)
    shown = board.locator(".jp-OutputArea-output pre").first.inner_text()
    assert shown.startswith("sent:") and "Typed in the browser" in shown

    tag = forms.filter(has_text="create_tag").first
    name = widget_text_input(tag, "name")
    name.fill("tag-from-the-browser")
    name.press("Tab")
    tag.locator("button", has_text="Send").click()
    tag.get_by_text("✓ sent asset_library.create_tag").wait_for(timeout=30_000)
    page.screenshot(path=str(tmp_path / "sent.png"), full_page=True)

    run_cell(page, 'print("AUDIT", audit.audit(ws)[["action", "source", "params"]].to_json(orient="records"))')
    line = page.get_by_text("AUDIT").last
    line.wait_for(timeout=30_000)
    audit_text = line.inner_text()
    assert audit_text.count("form:create_board") == 1            # the double-click sent once
    assert "Typed in the browser" in audit_text
    assert audit_text.count("form:create_tag") == 1 and "tag-from-the-browser" in audit_text
