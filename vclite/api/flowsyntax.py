r"""Syntax of the JobFlow expression language (see flowexpr for what expressions mean): the
outcome names, the tree, a hand-written tokenizer and recursive-descent parser, and the printer.

Safe by construction: the parser only builds frozen dataclasses; nothing reaches eval/exec or
Python attributes; the text is at most MAX_LENGTH characters and nests at most MAX_DEPTH levels
(`!`, parentheses, lists and calls), and `a || b || c` is one n-ary node, so parsing and every walk
over a tree take linear time and bounded recursion. Pure: no I/O, no state. Errors are ExprError
with the 0-based character position.

Dependencies (`dependsOn.expression`; Argo's `depends`, with Volcano's outcome names)::

    expr    := or
    or      := and ('||' and)*
    and     := unary ('&&' unary)*
    unary   := '!' unary | '(' or ')' | FLOW ['.' OUTCOME]
    FLOW    := [A-Za-z0-9_][A-Za-z0-9_-]*        a bare FLOW means FLOW.Completed

    OUTCOME := Completed | Succeeded (= Completed) | Failed | Terminated | Skipped
             | Finished | AnyCompleted | AllCompleted | AnyFailed | AllFailed

Conditions (`when`, `repeat.until`)::

    or      := and ('||' and)*
    and     := cmp ('&&' cmp)*
    cmp     := unary [('==' | '!=' | '<' | '<=' | '>' | '>=') unary]     (not chainable)
    unary   := '!' unary | primary
    primary := NUMBER | STRING | true | false | null | '[' [or (',' or)*] ']' | '(' or ')'
             | FUNC '(' [or (',' or)*] ')' | REF
    REF     := params.NAME | outputs.FLOW ('.' FIELD)* | item ('.' FIELD)* | iteration
    FUNC    := len | contains | json

STRING is '…' or "…" with JSON escapes (\" \\ \n \t \uXXXX …, and \' in single quotes);
NUMBER is JSON's (-12, 0.5, 1e3). Names and fields are [A-Za-z0-9_-]+ (so `-` belongs to names:
`my-flow`; there is no arithmetic). `unparse` prints the canonical form, with nested &&/|| and
comparisons parenthesized, so parse(unparse(tree)) == tree.
"""
from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Union

from vclite.lib import errors

MAX_LENGTH = 16384
MAX_DEPTH = 32


class Outcome(enum.StrEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"
    TERMINATED = "Terminated"
    ABORTED = "Aborted"
    SKIPPED = "Skipped"
    FINISHED = "Finished"
    ANY_COMPLETED = "AnyCompleted"
    ALL_COMPLETED = "AllCompleted"
    ANY_FAILED = "AnyFailed"
    ALL_FAILED = "AllFailed"


ALIASES = {"Succeeded": Outcome.COMPLETED,   # Argo's names
           "AnySucceeded": Outcome.ANY_COMPLETED, "AllSucceeded": Outcome.ALL_COMPLETED}
ROOTS = ("params", "outputs", "item", "iteration", "outcomes", "workflow")   # outcomes, workflow: the exit handler's
# what the exit handler reads of the whole JobFlow, as Argo's {{workflow.status}} and {{workflow.failures}}
WORKFLOW_FIELDS = ("status", "failures")
FAILURE_FIELDS = ("name", "outcome", "message", "handled")   # of each element of workflow.failures
# Argo's names for them ({{item.displayName}} in an Argo exit handler looping over {{workflow.failures}})
ARGO_FAILURE_FIELDS = {"displayName": "name", "templateName": "name", "phase": "outcome"}
FUNCTIONS = {"len": 1, "contains": 2, "json": 1}
KEYWORDS = {"true": True, "false": False, "null": None}
DEPENDS, WHEN = "depends", "when"


class ExprError(ValueError):
    """A malformed expression, or a condition that cannot be evaluated. `position` is a 0-based
    character offset into `text`; str() is `<message> at position <n>:` and the text with a caret."""

    def __init__(self, message: str, position: int, text: str = ""):
        self.message, self.position, self.text = message, position, text
        super().__init__(message)

    def __str__(self) -> str:
        head = f"{self.message} at position {self.position}"
        if not self.text:
            return head
        line = re.sub(r"\s", " ", self.text)
        start = max(0, min(self.position - 38, len(line) - 76))
        pre = "…" if start > 0 else ""
        post = "…" if start + 76 < len(line) else ""
        col = len(pre) + self.position - start
        return f"{head}:\n    {pre}{line[start:start + 76]}{post}\n    {' ' * col}^"

    def one_line(self) -> str:
        """The error on one line, for a status message: `<message> at position <n> in "<text>"`
        (a long text is cut to 76 characters around the position)."""
        head = f"{self.message} at position {self.position}"
        if not self.text:
            return head
        line = re.sub(r"\s", " ", self.text)
        start = max(0, min(self.position - 38, len(line) - 76))
        excerpt = ("…" if start > 0 else "") + line[start:start + 76] + ("…" if start + 76 < len(line) else "")
        return f'{head} in "{excerpt}"'


def as_written(text: str) -> str:
    """An expression as written, on one line (for a status message or a table cell): each line break of one
    written over several (a `|` or `>` block), with the indentation around it, one space; spaces within a
    line are kept as written."""
    return re.sub(r"[ \t]*[\r\n]+\s*", " ", text).strip()


def one_line(e: Exception) -> str:
    """An error for a status message: an expression error with its text, else the first line."""
    return e.one_line() if isinstance(e, ExprError) else str(e).split("\n")[0]


# ---- the tree ---------------------------------------------------------------------------------

def _pos() -> Any:
    return dataclasses.field(default=0, compare=False)


@dataclasses.dataclass(frozen=True, slots=True)
class Atom:
    """`flow.Outcome` (dependencies only)."""
    flow: str
    outcome: Outcome
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class Not:
    operand: Node
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class And:
    operands: tuple[Node, ...]
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class Or:
    operands: tuple[Node, ...]
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class Literal:
    value: str | int | float | bool | None
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class Ref:
    """`params.x`, `outputs.flow.field…`, `item.field…`, `iteration`."""
    root: str
    path: tuple[str, ...] = ()
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class Compare:
    op: str
    left: Node
    right: Node
    pos: int = _pos()  # of the operator


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    func: str
    args: tuple[Node, ...]
    pos: int = _pos()


@dataclasses.dataclass(frozen=True, slots=True)
class ListOf:
    items: tuple[Node, ...]
    pos: int = _pos()


Node = Union[Atom, Not, And, Or, Literal, Ref, Compare, Call, ListOf]


@dataclasses.dataclass(frozen=True)
class Expr:
    """A parsed expression: its kind (DEPENDS or WHEN), its source text and its tree."""
    kind: str
    text: str
    root: Node

    def __str__(self) -> str:
        """As written, on one line (status messages name conditions and dependencies so)."""
        return as_written(self.text)


# ---- tokens -----------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_PLAIN_STRING = re.compile(r"\"[^\"\\]*\"|'[^'\\]*'")
_DIGITS = frozenset("0123456789")
_SCAN = re.compile(r"\s*(?:(&&|\|\||==|!=|<=|>=|[!<>()\[\],.])|([A-Za-z0-9_][A-Za-z0-9_-]*)|(\S))")
_JUNK = re.compile(r"-?[A-Za-z0-9_.-]*")
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_CURLY = "a typographic quote (pasted from a document?): use straight quotes ' or \""
_HINTS = {"&": "use && for 'and'", "|": "use || for 'or'", "=": "use == to compare",
          "{": "write references without {{ }}, e.g. outputs.train == \"ok\"",
          **dict.fromkeys("‘’‚‛“”„‟«»′″", _CURLY)}
CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")


class _Tok(NamedTuple):
    kind: str  # op | name | num | str | end
    value: Any
    pos: int


def _tokens(text: str, numbers: bool) -> list[_Tok]:
    """Operators, names, numbers (only where `numbers`, never right after '.') and strings."""
    out: list[_Tok] = []
    i, n = 0, len(text)
    while True:
        m = _SCAN.match(text, i)
        if m is None:
            break
        op, name, other = m.groups()
        i = m.start(m.lastindex)
        after_dot = bool(out) and out[-1].value == "." and out[-1].kind == "op"
        if op:
            out.append(_Tok("op", op, i))
            i = m.end()
        elif numbers and not after_dot and (
                (name is not None and name[0] in _DIGITS) or (other == "-" and text[i + 1:i + 2] in _DIGITS)):
            num = _NUMBER.match(text, i)
            if num.end() < n and (_NAME.match(text, num.end()) or text[num.end()] == "-"):
                raise ExprError(f"invalid number {_JUNK.match(text, i).group()!r}", i, text)
            lit = num.group()
            out.append(_Tok("num", float(lit) if num.group(1) or num.group(2) else int(lit), i))
            i = num.end()
        elif name:
            out.append(_Tok("name", name, i))
            i = m.end()
        elif other in "\"'":
            value, end = _string(text, i)
            out.append(_Tok("str", value, i))
            i = end
        else:
            hint = _HINTS.get(other)
            raise ExprError(f"unexpected character {other!r}" + (f" ({hint})" if hint else ""), i, text)
    out.append(_Tok("end", None, n))
    return out


def _string(text: str, i: int) -> tuple[str, int]:
    m = _PLAIN_STRING.match(text, i)
    if m:
        return m.group()[1:-1], m.end()
    quote, j, out = text[i], i + 1, []
    while j < len(text):
        c = text[j]
        if c == quote:
            return "".join(out), j + 1
        if c != "\\":
            out.append(c)
            j += 1
            continue
        e = text[j + 1:j + 2]
        if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[j + 2:j + 6]):
            out.append(chr(int(text[j + 2:j + 6], 16)))
            j += 6
        elif e and e != "u" and e in _ESCAPES:
            out.append(_ESCAPES[e])
            j += 2
        elif e == "u":
            raise ExprError("\\u must be followed by four hex digits (\\u00e9) in a string", j, text)
        elif e:
            raise ExprError(f"unknown escape \\{e} in a string", j, text)
        else:
            break
    raise ExprError("unterminated string", i, text)


def _describe(tok: _Tok) -> str:
    if tok.kind == "end":
        return "the end of the expression"
    if tok.kind == "str":
        return f"string {json.dumps(tok.value, ensure_ascii=False)}"
    return f"{tok.value!r}" if tok.kind != "num" else f"number {tok.value}"


# ---- parser -----------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str, kind: str):
        if not isinstance(text, str):
            raise ExprError(f"an expression must be a string, not {errors.json_type(text)}", 0)
        if len(text) > MAX_LENGTH:
            raise ExprError(f"expression too long ({len(text)} characters; at most {MAX_LENGTH})", MAX_LENGTH, text)
        self.text, self.kind = text, kind
        self.toks = _tokens(text, numbers=kind == WHEN)
        self.i = 0
        self.depth = 0

    def error(self, message: str, pos: int) -> ExprError:
        return ExprError(message, pos, self.text)

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def at(self, *ops: str) -> bool:
        tok = self.toks[self.i]
        return tok.kind == "op" and tok.value in ops

    def expect(self, op: str, context: str) -> None:
        tok = self.take()
        if tok.kind != "op" or tok.value != op:
            raise self.error(f"expected {op!r} {context}, found {_describe(tok)}", tok.pos)

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested too deeply (more than {MAX_DEPTH} levels)", pos)

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise self.error("empty expression", 0)
        node = self.or_()
        tok = self.peek()
        if tok.kind != "end":
            hint = "" if tok.kind == "op" else " (missing && or ||?)"
            raise self.error(f"unexpected {_describe(tok)} after a complete expression{hint}", tok.pos)
        return node

    def or_(self) -> Node:
        return self._chain("||", Or, self.and_)

    def and_(self) -> Node:
        return self._chain("&&", And, self.cmp if self.kind == WHEN else self.unary)

    def _chain(self, op: str, cls: type, operand) -> Node:
        first = operand()
        parts = [first]
        while self.at(op):
            self.take()
            parts.append(operand())
        return first if len(parts) == 1 else cls(tuple(parts), first.pos)

    def unary(self) -> Node:
        tok = self.peek()
        if self.at("!"):
            self.take()
            self.enter(tok.pos)
            operand = self.unary()
            self.depth -= 1
            return Not(operand, tok.pos)
        if self.at("("):
            self.take()
            self.enter(tok.pos)
            node = self.or_()
            self.expect(")", f"to close the '(' at position {tok.pos}")
            self.depth -= 1
            return node
        return self.atom() if self.kind == DEPENDS else self.primary()

    def atom(self) -> Atom:
        tok = self.take()
        if tok.kind != "name":
            raise self.error(f"expected a flow outcome such as train.Completed, found {_describe(tok)}", tok.pos)
        if not self.at("."):
            return Atom(tok.value, Outcome.COMPLETED, tok.pos)
        self.take()
        word = self.take()
        if word.kind != "name":
            raise self.error(f"expected an outcome after '{tok.value}.', found {_describe(word)}", word.pos)
        try:
            return Atom(tok.value, _outcome(word.value, word.pos, self.text), tok.pos)
        except ExprError:
            if tok.value not in ROOTS:
                raise
            raise self.error(f"{tok.value}.{word.value} is a condition's reference: dependsOn.expression reads "
                             f"flow outcomes (train.Completed); read {tok.value} in the flow's `when`", tok.pos) from None

    def cmp(self) -> Node:
        left = self.unary()
        if not self.at(*CMP_OPS):
            return left
        op = self.take()
        right = self.unary()
        if self.at(*CMP_OPS):
            raise self.error("comparisons cannot be chained; join them with && or ||", self.peek().pos)
        return Compare(op.value, left, right, op.pos)

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind in ("num", "str"):
            return Literal(tok.value, tok.pos)
        if tok.kind == "op" and tok.value == "[":
            return ListOf(self._items("]", "to close the list", tok.pos), tok.pos)
        if tok.kind != "name":
            raise self.error(f"expected a value, found {_describe(tok)}", tok.pos)
        if tok.value in KEYWORDS:
            return Literal(KEYWORDS[tok.value], tok.pos)
        if self.at("("):
            return self.call(tok)
        return self.ref(tok)

    def call(self, tok: _Tok) -> Call:
        if tok.value not in FUNCTIONS:
            raise self.error(f"unknown function {tok.value!r} (functions: {', '.join(FUNCTIONS)})", tok.pos)
        self.take()
        args = self._items(")", f"to close the call of {tok.value}", tok.pos)
        arity = FUNCTIONS[tok.value]
        if len(args) != arity:
            raise self.error(f"{tok.value}() takes {arity} argument{'s' if arity > 1 else ''}, got {len(args)}",
                             tok.pos)
        return Call(tok.value, args, tok.pos)

    def _items(self, close: str, context: str, pos: int) -> tuple[Node, ...]:
        self.enter(pos)
        items: list[Node] = []
        if not self.at(close):
            items.append(self.or_())
            while self.at(","):
                self.take()
                items.append(self.or_())
        self.expect(close, context)
        self.depth -= 1
        return tuple(items)

    def ref(self, tok: _Tok) -> Ref:
        root = tok.value
        if root not in ROOTS:
            raise self.error(f"unknown name {root!r}: a condition can use params.<name>, outputs.<flow>, item, "
                             "iteration, outcomes.<flow> and workflow.status / workflow.failures (the exit handler), "
                             "true, false, null, numbers, quoted "
                             "strings and len(), contains(), json()", tok.pos)
        path: list[str] = []
        while self.at("."):
            self.take()
            seg = self.take()
            if seg.kind != "name":
                raise self.error(f"expected a name after '.', found {_describe(seg)}", seg.pos)
            path.append(seg.value)
        need = {"params": "params.<name>", "outputs": "outputs.<flow>", "outcomes": "outcomes.<flow>",
                "workflow": " or ".join(f"workflow.{f}" for f in WORKFLOW_FIELDS)}
        if root in need and not path:
            raise self.error(f"{root} needs a name: {need[root]}", tok.pos)
        if (root in ("params", "outcomes") and len(path) > 1) or (root == "iteration" and path):
            raise self.error(f"{root}{'.' + path[0] if root != 'iteration' else ''} has no fields", tok.pos)
        problem = workflow_problem(path) if root == "workflow" else ""
        if problem:
            raise self.error(problem, tok.pos)
        return Ref(root, tuple(path), tok.pos)


def workflow_problem(path: Sequence[str]) -> str:
    """What is wrong with `workflow.<path>` ("" if nothing): `status` (a string, no fields) or `failures` (a
    list: its elements, by index, and their FAILURE_FIELDS may be read; an index past the end is known only when
    the handler runs)."""
    if path[0] not in WORKFLOW_FIELDS:
        return f"workflow has no field {path[0]!r} (it has {', '.join(WORKFLOW_FIELDS)})"
    if path[0] == "status" and len(path) > 1:
        return "workflow.status has no fields (it is Succeeded or Failed)"
    if path[0] == "failures" and len(path) > 1 and not path[1].isdigit():
        return (f"workflow.failures is a list: read an element by its index (workflow.failures.0.name), "
                f"not {path[1]!r}")
    if path[0] == "failures" and len(path) > 2:
        return failure_field_problem(path[2:], f"workflow.failures.{path[1]}")
    return ""


def failure_field_problem(path: Sequence[str], written: str) -> str:
    """What is wrong with reading `path` of an element of workflow.failures ("" if nothing); `written` names the
    element as the reader wrote it (`item`, `workflow.failures.0`). Argo's field names are pointed to ours."""
    if path[0] not in FAILURE_FIELDS:
        argo = ARGO_FAILURE_FIELDS.get(path[0])
        hint = f"; Argo's {path[0]} is {argo} here" if argo else ""
        return f"a failure has no field {path[0]!r} (it has {', '.join(FAILURE_FIELDS)}{hint})"
    if len(path) > 1:
        return f"{written}.{path[0]} has no fields"
    return ""


NOT_OUTCOMES = {Outcome.ABORTED.value: "an Aborted (suspended) vcjob may be resumed, so it has no outcome yet and "
                                       "the flows waiting on it keep waiting; use Failed, Terminated or Finished"}


def _outcome(word: str, pos: int, text: str) -> Outcome:
    if word in ALIASES:
        return ALIASES[word]
    if word in NOT_OUTCOMES:
        raise ExprError(f"{word} is not an outcome: {NOT_OUTCOMES[word]}", pos, text)
    try:
        return Outcome(word)
    except ValueError:
        pass
    names = [o.value for o in Outcome if o.value not in NOT_OUTCOMES] + list(ALIASES)
    close = [n for n in names if n.lower() == word.lower()] or difflib.get_close_matches(word, names, n=1, cutoff=0.8)
    hint = f"did you mean {close[0]}? " if close else ""
    raise ExprError(f"unknown outcome {word!r} ({hint}outcomes: {', '.join(names)})", pos, text)


def parse_depends(text: str) -> Expr:
    """Parse a `dependsOn.expression`; ExprError with the position when malformed."""
    return Expr(DEPENDS, text, _Parser(text, DEPENDS).parse())


def parse_when(text: str) -> Expr:
    """Parse a `when` or `repeat.until` condition; ExprError with the position when malformed."""
    return Expr(WHEN, text, _Parser(text, WHEN).parse())


def from_targets(targets: Sequence[str], strategy: str = "all") -> Expr:
    """The dependency `dependsOn.targets` + `strategy` mean: every (all) or some (any) target Completed.
    Built directly (no length limit), so a 10,000-target fan-in is fine. No targets gives `And(())`,
    which is True (its text is empty and is not parseable)."""
    atoms = tuple(Atom(t, Outcome.COMPLETED) for t in targets)
    root: Node = atoms[0] if len(atoms) == 1 else (Or(atoms) if strategy == "any" else And(atoms))
    return Expr(DEPENDS, unparse(root), root)


# ---- printing and walking ---------------------------------------------------------------------

def unparse(node: Node | Expr) -> str:
    """Canonical text for a tree: parse(unparse(t)) == t. Nested &&/|| and comparisons are parenthesized."""
    if isinstance(node, Expr):
        node = node.root
    if isinstance(node, Atom):
        return f"{node.flow}.{node.outcome.value}"
    if isinstance(node, Not):
        return "!" + _wrap(node.operand)
    if isinstance(node, (And, Or)):
        return f" {'&&' if isinstance(node, And) else '||'} ".join(_wrap(o) for o in node.operands)
    if isinstance(node, Compare):
        return f"{_wrap(node.left)} {node.op} {_wrap(node.right)}"
    if isinstance(node, Literal):
        return json.dumps(node.value, ensure_ascii=False)
    if isinstance(node, Ref):
        return ".".join((node.root, *node.path))
    if isinstance(node, Call):
        return f"{node.func}({', '.join(unparse(a) for a in node.args)})"
    if isinstance(node, ListOf):
        return f"[{', '.join(unparse(a) for a in node.items)}]"
    raise TypeError(f"not an expression node: {node!r}")


def _wrap(node: Node) -> str:
    text = unparse(node)
    return f"({text})" if isinstance(node, (And, Or, Compare)) else text


def nodes(expr: Expr | Node) -> Iterator[Node]:
    """Every node, pre-order (for checks that need positions, e.g. admission)."""
    stack = [expr.root if isinstance(expr, Expr) else expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Not):
            stack.append(node.operand)
        elif isinstance(node, (And, Or)):
            stack.extend(reversed(node.operands))
        elif isinstance(node, Compare):
            stack += [node.right, node.left]
        elif isinstance(node, Call):
            stack.extend(reversed(node.args))
        elif isinstance(node, ListOf):
            stack.extend(reversed(node.items))


def flow_refs(expr: Expr | Node) -> set[str]:
    """Flow names the expression reads: `flow.Outcome` atoms and `outputs.<flow>` references."""
    out: set[str] = set()
    for node in nodes(expr):
        if isinstance(node, Atom):
            out.add(node.flow)
        elif isinstance(node, Ref) and node.root == "outputs":
            out.add(node.path[0])
    return out
