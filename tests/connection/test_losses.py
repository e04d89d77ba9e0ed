"""toolkit.connection.losses: what a destructive action loses, said from the workspace's latest loads;
the per-service sentences (`<service>_losses.py`) and the catalog's own words where none is written."""
from __future__ import annotations

import pandas as pd
import pytest

from toolkit import catalog, forms
from toolkit.connection import effects, losses


class Held:
    """A workspace holding one latest load of each resource given, as the sentences read it."""

    def __init__(self, **frames: pd.DataFrame) -> None:
        self.frames = frames

    def latest(self, service: str, resource: str):
        return 1 if resource in self.frames else None

    def read(self, service: str, resource: str) -> pd.DataFrame:
        return self.frames[resource]


class Bound:
    """What a Connection is to a sentence: something with a workspace."""

    def __init__(self, workspace: Held) -> None:
        self.workspace = workspace


def said(action: str, held: Held | None, **values) -> str:
    return losses.loss(held, catalog.ACTIONS[action], values)


def test_every_sentence_is_for_a_destructive_action_of_the_catalog():
    assert losses.SENTENCES
    for action_id in losses.SENTENCES:
        assert catalog.ACTIONS[action_id].destructive, action_id
        assert losses.SENTENCES[action_id].__module__ == f"toolkit.connection.{action_id.split('.')[0]}_losses"


def test_an_action_without_a_sentence_is_said_from_its_catalog_entry():
    action = catalog.ACTIONS["asset_library.delete_asset"]
    assert action.id not in losses.SENTENCES
    assert losses.loss(None, action, {"asset_id": "a1"}) == f"{action.doc.rstrip('.')}. This cannot be undone."


def test_a_board_delete_counts_its_cascade():
    held = Held(boards=pd.DataFrame({"id": ["b1", "b2", "b3"], "parent_board_id": [None, "b1", None],
                                     "title": ["Spring", "Spring/Shoots", "Other"]}),
                asset_boards=pd.DataFrame({"asset_id": ["a1", "a2", "a3", "a3"], "id": ["b1", "b2", "b1", "b3"]}))
    text = said("asset_library.delete_board", held, board_id="b1")
    assert "“Spring” with its 1 direct child board(s)" in text and "removes 2 asset(s)" in text   # a3 is in b3 too
    assert effects.board_cascade(Bound(held), "b1") == (1, 2) == forms.board_cascade(held, "b1")
    assert "pull boards and asset_boards" in said("asset_library.delete_board", Held(), board_id="b1")


def test_a_custom_field_and_a_tag_count_what_carries_them():
    held = Held(custom_fields=pd.DataFrame({"id": ["f1"], "name": ["Campaign"]}),
                custom_field_values=pd.DataFrame({"id": ["v1", "v2", "v3"], "custom_field_id": ["f1", "f1", "f2"]}),
                tags=pd.DataFrame({"id": ["t1"], "name": ["hero"]}),
                assets=pd.DataFrame({"id": ["a1", "a2"], "cover_version_tags": [["hero", "x"], None]}))
    assert "“Campaign” with its 2 value(s)" in said("asset_library.delete_custom_field", held, custom_field_id="f1")
    assert "“hero”, carried by the cover version of 1 asset(s)" in said("asset_library.delete_tag", held, tag_id="t1")
    # without the rows to count from: the catalog's words
    doc = catalog.ACTIONS["asset_library.delete_tag"].doc.rstrip(".")
    assert said("asset_library.delete_tag", Held(), tag_id="t1") == f"{doc}. This cannot be undone."


@pytest.mark.parametrize(("values", "scope"), [({}, "all 2 live target(s)"),
                                               ({"target_ids": [1]}, "the listed targets or documents")])
def test_a_cancel_counts_the_live_targets(values, scope):
    held = Held(targets=pd.DataFrame({"submission_id": [7, 7, 7, 8],
                                      "status": ["IN_PROCESS", "DELIVERED", "READY", "READY"]}))
    assert said("translation.cancel_submission", held, submission_id=7, **values) == \
        f"Cancels {scope} of submission 7. This cannot be undone."


def test_an_anonymisation_names_the_personal_properties():
    held = Held(profile_properties=pd.DataFrame({"id": ["email", "age"],
                                                 "system_tags": [["personalIdentifierProperties"], []]}))
    assert "the profile's 1 personal identifier properties (email)" in \
        said("audience_platform.anonymize_profile", Bound(held), profile_id="p1")
