"""Routes come from the catalog: versions, literal segments first, trailing slashes, 404 and 405."""
import requests

from toolkit.catalog.spec import Action, Service
from toolkit.sandbox.routing import Router, dot_segment


def test_literal_segment_beats_placeholder(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/things/special").json() == {"special": True}
    assert session.get(f"{base}/api/v2/things/t0007").json()["n"] == 7


def test_literal_wins_whatever_the_catalog_order():
    service = Service("s", "S", "bearer", (), (), "/s", "message")
    actions = (Action("s.get_submission", "S", "GET", "/submissions/{submission_id}", ""),
               Action("s.get_background", "S", "GET", "/submissions/background", ""))
    route, params, _ = Router(service, actions).match("GET", "/s/submissions/background")
    assert route.action.id == "s.get_background" and params == {}
    route, params, _ = Router(service, actions).match("GET", "/s/submissions/12")
    assert route.action.id == "s.get_submission" and params == {"submission_id": "12"}


def test_path_params_are_decoded(toy):
    box, session, base = toy
    box.emulator("toy").store["things"].add({"id": "a b/c", "n": -1})
    assert session.get(f"{base}/api/v2/things/a%20b%2Fc").json()["n"] == -1


def test_trailing_slash_variants_are_distinct(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/slash/").json() == ["with slash"]
    assert session.get(f"{base}/api/v2/slash").json() == ["without slash"]


def test_versions_and_version_paths(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v1/about").json() == {"version": "v1"}
    assert session.get(f"{base}/api/v2/info").json() == {"version": "v2"}
    assert session.get(f"{base}/api/v1/info").status_code == 404
    assert session.get(f"{base}/api/v1/things", params={"limit": 1}).status_code == 200


def test_unversioned_action_takes_the_default_version(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/now").status_code == 200


def test_no_route_is_404_and_wrong_method_is_405(toy):
    _, session, base = toy
    missing = session.get(f"{base}/api/v2/nowhere")
    assert missing.status_code == 404 and "message" in missing.json()
    wrong = session.delete(f"{base}/api/v2/things")
    assert wrong.status_code == 405 and set(wrong.headers["Allow"].split(", ")) == {"GET", "POST"}


def test_action_without_handler_is_501(toy):
    _, session, base = toy
    assert session.get(f"{base}/api/v2/missing").status_code == 501


def test_extra_routes_are_public(toy):
    _, _, base = toy
    answer = requests.put(base.replace("/toy/toy", "/toy") + "/signed/abc", data=b"12345", timeout=5)
    assert answer.status_code == 200 and answer.headers["ETag"] == '"abc-5"'


def test_dot_segments_are_found_in_any_spelling():
    for path, segment in (("/a/../b", ".."), ("/a/./b", "."), ("/a/%2e%2E/b", "%2e%2E"), ("/a/.%2e", ".%2e"),
                          ("/a/%2e", "%2e"), ("/..", "..")):
        assert dot_segment(path) == segment, path
    for path in ("/a/b", "/a/.../b", "/a/..b", "/a/b..", "/a/%2e%2e%2e", "/a/.hidden", "/a//b", "/a/b/"):
        assert dot_segment(path) is None, path
