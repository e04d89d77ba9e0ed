"""Every room of the engine stays one that can be read in a sitting: no module of `toolkit/` is over 450
lines (the guide is about 400), but the catalog's data modules (one per service, long because they are
data) and the sandbox, which stands beside the engine. A room past it is cut along its seams (issue 37).
"""
from __future__ import annotations

from pathlib import Path

from toolkit import catalog

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 450


def engine_sizes(root: Path, services: list[str]) -> dict[str, int]:
    """Lines of each engine module under `root`/toolkit, by its path from `root`: the sandbox and the
    catalog's data module of each of `services` aside."""
    package = root / "toolkit"
    data = {package / "catalog" / f"{service}.py" for service in services}
    return {path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(package.rglob("*.py"))
            if "sandbox" not in path.relative_to(package).parts and path not in data}


def oversized(sizes: dict[str, int]) -> dict[str, int]:
    return {path: lines for path, lines in sizes.items() if lines > MOST_LINES}


def test_no_engine_module_is_over_450_lines():
    sizes = engine_sizes(ROOT, list(catalog.SERVICES))
    assert len(sizes) > 100          # the whole engine was read, not a corner of it
    assert oversized(sizes) == {}


def test_the_count_finds_a_long_module_anywhere_but_in_the_sandbox_and_the_services_data(tmp_path):
    long, short = "x = 1\n" * (MOST_LINES + 1), "x = 1\n" * MOST_LINES
    for name, text in {"pull/plans.py": long, "http/walks.py": short, "sandbox/translation/service.py": long,
                       "catalog/translation.py": long, "catalog/spec.py": long}.items():
        (tmp_path / "toolkit" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "toolkit" / name).write_text(text)
    found = oversized(engine_sizes(tmp_path, ["translation"]))
    assert found == {"toolkit/pull/plans.py": MOST_LINES + 1, "toolkit/catalog/spec.py": MOST_LINES + 1}
