"""The annotations are checked: mypy reads toolkit/ with the settings under `[tool.mypy]` in
pyproject.toml, and no room may have more errors than `type_errors.json` beside this file allows.
The baseline only shrinks: a room with fewer errors than it allows says so, and
`make type-baseline` writes the counts of today (the same as `python tests/system/test_types.py`).

A room is a folder of toolkit/ (`storage`, `sandbox`, ...) or a module at its top (`bulk.py`). mypy
keeps its cache in `.mypy_cache/`, so a run after the first reads only what changed."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("type_errors.json")
ERROR = re.compile(r"^toolkit/(?P<room>[^/:]+)(?:/[^:]*)?:\d+: error: ", re.MULTILINE)


def mypy(*paths: str, cwd: Path = ROOT) -> str:
    """mypy's report over `paths` (all of toolkit/ when none, as pyproject.toml says)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--no-pretty", "--no-error-summary", *paths],
                          cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]  # 2: mypy itself failed
    return done.stdout


def errors_per_room(report: str) -> Counter[str]:
    return Counter(match["room"] for match in ERROR.finditer(report))


def test_no_room_has_more_type_errors_than_its_baseline():
    report = mypy()
    found, allowed = errors_per_room(report), json.loads(BASELINE.read_text())
    grown = {room: f"{allowed.get(room, 0)} allowed, {count} found" for room, count in sorted(found.items())
             if count > allowed.get(room, 0)}
    new_lines = [line for line in report.splitlines() if ERROR.match(line) and ERROR.match(line)["room"] in grown]
    assert not grown, (f"more type errors than type_errors.json allows: {grown}; fix these (not with a cast "
                       "or an ignore that hides a real mistake):\n" + "\n".join(new_lines[:40]))
    shrunk = {room: f"{count} allowed, {found.get(room, 0)} found" for room, count in sorted(allowed.items())
              if found.get(room, 0) < count}
    if shrunk:
        warnings.warn(f"fewer type errors than type_errors.json allows: {shrunk}; "
                      "lower the baseline with `make type-baseline` and commit it", stacklevel=1)


def test_an_added_type_error_is_counted_in_its_room(tmp_path):
    """The count can fail: a module with one wrong annotation is one error of its room."""
    room = tmp_path / "toolkit" / "reports"
    room.mkdir(parents=True)
    (room / "wrong.py").write_text('def width() -> int:\n    return "wide"\n')
    report = mypy("toolkit/reports/wrong.py", cwd=tmp_path)
    assert errors_per_room(report) == Counter({"reports": 1}), report
    assert ERROR.match("toolkit/bulk.py:67: error: x")["room"] == "bulk.py"


def write_baseline() -> dict[str, int]:
    counts = dict(sorted(errors_per_room(mypy()).items()))
    BASELINE.write_text(json.dumps(counts, indent=2) + "\n")
    return counts


if __name__ == "__main__":
    counts = write_baseline()
    sandbox = counts.get("sandbox", 0)
    print(f"{BASELINE.name}: {sum(counts.values()) - sandbox} type errors outside the sandbox, {sandbox} in it")
