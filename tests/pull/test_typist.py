"""The typing helper (toolkit.pull.typist): pages typed in another process give the frames typed here."""
from __future__ import annotations

import pickle
import subprocess
import sys

import pandas as pd
import pytest

import toolkit
from toolkit import Workspace
from toolkit.http.session import RateBudget, RetryPolicy, Transport
from toolkit.pull import typist

WALKS = {  # a page size small enough for several pages of each paging style
    "cursor": ("asset_library", "assets", {"limit": 25}),
    "offset": ("audience_platform", "notifications", {"size": 25}),
    "page_number": ("translation", "submissions", {"page_size": 8}),   # fields for `extra`: parsed as JSON
    "page_number_from_1": ("media_review", "teams", {"page_size": 4}),
}


@pytest.fixture(scope="module")
def box():
    with toolkit.sandbox.start(seed=0, scale=1, enforce_limits=False) as sandbox:
        yield sandbox


@pytest.fixture
def eager(monkeypatch):
    """The helper up before the walk and taking every page; yields the sizes of what it was sent."""
    monkeypatch.setenv("TOOLKIT_TYPING_HELPER", "1")
    monkeypatch.setattr(typist, "START_AFTER_PAGES", 1)
    monkeypatch.setattr(typist, "SMALLEST_PAGE", 0)
    typist.stop()
    typist._start()
    typist._helper.ready.result(timeout=60)     # raises if it did not start
    sent: list[int] = []
    real = typist._Helper.submit

    def submit(self, payload: bytes):
        sent.append(len(payload))
        return real(self, payload)

    monkeypatch.setattr(typist._Helper, "submit", submit)
    yield sent
    typist.stop()


def fetched(box, service: str, name: str, helper: bool, monkeypatch, **filters) -> pd.DataFrame:
    monkeypatch.setenv("TOOLKIT_TYPING_HELPER", "1" if helper else "0")
    with Workspace() as ws:
        client = ws.connect(service, **box.credentials(service), transport=Transport(
            retry=RetryPolicy(backoff=0.01, max_backoff=0.05), budget=RateBudget(None, None)))
        return client.fetch(name, **filters)


@pytest.mark.parametrize("style", WALKS)
def test_a_walk_typed_by_the_helper_equals_one_typed_here(box, eager, monkeypatch, style):
    service, name, page = WALKS[style]
    there = fetched(box, service, name, True, monkeypatch, **page)
    assert len(eager) >= 3, "the helper typed the pages"
    here = fetched(box, service, name, False, monkeypatch, **page)
    assert len(here) > 3 * next(iter(page.values())) - 1
    pd.testing.assert_frame_equal(there, here)


def test_a_fan_out_typed_by_the_helper_equals_one_typed_here(box, eager, monkeypatch):
    ids = fetched(box, "translation", "submissions", False, monkeypatch)["submission_id"].tolist()
    there = fetched(box, "translation", "targets", True, monkeypatch, submission_ids=ids)
    assert eager, "the helper typed the chunks"
    here = fetched(box, "translation", "targets", False, monkeypatch, submission_ids=ids)
    assert len(here) > 0
    pd.testing.assert_frame_equal(there, here)


def test_pages_of_a_helper_that_dies_mid_walk_are_typed_here(box, eager, monkeypatch):
    service, name, page = WALKS["cursor"]
    expected = fetched(box, service, name, False, monkeypatch, **page)
    real = toolkit.Client.pages

    def pages(self, *args, **kwargs):
        for number, answer in enumerate(real(self, *args, **kwargs), 1):
            if number == 4:
                typist._helper.process.kill()
                typist._helper.process.wait(10)
            yield answer

    monkeypatch.setattr(toolkit.Client, "pages", pages)
    frame = fetched(box, service, name, True, monkeypatch, **page)
    pd.testing.assert_frame_equal(frame, expected)
    assert typist._helper.broken and len(eager) >= 3


def test_an_error_while_typing_in_the_helper_reaches_the_walk(eager):
    answer = typist._helper.submit(pickle.dumps(("asset_library", "no_such_resource", [b"[]"], None)))
    with pytest.raises(Exception, match="no_such_resource") as raised:
        answer.result(timeout=30)
    assert not isinstance(raised.value, BrokenPipeError)
    assert not typist._helper.broken, "one failed page does not stop the helper"
    assert typist._helper.submit(b"hello").result(timeout=30) == typist.pa.py_buffer(b"")


def test_answers_for_an_abandoned_walk_are_dropped_and_the_helper_goes_on(eager):
    request = pickle.dumps(("asset_library", "tags", [b'{"data": []}'], None))
    abandoned = [typist._helper.submit(request) for _ in range(3)]
    assert all(answer.cancel() for answer in abandoned)       # as Typist.close does
    assert typist._helper.submit(request).result(timeout=30).size > 0
    assert not typist._helper.broken


def test_stop_ends_the_helper_and_the_next_long_walk_starts_another(eager):
    process = typist._helper.process
    typist.stop()
    assert process.wait(10) is not None and typist._helper is None
    typist._start()
    assert typist._helper.process.pid != process.pid


def test_the_helper_imports_neither_pandas_nor_duckdb_nor_the_widgets():
    loaded = subprocess.run([sys.executable, "-c", "import sys, toolkit.pull.typist; print(*sorted(sys.modules))"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert {"pyarrow", "msgspec", "toolkit.pull.frames"} <= set(loaded)
    assert not {"pandas", "duckdb", "ipywidgets", "requests"} & set(loaded)


class Picky(Exception):
    def __init__(self, what: str, where: str) -> None:
        super().__init__(f"{what} at {where}")


def test_an_error_that_does_not_unpickle_still_reaches_the_walk():
    error = typist._error_of(pickle.dumps(Picky("bad value", "page 3")))
    assert isinstance(error, RuntimeError) and "did not come back" in str(error)
    assert isinstance(typist._error_of(pickle.dumps(ValueError("plain"))), ValueError)


def test_the_helper_ends_when_its_parent_is_killed(tmp_path):
    """kill -9 of a lake writer left its typing helper running 2-3 times in 20: its stdin stays open while
    another process holds the pipe (here a fork of the parent), so the helper watches its parent."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    code = ("import os, sys, time\nfrom toolkit.pull.typist import _Helper\nhelper = _Helper()\nhelper.ready.result()\n"
            "fork = os.fork()\nif fork == 0:\n    time.sleep(30)\n    os._exit(0)\n"
            "print(helper.process.pid, fork, flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    helper, fork = map(int, parent.stdout.readline().split())
    assert Path(f"/proc/{helper}").exists()
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(helper):
        time.sleep(0.1)
    alive = _alive(helper)
    os.kill(fork, signal.SIGKILL)
    assert not alive, "the helper outlived its parent"


def _alive(pid: int) -> bool:
    """Running, not a zombie its new parent has yet to reap."""
    from pathlib import Path
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
