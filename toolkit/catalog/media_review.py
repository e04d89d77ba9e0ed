"""The video review platform's API v2: the teams of the user (seed 000, part A)."""

__all__ = ["ACTIONS", "PAGE", "RESOURCES", "SERVICE"]

from toolkit.catalog.spec import Action, Column, PageNumber, Param, Resource, Service

SERVICE = Service(
    key="media_review",
    position=1,
    title="Media review (video review platform, API v2)",
    auth="bearer",
    credentials=("token",),
    secrets=("token",),
    base_path="/v2",
    error_shape="code_message_errors",
    paging=PageNumber(page="page", size="page_size", first=1, max_size=100,
                      total_header="total", pages_header="total-pages"),
    rate_per_second=None,          # a leaky bucket whose size is not documented: 429s are retried
    max_concurrency=4,
    doc="Teams of the user; a bare JSON array paged with page/page_size and total-pages headers.",
)

PAGE = (
    Param("page", "query", "integer", wire="page", doc="1-based page number", minimum=1),
    Param("page_size", "query", "integer", wire="page_size", doc="teams per page (default 50)",
          minimum=1),
)

ACTIONS = (
    Action("media_review.list_teams", "Teams", "GET", "/teams", "Teams of the user.",
           params=PAGE, response="page", paging=SERVICE.paging),
)

RESOURCES = (
    Resource(
        "teams", "media_review", "media_review.list_teams", key=("id",),
        doc="Teams of the user with storage and member counts against their limits.",
        columns=(
            Column("id", "id"), Column("name"), Column("account_id", "id", source="account_id"),
            Column("creator_id", "id", source="creator_id"),
            Column("access", "category", values=("private", "public", "restricted")),   # as documented
            Column("storage", "integer"), Column("storage_limit", "integer", source="storage_limit"),
            Column("file_count", "integer", source="file_count"),
            Column("folder_count", "integer", source="folder_count"),
            Column("project_count", "integer", source="project_count"),
            Column("member_count", "integer", source="member_count"),
            Column("member_limit", "integer", source="member_limit"),
            Column("collaborator_count", "integer", source="collaborator_count"),
            Column("inserted_at", "timestamp", source="inserted_at"),
            Column("updated_at", "timestamp", source="updated_at"),
            Column("deleted_at", "timestamp", source="deleted_at"),
            # the vendor's v2 Team schema (developer.frame.io, "Get Teams for User") names these too
            Column("type", "category", source="_type", doc="the record's kind: team"),
            Column("bio"), Column("location"), Column("link"), Column("color"),
            Column("dark_theme", "boolean", source="dark_theme"), Column("solo", "boolean"),
            Column("image_64", source="image_64"), Column("image_128", source="image_128"),
            Column("image_256", source="image_256"),
            Column("archived_storage", "integer", source="archived_storage"),
            Column("watermark", "json"), Column("account", "json", doc="the team's account, as sent"),
            Column("user_role", "json", source="user_role", doc="the user's role in the team"),
        ),
    ),
)
