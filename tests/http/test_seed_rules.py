"""Issue 17: what the seed documents say fails, refused by the client before anything is sent, and the
few places where the client and the sandbox read the documents the same way (each test failed before)."""
from __future__ import annotations

import pandas as pd
import pytest
import responses

from toolkit.catalog import ACTIONS
from toolkit.connection import effects
from toolkit.errors import ValidationError, VersionError
from toolkit.http import rules

# --- item 2: hosted mode needs paClientId at submission creation ----------------------------------------

CREATE = {"name": "Site", "project_id": 10, "source_language": "en-US"}


def test_hosted_mode_refuses_a_submission_without_pa_client_id(make, stub):
    hosted = make("translation", mode="hosted")
    with pytest.raises(ValidationError) as info:
        hosted.prepare("translation.create_submission", **CREATE)
    assert info.value.param == "pa_client_id" and "hosted mode" in info.value.rule
    assert len(stub.calls) == 0            # refused before the token request too
    assert hosted.prepare("translation.create_submission", pa_client_id=7, **CREATE).json["paClientId"] == 7


def test_client_mode_needs_no_pa_client_id(tms):
    assert "paClientId" not in tms.prepare("translation.create_submission", **CREATE).json


# --- item 3: the logged-in user cannot delete itself ------------------------------------------------------

def test_deleting_the_logged_in_user_is_refused_under_basic_auth(make):
    basic = make("audience_platform", token=None, username="integration-bot", password="pw-1")
    with pytest.raises(ValidationError) as info:
        basic.prepare("audience_platform.delete_user", username="integration-bot")
    assert info.value.param == "username" and "logged-in user" in info.value.rule
    assert basic.prepare("audience_platform.delete_user", username="someone-else").url.endswith(
        "/security/users/someone-else")


def test_with_a_token_the_client_cannot_know_and_says_so(audience):
    assert audience.prepare("audience_platform.delete_user", username="integration-bot").method == "DELETE"
    assert "token" in audience.delete_user.__doc__


# --- item 5: a v1 client does not quietly call v2 --------------------------------------------------------

@pytest.mark.parametrize("action", ["audience_platform.import_audience", "audience_platform.get_metric",
                                    "audience_platform.list_notifications", "audience_platform.list_audiences"])
def test_a_v1_client_refuses_v2_only_actions_as_a_v1_call_does(make, action):
    v1 = make("audience_platform", version="v1")
    params = ACTIONS[action].example
    with pytest.raises(VersionError) as from_client:
        v1.prepare(action, **params)
    with pytest.raises(VersionError) as from_call:
        make("audience_platform").prepare(action, version="v1", **params)
    assert (from_client.value.needed, from_client.value.configured) == ("v2", "v1")
    assert str(from_client.value) == str(from_call.value)


# --- item 6: a list is a JSON Patch, an object a merge patch -----------------------------------------------

OPS = [{"op": "add", "path": "/tags/-", "value": "vip"}]


def test_a_list_patch_goes_out_as_json_patch(audience):
    prepared = audience.prepare("audience_platform.update_audience", audience_id="a1", patch=OPS)
    assert prepared.headers["Content-Type"] == "application/json-patch+json"
    assert not prepared.idempotent        # `add /tags/-` twice adds two tags
    merge = audience.prepare("audience_platform.update_audience", audience_id="a1", patch={"tags": ["vip"]})
    assert merge.headers["Content-Type"] == "application/merge-patch+json"


@pytest.mark.parametrize(("patch", "content_type"), [
    (OPS, "application/merge-patch+json"), ({"tags": []}, "application/json-patch+json"),
    ([{"path": "/tags"}], None), ([{"op": "shuffle", "path": "/tags"}], None), (["add"], None)])
def test_a_patch_of_the_wrong_shape_is_refused(audience, patch, content_type):
    with pytest.raises(ValidationError) as info:
        audience.prepare("audience_platform.update_audience", audience_id="a1", patch=patch,
                         content_type=content_type)
    assert info.value.param == "patch"


# --- item 7: notification filters: empty means none; deleting them all is asked for --------------------------

def test_an_empty_filter_lists_every_notification(audience):
    assert ("filter", "") in audience.prepare("audience_platform.list_notifications", filter="").query


@pytest.mark.parametrize("params", [{}, {"filter": ""}, {"filter": "  "}, {"all": False},
                                    {"filter": "read:true", "all": True}])
def test_deleting_notifications_needs_a_filter_or_all(audience, stub, params):
    with pytest.raises(ValidationError) as info:
        audience.delete_notifications(**params)
    assert "all=True" in info.value.rule
    assert len(stub.calls) == 0


def test_delete_all_notifications_is_explicit(audience, stub):
    stub.add(responses.DELETE, audience.base_url + "/api/v2/notifications", status=204)
    assert audience.delete_notifications(all=True) is None
    assert stub.calls[-1].request.url.endswith("/api/v2/notifications")      # `all` is never sent
    assert audience.prepare("audience_platform.delete_notifications", filter="read:true").query == \
        [("filter", "read:true")]
    assert ACTIONS["audience_platform.delete_notifications"].destructive


class Held:
    """A workspace holding one latest load of notifications, as effects reads it."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def latest(self, service: str, resource: str):
        return 1 if resource == "notifications" else None

    def read(self, service: str, resource: str) -> pd.DataFrame:
        return self.frame


def test_the_form_says_how_many_a_delete_all_removes():
    action = ACTIONS["audience_platform.delete_notifications"]
    held = Held(pd.DataFrame({"id": ["n1", "n2", "n3"]}))
    assert "all 3 notification(s)" in effects.loss(held, action, {"all": True})
    assert "read:true" in effects.loss(held, action, {"filter": "read:true"})


# --- item 8: profileDimensionIds can be sent --------------------------------------------------------------

def test_profile_dimension_ids_can_be_removed(audience):
    prepared = audience.prepare("audience_platform.update_analytics_configuration",
                                profile_dimension_ids={"312345678": None})
    assert prepared.json == {"profileDimensionIds": {"312345678": None}}


# --- item 9: the audience import package's shape -----------------------------------------------------------

GOOD_PACKAGES = [
    {"type": "url", "url": "https://files.example.com/audience.json"},
    {"type": "enclosed", "audience": {"id": "vip", "name": "VIP", "tags": ["a"]}, "members": ["p1", "p2"]},
    {"type": "enclosed", "audience": {"id": "vip", "name": "VIP"}, "members": []},
]
BAD_PACKAGES = [
    ({}, "type"), ({"type": "csv"}, "type"), ([], "object"), ({"type": "url"}, "url"),
    ({"type": "url", "url": "files/audience.json"}, "url"), ({"type": "url", "url": "  "}, "url"),
    ({"type": "enclosed", "members": ["p1"]}, "audience"),
    ({"type": "enclosed", "audience": {"name": "VIP"}, "members": []}, "audience.id"),
    ({"type": "enclosed", "audience": {"id": " ", "name": "VIP"}, "members": []}, "audience.id"),
    ({"type": "enclosed", "audience": {"id": "vip", "name": ""}, "members": []}, "audience.name"),
    ({"type": "enclosed", "audience": {"id": "vip", "name": "VIP", "tags": "a"}, "members": []}, "audience.tags"),
    ({"type": "enclosed", "audience": {"id": "vip", "name": "VIP"}}, "members"),
    ({"type": "enclosed", "audience": {"id": "vip", "name": "VIP"}, "members": ["p1", 2]}, "members"),
]


@pytest.mark.parametrize("package", GOOD_PACKAGES)
def test_a_well_formed_package_passes(package):
    assert rules.problems(ACTIONS["audience_platform.import_audience"], {"package": package}) == []


@pytest.mark.parametrize(("package", "named"), BAD_PACKAGES)
def test_a_malformed_package_is_refused(package, named):
    found = rules.problems(ACTIONS["audience_platform.import_audience"], {"package": package})
    assert found and found[0].param == "package" and named in found[0].rule


# --- item 10: an empty editor name; a space in a claimed phase name --------------------------------------

def test_an_editor_name_must_not_be_blank():
    found = rules.problems(ACTIONS["translation.get_target_editor_info"],
                           {"submission_id": 1, "target_id": 2, "editor": " "})
    assert found and found[0].param == "editor"


@pytest.mark.parametrize("action", ["translation.claim_submission", "translation.unclaim_submission"])
def test_a_claimed_phase_name_holds_no_space(action):
    found = rules.problems(ACTIONS[action], {"submission_id": 1, "phase_name": "Final Review",
                                             "languages": ["fr-FR"]})
    assert found and found[0].param == "phase_name" and "spaces" in found[0].rule
