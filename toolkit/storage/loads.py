"""How a load is stored: the layout of the file, the params' stable text, and `Load`, one pull written
as one transaction.

A load holds the workspace's file twice, briefly: to record that it runs, and to commit. Meanwhile its
batches are staged (toolkit.storage.stage: memory, then Arrow files beside the workspace), and the
commit at the end of the `with` block writes them through Arrow in one transaction (`INSERT ... BY NAME
SELECT * FROM` the batch, which DuckDB reads in place; never row by row), so a failed or interrupted
pull leaves no rows behind, memory stays bounded, and other processes use the file while it walks. A batch with new columns adds them to the table; missing ones are NULL; a column whose values
no longer fit its type is widened. No secret is stored: params named like one are masked (masking.scrub).

Rows are stored as versions (toolkit.storage.file). A load into a resource with no valid rows writes its
batches straight into the versions table, valid from its own number. Otherwise its batches go into a
temporary table first and the commit merges them in three set-based statements: a row is known by
the hash of all its values (and its place among equal rows, so duplicates count), the valid versions
whose row the load lacks stop being valid in it, and the load's rows no valid version has become new
versions. Unchanged rows cost nothing, with or without a key; the temporary table spills to DuckDB's
temp directory under the memory limit, never into the file.

A Load's commit is done with two collaborators it makes for each commit and hands what they need:
`toolkit.storage.schema` (Evolution, the commit's cursor and the columns stored) makes and widens the
table of row versions to take each batch, `toolkit.storage.merge` (Merge, that table and the load's
number) turns the staged rows into versions; this module records, stages and commits.
"""
from __future__ import annotations

__all__ = ["LONG_TEXT_BYTES", "Load", "load_id", "params_json"]

import contextlib
import hashlib
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import orjson
import pandas as pd
import pyarrow as pa

from toolkit.catalog.masking import scrub_url
from toolkit.errors import ValidationError, WorkspaceError
from toolkit.storage import clock, id_lists, ledger
from toolkit.storage.file import (
    VALIDITY,
    history_view_sql,
    loads_view_sql,
    quote,
    versions_of,
    view_sql,
)
from toolkit.storage.handle import FileHandle
from toolkit.storage.lake import TRIES, conflicted, pause, settled
from toolkit.storage.merge import Carry, Merge
from toolkit.storage.processes import this_process
from toolkit.storage.readback import kept_batch
from toolkit.storage.schema import LONG_TEXT_BYTES, Evolution, nested, untyped_kind
from toolkit.storage.stage import Checkpoint, Stage, discard, resumable
from toolkit.storage.writer import Writer


def load_id(started: datetime) -> str:
    """A new load id: its start in epoch milliseconds in base 36, so ids sort by time and their first
    8 characters differ (DuckDB's zonemaps keep 8 bytes of a string: a read of one load skips the row
    groups of the others), then 6 random hex digits."""
    n, digits = int(started.timestamp() * 1000), ""
    while n:
        n, digit = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
    return f"{digits}-{secrets.token_hex(3)}"


def params_json(params: Mapping[str, Any] | None) -> str:
    """The params' stable text: keys sorted at every level, secrets masked, a long list of ids named by
    its digest and count (toolkit.storage.id_lists)."""
    return id_lists.recorded(params)[0]


class Load:
    """One pull being written: batches go into a transaction that commits when the `with` block ends.

    `requests` and `failed_ids` are counters the fetcher updates; they are saved with the load, and so
    is `drift`, what the answers held beyond the declared shapes (toolkit.pull.drift; None: not looked at),
    and `service_clock`, the service's own clock at its latest answer (its Date header), which reports
    measure deadlines by.
    With `keep=True` the batches written stay in `kept`, so that the caller can make its DataFrame
    from them (`Store.frame_of`) instead of reading the load back; the `categoricals` among their
    columns are kept dictionary-encoded.
    """

    _staged: Stage  # the load's batches until its commit, from `__enter__` on
    _shape: Evolution  # the table as the running commit shapes it, made by each try of the commit

    def __init__(self, handle: FileHandle, service: str, base_url: str, resource: str,
                 params: Mapping[str, Any], key: tuple[str, ...], keep: bool = False,
                 categoricals: Sequence[str] = (), *, builds_on: str | None = None,
                 carry: Carry | tuple[str, list] | None = None, resume: bool = False,
                 seen: Mapping[str, int] | None = None) -> None:
        self.builds_on, self.carry, self._resume = builds_on, Carry.of(carry), resume
        self.seen = dict(seen) if seen else None
        self.kind = "incremental" if builds_on else "full"
        self.handle, self.service, self.resource, self.key = handle, service, resource, key
        self.kept: list[pa.Table] | None = [] if keep else None
        self._encoded = frozenset(categoricals)
        # a long list of ids is recorded once, in `_given_ids`, and named in the params by digest and count
        self.base_url, (self.params, self._given) = scrub_url(base_url), id_lists.recorded(params)
        # what a checkpoint's signature names them by (short now, but loads recorded before named every
        # parent: 23 MB for 600,000 profiles, repeated in each note, every 10 s of a pull)
        self._params_digest = hashlib.blake2b(self.params.encode(), digest_size=16).hexdigest()
        self.load_id: str | None = None
        self.status, self.rows, self.requests, self.batches = "new", 0, 0, 0
        self.failed_ids: list = []
        self.drift: list[dict] | None = None
        self.service_clock: datetime | None = None
        self._versions = versions_of(service, resource)
        self.seq = 0  # the load's number among its resource's loads (`_loads.seq`)
        self._categories: dict[str, list[str]] = {}
        self.conflicts = 0  # commits of a lake tried again after another process's commit conflicted
        self._write_lock = threading.Lock()  # fan-out threads may share one load
        # an abandoned checkpoint of a load like this one, which `resume` may take over
        self.resumable: Checkpoint | None = None

    def __enter__(self) -> Load:
        handle = self.handle
        self._held, owners = handle.resource_lock(self.service, self.resource), handle.owners
        if owners.get((self.service, self.resource)) == threading.get_ident():  # waiting would deadlock
            raise WorkspaceError(f"a load of {self.service}.{self.resource} is already open in this thread")
        self._held.acquire()  # loads of one resource follow each other here: their DDL would conflict
        owners[self.service, self.resource] = threading.get_ident()
        try:
            started = clock.now()
            self.load_id = load_id(started)
            with handle.held(f"starting a load of {self.service}.{self.resource}") as con:
                self._schema(con)
                id_lists.store(con, self._given)
                ledger.insert_load(con, handle.lake is not None, {
                    "load_id": self.load_id, "service": self.service, "base_url": self.base_url,
                    "resource": self.resource, "params": self.params, "started": started, "rows": 0, "requests": 0,
                    "status": "running", "failed_ids": [], "key": list(self.key), "kind": self.kind,
                    "builds_on": self.builds_on, "owner": this_process(),
                    "seen": orjson.dumps(self.seen, option=orjson.OPT_SORT_KEYS).decode() if self.seen else None})
            self._given = {}    # written: the pull holds its ids only as it was handed them
            self._staged = Stage(handle.path, self.load_id, checkpoints=self._resume)
            if self._resume:
                self.resumable = resumable(handle.path, self.signature)
            self.status = "running"
        except BaseException:
            self._release()
            raise
        return self

    @property
    def signature(self) -> dict[str, Any]:
        """What a checkpoint of this load must match to be taken over: the same rows asked of the
        same service, into the same workspace, on the same previous load."""
        where = self.handle.lake.shown if self.handle.lake is not None else \
            str(self.handle.path.resolve()) if self.handle.path is not None else ""
        return {"workspace": where, "service": self.service, "base_url": self.base_url, "resource": self.resource,
                "params": self._params_digest, "kind": self.kind, "builds_on": self.builds_on}

    def checkpoint(self, note: dict[str, Any], done: list | None = None) -> None:
        """Make what was written so far survive this process (toolkit.storage.stage): `note` says what
        it holds for the pull that takes it over, `done` what was done since the previous checkpoint
        (a fan-out's parents; `Checkpoint.done` gives all of it back)."""
        with self._write_lock:
            self._staged.checkpoint({**note, "signature": self.signature, "rows": self.rows,
                                     "batches": self.batches, "categories": self._categories}, done)

    def resume(self, checkpoint: Checkpoint) -> dict[str, Any] | None:
        """Take over a checkpoint's batches (before writing any): its note, or None when another load
        took it first. A resumed load's batches are not all in memory, so `kept` is given up."""
        if self.status != "running" or self.batches:
            raise WorkspaceError(f"load {self.load_id}: a checkpoint is taken over before the first batch")
        with self._write_lock:
            if not self._staged.adopt(checkpoint):
                if self._staged.damaged:
                    self.handle.say(f"toolkit: the checkpoint of an interrupted pull of {self.service}."
                                    f"{self.resource} was damaged ({self._staged.damaged}); it was discarded "
                                    "and what it held is asked for again")
                return None
            note = checkpoint.note
            self.rows, self.batches = int(note.get("rows") or 0), int(note.get("batches") or 0)
            for name, values in (note.get("categories") or {}).items():
                known = self._categories.setdefault(name, [])
                known.extend(v for v in values if v not in known)
            self.kept = None
        return note

    def _schema(self, con: duckdb.DuckDBPyConnection) -> None:
        """The service's schema, where missing (two processes creating it in a lake at once conflict:
        the one that lost finds it made)."""
        if not con.execute("SELECT 1 FROM duckdb_schemas() WHERE database_name = current_database() AND "
                           "schema_name = ?", [self.service]).fetchall():
            settled(lambda: con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(self.service)}"),
                    self.handle.lake is not None)

    def _release(self) -> None:
        self.handle.owners.pop((self.service, self.resource), None)
        self._held.release()

    def held_values(self, columns: Sequence[str]) -> dict[str, set]:
        """The values each of these columns holds in any version of the table so far (none yet: {});
        what a categorical value is compared with to tell whether the table ever saw it."""
        if self.status != "running":
            raise WorkspaceError(f"load {self.load_id} is {self.status}: ask inside its `with` block")
        with self.handle.held() as con:
            stored = {name for (name,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND schema_name = ? AND table_name = ?", [self.service, self.resource + "__versions"]).fetchall()}
            return {name: {value for (value,) in con.execute(
                f"SELECT DISTINCT {quote(name)} FROM {self._versions} WHERE {quote(name)} IS NOT NULL").fetchall()}
                for name in columns if name in stored}

    def writer(self) -> Writer:
        """Batches written on a thread of their own while the next fill (toolkit.storage.writer);
        leave its `with` before the load's."""
        return Writer(self)

    def write(self, batch: pa.Table | pa.RecordBatch | pd.DataFrame) -> None:
        """Append a batch: new columns are added to the table, missing ones are NULL. It is staged
        (toolkit.storage.stage) and written into the workspace when the load commits."""
        if self.status != "running":
            raise WorkspaceError(f"load {self.load_id} is {self.status}: write inside its `with` block")
        table = _arrow(batch)
        taken = {"_load_id", *VALIDITY} & set(table.column_names)
        if taken:
            raise ValidationError("batch", sorted(taken), "has columns the workspace sets itself: rename or drop them")
        given, table = table, self._decode_dictionaries(table)
        with self._write_lock:
            self._staged.add(table)
            self.rows += table.num_rows
            self.batches += 1
            if self.kept is not None:
                self.kept.append(kept_batch(given, self._encoded))

    def _insert(self, cursor: duckdb.DuckDBPyConnection, shape: Evolution, table: pa.Table) -> None:
        """A staged batch into the workspace, inside the commit's transaction."""
        # DuckDB reads the Arrow batch in place through a replacement scan of this local name; a registered
        # view would stay alive (MVCC) until the commit, so memory would grow with the load
        _toolkit_batch = table
        incoming = {name: kind for name, kind in cursor.execute(
            "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM _toolkit_batch)").fetchall()}
        for field in table.schema:  # DuckDB 1.5 gives a list of only nulls as INTEGER[]: say it is untyped
            untyped = untyped_kind(field.type)
            if untyped and field.name in incoming:
                incoming[field.name] = untyped
        columns = shape.take(incoming, table)
        # lists and structs into a column widened to text go in as JSON, as the stored ones were
        texts = [quote(n) for n, k in incoming.items() if nested(k) and columns.get(n) == "VARCHAR"]
        rows = f"* REPLACE ({', '.join(f'to_json({n})::VARCHAR AS {n}' for n in texts)})" if texts else "*"
        if shape.stage:
            cursor.execute(f"INSERT INTO {shape.stage} BY NAME SELECT {rows} FROM _toolkit_batch")
        else:
            cursor.execute(f"INSERT INTO {self._versions} BY NAME SELECT {rows}, ? AS _valid_from "
                           "FROM _toolkit_batch", [self.seq])

    def _decode_dictionaries(self, table: pa.Table) -> pa.Table:
        """Categoricals are stored as their values (an ENUM would refuse the next load's new status);
        their categories are kept in `_categories` so reads give categoricals back."""
        for i, field in enumerate(table.schema):
            if pa.types.is_dictionary(field.type):
                column = table.column(i)
                values = field.type.value_type
                if pa.types.is_string(values) or pa.types.is_large_string(values):
                    known = self._categories.setdefault(field.name, [])
                    for chunk in column.chunks:
                        known.extend(v for v in chunk.dictionary.to_pylist() if v not in known)
                table = table.set_column(i, field.name, column.cast(field.type.value_type))
        return table

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        try:
            if kind is None:
                try:
                    self._commit()
                except BaseException as failure:
                    self._fail(failure)
                    raise
            else:
                self._fail(error)
        finally:
            if self.status == "complete":
                self._staged.close()
                if self._resume:   # what a dead load of the same rows left is now out of date
                    discard(self.handle.path, self.signature)
            else:           # a checkpoint survives a failed load (a lost network, Ctrl-C) for the next
                self._staged.release()
            self._release()

    def _commit(self) -> None:
        """Hold the file, write the staged batches and merge them in one transaction (module docstring).
        In a lake, a commit that conflicts with another process's (a load of the same resource at the
        same moment) is tried again from the staged batches, at most lake.TRIES times, waiting a
        growing, jittered pause between: it is never lost, and the later one merges over the earlier."""
        for attempt in range(1, TRIES + 1):
            kept = (self.rows, self.drift, self.kept)
            try:
                self._commit_once()
                self.handle.sweep_once()
                return
            except (duckdb.Error, WorkspaceError) as error:
                if self._landed():        # the answer to COMMIT was lost (the catalog or the store), not the commit
                    self.status = "complete"
                    return
                if self.handle.lake is None or not conflicted(error) or attempt == TRIES:
                    raise
                self.rows, self.drift, self.kept = kept
                self.conflicts += 1
                pause(attempt)

    def _landed(self) -> bool:
        """Whether a lake's commit that raised committed all the same: its `_loads` row says complete
        (a connection lost, or an object store failing, after the catalog committed). Never raises."""
        if self.handle.lake is None:
            return False
        try:
            with self.handle.held("reading") as con:
                found = con.execute("SELECT status, seq FROM _loads WHERE load_id = ?", [self.load_id]).fetchall()
        except Exception:
            return False
        if not found or found[0][0] != "complete":
            return False
        self.seq = int(found[0][1] or self.seq)
        return True

    def _commit_once(self) -> None:
        handle = self.handle
        with handle.held(f"committing {self.service}.{self.resource}"):
            began = time.monotonic()
            cursor = handle.cursor()
            handle.loads_begin()
            try:
                cursor.execute("BEGIN TRANSACTION")
                # commits of a resource follow each other (the file is held; a lake's head conflicts)
                self.seq = ledger.next_seq(cursor, handle.lake is not None, self.service, self.resource)
                described = cursor.execute(
                    "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                    "current_database() AND schema_name = ? AND table_name = ?",
                    [self.service, self.resource + "__versions"]).fetchall()
                self._shape = shape = Evolution(cursor, handle, self.service, self.resource, self.key,
                                                dict(described) if described else None,
                                                f"_toolkit_stage_{self.load_id}")
                for table in self._staged:
                    self._insert(cursor, shape, table)
                self._finish(cursor, began)
                cursor.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(duckdb.Error):  # a failed statement may have rolled it back already
                    cursor.execute("ROLLBACK")
                raise
            finally:
                handle.loads_end()
                cursor.close()
        self.status = "complete"

    def _finish(self, cursor: duckdb.DuckDBPyConnection, began: float) -> None:
        lake, shape = self.handle.lake is not None, self._shape
        for name, values in self._categories.items():
            stored = cursor.execute("SELECT categories FROM _categories WHERE service = ? AND resource = ? "
                                    "AND column_name = ?", [self.service, self.resource, name]).fetchone()
            merged = list(stored[0]) if stored else []
            merged += [v for v in values if v not in merged]
            ledger.put_categories(cursor, lake, self.service, self.resource, name, merged)
        if shape.columns is not None:
            merge = Merge(cursor, shape, self.seq, str(self.load_id))
            doubled = merge.one_row_per_key()
            if doubled:
                self.rows -= doubled["count"]
                self.kept = None        # the batches held the doubles: the caller reads the load back
                self.drift = [*(self.drift or []), doubled]
            merge.merge(self.carry)
        if shape.changed:  # a view's columns are fixed when it is created: recreate it after the table changed
            cursor.execute(view_sql(self.service, self.resource))
            cursor.execute(loads_view_sql(self.service, self.resource))
            cursor.execute(history_view_sql(self.service, self.resource))
        finished = clock.now()
        self._note_clock(cursor, finished)
        ledger.update_loads(
            cursor, lake, [("status", "'complete'"), ("finished", "?"), ("rows", "?"), ("requests", "?"),
                           ("failed_ids", "?::VARCHAR[]"), ("seq", "?::BIGINT"), ("drift", "?::JSON"),
                           ("service_clock", "?::TIMESTAMPTZ"), ("commit_seconds", "?::DOUBLE"),
                           ("conflicts", "?::INTEGER")],
            [finished, self.rows, self.requests, [str(i) for i in self.failed_ids], self.seq, self._drift_json(),
             self.service_clock, round(time.monotonic() - began, 4), self.conflicts], "load_id = ?", [self.load_id])

    def _note_clock(self, cursor: duckdb.DuckDBPyConnection, finished: datetime) -> None:
        """A load ending before the previous load of its resource ended was made while this machine's clock
        ran behind: said as drift (`clock_behind`), as its times are not to be trusted; freshness and
        max_age go by the loads' order (`seq`) whatever the clock said."""
        before = cursor.execute("SELECT max(finished) FROM _loads WHERE service = ? AND resource = ? AND seq < ? "
                                "AND status IN ('complete', 'stale')", [self.service, self.resource, self.seq]).fetchone()
        if not before or before[0] is None or finished >= before[0]:
            return
        shown, behind = "%Y-%m-%d %H:%M:%S UTC", (before[0] - finished).total_seconds()
        # the gap between two loads' ends understates the jump by the time between them: whole minutes past one
        behind = round(behind / 60) * 60 if behind >= 60 else round(behind)
        entry = {"field": "finished", "kind": "clock_behind", "count": 1, "example":
                 f"this machine's clock ran {timedelta(seconds=behind)} behind: the load ended at "
                 f"{finished.astimezone(UTC):{shown}}, before the previous load did ({before[0].astimezone(UTC):{shown}}); "
                 "its times are not trusted, freshness and max_age go by the loads' order"}
        self.drift = [*(d for d in self.drift or [] if d.get("kind") != "clock_behind"), entry]

    def _fail(self, error: BaseException | None) -> None:
        """Recorded `failed` with its error, or `interrupted` (Ctrl-C, SIGINT, SIGTERM) with what its
        interrupt says was kept ("interrupted: 120 of 300 parents ... checkpointed; ..."), never both."""
        if isinstance(error, KeyboardInterrupt):     # toolkit's Interrupted says "interrupted: ..." itself
            said = str(error)
            status, text = "interrupted", said if said.startswith("interrupted") else f"interrupted: {said}".rstrip(": ")
        else:
            status = "failed"
            text = f"{type(error).__name__}: {error}".rstrip(": ")
            text += f" (after {self.rows} rows in {self.batches} batches, rolled back)"
        with self.handle.held(f"recording a {status} load of {self.service}.{self.resource}") as con:
            ledger.update_loads(
                con, self.handle.lake is not None,
                [("status", "?::VARCHAR"), ("finished", "?"), ("rows", "0"), ("requests", "?"), ("error", "?"),
                 ("failed_ids", "?::VARCHAR[]"), ("drift", "?::JSON"), ("service_clock", "?::TIMESTAMPTZ")],
                [status, clock.now(), self.requests, text, [str(i) for i in self.failed_ids], self._drift_json(),
                 self.service_clock], "load_id = ?", [self.load_id])
        self.status, self.rows = status, 0

    def _drift_json(self) -> str | None:
        return None if self.drift is None else orjson.dumps(self.drift, default=str).decode()

    def __repr__(self) -> str:
        return (f"<toolkit.Load {self.load_id} {self.service}.{self.resource}: {self.status}, "
                f"{self.rows} rows, {self.requests} requests>")


def _arrow(batch: pa.Table | pa.RecordBatch | pd.DataFrame) -> pa.Table:
    if isinstance(batch, pa.Table):
        return batch
    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([batch])
    if isinstance(batch, pd.DataFrame):
        return pa.Table.from_pandas(batch, preserve_index=False)
    raise TypeError(f"a batch is a pyarrow Table or RecordBatch or a pandas DataFrame, "
                    f"not {type(batch).__name__}")
