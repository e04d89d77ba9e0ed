"""What a pull's pages cost, for benchmarks/fetch.py: the walks that set its ceilings, and the CPU each
stage of a pull spends on the same pages, timed one stage at a time.

The ceilings walk the pages a pull walks (the same query bytes, so the sandbox's read cache answers
them alike) and only fetch and parse them: Python's own keep-alive `http.client` reading each body and
orjson parsing it (the fetch-and-parse ceiling), and a `requests.Session` doing the same (the ceiling
of a client built on requests, as toolkit is).

`stages` walks once to learn the pages, then runs each stage of a pull over all of them and counts the
CPU it spent (`time.process_time`: every thread of the process, DuckDB's included), per 100,000
records. The stages are the pull's own functions, called as the pull calls them, so the same figures
can be taken of another checkout of toolkit (benchmarks/fetch.py --base). Beside them, the typing path
toolkit does not take (`duckdb_typing`: DuckDB's read_json typing the rows at the commit), for the
figures that decided against it.
"""
from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit


def _queries(client: Any, service: str, name: str, filters: dict) -> tuple[Any, Any, str, list[list[dict]]]:
    """The resource, its action, the list URL and the first request of each walk (chunks of targets)."""
    from toolkit import catalog
    resource = catalog.resource(service, name)
    action = catalog.ACTIONS[resource.action]
    chunks = [{}]
    if service == "translation":
        ids = filters["submission_ids"]
        chunks = [{"submissionIds": ",".join(map(str, ids[i:i + 100]))} for i in range(0, len(ids), 100)]
    return resource, action, client.prepare(action).url, chunks


def walk(client: Any, service: str, name: str, filters: dict,
         get: Callable[[str, str], tuple[int, Any, bytes]], keep: bool = False) -> dict:
    """Every page of the resource fetched with `get(url, query) → (status, headers, body)` and parsed
    with orjson; rows, requests, seconds, and with `keep` the pages (query, body, headers) for `stages`."""
    import orjson
    resource, action, url, chunks = _queries(client, service, name, filters)
    order = {p.wire: n for n, p in enumerate(action.params) if p.where == "query"}
    style = action.paging
    rows = requests_made = 0
    kept = []
    started = time.perf_counter()
    for chunk in chunks:
        params = style.start(chunk)
        seen = 0                                  # per chunk: the total-size header counts one chunk
        while params is not None:
            # the query in the action's parameter order with plain commas, as the client sends it: the
            # same bytes, so that the sandbox's read cache answers the ceiling and the pull alike
            query = urlencode(sorted(params.items(), key=lambda item: order.get(item[0], len(order))), safe=",")
            status, headers, content = get(url, query)
            if status != 200:
                raise RuntimeError(f"the ceiling's walk got {status}: {content[:200]!r}")
            requests_made += 1
            body = orjson.loads(content)
            page = style.rows(body)
            rows += len(page)
            seen += len(page)
            if keep:
                kept.append((dict(params), query, content, dict(headers)))
            params = style.next(params, body, headers, page, seen)
    return {"rows": rows, "requests": requests_made, "seconds": time.perf_counter() - started, "pages": kept}


def requests_get(client: Any) -> Callable[[str, str], tuple[int, Any, bytes]]:
    """GET with a plain requests.Session and the client's auth."""
    import requests
    session = requests.Session()
    session.trust_env = False
    session.auth = getattr(client, "auth", None) or client.transport.auth     # before Client.auth: its transport's

    def get(url: str, query: str) -> tuple[int, Any, bytes]:
        answer = session.get(url, params=query, timeout=60)
        return answer.status_code, answer.headers, answer.content
    return get


def stdlib_get(client: Any, url: str) -> Callable[[str, str], tuple[int, Any, bytes]]:
    """GET over one keep-alive `http.client.HTTPConnection`, with the headers the client's auth sets."""
    import http.client

    import requests
    probe = requests.Request("GET", url).prepare()
    (getattr(client, "auth", None) or client.transport.auth)(probe)
    headers = {k: v for k, v in probe.headers.items() if k.lower() != "content-length"}
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)

    def get(url: str, query: str) -> tuple[int, Any, bytes]:
        connection.request("GET", f"{urlsplit(url).path}?{query}", headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.headers, answer.read()
    return get


def stdlib_ceiling(client: Any, service: str, name: str, filters: dict) -> dict:
    _, _, url, _ = _queries(client, service, name, filters)
    return walk(client, service, name, filters, stdlib_get(client, url))


def requests_ceiling(client: Any, service: str, name: str, filters: dict) -> dict:
    return walk(client, service, name, filters, requests_get(client))


def _cpu(function: Callable[[], Any]) -> tuple[float, Any]:
    began = time.process_time()
    result = function()
    return time.process_time() - began, result


def stages(client: Any, service: str, name: str, filters: dict) -> dict:
    """CPU seconds per 100,000 records of each stage of a pull, each run alone over the same pages."""
    import orjson

    import toolkit
    from toolkit.catalog.paging import Watch
    from toolkit.pull import decoding, frames
    from toolkit.pull.plans import KeyWatch
    from toolkit.storage import writer
    from toolkit.storage.stage import Stage
    resource, action, url, _ = _queries(client, service, name, filters)
    style = action.paging
    walked = walk(client, service, name, filters, requests_get(client), keep=True)
    pages, records = walked["pages"], walked["rows"]
    cost: dict[str, float] = {}
    gc.disable()        # as in a pull: with every page's records alive, collections would dominate

    def each(get: Callable[[str, str], tuple[int, Any, bytes]]) -> None:
        for _, query, _, _ in pages:
            get(url, query)

    cost["GET + body: http.client"] = _cpu(lambda: each(stdlib_get(client, url)))[0]
    cost["GET + body: requests"] = _cpu(lambda: each(requests_get(client)))[0]
    transport = client.transport

    def client_get(url: str, query: str) -> tuple[int, Any, bytes]:
        answer = transport.send("GET", f"{url}?{query}")
        return answer.status_code, answer.headers, answer.content
    cost["GET + body: toolkit's transport"] = _cpu(lambda: each(client_get))[0]
    from toolkit.http.limits import depth_past
    limit = client.transport.limits.max_depth
    cost["answer depth guard (limits.depth_past)"] = _cpu(lambda: [depth_past(c, limit) for _, _, c, _ in pages])[0]
    cost["JSON parse: orjson to dicts"] = _cpu(lambda: [orjson.loads(c) for _, _, c, _ in pages])[0]
    decode = decoding.page_decoder(resource, style)
    spent, bodies = _cpu(lambda: [decode(c) if decode else None for _, _, c, _ in pages])
    if any(body is None for body in bodies):            # pages that do not fit: parsed the general way
        bodies = [body if body is not None else orjson.loads(c) for body, (_, _, c, _) in zip(bodies, pages, strict=True)]
    cost["decode into the Resource's fields"] = spent
    rows = [decoding.rows_of(resource, action, body) for body in bodies]
    spent, tables = _cpu(lambda: [frames.to_arrow(r, resource) for r in rows])
    cost["typing into Arrow"] = spent
    # the path not taken, for comparison (docs/architecture/pull-speed.md)
    cost.update(duckdb_typing(resource, action, [c for _, _, c, _ in pages], writer.joined(tables),
                              Path(tempfile.mkdtemp())))

    def page_guard() -> None:
        watch = Watch(action.id, style, None)
        for (params, _, content, _), body in zip(pages, bodies, strict=True):
            watch.asking(params)
            watch.answered(params, style.rows(body), content, None)
    cost["repeat-page guard (paging.Watch)"] = _cpu(page_guard)[0]

    def key_guard() -> None:
        keys = KeyWatch(resource, action.id)
        for _ in tables:
            keys.expect(True)
        for _ in keys.watched((table, 1) for table in tables):
            pass
    cost["repeat-key guard (KeyWatch)"] = _cpu(key_guard)[0]
    batches, gathered, count = [], [], 0
    for table in tables:
        gathered.append(table)
        count += table.num_rows
        if count >= writer.BATCH_ROWS:
            batches.append(writer.joined(gathered))
            gathered, count = [], 0
    if gathered:
        batches.append(writer.joined(gathered))
    folder = Path(tempfile.mkdtemp())

    def staged() -> None:
        try:        # every batch to a file, as past 32 MB; a walk's stage, which expects no checkpoint
            stage = Stage(folder / "stage.duckdb", "bench", memory=0, checkpoints=False)
        except TypeError:                       # a toolkit whose stages always digest
            stage = Stage(folder / "stage.duckdb", "bench", memory=0)
        for batch in batches:
            stage.add(batch)
        for table in stage:
            table.num_rows        # noqa: B018 - read back as the commit reads it
        stage.close()
    cost["staging batches to files"] = _cpu(staged)[0]
    ws = toolkit.Workspace(folder / "commit.duckdb")
    categoricals = [c.name for c in resource.columns if c.dtype == "category"]
    load = ws.load(service, client.base_url, name, {}, resource.key, False, categoricals)
    load.__enter__()
    spent, _ = _cpu(lambda: [load.write(batch) for batch in batches])
    cost["the load's writes (staged in memory)"] = spent
    cost["commit: insert into the file"] = _cpu(lambda: load.__exit__(None, None, None))[0]
    ws.close()
    return {"rows": records, "requests": len(pages),
            "per_100k": {stage: seconds * 100_000 / max(records, 1) for stage, seconds in cost.items()}}


def duckdb_typing(resource: Any, action: Any, pages: list, typed: Any, folder: Path) -> dict[str, float]:
    """The typing path toolkit does not take, on the same pages: each page's rows left as their JSON
    text (msgspec, as the typing helper reads them), written as newline-delimited JSON beside the
    workspace, and DuckDB's `read_json` typing them into a table with the declared columns' types at
    the commit, on one thread as a busy machine gives it. Only for a resource of top-level columns;
    the table is compared with `typed` (toolkit's own rows) both ways. {} when it does not apply."""
    import duckdb

    from toolkit.pull import decoding
    decode = decoding.page_decoder(resource, action.paging, raw=True)
    if decode is None or any(len(column.path) != 1 or column.dtype == "list" for column in resource.columns):
        return {}
    cost: dict[str, float] = {}

    def rows_as_text() -> list[Path]:
        texts = [b"\n".join(decoding.rows_of(resource, action, decode(content))) for content in pages]
        path = folder / "rows.json"
        path.write_bytes(b"\n".join(text for text in texts if text))
        return [path]
    cost["read_json path: rows as JSON text to a file"], files = _cpu(rows_as_text)
    con = duckdb.connect(str(folder / "read_json.duckdb"))
    con.execute("SET threads = 1")
    con.register("typed", typed)
    stored = con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM typed)").fetchall()
    declared = {column.name: column for column in resource.columns}
    con.execute("SET TimeZone = 'UTC'")
    wire = {declared[name].path[0]: "JSON" if declared[name].dtype in ("json", "timestamp") else kind
            for name, kind in stored if name in declared}

    def column(name: str, kind: str) -> str:
        if name not in declared:
            return f"NULL::{kind}"
        value = _quoted(declared[name].path[0])
        if declared[name].dtype == "timestamp":    # epoch milliseconds (whole ones) or ISO text, as toolkit reads them
            return (f"CASE WHEN json_type({value}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN make_timestamp("
                    f"CAST(trunc(CAST({value} AS DOUBLE)) AS BIGINT) * 1000)::TIMESTAMPTZ "
                    f"ELSE CAST({value} ->> '$' AS TIMESTAMPTZ) END")
        return f"CAST({value} AS {kind})"
    out = [f"{column(name, kind)} AS {_quoted(name)}" for name, kind in stored]
    columns = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in wire.items()) + "}"
    cost["read_json path: DuckDB types and inserts (commit)"] = _cpu(lambda: con.execute(
        f"CREATE TABLE rows AS SELECT {', '.join(out)} FROM read_json({[str(f) for f in files]!r}, "
        f"columns = {columns}, format = 'newline_delimited')"))[0]
    differ = con.execute("SELECT (SELECT count(*) FROM (SELECT * FROM typed EXCEPT ALL SELECT * FROM rows)) + "
                         "(SELECT count(*) FROM (SELECT * FROM rows EXCEPT ALL SELECT * FROM typed))").fetchone()[0]
    con.close()
    if differ:
        print(f"!! read_json path: {differ} rows differ from toolkit's table")
    return cost


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
