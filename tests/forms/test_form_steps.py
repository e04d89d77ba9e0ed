"""The multi-step helpers end to end against the sandbox: upload, import, new submission, download."""
from __future__ import annotations

import datetime as dt
import zipfile

import ipywidgets as W
import pytest
import requests

from toolkit.connection import audit
from toolkit.errors import ToolkitError
from toolkit.forms import AssetImport, Download, MultipartUpload, SubmissionWizard

MIB = 1024 * 1024


def advance(e):
    return lambda seconds: e.box.advance(seconds=seconds)


def test_a_large_file_goes_up_in_parts_with_progress(env, tmp_path):
    e = env("asset_library")
    board = e.box.examples("asset_library")["board_id"]
    path = tmp_path / "keynote-cut.mp4"
    path.write_bytes(bytes(range(256)) * (11 * MIB // 256) + b"tail")
    up = MultipartUpload(e.client)
    result = up.run(path, parent_board_id=board)
    assert result["parts"] == 3 and result["size"] == path.stat().st_size
    assert (up.progress.value, up.progress.max) == (3, 3) and up.state == "done"
    assert [s["step"] for s in up.steps] == ["create_upload", "upload parts", "complete_upload"]
    assets = e.client.fetch("assets", refresh=True)
    assert result["asset_id"] in set(assets.id)
    inside = {a["id"] for a in e.client.rows("list_assets", parent_board_id=board)}
    assert result["asset_id"] in inside
    sources = audit.audit(e.ws).source
    assert (sources == "helper:MultipartUpload").sum() == 5          # create, 3 parts, complete


def test_a_small_file_picked_in_the_widget_goes_up_in_one_put(env):
    e = env("asset_library")
    up = MultipartUpload(e.client)
    up.file.value = ({"name": "logo.png", "type": "image/png", "size": 2048, "content": memoryview(b"p" * 2048),
                      "last_modified": dt.datetime.now(dt.UTC)},)
    before = e.requests()
    up.button.click()
    assert up.state == "done" and up.result["parts"] == 1, up.error
    assert e.requests() == before + 2                                  # create_upload, PUT
    version = e.client.call("get_asset_version", asset_id=up.result["asset_id"], version_id=up.result["version_id"])
    assert version["size"] == 2048 and version["fileName"] == "logo"


def test_tags_named_at_upload_go_as_ids_found_or_created(env):
    e = env("asset_library")
    held = e.client.rows("list_tags")[0]
    up = MultipartUpload(e.client)
    result = up.run(("cut.mp4", b"v" * 1024), tags=[held["name"], "launch-week", {"id": held["id"]}])
    assert up.state == "done", up.error
    created = [t for t in e.client.rows("list_tags") if t["name"] == "launch-week"]
    assert len(created) == 1, "a name the workspace lacks is created once"
    said = next(s["detail"] for s in up.steps if s["step"] == "tags")
    assert said == f"{held['name']} found, launch-week created"
    version = e.client.call("get_asset_version", asset_id=result["asset_id"], version_id=result["version_id"])
    assert {held["name"], "launch-week"} <= {t["name"] for t in version["tags"]}


def test_the_upload_button_shows_an_error_instead_of_raising(env):
    up = MultipartUpload(env("asset_library").client)
    assert up.click() is None and up.state == "failed" and "choose a file" in up.status.value


@pytest.mark.parametrize(("url", "status", "error"), [
    ("https://files.example.org/press/beach.jpg", "succeeded", None),
    ("https://files.example.org/missing/brochure.pdf", "failed", "SOURCE_FILE_NOT_FOUND"),
    ("https://blocked.example/leak.jpg", "failed", "SOURCE_URL_BLOCKED"),
])
def test_an_import_is_followed_until_it_ends(env, url, status, error):
    e = env("asset_library")
    helper = AssetImport(e.client, wait=advance(e))
    result = helper.run(url)
    assert result["status"] == status and result["error_type"] == error
    assert 0 < result["waited"] <= 60
    if status == "succeeded":
        assert result["asset_id"] in set(e.client.fetch("assets", refresh=True).id)


def test_an_import_that_outlasts_the_timeout_says_so(env):
    e = env("asset_library")
    helper = AssetImport(e.client, wait=advance(e), interval=30, timeout=90)
    result = helper.run("https://files.example.org/slow/raw.mov")
    assert result["status"] == "still inProgress" and result["waited"] == 90
    assert helper.state == "timed out"


def test_the_import_widget_runs_from_its_fields(env):
    e = env("asset_library")
    helper = AssetImport(e.client, wait=advance(e))
    helper.url.value = "https://files.example.org/press/launch.mp4"
    helper.button.click()
    assert helper.state == "done" and helper.result["status"] == "succeeded"
    assert "succeeded" in helper.status.value


def test_a_submission_is_created_uploaded_analyzed_and_started(env):
    e = env("translation")
    ids = e.box.examples("translation")
    wizard = SubmissionWizard(e.client, wait=advance(e))
    result = wizard.run(name="Autumn site", project_id=ids["project_id"], workflow_id=ids["workflow_id"],
                        source_language="en-US", target_languages=["fr-FR", "de-DE"],
                        file=("home.html", b"<html><body><p>Welcome to the autumn sale</p></body></html>"),
                        file_format_name="HTML")
    assert result["started"] and result["document_ids"]
    assert [s["step"] for s in wizard.steps] == ["create_submission", "upload_source", "analyze_submission",
                                                 "analysis", "save_submission"]
    assert all(s["ok"] for s in wizard.steps)
    targets = e.client.fetch("targets", submission_ids=[result["submission_id"]])
    assert sorted(targets.target_language) == ["de-DE", "fr-FR"]


def test_the_wizard_offers_the_projects_workflows(env):
    e = env("translation")
    e.client.fetch("workflows", refresh=True)
    wizard = SubmissionWizard(e.client, wait=advance(e))
    wizard.project.widget.value = str(e.box.examples("translation")["project_id"])
    workflows = e.ws.read("translation", "workflows")
    mine = workflows[workflows.project_id == e.box.examples("translation")["project_id"]]
    assert len(wizard.workflow.widget.options) == len(mine) > 0


def test_a_failed_step_is_marked_and_raised(env):
    e = env("translation")
    wizard = SubmissionWizard(e.client, wait=advance(e))
    with pytest.raises(Exception, match="project"):
        wizard.run(name="Nowhere", project_id=999999, workflow_id=1, source_language="en-US",
                   target_languages=["fr-FR"], file=("a.html", b"<p>a</p>"), file_format_name="HTML")
    assert wizard.state == "failed" and "✗" in wizard.status.value


def test_a_download_is_polled_saved_and_listed(env, tmp_path):
    e = env("translation")
    ids = e.box.examples("translation")
    helper = Download(e.client, wait=advance(e))
    files = helper.run(ids["submission_id"], tmp_path / "deliverables.zip",
                       deliverable_target_ids=ids["deliverable_target_ids"])
    assert len(files) >= len(ids["deliverable_target_ids"])
    with zipfile.ZipFile(tmp_path / "deliverables.zip") as archive:
        assert sorted(archive.namelist()) == sorted(files.name)
    assert [s["step"] for s in helper.steps] == ["start_download", "prepare", "download_files", "list"]


def test_a_download_never_replaces_a_file_unless_told(env, tmp_path):
    e = env("translation")
    ids = e.box.examples("translation")
    earlier = tmp_path / "deliverables.zip"
    earlier.write_bytes(b"last week's deliverables")
    helper = Download(e.client, wait=advance(e))
    with pytest.raises(ToolkitError, match="exists: tick 'replace a file of that name'"):
        helper.run(ids["submission_id"], earlier, source_files=True)
    assert earlier.read_bytes() == b"last week's deliverables" and helper.steps == []
    files = helper.run(ids["submission_id"], earlier, overwrite=True, source_files=True)
    with zipfile.ZipFile(earlier) as archive:
        assert sorted(archive.namelist()) == sorted(files.name)


def finished_submission(e) -> int:
    """A submission of two languages whose targets are all PROCESSED (the clock moved four days)."""
    batch = [{"name": "Batch1", "targetLanguageInfos": [{"targetLanguage": "fr-FR"}, {"targetLanguage": "de-DE"}]}]
    sid = e.client.call("translation.create_submission", name="Site", project_id=10, source_language="en-US",
                        batch_infos=batch)["submissionId"]
    e.client.call("translation.upload_source", submission_id=sid, file=("home.html", b"<p>Hello</p>"),
                  batch_name="Batch1", file_format_name="HTML")
    e.client.call("translation.save_submission", submission_id=sid, auto_start=True)
    e.box.advance(days=4)
    return sid


def test_a_language_or_one_target_is_downloaded_from_the_form(env, tmp_path):
    e = env("translation")
    sid = finished_submission(e)
    helper = Download(e.client, wait=advance(e))
    files = helper.run(sid, tmp_path / "german.zip", deliverable_languages=["de-DE"])
    assert list(files.name) == [f"Sub_{sid}_de-DE/home_de-DE_Translated/home.html"]
    target = next(t["targetId"] for t in e.client.call("translation.list_targets", submission_ids=[sid])
                  if t["targetLanguage"] == "fr-FR")
    files = helper.run(sid, tmp_path / "home.fr.html", target_id=target)
    assert (tmp_path / "home.fr.html").read_bytes() == b"<p>[fr-FR] Hello</p>" and list(files.name) == ["home.fr.html"]
    assert [s["step"] for s in helper.steps] == ["download_target_deliverable", "save"]
    with pytest.raises(ToolkitError, match="comes alone"):
        helper.run(sid, tmp_path / "x", target_id=target, deliverable_languages=["fr-FR"])
    assert not (tmp_path / "x").exists()


def test_the_download_widget_offers_languages_and_one_target(env, tmp_path, monkeypatch):
    e = env("translation")
    sid = finished_submission(e)
    monkeypatch.chdir(tmp_path)
    helper = Download(e.client, wait=advance(e))
    helper.submission.widget.value = str(sid)
    helper.languages.widget.value = "fr-FR"
    helper.button.click()
    assert helper.state == "done", helper.error
    with zipfile.ZipFile(helper.path_written) as archive:
        assert archive.namelist() == [f"Sub_{sid}_fr-FR/home_fr-FR_Translated/home.html"]
    helper = Download(e.client, wait=advance(e))
    helper.submission.widget.value = str(sid)
    target = next(t["targetId"] for t in e.client.call("translation.list_targets", submission_ids=[sid]))
    helper.target.widget.value = str(target)
    helper.button.click()
    assert helper.state == "done", helper.error
    assert helper.path_written.name == f"target-{target}" and helper.path_written.read_bytes().startswith(b"<p>[")


def test_the_download_widget_uses_its_fields(env, tmp_path, monkeypatch):
    e = env("translation")
    monkeypatch.chdir(tmp_path)
    helper = Download(e.client, wait=advance(e))
    helper.submission.widget.value = str(e.box.examples("translation")["submission_id"])
    helper.source_files.widget.value = True
    helper.button.click()
    assert helper.state == "done", helper.error
    assert helper.path_written.exists() and helper.path.value == str(helper.path_written)
    assert isinstance(helper.output, W.Output) and helper.output.outputs


def test_a_part_refused_for_the_rate_is_sent_again(env, monkeypatch):
    e = env("asset_library")
    up = MultipartUpload(e.client)
    session, calls = e.client.transport.session, []
    real = session.put

    def busy_once(url, **kwargs):
        calls.append(url)
        if len(calls) == 1:
            answer = requests.Response()
            answer.status_code, answer.headers["Retry-After"] = 429, "0"
            return answer
        return real(url, **kwargs)

    monkeypatch.setattr(session, "put", busy_once)
    assert up.run(("clip.mov", b"z" * (6 * MIB)))["parts"] == 2 and len(calls) == 3
