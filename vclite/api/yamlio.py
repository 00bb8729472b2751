"""Manifest files in and out: multi-document YAML to located Documents, objects to YAML / JSON.

Loading keeps, for every document, where each field was written, so any later error (admission's
`spec.tasks[1].replicas: ...`) can be shown as `file:line`. It checks only structure — YAML syntax,
a mapping per document, a served apiVersion/kind, a metadata.name — collecting every problem in
every document before raising one ManifestError. Field validation is admission's job, not this
module's. Timestamps stay strings, as Kubernetes reads them: objects come out JSON-shaped.
No I/O besides reading the file named to `load_file` / `load_files`.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from typing import Any

import yaml

from vclite.api import kinds, notserved, yamlpos
from vclite.lib import errors

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Plain scalars read as kubectl reads them (sigs.k8s.io/yaml: go-yaml v2), not as PyYAML does, so a file
# means the same to `vcctl run` and to `kubectl apply` on a cluster: `y`/`n` are booleans, `1e3` and
# `1.5e3` floats, `0o17` an int, `1:30` a string (PyYAML: strings, strings, a string, 90).
_BOOL = re.compile(r"^(?:y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON|n|N|no|No|NO|false|False|FALSE|off|Off|OFF)$")
_INT = re.compile(r"^[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0[0-7_]*|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})


def _go_bool(loader: Any, node: yaml.ScalarNode) -> bool:
    return loader.construct_scalar(node) in _TRUE


def _go_int(loader: Any, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node).replace("_", "")
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text.lstrip("+"))
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        return sign * int(digits, 8)   # (a leading zero: octal, as Go's ParseInt with base 0)
    return sign * int(digits, 0)


def _go_float(loader: Any, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).replace("_", "").lower()
    return float(text.replace(".inf", "inf").replace(".nan", "nan"))


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loading with kubectl's plain scalars (above); timestamps stay the strings that were written
    (as in Kubernetes)."""

    yaml_constructors = {**_BaseLoader.yaml_constructors,
                         "tag:yaml.org,2002:timestamp": yaml.SafeLoader.construct_yaml_str,
                         "tag:yaml.org,2002:bool": _go_bool, "tag:yaml.org,2002:int": _go_int,
                         "tag:yaml.org,2002:float": _go_float}
    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers
                if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()}

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        for key_node, _ in node.value:   # keys: as PyYAML reads them (`y:` stays "y"; values above only)
            if isinstance(key_node, yaml.ScalarNode) and not key_node.style and key_node.tag in _GO_TAGS:
                key_node.tag = _pyyaml_tag(key_node.value)
        return super().construct_mapping(node, deep=deep)


_GO_TAGS = frozenset({"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


def _pyyaml_tag(value: str) -> str:
    """The tag PyYAML's own resolver gives a plain scalar."""
    for tag, rx in _BaseLoader.yaml_implicit_resolvers.get(value[:1], []):
        if rx.match(value):
            return tag
    return "tag:yaml.org,2002:str"


for _tag, _rx, _first in (("tag:yaml.org,2002:bool", _BOOL, "yYnNtTfFoO"),
                          ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
                          ("tag:yaml.org,2002:float", _FLOAT, "-+0123456789.")):
    _Loader.add_implicit_resolver(_tag, _rx, list(_first))
IMPLICIT_RESOLVERS = _Loader.yaml_implicit_resolvers   # for dumpers: what kubectl reads as a non-string


# A field's place: the line of a scalar field, or (line, subtree) for a collection, where the
# subtree maps key -> place (mapping) or lists the items' places (sequence). For a mapping entry
# the line is the key's line; for a sequence item, the item's own line.
_Place = Any
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Unusual(Exception):
    """The fast builder met something only PyYAML's constructor handles (merge keys, a tag, a
    non-string key): the document is constructed by PyYAML instead."""


class _BadScalar(Exception):
    """A scalar Python cannot hold (an integer of more than 4,300 digits)."""

    def __init__(self, node: yaml.Node, error: ValueError):
        text = node.value if len(node.value) <= 20 else node.value[:20] + "…"
        super().__init__(f"cannot read {text!r} ({len(node.value):,} characters): {str(error).split(':')[0]}")
        self.line = node.start_mark.line + 1


class _DuplicateKey(Exception):
    """A mapping names a key twice (kubectl refuses it too; PyYAML would keep the last silently)."""

    def __init__(self, key: yaml.Node, first: int):
        super().__init__(f'mapping key "{key.value}" already defined at line {first}')
        self.line = key.start_mark.line + 1


class _Recursive(Exception):
    """An alias refers to a node that contains it: no JSON-shaped object can hold that."""

    def __init__(self, node: yaml.Node):
        super().__init__("an alias refers to a node that contains it (recursive anchors are not allowed)")
        self.node = node


class _Plain(int):
    """The place (line) of a plain scalar that is not a string — `n`, `5`, `1e3` — and `text`, how it
    was written: an error about a string that came out a boolean or a number can quote it."""

    text: str


def _plain(node: yaml.ScalarNode, line: int) -> int:
    if node.style:   # (quoted: a string, unless explicitly tagged)
        return line
    place = _Plain(line)
    place.text = node.value
    return place


def _build(loader: Any, node: yaml.Node, line: int, memo: dict, active: set) -> tuple[Any, _Place]:
    """The object and the places of a node, built in one walk (core tags only; aliases shared as
    PyYAML shares them; non-string scalars constructed by the loader, so they read the same)."""
    if type(node) is yaml.ScalarNode:
        if node.tag == _STR:
            return node.value, line
        try:
            return loader.construct_document(node), _plain(node, line)
        except ValueError as e:   # e.g. an integer of more than 4,300 digits
            raise _BadScalar(node, e) from None
    hit = memo.get(id(node))
    if hit is not None:
        return hit[0], (line, hit[1])
    if id(node) in active:
        raise _Recursive(node)
    active.add(id(node))
    obj: Any
    sub: Any
    if type(node) is yaml.MappingNode and node.tag == _MAP:
        obj, sub = {}, {}
        for key, value in node.value:
            if type(key) is not yaml.ScalarNode or key.tag != _STR:
                raise _Unusual
            if key.value in obj:
                first = sub[key.value]
                raise _DuplicateKey(key, first[0] if isinstance(first, tuple) else first)
            obj[key.value], sub[key.value] = _build(loader, value, key.start_mark.line + 1, memo, active)
    elif type(node) is yaml.SequenceNode and node.tag == _SEQ:
        obj, sub = [], []
        for item in node.value:
            o, p = _build(loader, item, item.start_mark.line + 1, memo, active)
            obj.append(o)
            sub.append(p)
    else:
        raise _Unusual
    active.discard(id(node))
    memo[id(node)] = (obj, sub)
    return obj, (line, sub)


def _places(node: yaml.Node, line: int, memo: dict, active: set) -> _Place:
    """The places of a node PyYAML constructed (merge keys already flattened into the node)."""
    if isinstance(node, yaml.ScalarNode):
        return line if node.tag == _STR else _plain(node, line)
    if id(node) in memo:
        return line, memo[id(node)]
    if id(node) in active:
        raise _Recursive(node)
    active.add(id(node))
    sub: Any
    if isinstance(node, yaml.MappingNode):
        sub = {str(k.value): _places(v, k.start_mark.line + 1, memo, active) for k, v in node.value}
    else:
        sub = [_places(item, item.start_mark.line + 1, memo, active) for item in node.value]
    active.discard(id(node))
    memo[id(node)] = sub
    return line, sub


MAX_EXPANDED_NODES = 1_000_000   # a document's nodes once its aliases are expanded (an alias bomb has billions)


class _TooManyAliases(Exception):
    def __init__(self, size: int):
        super().__init__(f"document contains excessive aliasing: {size:,} values once its aliases are expanded "
                         f"(at most {MAX_EXPANDED_NODES:,})")


def _expanded_size(node: yaml.Node, memo: dict, active: set) -> int:
    """How many values the node stands for once every alias in it is expanded (anchors counted once
    per use). A recursive anchor counts nothing here: construction reports it."""
    if isinstance(node, yaml.ScalarNode):
        return 1
    hit = memo.get(id(node))
    if hit is not None:
        return hit
    if id(node) in active:
        return 0
    active.add(id(node))
    children = (v for kv in node.value for v in kv) if isinstance(node, yaml.MappingNode) else node.value
    size = 1
    for child in children:
        size += _expanded_size(child, memo, active)
        if size > MAX_EXPANDED_NODES:
            raise _TooManyAliases(size)
    active.discard(id(node))
    memo[id(node)] = size
    return size


def _construct(loader: Any, node: yaml.Node) -> tuple[Any, _Place]:
    line = node.start_mark.line + 1
    try:
        return _build(loader, node, line, {}, set())
    except _Unusual:
        obj = loader.construct_document(node)
        return obj, _places(node, line, {}, set())


_SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


def split_path(path: str) -> list[str]:
    """`spec.tasks[1].template` -> ["spec", "tasks", "1", "template"]; `labels[a.b/c]` keeps `a.b/c`."""
    return [m[1] if m[1] is not None else m[2] for m in _SEGMENT.finditer(path)]


@dataclasses.dataclass
class Document:
    """One non-empty YAML document: the object, where it came from, and where its fields are."""

    obj: Any
    file: str
    index: int  # 1-based position in the file, counting empty documents too
    line: int  # 1-based line where the document's content starts
    places: _Place = dataclasses.field(default=0, repr=False, compare=False)
    # where the text was read (composed again to find a character of a string: `position_of`): the text, the
    # document's ordinal in it, and the path of this document's object in that document's (a List's item)
    source: yamlpos.Source | None = dataclasses.field(default=None, repr=False, compare=False)
    ordinal: int = dataclasses.field(default=0, repr=False, compare=False)
    prefix: tuple[str, ...] = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def kind(self) -> str:
        k = self.obj.get("kind") if isinstance(self.obj, dict) else None
        return k if isinstance(k, str) else ""

    @property
    def name(self) -> str:
        md = self.obj.get("metadata") if isinstance(self.obj, dict) else None
        n = md.get("name") if isinstance(md, dict) else None
        return n if isinstance(n, str) else ""

    def line_of(self, path: str, offset: int | None = None) -> int:
        """The line of the field at `path` (`spec.tasks[1].replicas`), or of its nearest ancestor
        that exists; the document's line for "" or a path that matches nothing. `offset`: a
        character of the field's text (a string over several lines: the line of that character)."""
        if offset is not None:
            at = self.position_of(path, offset)
            if at is not None:
                return at.line
        place = self.places
        line, sub = place if isinstance(place, tuple) else (place, None)
        line = line or self.line
        for seg in split_path(path):
            if isinstance(sub, dict) and seg in sub:
                place = sub[seg]
            elif isinstance(sub, list) and seg.isdigit() and int(seg) < len(sub):
                place = sub[int(seg)]
            else:
                break
            line, sub = place if isinstance(place, tuple) else (place, None)
        return int(line)

    def position_of(self, path: str, offset: int) -> yamlpos.Position | None:
        """Where character `offset` of the string at `path` was written (line and column; `exact` False:
        the string's first character, escapes hiding the one asked for); None if unknown (no source, a
        path through a merge key, a value changed since it was read)."""
        segments = split_path(path)
        value: Any = self.obj
        for seg in segments:
            if isinstance(value, dict) and seg in value:
                value = value[seg]
            elif isinstance(value, list) and seg.isdigit() and int(seg) < len(value):
                value = value[int(seg)]
            else:
                return None
        if not isinstance(value, str):
            return None
        node = yamlpos.scalar(self.source, self.ordinal, [*self.prefix, *segments], value)
        return yamlpos.position(node, self.source.lines, offset) if node is not None and self.source else None

    def plain_text(self, path: str) -> str | None:
        """How the value at exactly `path` was written when it is a plain (unquoted) scalar that YAML
        reads as something other than a string (`n` for false, `010` for 8); None otherwise."""
        place: Any = self.places
        for seg in split_path(path):
            sub = place[1] if isinstance(place, tuple) else None
            if isinstance(sub, dict) and seg in sub:
                place = sub[seg]
            elif isinstance(sub, list) and seg.isdigit() and int(seg) < len(sub):
                place = sub[int(seg)]
            else:
                return None
        return place.text if isinstance(place, _Plain) else None

    def problem(self, path: str, message: str, offset: int | None = None) -> Problem:
        """A Problem about the field at `path` of this document, located."""
        return Problem(self.file, self.line_of(path, offset), message, self.index, self.kind, self.name, path,
                       item=self.prefix)

    def locate(self, field_errors: Iterable[errors.FieldError]) -> list[Problem]:
        """Admission's FieldErrors for this document as located Problems."""
        return [self.problem(e.path, e.message, e.offset) for e in field_errors]


@dataclasses.dataclass(frozen=True)
class Problem:
    """One located problem: `flow.yaml:12: document 2 (JobFlow/demo): spec.x: message`."""

    file: str
    line: int  # 1-based; 0 when unknown
    message: str
    document: int = 0  # 1-based; 0 when unknown
    kind: str = ""
    name: str = ""
    path: str = ""
    column: int = 0  # 1-based; 0 when unknown
    # of a v1 List's item, the item's place in its document (Document.prefix: `("items", "2")`); () otherwise
    item: tuple[str, ...] = dataclasses.field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}" + (f":{self.column}" if self.column else "")
        parts = [where]
        if self.document:
            who = "/".join(x for x in (self.kind, self.name) if x)
            parts.append(f"document {self.document}" + (f" ({who})" if who else ""))
        if self.path:
            parts.append(self.path)
        return ": ".join(parts + [self.message])


class ManifestError(ValueError):
    """Manifests that cannot be used; `problems` lists every problem found, in file order."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def quote_hint(value: Any, text: str | None = None) -> str:
    """Why a boolean or number stands where a string was expected, and the fix: with `text` (how it was
    written, Document.plain_text) `the unquoted YAML value n is read as the boolean false; quote it
    ("n")` (`…value 7 is a number…` when it reads as written); without, `it is a boolean (false); quote
    the value if a string was meant`. "" for other values."""
    if not isinstance(value, bool | int | float):
        return ""
    kind = "boolean" if isinstance(value, bool) else "number"
    shown = json.dumps(value)
    if text is None:
        return f"it is a {kind} ({shown}); quote the value if a string was meant"
    read = f"a {kind}" if text == shown else f"read as the {kind} {shown}"
    return f"the unquoted YAML value {text} is {read}; quote it ({json.dumps(text)})"


def _served() -> str:
    return ", ".join(f"{k.kind} ({k.api_version})" for k in kinds.ALL)


def _not_a_string(doc: Document, path: str, value: Any) -> str:
    hint = quote_hint(value, doc.plain_text(path))
    return f"must be a string, got {_type_name(value)}" + (f": {hint}" if hint else "")


def _type_problems(doc: Document) -> list[Problem]:
    obj = doc.obj
    out: list[Problem] = []
    for field in ("apiVersion", "kind"):
        value = obj.get(field)
        if value is None or value == "":
            out.append(doc.problem(field, "Required value"))
        elif not isinstance(value, str):
            out.append(doc.problem(field, _not_a_string(doc, field, value)))
    if out:
        return out
    api_version, kind = obj["apiVersion"], obj["kind"]
    if kinds.lookup(api_version, kind) is not None:
        return []
    why = notserved.reason(api_version, kind)
    if why:   # a kind vclite knows it does not run (a Deployment, RBAC, Argo, batch/v1 Job): why, and what instead
        return [doc.problem("kind", f'kind "{kind}" of apiVersion "{api_version}" is not served: {why}')]
    known = kinds.by_kind(kind)
    if known is not None:
        accepted = " or ".join((known.api_version,) + known.also_accepted)
        return [doc.problem("apiVersion", f'kind {kind} is not served as "{api_version}": use {accepted}')]
    hint = next((f' (did you mean "{k.kind}"?)' for k in kinds.ALL if k.kind.lower() == kind.lower()), "")
    return [doc.problem("kind", f'kind "{kind}" of apiVersion "{api_version}" is not served{hint}; '
                                f"served: {_served()}")]


def check(doc: Document) -> list[Problem]:
    """Structural problems of one document (not admission: only what any object must have)."""
    if not isinstance(doc.obj, dict):
        return [doc.problem("", f"a document must be a mapping (an API object), got {_type_name(doc.obj)}")]
    out = _type_problems(doc)
    metadata = doc.obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        out.append(doc.problem("metadata", f"must be a mapping, got {_type_name(metadata)}"))
        return out
    metadata = metadata or {}
    name = metadata.get("name")
    if name is not None and name != "" and not isinstance(name, str):
        out.append(doc.problem("metadata.name", _not_a_string(doc, "metadata.name", name)))
    elif not name and not metadata.get("generateName"):
        out.append(doc.problem("metadata.name", "Required value: name or generateName is required"))
    return out


def _yaml_problem(filename: str, e: yaml.YAMLError, lines: list[str] | None = None) -> Problem:
    """A syntax error as a Problem at its line and column; `lines`, the source's, to say when the
    character at fault is a tab (PyYAML only says it `cannot start any token`)."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if isinstance(e, yaml.MarkedYAMLError):
        message = e.problem or "invalid YAML"
        if e.context:
            message += f" ({e.context})"
    else:
        message = getattr(e, "reason", None) or str(e)
    if mark is None:
        return Problem(filename, 0, f"invalid YAML: {message}")
    if lines is not None and mark.line < len(lines) and lines[mark.line][mark.column:mark.column + 1] == "\t" \
            and "tab" not in message:
        message += ": a tab; YAML indents with spaces only"
    return Problem(filename, mark.line + 1, f"invalid YAML: {message}", column=mark.column + 1)


def _reset(loader: Any) -> None:
    """Forget a failed construction (PyYAML clears this state only when a document succeeds)."""
    loader.constructed_objects, loader.recursive_objects = {}, {}
    loader.state_generators, loader.deep_construct = [], False


_DOCUMENT_START = re.compile(r"^---(?:[ \t]|$)", re.MULTILINE)


def parse_string(text: str, filename: str = "<string>", objects: bool = True) -> tuple[list[Document], list[Problem]]:
    """Every non-empty document of `text` and every problem found (nothing raised for bad input).
    `objects=False`: plain YAML (e.g. a configuration file), not checked to be API objects.
    A syntax error ends its document, not the file: reading starts again at the next `---` line
    (a `---` at the start of a line always starts a document), so later documents are checked too."""
    docs: list[Document] = []
    problems: list[Problem] = []
    start, first_index = 0, 0
    while start is not None:
        start, first_index = _parse_from(text, start, first_index, filename, objects, docs, problems)
    return docs, problems


def _parse_from(text: str, start: int, first_index: int, filename: str, objects: bool, docs: list[Document],
                problems: list[Problem]) -> tuple[int | None, int]:
    """Parse `text` from offset `start` (a line start); documents are numbered after `first_index`.
    Returns where to start again after a syntax error (None: done) and the broken document's number."""
    head = text.count("\n", 0, start)
    source = "\n" * head + text[start:]   # (blank lines keep the line numbers)
    loader = _Loader(source)
    loader.source_lines = source.split("\n")   # (what a syntax error's mark points at)
    located = yamlpos.Source(source)   # (composed again only if a problem needs a string's character)
    index, last_end = first_index, head - 1
    aliases = "*" in text[start:]   # (no `*`, no alias: nothing to expand, the size check is skipped)
    try:
        while loader.check_node():
            node = loader.get_node()
            index += 1
            last_end = node.end_mark.line
            try:
                if aliases:
                    _expanded_size(node, {}, set())
                obj, places = _construct(loader, node)
            except _TooManyAliases as e:
                problems.append(Problem(filename, node.start_mark.line + 1, str(e), index))
                continue
            except (_BadScalar, _DuplicateKey) as e:
                problems.append(Problem(filename, e.line, str(e), index))
                _reset(loader)
                continue
            except yaml.constructor.ConstructorError as e:  # bad tag or key: skip this document only
                problems.append(dataclasses.replace(_yaml_problem(filename, e), document=index))
                _reset(loader)
                continue
            except _Recursive as e:
                problems.append(Problem(filename, e.node.start_mark.line + 1, str(e), index))
                continue
            except RecursionError:
                problems.append(Problem(filename, node.start_mark.line + 1, "nested too deeply", index))
                continue
            if obj is None:
                continue
            doc = Document(obj, filename, index, node.start_mark.line + 1, places, located, index - first_index - 1)
            for one in (list_items(doc) if objects else [doc]):
                if objects:
                    problems.extend(check(one))
                docs.append(one)
    except yaml.YAMLError as e:  # syntax: this document cannot be read; the next one may be
        problems.append(dataclasses.replace(_yaml_problem(filename, e, loader.source_lines), document=index + 1))
        return _next_document(text, start, last_end), index + 1
    finally:
        loader.dispose()
    return None, index


def list_items(doc: Document) -> list[Document]:
    """A `v1` `List` (what `vcctl run -o yaml` and `kubectl get -o yaml` print) as its items, each a
    Document of its own at its own lines, as kubectl reads one; any other document as itself."""
    obj = doc.obj
    if not (isinstance(obj, dict) and obj.get("kind") == "List" and obj.get("apiVersion") == "v1"
            and isinstance(obj.get("items"), list)):
        return [doc]
    place = doc.places
    sub = place[1] if isinstance(place, tuple) else None
    item_places = sub.get("items") if isinstance(sub, dict) else None
    item_places = item_places[1] if isinstance(item_places, tuple) else []
    out = []
    for i, item in enumerate(obj["items"]):
        item_place = item_places[i] if i < len(item_places) else doc.line
        line = item_place[0] if isinstance(item_place, tuple) else item_place
        out.append(Document(item, doc.file, doc.index, line or doc.line, item_place, doc.source, doc.ordinal,
                            (*doc.prefix, "items", str(i))))
    return out


def _next_document(text: str, start: int, last_end: int) -> int | None:
    """The offset of the first `---` line after line `last_end` (where the last good document
    ended, usually the broken one's own `---`) and after `start`; None if there is none."""
    line_start = 0
    for _ in range(max(last_end, 0) + (1 if last_end >= 0 else 0)):
        line_start = text.find("\n", line_start) + 1
        if line_start == 0:
            return None
    for m in _DOCUMENT_START.finditer(text, max(line_start, start + 1)):
        return m.start()
    return None


def load_string(text: str, filename: str = "<string>") -> list[Document]:
    """The documents of `text`; raises ManifestError listing every problem if there is any."""
    docs, problems = parse_string(text, filename)
    if problems:
        raise ManifestError(problems)
    return docs


def _read(path: str) -> tuple[str | None, list[Problem]]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return None, [Problem(path, 0, f"cannot read: {e.strerror or e}")]
    return _decode(data, path)


def _decode(data: bytes, filename: str) -> tuple[str | None, list[Problem]]:
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        return None, [Problem(filename, line, f"not UTF-8 text: {e.reason} at byte {e.start}")]


def parse_bytes(data: bytes, filename: str) -> tuple[list[Document], list[Problem]]:
    """`parse_files` for the bytes of one file read by the caller (standard input), named `filename`."""
    text, problems = _decode(data, filename)
    if text is None:
        return [], problems
    return parse_string(text, filename)


def parse_files(paths: Iterable[str]) -> tuple[list[Document], list[Problem]]:
    """Every document of every file that could be read, in order, and every problem found."""
    docs: list[Document] = []
    problems: list[Problem] = []
    for path in paths:
        text, read_problems = _read(path)
        problems.extend(read_problems)
        if text is not None:
            file_docs, file_problems = parse_string(text, path)
            docs.extend(file_docs)
            problems.extend(file_problems)
    return docs, problems


def load_files(paths: Iterable[str]) -> list[Document]:
    """The documents of every file, in order; raises one ManifestError for all problems in all."""
    docs, problems = parse_files(paths)
    if problems:
        raise ManifestError(problems)
    return docs


def load_file(path: str) -> list[Document]:
    """The documents of one file; raises ManifestError listing every problem if there is any."""
    return load_files([path])


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=style)


class _Dumper(yaml.SafeDumper):
    """Block style, insertion order, no anchors/aliases; multi-line strings as `|` blocks, str
    subclasses (StrEnum values) as plain strings."""

    yaml_representers = {**yaml.SafeDumper.yaml_representers, str: _represent_str}
    yaml_multi_representers = {**yaml.SafeDumper.yaml_multi_representers, str: _represent_str}
    yaml_implicit_resolvers = IMPLICIT_RESOLVERS   # (a string kubectl would read as another type is quoted)

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(obj: Any) -> str:
    """YAML as kubectl prints it: block style, keys in insertion order, no aliases."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 30)


def dump_json(obj: Any) -> str:
    """JSON with a 2-space indent, keys in insertion order, ending in a newline."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
