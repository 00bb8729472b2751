"""The JobFlow expression language (api/flowexpr, api/flowsyntax): parsing (valid and malformed, with the
exact position), three-valued dependency evaluation, condition evaluation and its type errors, and
Hypothesis properties (print -> parse round trip, agreement with a reference Python evaluation,
soundness and monotonicity of the three-valued answer)."""
from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.api import flowexpr, flowsyntax

F = flowexpr
S = flowsyntax
O = flowexpr.Outcome


def facts(*names: str) -> frozenset[str]:
    return frozenset(names)


# ---- parsing: dependencies --------------------------------------------------------------------

CURLY = "(a typographic quote (pasted from a document?): use straight quotes ' or \")"


@pytest.mark.parametrize("text, canonical", [
    pytest.param("a.Completed", "a.Completed", id="atom"),
    pytest.param("a", "a.Completed", id="bare-name-means-completed"),
    pytest.param("a.Succeeded", "a.Completed", id="succeeded-alias"),
    pytest.param("train.Completed && (eval.Failed || eval.Skipped)",
                 "train.Completed && (eval.Failed || eval.Skipped)", id="issue-example"),
    pytest.param("a.Completed && b.Completed && c.Completed", "a.Completed && b.Completed && c.Completed",
                 id="flat-and"),
    pytest.param("a || b && c", "a.Completed || (b.Completed && c.Completed)", id="and-binds-tighter"),
    pytest.param("(a || b) && c", "(a.Completed || b.Completed) && c.Completed", id="parens"),
    pytest.param("!a.Failed", "!a.Failed", id="not"),
    pytest.param("!!a", "!!a.Completed", id="double-not"),
    pytest.param("!(a || b)", "!(a.Completed || b.Completed)", id="not-group"),
    pytest.param("((a))", "a.Completed", id="redundant-parens"),
    pytest.param("my-flow.Finished", "my-flow.Finished", id="hyphenated-name"),
    pytest.param("1.Completed && 2.Failed", "1.Completed && 2.Failed", id="numeric-flow-names"),
    pytest.param("  a.Skipped\t||\nb.Terminated ", "a.Skipped || b.Terminated", id="whitespace"),
    pytest.param("f.AnyCompleted || f.AllCompleted || f.AnyFailed || f.AllFailed",
                 "f.AnyCompleted || f.AllCompleted || f.AnyFailed || f.AllFailed", id="aggregates"),
    pytest.param("f.AnySucceeded && f.AllSucceeded || f.Succeeded", "(f.AnyCompleted && f.AllCompleted) || f.Completed",
                 id="argo-names"),
])
def test_parse_depends(text: str, canonical: str) -> None:
    expr = F.parse_depends(text)
    assert (expr.kind, expr.text, F.unparse(expr)) == (F.flowsyntax.DEPENDS, text, canonical)


OUTCOMES_LIST = ("Completed, Failed, Terminated, Skipped, Finished, AnyCompleted, AllCompleted, "
                 "AnyFailed, AllFailed, Succeeded, AnySucceeded, AllSucceeded")


@pytest.mark.parametrize("text, message, position", [
    pytest.param("", "empty expression", 0, id="empty"),
    pytest.param("   ", "empty expression", 0, id="blank"),
    pytest.param("a &&", "expected a flow outcome such as train.Completed, found the end of the expression", 4,
                 id="dangling-and"),
    pytest.param("a.Completed || b.Aborted", "Aborted is not an outcome: an Aborted (suspended) vcjob may be "
                 "resumed, so it has no outcome yet and the flows waiting on it keep waiting; use Failed, "
                 "Terminated or Finished", 17, id="aborted-is-not-an-outcome"),
    pytest.param("|| a", "expected a flow outcome such as train.Completed, found '||'", 0, id="leading-or"),
    pytest.param("(a || b", "expected ')' to close the '(' at position 0, found the end of the expression", 7,
                 id="unclosed-paren"),
    pytest.param("a || b)", "unexpected ')' after a complete expression", 6, id="extra-paren"),
    pytest.param("a b", "unexpected 'b' after a complete expression (missing && or ||?)", 2, id="missing-operator"),
    pytest.param("a & b", "unexpected character '&' (use && for 'and')", 2, id="single-ampersand"),
    pytest.param("a | b", "unexpected character '|' (use || for 'or')", 2, id="single-bar"),
    pytest.param("a.Complete", f"unknown outcome 'Complete' (did you mean Completed? outcomes: {OUTCOMES_LIST})", 2,
                 id="misspelt-outcome"),
    pytest.param("a.Done", f"unknown outcome 'Done' (outcomes: {OUTCOMES_LIST})", 2, id="unknown-outcome"),
    pytest.param("x.Completed && a.failed",
                 f"unknown outcome 'failed' (did you mean Failed? outcomes: {OUTCOMES_LIST})", 17, id="wrong-case"),
    pytest.param("a.", "expected an outcome after 'a.', found the end of the expression", 2, id="dot-nothing"),
    pytest.param("a.(b)", "expected an outcome after 'a.', found '('", 2, id="dot-paren"),
    pytest.param("a.Completed == b", "unexpected '==' after a complete expression", 12, id="comparison-in-depends"),
    pytest.param("'a'", "expected a flow outcome such as train.Completed, found string \"a\"", 0, id="string"),
    pytest.param("a.Completed && {{b}}", "unexpected character '{' (write references without {{ }}, e.g. "
                 "outputs.train == \"ok\")", 15, id="braces"),
    pytest.param("-a", "unexpected character '-'", 0, id="leading-hyphen"),
    pytest.param("“a”.Completed", f"unexpected character '“' {CURLY}", 0, id="curly-double-quotes"),
    pytest.param("a.Completed || ‘b’.Failed", f"unexpected character '‘' {CURLY}", 15, id="curly-single-quotes"),
    pytest.param("!", "expected a flow outcome such as train.Completed, found the end of the expression", 1,
                 id="lone-not"),
    pytest.param("()", "expected a flow outcome such as train.Completed, found ')'", 1, id="empty-parens"),
])
def test_parse_depends_rejects(text: str, message: str, position: int) -> None:
    with pytest.raises(F.ExprError) as info:
        F.parse_depends(text)
    assert (info.value.message, info.value.position, info.value.text) == (message, position, text)


def test_error_renders_message_position_and_caret() -> None:
    with pytest.raises(F.ExprError) as info:
        F.parse_depends("train.Completed && (evall.Faild || eval.Skipped)")
    assert str(info.value) == (f"unknown outcome 'Faild' (did you mean Failed? outcomes: {OUTCOMES_LIST}) "
                               "at position 26:\n"
                               "    train.Completed && (evall.Faild || eval.Skipped)\n"
                               "                              ^")


def test_error_on_long_text_shows_a_window_around_the_position() -> None:
    text = " || ".join(f"f{i}.Completed" for i in range(40)) + " || x.Nope"
    with pytest.raises(F.ExprError) as info:
        F.parse_depends(text)
    _, line, caret = str(info.value).split("\n")
    assert line.startswith("    …") and len(line) <= 4 + 78
    assert line[caret.index("^"):].startswith("Nope")


def test_error_without_text_has_no_caret() -> None:
    assert str(F.ExprError("boom", 3)) == "boom at position 3"


@pytest.mark.parametrize("error, expected", [
    pytest.param(F.ExprError("boom", 3), "boom at position 3", id="no-text"),
    pytest.param(F.ExprError("bad", 2, "a\n&& b"), 'bad at position 2 in "a && b"', id="whitespace-flattened"),
    pytest.param(F.ExprError("bad", 150, "x" * 200), 'bad at position 150 in "…' + "x" * 76 + '…"', id="long-text-window"),
    pytest.param(ValueError("first\nsecond"), "first", id="other-error-first-line"),
])
def test_one_line_keeps_the_text_for_status_messages(error: Exception, expected: str) -> None:
    assert S.one_line(error) == expected


@pytest.mark.parametrize("text, message, position", [
    pytest.param("!" * 33 + "a", "expression nested too deeply (more than 32 levels)", 32, id="deep-not"),
    pytest.param("(" * 33 + "a" + ")" * 33, "expression nested too deeply (more than 32 levels)", 32, id="deep-parens"),
    pytest.param("a || " * 4000 + "b", f"expression too long (20001 characters; at most {F.MAX_LENGTH})",
                 F.MAX_LENGTH, id="too-long"),
])
def test_limits(text: str, message: str, position: int) -> None:
    with pytest.raises(F.ExprError) as info:
        F.parse_depends(text)
    assert (info.value.message, info.value.position) == (message, position)


def test_depth_limit_is_inclusive() -> None:
    assert F.unparse(F.parse_depends("(" * 32 + "a" + ")" * 32)) == "a.Completed"
    assert F.unparse(F.parse_depends("!" * 32 + "a")) == "!" * 32 + "a.Completed"


def test_a_long_flat_chain_is_one_node() -> None:
    expr = F.parse_depends(" && ".join(f"f{i}" for i in range(1500)))
    assert isinstance(expr.root, S.And) and len(expr.root.operands) == 1500
    assert F.evaluate_depends(expr, {f"f{i}": facts("Completed") for i in range(1500)}) is True


def test_not_a_string() -> None:
    with pytest.raises(F.ExprError, match="an expression must be a string, not number"):
        F.parse_depends(3)  # type: ignore[arg-type]


def test_positions_of_nodes() -> None:
    expr = F.parse_depends("a && !(b.Failed || c)")
    assert [(type(n).__name__, n.pos) for n in F.nodes(expr)] == [
        ("And", 0), ("Atom", 0), ("Not", 5), ("Or", 7), ("Atom", 7), ("Atom", 19)]


@pytest.mark.parametrize("text, kind, refs", [
    pytest.param("a && (b.Failed || !c.Skipped)", "depends", {"a", "b", "c"}, id="depends"),
    pytest.param("a.Failed || a.Skipped", "depends", {"a"}, id="depends-repeated"),
    pytest.param("outputs.train.acc > 0.9 && params.x == outputs.eval", "when", {"train", "eval"}, id="when"),
    pytest.param("item.a == iteration", "when", set(), id="when-no-flows"),
])
def test_flow_refs(text: str, kind: str, refs: set[str]) -> None:
    parse = F.parse_depends if kind == "depends" else F.parse_when
    assert F.flow_refs(parse(text)) == refs


def test_from_targets() -> None:
    assert F.from_targets(["a"]).text == "a.Completed"
    assert F.from_targets(["a", "b"]).text == "a.Completed && b.Completed"
    assert F.from_targets(["a", "b"], "any").text == "a.Completed || b.Completed"
    assert F.from_targets(["a", "b"], "any").root == F.parse_depends("a || b").root
    assert F.evaluate_depends(F.from_targets([]), {}) is True
    big = F.from_targets([f"t{i}" for i in range(10000)])
    assert len(big.text) > F.MAX_LENGTH and F.evaluate_depends(big, {"t0": facts("Failed")}) is False


# ---- three-valued dependency evaluation ------------------------------------------------------

C, FA, T, AB, SK = (facts(o) for o in ("Completed", "Failed", "Terminated", "Aborted", "Skipped"))

DEPENDS_CASES = [
    # a || b: True as soon as one completes; False only when both finished and neither completed.
    pytest.param("a.Completed || b.Completed", {}, None, id="or-nothing-known"),
    pytest.param("a.Completed || b.Completed", {"a": C}, True, id="or-first-completed"),
    pytest.param("a.Completed || b.Completed", {"b": C}, True, id="or-second-completed"),
    pytest.param("a.Completed || b.Completed", {"a": FA}, None, id="or-first-failed-wait"),
    pytest.param("a.Completed || b.Completed", {"a": FA, "b": SK}, False, id="or-neither"),
    pytest.param("a.Completed && b.Completed", {"a": FA}, False, id="and-one-failed-decides"),
    pytest.param("a.Completed && b.Completed", {"a": C}, None, id="and-wait-for-second"),
    pytest.param("a.Completed && b.Completed", {"a": C, "b": C}, True, id="and-both"),
    pytest.param("!a.Failed", {}, None, id="not-unknown"),
    pytest.param("!a.Failed", {"a": C}, True, id="not-completed"),
    pytest.param("!a.Failed", {"a": FA}, False, id="not-failed"),
    pytest.param("a", {"a": facts("Succeeded")}, True, id="alias-fact"),
    pytest.param("a.Succeeded", {"a": C}, True, id="alias-outcome"),
    pytest.param("train.Completed && (eval.Failed || eval.Skipped)", {"train": C, "eval": SK}, True, id="issue-skip"),
    pytest.param("train.Completed && (eval.Failed || eval.Skipped)", {"train": C, "eval": C}, False,
                 id="issue-eval-completed"),
    pytest.param("train.Completed && (eval.Failed || eval.Skipped)", {"train": T}, False, id="issue-train-terminated"),
    pytest.param("train.Completed && (eval.Failed || eval.Skipped)", {"train": C}, None, id="issue-wait-eval"),
    # Finished: any final outcome.
    pytest.param("a.Finished", {}, None, id="finished-unknown"),
    *[pytest.param("a.Finished", {"a": f}, True, id=f"finished-{next(iter(f)).lower()}") for f in (C, FA, T, AB, SK)],
    pytest.param("a.Finished", {"a": facts("Finished")}, True, id="finished-fact"),
    pytest.param("a.Completed", {"a": facts("Finished")}, False, id="finished-fact-not-completed"),
    pytest.param("a.Completed", {"a": frozenset()}, None, id="empty-facts-unknown"),
    # A flow without items is one item.
    pytest.param("a.AllCompleted && a.AnyCompleted", {"a": C}, True, id="single-completed-aggregates"),
    pytest.param("a.AllFailed && a.AnyFailed", {"a": FA}, True, id="single-failed-aggregates"),
    pytest.param("a.AnyFailed || a.AnyCompleted", {"a": T}, False, id="single-terminated-no-aggregates"),
    pytest.param("a.AnyCompleted", {"a": SK}, False, id="single-skipped"),
    # Fan-out flows: partial facts before the flow finishes.
    pytest.param("f.AnyCompleted", {"f": F.outcome_facts(None, ["Completed", None])}, True, id="any-completed-early"),
    pytest.param("f.AllCompleted", {"f": F.outcome_facts(None, ["Completed", None])}, None, id="all-completed-wait"),
    pytest.param("f.AllCompleted", {"f": F.outcome_facts(None, ["Failed", None])}, False, id="all-completed-refuted"),
    pytest.param("f.AllFailed", {"f": F.outcome_facts(None, ["Completed", None])}, False, id="all-failed-refuted"),
    pytest.param("f.Completed", {"f": F.outcome_facts(None, ["Completed", None])}, None, id="flow-outcome-wait"),
    pytest.param("f.Finished", {"f": F.outcome_facts(None, ["Completed", "Completed"])}, None,
                 id="items-done-flow-not-yet"),
    pytest.param("f.AnyFailed", {"f": F.outcome_facts("Failed", ["Completed", "Terminated"])}, False,
                 id="fanout-terminated-is-not-failed"),
    pytest.param("f.AnyCompleted && !f.AllCompleted", {"f": F.outcome_facts("Failed", ["Completed", "Failed"])},
                 True, id="fanout-mixed"),
    pytest.param("f.AnyCompleted || f.AllFailed", {"f": F.outcome_facts("Completed", [])}, False,
                 id="fanout-no-items"),
    # Kleene logic is sound but not eager on contradictions: decided when the flow finishes.
    pytest.param("a.Completed && a.Failed", {}, None, id="contradiction-waits"),
    pytest.param("a.Completed && a.Failed", {"a": C}, False, id="contradiction-decided"),
    pytest.param("a.Completed || !a.Completed", {"a": FA}, True, id="tautology-decided"),
]


@pytest.mark.parametrize("text, outcomes, expected", DEPENDS_CASES)
def test_evaluate_depends(text: str, outcomes: dict[str, frozenset[str]], expected: bool | None) -> None:
    assert F.evaluate_depends(F.parse_depends(text), outcomes) is expected


@pytest.mark.parametrize("final, items, expected", [
    pytest.param(None, None, set(), id="running"),
    pytest.param("Completed", None, {"Completed", "Finished"}, id="completed"),
    pytest.param("Succeeded", None, {"Completed", "Finished"}, id="alias"),
    pytest.param(None, [], {"FanOut"}, id="fanout-no-items-running"),
    pytest.param(None, [None, "Completed"], {"FanOut", "AnyCompleted"}, id="fanout-one-done"),
    pytest.param(None, ["Succeeded"], {"FanOut", "AnyCompleted", "AllCompleted"}, id="fanout-item-alias"),
    pytest.param(None, ["Failed", "Completed"], {"FanOut", "AnyCompleted", "AnyFailed"}, id="fanout-mixed"),
    pytest.param("Completed", ["Completed", "Completed"],
                 {"FanOut", "AnyCompleted", "AllCompleted", "Completed", "Finished"}, id="fanout-all-completed"),
    pytest.param("Failed", ["Failed"], {"FanOut", "AnyFailed", "AllFailed", "Failed", "Finished"},
                 id="fanout-all-failed"),
])
def test_outcome_facts(final: str | None, items: list | None, expected: set[str]) -> None:
    assert F.outcome_facts(final, items) == expected


def test_unknown_fact_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="flow 'a': unknown outcome fact 'Succeed'"):
        F.evaluate_depends(F.parse_depends("a"), {"a": facts("Succeed")})


def test_when_tree_is_not_a_dependency() -> None:
    with pytest.raises(TypeError):
        F.evaluate_depends(F.parse_when("true"), {})


# ---- parsing: conditions ----------------------------------------------------------------------

@pytest.mark.parametrize("text, canonical", [
    pytest.param('outputs.flip == "heads"', 'outputs.flip == "heads"', id="string-compare"),
    pytest.param("outputs.flip == 'heads'", 'outputs.flip == "heads"', id="single-quotes"),
    pytest.param("params.epochs > 3", "params.epochs > 3", id="number"),
    pytest.param("outputs.train.acc >= 0.95", "outputs.train.acc >= 0.95", id="json-field"),
    pytest.param("outputs.train.scores.0 < -1.5e3", "outputs.train.scores.0 < -1500.0", id="index-and-exponent"),
    pytest.param("item.name != null", "item.name != null", id="null"),
    pytest.param("item", "item", id="bare-item"),
    pytest.param("iteration<=4", "iteration <= 4", id="iteration"),
    pytest.param("true && !false", "true && !false", id="bools"),
    pytest.param("a-b", None, id="hyphen-name-is-not-subtraction"),
    pytest.param("params.a == 1 && params.b == 2 || params.c == 3",
                 "((params.a == 1) && (params.b == 2)) || (params.c == 3)", id="precedence"),
    pytest.param("!(params.x == 'y')", '!(params.x == "y")', id="not-comparison"),
    pytest.param('len(outputs.a) > 0 && contains(["x", "y"], params.env)',
                 '(len(outputs.a) > 0) && contains(["x", "y"], params.env)', id="functions-and-list"),
    pytest.param("json(outputs.a).ok", None, id="field-of-call-not-allowed"),
    pytest.param("[]", "[]", id="empty-list"),
    pytest.param(r'"a\"b\\c\n\u00e9"', r'"a\"b\\c\né"', id="escapes"),
    pytest.param(r"'it\'s'", "\"it's\"", id="single-quote-escape"),
    pytest.param("params.my-param == outputs.my-flow", "params.my-param == outputs.my-flow", id="hyphens"),
])
def test_parse_when(text: str, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(F.ExprError):
            F.parse_when(text)
        return
    assert F.unparse(F.parse_when(text)) == canonical


UNKNOWN_NAME = ("a condition can use params.<name>, outputs.<flow>, item, iteration, outcomes.<flow> and "
                "workflow.status / workflow.failures (the exit handler), true, false, null, numbers, quoted strings "
                "and len(), contains(), json()")


@pytest.mark.parametrize("text, message, position", [
    pytest.param("a-b", f"unknown name 'a-b': {UNKNOWN_NAME}", 0, id="unknown-root"),
    pytest.param("train.Completed", f"unknown name 'train': {UNKNOWN_NAME}", 0, id="depends-atom-in-when"),
    pytest.param("params", "params needs a name: params.<name>", 0, id="params-bare"),
    pytest.param("params.x == 1 && outputs", "outputs needs a name: outputs.<flow>", 17, id="outputs-bare"),
    pytest.param("params.a.b", "params.a has no fields", 0, id="params-field"),
    pytest.param("iteration.x", "iteration has no fields", 0, id="iteration-field"),
    pytest.param("workflow", "workflow needs a name: workflow.status or workflow.failures", 0, id="workflow-bare"),
    pytest.param("workflow.phase == 'x'", "workflow has no field 'phase' (it has status, failures)", 0,
                 id="workflow-unknown-field"),
    pytest.param("workflow.status.x", "workflow.status has no fields (it is Succeeded or Failed)", 0,
                 id="workflow-status-field"),
    pytest.param('workflow.failures.x == "a"', "workflow.failures is a list: read an element by its index "
                 "(workflow.failures.0.name), not 'x'", 0, id="workflow-failures-not-an-index"),
    pytest.param('workflow.failures.0.nme == "a"', "a failure has no field 'nme' (it has name, outcome, message, "
                 "handled)", 0, id="workflow-failure-unknown-field"),
    pytest.param('workflow.failures.0.name.y == "a"', "workflow.failures.0.name has no fields", 0,
                 id="workflow-failure-field-has-no-fields"),
    pytest.param("params.a == ", "expected a value, found the end of the expression", 12, id="missing-operand"),
    pytest.param("params.a = 1", "unexpected character '=' (use == to compare)", 9, id="single-equals"),
    pytest.param("1 < params.a < 3", "comparisons cannot be chained; join them with && or ||", 13, id="chained"),
    pytest.param("params.x == 3abc", "invalid number '3abc'", 12, id="bad-number"),
    pytest.param("params.x == 1-2", "invalid number '1-2'", 12, id="no-arithmetic"),
    pytest.param("params.x == 'abc", "unterminated string", 12, id="unterminated-string"),
    pytest.param('params.x == "a\\qb"', "unknown escape \\q in a string", 14, id="bad-escape"),
    pytest.param('"\\u12"', "\\u must be followed by four hex digits (\\u00e9) in a string", 1,
                 id="short-unicode-escape"),
    pytest.param("upper(params.x)", "unknown function 'upper' (functions: len, contains, json)", 0,
                 id="unknown-function"),
    pytest.param("len()", "len() takes 1 argument, got 0", 0, id="arity-low"),
    pytest.param("contains([1], 1, 2)", "contains() takes 2 arguments, got 3", 0, id="arity-high"),
    pytest.param("[1, 2", "expected ']' to close the list, found the end of the expression", 5, id="unclosed-list"),
    pytest.param("len(params.x", "expected ')' to close the call of len, found the end of the expression", 12,
                 id="unclosed-call"),
    pytest.param("outputs.a.", "expected a name after '.', found the end of the expression", 10, id="dangling-dot"),
    pytest.param("{{outputs.a}} == 'x'", "unexpected character '{' (write references without {{ }}, e.g. "
                 "outputs.train == \"ok\")", 0, id="argo-braces"),
    pytest.param("params.x == “y”", f"unexpected character '“' {CURLY}", 12, id="curly-quoted-string"),
    pytest.param("true false", "unexpected 'false' after a complete expression (missing && or ||?)", 5,
                 id="two-values"),
    pytest.param("[" * 33 + "]" * 33, "expression nested too deeply (more than 32 levels)", 32, id="deep-lists"),
])
def test_parse_when_rejects(text: str, message: str, position: int) -> None:
    with pytest.raises(F.ExprError) as info:
        F.parse_when(text)
    assert (info.value.message, info.value.position) == (message, position)


# ---- condition evaluation ---------------------------------------------------------------------

ENV = F.WhenEnv(params={"env": "prod", "epochs": "10", "rate": "0.5", "flag": "true", "empty": ""},
                outputs={"flip": "heads\n", "train": '{"acc": 0.93, "tags": ["gpu", "big"], "ok": true}',
                         "count": " 7 ", "list": '["a", "b"]'},
                item={"name": "x", "size": 3, "nested": {"k": [10, 20]}}, iteration=2)

WHEN_CASES = [
    pytest.param('outputs.flip == "heads"', True, id="output-stripped"),
    pytest.param('outputs.flip != "tails"', True, id="not-equal"),
    pytest.param("outputs.count == 7", True, id="output-as-number"),
    pytest.param("outputs.count > 6.5 && outputs.count < 8", True, id="output-ordering"),
    pytest.param("params.epochs > 3", True, id="param-as-number"),
    pytest.param('params.epochs > "3"', True, id="numeric-strings-order-as-numbers"),
    pytest.param('"10" > "9" && "2.5e1" >= "25" && " 7 " < "8"', True, id="numeric-string-literals-order-as-numbers"),
    pytest.param('"v10" > "v9"', False, id="other-strings-order-as-text"),
    pytest.param('"10" < "9x"', True, id="one-numeric-string-orders-as-text"),
    pytest.param('"10" == "10.0"', False, id="numeric-strings-equal-as-text"),
    pytest.param('outputs.count >= params.epochs', False, id="output-against-parameter-as-numbers"),
    pytest.param("params.rate <= 0.5", True, id="float-param"),
    pytest.param("params.flag", True, id="string-true-as-boolean"),
    pytest.param("params.flag == true", True, id="string-compared-with-boolean"),
    pytest.param("!params.flag", False, id="not-string-boolean"),
    pytest.param('params.empty == ""', True, id="empty-string"),
    pytest.param("outputs.train.acc >= 0.9", True, id="json-field"),
    pytest.param("outputs.train.ok", True, id="json-boolean"),
    pytest.param('outputs.train.tags.0 == "gpu"', True, id="json-index"),
    pytest.param('contains(outputs.train.tags, "big")', True, id="contains-list"),
    pytest.param('contains(outputs.flip, "ead")', True, id="contains-substring"),
    pytest.param('contains(outputs.train, "acc")', True, id="contains-on-raw-output-is-substring"),
    pytest.param('contains(json(outputs.train), "acc")', True, id="contains-key"),
    pytest.param('contains(json(outputs.list), "b")', True, id="json-list"),
    pytest.param("contains([1, 2, 3], 2)", True, id="contains-literal-list"),
    pytest.param("contains([1, 2, 3], true)", False, id="contains-no-bool-number-confusion"),
    pytest.param("contains([1, 2, 3], params.epochs) || !contains([1, 10], params.epochs)", False,
                 id="contains-a-number-string-as-=="),
    pytest.param('contains(["7", "x"], outputs.count) && contains([7.0], outputs.count)', True,
                 id="contains-string-in-strings-and-number"),
    pytest.param('contains([true], params.flag) && !contains(["true"], true)', False,
                 id="contains-boolean-string"),
    pytest.param("len(outputs.train.tags) == 2", True, id="len-list"),
    pytest.param("len(params.env) == 4", True, id="len-string"),
    pytest.param('item.name == "x" && item.size == 3', True, id="item-fields"),
    pytest.param("item.nested.k.1 == 20", True, id="item-nested"),
    pytest.param("iteration == 2", True, id="iteration"),
    pytest.param("iteration >= 3", False, id="iteration-false"),
    pytest.param("item.name != null", True, id="null-not-equal"),
    pytest.param("null == null", True, id="null-equals-null"),
    pytest.param("1 == 1.0", True, id="int-float"),
    pytest.param("[1, 2] == [1, 2]", True, id="list-equality"),
    pytest.param('"b" > "a"', True, id="string-order"),
    pytest.param('params.env == "dev" || params.env == "prod"', True, id="switch-like"),
    # short-circuit: the right side would be an error
    pytest.param("false && params.missing == 1", False, id="and-short-circuit"),
    pytest.param("true || outputs.none == 1", True, id="or-short-circuit"),
]


@pytest.mark.parametrize("text, expected", WHEN_CASES)
def test_evaluate_when(text: str, expected: bool) -> None:
    assert F.evaluate_when(F.parse_when(text), ENV) is expected


WHEN_ERRORS = [
    pytest.param("params.missing == 1", "unknown parameter 'missing' (spec.arguments.parameters)", 0,
                 id="unknown-param"),
    pytest.param("1 == 1 && outputs.none == 'x'",
                 "flow 'none' has no output (not finished, or no termination message)", 10, id="no-output"),
    pytest.param("outputs.flip.x == 1", "the output of flow 'flip' is not JSON (Expecting value: line 1 column 1 "
                 "(char 0)), so its fields cannot be read", 0, id="output-not-json"),
    pytest.param("outputs.train.loss > 1", "outputs.train has no field 'loss' (object; fields: acc, tags, ok)", 0,
                 id="missing-json-field"),
    pytest.param("outputs.train.tags.5 == 'x'", "outputs.train.tags has no element '5' (list; 2 elements)", 0,
                 id="index-out-of-range"),
    pytest.param("item.size.x", "item.size has no field 'x' (number; 3)", 0, id="field-of-number"),
    pytest.param("outputs.flip > 3", "cannot read string \"heads\" as a number", 0, id="output-not-a-number"),
    pytest.param("3 < outputs.flip", "cannot read string \"heads\" as a number", 4, id="output-not-a-number-right"),
    pytest.param("outputs.flip == true", "cannot read string \"heads\" as a boolean", 0, id="output-not-a-boolean"),
    pytest.param("params.env", "expected true or false, got string \"prod\"", 0, id="condition-not-boolean"),
    pytest.param("true && item.size", "expected true or false, got number 3", 8, id="and-operand-not-boolean"),
    pytest.param("!iteration", "expected true or false, got number 2", 1, id="not-operand-not-boolean"),
    pytest.param("item == 'x'", "cannot compare object {\"name\": \"x\", \"size\": 3, \"nested\": {\"… "
                 "with string \"x\"", 5, id="object-vs-string"),
    pytest.param("true == 1", "cannot compare boolean true with number 1", 5, id="bool-vs-number"),
    pytest.param("[1] < [2]", "< needs numbers or strings, got lists", 4, id="order-lists"),
    pytest.param("null < 1", "cannot compare null with number 1", 5, id="order-null"),
    pytest.param("len(3) == 1", "len() needs a string, list or object, got number", 0, id="len-number"),
    pytest.param("json(outputs.flip) == 1", "json(): \"heads\" is not JSON (Expecting value: line 1 column 1 "
                 "(char 0))", 0, id="json-not-json"),
    pytest.param("json(3) == 1", "json() needs a string, got number", 0, id="json-number"),
    pytest.param("contains(3, 1)", "contains() needs a list, or a string or object and a string; got number and "
                 "number", 0, id="contains-bad"),
]


@pytest.mark.parametrize("text, message, position", WHEN_ERRORS)
def test_evaluate_when_errors(text: str, message: str, position: int) -> None:
    with pytest.raises(F.ExprError) as info:
        F.evaluate_when(F.parse_when(text), ENV)
    assert (info.value.message, info.value.position, info.value.text) == (message, position, text)


@pytest.mark.parametrize("text, expected", [
    pytest.param("params.env == 'prod' && outputs.flip == 'x'", [], id="right-types"),
    pytest.param("params.epochs > outputs.flip", [], id="known-only-at-run-time"),
    pytest.param("iteration > params.env", [], id="iteration-varies"),
    pytest.param("params.env", [('expected true or false, got string "prod"', 0)], id="whole-not-boolean"),
    pytest.param("null", [("expected true or false, got null", 0)], id="null"),
    pytest.param("outputs.flip == 'x' || params.env > 1 || !params.epochs",
                 [('cannot read string "prod" as a number', 23), ('expected true or false, got string "10"', 42)],
                 id="each-constant-part"),
    pytest.param("len(params.nope) == 1", [("unknown parameter 'nope' (spec.arguments.parameters)", 4)],
                 id="undeclared"),
    pytest.param("contains([1, params.env], outputs.flip)", [], id="constant-list-is-a-value"),
    pytest.param("false && params.epochs", [('expected true or false, got string "10"', 9)],
                 id="short-circuit-and-still-checked"),
    pytest.param("true || params.env > 2 || !(false && params.env)",
                 [('cannot read string "prod" as a number', 8), ('expected true or false, got string "prod"', 37)],
                 id="short-circuit-or-still-checked"),
    pytest.param("contains(3, outputs.flip)", [], id="call-needs-all-args"),
])
def test_constant_errors(text: str, expected: list[tuple[str, int]]) -> None:
    found = F.constant_errors(F.parse_when(text), {"env": "prod", "epochs": "10"})
    assert [(e.message, e.position) for e in found] == expected


def test_item_outside_a_loop() -> None:
    with pytest.raises(F.ExprError, match="item is only defined in a flow with withItems or withParam"):
        F.evaluate_when(F.parse_when("item == 1"), F.WhenEnv({}, {}))


def test_evaluation_error_renders_the_caret() -> None:
    with pytest.raises(F.ExprError) as info:
        F.evaluate_when(F.parse_when("params.epochs > 3 && outputs.flip > 1"), ENV)
    assert str(info.value) == ('cannot read string "heads" as a number at position 21:\n'
                               "    params.epochs > 3 && outputs.flip > 1\n"
                               "                         ^")


def test_evaluate_value() -> None:
    assert F.evaluate_value(F.parse_when("outputs.train.tags"), ENV) == ["gpu", "big"]
    assert F.evaluate_value(F.parse_when("len(item.nested.k)"), ENV) == 2


def test_depends_tree_is_not_a_condition() -> None:
    with pytest.raises(F.ExprError, match="Atom is not allowed in a condition"):
        F.evaluate_when(F.parse_depends("a"), ENV)


# ---- properties: dependencies -----------------------------------------------------------------

FLOWS = ("a", "b", "c", "d")
PLAIN_OUTCOMES = ("Completed", "Failed", "Terminated", "Skipped", "Finished",
                  "AnyCompleted", "AllCompleted", "AnyFailed", "AllFailed")
atoms = st.builds(S.Atom, st.sampled_from(FLOWS), st.sampled_from([O(o) for o in PLAIN_OUTCOMES]))
depends_trees = st.recursive(
    atoms,
    lambda kids: st.one_of(
        st.builds(S.Not, kids),
        st.builds(S.And, st.lists(kids, min_size=2, max_size=4).map(tuple)),
        st.builds(S.Or, st.lists(kids, min_size=2, max_size=4).map(tuple))),
    max_leaves=12)


def python_depends(node: Any, final: dict[str, str]) -> bool:
    """Reference: translate to a Python boolean expression over a complete assignment and eval it."""
    def truth(atom: S.Atom) -> bool:
        o = final[atom.flow]
        table = {"Finished": True, "AnyCompleted": o == "Completed", "AllCompleted": o == "Completed",
                 "AnyFailed": o == "Failed", "AllFailed": o == "Failed"}
        return table.get(atom.outcome.value, o == atom.outcome.value)

    def py(n: Any) -> str:
        if isinstance(n, S.Atom):
            return str(truth(n))
        if isinstance(n, S.Not):
            return f"(not {py(n.operand)})"
        joiner = " and " if isinstance(n, S.And) else " or "
        return "(" + joiner.join(py(o) for o in n.operands) + ")"

    return eval(py(node))  # test-only reference; the library never evaluates code


finals = st.sampled_from(["Completed", "Failed", "Terminated", "Aborted", "Skipped"])
partial = st.dictionaries(st.sampled_from(FLOWS), finals)


@settings(max_examples=300)
@given(depends_trees)
def test_print_parse_round_trip(tree: Any) -> None:
    text = F.unparse(tree)
    assert F.parse_depends(text).root == tree
    assert F.unparse(F.parse_depends(text)) == text


@settings(max_examples=200)
@given(depends_trees, st.fixed_dictionaries({f: finals for f in FLOWS}))
def test_fully_known_matches_python(tree: Any, final: dict[str, str]) -> None:
    expr = F.parse_depends(F.unparse(tree))
    outcomes = {f: facts(o) for f, o in final.items()}
    assert F.evaluate_depends(expr, outcomes) is python_depends(tree, final)


@settings(max_examples=150)
@given(depends_trees, partial)
def test_three_valued_is_sound_and_monotone(tree: Any, known: dict[str, str]) -> None:
    """A decided answer holds in every completion of the unknown flows, so more facts can never change
    it (monotone); with every flow known the answer is always decided."""
    got = F.evaluate_depends(tree, {f: facts(o) for f, o in known.items()})
    unknown = [f for f in FLOWS if f not in known]
    answers = {python_depends(tree, known | dict(zip(unknown, rest)))
               for rest in itertools.product(("Completed", "Failed", "Terminated", "Aborted", "Skipped"),
                                             repeat=len(unknown))}
    if got is not None:
        assert answers == {got}
    if not unknown:
        assert got is not None


# ---- properties: conditions -------------------------------------------------------------------

PARAMS = {"p": "5", "q": "-2.5", "s": "abc"}
numbers = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False))
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
num_values = st.one_of(numbers.map(S.Literal), st.sampled_from([S.Ref("params", ("p",)), S.Ref("params", ("q",))]))
str_values = st.one_of(texts.map(S.Literal), st.just(S.Ref("params", ("s",))))
comparisons = st.one_of(
    st.builds(S.Compare, st.sampled_from(flowsyntax.CMP_OPS), num_values, num_values),
    st.builds(S.Compare, st.sampled_from(flowsyntax.CMP_OPS), str_values, str_values))
when_trees = st.recursive(
    st.one_of(comparisons, st.booleans().map(S.Literal)),
    lambda kids: st.one_of(
        st.builds(S.Not, kids),
        st.builds(S.And, st.lists(kids, min_size=2, max_size=3).map(tuple)),
        st.builds(S.Or, st.lists(kids, min_size=2, max_size=3).map(tuple))),
    max_leaves=8)


PARAM_VALUES = {"p": 5, "q": -2.5, "s": "abc"}  # what PARAMS mean when compared with a like value


def python_when(node: Any) -> bool:
    def val(n: Any) -> str:
        return repr(PARAM_VALUES[n.path[0]] if isinstance(n, S.Ref) else n.value)

    def py(n: Any) -> str:
        if isinstance(n, S.Literal):
            return repr(n.value)
        if isinstance(n, S.Compare):
            return f"({val(n.left)} {n.op} {val(n.right)})"
        if isinstance(n, S.Not):
            return f"(not {py(n.operand)})"
        joiner = " and " if isinstance(n, S.And) else " or "
        return "(" + joiner.join(py(o) for o in n.operands) + ")"

    return eval(py(node))  # test-only reference


@settings(max_examples=150)
@given(when_trees)
def test_when_round_trip_and_reference(tree: Any) -> None:
    text = F.unparse(tree)
    expr = F.parse_when(text)
    assert F.unparse(expr) == text
    assert expr.root == tree
    assert F.evaluate_when(expr, F.WhenEnv(PARAMS, {})) is python_when(tree)


@settings(max_examples=200)
@given(texts)
def test_string_literals_round_trip(s: str) -> None:
    assert F.evaluate_value(F.parse_when(F.unparse(S.Literal(s))), F.WhenEnv()) == s


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_parsers_never_crash(text: str) -> None:
    """Any text parses or raises ExprError with a position inside (or just past) the text."""
    for parse in (F.parse_depends, F.parse_when):
        try:
            parse(text)
        except F.ExprError as e:
            assert 0 <= e.position <= len(text)


# ---- the exit handler's workflow.status / workflow.failures (Argo's {{workflow.status}}, {{workflow.failures}}) ----

FAILURES = [{"name": "train", "outcome": "Failed", "message": "vcjob jf-train Failed", "handled": False},
            {"name": "mirror", "outcome": "Terminated", "message": "flow mirror Terminated", "handled": True}]
EXIT_ENV = F.WhenEnv(outcomes={"train": "Failed", "mirror": "Terminated", "eval": "NotCreated"},
                     workflow={"status": "Failed", "failures": FAILURES})
CLEAN_ENV = F.WhenEnv(outcomes={"train": "Completed"}, workflow={"status": "Succeeded", "failures": []})


@pytest.mark.parametrize("text, env, expected", [
    pytest.param('workflow.status == "Failed"', EXIT_ENV, True, id="status-failed"),
    pytest.param('workflow.status != "Succeeded"', CLEAN_ENV, False, id="status-succeeded"),
    pytest.param("len(workflow.failures) > 0", EXIT_ENV, True, id="any-failed"),
    pytest.param("len(workflow.failures) == 0", CLEAN_ENV, True, id="none-failed"),
    pytest.param('workflow.failures.0.name == "train" && workflow.failures.1.outcome == "Terminated"', EXIT_ENV,
                 True, id="walk-the-list"),
    pytest.param('!workflow.failures.0.handled && workflow.failures.1.handled', EXIT_ENV, True, id="handled"),
    pytest.param('contains(workflow.failures.0.message, "jf-train")', EXIT_ENV, True, id="message"),
    pytest.param('workflow.status == "Succeeded" && len(workflow.failures) == 0 || outcomes.train == "Failed"',
                 EXIT_ENV, True, id="with-outcomes"),
])
def test_the_exit_handler_reads_the_whole_jobflow(text, env, expected):
    assert F.evaluate_when(F.parse_when(text), env) is expected


@pytest.mark.parametrize("text, env, message", [
    pytest.param('workflow.status == "Failed"', ENV, "workflow is read by the exit handler only (spec.onExit)",
                 id="not-the-exit-handler"),
    pytest.param("workflow.failures.2.name == 'x'", EXIT_ENV, "workflow.failures has no element '2' (list; 2 elements)",
                 id="past-the-end"),
    pytest.param("workflow.failures.0.podName == 'x'", EXIT_ENV,   # (refused when parsed: known in advance)
                 "a failure has no field 'podName' (it has name, outcome, message, handled)",
                 id="unknown-field-of-a-failure"),
])
def test_the_workflow_errors_say_what_there_is(text, env, message):
    with pytest.raises(F.ExprError) as info:
        F.evaluate_when(F.parse_when(text), env)
    assert info.value.message == message


def test_a_condition_reading_workflow_is_not_constant():
    assert F.constant_errors(F.parse_when("workflow.status == params.x"), {"x": "1"}) == []


def test_a_cut_output_says_it_may_have_been_cut() -> None:
    """An output as long as the kubelet keeps (its last 4096 bytes) that is not JSON: the error says why it may
    not be (a long JSON list lost its start), where a short one only says it is not JSON."""
    cut = json.dumps(list(range(2000)))[-4096:]
    env = F.WhenEnv(params={}, outputs={"big": cut}, item=None, iteration=0)
    with pytest.raises(F.ExprError) as info:
        F.evaluate_when(F.parse_when("outputs.big.0 == 1"), env)
    assert info.value.message == (
        "the output of flow 'big' is not JSON (Extra data: line 1 column 4 (char 3)); it may have been cut: a "
        "termination message keeps only its last 4096 bytes, as the kubelet keeps them, so its fields cannot be read")
