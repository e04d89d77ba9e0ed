"""Notebooks in JupyterLab, driven through Debian's chromium: notebooks 00, 20 and 40 run whole with
one progress line per pull, a short error for a bad value and no "model not found" after a reload;
in notebook 40, what the screen shows is what was sent, once.

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

FOLDER = Path(__file__).resolve().parents[2] / "notebooks"
BOOK = FOLDER / "40_write_actions.ipynb"
BOOKS = [FOLDER / f"{name}.ipynb" for name in ("00_start_here", "20_translation_progress", "40_write_actions")]
# a progress line as a notebook keeps it: "translation.targets: 1/1 ids (100%) · rows=892, ... · 0.0 s"
PROGRESS = re.compile(r"^[a-z_]+\.[a-z_]+(__filtered)?: .* · [\d.]+ s$|^refresh: ")
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
    """A JupyterLab on 127.0.0.1 serving copies of the notebooks: (url of the server, token)."""
    for book in (BOOK, *BOOKS):
        shutil.copy(book, tmp_path / book.name)
    settings = tmp_path / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    # every cell in the page, not only those scrolled into view: outputs are looked for in all of them
    tracker = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
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
    # the plain record under the form, for the saved notebook, follows a send made on the page too
    record = code_cell(page, 'library.form("create_board")').locator("details summary")
    record.filter(has_text="toolkit form asset_library.create_board: sent 1 time(s)").wait_for(timeout=30_000)
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


def run_all(page) -> None:
    """Run every cell, and wait until each code cell has its number (none waiting, none running)."""
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^Run All Cells")).click()
    wait_for_prompts(page)


def wait_for_prompts(page, timeout: float = SLOW / 1000) -> None:
    deadline = time.monotonic() + timeout
    prompts: list[str] = []
    while time.monotonic() < deadline:
        prompts = [p.strip() for p in page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()]
        if prompts and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts):
            return
        time.sleep(1)
    pytest.fail(f"the cells did not all run: {prompts}")


def add_cell(page, source: str) -> None:
    """A new code cell at the end, run."""
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    before = cells.count()
    cells.last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")                        # a new cell below, in command mode
    page.wait_for_function(f"document.querySelectorAll('.jp-Notebook .jp-CodeCell').length > {before}")
    page.keyboard.press("Enter")
    page.locator(".jp-Notebook .jp-CodeCell .jp-InputArea-editor .cm-focused").wait_for(timeout=30_000)
    page.keyboard.insert_text(source)
    page.keyboard.press("Control+Enter")            # run in place: Shift+Enter would add an empty cell
    wait_for_prompts(page)


def saved(page, path: Path, wanted: str) -> dict:
    """Save from the page and read the file once it holds `wanted` (what the lab wrote, outputs and all)."""
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = path.read_text()
        if wanted in text:
            return json.loads(text)
        time.sleep(0.5)
    pytest.fail(f"{path.name} was not saved with {wanted!r}")


@pytest.mark.parametrize("name", [book.name for book in BOOKS])
def test_a_notebook_runs_with_one_progress_line_a_pull_a_short_error_and_reads_after_a_reload(
        lab, page, tmp_path, name):
    base, token = lab
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
    wait_for_idle_kernel(base, token)
    run_all(page)
    # notebook 40 closes its workspace at its end: the file is read again for it
    held = f'tk.Workspace("{Path(name).stem}.duckdb", read_only=True)' if name.startswith("40") else "ws"
    add_cell(page, f'print("loads:", len({held}.loads()))')
    add_cell(page, 'tm.fetch("targets", status=["DONE"])')
    shot(page, tmp_path, f"{name}-ran")

    # a bad value: the cell's line and one message, not a hundred frames; nothing was pulled for it
    error = code_cell(page, 'status=["DONE"]').locator(".jp-OutputArea-output")
    shown = error.inner_text().strip()
    assert "ValidationError: status=['DONE']: must be one of" in shown, shown
    assert len(shown.splitlines()) <= 4 and "concurrent" not in shown and "fetch.py" not in shown, shown

    # one progress line a pull, as the lab saved them (each load is one pull, one bar)
    book = saved(page, tmp_path / name, "ValidationError")
    outputs = [o for c in book["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    lines = ["".join(o["data"]["text/plain"]) for o in outputs
             if o["output_type"] == "display_data" and list(o.get("data", {})) == ["text/plain"]]
    progress = [line for line in lines if PROGRESS.match(line)]
    loads = int(re.search(r"loads: (\d+)", json.dumps(outputs)).group(1))
    assert progress and len(progress) == loads, (loads, progress)
    assert not [o for o in outputs if o["output_type"] == "display_data" and not o.get("data")], "empty outputs"

    # reloaded, the page draws every output again: no "model not found" where a form was
    page.reload()
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
    wait_for_idle_kernel(base, token)
    if name.startswith("40"):
        page.locator("button", has_text=re.compile(r"^\s*Sen")).first.wait_for(timeout=SLOW)
    time.sleep(3)                                   # widgets restored from the kernel draw themselves
    shot(page, tmp_path, f"{name}-reloaded")
    assert page.get_by_text("model not found").count() == 0
    assert page.get_by_text("Error displaying widget").count() == 0


def test_a_notebook_reopened_without_its_kernel_reads_what_its_forms_sent(lab, page, tmp_path):
    """The kernel gone, a form cannot be drawn again: its output still says what it sent."""
    base, token = lab
    name = BOOK.name
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
    wait_for_idle_kernel(base, token)
    run_all(page)
    saved(page, tmp_path / name, "sent 1 time(s)")
    ask = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/sessions", headers=ask), timeout=10) as answer:
        sessions = json.load(answer)
    for session in sessions:                        # the kernel and its widget models go
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/sessions/{session['id']}", method="DELETE",
                                                      headers=ask), timeout=30).close()
    page.reload()
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
    wait_for_idle_kernel(base, token)
    record = page.locator("details summary", has_text="toolkit form asset_library.create_board: sent 1 time(s)")
    record.first.wait_for(timeout=SLOW)
    record.first.click()                            # unfolded: the request that went, and what came back
    shown = record.first.locator("xpath=..").inner_text()
    assert '"title": "Quarterly review"' in shown and "→ ✓ id: " in shown, shown
    shot(page, tmp_path, "reopened-without-kernel")
