"""The translation emulator: OAuth tokens, projects and organizations, and the submission lifecycle.

Auth: `POST /oauth/token` with the client credentials as HTTP Basic and the form fields (urlencoded or
multipart)
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

The emulator holds its parts, which share one `State` (translation_state: the data and the lookups)
and never import it back: the lifecycle is in translation_flow, uploads in translation_uploads,
targets and phases in translation_work, downloads, quotes and webhooks in translation_files, wire
records and the submission reads in translation_records, projects, organizations, glossaries and TMs
in translation_projects, seed data in translation_seed.

    box = toolkit.sandbox.start(mode="hosted", system_version="5.19"); box.examples("translation")
"""
from __future__ import annotations

__all__ = ["ACCESS_SECONDS", "EMULATOR", "REFRESH_MS", "Translation"]

from collections.abc import Callable, Mapping
from typing import Any

from toolkit.catalog import translation as catalog
from toolkit.catalog.spec import Action
from toolkit.sandbox.clock import Clock
from toolkit.sandbox.emulator import Emulator
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.seeds import Seeds
from toolkit.sandbox.translation.files import Files
from toolkit.sandbox.translation.flow import Flow
from toolkit.sandbox.translation.projects import Projects
from toolkit.sandbox.translation.records import Records
from toolkit.sandbox.translation.seed import API_USER, DAY, HOUR, seed
from toolkit.sandbox.translation.state import State
from toolkit.sandbox.translation.uploads import Uploads
from toolkit.sandbox.translation.work import Work

ACCESS_SECONDS = 3600
REFRESH_MS = 30 * DAY


class Translation(Emulator):
    """Submissions, documents and targets over projects, workflows and PA clients; see the module doc.

    The emulator hands out tokens, gates every action by mode and system version, and holds the
    parts that answer the actions (`do_<action name>`), each given the shared `State` and the parts it
    calls: records, flow (the lifecycle and the clock), uploads, work (targets and phases), files
    (downloads, quotes, webhooks) and projects (the reference data).
    """

    catalog = catalog

    def __init__(self, seed_: int, scale: float, clock: Clock, options: Mapping[str, Any]) -> None:
        super().__init__(seed_, scale, clock, options)
        self.state = state = State(clock, self.rng, self.scale, self.options.get("mode") or "client",
                                   str(self.options.get("system_version") or "6.2"), self.actions[0],
                                   self.ids)
        self.token_rng = Seeds(seed_, "translation:tokens")
        self.access: dict[str, int] = {}             # access token → expiry (epoch ms)
        self.refresh: dict[str, int] = {}
        seed(state)
        state.hour = state.now_ms() // HOUR
        records, self.files = Records(state), Files(state)
        self.flow = Flow(state, records, self.files)
        self.parts = (records, self.flow, Uploads(state), Work(state, records, self.flow), self.files,
                      Projects(state))
        self.handlers = {a.id: self._gate(a, self._handler(a.name)) for a in self.actions}

    def _handler(self, name: str) -> Callable[[Request], Any]:
        """The `do_<name>` method of this emulator or of the part that has it."""
        for holder in (self, *self.parts):
            handler = getattr(holder, "do_" + name, None)
            if handler is not None:
                return handler
        raise AttributeError(f"no part of the translation emulator answers {name}")

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
        kind = request.headers.get("content-type", "")
        if "x-www-form-urlencoded" in kind:
            fields.update(request.form())
        elif "multipart/form-data" in kind:
            # Spring reads the token request's fields as request parameters, which a multipart body
            # fills too; a public plugin sends FormData (docs/public-specs.md)
            fields.update({p.name: p.data.decode("utf-8", "replace") for p in request.parts() if p.filename is None})
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
        return self.state.now_ms()

    def new_id(self, collection: str) -> Any:
        return self.state.next_id("file")

    def _gate(self, action: Action, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        """Refuse what the configured system version lacks (404) or the mode does not offer (400)."""
        state = self.state

        def gated(request: Request) -> Any:
            if action.min_version and not state.at_least(action.min_version):
                raise Reject(404, f"No handler found for {request.method} {request.path} "
                                  f"(system version {state.version}; needs {action.min_version})")
            if state.mode not in action.modes:
                raise Reject(400, f"{action.method} {action.path} is offered only in "
                                  f"{' and '.join(action.modes)} mode; this server runs in {state.mode} mode")
            return handler(request)
        return gated

    def on_advance(self, now: Any) -> None:
        with self.lock:
            self.flow.progress(self.state.now_ms())
            self.files.retry()

    # --- examples --------------------------------------------------------------------------------

    def examples(self) -> dict[str, Any]:
        """Real values for every path param and the lists of the catalog's example calls, all from the
        example submission (project 10, workflow 22): its targets sit in every phase of the workflow."""
        state = self.state
        s = state.subs[state.example_id]
        docs, targets = list(s.docs), list(s.targets)
        tid, did = state.targets.BASE, state.docs.BASE
        upload = next(p for p, u in state.uploads.items() if u["submissionId"] == s.id and u["kind"] == "translatable")
        download = next(d for d, a in state.downloads.items() if a["submissionId"] == s.id)
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
            # one target's file needs a target that has one (target_id above is still in translation)
            "overrides": {"translation.download_target_deliverable": {"target_id": tid + targets[0]}},
        }


EMULATOR = Translation
