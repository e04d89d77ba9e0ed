"""Profiles, the profile schema and privacy of the audience platform emulator (a part it holds).

Seeded profiles are computed from their index until something writes to one; then it is kept as a
dict (`State.profiles`). The schema is built from the property entries as a JSON Schema 2019-09
document; `validate=true` checks a profile against it with jsonschema's Draft201909Validator, and a
profile that fails is not saved. The data policy guards schema changes: `disallow` refuses to
create, patch or delete a property that any profile holds (409); `allow` goes ahead. Deleting a
property takes it out of the schema but leaves the values profiles hold (a later `disallow` still
sees them). `segments` of a profile are its audience memberships.
"""
from __future__ import annotations

__all__ = ["ARRAY_KEYWORDS", "FORMATS", "KEYWORDS", "META_FIELDS", "PERSONAL", "PROFILE_FIELDS", "Profiles",
           "VALUE_TYPES", "property_schema", "schema_problems"]

import copy
import re
from datetime import datetime
from typing import Any

import json_merge_patch
from jsonschema import Draft201909Validator, FormatChecker
from jsonschema.exceptions import SchemaError

from toolkit.sandbox.audience_platform.seed import GENERATED, PII
from toolkit.sandbox.audience_platform.state import State
from toolkit.sandbox.clock import iso
from toolkit.sandbox.exchange import Reject, Request, Response

FORMATS: FormatChecker = copy.deepcopy(Draft201909Validator.FORMAT_CHECKER)


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    if isinstance(value, str):
        if "T" not in value.upper():
            raise ValueError(f"{value!r} is not a date-time")
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
        if parsed.tzinfo is None:
            raise ValueError(f"{value!r} has no time zone")
    return True


# property value types → JSON Schema
VALUE_TYPES = {"string": {"type": "string"}, "integer": {"type": "integer"}, "long": {"type": "integer"},
               "float": {"type": "number"}, "double": {"type": "number"}, "number": {"type": "number"},
               "boolean": {"type": "boolean"}, "date": {"type": "string", "format": "date-time"},
               "email": {"type": "string", "format": "email"}, "object": {"type": "object"}}
META_FIELDS = {"id", "name", "description", "type", "multivalued", "tags", "systemTags", "scope"}
KEYWORDS = {"enum", "const", "format", "pattern", "minLength", "maxLength", "minimum", "maximum",
            "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
            "default", "examples"}
ARRAY_KEYWORDS = {"minItems", "maxItems", "uniqueItems"}
PERSONAL = {PII, "personalIdentifier"}
PROFILE_FIELDS = {"itemId", "itemType", "version", "properties", "systemProperties", "segments", "scores",
                  "consents"}
_PROPERTY_ID = re.compile(r"[A-Za-z0-9]+")


def property_schema(entry: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema fragment of one property entry."""
    value = dict(VALUE_TYPES[entry["type"]])
    value.update({k: v for k, v in entry.items() if k in KEYWORDS and k not in ARRAY_KEYWORDS})
    if entry.get("name"):
        value["title"] = entry["name"]
    if entry.get("multivalued"):
        array = {"type": "array", "items": {k: v for k, v in value.items() if k != "title"}}
        array.update({k: v for k, v in entry.items() if k in ARRAY_KEYWORDS})
        if entry.get("name"):
            array["title"] = entry["name"]
        return array
    return value


def schema_problems(schema: dict[str, Any], document: Any) -> list[str]:
    validator = Draft201909Validator(schema, format_checker=FORMATS)
    found = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found]


class Profiles:
    """Profiles, schema and privacy, over the platform's state.

    `created_status`: what a created profile answers (the catalog's status of create_profile).
    """

    def __init__(self, state: State, created_status: int) -> None:
        self.state, self.created_status = state, created_status

    # --- profiles ---------------------------------------------------------------------------

    def profile_wire(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "segments": self.state.members.of(record["itemId"])}

    def save_profile(self, record: dict[str, Any]) -> None:
        record["systemProperties"] = {**record.get("systemProperties", {}), "lastUpdated": iso(self.state.clock.now())}
        self.state.profiles[record["itemId"]] = record

    def holders(self, name: str) -> bool:
        """Whether any profile holds a value for the property."""
        population, profiles, deleted = self.state.population, self.state.profiles, self.state.deleted
        for record in profiles.values():
            if name in record.get("properties", {}):
                return True
        if name not in GENERATED:
            return False
        for index in range(population.count):
            profile_id = population.id(index)
            if (profile_id not in profiles and profile_id not in deleted
                    and name in population.profile(index)["properties"]):
                return True
        return False

    def profile_schema(self) -> dict[str, Any]:
        properties = {entry["id"]: property_schema(entry) for entry in self.state.store["properties"]}
        return {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$id": "https://cdp.sandbox.invalid/schemas/profile/1-0-0",
            "title": "Profile", "type": "object", "required": ["itemId"],
            "properties": {
                "itemId": {"type": "string", "minLength": 1, "pattern": r"\S"},
                "itemType": {"const": "profile"},
                "version": {"type": "integer"},
                "properties": {"type": "object", "properties": properties, "additionalProperties": False},
                "systemProperties": {"type": "object"},
                "segments": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                "scores": {"type": "object", "additionalProperties": {"type": "integer"}},
                "consents": {"type": "object"},
            },
            "additionalProperties": False,
        }

    def _validated(self, request: Request, document: dict[str, Any]) -> None:
        flag = (request.arg("validate") or "false").lower()
        if flag not in ("true", "false"):
            raise Reject(400, f"validate must be true or false, not {flag!r}")
        if flag == "true":
            problems = schema_problems(self.profile_schema(), document)
            if problems:
                raise Reject(400, "the profile does not match the profile schema", errors=problems)

    def _segments(self, document: dict[str, Any]) -> set[str] | None:
        segments = document.get("segments")
        if segments is None:
            return None
        if not isinstance(segments, list) or not all(isinstance(s, str) for s in segments):
            raise Reject(400, "segments must be a list of audience ids")
        unknown = [s for s in segments if s not in self.state.store["audiences"]]
        if unknown:
            raise Reject(404, f"audience {unknown[0]} not found")
        return set(segments)

    def create_profile(self, request: Request) -> Response:
        body = request.json()
        if not isinstance(body, dict):
            raise Reject(400, "the body must be a profile object")
        item_id = body.get("itemId")
        if not isinstance(item_id, str) or not item_id.strip():
            raise Reject(400, "itemId must not be blank", errors=["itemId: must not be blank"])
        if self.state.profile(item_id) is not None:
            raise Reject(409, f"profile {item_id} already exists")
        for field in ("properties", "systemProperties", "scores", "consents"):
            if field in body and not isinstance(body[field], dict):
                raise Reject(400, f"{field} must be an object")
        document = {"itemType": "profile", "version": 1, "properties": {}, "systemProperties": {},
                    "scores": {}, "consents": {}, **body}
        self._validated(request, document)
        segments = self._segments(document) or set()
        document.pop("segments", None)
        document["systemProperties"] = {**document["systemProperties"], "createdAt": iso(self.state.clock.now())}
        self.state.deleted.discard(item_id)
        self.save_profile(document)
        self.state.members.set_profile(item_id, segments, fresh=True)
        return Response(self.created_status,
                        self.profile_wire(document))

    def get_profile(self, request: Request) -> dict[str, Any]:
        return self.profile_wire(self.state.require_profile(request.params["profile_id"]))

    def update_profile(self, request: Request) -> dict[str, Any]:
        record = self.state.require_profile(request.params["profile_id"])
        patch = request.json()
        if not isinstance(patch, dict):
            raise Reject(400, "the body must be a JSON Merge Patch object")
        if "itemId" in patch and patch["itemId"] != record["itemId"]:
            raise Reject(400, "itemId cannot be changed")
        current = self.profile_wire(record)
        # json_merge_patch merges into its target in place: a copy, so a refused patch changes nothing
        merged = json_merge_patch.merge(copy.deepcopy(current), patch)
        for field in ("properties", "systemProperties", "scores", "consents"):
            if not isinstance(merged.setdefault(field, {}), dict):
                raise Reject(400, f"{field} must be an object")
        self._validated(request, merged)
        segments = self._segments(merged) if "segments" in patch else None
        merged.pop("segments", None)
        merged["version"] = int(record.get("version") or 0) + 1
        self.save_profile(merged)
        if segments is not None:
            self.state.members.set_profile(record["itemId"], segments)
        return self.profile_wire(merged)

    def delete_profile(self, request: Request) -> Response:
        record = self.state.require_profile(request.params["profile_id"])
        profile_id = record["itemId"]
        self.state.profiles.pop(profile_id, None)
        self.state.deleted.add(profile_id)
        self.state.members.drop(profile_id)
        return Response(204)

    # --- privacy ----------------------------------------------------------------------------

    def anonymize_profile(self, request: Request) -> dict[str, Any]:
        record = copy.deepcopy(self.state.require_profile(request.params["profile_id"]))
        personal = {e["id"] for e in self.state.store["properties"] if PERSONAL & set(e.get("systemTags") or ())}
        removed = sorted(personal & set(record["properties"]))
        for name in removed:
            del record["properties"][name]
        system = record.setdefault("systemProperties", {})
        system.pop("mergeIdentifier", None)
        system["anonymized"] = iso(self.state.clock.now())
        if request.arg("scope"):
            system["anonymizedScope"] = request.arg("scope")
        self.save_profile(record)
        self.state.notify("privacy", "INFO", f"Profile anonymized on request ({len(removed)} properties removed)",
                    {"profileId": record["itemId"], "scope": request.arg("scope")})
        return self.profile_wire(record)

    def remove_profile_property(self, request: Request) -> Response:
        name = request.params["property_name"]
        if not name.strip():
            raise Reject(400, "propertyName must not be blank")
        record = copy.deepcopy(self.state.require_profile(request.params["profile_id"]))
        if name in record["properties"]:          # deleting what is not there is no error
            del record["properties"][name]
            self.save_profile(record)
        return Response(204)

    # --- schema -----------------------------------------------------------------------------

    def get_profile_schema(self, request: Request) -> dict[str, Any]:
        return self.profile_schema()

    def _policy(self, request: Request, name: str, verb: str) -> None:
        policy = request.arg("profileDataPolicy") or "disallow"
        if policy not in ("allow", "disallow"):
            raise Reject(400, f"profileDataPolicy must be allow or disallow, not {policy!r}")
        if policy == "disallow" and self.holders(name):
            raise Reject(409, f"cannot {verb} property {name}: profiles hold values for it "
                              "(profileDataPolicy=disallow)")

    def _entry(self, body: Any, property_id: str | None = None) -> dict[str, Any]:
        """A checked property entry: id, known value type, known keywords, a valid schema fragment."""
        if not isinstance(body, dict):
            raise Reject(400, "the property definition must be a JSON object")
        entry = dict(body)
        entry_id = entry.get("id", property_id)
        if property_id is not None and entry_id != property_id:
            raise Reject(400, "the property id cannot be changed")
        if not isinstance(entry_id, str) or not _PROPERTY_ID.fullmatch(entry_id):
            raise Reject(400, "id must be one or more alphanumeric characters")
        entry["id"] = entry_id
        unknown = sorted(set(entry) - META_FIELDS - KEYWORDS)
        if unknown:
            raise Reject(400, f"unknown property definition fields: {', '.join(unknown)}")
        entry.setdefault("type", "string")
        if entry["type"] not in VALUE_TYPES:
            raise Reject(400, f"type must be one of {', '.join(VALUE_TYPES)}")
        entry.setdefault("name", entry_id)
        entry.setdefault("multivalued", False)
        for field in ("tags", "systemTags"):
            entry.setdefault(field, [])
            if not isinstance(entry[field], list) or not all(isinstance(t, str) for t in entry[field]):
                raise Reject(400, f"{field} must be a list of strings")
        if not isinstance(entry["multivalued"], bool):
            raise Reject(400, "multivalued must be true or false")
        try:
            Draft201909Validator.check_schema(property_schema(entry))
        except SchemaError as error:
            raise Reject(400, f"invalid property definition: {error.message}") from None
        return entry

    def create_profile_property(self, request: Request) -> dict[str, Any]:
        """Creates or replaces the property (a save, as Unomi's); the data policy guards a held one."""
        entry = self._entry(request.json())
        self._policy(request, entry["id"], "save")
        properties = self.state.store["properties"]
        if entry["id"] in properties:
            properties.records[entry["id"]].clear()
            properties.records[entry["id"]].update(entry)
        else:
            properties.add(entry)
        return properties.records[entry["id"]]

    def _property(self, request: Request) -> dict[str, Any]:
        property_id = request.params["property_id"]
        if not _PROPERTY_ID.fullmatch(property_id):
            raise Reject(400, "propertyId must be one or more alphanumeric characters")
        return self.state.store["properties"].require(property_id, "property")

    def get_profile_property(self, request: Request) -> dict[str, Any]:
        return self._property(request)

    def update_profile_property(self, request: Request) -> dict[str, Any]:
        current = self._property(request)
        patch = request.json()
        if not isinstance(patch, dict):
            raise Reject(400, "the body must be a JSON Merge Patch object")
        entry = self._entry(json_merge_patch.merge(copy.deepcopy(current), patch), current["id"])
        self._policy(request, current["id"], "change")
        current.clear()
        current.update(entry)
        return current

    def delete_profile_property(self, request: Request) -> Response:
        current = self._property(request)
        self._policy(request, current["id"], "delete")
        self.state.store["properties"].remove(current["id"])
        return Response(204)
