"""The sandbox's pseudo-translation keeps what it was given parseable: JSON with its keys, HTML with
its tags, XLIFF with its units; only text changes."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from toolkit.sandbox.translation.pseudo import translatable, translate

XLIFF12 = "urn:oasis:names:tc:xliff:document:1.2"


def shape(value):
    """A JSON value with every string replaced by its type: what a translation must not change."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def test_json_keeps_its_keys_and_changes_only_text():
    source = {"_id": "page-1", "_type": "page", "title": "Summer sale", "views": 12, "draft": False,
              "tags": ["Garden", "hero_banner"], "url": "https://shop.example.com/sale", "none": None,
              "blocks": [{"_key": "a1", "text": "Buy now", "html": "<p>Big <b>savings</b></p>"}]}
    out = json.loads(translate(json.dumps(source, indent=2).encode(), "page.html", "de-DE"))
    assert shape(out) == shape(source)
    assert out["title"] == "[de-DE] Summer sale" and out["blocks"][0]["text"] == "[de-DE] Buy now"
    assert out["blocks"][0]["html"] == "<p>[de-DE] Big <b>[de-DE] savings</b></p>"
    assert out["tags"] == ["[de-DE] Garden", "hero_banner"]
    unchanged = ("_id", "_type", "views", "draft", "url", "none")
    assert {k: out[k] for k in unchanged} == {k: source[k] for k in unchanged}
    assert out["blocks"][0]["_key"] == "a1"


def test_html_keeps_every_tag_attribute_and_entity():
    source = ('<!DOCTYPE html><html><head><title>Shop</title><style>p{color:red}</style>'
              '<script>var x = "<b>not text</b>";</script></head><body class="home">\n'
              '<p>Fish &amp; chips <a href="/menu" title="Our menu">menu</a></p><img src="a.png" alt="A plate">'
              '<!-- a comment --></body></html>')
    out = translate(source.encode(), "index.html", "fr-FR").decode()
    assert out == source.replace("<title>Shop", "<title>[fr-FR] Shop").replace(
        "Fish &amp;", "[fr-FR] Fish &amp;").replace('title="Our', 'title="[fr-FR] Our').replace(
        ">menu<", ">[fr-FR] menu<").replace('alt="A', 'alt="[fr-FR] A')


def test_xliff_units_get_targets_and_stay_xliff():
    source = (f'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="{XLIFF12}">'
              '<file source-language="en-US" datatype="plaintext" original="ui"><body>'
              '<trans-unit id="greet"><source>Hello <g id="1">friend</g></source></trans-unit>'
              '<trans-unit id="bye"><source>Goodbye</source><target>stale</target></trans-unit>'
              '</body></file></xliff>')
    out = translate(source.encode(), "ui.xlf", "ja-JP")
    root = ET.fromstring(out)
    assert out.startswith(b"<?xml") and b"ns0:" not in out
    ns = {"x": XLIFF12}
    assert root.find("x:file", ns).get("target-language") == "ja-JP"
    units = root.findall(".//x:trans-unit", ns)
    assert [u.get("id") for u in units] == ["greet", "bye"]
    assert [ET.tostring(u.find("x:source", ns)) for u in units] == [
        ET.tostring(u.find("x:source", ns)) for u in ET.fromstring(source.encode()).findall(".//x:trans-unit", ns)]
    assert ["".join(u.find("x:target", ns).itertext()) for u in units] == ["[ja-JP] Hello friend", "[ja-JP] Goodbye"]
    assert [len(u.findall("x:target", ns)) for u in units] == [1, 1]
    assert units[0].find("x:target/x:g", ns).get("id") == "1"


def test_xliff_2_segments_and_the_target_language():
    source = ('<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">'
              '<file id="f"><unit id="u"><segment><source>Save</source></segment></unit></file></xliff>')
    root = ET.fromstring(translate(source.encode(), "strings.xliff", "it-IT"))
    assert root.get("trgLang") == "it-IT"
    assert "".join(root.find(".//{*}segment/{*}target").itertext()) == "[it-IT] Save"


def test_plain_text_binary_and_what_counts_as_text():
    assert translate(b"Line one\r\n\r\nLine two", "notes.txt", "es-ES") == b"[es-ES] Line one\r\n\r\n[es-ES] Line two"
    png = b"\x89PNG\r\n\x1a\n\x00\x00\xff"
    assert translate(png, "logo.png", "es-ES") == png
    other_xml = b"<?xml version='1.0'?><catalog><item>Pen</item></catalog>"
    assert translate(other_xml, "c.xml", "es-ES") == other_xml       # XML the sandbox cannot place units in
    assert [translatable(v) for v in ("Welcome", "Buy now", "en-US", "a1b2", "hero_banner", "/img/a.png",
                                      "https://x.test", "  ", "42")] == [True, True] + [False] * 7
