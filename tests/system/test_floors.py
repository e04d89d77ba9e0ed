"""The house shows its floors: a folder per floor, and the imports between them run one way, as the
contracts under `[tool.importlinter]` in pyproject.toml declare (import-linter checks every import,
lazy ones and those for type hints included). A copy of the package with one import turned upwards
must break them: the contracts can fail."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(package_parent: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=package_parent, env={"PYTHONPATH": str(package_parent), "PATH": ""},
                          capture_output=True, text=True, timeout=300)


def test_every_import_keeps_to_its_floor():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "upward", "broken"), [
    ("storage/file.py", "from toolkit.http import client", "floors"),             # storage and HTTP
    ("pull/frames.py", "from toolkit.connection import audit", "floors"),          # a floor above
    ("http/rules.py", "if False:\n    from toolkit.workspace import Workspace", "floors"),  # a type hint's
    ("sandbox/clock.py", "from toolkit.storage import file", "the sandbox"),
])
def test_an_import_against_the_floors_breaks_a_contract(tmp_path, module, upward, broken):
    shutil.copytree(ROOT / "toolkit", tmp_path / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "toolkit" / module
    path.write_text(path.read_text() + f"\n{upward}\n")
    done = lint(tmp_path)
    assert done.returncode == 1
    assert f"{broken}" in done.stdout and "BROKEN" in done.stdout and "1 broken" in done.stdout


def test_the_top_of_the_package_holds_only_its_face():
    """Everything else lives in the folder of its floor."""
    top = sorted(p.name for p in (ROOT / "toolkit").glob("*.py"))
    assert top == ["__init__.py", "bulk.py", "demo.py", "downloads.py", "errors.py", "wording.py", "workspace.py"]
