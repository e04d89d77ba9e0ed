"""A fifth service is its catalog module, its emulator and its cassettes, and nothing else.

In a copy of the project a toy service is added (tests/fixtures/fifth_service: bearer auth, 1-based
page numbers, three actions, one readable resource), its cassettes are recorded from the copy's sandbox,
and the catalog-wide, sandbox and cassette tests run on the copy in a process of their own, the copy first
on its path: they pass, they include the fifth service, and no file the project had was changed.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOY = Path(__file__).resolve().parents[1] / "fixtures" / "fifth_service"
KEY = "ticket_desk"
# what a service is made of: the only paths the fifth one may add to
ITS_OWN = (f"toolkit/catalog/{KEY}.py", f"toolkit/sandbox/{KEY}/", f"cassettes/{KEY}/")
# the catalog-wide, sandbox and cassette tests, and the others that run every action or resource
TESTS = ["tests/catalog/test_catalog_lint.py", "tests/sandbox/test_start.py", "tests/cassettes/test_cassettes.py",
         "tests/system/test_contract.py", "tests/http/test_client.py", "tests/http/test_bad_input.py",
         "tests/http/test_wrong_kinds.py", "tests/http/test_secrets.py", "tests/pull/test_fetch.py",
         "tests/forms/test_forms.py"]
# each must have run for the fifth service, as many times as it has actions (3) or once
EXPECTED = {"test_catalog_lint.test_id_form": 3, "test_catalog_lint.test_example_params_pass_the_rules": 3,
            "test_cassettes.test_replay": 3, "test_cassettes.test_re_recording_gives_the_same_bytes": 1,
            "test_contract.test_every_action_answers_its_example_with_the_documented_shape": 3,
            "test_client.test_every_action_has_a_method_with_a_real_signature": 1,
            "test_bad_input.test_a_wrong_value_is_a_validation_error_and_nothing_is_sent": 3,
            "test_fetch.test_every_resource_is_fetched_with_its_dtypes": 1,
            "test_forms.test_every_write_action_has_a_form": 1}


def _files(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the copy first on the path; nothing of this run's pytest workers handed on
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = str(copy)
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=240)


def test_a_fifth_service_is_its_catalog_emulator_and_cassettes_only(tmp_path):
    copy = tmp_path / "project"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache")
    for part in ("toolkit", "tests", "cassettes"):
        shutil.copytree(ROOT / part, copy / part, ignore=skip)
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    before = _files(copy)

    shutil.copy2(TOY / f"{KEY}.py", copy / "toolkit" / "catalog" / f"{KEY}.py")
    (copy / "toolkit" / "sandbox" / KEY).mkdir()
    (copy / "toolkit" / "sandbox" / KEY / "__init__.py").write_text('"""The toy fifth service\'s emulator."""\n')
    shutil.copy2(TOY / f"{KEY}_emulator.py", copy / "toolkit" / "sandbox" / KEY / "service.py")
    recorded = _run(copy, "-m", "toolkit.cassettes", "record", "--service", KEY)
    assert recorded.returncode == 0 and "3 of 3 recorded" in recorded.stdout, recorded.stdout + recorded.stderr
    added = sorted(set(_files(copy)) - set(before))
    assert [path for path in added if not path.startswith(ITS_OWN)] == []
    assert f"cassettes/{KEY}/create_ticket.yaml" in added

    report = tmp_path / "report.xml"
    ran = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
               "-k", f"{KEY} or test_start or test_catalog_lint", *TESTS)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    cases = ET.parse(report).getroot().iter("testcase")
    names = [f"{case.get('classname', '').rsplit('.', 1)[-1]}.{case.get('name')}" for case in cases]
    assert len(names) > 1000         # the four services' catalog-wide and sandbox tests ran too
    fifth = Counter(name.split("[", 1)[0] for name in names if KEY in name)
    assert {test: fifth[test] for test in EXPECTED} == EXPECTED, fifth
    assert "test_start.test_every_registered_emulator_is_served" in names

    after = _files(copy)        # the tests ran on the copy as it was: none of its files changed
    assert {path for path in before if after.get(path) != before[path]} == set()
