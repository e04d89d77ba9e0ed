"""Profiles, the profile schema and privacy of the audience platform emulator (a mixin of it).

Seeded profiles are computed from their index until something writes to one; then it is kept as a
dict (`self.profiles`). The schema is built from the property entries as a JSON Schema 2019-09
document; `validate=true` checks a profile against it with jsonschema's Draft201909Validator, and a
profile that fails is not saved. The data policy guards schema changes: `disallow` refuses to
create, patch or delete a property that any profile holds (409); `allow` goes ahead. Deleting a
property takes it out of the schema but leaves the values profiles hold (a later `disallow` still
sees them). `segments` of a profile are its audience memberships.
"""
from __future__ import annotations

import copy
import re
from collections import Counter
from datetime import datetime
from typing import Any

from jsonschema import Draft201909Validator, FormatChecker
from jsonschema.exceptions import SchemaError

from toolkit.sandbox.audience_platform_seed import GENERATED, PII, Layout, Population
from toolkit.sandbox.clock import iso
from toolkit.sandbox.store import merge_patch
from toolkit.sandbox.wire import Reject, Request, Response

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


class Memberships:
    """Who is in which audience: seeded ranges (Layout), per-profile overrides, explicit audiences."""

    def __init__(self, layout: Layout, population: Population, order: dict[str, int]) -> None:
        self.layout, self.population, self.order = layout, population, order
        self.override: dict[str, set[str]] = {}        # profile → its own audiences (written to)
        self.explicit: dict[str, set[str]] = {}        # audience → members (imported, synchronised)
        self.explicit_of: dict[str, set[str]] = {}     # profile → explicit audiences holding it
        self.lost: Counter[str] = Counter()            # seeded members no longer counted by the layout
        self.added: Counter[str] = Counter()           # members through overrides

    def _base(self, profile_id: str) -> list[str]:
        index = self.population.index(profile_id)
        return self.layout.of(index) if index is not None else []

    def _own(self, profile_id: str) -> set[str] | list[str]:
        return self.override[profile_id] if profile_id in self.override else self._base(profile_id)

    def of(self, profile_id: str) -> list[str]:
        found = {a for a in self._own(profile_id) if a not in self.explicit}
        found |= self.explicit_of.get(profile_id, set())
        return sorted(found, key=lambda a: self.order.get(a, len(self.order)))

    def has(self, audience_id: str, profile_id: str) -> bool:
        if audience_id in self.explicit:
            return profile_id in self.explicit[audience_id]
        if profile_id in self.override:
            return audience_id in self.override[profile_id]
        index = self.population.index(profile_id)
        return index is not None and self.layout.has(audience_id, index)

    def count(self, audience_id: str) -> int:
        if audience_id in self.explicit:
            return len(self.explicit[audience_id])
        return self.layout.size(audience_id) - self.lost[audience_id] + self.added[audience_id]

    def _release(self, profile_id: str, fresh: bool) -> None:
        """Stop counting the profile's own memberships (before they change or the profile goes)."""
        if profile_id in self.override:
            self.added.subtract(self.override.pop(profile_id))
        elif not fresh:
            self.lost.update(self._base(profile_id))

    def set_profile(self, profile_id: str, audiences: set[str], fresh: bool = False) -> None:
        """The profile's audiences, as written through `segments` (fresh: a profile just created)."""
        self._release(profile_id, fresh)
        own = {a for a in audiences if a not in self.explicit}
        self.override[profile_id] = own
        self.added.update(own)
        for audience_id in self.explicit:
            members = self.explicit[audience_id]
            if audience_id in audiences:
                members.add(profile_id)
                self.explicit_of.setdefault(profile_id, set()).add(audience_id)
            elif profile_id in members:
                members.discard(profile_id)
                self.explicit_of[profile_id].discard(audience_id)

    def drop(self, profile_id: str) -> None:
        self._release(profile_id, fresh=False)
        for audience_id in self.explicit_of.pop(profile_id, set()):
            self.explicit[audience_id].discard(profile_id)

    def replace(self, audience_id: str, members: set[str]) -> None:
        """The audience's members set outright (an import, a synchronisation)."""
        for profile_id in self.explicit.get(audience_id, set()):
            self.explicit_of[profile_id].discard(audience_id)
        self.explicit[audience_id] = set(members)
        for profile_id in members:
            self.explicit_of.setdefault(profile_id, set()).add(audience_id)


class ProfileHandlers:
    """Profiles, schema and privacy; mixed into the emulator, which sets the state in __init__."""

    # --- profiles ---------------------------------------------------------------------------

    def profile(self, profile_id: str) -> dict[str, Any] | None:
        record = self.profiles.get(profile_id)
        if record is not None or profile_id in self.deleted:
            return record
        index = self.population.index(profile_id)
        return None if index is None else self.population.profile(index)

    def require_profile(self, profile_id: str) -> dict[str, Any]:
        if not profile_id.strip():
            raise Reject(400, "profileId must not be blank")
        record = self.profile(profile_id)
        if record is None:
            raise Reject(404, f"profile {profile_id} not found")
        return record

    def profile_wire(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "segments": self.members.of(record["itemId"])}

    def save_profile(self, record: dict[str, Any]) -> None:
        record["systemProperties"] = {**record.get("systemProperties", {}), "lastUpdated": iso(self.clock.now())}
        self.profiles[record["itemId"]] = record

    def holders(self, name: str) -> bool:
        """Whether any profile holds a value for the property."""
        for record in self.profiles.values():
            if name in record.get("properties", {}):
                return True
        if name not in GENERATED:
            return False
        for index in range(self.population.count):
            profile_id = self.population.id(index)
            if (profile_id not in self.profiles and profile_id not in self.deleted
                    and name in self.population.profile(index)["properties"]):
                return True
        return False

    def profile_schema(self) -> dict[str, Any]:
        properties = {entry["id"]: property_schema(entry) for entry in self.store["properties"]}
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
        unknown = [s for s in segments if s not in self.store["audiences"]]
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
        if self.profile(item_id) is not None:
            raise Reject(409, f"profile {item_id} already exists")
        for field in ("properties", "systemProperties", "scores", "consents"):
            if field in body and not isinstance(body[field], dict):
                raise Reject(400, f"{field} must be an object")
        document = {"itemType": "profile", "version": 1, "properties": {}, "systemProperties": {},
                    "scores": {}, "consents": {}, **body}
        self._validated(request, document)
        segments = self._segments(document) or set()
        document.pop("segments", None)
        document["systemProperties"] = {**document["systemProperties"], "createdAt": iso(self.clock.now())}
        self.deleted.discard(item_id)
        self.save_profile(document)
        self.members.set_profile(item_id, segments, fresh=True)
        return Response(self.catalog_action("audience_platform.create_profile").status,
                        self.profile_wire(document))

    def get_profile(self, request: Request) -> dict[str, Any]:
        return self.profile_wire(self.require_profile(request.params["profile_id"]))

    def update_profile(self, request: Request) -> dict[str, Any]:
        record = self.require_profile(request.params["profile_id"])
        patch = request.json()
        if not isinstance(patch, dict):
            raise Reject(400, "the body must be a JSON Merge Patch object")
        if "itemId" in patch and patch["itemId"] != record["itemId"]:
            raise Reject(400, "itemId cannot be changed")
        current = self.profile_wire(record)
        merged = merge_patch(current, patch)
        for field in ("properties", "systemProperties", "scores", "consents"):
            if not isinstance(merged.setdefault(field, {}), dict):
                raise Reject(400, f"{field} must be an object")
        self._validated(request, merged)
        segments = self._segments(merged) if "segments" in patch else None
        merged.pop("segments", None)
        merged["version"] = int(record.get("version") or 0) + 1
        self.save_profile(merged)
        if segments is not None:
            self.members.set_profile(record["itemId"], segments)
        return self.profile_wire(merged)

    def delete_profile(self, request: Request) -> Response:
        record = self.require_profile(request.params["profile_id"])
        profile_id = record["itemId"]
        self.profiles.pop(profile_id, None)
        self.deleted.add(profile_id)
        self.members.drop(profile_id)
        return Response(204)

    # --- privacy ----------------------------------------------------------------------------

    def anonymize_profile(self, request: Request) -> dict[str, Any]:
        record = copy.deepcopy(self.require_profile(request.params["profile_id"]))
        personal = {e["id"] for e in self.store["properties"] if PERSONAL & set(e.get("systemTags") or ())}
        removed = sorted(personal & set(record["properties"]))
        for name in removed:
            del record["properties"][name]
        system = record.setdefault("systemProperties", {})
        system.pop("mergeIdentifier", None)
        system["anonymized"] = iso(self.clock.now())
        if request.arg("scope"):
            system["anonymizedScope"] = request.arg("scope")
        self.save_profile(record)
        self.notify("privacy", "INFO", f"Profile anonymized on request ({len(removed)} properties removed)",
                    {"profileId": record["itemId"], "scope": request.arg("scope")})
        return self.profile_wire(record)

    def remove_profile_property(self, request: Request) -> Response:
        name = request.params["property_name"]
        if not name.strip():
            raise Reject(400, "propertyName must not be blank")
        record = copy.deepcopy(self.require_profile(request.params["profile_id"]))
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
        properties = self.store["properties"]
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
        return self.store["properties"].require(property_id, "property")

    def get_profile_property(self, request: Request) -> dict[str, Any]:
        return self._property(request)

    def update_profile_property(self, request: Request) -> dict[str, Any]:
        current = self._property(request)
        patch = request.json()
        if not isinstance(patch, dict):
            raise Reject(400, "the body must be a JSON Merge Patch object")
        entry = self._entry(merge_patch(current, patch), current["id"])
        self._policy(request, current["id"], "change")
        current.clear()
        current.update(entry)
        return current

    def delete_profile_property(self, request: Request) -> Response:
        current = self._property(request)
        self._policy(request, current["id"], "delete")
        self.store["properties"].remove(current["id"])
        return Response(204)
