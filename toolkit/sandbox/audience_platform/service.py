"""The audience platform emulator: a customer data platform's API v1/v2, modelled on Apache Unomi.

Wire: camelCase; pages are `{list, offset, pageSize, totalSize, totalSizeRelation}` with size -1 for
everything (offset 0 then); errors are `{message, errors}`. Credentials: a bearer token (the
integration user's) or HTTP Basic with a user that has a password (the integration user's is in
`credentials()`); anything else is a 401. v1 and v2 share every action but these: v1's `/audiences`
answers metadata where v2 has `/audiences/metadata` and answers audiences at `/audiences`; the
import, the metrics and the notifications exist in v2 only (404 on v1).

The behaviour lives in parts the emulator holds, each given the shared `State`
(audience_platform_state) and never importing the emulator: profiles, schema and privacy
(audience_platform_profiles), audiences and the import (audience_platform_audiences), configurations,
analytics, warehouse and document generation (audience_platform_integrations), notifications and
metrics (audience_platform_notices); below them the memberships (audience_platform_members), the
notification log (audience_platform_log), the seed tables and the index-computed records
(audience_platform_seed). The emulator itself keeps the users, the login and the system reads.
Imports scheduled by a request are applied on the next `advance()` of the virtual clock.

    box = toolkit.sandbox.start(); box.examples("audience_platform")["profile_ids"][:3]
"""
from __future__ import annotations

__all__ = ["AudiencePlatform", "DESCRIPTIONS", "EMULATOR", "INTEGRATION_USER", "PROJECT", "ROLES", "USER_FIELDS"]

import re
from datetime import datetime, timedelta
from typing import Any

import orjson

from toolkit.catalog import audience_platform as catalog
from toolkit.sandbox.audience_platform.audiences import FILES_PATH, Audiences
from toolkit.sandbox.audience_platform.integrations import (
    AUDIENCE_QUERY,
    AUDIENCE_QUERY_PATCH,
    CONFIG_ACTIONS,
    PROFILE_QUERY,
    PROFILE_QUERY_PATCH,
    Integrations,
    checked,
)
from toolkit.sandbox.audience_platform.log import NOTIFICATIONS_MAX, NotificationLog
from toolkit.sandbox.audience_platform.members import Memberships
from toolkit.sandbox.audience_platform.notices import METRICS, Notices
from toolkit.sandbox.audience_platform.profiles import Profiles
from toolkit.sandbox.audience_platform.seed import (
    ANALYTICS_PROPERTIES,
    AUDIENCES,
    INACTIVE_NAMES,
    TRACKED,
    USERS,
    WAREHOUSE_AUDIENCES,
    WAREHOUSE_PROFILES,
    Layout,
    Population,
    property_records,
)
from toolkit.sandbox.audience_platform.state import State
from toolkit.sandbox.clock import iso
from toolkit.sandbox.emulator import Emulator, Extra
from toolkit.sandbox.exchange import Reject, Request, Response

NEW_USER = next(a for a in catalog.ACTIONS if a.id == "audience_platform.create_user").param("username").example

INTEGRATION_USER = "cdp-integration"
ROLES = ("administrator", "integration", "marketer", "analyst", "privacy-officer", "viewer")
USER_FIELDS = {"username": "str", "password": "secret", "email": "str", "firstName": "str",
               "lastName": "str", "roles": "strings", "enabled": "bool"}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
DESCRIPTIONS = {"manual": "Maintained by the marketing team", "analytics": "Synchronised from analytics",
                "warehouse": "Read from a warehouse table", "import": "Imported from a partner file"}
PROJECT = "acme-analytics"


class AudiencePlatform(Emulator):
    """200 × scale profiles in 30 audiences (about 5 each), the schema, integrations, notifications.

    It holds `state` and the parts that answer most actions: `profiles`, `audiences`,
    `integrations`, `notifications`.
    """

    catalog = catalog
    collections = {"audience_platform.list_profile_properties": "properties",
                   "audience_platform.list_warehouse_audience_queries": "audience query definitions",
                   "audience_platform.list_warehouse_profile_queries": "profile query definitions",
                   "audience_platform.list_users": "users"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epoch = now = self.clock.now()
        count = max(1, round(200 * self.scale))
        population = Population(self.seed, count, now)
        order = {a[0]: k for k, a in enumerate(AUDIENCES)}
        members = Memberships(Layout(self.rng, count), population, order)
        self.store.collection("users", key="username")
        self.store["properties"].extend(property_records())
        log = NotificationLog(self.seed, max(1, min(round(300 * self.scale), NOTIFICATIONS_MAX)), now)
        self.state = State(self.store, self.clock, self.seed, self.ids, self.new_id, population, members, log,
                           order, f"/{self.service.key}{self.service.base_path}{FILES_PATH}")
        self.passwords = {INTEGRATION_USER: self._credentials["password"]}
        self.seeded_secrets: list[str] = []
        self._seed_audiences()
        self._seed_analytics()
        self._seed_warehouse()
        self._seed_users()
        self._seed_configs()
        self._seed_files()
        key = self.rng.secret("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 300)
        self.public_key = ("-----BEGIN PUBLIC KEY-----\n" + "\n".join(key[i:i + 64] for i in range(0, len(key), 64))
                           + "\n-----END PUBLIC KEY-----\n")
        self.profiles = Profiles(self.state, self.catalog_action("audience_platform.create_profile").status)
        self.audiences, self.integrations = Audiences(self.state), Integrations(self.state)
        self.notifications = Notices(self.state)
        self.extra_routes.append(Extra("GET", re.escape(self.service.base_path + FILES_PATH)
                                       + r"(?P<name>[A-Za-z0-9_.-]+)", self.audiences.serve_file,
                                       name="audience file"))
        answered = {
            self.audiences: ("import_audience", "update_audience", "list_audience_metadata", "list_audiences",
                             "get_audience", "get_profile_audiences", "get_audience_membership"),
            self.integrations: ("start_communication", "update_analytics_audience", "list_analytics_audiences",
                                "get_analytics_audience", "update_jwks_configuration", "list_jwks_endpoints"),
            self.notifications: ("get_metric", "list_notifications", "delete_notification", "delete_notifications"),
            self.profiles: ("anonymize_profile", "remove_profile_property", "create_profile", "get_profile",
                            "update_profile", "delete_profile", "get_profile_schema", "get_profile_property",
                            "create_profile_property", "update_profile_property", "delete_profile_property"),
            self: ("get_vault_public_key", "get_service_health", "get_version", "create_user", "update_user",
                   "delete_user"),
        }
        self.handlers.update({f"audience_platform.{name}": getattr(part, name)
                              for part, names in answered.items() for name in names})
        integrations = self.integrations
        for action, config in CONFIG_ACTIONS.items():
            self.handlers[f"audience_platform.get_{action}_configuration"] = integrations.get_config(config)
            self.handlers[f"audience_platform.update_{action}_configuration"] = integrations.patch_config(config)
        for kind, fields, allowed in (("audience", AUDIENCE_QUERY, AUDIENCE_QUERY_PATCH),
                                      ("profile", PROFILE_QUERY, PROFILE_QUERY_PATCH)):
            collection = f"{kind} query definitions"
            self.handlers[f"audience_platform.create_warehouse_{kind}_query"] = integrations.create_query(
                collection, fields)
            self.handlers[f"audience_platform.update_warehouse_{kind}_query"] = integrations.patch_query(
                collection, fields, allowed)
            self.handlers[f"audience_platform.get_warehouse_{kind}_query"] = integrations.get_query(collection)
            self.handlers[f"audience_platform.delete_warehouse_{kind}_query"] = integrations.delete_query(collection)

    # --- seed -------------------------------------------------------------------------------

    def _ago(self, low_days: float, high_days: float) -> str:
        return iso(self.rng.instant(self.epoch - timedelta(days=high_days), self.epoch - timedelta(days=low_days)))

    def _seed_audiences(self) -> None:
        definitions = {a[3]: a[0] for a in WAREHOUSE_AUDIENCES}
        records = []
        for aid, name, provider, tags, system_tags, _share, scope in AUDIENCES:
            if provider == "analytics":
                account, prop, _ = ANALYTICS_PROPERTIES[TRACKED[aid]]
                condition = {"type": "analyticsAudienceCondition",
                             "parameterValues": {"accountId": account, "propertyId": prop, "audienceId": aid}}
            elif provider == "warehouse":
                condition = {"type": "warehouseQueryCondition",
                             "parameterValues": {"definitionId": definitions[aid]}}
            elif provider == "import":
                condition = {"type": "importedMembersCondition", "parameterValues": {"source": "enclosed"}}
            else:
                condition = {"type": "profileSegmentCondition",
                             "parameterValues": {"segments": [aid], "matchType": "in"}}
            records.append({"id": aid, "name": name, "description": f"{DESCRIPTIONS[provider]}: {name}",
                            "scope": scope, "tags": list(tags), "systemTags": list(system_tags),
                            "provider": provider, "enabled": aid != "qa-test-audience",
                            "hidden": "hidden" in system_tags, "readOnly": provider in ("analytics", "warehouse"),
                            "condition": condition, "lastUpdated": self._ago(0.1, 60)})
        self.store["audiences"].extend(records)

    def _seed_analytics(self) -> None:
        self.state.stale_definitions = {"8765432102", "9123456712"}
        names = {a[0]: a[1] for a in AUDIENCES}
        for k, (account, prop, kind) in enumerate(ANALYTICS_PROPERTIES):
            base = 8765432100 if account == "123456789" else 9123456700
            records = []
            for aid in (a for a, where in TRACKED.items() if where == k):
                refreshed = self._ago(0.05, 1)
                records.append({"accountId": account, "propertyId": prop, "propertyType": kind, "audienceId": aid,
                                "name": names[aid], "description": f"{names[aid]} ({kind} {prop})",
                                "active": True, "definitionVersion": self.rng.randrange(1, 6),
                                "membershipDurationDays": self.rng.choice((30, 60, 90, 540)),
                                "lastDefinitionRefresh": refreshed, "lastMembershipRefresh": refreshed,
                                "memberCount": self.state.members.count(aid)})
            for j in range(3 + self.rng.randrange(4)):
                name = INACTIVE_NAMES[(k * 3 + j) % len(INACTIVE_NAMES)]
                records.append({"accountId": account, "propertyId": prop, "propertyType": kind,
                                "audienceId": str(base + 40 + k * 10 + j), "name": name,
                                "description": f"{name} ({kind} {prop})", "active": False,
                                "definitionVersion": 1, "membershipDurationDays": self.rng.choice((30, 540)),
                                "lastDefinitionRefresh": None, "lastMembershipRefresh": None, "memberCount": None})
            self.state.analytics[(account, prop)] = records

    def _seed_warehouse(self) -> None:
        audiences = []
        for did, name, table, aid, audience_name, tags, active in WAREHOUSE_AUDIENCES:
            audiences.append({"id": did, "active": active, "name": name, "description": f"{name} from {table}",
                              "projectId": PROJECT, "datasetName": "crm" if "crm" in table else "marketing",
                              "tableName": table, "audienceId": aid, "audienceName": audience_name,
                              "audienceDescription": f"{DESCRIPTIONS['warehouse']}: {audience_name}",
                              "audienceTags": list(tags),
                              "lastMembershipRefresh": self._ago(0.1, 2) if active else None})
        self.store["audience query definitions"].extend(audiences)
        profiles = []
        for did, name, table, column, active in WAREHOUSE_PROFILES:
            profiles.append({"id": did, "active": active, "name": name, "description": f"{name} from {table}",
                             "projectId": PROJECT, "datasetName": "crm", "tableName": table,
                             "profileIdColumn": column,
                             "lastMembershipRefresh": self._ago(0.1, 2) if active else None})
        self.store["profile query definitions"].extend(profiles)

    def _seed_users(self) -> None:
        users = [{"username": INTEGRATION_USER, "firstName": "CDP", "lastName": "Integration",
                  "email": "cdp-integration@acme.example", "roles": ["integration", "administrator"],
                  "enabled": True, "created": self._ago(400, 700)}]
        for username, first, last, roles, enabled in USERS:
            users.append({"username": username, "firstName": first, "lastName": last,
                          "email": f"{first.lower()}.{last.lower()}@acme.example", "roles": list(roles),
                          "enabled": enabled, "created": self._ago(10, 600)})
        self.store["users"].extend(users)

    def _service_account(self, project: str, account: str) -> str:
        """A service account key file's contents with seeded key material; each part is a secret."""
        rng = self.secret_rng
        body = rng.secret("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 64)
        key_id = rng.hex(40)
        text = orjson.dumps({
            "type": "service_account", "project_id": project, "private_key_id": key_id,
            "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
            "client_email": f"{account}@{project}.iam.gserviceaccount.com",
            "client_id": str(rng.randrange(10**20, 10**21)),
            "token_uri": "https://oauth2.googleapis.com/token"}).decode()
        self.seeded_secrets += [text, body, key_id]
        return text

    def _seed_configs(self) -> None:
        client_secret, password = self.secret_rng.secret("dgs_", 40), self.secret_rng.secret("", 20)
        self.seeded_secrets += [client_secret, password]
        self.state.configs = {
            "merge": {"enabled": True},
            "cxi": {"enabled": True, "credentialsJson": self._service_account("acme-cxi", "cxi-sync"),
                    "sslEnabled": True},
            "docgen": {"baseRestUrl": "https://docgen.acme.example/orchestration/api/v1",
                       "tokenUrl": "https://login.acme.example/oauth2/token", "grantType": "client_credentials",
                       "clientId": "cdp-docgen", "clientSecret": client_secret, "username": "docgen-svc",
                       "password": password, "enabled": True, "scope": "docgen.write",
                       "communicationMap": {"welcome": "COMM-0001", "winback": "COMM-0007",
                                            "birthday": "COMM-0012"}},
            "analytics": {"analyticsScopes": ["https://www.googleapis.com/auth/analytics.readonly"],
                          "audienceDefinitionRefreshInterval": "PT12H", "audienceMembershipRefreshInterval": "P1D",
                          "audienceMemberIndexPersistenceBulkSize": 500, "enabled": True,
                          "googleCredentialsJson": self._service_account(PROJECT, "cdp-analytics"),
                          "profileDimensionName": "customUser:clientId",
                          "profileDimensionIds": {"312345678": "customUser:clientId",
                                                  "398765432": "customUser:cdpProfileId"}},
            "warehouse": {"queryResultsMaximumPageSize": 10000, "readTimeout": 60000,
                          "bigQueryScopes": ["https://www.googleapis.com/auth/bigquery.readonly"], "enabled": True,
                          "googleCredentialsJson": self._service_account(PROJECT, "cdp-warehouse"),
                          "rootUrl": "https://bigquery.googleapis.com"},
        }
        self.state.jwks = {"enabled": False, "endpoints": [
            {"url": "https://login.acme.example/.well-known/jwks.json", "added": self._ago(30, 200)}]}

    def _seed_files(self) -> None:
        """Packages the import can read: files the sandbox serves, and the catalog's example URL."""
        count = self.state.population.count
        pick = [self.state.population.id(i * 7919 % count) for i in range(min(count, 40))]

        def package(aid: str, name: str, tags: list[str], members: list[str]) -> bytes:
            return orjson.dumps({"type": "enclosed", "audience": {"id": aid, "name": name, "tags": tags,
                                                                  "description": f"{name} (partner file)"},
                                 "members": members}, option=orjson.OPT_INDENT_2)
        self.state.files = {
            "vip-event-2027.json": package("vip-event-2027", "VIP event guest list 2027", ["vip", "events"],
                                           pick[:12]),
            "partner-upload.json": package("partner-leads-q4", "Partner leads Q4", ["b2b", "partners"],
                                           pick[12:30] + ["00000000-0000-4000-8000-000000000000"]),
            "broken.json": b'{"type": "enclosed", "audience": {"id": "broken", ',
            "no-name.json": orjson.dumps({"type": "enclosed", "audience": {"id": "no-name"}, "members": []}),
        }
        self.state.remote_files = {"https://files.example.com/audience.json": package(
            "partner-newsletter-optins", "Partner newsletter opt-ins", ["newsletter", "partners"], pick[30:40])}

    # --- credentials ------------------------------------------------------------------------

    def make_credentials(self) -> dict[str, str]:
        return {"token": self.secret_rng.secret("sbx_"), "username": INTEGRATION_USER,
                "password": self.secret_rng.secret("pw_", 24)}

    def login(self, request: Request) -> str | None:
        """The user a request acts as: the token's (the integration user) or the Basic one's."""
        token = request.bearer()
        if token is not None:
            return INTEGRATION_USER if token == self._credentials["token"] or token in self.issued else None
        basic = request.basic()
        if basic is None:
            return None
        user, password = basic
        record = self.store["users"].get(user)
        if record is None or not record.get("enabled") or self.passwords.get(user) != password:
            return None
        return user

    def authenticate(self, request: Request) -> bool:
        return self.login(request) is not None

    def secrets(self) -> list[str]:
        held = super().secrets() + self.seeded_secrets + list(self.passwords.values())
        for config in self.state.configs.values():
            held += [v for k, v in config.items() if isinstance(v, str) and k in
                     ("credentialsJson", "clientSecret", "password", "googleCredentialsJson")]
        return list(dict.fromkeys(s for s in held if s))

    def examples(self) -> dict[str, Any]:
        count = self.state.population.count
        spread = [self.state.population.id(i * count // min(count, 100)) for i in range(min(count, 100))]
        profile_ids = [p for p in spread if self.state.profile(p) is not None]
        first_notice = self.state.notices[0:1]
        return {
            "profile_id": profile_ids[0] if profile_ids else None, "profile_ids": profile_ids,
            "audience_id": "8765432101",        # a tracked analytics audience: a platform audience too
            "audience_ids": [a["id"] for a in self.store["audiences"]],
            "account_id": "123456789", "property_id": "UA-123456789-1",   # the analytics web property
            "schema_property_id": "loyaltyTier", "property_name": "phoneNumber",
            "definition_id": "dw-crm-customers", "audience_definition_id": "dw-crm-customers",
            "profile_definition_id": "dw-crm-customers",
            "notification_id": first_notice[0]["id"] if first_notice else None,
            "username": "a.dubois", "metric_id": "profiles.created", "metric_ids": [m[0] for m in METRICS],
            "scope": "web", "communication_id": "welcome",
            # the tracked analytics audience above is readOnly: a tag patch goes to a manual one; a user
            # created as the username above exists already: the catalog's example is one that does not
            "overrides": {"audience_platform.update_audience": {"audience_id": "newsletter-subscribers"},
                          "audience_platform.create_user": {"username": NEW_USER}},
        }

    def on_advance(self, now: datetime) -> None:
        self.audiences.run_imports()

    # --- users ------------------------------------------------------------------------------

    def _user_fields(self, body: dict[str, Any]) -> None:
        if body.get("email") is not None and not _EMAIL.fullmatch(body["email"]):
            raise Reject(400, "email must be an e-mail address")
        unknown = [r for r in body.get("roles") or () if r not in ROLES]
        if unknown:
            raise Reject(400, f"unknown role {unknown[0]}; roles are {', '.join(ROLES)}")
        if body.get("password") is not None and len(body["password"]) < 8:
            raise Reject(400, "password must have at least 8 characters")

    def create_user(self, request: Request) -> dict[str, Any]:
        body = checked(request.json(), USER_FIELDS)
        username = body.get("username")
        if not isinstance(username, str) or not username.strip():
            raise Reject(400, "username must not be blank", errors=["username: must not be blank"])
        if re.search(r"[\s/]", username):
            raise Reject(400, "username must not contain spaces or '/'")
        self._user_fields(body)
        users = self.store["users"]
        if username in users:
            raise Reject(409, f"user {username} already exists")
        password = body.pop("password", None)
        if password:
            self.passwords[username] = password
        record = {"username": username, "firstName": None, "lastName": None, "email": None, "roles": [],
                  "enabled": True, **body, "created": iso(self.clock.now())}
        return users.add(record)

    def _user(self, request: Request) -> dict[str, Any]:
        username = request.params["username"]
        if not username.strip():
            raise Reject(400, "username must not be blank")
        return self.store["users"].require(username, "user")

    def update_user(self, request: Request) -> dict[str, Any]:
        record = self._user(request)
        body = checked(request.json(), USER_FIELDS)
        if body.get("username", record["username"]) != record["username"]:
            raise Reject(400, "username cannot be changed")
        self._user_fields(body)
        if "password" in body:
            password = body.pop("password")
            if password is None:
                self.passwords.pop(record["username"], None)
            else:
                self.passwords[record["username"]] = password
        for name, value in body.items():
            record[name] = ([] if name == "roles" else None) if value is None else value
        return record

    def delete_user(self, request: Request) -> Response:
        record = self._user(request)
        if record["username"] == self.login(request):
            raise Reject(400, "the logged-in user cannot delete itself")
        self.store["users"].remove(record["username"])
        self.passwords.pop(record["username"], None)
        return Response(204)

    # --- system -----------------------------------------------------------------------------

    def get_vault_public_key(self, request: Request) -> Response:
        return Response(200, self.public_key, content_type="text/plain")

    def get_service_health(self, request: Request) -> dict[str, Any]:
        return {"status": "UP", "checked": iso(self.clock.now()), "services": [
            {"name": "vault", "status": "UP", "message": "unsealed; transit engine ready"},
            {"name": "core-data", "status": "UP",
             "message": f"profile store reachable; {len(self.store['audiences'])} audiences"}]}

    def get_version(self, request: Request) -> dict[str, Any]:
        return {"version": "3.4.2", "buildNumber": "3.4.2-b1187", "buildDate": "2026-10-14T16:22:05Z",
                "apiVersions": ["v1", "v2"]}


EMULATOR = AudiencePlatform
