"""Data out (issue 45 item 4): one way to CSV, Excel and Parquet that joins lists, writes times Excel
holds and says their zone; a frame with zoned times and gaps that `.plot()` draws."""
from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

import toolkit as tk
from toolkit.errors import ToolkitError, ValidationError

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def frames():
    with tk.sandbox.start() as box, tk.Workspace() as ws:
        audiences = ws.connect("audience_platform", **box.credentials("audience_platform")).fetch(
            "audiences", progress=False)
        targets = ws.connect("translation", **box.credentials("translation")).fetch("targets", progress=False)
        yield audiences, targets


def test_csv_joins_lists_and_names_the_zone_of_its_times(frames, tmp_path):
    audiences, _ = frames
    path = tk.save(audiences, tmp_path / "audiences.csv")
    back = pd.read_csv(path, keep_default_na=False)
    assert "last_updated (UTC)" in back and "last_updated" not in back
    first = audiences.iloc[0]
    assert back.loc[0, "tags"] == "; ".join(first["tags"]) == "newsletter; email"     # not "['newsletter' 'email']"
    assert back.loc[0, "last_updated (UTC)"] == first["last_updated"].tz_convert(None).isoformat(sep=" ")
    amsterdam = pd.read_csv(tk.save(audiences, tmp_path / "a.csv", timezone="Europe/Amsterdam"))
    assert pd.Timestamp(amsterdam.loc[0, "last_updated (Europe/Amsterdam)"]) == \
        first["last_updated"].tz_convert("Europe/Amsterdam").tz_localize(None)


def test_excel_holds_every_column_its_times_in_the_zone_named(frames, tmp_path):
    audiences, targets = frames
    back = pd.read_excel(tk.save(targets, tmp_path / "targets.xlsx"), sheet_name=None)
    [(sheet, sheet_frame)] = back.items()
    assert sheet == "translation.targets" and len(sheet_frame) == len(targets)
    due = sheet_frame["due_date (UTC)"]
    assert due.isna().sum() == targets["due_date"].isna().sum()
    assert (due.dropna().reset_index(drop=True) == targets["due_date"].dropna().dt.tz_localize(None)
            .reset_index(drop=True)).all()
    lists = pd.read_excel(tk.save(audiences, tmp_path / "audiences.xlsx"))
    assert lists.loc[0, "tags"] == "newsletter; email"


def test_parquet_keeps_lists_zoned_times_and_is_read_back_by_pandas_and_duckdb(frames, tmp_path):
    import duckdb
    audiences, _ = frames
    path = tk.save(audiences, tmp_path / "audiences.parquet")
    back = pd.read_parquet(path)
    assert list(back.loc[0, "tags"]) == ["newsletter", "email"]
    assert str(back["last_updated"].dtype).endswith("UTC]")
    assert duckdb.connect().execute(f"select count(*) from '{path}'").fetchall() == [(len(audiences),)]


def test_a_file_there_a_format_unknown_or_not_a_frame_is_one_short_error(frames, tmp_path):
    audiences, _ = frames
    path = tk.save(audiences, tmp_path / "a.csv")
    with pytest.raises(ToolkitError, match=r"a.csv exists: nothing was written; pass overwrite=True"):
        tk.save(audiences, path)
    assert tk.save(audiences.head(1), path, overwrite=True) == path and len(pd.read_csv(path)) == 1
    with pytest.raises(ValidationError, match=r"write .csv, .xlsx or .parquet"):
        tk.save(audiences, tmp_path / "a.json")
    assert tk.save(audiences, tmp_path / "plain", format="csv").exists()
    with pytest.raises(ValidationError, match="not a time zone"):
        tk.save(audiences, tmp_path / "b.csv", timezone="Mars/Olympus")
    with pytest.raises(ValidationError, match="a DataFrame"):
        tk.save([1, 2], tmp_path / "c.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "plain"], "nothing half-written left"


# matplotlib's own note for each gap pandas hands it masked: a gap drawn, nothing of toolkit's
@pytest.mark.filterwarnings("ignore:Warning. converting a masked element to nan:UserWarning")
def test_plottable_times_draw_where_pandas_plot_of_zoned_times_with_gaps_fails(frames):
    _, targets = frames
    gaps = targets["date_completed"].isna()
    assert gaps.any() and not gaps.all()
    drawn = tk.plottable(targets)
    assert drawn.attrs["timezone"] == "UTC" and drawn["date_completed"].dt.tz is None
    assert drawn["date_completed"].isna().sum() == gaps.sum()
    assert (drawn["date_completed"].dropna() == targets["date_completed"].dropna().dt.tz_localize(None)).all()
    axes = drawn.plot(x="date_completed", y="word_count", kind="scatter")
    assert len(axes.collections[0].get_offsets()) == len(targets)
    drawn.plot()        # the whole frame, as the analyst's first try
    matplotlib.pyplot.close("all")
