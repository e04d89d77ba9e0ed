"""What issue 48 made cheaper still guards what it guarded: the repeat-key guard, a walk's stage
without digests until a checkpoint, a fan-out's checkpoints in files of what was done since the last,
and the typing helper off unless asked for."""
from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from toolkit import catalog
from toolkit.errors import PagingError
from toolkit.pull import typist
from toolkit.pull.plans import KeyWatch
from toolkit.storage.stage import Stage, resumable

NOTIFICATIONS = catalog.resource("audience_platform", "notifications")
MEMBERSHIPS = catalog.resource("audience_platform", "memberships")


def watched(resource, pages: list[pa.Table], full: bool = True) -> None:
    keys = KeyWatch(resource, "list")
    for _ in pages:
        keys.expect(full)
    for _ in keys.watched((page, 1) for page in pages):
        pass


def test_a_full_page_of_keys_seen_before_is_refused_and_a_new_one_is_not():
    first, second = pa.table({"id": ["a", "b"]}), pa.table({"id": ["c", "d"]})
    watched(NOTIFICATIONS, [first, second])                       # new keys: walks on
    with pytest.raises(PagingError, match="page 3 of the walk holds only rows the walk has had already"):
        watched(NOTIFICATIONS, [first, second, pa.table({"id": ["b", "c"]})])
    watched(NOTIFICATIONS, [first, pa.table({"id": ["a", "b"]})], full=False)   # a short last page may repeat


def test_keys_of_several_columns_are_told_apart_by_every_column_and_nulls_count():
    page = pa.table({"profile_id": ["p1", "p1"], "audience_id": ["a1", None]})
    watched(MEMBERSHIPS, [page, pa.table({"profile_id": ["p2", "p1"], "audience_id": ["a1", "a1"]})])
    # "p1" + "a1" must not read as "p" + "1a1": a separator no text holds
    watched(MEMBERSHIPS, [pa.table({"profile_id": ["p", "x"], "audience_id": ["1a1", "y"]}),
                          pa.table({"profile_id": ["p1", "x"], "audience_id": ["a1", "z"]})])
    with pytest.raises(PagingError):
        watched(MEMBERSHIPS, [page, pa.table({"profile_id": ["p1"], "audience_id": pa.array([None], pa.string())})])


def test_integer_keys_are_compared_too():
    with pytest.raises(PagingError):
        watched(NOTIFICATIONS, [pa.table({"id": [1, 2]}), pa.table({"id": [2, 1]})])


def test_a_walks_stage_digests_its_files_only_when_a_checkpoint_comes(tmp_path):
    stage = Stage(tmp_path / "w.duckdb", "load1", memory=0, checkpoints=False)
    stage.add(pa.table({"x": [1, 2, 3]}))
    assert not stage._digests                      # nothing hashed while it only stages
    stage.checkpoint({"signature": {"s": 1}}, ["1", "2"])
    note = orjson.loads((stage._folder / "checkpoint.json").read_bytes())
    assert set(note["digests"]) == {*note["files"], *note["done_files"]}
    stage.add(pa.table({"x": [4]}))                 # and from then on as it writes
    assert len(stage._digests) == 3
    stage.close()


def test_what_checkpoints_say_was_done_comes_back_whole_in_order_once_each(tmp_path, monkeypatch):
    monkeypatch.setattr("toolkit.storage.stage.alive", lambda owner: False)   # as if its process had died
    stage = Stage(tmp_path / "w.duckdb", "load1", memory=0)
    stage.add(pa.table({"x": [1]}))
    stage.checkpoint({"signature": {"s": 1}}, ['"a"', '"b"'])
    stage.checkpoint({"signature": {"s": 1}}, ['"b"', '"c"'])    # a checkpoint cut short named b again
    stage.checkpoint({"signature": {"s": 1}}, None)             # nothing done since
    found = resumable(tmp_path / "w.duckdb", {"s": 1})
    assert found is not None and found.done() == ['"a"', '"b"', '"c"']
    done_file = found.folder / found.note["done_files"][0]
    done_file.write_bytes(done_file.read_bytes().replace(b"a", b"x"))
    assert found.done() is None                                 # damaged: not to be trusted
    other = Stage(tmp_path / "w.duckdb", "load2")
    assert not other.adopt(found) and "does not match its checksum" in other.damaged


def test_a_checkpoint_of_an_older_toolkit_with_its_own_list_is_taken_over_and_kept(tmp_path, monkeypatch):
    monkeypatch.setattr("toolkit.storage.stage.alive", lambda owner: False)
    old = Stage(tmp_path / "w.duckdb", "load1", memory=0)
    old.add(pa.table({"x": [1]}))
    old.checkpoint({"signature": {"s": 1}, "done": ['"a"']})     # the done list inside the note
    found = resumable(tmp_path / "w.duckdb", {"s": 1})
    assert found.done() == ['"a"']
    new = Stage(tmp_path / "w.duckdb", "load2")
    assert new.adopt(found)
    new.checkpoint({"signature": {"s": 2}}, ['"b"'])
    again = resumable(tmp_path / "w.duckdb", {"s": 2})      # as if this one died too
    assert again.done() == ['"a"', '"b"'] and "done" not in again.note
    new.close()


def test_the_typing_helper_is_off_unless_asked_for(monkeypatch):
    monkeypatch.delenv("TOOLKIT_TYPING_HELPER", raising=False)
    assert not typist.enabled()
    monkeypatch.setenv("TOOLKIT_TYPING_HELPER", "1")
    assert typist.enabled()
