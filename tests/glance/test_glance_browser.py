"""The workspace browser's widget (toolkit.glance.browser), driven as its controls drive it and as the
page's grid tells the kernel (Perspective's sort, filter and columns traits): the views grid and its
search, a view's rows grid (every row held, search, what is shown as a DataFrame and a file), the column
summary recounted in SQL, the diff with all its rows and one rendering of empty values, the refresh
button's incremental pull and its last line, a snapshot's browser, one clock on the surface."""
from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pyarrow as pa
import pytest

import toolkit as tk
from toolkit.glance import grid as grids
from toolkit.glance.columns import column_summary
from toolkit.glance.grid import Grid
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


def test_the_views_grid_holds_every_view_on_the_wall_clock_and_filters_by_text(live):
    ws, _ = live
    browser = ws.browse()
    assert VIEW in set(browser.views["view"]) and browser.views_grid.rows == len(browser.views)
    row = browser.views.set_index("view").loc[VIEW]
    assert (row["rows"], row["loads"], row["budget h"], row["drift"], bool(row["filtered"])) == (8, 2, 24.0, 0, False)
    finished = ws.history(VIEW)["finished"].iloc[-1]
    hours = (datetime.now(UTC) - finished.to_pydatetime()).total_seconds() / 3600
    assert abs(row["confirmed h ago"] - hours) < 0.05          # this machine's clock, not the sandbox's
    assert row["last load"] == finished.tz_convert(datetime.now().astimezone().tzinfo).strftime("%Y-%m-%d %H:%M")
    browser.search_views("USERS")
    assert list(browser._picker.options) == [VIEW] and browser.views_grid.rows == 1
    browser.search_views("")
    assert len(browser._picker.options) == len(browser.views)


def test_a_views_rows_are_all_in_the_grid_and_what_it_shows_is_a_dataframe_and_a_file(live, tmp_path):
    ws, _ = live
    browser = ws.browse()
    browser._picker.value = VIEW                               # as the picker does
    assert browser.view == VIEW and browser.rows.rows == browser.rows.total == 8
    held = pa.Table.from_pandas(browser.rows.widget.table.view().to_pandas())
    assert "browse-bot" in held.column("username").to_pylist()
    browser.rows.widget.sort = [["username", "desc"]]          # as a header click tells the kernel
    browser.rows.widget.filter = [["username", "contains", "o"]]
    browser.rows.widget.columns = ["username", "email"]
    shown = browser.as_frame()
    expected = ws.sql("SELECT username, email FROM audience_platform.users WHERE username LIKE '%o%' "
                      "ORDER BY username DESC").df()
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected)
    assert f"{len(expected)} rows × 2 columns" in browser._rows_said.value
    for name in ("shown.csv", "shown.parquet"):
        said = browser.save(str(tmp_path / name))
        back = (pd.read_csv if name.endswith("csv") else pd.read_parquet)(tmp_path / name)
        assert list(back["username"]) == list(expected["username"]) and f"saved {len(expected)} rows" in said
    browser._path.value = str(tmp_path / "shown.xlsx")
    browser._save.click()
    assert "save as .csv or .parquet" in browser._rows_said.value
    browser._search.value = "browse-bot"                        # search over every column, by DuckDB
    assert browser.rows.rows == 1 and browser.summary.set_index("column").loc["username", "rows"] == 1


def test_the_column_summary_is_recounted_in_sql(live):
    ws, _ = live
    query = "SELECT * FROM audience_platform.users"
    summary = column_summary(ws, query).set_index("column")
    for column in ("username", "email", "created"):
        nulls, distinct, low, high = ws.sql(f'SELECT count(*) - count("{column}"), count(DISTINCT "{column}"), '
                                            f'CAST(min("{column}") AS VARCHAR), CAST(max("{column}") AS VARCHAR) '
                                            f"FROM audience_platform.users").fetchone()
        assert tuple(summary.loc[column, ["nulls", "distinct", "min", "max"]]) == (nulls, distinct, low, high)
    described = ws.sql(f"DESCRIBE {query}").df()
    assert list(summary["type"]) == list(described["column_type"]) and (summary["rows"] == 8).all()


def test_the_diff_holds_every_changed_row_and_one_empty_value(live):
    ws, _ = live
    browser = ws.browse()
    browser.select(VIEW)
    first, second = browser.loads
    assert (browser.before, browser.after) == (first, second)       # the last two, at first
    assert "1 added, 0 removed, 0 changed" in browser._diff_said.value and browser._kind.value == "added"
    assert "browse-bot" in browser.diff_grid.frame.to_string()
    browser._after.value = first                                    # one load against itself
    browser._before.value = second
    assert browser._kind.value == "removed" and "1 removed" in browser._diff_said.value
    many = pd.DataFrame({"id": range(278), "a": [None, 1.5] * 139, "b": [None, "x"] * 139})
    shown = Grid.of_frame(many)
    assert shown.describe() == "278 rows" and shown.rows == 278        # all of them, the grid scrolls
    held = shown.widget.table.view().to_pandas()
    assert held["a"].isna().sum() == held["b"].isna().sum() == 139     # empty is empty in every column
    assert not held["b"].isin(["None", "nan", "NaN"]).any()


def test_a_grid_past_its_cap_says_first_n_of_m(live, monkeypatch):
    ws, _ = live
    monkeypatch.setattr(grids, "CAP", 3)
    shown = Grid(ws, "SELECT * FROM audience_platform.users")
    assert (shown.rows, shown.total) == (3, 8) and shown.describe() == "first 3 of 8 rows"


def test_the_refresh_button_refreshes_incrementally_and_ends_with_what_changed(tmp_path):
    with tk.sandbox.start(emulators={"translation": available()["translation"]}, enforce_limits=False) as box, \
            tk.Workspace(tmp_path / "ws.duckdb") as ws:
        tm = ws.connect("translation", **box.credentials("translation"))
        tm.fetch("submissions")
        tm.fetch("targets")
        browser = ws.browse()
        browser.select("translation.targets")
        browser._button.click()
        assert browser.refreshed == [["translation.targets"]]
        done = ws.history("translation.targets")
        assert len(done) == 2 and len(browser.loads) == 2
        line = browser.status
        assert line.startswith("refresh done in ") and " s: " in line
        assert "translation.targets incremental" in line and "translation.submissions incremental" in line
        assert line == browser._status.value.removeprefix("<code>").removesuffix("</code>")


def test_a_snapshot_has_no_refresh_no_freshness_and_one_title(live, tmp_path):
    ws, _ = live
    ws.export(tmp_path / "snap.duckdb", history=True)
    with tk.open_snapshot(tmp_path / "snap.duckdb") as snap:
        browser = snap.browse()
        assert browser._button.disabled
        assert not {"confirmed h ago", "budget h", "past budget"} & set(browser.views.columns)
        browser.select(VIEW)
        assert list(browser.changes["added"]) == [7, 1] and browser.rows.rows == 8
        assert "compared in the workspace it came from" in browser._diff_said.value
        bundle = browser._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        html = bundle["text/html"]
        assert VIEW in html and "<script" not in html and html.count(browser.title) == 1
        assert "None" not in html and "NaN" not in html and "confirmed" not in html
        heading = browser.widget.children[0].value
        assert heading.count(browser.title) == 1 and "this machine&#x27;s clock" in heading
        assert "pw-browse-9e2b" not in html + browser.summary.to_string()


def test_a_notebook_keeps_the_views_table_beside_the_widget(live, monkeypatch):
    """Reopened without its kernel, JupyterLab draws no widget: the table written beside it stands."""
    import IPython.display
    ws, _ = live
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *items, **options: shown.extend(items))
    browser = ws.browse()
    browser._ipython_display_()
    static, widget = shown
    assert widget is browser.widget and "toolkit-live" in widget._dom_classes
    html = static["text/html"]
    assert "toolkit-static" in html and "table" in html and VIEW in html
    assert ":has(+ .jp-OutputArea-child .toolkit-live)" in html and "{display: none}" in html


def test_asked_before_a_view_is_picked_or_given_a_statement_it_says_so(live, tmp_path):
    """What once was a ValueError, and an AttributeError on None for a query that holds no statement."""
    import duckdb

    from toolkit.glance.reading import selected
    ws, _ = live
    browser = ws.browse()
    with pytest.raises(tk.ValidationError, match=r"pick a view first: browser.select"):
        browser.save(str(tmp_path / "rows.csv"))
    with pytest.raises(tk.WorkspaceError, match="nothing to show: '-- the views' holds no statement"):
        selected(duckdb.connect(), "-- the views")
    assert selected(ws, "SELECT 42 AS answer").fetchall() == [(42,)]
