"""The translation emulator: OAuth tokens, projects and organizations, and the submission lifecycle.

Auth: `POST /oauth/token` with the client credentials as HTTP Basic and the form fields
`grant_type=password`, `username`, `password` (or `grant_type=refresh_token`, `refresh_token`)
answers `{access_token, refresh_token, token_type: "bearer", expires_in: 3600, scope, jti}`. An
access token lives 3600 s of virtual time (after `advance(hours=2)` it gets a 401), a refresh token
30 days; refreshing returns the same refresh token and a new access token. OAuth errors carry both
the OAuth fields (`error`, `error_description`) and the service's `messages`. Every `/rest/v0` call
needs `Authorization: Bearer <live token>`, else 401 `{"messages": [...]}`.

Modes and versions come from `start(mode=..., system_version=...)` (defaults "client" and "6.2"):
an action of the other mode only answers 400 `{"messages": [...]}`; hosted mode requires
`paClientId` at creation; an action newer than the system version answers 404, as an older server
lacks the route; a query parameter newer than it (`status` 5.15, `targetLanguage` 5.20 on the targets
of a submission) is ignored, as a server ignores parameters it does not know; `shortCode` is left out
of projects below 5.20.

The lifecycle is in translation_flow, uploads in translation_uploads, targets and phases in translation_work, downloads, quotes and
webhooks in translation_files, wire records in translation_records, seed data in translation_seed.

    box = toolkit.sandbox.start(mode="hosted", system_version="5.19"); box.examples("translation")
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolkit.catalog import translation as catalog
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.emulator import Emulator
from toolkit.sandbox.pages import answer_list
from toolkit.sandbox.seeds import Seeds
from toolkit.sandbox.translation_files import FilesMixin
from toolkit.sandbox.translation_flow import FlowMixin
from toolkit.sandbox.translation_model import FORMAT_INDEX, Documents, Rows, Submission, Targets, Workflow
from toolkit.sandbox.translation_records import RecordsMixin
from toolkit.sandbox.translation_seed import API_USER, DAY, EXTENSIONS, HOUR, MSLA, seed
from toolkit.sandbox.translation_uploads import UploadsMixin
from toolkit.sandbox.translation_work import WorkMixin
from toolkit.sandbox.wire import Reject, Request, Response
from toolkit.spec import Action

ACCESS_SECONDS = 3600
REFRESH_MS = 30 * DAY


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in str(text).split(".") if part.isdigit())


class Translation(RecordsMixin, FlowMixin, UploadsMixin, WorkMixin, FilesMixin, Emulator):
    """Submissions, documents and targets over projects, workflows and PA clients; see the module doc."""

    catalog = catalog

    def __init__(self, seed_: int, scale: float, clock: Clock, options: Mapping[str, Any]) -> None:
        super().__init__(seed_, scale, clock, options)
        self.mode = self.options.get("mode") or "client"
        self.version = str(self.options.get("system_version") or "6.2")
        self.token_rng = Seeds(seed_, "translation:tokens")
        self.access: dict[str, int] = {}             # access token → expiry (epoch ms)
        self.refresh: dict[str, int] = {}
        self.orgs: dict[int, dict[str, Any]] = {}
        self.users: dict[int, list[dict[str, Any]]] = {}
        self.paclients: dict[int, dict[str, Any]] = {}
        self.projects: dict[int, dict[str, Any]] = {}
        self.workflows: dict[int, Workflow] = {}
        self.resources: dict[tuple[str, int], dict[str, list[dict[str, Any]]]] = {}
        self.weighted_projects: list[dict[str, Any]] = []
        self.subs: dict[int, Submission] = {}
        self.docs, self.targets = Documents(), Targets()
        self.active: set[int] = set()                # IN_PROCESS submissions: the clock moves their work
        self.uploads: dict[int, dict[str, Any]] = {}
        self.downloads: dict[int, dict[str, Any]] = {}
        self.failed_hooks: list[dict[str, Any]] = []
        self.sent_hooks: list[dict[str, Any]] = []
        self.retry_hooks: list[dict[str, Any]] = []
        self.view: tuple[Any, Any] = (None, None)    # the last filtered listing and its rows, for paging
        self.counters = {"submission": 1000, "batch": 0, "quote": 3000, "file": 6000, "process": 4300,
                         "download": 7000}
        self.example_id = self.counters["submission"] + 1
        seed(self)
        self.hour = self.now_ms() // HOUR
        self.handlers = {a.id: self._gate(a, getattr(self, "do_" + a.name)) for a in self.actions}

    # --- identity --------------------------------------------------------------------------------

    def make_credentials(self) -> dict[str, str]:
        rng = self.secret_rng
        return {"username": API_USER, "password": rng.secret("sbx_"), "client_id": f"sandbox-{rng.hex(12)}",
                "client_secret": rng.secret("sbx_"), "mode": str(self.options.get("mode") or "client"),
                "system_version": str(self.options.get("system_version") or "6.2")}

    def authenticate(self, request: Request) -> bool:
        if request.action is not None and request.action.id == "translation.create_token":
            return True                              # the token endpoint checks the client itself
        token = request.bearer()
        expiry = self.access.get(token) if token else None
        return expiry is not None and self.now_ms() < expiry

    def do_create_token(self, request: Request) -> Response:
        creds = self._credentials
        if request.basic() != (creds["client_id"], creds["client_secret"]):
            raise Reject(401, "Bad client credentials", error="invalid_client",
                         error_description="Bad client credentials")
        fields = {k: v[0] for k, v in request.query.items() if v}
        if "x-www-form-urlencoded" in request.headers.get("content-type", ""):
            fields.update(request.form())
        grant, now = fields.get("grant_type"), self.now_ms()
        if grant == "password":
            if (fields.get("username"), fields.get("password")) != (creds["username"], creds["password"]):
                raise Reject(400, "Bad credentials", error="invalid_grant", error_description="Bad credentials")
            refresh = self.token_rng.uuid()
            self.refresh[refresh] = now + REFRESH_MS
            self.issued.append(refresh)
        elif grant == "refresh_token":
            refresh = fields.get("refresh_token") or ""
            if self.refresh.get(refresh, 0) <= now:
                raise Reject(400, "Invalid refresh token", error="invalid_grant",
                             error_description="Invalid refresh token (expired or unknown)")
        else:
            error = "unsupported_grant_type" if grant else "invalid_request"
            raise Reject(400, f"grant_type must be password or refresh_token, not {grant!r}", error=error,
                         error_description="Unsupported grant type" if grant else "Missing grant type")
        access = self.token_rng.uuid()
        self.access[access] = now + ACCESS_SECONDS * 1000
        self.issued.append(access)
        body = {"access_token": access, "token_type": "bearer", "refresh_token": refresh,
                "expires_in": ACCESS_SECONDS, "scope": "read write", "jti": self.token_rng.uuid()}
        return Response(200, body, {"Cache-Control": "no-store", "Pragma": "no-cache"})

    # --- plumbing --------------------------------------------------------------------------------

    def now_ms(self) -> int:
        return self.clock.epoch_ms()

    def next_id(self, kind: str) -> int:
        self.counters[kind] += 1
        return self.counters[kind]

    def new_id(self, collection: str) -> Any:
        return self.next_id("file")

    def at_least(self, version: str) -> bool:
        return version_tuple(self.version) >= version_tuple(version)

    def page(self, request: Request, rows: Rows | list[Any]) -> Response:
        return answer_list(request, request.action or self.actions[0], rows)

    def _gate(self, action: Action, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        """Refuse what the configured system version lacks (404) or the mode does not offer (400)."""
        def gated(request: Request) -> Any:
            if action.min_version and not self.at_least(action.min_version):
                raise Reject(404, f"No handler found for {request.method} {request.path} "
                                  f"(system version {self.version}; needs {action.min_version})")
            if self.mode not in action.modes:
                raise Reject(400, f"{action.method} {action.path} is offered only in "
                                  f"{' and '.join(action.modes)} mode; this server runs in {self.mode} mode")
            return handler(request)
        return gated

    def on_advance(self, now: Any) -> None:
        with self.lock:
            self.progress(self.now_ms())
            self.retry()

    def lookup(self, table: Mapping[int, Any], value: Any, what: str) -> Any:
        try:
            found = table.get(int(value))
        except (TypeError, ValueError):
            found = None
        if found is None:
            raise Reject(404, f"{what} {value} not found")
        return found

    # --- projects, organizations, PA clients -------------------------------------------------------

    def project_wire(self, p: dict[str, Any]) -> dict[str, Any]:
        out = {"projectId": p["projectId"], "name": p["name"]}
        if self.at_least("5.20"):
            out["shortCode"] = p["shortCode"]
        out.update({k: p[k] for k in ("organizationId", "organizationName", "enabled", "dateCreated",
                                      "paClientIds")})
        out.update(sourceLanguages=p["sources"], targetLanguages=p["targets"])
        return out

    def _project(self, request: Request) -> dict[str, Any]:
        return self.lookup(self.projects, request.params["project_id"], "project")

    def do_list_projects(self, request: Request) -> Any:
        return [self.project_wire(p) for p in self.projects.values()]

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
        return [{"projectId": p["projectId"], "sourceLanguage": s, "targetLanguage": t} for s, t in p["directions"]]

    def do_list_project_users(self, request: Request) -> Any:
        return [dict(u) for u in self.users[self._project(request)["organizationId"]]]

    def _workflow_wire(self, wf_id: int) -> dict[str, Any]:
        return self.workflows[wf_id].wire([p["projectId"] for p in self.projects.values() if wf_id in p["workflowIds"]])

    def do_list_workflows(self, request: Request) -> Any:
        return [self._workflow_wire(w) for w in self._project(request)["workflowIds"]]

    def do_get_workflow(self, request: Request) -> Any:
        p = self._project(request)
        wf = self.lookup(self.workflows, request.params["workflow_id"], "workflow")
        if wf.id not in p["workflowIds"]:
            raise Reject(404, f"workflow {wf.id} not found in project {p['projectId']}")
        return self._workflow_wire(wf.id)

    def do_list_organizations(self, request: Request) -> Any:
        return [dict(o) for o in self.orgs.values()]

    def do_get_organization(self, request: Request) -> Any:
        return dict(self.lookup(self.orgs, request.params["organization_id"], "organization"))

    def do_list_organization_pa_clients(self, request: Request) -> Any:
        org = self.lookup(self.orgs, request.params["organization_id"], "organization")
        return [dict(p) for p in self.paclients.values() if p["organizationId"] == org["organizationId"]]

    def do_list_pa_clients(self, request: Request) -> Any:
        return [dict(p) for p in self.paclients.values()]

    def do_get_pa_client(self, request: Request) -> Any:
        return dict(self.lookup(self.paclients, request.params["paclient_id"], "PA client"))

    def do_get_root(self, request: Request) -> Response:
        return Response(200, "Translation management REST API v0 (sandbox): resources under /rest/v0\n",
                        content_type="text/plain; charset=utf-8")

    # --- glossaries and translation memories -------------------------------------------------------

    def _assets(self, owner: str, owner_id: int, kind: str) -> list[dict[str, Any]]:
        key = "projectId" if owner == "project" else "paClientId"
        return [{key: owner_id, **item} for item in self.resources[(owner, owner_id)][kind]]

    def _one(self, items: list[dict[str, Any]], name: str, what: str) -> dict[str, Any]:
        found = next((i for i in items if i["name"] == name), None)
        if found is None:
            raise Reject(404, f"{what} {name!r} not found")
        return found

    def _paclient_of_org(self, request: Request) -> dict[str, Any]:
        org = self.lookup(self.orgs, request.params["organization_id"], "organization")
        pa = self.lookup(self.paclients, request.params["paclient_id"], "PA client")
        if pa["organizationId"] != org["organizationId"]:
            raise Reject(404, f"PA client {pa['paClientId']} not found in organization {org['organizationId']}")
        return pa

    def _submission_assets(self, request: Request, kind: str) -> list[dict[str, Any]]:
        s = self.sub(request.params["submission_id"])
        if self.mode == "hosted" and s.pa_client_id is not None and s.pa_client_id in self.paclients:
            return self._assets("paclient", s.pa_client_id, kind)
        return self._assets("project", s.project_id, kind)

    def do_list_project_glossaries(self, request: Request) -> Any:
        return self._assets("project", self._project(request)["projectId"], "glossaries")

    def do_list_pa_client_glossaries(self, request: Request) -> Any:
        pa = self.lookup(self.paclients, request.params["paclient_id"], "PA client")
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
        pa = self.lookup(self.paclients, request.params["paclient_id"], "PA client")
        return self._assets("paclient", pa["paClientId"], "tms")

    def do_list_submission_tms(self, request: Request) -> Any:
        return self._submission_assets(request, "tms")

    def do_get_project_tm(self, request: Request) -> Any:
        items = self._assets("project", self._project(request)["projectId"], "tms")
        return self._one(items, request.params["tm_name"], "translation memory")

    def do_get_pa_client_tm(self, request: Request) -> Any:
        items = self._assets("paclient", self._paclient_of_org(request)["paClientId"], "tms")
        return self._one(items, request.params["tm_name"], "translation memory")

    # --- examples --------------------------------------------------------------------------------

    def examples(self) -> dict[str, Any]:
        """Real values for every path param and the lists of the catalog's example calls, all from the
        example submission (project 10, workflow 22): its targets sit in every phase of the workflow."""
        s = self.subs[self.example_id]
        docs, targets = list(s.docs), list(s.targets)
        tid, did = self.targets.BASE, self.docs.BASE
        upload = next(p for p, u in self.uploads.items() if u["submissionId"] == s.id and u["kind"] == "translatable")
        download = next(d for d, a in self.downloads.items() if a["submissionId"] == s.id)
        return {
            "submission_id": s.id, "submission_ids": [s.id, s.id + 1, s.id + 2],
            "document_id": did + docs[0], "document_ids": [did + docs[2]],
            "target_id": tid + targets[4],               # document 2, fr-FR: READY in TRANSLATION
            "target_ids": [tid + targets[8]],            # document 3, fr-FR: READY in TRANSLATION
            "deliverable_target_ids": [tid + targets[0], tid + targets[1]],   # PROCESSED
            "phase_name": "TRANSLATION", "transition": "REVIEW",
            "languages": ["fr-FR", "de-DE"], "target_language": "fr-FR", "target_language_level": ["fr-FR", "de-DE"],
            "language_reference_files": ["fr-FR"], "batch_name": "Batch1", "file_format_name": "HTML",
            "project_id": s.project_id, "workflow_id": 22, "organization_id": 3, "paclient_id": 7, "pa_client_id": 7,
            "glossary_name": "MarketingGlossary", "tm_name": "MainTM",
            "attribute_name": "CampaignCode", "metadata_name": "requester",
            "upload_process_id": upload, "download_id": download, "username": API_USER,
            "due_date": self.now_ms() + 30 * DAY,        # the catalog's example date is past on this clock
        }


EMULATOR = Translation
