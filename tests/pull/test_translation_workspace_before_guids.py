"""A workspace written before issue 47 (the fixture: pulled from the sandbox of that time, at scale 0.05)
loads with today's toolkit: its loads and history read as they were, a new pull of every translation
resource whose shape changed lands beside them (columns added, a category's values widened, the word
count read from `totalWordCount`), and an upload recorded then with integer ids still shows in the
audit. The ids that became GUIDs (an upload's process, a download) were never columns of a table:
they live only in the answers, and in the audit as text."""
from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolkit
from toolkit import Workspace
from toolkit.connection.audit import audit

FIXTURE = Path(__file__).parents[1] / "fixtures" / "translation_integer_ids.duckdb.gz"
CHANGED = ("projects", "custom_attributes", "word_counts", "failed_webhooks", "targets")


@pytest.fixture()
def old(tmp_path: Path) -> Path:
    path = tmp_path / "before-guids.duckdb"
    with gzip.open(FIXTURE) as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return path


@pytest.fixture()
def box() -> Iterator[toolkit.sandbox.Sandbox]:
    with toolkit.sandbox.start(scale=0.05) as started:
        yield started


def test_the_old_workspace_reads_as_it_was(old: Path) -> None:
    with Workspace(old, read_only=True) as ws:
        attributes = ws.sql("select distinct type from translation.custom_attributes order by 1").fetchall()
        assert attributes == [("DATE",), ("SELECT",), ("TEXT",)]     # what the sandbox said then
        counts = ws.sql("select word_count from translation.word_counts").fetchall()
        assert counts and all(c[0] > 0 for c in counts)
        recorded = audit(ws)
        assert list(recorded["action"]) == ["translation.upload_translatable"]
        assert recorded["response_id"][0] == "1001"


def test_a_new_pull_lands_beside_the_old_loads(old: Path, box: toolkit.sandbox.Sandbox) -> None:
    with Workspace(old) as ws:
        before = {name: ws.sql(f"select count(*) from translation.{name}").fetchall()[0][0] for name in CHANGED}
        first = {name: ws.history(f"translation.{name}")["load_id"].iloc[0] for name in CHANGED}
        tm = ws.connect("translation", **box.credentials("translation"))
        frames = {name: tm.fetch(name, refresh=True) for name in CHANGED}
        assert set(frames["custom_attributes"]["type"].dropna()) == {"COMBO", "TEXT"}
        assert frames["custom_attributes"]["description"].notna().all()
        assert frames["projects"]["default_workflow_definition_id"].notna().all()
        assert frames["word_counts"]["word_count"].gt(0).all() and frames["word_counts"]["submission_name"].notna().all()
        assert frames["targets"]["file_format_id"].notna().any()
        # the old loads are still there, whole, with the columns they had (the new ones empty)
        for name in CHANGED:
            then = ws.as_of(f"translation.{name}", first[name])
            assert len(then) == before[name], name
        old_types = set(ws.as_of("translation.custom_attributes", first["custom_attributes"])["type"])
        assert old_types == {"DATE", "SELECT", "TEXT"}
        assert ws.as_of("translation.word_counts", first["word_counts"])["submission_name"].isna().all()
        assert len(audit(ws)) == 1
