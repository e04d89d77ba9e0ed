"""An interrupted pull or refresh ends with one line: what was kept and what to run to go on; the run
that goes on says it resumes and counts what it has left (issue 35 item 3). Interrupted at 10%, 50%
and 90% of the documents' parents, in a notebook kernel (nbclient, SIGINT as Jupyter's interrupt
sends) and from the `toolkit` command (SIGINT, SIGTERM: exit 130 with the same line)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import toolkit as tk

nbclient = pytest.importorskip("nbclient")
import nbformat  # noqa: E402  (after the skip: nbclient brings it)


def interruptible() -> None:
    """The command's SIGINT as a terminal gives it: a suite started in the background by a shell (`make
    test &`) ignores SIGINT, and a child keeps what it inherits, so Ctrl-C would never reach it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def asked(box) -> int:
    """The documents asked so far (each run also asks for a token)."""
    return box.stats()["by_action"].get("translation.list_documents", 0)


LINE = re.compile(r"interrupted: (?P<kept>\d+) of (?P<total>\d+) parents of translation\.documents checkpointed; ")


@pytest.fixture(scope="module")
def box():
    # a fan-out of ~190 parents that takes seconds: room to interrupt it at 10%, 50% and 90%
    with tk.sandbox.start(scale=12, latency_ms=100) as running:
        yield running


@pytest.fixture
def held(box, tmp_path, monkeypatch):
    """A workspace holding the submissions the documents fan out over, and a credentials file."""
    for name in [n for n in os.environ if n.startswith("TOOLKIT_") or n == "CI"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLKIT_CHECKPOINT_SECONDS", "0")     # a checkpoint after every parent
    path = tmp_path / "w.duckdb"
    with tk.Workspace(path) as ws:
        ws.connect("translation", **box.credentials("translation")).pull("submissions", progress=False)
        parents = len(ws.read("translation", "submissions"))
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"translation": box.credentials("translation")}))
    file.chmod(0o600)
    return path, file, parents


def when_sent(box, share: float, parents: int, act, running) -> threading.Thread:
    """A thread that does `act()` once `share` of the parents were asked (or the pull ended)."""
    start = asked(box)

    def watch() -> None:
        while running() and asked(box) - start < share * parents:
            time.sleep(0.002)
        if running():
            act()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def interrupted_in_a_kernel(box, share: float, parents: int, cells: list[str], count):
    """A notebook of three cells run in a kernel: the first sets up and shows the kernel's pid, the
    second is interrupted (SIGINT, as Jupyter's interrupt sends) once `share` of the parents were asked,
    the third goes on. The notebook, and `count(box)` before and after the third cell."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = nbclient.NotebookClient(book, timeout=240, kernel_name="python3", allow_errors=True)
    with client.setup_kernel():
        client.execute_cell(book.cells[0], 0)
        pid = int(book.cells[0].outputs[-1]["data"]["text/plain"])
        running = threading.Event()
        running.set()
        when_sent(box, share, parents, lambda: os.kill(pid, signal.SIGINT), running.is_set)
        try:
            client.execute_cell(book.cells[1], 1)
        finally:
            running.clear()
        before = count(box)
        client.execute_cell(book.cells[2], 2)
        return book, before, count(box)


def check_resumed(kept: int, total: int, parents: int, sent: int, said: str) -> None:
    assert total == parents and 0 <= kept < total
    assert f"resuming: {kept:,} of {total:,} already pulled" in said or kept == 0, said
    assert sent == total - kept, (sent, total, kept)


@pytest.mark.parametrize("how, share", [("SIGINT", 0.1), ("SIGINT", 0.5), ("SIGINT", 0.9), ("SIGTERM", 0.5)])
def test_the_command_interrupted_says_what_it_kept_exits_130_and_the_next_run_resumes(box, held, share, how):
    path, file, parents = held
    argv = [sys.executable, "-m", "toolkit.cli", "pull", "translation", "documents", "--workspace", str(path),
            "--credentials", str(file)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    when_sent(box, share, parents, lambda: proc.send_signal(getattr(signal, how)), lambda: proc.poll() is None)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    found = re.fullmatch(r"toolkit pull: " + LINE.pattern + r"run the same command again to go on\n", err)
    assert found, err
    kept, total = int(found["kept"]), int(found["total"])
    before = asked(box)
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again
    check_resumed(kept, total, parents, asked(box) - before, again.stdout)
    if kept:
        assert f"({kept:,} parents from the interrupted pull)" in again.stdout
    # issue 45: stored as interrupted, in its own words; the parents answered when it came are kept, so
    # the two loads' requests add up to the parents (they were 145 for 124 checkpointed, 321 for 301)
    with tk.Workspace(path, read_only=True) as ws:
        loads = ws.loads().query("resource == 'documents'")
    assert loads["status"].tolist() == ["interrupted", "complete"]
    assert loads["error"].iloc[0] == err.removeprefix("toolkit pull: ").replace(
        "run the same command again to go on", f"run the same pull again to go on (it asks only for the other "
                                              f"{total - kept:,})").strip()
    # each run's token besides; the interrupted run may have sent one request more than it kept (seen
    # one run in two on a loaded two-core machine since pulls walk faster: the answer to a request that
    # was in flight when Ctrl-C came and not yet handed to the drain); 16 were lost before the fix
    sent, resumed = loads["requests"].tolist()
    assert resumed == total - kept + 1 and kept + 1 <= sent <= kept + 2, (sent, resumed, kept)


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_a_notebook_interrupted_says_what_it_kept_in_one_line_and_the_next_cell_resumes(box, held, share):
    path, _, parents = held
    connect = f"conn = tk.Workspace({str(path)!r}).connect('translation', **{box.credentials('translation')!r})"
    book, before, after = interrupted_in_a_kernel(box, share, parents, [
        f"import os, toolkit as tk\n{connect}\nos.getpid()",
        "conn.pull('documents', refresh=True)",
        "result = conn.pull('documents', refresh=True)\nresult.resumed, result.requests"], asked)
    sent = after - before
    errors = [o for o in book.cells[1].outputs if o["output_type"] == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1, errors     # one line, not 64
    found = LINE.match(errors[0]["traceback"][0])
    assert found and errors[0]["traceback"][0].endswith("run the same pull again to go on (it asks only for "
                                                        f"the other {int(found['total']) - int(found['kept']):,})")
    kept, total = int(found["kept"]), int(found["total"])
    shown = [o.get("data", {}).get("text/plain", "") or o.get("text", "") for o in book.cells[2].outputs]
    resumed, requests = eval(shown[-1])                                 # the cell's value: (resumed, requests)
    assert resumed == kept
    check_resumed(kept, total, parents, sent, "\n".join(shown))
    progress = [line for line in shown[:-1] if line.startswith("translation.documents")]
    if kept:    # the bar counts what is left, and its last line no time left
        assert progress and progress[-1].startswith(f"translation.documents (resuming: {kept:,} of {total:,} "
                                                    f"already pulled): {total - kept}/{total - kept} ")
        assert "left" not in progress[-1]


# --- a refresh: a worker per service, each stopped at its next page or parent -----------------------

HELD = [("translation", "submissions"), ("translation", "documents"), ("translation", "workflows"),
        ("media_review", "teams"), ("asset_library", "tags"), ("audience_platform", "audiences")]
STOPPED = re.compile(r"interrupted: (?P<refreshed>\d+) of (?P<total>\d+) resources refreshed"
                     r"(?P<pulls>(?:; [a-z_]+\.[a-z_]+: [^;]+)*); ")


@pytest.fixture(scope="module")
def held_template(box, tmp_path_factory):
    """A closed workspace holding resources of the four services, the documents' fan-out among them."""
    path = tmp_path_factory.mktemp("refresh") / "template.duckdb"
    with tk.Workspace(path) as ws:
        for service, name in HELD:
            ws.connect(service, **box.credentials(service)).pull(name, progress=False)
        parents = len(ws.read("translation", "submissions"))
    return path, parents


@pytest.fixture
def held_all(box, held_template, tmp_path, monkeypatch):
    """A copy of the template workspace, and a credentials file for the four services."""
    for name in [n for n in os.environ if n.startswith("TOOLKIT_") or n == "CI"]:
        monkeypatch.delenv(name)
    template, parents = held_template
    path = tmp_path / "w.duckdb"
    path.write_bytes(template.read_bytes())
    file = tmp_path / "c.json"
    file.write_text(json.dumps({service: box.credentials(service) for service, _ in HELD}))
    file.chmod(0o600)
    return path, file, parents


def stopped_pulls(found: re.Match) -> dict[str, int | None]:
    """The pulls the line says were stopped: resource → parents checkpointed (None: a page walk, nothing)."""
    pulls = {}
    for part in found["pulls"].split("; ")[1:]:
        resource, _, what = part.partition(": ")
        counted = re.fullmatch(r"(\d+) of (\d+) parents checkpointed", what)
        assert counted or what == "nothing kept (a paged walk is not checkpointed)", part
        pulls[resource] = int(counted[1]) if counted else None
    return pulls


def by_action(box) -> dict[str, int]:
    return dict(box.stats()["by_action"])


def check_refresh_resumed(box, found: re.Match, parents: int, before: dict, said: str) -> None:
    """The run that goes on says how many resources it resumes, asks nothing for those, and asks for
    only the documents the interrupted one did not checkpoint."""
    from toolkit import catalog
    refreshed, total, pulls = int(found["refreshed"]), int(found["total"]), stopped_pulls(found)
    assert total >= len(HELD) and refreshed < total
    sent = {action: count - before.get(action, 0) for action, count in by_action(box).items()}
    resumed = re.findall(r"^(\S+): pulled by the interrupted refresh, ", said, re.MULTILINE)
    assert len(resumed) == refreshed, said
    if refreshed:
        assert f"refresh: resuming: {refreshed} of {total} resources already refreshed" in said, said
    for resource in resumed:        # what was refreshed is asked nothing again
        assert sent.get(catalog.RESOURCES[tuple(resource.split("."))].action, 0) == 0, (resource, sent)
    documents = sent.get("translation.list_documents", 0)
    if "translation.documents" in resumed:
        assert documents == 0
    else:
        kept = pulls.get("translation.documents") or 0
        assert documents == parents - kept, (documents, parents, kept, said)
        if kept:
            assert f"({kept:,} parents from the interrupted pull)" in said, said


@pytest.mark.parametrize("how, share", [("SIGINT", 0.1), ("SIGINT", 0.5), ("SIGINT", 0.9), ("SIGTERM", 0.5)])
def test_a_refresh_interrupted_from_the_command_stops_every_worker_says_what_it_kept_and_the_next_resumes(
        box, held_all, how, share):
    path, file, parents = held_all
    argv = [sys.executable, "-m", "toolkit.cli", "refresh", "--full", "--workspace", str(path), "--credentials",
            str(file)]
    start = asked(box)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    when_sent(box, share, parents, lambda: proc.send_signal(getattr(signal, how)), lambda: proc.poll() is None)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    found = re.fullmatch(r"toolkit refresh: " + STOPPED.pattern + r"run the same command again to go on\n", err)
    assert found, err
    if share < 0.9:     # the workers stopped: the documents' walk did not go on to its end, as it did before
        assert asked(box) - start < parents
        assert "translation.documents" in stopped_pulls(found), err
    before = by_action(box)
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again
    check_refresh_resumed(box, found, parents, before, again.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_a_refresh_interrupted_in_a_notebook_says_what_it_kept_in_one_line_and_the_next_cell_resumes(
        box, held_all, share):
    path, _, parents = held_all
    connect = "\n".join(f"ws.connect({service!r}, **{box.credentials(service)!r})"
                        for service in dict.fromkeys(service for service, _ in HELD))
    book, before, _ = interrupted_in_a_kernel(box, share, parents, [
        f"import os, toolkit as tk\nws = tk.Workspace({str(path)!r})\n{connect}\nos.getpid()",
        "ws.refresh(incremental=False)",
        "table = ws.refresh(incremental=False)\nlist(table['kind'])"], by_action)
    errors = [o for o in book.cells[1].outputs if o["output_type"] == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1, errors     # one line, not a traceback
    assert errors[0]["ename"] == "RefreshInterrupted"
    found = re.fullmatch(STOPPED.pattern + r"run the same refresh again to go on \(it asks only for what is left\)",
                         errors[0]["traceback"][0])
    assert found, errors[0]["traceback"]
    shown = [o.get("data", {}).get("text/plain", "") or o.get("text", "") for o in book.cells[2].outputs]
    kinds = eval(shown[-1])                                             # the cell's value: each resource's kind
    refreshed, total = int(found["refreshed"]), int(found["total"])
    assert kinds.count("resumed") == refreshed and len(kinds) == total, kinds
    check_refresh_resumed(box, found, parents, before, "\n".join(shown))
    progress = [line for line in shown[:-1] if line.startswith("refresh")]
    if refreshed:   # the bar counts the resources left, not those the interrupted run refreshed
        assert progress[-1].startswith(f"refresh (resuming: {refreshed} of {total} already refreshed): "
                                       f"{total - refreshed}/{total - refreshed} "), progress


def test_a_pull_handed_a_set_cancel_flag_stops_at_its_next_parent_and_the_next_pull_asks_for_the_rest(box, held):
    """The flag a refresh's workers are handed: set from another thread, the pull stops as Ctrl-C stops it."""
    from toolkit.errors import Interrupted
    from toolkit.pull import fetch
    path, _, parents = held
    cancel = threading.Event()
    with tk.Workspace(path) as ws:
        conn = ws.connect("translation", **box.credentials("translation"))
        start = asked(box)
        when_sent(box, 0.3, parents, cancel.set, lambda: not cancel.is_set())
        with pytest.raises(Interrupted) as stopped:
            fetch.pull(conn.client, ws, "documents", refresh=True, progress=False, cancel=cancel)
        kept, total = stopped.value.kept, stopped.value.total
        assert total == parents and 0 < kept < parents
        assert asked(box) - start < parents        # it did not walk on to the end
        before = asked(box)
        result = conn.pull("documents", refresh=True, progress=False)
    assert result.resumed == kept and asked(box) - before == parents - kept
