"""Integration configurations, analytics audiences, warehouse query definitions and document generation.

Every configuration is read with GET and changed with a JSON Merge Patch checked field by field on
the server (unknown fields, types, URLs, PT1H..P30D durations, readTimeout >= 0, the password grant's
username): a bad patch changes nothing. Secrets read back as "***"; a patch that sends "***" back
keeps the stored secret, as a form round trip would.

Analytics audiences per account and web property: `active` ones are tracked as platform audiences
of provider `analytics` (same id); `refreshDefinition` and `refreshMemberships` need an active one.
"""
from __future__ import annotations

__all__ = ["AUDIENCE_QUERY", "AUDIENCE_QUERY_PATCH", "CONFIG_ACTIONS", "CONFIG_FIELDS", "CUSTOM_CLIENT_ID",
           "GRANTS", "Integrations", "PROFILE_QUERY", "PROFILE_QUERY_PATCH", "REQUIRED_QUERY", "SERVICE_MASK",
           "SYSTEM_CLIENT_ID", "check_field", "checked", "parse_duration", "valid_url"]

import copy
import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import json_merge_patch
import orjson

from toolkit.sandbox.audience_platform.profiles import FORMATS
from toolkit.sandbox.audience_platform.seed import Population, key64, mix64
from toolkit.sandbox.audience_platform.state import State
from toolkit.sandbox.clock import iso
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.pages import answer_list

SERVICE_MASK = "***"  # what the platform itself answers for a secret (its document), not toolkit's mask
GRANTS = ("client_credentials", "password")
# the dimensions a blank profileDimensionName stands for: the older property type's system client id,
# the newer type's default custom dimension
SYSTEM_CLIENT_ID, CUSTOM_CLIENT_ID = "ga:clientId", "customUser:clientId"
# configuration → field → kind; secret fields read back masked
CONFIG_FIELDS: dict[str, dict[str, str]] = {
    "merge": {"enabled": "bool"},
    "cxi": {"enabled": "bool", "credentialsJson": "secret_json", "sslEnabled": "bool"},
    "docgen": {"baseRestUrl": "url", "tokenUrl": "url", "grantType": "grant", "clientId": "str",
               "clientSecret": "secret", "username": "str", "password": "secret", "communicationMap": "map",
               "enabled": "bool", "scope": "str"},
    "analytics": {"analyticsScopes": "strings", "audienceDefinitionRefreshInterval": "duration",
                  "audienceMembershipRefreshInterval": "duration",
                  "audienceMemberIndexPersistenceBulkSize": "positive", "enabled": "bool",
                  "googleCredentialsJson": "secret_json", "profileDimensionName": "str",
                  "profileDimensionIds": "map"},
    "warehouse": {"queryResultsMaximumPageSize": "positive", "readTimeout": "non_negative",
                  "bigQueryScopes": "strings", "enabled": "bool", "googleCredentialsJson": "secret_json",
                  "rootUrl": "url"},
}
CONFIG_ACTIONS = {"profile_merge": "merge", "experience_insights": "cxi", "document_generation": "docgen",
                  "analytics": "analytics", "warehouse": "warehouse"}
# Java's Duration.parse, as the real service reads durations: an optional sign, days, then T and hours,
# minutes and seconds (up to nine decimals after . or ,), each with its own sign; letters in either case
_DURATION = re.compile(r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?"
                       r"(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?", re.IGNORECASE | re.ASCII)
_LONG = 2**63

AUDIENCE_QUERY = {"id": "str", "active": "bool", "name": "str", "description": "str", "projectId": "str",
                  "datasetName": "str", "tableName": "str", "audienceId": "str", "audienceName": "str",
                  "audienceDescription": "str", "audienceTags": "strings", "lastMembershipRefresh": "datetime"}
PROFILE_QUERY = {"id": "str", "active": "bool", "name": "str", "description": "str", "projectId": "str",
                 "datasetName": "str", "tableName": "str", "profileIdColumn": "str",
                 "lastMembershipRefresh": "datetime"}
AUDIENCE_QUERY_PATCH = ("active", "name", "description", "audienceName", "audienceDescription", "audienceTags")
PROFILE_QUERY_PATCH = ("active", "name", "description", "profileIdColumn")
REQUIRED_QUERY = ("projectId", "datasetName", "tableName")


def parse_duration(text: str) -> timedelta | None:
    """The span, or None where Java throws (another grammar, more seconds than a long). A span Java
    reads but a timedelta cannot hold (past 999,999,999 days) is timedelta.max or .min: past any bound.
    Nanoseconds are cut to the microsecond a timedelta holds (the client compares to the nanosecond)."""
    found = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if found is None or (found.group(3) or "").upper() == "T" or not any(found.group(i) for i in (2, 4, 5, 6)):
        return None
    sign, days, _, hours, minutes, seconds, fraction = found.groups()
    parts = [int(number or 0) * unit for number, unit in ((days, 86_400), (hours, 3_600), (minutes, 60), (seconds, 1))]
    total = sum(parts)
    if any(not -_LONG <= n < _LONG for n in (*(int(g) for g in (days, hours, minutes, seconds) if g), *parts, total)):
        return None
    nanos = total * 10**9 + (-1 if (seconds or "").startswith("-") else 1) * int((fraction or "").ljust(9, "0"))
    nanos = -nanos if sign == "-" else nanos
    try:
        return timedelta(microseconds=nanos // 1000)
    except OverflowError:
        return timedelta.max if nanos > 0 else timedelta.min


def valid_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
        parts.port      # noqa: B018 - a port that is not a number raises only when read
    except ValueError:  # http://[::1 is not a URL: the client's 400, not a 500
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def check_field(name: str, kind: str, value: Any) -> str | None:
    """The problem with one field's value, or None (null is always fine: it clears the field)."""
    if value is None:
        return None
    if kind == "bool" and not isinstance(value, bool):
        return f"{name} must be true or false"
    if kind in ("str", "secret", "secret_json") and not isinstance(value, str):
        return f"{name} must be a string"
    if kind == "secret_json" and value != SERVICE_MASK:
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return f"{name} must be the contents of a service account key file (JSON)"
        if not isinstance(parsed, dict):
            return f"{name} must be the contents of a service account key file (JSON)"
    if kind == "url" and not valid_url(value):
        return f"{name} must be a valid URL"
    if kind == "grant" and value not in GRANTS:
        return f"{name} must be one of {', '.join(GRANTS)}"
    if kind == "strings" and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        return f"{name} must be a list of strings"
    if kind == "map" and (not isinstance(value, dict)
                          or not all(isinstance(v, str | None) for v in value.values())):
        return f"{name} must be an object of strings"
    if kind in ("positive", "non_negative"):
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{name} must be an integer"
        if value < (1 if kind == "positive" else 0):
            return f"{name} must be {'positive' if kind == 'positive' else '0 or more'}"
    if kind == "duration":
        span = parse_duration(value)
        if span is None:
            return f"{name} must be an ISO-8601 duration such as PT1H or P7D"
        if not timedelta(hours=1) <= span <= timedelta(days=30):
            return f"{name} must be between PT1H and P30D"
    if kind == "datetime" and (not isinstance(value, str) or not FORMATS.conforms(value, "date-time")):
        return f"{name} must be an ISO-8601 date-time"
    return None


def checked(body: Any, fields: dict[str, str], allowed: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The body if every field is known (and allowed) and well-typed, else Reject(400) with all problems."""
    if not isinstance(body, dict):
        raise Reject(400, "the body must be a JSON object")
    problems = []
    for name, value in body.items():
        if name not in fields:
            problems.append(f"{name}: unknown field")
        elif allowed is not None and name not in allowed:
            problems.append(f"{name}: cannot be changed")
        else:
            problem = check_field(name, fields[name], value)
            if problem:
                problems.append(problem)
    if problems:
        raise Reject(400, "invalid request: " + "; ".join(problems), errors=problems)
    return body


class Integrations:
    """Configurations, analytics audiences, warehouse definitions, communications and JWKS, over the
    platform's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    # --- configurations ---------------------------------------------------------------------

    def config_wire(self, name: str) -> dict[str, Any]:
        config = self.state.configs[name]
        shown = {}
        for field, kind in CONFIG_FIELDS[name].items():
            value = config.get(field)
            shown[field] = (SERVICE_MASK if value else None) if kind.startswith("secret") else value
        return shown

    def get_config(self, name: str):
        return lambda request: self.config_wire(name)

    def patch_config(self, name: str):
        def handler(request: Request) -> dict[str, Any]:
            fields = CONFIG_FIELDS[name]
            patch = checked(request.json(), fields)
            patch = {k: v for k, v in patch.items() if not (fields[k].startswith("secret") and v == SERVICE_MASK)}
            # merged into a copy (the library works in place): a refused patch changes nothing
            merged = json_merge_patch.merge(copy.deepcopy(self.state.configs[name]), patch)
            if name == "docgen" and merged.get("grantType") == "password" and not merged.get("username"):
                raise Reject(400, "the password grant needs a username", errors=["username: required"])
            self.state.configs[name] = merged
            return self.config_wire(name)
        return handler

    def update_jwks_configuration(self, request: Request) -> dict[str, Any]:
        body = checked(request.json(), {"enabled": "bool", "endpoints": "strings"})
        bad = [url for url in body.get("endpoints") or () if not valid_url(url)]
        if bad:
            raise Reject(400, f"endpoints must be valid URLs, not {bad[0]!r}")
        if body.get("enabled") is not None:
            self.state.jwks["enabled"] = body["enabled"]
        known = {e["url"] for e in self.state.jwks["endpoints"]}
        for url in body.get("endpoints") or ():
            if url not in known:
                self.state.jwks["endpoints"].append({"url": url, "added": iso(self.state.clock.now())})
                known.add(url)
        return {"enabled": self.state.jwks["enabled"], "endpoints": [e["url"] for e in self.state.jwks["endpoints"]]}

    def list_jwks_endpoints(self, request: Request) -> list[dict[str, Any]]:
        return [dict(e) for e in self.state.jwks["endpoints"]]

    # --- analytics audiences ----------------------------------------------------------------

    def _web_property(self, request: Request) -> list[dict[str, Any]]:
        account, prop = request.params["account_id"], request.params["property_id"]
        if not account.strip() or not prop.strip():
            raise Reject(400, "accountId and propertyId must not be blank")
        if not self.state.configs["analytics"].get("enabled"):
            raise Reject(409, "the analytics integration is disabled")
        found = self.state.analytics.get((account, prop))
        if found is None:
            raise Reject(404, f"web property {prop} not found in analytics account {account}")
        return found

    def _analytics_audience(self, request: Request) -> dict[str, Any]:
        audience_id = request.params["audience_id"]
        for record in self._web_property(request):
            if record["audienceId"] == audience_id:
                return record
        raise Reject(404, f"analytics audience {audience_id} not found")

    def list_analytics_audiences(self, request: Request) -> Response:
        return answer_list(request, request.action, self._web_property(request))

    def get_analytics_audience(self, request: Request) -> dict[str, Any]:
        return self._analytics_audience(request)

    def _flag(self, request: Request, name: str) -> bool:
        value = (request.arg(name) or "false").lower()
        if value not in ("true", "false"):
            raise Reject(400, f"{name} must be true or false, not {value!r}")
        return value == "true"

    def update_analytics_audience(self, request: Request) -> dict[str, Any]:
        record = self._analytics_audience(request)
        body = checked(request.json() or {}, {"active": "bool"})
        refresh_definition = self._flag(request, "refreshDefinition")
        refresh_members = self._flag(request, "refreshMemberships")
        active = record["active"] if body.get("active") is None else body["active"]
        if (refresh_definition or refresh_members) and not active:
            raise Reject(400, "only an active analytics audience can be refreshed")
        record["active"] = active
        audiences = self.state.store["audiences"]
        tracked = audiences.get(record["audienceId"])
        if active and tracked is None:
            tracked = audiences.add({
                "id": record["audienceId"], "name": record["name"], "description": record["description"],
                "scope": "web", "tags": [], "systemTags": ["analytics"], "provider": "analytics",
                "enabled": True, "hidden": False, "readOnly": True,
                "condition": {"type": "analyticsAudienceCondition", "parameterValues": {
                    "accountId": record["accountId"], "propertyId": record["propertyId"],
                    "audienceId": record["audienceId"]}},
                "lastUpdated": iso(self.state.clock.now())})
            self.state.audience_order[tracked["id"]] = len(self.state.audience_order)
            self.state.members.replace(tracked["id"], set())
        if tracked is not None:
            tracked["enabled"] = active
        now = iso(self.state.clock.now())
        if refresh_definition:
            record["lastDefinitionRefresh"] = now
            if record["audienceId"] in self.state.stale_definitions:       # the definition changed remotely
                self.state.stale_definitions.discard(record["audienceId"])
                record["definitionVersion"] += 1
                refresh_members = True
        if refresh_members:
            if record["audienceId"] in self.state.members.explicit:      # seeded ones keep their members
                self.state.members.replace(record["audienceId"], self._sample(record["audienceId"], share=0.12))
            count = self.state.members.count(record["audienceId"])
            record["lastMembershipRefresh"] = now
            record["memberCount"] = count
            self._record_dimension(record)
            if tracked is not None:          # it is: only an active audience is refreshed, and it is tracked
                tracked["lastUpdated"] = now
            self.state.notify("analyticsSync", "INFO",
                        f"Analytics audience {record['audienceId']} synchronised ({count} members)",
                        {"audienceId": record["audienceId"], "accountId": record["accountId"]})
        return record

    def _record_dimension(self, record: dict[str, Any]) -> None:
        """The dimension a refresh read the profile id from, recorded once per property: changes of the
        name are not retroactive, and removing an entry has the next refresh record it afresh. A blank
        name means the document's defaults: the older property type's system client-id dimension, the
        newer one's `customUser:clientId`."""
        config = self.state.configs["analytics"]
        recorded = config.setdefault("profileDimensionIds", {})
        if record["propertyId"] not in recorded:
            name = (config.get("profileDimensionName") or "").strip()
            default = SYSTEM_CLIENT_ID if record.get("propertyType") == "webProperty" else CUSTOM_CLIENT_ID
            recorded[record["propertyId"]] = name or default

    def _sample(self, audience_id: str, share: float) -> set[str]:
        """The profiles an analytics audience reports: a seeded share of the first 5000 profiles."""
        population: Population = self.state.population
        key = key64(self.state.seed, "analytics", audience_id)
        limit = min(population.count, 5000)
        picked = (population.id(i) for i in range(limit) if mix64(key ^ i) / 2**64 < share)
        return {p for p in picked if self.state.profile(p) is not None}

    # --- warehouse query definitions --------------------------------------------------------

    def create_query(self, collection: str, fields: dict[str, str]):
        def handler(request: Request) -> dict[str, Any]:
            body = checked(request.json(), fields)
            blank = [f for f in REQUIRED_QUERY if not isinstance(body.get(f), str) or not body[f].strip()]
            if blank:
                raise Reject(400, f"{', '.join(blank)} must not be blank",
                             errors=[f"{f}: must not be blank" for f in blank])
            target = self.state.store[collection]
            record = {f: None for f in fields} | {"active": False} | body
            if record.get("id") in (None, ""):
                record["id"] = self.state.new_id(collection)
            elif record["id"] in target:
                raise Reject(409, f"query definition {record['id']} already exists")
            if "audienceTags" in fields:
                record["audienceTags"] = list(record.get("audienceTags") or [])
            return target.add(record)
        return handler

    def patch_query(self, collection: str, fields: dict[str, str], allowed: tuple[str, ...]):
        def handler(request: Request) -> dict[str, Any]:
            definition_id = request.params["definition_id"]
            if not definition_id.strip():
                raise Reject(400, "definitionId must not be blank")
            record = self.state.store[collection].require(definition_id, "query definition")
            patch = checked(request.json(), fields, allowed)
            for name, value in patch.items():
                record[name] = ([] if name == "audienceTags" else None) if value is None else value
            return record
        return handler

    def get_query(self, collection: str):
        def handler(request: Request) -> dict[str, Any]:
            definition_id = request.params["definition_id"]
            if not definition_id.strip():
                raise Reject(400, "definitionId must not be blank")
            return self.state.store[collection].require(definition_id, "query definition")
        return handler

    def delete_query(self, collection: str):
        def handler(request: Request) -> Response:
            self.state.store[collection].remove(self.get_query(collection)(request)["id"])
            return Response(204)
        return handler

    # --- document generation ----------------------------------------------------------------

    def start_communication(self, request: Request) -> dict[str, Any]:
        body = checked(request.json(), {"communicationId": "str", "profileId": "str"})
        blank = [f for f in ("communicationId", "profileId") if not (body.get(f) or "").strip()]
        if blank:
            raise Reject(400, f"{', '.join(blank)} must not be blank",
                         errors=[f"{f}: must not be blank" for f in blank])
        config = self.state.configs["docgen"]
        if not config.get("enabled"):
            raise Reject(409, "the document generation integration is disabled")
        self.state.require_profile(body["profileId"])
        alias = body["communicationId"]
        resolved = (config.get("communicationMap") or {}).get(alias, alias)
        answer = {"requestId": self.state.ids.uuid(), "communicationId": resolved,
                  "alias": alias if resolved != alias else None, "profileId": body["profileId"],
                  "status": "INITIATED", "created": iso(self.state.clock.now())}
        self.state.notify("docgen", "INFO", f"Communication {resolved} started for profile {body['profileId']}",
                    {"communicationId": resolved, "profileId": body["profileId"]})
        return answer

