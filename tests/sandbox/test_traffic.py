"""stats(): counts, peaks of concurrency and rate, and the asset library's own limit."""
import threading

import requests


def test_counts_by_service_and_action(toy):
    box, session, base = toy
    for _ in range(3):
        session.get(f"{base}/api/v2/things/t0001")
    session.get(f"{base}/api/v2/nowhere")
    stats = box.stats()
    assert stats["requests"] == 4 and stats["by_service"] == {"toy": 4}
    assert stats["by_action"] == {"toy.get_thing": 3, "toy:unrouted": 1}
    assert stats["max_per_second"]["toy"] == 4 and stats["max_concurrent"]["toy"] == 1


def concurrently(count, call):
    barrier = threading.Barrier(count)
    results = []

    def run():
        barrier.wait()
        results.append(call())

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_max_concurrent(launch):
    box = launch(latency_ms=300)
    headers = {"Authorization": f"Bearer {box.credentials('toy')['token']}"}
    concurrently(5, lambda: requests.get(f"{box.url('toy')}/api/v2/things/t0001", headers=headers, timeout=5))
    assert box.stats()["max_concurrent"]["toy"] == 5


def test_asset_library_limit_per_second(launch):
    box = launch()
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('asset_library')['token']}"
    answers = [session.get(f"{box.url('asset_library')}/ping", timeout=5) for _ in range(30)]
    codes = [a.status_code for a in answers]
    assert codes[:15] == [200] * 15 and 429 in codes[15:]
    limited = next(a for a in answers if a.status_code == 429)
    assert limited.headers["Retry-After"] == "1" and limited.json() == {"message": "Too Many Requests"}
    stats = box.stats()
    assert stats["limited"]["asset_library"] == codes.count(429) and stats["max_per_second"]["asset_library"] >= 16


def test_asset_library_limit_at_once(launch):
    box = launch(latency_ms=300)
    headers = {"Authorization": f"Bearer {box.credentials('asset_library')['token']}"}
    codes = concurrently(12, lambda: requests.get(f"{box.url('asset_library')}/ping", headers=headers,
                                                  timeout=5).status_code)
    assert codes.count(200) <= 10 and 429 in codes
    assert box.stats()["max_concurrent"]["asset_library"] >= 11


def test_limits_can_be_lifted(launch):
    box = launch(enforce_limits=False)
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('asset_library')['token']}"
    assert {session.get(f"{box.url('asset_library')}/ping", timeout=5).status_code for _ in range(20)} == {200}
