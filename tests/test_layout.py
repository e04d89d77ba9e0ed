"""The test tree itself: pytest imports test modules by their basename (no packages here), so two
modules of one name in different folders make it refuse to collect the second, silently for `-x` runs
of one folder and as a collection error in the whole suite."""
from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_every_test_module_has_a_name_of_its_own():
    names = Counter(path.name for path in Path(__file__).parent.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_no_test_module_imports_a_conftest():
    """`from conftest import` finds whichever conftest.py was imported first (tests/sandbox has its
    own): what tests share by import lives in a module of its own name (stubbed_services.py)."""
    here = Path(__file__)
    found = [path.name for path in here.parent.rglob("*.py") if path != here
             and any(line.startswith(("from conftest import", "import conftest"))
                     for line in path.read_text().splitlines())]
    assert found == []
