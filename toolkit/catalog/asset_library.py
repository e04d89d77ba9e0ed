"""The asset library's public API v1: assets, boards, custom fields, imports, roles, tags and uploads
(seed 000, part B; wire facts from services.md, and the public types compared field by field in
docs/public-specs.md: a version's uploadedAt and summary, tags sent as {id}, an optional recordedAt)."""

__all__ = ["ACTIONS", "ASSET", "ASSET_ID", "BOARD", "BOARD_ASSETS", "BOARD_BODY", "BOARD_COLUMNS", "BOARD_ID", "COVER_COLUMNS",
           "CUSTOM_FIELD", "CUSTOM_FIELD_ID", "CUSTOM_FIELD_TYPES", "FIELD_VALUES", "GUEST", "GUEST_ID", "IMPORT",
           "IMPORT_ERROR_TYPES", "IMPORT_ID", "IMPORT_STATUSES", "LOOKUPS", "NAME_SEARCH", "NEW_ASSETS", "PAGE", "PARENT_BOARD",
           "RESOURCES", "ROLE", "ROLE_TYPES", "SERVICE", "SET_VALUE", "TAG", "TAGGED", "TAG_ID", "UPLOAD",
           "UPLOAD_TARGET", "VALUE", "VALUE_ID", "VERSION", "VERSION_ID"]

from toolkit.catalog.asset_library_checks import custom_field_value, select_values
from toolkit.catalog.spec import (
    NO_LOOKUP,
    Action,
    Column,
    Cursor,
    Incremental,
    Lookup,
    OtherSide,
    Param,
    Resource,
    Service,
    Unpaged,
)

_FIELD = ("custom_field_id", "custom_field_id")
# param name → the resource its values come from (toolkit.forms offers the rows as choices)
LOOKUPS = {
    "role_id": Lookup("roles", "id", "{name}"),
    "tag_id": Lookup("tags", "id", "{name}"),
    "custom_field_id": Lookup("custom_fields", "id", "{name} · {type}"),
    "value_id": Lookup("custom_field_values", "id", "{name}", parent=_FIELD),
    "values": Lookup("custom_field_values", "id", "{name}", parent=_FIELD),
    "board_id": Lookup("boards", "id", "{title}"),
    "parent_board_id": Lookup("boards", "id", "{title}"),
    "asset_id": Lookup("assets", "id", "{cover_version_title}"),
    "asset_ids": Lookup("assets", "id", "{cover_version_title}"),
    "version_id": Lookup("versions", "id", "{title}", parent=("asset_id", "asset_id")),
    "guest_id": Lookup("guests", "id", "{email}", parent=("board_id", "board_id")),
}

SERVICE = Service(
    key="asset_library",
    position=2,
    title="Asset library (public API v1)",
    auth="api_key",
    credentials=("api_key", "workspace_id"),
    secrets=("api_key",),
    base_path="/v1",
    error_shape="message",
    paging=Cursor(),
    rate_per_second=15,
    max_concurrency=10,
    doc="Assets, their versions, boards, guests, custom fields and tags of one workspace; "
        "x-api-key and x-air-workspace-id headers; cursor pages of at most 500.",
    lookups=LOOKUPS,
    key_headers={"api_key": "x-api-key", "workspace_id": "x-air-workspace-id"},
)

# --- example ids (UUID v4 strings, as the service sends them) -----------------------------------
# what a write changes beyond the resources its path names (Action.changes): too wide costs a pull,
# too narrow shows old rows as current
BOARD_ASSETS = ("assets",)                                  # the delete cascade; board membership
NEW_ASSETS = ("asset_boards", "assets", "versions")         # an upload or import makes an asset
TAGGED = ("assets", "versions")                             # tags sit on versions
FIELD_VALUES = ("asset_boards", "assets", "boards")         # values sit on assets and boards

ASSET = "4b7c2f1e-8a3d-4c56-9e21-0f6d3b8a7c15"
VERSION = "9d2e6a40-3b1c-4f7e-a5d8-61c0e2b94f37"
BOARD = "c3a81f5d-27e4-4b90-8d6c-5f1a09e3b2d4"
PARENT_BOARD = "e1f04b7a-6c2d-4a39-b8e5-2d7c91a0f6b3"
CUSTOM_FIELD = "7f3b9c2e-1d48-4a6f-b0e7-93c5d2a18e64"
VALUE = "2a6d8e1f-4b93-4c07-a15e-8f2b7c3d90a6"
TAG = "5e9a1c7d-3f26-4b8e-9d04-a2c6f81b5e39"
GUEST = "8c4f2a9e-5d17-4e3b-a6c0-1b9d7f3e2a58"
ROLE = "a0d7e3b9-6f2c-4185-bc4a-7e1f90d26c3b"
IMPORT = "f6b2d8a4-9e15-4c73-8a0d-3c7e5b1f4d92"
UPLOAD = "0e3c7a5f-2b84-4d19-96fa-d81b4e6c2a07"


ASSET_ID = Param("asset_id", "path", "id", required=True, example=ASSET, doc="id of the asset",
                 rules=("not_blank",))
VERSION_ID = Param("version_id", "path", "id", required=True, example=VERSION, doc="id of the asset version",
                   rules=("not_blank",))
BOARD_ID = Param("board_id", "path", "id", required=True, example=BOARD, doc="id of the board",
                 rules=("not_blank",))
CUSTOM_FIELD_ID = Param("custom_field_id", "path", "id", required=True, example=CUSTOM_FIELD,
                        doc="id of the custom field", rules=("not_blank",))
VALUE_ID = Param("value_id", "path", "id", required=True, example=VALUE, doc="id of the custom field value",
                 rules=("not_blank",))
TAG_ID = Param("tag_id", "path", "id", required=True, example=TAG, doc="id of the tag", rules=("not_blank",))
GUEST_ID = Param("guest_id", "path", "id", required=True, example=GUEST, doc="id of the guest",
                 rules=("not_blank",))
IMPORT_ID = Param("import_id", "path", "id", required=True, example=IMPORT, doc="id of the import",
                  rules=("not_blank",))

PAGE = (
    Param("limit", "query", "integer", doc="maximum number of items per page (at most 500)",
          example=100, minimum=1, maximum=500),
    Param("cursor", "query", doc="cursor from the previous page's pagination, for the next page"),
)

NAME_SEARCH = Param("name", "query", doc="free-text search on the name", example="Campaign")

SET_VALUE = (
    Param("value", "body", doc="the value of a plain-text or date field; None unsets it",
          example="Spring launch"),
    Param("values", "body", "object",
          doc='the values of a select field as a list of {id}, e.g. [{"id": "<value id>"}]; None unsets them'),
)

BOARD_BODY = (
    Param("description", "body", "text", doc="description of the board",
          example="Photos and cuts for the quarterly review"),
    Param("parent_board_id", "body", "id", doc="id of the parent board; omit for a top-level board",
          example=PARENT_BOARD),
)

CUSTOM_FIELD_TYPES = ("single-select", "multi-select", "plain-text", "date")
ROLE_TYPES = ("guest", "member")
IMPORT_STATUSES = ("pending", "inProgress", "failed", "succeeded")
IMPORT_ERROR_TYPES = ("SOURCE_FILE_NOT_FOUND", "SOURCE_URL_BLOCKED", "SOURCE_URL_INVALID", "PROCESS_TIMED_OUT")

UPLOAD_TARGET = (
    Param("parent_board_id", "body", "id", doc="board to create the asset under", example=PARENT_BOARD),
    Param("asset_id", "body", "id", doc="parent asset to create a new version under (instead of a new asset)"),
    Param("custom_fields", "body", "object", doc="custom fields and values to assign to the asset",
          example=[{"id": CUSTOM_FIELD, "value": "Spring launch"}]),
    # the vendor SDK sends tags as [{id}] (docs/public-specs.md); the sandbox also takes names
    Param("tags", "body", "object", doc='tags to assign to the asset version as a list of {id}, e.g. '
          '[{"id": "<tag id>"}]', example=[{"id": TAG}]),
)

ACTIONS = (
    # --- Assets ---------------------------------------------------------------------------------
    Action("asset_library.list_assets", "Assets", "GET", "/assets",
           "Assets of the workspace, filtered by board, tags, custom fields, search text or creation time.",
           params=PAGE + (
               Param("parent_board_id", "query", "id", doc="only assets in this board", example=BOARD),
               Param("include_nested_assets", "query", "boolean",
                     doc="with parent_board_id: include assets of the board's descendant boards"),
               Param("search", "query", doc="free-text search", example="beach"),
               Param("tag", "query", "list", repeatable=True,
                     doc="tag names; several: only assets carrying all of them", example=["hero"]),
               Param("custom_field", "query", "list", repeatable=True,
                     doc="custom field filters; several: all must match"),
               Param("created_at_gte", "query", "datetime", wire="createdAt[gte]",
                     doc="created at or after (ISO 8601)", example="2024-01-01T00:00:00.000Z"),
               Param("created_at_lte", "query", "datetime", wire="createdAt[lte]",
                     doc="created at or before (ISO 8601)", example="2024-12-31T23:59:59.999Z"),
           ),
           response="page", paging=SERVICE.paging),
    Action("asset_library.get_asset", "Assets", "GET", "/assets/{asset_id}",
           "One asset with its cover version and custom field values.",
           params=(ASSET_ID,)),
    Action("asset_library.list_asset_boards", "Assets", "GET", "/assets/{asset_id}/boards",
           "Boards an asset is in (its parent boards).",
           params=(ASSET_ID,) + PAGE + (
               Param("include_custom_fields", "query", "boolean", default=False,
                     doc="include each board's custom field values"),
           ),
           response="page", paging=SERVICE.paging),
    Action("asset_library.set_asset_custom_field", "Assets", "PUT",
           "/assets/{asset_id}/customfields/{custom_field_id}",
           "Set or unset an asset's custom field: value for plain-text/date, values for select fields.",
           params=(ASSET_ID, CUSTOM_FIELD_ID) + SET_VALUE, body="json",
           response="none", status=204, checks=(custom_field_value,), changes=FIELD_VALUES),
    Action("asset_library.list_asset_versions", "Assets", "GET", "/assets/{asset_id}/versions",
           "Every version of an asset.",
           params=(ASSET_ID,), response="list", paging=Unpaged(items="data")),
    Action("asset_library.get_asset_version", "Assets", "GET", "/assets/{asset_id}/versions/{version_id}",
           "One version of an asset: file, size, dimensions, tags and its file metadata (IPTC, EXIF).",
           params=(ASSET_ID, VERSION_ID)),
    Action("asset_library.update_asset_version", "Assets", "PATCH", "/assets/{asset_id}/versions/{version_id}",
           "Change the title or description of an asset version.",
           params=(ASSET_ID, VERSION_ID,
                   Param("title", "body", doc="title of the version", example="Hero shot, final"),
                   Param("description", "body", "text", doc="description of the version",
                         example="Approved for the spring campaign")),
           body="json", response="none", status=204),
    Action("asset_library.download_asset_version", "Assets", "GET",
           "/assets/{asset_id}/versions/{version_id}/download",
           "A download URL for the file of an asset version and when it expires (expiresAt).",
           params=(ASSET_ID, VERSION_ID)),
    Action("asset_library.add_asset_version_tag", "Assets", "POST", "/assets/{asset_id}/versions/{version_id}/tags",
           "Tag an asset version with an existing tag; answers the version with its tags (the vendor SDK's).",
           params=(ASSET_ID, VERSION_ID,
                   Param("tag_id", "body", "id", required=True, wire="id", doc="id of the tag to add",
                         example=TAG, rules=("not_blank",))),
           body="json", changes=TAGGED),
    Action("asset_library.remove_asset_version_tag", "Assets", "DELETE",
           "/assets/{asset_id}/versions/{version_id}/tags/{tag_id}",
           "Remove a tag from an asset version.",
           params=(ASSET_ID, VERSION_ID, TAG_ID), response="none", status=204, changes=TAGGED),
    Action("asset_library.delete_asset", "Assets", "DELETE", "/assets/{asset_id}",
           "Delete an asset with all its versions.",
           params=(ASSET_ID,), response="none", status=204),

    # --- Boards ---------------------------------------------------------------------------------
    Action("asset_library.list_boards", "Boards", "GET", "/boards",
           "Boards of the workspace, or the immediate child boards of one board.",
           params=PAGE + (
               NAME_SEARCH,
               Param("parent_board_id", "query", "id", doc="only the immediate child boards of this board",
                     example=PARENT_BOARD),
           ),
           response="page", paging=SERVICE.paging),
    Action("asset_library.create_board", "Boards", "POST", "/boards",
           "Create a board at top level or as a child of another board.",
           params=(Param("title", "body", required=True, doc="title of the board", example="Quarterly review",
                         rules=("not_blank",)),) + BOARD_BODY,
           body="json", status=201, changes=BOARD_ASSETS),
    Action("asset_library.get_board", "Boards", "GET", "/boards/{board_id}",
           "One board with its custom field values.",
           params=(BOARD_ID,)),
    Action("asset_library.update_board", "Boards", "PATCH", "/boards/{board_id}",
           "Change a board's title, description or parent board.",
           params=(BOARD_ID, Param("title", "body", doc="title of the board", example="Quarterly review"))
           + BOARD_BODY,
           body="json", response="none", status=204, changes=BOARD_ASSETS),
    Action("asset_library.delete_board", "Boards", "DELETE", "/boards/{board_id}",
           "Delete a board and every asset contained only in it or in its direct child boards.",
           params=(BOARD_ID,), response="none", status=204, changes=BOARD_ASSETS),
    Action("asset_library.add_board_assets", "Boards", "POST", "/boards/{board_id}/assets",
           "Add assets to a board.",
           params=(BOARD_ID,
                   Param("asset_ids", "body", "list", required=True, doc="ids of the assets to add",
                         example=[ASSET])),
           body="json", response="none", status=204, changes=BOARD_ASSETS),
    Action("asset_library.remove_board_asset", "Boards", "DELETE", "/boards/{board_id}/assets/{asset_id}",
           "Remove an asset from a board (the asset itself stays).",
           params=(BOARD_ID, ASSET_ID), response="none", status=204, changes=BOARD_ASSETS),
    Action("asset_library.set_board_custom_field", "Boards", "PUT",
           "/boards/{board_id}/customFields/{custom_field_id}",
           "Set or unset a board's custom field: value for plain-text/date, values for select fields.",
           params=(BOARD_ID, CUSTOM_FIELD_ID) + SET_VALUE, body="json",
           response="none", status=204, checks=(custom_field_value,), changes=FIELD_VALUES),
    Action("asset_library.list_board_guests", "Boards", "GET", "/boards/{board_id}/guests",
           "Guests invited to a board, with their roles.",
           params=(BOARD_ID,
                   Param("email", "query", "email", doc="only the guest with this address",
                         example="ana.lopez@example.com")),
           response="list", paging=Unpaged(items="data")),
    Action("asset_library.add_board_guest", "Boards", "POST", "/boards/{board_id}/guests",
           "Invite a guest to a board with a role.",
           params=(BOARD_ID,
                   Param("email", "body", "email", required=True, doc="address of the invited user",
                         example="ana.lopez@example.com", rules=("email",)),
                   Param("role_id", "body", "id", required=True, doc="id of a guest role (see list_roles)",
                         example=ROLE, rules=("not_blank",))),
           body="json", status=201, changes=BOARD_ASSETS),
    Action("asset_library.update_board_guest", "Boards", "PATCH", "/boards/{board_id}/guests/{guest_id}",
           "Change the role of a board guest.",
           params=(BOARD_ID, GUEST_ID,
                   Param("role_id", "body", "id", required=True, doc="id of the new guest role",
                         example=ROLE, rules=("not_blank",))),
           body="json", response="none", status=204, changes=BOARD_ASSETS),
    Action("asset_library.remove_board_guest", "Boards", "DELETE", "/boards/{board_id}/guests/{guest_id}",
           "Remove a guest from a board.",
           params=(BOARD_ID, GUEST_ID), response="none", status=204, changes=BOARD_ASSETS),

    # --- Custom Fields --------------------------------------------------------------------------
    Action("asset_library.list_custom_fields", "Custom Fields", "GET", "/customfields",
           "Custom fields of the workspace with their types and select values.",
           params=PAGE + (NAME_SEARCH,), response="page", paging=SERVICE.paging),
    Action("asset_library.create_custom_field", "Custom Fields", "POST", "/customfields",
           "Create a custom field; select fields may come with their values.",
           params=(
               Param("name", "body", required=True, doc="name of the field", example="Campaign",
                     rules=("not_blank",)),
               Param("description", "body", "text", doc="description of the field",
                     example="Marketing campaign the asset belongs to"),
               Param("type", "body", required=True, choices=CUSTOM_FIELD_TYPES,
                     doc="type of the field; cannot be changed later", example="single-select"),
               Param("values", "body", "object", doc="values of a select field as a list of {name}",
                     example=[{"name": "Spring launch"}, {"name": "Summer sale"}],
                     lookup=NO_LOOKUP),     # new values by name, not existing ones
           ),
           body="json", status=201, checks=(select_values,), changes=FIELD_VALUES),
    Action("asset_library.get_custom_field", "Custom Fields", "GET", "/customfields/{custom_field_id}",
           "One custom field with its select values.",
           params=(CUSTOM_FIELD_ID,)),
    Action("asset_library.update_custom_field", "Custom Fields", "PATCH", "/customfields/{custom_field_id}",
           "Rename a custom field or change its description (its type cannot change).",
           params=(CUSTOM_FIELD_ID,
                   Param("name", "body", doc="name of the field", example="Campaign"),
                   Param("description", "body", "text", doc="description of the field",
                         example="Marketing campaign the asset belongs to"),
                   Param("type", "body", choices=CUSTOM_FIELD_TYPES, immutable=True,
                         doc="the type is fixed at creation; any value is refused")),
           body="json", response="none", status=204, changes=FIELD_VALUES),
    Action("asset_library.delete_custom_field", "Custom Fields", "DELETE", "/customfields/{custom_field_id}",
           "Delete a custom field and its values.",
           params=(CUSTOM_FIELD_ID,), response="none", status=204, changes=FIELD_VALUES),
    Action("asset_library.add_custom_field_value", "Custom Fields", "POST", "/customfields/{custom_field_id}/values",
           "Add a value to a single-select or multi-select custom field.",
           params=(CUSTOM_FIELD_ID,
                   Param("name", "body", required=True, doc="the value's name", example="Autumn preview",
                         rules=("not_blank",))),
           body="json", status=201, changes=FIELD_VALUES),
    Action("asset_library.update_custom_field_value", "Custom Fields", "PATCH",
           "/customfields/{custom_field_id}/values/{value_id}",
           "Rename a value of a select custom field.",
           params=(CUSTOM_FIELD_ID, VALUE_ID,
                   Param("name", "body", doc="the value's new name", example="Autumn launch")),
           body="json", response="none", status=204, changes=FIELD_VALUES),
    Action("asset_library.delete_custom_field_value", "Custom Fields", "DELETE",
           "/customfields/{custom_field_id}/values/{value_id}",
           "Delete a value of a select custom field.",
           params=(CUSTOM_FIELD_ID, VALUE_ID), response="none", status=204, changes=FIELD_VALUES),

    # --- Imports --------------------------------------------------------------------------------
    Action("asset_library.create_import", "Imports", "POST", "/imports",
           "Import a file from a public URL as a new asset, or as a new version of an asset.",
           params=(
               Param("source_url", "body", "url", required=True, rules=("url",),
                     doc="publicly accessible URL of the file", example="https://example.com/media/beach.jpg"),
               Param("file_name", "body", doc="file name; taken from the URL when omitted", example="beach"),
               Param("ext", "body", doc="file extension; taken from the URL when omitted", example="jpg"),
               Param("recorded_at", "body", "datetime", doc="when the file was created; now when omitted",
                     example="2024-05-14T09:30:00.000Z"),
               Param("title", "body", doc="title of the new version; the file name when omitted",
                     example="Beach golden hour"),
               Param("description", "body", "text", doc="description of the new version",
                     example="Golden hour on the north beach, spring shoot"),
           ) + UPLOAD_TARGET,
           body="json", status=201, changes=NEW_ASSETS),
    Action("asset_library.get_import_status", "Imports", "GET", "/imports/{import_id}/status",
           "Status of an import (pending, inProgress, failed, succeeded) and its error when it failed.",
           params=(IMPORT_ID,)),

    # --- Roles ----------------------------------------------------------------------------------
    Action("asset_library.list_roles", "Roles", "GET", "/roles",
           "Roles of the workspace of one type, e.g. the guest roles to invite board guests with.",
           params=(Param("type", "query", required=True, choices=ROLE_TYPES, default="guest", example="guest",
                         doc="type of the roles", rules=("not_blank",)),),
           response="list", paging=Unpaged(items="data")),

    # --- Tags -----------------------------------------------------------------------------------
    Action("asset_library.list_tags", "Tags", "GET", "/tags",
           "Tags of the workspace.",
           params=PAGE + (NAME_SEARCH,), response="page", paging=SERVICE.paging),
    Action("asset_library.create_tag", "Tags", "POST", "/tags",
           "Create a tag.",
           params=(Param("name", "body", required=True, doc="name of the tag", example="hero",
                         rules=("not_blank",)),),
           body="json", status=201, changes=TAGGED),
    Action("asset_library.get_tag", "Tags", "GET", "/tags/{tag_id}",
           "One tag; 404 once deleted (the vendor's SDK and its end-to-end tests read it after create, "
           "rename and delete).",
           params=(TAG_ID,), origin=("A2", "A3")),
    Action("asset_library.update_tag", "Tags", "PATCH", "/tags/{tag_id}",
           "Rename a tag.",
           params=(TAG_ID, Param("name", "body", doc="new name of the tag", example="hero-shot")),
           body="json", response="none", status=204, changes=TAGGED),
    Action("asset_library.delete_tag", "Tags", "DELETE", "/tags/{tag_id}",
           "Delete a tag.",
           params=(TAG_ID,), response="none", status=204, changes=TAGGED),

    # --- Uploads --------------------------------------------------------------------------------
    Action("asset_library.create_upload", "Uploads", "POST", "/uploads",
           "Start an upload: a small file gets one upload URL, a large one a multipart upload id and key.",
           params=(
               Param("file_name", "body", required=True, doc="file name without extension", example="beach",
                     rules=("not_blank",)),
               Param("ext", "body", required=True, doc="file extension", example="jpg", rules=("not_blank",)),
               Param("size", "body", "integer", required=True, doc="file size in bytes", example=5242880,
                     minimum=1),
               Param("mime", "body", required=True, doc="MIME type of the file", example="image/jpeg",
                     rules=("not_blank",)),
               Param("recorded_at", "body", "datetime", doc="when the file was created; now when omitted",
                     example="2024-05-14T09:30:00.000Z"),
           ) + UPLOAD_TARGET,
           body="json", status=201, changes=NEW_ASSETS),
    Action("asset_library.create_upload_part", "Uploads", "POST", "/uploads/uploadPart",
           "An upload URL for one part of a multipart upload (PUT the part there and keep its ETag).",
           params=(
               Param("multi_part_upload_id", "body", required=True, doc="multiPartUploadId from create_upload",
                     example=UPLOAD, rules=("not_blank",)),
               Param("key", "body", required=True, doc="key from create_upload",
                     example=f"uploads/{ASSET}/{VERSION}/beach.jpg", rules=("not_blank",)),
               Param("part_number", "body", "integer", required=True, doc="number of the part (from 1)",
                     example=1, minimum=1),
           ),
           body="json", status=201, changes=NEW_ASSETS),
    Action("asset_library.complete_upload", "Uploads", "POST", "/uploads/completeMultipart",
           "Complete a multipart upload from the ETags of its parts.",
           params=(
               Param("multi_part_upload_id", "body", required=True, doc="multiPartUploadId from create_upload",
                     example=UPLOAD, rules=("not_blank",)),
               Param("key", "body", required=True, doc="key from create_upload",
                     example=f"uploads/{ASSET}/{VERSION}/beach.jpg", rules=("not_blank",)),
               Param("parts", "body", "object", required=True, doc="the parts as a list of {etag, partNumber}",
                     example=[{"etag": "\"9b2cf535f27731c974343645a3985328\"", "partNumber": 1}]),
           ),
           body="json", response="none", status=204, changes=NEW_ASSETS),
)


# --- datasets ----------------------------------------------------------------------------------

COVER_COLUMNS = (
    Column("cover_version_id", "id", source="coverVersion.id"),
    Column("cover_version_file_name", source="coverVersion.fileName"),
    Column("cover_version_ext", source="coverVersion.ext"),
    Column("cover_version_title", source="coverVersion.title"),
    Column("cover_version_description", source="coverVersion.description"),
    Column("cover_version_summary", source="coverVersion.summary"),
    Column("cover_version_type", "category", source="coverVersion.type"),
    Column("cover_version_size", "integer", source="coverVersion.size"),
    Column("cover_version_created_at", "timestamp", source="coverVersion.createdAt"),
    Column("cover_version_uploaded_at", "timestamp", source="coverVersion.uploadedAt"),
    Column("cover_version_updated_at", "timestamp", source="coverVersion.updatedAt"),
    Column("cover_version_file_created_at", "timestamp", source="coverVersion.fileCreatedAt"),
    Column("cover_version_width", "integer", source="coverVersion.width"),
    Column("cover_version_height", "integer", source="coverVersion.height"),
    Column("cover_version_duration", "number", source="coverVersion.duration"),
    Column("cover_version_tags", "list", source="coverVersion.tags"),
    Column("cover_version_smart_tags", "list", source="coverVersion.smartTags"),
    Column("cover_version_urls_thumbnail", source="coverVersion.urls.thumbnail"),
    Column("cover_version_urls_preview", source="coverVersion.urls.preview"),
)

BOARD_COLUMNS = (
    Column("id", "id"), Column("parent_board_id", "id"), Column("title"), Column("description"),
    Column("created_at", "timestamp"), Column("updated_at", "timestamp"), Column("custom_fields", "json"),
)

RESOURCES = (
    Resource(
        "assets", "asset_library", "asset_library.list_assets", key=("id",),
        doc="Assets with their cover version (file, type, size, dimensions, tags) and custom field values.",
        columns=(Column("id", "id"),) + COVER_COLUMNS + (Column("custom_fields", "json"),),
        filters=("parent_board_id", "include_nested_assets", "search", "tag", "custom_field",
                 "created_at_gte", "created_at_lte"),
    ),
    # no sound change signal: a version that is not the cover can be retitled or tagged without its
    # asset's row changing, and the list has no updated-since filter; so each refresh asks again for
    # the assets confirmed longest ago, every one within the freshness budget
    Resource(
        "versions", "asset_library", "asset_library.list_asset_versions", key=("id",),
        doc="Every version of every asset; asset_id is the parent asset's id, added by the fetcher.",
        columns=(
            Column("asset_id", "id", doc="id of the asset (added by the fetcher)"),
            Column("id", "id"), Column("file_name"), Column("ext"), Column("title"), Column("description"),
            Column("summary"), Column("type", "category"), Column("size", "integer"),
            Column("created_at", "timestamp"), Column("uploaded_at", "timestamp"), Column("updated_at", "timestamp"),
            Column("file_created_at", "timestamp"),
            Column("width", "integer"), Column("height", "integer"), Column("duration", "number"),
            Column("tags", "list"), Column("smart_tags", "list"),
            Column("urls_thumbnail", source="urls.thumbnail"), Column("urls_preview", source="urls.preview"),
        ),
        fan_out="asset_id", parent="assets", parent_key="id",
        # a freshness budget: every asset's versions asked again within a day, the oldest first
        incremental=Incremental("rotation", field="asset_id", max_age=86_400),
    ),
    Resource(
        "boards", "asset_library", "asset_library.list_boards", key=("id",),
        doc="Boards of the workspace with their parent board and custom field values.",
        columns=BOARD_COLUMNS,
        filters=("name", "parent_board_id"),
    ),
    # full pulls: adding an asset to a board changes neither the asset's row nor the board's
    Resource(
        "asset_boards", "asset_library", "asset_library.list_asset_boards", key=("asset_id", "id"),
        doc="Which boards each asset is in: one row per asset and board; asset_id is added by the fetcher.",
        # a board's customFields come only with include_custom_fields (false by default, as the
        # service's documented query says): optional, so a pull without it is no drift
        columns=(Column("asset_id", "id", doc="id of the asset (added by the fetcher)"),)
        + tuple(c for c in BOARD_COLUMNS if c.name != "custom_fields")
        + (Column("custom_fields", "json", optional=True,
                  doc="the board's custom field values, sent only with include_custom_fields=True"),),
        fan_out="asset_id", parent="assets", parent_key="id",
        filters=("include_custom_fields",),
        # a board's assets, with the board's record: a request a board instead of one an asset
        other_side=OtherSide("boards", "asset_library.list_assets", "parent_board_id", omit=("customFields",),
                             unless=("include_custom_fields",)),
    ),
    # no sound change signal (adding, changing or removing a guest does not change the board's row):
    # the boards confirmed longest ago are asked again, every one within the freshness budget
    Resource(
        "guests", "asset_library", "asset_library.list_board_guests", key=("board_id", "id"),
        doc="Guests of every board with their role; board_id is the parent board's id.",
        columns=(Column("board_id", "id"), Column("id", "id"), Column("email"), Column("role_id", "id")),
        fan_out="board_id", parent="boards", parent_key="id",
        filters=("email",),
        incremental=Incremental("rotation", field="board_id", max_age=86_400),
    ),
    Resource(
        "roles", "asset_library", "asset_library.list_roles", key=("id",),
        doc="Roles of the workspace of one type (guest roles unless type is given).",
        columns=(Column("id", "id"), Column("name"), Column("description"), Column("billable", "boolean"),
                 Column("type", "category")),
        filters=("type",),
    ),
    Resource(
        "custom_fields", "asset_library", "asset_library.list_custom_fields", key=("id",),
        doc="Custom fields of the workspace with their type and select values.",
        columns=(Column("id", "id"), Column("name"), Column("description"),
                 Column("type", "category", values=CUSTOM_FIELD_TYPES), Column("values", "json"), Column("created_at", "timestamp"), Column("updated_at", "timestamp")),
        filters=("name",),
    ),
    Resource(
        "custom_field_values", "asset_library", "asset_library.get_custom_field",
        key=("custom_field_id", "id"),
        doc="The values of the select custom fields, one row each; custom_field_id is added by the fetcher "
            "(plain-text and date fields have none).",
        columns=(Column("custom_field_id", "id", doc="id of the custom field (added by the fetcher)"),
                 Column("id", "id"), Column("name")),
        fan_out="custom_field_id", parent="custom_fields", parent_key="id", items="values",
        # its rows are the field's own `values`, which custom_fields lists too: any value added, renamed
        # or removed changes the field's row
        incremental=Incremental("changed_parents", parent="custom_fields", field="custom_field_id",
                                parent_field="id"),
    ),
    Resource(
        "tags", "asset_library", "asset_library.list_tags", key=("id",),
        doc="Tags of the workspace.",
        columns=(Column("id", "id"), Column("name")),
        filters=("name",),
    ),
    Resource(
        "imports", "asset_library", "asset_library.get_import_status", key=("import_id",),
        doc="Status of the imports whose ids the analyst gives (import_ids), with the error of failed ones; "
            "import_id is added by the fetcher.",
        columns=(Column("import_id", "id", doc="id of the import (added by the fetcher)"),
                 # the documented import statuses, and the failure types of the error only a failed
                 # import has (so a load of imports none of which failed lacks it: optional)
                 Column("status", "category", values=IMPORT_STATUSES),
                 Column("error_type", "category", source="error.type", values=IMPORT_ERROR_TYPES,
                        optional=True),
                 Column("error_message", source="error.message", optional=True)),
        fan_out="import_id", parent="import_ids",
        # an import that failed or succeeded stays so: only the pending and running ones are asked again
        incremental=Incremental("open_members", field="status", final=("failed", "succeeded")),
    ),
)
