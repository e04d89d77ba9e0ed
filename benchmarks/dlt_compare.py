"""dlt against the sandbox, for benchmarks/fetch.py: the same records, pages and page sizes as `pull`.

dlt's best configuration (the issue's figures: 56k records/s): its REST client
(`dlt.sources.helpers.rest_client.RESTClient`) with the paginator that fits the paging style, each
page turned into a pyarrow Table (`pa.Table.from_pylist`) and yielded from a `@dlt.resource` into a
pipeline with the duckdb destination in a temporary directory. Optionally dlt's `rest_api` source
with its defaults (dicts through dlt's normaliser; 4.3k records/s in the issue's figures), which is
run on a smaller N.

The query strings are the ones the ceiling and `pull` send (same parameter order), so that the
sandbox's read cache (cache_reads=True) answers dlt as it answers them.

It is a library of benchmarks/fetch.py, which runs it beside toolkit's own pulls (it used to run
alone too, importing fetch.py's sandbox set-up, and the two scripts imported each other):

    .venv/bin/python benchmarks/fetch.py --only paging --records 100000     # toolkit and dlt, every style
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

# dlt reports usage to its makers unless told not to; the benchmark makes no outside requests
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("DLT_DATA_DIR", str(Path(tempfile.gettempdir()) / "toolkit-bench-dlt"))
# pages whose nested objects list their keys in another order are different Arrow schemas: let dlt
# merge them losslessly (its default refuses to concatenate them and fails the extract)
os.environ.setdefault("DATA_WRITER__ARROW_CONCAT_PROMOTE_OPTIONS", "default")

# style: (service, list action, data selector, the first request's params in the wire order we send)
TARGETS = {
    "cursor": ("asset_library", "asset_library.list_assets", "data", {"limit": 500}),
    "offset": ("audience_platform", "audience_platform.list_notifications", "list", {"offset": 0, "size": 1000}),
    "page number": ("translation", "translation.list_targets", "$", {"pageNumber": 0, "pageSize": 200}),
}
TARGET_CHUNK = 100      # submission ids per /targets request, as toolkit.pull.fetch and the ceiling send them


def available() -> bool:
    """Whether dlt is installed, without importing it (the benchmark's parent stays as light as it was)."""
    import importlib.util
    return importlib.util.find_spec("dlt") is not None


def version() -> str:
    from importlib.metadata import version
    return version("dlt")


def paginator(style: str) -> Any:
    from dlt.sources.helpers.rest_client.paginators import (
        JSONResponseCursorPaginator,
        OffsetPaginator,
        PageNumberPaginator,
    )
    if style == "cursor":
        return JSONResponseCursorPaginator(cursor_path="pagination.cursor", cursor_param="cursor")
    if style == "offset":
        return OffsetPaginator(limit=1000, offset_param="offset", limit_param="size", total_path="totalSize")
    if style == "page number":
        return PageNumberPaginator(base_page=0, page_param="pageNumber", total_path=None, stop_after_empty_page=True)
    raise ValueError(f"unknown paging style {style!r}")


def request_of(style: str, credentials: dict, filters: dict | None = None, token: str | None = None) -> dict:
    """base_url, headers, path and the params of each walk (one per chunk of submission ids).

    Translation's bearer token is `token` when given, else one obtained through toolkit's client.
    """
    import toolkit
    from toolkit import catalog
    service, action_id, selector, first = TARGETS[style]
    client = toolkit.connect(service, **credentials)
    url = client.prepare(catalog.ACTIONS[action_id]).url
    base_url, path = credentials["base_url"], url.removeprefix(credentials["base_url"])
    if service == "asset_library":
        headers = {"x-api-key": credentials["api_key"], "x-air-workspace-id": credentials["workspace_id"]}
    elif service == "audience_platform":
        headers = {"Authorization": f"Bearer {credentials['token']}"}
    else:
        headers = {"Authorization": f"Bearer {token or (getattr(client, 'auth', None) or client.transport.auth).token().reveal()}"}
    walks = [dict(first)]
    ids = (filters or {}).get("submission_ids")
    if service == "translation" and ids:
        # submissionIds first: the client sends the query in the action's parameter order
        walks = [{"submissionIds": ",".join(map(str, ids[i:i + TARGET_CHUNK])), **first}
                 for i in range(0, len(ids), TARGET_CHUNK)]
    return {"base_url": base_url, "headers": headers, "path": path, "walks": walks, "data_selector": selector}


def with_lists(path: str, walk: dict) -> tuple[str, dict]:
    """The path with the walk's comma-separated lists in its query, commas plain, and the other params.

    toolkit's client and the ceiling send `submissionIds=1,2,3`; given as params, requests would send
    `1%2C2%2C3`, which costs more to check on every request and misses the sandbox's read cache.
    """
    lists = {k: v for k, v in walk.items() if isinstance(v, str) and "," in v}
    rest = {k: v for k, v in walk.items() if k not in lists}
    return (f"{path}?{urlencode(lists, safe=',')}" if lists else path), rest


def _pipeline(name: str) -> Any:
    import dlt
    where = Path(tempfile.mkdtemp(prefix="dlt-bench-"))
    return dlt.pipeline(pipeline_name=name, pipelines_dir=str(where / "pipelines"),
                        destination=dlt.destinations.duckdb(str(where / f"{name}.duckdb")),
                        dataset_name="bench", progress=None)


def _loaded_rows(pipeline: Any, table: str) -> int:
    with pipeline.sql_client() as sql:
        return sql.execute_sql(f"select count(*) from {table}")[0][0]


def dlt_pull(style: str, base_url: str, headers: dict, path: str, params: dict | list[dict],
             data_selector: str | None = None, **_: Any) -> dict:
    """dlt's best configuration: RESTClient pages → Arrow tables → @dlt.resource → duckdb. Rows and seconds."""
    import dlt
    import pyarrow as pa
    from dlt.sources.helpers.rest_client import RESTClient

    walks = params if isinstance(params, list) else [params]
    selector = data_selector or TARGETS[style][2]
    client = RESTClient(base_url=base_url, headers=headers)

    @dlt.resource(name="records", write_disposition="append")
    def records():
        for walk in walks:
            where, rest = with_lists(path, walk)
            for page in client.paginate(where, params=rest, paginator=paginator(style),
                                        data_selector=selector, timeout=60):
                if page:
                    yield pa.Table.from_pylist(page)

    pipeline = _pipeline("dlt_best")
    started = time.perf_counter()
    pipeline.run(records())
    took = time.perf_counter() - started
    return {"rows": _loaded_rows(pipeline, "records"), "seconds": took}


def rest_api_pull(style: str, base_url: str, headers: dict, path: str, params: dict | list[dict],
                  data_selector: str | None = None, max_records: int = 50_000, **_: Any) -> dict:
    """dlt's `rest_api` source with its defaults (dicts through dlt's normaliser), on the first max_records.

    One resource per walk (chunk of submission ids), as many walks as max_records needs, each stopped
    after its share of pages with add_limit, all run by one pipeline.run.
    """
    import requests
    from dlt.sources.rest_api import rest_api_source

    walks = params if isinstance(params, list) else [params]
    page_size = next(v for k, v in walks[0].items() if k in ("limit", "size", "pageSize"))
    pages = []                                  # pages to read from each walk
    remaining = max_records
    for walk in walks:
        if remaining <= 0:
            break
        count = remaining
        if len(walks) > 1:                      # how many rows this chunk has: its total-size header
            probe = requests.get(base_url + path, params={**walk, "pageSize": 1}, headers=headers, timeout=60)
            count = min(remaining, int(probe.headers["total-size"]))
        pages.append(-(-count // page_size))
        remaining -= count
    resources = [{"name": f"records_{n}", "endpoint": {
        "path": where.lstrip("/"), "params": rest, "paginator": paginator(style),
        "data_selector": data_selector or TARGETS[style][2]}}
        for n, (where, rest) in enumerate(with_lists(path, walk) for walk in walks[:len(pages)])]
    source = rest_api_source({"client": {"base_url": base_url.rstrip("/") + "/", "headers": headers},
                              "resources": resources})
    for n, limit in enumerate(pages):
        source.resources[f"records_{n}"].add_limit(limit)
    pipeline = _pipeline("dlt_rest_api")
    started = time.perf_counter()
    pipeline.run(source)
    took = time.perf_counter() - started
    rows = sum(_loaded_rows(pipeline, f"records_{n}") for n in range(len(pages)))
    return {"rows": rows, "seconds": took}
