"""What the catalog holds beyond the interface documents says where it comes from: every action or param
with an `origin` names sources that docs/public-specs.md lists, the document names it, and the actions
table shows it."""
from __future__ import annotations

import re
from pathlib import Path

import toolkit
from toolkit import catalog

SPECS = (Path(__file__).resolve().parents[2] / "docs" / "public-specs.md").read_text()
SOURCES = set(re.findall(r"^- \*\*(\w+)\*\*", SPECS, re.M))
SEED_TRANSLATION_ACTIONS = 82          # the document's tables (docs/architecture/decisions.md)


def originated() -> list[tuple[str, str, tuple[str, ...]]]:
    """(action id, param name or "", origin) of everything that carries one."""
    found = []
    for action in catalog.ACTIONS.values():
        if action.origin:
            found.append((action.id, "", action.origin))
        found += [(action.id, p.name, p.origin) for p in action.params if p.origin]
    return found


def test_every_origin_names_a_listed_source_and_is_named_there():
    found = originated()
    assert found, "the catalog holds what public integrations show (issue 27)"
    for action_id, param, origin in found:
        assert origin and set(origin) <= SOURCES, (action_id, param, origin, sorted(SOURCES))
        named = param or action_id
        assert f"`{named}`" in SPECS, f"docs/public-specs.md does not name {named}"


def test_only_entries_with_an_origin_go_beyond_the_document():
    seed = [a for a in catalog.ACTIONS.values() if a.service == "translation" and not a.origin]
    assert len(seed) == SEED_TRANSLATION_ACTIONS


def test_the_actions_table_shows_the_origin():
    table = toolkit.actions("translation").set_index("action")
    assert table.loc["translation.download_target_deliverable", "origin"] == "G4, G6 (action)"
    assert table.loc["translation.start_download", "origin"] == "G4 (deliverable_languages)"
    assert table.loc["translation.list_projects", "origin"] == "G8, G9 (project_name)"
    assert table.loc["translation.get_project", "origin"] == "seed"
