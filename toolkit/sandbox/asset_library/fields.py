"""The asset library's custom fields, tags and roles.

A part that AssetLibrary (toolkit/sandbox/asset_library/service.py) holds: it is given the store, the clock's
time and the id maker. A custom field's type is fixed at
creation (a PATCH naming `type` is a 400); only single-select and multi-select fields have values
(`values: [{id, name}]`; null for plain-text and date). Deleting a field, a value or a tag removes it
from every asset and board at once, because records keep ids and names are looked up when rendered.
"""
from __future__ import annotations

__all__ = ["FIELD_PROPERTIES", "Fields", "SELECT_TYPES"]

from collections.abc import Callable
from typing import Any

from toolkit.catalog import asset_library as catalog
from toolkit.catalog.asset_library_checks import SELECT_TYPES
from toolkit.sandbox.asset_library.checks import instant, object_body, text
from toolkit.sandbox.asset_library.seed import DAY, iso_ms
from toolkit.sandbox.asset_library.space import cursor_page
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.memory import Memory

FIELD_PROPERTIES = {"name", "description", "type", "values"}


class Fields:
    """Custom fields and their values, tags and roles."""

    def __init__(self, store: Memory, now_ms: Callable[[], int], new_id: Callable[[str], Any]) -> None:
        self.store, self.now_ms, self.new_id = store, now_ms, new_id

    def handlers(self) -> dict[str, Callable[[Request], Any]]:
        a = "asset_library."
        return {
            a + "list_custom_fields": self.list_fields, a + "create_custom_field": self.create_field,
            a + "get_custom_field": self.get_field, a + "update_custom_field": self.update_field,
            a + "delete_custom_field": self.delete_field, a + "add_custom_field_value": self.add_value,
            a + "update_custom_field_value": self.update_value, a + "delete_custom_field_value": self.delete_value,
            a + "list_roles": self.list_roles, a + "list_tags": self.list_tags, a + "create_tag": self.create_tag,
            a + "get_tag": self.get_tag, a + "update_tag": self.update_tag,
        }

    # --- custom fields -----------------------------------------------------------------------------

    def field(self, field_id: str) -> dict[str, Any]:
        found = self.store["customfields"].get(field_id)
        if found is None:
            raise Reject(404, f"custom field {field_id} not found")
        return found

    def list_fields(self, request: Request) -> dict[str, Any]:
        rows = self.store["customfields"].all()
        name = (request.arg("name") or "").strip().lower()
        if name:
            rows = [f for f in rows if name in f["name"].lower()]
        return cursor_page(request, rows)

    def create_field(self, request: Request) -> Response:
        body = object_body(request, FIELD_PROPERTIES)
        name = text(body, "name", required=True)
        kind = text(body, "type", required=True)
        if kind not in catalog.CUSTOM_FIELD_TYPES:
            raise Reject(400, f"type must be one of {', '.join(catalog.CUSTOM_FIELD_TYPES)}, not {kind!r}")
        values = body.get("values")
        if values is not None and kind not in SELECT_TYPES:
            raise Reject(400, f"only single-select and multi-select fields take values, not {kind}")
        if values is not None and not (isinstance(values, list) and all(
                isinstance(v, dict) and isinstance(v.get("name"), str) and v["name"].strip() for v in values)):
            raise Reject(400, "values must be a list of objects each with a name")
        now = iso_ms(self.now_ms())
        field = {"id": self.new_id("customfields"), "name": name, "description": text(body, "description"),
                 "type": kind, "values": [{"id": self.new_id("values"), "name": v["name"]} for v in values or ()]
                 if kind in SELECT_TYPES else None, "createdAt": now, "updatedAt": now}
        return Response(201, self.store["customfields"].add(field))

    def get_field(self, request: Request) -> dict[str, Any]:
        return self.field(request.params["custom_field_id"])

    def update_field(self, request: Request) -> Response:
        field = self.field(request.params["custom_field_id"])
        body = object_body(request, {"name", "description", "type"})
        if "type" in body:
            raise Reject(400, "the type of a custom field cannot be changed")
        if "name" in body:
            text(body, "name", required=True)
        text(body, "description")
        field.update(body)
        field["updatedAt"] = iso_ms(self.now_ms())
        return Response(204)

    def delete_field(self, request: Request) -> Response:
        self.store["customfields"].remove(self.field(request.params["custom_field_id"])["id"])
        return Response(204)

    def select_field(self, request: Request) -> dict[str, Any]:
        field = self.field(request.params["custom_field_id"])
        if field["type"] not in SELECT_TYPES:
            raise Reject(400, f"{field['name']} is a {field['type']} field: only select fields have values")
        return field

    def value(self, request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        field = self.field(request.params["custom_field_id"])
        value_id = request.params["value_id"]
        found = next((v for v in field.get("values") or () if v["id"] == value_id), None)
        if found is None:
            raise Reject(404, f"value {value_id} of custom field {field['id']} not found")
        return field, found

    def add_value(self, request: Request) -> Response:
        field = self.select_field(request)
        name = text(object_body(request, {"name"}), "name", required=True)
        value = {"id": self.new_id("values"), "name": name}
        field["values"].append(value)
        field["updatedAt"] = iso_ms(self.now_ms())
        return Response(201, value)

    def update_value(self, request: Request) -> Response:
        field, value = self.value(request)
        body = object_body(request, {"name"})
        if "name" in body:
            value["name"] = text(body, "name", required=True)
        field["updatedAt"] = iso_ms(self.now_ms())
        return Response(204)

    def delete_value(self, request: Request) -> Response:
        field, value = self.value(request)
        field["values"].remove(value)
        field["updatedAt"] = iso_ms(self.now_ms())
        return Response(204)

    def field_setting(self, field: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
        """What a PUT of a custom field sets: {"value": ...} or {"values": [...]}, None to unset."""
        kind, name = field["type"], field["name"]
        if kind in SELECT_TYPES:
            if "value" in body:
                raise Reject(400, f"{name} is a {kind} field: set values ([{{id}}]), not value")
            if "values" not in body:
                raise Reject(400, f"values is required for the {kind} field {name} (null unsets it)")
            values = body["values"]
            if values is None or values == []:
                return None
            if not isinstance(values, list) or not all(isinstance(v, dict) and v.get("id") for v in values):
                raise Reject(400, "values must be a list of objects each with the id of a value")
            known = {v["id"] for v in field.get("values") or ()}
            ids = list(dict.fromkeys(str(v["id"]) for v in values))
            for value_id in ids:
                if value_id not in known:
                    raise Reject(400, f"{value_id} is not a value of the custom field {name}")
            if kind == "single-select" and len(ids) > 1:
                raise Reject(400, f"{name} is a single-select field: give one value")
            return {"values": ids}
        if "values" in body:
            raise Reject(400, f"{name} is a {kind} field: set value (a string), not values")
        if "value" not in body:
            raise Reject(400, f"value is required for the {kind} field {name} (null unsets it)")
        value = body["value"]
        if value is None:
            return None
        if not isinstance(value, str):
            raise Reject(400, "value must be a string or null")
        if kind == "date":
            return {"value": iso_ms(instant(value, "value") // DAY * DAY)}
        return {"value": value}

    def resolve_tags(self, given: list[Any]) -> list[str]:
        """Tag ids for names, ids or {id}/{name} objects; a name the workspace lacks becomes a tag."""
        tags, ids = self.store["tags"], []
        for item in given:
            ref = item if isinstance(item, str) else item.get("id") or item.get("name")
            found = tags.get(ref) or next((t for t in tags.all() if t["name"].lower() == str(ref).lower()), None)
            if found is None and (isinstance(item, str) or item.get("name")):
                found = tags.add({"id": self.new_id("tags"), "name": str(ref)})
            if found is not None and found["id"] not in ids:
                ids.append(found["id"])
        return ids

    # --- roles and tags ----------------------------------------------------------------------------

    def list_roles(self, request: Request) -> dict[str, Any]:
        kind = (request.arg("type") or "").strip()
        if not kind:
            raise Reject(400, "type is required (guest or member)")
        if kind not in catalog.ROLE_TYPES:
            raise Reject(400, f"type must be one of {', '.join(catalog.ROLE_TYPES)}, not {kind!r}")
        return {"data": self.store["roles"].where(type=kind)}

    def list_tags(self, request: Request) -> dict[str, Any]:
        rows = self.store["tags"].all()
        name = (request.arg("name") or "").strip().lower()
        if name:
            rows = [t for t in rows if name in t["name"].lower()]
        return cursor_page(request, rows)

    def create_tag(self, request: Request) -> Response:
        name = text(object_body(request, {"name"}), "name", required=True)
        return Response(201, self.store["tags"].add({"id": self.new_id("tags"), "name": name}))

    def get_tag(self, request: Request) -> dict[str, Any]:
        return dict(self.store["tags"].require(request.params["tag_id"], "tag"))

    def update_tag(self, request: Request) -> Response:
        tag = self.store["tags"].require(request.params["tag_id"], "tag")
        body = object_body(request, {"name"})
        if "name" in body:
            tag["name"] = text(body, "name", required=True)
        return Response(204)
