"""Every install line the project prints installs this project, never a stranger's package of the same
name: PyPI's `toolkit` is someone else's, so a line naming `toolkit` by name would fetch theirs. The
lines of the README, ARCHITECTURE, docs/ (its folders too), the notebooks and the Makefile are read and
each checked: our distribution only from a folder of the clone with extras it declares, and `make` targets that exist."""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]
EXTRAS = set(PROJECT.get("optional-dependencies", {}))
# pip's options that take a value: that value is no requirement
VALUED = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
          "--find-links", "--target", "-t", "--prefix", "--root"}


def documents() -> dict[str, str]:
    """The text of every place an install line is printed for a reader, by its path in the repository."""
    found = {p: p.read_text() for p in [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "Makefile",
                                        *sorted((ROOT / "docs").rglob("*.md"))] if p.exists()}
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        found[notebook] = "\n".join("".join(cell["source"]) for cell in cells)
    return {p.relative_to(ROOT).as_posix(): text for p, text in found.items()}


def install_lines(text: str) -> list[str]:
    """From each `pip install` to the end of its line or command (a comment, a parenthesis or a pipe ends
    it), make's $(...) dropped."""
    lines = []
    for match in re.finditer(r"pip install[^\n;&|#`(]*", text):
        lines.append(re.sub(r"\$\([A-Z_]+\)/?", "", match.group(0)).strip())
    return lines


def wrong(line: str) -> list[str]:
    """What is wrong with one `pip install ...` line: each requirement that could come from PyPI under
    our name, a local folder that is not this project, an extra the project does not declare."""
    words, said, skip = shlex.split(line)[2:], [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in VALUED:
            skip = True
            continue
        if word.startswith("-"):
            continue
        base, _, extras = word.partition("[")
        given = {e.strip() for e in extras.rstrip("]").split(",") if e.strip()}
        if base.startswith((".", "/")) or base == "":
            folder = ROOT / (base or ".")
            if not (folder / "pyproject.toml").exists():
                said.append(f"{word}: {base} is no folder of this project")
            elif tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"] != NAME:
                said.append(f"{word}: {base} holds another project")
            said += [f"{word}: no extra '{e}' in pyproject.toml" for e in sorted(given - EXTRAS)]
        elif re.split(r"[<>=!~ ]", base)[0].strip().lower().replace("_", "-") == NAME:
            said.append(f"{word}: installs PyPI's '{NAME}', a stranger's package; install from the clone")
    return said


def test_the_checker_refuses_our_name_from_pypi_and_takes_the_clone():
    assert wrong("pip install 'toolkit[team]'")
    assert wrong("pip install toolkit==0.1.0")
    assert wrong("pip install -e '.[nosuchextra]'")
    assert not wrong("pip install -e '.[team]'")
    assert not wrong("pip install --quiet -e '.[dev,team-tests]'")
    assert not wrong("pip install --quiet --upgrade pip")


def test_every_install_line_in_the_docs_installs_this_project():
    seen, said = 0, []
    for where, text in documents().items():
        for line in install_lines(text):
            seen += 1
            said += [f"{where}: {problem}" for problem in wrong(line)]
    assert seen >= 5, f"only {seen} install lines found: the reader of the docs changed?"
    assert not said, "\n".join(said)


def test_every_make_target_the_readme_names_exists():
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))
    named = set(re.findall(r"`make ([a-z][\w-]*)", (ROOT / "README.md").read_text()))
    named |= set(re.findall(r"^make ([a-z][\w-]*)", (ROOT / "README.md").read_text(), re.M))
    assert {"demo", "test", "setup-team"} <= named
    assert not named - targets, f"the README names make targets the Makefile lacks: {named - targets}"
