"""Seed data of the translation emulator: organizations, PA clients, projects, workflows, users, and
submissions with their documents, targets, quotes, webhooks and downloads.

The reference data is fixed (2 organizations, 5 PA clients, 5 projects, 8 workflows); submissions
grow linearly with scale: 80 at scale 1 with 1-5 documents and 2-6 target languages each (about
1,000 targets), then 4.2 more per unit of scale with 2-10 documents each (about 24 targets), so
≈100,000 targets at scale 1000 and ≈1,000,000 at 10000. Big submissions rather than more of them:
a submission object costs far more to build than its targets, which are columns. The first
submission is the example one (project 10, workflow 22, targets in every phase); `examples()`
points at it.

    seed(state)   # fills state.orgs, .projects, .subs, .docs, .targets, ...
"""
from __future__ import annotations

__all__ = ["API_USER", "ATTRIBUTES", "ATTRIBUTE_DESCRIPTIONS", "BACKGROUNDS", "DAY", "DEMO", "Draw", "EXAMPLE_LANGUAGES",
           "EXAMPLE_STEPS", "EXTENSIONS", "FAILING_HOOKS", "HOUR", "INSTRUCTIONS", "MINUTE", "MSLA", "ORGS",
           "PA_CLIENTS", "PEOPLE", "PROJECTS", "PROJECT_WEIGHTS", "QUALIFIERS", "SCOPES", "SETTLED",
           "STATUS_WEIGHTS", "STEMS", "STEP_PHASE", "STEP_STATE", "TOPICS", "USER_FLAGS", "WORKFLOWS", "attribute_value",
           "seed"]

import math
from typing import Any

from toolkit.sandbox.translation.model import (
    CANCELLED,
    DELIVERED,
    FORMAT_INDEX,
    IN_PROCESS,
    LANG_INDEX,
    NO_FORMAT,
    NO_PHASE,
    PROCESSED,
    READY,
    WAITING,
    Batch,
    Submission,
    Workflow,
)
from toolkit.sandbox.translation.state import State

MINUTE, HOUR, DAY = 60_000, 3_600_000, 86_400_000
EXAMPLE_LANGUAGES = ("fr-FR", "de-DE", "ja-JP", "es-ES")
DEMO = 80           # submissions at scale 1; those beyond hold 2-10 documents instead of 1-5

ORGS = ((3, "Acme Retail Group", "acme-retail.example", "USD"),
        (4, "Northwind Health", "northwind-health.example", "EUR"))
PA_CLIENTS = ((7, "Acme Retail EU", 3, "AREU"), (8, "Acme Retail Americas", 3, "ARAM"),
              (9, "Acme Retail APAC", 3, "ARAP"), (10, "Northwind Clinical", 4, "NWCL"),
              (11, "Northwind Consumer", 4, "NWCO"))
WORKFLOWS = (
    (20, "Translation_Review", ("TRANSLATION", "REVIEW")),
    (21, "TEP", ("TRANSLATION", "EDITING", "PROOFREADING")),
    (22, "Translation_Review_ClientReview", ("TRANSLATION", "REVIEW", "CLIENT_REVIEW")),
    (23, "MT_PostEdit_Review", ("MT_POST_EDIT", "REVIEW")),
    (24, "Legal_TEP_ClientReview", ("TRANSLATION", "EDITING", "PROOFREADING", "CLIENT_REVIEW")),
    (25, "Docs_Translation_DTP", ("TRANSLATION", "REVIEW", "DTP", "QA")),
    (26, "Docs_Translation_Review", ("TRANSLATION", "REVIEW")),
    (27, "Medical_TEP_Validation", ("TRANSLATION", "EDITING", "LINGUISTIC_VALIDATION", "CLIENT_REVIEW")),
)
# the two types of the vendor's own client (`CustomAttributeType`: COMBO, TEXT; docs/public-specs.md,
# G9): a COMBO takes one of its values, a TEXT any text (GoLiveDate is a date written as text)
ATTRIBUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "CostCenter": ("TEXT", ()),
    "CampaignCode": ("TEXT", ()),
    "BusinessUnit": ("COMBO", ("Retail", "E-commerce", "Stores", "Corporate")),
    "Priority": ("COMBO", ("Low", "Normal", "High", "Urgent")),
    "RequestedBy": ("TEXT", ()),
    "LegalReview": ("COMBO", ("Required", "Not required")),
    "GoLiveDate": ("TEXT", ()),
    "ProductLine": ("COMBO", ("Imaging", "Monitoring", "Diagnostics")),
    "TherapeuticArea": ("COMBO", ("Cardiology", "Oncology", "Diabetes", "General")),
}
ATTRIBUTE_DESCRIPTIONS = {
    "CostCenter": "Cost center billed for the work", "CampaignCode": "Marketing campaign code (CMP-nnn)",
    "BusinessUnit": "Business unit that owns the content", "Priority": "How urgent the work is",
    "RequestedBy": "User name of the requester", "LegalReview": "Whether legal must review the translation",
    "GoLiveDate": "Publication date (YYYY-MM-DD)", "ProductLine": "Product line the documents describe",
    "TherapeuticArea": "Therapeutic area of the materials",
}
# id, name, short code, organization, sources, targets, workflows, attributes (name → mandatory), formats
PROJECTS = (
    (10, "Retail Web", "RWEB", 3, ("en-US",),
     ("fr-FR", "de-DE", "es-ES", "it-IT", "ja-JP", "zh-CN", "pt-BR", "nl-NL", "ko-KR"), (20, 21, 22),
     {"CostCenter": False, "BusinessUnit": False, "Priority": False, "CampaignCode": False},
     ("HTML", "MS Word", "JSON", "XML", "Markdown", "XLIFF", "Plain Text")),
    (11, "Mobile App", "MAPP", 3, ("en-US",),
     ("fr-FR", "de-DE", "es-ES", "ja-JP", "ko-KR", "zh-TW", "pt-BR", "es-MX", "fr-CA"), (22, 23),
     {"Priority": True, "CostCenter": False, "GoLiveDate": False},
     ("JSON", "XML", "Java Properties", "XLIFF", "Plain Text")),
    (12, "Legal & Compliance", "LEGL", 3, ("en-US", "en-GB"),
     ("fr-FR", "de-DE", "es-ES", "it-IT", "nl-NL", "sv-SE", "pl-PL"), (24, 20),
     {"LegalReview": True, "CostCenter": True, "RequestedBy": False},
     ("MS Word", "MS Excel", "HTML", "Plain Text")),
    (13, "Product Documentation", "PDOC", 4, ("en-US",),
     ("de-DE", "fr-FR", "ja-JP", "zh-CN", "ko-KR", "ru-RU", "pl-PL", "cs-CZ", "tr-TR"), (25, 26),
     {"ProductLine": True, "Priority": False, "RequestedBy": False},
     ("InDesign IDML", "XML", "MS Word", "HTML", "Markdown")),
    (14, "Patient Materials", "PMAT", 4, ("en-US",),
     ("es-ES", "es-MX", "fr-CA", "ar-SA", "he-IL", "zh-CN", "ru-RU", "pt-BR"), (27, 26),
     {"TherapeuticArea": True, "CostCenter": False, "GoLiveDate": False},
     ("MS Word", "InDesign IDML", "HTML", "Plain Text")),
)
PROJECT_WEIGHTS = (5, 4, 2, 3, 2)
MSLA = (("Standard", 10, "Standard turnaround"), ("Express", 4, "Expedited, surcharge applies"),
        ("Premium", 7, "Two-step review by senior linguists"))
PEOPLE = {3: (("a.martin", "Alice", "Martin"), ("j.schmidt", "Jonas", "Schmidt"), ("m.rossi", "Marco", "Rossi"),
              ("s.okafor", "Sade", "Okafor"), ("l.chen", "Li", "Chen")),
          4: (("k.tanaka", "Kenji", "Tanaka"), ("e.dubois", "Emma", "Dubois"), ("p.nowak", "Piotr", "Nowak"),
              ("r.silva", "Rita", "Silva"), ("h.berg", "Hanna", "Berg"))}
API_USER = "pm.sandbox"
# what the vendor's own client and a production connector read of a user (OrganizationUserModel;
# a submission's owners): every seeded user is an enabled organization user without single sign-on
USER_FLAGS = {"enabled": True, "ssoUser": False, "userType": "ORGANIZATION"}

STATUS_WEIGHTS = (("CREATING", 8), ("PREFLIGHT", 3), ("WAITING", 6), ("READY", 6), ("IN_PROCESS", 40),
                  ("PROCESSED", 12), ("DELIVERED", 18), ("CANCELLED", 7))
TOPICS = ("Website update", "Spring catalogue", "Product launch", "Release notes", "Onboarding emails",
          "Privacy policy refresh", "Checkout flow strings", "Help center articles", "Packaging labels",
          "Sales deck", "Store signage", "App store listing", "Training module", "Safety data sheets",
          "Patient leaflet", "Study synopsis", "User manual", "Press release", "Loyalty program terms",
          "Newsletter")
QUALIFIERS = ("Q1", "Q2", "Q3", "Q4", "2026", "2027", "v2", "v3.1", "holiday", "EU rollout", "wave 2",
              "hotfix", "batch 3", "refresh")
STEMS = ("homepage", "product-catalog", "checkout", "faq", "terms-of-service", "privacy-policy",
         "release-notes", "user-guide", "onboarding-email", "banner-copy", "strings", "press-release",
         "safety-sheet", "leaflet", "training-slides", "store-signage", "error-messages", "menu-labels")
EXTENSIONS = {"HTML": "html", "MS Word": "docx", "MS Excel": "xlsx", "JSON": "json", "XML": "xml",
              "Markdown": "md", "InDesign IDML": "idml", "XLIFF": "xlf", "Plain Text": "txt",
              "Java Properties": "properties"}
INSTRUCTIONS = ("Keep the brand names in English.", "Use the formal register.",
                "Follow the attached style guide; do not translate product codes.",
                "Character limits apply to UI strings (see the reference file).",
                "Use the approved glossary terms; flag any missing term.")
BACKGROUNDS = ("Autumn campaign for the online store.", "Regulatory update, legal review required.",
               "Quarterly product release.", "Customer support knowledge base.",
               "Content for the new mobile app version.")
SCOPES = ("submission.completed,submission.cancelled",
          "submission.completed,submission.cancelled,submission.analyzed,submission.started",
          "submission.completed")
FAILING_HOOKS = (("http://10.12.4.17:8080/tms/webhook", "connect timed out"),
                 ("http://intranet.northwind-health.local/hooks/tms", "Connection refused"))


def seed(state: State) -> None:
    """Fill the emulator with the reference data and the submissions of its seed and scale."""
    _reference(state)
    scale = state.scale
    count = max(1, round(80 * scale)) if scale <= 1 else DEMO + round(4.2 * (scale - 1))
    now = state.now_ms()
    # statuses dealt by quota, then shuffled: every status appears even at scale 1
    total = sum(w for _, w in STATUS_WEIGHTS)
    statuses = [s for s, w in STATUS_WEIGHTS for _ in range(max(1, round((count - 1) * w / total)))]
    statuses = (statuses + ["IN_PROCESS"] * count)[:count - 1]
    state.rng.shuffle(statuses)
    draw = Draw(state.rng)
    _submission(state, draw, 0, now, "IN_PROCESS", example=True)
    for n, status in enumerate(statuses, 1):
        _submission(state, draw, n, now, status)
    _failed_hooks(state, now)


def _reference(state: State) -> None:
    now = state.now_ms()
    for org_id, name, domain, currency in ORGS:
        state.orgs[org_id] = {"organizationId": org_id, "name": name, "domain": domain, "currency": currency,
                            "dateCreated": now - 900 * DAY}
        state.users[org_id] = [
            {"userId": 200 + org_id * 10 + n, "userName": user, "firstName": first, "lastName": last,
             "email": f"{first.lower()}.{last.lower()}@{domain}", "organizationId": org_id,
             "roles": ["PROJECT_MANAGER"] if n == 0 else ["SUBMITTER"], **USER_FLAGS}
            for n, (user, first, last) in enumerate(PEOPLE[org_id])]
        state.users[org_id].append({"userId": 299, "userName": API_USER, "firstName": "Sandbox",
                                  "lastName": "Integration", "email": f"pm.sandbox@{domain}",
                                  "organizationId": org_id, "roles": ["PROJECT_MANAGER", "API"], **USER_FLAGS})
    for pa_id, name, org_id, short in PA_CLIENTS:
        state.paclients[pa_id] = {"paClientId": pa_id, "name": name, "organizationId": org_id,
                                "shortCode": short, "enabled": True}
        term = "MarketingGlossary" if org_id == 3 else "ClinicalGlossary"
        state.resources[("paclient", pa_id)] = _language_assets(term, short, ("en-US",), ("fr-FR", "de-DE"), now)
    for wf_id, name, phases in WORKFLOWS:
        state.workflows[wf_id] = Workflow(wf_id, name, phases)
    for n, (pid, name, short, org_id, sources, targets, workflows, attrs, formats) in enumerate(PROJECTS):
        state.projects[pid] = {
            "projectId": pid, "name": name, "shortCode": short, "organizationId": org_id,
            "organizationName": state.orgs[org_id]["name"], "enabled": True, "dateCreated": now - (700 - n) * DAY,
            "paClientIds": [p[0] for p in PA_CLIENTS if p[2] == org_id],
            "sources": list(sources), "targets": list(targets),
            "directions": [(s, t) for s in sources for t in targets if s != t],
            "workflowIds": list(workflows), "formats": list(formats),
            "attributes": [{"name": a, "type": ATTRIBUTES[a][0], "mandatory": m, "values": list(ATTRIBUTES[a][1]),
                            "description": ATTRIBUTE_DESCRIPTIONS[a]} for a, m in attrs.items()],
        }
        sets = [tuple(state.rng.sample(targets, state.rng.randint(2, 6))) for _ in range(97)]
        state.projects[pid].update(
            language_sets=sets,
            codes={langs: bytes(LANG_INDEX[code] for code in langs) for langs in [*sets, EXAMPLE_LANGUAGES]},
            format_pairs=[(FORMAT_INDEX[f], EXTENSIONS[f]) for f in formats])
        term = "MarketingGlossary" if org_id == 3 else "ClinicalGlossary"
        state.resources[("project", pid)] = _language_assets(term, short, sources, targets, now)
    state.weighted_projects = [p for p, w in zip(state.projects.values(), PROJECT_WEIGHTS, strict=True)
                             for _ in range(w)]


def _language_assets(term: str, short: str, sources: tuple[str, ...], targets: tuple[str, ...],
                     now: int) -> dict[str, list[dict[str, Any]]]:
    """Glossaries and TMs of a project or PA client; names shared across owners where the org shares them."""
    langs = {"sourceLanguage": sources[0], "targetLanguages": list(targets)}
    size = 1000 + sum(map(ord, short)) * 7
    return {
        "glossaries": [{"name": term, **langs, "termCount": size // 3, "connection": "TermManager",
                        "lastModified": now - 12 * DAY},
                       {"name": f"{short}_Terminology", **langs, "termCount": size // 5,
                        "connection": "TermManager", "lastModified": now - 40 * DAY}],
        "tms": [{"name": "MainTM", **langs, "segmentCount": size * 60, "lastModified": now - 2 * DAY},
                {"name": f"{short}_TM", **langs, "segmentCount": size * 11, "lastModified": now - 9 * DAY}],
    }


class Draw:
    """Fast draws from the seeded stream: `random()` is C code, while `choice` and `randint` loop in
    Python, which shows at a hundred thousand submissions."""

    def __init__(self, rng: Any) -> None:
        self.r = rng.random

    def pick(self, seq: Any) -> Any:
        return seq[int(self.r() * len(seq))]

    def between(self, low: int, high: int) -> int:
        return low + int(self.r() * (high - low + 1))


def attribute_value(draw: Draw, name: str, project_id: int) -> str:
    kind, values = ATTRIBUTES[name]
    if kind == "COMBO":
        return draw.pick(values)
    if name == "GoLiveDate":
        return f"2026-{draw.between(11, 12)}-{draw.between(1, 28):02d}"
    if name == "CostCenter":
        return f"{('MKT', 'OPS', 'LEG', 'DOC', 'MED')[project_id - 10]}-{draw.between(1, 40):02d}"
    if name == "CampaignCode":
        return f"CMP-{draw.between(1, 400):03d}"
    return draw.pick(PEOPLE[3 if project_id < 13 else 4])[0]


def _dates(draw: Draw, status: str, now: int) -> tuple[int, int, int | None, int | None, int | None]:
    """created, due, started, completed, canceled by status, around the virtual now (some overdue)."""
    started = completed = canceled = None
    if status in ("CREATING", "PREFLIGHT", "WAITING", "READY"):
        created = now - draw.between(10, 6 * 24 * 60) * MINUTE
        due = now + draw.between(3, 40) * DAY
    elif status == "IN_PROCESS":
        started = now - draw.between(6, 20 * 24) * HOUR
        created = started - draw.between(10, 48 * 60) * MINUTE
        due = now + draw.between(-5 * 24, 25 * 24) * HOUR
    elif status in ("PROCESSED", "DELIVERED"):
        completed = now - draw.between(2, (5 if status == "PROCESSED" else 90) * 24) * HOUR
        started = completed - draw.between(3 * 24, 15 * 24) * HOUR
        created = started - draw.between(10, 48 * 60) * MINUTE
        due = completed + draw.between(-3 * 24, 7 * 24) * HOUR
    else:
        canceled = now - draw.between(1, 60 * 24) * HOUR
        created = canceled - draw.between(1, 20 * 24) * HOUR
        started = created + HOUR if draw.r() < 0.5 else None
        due = canceled + draw.between(2, 30) * DAY
    return created, due, started, completed, canceled


def _submission(state: State, draw: Draw, n: int, now: int, status: str, example: bool = False) -> None:
    if example:
        project, workflow_id, scope = state.projects[10], 22, "LANGUAGE"
        langs, ndocs, target_format = EXAMPLE_LANGUAGES, 3, "TXLF"
    else:
        project = draw.pick(state.weighted_projects)
        workflow_id = draw.pick(project["workflowIds"])
        scope = draw.pick(("LANGUAGE", "LANGUAGE", "LANGUAGE", "BATCH", "FILE"))
        langs = draw.pick(project["language_sets"])
        ndocs = 0 if status == "CREATING" and draw.r() < 0.35 else draw.between(*(1, 5) if n < DEMO else (2, 10))
        target_format = "NON_PARSABLE" if draw.r() < 0.08 else draw.pick(("TXLF", "TXLF", "TXML"))
    pid, org = project["projectId"], project["organizationId"]
    created, due, started, completed, canceled = _dates(draw, status, now)
    owner = draw.pick(PEOPLE[org])[0]
    sub = Submission(
        state.next_id("submission"), pid, f"{TOPICS[(n * 7 + pid) % len(TOPICS)]} {draw.pick(QUALIFIERS)}",
        status, project["sources"][0], [Batch(state.next_id("batch"), "Batch1", target_format, workflow_id, langs)],
        due, created, claim_scope=scope, started=started, completed=completed, canceled=canceled,
        owners=[owner], instructions=draw.pick(INSTRUCTIONS), background=draw.pick(BACKGROUNDS),
        pa_client_id=draw.pick(project["paClientIds"]))
    if example:
        sub.name, sub.pa_client_id = "Website update Q3", 7
        sub.attributes = {"BusinessUnit": "E-commerce", "Priority": "High", "CampaignCode": "CMP-117"}
    else:
        for attr in project["attributes"]:
            if attr["mandatory"] or draw.r() < 0.5:
                sub.attributes[attr["name"]] = attribute_value(draw, attr["name"], pid)
    sub.metadata["requester"] = owner
    if draw.r() < 0.4 and not example:
        sub.metadata["orderNumber"] = f"PO-2026-{draw.between(1, 9999):04d}"
    if not example and draw.r() < 0.25:
        sub.metadata["_webhookURL"] = f"https://hooks.{state.orgs[org]['domain']}/tms/events"
        sub.metadata["_webhookScope"] = draw.pick(SCOPES)
    state.subs[sub.id] = sub
    _documents(state, draw, sub, project, ndocs, now, example)
    _quotes(state, draw, sub, example)
    if status == "PREFLIGHT":
        sub.analysis_until = now + draw.between(2, 9) * MINUTE
    if status in ("READY", "IN_PROCESS", "PROCESSED", "DELIVERED"):
        sub.analysis_done = created + 15 * MINUTE
    if status == "IN_PROCESS":
        state.active.add(sub.id)
    if example:
        _example_extras(state, sub, now)


SETTLED = {"CREATING": WAITING, "PREFLIGHT": WAITING, "WAITING": WAITING, "READY": READY,
           "PROCESSED": PROCESSED, "DELIVERED": DELIVERED, "CANCELLED": CANCELLED}


def _documents(state: State, draw: Draw, sub: Submission, project: dict[str, Any], ndocs: int, now: int,
               example: bool) -> None:
    """The submission's documents and targets, written column by column (the hot path at scale)."""
    docs, targets, status, r = state.docs, state.targets, sub.status, draw.r
    batch = sub.batches[0]
    codes = project["codes"][batch.languages]
    per_doc, count = len(codes), ndocs * len(codes)
    first_doc, first_target = len(docs), len(targets)
    if batch.target_format == "NON_PARSABLE":
        kinds = [(NO_FORMAT, ("pdf", "png", "zip")[int(r() * 3)]) for _ in range(ndocs)]
    else:
        pairs = project["format_pairs"]
        kinds = [pairs[0] if example else pairs[int(r() * len(pairs))] for _ in range(ndocs)]
    stem = sub.id * 3
    names = [f"{STEMS[(stem + d * 5) % len(STEMS)]}{f'-{d + 1}' if ndocs > 1 else ''}.{kind[1]}"
             for d, kind in enumerate(kinds)]
    live = status in ("IN_PROCESS", "PROCESSED", "DELIVERED") and not example
    cancelled = bytes(status == "CANCELLED" or (live and r() < 0.03) for _ in range(ndocs))
    docs.extend(sub.id, names, [int(40 * math.exp(r() * 5.5)) for _ in range(ndocs)],
                bytes(kind[0] for kind in kinds), [sub.created + (d + 1) * MINUTE for d in range(ndocs)],
                cancelled)
    if status == "IN_PROCESS":
        top = 2 * len(state.workflows[batch.workflow_id].phases)
        if example:
            steps = [step for row in EXAMPLE_STEPS for step in row]
        else:
            base = (0.05 + r() * 0.9) * (top + 1) - 1.5
            steps = [min(max(int(base + r() * 3), 0), top) for _ in range(count)]
        states, phase = bytearray(STEP_STATE[top][s] for s in steps), bytearray(STEP_PHASE[top][s] for s in steps)
        done = [now - ((first_target + n) % 30 + 1) * HOUR if s == top else 0 for n, s in enumerate(steps)]
    else:
        code = SETTLED[status]
        states, phase = bytearray([code]) * count, bytearray([NO_PHASE]) * count
        if code in (PROCESSED, DELIVERED):
            end = sub.completed or now
            done = [end - ((first_target + n) * 7 % 40) * HOUR for n in range(count)]
        else:
            done = [0] * count
    if any(cancelled):
        for d in range(ndocs):
            if cancelled[d]:
                for n in range(d * per_doc, (d + 1) * per_doc):
                    states[n], phase[n], done[n] = CANCELLED, NO_PHASE, 0
    positions = range(first_doc, first_doc + ndocs)
    targets.extend([d for d in positions for _ in codes], codes * ndocs, states, phase, done)
    sub.docs = positions
    sub.targets = range(first_target, first_target + count)


# by workflow length (2 × phases): the status and phase of each step; the last step is PROCESSED
STEP_STATE = {2 * n: [READY, IN_PROCESS] * n + [PROCESSED] for n in range(1, 6)}
STEP_PHASE = {2 * n: [p for p in range(n) for _ in (0, 1)] + [NO_PHASE] for n in range(1, 6)}


# the example submission's 3 documents × its 4 languages: workflow steps, 6 = PROCESSED
EXAMPLE_STEPS = ((6, 6, 6, 6), (0, 1, 2, 3), (0, 0, 4, 6))


def _quotes(state: State, draw: Draw, sub: Submission, example: bool) -> None:
    if not (example or sub.status == "WAITING" or (sub.status in ("IN_PROCESS", "PROCESSED", "DELIVERED")
                                                   and draw.r() < 0.3)):
        return
    words = sum(state.docs.words[d] for d in sub.docs) * len(sub.languages())
    org = state.orgs[state.projects[sub.project_id]["organizationId"]]
    approved = not example and sub.status != "WAITING"
    provided = sub.created + 2 * HOUR
    sub.quotes.append({
        "quoteId": state.next_id("quote"), "submissionId": sub.id,
        "status": "APPROVED" if approved else "PROVIDED",
        "amount": round(words * (0.09 + draw.r() * 0.07), 2), "currency": org["currency"], "wordCount": words,
        "comment": "Approved for production." if approved else None,
        "dateProvided": provided, "dateApproved": provided + 3 * HOUR if approved else None,
        "approvedBy": sub.owners[0] if approved else None,
    })


def _example_extras(state: State, sub: Submission, now: int) -> None:
    """What the example calls need: a fr-FR reference file, a checked translatable upload, a finished download."""
    sub.references.append({"referenceFileId": state.next_id("file"), "name": "styleguide-fr.txt",
                           "submissionLevel": False, "targetLanguages": ["fr-FR"],
                           "content": b"Vouvoiement; pas d'anglicismes.", "dateCreated": sub.created})
    state.uploads[state.guid()] = {
        "submissionId": sub.id, "kind": "translatable", "name": "strings-fr.xlf", "status": "PROCESSED",
        "messages": [], "dateCreated": now - DAY}
    deliverables = [n for n in sub.targets if state.targets.status[n] == PROCESSED][:2]
    state.downloads[state.guid()] = {
        "submissionId": sub.id, "created": now - HOUR, "polls": 2, "finished": True,
        "sourceFiles": True, "targets": deliverables, "languages": ["fr-FR"], "manifest": True}


def _failed_hooks(state: State, now: int) -> None:
    """A couple of deliveries that failed: receivers on plain http inside a company network."""
    done = [s for s in state.subs.values() if s.status in ("DELIVERED", "PROCESSED") and s.id != state.example_id]
    for (url, message), sub in zip(FAILING_HOOKS, done[:2], strict=False):
        sub.metadata["_webhookURL"] = url
        sub.metadata["_webhookScope"] = SCOPES[0]
        state.failed_hooks.append({
            "submissionId": sub.id, "url": url, "event": "submission.completed", "attempts": 3,
            "firstAttempt": sub.completed, "lastAttempt": min(now, (sub.completed or now) + 2 * HOUR),
            "targetIds": [], "message": message})
