"""A list action's pages walked: `Page`, and the walk every paging style runs through (`Client.pages`),
with the following pages asked for on threads while one is read (`ahead`) and each next page's request
made from the first one's where only the page, offset or cursor differs.

`Walker` is the collaborator of `toolkit.http.client.Client` that walks: handed the client, it asks
it, through its public methods only (`Walking`), to prepare, send and read each request.
"""
from __future__ import annotations

__all__ = ["Page", "Walker", "Walking"]

import dataclasses
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import requests

from toolkit.catalog import paging
from toolkit.catalog.paging import Watch
from toolkit.catalog.spec import Action, Service
from toolkit.errors import ToolkitError
from toolkit.http.wire import Prepared, wire_value


@dataclass
class Page:
    """One page of a walk: its rows, the parsed answer and the HTTP answer (headers, timing)."""
    rows: list
    body: Any
    response: requests.Response
    params: dict[str, Any]
    total: int | None = None      # the rows the service says the walk holds, where its style reads one
    full: bool = False            # as many rows as were asked for: another page may follow


class Walking(Protocol):
    """What a walk asks of its client."""

    @property
    def service(self) -> Service: ...

    def action(self, action: str | Action) -> Action: ...

    def prepare(self, action: str | Action, *, version: str | None = ..., headers: Mapping[str, str] | None = ...,
                content_type: str | None = ..., **params: Any) -> Prepared: ...

    def send(self, prepared: Prepared) -> requests.Response: ...

    def exchange(self, prepared: Prepared, decode: Callable[[bytes], Any | None] | None = ...,
                 response: requests.Response | None = ...) -> tuple[Any, requests.Response]: ...


class Walker:
    """Every page of a list action of one client walked with its paging style (the module docstring)."""

    def __init__(self, client: Walking) -> None:
        self.client = client

    def pages(self, action: str | Action, *, version: str | None = None,
              headers: Mapping[str, str] | None = None, ahead: int = 0,
              decode: Callable[[bytes], Any | None] | None = None, max_pages: int | None = None,
              **params: Any) -> Iterator[Page]:
        """Walk every page of a list action with the service's paging style.

        `ahead`: with page numbers or offsets, ask for up to this many following pages on threads
        while this one is read, supposing each comes back full; a page that does not (the data moved)
        drops the guesses after it and the walk goes on from the page the service says is next. The
        pages, their order and their rows are those of a walk one request at a time.
        `decode`: reads an answer's bytes into its body, or None to have it parsed as JSON
        (the fetchers pass `toolkit.pull.decoding.page_decoder`).
        `max_pages`: the walk's ceiling (`paging.Watch` says what it is when not given). A cursor,
        page or offset asked for twice, or a page whose rows came before, raises PagingError.
        """
        client = self.client
        entry = client.action(action)
        style = entry.paging or (client.service.paging if entry.response == "page" else None)
        if style is None:
            raise ToolkitError(f"{entry.id} is not a list action")
        # the styles speak wire names (`pageNumber`), the params Python names (`page_number`)
        to_wire = {p.name: p.wire for p in entry.params if p.where == "query"}
        to_name = {wire: name for name, wire in to_wire.items()}
        first: tuple[Prepared, dict] | None = None

        def prepared_for(request: dict) -> tuple[Prepared, dict]:
            nonlocal first
            named = {to_name.get(k, k): v for k, v in request.items()}
            prepared = _repaged(entry, first, named) if first else None
            if prepared is None:
                prepared = client.prepare(entry, version=version, headers=headers, **named)
                first = first or (prepared, named)
            return prepared, named

        # only page numbers and offsets can be guessed ahead (`after_full`)
        ahead_style = style if isinstance(style, paging.PageNumber | paging.Offset) else None
        pool = ThreadPoolExecutor(ahead, thread_name_prefix="toolkit-page") \
            if ahead > 0 and ahead_style is not None else None
        # pages asked for ahead, in walk order: (params, rows before it, (request, params by name), answer)
        asked: deque[tuple[dict, int, tuple[Prepared, dict], Future]] = deque()
        request: dict[str, Any] | None = style.start({to_wire.get(k, k): v for k, v in params.items() if v is not None})
        watch = Watch(entry.id, style, max_pages)
        seen = 0
        try:
            while request is not None:
                watch.asking(request)
                if asked:                  # _ask_ahead keeps the walk's next page at the front
                    _, _, (prepared, named), answer = asked.popleft()
                    body, response = client.exchange(prepared, decode, answer.result())
                else:
                    prepared, named = prepared_for(request)
                    body, response = client.exchange(prepared, decode)
                rows = style.rows(body)
                total = paging.total_of(style, body, response.headers)
                watch.answered(request, rows, response.content, total)
                seen += len(rows)
                page = Page(rows, body, response, named, total, paging.full(style, request, rows))
                if pool is None:
                    yield page
                    request = style.next(request, body, response.headers, rows, seen)
                else:          # the following pages are asked for before this one is handed over
                    request = style.next(request, body, response.headers, rows, seen)
                    assert ahead_style is not None
                    self._ask_ahead(pool, asked, ahead, ahead_style, request, seen, body, response.headers, prepared_for)
                    yield page
        finally:
            if pool is not None:
                for *_, answer in asked:
                    answer.cancel()
                pool.shutdown(wait=False, cancel_futures=True)

    def _ask_ahead(self, pool: ThreadPoolExecutor, asked: deque, ahead: int, style: paging.PageNumber | paging.Offset,
                   request: dict | None, seen: int, body: Any, headers: Mapping,
                   prepared_for: Callable[[dict], tuple[Prepared, dict]]) -> None:
        """Keep `ahead` pages asked for, starting at `request`; guesses a short page proved wrong go."""
        if asked and asked[0][0] != request:
            for *_, answer in asked:
                answer.cancel()           # one already sent is answered and its answer dropped
            asked.clear()
        if request is None:
            return

        def ask(params: dict, before: int) -> None:
            prepared, named = prepared_for(params)
            asked.append((params, before, (prepared, named), pool.submit(self.client.send, prepared)))

        if not asked:
            ask(request, seen)
        while len(asked) < ahead:
            last, before, *_ = asked[-1]
            guess = style.after_full(last, body, headers, before)
            if guess is None:
                break
            ask(guess, before + int(last[style.size]))

    def rows(self, action: str | Action, **params: Any) -> list:
        """Every row of a list action, all pages walked."""
        return [row for page in self.pages(action, **params) for row in page.rows]


def _repaged(entry: Action, first: tuple[Prepared, dict], named: dict) -> Prepared | None:
    """The next page's request built from the first page's checked one when only scalar query params
    (the page, offset or cursor the paging style set) differ: a walk of /targets with 100 submission
    ids would otherwise check and encode the same ids again on every page. None: prepare it afresh."""
    prepared, before = first
    by_name = {p.name: p for p in entry.params}
    changed = [name for name in named.keys() | before.keys() if named.get(name) != before.get(name)]
    if any(name not in by_name or by_name[name].where != "query" or isinstance(named.get(name), list | tuple | dict)
           for name in changed):
        return None
    wires = {by_name[name].wire for name in changed}
    query: list[tuple[str, str]] = []
    for param in entry.params:           # the order prepare() gives, so the query reads the same
        if param.wire not in wires:
            query.extend(item for item in prepared.query if item[0] == param.wire)
        elif named.get(param.name) is not None:
            query.append((param.wire, str(wire_value(param, named[param.name], True))))
    return dataclasses.replace(prepared, query=query, headers=dict(prepared.headers))
