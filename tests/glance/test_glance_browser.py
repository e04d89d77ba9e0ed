"""The workspace browser's widget (toolkit.glance.browser), driven as its controls drive it: the views
table and its sort, picking a view (its rows and types, its loads' plot), the diff shown for two loads
picked, the refresh button's pull through the workspace's connection, and the static HTML summary."""
from __future__ import annotations

import pytest

import toolkit as tk
from toolkit.sandbox import available

SERVICE = "audience_platform"
VIEW = "audience_platform.users"


@pytest.fixture
def live(tmp_path):
    """A workspace with two loads of the users (one created between them) and its sandbox, connected."""
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as box, \
            tk.Workspace(tmp_path / "ws.duckdb") as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        cdp.pull("users")
        cdp.call("create_user", username="browse-bot", email="browse.bot@example.com", password="pw-browse-9e2b")
        cdp.pull("users")
        yield ws, cdp


def test_the_views_table_holds_every_view_and_sorts(live):
    ws, _ = live
    browser = ws.browse()
    assert VIEW in set(browser.views["view"])
    row = browser.views.set_index("view").loc[VIEW]
    assert (row["rows"], row["loads"], row["budget h"], row["drift"], bool(row["filtered"])) == (8, 2, 24.0, 0, False)
    browser._sort.value = "rows"
    assert list(browser.sorted_views()["rows"]) == sorted(browser.views["rows"], reverse=True)
    assert VIEW in browser._table.value and "<table" in browser._table.value


def test_picking_a_view_shows_its_rows_types_and_loads(live):
    ws, _ = live
    browser = ws.browse()
    browser._picker.value = VIEW                               # as the dropdown does
    assert browser.view == VIEW
    assert "browse-bot" in browser._rows.value and "VARCHAR" in browser._rows.value
    assert list(browser.changes["added"]) == [7, 1] and bytes(browser._plot.value).startswith(b"\x89PNG")
    assert browser.loads == list(ws.history(VIEW)["load_id"])


def test_two_loads_picked_show_their_diff(live):
    ws, _ = live
    browser = ws.browse()
    browser.select(VIEW)
    first, second = browser.loads
    assert (browser.before, browser.after) == (first, second)     # the last two, at first
    assert "1 added, 0 removed, 0 changed" in browser._diff.value and "browse-bot" in browser._diff.value
    browser._after.value = first                                   # one load against itself
    browser._before.value = second
    assert (browser.before, browser.after) == (second, first)
    assert "1 removed" in browser._diff.value and "browse-bot" in browser._diff.value


def test_the_refresh_button_pulls_the_view_through_the_connection(live):
    ws, cdp = live
    browser = ws.browse()
    browser.select(VIEW)
    cdp.call("create_user", username="later-bot", email="later.bot@example.com", password="pw-later-4c8d")
    browser._button.click()
    assert browser.refreshed == [[VIEW]]
    assert len(browser.loads) == 3 and "later-bot" in browser._rows.value
    assert browser.views.set_index("view").loc[VIEW, "loads"] == 3


def test_a_read_only_workspace_or_a_snapshot_has_no_refresh_and_a_static_summary(live, tmp_path):
    ws, _ = live
    ws.export(tmp_path / "snap.duckdb", history=True)
    with tk.open_snapshot(tmp_path / "snap.duckdb") as snap:
        browser = snap.browse()
        assert browser._button.disabled
        browser.select(VIEW)
        assert list(browser.changes["added"]) == [7, 1] and "browse-bot" in browser._rows.value
        bundle = browser._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert VIEW in bundle["text/html"] and "<script" not in bundle["text/html"]
        assert "pw-browse-9e2b" not in bundle["text/html"] + browser._rows.value + browser._diff.value
