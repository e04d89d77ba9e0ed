"""The asset library's assets: seeded ones computed on demand, written ones kept in an overlay.

An asset is a *state* (`{index, id, created, boards, versions, fields}`, timestamps in epoch ms,
tags and custom field values by id). Seeded states come from `BaseAssets` until a write copies one
into `changed`; assets made by imports and uploads get the next indexes and live in `changed` from
the start; deleted indexes are remembered. Tag, board, field and value names are looked up when an
asset is rendered, so renaming or deleting them shows everywhere at once.

Lists filter by index (`select`): the seeded range with numpy (toolkit/sandbox/asset_library/scan.py),
`search` and the overlaid assets one by one; the matching indexes are cached per filter until the next
write, so walking a filtered million-asset list page by page scans it only once. Pages render only
the rows they show (`Rows`).

    space.rows(space.select(AssetFilter(tags=(frozenset({tag_id}),))))[0:100]
"""
from __future__ import annotations

__all__ = ["AssetFilter", "AssetSpace", "CDN", "Rows", "cursor_page", "entry", "file_metadata", "render_fields"]

import base64
import binascii
import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolkit.sandbox.asset_library import scan
from toolkit.sandbox.asset_library.seed import BaseAssets, iso_ms
from toolkit.sandbox.exchange import Reject, Request
from toolkit.sandbox.memory import Memory

# thumbnails and previews are not served: a reserved domain keeps the answers port-independent
CDN = "https://cdn.asset-library.invalid"


@dataclass(frozen=True)
class AssetFilter:
    """What `GET /assets` asks for, already resolved to ids (see `AssetLibrary._asset_filter`)."""
    boards: frozenset[str] | None = None
    tags: tuple[frozenset[str], ...] = ()              # every entry must meet the asset's tags
    fields: tuple[tuple[str, Any], ...] = ()           # (field id, value ids | text | None for any)
    search: str | None = None
    gte: int | None = None
    lte: int | None = None


def cursor_page(request: Request, rows: Sequence[Any], max_size: int = 500) -> dict[str, Any]:
    """`{data, pagination: {hasMore, cursor}, total}`: the page after the request's cursor.

    The cursor is opaque and remembers the list's filters: handed back with other filters it is a 400,
    because the service pages one query (a client must repeat the original filters on every page).
    """
    limit = request.int_arg("limit", 100)
    if limit is None or not 1 <= limit <= max_size:
        raise Reject(400, f"limit must be between 1 and {max_size}")
    query = sorted((k, sorted(v)) for k, v in request.query.items() if k not in ("limit", "cursor"))
    filters = hashlib.sha1(repr(query).encode()).hexdigest()[:10]
    start, token = 0, request.arg("cursor")
    if token:
        try:
            tag, position, made_for = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().split(":")
            start = int(position)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise Reject(400, f"invalid cursor {token!r}") from None
        if tag != "al" or start < 0:
            raise Reject(400, f"invalid cursor {token!r}")
        if made_for != filters:
            raise Reject(400, "the cursor belongs to a list with other filters: repeat the original filters")
    end = start + limit
    more = end < len(rows)
    cursor = base64.urlsafe_b64encode(f"al:{end}:{filters}".encode()).decode().rstrip("=") if more else None
    return {"data": rows[start:end], "pagination": {"hasMore": more, "cursor": cursor}, "total": len(rows)}


def render_fields(store: Memory, fields: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Custom field values on a record: `{id, name, type, value, values}`, live names, deleted ones gone."""
    known = store["customfields"].records
    out = []
    for field_id, setting in fields.items():
        field = known.get(field_id)
        if field is None:
            continue
        if "values" in setting:
            names = {v["id"]: v["name"] for v in field.get("values") or ()}
            values = [{"id": v, "name": names[v]} for v in setting["values"] if v in names]
            if values:
                out.append({"id": field_id, "name": field["name"], "type": field["type"], "value": None,
                            "values": values})
        else:
            out.append({"id": field_id, "name": field["name"], "type": field["type"],
                        "value": setting["value"], "values": None})
    return out


def entry(category: str, field: str, label: str, kind: str, data: str | list[str]) -> dict[str, Any]:
    return {"category": category, "fieldName": field, "label": label, "type": kind, "data": data}


def file_metadata(v: dict[str, Any], tag_names: list[str]) -> list[dict[str, Any]]:
    """What a version's file says of itself (IPTC/EXIF), from what the sandbox knows of the file; `data`
    is a string, or a list of strings for a list field such as Keywords (as the public types allow)."""
    found = [entry("File", "FileType", "File Type", "string", v["ext"].upper())]
    if v["width"] and v["height"]:
        found.append(entry("File", "ImageSize", "Image Size", "string", f"{v['width']}x{v['height']}"))
    if v["duration"]:
        found.append(entry("Composite", "Duration", "Duration", "string", f"{v['duration']:.2f} s"))
    if v["fileCreatedAt"] is not None:
        found.append(entry("Camera", "DateTimeOriginal", "Date/Time Original", "date", iso_ms(v["fileCreatedAt"])))
    if tag_names:
        found.append(entry("Descriptive", "Keywords", "Keywords", "list", tag_names))
    return found


class Rows(Sequence):
    """Rendered assets of a list of indexes, built only for the slice a page asks for."""

    def __init__(self, space: AssetSpace, indexes: Sequence[int]) -> None:
        self.space, self.indexes = space, indexes

    def __len__(self) -> int:
        return len(self.indexes)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            return [self.space.render_index(i) for i in self.indexes[item]]
        return self.space.render_index(self.indexes[item])


class AssetSpace:
    def __init__(self, base: BaseAssets, store: Memory) -> None:
        self.base, self.store = base, store
        self.changed: dict[int, dict[str, Any]] = {}
        self.deleted: set[int] = set()
        self.created_ids: dict[str, int] = {}          # asset id → index, for assets made through the API
        self.created_ms: list[int] = []                # creation time of index base.count + n
        self.version_owner: dict[str, int] = {}        # version id → asset index, for API-made versions
        self.generation = 0
        self._cache: dict[Any, Sequence[int]] = {}
        self._cache_generation = -1

    # --- lookup -------------------------------------------------------------------------------

    @property
    def end(self) -> int:
        return self.base.count + len(self.created_ms)

    def __len__(self) -> int:
        return self.end - len(self.deleted)

    def index(self, asset_id: str) -> int | None:
        i = self.created_ids.get(asset_id)
        if i is None:
            i = self.base.index_of(asset_id)
        return None if i is None or i in self.deleted else i

    def require(self, asset_id: str) -> int:
        i = self.index(asset_id)
        if i is None:
            raise Reject(404, f"asset {asset_id} not found")
        return i

    def state(self, i: int) -> dict[str, Any]:
        found = self.changed.get(i)
        return found if found is not None else self.base.state(i)

    def own(self, i: int) -> dict[str, Any]:
        """The state of asset i, copied into the overlay so that it can be changed."""
        self.generation += 1
        if i not in self.changed:
            self.changed[i] = self.base.state(i)
        return self.changed[i]

    def version(self, i: int, version_id: str, owned: bool = False) -> dict[str, Any]:
        state = self.own(i) if owned else self.state(i)
        for version in state["versions"]:
            if version["id"] == version_id:
                return version
        raise Reject(404, f"version {version_id} of asset {state['id']} not found")

    def version_asset(self, version_id: str) -> int | None:
        """The live asset a version belongs to, for download links."""
        i = self.version_owner.get(version_id)
        if i is None:
            found = self.base.version_of(version_id)
            i = found[0] if found else None
        if i is None or i in self.deleted:
            return None
        return i if any(v["id"] == version_id for v in self.state(i)["versions"]) else None

    # --- writes ------------------------------------------------------------------------------

    def add(self, asset_id: str, version: dict[str, Any], boards: list[str],
            fields: dict[str, dict[str, Any]]) -> int:
        i = self.end
        self.created_ms.append(version["createdAt"])
        self.changed[i] = {"index": i, "id": asset_id, "created": version["createdAt"], "boards": boards,
                           "versions": [version], "fields": fields}
        self.created_ids[asset_id] = i
        self.version_owner[version["id"]] = i
        self.generation += 1
        return i

    def add_version(self, i: int, version: dict[str, Any]) -> None:
        self.own(i)["versions"].append(version)
        self.version_owner[version["id"]] = i

    def delete(self, i: int) -> None:
        self.deleted.add(i)
        self.changed.pop(i, None)
        self.generation += 1

    # --- attributes (the seeded function unless overlaid) ------------------------------------------

    def created_of(self, i: int) -> int:
        count = self.base.count
        return self.base.created(i) if i < count else self.created_ms[i - count]

    def boards_of(self, i: int) -> list[str]:
        found = self.changed.get(i)
        return found["boards"] if found is not None else self.base.boards(i)

    def tags_of(self, i: int) -> set[str]:
        found = self.changed.get(i)
        if found is None:
            return self.base.tags(i)
        return {t for v in found["versions"] for t in v["tags"]}

    def fields_of(self, i: int) -> dict[str, dict[str, Any]]:
        found = self.changed.get(i)
        return found["fields"] if found is not None else self.base.custom_fields(i)

    def text_of(self, i: int) -> str:
        found = self.changed.get(i)
        if found is None:
            return self.base.search_text(i)
        cover = found["versions"][-1]
        return f"{cover['fileName']}\n{cover['title'] or ''}\n{cover['description'] or ''}".lower()

    def live(self) -> Sequence[int]:
        if not self.deleted:
            return range(self.end)
        return self.select(AssetFilter())

    # --- lists --------------------------------------------------------------------------------

    def select(self, flt: AssetFilter) -> Sequence[int]:
        """Indexes of the live assets matching `flt`, in creation order; cached until the next write."""
        if self._cache_generation != self.generation:
            self._cache.clear()
            self._cache_generation = self.generation
        found = self._cache.get(flt)
        if found is None:
            if len(self._cache) > 32:
                self._cache.clear()
            found = self._cache[flt] = self._scan(flt)
        return found

    def _scan(self, flt: AssetFilter) -> list[int]:
        everything = range(self.end)
        lo = 0 if flt.gte is None else bisect_left(everything, flt.gte, key=self.created_of)
        hi = self.end if flt.lte is None else bisect_right(everything, flt.lte, key=self.created_of)
        changed, deleted = self.changed, self.deleted
        seeded, search = self._scan_seeded(flt, lo, min(hi, self.base.count))
        found = [i for i in seeded if i not in changed and i not in deleted
                 and (not search or search in self.base.search_text(i))]
        found.extend(i for i in changed if lo <= i < hi and i not in deleted and self._match(flt, i))
        return sorted(found)

    def _scan_seeded(self, flt: AssetFilter, lo: int, hi: int) -> tuple[Sequence[int], str | None]:
        """Seeded indexes in [lo, hi) meeting the filters, vectorised; and the search term still to
        check one by one (None when numpy could answer it too)."""
        if lo >= hi:
            return [], None
        if flt.boards is None and not flt.tags and not flt.fields and not flt.search:
            return range(lo, hi), None
        base, search = self.base, flt.search
        idx = np.arange(lo, hi, dtype=np.int64)
        mask = np.ones(len(idx), bool)
        if flt.boards is not None:
            mask &= scan.boards_mask(base, idx, [base.board_pos[b] for b in flt.boards if b in base.board_pos])
        for want in flt.tags:
            mask &= scan.tags_mask(base, idx, [base.tag_pos[t] for t in want if t in base.tag_pos])
        for field_id, want in flt.fields:
            j = base.field_pos.get(field_id)
            mask &= scan.field_mask(base, idx, j, want) if j is not None else False
        if search:
            words = scan.search_mask(base, idx, search)
            if words is not None:
                mask &= words
                search = None
        return idx[mask].tolist(), search

    def _match(self, flt: AssetFilter, i: int) -> bool:
        """The same filter on one asset, from its state (assets written through the API)."""
        if flt.boards is not None and flt.boards.isdisjoint(self.boards_of(i)):
            return False
        if flt.tags:
            have = self.tags_of(i)
            if any(want.isdisjoint(have) for want in flt.tags):
                return False
        held = self.fields_of(i)
        for field_id, want in flt.fields:
            setting = held.get(field_id)
            if setting is None:
                return False
            if isinstance(want, frozenset):
                if want.isdisjoint(setting.get("values") or ()):
                    return False
            elif want is not None and str(setting.get("value") or "").lower() != want:
                return False
        return not flt.search or flt.search in self.text_of(i)

    def rows(self, indexes: Sequence[int]) -> Rows:
        return Rows(self, indexes)

    # --- rendering ----------------------------------------------------------------------------

    def render_version(self, v: dict[str, Any], metadata: bool = False) -> dict[str, Any]:
        """A version as the public types show it (docs/public-specs.md): `uploadedAt` (required in the
        OpenAPI types; a version made through the API was uploaded when it was made), `summary` (the
        vendor SDK's, null until the service writes one) and, with `metadata` (one version's GET only),
        the embedded file metadata as `{category, fieldName, label, type, data}` entries."""
        tags = self.store["tags"].records
        vid = v["id"]
        names = [tags[t]["name"] for t in v["tags"] if t in tags]
        answer = {
            "id": vid, "fileName": v["fileName"], "ext": v["ext"], "title": v["title"],
            "description": v["description"], "summary": v.get("summary"), "type": v["type"], "size": v["size"],
            "createdAt": iso_ms(v["createdAt"]), "uploadedAt": iso_ms(v.get("uploadedAt", v["createdAt"])),
            "updatedAt": iso_ms(v["updatedAt"]),
            "fileCreatedAt": iso_ms(v["fileCreatedAt"]), "width": v["width"], "height": v["height"],
            "duration": v["duration"],
            "tags": [{"id": t, "name": tags[t]["name"]} for t in v["tags"] if t in tags],
            "smartTags": [{"name": n} for n in v["smartTags"]],
            "urls": {"thumbnail": f"{CDN}/{vid}/thumbnail.jpg", "preview": f"{CDN}/{vid}/preview.jpg"},
        }
        if metadata:
            answer["metadata"] = file_metadata(v, names)
        return answer

    def render_index(self, i: int) -> dict[str, Any]:
        found = self.changed.get(i)
        return self.render(found if found is not None else self.base.cover(i))

    def render(self, state: dict[str, Any]) -> dict[str, Any]:
        return {"id": state["id"], "coverVersion": self.render_version(state["versions"][-1]),
                "customFields": render_fields(self.store, state["fields"])}
