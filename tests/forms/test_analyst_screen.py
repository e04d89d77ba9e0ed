"""Issue 19: forms as an analyst meets them in JupyterLab: what is shown is what is sent, once.

Each test is one item of the issue, driven the way the browser drives a form: set `.value`, click.
"""
from __future__ import annotations

import time

import ipywidgets as W
import pandas as pd
import pytest

from toolkit.catalog.spec import Param
from toolkit.connection import audit
from toolkit.forms import AssetImport, SubmissionWizard
from toolkit.forms.fields import build, placeholder
from toolkit.forms.form import as_display
from toolkit.forms.translation_steps import LANGUAGES
from toolkit.pull import progress

TITLE = "Analyst test board"


def text_of(output: W.Output) -> str:
    return " ".join(str(o.get("data", {}).get("text/html", o.get("data", o.get("text", ""))))
                    for o in output.outputs)


def advance(e):
    return lambda seconds: e.box.advance(seconds=seconds)


# 1 --------------------------------------------------------------------------------------------------

def test_after_send_the_request_shown_is_the_one_sent_not_an_earlier_preview(env):
    e = env("asset_library")
    tag = e.client.call("create_tag", name="shown-is-sent")["id"]
    form = e.client.form("update_tag").fill(tag_id=TITLE, name="renamed-by-form")
    form.preview()
    assert "Analyst%20test%20board" in text_of(form.preview_output)      # the preview of the title
    form.fields["tag_id"].value = tag
    assert not form.preview_output.outputs          # a changed field takes the old preview away
    form.preview()
    form.fields["name"].value = "renamed-again"
    form.button.click()
    assert form.state == "sent", form.error
    shown = text_of(form.preview_output)
    assert tag in shown and "Analyst" not in shown and "renamed-again" in shown
    assert shown.startswith("sent:")
    row = audit.audit(e.ws).iloc[-1]
    assert tag in row.params and "renamed-again" in row.params


# 2 --------------------------------------------------------------------------------------------------

def test_a_double_click_on_send_sends_once_and_a_changed_field_sends_again(env):
    e = env("asset_library")
    form = e.client.form("create_tag")
    form.fields["name"].value = "double-clicked"
    audited = len(audit.audit(e.ws))
    form.button.click()
    form.button.click()              # the second click of a double-click, queued behind the first
    assert len(audit.audit(e.ws)) == audited + 1
    assert form.button.disabled and form.button.description == "Sent"
    form.fields["name"].value = "double-clicked-2"
    assert not form.button.disabled and form.button.description == "Send"
    form.button.click()
    assert len(audit.audit(e.ws)) == audited + 2 and form.state == "sent"


def test_choices_refreshed_by_a_write_do_not_turn_send_back_on(env, monkeypatch):
    """The write refreshes the choices it changed; a field those refreshes change is not the user's
    change, so the second click of a double-click, queued behind the send, still finds Send off."""
    e = env("asset_library")
    form = e.client.form("create_tag")
    form.fields["name"].value = "refresh-race"
    after_write = form._after_write

    def refreshing() -> None:
        after_write()
        form.fields["name"].value = "changed by a refresh of choices"

    monkeypatch.setattr(form, "_after_write", refreshing)
    audited = len(audit.audit(e.ws))
    form.button.click()
    form.button.click()
    assert len(audit.audit(e.ws)) == audited + 1
    assert form.button.disabled and form.state == "sent"


# 3 --------------------------------------------------------------------------------------------------

def test_a_table_of_steps_is_shown_as_a_table():
    steps = pd.DataFrame([{"step": "create_submission", "ok": True, "detail": "submission 7"}])
    assert as_display(steps) is steps


def test_the_wizard_shows_its_steps_as_a_table_and_a_blank_press_marks_the_fields(env):
    e = env("translation")
    ids = e.box.examples("translation")
    wizard = SubmissionWizard(e.client, wait=advance(e))
    wizard.run(name="Table", project_id=ids["project_id"], workflow_id=ids["workflow_id"], source_language="en-US",
               target_languages=["fr-FR"], file=("a.html", b"<p>table</p>"), file_format_name="HTML")
    assert "<table" in text_of(wizard.output)             # a DataFrame, not one paragraph of its repr
    done = [dict(s) for s in wizard.steps]
    assert done and all(s["ok"] for s in done)
    # run from code, the wizard's fields show what ran (they stayed blank)
    assert wizard.name.widget.value == "Table" and wizard.languages.widget.value == "fr-FR"
    assert wizard.source.widget.value == "en-US" and str(ids["project_id"]) in wizard.project.widget.value
    wizard.button.click()                                 # the same fields, but no file chosen on the screen
    assert wizard.state == "failed" and "✗" in wizard.status.value and "source file" in wizard.status.value
    assert wizard.steps == [] and "save_submission" not in wizard.table.value   # the last run is not rewritten
    blank = SubmissionWizard(e.client, wait=advance(e))
    blank.button.click()                                  # every field blank
    for field in (blank.name, blank.project, blank.workflow, blank.source, blank.languages):
        assert "required" in field.problem.value and field.problem.layout.display != "none"


# 4 --------------------------------------------------------------------------------------------------

def test_a_closed_workspace_is_said_in_a_sentence_with_what_to_do(own_env):
    e = own_env("asset_library")
    e.client.fetch("boards")
    gallery = e.client.forms()
    form = gallery.show("create_board").fill(title="after close")
    e.ws.close()
    before = e.requests()
    assert form.submit() is None and form.state == "failed" and e.requests() == before
    said = text_of(form.output)
    assert "closed" in said and "Open it again" in said
    assert "WorkspaceError" not in said and "NoneType" not in said
    assert "closed" not in form.status.value                # said once, not twice
    other = gallery.show("delete_board")                    # opening another form does not raise
    assert any("closed" in c.note.value for c in other.lookups.values())


# 5 --------------------------------------------------------------------------------------------------

def test_a_fetch_in_a_notebook_leaves_a_plain_summary_line_not_a_widget(monkeypatch):
    import IPython.display
    import tqdm.auto
    import tqdm.notebook

    shown: list = []

    class Handle:
        def display(self, obj):
            shown.append(obj)

        def update(self, obj):
            shown.append(obj)

    def display(*objs, **kwargs):
        shown.extend(objs)
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython.display, "DisplayHandle", Handle)     # progress shows through a handle
    monkeypatch.setattr(tqdm.notebook, "display", display)
    monkeypatch.setattr(tqdm.auto, "tqdm", tqdm.notebook.tqdm)      # what tqdm.auto picks in Jupyter
    monkeypatch.setattr(progress, "in_notebook_kernel", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TOOLKIT_PROGRESS", raising=False)
    with progress.bar(3, "translation.targets", "pages") as bar:
        for i in range(3):
            bar.update(1)
            bar.set_postfix(rows=40 * (i + 1), requests=i + 1, refresh=False)
        time.sleep(0.05)
    assert shown and not [o for o in shown if isinstance(o, W.Widget)]
    last = shown[-1].data
    assert "translation.targets" in last and "rows=120" in last and "requests=3" in last and " s" in last


# 6 --------------------------------------------------------------------------------------------------

def test_a_failed_import_is_shown_as_a_failure(env):
    e = env("asset_library")
    helper = AssetImport(e.client, wait=advance(e))
    result = helper.run("https://files.example.org/missing/brochure.pdf")
    assert result["status"] == "failed"
    assert "✓" not in helper.status.value and "✗" in helper.status.value and "#c62828" in helper.status.value
    assert helper.state == "failed"


# 7 --------------------------------------------------------------------------------------------------

def test_an_id_the_workspace_does_not_know_is_said_under_the_field_and_in_the_loss(env):
    e = env("asset_library")
    boards = e.client.fetch("boards", max_age=3600)
    form = e.client.form("delete_board")
    form.fields["board_id"].value = TITLE
    note = form.lookups["board_id"].note
    assert TITLE in note.value and "not among" in note.value and note.layout.display != "none"
    assert "not in the workspace" in form.loss.value
    form.fields["board_id"].value = str(boards.id.iloc[0])
    assert "not among" not in note.value and "not in the workspace" not in form.loss.value


# 8 --------------------------------------------------------------------------------------------------

def test_a_deleted_board_is_no_longer_offered_here_or_in_the_gallery(own_env):
    e = own_env("asset_library")
    boards = e.client.fetch("boards")
    leaf = boards[~boards.id.isin(boards.parent_board_id.dropna())].id.iloc[0]
    gallery = e.client.forms()
    update = gallery.show("update_board")
    assert any(leaf in option for option in update.fields["board_id"].options)
    delete = gallery.show("delete_board").fill(board_id=leaf)
    delete.confirm.value = True
    delete.button.click()
    assert delete.state == "sent", delete.error
    assert not any(leaf in option for option in delete.fields["board_id"].options)
    update = gallery.show("update_board")
    assert not any(leaf in option for option in update.fields["board_id"].options)


def test_status_lines_follow_the_fields_and_an_error_is_shown_once(env):
    e = env("asset_library")
    form = e.client.form("create_tag")
    form.button.click()
    assert "fix the 1 problem" in form.status.value and "required" in form._fields["name"].problem.value
    form.fields["name"].value = "typed after"
    assert "fix the" not in form.status.value
    assert form._fields["name"].problem.value == "" and form._fields["name"].problem.layout.display == "none"
    failing = e.client.form("update_tag").fill(tag_id="00000000-0000-4000-8000-000000000000", name="ghost")
    failing.button.click()
    everything = failing.status.value + text_of(failing.output)
    assert failing.state == "failed" and everything.count(failing.error.message) == 1


# 9 --------------------------------------------------------------------------------------------------

def test_languages_are_typed_separated_by_commas_and_the_hint_says_so():
    field = build(LANGUAGES)
    assert isinstance(field.widget, W.Text)                # a TagsInput's Enter adds nothing in JupyterLab
    field.widget.value = "fr-FR, de-DE"
    assert field.read() == ["fr-FR", "de-DE"]
    assert "comma" in field.help.value
    field.widget.value = "fr-FR;de-DE,"
    assert field.read() == ["fr-FR", "de-DE"]


def test_a_list_with_choices_refuses_a_value_outside_them():
    param = Param("statuses", "query", "list", choices=("READY", "DONE"))
    field = build(param)
    field.widget.value = "READY, LATE"
    with pytest.raises(ValueError, match="LATE"):
        field.read()


# 10 -------------------------------------------------------------------------------------------------

def test_examples_are_hints_not_values_and_the_gallery_opens_on_a_plain_form(env):
    assert placeholder(Param("board_id", "path", "id", example="8f14e45f")).startswith("e.g. ")
    gallery = env("asset_library").client.forms()
    assert not gallery.form.action.destructive
    assert sum(p.required for p in gallery.form.action.params) <= 1


def test_loss_printed_from_a_connection_counts_what_the_form_counts(own_env):
    """Notebook 40's `print(forms.loss(library, ...))` said "(pull boards and asset_boards to count them
    first)" right after pulling them, while the form beside it counted the cascade: handed the
    connection, it read nothing. It counts from the connection's workspace now, as the form does."""
    from toolkit import forms
    e = own_env("asset_library")
    boards = e.client.fetch("boards")
    board = boards.parent_board_id.dropna().value_counts().index[0]
    family = [board, *boards.loc[boards.parent_board_id == board, "id"]]
    inside = sorted({a["id"] for b in family for a in e.client.rows("list_assets", parent_board_id=b)})
    e.client.fetch("asset_boards", asset_ids=inside)
    form = e.client.form("delete_board")
    form.fields["board_id"].value = board
    said = forms.loss(e.client, form.action, {"board_id": board})
    assert "count them first" not in said and "the cascade removes" in said
    assert said == forms.loss(e.ws, form.action, {"board_id": board})
    gone = said.split("the cascade removes ")[1].split(" ")[0]
    assert f"removes {gone} asset(s)" in form.loss.value
