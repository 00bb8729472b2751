"""The JobFlow expression language: `dependsOn.expression` (a dependency over other flows'
outcomes) and `when` / `repeat.until` (a condition over parameters, outputs, the loop item and the
iteration). This is the API the JobFlow controller and admission use; the grammar, the tree and
the parser are in flowsyntax (re-exported here). Pure: no I/O, no clock, no state.

Dependencies: `evaluate_depends` is three-valued (Kleene logic). Each referenced flow contributes
facts (`outcome_facts`): a flow absent from the mapping is waiting or running and its outcomes
are unknown; a finished flow's outcomes are all known (false unless among its facts). `!` of
unknown is unknown; `&&` is False if any operand is False, else unknown if any is unknown; `||`
is True if any operand is True, else unknown if any is unknown. Facts only grow, so an answer once
True or False never changes, and once every referenced flow is finished every atom is known and
the answer is decided: None means "wait", False means "can never become true" (the flow is
Skipped). Kleene logic is sound but not eager on contradictions: `a.Completed && a.Failed` stays
None until `a` finishes. `Finished` = finished in any way (Completed, Failed, Terminated
or Skipped). For a fan-out flow (withItems/withParam) AnyCompleted/AnyFailed hold once one item
Completed/Failed (they may hold before the flow finishes), AllCompleted/AllFailed once every item
did; with no items all four are false. A flow without items counts as one item (Completed gives
AnyCompleted and AllCompleted; Failed gives AnyFailed and AllFailed).

Conditions: `evaluate_when` reads `params.NAME` (spec.arguments), `outputs.FLOW` (the flow's
output — its termination message — with surrounding whitespace removed), `outputs.FLOW.f.0`
(that output parsed as JSON: field `f`, then list index 0), `item` / `item.f` (the loop item) and
`iteration` (the repeat iteration, 0 for the first run). Types: a string compared with a number is
read as a number, with a boolean as true/false (so `params.epochs > 3` and `outputs.ok == true`
work); two strings that both read as numbers are ordered (< <= > >=) as numbers, so
`outputs.score >= params.target` compares 10 with 9 as numbers (== and != compare them as text);
`null` equals only null; other mixed comparisons, ordering anything but numbers or
strings, and `&&`, `||`, `!` or a whole condition that is not a boolean (or the string "true" /
"false") are ExprErrors naming the position. `len(x)` (string, list or object), `contains(x, y)`
(list element — equal as ==, so contains([1, 2], "2") — substring, or object key), `json(s)` (parse a string as JSON). `&&` and `||`
short-circuit, so `outputs.a != "" && json(outputs.a).ok` never parses what the left side rules out.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vclite.api import core, flowsyntax
from vclite.lib import errors

ExprError = flowsyntax.ExprError
Expr = flowsyntax.Expr
Node = flowsyntax.Node
Outcome = flowsyntax.Outcome
ALIASES = flowsyntax.ALIASES
MAX_LENGTH = flowsyntax.MAX_LENGTH
MAX_DEPTH = flowsyntax.MAX_DEPTH
parse_depends = flowsyntax.parse_depends
parse_when = flowsyntax.parse_when
from_targets = flowsyntax.from_targets
unparse = flowsyntax.unparse
nodes = flowsyntax.nodes
flow_refs = flowsyntax.flow_refs

FINAL = frozenset({Outcome.COMPLETED, Outcome.FAILED, Outcome.TERMINATED, Outcome.ABORTED, Outcome.SKIPPED})
AGGREGATES = frozenset({Outcome.ANY_COMPLETED, Outcome.ALL_COMPLETED, Outcome.ANY_FAILED, Outcome.ALL_FAILED})
FANOUT = "FanOut"  # a fact (not an outcome) marking a flow with items: aggregates are then never inferred
_OUTCOMES = frozenset(o.value for o in Outcome)


# ---- dependencies: three-valued evaluation ----------------------------------------------------

def outcome_facts(final: str | None, items: Sequence[str | None] | None = None) -> frozenset[str]:
    """The facts for one flow, as `evaluate_depends` wants them. `final`: the flow's outcome once it is
    finished (None while it waits or runs). `items`: for a fan-out flow, each item's outcome (None
    while that item runs); aggregates are Any*/All* over them (with no items, all four are false)."""
    facts: set[str] = set()
    if items is not None:
        facts.add(FANOUT)
        done = [ALIASES.get(o, o) for o in items if o is not None]
        if any(o == Outcome.COMPLETED for o in done):
            facts.add(Outcome.ANY_COMPLETED)
        if any(o == Outcome.FAILED for o in done):
            facts.add(Outcome.ANY_FAILED)
        if items and len(done) == len(items):
            if all(o == Outcome.COMPLETED for o in done):
                facts.add(Outcome.ALL_COMPLETED)
            if all(o == Outcome.FAILED for o in done):
                facts.add(Outcome.ALL_FAILED)
    if final is not None:
        facts |= {str(ALIASES.get(final, final)), Outcome.FINISHED}
    return frozenset(str(f) for f in facts)


def _closure(flow: str, facts: frozenset[str]) -> tuple[frozenset[str], bool]:
    known: set[str] = set()
    for f in facts:
        f = ALIASES.get(f, f)
        if f != FANOUT and f not in _OUTCOMES:
            raise ValueError(f"flow {flow!r}: unknown outcome fact {f!r}")
        known.add(f)
    finished = bool(known & FINAL) or Outcome.FINISHED in known
    if finished:
        known.add(Outcome.FINISHED)
        if FANOUT not in known:  # a flow without items is its own single item
            if Outcome.COMPLETED in known:
                known |= {Outcome.ANY_COMPLETED, Outcome.ALL_COMPLETED}
            if Outcome.FAILED in known:
                known |= {Outcome.ANY_FAILED, Outcome.ALL_FAILED}
    return frozenset(known), finished


def _truth(atom: flowsyntax.Atom, known: frozenset[str], finished: bool) -> bool | None:
    if atom.outcome in known:
        return True
    if finished:
        return False
    if atom.outcome == Outcome.ALL_COMPLETED and Outcome.ANY_FAILED in known:
        return False
    if atom.outcome == Outcome.ALL_FAILED and Outcome.ANY_COMPLETED in known:
        return False
    return None


def evaluate_depends(expr: Expr | Node, outcomes: Mapping[str, frozenset[str]]) -> bool | None:
    """True/False when decided, None while undecided. `outcomes[flow]` is the set of facts known for
    that flow (see outcome_facts); a flow absent from the mapping is still waiting or running. A flow
    is finished when its facts include a final outcome (Completed, Failed, Terminated, Aborted,
    Skipped) or Finished; then every outcome not among its facts is false."""
    cache: dict[str, tuple[frozenset[str], bool]] = {}

    def ev(node: Node) -> bool | None:
        if isinstance(node, flowsyntax.Atom):
            if node.flow not in cache:
                cache[node.flow] = _closure(node.flow, outcomes.get(node.flow, frozenset()))
            return _truth(node, *cache[node.flow])
        if isinstance(node, flowsyntax.Not):
            v = ev(node.operand)
            return None if v is None else not v
        if isinstance(node, (flowsyntax.And, flowsyntax.Or)):
            decisive = isinstance(node, flowsyntax.Or)  # True decides an Or, False decides an And
            unknown = False
            for operand in node.operands:
                v = ev(operand)
                if v is decisive:
                    return decisive
                unknown = unknown or v is None
            return None if unknown else not decisive
        raise TypeError(f"not a dependency expression node: {node!r}")

    return ev(expr.root if isinstance(expr, Expr) else expr)


# ---- conditions -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class WhenEnv:
    """What a condition can read: JobFlow spec.arguments, finished flows' outputs, the loop item (None
    outside a loop), the repeat iteration and — for the exit handler (None elsewhere) — every other flow's
    outcome (`Completed`, `Failed`, `Terminated`, `Skipped`, or `NotCreated`: a stop left it unstarted) and the
    whole JobFlow's (`workflow`: {"status": "Succeeded" | "Failed", "failures": [{name, outcome, message,
    handled}, …]}, as Argo's exit handler reads {{workflow.status}} and {{workflow.failures}})."""
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    outputs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    item: Any = None
    iteration: int = 0
    outcomes: Mapping[str, str] | None = None
    workflow: Mapping[str, Any] | None = None


_NUMERIC = re.compile(r"\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*")


def kind_of(value: Any) -> str:
    """A value's type in the expression language's words (JSON's, but a list is a list)."""
    return "list" if isinstance(value, list) else errors.json_type(value)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "…"


def _typed(value: Any) -> str:
    """`string "x"`, `number 3`, `null`: a value with its type, for messages."""
    return "null" if value is None else f"{kind_of(value)} {_show(value)}"


class _When:
    def __init__(self, expr: Expr, env: WhenEnv):
        self.text, self.env = expr.text, env

    def error(self, message: str, node: Node) -> ExprError:
        return ExprError(message, node.pos, self.text)

    def ev(self, node: Node) -> Any:
        if isinstance(node, flowsyntax.Literal):
            return node.value
        if isinstance(node, flowsyntax.Ref):
            return self.ref(node)
        if isinstance(node, flowsyntax.Not):
            return not self.boolean(node.operand)
        if isinstance(node, (flowsyntax.And, flowsyntax.Or)):
            decisive = isinstance(node, flowsyntax.Or)
            return decisive if any(self.boolean(o) is decisive for o in node.operands) else not decisive
        if isinstance(node, flowsyntax.Compare):
            return self.compare(node)
        if isinstance(node, flowsyntax.ListOf):
            return [self.ev(i) for i in node.items]
        if isinstance(node, flowsyntax.Call):
            return self.call(node)
        raise self.error(f"{type(node).__name__} is not allowed in a condition", node)

    def boolean(self, node: Node) -> bool:
        value = self.ev(node)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise self.error(f"expected true or false, got {_typed(value)}", node)

    def ref(self, node: flowsyntax.Ref) -> Any:
        env = self.env
        if node.root == "iteration":
            return env.iteration
        if node.root == "params":
            if node.path[0] not in env.params:
                raise self.error(f"unknown parameter {node.path[0]!r} (spec.arguments.parameters)", node)
            return env.params[node.path[0]]
        if node.root == "item":
            if env.item is None:
                raise self.error("item is only defined in a flow with withItems or withParam", node)
            return self.walk(env.item, node.path, node, "item")
        if node.root == "workflow":
            if env.workflow is None:
                raise self.error("workflow is read by the exit handler only (spec.onExit)", node)
            return self.walk(env.workflow, node.path, node, "workflow")
        flow = node.path[0]
        if node.root == "outcomes":
            if env.outcomes is None:
                raise self.error("outcomes are read by the exit handler only (spec.onExit)", node)
            if flow not in env.outcomes:
                raise self.error(f"flow {flow!r} has no outcome here (the exit handler's own, or no such flow)", node)
            return env.outcomes[flow]
        if flow not in env.outputs:
            raise self.error(f"flow {flow!r} has no output (not finished, or no termination message)", node)
        raw = env.outputs[flow]
        if len(node.path) == 1:
            return raw.strip()
        try:
            doc = json.loads(raw)
        except ValueError as e:
            raise self.error(f"the output of flow {flow!r} is not JSON ({e}){core.cut_message_note(raw)}, so its "
                             "fields cannot be read", node) from None
        return self.walk(doc, node.path[1:], node, f"outputs.{flow}")

    def walk(self, value: Any, path: Sequence[str], node: Node, where: str) -> Any:
        for seg in path:
            if isinstance(value, dict) and seg in value:
                value = value[seg]
            elif isinstance(value, list) and seg.isdigit() and int(seg) < len(value):
                value = value[int(seg)]
            else:
                have = (f"fields: {', '.join(list(value)[:10])}" if isinstance(value, dict)
                        else f"{len(value)} elements" if isinstance(value, list) else _show(value))
                raise self.error(f"{where} has no {'element' if isinstance(value, list) else 'field'} {seg!r} "
                                 f"({kind_of(value)}; {have})", node)
            where = f"{where}.{seg}"
        return value

    def coerce(self, value: str, want: str, node: Node) -> Any:
        if want == "number" and _NUMERIC.fullmatch(value):
            text = value.strip()
            return float(text) if any(c in text for c in ".eE") else int(text)
        if want == "boolean" and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise self.error(f"cannot read string {_show(value)} as a {want}", node)

    @staticmethod
    def equal(a: Any, b: Any) -> bool:
        """==, for contains(): a string equals a number or boolean it reads as; other mixed types differ."""
        if kind_of(a) == "string" and kind_of(b) in ("number", "boolean"):
            a, b = b, a
        ka, kb = kind_of(a), kind_of(b)
        if kb == "string" and ka == "number":
            return bool(_NUMERIC.fullmatch(b)) and float(b) == a
        if kb == "string" and ka == "boolean":
            text = b.strip().lower()
            return text in ("true", "false") and (text == "true") == a
        return ka == kb and a == b

    def compare(self, node: flowsyntax.Compare) -> bool:
        left, right = self.ev(node.left), self.ev(node.right)
        lk, rk = kind_of(left), kind_of(right)
        if lk != rk and "null" in (lk, rk) and node.op in ("==", "!="):
            return node.op == "!="
        if lk == "string" and rk in ("number", "boolean"):
            left, lk = self.coerce(left, rk, node.left), rk
        elif rk == "string" and lk in ("number", "boolean"):
            right, rk = self.coerce(right, lk, node.right), lk
        if lk != rk:
            raise self.error(f"cannot compare {_typed(left)} with {_typed(right)}", node)
        if node.op in ("==", "!="):
            return (left == right) == (node.op == "==")
        if lk not in ("number", "string"):
            raise self.error(f"{node.op} needs numbers or strings, got {lk}s", node)
        if lk == "string" and _NUMERIC.fullmatch(left) and _NUMERIC.fullmatch(right):
            # two numbers written as strings (parameters and outputs always are): ordered as numbers
            left, right = self.coerce(left, "number", node.left), self.coerce(right, "number", node.right)
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[node.op]

    def call(self, node: flowsyntax.Call) -> Any:
        args = [self.ev(a) for a in node.args]
        if node.func == "len":
            if not isinstance(args[0], (str, list, dict)):
                raise self.error(f"len() needs a string, list or object, got {kind_of(args[0])}", node)
            return len(args[0])
        if node.func == "json":
            if not isinstance(args[0], str):
                raise self.error(f"json() needs a string, got {kind_of(args[0])}", node)
            try:
                return json.loads(args[0])
            except ValueError as e:
                raise self.error(f"json(): {_show(args[0])} is not JSON ({e})", node) from None
        container, x = args
        if isinstance(container, list):
            return any(self.equal(e, x) for e in container)
        if isinstance(container, (str, dict)) and isinstance(x, str):
            return x in container
        raise self.error(f"contains() needs a list, or a string or object and a string; got "
                         f"{kind_of(container)} and {kind_of(x)}", node)


def evaluate_when(expr: Expr, env: WhenEnv) -> bool:
    """Evaluate a condition; ExprError (with the position) on a type error or a missing value."""
    return _When(expr, env).boolean(expr.root)


def evaluate_value(expr: Expr, env: WhenEnv) -> Any:
    """The value of a condition expression without requiring a boolean (for tools and tests)."""
    return _When(expr, env).ev(expr.root)


_VARYING_ROOTS = frozenset({"outputs", "item", "iteration", "outcomes", "workflow"})


def _constant(node: Node) -> bool:
    """Reads only parameters and literals: its value is known when the JobFlow is admitted."""
    return not any(isinstance(n, flowsyntax.Ref) and n.root in _VARYING_ROOTS for n in flowsyntax.nodes(node))


def constant_errors(expr: Expr, params: Mapping[str, str]) -> list[ExprError]:
    """The errors a condition raises whatever the outputs, item and iteration: each largest part
    that reads only parameters and literals is evaluated now (as a boolean where `&&`, `||`, `!` or
    the whole condition need one), each operand of `&&`, `||` and `!` on its own. Such a part is wrong
    even where `&&`/`||` may skip it at run time (`false && params.n`), so admission refuses it rather
    than fail the flow later (`when: "params.n"` with n "3")."""
    when = _When(expr, WhenEnv(params=params))
    found: list[ExprError] = []

    def visit(node: Node, boolean: bool) -> None:
        if _constant(node) and not isinstance(node, (flowsyntax.Not, flowsyntax.And, flowsyntax.Or)):
            try:
                when.boolean(node) if boolean else when.ev(node)
            except ExprError as e:
                found.append(e)
        elif isinstance(node, flowsyntax.Not):
            visit(node.operand, True)
        elif isinstance(node, (flowsyntax.And, flowsyntax.Or)):
            for operand in node.operands:
                visit(operand, True)
        elif isinstance(node, flowsyntax.Compare):
            visit(node.left, False)
            visit(node.right, False)
        elif isinstance(node, flowsyntax.Call):
            for arg in node.args:
                visit(arg, False)
        elif isinstance(node, flowsyntax.ListOf):
            for item in node.items:
                visit(item, False)

    visit(expr.root, True)
    return found
