"""Where a character of a YAML string was written: its line and column in the source file.

Admission knows where a problem is inside a string's value (a malformed `dependsOn.expression` at
character 20), not where that character was written: the value may be plain, single- or
double-quoted, or a `|` / `>` block, on one line or folded over several. Only when a problem needs
it, `Source` composes the document's nodes again from the text it was read from (loading keeps no
node: a big manifest would keep millions), and `position` maps the value's offset back to the line
and column of the source, line by line of the scalar. Where the source text of a line does not
appear in the value — decoded (`''` in single quotes; a double-quoted string's escapes, `\\"`, `\\n`,
`\\x41`, each character at its backslash) and folded (line breaks and the indentation around them) —
the column cannot be trusted: the position is then the value's first character, and says so
(`exact` False).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import yaml

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclasses.dataclass(frozen=True)
class Position:
    """A place in a source file: 1-based `line` and `column` (characters). `exact` False: the column
    is the string's first character, not the one asked for (escapes hide where that one was)."""

    line: int
    column: int
    exact: bool = True


class Source:
    """The text one run of the loader read (shared by its documents), composed again on demand."""

    def __init__(self, text: str):
        self.text = text
        self._nodes: list[yaml.Node] | None = None
        self._lines: list[str] | None = None

    def node(self, ordinal: int) -> yaml.Node | None:
        """The root node of the `ordinal`-th document (0-based) of the text; None past a syntax error."""
        if self._nodes is None:
            self._nodes = []
            loader = _BaseLoader(self.text)
            try:
                while loader.check_node():
                    self._nodes.append(loader.get_node())
            except yaml.YAMLError:
                pass   # (the documents before the error were read; the loader started again after it)
            finally:
                loader.dispose()
        return self._nodes[ordinal] if 0 <= ordinal < len(self._nodes) else None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = [line.removesuffix("\r") for line in self.text.split("\n")]
        return self._lines


def find(root: yaml.Node | None, segments: Sequence[str]) -> yaml.Node | None:
    """The node at `segments` (["spec", "flows", "1", "when"]) under `root`; None if there is none
    (a merge key, `<<`, is not followed: its fields are located by line only)."""
    node = root
    for seg in segments:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == seg), None)
        elif isinstance(node, yaml.SequenceNode) and seg.isdigit() and int(seg) < len(node.value):
            node = node.value[int(seg)]
        else:
            return None
    return node


def position(node: yaml.ScalarNode, lines: Sequence[str], offset: int) -> Position:
    """Where character `offset` of the scalar's value was written (an offset at or past its end: just
    after its last character; one in the space that joins two lines: the next line's first)."""
    pieces = _pieces(node, lines)
    segments = _segments(node, pieces)
    if not segments:
        line, column = (pieces[0][0], pieces[0][1]) if pieces else \
            (node.start_mark.line, node.start_mark.column + (1 if node.style in ("'", '"') else 0))
        return Position(line + 1, column + 1, exact=False)
    for at, line, columns in segments:
        if offset < at:
            return Position(line + 1, columns[0] + 1)
        if offset < at + len(columns):
            return Position(line + 1, columns[offset - at] + 1)
    _, line, columns = segments[-1]
    return Position(line + 1, columns[-1] + 2)


def _pieces(node: yaml.ScalarNode, lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """The text of the scalar on each source line it spans: [(line, column, text)], 0-based, blank
    lines left out; the quotes, the block's indicator line and indentation, and the spaces around a
    line break of a flow scalar (which folding drops) are not part of it."""
    style = node.style
    first, last = node.start_mark.line, min(node.end_mark.line, len(lines) - 1)
    out: list[tuple[int, int, str]] = []
    if style in ("|", ">"):
        indent = -1
        for n in range(first + 1, last + 1):
            line = lines[n][:node.end_mark.column] if n == node.end_mark.line else lines[n]
            if not line.strip():
                continue
            if indent < 0:
                indent = len(line) - len(line.lstrip(" "))
            out.append((n, indent, line[indent:]))
        return out
    quote = 1 if style in ("'", '"') else 0
    for n in range(first, last + 1):
        line = lines[n]
        start = node.start_mark.column + quote if n == first else 0
        end = node.end_mark.column - quote if n == node.end_mark.line else len(line)
        text = line[start:end]
        if n != first:
            lead = len(text) - len(text.lstrip(" \t"))
            start, text = start + lead, text[lead:]
        if n != node.end_mark.line:
            text = text.rstrip(" \t")
        if text:
            out.append((n, start, text))
    return out


def _segments(node: yaml.ScalarNode, pieces: list[tuple[int, int, str]]) -> list[tuple[int, int, list[int]]]:
    """Each piece found in the value, in order: [(offset in the value, line, column of each of its
    characters)]; [] when one is not there as written (escapes), so no column can be trusted."""
    value: str = node.value
    out: list[tuple[int, int, list[int]]] = []
    cursor = 0
    for line, column, text in pieces:
        columns = list(range(column, column + len(text)))
        if node.style == "'" and "''" in text:
            text, columns = _unquote(text, columns)
        elif node.style == '"' and "\\" in text:
            decoded = _unescape(text, columns)
            if decoded is None:
                return []
            text, columns = decoded
        at = value.find(text, cursor)
        if at < 0 or value[cursor:at].strip(" \t\n"):
            return []
        out.append((at, line, columns))
        cursor = at + len(text)
    return out if not value[cursor:].strip(" \t\n") else []


def _unquote(text: str, columns: list[int]) -> tuple[str, list[int]]:
    """A single-quoted piece's text as the value has it (`''` is one quote), with its columns."""
    chars: list[str] = []
    cols: list[int] = []
    i = 0
    while i < len(text):
        chars.append(text[i])
        cols.append(columns[i])
        i += 2 if text[i] == "'" and text[i + 1:i + 2] == "'" else 1
    return "".join(chars), cols


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
            "L": "\u2028", "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


def _unescape(text: str, columns: list[int]) -> tuple[str, list[int]] | None:
    """A double-quoted piece's text as the value has it, each escape's character at the column of its
    backslash (a `\\` ending the line joins the next line: it makes nothing); None for an escape YAML
    does not define."""
    chars: list[str] = []
    cols: list[int] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            chars.append(c)
            cols.append(columns[i])
            i += 1
            continue
        code = text[i + 1:i + 2]
        if code == "":
            break   # (an escaped line break)
        if code in _HEX:
            digits = text[i + 2:i + 2 + _HEX[code]]
            try:
                chars.append(chr(int(digits, 16)))
            except ValueError:
                return None
            cols.append(columns[i])
            i += 2 + _HEX[code]
            continue
        if code not in _ESCAPES:
            return None
        chars.append(_ESCAPES[code])
        cols.append(columns[i])
        i += 2
    return "".join(chars), cols


def scalar(source: Source | None, ordinal: int, segments: Sequence[str], value: Any) -> yaml.ScalarNode | None:
    """The scalar node of `value` at `segments` of document `ordinal`; None if it cannot be found, or
    holds another value (the object was changed after loading, as `vcctl run -p` changes a parameter)."""
    if source is None:
        return None
    node = find(source.node(ordinal), segments)
    if not isinstance(node, yaml.ScalarNode) or node.value != value:
        return None
    return node
