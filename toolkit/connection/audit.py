"""The audit trail: every write sent with a workspace attached, from a form or from `client.call`;
after a write succeeds, the cached loads it changes are marked stale.

One row per write in the workspace's `_audit` table: when, service, action, where it came from (form,
call or a multi-step helper), the params with every secret masked, the HTTP status, the id the answer
names and the request id. A failed write is recorded too, with the service's message. A connection
refuses a write before sending it when its workspace cannot take the row (closed, read-only); one
that fails after the write went out leaves a warning, since the write happened.

    toolkit.connection.audit.audit(ws)          # the trail as a DataFrame, newest last
"""
from __future__ import annotations

__all__ = ["COLUMNS", "SOURCE", "audit", "masked_params", "record_write", "response_id", "sent", "source"]

import contextvars
import datetime as dt
import io
import os
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson
import pandas as pd

from toolkit.catalog.masking import MASK, mask_passwords, secret_pair
from toolkit.connection.effects import affected_resources
from toolkit.errors import ToolkitWarning
from toolkit.http.redaction import Redactor, Secret
from toolkit.http.session import request_id

if TYPE_CHECKING:
    from toolkit.catalog.spec import Action
    from toolkit.http.client import Client
    from toolkit.http.wire import Prepared
    from toolkit.storage.store import Store

COLUMNS = ("at", "service", "action", "source", "params", "status", "ok", "response_id", "request_id", "error")
_DDL = """CREATE TABLE IF NOT EXISTS _audit (
    "at" TIMESTAMPTZ, service VARCHAR, action VARCHAR, source VARCHAR, params VARCHAR, status INTEGER,
    ok BOOLEAN, response_id VARCHAR, request_id VARCHAR, error VARCHAR)"""
# keys an answer names its new or changed record by, most specific first
_ID_KEYS = ("id", "itemId", "submissionId", "importId", "assetId", "processId", "downloadId", "username")

SOURCE: contextvars.ContextVar[str] = contextvars.ContextVar("toolkit_audit_source", default="call")


@contextmanager
def source(name: str):
    """Writes sent inside the block are recorded as coming from `name` (a form, a helper)."""
    token = SOURCE.set(name)
    try:
        yield
    finally:
        SOURCE.reset(token)


def sent(client: Client, workspace: Store, prepared: Prepared, params: Mapping[str, Any]) -> Any:
    """Send a prepared write with the client, record it in the workspace, return the parsed answer.

    The caller (a connection) has made sure the workspace can take the row before anything was sent;
    a workspace that fails afterwards (closed by another thread, the disk full) leaves a warning, since
    the write itself happened."""
    entry = prepared.action
    try:
        response = client.send(prepared)
    except Exception as error:
        _safely(workspace, client.redactor, entry, params, status=getattr(error, "status", None), ok=False,
                request=getattr(error, "request_id", None), error=str(error))
        raise
    result = client.result_of(entry, response)
    _safely(workspace, client.redactor, entry, params, status=response.status_code, ok=True,
            response=response_id(result), request=request_id(response.headers))
    try:
        workspace.mark_stale(entry.service, list(affected_resources(entry)))
    except Exception as error:
        warnings.warn(f"toolkit could not mark the loads {entry.id} changes as stale: {mask_passwords(str(error))}",
                      ToolkitWarning, stacklevel=3)
    return result


def _safely(workspace: Store, redactor: Redactor, entry: Action, params: Mapping[str, Any], **row: Any) -> None:
    try:
        record_write(workspace, entry, params, redactor=redactor, **row)
    except Exception as error:  # the write itself happened (or failed) either way; say so, go on
        warnings.warn(f"toolkit could not record {entry.id} in the audit table: {mask_passwords(str(error))}",
                      ToolkitWarning, stacklevel=3)


def record_write(ws: Store, entry: Action, params: Mapping[str, Any], *, status: int | None, ok: bool,
                 response: str | None = None, request: str | None = None, error: str | None = None,
                 redactor: Redactor | None = None) -> None:
    """Insert one row into `_audit` (created on first use); secrets in the params are masked."""
    if ws is None or getattr(ws, "read_only", False):
        return
    text = masked_params(entry, params)
    if redactor is not None:
        text, error = redactor.scrub(text), (redactor.scrub(error) if error else error)
    ws.sql(_DDL)
    ws.sql("INSERT INTO _audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", params=[
        dt.datetime.now(dt.UTC), entry.service, entry.id, SOURCE.get(), text, status, ok, response, request,
        error[:2000] if error else None])


def audit(ws: Store) -> pd.DataFrame:
    """Every recorded write, oldest first (an empty frame with the columns before the first one)."""
    held = ws.rows("SELECT 1 FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = '_audit'")
    found = ws.sql('SELECT * FROM _audit ORDER BY "at"') if held else None
    if found is None:
        return pd.DataFrame(columns=list(COLUMNS))
    return found.to_arrow_table().to_pandas()


def masked_params(entry: Action, params: Mapping[str, Any]) -> str:
    """The params as JSON: secret params and Secret values as ***, files as their name and size."""
    secret = {p.name for p in entry.params if p.secret}
    shown = {name: MASK if name in secret and value is not None else _plain(value)
             for name, value in params.items()}
    return orjson.dumps(shown, default=str, option=orjson.OPT_SORT_KEYS).decode()


def _plain(value: Any) -> Any:
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bytes | bytearray):
        return f"<file {value[0]}: {len(value[1])} bytes>"
    if isinstance(value, io.IOBase):
        return f"<file {os.path.basename(str(getattr(value, 'name', '')))}>"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        hidden = secret_pair(value)
        return {k: MASK if k == hidden and v is not None else _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    return value


def response_id(result: Any) -> str | None:
    """The id an answer names: `id`, `submissionId`, ... or the first `...Id` holding a scalar."""
    if not isinstance(result, dict):
        return None
    for key in (*_ID_KEYS, *(k for k in result if k.endswith("Id"))):
        value = result.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None
