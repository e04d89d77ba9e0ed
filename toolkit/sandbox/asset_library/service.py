"""The asset library emulator: assets and versions, nested boards, guests, custom fields, tags,
imports and uploads of one workspace, as the public API v1 answers them.

Wire: camelCase records, UUID v4 ids, ISO-8601 timestamps with milliseconds; cursor pages
`{data, pagination: {hasMore, cursor}, total}` with `limit` ≤ 500 (400 above) and opaque cursors
that remember their list's filters (a cursor sent with other filters is a 400: the client must repeat
the original filters on every page); 201 on creates, 204 without a body on PATCH, PUT, DELETE and
association calls; errors `{"message": ...}`: 400 for bad input (unknown body properties included,
so a snake_case name is caught), 404 for an unknown id in the path, the body or a filter, 409 for a
guest already on the board; 401 without `x-api-key` and `x-air-workspace-id`.

Behaviour where the documents are silent (decisions):
- `GET /assets` lists live assets oldest first. `tag` (repeated: all must match) takes tag ids or
  names and matches any version of the asset; `customField` (repeated: all must match) reads
  `<fieldId>` (any value set) or `<fieldId>:<value>` (a value id or name for select fields, the text
  for plain-text, the day for date fields); `search` is a case-insensitive substring of the cover
  version's file name, title and description; `includeNestedAssets=true` widens `parentBoardId` to
  every descendant board.
- Deleting a board deletes its whole subtree of boards with their guests; assets whose live boards
  all lie in that board or its direct children are deleted; the others only leave the deleted boards.
- A custom field value is `{value}` for plain-text and date (dates are stored as midnight UTC) and
  `{values: [{id}]}` for select fields (one at most for single-select); null or `[]` unsets it.
- Tag names need not be unique; tags given by name to an import or upload are created when missing;
  custom fields an import or upload names but the workspace lacks are ignored.
- Imports and uploads: see toolkit/sandbox/asset_library/transfers.py (source URL patterns, sizes).

Scale: about 300 × scale**1.17 assets (300 at 1, a million at 1000) computed from their index
(toolkit/sandbox/asset_library/seed.py), 40 × √scale boards in a tree of depth 3, 25 × √scale tags.

    box.credentials("asset_library")  # {"base_url": ..., "api_key": ..., "workspace_id": ...}
"""
from __future__ import annotations

__all__ = ["AssetLibrary", "EMULATOR", "GROWTH"]

import math
import re
from bisect import bisect_left
from datetime import UTC, datetime
from typing import Any

from toolkit.catalog import asset_library as catalog
from toolkit.sandbox.asset_library.boards import Boards, seed_boards, seed_guests
from toolkit.sandbox.asset_library.checks import flag, instant, object_body, text
from toolkit.sandbox.asset_library.fields import SELECT_TYPES, Fields
from toolkit.sandbox.asset_library.seed import (
    DAY,
    FIELDS,
    GUEST_ROLES,
    MEMBER_ROLES,
    NOW,
    T0,
    TAG_NAMES,
    BaseAssets,
    iso_ms,
)
from toolkit.sandbox.asset_library.space import AssetFilter, AssetSpace, cursor_page
from toolkit.sandbox.asset_library.transfers import Transfers
from toolkit.sandbox.clock import epoch_ms
from toolkit.sandbox.emulator import Emulator, Extra
from toolkit.sandbox.exchange import Reject, Request, Response

GROWTH = math.log(1_000_000 / 300) / math.log(1000)       # 300 assets at scale 1, a million at 1000


class AssetLibrary(Emulator):
    """One workspace of the asset library (see the module docstring).

    It answers the assets itself and holds the other parts, each given what it needs: `fields`
    (custom fields, tags, roles), `boards` (boards and guests) and `transfers` (imports, uploads,
    downloads).
    """

    catalog = catalog
    collections = {"asset_library.delete_tag": "tags"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        rng, scale = self.rng, self.scale
        key = rng.getrandbits(64)                    # drawn first, so that scale never moves it
        tags = self.store["tags"]
        names = list(TAG_NAMES) + [f"{rng.choice(('shoot', 'client', 'project'))}-{n:03d}"
                                   for n in range(max(0, round(25 * math.sqrt(scale)) - len(TAG_NAMES)))]
        tags.extend([{"id": rng.uuid(), "name": name} for name in names])
        fields = self.store["customfields"]
        for name, description, kind, values in FIELDS:
            at = iso_ms(T0 + rng.randrange(90) * DAY)
            fields.add({"id": rng.uuid(), "name": name, "description": description, "type": kind,
                        "values": [{"id": rng.uuid(), "name": v} for v in values] if values else None,
                        "createdAt": at, "updatedAt": at})
        roles = self.store["roles"]
        for rows, kind in ((GUEST_ROLES, "guest"), (MEMBER_ROLES, "member")):
            roles.extend([{"id": rng.uuid(), "name": n, "description": d, "billable": b, "type": kind}
                          for n, d, b in rows])
        seed_boards(rng, self.store, max(8, round(40 * math.sqrt(scale))))
        seed_guests(rng, self.store)
        count = max(20, round(300 * scale ** GROWTH)) if scale >= 1 else max(20, round(300 * scale))
        self.space = AssetSpace(BaseAssets(key, count, [b["id"] for b in self.store["boards"]],
                                           [t["id"] for t in tags],
                                           [(f["id"], f["type"], [v["id"] for v in f["values"] or ()])
                                            for f in fields]), self.store)
        self.fields = Fields(self.store, self.now_ms, self.new_id)
        self.boards = Boards(self.store, self.space, self.fields, self.now_ms, self.new_id, {})
        self.seed_field_values()
        self.transfers = Transfers(self.space, self.boards, self.fields, self.now_ms, self.new_id, self.ids,
                                   self.secret_rng.hex(32))
        self.extra_routes.extend(self.transfers.routes())
        picks = [(self.space.base.asset_id(i), self.space.base.version_id(i, 0)) for i in range(3)]
        self.transfers.seed(rng, picks, [b["id"] for b in self.store["boards"]], NOW)
        self._examples = self.seed_examples()
        a = "asset_library."
        self.handlers.update({
            a + "list_assets": self.list_assets, a + "get_asset": self.get_asset,
            a + "list_asset_boards": self.list_asset_boards, a + "set_asset_custom_field": self.set_asset_field,
            a + "list_asset_versions": self.list_versions, a + "get_asset_version": self.get_version,
            a + "update_asset_version": self.update_version, a + "download_asset_version": self.download,
            a + "add_asset_version_tag": self.add_version_tag,
            a + "remove_asset_version_tag": self.remove_version_tag, a + "delete_asset": self.delete_asset,
            a + "create_import": self.transfers.create_import, a + "get_import_status": self.transfers.import_status,
            a + "create_upload": self.transfers.create_upload, a + "create_upload_part": self.transfers.upload_part,
            a + "complete_upload": self.transfers.complete,
        })
        self.handlers.update(self.boards.handlers())
        self.handlers.update(self.fields.handlers())
        self.extra_routes.extend(self.other_case_routes())

    def other_case_routes(self) -> list[Extra]:
        """`customfields` and `customFields` both reach a record's custom field: the vendor's SDK
        writes boards with a capital F and assets without, and another client of the vendor's staff
        the other way (docs/public-specs.md); the catalog's spelling stays the one routed first."""
        routes = []
        for action in self.actions:
            head, found, tail = action.path.partition("/customfields/")
            if not found:
                head, found, tail = action.path.partition("/customFields/")
            if not found or "{" not in head:
                continue
            other = "/customFields/" if found == "/customfields/" else "/customfields/"
            pattern = re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(self.service.base_path + head + other + tail))
            routes.append(Extra(action.method, pattern, self._as(action), public=False,
                                name=f"{action.id} ({other.strip('/')})"))
        return routes

    def _as(self, action: Any) -> Any:
        """The handler of `action`, answering with its status (an extra route has none of its own)."""
        def answer(request: Request) -> Response:
            request.action = action
            result = self.handlers[action.id](request)
            if isinstance(result, Response):
                return result
            return Response(action.status, None if action.status == 204 else result)
        return answer

    # --- time ------------------------------------------------------------------------------------------

    def now_ms(self) -> int:
        return int(epoch_ms(self.clock.now()) or 0)

    # --- assets ----------------------------------------------------------------------------------

    def asset_filter(self, request: Request) -> AssetFilter:
        boards = None
        parent = request.arg("parentBoardId")
        if parent:
            self.boards.board(parent)
            boards = frozenset([parent, *(self.boards.descendants(parent) if flag(request, "includeNestedAssets")
                                          else ())])
        tags = self.store["tags"].all()
        wanted = tuple(frozenset(t["id"] for t in tags if t["id"] == v or t["name"].lower() == v.lower())
                       for v in request.args("tag") if v.strip())
        fields = []
        for item in request.args("customField"):
            field_id, has_value, raw = item.partition(":")
            field = self.fields.field(field_id.strip())
            want: Any = None
            if has_value and field["type"] in SELECT_TYPES:
                want = frozenset(v["id"] for v in field["values"] or () if raw in (v["id"], v["name"])
                                 or v["name"].lower() == raw.lower())
            elif has_value:
                want = self.fields.field_setting(field, {"value": raw})["value"].lower()  # type: ignore[index]
            fields.append((field["id"], want))
        search = (request.arg("search") or "").strip().lower() or None
        gte, lte = request.arg("createdAt[gte]"), request.arg("createdAt[lte]")
        return AssetFilter(boards, wanted, tuple(fields), search,
                           instant(gte, "createdAt[gte]") if gte else None,
                           instant(lte, "createdAt[lte]") if lte else None)

    def list_assets(self, request: Request) -> dict[str, Any]:
        flt = self.asset_filter(request)
        indexes = self.space.live() if flt == AssetFilter() else self.space.select(flt)
        return cursor_page(request, self.space.rows(indexes))

    def get_asset(self, request: Request) -> dict[str, Any]:
        return self.space.render(self.space.state(self.space.require(request.params["asset_id"])))

    def list_asset_boards(self, request: Request) -> dict[str, Any]:
        state = self.space.state(self.space.require(request.params["asset_id"]))
        include = flag(request, "includeCustomFields")
        boards = self.store["boards"]
        rows = [self.boards.render_board(board, include) for b in state["boards"]
                if (board := boards.get(b)) is not None]
        return cursor_page(request, rows)

    def set_asset_field(self, request: Request) -> Response:
        i = self.space.require(request.params["asset_id"])
        field = self.fields.field(request.params["custom_field_id"])
        setting = self.fields.field_setting(field, object_body(request, {"value", "values"}))
        fields = self.space.own(i)["fields"]
        if setting is None:
            fields.pop(field["id"], None)
        else:
            fields[field["id"]] = setting
        return Response(204)

    def list_versions(self, request: Request) -> dict[str, Any]:
        state = self.space.state(self.space.require(request.params["asset_id"]))
        data = [self.space.render_version(v) for v in state["versions"]]
        return {"data": data, "total": len(data)}

    def get_version(self, request: Request) -> dict[str, Any]:
        i = self.space.require(request.params["asset_id"])
        return self.space.render_version(self.space.version(i, request.params["version_id"]), metadata=True)

    def update_version(self, request: Request) -> Response:
        i = self.space.require(request.params["asset_id"])
        self.space.version(i, request.params["version_id"])          # 404 before the body's 400
        body = object_body(request, {"title", "description"})
        if "title" in body:
            text(body, "title", required=True)
        text(body, "description")
        version = self.space.version(i, request.params["version_id"], owned=True)
        version.update(body)
        version["updatedAt"] = self.now_ms()
        return Response(204)

    def download(self, request: Request) -> dict[str, Any]:
        i = self.space.require(request.params["asset_id"])
        return self.transfers.download(request, self.space.version(i, request.params["version_id"]))

    def add_version_tag(self, request: Request) -> dict[str, Any]:
        """200 with the tagged version: the vendor SDK's addVersionTag returns an AssetVersion (its tests
        say so), where the OpenAPI types say 204 (docs/public-specs.md: the vendor's SDK wins)."""
        i = self.space.require(request.params["asset_id"])
        self.space.version(i, request.params["version_id"])
        tag_id = text(object_body(request, {"id"}), "id", required=True)
        if tag_id not in self.store["tags"]:
            raise Reject(404, f"tag {tag_id} not found")
        version = self.space.version(i, request.params["version_id"], owned=True)
        if tag_id not in version["tags"]:
            version["tags"].append(tag_id)
        return self.space.render_version(version)

    def remove_version_tag(self, request: Request) -> Response:
        i = self.space.require(request.params["asset_id"])
        version_id, tag_id = request.params["version_id"], request.params["tag_id"]
        if tag_id not in self.space.version(i, version_id)["tags"] or tag_id not in self.store["tags"]:
            raise Reject(404, f"tag {tag_id} is not on version {version_id}")
        self.space.version(i, version_id, owned=True)["tags"].remove(tag_id)
        return Response(204)

    def delete_asset(self, request: Request) -> Response:
        self.space.delete(self.space.require(request.params["asset_id"]))
        return Response(204)

    # --- seed --------------------------------------------------------------------------------------

    def seed_field_values(self) -> None:
        """Custom field values on about a third of the boards."""
        fields = self.space.base.fields
        for board in self.store["boards"]:
            if self.rng.random() < 0.35:
                field_id, kind, values = self.rng.choice(fields)
                picked: dict[str, Any]
                if kind in SELECT_TYPES:
                    picked = {"values": self.rng.sample(values, 1 if kind == "single-select" else 2)}
                elif kind == "date":
                    picked = {"value": iso_ms(NOW // DAY * DAY + self.rng.randrange(-200, 60) * DAY)}
                else:
                    picked = {"value": self.rng.choice(["Ana López", "Studio Nord", "In-house team"])}
                self.boards.board_fields.setdefault(board["id"], {})[field_id] = picked

    def seed_examples(self) -> dict[str, Any]:
        """Ids for every path param of the catalog, on records shaped so each example call succeeds."""
        boards = self.store["boards"].all()
        board = next(b for b in boards if b["parentBoardId"] and self.boards.board(b["parentBoardId"])["parentBoardId"]
                     is None)
        parent = board["parentBoardId"]
        guests = self.store["guests"]
        guest = next((g for g in guests if g["boardId"] == board["id"]), None)
        roles = self.store["roles"].where(type="guest")
        if guest is None:
            guest = guests.add({"id": self.rng.uuid(), "email": "tom.becker@brightagency.com",
                                "roleId": roles[0]["id"], "boardId": board["id"]})
        tags = self.store["tags"].all()
        hero = tags[0]
        space = self.space
        mid_2024 = epoch_ms(datetime(2024, 6, 1, tzinfo=UTC))
        i = min(bisect_left(range(space.base.count), mid_2024, key=space.created_of), space.base.count - 1)
        state = space.own(i)
        state["boards"] = [board["id"], parent]
        cover = state["versions"][-1]
        cover.update(fileName="beach-golden-hour-0412", title="Beach golden hour")
        if hero["id"] not in cover["tags"]:
            cover["tags"].insert(0, hero["id"])
        fields = {f["name"]: f for f in self.store["customfields"]}
        campaign, photographer = fields["Campaign"], fields["Photographer"]
        state["fields"][campaign["id"]] = {"values": [campaign["values"][0]["id"]]}
        imports: dict[str, str] = {}
        for record in self.transfers.imports.values():
            imports.setdefault(record["status"], record["id"])
        upload_id, upload = next(iter(self.transfers.uploads.items()))
        return {
            "asset_id": state["id"], "asset_ids": [state["id"]], "version_id": cover["id"],
            "board_id": board["id"], "parent_board_id": parent, "tag_id": hero["id"], "tag": [hero["name"]],
            "tags": [{"id": hero["id"]}],
            "custom_field_id": campaign["id"], "value_id": campaign["values"][0]["id"],
            "guest_id": guest["id"], "role_id": roles[1]["id"], "role_type": "guest",
            "import_id": imports["pending"], "import_ids": list(imports.values()),
            "multi_part_upload_id": upload_id, "key": upload["key"], "part_number": 1,
            "parts": [{"etag": p["etag"], "partNumber": n} for n, p in upload["parts"].items()],
            # a set-value example carries a string, which a select field refuses: those calls take a text field
            "overrides": {"asset_library.set_asset_custom_field": {"custom_field_id": photographer["id"]},
                          "asset_library.set_board_custom_field": {"custom_field_id": photographer["id"]}},
        }

    def examples(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
                for k, v in self._examples.items()}

    def secrets(self) -> list[str]:
        return [*super().secrets(), self.transfers.signing_key]

    def on_advance(self, now: datetime) -> None:
        self.transfers.catch_up(int(epoch_ms(now) or 0))


EMULATOR = AssetLibrary
