"""ARCHITECTURE.md stays the map: short enough to read to its end, linking every mechanism page of
docs/architecture/, and no link of the map, of those pages or of the README leads nowhere."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "ARCHITECTURE.md"
PAGES = sorted((ROOT / "docs" / "architecture").glob("*.md"))
# the map's whole point is that a newcomer reaches its end: its length as read, a line as wide as the
# code's (110 columns) and a longer one counted for each such line it fills
MAP_LINES, WIDTH = 275, 110
# a markdown link or image: [text](target) — the target up to its closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def links(path: Path) -> list[str]:
    """The targets of a document's links, code spans and fenced blocks left out (they show syntax)."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return LINK.findall(re.sub(r"`[^`\n]*`", "", text))


def anchors(path: Path) -> set[str]:
    """The anchors a renderer gives the document's headings (GitHub's: lower case, punctuation dropped)."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", path.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def broken(path: Path) -> list[str]:
    """Each link of `path` whose file, or whose anchor in that file, does not exist."""
    found = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):      # http(s), mailto: not this repository's to check
            continue
        name, _, anchor = target.partition("#")
        goal = (path.parent / name).resolve() if name else path
        if not goal.exists() or (anchor and goal.suffix == ".md" and anchor not in anchors(goal)):
            found.append(target)
    return found


def lines_read(text: str) -> int:
    return sum(max(1, math.ceil(len(line) / WIDTH)) for line in text.splitlines())


def test_the_map_is_short():
    assert lines_read(MAP.read_text()) <= MAP_LINES


def test_a_long_line_counts_for_the_lines_it_fills():
    assert lines_read("short\n\n" + "x" * (WIDTH * 2 + 1)) == 5


def test_there_are_mechanism_pages():
    assert len(PAGES) >= 10, [p.name for p in PAGES]


def test_the_map_links_every_mechanism_page():
    linked = {(MAP.parent / t.partition("#")[0]).resolve() for t in links(MAP)}
    assert [p.name for p in PAGES if p.resolve() not in linked] == []


@pytest.mark.parametrize("path", [MAP, ROOT / "README.md", *PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves(path):
    assert broken(path) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_each_page_links_back_to_the_map(page):
    assert MAP.resolve() in {(page.parent / t.partition("#")[0]).resolve() for t in links(page)}


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# Here it is\n")
    page.write_text("[ok](there.md) [ok](there.md#here-it-is) [gone](missing.md) [bad](there.md#nowhere)\n"
                    "`[shown](not-a-link.md)` [web](http://127.0.0.1:1/x)\n")
    assert broken(page) == ["missing.md", "there.md#nowhere"]
