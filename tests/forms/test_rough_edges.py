"""The forms' six rough edges of issue 28, each as the analyst met it."""
from __future__ import annotations

import json
import os
import re

import nbformat
import pytest

from toolkit.forms.asset_library_steps import AssetImport

UUID = "0dafbbf9-365b-44ac-8d31-ea12e0d04796"


def test_after_a_delete_the_field_says_deleted_not_pick_from_the_list(own_env):
    """An amber "not among the 38 boards… Pick from the list" sat next to "✓ sent"."""
    e = own_env("asset_library")
    boards = e.client.fetch("boards")
    leaf = boards[~boards.id.isin(boards.parent_board_id.dropna())].id.iloc[0]
    form = e.client.form("delete_board").fill(board_id=leaf)
    form.confirm.value = True
    form.button.click()
    assert form.state == "sent", form.error
    note = form.lookups["board_id"].note.value
    assert "Pick from the list" not in note and "⚠" not in note
    assert f"‘{leaf}’ deleted: no longer among the {len(boards) - 1} boards" in note
    form.fields["board_id"].value = "not-a-board"           # another unknown value is warned of again
    assert "Pick from the list" in form.lookups["board_id"].note.value


def test_the_summary_counts_the_marks_the_fields_show(env):
    """Three ⚠ marks stood where the summary said "fix the 2 problem(s)"."""
    e = env("asset_library")
    e.client.fetch("boards", max_age=3600)
    form = e.client.form("add_board_guest")
    form.fields["board_id"].value = "Quarterly review"        # a title for an id: a warning, not a problem
    form.button.click()
    crosses = sum(f.problem.value.count("✗") for f in form._fields.values())
    warnings = sum(c.note.value.count("⚠") for c in form.lookups.values())
    assert (crosses, warnings) == (2, 1)
    assert "fix the 2 problems marked ✗ below (1 ⚠ warning only)" in form.status.value


def test_a_lookups_note_sits_under_its_input_and_an_id_input_holds_a_uuid(env):
    """Id warnings floated far right, beside the input; the id input cut UUIDs short."""
    e = env("asset_library")
    e.client.fetch("boards", max_age=3600)
    form = e.client.form("delete_board")
    field = form._fields["board_id"]
    line, *below = field.row.children
    note = form.lookups["board_id"].note
    assert note in below and note not in getattr(line, "children", ())
    for name in ("board_id",):
        width = form.fields[name].layout.width
        room = int(re.search(r"(\d+)ch", width).group(1))
        assert width.startswith("calc(190px") and room >= len(UUID) + 4, width
    plain = e.client.form("update_tag")._fields["tag_id"].widget
    assert "ch" in plain.layout.width


def test_a_helper_run_from_code_shows_its_values_in_its_fields(env):
    """Helper forms run from code showed empty fields."""
    e = env("asset_library")
    boards = e.client.fetch("boards", max_age=3600)
    helper = AssetImport(e.client, wait=lambda s: e.box.advance(seconds=s))
    url = "https://example.com/stills/frame-001.png"
    helper.run(url, parent_board_id=str(boards.id.iloc[0]))
    assert helper.url.value == url
    assert str(boards.id.iloc[0]) in helper.board.widget.value
    assert helper.record().startswith("toolkit helper: Import a file from a URL (")
    assert "✓ create_import" in helper.record()


def test_a_forms_output_carries_a_plain_record_of_what_it_sent(env):
    """Reopened without its kernel, a saved notebook showed "Error displaying widget: model not found"
    where the form and its "sent" record were: the bundle now says it in text too."""
    e = env("asset_library")
    form = e.client.form("create_tag").fill(name="recorded-tag")
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "toolkit form asset_library.create_tag: nothing sent yet"
    form.submit()
    text = form._repr_mimebundle_()["text/plain"]
    assert text.startswith("toolkit form asset_library.create_tag: sent 1 time(s)\n\nPOST ")
    assert '"name": "recorded-tag"' in text and "→ ✓ id: " in text
    assert "***" in text and not [s for s in e.box.secrets() if isinstance(s, str) and len(s) >= 6 and s in text]
    assert "recorded-tag" in form._repr_mimebundle_()["text/html"]


@pytest.mark.slow
def test_a_saved_notebook_reads_what_a_form_sent_without_its_kernel(monkeypatch):
    """Run under nbclient as Jupyter saves it: the form's own output holds the record, updated by the send."""
    nbclient = pytest.importorskip("nbclient")
    for name in [n for n in os.environ if n.startswith("TOOLKIT_")]:
        monkeypatch.delenv(name)
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(source) for source in (
        "import toolkit as tk\nbox = tk.sandbox.start()\nws = tk.Workspace()\n"
        "library = ws.connect('asset_library', **box.credentials('asset_library'))",
        "form = library.form('create_tag').fill(name='saved-tag')\nform",
        "form.submit();")]
    nbclient.NotebookClient(book, timeout=240, kernel_name="python3").execute()
    import toolkit as tk
    with tk.sandbox.start() as box:                # seeded: the notebook's sandbox holds the same secrets
        secrets = [v for v in box.secrets() if isinstance(v, str) and len(v) >= 6]
    shown, folded = book.cells[1].outputs
    assert "application/vnd.jupyter.widget-view+json" in shown["data"]
    # the widget's output is labelled, not a second copy of the record (nbconvert showed it twice)
    assert shown["data"]["text/plain"] == "toolkit form asset_library.create_tag (a widget; what it sent is " \
                                          "recorded below)"
    assert "text/html" not in shown["data"]
    # its own output, which JupyterLab draws when the widget cannot be: folded to one line
    assert "application/vnd.jupyter.widget-view+json" not in folded["data"]
    record = folded["data"]["text/plain"]
    assert record.startswith("toolkit form asset_library.create_tag: sent 1 time(s)")
    assert '"name": "saved-tag"' in record and "→ ✓ id: " in record
    assert "saved-tag" in folded["data"]["text/html"]
    assert folded["data"]["text/html"].startswith('<details style="color:#666;font-size:85%"><summary>toolkit form '
                                                  "asset_library.create_tag: sent 1 time(s)</summary>")
    # what a renderer that draws no widget shows (nbconvert, a viewer: html, else text): the record once
    drawn = [o["data"].get("text/html") or o["data"].get("text/plain", "") for o in book.cells[1].outputs]
    assert sum(text.count("sent 1 time(s)") for text in drawn) == 1, drawn
    assert "x-api-key: ***" in record.lower() and not [s for s in secrets if s in json.dumps(book.cells[1].outputs)]



def test_a_gallerys_output_records_what_its_forms_sent(env):
    e = env("asset_library")
    gallery = e.client.forms()
    assert gallery._repr_mimebundle_()["text/plain"] == "toolkit forms of asset_library: nothing sent yet"
    gallery.show("create_tag").fill(name="gallery-tag").submit()
    text = gallery._repr_mimebundle_()["text/plain"]
    assert text.startswith("toolkit forms of asset_library: create_tag sent 1 time(s)\n\nPOST ")
    assert '"name": "gallery-tag"' in text


def test_a_field_the_form_lacks_names_the_closest(env):
    """Once a KeyError listing every field; now the toolkit error of a name not found, with its guess."""
    import toolkit as tk
    form = env("asset_library").client.form("add_board_guest")
    with pytest.raises(tk.UnknownNameError, match=r"no field 'board' in asset_library.add_board_guest; did you mean"):
        form.fill(board="x")


def test_a_fields_hint_says_what_its_value_must_be():
    """A form's hint under an input says the range or pattern the catalog gives, as its refusal would."""
    import html

    from toolkit.catalog import ACTIONS
    from toolkit.forms.fields import build
    from toolkit.http import rules
    limit = next(p for p in ACTIONS["asset_library.list_assets"].params if p.name == "limit")
    assert "must be between 1 and 500" in build(limit).help.value
    for action in ACTIONS.values():
        for param in action.params:
            hint = html.unescape(build(param).help.value)
            assert all(words in hint for words in rules.said_of(param)), (action.id, param.name)
