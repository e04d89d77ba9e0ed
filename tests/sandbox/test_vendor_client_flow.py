"""The translation vendor's own .NET client's sample flow (docs/public-specs.md, source G9), replayed
against the sandbox request by request with plain `requests`, each answer read as that client's typed
models read it.

Written by us from the client's request shapes and model fields (nothing copied): a password token;
the projects (`pageSize=50&orderBy=projectName`), the PA clients, one project read for its language
directions, file format profiles and default workflow, its custom attributes and organization users,
the name searches; a submission created with the sample's body (every model field, nulls included, the
batch's `workflowId` taken from `defaultWorkflowDefinitionId`, the webhook metadata with target
scopes); a source uploaded as the client writes its multipart body; save with autoStart, start, the
word count without a body, analyze; then, once the work is done, the PROCESSED targets by
`targetStatus`, a download by target ids polled by `downloadId`, its zip, and the targets marked
delivered.

`reads` deserializes as the client's JSON reader would: a property matched in any case, a missing one
left at its default, and a null or wrong kind where the model holds a non-nullable number, a bool, a
GUID or an enum is where that client throws.
"""
from __future__ import annotations

import io
import re
import uuid
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest

import toolkit.sandbox
from tests.sandbox.test_integration_flows import DAY_MS, V0, Flow, Stop

# the fields of the client's response models, by the type it declares for them
PROJECT_MICRO = {"enabled": "bool", "name": "string", "projectId": "long", "organizationId": "long",
                 "quoteEnabled": "bool", "costScopeId": "long", "defaultWorkflowDefinitionId": "long",
                 "shortCode": "string", "autoStartSubmission": "bool", "aquoteScope": "string",
                 "aautoQuote": "string"}
# `enabled` is a long in this model: the reader converts the service's `true` to 1
PROJECT = {"projectId": "long", "organizationId": "long", "shortCode": "string", "costScopeId": "long",
           "defaultWorkflowDefinitionId": "long", "autoStartSubmission": "bool", "quoteEnabled": "bool",
           "enabled": "long|bool", "name": "string", "quoteScope": "string", "autoQuote": "bool",
           "projectLanguageDirections": "list", "workflowDefinitions": "list", "fileFormatProfiles": "list"}
DIRECTION = {"default": "bool", "targetLanguage": "string", "sourceLanguage": "string",
             "targetLanguageDisplayName": "string", "sourceLanguageDisplayName": "string"}
WORKFLOW = {"name": "string", "id": "long", "description": "string"}
FILE_FORMAT = {"default": "bool", "enabled": "bool", "name": "string", "nonParsable": "bool",
               "targetFormat": "string", "mimeTypes": "list", "fileFormatId": "long", "dateUpdated": "long"}
PA_CLIENT = {"enabled": "bool", "name": "string", "paClientId": "long", "organizationId": "long"}
ATTRIBUTE = {"mandatory": "bool", "type": "enum:COMBO,TEXT", "values": "list", "description": "string",
             "name": "string"}
USER = {"ssoUser": "bool", "userName": "string", "enabled": "bool", "userType": "enum:ORGANIZATION,VENDOR,CLIENT_USER",
        "firstName": "string", "lastName": "string", "email": "string", "userId": "long"}
CREATED = {"submissionId": "long", "messages": "list"}
UPLOADED = {"processId": "Guid", "submissionId": "long"}
STATUS = {"message": "string", "status": "string"}
SAVED = {"message": "string", "linkedSubmissionIds": "list", "startedSubmissionIds": "list"}
WORD_COUNT = {"submissionName": "string", "batchName": "string", "targetId": "long", "targetName": "string",
              "documentId": "long", "documentName": "string", "totalWordCount": "long", "targetLanguage": "string",
              "cumulativeTmStatistics": "list", "canceledTmStatistics": "list"}
TARGET = {"translatableNames": "list", "status": "string", "targetLanguage": "string", "targetId": "long",
          "submissionId": "long", "jobId": "long", "dueDate": "long", "documentName": "string", "documentId": "long",
          "fileFormatName": "string", "sourceLanguage": "string", "dateCompleted": "long", "fileFormatId": "long",
          "currentPhase": "string"}
DOWNLOAD = {"message": "string", "downloadId": "Guid", "processingFinished": "bool"}
DEFAULTS = {"long": 0, "long|bool": 0, "bool": False, "Guid": uuid.UUID(int=0), "list": []}

SOURCE = b"<html><body><h1>Release notes</h1><p>Faster sync.</p></body></html>\n"


def fits(kind: str, value: Any) -> Any:
    """The value as the client's reader takes it into `kind`, or Stop where that reader throws."""
    if value is None:
        if kind in ("long", "long|bool", "bool", "Guid") or kind.startswith("enum:"):
            raise Stop(f"null where the client holds a {kind}")
        return None
    if kind == "long|bool" and isinstance(value, bool):
        return int(value)
    if kind in ("long", "long|bool") and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "string" and isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if kind == "list" and isinstance(value, list):
        return value
    if kind == "Guid" and isinstance(value, str):
        try:
            return uuid.UUID(value)
        except ValueError:
            raise Stop(f"{value!r} is not a GUID") from None
    if kind.startswith("enum:") and isinstance(value, str) and value.upper() in kind[5:].split(","):
        return value.upper()
    raise Stop(f"{value!r} does not fit the client's {kind}")


def reads(record: Any, model: dict[str, str], step: str) -> dict[str, Any]:
    """A record as the client's model holds it: every model field, at its default when not sent."""
    if not isinstance(record, dict):
        raise Stop(f"{step}: {record!r} is not an object")
    sent = {k.lower(): v for k, v in record.items()}
    try:
        # the models' constructors start their lists empty
        return {name: fits(kind, sent[name.lower()]) if name.lower() in sent else DEFAULTS.get(kind)
                for name, kind in model.items()}
    except Stop as stop:
        raise Stop(f"{step}: {stop}") from None


def token(flow: Flow) -> None:
    """The client's resource owner password grant: Basic client credentials and its scopes."""
    form = {"grant_type": "password", "username": flow.creds["username"], "password": flow.creds["password"],
            "scope": "pdapi"}
    answer = flow.http.post(flow.base + "/oauth/token", data=form, timeout=10,
                            auth=(flow.creds["client_id"], flow.creds["client_secret"]))
    flow.trace.append(("token", answer.status_code))
    flow.token = flow.json(answer, "token")["access_token"]


def multipart(name: str, data: bytes, content_type: str, fields: dict[str, str]) -> tuple[bytes, str]:
    """The upload body as the client writes it: its boundary `--InspireFormBoundary…` in the header, so
    each part opens with four dashes; a text/plain part per field; extractArchive last."""
    boundary = "--InspireFormBoundaryQ7x2Lm4R"
    out = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
           f"Content-Type: {content_type}\r\n\r\n").encode() + data + b"\r\n"
    for key, value in fields.items():
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"\r\nContent-Type: text/plain"
                f"\r\n\r\n{value}\r\n").encode()
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def create_body(flow: Flow, project: dict[str, Any], pa_client: int, attribute: dict[str, Any], now: int) -> dict:
    """The sample's create body, every field of the client's request model, nulls as its writer sends them."""
    direction = project["projectLanguageDirections"][0]
    value = attribute["values"][0] if attribute["type"] == "COMBO" else "Some value."
    scopes = "submission.completed,target.completed,submission.cancelled,target.cancelled"
    return {
        "claimScope": "LANGUAGE", "customAttributes": [{"name": attribute["name"], "value": value}],
        "batchInfos": [{"name": "Batch1", "targetFormat": "TXML",
                        "targetLanguageInfos": [{"targetLanguage": direction["targetLanguage"], "dueDate": None,
                                                 "tmProfileId": None}],
                        "workflowId": project["defaultWorkflowDefinitionId"]}],
        "description": None, "dueDate": now + 5 * DAY_MS, "instructions": None, "isFavorite": False,
        "metadata": [{"key": "_webhookURL", "value": "https://hooks.client.invalid/pd"},
                     {"key": "_webhookScope", "value": scopes},
                     {"key": "_webhookBasicAuthUser", "value": "hook-user"},
                     {"key": "_webhookBasicAuthPass", "value": "hook-pass"}],
        "name": "Testing Inspire PD Rest Api Integration", "owners": None, "paClientId": pa_client,
        "paJobNumber": None, "projectId": project["projectId"], "quoteEnabled": None, "requestQuote": None,
        "sourceLanguage": direction["sourceLanguage"], "templateId": None,
    }


def run_sample(box: toolkit.sandbox.Sandbox) -> Flow:
    flow = Flow(box)
    try:
        token(flow)
        projects = [reads(p, PROJECT_MICRO, "projects") for p in
                    flow.json(flow.send("projects", "GET", V0 + "/projects?pageSize=50&orderBy=projectName"),
                              "projects")]
        pa_clients = [reads(p, PA_CLIENT, "paclients") for p in
                      flow.json(flow.send("paclients", "GET", V0 + "/paclients?pageSize=50&orderBy=paClientId"),
                                "paclients")]
        flow.read["projects"], flow.read["pa_client"] = projects, pa_clients[0]["paClientId"]
        found = flow.json(flow.send("project", "GET", f"{V0}/projects/{projects[0]['projectId']}"), "project")
        project = reads(found, PROJECT, "project")
        project["projectLanguageDirections"] = [reads(d, DIRECTION, "direction")
                                                for d in project["projectLanguageDirections"]]
        project["fileFormatProfiles"] = [reads(f, FILE_FORMAT, "profile") for f in project["fileFormatProfiles"]]
        project["workflowDefinitions"] = [reads(w, WORKFLOW, "workflow") for w in project["workflowDefinitions"]]
        flow.read["project"] = project
        # the sample's `FirstOrDefault().Name` and `FirstOrDefault().TargetLanguage`, with no fallback
        flow.need(project["fileFormatProfiles"], "project: no fileFormatProfiles (FirstOrDefault() is null)")
        flow.need(project["projectLanguageDirections"], "project: no projectLanguageDirections")
        pid = project["projectId"]
        attributes = [reads(a, ATTRIBUTE, "attributes") for a in
                      flow.json(flow.send("attributes", "GET", f"{V0}/projects/{pid}/customattributes"), "attributes")]
        flow.read["users"] = [reads(u, USER, "users") for u in
                              flow.json(flow.send("users", "GET", f"{V0}/projects/{pid}/users/org"), "users")]
        flow.read["attributes"] = attributes
        flow.read["by name"] = [p["projectId"] for p in flow.json(
            flow.send("projects by name", "GET", V0 + "/projects?projectName=retail"), "projects by name")]
        searched = flow.send("paclients by name", "GET", V0 + "/paclients?projectAClientName=apac")
        flow.read["pa clients by name"] = [p["paClientId"] for p in flow.json(searched, "paclients by name")]

        now = flow.now_ms(searched)          # the client's clock is the service's (the sandbox's is virtual)
        body = create_body(flow, found, flow.read["pa_client"], found_attribute(attributes), now)
        created = reads(flow.json(flow.send("create", "POST", V0 + "/submissions/create", json=body), "create"),
                        CREATED, "create")
        sid = created["submissionId"]
        flow.need(sid > 0, "create: no submission id")
        flow.read["submission"] = sid
        data, kind = multipart("release-notes.html", SOURCE, "text/html",
                               {"batchName": "Batch1", "fileFormatName": project["fileFormatProfiles"][0]["name"],
                                "extractArchive": "false"})
        uploaded = reads(flow.json(flow.send("upload", "POST", f"{V0}/submissions/{sid}/upload/source", data=data,
                                             headers={"Content-Type": kind, "Connection": "keep-alive"}), "upload"),
                         UPLOADED, "upload")
        flow.read["process"] = uploaded["processId"]
        flow.read["save"] = reads(flow.json(flow.send("save", "POST", f"{V0}/submissions/{sid}/save",
                                                      json={"autoStart": True}), "save"), SAVED, "save")
        flow.read["start"] = reads(flow.json(flow.send("start", "POST", f"{V0}/submissions/{sid}/start"), "start"),
                                   STATUS, "start")
        flow.read["word count"] = reads(flow.json(flow.send("word count", "POST", f"{V0}/submissions/{sid}/wordcount"),
                                                  "word count"), WORD_COUNT, "word count")
        flow.need(flow.send("analyze", "POST", f"{V0}/submissions/{sid}/analyze").ok, "analyze refused")

        box.advance(days=4)                          # the linguists' work; the token has expired by now
        token(flow)
        completed = [reads(t, TARGET, "targets") for t in flow.json(flow.send(
            "completed targets", "GET", f"{V0}/targets?targetStatus=PROCESSED&submissionIds={sid}"), "targets")]
        flow.read["targets"] = completed
        ids = [t["targetId"] for t in completed]
        flow.need(ids, "no completed target")
        download = reads(flow.json(flow.send("download", "GET", f"{V0}/submissions/{sid}/download"
                                                                f"?deliverableTargetIds={','.join(map(str, ids))}"),
                                   "download"), DOWNLOAD, "download")
        for _ in range(10):
            if download["processingFinished"]:
                break
            download = reads(flow.json(flow.send("download status", "GET", f"{V0}/submissions/{sid}/download"
                                                                           f"?downloadId={download['downloadId']}"),
                                       "download status"), DOWNLOAD, "download status")
        flow.need(download["processingFinished"], "the download never finished")
        flow.read["download"] = download["downloadId"]
        zipped = flow.send("zip", "GET", f"{V0}/submissions/download/{download['downloadId']}")
        flow.need(zipped.ok and zipped.content, f"zip: {zipped.status_code}")
        with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
            flow.read["files"] = {name: archive.read(name) for name in archive.namelist()}
        marked = flow.send("mark delivered", "POST", f"{V0}/submissions/{sid}/targets/delivered",
                           json={"targetIds": ids})
        flow.need(marked.ok, f"mark delivered: {marked.status_code}")
    except Stop as stop:
        flow.stopped = str(stop)
    return flow


def found_attribute(attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """The sample names an attribute of its own project; here the project's first mandatory one, or its first."""
    return next((a for a in attributes if a["mandatory"]), attributes[0])


@pytest.fixture()
def box() -> Iterator[toolkit.sandbox.Sandbox]:
    with toolkit.sandbox.start() as started:
        yield started


def test_the_vendor_clients_sample_flow_runs_end_to_end_and_every_field_reads(box) -> None:
    flow = run_sample(box)
    assert flow.stopped is None, (flow.stopped, flow.trace)
    assert all(200 <= status < 300 for _, status in flow.trace), flow.trace
    project = flow.read["project"]
    assert project["defaultWorkflowDefinitionId"] == 20 and project["enabled"] == 1
    assert project["workflowDefinitions"][0]["id"] == 20 and project["workflowDefinitions"][0]["name"]
    profiles = project["fileFormatProfiles"]
    assert profiles[0] == {"default": True, "enabled": True, "name": "HTML", "nonParsable": False,
                           "targetFormat": "TXLF", "mimeTypes": ["text/html"], "fileFormatId": 1,
                           "dateUpdated": profiles[0]["dateUpdated"]}
    assert [p["default"] for p in profiles].count(True) == 1
    assert {a["type"] for a in flow.read["attributes"]} == {"COMBO", "TEXT"}
    assert all(u["enabled"] and u["userType"] == "ORGANIZATION" and u["userId"] for u in flow.read["users"])
    assert flow.read["by name"] == [10] and flow.read["pa clients by name"] == [9]
    assert flow.read["process"].version == 4 and flow.read["download"].version == 4
    save = flow.read["save"]
    sid = flow.read["submission"]
    # the documents win: a save answers `messages` (services.md), so the client's `message` stays empty
    assert save["startedSubmissionIds"] == [sid] and save["linkedSubmissionIds"] == [] and save["message"] is None
    assert flow.read["start"] == {"message": None, "status": None}      # services.md's start: ids and messages
    count = flow.read["word count"]
    assert count["totalWordCount"] > 0 and count["submissionName"] == "Testing Inspire PD Rest Api Integration"
    targets = flow.read["targets"]
    assert [(t["status"], t["targetLanguage"], t["fileFormatId"], t["fileFormatName"]) for t in targets] == [
        ("PROCESSED", "fr-FR", 1, "HTML")]
    assert targets[0]["dateCompleted"] > 0 and targets[0]["currentPhase"] is None
    assert list(flow.read["files"]) == [f"Sub_{sid}_fr-FR/release-notes_fr-FR_Translated/release-notes.html"]
    assert b"[fr-FR] Release notes" in next(iter(flow.read["files"].values()))


def test_after_the_flow_the_target_scopes_reached_the_webhook(box) -> None:
    flow = run_sample(box)
    assert flow.stopped is None, (flow.stopped, flow.trace)
    sid, ids = flow.read["submission"], [t["targetId"] for t in flow.read["targets"]]
    token(flow)
    failed = [h for h in flow.json(flow.send("failed", "GET", V0 + "/webhooks/failed"), "failed")
              if h["submissionId"] == sid]
    # the receiver is unreachable, so every delivery in the scope shows as failed: the two events that
    # happened, the completed targets named; target.cancelled and submission.cancelled never happened
    assert {h["event"]: h["targetIds"] for h in failed} == {"target.completed": ids, "submission.completed": []}


def test_what_stopped_the_client_before_is_answered_now(box) -> None:
    """The seven stops of the issue, each asked alone: a create whose batch names workflow 0 (what the
    client sends when a project has no default) is still refused, the rest pass."""
    flow = Flow(box)
    token(flow)
    found = flow.json(flow.send("project", "GET", V0 + "/projects/10"), "project")
    assert found["fileFormatProfiles"][0]["name"] and found["defaultWorkflowDefinitionId"] in (20, 21, 22)
    now = flow.now_ms(flow.send("instanceInfo", "GET", V0 + "/instanceInfo"))
    body = create_body(flow, found, 7, {"name": "Priority", "type": "COMBO", "values": ["High"]}, now)
    body["batchInfos"][0]["workflowId"] = 0
    refused = flow.send("create", "POST", V0 + "/submissions/create", json=body)
    assert refused.status_code == 400 and "workflowId 0" in refused.json()["messages"][0]
    body["batchInfos"][0]["workflowId"] = found["defaultWorkflowDefinitionId"]
    body["metadata"][1]["value"] = "target.completed,target.cancelled,target.reopened"
    sid = flow.json(flow.send("create", "POST", V0 + "/submissions/create", json=body), "create")["submissionId"]
    hooks = {m["key"]: m["value"] for m in flow.json(flow.send("metadata", "GET", f"{V0}/submissions/{sid}/metadata"),
                                                     "metadata")}
    assert hooks["_webhookScope"] == "target.completed,target.cancelled,target.reopened"
    misspelt = flow.send("scope", "PUT", f"{V0}/submissions/{sid}/metadata/_webhookScope",
                         json={"value": "target.complete"})
    assert misspelt.status_code == 400 and "target.complete" in misspelt.json()["messages"][0]
    # the client's own paths for a project's attributes and users are singular; the documents' plural
    # ones are the routes (the documents win)
    assert flow.send("attributes", "GET", V0 + "/project/10/customattributes").status_code == 404
    assert re.fullmatch(r"[0-9a-f-]{36}", flow.json(flow.send(
        "upload", "POST", f"{V0}/submissions/{sid}/upload/source", files={"file": ("a.html", SOURCE)},
        data={"batchName": "Batch1"}), "upload")["processId"])
