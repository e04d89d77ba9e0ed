"""Audiences, memberships and the audience import of the audience platform emulator (a part it holds).

Lists filter by tags, systemTags, providers and names (comma lists; any listed value includes,
`!value` excludes, empty disables) and sort (`name`, `name:desc`, several keys). v1's `/audiences`
answers metadata, v2's answers audiences with `profileCount`, `condition` and `lastUpdated`.

The import validates its package in the request (400 with the problems on a bad one: both an
`enclosed` package and the file a `url` package points at, which must be one the sandbox serves
under `/files/audiences/` or a known example URL), answers 202, and applies the import on the next
advance of the virtual clock, when a notification reports it. An import replaces the audience's
members; unknown profile ids are skipped and counted in the notification.

A PATCH changes an audience's tags only: a JSON Merge Patch (RFC 7396, applied by `json-merge-patch`)
or a JSON Patch (RFC 6902, applied by `jsonpatch`: add, remove, replace, move, copy and test). An
audience marked `readOnly` (one its analytics or warehouse integration manages) answers 409.
"""
from __future__ import annotations

__all__ = ["Audiences", "FILES_PATH", "JSON_PATCH", "MANAGED", "MERGE_PATCH", "METADATA", "WRITES"]

import copy
from typing import Any

import json_merge_patch
import jsonpatch
import jsonpointer
import orjson

from toolkit.sandbox.audience_platform.filter import list_filter, sort_records
from toolkit.sandbox.audience_platform.state import State
from toolkit.sandbox.clock import iso
from toolkit.sandbox.exchange import Reject, Request, Response, url_parts
from toolkit.sandbox.pages import answer_list

METADATA = ("id", "name", "description", "scope", "tags", "systemTags", "provider", "enabled", "hidden",
            "readOnly")
FILES_PATH = "/files/audiences/"
MANAGED = ("analytics", "warehouse")       # providers whose audiences an import cannot replace
JSON_PATCH, MERGE_PATCH = "application/json-patch+json", "application/merge-patch+json"
WRITES = ("add", "remove", "replace", "move", "copy")     # the RFC 6902 operations that change `path`


def _strings(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise Reject(400, f"{name} must be a list of non-blank strings")
    return list(dict.fromkeys(value))


def _under_tags(pointer: Any) -> bool:
    """Whether an RFC 6901 pointer names the tags or something inside them (`/tags~1x` is another member)."""
    return isinstance(pointer, str) and (pointer == "/tags" or pointer.startswith("/tags/"))


class Audiences:
    """Audience lists, reads, tag patches, memberships and imports, over the platform's state."""

    def __init__(self, state: State) -> None:
        self.state = state

    # --- answers ----------------------------------------------------------------------------

    def audience_wire(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "profileCount": self.state.members.count(record["id"])}

    @staticmethod
    def metadata_wire(record: dict[str, Any]) -> dict[str, Any]:
        return {k: record.get(k) for k in METADATA}

    def require_audience(self, audience_id: str) -> dict[str, Any]:
        if not audience_id.strip():
            raise Reject(400, "audienceId must not be blank")
        return self.state.store["audiences"].require(audience_id, "audience")

    def _filtered(self, request: Request) -> list[dict[str, Any]]:
        records = self.state.store["audiences"].all()
        records = list_filter(records, request.arg("systemTags"), lambda r: r.get("systemTags") or (),
                              "systemTags")
        records = list_filter(records, request.arg("tags"), lambda r: r.get("tags") or (), "tags")
        records = list_filter(records, request.arg("providers"), lambda r: (r.get("provider"),), "providers")
        records = list_filter(records, request.arg("names"), lambda r: (r.get("name"),), "names")
        if request.arg("sort") and any(k.strip().split(":")[0] == "profileCount"
                                       for k in request.arg("sort").split(",")):
            records = [self.audience_wire(r) for r in records]
        return sort_records(records, request.arg("sort"))

    def list_audiences(self, request: Request) -> Response:
        records = [self.audience_wire(r) for r in self._filtered(request)]
        return answer_list(request, request.action, records)

    def list_audience_metadata(self, request: Request) -> Response:
        records = [self.metadata_wire(r) for r in self._filtered(request)]
        return answer_list(request, request.action, records)

    def get_audience(self, request: Request) -> dict[str, Any]:
        return self.audience_wire(self.require_audience(request.params["audience_id"]))

    def get_profile_audiences(self, request: Request) -> list[dict[str, Any]]:
        record = self.state.require_profile(request.params["profile_id"])
        audiences = self.state.store["audiences"]
        return [self.metadata_wire(audiences.records[a]) for a in self.state.members.of(record["itemId"])
                if a in audiences.records]

    def get_audience_membership(self, request: Request) -> bool:
        audience = self.require_audience(request.params["audience_id"])
        profile_id = request.params["profile_id"]
        if not profile_id.strip():
            raise Reject(400, "profileId must not be blank")
        return self.state.profile(profile_id) is not None and self.state.members.has(audience["id"], profile_id)

    # --- tag patches ------------------------------------------------------------------------

    def update_audience(self, request: Request) -> dict[str, Any]:
        audience = self.require_audience(request.params["audience_id"])
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in (JSON_PATCH, MERGE_PATCH, "application/json"):
            raise Reject(415, f"unsupported content type {kind}; use {MERGE_PATCH} or {JSON_PATCH}")
        if audience.get("readOnly"):
            # Unomi's metadata: readOnly means "can be accessed but not modified"; the documents name
            # no status, so the one an import of a managed audience gets: the audience's state forbids it
            raise Reject(409, f"audience {audience['id']} is read-only (managed by its "
                              f"{audience.get('provider')} integration) and cannot be patched")
        body = request.json()
        if kind == JSON_PATCH:
            tags = self._json_patch(audience, body)
        else:
            if not isinstance(body, dict):
                raise Reject(400, "a JSON Merge Patch is an object (send a JSON Patch array as "
                                  f"{JSON_PATCH})")
            unknown = sorted(set(body) - {"tags"})
            if unknown:
                raise Reject(400, f"only tags can be patched, not {', '.join(unknown)}")
            # RFC 7396: a member left out stays as it is, null removes it (no tags)
            merged = json_merge_patch.merge({"tags": copy.deepcopy(audience.get("tags") or [])}, body)
            tags = merged.get("tags", [])
        audience["tags"] = _strings(tags, "tags")
        audience["lastUpdated"] = iso(self.state.clock.now())
        return self.audience_wire(audience)

    def _json_patch(self, audience: dict[str, Any], operations: Any) -> list[Any]:
        """RFC 6902 applied by `jsonpatch` to the audience as it is read; only /tags may change.

        A `test` may read any member and a `copy` may take its value from one (neither changes it);
        a `move` removes its `from`, so both of its pointers must be under /tags. The status codes
        are RFC 5789's: a malformed patch or a member that may not be patched is a 400; a failed
        `test` or a pointer the audience lacks (remove /tags/9 of two tags) is a 409 conflict.
        """
        if not isinstance(operations, list):
            raise Reject(400, "a JSON Patch is an array of operations")
        for number, operation in enumerate(operations):
            if not isinstance(operation, dict) or not isinstance(operation.get("op"), str) \
                    or not isinstance(operation.get("path"), str):
                raise Reject(400, f"operation {number} needs op and path")
            writes = [operation["path"]] if operation["op"] in WRITES else []
            if operation["op"] == "move":
                writes.append(operation.get("from"))
            for pointer in writes:
                if not _under_tags(pointer):
                    raise Reject(400, f"only /tags can be patched, not {pointer}")
        document = self.audience_wire(audience)
        try:
            patched = jsonpatch.apply_patch(document, operations)      # on a copy: all or nothing
        except jsonpatch.JsonPatchTestFailed as error:
            raise Reject(409, f"test failed: {error}") from None
        except jsonpatch.JsonPatchConflict as error:
            raise Reject(409, f"the patch does not apply: {error}") from None
        except (jsonpatch.InvalidJsonPatch, jsonpointer.JsonPointerException) as error:
            raise Reject(400, f"invalid JSON Patch: {error}") from None
        return patched.get("tags", [])      # `remove /tags` leaves the audience without tags

    # --- import -----------------------------------------------------------------------------

    def serve_file(self, request: Request) -> Response:
        content = self.state.files.get(request.params["name"])
        if content is None:
            return Response(404, {"message": f"no file {request.params['name']}"})
        return Response(200, content, content_type="application/json")

    def _read_url(self, url: Any) -> bytes:
        if not isinstance(url, str) or not url.strip():
            raise Reject(400, "url must not be blank")
        parts = url_parts(url, "url")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Reject(400, f"url must be a valid http(s) URL, not {url!r}")
        if url in self.state.remote_files:
            return self.state.remote_files[url]
        own = self.state.files_root
        if parts.hostname in ("127.0.0.1", "localhost") and parts.path.startswith(own):
            content = self.state.files.get(parts.path[len(own):])
            if content is not None:
                return content
        raise Reject(400, f"cannot read the package at {url}: 404 Not Found")

    def _enclosed(self, package: Any) -> tuple[dict[str, Any], list[str]]:
        """The audience and member ids of an enclosed package, or Reject(400) with every problem."""
        if not isinstance(package, dict):
            raise Reject(400, "the package must be a JSON object")
        problems = []
        if package.get("type", "enclosed") != "enclosed":
            problems.append("type: must be enclosed")
        audience = package.get("audience")
        if not isinstance(audience, dict):
            problems.append("audience: must be an object")
            audience = {}
        for field in ("id", "name"):
            if not isinstance(audience.get(field), str) or not audience[field].strip():
                problems.append(f"audience.{field}: must not be blank")
        for field in ("tags",):
            value = audience.get(field, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                problems.append(f"audience.{field}: must be a list of non-blank strings")
        unknown = sorted(set(audience) - {"id", "name", "description", "tags", "scope"})
        if unknown:
            problems.append(f"audience: unknown fields {', '.join(unknown)}")
        members = package.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) and m.strip() for m in members):
            problems.append("members: must be a list of profile ids")
            members = []
        existing = self.state.store["audiences"].get(audience.get("id")) if isinstance(audience.get("id"), str) else None
        if existing is not None and existing.get("provider") in MANAGED:
            raise Reject(409, f"audience {audience['id']} is managed by the {existing['provider']} "
                              "integration and cannot be imported")
        if problems:
            raise Reject(400, "invalid audience import package", errors=problems)
        return audience, list(dict.fromkeys(members))

    def import_audience(self, request: Request) -> Response:
        package = request.json()
        if not isinstance(package, dict) or package.get("type") not in ("enclosed", "url"):
            raise Reject(400, "invalid audience import package", errors=["type: must be enclosed or url"])
        source: Any = "enclosed"         # or the package's URL, as given
        if package["type"] == "url":
            source = package.get("url")
            content = self._read_url(source)
            try:
                package = orjson.loads(content)
            except orjson.JSONDecodeError as error:
                raise Reject(400, "invalid audience import package",
                             errors=[f"{source}: not JSON ({error})"]) from None
        audience, members = self._enclosed(package)
        self.state.jobs.append({"audience": audience, "members": members, "source": source,
                          "requested": iso(self.state.clock.now())})
        return Response(202)

    def run_imports(self) -> None:
        """Apply the scheduled imports (on a clock advance)."""
        audiences = self.state.store["audiences"]
        jobs, self.state.jobs = self.state.jobs, []
        for job in jobs:
            spec = job["audience"]
            record = audiences.get(spec["id"])
            if record is None:
                record = audiences.add({"id": spec["id"], "name": spec["name"], "description": "",
                                        "scope": "crm", "tags": [], "systemTags": ["imported"],
                                        "provider": "import", "enabled": True, "hidden": False,
                                        "readOnly": False, "condition": None, "lastUpdated": None})
                self.state.audience_order[spec["id"]] = len(self.state.audience_order)
            record.update({k: spec[k] for k in ("name", "description", "tags", "scope") if k in spec})
            record["condition"] = {"type": "importedMembersCondition",
                                   "parameterValues": {"source": job["source"], "requested": job["requested"]}}
            record["lastUpdated"] = iso(self.state.clock.now())
            known = {m for m in job["members"] if self.state.profile(m) is not None}
            self.state.members.replace(spec["id"], known)
            skipped = len(job["members"]) - len(known)
            if skipped:
                self.state.notify("audienceImport", "WARNING",
                            f"Audience {spec['id']} imported with {skipped} unknown profiles skipped",
                            {"audienceId": spec["id"], "members": len(known), "skipped": skipped})
            else:
                self.state.notify("audienceImport", "INFO", f"Audience {spec['id']} imported: {len(known)} members",
                            {"audienceId": spec["id"], "members": len(known), "skipped": 0})
