"""Notebook 70 in JupyterLab, driven through Debian's chromium: the browser over the demo workspace.

Views filtered by text; audience_platform.audiences picked in the typed picker; its rows grid scrolled
to its last row and its last column and sorted by a header click; its column summary; the diff of the
demo's first and last loads of translation.targets (278 changed rows) scrolled to its last row; the
refresh button's incremental load and its last line; the notebook saved and reopened without a kernel,
where the views table shows. Screenshots go to $TOOLKIT_SHOTS (a folder outside the repository;
the test's temporary folder by default); the last screen of the live widget is docs/browser.png (the
README's picture).

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

import toolkit as tk  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "notebooks" / "70_browse.ipynb"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SLOW = 240_000
AUDIENCES = "audience_platform.audiences"


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


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TOOLKIT_SHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def scroll_to_end(grid, down: bool = True, right: bool = False) -> None:
    """Scroll a Perspective grid's table (in its shadow root) to its last row and/or last column."""
    grid.locator("regular-table").evaluate(
        "(table, [down, right]) => { if (down) table.scrollTop = table.scrollHeight;"
        " if (right) table.scrollLeft = table.scrollWidth; table.dispatchEvent(new Event('scroll')); }",
        [down, right])
    time.sleep(1.5)


def cells(grid, column: int) -> list[str]:
    """The text of one column's cells in the rows a grid draws now (its visible window)."""
    return grid.locator("regular-table tbody tr").evaluate_all(
        f"(rows) => rows.map(r => (r.querySelectorAll('td, th')[{column}] || {{}}).textContent || '')")


def until(check, timeout: float = 30.0):
    """Poll `check` until it gives something true (a grid draws after its data arrives)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def scroll_to_column(grid, name: str) -> int:
    """Scroll a grid right until a column's header is drawn (columns are drawn as they come into
    view); its position among the headers drawn."""
    for _ in range(40):
        drawn = headers(grid)
        if name in drawn:
            return drawn.index(name)
        grid.locator("regular-table").evaluate("t => { t.scrollLeft += 250; t.dispatchEvent(new Event('scroll')); }")
        time.sleep(0.7)
    raise AssertionError(f"{name} never drawn: {headers(grid)}")


def headers(grid) -> list[str]:
    """The column headers a grid draws now: the header row with the most names in it."""
    rows = grid.locator("regular-table").evaluate(
        "t => Array.from(t.querySelectorAll('thead tr')).map(r => Array.from(r.children).map(c => c.textContent.trim()))")
    return max(rows, key=lambda row: sum(bool(name) for name in row), default=[])


@pytest.mark.timeout(1200)
def test_the_browser_in_jupyterlab(lab, tmp_path):
    base, token = lab
    out = shots(tmp_path)
    demo_ws = tmp_path / "demo-output" / "toolkit-demo.duckdb"
    with tk.Workspace(demo_ws, read_only=True) as ws:
        loads = list(ws.history("translation.targets")["load_id"])
        diff = ws.diff("translation.targets", loads[0], loads[5])
        columns = list(ws.sql(f"SELECT * FROM {AUDIENCES} LIMIT 0").df().columns)
        audiences = ws.sql(f"SELECT count(*) FROM {AUDIENCES}").fetchone()[0]
    last_changed = str(diff.changed["target_id"].iloc[-1])
    with sync_api.sync_playwright() as play:
        context = play.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1300})
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(f"{base}/lab/tree/{BOOK.name}?token={token}")
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
        time.sleep(5)                                   # the kernel starts; keystrokes before are lost
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name=re.compile("^Run All Cells")).click()
        widget = page.locator(".jp-OutputArea-output", has=page.get_by_role("button", name="Refresh")).first
        widget.locator("perspective-viewer").first.wait_for(timeout=SLOW)
        page.locator(".toolkit-live").nth(1).wait_for(state="attached", timeout=SLOW)   # the snapshot's, last
        time.sleep(3)
        assert page.locator(".jp-OutputArea-child:has(.toolkit-static)").first.is_hidden()   # live: widget only
        try:
            widget.scroll_into_view_if_needed()

            # the views, filtered by text
            views = widget.locator("perspective-viewer").first
            widget.get_by_placeholder("filter views by name").fill("memberships")
            widget.get_by_placeholder("filter views by name").press("Enter")
            def kept() -> list[str]:
                found = [c for c in cells(views, 0) if c.strip()]
                return found if found and all("memberships" in c for c in found) else []

            assert until(kept, 60), cells(views, 0)
            widget.screenshot(path=str(out / "1-views-filtered.png"))
            widget.get_by_placeholder("filter views by name").fill("")
            widget.get_by_placeholder("filter views by name").press("Enter")

            # a view picked by typing its name: every row and every column reachable, sorted by a header
            picker = widget.get_by_placeholder("pick a view (type to search)")
            picker.fill(AUDIENCES)
            picker.press("Enter")
            rows = widget.locator("perspective-viewer").nth(1)             # views, rows, diff
            drawn = until(lambda: columns[0] in headers(rows) and headers(rows), 60)
            assert drawn and drawn == columns[:len(drawn)], (drawn, headers(rows))
            scroll_to_end(rows, down=True)
            scroll_to_column(rows, columns[-1])                               # the last column reached
            widget.screenshot(path=str(out / "2-rows-scrolled.png"))
            rows.locator("regular-table").evaluate("t => { t.scrollTop = 0; t.scrollLeft = 0; }")
            time.sleep(1)
            position = scroll_to_column(rows, "profile_count")
            rows.locator("regular-table thead th").filter(has_text=re.compile(r"^\s*profile_count\s*$")).first.click()
            time.sleep(3)
            counts = [int(c.replace(",", "")) for c in cells(rows, position) if c.strip()]
            assert counts and (counts == sorted(counts) or counts == sorted(counts, reverse=True)), counts
            widget.screenshot(path=str(out / "3-rows-sorted.png"))
            scroll_to_end(rows)
            assert len(counts) < audiences or counts[-1] in (min(counts), max(counts))

            # the column summary
            widget.get_by_role("tab", name="columns").click()
            summary = widget.locator("table.toolkit-columns")
            summary.wait_for(timeout=30_000)
            text = summary.inner_text()
            assert "profile_count" in text and "BIGINT" in text and "distinct" in text
            widget.screenshot(path=str(out / "4-columns.png"))

            # the diff of the demo's first and last loads of targets: 278 changed, scrolled to the last
            picker.fill("translation.targets")
            picker.press("Enter")
            widget.get_by_role("tab", name="diff").click()
            before = widget.locator(".widget-dropdown", has=page.locator("label", has_text=re.compile("^before$")))
            after = widget.locator(".widget-dropdown", has=page.locator("label", has_text=re.compile("^after$")))
            before.locator("option").first.wait_for(state="attached", timeout=60_000)
            before.locator("select").select_option(index=0)
            after.locator("select").select_option(index=5)
            said = widget.locator("p", has_text=f"{len(diff.changed)} changed")
            said.wait_for(timeout=60_000)
            assert f"changed: {len(diff.changed)} rows, every one in the grid" in said.inner_text()
            grid = widget.locator("perspective-viewer").nth(2)
            grid.locator("regular-table tbody tr").first.wait_for(timeout=60_000)
            time.sleep(2)
            scroll_to_end(grid)
            assert until(lambda: last_changed in [c.replace(",", "") for c in cells(grid, 0)]), cells(grid, 0)   # the last row
            widget.screenshot(path=str(out / "5-diff-last-row.png"))

            # the refresh button: an incremental load, a last line with what changed and how long
            widget.get_by_role("button", name="Refresh").click()
            line = widget.locator("code", has_text="refresh done in")
            line.wait_for(timeout=SLOW)
            said = line.inner_text()
            assert re.search(r"refresh done in [\d.]+ s: .*translation\.targets incremental \(\d+ added, \d+ changed", said)
            widget.get_by_role("tab", name="loads").click()
            time.sleep(1)
            widget.screenshot(path=str(out / "6-refreshed.png"))
            widget.screenshot(path=str(ROOT / "docs" / "browser.png"))

            # saved, the kernel shut down, reopened: the views table stands where the widget cannot draw
            page.keyboard.press("Control+s")
            time.sleep(3)
            page.get_by_role("menuitem", name="Kernel", exact=True).click()
            page.get_by_role("menuitem", name=re.compile("^Shut Down Kernel")).click()
            time.sleep(3)
            page.reload()
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=SLOW)
            static = page.locator(".toolkit-static table.toolkit-views").first
            static.wait_for(timeout=60_000)
            static.scroll_into_view_if_needed()
            assert AUDIENCES in static.inner_text()
            page.screenshot(path=str(out / "7-reopened-without-kernel.png"))
        finally:                                        # what the page showed, whatever happened
            page.screenshot(path=str(out / "last.png"), full_page=True)
        context.close()
