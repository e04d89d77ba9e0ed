"""Throughput of the sandbox's HTTP server: small answers per second and pages of 500 records.

Prints figures, asserts nothing. The server runs in this process (as in notebooks and the client's
benchmarks, sharing the GIL with the client) and again in a forked child process (what the server
can do when the client is not competing for the same interpreter).

    .venv/bin/python benchmarks/sandbox_throughput.py [--records 120000] [--seconds 3]
"""
from __future__ import annotations

import argparse
import http.client
import multiprocessing
import threading
import time
from types import SimpleNamespace
from typing import Any

import orjson
import requests

import toolkit.sandbox as sandbox
from toolkit.catalog.spec import Action, Cursor, Param, Service
from toolkit.sandbox import server
from toolkit.sandbox.emulator import Emulator

# a generic collection registered here, so the figures do not depend on any service's seed data
SERVICE = Service("bench", "Benchmark collection", "bearer", ("token",), ("token",), "/v1", "message",
                  paging=Cursor())
ACTIONS = (
    Action("bench.list_items", "Items", "GET", "/items", "Items, cursor-paged.", response="page",
           paging=Cursor(), params=(Param("limit", "query", "integer"), Param("cursor", "query"))),
    Action("bench.get_item", "Items", "GET", "/items/{item_id}", "One item.",
           params=(Param("item_id", "path", "id", required=True),)),
)


class Bench(Emulator):
    catalog = SimpleNamespace(SERVICE=SERVICE, ACTIONS=ACTIONS)  # type: ignore[assignment]
    collections = {"bench.list_items": "items", "bench.get_item": "items"}
    records = 120_000          # set from --records before start()

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        rng = self.rng
        count = self.records
        tags = ["brand", "campaign", "q3", "social", "hero", "archive", "print", "draft"]
        self.store["items"].extend([{
            "id": f"{n:08d}-0000-4000-8000-{rng.getrandbits(48):012x}",
            "fileName": f"IMG_{n:06d}.jpg", "ext": "jpg", "title": f"Frame {n}",
            "description": None if n % 3 else "Cut from the spring campaign shoot",
            "type": "photo", "size": rng.randrange(10_000, 40_000_000),
            "createdAt": "2026-10-01T12:00:00.000Z", "updatedAt": "2026-10-02T08:30:00.000Z",
            "width": 4000, "height": 3000, "duration": None,
            "tags": [{"id": f"tag-{t}", "name": t} for t in rng.sample(tags, 2)],
            "urls": {"thumbnail": f"https://cdn.example/t/{n}.jpg", "preview": f"https://cdn.example/p/{n}.jpg"},
        } for n in range(count)])


def small(base: str, token: str, seconds: float, threads: int) -> float:
    """GET one small record again and again from `threads` keep-alive requests.Sessions."""
    counts = [0] * threads
    deadline = time.perf_counter() + seconds

    def run(slot: int) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        url = f"{base}/items/00000001-0000-4000-8000-000000000000"
        session.get(url)        # open the connection before the clock runs
        while time.perf_counter() < deadline:
            session.get(url)
            counts[slot] += 1

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - started)


def small_raw(port: int, path: str, token: str, seconds: float) -> float:
    """The same with http.client, whose own cost per request is a fraction of requests'."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Authorization": f"Bearer {token}"}
    count, deadline, started = 0, time.perf_counter() + seconds, time.perf_counter()
    while time.perf_counter() < deadline:
        connection.request("GET", path, headers=headers)
        connection.getresponse().read()
        count += 1
    return count / (time.perf_counter() - started)


def pages(base: str, token: str, seconds: float) -> tuple[float, float]:
    """Walk the cursor pages of 500 records (bytes only, no JSON decoding): MB/s and records/s."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    total_bytes = records = 0
    cursor = None
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        answer = session.get(f"{base}/items", params={"limit": 500, **({"cursor": cursor} if cursor else {})})
        total_bytes += len(answer.content)
        # orjson rather than answer.json(): the figure is about the server, not the client's decoder
        page = orjson.loads(answer.content)
        records += len(page["data"])
        cursor = page["pagination"]["cursor"]       # None at the end: start over
    elapsed = time.perf_counter() - started
    return total_bytes / elapsed / 1e6, records / elapsed


class ServerCpu:
    """CPU time the server's threads spend per request (parse, route, handle, serialise, write).

    Unlike the rates above it hardly depends on the client or on other load on the machine, so it
    says what the server could serve on one core: 1 / (CPU per request).
    """

    def __init__(self) -> None:
        self.seconds, self.count = 0.0, 0
        original = server._Handler._one

        def timed(handler: Any) -> bool:
            started = time.thread_time()
            try:
                return original(handler)
            finally:
                self.seconds += time.thread_time() - started
                self.count += 1

        server._Handler._one = timed  # type: ignore[method-assign]

    def take(self) -> float:
        """Seconds of CPU per request since the last take."""
        per = self.seconds / max(self.count, 1)
        self.seconds, self.count = 0.0, 0
        return per


def measure(port: int, token: str, seconds: float, label: str, cpu: ServerCpu | None = None) -> None:
    base = f"http://127.0.0.1:{port}/bench/v1"
    path = "/bench/v1/items/00000001-0000-4000-8000-000000000000"
    print(f"[{label}]")
    print(f"  small answers, requests.Session, 1 thread : {small(base, token, seconds, 1):8.0f} requests/s")
    print(f"  small answers, requests.Session, 4 threads: {small(base, token, seconds, 4):8.0f} requests/s")
    if cpu:
        cpu.take()
    print(f"  small answers, http.client, 1 connection  : {small_raw(port, path, token, seconds):8.0f} requests/s")
    if cpu:
        per = cpu.take()
        print(f"    server CPU per small answer: {per * 1e6:6.0f} µs  (one core: {1 / per:6.0f} requests/s)")
    megabytes, records = pages(base, token, seconds)
    print(f"  pages of 500 records, requests.Session    : {megabytes:8.1f} MB/s  {records:10.0f} records/s")
    if cpu:
        per = cpu.take()
        size = megabytes * 1e6 / records * 500
        print(f"    server CPU per page: {per * 1e3:6.2f} ms  (one core: {size / per / 1e6:6.0f} MB/s,"
              f" {500 / per:8.0f} records/s)")


def _child(ready: Any, done: Any) -> None:
    with sandbox.start(emulators={"bench": Bench}, enforce_limits=False) as box:
        ready.put((box.port, box.credentials("bench")["token"]))
        done.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=120_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()

    Bench.records = args.records
    started = time.perf_counter()
    with sandbox.start(emulators={"bench": Bench}) as box:
        print(f"{len(box.emulator('bench').store['items']):,} records built and served in "
              f"{time.perf_counter() - started:.1f} s")
        measure(box.port, box.credentials("bench")["token"], args.seconds, "server in this process",
                ServerCpu())

    context = multiprocessing.get_context("fork")
    ready, done = context.Queue(), context.Event()
    child = context.Process(target=_child, args=(ready, done))
    child.start()
    port, token = ready.get(timeout=120)
    measure(port, token, args.seconds, "server in a child process")
    done.set()
    child.join()


if __name__ == "__main__":
    main()
