"""Projects, organizations, PA clients, workflows, glossaries and translation memories of the
translation emulator: the reference data it reads (seeded in translation_seed), and the root.

`shortCode` is left out of projects below system version 5.20; a project carries its language
directions twice, as lists of codes and as `projectLanguageDirections` records with display names,
and what the vendor's own client reads to create a submission (docs/public-specs.md, G9): its default
workflow (`defaultWorkflowDefinitionId`, the first of `workflowDefinitions`, the one a batch without
`workflowId` gets), its `fileFormatProfiles` (the first is the default), `quoteEnabled` and
`autoStartSubmission`. `GET /projects?projectName=` and `GET /paclients?projectAClientName=` keep the
rows whose name holds the text, in any case (two public clients search so). In hosted mode a
submission's glossaries and TMs are its PA client's, in client mode its project's.
"""
from __future__ import annotations

__all__ = ["MIME_TYPES", "Projects", "SEED_ONLY", "direction", "named"]

from typing import Any

from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.translation.model import DISPLAY_NAMES, FORMAT_INDEX
from toolkit.sandbox.translation.seed import EXTENSIONS, MSLA
from toolkit.sandbox.translation.state import State

# the MIME type of each format's extension, written out: the platform's own table differs by machine
MIME_TYPES = {"html": "text/html", "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
              "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
              "json": "application/json", "xml": "application/xml", "md": "text/markdown",
              "idml": "application/vnd.adobe.indesign-idml-package", "xlf": "application/x-xliff+xml",
              "txt": "text/plain", "properties": "text/x-java-properties"}


def named(rows: Any, field: str, text: str | None) -> list[dict[str, Any]]:
    """The rows whose `field` holds `text` (any case); every row without a text."""
    wanted = (text or "").strip().lower()
    return [r for r in rows if wanted in str(r[field]).lower()]


class Projects:
    """The reference data's reads, over the server's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    # --- projects, organizations, PA clients -------------------------------------------------------

    def project_wire(self, p: dict[str, Any]) -> dict[str, Any]:
        out = {"projectId": p["projectId"], "name": p["name"]}
        if self.state.at_least("5.20"):
            out["shortCode"] = p["shortCode"]
        out.update({k: p[k] for k in ("organizationId", "organizationName", "enabled", "dateCreated",
                                      "paClientIds")})
        out.update(sourceLanguages=p["sources"], targetLanguages=p["targets"],
                   projectLanguageDirections=[direction(s, t) for s, t in p["directions"]])
        workflows = self.state.workflows
        out.update(defaultWorkflowDefinitionId=p["workflowIds"][0], quoteEnabled=True, autoStartSubmission=False,
                   workflowDefinitions=[{"id": w, "name": workflows[w].name,
                                         "description": "Phases: " + ", ".join(workflows[w].phases)}
                                        for w in p["workflowIds"]],
                   fileFormatProfiles=[{"fileFormatId": FORMAT_INDEX[f] + 1, "name": f, "default": n == 0,
                                        "enabled": True, "nonParsable": False, "targetFormat": "TXLF",
                                        "mimeTypes": [MIME_TYPES[EXTENSIONS[f]]], "dateUpdated": p["dateCreated"]}
                                       for n, f in enumerate(p["formats"])])
        return out

    def _project(self, request: Request) -> dict[str, Any]:
        return self.state.lookup(self.state.projects, request.params["project_id"], "project")

    def do_list_projects(self, request: Request) -> Any:
        return [self.project_wire(p) for p in named(self.state.projects.values(), "name", request.arg("projectName"))]

    def do_get_project(self, request: Request) -> Any:
        return self.project_wire(self._project(request))

    def do_list_msla_levels(self, request: Request) -> Any:
        pid = self._project(request)["projectId"]
        return [{"mslaLevelId": pid * 10 + n, "projectId": pid, "name": name, "turnaroundDays": days,
                 "description": text} for n, (name, days, text) in enumerate(MSLA, 1)]

    def do_list_project_custom_attributes(self, request: Request) -> Any:
        p = self._project(request)
        return [{"projectId": p["projectId"], **a, "values": list(a["values"])} for a in p["attributes"]]

    def do_list_file_formats(self, request: Request) -> Any:
        p = self._project(request)
        return [{"fileFormatId": FORMAT_INDEX[f] + 1, "projectId": p["projectId"], "name": f,
                 "extensions": [EXTENSIONS[f]]} for f in p["formats"]]

    def do_list_language_directions(self, request: Request) -> Any:
        p = self._project(request)
        return [{"projectId": p["projectId"], **direction(s, t)} for s, t in p["directions"]]

    def do_list_project_users(self, request: Request) -> Any:
        return [dict(u) for u in self.state.users[self._project(request)["organizationId"]]]

    def _workflow_wire(self, wf_id: int) -> dict[str, Any]:
        return self.state.workflows[wf_id].wire([p["projectId"] for p in self.state.projects.values() if wf_id in p["workflowIds"]])

    def do_list_workflows(self, request: Request) -> Any:
        return [self._workflow_wire(w) for w in self._project(request)["workflowIds"]]

    def do_get_workflow(self, request: Request) -> Any:
        p = self._project(request)
        wf = self.state.lookup(self.state.workflows, request.params["workflow_id"], "workflow")
        if wf.id not in p["workflowIds"]:
            raise Reject(404, f"workflow {wf.id} not found in project {p['projectId']}")
        return self._workflow_wire(wf.id)

    def do_list_organizations(self, request: Request) -> Any:
        return [_org_wire(o) for o in self.state.orgs.values()]

    def do_get_organization(self, request: Request) -> Any:
        return _org_wire(self.state.lookup(self.state.orgs, request.params["organization_id"], "organization"))

    def do_list_organization_pa_clients(self, request: Request) -> Any:
        org = self.state.lookup(self.state.orgs, request.params["organization_id"], "organization")
        return [dict(p) for p in self.state.paclients.values() if p["organizationId"] == org["organizationId"]]

    def do_list_pa_clients(self, request: Request) -> Any:
        return [dict(p) for p in named(self.state.paclients.values(), "name", request.arg("projectAClientName"))]

    def do_get_pa_client(self, request: Request) -> Any:
        return dict(self.state.lookup(self.state.paclients, request.params["paclient_id"], "PA client"))

    def do_get_instance_info(self, request: Request) -> Any:
        # what a connection check reads is the status alone (G8); the body is ours: the facts the
        # sandbox was started with
        return {"systemVersion": self.state.version, "mode": self.state.mode, "apiVersion": "v0"}

    def do_get_root(self, request: Request) -> Response:
        return Response(200, "Translation management REST API v0 (sandbox): resources under /rest/v0\n",
                        content_type="text/plain; charset=utf-8")

    # --- glossaries and translation memories -------------------------------------------------------

    def _assets(self, owner: str, owner_id: int, kind: str) -> list[dict[str, Any]]:
        key = "projectId" if owner == "project" else "paClientId"
        return [{key: owner_id, **item} for item in self.state.resources[(owner, owner_id)][kind]]

    def _one(self, items: list[dict[str, Any]], name: str, what: str) -> dict[str, Any]:
        found = next((i for i in items if i["name"] == name), None)
        if found is None:
            raise Reject(404, f"{what} {name!r} not found")
        return found

    def _paclient_of_org(self, request: Request) -> dict[str, Any]:
        org = self.state.lookup(self.state.orgs, request.params["organization_id"], "organization")
        pa = self.state.lookup(self.state.paclients, request.params["paclient_id"], "PA client")
        if pa["organizationId"] != org["organizationId"]:
            raise Reject(404, f"PA client {pa['paClientId']} not found in organization {org['organizationId']}")
        return pa

    def _submission_assets(self, request: Request, kind: str) -> list[dict[str, Any]]:
        s = self.state.sub(request.params["submission_id"])
        if self.state.mode == "hosted" and s.pa_client_id is not None and s.pa_client_id in self.state.paclients:
            return self._assets("paclient", s.pa_client_id, kind)
        return self._assets("project", s.project_id, kind)

    def do_list_project_glossaries(self, request: Request) -> Any:
        return self._assets("project", self._project(request)["projectId"], "glossaries")

    def do_list_pa_client_glossaries(self, request: Request) -> Any:
        pa = self.state.lookup(self.state.paclients, request.params["paclient_id"], "PA client")
        return self._assets("paclient", pa["paClientId"], "glossaries")

    def do_list_submission_glossaries(self, request: Request) -> Any:
        return self._submission_assets(request, "glossaries")

    def do_get_project_glossary(self, request: Request) -> Any:
        items = self._assets("project", self._project(request)["projectId"], "glossaries")
        return self._one(items, request.params["glossary_name"], "glossary")

    def do_get_pa_client_glossary(self, request: Request) -> Any:
        items = self._assets("paclient", self._paclient_of_org(request)["paClientId"], "glossaries")
        return self._one(items, request.params["glossary_name"], "glossary")

    def do_list_project_tms(self, request: Request) -> Any:
        return self._assets("project", self._project(request)["projectId"], "tms")

    def do_list_pa_client_tms(self, request: Request) -> Any:
        pa = self.state.lookup(self.state.paclients, request.params["paclient_id"], "PA client")
        return self._assets("paclient", pa["paClientId"], "tms")

    def do_list_submission_tms(self, request: Request) -> Any:
        return self._submission_assets(request, "tms")

    def do_get_project_tm(self, request: Request) -> Any:
        items = self._assets("project", self._project(request)["projectId"], "tms")
        return self._one(items, request.params["tm_name"], "translation memory")

    def do_get_pa_client_tm(self, request: Request) -> Any:
        items = self._assets("paclient", self._paclient_of_org(request)["paClientId"], "tms")
        return self._one(items, request.params["tm_name"], "translation memory")


def direction(source: str, target: str) -> dict[str, str]:
    """A language direction with the display names a public plugin shows (targetLanguageDisplayName)."""
    return {"sourceLanguage": source, "sourceLanguageDisplayName": DISPLAY_NAMES[source],
            "targetLanguage": target, "targetLanguageDisplayName": DISPLAY_NAMES[target]}


# an organization's mail domain and billing currency make the seed's addresses and quotes; no
# document names them on an organization record, so they are not sent
SEED_ONLY = frozenset({"domain", "currency"})


def _org_wire(org: dict[str, Any]) -> dict[str, Any]:
    """An organization as the service sends it."""
    return {k: v for k, v in org.items() if k not in SEED_ONLY}
