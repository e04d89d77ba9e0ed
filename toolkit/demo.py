"""`toolkit demo`: the main job on the embedded sandbox, from an empty folder to a report.

It starts the sandbox, pulls every resource of the four services into `DIR/toolkit-demo.duckdb`, acts
the way an analyst would (queues a dozen URL imports in the asset library, imports two audiences),
moves the sandbox clock forward five times by 3 hours with an incremental `ws.refresh` of the moving
resources after each step (so the workspace holds history: a burndown, memberships gained and lost;
the sandbox's translators are fast, and at 8-hour steps nearly every target would be done by the
third; refreshing every resource would walk the asset library's fan-outs again, minutes at its
rate budget), exports a
snapshot (`DIR/snapshot.duckdb`) and writes `DIR/report.html`, measured against the sandbox's clock
(which the loads' own wall-clock times do not show). Before it ends it checks that none of the
sandbox's secrets reached the files it wrote: every table and view of the DuckDB files read as text
with SQL (DuckDB compresses what it stores, so a secret in a table is not in the file's bytes as
such), and every file's bytes.
"""
from __future__ import annotations

__all__ = ["DAILY", "HOURS", "IMPORT_URLS", "MOVING", "SERVICES", "STEPS", "clock_step", "populate", "run"]

import html
import json
import mmap
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pandas as pd

from toolkit import bulk, catalog
from toolkit.storage.file import quote

if TYPE_CHECKING:
    from toolkit.connection.connection import Connection
    from toolkit.sandbox import Sandbox
    from toolkit.workspace import Workspace

SERVICES = tuple(catalog.SERVICES)          # all four, in the catalog's order
STEPS, HOURS = 5, 3
# what moves while the clock does: refreshed after each step
DAILY = {"translation": ("submissions", "targets", "phases"),
         "audience_platform": ("audiences", "memberships"),
         "asset_library": ("imports",)}
MOVING = tuple(f"{service}.{name}" for service, names in DAILY.items() for name in names)
# URL imports whose outcome the asset library decides from the URL (toolkit/sandbox/asset_library/transfers.py)
IMPORT_URLS = (
    "https://media.partner-cdn.example/shoots/{n}/harbour-dawn.jpg",
    "https://media.partner-cdn.example/shoots/{n}/harbour-dusk.jpg",
    "https://files.example.org/press/{n}/launch-teaser.mp4",
    "https://files.example.org/press/{n}/fact-sheet.pdf",
    "https://downloads.agency.example/{n}/brand-fonts.zip",
    "https://blocked.example/{n}/scraped-photo.jpg",
    "https://files.example.org/missing/{n}/price-list.pdf",
    "https://files.example.org/missing/{n}/catalogue.pdf",
    "https://cdn.retailer.example/status/403/{n}/shelf.png",
    "https://cdn.retailer.example/status/500/{n}/window.png",
    "https://media.partner-cdn.example/slow/{n}/interview-raw.mov",
)


def run(out: str | Path = "demo-output", scale: float = 1) -> int:
    """Run the demo into folder `out`; 0 when everything was written and no secret leaked."""
    import toolkit as tk
    from toolkit import reports

    began = time.monotonic()
    out = Path(out).expanduser().absolute()
    out.mkdir(parents=True, exist_ok=True)
    database, snapshot, report = out / "toolkit-demo.duckdb", out / "snapshot.duckdb", out / "report.html"
    for old in (database, Path(f"{database}.wal"), snapshot, report):
        old.unlink(missing_ok=True)
    print(f"toolkit demo: the embedded sandbox (scale {scale:g}) → {out}")
    with tk.sandbox.start(scale=scale) as box, tk.Workspace(database) as ws:
        if not populate(ws, box):
            print("\nThe demo stopped: a pull failed (see above).")
            return 1
        print("\n4. Export a snapshot and write the report")
        ws.export(snapshot, history=True, overwrite=True)  # with history: the report can be redrawn from it
        reports.write_report(ws, report)  # measured by the services' clocks, which the loads recorded
        secrets = box.secrets()
    # after the workspace is closed: its file cannot be opened read-only while it is open here
    leaked = _leaks(secrets, (database, Path(f"{database}.wal"), snapshot, report))
    took = time.monotonic() - began
    if leaked:
        print(f"\nA secret of the sandbox reached {', '.join(leaked)}: the files are not safe to share.")
        return 1
    size = database.stat().st_size / 1e6
    print(f"""
Done in {took:.0f} s; no secret of the sandbox is in these files.
  workspace  {database}  ({size:.1f} MB: every load, its history)
  snapshot   {snapshot}
  report     {report}

Open them:
  {sys.executable} -c "import toolkit; snap = toolkit.open_snapshot('{snapshot}'); print(snap.tables())"
  xdg-open {report}      (or {report.as_uri()} in a browser)""")
    return 0


def populate(ws: Workspace, box: Sandbox, log: Callable[[str], None] | None = print,
             clients: dict[str, Connection] | None = None, as_of: dict[str, datetime] | None = None,
             refreshed: list[pd.DataFrame] | None = None) -> bool:
    """Steps 1 to 3 of the demo into workspace `ws` from sandbox `box`: pull everything, act, move the
    clock with a refresh after each step. False (having said why) when a pull failed.

    `clients` are the clients to use, connected to `ws` (the clock steps refresh through
    `ws.connections`); by default the demo connects its own.
    `as_of`, when given, is filled with the sandbox's clock at each load (load id → moment), for the
    reports: the loads' own times are this machine's. `refreshed`, when given, gets each step's
    refresh table (`ws.refresh`'s: requests, rows added / changed / removed per resource).
    """
    as_of = {} if as_of is None else as_of
    say = log or (lambda line: None)
    clients = clients or {service: ws.connect(service, **box.credentials(service)) for service in SERVICES}
    inputs = {service: box.examples(service) for service in SERVICES}
    say("\n1. Pull every resource of the four services")
    for service in SERVICES:
        pulled = bulk.pull_service(clients[service], inputs=inputs[service], log=log)
        if any(p.error or p.skipped for p in pulled):
            return False
    _date_loads(ws, box, as_of)
    say("\n2. Act: queue URL imports in the asset library, import two audiences")
    inputs["asset_library"]["import_ids"] = [*inputs["asset_library"]["import_ids"],
                                             *_queue_imports(clients["asset_library"], say)]
    # a refresh asks with its latest load's ids: pulled once with the new ones, the steps follow them
    queued = bulk.pull_one(clients["asset_library"], "imports", inputs["asset_library"])
    if queued.error:
        say(queued.line())
        return False
    _date_loads(ws, box, as_of)
    _import_audiences(clients["audience_platform"], box, inputs["audience_platform"]["profile_ids"], say)
    moving = "; ".join(f"{service}: {', '.join(names)}" for service, names in DAILY.items())
    say(f"\n3. The sandbox clock moves {HOURS} hours forward, {STEPS} times; after each step an incremental "
        f"refresh of what moves ({moving})")
    for _ in range(STEPS):
        table = clock_step(ws, box, say)
        if table is None:
            return False
        if refreshed is not None:
            refreshed.append(table)
        _date_loads(ws, box, as_of)
    return True


def clock_step(ws: Workspace, box: Sandbox, say: Callable[[str], None]) -> pd.DataFrame | None:
    """The sandbox clock `HOURS` on, then an incremental `ws.refresh` of what moves (MOVING) through
    the workspace's connections, and one line saying what it did; the refresh's table (with the
    clock), or None when a resource failed (each said)."""
    now = box.advance(hours=HOURS)
    table = ws.refresh(resources=MOVING, incremental=True, say=lambda line: None)
    failed = table[table["kind"].isin(["failed", "skipped"])]
    for row in failed.itertuples():
        say(f"  FAIL {row.resource}: {row.kind}: {row.error}")
    if len(failed):
        return None
    open_targets = ws.rows("SELECT count(*) FROM translation.targets WHERE status NOT IN "
                           "('PROCESSED', 'DELIVERED', 'COMPLETED', 'CANCELLED')")[0][0]
    changes = table[["added", "changed", "removed"]].to_numpy().sum()
    each = " · ".join(f"{row.resource.split('.', 1)[1]} {row.requests}" for row in table.itertuples())
    say(f"  +{HOURS} h: clock {now:%a %d %b %H:%M} UTC, {changes:,} rows added, changed or removed in "
        f"{table['requests'].sum()} requests ({each}), {open_targets} targets open")
    return table.assign(clock=now)


def _queue_imports(client: Connection, say: Callable[[str], None]) -> list[str]:
    """Create URL imports (some will fail, by design of their URLs); their ids."""
    ids = []
    tag = client.call("asset_library.create_tag", name="demo")       # the service takes tags as [{id}]
    for n, url in enumerate(IMPORT_URLS):
        answer = client.call("asset_library.create_import", source_url=url.format(n=7000 + n),
                             tags=[{"id": tag["id"]}])
        ids.append(answer["id"])
    say(f"  {len(ids)} imports queued from partner URLs (the asset library fetches them as the clock moves)")
    return ids


def _import_audiences(client: Connection, box: Sandbox, profile_ids: list[str], say: Callable[[str], None]) -> None:
    """A partner file by URL (a new audience) and an enclosed list replacing an audience's members."""
    url = f"{box.url('audience_platform')}/files/audiences/vip-event-2027.json"
    client.call("audience_platform.import_audience", package={"type": "url", "url": url})
    members = profile_ids[::3]
    client.call("audience_platform.import_audience", package={
        "type": "enclosed", "members": members,
        "audience": {"id": "webinar-attendees", "name": "Webinar attendees", "tags": ["content", "b2b"]}})
    say(f"  audience vip-event-2027 from a partner file; webinar-attendees replaced by {len(members)} "
          "profiles (both apply when the clock moves)")


def _date_loads(ws: Workspace, box: Sandbox, as_of: dict[str, datetime]) -> None:
    """Date the loads not dated yet with the sandbox's clock now (they were pulled since it last moved)."""
    now = box.clock.now()
    for load_id in ws.loads()["load_id"]:
        as_of.setdefault(load_id, now)


def _leaks(secrets: list[str], files: tuple[Path, ...]) -> list[str]:
    """Where any secret (six characters or more) the sandbox knows was found: a file's bytes, or a
    table or view of a DuckDB file (`snapshot.duckdb: main._audit`)."""
    spelled = sorted({form for s in secrets if isinstance(s, str) and len(s) >= 6 for form in _spellings(s)})
    found: list[str] = []
    for path in files:
        if not spelled or not path.exists():
            continue
        if _in_bytes(path, spelled):
            found.append(path.name)
        if _is_duckdb(path):
            found += [f"{path.name}: {where}" for where in _tables_holding(path, spelled)]
    return found


def _spellings(secret: str) -> set[str]:
    """A secret as it is, and as DuckDB's text of a list or struct (quote, backslash escaped), JSON
    and HTML write it: a secret inside any of them is still a secret."""
    return {secret, secret.replace("\\", "\\\\").replace("'", "\\'"), json.dumps(secret)[1:-1],
            html.escape(secret)}


def _in_bytes(path: Path, spelled: list[str]) -> bool:
    if path.stat().st_size == 0:              # an empty file cannot be mapped
        return False
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return any(data.find(s.encode()) >= 0 for s in spelled)


def _is_duckdb(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(12)[8:12] == b"DUCK"     # DuckDB's magic bytes, after the header's checksum


def _tables_holding(path: Path, spelled: list[str]) -> Iterator[str]:
    """The tables and views of a DuckDB file (opened read-only) with a secret in any row's text: every
    column cast to VARCHAR (nested and JSON values too), a row's columns joined by NUL so that a match
    never spans two of them. One scan of each table for all the secrets."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_schema, table_name, list(column_name ORDER BY ordinal_position) "
            "FROM information_schema.columns WHERE table_catalog = current_database() "
            "GROUP BY ALL ORDER BY ALL").fetchall()
        test = " OR ".join(["contains(row_text, ?)"] * len(spelled))
        for schema, name, columns in tables:
            text = ", ".join(f"{quote(c)}::VARCHAR" for c in columns)
            where = f"{schema}.{name}"
            try:
                held = con.execute(f"SELECT count(*) FROM (SELECT concat_ws(chr(0), {text}) AS row_text "
                                   f"FROM {quote(schema)}.{quote(name)}) WHERE {test}", spelled).fetchall()[0][0]
            except duckdb.Error as error:     # not read is not proven clean
                yield f"{where} (could not be read: {type(error).__name__})"
                continue
            if held:
                yield where
    finally:
        con.close()
