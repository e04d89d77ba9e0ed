"""The translation emulator over real HTTP with plain requests: the token, the wire, the reads, the
submission lifecycle to DELIVERED, cancel rules, phases, claims, filters, word count, quotes, the
download zip, metadata and webhooks, modes and system versions."""
from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest
import requests

import toolkit.sandbox
from toolkit.sandbox.translation.service import Translation

V0 = "/rest/v0"


class TM:
    """Plain requests against one translation sandbox: `tm.ok("GET", "/rest/v0/projects")`."""

    def __init__(self, box: toolkit.sandbox.Sandbox) -> None:
        self.box = box
        self.creds = box.credentials("translation")
        self.base = self.creds["base_url"]
        self.http = requests.Session()
        self.http.trust_env = False
        self.token = self.grant()["access_token"]

    def grant(self, **form: str) -> dict[str, Any]:
        form = form or {"grant_type": "password", "username": self.creds["username"],
                        "password": self.creds["password"]}
        answer = self.token_call(form)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def token_call(self, form: dict[str, str], auth: tuple[str, str] | None = None) -> requests.Response:
        return self.http.post(self.base + "/oauth/token", data=form, timeout=10,
                              auth=auth or (self.creds["client_id"], self.creds["client_secret"]))

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return self.http.request(method, self.base + V0 + path, headers=headers, timeout=10, **kwargs)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.call(method, path, **kwargs)
        assert 200 <= answer.status_code < 300, f"{method} {path}: {answer.status_code} {answer.text[:300]}"
        return answer.json() if "json" in answer.headers.get("content-type", "") else answer

    def refused(self, status: int, method: str, path: str, **kwargs: Any) -> list[str]:
        answer = self.call(method, path, **kwargs)
        assert answer.status_code == status, f"{method} {path}: {answer.status_code} {answer.text[:300]}"
        messages = answer.json()["messages"]
        assert messages and all(isinstance(m, str) for m in messages)
        return messages

    def advance(self, **delta: float) -> None:
        """Move the virtual clock and take a new token (the old one may have expired)."""
        self.box.advance(**delta)
        self.token = self.grant()["access_token"]

    @property
    def emulator(self) -> Translation:
        return self.box.emulator("translation")  # type: ignore[return-value]

    @property
    def ex(self) -> dict[str, Any]:
        return self.box.examples("translation")


def serve(**options: Any) -> toolkit.sandbox.Sandbox:
    return toolkit.sandbox.start(emulators={"translation": Translation}, **options)


@pytest.fixture(scope="module")
def tm() -> Iterator[TM]:
    """One sandbox for the tests that neither move the clock nor change the example records."""
    with serve() as box:
        yield TM(box)


@pytest.fixture
def fresh() -> Iterator[TM]:
    with serve() as box:
        yield TM(box)


def new_submission(tm: TM, project: int = 10, **extra: Any) -> int:
    body = {"name": "Holiday banners", "projectId": project, "sourceLanguage": "en-US",
            "dueDate": tm.emulator.now_ms() + 20 * 86_400_000, "claimScope": "LANGUAGE",
            "batchInfos": [{"workflowId": 22, "targetFormat": "TXLF", "name": "Web",
                            "targetLanguageInfos": [{"targetLanguage": "fr-FR"}, {"targetLanguage": "de-DE"}]}],
            **extra}
    return tm.ok("POST", "/submissions/create", json=body)["submissionId"]


def upload(tm: TM, sid: int, name: str, data: bytes, extract: bool = False, **form: str) -> Any:
    fields = {"batchName": "Web", "fileFormatName": "HTML", "extractArchive": str(extract).lower(), **form}
    return tm.ok("POST", f"/submissions/{sid}/upload/source", files={"file": (name, data)}, data=fields)


# --- auth ----------------------------------------------------------------------------------------

def test_token_answer_and_secrets(tm: TM) -> None:
    body = tm.grant()
    assert set(body) == {"access_token", "refresh_token", "token_type", "expires_in", "scope", "jti"}
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600
    held = tm.box.secrets()
    assert body["access_token"] in held and body["refresh_token"] in held
    assert tm.creds["password"] in held and tm.creds["client_secret"] in held
    assert tm.creds["mode"] == "client" and tm.creds["system_version"] == "6.2"


def test_token_refusals(tm: TM) -> None:
    bad_client = tm.token_call({"grant_type": "password"}, auth=("someone", "else"))
    assert bad_client.status_code == 401 and bad_client.json()["error"] == "invalid_client"
    bad_password = tm.token_call({"grant_type": "password", "username": tm.creds["username"], "password": "x"})
    assert bad_password.status_code == 400 and bad_password.json()["messages"]
    assert tm.token_call({"grant_type": "client_credentials"}).json()["error"] == "unsupported_grant_type"
    assert tm.token_call({"grant_type": "refresh_token", "refresh_token": "nope"}).status_code == 400


def test_every_call_needs_a_live_bearer(tm: TM) -> None:
    answer = tm.http.get(tm.base + V0 + "/projects", timeout=10)
    assert answer.status_code == 401 and answer.json()["messages"]
    assert tm.call("GET", "/projects", token="not-a-token").status_code == 401


def test_token_expires_with_the_clock_and_refreshes(fresh: TM) -> None:
    first = fresh.grant()
    assert fresh.call("GET", "/projects", token=first["access_token"]).status_code == 200
    fresh.box.advance(hours=2)
    assert fresh.call("GET", "/projects", token=first["access_token"]).status_code == 401
    again = fresh.grant(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert again["access_token"] != first["access_token"]
    assert fresh.call("GET", "/projects", token=again["access_token"]).status_code == 200


# --- wire and reads ------------------------------------------------------------------------------

def test_paging_wire(tm: TM) -> None:
    answer = tm.call("GET", "/targets", params={"pageNumber": 0, "pageSize": 5})
    rows = answer.json()
    assert isinstance(rows, list) and len(rows) == 5 and answer.headers["page-size"] == "5"
    total = int(answer.headers["total-size"])
    assert total == len(tm.emulator.state.targets) > 500
    assert all(isinstance(r["targetId"], int) and isinstance(r["dueDate"], int) for r in rows)
    second = tm.call("GET", "/targets", params={"pageNumber": 1, "pageSize": 5}).json()
    assert {r["targetId"] for r in rows}.isdisjoint(r["targetId"] for r in second)
    assert tm.call("GET", "/targets", params={"pageNumber": total, "pageSize": 5}).json() == []
    tm.refused(400, "GET", "/submissions", params={"pageSize": 201})
    tm.refused(400, "GET", "/submissions", params={"pageNumber": -1})


def test_submission_record(tm: TM) -> None:
    sub = tm.ok("GET", f"/submissions/{tm.ex['submission_id']}")
    assert sub["status"] == "IN_PROCESS" and sub["projectId"] == 10 and isinstance(sub["dueDate"], int)
    batch = sub["batchInfos"][0]
    assert batch["workflowName"] == "Translation_Review_ClientReview" and batch["wordCount"] > 0
    listed = tm.call("GET", "/submissions", params={"statuses": "DELIVERED,CANCELLED", "pageSize": 200})
    assert {s["status"] for s in listed.json()} == {"DELIVERED", "CANCELLED"}
    assert int(listed.headers["total-size"]) == len(listed.json())
    tm.refused(400, "GET", "/submissions", params={"statuses": "FINISHED"})
    tm.refused(404, "GET", "/submissions/999999")


def test_projects_organizations_and_language_assets(tm: TM) -> None:
    projects = tm.ok("GET", "/projects")
    assert len(projects) == 5 and all(p["shortCode"] for p in projects)
    workflows = tm.ok("GET", "/projects/10/workflows")
    phases = [p["name"] for p in tm.ok("GET", "/projects/10/workflows/22")["phases"]]
    assert phases == ["TRANSLATION", "REVIEW", "CLIENT_REVIEW"] and len(workflows) == 3
    assert all(" " not in p["name"] for w in workflows for p in w["phases"])
    attributes = tm.ok("GET", "/projects/12/customattributes")
    assert {a["name"] for a in attributes if a["mandatory"]} == {"LegalReview", "CostCenter"}
    directions = tm.ok("GET", "/projects/10/languagedirections")
    assert {"projectId": 10, "sourceLanguage": "en-US", "sourceLanguageDisplayName": "English (United States)",
            "targetLanguage": "fr-FR", "targetLanguageDisplayName": "French (France)"} in directions
    assert [f["name"] for f in tm.ok("GET", "/projects/10/fileformats")][0] == "HTML"
    assert len(tm.ok("GET", "/projects/10/mslalevels")) == 3 and tm.ok("GET", "/projects/10/users/org")
    assert len(tm.ok("GET", "/organizations")) == 2
    assert {p["paClientId"] for p in tm.ok("GET", "/organizations/3/paclients")} == {7, 8, 9}
    assert tm.ok("GET", "/paclients/7")["organizationId"] == 3
    assert tm.ok("GET", "/organizations/project/10/glossary/MarketingGlossary")["termCount"] > 0
    assert tm.ok("GET", "/organizations/3/paclients/7/tm/MainTM")["segmentCount"] > 0
    tm.refused(404, "GET", "/organizations/4/paclients/7/tm/MainTM")
    tm.refused(404, "GET", "/projects/10/workflows/27")


# --- the lifecycle -------------------------------------------------------------------------------

def test_lifecycle_to_delivered(fresh: TM) -> None:
    tm = fresh
    sid = new_submission(tm, metadata=[{"key": "_webhookURL", "value": "https://hooks.example.com/tms"}])
    assert tm.ok("GET", f"/submissions/{sid}")["status"] == "CREATING"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("site/home.html", "<p>Welcome home</p>")
        z.writestr("site/about.html", "<p>About us and our shop</p>")
    sent = upload(tm, sid, "site.zip", archive.getvalue(), extract=True)
    assert sent["submissionId"] == sid and [d["name"] for d in sent["documentIds"]] == ["site/home.html",
                                                                                        "site/about.html"]
    targets = tm.ok("GET", f"/submissions/{sid}/targets")
    assert len(targets) == 4 and {t["status"] for t in targets} == {"WAITING"}
    assert tm.ok("POST", f"/submissions/{sid}/analyze")["status"] == "PROCESSING"
    assert tm.ok("GET", f"/submissions/{sid}/status")["status"] == "PROCESSING"
    assert tm.ok("POST", f"/submissions/{sid}/start")["startedSubmissionIds"] == []
    tm.advance(minutes=10)
    assert tm.ok("GET", f"/submissions/{sid}/status")["status"] == "PROCESSED"
    assert tm.ok("POST", f"/submissions/{sid}/start")["startedSubmissionIds"] == [sid]
    phases = tm.ok("GET", f"/submissions/{sid}/phases")
    assert {p["currentPhase"] for p in phases} == {"TRANSLATION"}
    assert phases[0]["transitions"][0] == {"name": "REVIEW", "default": True, "targetPhase": "REVIEW"}
    first = phases[0]["targetId"]
    done = tm.ok("POST", f"/submissions/{sid}/phases/TRANSLATION/complete",
                 json={"targetIds": [first], "transition": "REVIEW"})
    assert done == {"completedTargets": [first], "failedTargets": [], "messages": []}
    assert tm.ok("GET", f"/submissions/{sid}/targets/{first}/phase")["currentPhase"] == "REVIEW"
    tm.advance(days=4)
    targets = tm.ok("GET", f"/submissions/{sid}/targets")
    assert {t["status"] for t in targets} == {"PROCESSED"} and all(t["dateCompleted"] for t in targets)
    assert tm.ok("GET", f"/submissions/{sid}")["status"] == "PROCESSED"
    ids = [t["targetId"] for t in targets]
    files = download(tm, sid, {"sourceFiles": "true", "deliverableTargetIds": ",".join(map(str, ids)),
                               "includeManifest": "true"})
    french = f"Sub_{sid}_fr-FR/site/home_fr-FR_Translated/home.html"
    assert "source/site/home.html" in files and french in files and "manifest.json" in files
    assert files[french] == b"<p>[fr-FR] Welcome home</p>"     # the tags kept, the text translated
    delivered = tm.ok("POST", f"/submissions/{sid}/targets/delivered", json={"targetIds": ids})
    assert sorted(delivered["deliveredTargetIds"]) == sorted(ids) and not delivered["failedTargetIds"]
    assert tm.ok("GET", f"/submissions/{sid}")["status"] == "DELIVERED"
    hooks = [h for h in tm.emulator.state.sent_hooks if h["submissionId"] == sid]
    # without a scope every event: the targets' completions, one delivery per clock step, name them
    assert [h["event"] for h in hooks if h["event"].startswith("submission.")] == [
        "submission.analyzed", "submission.started", "submission.completed"]
    finished = [i for h in hooks if h["event"] == "target.completed" for i in h["targetIds"]]
    assert sorted(finished) == sorted(ids)
    assert hooks[-1]["event"] == "submission.completed" and hooks[-2]["event"] == "target.completed"


def download(tm: TM, sid: int, params: dict[str, str]) -> dict[str, bytes]:
    started = tm.ok("GET", f"/submissions/{sid}/download", params=params)
    assert started["processingFinished"] is False
    number = started["downloadId"]
    tm.refused(400, "GET", f"/submissions/download/{number}")
    polls = [tm.ok("GET", f"/submissions/{sid}/download", params={"downloadId": number})["processingFinished"]
             for _ in range(2)]
    assert polls == [False, True]
    answer = tm.call("GET", f"/submissions/download/{number}")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(answer.content)) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_save_answers_200_even_when_nothing_starts(fresh: TM) -> None:
    tm = fresh
    sid = new_submission(tm)
    empty = tm.ok("POST", f"/submissions/{sid}/save", json={"autoStart": True})
    assert empty["startedSubmissionIds"] == [] and "no documents" in empty["messages"][0]
    upload(tm, sid, "home.html", b"<p>Hello there</p>")
    assert tm.ok("POST", f"/submissions/{sid}/save", json={"autoStart": False})["startedSubmissionIds"] == []
    assert tm.ok("POST", f"/submissions/{sid}/save", json={"autoStart": True})["startedSubmissionIds"] == [sid]
    assert tm.ok("GET", f"/submissions/{sid}")["status"] == "IN_PROCESS"


def test_create_and_upload_refusals(tm: TM) -> None:
    base = {"name": "Contract", "projectId": 12, "sourceLanguage": "en-US",
            "batchInfos": [{"workflowId": 24, "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}]}
    messages = tm.refused(400, "POST", "/submissions/create", json=base)
    assert "LegalReview" in messages[0] and "CostCenter" in messages[0]
    attributes = [{"name": "LegalReview", "value": "Required"}, {"name": "CostCenter", "value": "LEG-01"}]
    assert tm.ok("POST", "/submissions/create", json={**base, "customAttributes": attributes})["submissionId"]
    tm.refused(400, "POST", "/submissions/create", json={**base, "customAttributes": [
        {"name": "LegalReview", "value": "Maybe"}, attributes[1]]})
    tm.refused(400, "POST", "/submissions/create", json={**base, "dueDate": 1767225600000})
    tm.refused(400, "POST", "/submissions/create", json={**base, "projectId": 99})
    tm.refused(400, "POST", "/submissions/create", json={**base, "batchInfos": [
        {"workflowId": 22, "targetLanguageInfos": [{"targetLanguage": "fr-FR"}]}]})
    sid = new_submission(tm)
    for form in ({"batchName": "Nope"}, {"fileFormatName": "PDF"}):
        answer = tm.call("POST", f"/submissions/{sid}/upload/source", files={"file": ("a.html", b"x")},
                         data={"batchName": "Web", "fileFormatName": "HTML", **form})
        assert answer.status_code == 400
    answer = tm.call("POST", f"/submissions/{sid}/upload/source", files={"file": ("a.zip", b"not a zip")},
                     data={"batchName": "Web", "fileFormatName": "HTML", "extractArchive": "true"})
    assert answer.status_code == 400


def test_checking_translatable_uploads(tm: TM) -> None:
    """The document: verifying a translatable upload returns the error messages of a failed one."""
    sid = new_submission(tm)
    path = f"/submissions/{sid}/upload/translatable"
    good = tm.ok("POST", path, files={"file": ("strings-fr.xlf", b"<xliff version='1.2'/>")})
    assert tm.ok("GET", f"{path}/{good['processId']}") == {
        "processId": good["processId"], "submissionId": sid, "fileName": "strings-fr.xlf", "status": "PROCESSED",
        "processingFinished": True, "messages": ["Upload successfully!"]}      # what bb-io/GlobalLink reads
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("notes.docx", "not XLIFF")
        z.writestr("empty.xlf", "  ")
    bad = tm.ok("POST", path, files={"file": ("batch.zip", archive.getvalue())}, data={"extractArchive": "true"})
    answer = tm.call("GET", f"{path}/{bad['processId']}")
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "messages": ["notes.docx: not a translatable file (XLIFF, TXLF or TXML expected)", "empty.xlf: the file is empty"],
        "processId": bad["processId"], "status": "FAILED", "processingFinished": True}
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", good["processId"])
    assert tm.ok("GET", f"{path}/{good['processId'].upper()}")["processId"] == good["processId"]
    tm.refused(404, "GET", f"{path}/{bad['processId'][:-4]}0000")
    tm.refused(404, "GET", f"{path}/4321")         # an integer, as this sandbox answered before
    # an error answer may carry a field named like the answer's own status
    assert tm.emulator.error(400, "failed", status="FAILED").body == {"messages": ["failed"], "status": "FAILED"}


# --- cancel, phases, claims ---------------------------------------------------------------------

def test_cancel_rules(fresh: TM) -> None:
    tm, ex = fresh, fresh.ex
    other = next(s for s in tm.emulator.state.subs.values() if s.id != ex["submission_id"] and s.targets)
    foreign = tm.emulator.state.targets.BASE + other.targets[0]
    tm.refused(400, "POST", f"/submissions/cancel/{ex['submission_id']}", json={"targetIds": [foreign]})
    held = next(s for s in tm.emulator.state.subs.values() if s.status == "WAITING" and s.targets)
    held_target = tm.emulator.state.targets.BASE + held.targets[0]
    assert "on hold" in tm.refused(400, "POST", f"/submissions/cancel/{held.id}",
                                   json={"targetIds": [held_target]})[0]
    one = tm.ok("POST", f"/submissions/cancel/{ex['submission_id']}", json={"targetIds": ex["target_ids"]})
    assert one["cancelledTargetIds"] == ex["target_ids"] and one["status"] == "IN_PROCESS"
    whole = tm.ok("POST", f"/submissions/cancel/{ex['submission_id']}")
    assert whole["status"] == "CANCELLED"
    statuses = {t["status"] for t in tm.ok("GET", f"/submissions/{ex['submission_id']}/targets")}
    assert statuses == {"CANCELLED"}
    tm.refused(400, "POST", f"/submissions/cancel/{ex['submission_id']}")


def test_complete_phase_rules(fresh: TM) -> None:
    tm, ex = fresh, fresh.ex
    path = f"/submissions/{ex['submission_id']}/phases"
    body = {"targetIds": ex["target_ids"], "transition": "REVIEW"}
    assert "spaces" in tm.refused(400, "POST", path + "/CLIENT%20REVIEW/complete", json=body)[0]
    assert "case-sensitive" in tm.refused(400, "POST", path + "/translation/complete", json=body)[0]
    tm.refused(400, "POST", path + "/TRANSLATION/complete", json={**body, "transition": "CLIENT_REVIEW"})
    tm.refused(400, "POST", path + "/TRANSLATION/complete", json={**body, "targetIds": [1]})
    moved = tm.ok("POST", path + "/TRANSLATION/complete", json=body)
    assert moved["completedTargets"] == ex["target_ids"]
    again = tm.ok("POST", path + "/TRANSLATION/complete", json=body)
    assert again["failedTargets"] == ex["target_ids"] and again["messages"]
    back = tm.ok("POST", path + "/REVIEW/complete", json={**body, "transition": "TRANSLATION"})
    assert back["completedTargets"] == ex["target_ids"]


def test_claim_and_unclaim(fresh: TM) -> None:
    tm, ex = fresh, fresh.ex
    body = {"submissionId": ex["submission_id"], "phaseName": "TRANSLATION", "languages": ["fr-FR"]}
    claimable = tm.ok("GET", f"/submissions/claimable/{ex['submission_id']}/targets",
                      params={"phaseName": "TRANSLATION"})
    french = [t["targetId"] for t in claimable if t["targetLanguage"] == "fr-FR"]
    assert french and all(t["phaseName"] == "TRANSLATION" for t in claimable)
    claimed = tm.ok("POST", "/submissions/claim", json=body)
    assert claimed["claimedTargetIds"] == french
    rows = tm.ok("GET", "/submissions/claimed", params={"phaseName": "TRANSLATION", "pageSize": 200})
    row = next(r for r in rows if r["submissionId"] == ex["submission_id"])
    assert row["phaseName"] == "TRANSLATION" and "fr-FR" in row["targetLanguages"]
    assert tm.ok("POST", "/submissions/unclaim", json=body)["unclaimedTargetIds"] == french
    tm.refused(400, "POST", "/submissions/claim", json={**body, "languages": ["sv-SE"]})
    tm.refused(400, "POST", "/submissions/claim", json={**body, "phaseName": "Translation"})


def test_claims_as_the_public_integration_sends_them(fresh: TM) -> None:
    # bb-io/GlobalLink posts an array of {submissionId, phaseName, languages} and reads the claimable
    # rows' submissionName, languages[].phaseName and claimLevel
    tm, ex = fresh, fresh.ex
    rows = tm.ok("GET", "/submissions/claimable", params={"phaseName": "TRANSLATION", "pageSize": 200})
    row = next(r for r in rows if r["submissionId"] == ex["submission_id"])
    assert row["submissionName"] and row["claimLevel"] == "LANGUAGE"
    assert {"phaseName": "TRANSLATION", "sourceLanguageCode": row["sourceLanguage"],
            "targetLanguageCode": "fr-FR"} in row["languages"]
    claims = [{"submissionId": ex["submission_id"], "phaseName": "TRANSLATION", "languages": ["fr-FR", "de-DE"]}]
    answers = tm.ok("POST", "/submissions/claim", json=claims)
    assert isinstance(answers, list) and len(answers) == 1 and answers[0]["claimedTargetIds"]
    released = tm.ok("POST", "/submissions/unclaim", json=claims)[0]["unclaimedTargetIds"]
    assert set(answers[0]["claimedTargetIds"]) <= set(released)      # with any claimed before
    tm.refused(400, "POST", "/submissions/claim", json=[])
    tm.refused(400, "POST", "/submissions/claim", json=[claims[0], "x"])
    # one bad claim refuses the array before any target moves
    open_targets = f"/submissions/claimable/{ex['submission_id']}/targets"
    before = tm.ok("GET", open_targets, params={"phaseName": "TRANSLATION"})
    tm.refused(400, "POST", "/submissions/claim", json=[claims[0], {**claims[0], "phaseName": "Translation"}])
    assert tm.ok("GET", open_targets, params={"phaseName": "TRANSLATION"}) == before


def test_owners_are_user_objects(tm: TM) -> None:
    # bb-io/GlobalLink's SubmissionResponse.Owners is a list of {userId, userName, firstName, ...}
    sub = tm.ok("GET", f"/submissions/{tm.ex['submission_id']}")
    assert sub["owners"] and all(isinstance(o, dict) for o in sub["owners"])
    assert {"userId", "userName", "firstName", "lastName", "email", "enabled"} <= set(sub["owners"][0])
    assert tm.ok("GET", f"/submissions/{tm.ex['submission_id']}/owners") == sub["owners"]


# --- targets, word count, quotes, metadata, webhooks ----------------------------------------------

def test_target_filters(tm: TM) -> None:
    sid = tm.ex["submission_id"]
    processed = tm.ok("GET", f"/submissions/{sid}/targets", params={"status": "COMPLETED"})
    assert processed and {t["status"] for t in processed} == {"PROCESSED"}
    french = tm.ok("GET", f"/submissions/{sid}/targets", params={"targetLanguage": "fr-FR"})
    assert {t["targetLanguage"] for t in french} == {"fr-FR"} and len(french) == 3
    tm.refused(400, "GET", f"/submissions/{sid}/targets", params={"status": "DONE"})
    across = tm.call("GET", "/targets", params={"submissionIds": f"{sid},{sid + 1}",
                                                "targetStatus": "READY,IN_PROCESS", "pageSize": 200})
    rows = across.json()
    assert rows and {r["submissionId"] for r in rows} <= {sid, sid + 1}
    assert {r["status"] for r in rows} <= {"READY", "IN_PROCESS"} and int(across.headers["total-size"]) == len(rows)
    doc = tm.ex["document_id"]
    assert {t["documentId"] for t in tm.ok("GET", f"/submissions/{sid}/documents/{doc}/targets")} == {doc}


def test_word_count(tm: TM) -> None:
    path = f"/submissions/{tm.ex['submission_id']}/wordcount"
    whole = tm.ok("POST", path)
    total = whole["totalWordCount"]
    # the vendor's client reads these into non-nullable longs: a total names no target or document
    assert whole["submissionName"] == "Website update Q3" and not {"targetId", "documentId"} & set(whole)
    french = tm.ok("POST", path, json={"targetLanguage": "fr-FR"})
    assert total > french["totalWordCount"] > 0 and french["targetLanguage"] == "fr-FR"
    document = tm.ok("POST", path, json={"documentId": str(tm.ex["document_id"])})
    assert document["totalWordCount"] < total and document["documentId"] == tm.ex["document_id"]
    assert document["documentName"] and document["batchName"] == "Batch1"
    target = tm.ok("POST", path, json={"targetId": tm.ex["target_id"]})
    assert target["targetId"] == tm.ex["target_id"] and target["targetLanguage"] == "fr-FR"
    assert target["totalWordCount"] == target["breakdown"]["noMatch"] + sum(
        v for k, v in target["breakdown"].items() if k != "noMatch") and target["targetCount"] == 1
    tm.refused(400, "POST", path, json={"targetLanguage": "fr-FR", "batchName": "Batch1"})
    tm.refused(400, "POST", path, json={"targetLanguage": "sv-SE"})


def test_quotes(fresh: TM) -> None:
    tm = fresh
    held = next(s for s in tm.emulator.state.subs.values() if s.status == "WAITING" and s.targets)
    quotes = tm.ok("GET", f"/submissions/{held.id}/quote/review")
    assert [q["status"] for q in quotes] == ["PROVIDED"]
    approved = tm.ok("POST", f"/submissions/{held.id}/quote/approve", json={"comment": "Go ahead"})
    assert approved["status"] == "READY"
    assert tm.ok("GET", f"/submissions/{held.id}/quote/review")[0]["comment"] == "Go ahead"
    tm.refused(400, "POST", f"/submissions/{held.id}/quote/approve", json={"comment": "again"})
    report = {"approvedQuotesSelected": True, "providedQuotesSelected": True, "outputFormat": "CSV"}
    answer = tm.call("POST", f"/submissions/{held.id}/quote/report", json=report)
    assert answer.headers["content-type"].startswith("text/csv") and b"quoteId" in answer.content
    answer = tm.call("POST", f"/submissions/{held.id}/quote/report", json={**report, "outputFormat": "PDF"})
    assert answer.content.startswith(b"%PDF-") and answer.content.rstrip().endswith(b"%%EOF")
    tm.refused(400, "POST", f"/submissions/{held.id}/quote/report", json={"outputFormat": "PDF"})


def test_metadata_and_custom_attributes(fresh: TM) -> None:
    tm = fresh
    sid = tm.ex["submission_id"]
    tm.ok("POST", f"/submissions/{sid}/metadata", json={"key": "orderNumber", "value": "PO-1"})
    tm.refused(400, "POST", f"/submissions/{sid}/metadata", json={"key": "orderNumber", "value": "PO-2"})
    assert tm.ok("PUT", f"/submissions/{sid}/metadata/orderNumber", json={"value": "PO-3"})["value"] == "PO-3"
    assert tm.ok("GET", f"/submissions/{sid}/metadata/orderNumber") == {"key": "orderNumber", "value": "PO-3"}
    assert tm.call("DELETE", f"/submissions/{sid}/metadata/orderNumber").status_code == 200
    tm.refused(404, "GET", f"/submissions/{sid}/metadata/orderNumber")
    tm.refused(400, "POST", f"/submissions/{sid}/customattributes/", json={"name": "LegalReview", "value": "x"})
    tm.refused(400, "POST", f"/submissions/{sid}/customattributes/", json={"name": "Priority", "value": "Soon"})
    tm.ok("POST", f"/submissions/{sid}/customattributes/", json={"name": "CostCenter", "value": "MKT-09"})
    names = {a["name"] for a in tm.ok("GET", f"/submissions/{sid}/customattributes")}
    assert names == {"BusinessUnit", "Priority", "CampaignCode", "CostCenter"}
    tm.call("DELETE", f"/submissions/{sid}/customattributes/")
    assert tm.ok("GET", f"/submissions/{sid}/customattributes") == []


def test_webhooks_failed_and_reset(fresh: TM) -> None:
    tm = fresh
    failed = tm.ok("GET", "/webhooks/failed")
    assert len(failed) == 2 and all(isinstance(h["lastAttempt"], int) for h in failed)
    sid = new_submission(tm)
    tm.ok("POST", f"/submissions/{sid}/metadata/", json={"key": "_webhookURL", "value": "http://10.0.0.9/hook"})
    tm.refused(400, "POST", f"/submissions/{sid}/metadata/", json={"key": "_webhookURL", "value": "https://x.io"})
    upload(tm, sid, "home.html", b"<p>Hi</p>")
    tm.ok("POST", f"/submissions/{sid}/save", json={"autoStart": True})
    mine = [h for h in tm.ok("GET", "/webhooks/failed") if h["submissionId"] == sid]
    assert [h["event"] for h in mine] == ["submission.analyzed", "submission.started"]
    reset = tm.ok("POST", "/webhooks/reset", json={"submissionIds": [sid]})
    assert reset["resetSubmissionIds"] == [sid]
    assert all(h["submissionId"] != sid for h in tm.ok("GET", "/webhooks/failed"))
    tm.advance(minutes=1)
    again = [h for h in tm.ok("GET", "/webhooks/failed") if h["submissionId"] == sid]
    assert [h["attempts"] for h in again] == [2, 2]
    tm.refused(400, "POST", "/webhooks/reset", json={})


# --- modes, versions, scale ------------------------------------------------------------------------

def test_hosted_mode() -> None:
    with serve(mode="hosted") as box:
        tm = TM(box)
        assert "client mode" in tm.refused(400, "GET", "/organizations/projects/10/glossaries")[0]
        assert tm.ok("GET", "/paclients/7/glossaries")
        body = {"name": "x", "projectId": 10, "sourceLanguage": "en-US"}
        assert "paClientId" in tm.refused(400, "POST", "/submissions/create", json=body)[0]
        assert tm.ok("POST", "/submissions/create", json={**body, "paClientId": 7})["submissionId"]
    with serve() as box:
        TM(box).refused(400, "GET", "/paclients/7/tms")


def test_older_system_versions() -> None:
    with serve(system_version="5.13") as box:
        tm = TM(box)
        assert box.credentials("translation")["system_version"] == "5.13"
        tm.refused(404, "GET", "/targets")
        tm.refused(404, "POST", f"/submissions/{tm.ex['submission_id']}/wordcount")
        tm.refused(404, "GET", "/webhooks/failed")
        everything = tm.ok("GET", f"/submissions/{tm.ex['submission_id']}/targets", params={"status": "COMPLETED"})
        assert {t["status"] for t in everything} != {"PROCESSED"}      # the filter is ignored below 5.15
        assert "shortCode" not in tm.ok("GET", "/projects/10")
        assert tm.ok("GET", "/organizations/projects/10/glossaries")
    with serve(system_version="5.20") as box:
        tm = TM(box)
        tm.refused(404, "GET", f"/submissions/{tm.ex['submission_id']}/documents/{tm.ex['document_id']}/targets")
        assert tm.ok("GET", "/projects/10")["shortCode"] == "RWEB"


def test_scale_is_linear_and_deterministic() -> None:
    with serve(scale=100) as box:
        tm = TM(box)
        total = int(tm.call("GET", "/targets", params={"pageSize": 1}).headers["total-size"])
        assert 7_000 < total < 14_000
        last = tm.call("GET", "/targets", params={"pageNumber": total // 200, "pageSize": 200}).json()
        assert last[-1]["targetId"] == tm.emulator.state.targets.BASE + total - 1
    with serve() as one, serve() as two:
        assert one.examples("translation") == two.examples("translation")
        assert TM(one).ok("GET", "/submissions/1010") == TM(two).ok("GET", "/submissions/1010")
        assert one.secrets()[:2] == two.secrets()[:2]
