"""The catalog is the one home of what each service is: no engine module spells a service key or an
action id. What a service's lookups, side effects, id type, hosted mode, token login and settings rows
are is data in toolkit/catalog/<service>.py, and the engine reads it; so adding a service touches the
catalog and the sandbox, not the engine.

Per service by nature, like the reports and the sandbox's emulators: a service's own multi-step flows
(an upload in parts, a submission's wizard, a download's three steps) and the sentences saying what its
destructive actions lose chain that service's actions by name. They live in engine modules named for
the service, `<service>_<what>.py` (forms/translation_steps.py, http/translation_downloads.py,
connection/asset_library_losses.py), and may spell that service's key and actions only.

Only string constants count (ast), not comments or docstrings: an example in a docstring is for the
reader."""
from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from toolkit import catalog

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ("http", "storage", "pull", "connection", "forms", "checkup")
WORD = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _spelled(text: str) -> set[str]:
    """The service key a string constant is, and the names it qualifies with a service key, whole or
    as a word of a text: action ids (`"translation.add_custom_attribute:name"`), resources
    (`"translation.targets"`). A key alone as a word of prose is English ("the other translation
    mode"), not a name."""
    qualified = {w for w in WORD.findall(text) if "." in w and w.split(".", 1)[0] in catalog.SERVICES}
    return ({text} & set(catalog.SERVICES)) | qualified


def _owner(path: Path) -> str | None:
    """The service a module is named for (`translation_steps.py` → translation), if any."""
    for key in catalog.SERVICES:
        if path.stem == key or path.stem.startswith(f"{key}_"):
            return key
    return None


def names_in_the_engine(package: Path) -> list[str]:
    """`folder/module.py:line 'text'` for each service key or action id an engine module spells, but a
    module named for a service spelling its own."""
    found = []
    for folder in ENGINE:
        for path in sorted((package / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            docs, owner = _docstrings(tree), _owner(path)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docs:
                    continue
                foreign = {n for n in _spelled(node.value) if n.split(".", 1)[0] != owner}
                if foreign:
                    found.append(f"{path.relative_to(package).as_posix()}:{node.lineno} {node.value!r}")
    return found


def test_no_engine_module_names_a_service_or_an_action():
    assert names_in_the_engine(ROOT / "toolkit") == []


@pytest.mark.parametrize(("module", "line", "caught"), [
    ("http/client.py", 'HOSTED = "translation"', True),                      # a service key
    ("pull/frames.py", 'FIRST = "audience_platform.delete_notifications"', True),   # an action id
    ("forms/form.py", 'NOTE = f"see {1} of asset_library.delete_board"', True),   # a word of a text
    ("storage/store.py", 'HELD = "SELECT * FROM translation.targets"', True),     # a resource it qualifies
    ("http/rules.py", 'SAID = "only in the other translation mode"', False),     # the key as an English word
    ("forms/translation_steps.py", 'OTHER = "asset_library.create_board"', True),  # another service's
    ("forms/translation_steps.py", 'OWN = "translation.create_submission"', False),  # its own
    ("storage/store.py", '# translation ids are integers', False),          # a comment
    ("checkup/doctor.py", 'def f():\n    """As asset_library.list_assets does."""', False),  # a docstring
])
def test_a_name_in_the_engine_is_caught(tmp_path, module, line, caught):
    for folder in ENGINE:
        shutil.copytree(ROOT / "toolkit" / folder, tmp_path / "toolkit" / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "toolkit" / module
    path.write_text(path.read_text() + f"\n{line}\n")
    assert bool(names_in_the_engine(tmp_path / "toolkit")) == caught


def test_the_modules_named_for_a_service_are_those_of_a_service_the_catalog_holds():
    """A module named like a service the catalog lacks would be exempt from nothing: it is not, and
    every module named for a service names one the catalog holds."""
    named = [path for folder in ENGINE for path in (ROOT / "toolkit" / folder).rglob("*.py") if _owner(path)]
    assert {_owner(p) for p in named} <= set(catalog.SERVICES)
    assert sorted(p.relative_to(ROOT / "toolkit").as_posix() for p in named) == [
        "connection/asset_library_losses.py", "connection/audience_platform_losses.py",
        "connection/translation_losses.py", "forms/asset_library_steps.py", "forms/translation_steps.py",
        "forms/translation_work.py", "http/translation_downloads.py"]
