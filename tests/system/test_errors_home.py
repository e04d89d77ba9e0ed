"""Every exception class lives in toolkit/errors.py, drawn in its docstring's tree: an error defined in
the module that raises it (UnknownTableError was in storage/store.py, FilterSyntaxError in
http/filters.py) is one a reader of errors.py never learns of.

The sandbox's own wire signals stay where they are used: `Reject` (an HTTP answer an emulator sends)
and `Malformed` (a request the server answers 400 to) are not errors any caller sees."""
from __future__ import annotations

import ast
import builtins
import importlib
import re
import shutil
from pathlib import Path

import pytest

from toolkit import errors

ROOT = Path(__file__).resolve().parents[2]
# (module path under toolkit/, class): the sandbox's signals between its own parts, never raised to a caller
WIRE_SIGNALS = {("sandbox/exchange.py", "Reject"), ("sandbox/framing.py", "Malformed")}
_EXCEPTION_NAME = re.compile(r"(Error|Exception|Warning|Interrupt|Exit)$")


def _module_name(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_exception(node: ast.ClassDef, module: object) -> bool:
    """Whether the class is an exception: from the imported module where it stands at the top,
    else (a class made inside a function, a tree that is not importable) by its bases' names."""
    found = getattr(module, node.name, None) if module is not None else None
    if isinstance(found, type):
        return issubclass(found, BaseException)
    names = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
    return any(_EXCEPTION_NAME.search(name) or isinstance(getattr(builtins, name, None), type) and
               issubclass(getattr(builtins, name), BaseException) for name in names)


def strays(package: Path, importable: bool = True) -> list[str]:
    """`path:line class` for every exception class defined outside errors.py (the wire signals aside)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where == "errors.py" or path.stem == "__main__":        # a __main__ runs when imported
            continue
        tree = ast.parse(path.read_text(), str(path))
        classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        if not classes:
            continue
        module = importlib.import_module(_module_name(package, path)) if importable else None
        found += [f"{where}:{node.lineno} {node.name}" for node in classes
                  if (where, node.name) not in WIRE_SIGNALS and _is_exception(node, module)]
    return found


def test_no_exception_class_is_defined_outside_errors_py():
    assert strays(ROOT / "toolkit") == []


@pytest.mark.parametrize("planted", [
    "class StaleCacheError(RuntimeError):\n    pass\n",                              # a builtin base
    "from toolkit.errors import WorkspaceError\n\n\nclass Lost(WorkspaceError):\n    pass\n",  # one of ours
    "def make():\n    class Late(ValueError):\n        pass\n    return Late\n",        # made in a function
])
def test_an_exception_class_elsewhere_is_found(tmp_path, planted):
    shutil.copytree(ROOT / "toolkit", tmp_path / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "toolkit" / "storage" / "stray.py"
    target.write_text(planted)
    found = strays(tmp_path / "toolkit", importable=False)
    assert len(found) == 1 and found[0].startswith("storage/stray.py:"), found


def _drawn() -> dict[str, str]:
    """child → parent as the docstring of toolkit.errors draws them (a root's parent is '')."""
    drawn: dict[str, str] = {}
    stack: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        root = re.fullmatch(r" {4}([A-Z]\w+)", line)
        branch = re.match(r" {4}((?:│   |    )*)[├└]── ([A-Z]\w+)", line)
        if root:
            stack = [root[1]]
            drawn[root[1]] = ""
        elif branch:
            depth = len(branch[1]) // 4 + 1
            stack = [*stack[:depth], branch[2]]
            drawn[branch[2]] = stack[depth - 1]
    return drawn


def test_the_drawn_tree_holds_every_error_under_its_own_base():
    drawn = _drawn()
    classes = {name: getattr(errors, name) for name in errors.__all__
               if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), BaseException)}
    assert sorted(set(classes) - set(drawn)) == []
    for child, parent in drawn.items():
        if not parent:
            continue
        base = classes.get(parent) or getattr(builtins, parent)
        assert base in classes[child].__bases__, f"{child} is drawn under {parent}"


def test_the_classes_that_moved_are_still_where_they_were_imported_from():
    import duckdb

    from toolkit import sandbox
    from toolkit.http import filters
    from toolkit.storage import store
    assert store.UnknownTableError is errors.UnknownTableError
    assert issubclass(errors.UnknownTableError, errors.WorkspaceError)
    assert issubclass(errors.UnknownTableError, duckdb.CatalogException)
    assert filters.FilterSyntaxError is errors.FilterSyntaxError
    assert sandbox.EmulatorImportError is errors.EmulatorImportError
    with pytest.raises(errors.FilterSyntaxError) as info:
        filters.parse("name:")
    assert isinstance(info.value.position, int)
