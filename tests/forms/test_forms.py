"""Every write action's form, driven the way a person does: set `.value`, click, read what it shows."""
from __future__ import annotations

import json
import re

import ipywidgets as W
import pytest

import toolkit as tk
from toolkit import catalog
from toolkit.connection import audit
from toolkit.errors import ApiError
from toolkit.forms import Form, Gallery, affected_resources, write_actions

WRITES = [a for a in catalog.ACTIONS.values() if a.writes]
REQUIRED = [a for a in WRITES if any(p.required for p in a.params)]
DESTRUCTIVE = [a for a in WRITES if a.destructive]


def ids(actions):
    return [a.id for a in actions]


# values the sandbox's ids would make clash: the seed already holds the user examples() names
UNIQUE = {"audience_platform.create_user": {"username": "made-by-a-form", "email": "made.by.a.form@example.com"}}


def shown_text(output: W.Output) -> str:
    return " ".join(str(o.get("data", o.get("text", ""))) for o in output.outputs)


def arranged(env, own_env, real_params, entry):
    """The environment and params a form of `entry` succeeds with, whatever the other tests sent.

    A destructive write gets a sandbox of its own, so that what it removes is still there whatever
    ran before (deleting the example board takes its assets and guests with it, deleting a
    submission's metadata takes the example entry); the others share the module's sandbox.
    """
    e = own_env(entry.service) if entry.destructive else env(entry.service)
    return e, {**real_params(e, entry), **UNIQUE.get(entry.id, {})}


@pytest.mark.parametrize("entry", WRITES, ids=ids(WRITES))
def test_every_write_action_has_a_form(env, entry):
    e = env(entry.service)
    form = e.client.form(entry.id)
    assert isinstance(form, W.VBox) and set(form.fields) == {p.name for p in entry.params}
    for param in entry.params:
        assert form.fields[param.name].description.endswith(" *") == param.required
    text = form.preview()
    assert text.startswith(entry.method)
    assert entry.path.split("{")[0].rstrip("/") in text
    assert not [s for s in e.box.secrets() if s in text]


@pytest.mark.parametrize("entry", WRITES, ids=ids(WRITES))
def test_filled_example_is_sent_shown_and_audited(env, own_env, real_params, entry):
    e, params = arranged(env, own_env, real_params, entry)
    form = e.client.form(entry.id).fill(**params)
    preview = form.preview()
    assert not [s for s in e.box.secrets() if s in preview]
    form.confirm.value = True
    before, audited = e.requests(), len(audit.audit(e.ws))
    form.button.click()
    assert form.state == "sent", (form.state, form.error)
    assert form.error is None and e.requests() > before
    assert form.output.outputs, "the result is not shown"
    rows = audit.audit(e.ws)
    assert len(rows) == audited + 1 and rows.iloc[-1].action == entry.id and rows.iloc[-1].ok
    assert rows.iloc[-1].source == f"form:{entry.name}"
    assert not [s for s in e.box.secrets() if s in rows.iloc[-1].params]


@pytest.mark.parametrize("entry", REQUIRED, ids=ids(REQUIRED))
def test_blank_required_fields_send_nothing_and_are_marked(env, entry):
    e = env(entry.service)
    form = e.client.form(entry.id)
    for param in entry.params:       # a required boolean is a checkbox: it cannot be blank
        if param.kind == "boolean" and param.required:
            form.fields[param.name].value = True
    before = e.requests()
    assert form.submit() is None and form.state == "invalid"
    assert e.requests() == before
    for param in entry.params:
        if param.required and param.kind != "boolean":
            problem = form._fields[param.name].problem
            assert "required" in problem.value or "blank" in problem.value, param.name
            assert problem.layout.display != "none"


@pytest.mark.parametrize("entry", DESTRUCTIVE, ids=ids(DESTRUCTIVE))
def test_destructive_forms_wait_for_confirmation(env, own_env, real_params, entry):
    e, params = arranged(env, own_env, real_params, entry)
    form = e.client.form(entry.id).fill(**params)
    assert form.confirm.layout.display != "none" and form.confirm.value is False
    assert "cannot be undone" in form.loss.value
    before = e.requests()
    form.button.click()
    assert form.state == "refused" and e.requests() == before
    form.confirm.value = True
    form.button.click()
    assert form.state == "sent", (form.state, form.error)
    assert e.requests() > before
    assert form.confirm.value is False          # the next click needs its own confirmation


def test_board_delete_says_how_many_assets_the_cascade_removes(own_env):
    e = own_env("asset_library")           # the cascade would take boards the other tests pick
    lib = e.client
    boards = lib.fetch("boards", refresh=True)
    parents = boards.parent_board_id.dropna().astype(str)
    board = parents.value_counts().index[0]            # a board with child boards
    family = {board, *boards.loc[boards.parent_board_id.astype(str) == board, "id"].astype(str)}
    inside = {a["id"] for b in family for a in lib.rows("list_assets", parent_board_id=b)}
    lib.fetch("asset_boards", asset_ids=sorted(inside))
    form = lib.form("delete_board")
    form.fields["board_id"].value = board
    assert f"{len(family) - 1} direct child board(s)" in form.loss.value
    said = int(re.search(r"removes (\d+) asset", form.loss.value).group(1))
    before = set(lib.fetch("assets", refresh=True).id)
    form.confirm.value = True
    form.submit()
    assert form.state == "sent"
    gone = before - set(lib.fetch("assets", refresh=True).id)
    assert len(gone) == said > 0 and gone <= inside


def test_a_lookup_offers_the_workspace_rows_and_refreshes_on_demand(env):
    e = env("asset_library")
    e.ws.mark_stale("asset_library", ["roles"])
    form = e.client.form("add_board_guest")
    role = form.lookups["role_id"]
    before = e.requests()
    role.button.click()                                     # ↻
    assert e.requests() > before
    roles = e.client.fetch("roles", max_age=3600)
    assert len(form.fields["role_id"].options) == len(roles)
    board = form.lookups["board_id"]
    if not board.picker.options:
        board.button.click()
    form.fields["board_id"].value = form.fields["board_id"].options[0]
    form.fields["role_id"].value = form.fields["role_id"].options[0]
    form.fields["email"].value = "new.guest@example.com"
    values, problems = form.collect()
    assert not problems
    assert values["role_id"] in set(roles.id) and values["board_id"] in set(e.client.fetch("boards", max_age=3600).id)


def test_a_dependent_lookup_narrows_to_the_chosen_parent(env):
    e = env("asset_library")
    e.client.fetch("custom_field_values", refresh=True)
    values = e.ws.read("asset_library", "custom_field_values")
    field_id = values.custom_field_id.iloc[0]
    form = e.client.form("update_custom_field_value")
    form.lookups["value_id"].load()
    everything = len(form.fields["value_id"].options)
    form.fields["custom_field_id"].value = str(field_id)
    assert len(form.fields["value_id"].options) == (values.custom_field_id == field_id).sum() < everything


def test_a_lookup_that_cannot_load_leaves_a_note_not_an_error(env):
    e = env("audience_platform")
    form = e.client.form("delete_profile")                  # profiles are pulled for ids the analyst gives
    choices = form.lookups["profile_id"]
    choices.button.click()
    assert "profile_ids" in choices.note.value and choices.note.layout.display != "none"


def test_blank_optional_fields_are_left_out_and_bad_values_marked(env):
    e = env("audience_platform")
    form = e.client.form("update_warehouse_configuration")
    form.fields["enabled"].value = True
    assert '"readTimeout"' not in form.preview() and '"enabled": true' in form.preview()
    form.fields["read_timeout"].value = "soon"
    form.fields["root_url"].value = "not a url"
    before = e.requests()
    assert form.submit() is None and e.requests() == before
    assert "whole number" in form._fields["read_timeout"].problem.value
    assert "URL" in form._fields["root_url"].problem.value
    patch = e.client.form("update_profile")
    patch.fields["patch"].value = "{not json"
    patch.submit()
    assert "not valid JSON" in patch._fields["patch"].problem.value


def test_secrets_typed_into_a_form_are_masked_in_the_preview_and_the_audit(env):
    e = env("audience_platform")
    form = e.client.form("update_document_generation_configuration")
    form.fill(client_secret="s3cret-typed-value", password="another-typed-secret", grant_type="password",
              username="docgen-bot")
    text = form.preview()
    assert "s3cret-typed-value" not in text and "another-typed-secret" not in text and "***" in text
    form.submit()
    row = audit.audit(e.ws).iloc[-1]
    assert "s3cret-typed-value" not in row.params and "another-typed-secret" not in row.params


def test_success_marks_the_cached_loads_stale(env):
    e = env("asset_library")
    e.client.fetch("tags", refresh=True)
    form = e.client.form("create_tag")
    form.fields["name"].value = "from-a-form"
    assert form.submit() is not None
    loads = e.ws.loads()
    assert (loads[loads.resource == "tags"].status == "stale").all()
    before = e.requests()
    assert "from-a-form" in set(e.client.fetch("tags", max_age=3600).name)
    assert e.requests() > before                            # the stale load was not reused


def test_the_service_error_is_shown_and_kept(env):
    e = env("asset_library")
    form = e.client.form("update_tag")
    form.fill(tag_id="00000000-0000-4000-8000-000000000000", name="ghost")
    assert form.submit() is None and form.state == "failed"
    assert isinstance(form.error, ApiError) and form.error.status == 404
    assert "404" in form.status.value and "404" in shown_text(form.output)
    assert "✗" in shown_text(form.output)


def test_the_button_is_disabled_while_sending(env):
    e = env("asset_library")
    form = e.client.form("create_tag")
    form.fields["name"].value = "spinner-check"
    seen = []
    form.button.observe(lambda change: seen.append((change["new"], form.button.description)), names="disabled")
    form.button.click()
    # it stays off once sent (a second click of a double-click is dropped) until a field changes
    assert seen == [(True, "Sending…")] and form.state == "sent"
    assert form.status.value.count("✓")
    form.fields["name"].value = "spinner-check-2"
    assert seen[-1] == (False, "Send")


def test_a_datetime_picker_sends_what_the_service_wants(env):
    e = env("translation")
    form = e.client.form("create_submission").fill(name="Dated", project_id=10, source_language="en-US",
                                                   due_date=1767225600000)
    assert isinstance(form.fields["due_date"], W.NaiveDatetimePicker)
    assert '"dueDate": 1767225600000' in form.preview()            # epoch ms for the translation service
    imp = env("asset_library").client.form("create_import")
    imp.fill(source_url="https://files.example.org/a.jpg", recorded_at="2024-05-14T09:30:00.000Z")
    assert '"recordedAt": "2024-05-14T09:30:00.000Z"' in imp.preview()  # ISO for the asset library


def test_the_gallery_lists_the_write_actions_grouped(env):
    e = env("translation")
    gallery = e.client.forms()
    assert isinstance(gallery, Gallery)
    labels = [label for label, _ in gallery.picker.options]
    assert len(labels) == len(write_actions("translation")) == len([a for a in WRITES if a.service == "translation"])
    groups = [label.split(" · ")[0] for label in labels]
    assert groups == sorted(groups, key=groups.index)               # each group in one run
    gallery.picker.value = "translation.complete_phase"
    assert isinstance(gallery.form, Form) and gallery.holder.children == (gallery.form,)
    assert gallery.form.action.id == "translation.complete_phase"


def test_read_actions_have_no_form(env):
    with pytest.raises(Exception, match="does not write"):
        env("asset_library").client.form("list_boards")


def test_affected_resources_follow_the_path_and_the_cascade():
    assert {"boards", "asset_boards", "assets"} <= set(affected_resources("asset_library.delete_board"))
    assert "targets" in affected_resources("translation.complete_phase")
    assert affected_resources("audience_platform.delete_user") == ("users",)


def test_json_fields_round_trip(env):
    e = env("asset_library")
    form = e.client.form("create_custom_field")
    form.fill(name="Season", type="single-select", values=[{"name": "Spring"}])
    assert json.loads(form.fields["values"].value) == [{"name": "Spring"}]
    values, problems = form.collect()
    assert not problems and values["values"] == [{"name": "Spring"}]


def test_a_select_fields_values_are_picked_into_the_json(env):
    e = env("asset_library")
    e.client.fetch("custom_field_values", refresh=True)
    values = e.ws.read("asset_library", "custom_field_values")
    field_id = values.custom_field_id.iloc[0]
    form = e.client.form("set_board_custom_field")
    form.fields["custom_field_id"].value = str(field_id)
    picker = form.lookups["values"].picker
    assert len(picker.options) == (values.custom_field_id == field_id).sum()
    picker.value = picker.options[0]
    chosen = form.collect()[0]["values"]
    assert chosen == [{"id": form.lookups["values"].field.choices[picker.options[0]]}] and picker.value == ""


def test_a_json_patch_can_be_sent_where_the_action_takes_one(env):
    e = env("audience_platform")
    form = e.client.form("update_audience")
    assert form.content_type.layout.display != "none"
    audience = e.box.examples("audience_platform")["audience_ids"][0]
    form.fill(audience_id=audience, patch=[{"op": "add", "path": "/tags/-", "value": "json-patched"}])
    form.content_type.value = "json_patch"
    assert "Content-Type: application/json-patch+json" in form.preview()
    form.submit()
    assert form.state == "sent", form.error
    assert "json-patched" in e.client.call("get_audience", audience_id=audience)["tags"]
    assert e.client.form("update_profile").content_type.layout.display == "none"


def test_refreshing_one_field_fills_the_others_reading_the_same_resource(env):
    e = env("asset_library")
    with tk.Workspace() as fresh:
        client = fresh.connect("asset_library", **e.box.credentials("asset_library"))
        form = client.form("update_board")
        board, parent = form.lookups["board_id"], form.lookups["parent_board_id"]
        assert not form.fields["board_id"].options and "↻" in board.note.value
        board.button.click()
        assert len(form.fields["parent_board_id"].options) == len(form.fields["board_id"].options) > 0
        assert parent.note.layout.display == "none"
