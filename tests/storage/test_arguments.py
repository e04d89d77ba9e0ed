"""What a store is handed that it cannot take is a WorkspaceArgumentError or a ValidationError (a
ToolkitError, and a ValueError as before) in one line that says what to do; nothing is opened or written."""
from __future__ import annotations

import pyarrow as pa
import pytest

from toolkit import Workspace
from toolkit.errors import ToolkitError, ValidationError, WorkspaceArgumentError
from toolkit.storage.sealed import Limits
from toolkit.storage.store import Store


def said(raised: pytest.ExceptionInfo) -> str:
    assert isinstance(raised.value, ToolkitError) and isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_workspace_refuses_arguments_that_do_not_go_together(tmp_path):
    with pytest.raises(WorkspaceArgumentError) as raised:
        Workspace(read_only=True)
    assert "read_only=True" in said(raised) and "give the workspace's path" in said(raised)
    with pytest.raises(WorkspaceArgumentError) as raised:
        Workspace(tmp_path / "w.duckdb", data_path=tmp_path / "data")
    assert "is for a team workspace" in said(raised)
    with pytest.raises(WorkspaceArgumentError) as raised:
        Store(tmp_path / "w.duckdb", sealed=Limits(temp=tmp_path))
    assert "open it with read_only=True" in said(raised)
    assert not (tmp_path / "w.duckdb").exists()


def test_an_export_in_an_unknown_format_names_those_there_are(tmp_path):
    with Workspace() as ws:
        with pytest.raises(ValidationError) as raised:
            ws.export(tmp_path / "snap.csv", format="csv")
        assert "format='csv'" in said(raised) and "duckdb, parquet" in said(raised)
        with pytest.raises(ValidationError) as raised:
            ws.export(tmp_path / "snap.duckdb", since="not a date")
        assert "since='not a date'" in said(raised)
    assert not list(tmp_path.iterdir())


def test_a_batch_with_a_column_the_workspace_sets_is_refused_and_the_load_keeps_nothing():
    with Workspace() as ws:
        with pytest.raises(ValidationError) as raised, \
                ws.load("translation", "http://127.0.0.1:9/", "targets", {}, ("id",)) as load:
            load.write(pa.table({"id": [1], "_valid_from": [3]}))
        assert "_valid_from" in said(raised) and "rename or drop them" in said(raised)
        assert ws.loads().status.tolist() == ["failed"]
