"""The asset library's boards and their guests: nesting, the delete cascade, board custom fields.

A part that AssetLibrary (toolkit/sandbox/asset_library/service.py) holds: it is given the store, the assets
(`AssetSpace`), the custom fields part, the clock's time and the id maker. Boards are kept as their wire records (without `customFields`, which come from `board_fields` when
rendered); the tree is read from `parentBoardId`, so moving a board moves its subtree.
"""
from __future__ import annotations

__all__ = ["BOARD_FIELDS", "Boards", "EMAIL", "seed_boards", "seed_guests"]

import re
from collections.abc import Callable
from typing import Any

from toolkit.sandbox.asset_library.checks import object_body, text
from toolkit.sandbox.asset_library.fields import Fields
from toolkit.sandbox.asset_library.seed import (
    BOARD_TREE,
    DAY,
    GUEST_DOMAINS,
    GUEST_NAMES,
    LEAVES,
    T0,
    T_END,
    iso_ms,
)
from toolkit.sandbox.asset_library.space import AssetFilter, AssetSpace, cursor_page, render_fields
from toolkit.sandbox.exchange import Reject, Request, Response
from toolkit.sandbox.memory import Memory
from toolkit.sandbox.seeds import Seeds

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
BOARD_FIELDS = {"title", "description", "parentBoardId"}


class Boards:
    """Boards, board assets, board custom fields and guests.

    `board_fields`: board id → custom field id → its setting ({"value"} or {"values"}).
    """

    def __init__(self, store: Memory, space: AssetSpace, fields: Fields, now_ms: Callable[[], int],
                 new_id: Callable[[str], Any], board_fields: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.store, self.space, self.fields = store, space, fields
        self.now_ms, self.new_id, self.board_fields = now_ms, new_id, board_fields

    def handlers(self) -> dict[str, Callable[[Request], Any]]:
        a = "asset_library."
        return {
            a + "list_boards": self.list_boards, a + "create_board": self.create_board,
            a + "get_board": self.get_board, a + "update_board": self.update_board,
            a + "delete_board": self.delete_board, a + "add_board_assets": self.add_board_assets,
            a + "remove_board_asset": self.remove_board_asset, a + "set_board_custom_field": self.set_board_field,
            a + "list_board_guests": self.list_guests, a + "add_board_guest": self.add_guest,
            a + "update_board_guest": self.update_guest, a + "remove_board_guest": self.remove_guest,
        }

    # --- the tree ----------------------------------------------------------------------------------

    def board(self, board_id: str) -> dict[str, Any]:
        found = self.store["boards"].get(board_id)
        if found is None:
            raise Reject(404, f"board {board_id} not found")
        return found

    def children(self, board_id: str) -> list[str]:
        return [b["id"] for b in self.store["boards"] if b["parentBoardId"] == board_id]

    def descendants(self, board_id: str) -> list[str]:
        kids: dict[str | None, list[str]] = {}
        for b in self.store["boards"]:
            kids.setdefault(b["parentBoardId"], []).append(b["id"])
        found, todo = [], list(kids.get(board_id, ()))
        while todo:
            current = todo.pop(0)
            found.append(current)
            todo.extend(kids.get(current, ()))
        return found

    def render_board(self, board: dict[str, Any], custom_fields: bool = True) -> dict[str, Any]:
        if not custom_fields:
            return dict(board)
        return {**board, "customFields": render_fields(self.store, self.board_fields.get(board["id"], {}))}

    # --- boards ------------------------------------------------------------------------------------

    def list_boards(self, request: Request) -> dict[str, Any]:
        rows = self.store["boards"].all()
        parent = request.arg("parentBoardId")
        if parent:
            self.board(parent)
            rows = [b for b in rows if b["parentBoardId"] == parent]
        name = (request.arg("name") or "").strip().lower()
        if name:
            rows = [b for b in rows if name in b["title"].lower()]
        return cursor_page(request, [self.render_board(b) for b in rows])

    def create_board(self, request: Request) -> Response:
        body = object_body(request, BOARD_FIELDS)
        title = text(body, "title", required=True)
        parent = text(body, "parentBoardId")
        if parent is not None:
            self.board(parent)
        now = iso_ms(self.now_ms())
        board = self.store["boards"].add({"id": self.new_id("boards"), "parentBoardId": parent, "title": title,
                                          "description": text(body, "description"),
                                          "createdAt": now, "updatedAt": now})
        return Response(201, self.render_board(board))

    def get_board(self, request: Request) -> dict[str, Any]:
        return self.render_board(self.board(request.params["board_id"]))

    def update_board(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        body = object_body(request, BOARD_FIELDS)
        if "title" in body:
            text(body, "title", required=True)
        text(body, "description")
        parent = text(body, "parentBoardId")
        if parent is not None:
            self.board(parent)
            if parent == board["id"] or parent in self.descendants(board["id"]):
                raise Reject(400, "a board cannot be moved into itself or one of its descendants")
        board.update(body)
        board["updatedAt"] = iso_ms(self.now_ms())
        return Response(204)

    def delete_board(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        subtree = {board["id"], *self.descendants(board["id"])}
        direct = frozenset({board["id"], *self.children(board["id"])})
        space = self.space
        doomed = []
        for i in space.select(AssetFilter(boards=direct)):
            live = {b for b in space.boards_of(i) if b in self.store["boards"]}
            if live <= direct:
                doomed.append(i)
        for i in doomed:
            space.delete(i)
        for state in list(space.changed.values()):       # the survivors leave the deleted boards
            if not subtree.isdisjoint(state["boards"]):
                state["boards"] = [b for b in state["boards"] if b not in subtree]
        boards, guests = self.store["boards"], self.store["guests"]
        for board_id in subtree:
            boards.remove(board_id)
            self.board_fields.pop(board_id, None)
        for guest in [g for g in guests if g["boardId"] in subtree]:
            guests.remove(guest["id"])
        space.generation += 1
        return Response(204)

    def add_board_assets(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        ids = object_body(request, {"assetIds"}).get("assetIds")
        if not isinstance(ids, list) or not ids or not all(isinstance(a, str) and a for a in ids):
            raise Reject(400, "assetIds must be a non-empty list of asset ids")
        indexes = [self.space.require(a) for a in ids]       # all or nothing
        for i in indexes:
            if board["id"] not in self.space.boards_of(i):
                self.space.own(i)["boards"].append(board["id"])
        return Response(204)

    def remove_board_asset(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        i = self.space.require(request.params["asset_id"])
        if board["id"] not in self.space.boards_of(i):
            raise Reject(404, f"asset {request.params['asset_id']} is not in board {board['id']}")
        self.space.own(i)["boards"].remove(board["id"])
        return Response(204)

    def set_board_field(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        field = self.fields.field(request.params["custom_field_id"])
        setting = self.fields.field_setting(field, object_body(request, {"value", "values"}))
        fields = self.board_fields.setdefault(board["id"], {})
        if setting is None:
            fields.pop(field["id"], None)
        else:
            fields[field["id"]] = setting
        return Response(204)

    # --- guests ------------------------------------------------------------------------------------

    def guest_role(self, body: dict[str, Any]) -> str:
        role_id = text(body, "roleId", required=True)
        role = self.store["roles"].get(role_id)
        if role is None:
            raise Reject(404, f"role {role_id} not found")
        if role["type"] != "guest":
            raise Reject(400, f"role {role['name']} is a {role['type']} role; a guest needs a guest role")
        return str(role_id)

    def guest(self, request: Request) -> dict[str, Any]:
        board = self.board(request.params["board_id"])
        found = self.store["guests"].get(request.params["guest_id"])
        if found is None or found["boardId"] != board["id"]:
            raise Reject(404, f"guest {request.params['guest_id']} not found on board {board['id']}")
        return found

    def list_guests(self, request: Request) -> dict[str, Any]:
        board = self.board(request.params["board_id"])
        rows = self.store["guests"].where(boardId=board["id"])
        email = (request.arg("email") or "").strip().lower()
        if email:
            rows = [g for g in rows if g["email"].lower() == email]
        return {"data": rows}

    def add_guest(self, request: Request) -> Response:
        board = self.board(request.params["board_id"])
        body = object_body(request, {"email", "roleId"})
        email = (text(body, "email", required=True) or "").strip()
        if not EMAIL.match(email):
            raise Reject(400, f"email {email!r} is not an email address")
        role_id = self.guest_role(body)
        if any(g["email"].lower() == email.lower() for g in self.store["guests"].where(boardId=board["id"])):
            raise Reject(409, f"{email} is already a guest of board {board['id']}")
        guest = self.store["guests"].add({"id": self.new_id("guests"), "email": email, "roleId": role_id,
                                          "boardId": board["id"]})
        return Response(201, guest)

    def update_guest(self, request: Request) -> Response:
        guest = self.guest(request)
        guest["roleId"] = self.guest_role(object_body(request, {"roleId"}))
        return Response(204)

    def remove_guest(self, request: Request) -> Response:
        self.store["guests"].remove(self.guest(request)["id"])
        return Response(204)


# --- seed ------------------------------------------------------------------------------------------

def seed_boards(rng: Seeds, store: Memory, target: int) -> None:
    """A tree of depth 3: sections, their boards, and a few leaf boards under those."""
    boards, round_ = store["boards"], 0
    born: dict[str | None, int] = {None: T0}

    def add(title: str, parent: str | None) -> str:
        # a board is made after its parent, and edited for a while after that
        days = max(1, (T_END - born[parent]) // DAY // 3)
        created = born[parent] + rng.randrange(days) * DAY + rng.randrange(DAY)
        updated = min(created + rng.randrange(120) * DAY, T_END)
        description = rng.choice((None, f"Everything for {title.lower()}", f"{title}: shared with partners",
                                  f"Curated {title.lower()} assets"))
        board = boards.add({"id": rng.uuid(), "parentBoardId": parent, "title": title,
                            "description": description, "createdAt": iso_ms(created),
                            "updatedAt": iso_ms(updated)})
        born[board["id"]] = created
        return board["id"]

    while len(boards) < target:
        for section, kids in BOARD_TREE:
            if len(boards) >= target:
                break
            top = add(section if not round_ else f"{section} {round_ + 1}", None)
            for kid in rng.sample(kids, rng.randint(2, len(kids))):
                child = add(kid, top)
                if rng.random() < 0.25:
                    for leaf in rng.sample(LEAVES, rng.randint(1, 2)):
                        add(leaf, child)
        round_ += 1


def seed_guests(rng: Seeds, store: Memory) -> None:
    """Guests on about a third of the boards."""
    guests, roles = store["guests"], store["roles"].where(type="guest")
    for board in store["boards"]:
        if rng.random() < 0.35:
            for name in rng.sample(GUEST_NAMES, rng.randint(1, 3)):
                guests.add({"id": rng.uuid(), "email": f"{name}@{rng.choice(GUEST_DOMAINS)}",
                            "roleId": rng.weighted(roles, (5, 3, 2, 1))["id"], "boardId": board["id"]})
