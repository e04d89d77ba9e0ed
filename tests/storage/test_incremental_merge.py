"""An incremental load's commit: the versions it carries stay as they are, untouched; the rest of the
view is matched against its rows as a full load's would be."""
from __future__ import annotations

import pyarrow as pa
import pytest

from toolkit import Workspace
from toolkit.storage.merge import Carry

URL = "http://127.0.0.1:9/PD"
# how the incremental strategies write a carry: the rows whose column is one of the given values
CARRY = ('(CAST("grp" AS VARCHAR) IN (SELECT unnest(?::VARCHAR[])))', [["x"]])


def rows(*triples: tuple) -> pa.Table:
    return pa.table({"id": pa.array([i for i, _, _ in triples], pa.int64()),
                     "grp": pa.array([g for _, g, _ in triples], pa.string()),
                     "status": [s for _, _, s in triples]})


def versions(ws: Workspace) -> list[tuple]:
    return ws.sql('select id, grp, status, _valid_from, _valid_to from translation."targets__versions" '
                  "order by id nulls first, _valid_from, _valid_to nulls last").fetchall()


@pytest.fixture
def ws():
    with Workspace() as workspace:
        yield workspace


@pytest.mark.parametrize("carry", [CARRY, Carry('(CAST("grp" AS VARCHAR) IN (SELECT id FROM _toolkit_kept))', [],
                                                  {"_toolkit_kept": pa.table({"id": ["x"]})})],
                         ids=["a list parameter", "an Arrow table"])
def test_carried_versions_stay_and_the_rest_is_merged_like_a_full_load(ws, carry):
    with ws.load("translation", URL, "targets", {}, ("id",)) as first:
        first.write(rows((1, "x", "READY"), (2, "x", "READY"), (3, "x", "DONE"), (4, "y", "READY"),
                         (5, "y", "READY"), (6, None, "READY"), (None, "y", "DONE"), (None, "y", "DONE")))
    # carried: group x (1, 2, 3), except 2, whose key the load's rows hold; not carried: 4, 5, 6 (a NULL
    # group is not carried) and the two equal key-less rows, of which the load brings one
    with ws.load("translation", URL, "targets", {}, ("id",), builds_on=first.load_id, carry=carry) as load:
        load.write(rows((2, "x", "DONE"), (4, "y", "READY"), (7, "y", "READY"), (None, "y", "DONE")))
    assert versions(ws) == [
        (None, "y", "DONE", 1, 2), (None, "y", "DONE", 1, None),
        (1, "x", "READY", 1, None),                              # carried
        (2, "x", "READY", 1, 2), (2, "x", "DONE", 2, None),      # carried group, but the load holds its key
        (3, "x", "DONE", 1, None),                               # carried
        (4, "y", "READY", 1, None),                              # asked again, unchanged: the same version
        (5, "y", "READY", 1, 2), (6, None, "READY", 1, 2),       # not carried and not in the load: gone
        (7, "y", "READY", 2, None)]
    view = ws.sql("select id, status from translation.targets order by id nulls first").fetchall()
    assert view == [(None, "DONE"), (1, "READY"), (2, "DONE"), (3, "DONE"), (4, "READY"), (7, "READY")]
    assert sorted(ws.as_of("translation.targets", first.load_id)["id"].dropna().tolist()) == [1, 2, 3, 4, 5, 6]


def test_an_incremental_load_that_carries_everything_changes_only_its_own_keys(ws):
    with ws.load("translation", URL, "targets", {}, ("id",)) as first:
        first.write(rows(*((i, "x", "READY") for i in range(1, 201))))
    everything = ('(CAST("id" AS VARCHAR) IN (SELECT unnest(?::VARCHAR[])))', [[str(i) for i in range(1, 201)]])
    with ws.load("translation", URL, "targets", {}, ("id",), builds_on=first.load_id, carry=everything) as load:
        load.write(rows((7, "x", "DONE")))
    changed = ws.sql('select id, status, _valid_from, _valid_to from translation."targets__versions" '
                     "where _valid_from = 2 or _valid_to is not null order by _valid_from").fetchall()
    assert changed == [(7, "READY", 1, 2), (7, "DONE", 2, None)]
    assert ws.sql("select count(*) from translation.targets").fetchall() == [(200,)]
