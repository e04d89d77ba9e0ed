"""The workspace: the DuckDB file of `toolkit.storage.store` that a notebook connects its services to.

    ws = toolkit.Workspace("reporting.duckdb")
    tm = ws.connect("translation", **sandbox.credentials("translation"))
    tm.fetch("targets"); tm.form("translation.complete_phase")
    ws.sql("select target_language, count(*) from translation.targets group by 1").df()

It sits on the top floor because it assembles the floors below: a client (HTTP), the store (DuckDB),
the connection that binds them, and the forms a connection shows (the screen). Nothing below imports
it; what they need of it they are handed.
"""
from __future__ import annotations

__all__ = ["SCREENS", "Snapshot", "Workspace", "open_snapshot"]

from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit import forms
from toolkit.connection.connection import Connection, Screens, bind
from toolkit.http.client import connect
from toolkit.pull import freshness, refresh
from toolkit.storage import snapshots
from toolkit.storage.store import Store

SCREENS = Screens(form=forms.Form, gallery=forms.Gallery)


class Workspace(Store):
    """One DuckDB file (in memory without a path) with every load and its history, and the services
    connected to it.

        ws = toolkit.Workspace("reporting.duckdb")
        tm = ws.connect("translation", **sandbox.credentials("translation"))

    The file is held only while a call reads or commits, so a notebook and a cron `toolkit refresh`
    work side by side: a call that finds it held waits up to `wait` seconds (TOOLKIT_WORKSPACE_WAIT,
    60 by default), then raises WorkspaceBusyError. `read_only=True` never writes; writes through its
    connections are refused, since the file cannot record them. After `close()` every method raises
    `WorkspaceError`, and so does a connection's write or fetch.

    A team shares one workspace on DuckLake: `Workspace("ducklake:postgres:dbname=lake host=... user=...",
    data_path="s3://bucket/lake/")` (DuckDB's ATTACH string; the data in a folder or object storage),
    with the same methods; many processes on many machines read and write it at once
    (toolkit.storage.lake).
    """

    def __init__(self, path: Any = None, *, read_only: bool = False, wait: float | None = None,
                 data_path: Any = None) -> None:
        super().__init__(path, read_only=read_only, wait=wait, data_path=data_path)
        self.connections: dict[str, Connection] = {}

    def connect(self, service: str, **credentials: Any) -> Connection:
        """A connection of one service to this workspace: `base_url` plus its credentials (or the
        environment's `TOOLKIT_<SERVICE>_<FIELD>`), as `toolkit.connect` takes them."""
        self._check_open()
        conn = bind(connect(service, **credentials), self, SCREENS)
        self.connections[service] = conn
        return conn

    def refresh(self, *services: str, resources: Iterable[str | tuple[str, str]] | None = None,
                max_age: float | str | timedelta | None = None, incremental: bool = True,
                say: Callable[[str], None] | None = None, progress: bool | None = None) -> pd.DataFrame:
        """Pull again every resource this workspace holds (or those of the named services, or only
        the held ones named in `resources`) through the connections `connect` made, parents before
        children, services at once; incrementally where the catalog says how. One line per resource
        to `say` (stdout by default) and one progress display (`progress=False`: none); a DataFrame
        of what each did: kind (full, incremental, cached, resumed, skipped, failed), rows added /
        changed / removed, rows the load `written` (its own, not the view's count), requests, parents a freshness budget `saved` asking and parents `resumed`
        from an interrupted pull, seconds, error.

        `max_age` (seconds) keeps a load younger than it as it is, and is the freshness budget of the
        fan-outs without a change signal (versions, guests, ...: every parent confirmed within it;
        None: the catalog's, a day; 0: every parent asked again). A refresh that died (kill -9,
        Ctrl-C) resumes when run again with the same arguments. Ctrl-C stops every service at its
        next page or parent, each checkpointing what it walked: `RefreshInterrupted` (a
        KeyboardInterrupt) says in one line how many resources were refreshed and what was kept.

        A name not held raises ValidationError (listing what is held) before anything is sent. A
        held parent left out of `resources` is not pulled: its children read its latest load
        (toolkit.pull.refresh.refresh says what each strategy then does).

            ws.refresh()                    # everything held
            ws.refresh("translation", max_age=3600)
            ws.refresh(resources=["translation.submissions", "translation.targets"])
        """
        self._check_open()
        return refresh.refresh(self, self.connections, services, resources=resources, max_age=max_age,
                               incremental=incremental, say=say, progress=progress)

    def freshness(self) -> pd.DataFrame:
        """How fresh each view is: its rows, its freshness budget, when its rows were last confirmed
        by the service (the oldest of them, by the service's clock) and how many are past the budget
        (toolkit.pull.freshness). A fan-out under a budget (versions, guests, documents, quotes, ...)
        is confirmed parent by parent, in rotation; any other view by its latest load.

            ws.freshness().query("past_budget > 0")      # what to refresh before the daily report
        """
        self._check_open()
        return freshness.freshness(self)

    def browse(self) -> Any:
        """The workspace browser (toolkit.glance.browser): its views in a grid, a view's rows in a grid
        (sort by a header, filter a column, search, as DataFrame, save), its columns' summary, loads over
        time, the diff of two loads and its drift; its button refreshes the view picked (and the views it
        stands on) through this workspace's connections (connect them first), as `refresh` does.

            ws.browse()
        """
        from toolkit.glance.browser import Browser
        self._check_open()
        return Browser(self, refresh=None if self.read_only else self._refresh_views)

    def _refresh_views(self, views: list[str], say: Callable[[str], None] | None = None) -> pd.DataFrame:
        # the views they stand on too: a fan-out whose parents are refreshed asks only what changed
        return self.refresh(resources=refresh.with_parents(self, views), say=say, progress=False)

    def __repr__(self) -> str:
        state = "closed" if self.closed else ", ".join(self.connections) or "nothing connected"
        return f"<toolkit.Workspace {self.where} ({state})>"


class Snapshot(snapshots.Snapshot):
    """An exported snapshot, read-only (toolkit.storage.snapshots), that a notebook can browse."""

    def browse(self) -> Any:
        """The workspace browser over the snapshot (toolkit.glance.browser), without a refresh button.

            tk.open_snapshot("snapshot.duckdb").browse()
        """
        from toolkit.glance.browser import Browser
        return Browser(self)


def open_snapshot(path: str | Path) -> Snapshot:
    """A snapshot (DuckDB file or Parquet folder) opened read-only.

        snap = toolkit.open_snapshot("snapshot-2026-11-22.duckdb"); snap.read("translation", "targets")
    """
    return Snapshot(path)
