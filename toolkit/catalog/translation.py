"""The translation management system's REST API v0 (seed 002): submissions, files, targets, phases,
quotes, projects, glossaries, translation memories and webhooks, in client or hosted mode."""

__all__ = ["ACTIONS", "ATTRIBUTE", "ATTRIBUTE_TYPES", "CLAIM_BODY", "CLAIM_SCOPES", "DOC", "DOWNLOAD", "GLOSSARY", "G_ATTR",
           "G_AUTH", "G_CLAIM", "G_DOWN", "G_GLOSS", "G_HOOK", "G_META", "G_PHASE", "G_PROJ", "G_QUOTE",
           "G_SUB", "G_TARGET", "KEY_VALUE", "LOOKUPS", "METADATA", "ORG", "PACLIENT", "PAGE", "PHASE", "PHASE_FILTER",
           "PROJECT", "RESOURCES", "SERVICE", "SUB", "SUBMISSION_STATUSES", "SUBMISSION_WORK", "TARGET", "TARGET_COLUMNS",
           "TARGET_FORMATS", "TARGET_STATUSES", "TM", "UNPAGED", "UPLOAD_PROCESS", "WORKFLOW"]

from toolkit.catalog.spec import (
    Action,
    Chunks,
    Column,
    Incremental,
    Lookup,
    PageNumber,
    Param,
    Resource,
    Service,
    Unpaged,
)
from toolkit.catalog.translation_checks import TARGET_FORMATS, batch_target_formats, non_parsable_file_format

_SUB = ("submission_id", "submission_id")
_TARGET = "{document_name} → {target_language} · {status}"
# param name → the resource its values come from (toolkit.forms offers the rows as choices)
LOOKUPS = {
    "submission_id": Lookup("submissions", "submission_id", "{name} · {status}"),
    "submission_ids": Lookup("submissions", "submission_id", "{name} · {status}"),
    "project_id": Lookup("projects", "project_id", "{name}"),
    "pa_client_id": Lookup("pa_clients", "pa_client_id", "{name}"),
    "workflow_id": Lookup("workflows", "workflow_id", "{name}", parent=("project_id", "project_id")),
    "deliverable_target_ids": Lookup("targets", "target_id", _TARGET, parent=_SUB),
    "language_reference_files": Lookup("targets", "target_language", "{target_language}", parent=_SUB),
    "deliverable_languages": Lookup("targets", "target_language", "{target_language}", parent=_SUB),
    "target_id": Lookup("targets", "target_id", _TARGET, parent=_SUB),
    "document_ids": Lookup("documents", "document_id", "{name}", parent=_SUB),
    "target_ids": Lookup("targets", "target_id", _TARGET + " {current_phase}", parent=_SUB),
    "phase_name": Lookup("phases", "current_phase", "{current_phase}", parent=_SUB),
    "transition": Lookup("phases", "transitions", parent=_SUB, nested="transitions"),
    "languages": Lookup("targets", "target_language", "{target_language}", parent=_SUB),
    "attribute_name": Lookup("custom_attributes", "name", "{name} · {type}"),
}

MAX_PAGE_SIZE = 200        # rows a page holds at most: the paging's limit and the page_size param's

SERVICE = Service(
    key="translation",
    position=4,
    title="Translation management (REST API v0)",
    auth="oauth_password",
    credentials=("username", "password", "client_id", "client_secret", "mode", "system_version"),
    logins=(("username", "password", "client_id", "client_secret"),),
    secrets=("password", "client_secret"),
    base_path="/PD",
    error_shape="messages",
    paging=PageNumber(page="pageNumber", size="pageSize", first=0, max_size=MAX_PAGE_SIZE,
                      total_header="total-size"),
    rate_per_second=None,
    max_concurrency=8,
    ids="integer",
    doc="Translation submissions under /rest/v0; OAuth password grant at /oauth/token; bare JSON arrays "
        f"paged with 0-based pageNumber/pageSize (at most {MAX_PAGE_SIZE}) and a total-size header; epoch-ms "
        "timestamps.",
    lookups=LOOKUPS,
    modes=("client", "hosted"),                   # a client runs in one; some actions exist in only one
    token_action="translation.create_token",
)

# what a write to a submission may change beyond the resources its path names (Action.changes): its
# status, targets, phases and what is claimable all move together; too wide costs a pull, too narrow
# shows old rows as current
SUBMISSION_WORK = ("claimable", "documents", "phases", "submissions", "targets", "word_counts")

G_AUTH = "Authorization"
G_SUB = "Submissions"
G_ATTR = "Custom attributes"
G_META = "Metadata"
G_DOWN = "Downloads"
G_CLAIM = "Claim and unclaim"
G_TARGET = "Targets"
G_PHASE = "Workflow phases"
G_QUOTE = "Quotes"
G_PROJ = "Projects, organizations, PA clients"
G_GLOSS = "Glossaries and translation memories"
G_HOOK = "Webhooks"

# status values the services send (submission statuses are named in the statuses filter doc)
SUBMISSION_STATUSES = ("CREATING", "PREFLIGHT", "WAITING", "READY", "IN_PROCESS", "PROCESSING",
                       "PROCESSED", "DELIVERED", "CANCELLED")
# what the statuses filter also takes: the real service's statuses a production connector filters by,
# which no sandbox submission is in (docs/public-specs.md, G8)
SUBMISSION_FILTER_STATUSES = SUBMISSION_STATUSES + ("IN_ERROR", "ARCHIVED")
TARGET_STATUSES = ("COMPLETED", "DELIVERED", "READY", "IN_PROCESS", "WAITING", "PROCESSED", "CANCELLED")
CLAIM_SCOPES = ("LANGUAGE", "BATCH", "FILE")
LANGUAGE, LANGUAGE_RULE = r"[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*", "must be a language code such as en-US or fr"
NO_SPACES, NO_SPACES_RULE = r"[^ ]*", "must not contain spaces (phase names with spaces are not supported)"
ATTRIBUTE_TYPES = ("COMBO", "TEXT")

UNPAGED = Unpaged()

SUB = Param("submission_id", "path", "id", required=True, rules=("not_blank",), example=1234,
            doc="submission id")
DOC = Param("document_id", "path", "id", required=True, rules=("not_blank",), example=5678,
            doc="source document id")
TARGET = Param("target_id", "path", "id", required=True, rules=("not_blank",), example=98765, doc="target id")
PROJECT = Param("project_id", "path", "id", required=True, rules=("not_blank",), example=10, doc="project id")
WORKFLOW = Param("workflow_id", "path", "id", required=True, rules=("not_blank",), example=22,
                 doc="workflow id")
ORG = Param("organization_id", "path", "id", required=True, rules=("not_blank",), example=3,
            doc="organization id")
PACLIENT = Param("paclient_id", "path", "id", required=True, rules=("not_blank",), example=7,
                 doc="PA client id")
GLOSSARY = Param("glossary_name", "path", "string", required=True, rules=("not_blank",),
                 example="MarketingGlossary", doc="glossary name")
TM = Param("tm_name", "path", "string", required=True, rules=("not_blank",), example="MainTM",
           doc="translation memory name")
ATTRIBUTE = Param("attribute_name", "path", "string", required=True, rules=("not_blank",),
                  example="CostCenter", doc="custom attribute name (defined in the project)")
METADATA = Param("metadata_name", "path", "string", required=True, rules=("not_blank",),
                 example="orderNumber", doc="metadata key")
# an upload's process and a download activity are named by GUIDs, where every record id is an integer:
# the vendor's own client types both as `Guid` (docs/public-specs.md, G9), so they are text here
UPLOAD_PROCESS = Param("upload_process_id", "path", "string", required=True, rules=("not_blank",),
                       example="0b5c6d4e-2f1a-4c3b-9d8e-7f6a5b4c3d2e", doc="upload process id (a GUID) from the upload")
DOWNLOAD = Param("download_id", "path", "string", required=True, rules=("not_blank",),
                 example="6f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f", doc="download id (a GUID) from start_download")
PHASE = Param("phase_name", "path", "string", required=True, rules=("not_blank",), pattern=NO_SPACES,
              pattern_rule=NO_SPACES_RULE, example="Translation", doc="phase name (case-sensitive, no spaces)")

PAGE = (
    Param("page_number", "query", "integer", doc="0-based page number", example=0, minimum=0),
    Param("page_size", "query", "integer", doc=f"rows per page (at most {MAX_PAGE_SIZE})", example=100,
          minimum=1, maximum=MAX_PAGE_SIZE),
)
PHASE_FILTER = Param("phase_name", "query", doc="workflow phase name (case-sensitive)", example="Translation")
CLAIM_BODY = (
    Param("submission_id", "body", "id", required=True, doc="submission id", example=1234),
    Param("phase_name", "body", required=True, doc="workflow phase name (case-sensitive, no spaces)",
          example="Translation", pattern=NO_SPACES, pattern_rule=NO_SPACES_RULE),
    Param("languages", "body", "list", required=True, doc="target languages", example=["fr-FR", "de-DE"]),
)
KEY_VALUE = (
    Param("key", "body", required=True, doc="metadata key", example="orderNumber"),
    Param("value", "body", required=True, doc="metadata value", example="PO-2024-117"),
)


ACTIONS = (
    # --- Authorization -----------------------------------------------------------------------
    Action("translation.create_token", G_AUTH, "POST", "/oauth/token",
           "Obtain an access token (password grant) or refresh one (refresh_token grant).",
           params=(
               Param("grant_type", "form", wire="grant_type", required=True,
                     choices=("password", "refresh_token"), default="password", example="password",
                     doc="OAuth grant type"),
               Param("username", "form", wire="username", doc="user name (password grant)",
                     example="pm.user"),
               Param("password", "form", "secret", wire="password", doc="password (password grant)",
                     example="s3cret"),
               Param("refresh_token", "form", "secret", wire="refresh_token",
                     doc="refresh token (refresh_token grant)"),
           ),
           # Spring's token endpoint reads its fields as request parameters, which a multipart body
           # fills as well as an urlencoded one; a public plugin sends multipart (docs/public-specs.md)
           body="form", content_types=("form", "multipart"), writes=False, retry_safe=True),

    # --- Submissions: creation and processing ------------------------------------------------
    Action("translation.create_submission", G_SUB, "POST", "/rest/v0/submissions/create",
           "Create a submission in a project with batches, target languages, metadata and custom attributes.",
           params=(
               Param("name", "body", required=True, doc="submission name", example="Website update Q3"),
               Param("due_date", "body", "epoch_ms", doc="due date (Unix ms)", example=1767225600000),
               Param("project_id", "body", "id", required=True, doc="project id", example=10),
               Param("pa_client_id", "body", "id", doc="PA client id; required in hosted mode", example=7,
                     required_in=("hosted",)),
               Param("source_language", "body", required=True,
                     pattern=LANGUAGE, pattern_rule=LANGUAGE_RULE, doc="source locale",
                     example="en-US"),
               Param("instructions", "body", "text", doc="instructions for the translators",
                     example="Keep the brand names in English."),
               Param("background", "body", "text", doc="background information", example="Autumn campaign."),
               Param("claim_scope", "body", choices=CLAIM_SCOPES, doc="how work is claimed",
                     example="LANGUAGE"),
               Param("batch_infos", "body", "object",
                     doc="batches: [{workflowId, targetFormat (TXML, TXLF or NON_PARSABLE), name, "
                         "targetLanguageInfos: [{targetLanguage}]}]; without workflowId a batch takes "
                         "the project's default workflow",
                     example=[{"workflowId": 22, "targetFormat": "TXLF", "name": "Batch1",
                               "targetLanguageInfos": [{"targetLanguage": "fr-FR"},
                                                       {"targetLanguage": "de-DE"}]}]),
               Param("metadata", "body", "object",
                     doc="metadata [{key, value}]; webhooks: keys _webhookURL and _webhookScope",
                     example=[{"key": "_webhookURL", "value": "https://hooks.example.com/tms"},
                              {"key": "_webhookScope",
                               "value": "submission.completed,submission.cancelled"}]),
               Param("custom_attributes", "body", "object",
                     doc="custom attributes [{name, value}]; the project's mandatory ones are required",
                     example=[{"name": "CostCenter", "value": "MKT-01"}]),
           ),
           body="json", checks=(batch_target_formats,), changes=SUBMISSION_WORK),
    Action("translation.upload_source", G_SUB, "POST", "/rest/v0/submissions/{submission_id}/upload/source",
           "Upload a source file (or archive) into a batch of the submission.",
           params=(
               SUB,
               Param("file", "file", "file", required=True, doc="source file",
                     example=("homepage.html", b"<html><body>Welcome</body></html>")),
               Param("batch_name", "form", required=True, doc="batch name given at creation",
                     example="Batch1"),
               Param("file_format_name", "form", doc="file format; leave blank for NON_PARSABLE",
                     example="HTML"),
               Param("extract_archive", "form", "boolean", doc="unpack a zip archive", example=False),
               Param("target_format", "local", choices=TARGET_FORMATS,
                     doc="the batch's target format; checked, not sent", example="TXLF"),
           ),
           body="multipart", checks=(non_parsable_file_format,), changes=SUBMISSION_WORK),
    Action("translation.upload_reference", G_SUB, "POST",
           "/rest/v0/submissions/{submission_id}/upload/reference",
           "Upload a reference file for the whole submission or for some target languages.",
           params=(
               SUB,
               Param("file", "file", "file", required=True, doc="reference file",
                     example=("styleguide.txt", b"Use the formal register.")),
               Param("submission_level", "form", "boolean", doc="true: available to all languages",
                     example=True),
               Param("target_language_level", "form", "list", doc="target languages (sent comma-separated)",
                     example=["fr-FR", "de-DE"]),
           ),
           body="multipart", changes=SUBMISSION_WORK),
    Action("translation.upload_collateral", G_SUB, "POST",
           "/rest/v0/submissions/{submission_id}/upload/collateral",
           "Upload a collateral file to the submission.",
           params=(
               SUB,
               Param("file", "file", "file", required=True, doc="collateral file",
                     example=("notes.txt", b"Screens are in the portal.")),
               Param("submission_level", "form", "boolean", doc="true: available to all languages",
                     example=True),
               Param("extract_archive", "form", "boolean", doc="unpack a zip archive", example=False),
           ),
           body="multipart", min_version="5.19", changes=SUBMISSION_WORK),
    Action("translation.upload_translatable", G_SUB, "POST",
           "/rest/v0/submissions/{submission_id}/upload/translatable",
           "Upload a translatable file to the submission; verify it with get_translatable_upload.",
           params=(
               SUB,
               Param("file", "file", "file", required=True, doc="translatable file",
                     example=("strings.xlf", b"<xliff version=\"1.2\"/>")),
               Param("extract_archive", "form", "boolean", doc="unpack a zip archive", example=False),
           ),
           body="multipart", changes=SUBMISSION_WORK),
    Action("translation.get_translatable_upload", G_SUB, "GET",
           "/rest/v0/submissions/{submission_id}/upload/translatable/{upload_process_id}",
           "Verify a translatable upload; returns the error messages of a failed one.",
           params=(SUB, UPLOAD_PROCESS)),
    Action("translation.analyze_submission", G_SUB, "POST", "/rest/v0/submissions/{submission_id}/analyze",
           "Analyze the submission (asynchronous; follow it with get_submission_status).", params=(SUB,), changes=SUBMISSION_WORK),
    Action("translation.get_submission_status", G_SUB, "GET", "/rest/v0/submissions/{submission_id}/status",
           "Status of the submission's running operation: PROCESSING or PROCESSED.", params=(SUB,)),
    Action("translation.save_submission", G_SUB, "POST", "/rest/v0/submissions/{submission_id}/save",
           "Save the submission, optionally analyzing and starting it; check startedSubmissionIds.",
           params=(SUB, Param("auto_start", "body", "boolean", doc="analyze and start when possible",
                              example=True)),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.start_submission", G_SUB, "POST", "/rest/v0/submissions/{submission_id}/start",
           "Start the submission; success is its id in startedSubmissionIds.", params=(SUB,), changes=SUBMISSION_WORK),
    Action("translation.get_word_count", G_SUB, "POST", "/rest/v0/submissions/{submission_id}/wordcount",
           "Word count of the submission: the total, or for one language, document, target or batch.",
           params=(
               SUB,
               Param("target_language", "body",
                     pattern=LANGUAGE, pattern_rule=LANGUAGE_RULE, doc="count for one target language",
                     example="fr-FR"),
               Param("document_id", "body", "id", doc="count for one document"),
               Param("target_id", "body", "id", doc="count for one target"),
               Param("batch_name", "body", doc="count for one batch"),
           ),
           body="json", writes=False, retry_safe=True, min_version="5.14",
           exclusive=("target_language", "document_id", "target_id", "batch_name")),
    Action("translation.cancel_submission", G_SUB, "POST", "/rest/v0/submissions/cancel/{submission_id}",
           "Cancel targets or documents of the submission; with neither, the whole submission.",
           params=(
               SUB,
               Param("target_ids", "body", "int_list", doc="targets to cancel", example=[98765]),
               Param("document_ids", "body", "int_list", doc="documents to cancel", example=[5678]),
           ),
           body="json", destructive=True, changes=SUBMISSION_WORK),
    # --- Submissions: reads
    Action("translation.list_submissions", G_SUB, "GET", "/rest/v0/submissions",
           "Submissions, filtered by ids, name, statuses and due date.",
           params=(
               Param("submission_ids", "query", "int_list", doc="submission ids", example=[1234, 1235]),
               Param("name", "query", doc="submission name", example="Website update Q3"),
               Param("statuses", "query", "list", example=["IN_PROCESS"], choices=SUBMISSION_FILTER_STATUSES,
                     doc="submission statuses: CREATING, PREFLIGHT, WAITING, READY, IN_PROCESS, PROCESSING, "
                         "PROCESSED, DELIVERED, CANCELLED (and IN_ERROR, ARCHIVED)"),
               Param("due_date_from", "query", "epoch_ms", doc="due on or after (Unix ms)",
                     example=1764547200000),
               Param("due_date_to", "query", "epoch_ms", doc="due on or before (Unix ms)",
                     example=1767225600000),
           ) + PAGE,
           response="page", paging=SERVICE.paging),
    Action("translation.get_submission", G_SUB, "GET", "/rest/v0/submissions/{submission_id}",
           "One submission.", params=(SUB,)),
    Action("translation.list_submission_owners", G_SUB, "GET", "/rest/v0/submissions/{submission_id}/owners",
           "Owners of a submission.", params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.list_backgrounds", G_SUB, "GET", "/rest/v0/submissions/background",
           "Background information of all available submissions.", response="list", paging=UNPAGED),
    Action("translation.get_background", G_SUB, "GET", "/rest/v0/submissions/{submission_id}/background",
           "Background information of one submission.", params=(SUB,)),
    Action("translation.list_instructions", G_SUB, "GET", "/rest/v0/submissions/instructions",
           "Instructions of all available submissions.", response="list", paging=UNPAGED),
    Action("translation.get_instructions", G_SUB, "GET", "/rest/v0/submissions/{submission_id}/instructions",
           "Instructions of one submission.", params=(SUB,)),
    Action("translation.list_documents", G_SUB, "GET", "/rest/v0/submissions/{submission_id}/documents",
           "Source documents of a submission.", params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.get_document", G_SUB, "GET",
           "/rest/v0/submissions/{submission_id}/documents/{document_id}",
           "One source document of a submission.", params=(SUB, DOC)),

    # --- Custom attributes of a submission ----------------------------------------------------
    Action("translation.list_custom_attributes", G_ATTR, "GET",
           "/rest/v0/submissions/{submission_id}/customattributes",
           "Custom attributes of a submission.", params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.get_custom_attribute", G_ATTR, "GET",
           "/rest/v0/submissions/{submission_id}/customattributes/{attribute_name}",
           "One custom attribute of a submission, by name.", params=(SUB, ATTRIBUTE)),
    Action("translation.add_custom_attribute", G_ATTR, "POST",
           "/rest/v0/submissions/{submission_id}/customattributes/",
           "Add a custom attribute value to a submission (the name must be defined in the project).",
           params=(
               SUB,
               Param("name", "body", required=True, doc="attribute name defined in the project",
                     example="CostCenter", lookup=Lookup("custom_attributes", "name", "{name} · {type}")),
               Param("value", "body", required=True, doc="attribute value", example="MKT-01"),
           ),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.update_custom_attribute", G_ATTR, "PUT",
           "/rest/v0/submissions/{submission_id}/customattributes/{attribute_name}",
           "Change the value of a custom attribute of a submission.",
           params=(SUB, ATTRIBUTE, Param("value", "body", required=True, doc="new value", example="MKT-02")),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.delete_custom_attribute", G_ATTR, "DELETE",
           "/rest/v0/submissions/{submission_id}/customattributes/{attribute_name}",
           "Delete one custom attribute of a submission.", params=(SUB, ATTRIBUTE), response="none", changes=SUBMISSION_WORK),
    Action("translation.delete_custom_attributes", G_ATTR, "DELETE",
           "/rest/v0/submissions/{submission_id}/customattributes/",
           "Delete every custom attribute of a submission.", params=(SUB,), response="none", changes=SUBMISSION_WORK),

    # --- Metadata of a submission -------------------------------------------------------------
    Action("translation.list_metadata", G_META, "GET", "/rest/v0/submissions/{submission_id}/metadata",
           "Metadata entries of a submission.", params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.get_metadata_entry", G_META, "GET",
           "/rest/v0/submissions/{submission_id}/metadata/{metadata_name}",
           "One metadata entry of a submission, by key.", params=(SUB, METADATA)),
    Action("translation.add_metadata", G_META, "POST", "/rest/v0/submissions/{submission_id}/metadata",
           "Add a metadata entry to a submission.", params=(SUB,) + KEY_VALUE, body="json", changes=SUBMISSION_WORK),
    Action("translation.update_metadata_entry", G_META, "PUT",
           "/rest/v0/submissions/{submission_id}/metadata/{metadata_name}",
           "Change the value of a metadata entry of a submission.",
           params=(SUB, METADATA, Param("value", "body", required=True, doc="new value",
                                        example="PO-2024-118")),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.delete_metadata", G_META, "DELETE", "/rest/v0/submissions/{submission_id}/metadata",
           "Delete every metadata entry of a submission.", params=(SUB,), response="none", changes=SUBMISSION_WORK),
    Action("translation.delete_metadata_entry", G_META, "DELETE",
           "/rest/v0/submissions/{submission_id}/metadata/{metadata_name}",
           "Delete one metadata entry of a submission.", params=(SUB, METADATA), response="none", changes=SUBMISSION_WORK),
    Action("translation.set_webhook_metadata", G_META, "POST",
           "/rest/v0/submissions/{submission_id}/metadata/",
           "Set webhook data (_webhookURL, _webhookScope) on a submission created without it.",
           params=(
               SUB,
               Param("key", "body", required=True, doc="webhook metadata key: _webhookURL or _webhookScope",
                     example="_webhookURL"),
               Param("value", "body", required=True, doc="the webhook URL, or the comma-separated scope",
                     example="https://hooks.example.com/tms"),
           ),
           body="json", changes=SUBMISSION_WORK),

    # --- Downloads ---------------------------------------------------------------------------
    Action("translation.start_download", G_DOWN, "GET", "/rest/v0/submissions/{submission_id}/download",
           "Start preparing a zip of sources, deliverables or reference files; with download_id, check it "
           "is ready (processingFinished).",
           params=(
               SUB,
               Param("source_files", "query", "boolean", doc="download the source files", example=False),
               Param("deliverable_target_ids", "query", "int_list",
                     doc="targets whose deliverables to download",
                     example=[98765]),
               Param("language_reference_files", "query", "list",
                     doc="languages of reference files to download",
                     example=["fr-FR"]),
               Param("deliverable_languages", "query", "list", origin=("G4",),
                     doc="languages whose deliverables to download: every target of the submission in "
                         "them that is not cancelled (the document's 'several languages separated by "
                         "commas')",
                     example=["fr-FR"]),
               Param("include_manifest", "query", "boolean", doc="add a manifest to the zip", example=False),
               Param("download_id", "query", "string", doc="id (a GUID) of a started download, to check its "
                     "progress", example="6f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f"),
           )),
    Action("translation.download_files", G_DOWN, "GET", "/rest/v0/submissions/download/{download_id}",
           "Fetch the zip of a prepared download once processingFinished is true.",
           params=(DOWNLOAD,), response="bytes"),
    Action("translation.download_target_deliverable", G_DOWN, "GET",
           "/rest/v0/submissions/{submission_id}/targets/{target_id}/download/deliverable",
           "The translated file of one target, as the body (no zip, no polling); the target must be "
           "PROCESSED or DELIVERED.",
           params=(SUB, TARGET), response="bytes", origin=("G4", "G6")),
    Action("translation.get_root", G_DOWN, "GET", "/",
           "The bare base path, listed by the seed as 'GET TMs by Project (client mode only)'; behaviour "
           "not shown (for TMs use list_project_tms).",
           response="text", modes=("client",)),

    # --- Claim and unclaim -------------------------------------------------------------------
    Action("translation.list_claimable_submissions", G_CLAIM, "GET", "/rest/v0/submissions/claimable",
           "Submissions with languages or batches that can be claimed in a phase.",
           params=(PHASE_FILTER,) + PAGE, response="page", paging=SERVICE.paging),
    Action("translation.list_claimable_targets", G_CLAIM, "GET",
           "/rest/v0/submissions/claimable/{submission_id}/targets",
           "Targets (files) of a submission that can be claimed in a phase.",
           params=(SUB, PHASE_FILTER), response="list", paging=UNPAGED),
    Action("translation.claim_submission", G_CLAIM, "POST", "/rest/v0/submissions/claim",
           "Claim languages of a submission in a phase.", params=CLAIM_BODY, body="json",
           # the service takes a batch of claims, answered one by one: the public integration sends a
           # list of one
           body_in_list=True, response="list", paging=UNPAGED, changes=SUBMISSION_WORK),
    Action("translation.list_claimed_submissions", G_CLAIM, "GET", "/rest/v0/submissions/claimed",
           "Submissions with languages or batches claimed in a phase.",
           params=(PHASE_FILTER,) + PAGE, response="page", paging=SERVICE.paging),
    Action("translation.list_claimed_targets", G_CLAIM, "GET",
           "/rest/v0/submissions/claimed/{submission_id}/targets",
           "Targets (files) of a submission claimed in a phase.",
           params=(SUB, PHASE_FILTER), response="list", paging=UNPAGED),
    Action("translation.unclaim_submission", G_CLAIM, "POST", "/rest/v0/submissions/unclaim",
           "Release claimed languages of a submission in a phase.", params=CLAIM_BODY, body="json",
           # the service takes a batch of claims, answered one by one: the public integration sends a
           # list of one
           body_in_list=True, response="list", paging=UNPAGED, changes=SUBMISSION_WORK),

    # --- Targets -----------------------------------------------------------------------------
    Action("translation.list_submission_targets", G_TARGET, "GET",
           "/rest/v0/submissions/{submission_id}/targets",
           "Targets of a submission, by status and target language.",
           params=(
               SUB,
               Param("status", "query", choices=TARGET_STATUSES, doc="target status", example="COMPLETED",
                     min_version="5.15"),
               Param("target_language", "query",
                     pattern=LANGUAGE, pattern_rule=LANGUAGE_RULE, doc="target locale", example="fr-FR",
                     min_version="5.20"),
           ) + PAGE,
           response="page", paging=SERVICE.paging),
    Action("translation.list_document_targets", G_TARGET, "GET",
           "/rest/v0/submissions/{submission_id}/documents/{document_id}/targets",
           "Targets of one source document.", params=(SUB, DOC), response="list", paging=UNPAGED,
           min_version="6.2"),
    Action("translation.list_targets", G_TARGET, "GET", "/rest/v0/targets",
           "Targets in any status across submissions.",
           params=(
               Param("submission_ids", "query", "int_list", doc="submission ids", example=[1234, 1235]),
               Param("status", "query", "list", wire="targetStatus", example=["COMPLETED"],
                     choices=TARGET_STATUSES,
                     doc="target statuses: COMPLETED, DELIVERED, READY, IN_PROCESS, WAITING, PROCESSED, "
                         "CANCELLED"),
           ) + PAGE,
           response="page", paging=SERVICE.paging, min_version="5.20"),
    Action("translation.add_target_metadata", G_TARGET, "POST",
           "/rest/v0/submissions/{submission_id}/targets/metadata",
           "Add metadata entries to targets of a submission.",
           params=(
               SUB,
               Param("target_ids", "body", "int_list", required=True, doc="target ids", example=[98765]),
               Param("metadata", "body", "object", doc="metadata [{key, value}]",
                     example=[{"key": "reviewer", "value": "j.doe"}]),
           ),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.set_targets_delivered", G_TARGET, "POST",
           "/rest/v0/submissions/{submission_id}/targets/delivered",
           "Mark downloaded deliverables as delivered.",
           params=(SUB, Param("target_ids", "body", "int_list", required=True, doc="target ids",
                              example=[98765])),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.get_target_phase", G_TARGET, "GET",
           "/rest/v0/submissions/{submission_id}/targets/{target_id}/phase",
           "Workflow phase of one target.", params=(SUB, TARGET), min_version="5.20"),
    Action("translation.get_target_editor_info", G_TARGET, "POST",
           "/rest/v0/submissions/{submission_id}/targets/{target_id}/editorinfo/phase",
           "Machine translation profile of a target at its current phase (needs a valid editor name).",
           params=(SUB, TARGET, Param("editor", "body", required=True, doc="editor name",
                                      example="TranslationEditor", rules=("not_blank",))),
           body="json", writes=False, retry_safe=True),

    # --- Workflow phases ---------------------------------------------------------------------
    Action("translation.list_phases", G_PHASE, "GET", "/rest/v0/submissions/{submission_id}/phases",
           "Current phase, phase due date and transitions of each target of a submission.",
           params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.complete_phase", G_PHASE, "POST",
           "/rest/v0/submissions/{submission_id}/phases/{phase_name}/complete",
           "Complete a phase for targets, moving them along the named transition.",
           params=(
               SUB, PHASE,
               Param("target_ids", "body", "int_list", required=True, doc="target ids", example=[98765]),
               Param("transition", "body", required=True, doc="transition (phase) to move to",
                     example="Review"),
           ),
           body="json", changes=SUBMISSION_WORK),

    # --- Quotes ------------------------------------------------------------------------------
    Action("translation.list_quotes", G_QUOTE, "GET", "/rest/v0/submissions/{submission_id}/quote/review",
           "Approved and provided quotes of a submission, for review.",
           params=(SUB,), response="list", paging=UNPAGED),
    Action("translation.approve_quote", G_QUOTE, "POST", "/rest/v0/submissions/{submission_id}/quote/approve",
           "Approve the quote of a submission, with a comment.",
           params=(SUB, Param("comment", "body", "text", doc="approval comment",
                              example="Approved by marketing.")),
           body="json", changes=SUBMISSION_WORK),
    Action("translation.get_quote_report", G_QUOTE, "POST",
           "/rest/v0/submissions/{submission_id}/quote/report",
           "Download a quote report of a submission.",
           params=(
               SUB,
               Param("approved_quotes_selected", "body", "boolean", doc="include approved quotes",
                     example=True),
               Param("provided_quotes_selected", "body", "boolean", doc="include provided quotes",
                     example=True),
               Param("email_enabled", "body", "boolean", doc="also send the report by email", example=False),
               Param("output_format", "body", doc="report file format", example="PDF"),
           ),
           body="json", response="bytes", writes=False, retry_safe=True),

    # --- Projects, organizations, PA clients -------------------------------------------------
    Action("translation.get_instance_info", G_PROJ, "GET", "/rest/v0/instanceInfo",
           "Facts about the server instance; a production connector calls it to check a connection (any "
           "2xx with a valid token is a working one). The body is not published: the sandbox answers its "
           "mode and system version.",
           origin=("G8",)),
    Action("translation.list_projects", G_PROJ, "GET", "/rest/v0/projects",
           "Projects of the user (shortCode from 5.20), optionally those whose name holds a text.",
           params=(Param("project_name", "query", origin=("G8", "G9"), example="Retail",
                         doc="keep the projects whose name holds this text (any case)"),),
           response="list", paging=UNPAGED),
    Action("translation.get_project", G_PROJ, "GET", "/rest/v0/projects/{project_id}", "One project.",
           params=(PROJECT,)),
    Action("translation.list_msla_levels", G_PROJ, "GET", "/rest/v0/projects/{project_id}/mslalevels",
           "MSLA levels of a project.", params=(PROJECT,), response="list", paging=UNPAGED),
    Action("translation.list_project_custom_attributes", G_PROJ, "GET",
           "/rest/v0/projects/{project_id}/customattributes",
           "Custom attributes defined in a project (some mandatory at submission creation).",
           params=(PROJECT,), response="list", paging=UNPAGED),
    Action("translation.list_file_formats", G_PROJ, "GET", "/rest/v0/projects/{project_id}/fileformats",
           "File formats of a project.", params=(PROJECT,), response="list", paging=UNPAGED),
    Action("translation.list_language_directions", G_PROJ, "GET",
           "/rest/v0/projects/{project_id}/languagedirections",
           "Language directions (source to target) of a project.", params=(PROJECT,), response="list",
           paging=UNPAGED),
    Action("translation.list_project_users", G_PROJ, "GET", "/rest/v0/projects/{project_id}/users/org",
           "Organization users of a project.", params=(PROJECT,), response="list", paging=UNPAGED),
    Action("translation.list_workflows", G_PROJ, "GET", "/rest/v0/projects/{project_id}/workflows",
           "Workflows of a project.", params=(PROJECT,), response="list", paging=UNPAGED),
    Action("translation.get_workflow", G_PROJ, "GET",
           "/rest/v0/projects/{project_id}/workflows/{workflow_id}",
           "One workflow of a project with its phases.", params=(PROJECT, WORKFLOW)),
    Action("translation.list_organizations", G_PROJ, "GET", "/rest/v0/organizations", "Organizations.",
               response="list",
           paging=UNPAGED),
    Action("translation.get_organization", G_PROJ, "GET", "/rest/v0/organizations/{organization_id}",
               "One organization.",
           params=(ORG,)),
    Action("translation.list_organization_pa_clients", G_PROJ, "GET",
           "/rest/v0/organizations/{organization_id}/paclients",
           "PA clients of an organization.", params=(ORG,), response="list", paging=UNPAGED),
    Action("translation.list_pa_clients", G_PROJ, "GET", "/rest/v0/paclients",
           "PA clients, optionally those whose name holds a text.",
           params=(Param("project_a_client_name", "query", origin=("G9",), example="Acme",
                         doc="keep the PA clients whose name holds this text (any case)"),),
           response="list", paging=UNPAGED),
    Action("translation.get_pa_client", G_PROJ, "GET", "/rest/v0/paclients/{paclient_id}", "One PA client.",
           params=(PACLIENT,)),

    # --- Glossaries and translation memories -------------------------------------------------
    Action("translation.list_project_glossaries", G_GLOSS, "GET",
           "/rest/v0/organizations/projects/{project_id}/glossaries",
           "Glossaries of a project (client mode).", params=(PROJECT,), response="list", paging=UNPAGED,
           modes=("client",), min_version="5.13"),
    Action("translation.list_pa_client_glossaries", G_GLOSS, "GET",
           "/rest/v0/paclients/{paclient_id}/glossaries",
           "Glossaries of a PA client (hosted mode).", params=(PACLIENT,), response="list", paging=UNPAGED,
           modes=("hosted",), min_version="5.13"),
    Action("translation.list_submission_glossaries", G_GLOSS, "GET",
           "/rest/v0/submissions/{submission_id}/glossaries",
           "Glossaries of a submission.", params=(SUB,), response="list", paging=UNPAGED, min_version="5.20"),
    Action("translation.get_project_glossary", G_GLOSS, "GET",
           "/rest/v0/organizations/project/{project_id}/glossary/{glossary_name}",
           "One glossary of a project, by name.", params=(PROJECT, GLOSSARY)),
    Action("translation.get_pa_client_glossary", G_GLOSS, "GET",
           "/rest/v0/organizations/{organization_id}/paclients/{paclient_id}/glossary/{glossary_name}",
           "One glossary of a PA client, by name.", params=(ORG, PACLIENT, GLOSSARY)),
    Action("translation.list_project_tms", G_GLOSS, "GET", "/rest/v0/organizations/project/{project_id}/tms",
           "Translation memories of a project (client mode).", params=(PROJECT,), response="list",
           paging=UNPAGED, modes=("client",), min_version="5.13"),
    Action("translation.list_pa_client_tms", G_GLOSS, "GET", "/rest/v0/paclients/{paclient_id}/tms",
           "Translation memories of a PA client (hosted mode).", params=(PACLIENT,), response="list",
           paging=UNPAGED, modes=("hosted",), min_version="5.13"),
    Action("translation.list_submission_tms", G_GLOSS, "GET", "/rest/v0/submissions/{submission_id}/tms",
           "Translation memories of a submission.", params=(SUB,), response="list", paging=UNPAGED,
           min_version="5.20"),
    Action("translation.get_project_tm", G_GLOSS, "GET",
           "/rest/v0/organizations/project/{project_id}/tm/{tm_name}",
           "One translation memory of a project, by name.", params=(PROJECT, TM)),
    Action("translation.get_pa_client_tm", G_GLOSS, "GET",
           "/rest/v0/organizations/{organization_id}/paclients/{paclient_id}/tm/{tm_name}",
           "One translation memory of a PA client, by name.", params=(ORG, PACLIENT, TM)),

    # --- Webhooks ----------------------------------------------------------------------------
    Action("translation.list_failed_webhooks", G_HOOK, "GET", "/rest/v0/webhooks/failed",
               "Webhook deliveries that failed.",
           response="list", paging=UNPAGED, min_version="5.14"),
    Action("translation.reset_failed_webhooks", G_HOOK, "POST", "/rest/v0/webhooks/reset",
           "Reset the failed webhooks of submissions so they are sent again.",
           params=(Param("submission_ids", "body", "int_list", required=True, doc="submission ids",
                         example=[1234]),),
           body="json", min_version="5.14"),
)

# --- datasets ------------------------------------------------------------------------------------

TARGET_COLUMNS = (
    Column("target_id", "id"), Column("submission_id", "id"), Column("document_id", "id"),
    Column("job_id", "id"), Column("document_name"), Column("source_language"),
    Column("target_language"), Column("status", "category"), Column("current_phase"),
    Column("due_date", "timestamp"), Column("date_completed", "timestamp"), Column("file_format_name"),
    Column("batch_name"), Column("phase_due_date", "timestamp"), Column("workflow_name"),
    Column("word_count", "integer"), Column("metadata", "json"),
    # the id /fileformats gives the document's format (two public clients read it: G3, G9); null for
    # a NON_PARSABLE document
    Column("file_format_id", "id"),
)

RESOURCES = (
    Resource(
        "submissions", "translation", "translation.list_submissions", key=("submission_id",),
        doc="Submissions with project, status, languages, dates, claim scope, owners and batches.",
        filters=("submission_ids", "name", "statuses", "due_date_from", "due_date_to"),
        # a delivered or cancelled submission does not change again (the sandbox's flow ends there)
        incremental=Incremental("open_statuses", field="status", final=("DELIVERED", "CANCELLED"),
                                filter="statuses", ids="submission_ids"),
        columns=(
            Column("submission_id", "id"), Column("project_id", "id"), Column("project_name"),
            Column("name"), Column("status", "category"), Column("source_language"),
            Column("target_languages", "list"), Column("due_date", "timestamp"),
            Column("date_created", "timestamp"), Column("date_started", "timestamp"),
            Column("date_completed", "timestamp"), Column("date_canceled", "timestamp"),
            Column("claim_scope", "category", values=CLAIM_SCOPES), Column("owners", "list"),
            Column("batch_infos", "json"),
            # named by the document's Submission and its create body
            Column("pa_client_id", "id"), Column("custom_attributes", "json"), Column("instructions"),
            Column("background"),
        ),
    ),
    Resource(
        "documents", "translation", "translation.list_documents", key=("document_id",),
        doc="Source documents of each submission.",
        fan_out="submission_id", parent="submissions", parent_key="submission_id",
        # no sound change signal (analysis fills a document's word count without changing the
        # submission's row): the submissions confirmed longest ago are asked again, each within a day
        incremental=Incremental("rotation", field="submission_id", max_age=86_400),
        columns=(Column("document_id", "id"), Column("submission_id", "id"), Column("name"),
                 # what its source upload gave it (batchName, fileFormatName) and what analysis found
                 Column("batch_name"), Column("file_format_name"), Column("word_count", "integer"),
                 Column("source_language"), Column("target_languages", "list"),
                 Column("status", "category"), Column("date_created", "timestamp")),
    ),
    Resource(
        "targets", "translation", "translation.list_targets", key=("target_id",),
        doc="Targets (one document in one language): through /targets in chunks of submission ids, "
            "per submission below 5.20.",
        parent="submissions", parent_key="submission_id",
        chunks=Chunks("submission_ids", 100, since="5.20", older="translation.list_submission_targets",
                      one="submission_id"),
        filters=("submission_ids", "status"),
        incremental=Incremental("open_parents", parent="submissions", field="submission_id"),
        columns=TARGET_COLUMNS,
    ),
    Resource(
        "phases", "translation", "translation.list_phases", key=("target_id",),
        doc="Current workflow phase, phase due date and transitions of each target.",
        fan_out="submission_id", parent="submissions", parent_key="submission_id",
        # a target's phase shows in its row of targets: only submissions with a target changed
        incremental=Incremental("open_parents", parent="targets", field="submission_id"),
        columns=(
            Column("target_id", "id"), Column("submission_id", "id"), Column("document_id", "id"),
            Column("target_language"), Column("current_phase"), Column("status", "category"),
            Column("phase_due_date", "timestamp"), Column("workflow_name"), Column("transitions", "json"),
            Column("target_file_name", doc="the name of the target's file, kept by a translated upload"),
        ),
    ),
    Resource(
        "quotes", "translation", "translation.list_quotes", key=("submission_id", "quote_id"),
        doc="Approved and provided quotes of each submission (shape modelled from the seed).",
        fan_out="submission_id", parent="submissions", parent_key="submission_id",
        # a quote provided or approved leaves the submission's row as it was: a freshness budget
        incremental=Incremental("rotation", field="submission_id", max_age=86_400),
        columns=(
            Column("quote_id", "id"), Column("submission_id", "id"), Column("status", "category"),
            Column("amount", "number"), Column("currency"), Column("comment"),
            Column("date_provided", "timestamp"), Column("date_approved", "timestamp"),
            Column("word_count", "integer", doc="the words the quote prices"),
            Column("approved_by", doc="who approved it (null until approved)"),
        ),
    ),
    Resource(
        "word_counts", "translation", "translation.get_word_count", key=("submission_id",),
        doc="Total word count of each submission (shape modelled from the seed).",
        fan_out="submission_id", parent="submissions", parent_key="submission_id",
        # counted by analysis, out of the submission's row: a freshness budget
        incremental=Incremental("rotation", field="submission_id", max_age=86_400),
        # totalWordCount and submissionName as the vendor's own client reads them (G9); the rest ours
        columns=(Column("submission_id", "id"), Column("submission_name"),
                 Column("word_count", "integer", source="totalWordCount"),
                 Column("target_count", "integer", doc="the targets counted"),
                 # how much of word_count the translation memory covers; the four add up to it
                 Column("repetitions", "integer", source="breakdown.repetitions"),
                 Column("exact_match", "integer", source="breakdown.exactMatch"),
                 Column("fuzzy_match", "integer", source="breakdown.fuzzyMatch"),
                 Column("no_match", "integer", source="breakdown.noMatch")),
    ),
    Resource(
        "projects", "translation", "translation.list_projects", key=("project_id",),
        doc="Projects of the user (short_code from 5.20).", filters=("project_name",),
        columns=(Column("project_id", "id"), Column("name"), Column("short_code"),
                 Column("organization_id", "id"), Column("organization_name"), Column("enabled", "boolean"),
                 Column("date_created", "timestamp"), Column("pa_client_ids", "list"),
                 # the project's language directions, as lists
                 Column("source_languages", "list"), Column("target_languages", "list"),
                 # and as the records a public plugin reads: {sourceLanguage, sourceLanguageDisplayName,
                 # targetLanguage, targetLanguageDisplayName} (G5 in docs/public-specs.md)
                 Column("project_language_directions", "json"),
                 # what the vendor's own client reads to create a submission (G9): the workflow a batch
                 # without workflowId gets, the workflows as {id, name, description}, the file format
                 # profiles {fileFormatId, name, default, enabled, nonParsable, targetFormat, mimeTypes,
                 # dateUpdated}
                 Column("default_workflow_definition_id", "id"), Column("quote_enabled", "boolean"),
                 Column("auto_start_submission", "boolean"), Column("workflow_definitions", "json"),
                 Column("file_format_profiles", "json")),
    ),
    Resource(
        "workflows", "translation", "translation.list_workflows", key=("project_id", "workflow_id"),
        doc="Workflows of each project with their phases.",
        fan_out="project_id", parent="projects", parent_key="project_id",
        columns=(Column("workflow_id", "id"), Column("project_id", "id"), Column("name"),
                 Column("phases", "json"), Column("project_ids", "list", doc="every project using it")),
    ),
    Resource(
        "language_directions", "translation", "translation.list_language_directions",
        key=("project_id", "source_language", "target_language"),
        doc="Source-to-target language pairs of each project.",
        fan_out="project_id", parent="projects", parent_key="project_id",
        columns=(Column("project_id", "id"), Column("source_language"), Column("target_language"),
                 # the names a public plugin shows for each language (G5 in docs/public-specs.md)
                 Column("source_language_display_name"), Column("target_language_display_name")),
    ),
    Resource(
        "custom_attributes", "translation", "translation.list_project_custom_attributes",
        key=("project_id", "name"),
        doc="Custom attributes defined in each project, mandatory ones flagged.",
        fan_out="project_id", parent="projects", parent_key="project_id",
        # the two types of the vendor's own client (G9): COMBO takes one of `values`, TEXT any text
        columns=(Column("project_id", "id"), Column("name"), Column("type", "category", values=ATTRIBUTE_TYPES),
                 Column("mandatory", "boolean"), Column("values", "list"), Column("description")),
    ),
    Resource(
        "organizations", "translation", "translation.list_organizations", key=("organization_id",),
        doc="Organizations.",
        columns=(Column("organization_id", "id"), Column("name"), Column("date_created", "timestamp")),
    ),
    Resource(
        "pa_clients", "translation", "translation.list_pa_clients", key=("pa_client_id",),
        doc="PA clients (hosted mode customers) and their organization.", filters=("project_a_client_name",),
        columns=(Column("pa_client_id", "id"), Column("name"), Column("organization_id", "id"),
                 Column("short_code"), Column("enabled", "boolean")),
    ),
    Resource(
        "glossaries", "translation", "translation.list_project_glossaries", key=("project_id", "name"),
        doc="Glossaries of each project (client mode, from 5.13).",
        fan_out="project_id", parent="projects", parent_key="project_id",
        columns=(Column("project_id", "id"), Column("name"), Column("source_language"),
                 Column("target_languages", "list"), Column("term_count", "integer"),
                 Column("connection", doc="the term-manager connection it comes from"),
                 Column("last_modified", "timestamp")),
    ),
    Resource(
        "tms", "translation", "translation.list_project_tms", key=("project_id", "name"),
        doc="Translation memories of each project (client mode, from 5.13).",
        fan_out="project_id", parent="projects", parent_key="project_id",
        columns=(Column("project_id", "id"), Column("name"), Column("source_language"),
                 Column("target_languages", "list"), Column("segment_count", "integer"),
                 Column("last_modified", "timestamp")),
    ),
    Resource(
        "claimable", "translation", "translation.list_claimable_submissions", key=("submission_id",),
        doc="Submissions with languages or batches open to claim, optionally in one phase.",
        filters=("phase_name",),
        columns=(
            Column("submission_id", "id"), Column("project_id", "id"), Column("name"),
            Column("source_language"), Column("target_languages", "list"), Column("due_date", "timestamp"),
            Column("claim_scope", "category", values=CLAIM_SCOPES),
            # the public integration's ClaimableSubmissionResponse (docs/public-specs.md)
            Column("submission_name"), Column("claim_level", "category"), Column("languages", "json"),
            # what is open to claim: the phase asked for (or the first), every open phase and batch
            Column("phase_name"), Column("phase_names", "list"), Column("batch_names", "list"),
            Column("target_count", "integer"),
        ),
    ),
    Resource(
        "failed_webhooks", "translation", "translation.list_failed_webhooks", key=("submission_id", "event"),
        doc="Webhook deliveries that failed, per submission and event (from 5.14; shape modelled).",
        columns=(
            Column("submission_id", "id"), Column("url"), Column("event", "category"),
            Column("attempts", "integer"), Column("first_attempt", "timestamp"),
            Column("last_attempt", "timestamp"), Column("message"),
            Column("target_ids", "list", doc="the targets a target.* event was about (empty for others)"),
        ),
    ),
)
