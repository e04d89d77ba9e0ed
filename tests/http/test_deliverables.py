"""toolkit.downloads gets a submission's translated files: by language (all, or some) through the three
steps, or one target's file in one request; as bytes, saved or extracted; a deliverable not ready yet is
said, and nothing is written. Against the sandbox, through the client."""
from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import pytest

import toolkit
import toolkit.sandbox
from toolkit import downloads
from toolkit.errors import ApiError, ToolkitError
from toolkit.http.client import Client

PAGES = {"home.html": b"<html><body><h1>Welcome</h1></body></html>",
         "blog/sale.html": b"<p>Big <b>sale</b></p>"}


@pytest.fixture(scope="module")
def box() -> Iterator[toolkit.sandbox.Sandbox]:
    with toolkit.sandbox.start() as started:
        yield started


@pytest.fixture(scope="module")
def tm(box) -> Client:
    return toolkit.connect("translation", **box.credentials("translation"))


def started_submission(tm: Client, languages: list[str]) -> int:
    """A submission of PAGES (one zip, extracted) into `languages`, started."""
    batch = [{"name": "Batch1", "targetFormat": "TXLF",
              "targetLanguageInfos": [{"targetLanguage": lang} for lang in languages]}]
    sid = tm.call("translation.create_submission", name="site", project_id=10, source_language="en-US",
                  batch_infos=batch)["submissionId"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, data in PAGES.items():
            zipped.writestr(name, data)
    tm.call("translation.upload_source", submission_id=sid, file=("site.zip", archive.getvalue()),
            batch_name="Batch1", file_format_name="HTML", extract_archive=True)
    saved = tm.call("translation.save_submission", submission_id=sid, auto_start=True)
    assert saved["startedSubmissionIds"] == [sid]
    return sid


@pytest.fixture(scope="module")
def done(box, tm) -> int:
    """A submission whose every target is PROCESSED (the clock moved four days)."""
    sid = started_submission(tm, ["fr-FR", "de-DE"])
    box.advance(days=4)
    return sid


def test_some_languages_come_as_one_zip_read_back_by_language(tm, done, tmp_path):
    got = downloads.deliverables(tm, done, ["fr-FR"], wait=lambda s: None)
    assert got.polls >= 1
    translated = got.translated()
    assert list(translated) == ["fr-FR"] and set(translated["fr-FR"]) == set(PAGES)
    assert translated["fr-FR"]["blog/sale.html"] == b"<p>[fr-FR] Big <b>[fr-FR] sale</b></p>"
    assert got.read(f"Sub_{done}_fr-FR/home_fr-FR_Translated/home.html") == translated["fr-FR"]["home.html"]
    with pytest.raises(KeyError, match="not in the download"):
        got.read("de-DE/home.html")
    assert got.save(tmp_path / "fr.zip").read_bytes() == got.data


def test_all_languages_and_extracting_them_to_a_folder(tm, done, tmp_path):
    got = downloads.deliverables(tm, done, wait=lambda s: None, include_manifest=True)
    assert set(got.translated()) == {"fr-FR", "de-DE"}
    written = got.extract(tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == sorted(got.names)
    assert "manifest.json" in got.names
    german = tmp_path / "out" / f"Sub_{done}_de-DE" / "blog" / "sale_de-DE_Translated" / "sale.html"
    assert german.read_bytes() == b"<p>[de-DE] Big <b>[de-DE] sale</b></p>"
    german.write_bytes(b"edited by hand")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        got.extract(tmp_path / "out")
    assert german.read_bytes() == b"edited by hand"                 # nothing replaced without asking
    got.extract(tmp_path / "out", overwrite=True)
    assert german.read_bytes().startswith(b"<p>[de-DE]")


def test_one_target_file_in_one_request(tm, done, tmp_path):
    targets = tm.call("translation.list_targets", submission_ids=[done])
    french = next(t for t in targets if t["targetLanguage"] == "fr-FR" and t["documentName"] == "home.html")
    got = downloads.target_file(tm, done, french["targetId"])
    assert got.data == b"<html><body><h1>[fr-FR] Welcome</h1></body></html>"
    path = got.save(tmp_path / "home.fr.html")
    assert path.read_bytes() == got.data
    with pytest.raises(FileExistsError):
        got.save(path)
    with pytest.raises(IsADirectoryError, match=f"target-{french['targetId']}"):
        got.save(tmp_path)


def test_a_deliverable_not_ready_yet_is_said_and_nothing_is_written(tm, tmp_path):
    sid = started_submission(tm, ["it-IT"])                           # started, the clock has not moved
    with pytest.raises(ApiError, match="no deliverable yet for targets .* \\(READY\\)") as raised:
        downloads.deliverables(tm, sid, wait=lambda s: None)
    assert raised.value.status == 400
    target = tm.call("translation.list_targets", submission_ids=[sid])[0]["targetId"]
    with pytest.raises(ApiError, match=f"{target} \\(READY\\)"):
        downloads.target_file(tm, sid, target)
    with pytest.raises(ApiError, match="not target languages"):
        downloads.deliverables(tm, sid, ["ja-JP"], wait=lambda s: None)
    with pytest.raises(ToolkitError, match="at least one language"):
        downloads.deliverables(tm, sid, [], wait=lambda s: None)
    assert list(tmp_path.iterdir()) == []


def test_a_zip_entry_that_would_leave_the_folder_writes_nothing(tmp_path):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("fine.txt", b"ok")
        zipped.writestr("../escaped.txt", b"no")
    got = downloads.Downloaded(7001, archive.getvalue(), 1)
    with pytest.raises(ToolkitError, match="outside"):
        got.extract(tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "out").exists()
