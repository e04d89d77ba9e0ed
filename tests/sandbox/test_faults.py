"""Faults: reproducible for a seed, each kind answered as a real server would, latency."""
import threading
import time

import pytest
import requests

from toolkit.sandbox.faults import Fault, FaultPlan, parse


def statuses(box, count):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('toy')['token']}"
    return [session.get(f"{box.url('toy')}/api/v2/things/t0001", timeout=5).status_code for _ in range(count)]


def test_same_seed_hits_the_same_request_numbers(launch):
    first = statuses(launch(seed=5, faults="500@0.3"), 40)
    again = statuses(launch(seed=5, faults="500@0.3"), 40)
    other = statuses(launch(seed=6, faults="500@0.3"), 40)
    assert first == again and first != other
    assert 3 < first.count(500) < 25


def test_plan_decisions_do_not_depend_on_threads():
    plan = FaultPlan("503@0.2", seed=1)
    hits = [n for n in range(1, 201) if plan.decide("toy", None)]
    parallel = FaultPlan("503@0.2", seed=1)
    results = []
    threads = [threading.Thread(target=lambda: results.append(parallel.decide("toy", None))) for _ in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(hits) == sum(1 for r in results if r)


def test_on_request_numbers_scoped_to_a_service_and_action(launch):
    box = launch(faults=[Fault("503", on=(2, 3), service="toy", action="get_thing")])
    assert statuses(box, 4) == [200, 503, 503, 200]
    assert box.stats()["faults"] == {"503": 2}


def test_429_carries_retry_after_and_the_service_shape(launch):
    box = launch(faults=[Fault("429", on=(1,), retry_after=3)])
    answer = requests.get(f"{box.url('toy')}/api/v2/things", timeout=5)
    assert answer.status_code == 429 and answer.headers["Retry-After"] == "3"
    assert "message" in answer.json()


def test_drop_closes_the_connection_without_an_answer(launch):
    box = launch(faults="drop#2")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {box.credentials('toy')['token']}"
    url = f"{box.url('toy')}/api/v2/things/t0001"
    assert session.get(url, timeout=5).status_code == 200
    with pytest.raises(requests.ConnectionError):
        session.get(url, timeout=5)
    assert session.get(url, timeout=5).status_code == 200


def test_slow_and_latency_delay_answers(launch):
    box = launch(latency_ms=120, faults=[Fault("slow", on=(2,), delay_ms=200)])
    url = f"{box.url('toy')}/api/v2/things"
    started = time.perf_counter()
    requests.get(url, timeout=5)
    first = time.perf_counter() - started
    started = time.perf_counter()
    requests.get(url, timeout=5)
    second = time.perf_counter() - started
    assert 0.12 <= first < 1.5 and second >= 0.32


def test_short_form():
    faults = parse("429@0.05, 500#3;7:asset_library, slow@0.1:translation.list_targets")
    assert faults == [Fault("429", rate=0.05), Fault("500", on=(3, 7), service="asset_library"),
                      Fault("slow", rate=0.1, service="translation", action="translation.list_targets")]
    with pytest.raises(ValueError):
        parse("404@0.1")
    with pytest.raises(ValueError):
        parse("500")
