"""The test tree itself: pytest imports test modules by their basename (no packages here), so two
modules of one name in different folders make it refuse to collect the second, silently for `-x` runs
of one folder and as a collection error in the whole suite."""
from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_every_test_module_has_a_name_of_its_own():
    names = Counter(path.name for path in Path(__file__).parents[1].rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_no_test_module_imports_a_conftest():
    """`from conftest import` finds whichever conftest.py was imported first (tests/sandbox has its
    own): what tests share by import lives in a module of its own name (stubbed_services.py)."""
    here = Path(__file__)
    found = [path.name for path in here.parents[1].rglob("*.py") if path != here
             and any(line.startswith(("from conftest import", "import conftest"))
                     for line in path.read_text().splitlines())]
    assert found == []


def test_the_tests_are_laid_out_like_the_code():
    """tests/<folder> holds the tests of toolkit/<folder> (tests/workspace and tests/cli those of the
    face's modules); whole-system tests are in tests/system, the team lake's in tests/team, and the
    opt-in browser and old-DuckDB runs in tests/browser and tests/compat. No test module lies flat in
    tests/: only what tests share does (conftest.py, stubbed_services.py, interleaving.py)."""
    tests = Path(__file__).parents[1]
    toolkit = tests.parent / "toolkit"
    code = {path.name for path in toolkit.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    beside = {"workspace", "system", "team", "browser", "compat", "fixtures"}
    folders = {path.name for path in tests.iterdir() if path.is_dir() and not path.name.startswith((".", "__"))}
    assert folders - code - beside == set()
    assert sorted(path.name for path in tests.glob("test_*.py")) == []
