"""The translation flows of two public integrations, run against the sandbox with plain requests,
each request shaped as that client shapes it, and every field it reads checked.

Written by us from the request shapes of (docs/public-specs.md, sources G4 and G5; nothing copied):
- the CMS connector (G4: a document-authoring CMS's GlobalLink connector): a zip of pages uploaded with
  `extractArchive=true` into a submission created without a workflow, the status polled, saved with
  autoStart; then per language a download started with `deliverableLanguages` as a readiness signal,
  each target's file fetched from `targets/{id}/download/deliverable`, the targets marked delivered;
  and one language of another submission cancelled by its target ids.
- the content-studio plugin (G5): a token asked for with a multipart body, the project read for its
  `projectLanguageDirections`, a submission created with the project id as a string and no workflow,
  one JSON document uploaded as `<id>.html`, saved; then per language the target found in
  `/targets`, a zip downloaded by `deliverableTargetIds` and the document read at
  `Sub_{id}_{locale}/{id}_{locale}_Translated/{id}.html`, parsed as JSON for its `content`.

Each flow keeps a trace of (step, status) and stops where its client would give up (the client's
own checks), so the same flows say how far a client got against an older sandbox too.
"""
from __future__ import annotations

import email.utils
import io
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import pytest
import requests

import toolkit.sandbox

V0 = "/rest/v0"
DAY_MS = 86_400_000
PAGES = {  # the CMS's pages, as its connector flattens their paths into file names
    "index.html": "<html><body><h1>Welcome</h1><p>Shop our <a href=\"/new\" title=\"New in\">new range</a>."
                  "</p><img src=\"/hero.png\" alt=\"A red bicycle\"></body></html>",
    "blog_spring-sale.html": "<html><body><main><h2>Spring sale</h2><p>Up to 30% off &amp; free delivery."
                             "</p></main></body></html>",
}
STUDIO_DOC = {"_id": "page-about", "_type": "page", "content": "<h1>About us</h1><p>We make bicycles.</p>",
              "slug": "about-us"}


class Stop(Exception):
    """The client gives up here (what it does on a failed step)."""


@dataclass
class Flow:
    """One client's requests against the sandbox: the trace of (step, status) and what it read."""
    box: toolkit.sandbox.Sandbox
    trace: list[tuple[str, int]] = field(default_factory=list)
    read: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None

    def __post_init__(self) -> None:
        self.creds = self.box.credentials("translation")
        self.base = self.creds["base_url"]
        self.http = requests.Session()
        self.http.trust_env = False
        self.token = ""

    def send(self, step: str, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        answer = self.http.request(method, self.base + path, headers=headers, timeout=10, **kwargs)
        self.trace.append((step, answer.status_code))
        return answer

    def need(self, ok: Any, why: str) -> None:
        if not ok:
            raise Stop(why)

    def json(self, answer: requests.Response, step: str) -> Any:
        self.need(answer.ok, f"{step}: {answer.status_code} {answer.text[:200]}")
        return answer.json()

    def now_ms(self, answer: requests.Response) -> int:
        """The client's clock: the service's Date header (the sandbox's clock is virtual)."""
        return int(email.utils.parsedate_to_datetime(answer.headers["Date"]).timestamp() * 1000)

    def urlencoded_token(self) -> requests.Response:
        form = {"grant_type": "password", "username": self.creds["username"], "password": self.creds["password"]}
        answer = self.http.post(self.base + "/oauth/token", data=form, timeout=10,
                                auth=(self.creds["client_id"], self.creds["client_secret"]))
        self.trace.append(("token (urlencoded)", answer.status_code))
        self.token = self.json(answer, "token")["access_token"]
        return answer


# --- the CMS connector (G4) ---------------------------------------------------------------------

def cms_send(flow: Flow, languages: list[str]) -> int:
    """Create (no workflow), upload one zip extracted into documents, poll the status, save with autoStart."""
    now = flow.now_ms(flow.urlencoded_token())
    batch = "spring-site-batch-1"
    body = {"name": "spring-site-1", "dueDate": now + 7 * DAY_MS, "projectId": 10, "sourceLanguage": "en-US",
            "instructions": "DA localization project: spring-site",
            "batchInfos": [{"targetLanguageInfos": [{"targetLanguage": code} for code in languages],
                            "targetFormat": "TXLF", "name": batch}],
            "claimScope": "LANGUAGE"}
    created = flow.json(flow.send("create submission", "POST", V0 + "/submissions/create", json=body), "create")
    sid = created.get("submissionId")
    flow.need(sid, "create: no submissionId")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, page in PAGES.items():
            zipped.writestr(name, page)
    files = {"file": (f"{batch}.zip", archive.getvalue(), "application/zip")}
    form = {"batchName": batch, "fileFormatName": "HTML", "extractArchive": "true"}
    uploaded = flow.json(flow.send("upload zip", "POST", f"{V0}/submissions/{sid}/upload/source", files=files,
                                   data=form), "upload")
    documents = uploaded.get("documentIds") or []
    flow.read.setdefault("uploaded", {})[sid] = {d["name"]: d["documentId"] for d in documents}
    flow.read.setdefault("document submissions", {})[sid] = {str(d["submissionId"]) for d in documents}
    flow.need(set(flow.read["uploaded"][sid]) == set(PAGES), "upload: not every page was accepted")
    for _ in range(60):
        status = flow.send("status", "GET", f"{V0}/submissions/{sid}/status")
        if status.ok and "PROCESSED" in str(status.json().get("status", "")).upper():
            break
    saved = flow.json(flow.send("save (autoStart)", "POST", f"{V0}/submissions/{sid}/save",
                                json={"autoStart": True}), "save")
    started = flow.read.setdefault("started", {})[sid] = [str(i) for i in saved.get("startedSubmissionIds") or []]
    flow.need(str(sid) in started, f"save: not started: {saved.get('messages')}")
    return int(sid)


def cms_targets(flow: Flow, sid: int) -> list[dict[str, Any]]:
    """Every target of the submission, 200 at a time from page 0, filtered by the caller."""
    rows: list[dict[str, Any]] = []
    for page in range(50):
        answer = flow.send("list targets", "GET", V0 + "/targets",
                           params={"submissionIds": str(sid), "pageSize": "200", "pageNumber": str(page)})
        found = flow.json(answer, "targets")
        rows += found
        if len(found) < 200:
            break
    return rows


def cms_save_language(flow: Flow, sid: int, language: str) -> list[int]:
    """Wait for the language's deliverables (a download by language), fetch each target's file,
    check it is the page translated, and mark the saved ones delivered."""
    started = flow.json(flow.send(f"download {language} (start)", "GET", f"{V0}/submissions/{sid}/download",
                                  params={"deliverableLanguages": language, "includeManifest": "true"}),
                        "download by language")
    download_id, ready = started.get("downloadId"), bool(started.get("processingFinished"))
    flow.need(download_id, "download by language: no downloadId")
    for _ in range(60):
        if ready:
            break
        polled = flow.send(f"download {language} (poll)", "GET", f"{V0}/submissions/{sid}/download",
                           params={"downloadId": download_id})
        ready = polled.ok and bool(polled.json().get("processingFinished"))
    flow.need(ready, f"{language}: deliverables not ready")
    documents = {str(v): k for k, v in flow.read["uploaded"][sid].items()}
    delivered = []
    for target in cms_targets(flow, sid):
        processed = str(target.get("status", "")).upper() in ("PROCESSED", "COMPLETED", "DELIVERED")
        if target.get("targetLanguage") != language or not processed:
            continue
        name = documents.get(str(target.get("documentId")))
        answer = flow.send(f"target file {language}", "GET",
                           f"{V0}/submissions/{sid}/targets/{target['targetId']}/download/deliverable")
        flow.need(answer.ok and name, f"target {target.get('targetId')}: {answer.status_code}")
        flow.read.setdefault("files", {})[(language, name)] = answer.text
        delivered.append(target["targetId"])
    if delivered:
        marked = flow.send(f"mark delivered {language}", "POST", f"{V0}/submissions/{sid}/targets/delivered",
                           json={"targetIds": delivered})
        flow.need(marked.ok, f"mark delivered: {marked.status_code}")
    return delivered


def cms_cancel_language(flow: Flow, sid: int, language: str) -> list[int]:
    ids = [t["targetId"] for t in cms_targets(flow, sid) if t.get("targetLanguage") == language]
    flow.need(ids, f"no targets in {language} to cancel")
    flow.json(flow.send(f"cancel {language}", "POST", f"{V0}/submissions/cancel/{sid}", json={"targetIds": ids}),
              "cancel")
    return ids


def run_cms(box: toolkit.sandbox.Sandbox) -> Flow:
    flow = Flow(box)
    try:
        sid = cms_send(flow, ["fr-FR", "de-DE"])
        flow.read["submission"] = sid
        box.advance(days=4)                       # the linguists' work: every phase completed
        flow.urlencoded_token()                   # the connector's cached token has expired by now
        for language in ("fr-FR", "de-DE"):
            flow.read.setdefault("delivered", {})[language] = cms_save_language(flow, sid, language)
        other = cms_send(flow, ["fr-FR", "de-DE"])
        flow.read["cancelled"] = cms_cancel_language(flow, other, "de-DE")
        flow.read["after cancel"] = {(t["targetLanguage"], t["status"]) for t in cms_targets(flow, other)}
    except Stop as stop:
        flow.stopped = str(stop)
    return flow


# --- the content-studio plugin (G5) -------------------------------------------------------------

def studio_token(flow: Flow) -> None:
    """The plugin's token request: a multipart FormData body and the client credentials as Basic."""
    form = {"grant_type": (None, "password"), "username": (None, flow.creds["username"]),
            "password": (None, flow.creds["password"])}
    answer = flow.http.post(flow.base + "/oauth/token", files=form, timeout=10,
                            auth=(flow.creds["client_id"], flow.creds["client_secret"]))
    flow.trace.append(("token (multipart)", answer.status_code))
    flow.token = flow.json(answer, "token").get("access_token") or ""
    flow.need(flow.token, "token: no access_token")


def studio_translation(flow: Flow, sid: int, doc_id: str, locale: str) -> Any:
    studio_token(flow)
    targets = flow.json(flow.send("list targets", "GET", f"{V0}/targets?submissionIds={sid}"), "targets")
    mine = [t for t in targets if t.get("targetLanguage") == locale]
    flow.need(mine, f"no target in {locale}")
    # the plugin shows a locale 100% done when its target is PROCESSED, else 50%
    flow.read.setdefault("progress", {})[locale] = [100 if t.get("status") == "PROCESSED" else 50 for t in mine]
    started = flow.json(flow.send(f"download {locale} (start)", "GET",
                                  f"{V0}/submissions/{sid}/download?deliverableTargetIds={mine[0]['targetId']}"),
                        "download")
    download_id = started.get("downloadId")
    for _ in range(60):
        polled = flow.json(flow.send(f"download {locale} (poll)", "GET",
                                     f"{V0}/submissions/{sid}/download?downloadId={download_id}"), "poll")
        if polled.get("processingFinished"):
            break
    zipped = flow.send(f"download {locale} (zip)", "GET", f"{V0}/submissions/download/{download_id}")
    flow.need(zipped.ok, f"zip: {zipped.status_code}")
    path = f"Sub_{sid}_{locale}/{doc_id}_{locale}_Translated/{doc_id}.html"
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        flow.need(path in archive.namelist(), f"zip: no {path} in {archive.namelist()[:4]}")
        return json.loads(archive.read(path))["content"]


def run_studio(box: toolkit.sandbox.Sandbox) -> Flow:
    flow = Flow(box)
    project, doc_id = "10", STUDIO_DOC["_id"]          # the plugin's settings hold the project as text
    try:
        studio_token(flow)
        described = flow.json(flow.send("get project", "GET", f"{V0}/projects/{project}"), "project")
        locales = [{"localeId": d["targetLanguage"], "description": d["targetLanguageDisplayName"]}
                   for d in described["projectLanguageDirections"]]
        flow.read["locales"] = locales
        chosen = ["fr-FR", "de-DE"]
        body = {"projectId": project, "dueDate": 1964477679000, "sourceLanguage": "en-US",
                "batchInfos": [{"targetFormat": "TXLF", "name": doc_id,
                                "targetLanguageInfos": [{"targetLanguage": code} for code in chosen]}],
                "claimScope": "LANGUAGE", "name": doc_id}
        sid = flow.json(flow.send("create submission", "POST", V0 + "/submissions/create", json=body),
                        "create").get("submissionId")
        flow.need(sid, "create: no submissionId")
        # the plugin's own file format name is its deployment's; the sandbox's project has "HTML"
        form = {"batchName": doc_id, "fileFormatName": "HTML", "extractArchive": "false"}
        upload = {"file": (f"{doc_id}.html", json.dumps(STUDIO_DOC).encode())}
        flow.json(flow.send("upload document", "POST", f"{V0}/submissions/{sid}/upload/source", data=form,
                            files=upload), "upload")
        flow.read["save"] = flow.json(flow.send("save (autoStart)", "POST", f"{V0}/submissions/{sid}/save",
                                                json={"autoStart": True}), "save")
        box.advance(days=4)
        flow.read["content"] = {locale: studio_translation(flow, sid, doc_id, locale) for locale in chosen}
    except Stop as stop:
        flow.stopped = str(stop)
    return flow


# --- the tests --------------------------------------------------------------------------------------

@pytest.fixture()
def box() -> Iterator[toolkit.sandbox.Sandbox]:
    with toolkit.sandbox.start() as started:
        yield started


class Shape(HTMLParser):
    """An HTML document's tags and attributes in order (what must survive a translation), and its text."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.texts: list[str] = []
        self.feed(source)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, [(k, v) for k, v in attrs if k not in ("alt", "title")]))

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.texts.append(data.strip())


def test_the_cms_connector_flow_runs_end_to_end(box: toolkit.sandbox.Sandbox) -> None:
    flow = run_cms(box)
    assert flow.stopped is None, (flow.stopped, flow.trace)
    assert all(200 <= status < 300 for _, status in flow.trace), flow.trace
    sid = flow.read["submission"]
    assert flow.read["document submissions"][sid] == {str(sid)}  # nothing overflowed into another submission
    assert flow.read["started"][sid] == [str(sid)]
    for language in ("fr-FR", "de-DE"):
        assert len(flow.read["delivered"][language]) == len(PAGES)
        for name, page in PAGES.items():
            translated = flow.read["files"][(language, name)]
            source, result = Shape(page), Shape(translated)
            assert result.tags == source.tags                       # every tag and attribute kept
            assert result.texts == [f"[{language}] {t}" for t in source.texts]
            assert f'alt="[{language}] A red bicycle"' in translated or "alt" not in page
    targets = Flow(box)
    targets.urlencoded_token()
    assert {t["status"] for t in cms_targets(targets, sid)} == {"DELIVERED"}
    assert {status for lang, status in flow.read["after cancel"] if lang == "de-DE"} == {"CANCELLED"}
    assert {status for lang, status in flow.read["after cancel"] if lang == "fr-FR"} == {"READY"}
    assert len(flow.read["cancelled"]) == len(PAGES)


def test_the_studio_plugin_flow_runs_end_to_end(box: toolkit.sandbox.Sandbox) -> None:
    flow = run_studio(box)
    assert flow.stopped is None, (flow.stopped, flow.trace)
    assert all(200 <= status < 300 for _, status in flow.trace), flow.trace
    assert {"localeId": "fr-FR", "description": "French (France)"} in flow.read["locales"]
    assert flow.read["save"]["startedSubmissionIds"]
    assert flow.read["progress"] == {"fr-FR": [100], "de-DE": [100]}
    for locale, content in flow.read["content"].items():
        assert content == f"<h1>[{locale}] About us</h1><p>[{locale}] We make bicycles.</p>"


def test_a_language_not_ready_is_said_and_one_of_another_submission_is_not_found(box) -> None:
    flow = Flow(box)
    sid = cms_send(flow, ["fr-FR"])                                # started, nothing translated yet
    answer = flow.send("download fr-FR", "GET", f"{V0}/submissions/{sid}/download",
                       params={"deliverableLanguages": "fr-FR"})
    assert answer.status_code == 400 and "no deliverable yet" in answer.json()["messages"][0]
    assert flow.send("download it-IT", "GET", f"{V0}/submissions/{sid}/download",
                     params={"deliverableLanguages": "it-IT"}).status_code == 400
    target = cms_targets(flow, sid)[0]["targetId"]
    early = flow.send("target file", "GET", f"{V0}/submissions/{sid}/targets/{target}/download/deliverable")
    assert early.status_code == 400 and re.search(rf"{target} \(READY\)", early.json()["messages"][0])
    stranger = flow.send("target file", "GET", f"{V0}/submissions/1001/targets/{target}/download/deliverable")
    assert stranger.status_code == 404


def test_ids_as_digit_strings_and_a_bad_workflow_are_read_as_jackson_reads_them(box) -> None:
    flow = Flow(box)
    now = flow.now_ms(flow.urlencoded_token())
    batch = {"name": "B", "workflowId": "22", "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}
    body = {"name": "n", "projectId": "10", "sourceLanguage": "en-US", "dueDate": str(now + DAY_MS),
            "batchInfos": [batch]}
    sid = flow.json(flow.send("create", "POST", V0 + "/submissions/create", json=body), "create")["submissionId"]
    made = flow.json(flow.send("get", "GET", f"{V0}/submissions/{sid}"), "get")
    assert made["projectId"] == 10 and made["batchInfos"][0]["workflowId"] == 22
    for wrong in ("ten", "99", True, 10.5):
        body["projectId"] = wrong
        assert flow.send("create", "POST", V0 + "/submissions/create", json=body).status_code == 400, wrong
    body["projectId"], batch["workflowId"] = 10, "x22"
    refused = flow.send("create", "POST", V0 + "/submissions/create", json=body)
    assert refused.status_code == 400 and "workflowId" in refused.json()["messages"][0]


def test_a_target_file_is_named_by_its_document_in_a_header_any_client_reads(box) -> None:
    flow = Flow(box)
    now = flow.now_ms(flow.urlencoded_token())
    body = {"name": "menu", "projectId": 10, "sourceLanguage": "en-US", "dueDate": now + 7 * DAY_MS,
            "batchInfos": [{"name": "B", "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}]}
    sid = flow.json(flow.send("create", "POST", V0 + "/submissions/create", json=body), "create")["submissionId"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr('menus/Café "du jour".html', "<p>Soup</p>")
    flow.json(flow.send("upload", "POST", f"{V0}/submissions/{sid}/upload/source", files={"file": ("m.zip",
              archive.getvalue())}, data={"batchName": "B", "fileFormatName": "HTML", "extractArchive": "true"}),
              "upload")
    flow.json(flow.send("save", "POST", f"{V0}/submissions/{sid}/save", json={"autoStart": True}), "save")
    box.advance(days=4)
    flow.urlencoded_token()
    target = cms_targets(flow, sid)[0]["targetId"]
    got = flow.send("file", "GET", f"{V0}/submissions/{sid}/targets/{target}/download/deliverable")
    assert got.status_code == 200 and got.content == b"<p>[fr-FR] Soup</p>"
    assert got.headers["Content-Disposition"] == ("attachment; filename=\"Caf? 'du jour'.html\"; "
                                                  "filename*=UTF-8''Caf%C3%A9%20%22du%20jour%22.html")
