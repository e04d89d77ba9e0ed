"""Notebook 40 in JupyterLab, driven through Debian's chromium: what the screen shows is what was sent, once.

Run by `make test-browser` only (it installs chromium, JupyterLab and Playwright and sets
TOOLKIT_BROWSER_TEST=1); skipped everywhere else, so `make test` never starts a browser.
Screenshots of each step land in the test's tmp_path (pytest prints it on failure).
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
import urllib.request
from pathlib import Path

import pytest

if not os.environ.get("TOOLKIT_BROWSER_TEST"):
    pytest.skip("browser test: run it with make test-browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

BOOK = Path(__file__).resolve().parents[2] / "notebooks" / "40_write_actions.ipynb"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# the machine is shared and slow: a kernel start, a sandbox start and the first fetches take a while
SLOW = 180_000
# JupyterLab asks in a toast whether to fetch its news; the toast covers the lower right of the page
NO_NEWS = {"fetchNews": "false", "checkForUpdates": False}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab on 127.0.0.1 serving a copy of notebook 40: (url of the notebook, token)."""
    shutil.copy(BOOK, tmp_path / BOOK.name)
    settings = tmp_path / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    port, token = free_port(), secrets.token_hex(16)
    log = (tmp_path / "jupyterlab.log").open("w")              # read it when the lab misbehaves
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         f"--LabApp.user_settings_dir={tmp_path / 'lab-settings'}",
         f"--LabApp.workspaces_dir={tmp_path / 'lab-workspaces'}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if os.geteuid() == 0 else [])],      # CI and this machine run as root
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
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
    yield f"http://127.0.0.1:{port}", token
    server.terminate()
    server.wait(timeout=30)
    log.close()


@pytest.fixture
def page(tmp_path):
    with sync_api.sync_playwright() as play:
        context = play.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000})
        yield context.pages[0] if context.pages else context.new_page()
        context.close()


def wait_for_idle_kernel(base: str, token: str, timeout: float = SLOW / 1000) -> None:
    """Until the notebook's kernel has started and answers: JupyterLab queues cells run before, but
    keystrokes sent while the page is still building are lost."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        request = urllib.request.Request(f"{base}/api/sessions", headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            sessions = json.load(answer)
        if any(s["kernel"]["execution_state"] == "idle" for s in sessions):
            return
        time.sleep(0.5)
    pytest.fail("the notebook's kernel was not idle within the time allowed")


def code_cell(page, source: str):
    """The code cell whose source contains `source`: found by what it runs, not by its position."""
    return page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=source))


def form_in(cell):
    """The form a cell displays: the widget output that has a Send button."""
    return cell.locator(".jp-OutputArea-output", has=cell.page.locator("button", has_text=re.compile("^Sen")))


def button(form, caption: str):
    # the caption follows an icon: matched whole, so that "Send" is not "Sent" or "Sending…"
    return form.locator("button", has_text=re.compile(rf"^\s*{caption}\s*$"))


def text_input(form, label: str):
    name = re.compile(rf"^\s*{re.escape(label)}( \*)?\s*$")
    return form.locator(".widget-text, .widget-textarea",
                        has=form.page.locator("label", has_text=name)).locator("input, textarea")


def shown_request(form) -> str:
    """The request text the form shows (the preview area's one <pre>)."""
    shown = form.locator("pre", has_text=re.compile(r"^(sent|preview):"))
    assert shown.count() == 1, f"one request shown, not {shown.count()}"
    return shown.text_content()          # not inner_text: a cell scrolled out of view renders no text


def body_of(request: str) -> dict:
    """The JSON body of a shown request: what follows the first blank line."""
    return json.loads(request.split("\n\n", 1)[1])


def shot(page, tmp_path: Path, name: str, locator=None) -> None:
    # the notebook scrolls inside its panel, so a full-page shot shows no more than the window
    (locator.screenshot if locator is not None else page.screenshot)(path=str(tmp_path / f"{name}.png"))


def test_two_forms_sent_from_the_page_agree_with_the_audit(lab, page, tmp_path):
    base, token = lab
    page.goto(f"{base}/lab/tree/{BOOK.name}?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
    wait_for_idle_kernel(base, token)
    shot(page, tmp_path, "1-opened")

    # run the setup, the gallery and the create_board form, not the cell that sends that form from code
    code_cell(page, "result = form.submit()").locator(".jp-InputArea-editor").click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^Run All Above Selected Cell")).click()

    board = form_in(code_cell(page, 'library.form("create_board")'))
    gallery = form_in(code_cell(page, "gallery = library.forms()"))
    board.scroll_into_view_if_needed(timeout=SLOW)
    board.locator("pre", has_text="preview:").wait_for(timeout=SLOW)
    shot(page, tmp_path, "2-board-form", board)
    assert '"title": "Quarterly review"' in shown_request(board)          # the preview the cell made

    # create_board: a new title, then a double-click on Send
    title = text_input(board, "title")
    title.fill("Typed in the browser")
    title.press("Tab")
    board.locator("pre", has_text="preview:").wait_for(state="detached", timeout=30_000)   # stale: gone
    button(board, "Send").dblclick()
    board.get_by_text("✓ sent asset_library.create_board").wait_for(timeout=60_000)
    board.locator("table").first.wait_for(timeout=30_000)
    shot(page, tmp_path, "3-board-sent", board)
    assert board.locator("table").count() == 1, "one answer shown: the double-click sent once"
    board_request = shown_request(board)
    assert board_request.startswith("sent:\nPOST ") and board_request.split("\n")[1].endswith("/boards")
    assert body_of(board_request) == {"title": "Typed in the browser",
                                      "description": "Cuts and stills for the Q3 review"}
    assert button(board, "Sent").is_disabled()
    board_id = board.locator("table tr", has=page.locator("th", has_text=re.compile(r"^id$"))).locator("td")

    # create_tag, picked in the gallery's dropdown as an analyst would
    gallery.scroll_into_view_if_needed()
    picker = gallery.get_by_label("Action", exact=True)
    labels = [re.sub(r"\s+", " ", text) for text in picker.locator("option").all_inner_texts()]  # nbsp too
    picker.select_option(index=next(i for i, text in enumerate(labels) if "· create_tag:" in text))
    gallery.locator("b", has_text=re.compile(r"create_tag$")).wait_for(timeout=30_000)   # its form's title
    name = text_input(gallery, "name")
    name.fill("tag-from-the-browser")
    name.press("Tab")
    button(gallery, "Send").click()
    gallery.get_by_text("✓ sent asset_library.create_tag").wait_for(timeout=60_000)
    gallery.locator("table").first.wait_for(timeout=30_000)
    shot(page, tmp_path, "4-tag-sent", gallery)
    tag_request = shown_request(gallery)
    assert tag_request.split("\n")[1].endswith("/tags")
    assert body_of(tag_request) == {"name": "tag-from-the-browser"}
    tag_id = gallery.locator("table tr", has=page.locator("th", has_text=re.compile(r"^id$"))).locator("td")

    # the audit, written by the kernel to a file next to the notebook (the kernel's working directory)
    code_cell(page, "audit.audit(ws)[").locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")                                   # a new cell below, in command mode
    page.keyboard.press("Enter")
    page.keyboard.insert_text('audit.audit(ws).to_json("audit.json", orient="records", date_format="iso")\n'
                              'print("audit written")')
    page.keyboard.press("Shift+Enter")
    # in the cell's output: its source says "audit written" too, and is on the screen first
    code_cell(page, 'to_json("audit.json"').locator(".jp-OutputArea").get_by_text(
        "audit written", exact=True).wait_for(timeout=60_000)
    shot(page, tmp_path, "5-audit")
    rows = json.loads((tmp_path / "audit.json").read_text())

    sent = [(r["source"], r["action"]) for r in rows]
    assert sent == [("form:create_board", "asset_library.create_board"),
                    ("form:create_tag", "asset_library.create_tag")], rows
    board_row, tag_row = rows
    assert json.loads(board_row["params"]) == body_of(board_request)      # the screen showed what went
    assert json.loads(tag_row["params"]) == body_of(tag_request)
    assert board_row["ok"] and board_row["status"] in (200, 201)
    assert tag_row["ok"] and tag_row["status"] in (200, 201)
    assert board_id.text_content().strip() == board_row["response_id"]
    assert tag_id.text_content().strip() == tag_row["response_id"]
