"""The test tree itself: pytest imports test modules by their basename (no packages here), so two
modules of one name in different folders make it refuse to collect the second, silently for `-x` runs
of one folder and as a collection error in the whole suite."""
from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_every_test_module_has_a_name_of_its_own():
    names = Counter(path.name for path in Path(__file__).parent.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
