"""toolkit.downloads: the translation download's three steps in one call (toolkit.http.translation_downloads),
and the client-side download step of a URL (toolkit.http.downloads: try count, timeouts, size limit,
text output), against stubs on 127.0.0.1."""
from __future__ import annotations

import io
import subprocess
import sys
import zipfile

import pytest
import requests
import responses

from toolkit import downloads
from toolkit.errors import ToolkitError

START = "http://127.0.0.1:9/PD/rest/v0/submissions/1001/download"
FILES = "http://127.0.0.1:9/PD/rest/v0/submissions/download/7001"


def a_zip(**files: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_the_three_steps_in_one_call(tms, stub, tmp_path):
    stub.add(responses.GET, START, json={"downloadId": 7001, "processingFinished": False})
    stub.add(responses.GET, START, json={"downloadId": 7001, "processingFinished": False})
    stub.add(responses.GET, START, json={"downloadId": 7001, "processingFinished": True})
    stub.add(responses.GET, FILES, body=a_zip(**{"fr-FR/home.html": b"<p>Bonjour</p>"}))
    waits: list[float] = []
    got = downloads.submission_files(tms, 1001, deliverable_target_ids=[90001], interval=3, wait=waits.append)
    assert (got.download_id, got.polls, waits) == (7001, 2, [3, 3])
    assert got.names == ["fr-FR/home.html"]
    sent = [c.request.url for c in stub.calls if "/download" in c.request.url]
    assert "deliverableTargetIds=90001" in sent[0] and "downloadId=7001" in sent[1]
    assert got.save(tmp_path / "d.zip").read_bytes() == got.data


def test_a_download_not_prepared_after_its_polls_says_so(tms, stub):
    stub.add(responses.GET, START, json={"downloadId": 7001, "processingFinished": False})
    waits: list[float] = []
    with pytest.raises(ToolkitError, match="still being prepared after 4 polls 2 s apart"):
        downloads.submission_files(tms, 1001, source_files=True, polls=4, wait=waits.append)
    assert waits == [2.0] * 4
    assert not any("/submissions/download/" in c.request.url for c in stub.calls)


def test_the_module_loads_no_dataframe_or_widget_library():
    code = ("import sys, toolkit.downloads; heavy = {'pandas', 'ipywidgets', 'duckdb', 'pyarrow'} & "
            "set(sys.modules); print(sorted(heavy))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout \
        == "[]\n"


# --- the client-side download step -------------------------------------------------------------------------

URL = "http://127.0.0.1:9/files/terms.csv"


def test_text_is_loaded_as_output(stub):
    stub.add(responses.GET, URL, body=b"term,fr\nhello,caf\xc3\xa9\n", content_type="text/csv")
    got = downloads.fetch_url(URL, as_text=True)
    assert (got.name, got.text, got.content_type) == ("terms.csv", "term,fr\nhello,café\n", "text/csv")


@pytest.mark.parametrize(("body", "kind", "limit", "problem"), [
    (b"\x89PNG...", "image/png", 100, "only text"), (b"x" * 101, "text/plain", 100, "larger than 100 bytes")])
def test_binary_or_too_large_content_is_not_loaded_as_text(stub, body, kind, limit, problem):
    stub.add(responses.GET, URL, body=body, content_type=kind)
    with pytest.raises(ToolkitError, match=problem):
        downloads.fetch_url(URL, as_text=True, max_text_bytes=limit)
    assert downloads.fetch_url(URL, name="asset.bin").content == body      # its bytes, without as_text


def test_tries_count_failures_and_timeouts_are_passed(stub):
    stub.add(responses.GET, URL, status=503)
    stub.add(responses.GET, URL, body=requests.ConnectionError("reset"))
    stub.add(responses.GET, URL, body=b"ok", content_type="text/plain")
    waits: list[float] = []
    assert downloads.fetch_url(URL, tries=3, wait=waits.append, connect_timeout=2, read_timeout=5).content == b"ok"
    assert waits == [1.0, 2.0] and len(stub.calls) == 3
    assert stub.calls[-1].request.req_kwargs["timeout"] == (2, 5)


def test_the_last_try_failing_names_the_count(stub):
    stub.add(responses.GET, URL, status=502)
    with pytest.raises(ToolkitError, match="failed 2 time"):
        downloads.fetch_url(URL, tries=2, wait=lambda s: None)
    stub.add(responses.GET, URL + "x", status=404)
    with pytest.raises(ToolkitError, match="404"):
        downloads.fetch_url(URL + "x", wait=lambda s: None)
