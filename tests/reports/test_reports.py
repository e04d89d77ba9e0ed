"""The reports over a demo-like workspace: the demo's pulls, acts and clock steps on a scale-1 sandbox
(built once per module, without the asset library's client-side rate budget so it takes seconds).

Every report answers a DataFrame with what the demo's data must show; every figure is titled and has
labelled axes; the HTML report embeds its PNGs, needs no network and holds no secret; a snapshot
exported with history gives the same report as the workspace. The sandbox's virtual clock reaches a
report only as `now=` / `as_of=`, never guessed from a loopback base URL. The demo's secret check
reads the tables of the DuckDB files it wrote.
"""
from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import urlsplit

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from matplotlib.figure import Figure

import toolkit as tk
from toolkit import cli, demo, reports
from toolkit.http.session import RateBudget, Transport
from toolkit.reports import assets, audiences, media, plots, source, translation


@pytest.fixture(scope="module")
def box():
    with tk.sandbox.start(scale=1, enforce_limits=False) as running:
        yield running


@pytest.fixture(scope="module")
def pulled_at() -> dict:
    """The sandbox's clock at each of the demo's loads (load id → moment), as populate records it."""
    return {}


@pytest.fixture(scope="module")
def ws(box, pulled_at, tmp_path_factory):
    workspace = tk.Workspace(tmp_path_factory.mktemp("reports") / "demo.duckdb")
    # the sandbox enforces no limit here
    clients = {service: workspace.connect(service, **box.credentials(service), transport=Transport(
        budget=RateBudget(None, 10))) for service in demo.SERVICES}
    assert demo.populate(workspace, box, log=None, clients=clients, as_of=pulled_at)
    yield workspace
    workspace.close()


@pytest.fixture(scope="module")
def snapshot(ws, tmp_path_factory):
    path = ws.export(tmp_path_factory.mktemp("snap") / "snapshot.duckdb", history=True)
    with tk.open_snapshot(path) as snap:
        yield snap


def check_figure(figure: Figure) -> None:
    """Titled, every data axes labelled, renders to PNG."""
    assert isinstance(figure, Figure)
    axes = [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]
    assert axes
    assert axes[0].get_title(loc="left")
    for ax in axes:
        assert ax.get_title(loc="left"), "every panel has a title"
        if ax.has_data():
            assert ax.get_xlabel().strip()
            # a panel sharing its y axis with a labelled one needs no label of its own
            assert any(other.get_ylabel().strip() for other in ax.get_shared_y_axes().get_siblings(ax))
    assert plots.png(figure).startswith(b"\x89PNG")


def test_audience_sizes_tags_and_providers(ws):
    sizes = audiences.sizes(ws)
    assert len(sizes) >= 30 and sizes["profile_count"].is_monotonic_decreasing
    assert "vip-event-2027" in set(sizes["id"])                       # the demo's import arrived
    tags = audiences.tag_counts(ws)
    assert {"tag", "system tag"} == set(tags["kind"])
    assert set(audiences.providers(ws)["provider"]) >= {"manual", "analytics", "warehouse", "import"}
    check_figure(audiences.plot_sizes(sizes))
    check_figure(audiences.plot_tags(tags))


def test_audience_overlap_changes_and_profiles(ws):
    matrix = audiences.overlap(ws, top=12)
    assert matrix.shape == (12, 12)
    assert (matrix.to_numpy() == matrix.to_numpy().T).all()
    assert (matrix.to_numpy().diagonal() >= matrix.to_numpy().max(axis=1)).all()  # nobody shares more than all
    check_figure(audiences.plot_overlap(matrix))
    changes = audiences.membership_changes(ws)
    webinar = changes.set_index("audience_id").loc["webinar-attendees"]
    assert webinar["gained"] > 0 and webinar["after"] == webinar["before"] + webinar["gained"] - webinar["lost"]
    assert changes.set_index("audience_id").loc["vip-event-2027", "before"] == 0
    check_figure(audiences.plot_membership_changes(changes))
    counts = audiences.audiences_per_profile(ws)
    assert counts["profiles"].sum() == 100                            # the sandbox's example profiles
    check_figure(audiences.plot_audiences_per_profile(counts))


def test_translation_status_funnel_and_progress(ws):
    pivot = translation.status_by_language(ws)
    targets = ws.sql("SELECT count(*) FROM translation.targets").fetchone()[0]
    assert pivot.to_numpy().sum() == targets
    check_figure(translation.plot_status_by_language(pivot))
    funnel = translation.phase_funnel(ws)
    assert funnel["stage"].iloc[0] == "queued" and funnel["stage"].iloc[-1] == "done"
    assert funnel["reached"].is_monotonic_decreasing and funnel["now"].sum() == funnel["reached"].iloc[0]
    check_figure(translation.plot_phase_funnel(funnel))
    progress = translation.percent_complete(ws)
    assert progress["percent"].dropna().between(0, 100).all()
    assert (progress["done"] + progress["open"] == progress["targets"]).all()
    check_figure(translation.plot_percent_complete(progress))


def test_overdue_and_at_risk_measure_against_the_sandbox_clock(ws, box):
    now = source.translation_now(ws, box.clock.now())
    assert now == pd.Timestamp(box.clock.now())
    late = translation.overdue(ws, now=box.clock.now())
    assert late.attrs["now"] == now
    assert set(late["flag"]) <= {"overdue", "at risk"} and len(late)
    assert (late.loc[late["flag"] == "overdue", "hours_left"] < 0).all()
    risky = late[late["flag"] == "at risk"]
    assert risky["hours_left"].between(0, translation.AT_RISK_HOURS).all()
    earlier = translation.overdue(ws, now=now - pd.Timedelta(days=30))
    assert (earlier["flag"] == "overdue").sum() < (late["flag"] == "overdue").sum()
    check_figure(translation.plot_overdue(late, translation.percent_complete(ws, now=now)))


def test_reports_measure_by_the_services_clock_that_each_load_recorded(ws, box, pulled_at):
    """Each load records the service's Date header, and the sandbox sends its virtual clock: with no
    `now=`, the reports measure against that, not this machine's clock (211 overdue where the sandbox
    counts 40, before), and say so."""
    pulled = source.loads(ws, "translation", "targets")
    assert urlsplit(pulled["base_url"].iloc[-1]).hostname == "127.0.0.1"
    assert list(pulled["service_clock"].map(source.utc)) == [pulled_at[i] for i in pulled["load_id"]]
    assert source.clock_of(ws) == (pd.Timestamp(box.clock.now()), source.SERVICE_CLOCK)
    late = translation.overdue(ws)
    assert (late.attrs["now"], late.attrs["clock"]) == (pd.Timestamp(box.clock.now()), "service")
    pd.testing.assert_frame_equal(late, translation.overdue(ws, now=box.clock.now()))
    assert translation.overdue(ws, now=box.clock.now()).attrs["clock"] == "given"
    pd.testing.assert_frame_equal(translation.burndown(ws), translation.burndown(ws, as_of=pulled_at))
    finished = source.utc(pulled["finished"].iloc[-1])
    by_this_machine = translation.overdue(ws, now=finished)
    assert (by_this_machine["flag"] == "overdue").sum() > (late["flag"] == "overdue").sum()


def test_a_load_without_the_services_clock_is_dated_by_ours_and_says_so(tmp_path):
    """A service that sends no Date (or a file of an older toolkit): this machine's clock at the end."""
    with tk.Workspace(tmp_path / "no-date.duckdb") as plain:
        with plain.load("translation", "http://127.0.0.1:9/PD", "targets", {}, ("id",)) as load:
            load.write(pa.table({"id": [1], "status": ["READY"], "current_phase": pa.array([None], pa.string())}))
        finished = source.utc(plain.loads()["finished"].iloc[-1])
        assert source.clock_of(plain) == (finished, source.OUR_CLOCK)
        assert list(translation.burndown(plain)["as_of"]) == [finished]
        page = reports.write_report(plain, tmp_path / "r.html").read_text()
    assert "by this machine&#x27;s clock when the latest load finished" in page


def test_burndown_follows_the_loads_dated_by_the_sandbox_clock(ws, box, pulled_at):
    burndown = translation.burndown(ws, as_of=pulled_at)
    assert len(burndown) == demo.STEPS + 1                            # the first pull and one per step
    steps = [pd.Timestamp(box.clock.now()) - pd.Timedelta(hours=demo.HOURS * (demo.STEPS - k))
             for k in range(demo.STEPS + 1)]
    assert list(burndown["as_of"]) == steps                           # the clock at each pull, not the data's
    assert burndown["open"].iloc[-1] < burndown["open"].iloc[0]
    check_figure(translation.plot_burndown(burndown))


def test_word_counts_and_quotes(ws):
    words = translation.word_counts(ws)
    assert (words[["repetitions", "exact", "fuzzy", "no_match"]].sum(axis=1) == words["word_count"]).all()
    check_figure(translation.plot_word_counts(words))
    money = translation.quotes(ws)
    assert (money["approved"] <= money["quotes"]).all()
    assert (money["amount_approved"] <= money["amount_quoted"]).all()
    check_figure(translation.plot_quotes(money))


def test_asset_library_reports(ws):
    trees = assets.assets_per_board_tree(ws)
    boards = ws.sql("SELECT count(*) FROM asset_library.boards").fetchone()[0]
    assert trees["boards"].sum() == boards
    check_figure(assets.plot_assets_per_board_tree(trees))
    usage = assets.tag_usage(ws)
    assert set(usage["tag"]) >= set(ws.sql("SELECT name FROM asset_library.tags").df()["name"])
    check_figure(assets.plot_tag_usage(usage))
    rates = assets.custom_field_fill_rate(ws)
    assert len(rates) == ws.sql("SELECT count(*) FROM asset_library.custom_fields").fetchone()[0]
    assert rates["percent"].between(0, 100).all() and rates["filled"].gt(0).any()
    check_figure(assets.plot_custom_field_fill_rate(rates))
    outcomes = assets.imports(ws)
    failed = outcomes[outcomes["status"] == "failed"]
    assert set(failed["error_type"]) >= {"SOURCE_URL_BLOCKED", "SOURCE_FILE_NOT_FOUND", "SOURCE_URL_INVALID"}
    check_figure(assets.plot_imports(outcomes))


def test_media_review_teams_against_limits(ws):
    usage = media.team_usage(ws)
    assert len(usage) and usage["storage_percent"].notna().all()
    assert usage["member_percent"].isna().any() and usage["member_percent"].notna().any()
    check_figure(media.plot_team_usage(usage))


def test_write_report_is_self_contained_and_holds_no_secret(ws, box, pulled_at, tmp_path):
    path = reports.write_report(ws, tmp_path / "report.html")
    page = path.read_text()
    assert f"measured against {box.clock.now():%d %b %Y %H:%M} UTC, by the service&#x27;s clock" in page
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) >= 15
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert "could not be drawn" not in page
    assert not re.search(r'(src|href)="https?:', page) and "<script" not in page   # nothing fetched
    for heading in ("Audiences", "Translation progress", "Asset library", "Media review", "Burndown"):
        assert f">{heading}</h" in page
    secrets = [s for s in box.secrets() if len(s) >= 6]
    assert not [s for s in secrets if s in page]


def test_reports_read_a_snapshot_with_history_like_the_workspace(ws, snapshot, pulled_at):
    pd.testing.assert_frame_equal(translation.burndown(snapshot), translation.burndown(ws))
    pd.testing.assert_frame_equal(translation.burndown(snapshot, pulled_at), translation.burndown(ws, pulled_at))
    pd.testing.assert_frame_equal(audiences.membership_changes(snapshot), audiences.membership_changes(ws))
    assert source.translation_now(snapshot) == source.translation_now(ws)
    pd.testing.assert_frame_equal(translation.overdue(snapshot), translation.overdue(ws))
    pd.testing.assert_frame_equal(assets.assets_per_board_tree(snapshot), assets.assets_per_board_tree(ws))


def test_reports_say_what_is_missing_instead_of_failing(tmp_path):
    with tk.Workspace(tmp_path / "empty.duckdb") as empty:
        assert translation.burndown(empty).empty and audiences.overlap(empty).empty
        assert assets.imports(empty).empty and media.team_usage(empty).empty
        check_figure(translation.plot_burndown(translation.burndown(empty)))
        page = reports.write_report(empty, tmp_path / "empty.html").read_text()
    assert "could not be drawn" not in page and page.count("data:image/png;base64,") >= 15
    # a caption of nothing says what is missing, not a count of nothing
    for heading in ("Targets by status and target language", "Percent complete per submission with open targets",
                    "Overdue and at-risk targets", "Overdue and at-risk by language and project", "Burndown"):
        assert _caption(page, heading).startswith("No targets were pulled."), heading


def test_the_funnel_knows_each_targets_workflow_without_the_phases_resource(box, tmp_path):
    with tk.Workspace(tmp_path / "targets-only.duckdb") as only:
        client = only.connect("translation", **box.credentials("translation"))
        client.fetch("targets")
        client.fetch("workflows")                  # the phases of each workflow, in order
        assert not source.has(only, "translation", "phases")
        targets = translation.progress._targets_with_phase(only)
        assert len(targets) > 0 and targets["workflow"].notna().all(), "the targets' workflow_name was not read"
        # a target in a named phase is at that phase's step of its workflow, not 1 for want of one
        in_phase = targets[targets["current_phase"].notna()]
        assert len(in_phase) > 0 and (in_phase["step"] <= in_phase["last_step"]).all()
        assert (targets["last_step"] > 1).any()


SECRET = "pw_Secret-Value-42"


def test_the_demo_finds_a_secret_in_a_table_whose_bytes_do_not_show_it(tmp_path):
    leaky, clean, page = tmp_path / "leaky.duckdb", tmp_path / "clean.duckdb", tmp_path / "report.html"
    for path, word in ((leaky, SECRET), (clean, "nothing-to-see")):
        with duckdb.connect(str(path)) as con:
            con.execute("CREATE TABLE notes AS SELECT 'row ' || range || ' password ' || ? AS note "
                        "FROM range(50000)", [word])
    assert SECRET.encode() not in leaky.read_bytes()            # DuckDB compressed it out of sight
    page.write_text("<p>nothing</p>")
    assert demo._leaks([SECRET], (leaky, clean, page)) == ["leaky.duckdb: main.notes"]
    assert demo._leaks([SECRET], (clean, page)) == []


def test_the_demo_finds_secrets_in_nested_and_json_text_in_views_and_escaped_in_html(tmp_path):
    path, page = tmp_path / "nested.duckdb", tmp_path / "report.html"
    listed, quoted, viewed, marked = "it's-a\\secret", 'say "pw-quoted-1"', "pw-view-secret-1", "pw<Secret&43"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE listed AS SELECT [?, 'x'] AS tags, {'k': 'v'} AS s", [listed])
        con.execute("CREATE TABLE doc AS SELECT to_json({'note': ?}) AS body", [quoted])
        con.execute("CREATE TABLE numbers AS SELECT 1 AS n")
        con.execute("CREATE SCHEMA other")   # the secret is only in the view's rows, not in any table
        con.execute("CREATE VIEW other.shown AS SELECT 'pw-' || 'view-secret-' || n AS s FROM main.numbers")

    def tables(secret: str) -> list[str]:
        return [where for where in demo._leaks([secret], (path,)) if ": " in where]

    assert tables(listed) == ["nested.duckdb: main.listed"]        # a list's text escapes ' and \\
    assert tables(quoted) == ["nested.duckdb: main.doc"]           # JSON escapes "
    assert tables(viewed) == ["nested.duckdb: other.shown"]
    assert tables("pw-absent-secret") == []
    page.write_text(f"<td>{html.escape(marked)}</td>")
    assert demo._leaks([marked], (page,)) == ["report.html"]


def test_text_from_the_services_is_never_taken_for_a_formula(tmp_path):
    """A tag `$\\frac{$ price $x^$` made write_report raise matplotlib's mathtext ValueError, and no
    report was written; two dollar signs drew the text between them as a formula."""
    tags = pd.DataFrame({"kind": ["tag", "tag", "system tag"],
                         "tag": [r"$\frac{$ price $x^$", "costs $5 or $6", "hidden"],
                         "audiences": [3, 2, 1], "profiles": [30, 20, 10]})
    figure = audiences.plot_tags(tags)
    assert plots.png(figure).startswith(b"\x89PNG")
    labels = {t.get_text(): t for ax in figure.axes for t in ax.get_yticklabels()}
    assert {r"$\frac{$ price $x^$", "costs $5 or $6"} <= set(labels)
    assert not any(t.get_parse_math() for t in labels.values())
    with tk.Workspace(tmp_path / "tags.duckdb") as held:
        with held.load("audience_platform", "http://127.0.0.1:9/api", "audiences", {}, ("id",)) as load:
            load.write(pa.table({"id": ["a", "b"], "name": ["$x^$ fans", "b"], "tags": [[r"$\frac{$ price $x^$"],
                                 ["costs $5 or $6"]], "system_tags": [[], []], "profile_count": [3, 4],
                                 "provider": ["manual", "import"], "hidden": [False, False]}))
        page = reports.write_report(held, tmp_path / "tags.html").read_text()
    for part in ("Tags and system tags",):
        drawn = page.split(f">{part}</h3>")[1].split("<h3>")[0]
        assert "data:image/png;base64," in drawn and "class=note" not in drawn


def test_a_figure_that_fails_to_draw_is_a_short_note_and_the_rest_is_written(ws, tmp_path, monkeypatch):
    class Broken(plots.ReportFigure):
        def draw(self, renderer):
            raise RuntimeError("the renderer ran out of memory\n" + "a long traceback line\n" * 50)

    real = audiences.plot_sizes
    monkeypatch.setattr(audiences, "plot_sizes", lambda sizes: (real(sizes), Broken())[1])
    page = reports.write_report(ws, tmp_path / "report.html").read_text()
    notes = re.findall(r"<p class=note>(.*?)</p>", page)
    assert notes == ["The figure could not be drawn; its table follows: RuntimeError: the renderer ran out "
                     "of memory"]
    assert page.count("data:image/png;base64,") >= 14 and "a long traceback line" not in page
    sizes = page.split(">Audience sizes</h3>")[1].split("<h3>")[0]
    assert "<table class=data>" in sizes, "the part's table is still there"


def test_a_capped_plot_says_what_it_shows_of_how_many(ws):
    """"Percent complete" showed 25 of 79 open submissions without saying so."""
    progress = translation.percent_complete(ws)
    open_ones = int((progress["open"] > 0).sum())
    assert open_ones > 3
    title = translation.plot_percent_complete(progress, limit=3).axes[0].get_title(loc="left")
    assert title == f"Percent complete per submission with open targets\nthe 3 soonest due of {open_ones}"
    whole = translation.plot_percent_complete(progress, limit=open_ones).axes[0].get_title(loc="left")
    assert whole == "Percent complete per submission with open targets"
    late = translation.overdue(ws)
    many = late["submission_id"].nunique()
    assert many > 2
    title = translation.plot_overdue(late, progress, limit=2).axes[0].get_title(loc="left")
    assert title.endswith(f"\nthe 2 submissions with most, of {many}")


def test_counts_are_of_what_their_label_says(ws):
    """The provider table's "profiles" summed memberships: 1,001 for 100 profiles."""
    sizes = audiences.sizes(ws)
    by_provider = audiences.providers(ws)
    assert "profiles" not in by_provider.columns
    assert by_provider["memberships"].sum() == sizes["profile_count"].sum()
    assert "profiles" not in audiences.tag_counts(ws).columns
    title = audiences.plot_sizes(sizes).axes[0].get_title(loc="left")
    assert title == "Audience sizes: every profile, as the platform counts them"


def test_the_overlaps_diagonal_says_of_how_many(ws):
    """An audience was 110 in "Audience sizes" and 55 on the overlap's diagonal, explained only by
    "among the pulled profiles"."""
    matrix = audiences.overlap(ws, top=5)
    assert matrix.attrs["pulled_profiles"] == 100                # the sandbox's example profiles
    sizes = audiences.sizes(ws).set_index("name")["profile_count"]
    figure = audiences.plot_overlap(matrix)
    ax = figure.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    for i, (label, name) in enumerate(zip(labels, matrix.index, strict=True)):
        assert label.endswith(f"({matrix.iloc[i, i]:,} of {sizes[name]:,})"), label
    assert "among the 100 pulled profiles" in ax.get_title(loc="left")
    # the title stays inside the figure, drawn as the report draws it (15 audiences, their long labels
    # pushing the plot right): as one long line it ran past the page's edge and was cut
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    full = audiences.plot_overlap(audiences.overlap(ws, top=15))
    canvas = FigureCanvasAgg(full)
    canvas.draw()
    left = full.axes[0]._left_title
    assert left.get_text() and left.get_window_extent(canvas.get_renderer()).x1 <= full.bbox.x1


def test_funnel_labels_keep_each_phase_name_whole():
    """A funnel label was cut: "LINGUISTI…"."""
    funnel = pd.DataFrame({"stage": ["queued", "phase 1", "done"],
                           "phases": ["", "TRANSLATION, LINGUISTIC_REVIEW, CLIENT_REVIEW, DESKTOP_PUBLISHING, "
                                          "FINAL_QUALITY_ASSURANCE, DELIVERY_PREPARATION", "COMPLETED"],
                           "reached": [10, 8, 3], "now": [2, 5, 3]})
    figure = translation.plot_phase_funnel(funnel)
    shown = " ".join(t.get_text() for t in figure.axes[0].get_yticklabels())
    assert "…" not in shown and "LINGUISTIC_REVIEW" in shown and "+2 more" in shown
    assert all(len(line) <= 40 for line in shown.split("\n"))


def test_long_tables_fold_rather_than_stop_at_ten_rows():
    from toolkit.reports.html import _table
    data = pd.DataFrame({"name": [f"row {i}" for i in range(25)], "n": range(25)})
    page = _table(data, 10, [])
    first, folded = page.split("<details>")
    assert first.count("<tr>") == 11 and "<summary>the other 15 of 25 rows</summary>" in folded
    assert folded.count("<tr>") == 16 and "row 24" in folded
    assert "<details>" not in _table(data.head(10), 10, [])


# -- one meaning of "rows" ---------------------------------------------------------------------------

def test_every_surface_says_the_rows_each_view_shows(ws, tmp_path, capsys):
    views = ws.tables()
    counted = {t: ws.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in views["table"]}
    # the demo's incremental loads write fewer rows than their views show: the case this is about
    assert (views["written"] < views["rows"]).any() and views["filtered"].any() is not None
    assert dict(zip(views["table"], views["rows"], strict=True)) == counted
    fresh = ws.freshness()
    assert {f"{s}.{r}": n for s, r, n in fresh[["service", "resource", "rows"]].itertuples(index=False)}.items() \
        <= counted.items()
    assert cli.main(["show", "--workspace", str(ws.path), "--format", "json"]) == 0
    shown = {row["table"]: row["rows"] for row in json.loads(capsys.readouterr().out)}
    assert shown == counted
    for history in (False, True):
        path = ws.export(tmp_path / f"rows-{history}.duckdb", history=history)
        with tk.open_snapshot(path) as snap:
            manifest = snap.manifest()
            said = {f"{s}.{r}": n for s, r, n in manifest[["service", "resource", "rows"]].itertuples(index=False)}
            assert said == counted
            listed = snap.tables()
            held = {f"{s}.{n}": r for s, n, r in listed[["schema", "name", "rows"]].itertuples(index=False)}
            assert held == counted
            written = dict(zip(views["table"], views["written"], strict=True))
            assert {f"{s}.{r}": n for s, r, n in manifest[["service", "resource", "written"]]
                    .itertuples(index=False)} == written


def test_a_snapshot_of_some_resources_since_a_time_keeps_those_loads_and_says_so(ws, tmp_path):
    loads = ws.loads()
    finished = loads[loads["status"].isin(["complete", "stale"])]
    since = finished["finished"].sort_values().iloc[len(finished) // 2]
    chosen = ["audience_platform.audiences", "translation.targets"]
    path = ws.export(tmp_path / "week.duckdb", resources=chosen, since=since)
    with tk.open_snapshot(path) as snap:
        manifest = snap.manifest().set_index(["service", "resource"])
        assert sorted(f"{s}.{r}" for s, r in manifest.index) == sorted(chosen)
        assert manifest["since"].notna().all()
        for name in chosen:
            service, resource = name.split(".")
            mine = finished[(finished["service"] == service) & (finished["resource"] == resource)]
            kept = set(mine[mine["finished"] >= since]["load_id"]) | {mine.sort_values("seq")["load_id"].iloc[-1]}
            assert set(manifest.loc[(service, resource), "load_ids"]) == kept
            assert set(snap.loads().query("resource == @resource")["load_id"]) == kept
            # each load kept reads back as the workspace held it
            for load_id in kept:
                assert len(snap.read(service, resource, load_id)) == len(ws.as_of(name, load_id))
            assert snap.sql(f"SELECT count(*) FROM {name}").fetchall()[0][0] == \
                ws.sql(f"SELECT count(*) FROM {name}").fetchall()[0][0]


# -- each section's caption against the data it was drawn from ---------------------------------------

def _section(page: str, heading: str) -> str:
    """The HTML of one report part: from its heading to the next."""
    start = page.index(f"<h3>{html.escape(heading)}</h3>")
    end = page.find("<h3>", start + 1)
    return page[start:end if end > 0 else None]


@pytest.fixture(scope="module")
def page(ws, box, pulled_at, tmp_path_factory) -> str:
    path = reports.write_report(ws, tmp_path_factory.mktemp("page") / "report.html", now=box.clock.now(),
                                as_of=pulled_at)
    return path.read_text(encoding="utf-8")


def _folded(part: str) -> tuple[int, int] | None:
    found = re.search(r"the other ([\d,]+) of ([\d,]+) rows", part)
    return (int(found[1].replace(",", "")), int(found[2].replace(",", ""))) if found else None


def test_audience_sizes_over_the_loads_are_the_timelines_and_the_plot_says_what_it_draws(ws, page):
    over = audiences.sizes_over_loads(ws)
    timeline = ws.timeline("audience_platform.audiences", by=["id"], agg={"profiles": "max(profile_count)"})
    assert len(over) == len(timeline) and over["load_id"].nunique() == timeline["load_id"].nunique() >= 5
    assert over.groupby("load_id")["profile_count"].sum().to_dict() == \
        timeline.groupby("load_id")["profiles"].sum().to_dict()
    changes = audiences.size_changes(over)
    assert len(changes) == over["id"].nunique() and changes["changed"].any()
    changed = _one(ws, "SELECT count(*) FROM (SELECT id FROM audience_platform.audiences__loads GROUP BY id "
                       "HAVING count(DISTINCT profile_count) > 1)")
    assert int(changes["changed"].sum()) == changed
    figure = audiences.plot_sizes_over_loads(over)
    lines = figure.axes[0].get_lines()
    labelled = [line.get_label() for line in lines if not line.get_label().startswith("_")]
    moved = changes[changes["changed"]].head(8)
    assert labelled == [f"and {len(changes) - len(moved)} unchanged"] + [
        f"{plots.shorten(str(r.name), 28)} ({r.change:+,})" for r in moved.itertuples()]
    assert len(lines) == len(changes)                     # every audience drawn, the unchanged in grey
    title = figure.axes[0].get_title(loc="left")
    assert f"({over['load_id'].nunique()} loads)" in title
    assert f"{changed} of {len(changes)} changed size, in colour; the other {len(changes) - changed} in grey" in title
    assert _folded(_section(page, "Audience sizes over the loads")) == (len(changes) - 8, len(changes))


def test_an_audience_new_since_the_first_load_has_no_first_size(ws):
    changes = audiences.size_changes(audiences.sizes_over_loads(ws)).set_index("id")
    new = _one(ws, """SELECT count(*) FROM (SELECT id FROM audience_platform.audiences__loads GROUP BY id)
        WHERE id NOT IN (SELECT id FROM audience_platform.audiences__loads WHERE _load_id = (
            SELECT arg_min(load_id, service_clock) FROM _loads WHERE service = 'audience_platform'
            AND resource = 'audiences' AND status IN ('complete', 'stale')))""")
    assert int(changes["first"].isna().sum()) == new
    assert not (changes["first"].fillna(-1) == 0).any()         # none reads "first 0"


def test_the_notebooks_timeline_plot_counts_what_changed(ws):
    """Notebook 10's plot: its title counts the audiences whose size moved, recounted in SQL."""
    import matplotlib
    matplotlib.use("Agg")
    timeline = ws.timeline("audience_platform.audiences", by="name", agg={"profiles": "max(profile_count)"})
    ax = timeline.plot(title="Profiles per audience, load by load", ylabel="profiles")
    every, changed = ws.sql("SELECT count(*), count(*) FILTER (WHERE n > 1) FROM (SELECT name, "
                            "count(DISTINCT profile_count) AS n FROM audience_platform.audiences__loads "
                            "GROUP BY name)").fetchone()
    assert ax.get_title() == (f"Profiles per audience, load by load\n{changed} of {every} changed, in colour; "
                              f"{every - changed} unchanged in grey")


def test_percent_complete_plots_and_lists_the_same_open_submissions(ws, box, page):
    progress = translation.percent_complete(ws, now=box.clock.now())
    open_ones = int((progress["open"] > 0).sum())
    assert 10 < open_ones < len(progress)   # closed submissions exist, and neither part shows them
    title = translation.plot_percent_complete(progress).axes[0].get_title(loc="left")
    assert title.endswith(f"of {open_ones}") or open_ones <= 25
    assert _folded(_section(page, "Percent complete per submission with open targets")) == (open_ones - 10, open_ones)


def test_words_to_translate_count_open_submissions_only(ws, page):
    words = translation.word_counts(ws)
    closed = ws.sql("SELECT submission_id FROM translation.submissions WHERE status::VARCHAR IN "
                    "('PROCESSED', 'DELIVERED', 'COMPLETED', 'CANCELLED')").df()["submission_id"]
    held = ws.sql("SELECT count(*) FROM translation.word_counts WHERE submission_id IN "
                  "(SELECT submission_id FROM translation.submissions)").fetchone()[0]
    assert len(closed) and not set(words["submission_id"]) & set(closed)
    assert 0 < len(words) < held and set(words["status"]).isdisjoint(set(translation.DONE) | {"CANCELLED"})
    title = translation.plot_word_counts(words).axes[0].get_title(loc="left")
    assert "open submissions" in title
    assert "open submissions (neither done nor cancelled)" in _section(page, "Word counts")


def test_overdue_targets_carry_project_and_words_left_and_add_up_by_language_and_project(ws, box, page):
    now = box.clock.now()
    late = translation.overdue(ws, now=now)
    words = ws.sql("SELECT target_id, word_count FROM translation.targets").df().set_index("target_id")["word_count"]
    assert late["project_name"].notna().all()
    assert late["words_left"].tolist() == words.loc[late["target_id"]].tolist()
    by = translation.overdue_by(ws, now=now)
    assert by["overdue"].sum() + by["at_risk"].sum() == len(late)
    assert by["overdue"].sum() == (late["flag"] == "overdue").sum()
    assert by["at_risk"].sum() == (late["flag"] == "at risk").sum()
    # issue 45: each number answers one question; words_left added overdue and at-risk targets' words
    assert "words_left" not in by and "targets" not in by
    assert by["overdue_words"].sum() == late.loc[late["flag"] == "overdue", "words_left"].sum()
    assert by["at_risk_words"].sum() == late.loc[late["flag"] == "at risk", "words_left"].sum()
    for row in by.itertuples():
        pair = late[(late["target_language"] == row.target_language) & (late["project_name"] == row.project_name)]
        assert (row.overdue, row.overdue_words) == ((pair["flag"] == "overdue").sum(),
                                                     pair.loc[pair["flag"] == "overdue", "words_left"].sum())
        assert (row.at_risk, row.at_risk_words) == ((pair["flag"] == "at risk").sum(),
                                                     pair.loc[pair["flag"] == "at risk", "words_left"].sum())
    assert by["overdue_words"].is_monotonic_decreasing
    part = _section(page, "Overdue and at-risk by language and project")
    folded = _folded(part)
    assert folded is None and len(by) <= 12 or folded == (len(by) - 12, len(by))


def test_the_teams_plot_says_it_shows_20_of_how_many(ws, page):
    usage = media.team_usage(ws)
    assert len(usage) > 20
    title = media.plot_team_usage(usage).axes[0].get_title(loc="left")
    assert f"the 20 fullest of {len(usage)}" in title
    assert _folded(_section(page, "Teams against their limits")) == (len(usage) - 10, len(usage))


# -- every section's caption, recomputed in SQL over the workspace's views ----------------------------
# The report's page is drawn with now= and as_of= the sandbox's clock; each test reads the numbers its
# section's caption says and counts them again from the views, so a caption that says other numbers, or
# the same numbers of other rows, fails here.

def _caption(page: str, heading: str) -> str:
    return html.unescape(re.search(r"<p>(.*?)</p>", _section(page, heading), re.S)[1])


def _said(caption: str, pattern: str) -> list:
    """The caption's numbers (and other groups) where `pattern` finds them; fails where it does not."""
    found = re.search(pattern, caption)
    assert found, f"{pattern!r} not in {caption!r}"
    return [int(g.replace(",", "")) if re.fullmatch(r"[\d,]+", g) else g for g in found.groups()]


def _one(ws, query: str, params=None):
    return ws.sql(query, params=params).fetchone()[0] if params else ws.sql(query).fetchone()[0]


def _at(moment) -> str:
    return f"{source.utc(moment):%d %b %Y %H:%M} UTC"


def _latest(ws, service: str, resource: str) -> str:
    """What a caption says of the latest load: its time by the service's clock."""
    clock = _one(ws, "SELECT service_clock FROM _loads WHERE service = ? AND resource = ? AND status IN "
                     "('complete', 'stale') ORDER BY finished DESC LIMIT 1", [service, resource])
    return f"the latest load of {resource} ({_at(clock)} by the service's clock)"


def _rows(part: str) -> int:
    """The rows of a part's table, folded ones included."""
    return part.count("<tr>") - part.count("<thead>")


def test_audience_sizes_caption(ws, page):
    said = _caption(page, "Audience sizes")
    n, hidden, providers, memberships = _said(
        said, r"([\d,]+) audiences \(([\d,]+) of them hidden\) of ([\d,]+) providers, from .*?: ([\d,]+) memberships")
    assert n == _one(ws, "SELECT count(*) FROM audience_platform.audiences")
    assert hidden == _one(ws, "SELECT count(*) FILTER (WHERE hidden) FROM audience_platform.audiences")
    assert providers == _one(ws, "SELECT count(DISTINCT coalesce(provider, 'unknown')) FROM audience_platform.audiences")
    assert memberships == _one(ws, "SELECT sum(profile_count) FROM audience_platform.audiences")
    assert _latest(ws, "audience_platform", "audiences") in said
    assert _rows(_section(page, "Audience sizes")) == providers          # the table: one row per provider


def test_audience_sizes_over_the_loads_caption(ws, page):
    said = _caption(page, "Audience sizes over the loads")
    n, loads, first, last, moved, new, shown, grey, listed = _said(
        said, r"([\d,]+) audiences over ([\d,]+) loads of audiences, from (.*?) to (.*?) by the service's clock at "
              r"each load: ([\d,]+) of them changed size over the loads they were in; ([\d,]+) not there at the "
              r"first load; the plot labels the ([\d,]+) that changed and draws the other ([\d,]+) in grey; the table "
              r"lists all ([\d,]+)")
    assert n == listed == _one(ws, "SELECT count(DISTINCT id) FROM audience_platform.audiences__loads")
    clocks = ws.sql("SELECT min(service_clock), max(service_clock), count(*) FROM _loads WHERE service = "
                    "'audience_platform' AND resource = 'audiences' AND status IN ('complete', 'stale')").fetchone()
    assert (first, last, loads) == (_at(clocks[0]), _at(clocks[1]), clocks[2])
    assert moved == shown == _one(ws, "SELECT count(*) FROM (SELECT id FROM audience_platform.audiences__loads "
                                      "GROUP BY id HAVING count(DISTINCT profile_count) > 1)") > 0
    assert new == _one(ws, """
        WITH l AS (SELECT load_id, service_clock FROM _loads WHERE service = 'audience_platform'
                   AND resource = 'audiences' AND status IN ('complete', 'stale'))
        SELECT count(DISTINCT id) FROM audience_platform.audiences__loads WHERE id NOT IN (
            SELECT id FROM audience_platform.audiences__loads WHERE _load_id = (SELECT arg_min(load_id, service_clock) FROM l))""")
    assert grey == n - moved and _folded(_section(page, "Audience sizes over the loads")) == (n - 8, n)


def test_tags_caption(ws, page):
    said = _caption(page, "Tags and system tags")
    tags, system, n = _said(said, r"([\d,]+) tags and ([\d,]+) system tags on the ([\d,]+) audiences")
    assert tags == _one(ws, "SELECT count(DISTINCT t) FROM (SELECT unnest(tags) AS t FROM audience_platform.audiences)")
    assert system == _one(ws, "SELECT count(DISTINCT t) FROM (SELECT unnest(system_tags) AS t "
                              "FROM audience_platform.audiences)")
    assert n == _one(ws, "SELECT count(*) FROM audience_platform.audiences")
    assert _latest(ws, "audience_platform", "audiences") in said


def test_overlap_caption_and_title_say_which_audiences_of_how_many(ws, page):
    said = _caption(page, "Overlap between audiences")
    every, profiles, shown, of = _said(said, r"([\d,]+) audiences have members among the ([\d,]+) profiles of .*?; "
                                             r"the plot draws the ([\d,]+) with the most of them, of ([\d,]+)")
    assert every == of == _one(ws, "SELECT count(DISTINCT audience_id) FROM audience_platform.memberships")
    assert profiles == _one(ws, "SELECT count(DISTINCT profile_id) FROM audience_platform.memberships")
    matrix = audiences.overlap(ws)
    assert shown == len(matrix) == 15
    title = audiences.plot_overlap(matrix).axes[0].get_title(loc="left")
    assert f"the {shown} of {every} audiences with most of them" in title
    assert _latest(ws, "audience_platform", "memberships") in said


def test_memberships_gained_and_lost_caption(ws, page):
    said = _caption(page, "Memberships gained and lost")
    moved, every, first, last, gained, lost = _said(
        said, r"([\d,]+) of ([\d,]+) audiences changed between the first load of memberships \((.*?)\) and the "
              r"latest \((.*?)\), by the service's clock: ([\d,]+) memberships gained and ([\d,]+) lost")
    ends = ws.sql("SELECT load_id, service_clock FROM _loads WHERE service = 'audience_platform' AND resource = "
                  "'memberships' AND status IN ('complete', 'stale') ORDER BY finished").fetchall()
    (before, t0), (after, t1) = ends[0], ends[-1]
    assert (first, last) == (_at(t0), _at(t1))
    pairs = """SELECT DISTINCT profile_id, audience_id FROM audience_platform.memberships__loads WHERE _load_id = ?"""
    counted = ws.sql(f"""
        WITH o AS ({pairs}), n AS ({pairs.replace('?', '$2')})
        SELECT count(*) FILTER (WHERE o.profile_id IS NULL), count(*) FILTER (WHERE n.profile_id IS NULL),
               count(DISTINCT coalesce(o.audience_id, n.audience_id)),
               count(DISTINCT coalesce(o.audience_id, n.audience_id)) FILTER (WHERE o.profile_id IS NULL
                                                                              OR n.profile_id IS NULL)
        FROM o FULL JOIN n USING (profile_id, audience_id)""".replace("= ?", "= $1", 1), [before, after]).fetchone()
    assert (gained, lost, every, moved) == counted
    assert _rows(_section(page, "Memberships gained and lost")) == moved  # the table: those that changed


def test_audiences_per_profile_caption(ws, page):
    said = _caption(page, "Audiences per profile")
    profiles, nowhere = _said(said, r"([\d,]+) profiles \(.*?\), ([\d,]+) of them in no audience")
    assert profiles == _one(ws, "SELECT count(*) FROM (SELECT item_id FROM audience_platform.profiles UNION "
                                "SELECT profile_id FROM audience_platform.memberships)")
    assert nowhere == _one(ws, "SELECT count(*) FROM audience_platform.profiles WHERE item_id NOT IN "
                               "(SELECT profile_id FROM audience_platform.memberships)")
    assert _latest(ws, "audience_platform", "memberships") in said


_OPEN = "status::VARCHAR NOT IN ('PROCESSED', 'DELIVERED', 'COMPLETED', 'CANCELLED')"


def test_status_by_language_caption(ws, page):
    said = _caption(page, "Targets by status and target language")
    n, languages, open_, done, cancelled = _said(
        said, r"([\d,]+) targets in ([\d,]+) target languages, from .*?: ([\d,]+) open, ([\d,]+) done "
              r"\(PROCESSED, DELIVERED, COMPLETED\), ([\d,]+) cancelled")
    assert (n, languages, open_, done, cancelled) == ws.sql(f"""
        SELECT count(*), count(DISTINCT target_language), count(*) FILTER (WHERE {_OPEN}),
               count(*) FILTER (WHERE status::VARCHAR IN ('PROCESSED', 'DELIVERED', 'COMPLETED')),
               count(*) FILTER (WHERE status::VARCHAR = 'CANCELLED') FROM translation.targets""").fetchone()
    assert _latest(ws, "translation", "targets") in said


def test_phase_funnel_caption_and_table(ws, page):
    said = _caption(page, "Phase funnel")
    counted, cancelled, done, open_, queued = _said(
        said, r"([\d,]+) targets \(([\d,]+) cancelled ones aside\) of .*?: ([\d,]+) done, ([\d,]+) open, "
              r"([\d,]+) of them not started")
    assert (counted, cancelled, done, open_, queued) == ws.sql(f"""
        SELECT count(*) FILTER (WHERE status::VARCHAR != 'CANCELLED'), count(*) FILTER (WHERE status::VARCHAR = 'CANCELLED'),
               count(*) FILTER (WHERE status::VARCHAR IN ('PROCESSED', 'DELIVERED', 'COMPLETED')),
               count(*) FILTER (WHERE {_OPEN}), count(*) FILTER (WHERE {_OPEN} AND current_phase IS NULL)
        FROM translation.targets""").fetchone()
    assert _latest(ws, "translation", "targets") in said
    table = re.findall(r"<tr><td>(queued|done)</td><td>[^<]*</td><td class=num>([\d,]+)</td>",
                       _section(page, "Phase funnel"))
    assert dict(table) == {"queued": f"{counted:,}", "done": f"{done:,}"}


def test_percent_complete_caption(ws, box, page):
    said = _caption(page, "Percent complete per submission with open targets")
    open_, every, aside, moment, shown, of, listed = _said(
        said, r"([\d,]+) submissions with a target still open, of the ([\d,]+) with targets \(([\d,]+) whose targets "
              r"are all done or cancelled aside\); due dates against (.*?) by the moment given\. The plot draws the "
              r"([\d,]+) soonest due, of ([\d,]+), the table lists all ([\d,]+)")
    assert (open_, every) == ws.sql(f"""
        SELECT count(*) FILTER (WHERE open > 0), count(*) FROM (
            SELECT submission_id, count(*) FILTER (WHERE {_OPEN}) AS open FROM translation.targets GROUP BY 1)""").fetchone()
    assert aside == every - open_ and of == listed == open_ and shown == 25
    assert moment == _at(box.clock.now())


def _late(ws, now) -> list:
    """The overdue and at-risk targets in SQL: open, past due, or due within 48 hours and not in the last
    phase of their workflow (the workflows' phases, in order)."""
    return ws.sql(f"""
        WITH last AS (SELECT name AS workflow, max_by(p.name, p."order") AS phase FROM (
                          SELECT name, unnest(from_json(phases, '[{{"name": "VARCHAR", "order": "INTEGER"}}]')) AS p
                          FROM translation.workflows) GROUP BY 1),
             t AS (SELECT t.*, coalesce(p.workflow_name, t.workflow_name) AS workflow, s.project_name,
                          date_diff('second', $now::TIMESTAMPTZ, t.due_date) / 3600 AS hours
                   FROM translation.targets t LEFT JOIN translation.phases p USING (target_id)
                   LEFT JOIN translation.submissions s ON s.submission_id = t.submission_id
                   WHERE {_OPEN.replace('status', 't.status')} AND t.due_date IS NOT NULL)
        SELECT t.target_language, t.project_name, t.submission_id, t.word_count,
               CASE WHEN t.hours < 0 THEN 'overdue' ELSE 'at risk' END AS flag
        FROM t LEFT JOIN last USING (workflow)
        WHERE t.hours < 0 OR (t.hours < 48 AND t.current_phase IS DISTINCT FROM last.phase)""",
                  params={"now": now}).fetchall()


def test_overdue_captions(ws, box, page):
    late = _late(ws, box.clock.now())
    assert late, "the demo has late targets"
    said = _caption(page, "Overdue and at-risk targets")
    n, overdue, risky, submissions, words = _said(
        said, r"([\d,]+) open targets \(([\d,]+) overdue, ([\d,]+) at risk\) in ([\d,]+) submissions, ([\d,]+) words left")
    assert n == len(late) == _rows(_section(page, "Overdue and at-risk targets"))
    assert (overdue, risky) == (sum(f == "overdue" for *_, f in late), sum(f == "at risk" for *_, f in late))
    assert submissions == len({s for _, _, s, _, _ in late}) and words == sum(w for *_, w, _ in late)
    assert f"against {_at(box.clock.now())} by the moment given" in said
    shown, listed = _said(said, r"The plot draws all ([\d,]+) submissions, the table each of the ([\d,]+) targets")
    assert (shown, listed) == (submissions, n)                         # 4 submissions: none cut
    by = _caption(page, "Overdue and at-risk by language and project")
    pairs, overdue_by, overdue_words, risky_by, risky_words = _said(
        by, r"([\d,]+) pairs of target language and project: ([\d,]+) targets overdue with ([\d,]+) words left, "
            r"([\d,]+) at risk with ([\d,]+) words left")
    assert pairs == len({(lang, project) for lang, project, *_ in late})
    assert (overdue_by, risky_by) == (overdue, risky)
    assert overdue_words + risky_words == words
    assert overdue_words == sum(w for *_, w, f in late if f == "overdue")


def test_burndown_caption(ws, page, pulled_at):
    said = _caption(page, "Burndown")
    loads, first, last, open_first, open_last, in_phase, cancelled = _said(
        said, r"([\d,]+) loads of targets, from (.*?) to (.*?) by the moments given \(as_of=\): open targets "
              r"\(neither done nor cancelled\) went from ([\d,]+) to ([\d,]+), ([\d,]+) of them in a phase and "
              r"([\d,]+) cancelled at the latest load")
    held = ws.sql("SELECT load_id FROM _loads WHERE service = 'translation' AND resource = 'targets' AND status IN "
                  "('complete', 'stale')").df()["load_id"]
    order = sorted(held, key=lambda load: pulled_at[load])
    assert loads == len(order) and (first, last) == (_at(pulled_at[order[0]]), _at(pulled_at[order[-1]]))

    def at(load):
        return ws.sql(f"""SELECT count(*) FILTER (WHERE {_OPEN}),
                                 count(*) FILTER (WHERE {_OPEN} AND current_phase IS NOT NULL),
                                 count(*) FILTER (WHERE status::VARCHAR = 'CANCELLED')
                          FROM translation.targets__loads WHERE _load_id = ?""", params=[load]).fetchone()
    assert open_first == at(order[0])[0] and (open_last, in_phase, cancelled) == at(order[-1])
    assert _rows(_section(page, "Burndown")) == loads


def test_word_counts_caption(ws, page):
    said = _caption(page, "Word counts")
    words, n, every, projects = _said(
        said, r"([\d,]+) words in ([\d,]+) open submissions \(neither done nor cancelled\) of the ([\d,]+) "
              r"submissions with a word count, in ([\d,]+) projects")
    assert (words, n, projects) == ws.sql(f"""
        SELECT sum(w.word_count), count(*), count(DISTINCT s.project_name) FROM translation.word_counts w
        JOIN translation.submissions s USING (submission_id) WHERE {_OPEN.replace('status', 's.status')}""").fetchone()
    assert every == _one(ws, "SELECT count(*) FROM translation.word_counts")
    assert _folded(_section(page, "Word counts")) == (n - 8, n)        # the table: every open submission
    assert f"the counts of {_latest(ws, 'translation', 'word_counts')}, open by " \
           f"{_latest(ws, 'translation', 'submissions')}" in said


def test_quotes_caption(ws, page):
    heading = "Quotes: amount quoted against approved"
    said = _caption(page, heading)
    n, submissions, approved, not_, currencies = _said(
        said, r"([\d,]+) quotes of ([\d,]+) submissions, every quote of .*? whatever its submission's status: "
              r"([\d,]+) approved \(status APPROVED or an approval date\), ([\d,]+) not; amounts in each quote's "
              r"currency \((.*?)\)")
    assert (n, submissions, approved) == ws.sql("""
        SELECT count(*), count(DISTINCT submission_id),
               count(*) FILTER (WHERE status::VARCHAR = 'APPROVED' OR date_approved IS NOT NULL)
        FROM translation.quotes""").fetchone()
    assert not_ == n - approved
    assert currencies == ", ".join(r[0] for r in ws.sql("SELECT DISTINCT currency FROM translation.quotes "
                                                         "ORDER BY 1").fetchall())
    assert "provided" not in translation.quotes(ws).columns          # a status, not every quote
    assert _latest(ws, "translation", "quotes") in said


def test_assets_per_board_tree_caption(ws, page):
    said = _caption(page, "Assets per board tree")
    roots, boards, placed, every, nowhere = _said(
        said, r"([\d,]+) top-level boards holding ([\d,]+) boards; ([\d,]+) of the ([\d,]+) assets of .*? are on a "
              r"board, ([\d,]+) on none")
    assert roots == _one(ws, "SELECT count(*) FROM asset_library.boards WHERE parent_board_id IS NULL")
    assert boards == _one(ws, "SELECT count(*) FROM asset_library.boards")
    assert every == _one(ws, "SELECT count(*) FROM asset_library.assets")
    assert nowhere == _one(ws, "SELECT count(*) FROM asset_library.assets WHERE id NOT IN "
                               "(SELECT asset_id FROM asset_library.asset_boards)") == every - placed
    assert _latest(ws, "asset_library", "assets") in said


def test_tag_usage_caption(ws, page):
    said = _caption(page, "Tag usage")
    tags, unused, every = _said(said, r"([\d,]+) tags \(([\d,]+) on no asset\) over the cover versions of the "
                                      r"([\d,]+) assets")
    used = "SELECT DISTINCT t.name FROM (SELECT unnest(cover_version_tags) AS t FROM asset_library.assets)"
    assert tags == _one(ws, f"SELECT count(*) FROM (SELECT name FROM asset_library.tags UNION {used})")
    assert unused == _one(ws, f"SELECT count(*) FROM asset_library.tags WHERE name NOT IN ({used})")
    assert every == _one(ws, "SELECT count(*) FROM asset_library.assets")
    assert _latest(ws, "asset_library", "assets") in said


def test_custom_field_fill_rate_caption(ws, page):
    said = _caption(page, "Custom-field fill rate")
    fields, every = _said(said, r"([\d,]+) custom fields, each against all ([\d,]+) assets")
    assert fields == _one(ws, "SELECT count(*) FROM asset_library.custom_fields")
    assert every == _one(ws, "SELECT count(*) FROM asset_library.assets")
    assert _latest(ws, "asset_library", "assets") in said


def test_imports_caption(ws, page):
    said = _caption(page, "Imports by outcome")
    n, succeeded, failed, running = _said(said, r"([\d,]+) imports, .*?: ([\d,]+) succeeded, ([\d,]+) failed, "
                                                r"([\d,]+) not finished")
    assert (n, succeeded, failed) == ws.sql("""
        SELECT count(*), count(*) FILTER (WHERE status::VARCHAR = 'succeeded'),
               count(*) FILTER (WHERE status::VARCHAR = 'failed') FROM asset_library.imports""").fetchone()
    assert running == n - succeeded - failed
    assert _latest(ws, "asset_library", "imports") in said


def test_teams_caption(ws, page):
    said = _caption(page, "Teams against their limits")
    n, deleted, shown, of, listed = _said(
        said, r"([\d,]+) teams \(([\d,]+) deleted ones aside\) of .*?; the plot draws the ([\d,]+) fullest, of "
              r"([\d,]+), the table lists all ([\d,]+)")
    assert (n, deleted) == ws.sql("SELECT count(*) FILTER (WHERE deleted_at IS NULL), count(deleted_at) "
                                  "FROM media_review.teams").fetchone()
    assert shown == 20 and of == listed == n == _rows(_section(page, "Teams against their limits"))
    assert _latest(ws, "media_review", "teams") in said


def test_every_part_of_the_page_has_a_caption_test():
    """A part added to the report without its caption's test fails here."""
    tested = {"Audience sizes", "Audience sizes over the loads", "Tags and system tags", "Overlap between audiences",
              "Memberships gained and lost", "Audiences per profile", "Targets by status and target language",
              "Phase funnel", "Percent complete per submission with open targets", "Overdue and at-risk targets",
              "Overdue and at-risk by language and project", "Burndown", "Word counts",
              "Quotes: amount quoted against approved", "Assets per board tree", "Tag usage",
              "Custom-field fill rate", "Imports by outcome", "Teams against their limits"}
    from toolkit.reports.html import _parts
    with duckdb.connect() as empty:
        headings = {part.heading for parts in _parts(empty, None, None).values() for part in parts}
    assert headings == tested


def test_a_snapshot_with_history_gives_the_same_captions_as_the_workspace(snapshot, box, pulled_at, page, tmp_path):
    """A colleague who opens the exported snapshot reads the same numbers, loads and clocks."""
    again = reports.write_report(snapshot, tmp_path / "from-snapshot.html", now=box.clock.now(),
                                 as_of=pulled_at).read_text(encoding="utf-8")

    def captions(text: str) -> dict:
        return {heading: html.unescape(said) for heading, said in re.findall(r"<h3>(.*?)</h3>\n<p>(.*?)</p>", text)}
    mine, theirs = captions(page), captions(again)
    assert len(mine) == 19 and mine == theirs


def test_membership_and_profile_plots_say_they_count_the_pulled_profiles(ws):
    changes = audiences.membership_changes(ws)
    moved = int(((changes["gained"] > 0) | (changes["lost"] > 0)).sum())
    title = audiences.plot_membership_changes(changes).axes[0].get_title(loc="left")
    assert "among the pulled profiles" in title and f"({moved} of {len(changes)} audiences changed)" in title
    pulled = ws.sql("SELECT count(*) FROM (SELECT item_id FROM audience_platform.profiles UNION "
                    "SELECT profile_id FROM audience_platform.memberships)").fetchone()[0]
    title = audiences.plot_audiences_per_profile(audiences.audiences_per_profile(ws)).axes[0].get_title(loc="left")
    assert title == f"Audiences per profile: the {pulled:,} pulled profiles"


def test_captions_name_this_machines_clock_where_the_service_sent_none(tmp_path):
    with tk.Workspace(tmp_path / "no-date.duckdb") as plain:
        with plain.load("audience_platform", "http://127.0.0.1:9/api", "audiences", {}, ("id",)) as load:
            load.write(pa.table({"id": ["a"], "name": ["A"], "tags": [["x"]], "system_tags": [[]],
                                 "profile_count": [3], "provider": ["manual"], "hidden": [False]}))
        finished = source.utc(plain.loads()["finished"].iloc[-1])
        page = reports.write_report(plain, tmp_path / "r.html").read_text()
    said = _caption(page, "Tags and system tags")
    assert f"the latest load of audiences ({_at(finished)} by this machine's clock (the service sent no Date))" in said
    over = _caption(page, "Audience sizes over the loads")
    assert "1 audience over 1 load of audiences" in over and "this machine's when a load finished" in over


def test_the_burndowns_axis_names_the_clock_that_dated_its_loads(ws, pulled_at):
    by_service = translation.plot_burndown(translation.burndown(ws)).axes[0].get_xlabel()
    given = translation.plot_burndown(translation.burndown(ws, as_of=pulled_at)).axes[0].get_xlabel()
    assert (by_service, given) == ("the load's time (UTC, by the service's clock)",
                                   "the load's time (UTC, by the moments given)")


def test_the_pages_summary_counts_in_the_singular_where_there_is_one(tmp_path):
    with tk.Workspace(tmp_path / "one.duckdb") as one:
        with one.load("media_review", "http://127.0.0.1:9/v2", "teams", {}, ("id",)) as load:
            load.write(pa.table({"id": ["t"], "name": ["T"]}))
        page = reports.write_report(one, tmp_path / "r.html").read_text()
    assert "media_review: 1 resource, 1 load." in page
