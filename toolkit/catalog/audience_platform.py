"""The customer data platform's API v1/v2: profiles, schema, audiences, integrations, privacy,
notifications, metrics, users and monitoring (seed 001). Modelled on Apache Unomi where the seed is
silent (services.md): `{list, offset, pageSize, totalSize}` pages, `itemId` profiles, `systemTags`."""

__all__ = ["ACCOUNT_ID", "ACTIONS", "ANALYTICS_AUDIENCE_ID", "ANALYTICS_PATH", "AUDIENCE_DATA", "AUDIENCE_FILTERS",
           "AUDIENCE_ID", "AUDIENCE_LIST", "DATA_POLICY", "CONFIGURATIONS", "DEFINITION_ID", "ENABLED", "IMPORTED", "LAST_REFRESH", "LIST", "LOOKUPS",
           "METADATA_COLUMNS", "NOTIFICATION_ID", "NOTIFICATION_PAGE", "OFFSET_SIZE", "PAGE", "PROFILE_DATA", "PROFILE_ID", "PROFILE_QUERY_ID",
           "PROPERTY_ID", "RESOURCES", "SERVICE", "SORT", "USERNAME", "V12", "V2", "VALIDATE",
           "WAREHOUSE_COLUMNS", "WAREHOUSE_COMMON", "WEB_PROPERTY_ID"]

from dataclasses import replace

from toolkit.catalog.audience_platform_checks import (
    filter_or_all,
    grant_type_fields,
    import_package,
    not_logged_in_user,
    notification_filter,
    offset_with_size,
)
from toolkit.catalog.spec import (
    NO_LOOKUP,
    Action,
    Column,
    Incremental,
    Lookup,
    Offset,
    Param,
    Resource,
    Service,
    Settings,
    Unpaged,
)

# param name → the resource its values come from (toolkit.forms offers the rows as choices)
LOOKUPS = {
    "audience_id": Lookup("audiences", "id", "{name}"),
    "username": Lookup("users", "username", "{first_name} {last_name}"),
    "notification_id": Lookup("notifications", "id", "{severity}: {message}"),
    "property_id": Lookup("profile_properties", "id", "{name}"),
    "property_name": Lookup("profile_properties", "id", "{name}"),
    "profile_id": Lookup("profiles", "item_id"),
    "definition_id": Lookup("warehouse_queries", "id", "{name}"),
}

SERVICE = Service(
    key="audience_platform",
    position=3,
    title="Audience platform (customer data platform, API v1/v2)",
    auth=("bearer", "basic"),                     # a token when given, else HTTP Basic
    credentials=("token", "username", "password"),
    logins=(("token",), ("username", "password")),
    secrets=("token", "password"),
    base_path="/cdp-server",
    error_shape="unomi",
    version_prefix="/api/{version}",
    default_version="v2",
    paging=Offset(),
    rate_per_second=None,
    max_concurrency=10,
    doc="Profiles, audiences and their integrations; HTTP Basic or a bearer token; offset/size pages "
        "with size -1 for everything (offset 0 then).",
    lookups=LOOKUPS,
)

# what a write changes beyond the resources its path names (Action.changes): too wide costs a pull,
# too narrow shows old rows as current
IMPORTED = ("audience_metadata", "audiences", "notifications")     # an import makes an audience, and says so
PROFILE_DATA = ("memberships", "profiles")                          # memberships are read from profiles
AUDIENCE_DATA = ("audience_metadata", "memberships")
CONFIGURATIONS = ("configurations",)                                # one row per configuration object

V12 = ("v1", "v2")
V2 = ("v2",)
PAGE = SERVICE.paging
NOTIFICATION_PAGE = Offset(cap=1000)
LIST = Unpaged()

# --- shared parameter sets ---------------------------------------------------------------------

# each item of a comma list: `name`, `name:asc` or `name:desc`; a value, `!` before it to exclude it
SORT_ITEM = r"\s*[A-Za-z0-9_.]+(:(asc|desc))?\s*"
SORT_RULE = "must be a comma separated list of name, name:asc or name:desc"
LIST_FILTER = r"(?s)(?!\s*!?\s*\Z).*"
LIST_FILTER_RULE = "must be a comma separated list of values, each optionally prefixed with '!'"

OFFSET_SIZE = (
    Param("offset", "query", "integer", doc="rows to skip (0 when size is -1)", example=0,
          minimum=0),
    Param("size", "query", "integer", doc="rows per page, or -1 for all of them", example=50,
          minimum=1, also=(-1,)),
)
SORT = Param("sort", "query", doc="comma list of property names, each optionally :asc or :desc",
             example="name:asc", listed=True, pattern=SORT_ITEM, pattern_rule=SORT_RULE)
AUDIENCE_FILTERS = (
    Param("system_tags", "query", doc="comma list of system tags; '!' excludes (e.g. imported,!hidden)",
          listed=True, pattern=LIST_FILTER, pattern_rule=LIST_FILTER_RULE),
    Param("tags", "query", doc="comma list of tags; '!' excludes (e.g. vip,!test)",
          listed=True, pattern=LIST_FILTER, pattern_rule=LIST_FILTER_RULE),
    Param("providers", "query", doc="comma list of providers; '!' excludes (e.g. warehouse)",
          listed=True, pattern=LIST_FILTER, pattern_rule=LIST_FILTER_RULE),
    Param("names", "query", doc="comma list of audience names; '!' excludes (e.g. Newsletter)",
          listed=True, pattern=LIST_FILTER, pattern_rule=LIST_FILTER_RULE),
)
AUDIENCE_LIST = (*OFFSET_SIZE, SORT, *AUDIENCE_FILTERS)

AUDIENCE_ID = Param("audience_id", "path", required=True, rules=("not_blank",),
                    doc="audience id", example="newsletter-subscribers")
PROFILE_ID = Param("profile_id", "path", required=True, rules=("not_blank",),
                   doc="profile id", example="6f1c2a9e-3b7d-4f0e-9a51-2c8d4e7b1a30")
PROPERTY_ID = Param("property_id", "path", required=True, doc="profile property id (letters and digits)",
                    example="loyaltyTier", rules=("not_blank",), pattern="[A-Za-z0-9]+",
                    pattern_rule="must be one or more alphanumeric characters")
DEFINITION_ID = Param("definition_id", "path", required=True, rules=("not_blank",),
                      doc="query definition id", example="dw-audience-churn-risk")
PROFILE_QUERY_ID = replace(DEFINITION_ID, lookup=Lookup("warehouse_profile_queries", "id", "{name}"))
NOTIFICATION_ID = Param("notification_id", "path", required=True, rules=("not_blank",),
                        doc="notification id", example="0b6f4c1e-8d2a-4b7f-9c3e-5a1d2e8f6b40")
USERNAME = Param("username", "path", required=True, rules=("not_blank",),
                 doc="user name", example="integration-bot")
ACCOUNT_ID = Param("account_id", "path", required=True, rules=("not_blank",),
                   doc="analytics account id", example="123456789", lookup=NO_LOOKUP)
WEB_PROPERTY_ID = Param("property_id", "path", required=True, rules=("not_blank",), example="UA-123456789-1",
                        doc="web property id (older type) or property id (newer type)",
                        lookup=NO_LOOKUP)      # an analytics web property, not a profile property
ANALYTICS_AUDIENCE_ID = Param("audience_id", "path", required=True, rules=("not_blank",),
                              doc="analytics audience id", example="8765432101",
                              lookup=Lookup("analytics_audiences", "audience_id", "{name}"))
ANALYTICS_PATH = "/ext/analytics/accounts/{account_id}/webproperties/{property_id}/audiences"

VALIDATE = Param("validate", "query", "boolean", doc="save only if the profile passes schema validation",
                 example=True)
DATA_POLICY = Param("profile_data_policy", "query", choices=("allow", "disallow"),
                    doc="allow: proceed even if profiles hold the property; disallow: refuse then",
                    example="allow")
ENABLED = Param("enabled", "body", "boolean", doc="switch the feature on or off", example=True)

WAREHOUSE_COMMON = (
    Param("id", "body", doc="definition id", example="dw-audience-churn-risk"),
    Param("active", "body", "boolean", doc="whether the definition is refreshed", example=True),
    Param("name", "body", doc="definition name", example="Churn risk"),
    Param("description", "body", "text", doc="definition description"),
    Param("project_id", "body", required=True, doc="warehouse project holding the table",
          example="acme-analytics"),
    Param("dataset_name", "body", required=True, doc="dataset of the table", example="crm"),
)
LAST_REFRESH = Param("last_membership_refresh", "body", "datetime", doc="date of the last refresh",
                     example="2024-05-01T00:00:00Z")

# --- actions -----------------------------------------------------------------------------------

ACTIONS = (
    # Actions
    Action("audience_platform.import_audience", "Actions", "POST", "/actions/audience/import",
           "Validate an audience import package and schedule its import in the background.",
           versions=V2, body="json", response="none", status=202,
           params=(Param("package", "raw", "object", required=True, check=import_package,
                         doc="import package: type 'enclosed' with the audience data, or type 'url' "
                             "with the URL of a file holding the enclosed JSON",
                         example={"type": "url", "url": "https://files.example.com/audience.json"}),), changes=IMPORTED),
    Action("audience_platform.get_profile_merge_configuration", "Actions", "GET", "/actions/profile/merge",
           "Read the profile merge configuration.", versions=V12),
    Action("audience_platform.update_profile_merge_configuration", "Actions", "PATCH",
           "/actions/profile/merge", "Enable or disable the profile merge action.", versions=V12,
           body="merge_patch", params=(ENABLED,), changes=CONFIGURATIONS),

    # Audiences
    Action("audience_platform.update_audience", "Audiences", "PATCH", "/audiences/{audience_id}",
           "Change an audience's tags with a JSON Merge Patch or a JSON Patch.", versions=V12,
           body="merge_patch", content_types=("merge_patch", "json_patch"),
           params=(AUDIENCE_ID, Param("patch", "raw", "object", required=True,
                                      doc="JSON Merge Patch object, or JSON Patch operations array",
                                      example={"tags": ["vip", "newsletter"]})), changes=AUDIENCE_DATA),
    Action("audience_platform.list_audience_metadata", "Audiences", "GET", "/audiences/metadata",
           "Page of audience metadata, filtered by tags, system tags, providers and names.",
           versions=V12, version_paths={"v1": "/audiences"}, params=AUDIENCE_LIST,
           response="page", paging=PAGE, checks=(offset_with_size,)),
    Action("audience_platform.list_audiences", "Audiences", "GET", "/audiences",
           "Page of audiences, filtered by tags, system tags, providers and names.", versions=V2,
           params=AUDIENCE_LIST, response="page", paging=PAGE, checks=(offset_with_size,)),
    Action("audience_platform.get_audience", "Audiences", "GET", "/audiences/{audience_id}",
           "One audience.", versions=V12, params=(AUDIENCE_ID,)),
    Action("audience_platform.get_profile_audiences", "Audiences", "GET", "/audiences/profiles/{profile_id}",
           "Audiences the profile is a member of (their metadata).", versions=V12,
           params=(PROFILE_ID,), response="list", paging=LIST),
    Action("audience_platform.get_audience_membership", "Audiences", "GET",
           "/audiences/{audience_id}/profiles/{profile_id}",
           "True if the profile is a member of the audience.", versions=V12,
           params=(AUDIENCE_ID, PROFILE_ID), response="boolean"),

    # Experience insights
    Action("audience_platform.get_experience_insights_configuration", "Experience insights", "GET",
           "/cxi/configuration", "Read the experience insights integration configuration.", versions=V12),
    Action("audience_platform.update_experience_insights_configuration", "Experience insights", "PATCH",
           "/cxi/configuration", "Change the experience insights integration configuration.",
           versions=V12, body="merge_patch",
           params=(ENABLED,
                   Param("credentials_json", "body", "secret",
                         doc="service account key file contents, as a string"),
                   Param("ssl_enabled", "body", "boolean", doc="use SSL for message channels",
                         example=True)), changes=CONFIGURATIONS),

    # Document generation
    Action("audience_platform.get_document_generation_configuration", "Document generation", "GET",
           "/docgen/configuration", "Read the document generation integration configuration.",
           versions=V12),
    Action("audience_platform.update_document_generation_configuration", "Document generation", "PATCH",
           "/docgen/configuration", "Change the document generation integration configuration (OAuth2 "
           "settings, communication aliases).", versions=V12, body="merge_patch",
           checks=(grant_type_fields,),
           params=(Param("base_rest_url", "body", "url", doc="orchestration API root URL",
                         example="https://docgen.example.com/api", rules=("url",)),
                   Param("token_url", "body", "url", doc="OAuth2 token URL",
                         example="https://login.example.com/oauth2/token", rules=("url",)),
                   Param("grant_type", "body", choices=("client_credentials", "password"),
                         doc="OAuth2 grant type", example="client_credentials"),
                   Param("client_id", "body", doc="OAuth2 client id", example="cdp-docgen"),
                   Param("client_secret", "body", "secret", doc="OAuth2 client secret"),
                   Param("username", "body", doc="user name for the password grant"),
                   Param("password", "body", "secret", doc="password for the password grant"),
                   Param("communication_map", "body", "object",
                         doc="map of aliases to communication ids",
                         example={"welcome": "COMM-0001"}),
                   ENABLED,
                   Param("scope", "body", doc="OAuth2 scope to request", example="docgen.write")), changes=CONFIGURATIONS),
    Action("audience_platform.start_communication", "Document generation", "POST",
           "/docgen/communication", "Start a document generation communication for a profile.",
           versions=V12, body="json",
           params=(Param("communication_id", "body", required=True, rules=("not_blank",),
                         doc="communication (application) identifier", example="COMM-0001"),
                   Param("profile_id", "body", required=True, rules=("not_blank",),
                         doc="recipient profile id", example="6f1c2a9e-3b7d-4f0e-9a51-2c8d4e7b1a30"))),

    # Analytics
    Action("audience_platform.update_analytics_audience", "Analytics", "PATCH",
           ANALYTICS_PATH + "/{audience_id}",
           "Activate or deactivate an analytics audience, optionally refreshing its definition and "
           "memberships.", versions=V12, body="merge_patch",
           params=(ACCOUNT_ID, WEB_PROPERTY_ID, ANALYTICS_AUDIENCE_ID,
                   Param("refresh_definition", "query", "boolean",
                         doc="refresh the definition (memberships too if it changed)", example=False),
                   Param("refresh_memberships", "query", "boolean", doc="refresh the memberships",
                         example=False),
                   Param("active", "body", "boolean", doc="track the audience's definition and members",
                         example=True)), changes=AUDIENCE_DATA),
    Action("audience_platform.list_analytics_audiences", "Analytics", "GET", ANALYTICS_PATH,
           "Page of the analytics audiences of a web property.", versions=V12,
           params=(ACCOUNT_ID, WEB_PROPERTY_ID, *OFFSET_SIZE), response="page", paging=PAGE,
           checks=(offset_with_size,)),
    Action("audience_platform.get_analytics_audience", "Analytics", "GET", ANALYTICS_PATH + "/{audience_id}",
           "One analytics audience.", versions=V12,
           params=(ACCOUNT_ID, WEB_PROPERTY_ID, ANALYTICS_AUDIENCE_ID)),
    Action("audience_platform.update_analytics_configuration", "Analytics", "PATCH",
           "/ext/analytics/configuration", "Change the analytics integration configuration.",
           versions=V12, body="merge_patch",
           params=(Param("analytics_scopes", "body", "list", doc="OAuth 2.0 scopes to request",
                         example=["https://www.googleapis.com/auth/analytics.readonly"]),
                   Param("audience_definition_refresh_interval", "body", "duration",
                         doc="how often definitions refresh (PT1H to P30D)", example="PT12H",
                         minimum="PT1H", maximum="P30D"),
                   Param("audience_member_index_persistence_bulk_size", "body", "integer",
                         doc="items per persistence batch during a membership refresh", example=500,
                         minimum=1),
                   Param("audience_membership_refresh_interval", "body", "duration",
                         doc="how often memberships refresh (PT1H to P30D)", example="P1D",
                         minimum="PT1H", maximum="P30D"),
                   ENABLED,
                   Param("google_credentials_json", "body", "secret",
                         doc="service account key file contents, as a string"),
                   Param("profile_dimension_name", "body",
                         doc="custom dimension holding the profile id (blank: the system client-id "
                             "dimension for the older property type, customUser:clientId for the newer)",
                         example="customUser:clientId"),
                   Param("profile_dimension_ids", "body", "object",
                         doc="dimension recorded per property; set an entry to None to remove it and "
                             "have the next refresh evaluate it again (changes are not retroactive)")), changes=CONFIGURATIONS),
    Action("audience_platform.get_analytics_configuration", "Analytics", "GET",
           "/ext/analytics/configuration",
           "Read the analytics integration configuration.", versions=V12),

    # Warehouse
    Action("audience_platform.create_warehouse_audience_query", "Warehouse", "POST",
           "/ext/warehouse/query/audience", "Define an audience read from a warehouse table.",
           versions=V12, body="json",
           params=(*WAREHOUSE_COMMON,
                   Param("table_name", "body", required=True, doc="table holding the audience data",
                         example="churn_risk_members"),
                   Param("audience_id", "body", doc="id given to the resulting audience",
                         example="churn-risk"),
                   Param("audience_name", "body", doc="name of the resulting audience", example="Churn risk"),
                   Param("audience_description", "body", "text", doc="description of the resulting audience"),
                   Param("audience_tags", "body", "list", doc="user managed tags of the audience",
                         example=["warehouse", "retention"]),
                   LAST_REFRESH)),
    Action("audience_platform.create_warehouse_profile_query", "Warehouse", "POST",
           "/ext/warehouse/query/profile", "Define profiles read from a warehouse table.",
           versions=V12, body="json",
           params=(*WAREHOUSE_COMMON,
                   Param("table_name", "body", required=True, doc="table holding the profile data",
                         example="customer_profiles"),
                   Param("profile_id_column", "body", doc="column holding the profile ids",
                         example="customer_id"),
                   LAST_REFRESH)),
    Action("audience_platform.list_warehouse_audience_queries", "Warehouse", "GET",
           "/ext/warehouse/query/audience", "Page of warehouse audience query definitions.",
           versions=V12, params=OFFSET_SIZE, response="page", paging=PAGE, checks=(offset_with_size,)),
    Action("audience_platform.list_warehouse_profile_queries", "Warehouse", "GET",
           "/ext/warehouse/query/profile", "Page of warehouse profile query definitions.",
           versions=V12, params=OFFSET_SIZE, response="page", paging=PAGE, checks=(offset_with_size,)),
    Action("audience_platform.get_warehouse_audience_query", "Warehouse", "GET",
           "/ext/warehouse/query/audience/{definition_id}", "One warehouse audience query definition.",
           versions=V12, params=(DEFINITION_ID,)),
    Action("audience_platform.get_warehouse_profile_query", "Warehouse", "GET",
           "/ext/warehouse/query/profile/{definition_id}", "One warehouse profile query definition.",
           versions=V12, params=(PROFILE_QUERY_ID,)),
    Action("audience_platform.update_warehouse_audience_query", "Warehouse", "PATCH",
           "/ext/warehouse/query/audience/{definition_id}",
           "Change a warehouse audience query definition (activity, names, tags).", versions=V12,
           body="merge_patch",
           params=(DEFINITION_ID,
                   Param("active", "body", "boolean", doc="whether the definition is refreshed",
                         example=True),
                   Param("name", "body", doc="definition name", example="Churn risk"),
                   Param("description", "body", "text", doc="definition description"),
                   Param("audience_name", "body", doc="name of the resulting audience", example="Churn risk"),
                   Param("audience_description", "body", "text", doc="description of the resulting audience"),
                   Param("audience_tags", "body", "list", doc="user managed tags of the audience",
                         example=["warehouse", "retention"]))),
    Action("audience_platform.update_warehouse_profile_query", "Warehouse", "PATCH",
           "/ext/warehouse/query/profile/{definition_id}",
           "Change a warehouse profile query definition (activity, names, id column).", versions=V12,
           body="merge_patch",
           params=(PROFILE_QUERY_ID,
                   Param("active", "body", "boolean", doc="whether the definition is refreshed",
                         example=True),
                   Param("name", "body", doc="definition name", example="CRM customers"),
                   Param("description", "body", "text", doc="definition description"),
                   Param("profile_id_column", "body", doc="column holding the profile ids",
                         example="customer_id"))),
    Action("audience_platform.delete_warehouse_audience_query", "Warehouse", "DELETE",
           "/ext/warehouse/query/audience/{definition_id}", "Delete a warehouse audience query definition.",
           versions=V12, params=(DEFINITION_ID,), response="none", status=204),
    Action("audience_platform.delete_warehouse_profile_query", "Warehouse", "DELETE",
           "/ext/warehouse/query/profile/{definition_id}", "Delete a warehouse profile query definition.",
           versions=V12, params=(PROFILE_QUERY_ID,), response="none", status=204),
    Action("audience_platform.get_warehouse_configuration", "Warehouse", "GET",
           "/ext/warehouse/configuration",
           "Read the data warehouse integration configuration.", versions=V12),
    Action("audience_platform.update_warehouse_configuration", "Warehouse", "PATCH",
           "/ext/warehouse/configuration", "Change the data warehouse integration configuration.",
           versions=V12, body="merge_patch",
           params=(Param("query_results_maximum_page_size", "body", "integer",
                         doc="most query results read per request", example=10000, minimum=1),
                   Param("read_timeout", "body", "integer", doc="read timeout in milliseconds (0: none)",
                         example=60000, minimum=0),
                   Param("big_query_scopes", "body", "list", doc="OAuth 2.0 scopes to request",
                         example=["https://www.googleapis.com/auth/bigquery.readonly"]),
                   ENABLED,
                   Param("google_credentials_json", "body", "secret",
                         doc="service account key file contents, as a string"),
                   Param("root_url", "body", "url", doc="warehouse API root URL",
                         example="https://bigquery.googleapis.com", rules=("url",))), changes=CONFIGURATIONS),

    # Metrics
    Action("audience_platform.get_metric", "Metrics", "GET", "/metrics",
           "Page of the readings of one metric.", versions=V2, response="page", paging=PAGE,
           checks=(offset_with_size,),
           params=(Param("metric_id", "query", required=True, doc="metric id",
                         example="profiles.created", rules=("not_blank",)),
                   *OFFSET_SIZE)),

    # Notifications
    Action("audience_platform.list_notifications", "Notifications", "GET", "/notifications",
           "Page of notifications (at most 1000 per request), filtered and sorted.", versions=V2,
           response="page", paging=NOTIFICATION_PAGE, checks=(offset_with_size,),
           params=(*OFFSET_SIZE,
                   Param("filter", "query", doc="filter expression, e.g. severity:ERROR AND read:false "
                                                "(empty: every notification)",
                         check=notification_filter),
                   SORT)),
    Action("audience_platform.delete_notification", "Notifications", "DELETE",
           "/notifications/{notification_id}", "Delete one notification.", versions=V2,
           params=(NOTIFICATION_ID,), response="none", status=204),
    Action("audience_platform.delete_notifications", "Notifications", "DELETE", "/notifications",
           "Delete every notification matching the filter; with all=True and no filter, every notification.",
           versions=V2, response="none", status=204, checks=(filter_or_all,),
           params=(Param("filter", "query", doc="filter expression; notifications matching it are deleted",
                         example="read:true", check=notification_filter),
                   Param("all", "local", "boolean", doc="delete every notification (no filter): the service "
                                                       "deletes them all when no filter is sent"))),

    # Privacy
    Action("audience_platform.anonymize_profile", "Privacy", "PATCH",
           "/privacy/profiles/{profile_id}/anonymize",
           "Anonymize a profile: delete every property tagged as a personal identifier.", versions=V12,
           destructive=True,
           params=(PROFILE_ID, Param("scope", "query", doc="scope identifier", example="web")), changes=PROFILE_DATA),
    Action("audience_platform.remove_profile_property", "Privacy", "DELETE",
           "/privacy/profiles/{profile_id}/properties/{property_name}",
           "Delete one property (its value) from a profile.", versions=V12, response="none", status=204,
           params=(PROFILE_ID, Param("property_name", "path", required=True, rules=("not_blank",),
                                     doc="name of the profile property", example="phoneNumber")), changes=PROFILE_DATA),

    # Profiles
    Action("audience_platform.create_profile", "Profiles", "POST", "/profiles",
           "Create a profile; with validate=true it is saved only if it passes the profile schema.",
           versions=V12, body="json",
           params=(VALIDATE,
                   Param("item_id", "body", required=True, rules=("not_blank",),
                         doc="identifier of the new profile", example="6f1c2a9e-3b7d-4f0e-9a51-2c8d4e7b1a30"),
                   Param("properties", "body", "object", doc="profile properties defined by the schema",
                         example={"firstName": "Ada", "email": "ada@example.com"}),
                   Param("system_properties", "body", "object", doc="system properties"),
                   Param("segments", "body", "list", doc="segment ids"),
                   Param("scores", "body", "object", doc="scores by scoring plan"),
                   Param("consents", "body", "object", doc="consents by type")), changes=PROFILE_DATA),
    Action("audience_platform.get_profile", "Profiles", "GET", "/profiles/{profile_id}", "Read a profile.",
           versions=V12, params=(PROFILE_ID,)),
    Action("audience_platform.update_profile", "Profiles", "PATCH", "/profiles/{profile_id}",
           "Change a profile with a JSON Merge Patch; with validate=true only if it passes the schema.",
           versions=V12, body="merge_patch",
           params=(PROFILE_ID, VALIDATE,
                   Param("patch", "raw", "object", required=True, doc="JSON Merge Patch document",
                         example={"properties": {"loyaltyTier": "gold"}})), changes=PROFILE_DATA),
    Action("audience_platform.delete_profile", "Profiles", "DELETE", "/profiles/{profile_id}",
           "Delete a profile.", versions=V12, params=(PROFILE_ID,), response="none", status=204, changes=PROFILE_DATA),

    # Schemas
    Action("audience_platform.get_profile_schema", "Schemas", "GET", "/schemas/profile",
           "The profile schema (JSON Schema Draft 2019-09).", versions=V12),
    Action("audience_platform.list_profile_properties", "Schemas", "GET", "/schemas/profile/properties",
           "Page of the profile properties defined by the schema.", versions=V12, params=OFFSET_SIZE,
           response="page", paging=PAGE, checks=(offset_with_size,)),
    Action("audience_platform.get_profile_property", "Schemas", "GET",
           "/schemas/profile/properties/{property_id}",
           "One profile property of the schema.", versions=V12, params=(PROPERTY_ID,)),
    Action("audience_platform.create_profile_property", "Schemas", "POST", "/schemas/profile/properties",
           "Add a property to the profile schema.", versions=V12, body="json",
           params=(DATA_POLICY,
                   Param("definition", "raw", "object", required=True,
                         doc="property definition (JSON Schema fragment with its id)",
                         example={"id": "loyaltyTier", "type": "string", "enum": ["silver", "gold"]}))),
    Action("audience_platform.update_profile_property", "Schemas", "PATCH",
           "/schemas/profile/properties/{property_id}",
           "Change a profile property of the schema with a JSON Merge Patch.", versions=V12,
           body="merge_patch",
           params=(PROPERTY_ID, DATA_POLICY,
                   Param("patch", "raw", "object", required=True, doc="JSON Merge Patch document",
                         example={"enum": ["silver", "gold", "platinum"]}))),
    Action("audience_platform.delete_profile_property", "Schemas", "DELETE",
           "/schemas/profile/properties/{property_id}", "Remove a property from the profile schema.",
           versions=V12, params=(PROPERTY_ID, DATA_POLICY), response="none", status=204),

    # System administration
    Action("audience_platform.update_jwks_configuration", "System administration", "PATCH",
           "/security/jwks/configuration", "Add JWKS endpoints and switch JWKS token validation on or off.",
           versions=V12, body="merge_patch",
           params=(Param("enabled", "body", "boolean", doc="enable JWKS validation", example=True),
                   Param("endpoints", "body", "list", doc="JWKS endpoint URLs to add",
                         example=["https://login.example.com/.well-known/jwks.json"])), changes=CONFIGURATIONS),
    Action("audience_platform.list_jwks_endpoints", "System administration", "GET",
           "/security/jwks/configuration/list", "All configured JWKS endpoints.", versions=V12,
           response="list", paging=LIST),
    Action("audience_platform.get_vault_public_key", "System administration", "GET",
           "/security/vault/publickey",
           "The configured vault public key.", versions=V12, response="text"),

    # System information
    Action("audience_platform.get_service_health", "System information", "GET", "/monitor/service",
           "Health of the vault and core data services.", versions=V12),
    Action("audience_platform.get_version", "System information", "GET", "/version",
           "System version information.", versions=V12),

    # User administration
    Action("audience_platform.create_user", "User administration", "POST", "/security/users",
           "Create a user.", versions=V12, body="json",
           params=(Param("username", "body", required=True, rules=("not_blank",), doc="user name",
                         example="integration-bot"),
                   Param("password", "body", "secret", doc="initial password"),
                   Param("email", "body", "email", doc="e-mail address", example="bot@example.com",
                         rules=("email",)),
                   Param("first_name", "body", doc="first name", example="Integration"),
                   Param("last_name", "body", doc="last name", example="Bot"),
                   Param("roles", "body", "list", doc="role names", example=["integration"]))),
    Action("audience_platform.list_users", "User administration", "GET", "/security/users", "All users.",
           versions=V12, response="list", paging=LIST),
    Action("audience_platform.update_user", "User administration", "PATCH", "/security/users/{username}",
           "Change a user.", versions=V12, body="merge_patch",
           params=(USERNAME,
                   Param("password", "body", "secret", doc="new password"),
                   Param("email", "body", "email", doc="e-mail address", example="bot@example.com",
                         rules=("email",)),
                   Param("first_name", "body", doc="first name", example="Integration"),
                   Param("last_name", "body", doc="last name", example="Bot"),
                   Param("roles", "body", "list", doc="role names", example=["integration"]),
                   Param("enabled", "body", "boolean", doc="whether the user can log in", example=True))),
    Action("audience_platform.delete_user", "User administration", "DELETE", "/security/users/{username}",
           "Delete a user (not the logged-in one: refused before sending under HTTP Basic, where the "
           "client knows its username; behind a token only the service knows who is logged in).",
           versions=V12, params=(USERNAME,), response="none", status=204, checks=(not_logged_in_user,)),
)

# --- resources ---------------------------------------------------------------------------------

METADATA_COLUMNS = (
    Column("id", "id"), Column("name"), Column("description"), Column("scope"),
    Column("tags", "list"), Column("system_tags", "list"), Column("provider", "category"),
    Column("enabled", "boolean"), Column("hidden", "boolean"), Column("read_only", "boolean"),
)
WAREHOUSE_COLUMNS = (
    Column("id", "id"), Column("active", "boolean"), Column("name"), Column("description"),
    Column("project_id"), Column("dataset_name"), Column("table_name"),
)

RESOURCES = (
    Resource(
        "audiences", "audience_platform", "audience_platform.list_audiences", key=("id",),
        doc="Audiences with their tags, provider, switches, condition and profile count.",
        filters=("sort", "system_tags", "tags", "providers", "names"),
        columns=(*METADATA_COLUMNS, Column("profile_count", "integer", doc="members of the audience"),
                 Column("condition", "json", doc="the audience definition"),
                 Column("last_updated", "timestamp")),
    ),
    Resource(
        "audience_metadata", "audience_platform", "audience_platform.list_audience_metadata", key=("id",),
        doc="Metadata records of the audiences.",
        filters=("sort", "system_tags", "tags", "providers", "names"),
        columns=METADATA_COLUMNS,
    ),
    Resource(
        "memberships", "audience_platform", "audience_platform.get_profile_audiences",
        key=("profile_id", "audience_id"),
        doc="Audience memberships of the given profiles: one row per profile and audience.",
        fan_out="profile_id", parent="profile_ids",
        # which audiences a profile is in is its `segments` (the platform keeps memberships on the
        # profile, as Unomi does): an import, a sync or a profile write changes that profile's row;
        # the rest of a row is its audience's metadata, which a retag changes for every member
        # without touching a profile: the members of an audience whose metadata changed too (not
        # `audiences`, whose profile_count moves with every member gained or lost)
        incremental=Incremental("changed_parents", parent="profiles", field="profile_id",
                                copies="audience_metadata", via="audience_id"),
        columns=(Column("profile_id", "id", doc="the profile asked for (added by the fetcher)"),
                 Column("audience_id", "id", source="id"), Column("name"),
                 Column("tags", "list"), Column("system_tags", "list"), Column("provider", "category"),
                 # the rest of the audience's metadata record (Unomi's Metadata, services.md)
                 Column("description"), Column("scope"), Column("enabled", "boolean"),
                 Column("hidden", "boolean"), Column("read_only", "boolean")),
    ),
    Resource(
        "profiles", "audience_platform", "audience_platform.get_profile", key=("item_id",),
        doc="The given profiles with their properties, segments, scores and consents.",
        fan_out="profile_id", parent="profile_ids",
        # a profile has a version, but no list says which profiles changed since a moment: the ids
        # confirmed longest ago are asked again, each within a day (memberships follow the ones that changed)
        incremental=Incremental("rotation", field="profile_id", max_age=86_400),
        columns=(Column("profile_id", "id", doc="the profile asked for (added by the fetcher); item_id is "
                        "the profile that answered, a merged profile's master"),
                 Column("item_id", "id"), Column("item_type", "category"), Column("properties", "json"),
                 Column("system_properties", "json"), Column("segments", "list"), Column("scores", "json"),
                 Column("consents", "json"),
                 Column("version", "integer", doc="the profile record's version, raised by every write")),
    ),
    Resource(
        "profile_properties", "audience_platform", "audience_platform.list_profile_properties", key=("id",),
        doc="Properties of the profile schema; personal identifiers carry the system tag "
            "personalIdentifierProperties.",
        columns=(Column("id", "id"), Column("name"), Column("description"), Column("type", "category"),
                 Column("multivalued", "boolean"), Column("tags", "list"), Column("system_tags", "list"),
                 # the property's JSON Schema (2019-09) constraints: a keyword comes only on the
                 # properties it applies to, so a load of properties without one lacks it everywhere
                 Column("format", optional=True), Column("pattern", optional=True),
                 Column("enum", "list", optional=True), Column("minimum", "number", optional=True),
                 Column("maximum", "number", optional=True), Column("max_length", "integer", optional=True),
                 Column("unique_items", "boolean", optional=True)),
    ),
    Resource(
        "notifications", "audience_platform", "audience_platform.list_notifications", key=("id",),
        doc="Notifications of the platform (imports, refreshes, errors).", filters=("filter", "sort"),
        # raised once and never edited; a deletion shows only in the envelope's total
        incremental=Incremental("created_after", field="created", filter="filter", total="totalSize"),
        columns=(Column("id", "id"), Column("type", "category"), Column("message"),
                 Column("severity", "category"), Column("created", "timestamp"), Column("read", "boolean"),
                 Column("source", "category"), Column("details", "json")),
    ),
    Resource(
        "metrics", "audience_platform", "audience_platform.get_metric", key=("metric_id", "timestamp"),
        doc="Readings of the given metrics over time.",
        fan_out="metric_id", parent="metric_ids",
        columns=(Column("metric_id", "id"), Column("name"), Column("timestamp", "timestamp"),
                 Column("value", "number"), Column("unit", "category")),
    ),
    Resource(
        "users", "audience_platform", "audience_platform.list_users", key=("username",),
        doc="Users of the platform with their roles.",
        columns=(Column("username", "id"), Column("first_name"), Column("last_name"), Column("email"),
                 Column("roles", "list"), Column("enabled", "boolean"), Column("created", "timestamp")),
    ),
    Resource(
        "analytics_audiences", "audience_platform", "audience_platform.list_analytics_audiences",
        key=("account_id", "property_id", "audience_id"),
        doc="Audiences of an analytics web property; active ones are tracked by the platform.",
        filters=("account_id", "property_id"),
        columns=(Column("account_id", "id"), Column("property_id", "id"), Column("audience_id", "id"),
                 Column("name"), Column("description"), Column("active", "boolean"),
                 # the older and newer analytics property types the document's dimension rules name
                 Column("property_type", "category"),
                 # what the platform tracks of an active audience: its definition and its members
                 Column("definition_version", "integer"), Column("membership_duration_days", "integer"),
                 Column("last_definition_refresh", "timestamp"),
                 Column("last_membership_refresh", "timestamp"), Column("member_count", "integer")),
    ),
    Resource(
        "warehouse_queries", "audience_platform", "audience_platform.list_warehouse_audience_queries",
        key=("id",), doc="Warehouse audience query definitions (see warehouse_profile_queries for profiles).",
        columns=(*WAREHOUSE_COLUMNS, Column("audience_id", "id"), Column("audience_name"),
                 Column("audience_description"), Column("audience_tags", "list"),
                 Column("last_membership_refresh", "timestamp")),
    ),
    Resource(
        "warehouse_profile_queries", "audience_platform",
        "audience_platform.list_warehouse_profile_queries", key=("id",),
        doc="Warehouse profile query definitions.",
        columns=(*WAREHOUSE_COLUMNS, Column("profile_id_column"),
                 Column("last_membership_refresh", "timestamp")),
    ),
    Resource(
        "configurations", "audience_platform", "audience_platform.get_analytics_configuration",
        key=("configuration",),
        doc="One row per integration configuration (profile merge, experience insights, document "
            "generation, analytics, warehouse, JWKS endpoints), each read by its own action; secrets "
            "are never stored.",
        settings=Settings((
            ("profile_merge", "audience_platform.get_profile_merge_configuration"),
            ("experience_insights", "audience_platform.get_experience_insights_configuration"),
            ("document_generation", "audience_platform.get_document_generation_configuration"),
            ("analytics", "audience_platform.get_analytics_configuration"),
            ("warehouse", "audience_platform.get_warehouse_configuration"),
            ("jwks", "audience_platform.list_jwks_endpoints"),
        )),
        columns=(Column("configuration", "category", doc="which configuration (added by the fetcher)"),
                 Column("enabled", "boolean"),
                 Column("settings", "json", doc="the other fields of the configuration, secrets removed")),
    ),
    Resource(
        "version", "audience_platform", "audience_platform.get_version", key=("version",),
        doc="The platform's version.",
        columns=(Column("version"), Column("build_number"), Column("build_date", "timestamp"),
                 Column("api_versions", "list")),
    ),
    Resource(
        "health", "audience_platform", "audience_platform.get_service_health", key=("name",),
        doc="Health of the vault and core data services: one row per service.", items="services",
        columns=(Column("name"), Column("status", "category"), Column("message")),
    ),
)
