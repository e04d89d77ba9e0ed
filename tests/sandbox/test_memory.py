"""The generic handlers: create, get, merge patch, replace, delete, with the catalog's statuses."""
import requests

from toolkit.catalog.spec import Action
from toolkit.sandbox.exchange import Headers, Request
from toolkit.sandbox.memory import Memory, generic_handler, merge_patch


def test_create_get_patch_put_delete(toy):
    _, session, base = toy
    created = session.post(f"{base}/api/v2/things", json={"n": 5000, "tags": {"a": 1, "b": 2}})
    assert created.status_code == 201
    thing_id = created.json()["id"]
    assert len(thing_id) == 36 and thing_id[14] == "4"          # a uuid4-shaped id
    patched = session.patch(f"{base}/api/v2/things/{thing_id}", json={"tags": {"a": None, "c": 3}, "id": "x"})
    assert patched.status_code == 200 and patched.json() == {"id": thing_id, "n": 5000, "tags": {"b": 2, "c": 3}}
    replaced = session.put(f"{base}/api/v2/things/{thing_id}", json={"n": 1})
    assert replaced.status_code == 204 and replaced.content == b"" and "Content-Length" not in replaced.headers
    assert session.get(f"{base}/api/v2/things/{thing_id}").json() == {"id": thing_id, "n": 1}
    deleted = session.delete(f"{base}/api/v2/things/{thing_id}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert session.get(f"{base}/api/v2/things/{thing_id}").status_code == 404


def test_create_with_an_existing_id_conflicts(toy):
    _, session, base = toy
    assert session.post(f"{base}/api/v2/things", json={"id": "t0001"}).status_code == 409
    assert session.post(f"{base}/api/v2/things", json=[1]).status_code == 400
    assert session.post(f"{base}/api/v2/things", data=b"{not json", headers={"Content-Type": "application/json"}).status_code == 400


def test_created_ids_repeat_for_the_same_seed(launch):
    ids = []
    for _ in range(2):
        box = launch(seed=9)
        headers = {"Authorization": f"Bearer {box.credentials('toy')['token']}"}
        ids.append(requests.post(f"{box.url('toy')}/api/v2/things", json={}, headers=headers, timeout=5).json()["id"])
    assert ids[0] == ids[1]


def test_merge_patch_is_rfc_7386():
    assert merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"a": [1, 2]}, {"a": [3]}) == {"a": [3]}
    assert merge_patch({"a": 1}, {"b": {"c": None}}) == {"a": 1, "b": {}}
    assert merge_patch(["a"], {"a": "b", "c": None}) == {"a": "b"}     # RFC 7396 appendix A's last cases
    assert merge_patch({"a": "foo"}, None) is None


def test_merge_patch_leaves_the_record_as_it_was():
    """A patch refused after merging (a read-only field, a bad value) must not have changed the record."""
    record = {"a": {"b": 1}, "c": [1]}
    merge_patch(record, {"a": {"b": 2, "x": None}, "c": None})
    assert record == {"a": {"b": 1}, "c": [1]}


def test_multipart_parts_keep_bytes_and_filenames(toy):
    _, session, base = toy
    blob = bytes(range(256)) * 3 + b"\r\n--\r\n"
    answer = session.post(f"{base}/api/v2/upload", files={"file": ("a.zip", blob)}, data={"batchName": "B1"})
    parts = {p["name"]: p for p in answer.json()}
    assert bytes.fromhex(parts["file"]["data"]) == blob and parts["file"]["filename"] == "a.zip"
    assert bytes.fromhex(parts["batchName"]["data"]) == b"B1" and parts["batchName"]["filename"] is None


def test_chunked_request_bodies_are_read(toy):
    _, session, base = toy
    answer = session.post(f"{base}/api/v2/things", data=iter([b'{"n": ', b"77}"]),
                          headers={"Content-Type": "application/json"})
    assert answer.status_code == 201 and answer.json()["n"] == 77


def test_a_handler_needs_only_the_store_and_two_callables():
    """The store knows no emulator: ids and the created hook are handed in (issue 14: no circle)."""
    store, seen = Memory(), []

    def created(collection, record, request):
        seen.append((collection, request.method))
        return {**record, "createdAt": "2026-01-01T00:00:00Z"}

    create = generic_handler(Action("toy.create_thing", "T", "POST", "/things", "", body="json", status=201),
                             "things", store, new_id=lambda collection: f"{collection}-1", created=created)
    request = Request("POST", "/things", {}, Headers({"content-type": "application/json"}), b'{"n": 1}', "toy",
                      "", "", {})
    answer = create(request)
    assert answer.status == 201 and answer.body == {"n": 1, "id": "things-1", "createdAt": "2026-01-01T00:00:00Z"}
    assert store["things"].get("things-1") == answer.body and seen == [("things", "POST")]
