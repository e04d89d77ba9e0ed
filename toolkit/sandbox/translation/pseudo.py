"""The sandbox's pseudo-translation: what a deliverable holds, made from the uploaded source so that
it keeps the source's structure and only its text changes, as a real translation does.

Each piece of text gets the target language as a visible prefix (`Welcome` → `[fr-FR] Welcome`):

- JSON stays JSON with the same keys, arrays and numbers; string values change, except values that
  are not text a translator touches: under a key starting with `_`, `@` or `$` (Sanity's `_type`,
  `_key`), URLs and paths, and single tokens that are not one word of letters (ids and codes such as
  `a1b2-c3`, `en-US`, `hero_image`); a string value that holds HTML is translated as HTML.
- HTML keeps every tag, attribute and entity byte for byte; text between tags changes (not inside
  `script` or `style`), and so do the `alt` and `title` attributes.
- XLIFF (1.2 `trans-unit`, 2.0 `segment`) keeps its units and sources; each unit gets a `target`
  (replaced when there is one) holding the source's text translated, inline tags kept.
- Other UTF-8 text changes line by line; anything else (binary, broken UTF-8) comes back unchanged.

The kind is read from the content first (a Sanity plugin uploads JSON in a file named `.html`), then
from the name.

    translate(b'{"title": "Hello"}', "page.json", "fr-FR")   # b'{"title": "[fr-FR] Hello"}'
"""
from __future__ import annotations

__all__ = ["RAW_TEXT", "SKIP_KEY", "html", "text", "translatable", "translate"]

import json
import re
import xml.etree.ElementTree as ET
from io import BytesIO
from typing import Any

_TAG = re.compile(r"(<!--.*?-->|<![^>]*>|<\?.*?\?>|<[^>]+>)", re.S)
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][\w:-]*)")
_ATTR = re.compile(r"""(\s(?:alt|title)\s*=\s*)(["'])(.*?)\2""", re.S | re.I)
_HTML_HINT = re.compile(r"<\s*/?\s*[A-Za-z][\w:-]*[^>]*>")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^mailto:|^/", re.I)
_CODE = re.compile(r"^[\w.:/#@+-]*$")
RAW_TEXT = ("script", "style")
SKIP_KEY = ("_", "@", "$")


def translate(data: bytes, name: str, language: str) -> bytes:
    """The pseudo-translation of one file into `language`, of the same kind as the source."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        return data                          # binary: a real service hands such files back as they are
    head = source.lstrip("\ufeff \t\r\n")[:200].lower()
    lowered = name.lower()
    if head[:1] in ("{", "["):
        try:
            value = json.loads(source)
        except ValueError:
            pass
        else:
            return _json(value, language, source)
    if head.startswith("<?xml") or "<xliff" in head or lowered.endswith((".xlf", ".xliff", ".sdlxliff", ".txlf")):
        made = _xliff(data, language)
        if made is not None:
            return made
        if head.startswith("<?xml"):
            return data                      # XML of another kind: not a format the sandbox translates
    if _HTML_HINT.search(source[:4000]) or lowered.endswith((".html", ".htm")):
        return html(source, language).encode("utf-8")
    return "".join(_line(line, language) for line in source.splitlines(keepends=True)).encode("utf-8")


def text(value: str, language: str) -> str:
    """One piece of text: its words prefixed, its surrounding blanks kept."""
    core = value.strip()
    if not core:
        return value
    start = value.index(core[0])
    return f"{value[:start]}[{language}] {core}{value[start + len(core):]}"


def html(source: str, language: str) -> str:
    """HTML with every tag kept as it was; text nodes and alt/title attributes translated."""
    out, raw = [], None
    for piece in _TAG.split(source):
        if not piece:
            continue
        if _TAG.fullmatch(piece):
            found = _TAG_NAME.match(piece)
            tag = found.group(1).lower() if found else ""
            if raw is None and tag in RAW_TEXT and not piece.startswith("</") and not piece.endswith("/>"):
                raw = tag
            elif raw is not None and piece.startswith("</") and tag == raw:
                raw = None
            if raw is None and piece.startswith("<") and not piece.startswith(("</", "<!", "<?")):
                piece = _ATTR.sub(lambda m: m.group(1) + m.group(2) + text(m.group(3), language) + m.group(2),
                                  piece)
            out.append(piece)
        else:
            out.append(piece if raw is not None else text(piece, language))
    return "".join(out)


def translatable(value: str) -> bool:
    """Whether a JSON string is text a translator would change (see the module docstring)."""
    core = value.strip()
    if not core or _URL.match(core):
        return False
    if " " not in core and _CODE.match(core):
        return core.isalpha()                # `Welcome` yes; `en-US`, `a1b2`, `hero_image` no
    return any(ch.isalpha() for ch in core)


def _json(value: Any, language: str, source: str) -> bytes:
    def walk(item: Any, key: str = "") -> Any:
        if isinstance(item, dict):
            return {k: walk(v, str(k)) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v, key) for v in item]
        if isinstance(item, str) and not key.startswith(SKIP_KEY) and translatable(item):
            return html(item, language) if _HTML_HINT.search(item) else text(item, language)
        return item
    # the source's own layout: pretty-printed stays pretty-printed, compact stays compact
    indent = 2 if "\n" in source.strip() else None
    separators = None if indent else (",", ":") if ", " not in source and ": " not in source else None
    return json.dumps(walk(value), ensure_ascii=False, indent=indent, separators=separators).encode("utf-8")


def _line(line: str, language: str) -> str:
    body = line.rstrip("\r\n")
    return text(body, language) + line[len(body):]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _xliff(data: bytes, language: str) -> bytes | None:
    """XLIFF with a translated target per unit; None when it does not parse as XML."""
    try:
        namespaces = [ns for _, ns in ET.iterparse(BytesIO(data), events=("start-ns",))]
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    for prefix, uri in namespaces:
        ET.register_namespace(prefix, uri)     # keep the source's prefixes (no ns0:)
    if _local(root.tag) != "xliff":
        return None
    for element in root.iter():
        if _local(element.tag) == "file" and "source-language" in element.attrib:
            element.set("target-language", language)          # XLIFF 1.2
    if "srcLang" in root.attrib:
        root.set("trgLang", language)                          # XLIFF 2.0
    for unit in list(root.iter()):
        if _local(unit.tag) not in ("trans-unit", "segment"):
            continue
        children = list(unit)
        source = next((c for c in children if _local(c.tag) == "source"), None)
        if source is None:
            continue
        old = next((c for c in children if _local(c.tag) == "target"), None)
        target = ET.fromstring(ET.tostring(source))            # a copy, inline tags and all
        target.tag = source.tag[: -len("source")] + "target"
        target.attrib.clear()
        _translate_element(target, language)
        target.tail = source.tail
        if old is not None:
            unit.remove(old)
        unit.insert(children.index(source) + 1, target)
    declaration = data.lstrip().startswith(b"<?xml")
    return ET.tostring(root, encoding="utf-8", xml_declaration=declaration)


def _translate_element(element: ET.Element, language: str) -> None:
    """The element's own text translated once (first non-blank run), its inline children kept."""
    if element.text and element.text.strip():
        element.text = text(element.text, language)
        return
    for child in element:
        if child.tail and child.tail.strip():
            child.tail = text(child.tail, language)
            return
