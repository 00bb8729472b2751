"""Where a character of a YAML string was written (yamlpos): every scalar style, on one line or
several, through yamlio.Document.position_of as the CLI asks it."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from vclite.api import yamlio, yamlpos

SOURCE = textwrap.dedent("""\
    plain: a.Completed && (evall.Failed)
    single: 'it''s && (evall.Failed)'
    double: "say \\"hi\\" \\x41 && (evall.Failed)"
    plain2: a.Completed &&
      (evall.Failed)
    double2: "a.Completed &&
        (evall.Failed)"
    joined: "a.Completed \\
      && (evall.Failed)"
    literal: |
      a.Completed
        && (evall.Failed)
    folded: >-
      a.Completed
      && (evall.Failed)
    flow: {x: a && evall}
    items:
      - when: outputs.a >
    unicode: "é✓ && evall"
    """)


# (the numbered lines of SOURCE, for the expectations below:
#   1 plain: a.Completed && (evall.Failed)          10 literal: |
#   2 single: 'it''s && (evall.Failed)'             11   a.Completed
#   3 double: "say \\"hi\\" \\x41 && (evall.Failed)"    12     && (evall.Failed)
#   4 plain2: a.Completed &&                        13 folded: >-
#   5   (evall.Failed)                              14   a.Completed
#   6 double2: "a.Completed &&                      15   && (evall.Failed)
#   7     (evall.Failed)"                           16 flow: {x: a && evall}
#   8 joined: "a.Completed \\                        17 items:
#   9   && (evall.Failed)"                          18   - when: outputs.a >
#                                                   19 unicode: "é✓ && evall")


@pytest.mark.parametrize("path, word, line, column", [
    pytest.param("plain", "evall", 1, 24, id="plain"),
    pytest.param("single", "evall", 2, 20, id="single-quoted-after-an-escaped-quote"),
    pytest.param("single", "s &&", 2, 14, id="single-quoted-escaped-quote-is-two-characters"),
    pytest.param("double", "evall", 3, 30, id="double-quoted-after-escapes"),
    pytest.param("double", '"hi', 3, 14, id="double-quoted-escape-at-its-backslash"),
    pytest.param("double", "A &&", 3, 21, id="double-quoted-hex-escape"),
    pytest.param("plain2", "(evall", 5, 3, id="plain-continued"),
    pytest.param("double2", "(evall", 7, 5, id="double-quoted-continued"),
    pytest.param("joined", "&& (evall", 9, 3, id="double-quoted-escaped-line-break"),
    pytest.param("literal", "evall", 12, 9, id="literal-block-more-indented"),
    pytest.param("folded", "&& (evall", 15, 3, id="folded-block"),
    pytest.param("flow.x", "evall", 16, 16, id="flow-mapping"),
    pytest.param("unicode", "evall", 19, 17, id="characters-not-bytes"),
])
def test_position_of_a_character(path, word, line, column):
    [doc], problems = yamlio.parse_string(SOURCE, objects=False)
    assert problems == []
    value = doc.obj
    for seg in path.split("."):
        value = value[seg]
    assert doc.position_of(path, value.index(word)) == yamlpos.Position(line, column)
    assert doc.line_of(path, value.index(word)) == line


def test_offset_at_the_end_is_just_after_the_last_character():
    [doc], _ = yamlio.parse_string(SOURCE, objects=False)
    assert doc.position_of("items[0].when", len("outputs.a >")) == yamlpos.Position(18, 22)


def test_offset_in_the_space_joining_two_lines_is_the_next_lines_first_character():
    [doc], _ = yamlio.parse_string(SOURCE, objects=False)
    assert doc.position_of("plain2", doc.obj["plain2"].index(" (")) == yamlpos.Position(5, 3)


@pytest.mark.parametrize("path", ["nothing", "plain.deeper", "items[3].when", "flow"])
def test_unknown_paths_and_non_strings_have_no_position(path):
    [doc], _ = yamlio.parse_string(SOURCE, objects=False)
    assert doc.position_of(path, 0) is None


def test_a_value_changed_after_loading_has_no_position():
    [doc], _ = yamlio.parse_string(SOURCE, objects=False)
    doc.obj["plain"] = "changed"
    assert doc.position_of("plain", 2) is None


def test_source_text_not_in_the_value_falls_back_to_the_first_character_and_says_so():
    node = yaml.compose('k: "abc && def"').value[0][1]
    lines = ['k: "xyz && uvw"']   # (not the text the node was read from: nothing of it can be found)
    assert yamlpos.position(node, lines, 8) == yamlpos.Position(1, 5, exact=False)


def test_documents_after_others_and_list_items_are_located():
    text = "a: 1\n---\nkind: List\napiVersion: v1\nitems:\n- kind: ConfigMap\n  data: {k: 'x && y'}\n"
    docs, _ = yamlio.parse_string(text, objects=False)
    item = yamlio.list_items(docs[1])[0]
    assert item.position_of("data.k", 5) == yamlpos.Position(7, 19)


def test_no_source_no_position():
    doc = yamlio.Document({"a": "text"}, "f.yaml", 1, 1)
    assert doc.position_of("a", 1) is None and doc.line_of("a", 1) == 1


def test_a_document_after_a_syntax_error_is_located_in_its_own_text():
    """Reading starts again after a broken document: that text is composed again, its first document first."""
    text = "a: [1\n---\nb: 'x && y'\n---\nc: z && w\n"
    docs, problems = yamlio.parse_string(text, objects=False)
    assert len(problems) == 1 and [list(d.obj) for d in docs] == [["b"], ["c"]]
    assert docs[0].position_of("b", 5) == yamlpos.Position(3, 10)
    assert docs[1].position_of("c", 5) == yamlpos.Position(5, 9)
