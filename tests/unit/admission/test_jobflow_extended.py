"""JobFlow admission for the fields vclite adds (issue 5): arguments, dependsOn.strategy / expression /
probe, when, withItems / withParam, repeat, retry, patch.jobSpec and onExit. DAG validation over every
kind of reference (targets, expressions, outputs in conditions, withParam and patch placeholders):
cycles through expressions are refused and unknown names reported with the flow and the position."""
from __future__ import annotations

from typing import Any

import pytest

from vclite.admission import admit, jobflow
from vclite.api import kinds
from vclite.lib import errors

from . import views

Obj = dict[str, Any]


def fl(name: str, **kw: Any) -> Obj:
    return {"name": name, **kw}


def dep(*targets: str, **kw: Any) -> Obj:
    return {"dependsOn": ({"targets": list(targets)} if targets else {}) | kw}


def jf(*flows: Obj, name: str = "jf", **spec: Any) -> Obj:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"flows": list(flows), **spec}}


def args(**params: Any) -> Obj:
    return {"arguments": {"parameters": [{"name": k, "value": v} for k, v in params.items()]}}


def messages(obj: Obj) -> list[str]:
    try:
        admit.admit(admit.Operation.CREATE, kinds.JOBFLOW, obj, None, views.default_view())
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


def caret(text: str, pos: int) -> str:
    return f"\n    {text}\n    {' ' * pos}^"


ACCEPT = [
    pytest.param(jf(fl("p", withItems=[1]), fl("p-x"), fl("p1"), fl("q-1")), id="names-near-a-loop-items"),
    pytest.param(jf(fl("a"), fl("b"), fl("c", **dep("a", "b", strategy="any"))), id="strategy-any"),
    pytest.param(jf(fl("a"), fl("b", **dep(strategy="all"))), id="strategy-all-without-targets"),
    pytest.param(jf(fl("train"), fl("eval", **dep("train")),
                    fl("deploy", **dep(expression="train.Completed && (eval.Failed || eval.Skipped)"))),
                 id="issue-expression"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression="a.Finished"))), id="pseudo-outcome"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", probe={
        "httpGetList": [{"taskName": "ps", "port": 8080, "path": "/healthz",
                         "httpHeader": {"name": "X-Probe", "value": "1"}}],
        "tcpSocketList": [{"taskName": "ps", "port": 2222}],
        "taskStatusList": [{"taskName": "ps", "phase": "Running"}, {"taskName": "worker", "phase": "Succeeded"}]}))),
                 id="probes"),
    pytest.param(jf(fl("flip"), fl("heads", when='outputs.flip == "heads"', **dep("flip")),
                    fl("tails", when='outputs.flip == "tails"', **dep("flip"))), id="if-else"),
    pytest.param(jf(fl("a", when='params.env == "prod"'), **args(env="prod")), id="when-param"),
    pytest.param(jf(fl("a", when='params.env == "prod"'), **args(env="dev")), id="when-param-statically-false"),
    pytest.param(jf(fl("a", when="params.go && params.n > 2 && contains(['x', 'y'], params.v)"),
                    **args(go="true", n="3", v="x")), id="when-constant-typed-right"),
    pytest.param(jf(fl("a", when="params.n > outputs.b"), fl("b"), **args(n="hi")),
                 id="when-constant-compared-with-an-output"),
    pytest.param(jf(fl("a", repeat={"limit": 3, "until": "iteration >= params.n"}), **args(n="2")),
                 id="until-iteration-against-a-parameter"),
    pytest.param(jf(fl("a", when="outputs.b.x > 1"), fl("b")), id="when-output-is-an-implicit-edge"),
    pytest.param(jf(fl("a", withItems=[1, {"x": "y"}, "z"], when="params.go == 'yes'"), **args(go="yes")),
                 id="with-items"),
    pytest.param(jf(fl("a"), fl("b", withParam="{{outputs.a}}")), id="with-param-output"),
    pytest.param(jf(fl("a"), fl("b", withParam=" {{ outputs.a }} ")), id="with-param-spaces"),
    pytest.param(jf(fl("a"), fl("b", withParam="{{outputs.a.items}}")), id="with-param-field"),
    pytest.param(jf(fl("a"), fl("b", withParam=" {{ outputs.a.runs.0 }} ")), id="with-param-nested-index"),
    pytest.param(jf(fl("a", withItems=[])), id="with-items-empty"),
    pytest.param(jf(fl("train", repeat={"limit": 5, "until": "outputs.train.acc >= 0.9 || iteration >= 3"})),
                 id="repeat-until-own-output"),
    pytest.param(jf(fl("train", repeat={"limit": 1, "until": "true"}, patch={"jobSpec": {"tasks": [
        {"name": "t", "replicas": 1, "template": {"x": "--round={{iteration}}"}}]}})), id="repeat-iteration"),
    pytest.param(jf(fl("a", retry={"limit": 3, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}})),
                 id="retry"),
    pytest.param(jf(fl("a", retry={"limit": 0, "backoff": {"factor": 1.5}})), id="retry-zero"),
    pytest.param(jf(fl("a", retry={"limit": "2", "backoff": {"duration": "5", "maxDuration": 60}})),
                 id="retry-argo-style-values"),   # (Argo: limit IntOrString, durations in seconds by default)
    pytest.param(jf(fl("a", retry={"limit": "10", "backoff": {"duration": "1", "factor": "2", "maxDuration": "1m",
                                                              "cap": "30s"}})),
                 id="retry-argo-example-quoted-factor-and-cap"),   # (Argo's examples/retry-backoff.yaml, plus cap)
    pytest.param(jf(fl("a"), fl("b", withItems=["x"], patch={"jobSpec": {
        "queue": "{{params.queue}}", "maxRetry": 0,
        "tasks": [{"name": "t", "replicas": 2, "template": {"spec": {"containers": [
            {"name": "c", "image": "img", "command": ["run", "{{item}}", "{{outputs.a}}"]}]}}}],
        "volumes": [{"mountPath": "/d", "volumeClaimName": "pvc"}], "plugins": {"svc": ["--x"]},
        "policies": [{"event": "PodFailed", "action": "RestartJob"}]}}), **args(queue="q")), id="patch"),
    pytest.param(jf(fl("a"), fl("b", **dep("a")), fl("cleanup", when="outputs.a != null"), onExit="cleanup"),
                 id="exit-handler"),
    pytest.param(jf(fl("a"), **args(), onExit=""), id="empty-on-exit-and-arguments"),
]


@pytest.mark.parametrize("obj", ACCEPT)
def test_accepts(obj: Obj) -> None:
    assert messages(obj) == []


EXPR = "train.Completed && (evall.Failed || eval.Skipped)"

REJECT = [
    # arguments
    pytest.param(jf(fl("a"), arguments=[]), ["spec.arguments: Invalid value: []: must be of type object"],
                 id="arguments-not-object"),
    pytest.param(jf(fl("a"), arguments={"parameters": {"a": "1"}}),
                 ['spec.arguments.parameters: Invalid value: {"a": "1"}: must be of type array'],
                 id="parameters-not-array"),
    pytest.param(jf(fl("a"), arguments={"parameters": [{"value": "1"}, {"name": "x"}, "p"]}),
                 ["spec.arguments.parameters[0].name: Required value",
                  "spec.arguments.parameters[1].value: Required value",
                  'spec.arguments.parameters[2]: Invalid value: "p": must be of type object'], id="parameter-fields"),
    pytest.param(jf(fl("a"), **args(**{"a.b": "1"})),
                 ['spec.arguments.parameters[0].name: Invalid value: "a.b": a parameter name must consist of '
                  "letters, digits, '_' or '-', and not start with '-'"], id="parameter-name"),
    pytest.param(jf(fl("a"), arguments={"parameters": [{"name": "x", "value": "1"}, {"name": "x", "value": "2"}]}),
                 ['spec.arguments.parameters[1].name: Duplicate value: "x"'], id="parameter-duplicate"),
    pytest.param(jf(fl("a"), **args(n=3)),
                 ["spec.arguments.parameters[0].value: Invalid value: 3: must be of type string: it is a number (3); "
                  "quote the value if a string was meant"], id="parameter-value-not-string"),
    pytest.param(jf(fl("a"), **args(n=False)),   # (YAML's unquoted `n`, `no`, `off`: `vcctl validate` names it)
                 ["spec.arguments.parameters[0].value: Invalid value: false: must be of type string: it is a boolean "
                  "(false); quote the value if a string was meant"], id="parameter-value-a-boolean"),
    # a name that cannot be read may be the one a reference means: the reference is not reported too
    pytest.param(jf(fl("a", when="params.n == '1'"), arguments={"parameters": [{"name": False, "value": "1"}]}),
                 ["spec.arguments.parameters[0].name: Invalid value: false: must be of type string: it is a boolean "
                  "(false); quote the value if a string was meant"], id="parameter-name-a-boolean"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"queue": "{{params.x}}"}}), arguments={"parameters": [{"value": "1"}]}),
                 ["spec.arguments.parameters[0].name: Required value"], id="parameter-name-missing-no-knock-on"),
    # dependsOn
    pytest.param(jf(fl("a"), fl("b", **dep("a", strategy="some"))),
                 ['spec.flows[1].dependsOn.strategy: Unsupported value: "some": supported values: "all", "any"'],
                 id="strategy-unknown"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression=["a"]))),
                 ['spec.flows[1].dependsOn.expression: Invalid value: ["a"]: must be of type string'],
                 id="expression-not-string"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", expression="a"))),
                 ["spec.flows[1].dependsOn.expression: set either dependsOn.targets or dependsOn.expression, "
                  "not both"], id="expression-and-targets"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression="a", strategy="any"))),
                 ["spec.flows[1].dependsOn.strategy: strategy applies to dependsOn.targets; an expression states "
                  "its own logic"], id="expression-and-strategy"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression="a.Faild", strategy="any"))),
                 ["spec.flows[1].dependsOn.strategy: strategy applies to dependsOn.targets; an expression states "
                  "its own logic", "spec.flows[1].dependsOn.expression: flow \"b\": unknown outcome 'Faild' (did you "
                  "mean Failed? outcomes: Completed, Failed, Terminated, Skipped, Finished, AnyCompleted, "
                  "AllCompleted, AnyFailed, AllFailed, Succeeded, AnySucceeded, AllSucceeded) at position 2:" + caret("a.Faild", 2)],
                 id="expression-and-strategy-the-expression-still-checked"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", expression="a &&"))),
                 ["spec.flows[1].dependsOn.expression: set either dependsOn.targets or dependsOn.expression, not both",
                  "spec.flows[1].dependsOn.expression: flow \"b\": expected a flow outcome such as train.Completed, "
                  "found the end of the expression at position 4:" + caret("a &&", 4)],
                 id="expression-and-targets-the-expression-still-checked"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", expression="zz"))),
                 ["spec.flows[1].dependsOn.expression: set either dependsOn.targets or dependsOn.expression, not both"],
                 id="expression-and-targets-its-flows-not-looked-up"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression="a", probe={"taskStatusList": [
        {"taskName": "main", "phase": "Running"}]}))),
                 ["spec.flows[1].dependsOn.probe: probe applies to dependsOn.targets; an expression states "
                  "its own logic"], id="expression-and-probe"),
    pytest.param(jf(fl("a"), fl("b", **dep(expression="a &&"))),
                 ['spec.flows[1].dependsOn.expression: flow "b": expected a flow outcome such as train.Completed, '
                  "found the end of the expression at position 4:" + caret("a &&", 4)], id="expression-malformed"),
    pytest.param(jf(fl("train"), fl("eval"), fl("deploy", **dep(expression=EXPR))),
                 ['spec.flows[2].dependsOn.expression: flow "deploy": unknown flow "evall" (did you mean "eval"?) '
                  "at position 20:" + caret(EXPR, 20)], id="expression-unknown-flow"),
    # a name close to no flow's: no guess
    pytest.param(jf(fl("train"), fl("deploy", **dep(expression="train && zzz"))),
                 ['spec.flows[1].dependsOn.expression: flow "deploy": unknown flow "zzz" at position 9:'
                  + caret("train && zzz", 9)], id="expression-unknown-flow-no-guess"),
    pytest.param(jf(fl("train"), fl("deploy", **dep(targets=["trian"]))),
                 ['spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: trian '
                  '(did you mean "train"?)'], id="target-misspelt"),
    pytest.param(jf(fl("train"), fl("deploy", when="outputs.trains == 'x'")),
                 ['spec.flows[1].when: flow "deploy": unknown flow "trains" (did you mean "train"?) at position 0:'
                  + caret("outputs.trains == 'x'", 0)], id="when-misspelt"),
    pytest.param(jf(fl("a", **dep(expression="b.Failed || b.Skipped")), fl("b", **dep(expression="!a"))),
                 ["spec.flows[0].dependsOn.expression: jobflow Flow is not DAG (cycle: a -> b -> a)"],
                 id="cycle-through-expressions"),
    pytest.param(jf(fl("a", **dep("c")), fl("b", **dep(expression="a.Finished")), fl("c", **dep("b"))),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: a -> c -> b -> a)"],
                 id="cycle-mixing-targets-and-expression"),
    pytest.param(jf(fl("a", **dep(expression="a.Failed"))),
                 ["spec.flows[0].dependsOn.expression: jobflow Flow is not DAG (cycle: a -> a)"], id="self-expression"),
    # probes
    pytest.param(jf(fl("a"), fl("b", **dep("a", probe={"httpGetList": [{"port": 80, "path": "health"}]}))),
                 ["spec.flows[1].dependsOn.probe.httpGetList[0].taskName: Required value",
                  'spec.flows[1].dependsOn.probe.httpGetList[0].path: Invalid value: "health": must start with \'/\''],
                 id="http-probe"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", probe={"tcpSocketList": [{"taskName": "ps"},
                                                                          {"taskName": "ps", "port": 70000}]}))),
                 ["spec.flows[1].dependsOn.probe.tcpSocketList[0].port: Required value",
                  "spec.flows[1].dependsOn.probe.tcpSocketList[1].port: Invalid value: 70000: should be less than "
                  "or equal to 65535"], id="tcp-probe"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", probe={"taskStatusList": [{"taskName": "ps", "phase": "Completed"}]}))),
                 ['spec.flows[1].dependsOn.probe.taskStatusList[0].phase: Unsupported value: "Completed": supported '
                  'values: "Pending", "Running", "Succeeded", "Failed", "Unknown"'], id="task-status-phase"),
    pytest.param(jf(fl("a"), fl("b", **dep("a", probe={"httpGetList": [
        {"taskName": "ps", "port": 80, "httpHeader": {"name": "X"}}], "taskStatusList": {"taskName": "ps"}}))),
                 ["spec.flows[1].dependsOn.probe.httpGetList[0].httpHeader.value: Required value",
                  'spec.flows[1].dependsOn.probe.taskStatusList: Invalid value: {"taskName": "ps"}: must be of type '
                  "array"], id="probe-shapes"),
    # when
    pytest.param(jf(fl("a", when="params.env = 'x'")),
                 ["spec.flows[0].when: flow \"a\": unexpected character '=' (use == to compare) at position 11:"
                  + caret("params.env = 'x'", 11)], id="when-malformed"),
    pytest.param(jf(fl("a", when="params.envv == 'prod'"), **args(env="prod")),
                 ['spec.flows[0].when: flow "a": unknown parameter "envv" (spec.arguments.parameters declares: env) '
                  "at position 0:" + caret("params.envv == 'prod'", 0)], id="when-unknown-param"),
    pytest.param(jf(fl("a", when="item == 1")),
                 ['spec.flows[0].when: flow "a": item is only defined in a flow with withItems or withParam at '
                  "position 0:" + caret("item == 1", 0)], id="when-item-outside-loop"),
    pytest.param(jf(fl("a", withItems=[1, 2], when="item == 1")),
                 ['spec.flows[0].when: flow "a": a condition cannot read item: it is evaluated once for the whole '
                  "flow, before its items (use {{item}} in the patch) at position 0:" + caret("item == 1", 0)],
                 id="when-item-in-loop"),
    pytest.param(jf(fl("a", when="params.n"), **args(n="3")),
                 ['spec.flows[0].when: flow "a": expected true or false, got string "3" at position 0:'
                  + caret("params.n", 0)], id="when-constant-not-a-boolean"),
    pytest.param(jf(fl("a", when="null")),
                 ['spec.flows[0].when: flow "a": expected true or false, got null at position 0:'
                  + caret("null", 0)], id="when-null"),
    pytest.param(jf(fl("a", when="outputs.b == 1 && params.s > 2"), fl("b"), **args(s="hi")),
                 ['spec.flows[0].when: flow "a": cannot read string "hi" as a number at position 18:'
                  + caret("outputs.b == 1 && params.s > 2", 18)], id="when-constant-part-that-always-fails"),
    pytest.param(jf(fl("a", when="!(outputs.b == 1) || 1"), fl("b")),
                 ['spec.flows[0].when: flow "a": expected true or false, got number 1 at position 21:'
                  + caret("!(outputs.b == 1) || 1", 21)], id="when-constant-operand-not-a-boolean"),
    pytest.param(jf(fl("a", repeat={"limit": 2, "until": "len(params.n) > 'x'"}), **args(n="3")),
                 ['spec.flows[0].repeat.until: flow "a": cannot read string "x" as a number at position 16:'
                  + caret("len(params.n) > 'x'", 16)], id="until-constant-type-error"),
    pytest.param(jf(fl("a", when="iteration == 0")),
                 ['spec.flows[0].when: flow "a": iteration is only defined in a flow with repeat at position 0:\n'
                  "    iteration == 0\n    ^"],
                 id="when-iteration-without-repeat"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"queue": "q-{{iteration}}"}})),
                 ['spec.flows[0].patch.jobSpec.queue: flow "a": {{iteration}} is only defined in a flow with repeat'],
                 id="patch-iteration-without-repeat"),
    pytest.param(jf(fl("a", when="outputs.a == 'x'")),
                 ['spec.flows[0].when: flow "a": a flow\'s when cannot read its own output (it has not run yet) at '
                  "position 0:" + caret("outputs.a == 'x'", 0)], id="when-own-output"),
    pytest.param(jf(fl("a", when="true && outputs.z == 'x'")),
                 ['spec.flows[0].when: flow "a": unknown flow "z" at position 8:' + caret("true && outputs.z == 'x'", 8)],
                 id="when-unknown-flow"),
    pytest.param(jf(fl("a", **dep("b")), fl("b", when="outputs.a == 'x'")),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: a -> b -> a)"],
                 id="cycle-through-when-output"),
    pytest.param(jf(fl("a", when=1)), ["spec.flows[0].when: Invalid value: 1: must be of type string"],
                 id="when-not-string"),
    # loops
    pytest.param(jf(fl("a", withItems="x")), ['spec.flows[0].withItems: Invalid value: "x": must be of type array'],
                 id="with-items-not-array"),
    pytest.param(jf(fl("a"), fl("b", withItems=[1], withParam="{{outputs.a}}")),
                 ["spec.flows[1].withParam: set either withItems or withParam, not both"], id="both-loops"),
    *[pytest.param(jf(fl("a"), fl("b", withParam=v)),
                   [f'spec.flows[1].withParam: Invalid value: "{v}": must be "{{{{outputs.<flow>}}}}": the output of '
                    'an earlier flow, a JSON list, or "{{outputs.<flow>.<field>}}": a list in its JSON (or, in the '
                    'exit handler, "{{workflow.failures}}")' + hint],
                   id=f"with-param-form-{i}")
      for i, (v, hint) in enumerate([
          ("outputs.a", ""), ("{{params.list}}", ""), ("{{outputs.a}} x", ""), ("{{outputs.a.}}", ""),
          ("{{tasks.a.outputs.result}}", " (Argo's task output is the flow's output here, its pod's termination "
                                         'message: "{{outputs.a}}")'),
          ("{{steps.a.outputs.parameters.list}}", " (Argo's task output is the flow's output here, its pod's "
                                                  'termination message: "{{outputs.a}}")')])],
    pytest.param(jf(fl("a", withParam="{{outputs.b.items}}")),
                 ['spec.flows[0].withParam: flow "a": unknown flow "b" at position 10:'
                  + caret("{{outputs.b.items}}", 10)], id="with-param-path-unknown-flow"),
    pytest.param(jf(fl("a", withParam="{{outputs.b}}")),
                 ['spec.flows[0].withParam: flow "a": unknown flow "b" at position 10:' + caret("{{outputs.b}}", 10)],
                 id="with-param-unknown-flow"),
    pytest.param(jf(fl("a", withParam="{{outputs.a}}")),
                 ["spec.flows[0].withParam: jobflow Flow is not DAG (cycle: a -> a)"], id="with-param-self"),
    pytest.param(jf(fl("f" * 30, withItems=list(range(100))), name="j" * 30),
                 ["spec.flows[0].withItems: flow \"" + "f" * 30 + "\" would create vcjob \"" + "j" * 30 + "-"
                  + "f" * 30 + "-99\" (64 characters): a vcjob name must be no more than 63 characters"],
                 id="loop-job-name-too-long"),
    pytest.param(jf(fl("a", withItems=[0] * 10001)),
                 ["spec.flows[0].withItems: Too many: 10001: must have at most 10000 items"], id="too-many-items"),
    # repeat
    pytest.param(jf(fl("a", repeat={"until": "iteration > 2"})),
                 ["spec.flows[0].repeat.limit: Required value: at most how many times to run (1..100)"],
                 id="repeat-limit-required"),
    pytest.param(jf(fl("a", repeat={"limit": 3})),
                 ["spec.flows[0].repeat.until: Required value: the condition that ends the repetition (it may read "
                  "the flow's own output and iteration)"], id="repeat-until-required"),
    pytest.param(jf(fl("a", repeat={"limit": 0, "until": "true"}), fl("b", repeat={"limit": 101, "until": "true"})),
                 ["spec.flows[0].repeat.limit: Invalid value: 0: should be greater than or equal to 1",
                  "spec.flows[1].repeat.limit: Invalid value: 101: should be less than or equal to 100"],
                 id="repeat-limit-range"),
    pytest.param(jf(fl("a", withItems=[1], repeat={"limit": 2, "until": "true"})),
                 ["spec.flows[0].repeat: repeat cannot be combined with withItems or withParam"], id="repeat-and-loop"),
    pytest.param(jf(fl("a", repeat={"limit": 2, "until": "outputs.a.acc >"})),
                 ['spec.flows[0].repeat.until: flow "a": expected a value, found the end of the expression at '
                  "position 15:" + caret("outputs.a.acc >", 15)], id="until-malformed"),
    pytest.param(jf(fl("a", repeat={"limit": 2, "until": "outputs.b == 'x'"}), fl("b", **dep("a"))),
                 ["spec.flows[0].repeat.until: jobflow Flow is not DAG (cycle: a -> b -> a)"], id="until-cycle"),
    pytest.param(jf(fl("a", repeat=3)), ["spec.flows[0].repeat: Invalid value: 3: must be of type object"],
                 id="repeat-not-object"),
    # retry
    pytest.param(jf(fl("a", retry={})),
                 ["spec.flows[0].retry.limit: Required value: how many times to re-run a failed job (0..20)"],
                 id="retry-limit-required"),
    pytest.param(jf(fl("a", retry={"limit": 21, "backoff": {"duration": "10 s", "factor": 0.5}})),
                 ["spec.flows[0].retry.limit: Invalid value: 21: should be less than or equal to 20",
                  'spec.flows[0].retry.backoff.duration: Invalid value: "10 s": must be a non-negative duration such '
                  'as "10s", "1m30s" or "500ms", or seconds ("5"), at most 2562047h (Go\'s longest)',
                  "spec.flows[0].retry.backoff.factor: Invalid value: 0.5: must be a number from 1 to 1000"],
                 id="retry-values"),
    pytest.param(jf(fl("a", retry={"limit": "x", "backoff": {"duration": -1}})),
                 ['spec.flows[0].retry.limit: Invalid value: "x": must be of type integer (or a string of digits, '
                  'as "2")',
                  'spec.flows[0].retry.backoff.duration: Invalid value: -1: must be a non-negative duration such '
                  'as "10s", "1m30s" or "500ms", or seconds ("5"), at most 2562047h (Go\'s longest)'],
                 id="retry-values-argo-style-but-wrong"),
    pytest.param(jf(fl("a", retry={"limit": 1, "backoff": {"duration": float("inf"), "factor": 1e300,
                                                            "maxDuration": "100000000000h"}})),
                 ['spec.flows[0].retry.backoff.duration: Invalid value: Infinity: must be a non-negative duration such '
                  'as "10s", "1m30s" or "500ms", or seconds ("5"), at most 2562047h (Go\'s longest)',
                  'spec.flows[0].retry.backoff.maxDuration: Invalid value: "100000000000h": must be a non-negative '
                  'duration such as "10s", "1m30s" or "500ms", or seconds ("5"), at most 2562047h (Go\'s longest)',
                  "spec.flows[0].retry.backoff.factor: Invalid value: 1e+300: must be a number from 1 to 1000"],
                 id="retry-values-out-of-range"),
    pytest.param(jf(fl("a", retry={"limit": 1, "backoff": {"duration": "1m", "maxDuration": "30s"}})),
                 ['spec.flows[0].retry.backoff.maxDuration: Invalid value: "30s": must not be shorter than duration '
                  "(1m): no retry could ever start"], id="retry-max-shorter"),
    pytest.param(jf(fl("a", retry={"limit": 1, "backoff": {"duration": 5, "maxDuration": "2"}})),
                 ['spec.flows[0].retry.backoff.maxDuration: Invalid value: "2": must not be shorter than duration '
                  "(5s): no retry could ever start"], id="retry-max-shorter-in-seconds-says-the-unit"),
    pytest.param(jf(fl("a", retry={"limit": 1, "backoff": {"duration": "1m", "cap": "30s", "factor": "x"}})),
                 ['spec.flows[0].retry.backoff.factor: Invalid value: "x": must be a number from 1 to 1000'],
                 id="retry-cap-shorter-is-every-wait-as-argo-and-factor-not-a-number"),
    pytest.param(jf(fl("a", retry={"limit": True})),
                 ['spec.flows[0].retry.limit: Invalid value: true: must be of type integer (or a string of digits, '
                  'as "2")'], id="retry-bool"),
    # patch
    pytest.param(jf(fl("a", patch={"jobSpec": []})),
                 ["spec.flows[0].patch.jobSpec: Invalid value: []: must be of type object"], id="patch-not-object"),
    pytest.param(jf(fl("a", patch={"jobSpec": {
        "maxRetry": -1, "tasks": [{"name": "t"}, {"name": "t", "replicas": -2}],
        "volumes": [{"volumeClaimName": "x"}], "plugins": {"svc": [1]}}})),
                 ["spec.flows[0].patch.jobSpec.maxRetry: Invalid value: -1: should be greater than or equal to 0",
                  'spec.flows[0].patch.jobSpec.tasks[1].name: Duplicate value: "t"',
                  "spec.flows[0].patch.jobSpec.tasks[1].replicas: Invalid value: -2: should be greater than or "
                  "equal to 0",
                  "spec.flows[0].patch.jobSpec.volumes[0].mountPath: Required value",
                  'spec.flows[0].patch.jobSpec.plugins.svc[0]: Invalid value: "integer": '
                  'spec.flows[0].patch.jobSpec.plugins.svc[0] in body must be of type string: "integer"'],
                 id="patch-shape"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"runningEstimate": "soon"}})),
                 ['spec.flows[0].patch.jobSpec.runningEstimate: Invalid value: "soon": time: invalid duration "soon": '
                  'must be a duration such as "90s", "30m" or "1h30m"'], id="patch-running-estimate"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"runningEstimate": "{{params.e}}"}}), **args(e="2h")), [],
                 id="patch-running-estimate-from-a-parameter"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"queue": "{{params.q}}", "tasks": [
        {"name": "t", "template": {"x": "{{item}} {{foo.bar}} {{outputs.nope}}"}}]}})),
                 ['spec.flows[0].patch.jobSpec.tasks[0].template.x: flow "a": item is only defined in a flow with '
                  "withItems or withParam",
                  'spec.flows[0].patch.jobSpec.queue: flow "a": unknown parameter "q" (spec.arguments.parameters '
                  "declares: none)",
                  'spec.flows[0].patch.jobSpec: flow "a": unknown flow "nope" in placeholder {{outputs.nope}}'],
                 id="patch-placeholders"),
    pytest.param(jf(fl("a", **dep("b")), fl("b", patch={"jobSpec": {"queue": "{{outputs.a}}"}})),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: a -> b -> a)"],
                 id="cycle-through-patch-output"),
    pytest.param(jf(fl("a", patch={"jobSpec": {"queue": "{{outputs.a}}"}})),
                 ['spec.flows[0].patch.jobSpec.queue: flow "a": a flow\'s patch cannot read its own output (it has not '
                  "run yet; in a repeat it is the previous iteration's)"], id="patch-reads-its-own-output"),
    pytest.param(jf(fl("a", repeat={"until": "iteration >= 2", "limit": 3},
                       patch={"jobSpec": {"queue": "{{outputs.a}}"}})), [], id="a-repeats-patch-reads-its-last-output"),
    # onExit
    pytest.param(jf(fl("a"), onExit="cleanup"),
                 ['spec.onExit: no flow is named "cleanup": spec.onExit must name one of spec.flows'],
                 id="exit-handler-unknown"),
    pytest.param(jf(fl("a"), fl("cleanup", **dep("a")), onExit="cleanup"),
                 ['spec.flows[1].dependsOn: flow "cleanup" is the exit handler (spec.onExit): it runs after every '
                  "other flow and cannot have dependsOn"], id="exit-handler-depends"),
    pytest.param(jf(fl("a", **dep("cleanup")), fl("b", when="outputs.cleanup == 'x'"), fl("cleanup"), onExit="cleanup"),
                 ['spec.flows[0].dependsOn.targets[0]: flow "a": flow "cleanup" is the exit handler (spec.onExit): '
                  "it runs after every other flow, so no flow can depend on it or read its output",
                  'spec.flows[1].when: flow "b": flow "cleanup" is the exit handler (spec.onExit): it runs after '
                  "every other flow, so no flow can depend on it or read its output"], id="exit-handler-depended-on"),
    pytest.param(jf(fl("a"), onExit=["a"]), ['spec.onExit: Invalid value: ["a"]: must be of type string'],
                 id="exit-handler-not-string"),
    pytest.param(jf(fl("p", withItems=[1, 2]), fl("p-1")),
                 ['spec.flows[1].name: flow "p-1" would make the same vcjob name as item 1 of flow "p" '
                  "(<jobflow>-p-1): rename one of them"], id="flow-named-like-a-loop-item"),
    pytest.param(jf(fl("t-0"), fl("t", repeat={"limit": 2, "until": "outputs.t == 'x'"})),
                 ['spec.flows[0].name: flow "t-0" would make the same vcjob name as iteration 0 of flow "t" '
                  "(<jobflow>-t-0): rename one of them"], id="flow-named-like-an-iteration"),
]


@pytest.mark.parametrize("obj, expected", REJECT)
def test_rejects(obj: Obj, expected: list[str]) -> None:
    assert messages(obj) == expected


def test_every_unknown_name_is_reported_once_per_field() -> None:
    got = messages(jf(fl("a", **dep(expression="x.Failed || x.Skipped || y")), fl("b", **dep("x"))))
    assert [m.split(":\n")[0] for m in got] == [
        'spec.flows[0].dependsOn.expression: flow "a": unknown flow "x" at position 0',
        'spec.flows[0].dependsOn.expression: flow "a": unknown flow "y" at position 25',
        "spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: x"]


@pytest.mark.parametrize("flow, expected", [
    pytest.param(fl("a"), [], id="none"),
    pytest.param(fl("a", **dep("b", "c")), ["b", "c"], id="targets"),
    pytest.param(fl("a", **dep(expression="c.Failed || (b.Completed && c.Skipped)")), ["c", "b"], id="expression"),
    pytest.param(fl("a", when="outputs.w == 1", withParam="{{outputs.p}}",
                    repeat={"limit": 2, "until": "outputs.a > 1 && outputs.u > 1"},
                    patch={"jobSpec": {"queue": "{{outputs.q}}"}}, **dep("t")),
                 ["t", "p", "w", "u", "q"], id="every-reference-kind-without-self"),
    pytest.param(fl("a", **dep(expression="a &&")), [], id="malformed-expression-skipped"),
])
def test_dependencies(flow: Obj, expected: list[str]) -> None:
    assert jobflow.dependencies(flow) == expected


def test_a_large_flow_with_expressions_is_admitted() -> None:
    flows = [fl("f0")] + [fl(f"f{i}", **dep(expression=f"f{i - 1}.Completed || f{i - 1}.Skipped"))
                          for i in range(1, 3000)]
    assert messages(jf(*flows)) == []


# (JobFlow spec, {flow: placeholders its JobTemplate uses}) -> errors "path: message" (message start)
TEMPLATE_CASES = [
    pytest.param(jf(fl("a"), fl("b", **dep("a")), **args(x="1"))["spec"],
                 {"a": {"params.x"}, "b": {"outputs.a", "params.x"}}, [], id="declared-and-upstream"),
    pytest.param(jf(fl("a"), fl("b", **dep("a")))["spec"], {"a": {"outputs.b"}},
                 ["spec.flows[0].name: jobflow Flow is not DAG (cycle: a -> b -> a) (a JobTemplate reading"],
                 id="cycle-through-a-template"),
    pytest.param(jf(fl("a"), fl("b"))["spec"], {"a": {"outputs.b"}, "b": {"outputs.a"}},
                 ["spec.flows[0].name: jobflow Flow is not DAG (cycle: a -> b -> a)"], id="cycle-of-two-templates"),
    pytest.param(jf(fl("a"), fl("b"))["spec"], {"a": {"outputs.b"}}, [], id="a-read-alone-is-an-edge"),
    pytest.param(jf(fl("a"), fl("h"), onExit="h")["spec"], {"a": {"outputs.h"}},
                 ['spec.flows[0].name: JobTemplate "a": flow "h" is the exit handler'], id="exit-handler-output"),
    pytest.param(jf(fl("a"), fl("h"), onExit="h")["spec"], {"h": {"outputs.a"}}, [], id="exit-handler-reads"),
    pytest.param(jf(fl("a"), **args(x="1"))["spec"], {"a": {"params.nope"}},
                 ['spec.flows[0].name: JobTemplate "a": unknown parameter "nope" (spec.arguments.parameters '
                  "declares: x)"], id="undeclared-parameter"),
    # flow placeholders that mean nothing in the flow are left as written, as Volcano leaves all {{…}}
    # text (a plain Volcano template may hold it; vcctl validate warns)
    pytest.param(jf(fl("a"))["spec"], {"a": {"params.nope"}}, [], id="no-arguments-params-text-left-alone"),
    pytest.param(jf(fl("a"))["spec"], {"a": {"outputs.zz"}}, [], id="not-a-flow-outputs-text-left-alone"),
    pytest.param(jf(fl("a"))["spec"], {"a": {"item.x"}}, [], id="item-outside-a-loop-left-alone"),
    pytest.param(jf(fl("a", withItems=[1]))["spec"], {"a": {"item", "iteration"}}, [],
                 id="iteration-outside-a-repeat-left-alone"),
    pytest.param(jf(fl("a"))["spec"], {"a": {"outputs.a"}},
                 ['spec.flows[0].name: JobTemplate "a": a flow\'s template cannot read its own output'],
                 id="own-output"),
    pytest.param(jf(fl("a", repeat={"limit": 3, "until": "outputs.a > 1"}))["spec"],
                 {"a": {"outputs.a", "iteration"}}, [], id="own-output-in-a-repeat"),
]


# a spec admission refuses, with the reads of the flows it found no fault in: nothing it reports again
REFUSED_TEMPLATE_CASES = [
    pytest.param(jf(fl("a", **dep("zz")), fl("b"), **args(x="1"))["spec"], {"b": {"params.nope"}},
                 ['spec.flows[1].name: JobTemplate "b": unknown parameter "nope"'], id="undefined-target-elsewhere"),
    pytest.param(jf(fl("a", **dep("b")), fl("b", **dep("a")), fl("c"))["spec"], {"c": {"outputs.a"}}, [],
                 id="own-cycle-not-reported-again"),
    pytest.param(jf(fl("a"), fl("a"), fl("b"), **args(x="1"))["spec"], {"a": {"params.y"}, "b": {"outputs.a"}},
                 ['spec.flows[0].name: JobTemplate "a": unknown parameter "y"'], id="duplicate-name-first-flow"),
    pytest.param(jf(fl("a"), arguments={"parameters": [{"name": False, "value": "1"}]})["spec"],
                 {"a": {"params.n"}}, [], id="unreadable-parameter-name"),
    pytest.param(jf(fl("a"), fl("b"), jobRetainPolicy="nope")["spec"], {"a": {"outputs.b"}, "b": {"outputs.a"}},
                 ["spec.flows[0].name: jobflow Flow is not DAG (cycle: a -> b -> a)"], id="template-cycle"),
]


@pytest.mark.parametrize("spec, reads, expected", REFUSED_TEMPLATE_CASES)
def test_template_placeholders_of_a_refused_spec(spec: Obj, reads: dict[str, set[str]], expected: list[str]) -> None:
    assert messages({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                     "metadata": {"name": "jf", "namespace": "default"}, "spec": spec}) != []   # refused alone
    got = [f"{e.path}: {e.message}" for e in jobflow.template_errors(spec, reads)]
    assert len(got) == len(expected), got
    for g, want in zip(got, expected):
        assert g.startswith(want), (g, want)


@pytest.mark.parametrize("spec, reads, expected", TEMPLATE_CASES)
def test_template_placeholders(spec: Obj, reads: dict[str, set[str]], expected: list[str]) -> None:
    assert messages({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                     "metadata": {"name": "jf", "namespace": "default"}, "spec": spec}) == []   # admitted alone
    got = [f"{e.path}: {e.message}" for e in jobflow.template_errors(spec, reads)]
    assert len(got) == len(expected), got
    for g, want in zip(got, expected):
        assert g.startswith(want), (g, want)


@pytest.mark.parametrize("command, offsets", [
    pytest.param(["sh", "-c", "echo {{item}} and {{ params.x }}"], [5, 18], id="two-in-one-string"),
    pytest.param(["{{params.x}}"], [0], id="the-whole-string"),
])
def test_a_patch_placeholders_problem_says_where_it_starts_in_its_string(command, offsets):
    """The CLI names the line and column of the placeholder (`vcctl validate`: file:line:column)."""
    patch = {"jobSpec": {"tasks": [{"name": "main", "template": {"spec": {"containers": [
        {"name": "main", "command": command}]}}}]}}
    obj = jf(fl("a", patch=patch))
    try:
        admit.admit(admit.Operation.CREATE, kinds.JOBFLOW, obj, None, views.default_view())
    except errors.Invalid as e:
        found = e.errors
    else:
        found = []
    assert [fe.offset for fe in found] == offsets, [str(fe) for fe in found]


HANDLER = {"onExit": "h"}


@pytest.mark.parametrize("h, expected", [
    pytest.param(fl("h", when='outcomes.a == "Failed"'), [], id="the-handlers-when"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{outcomes.a}}"}}), [], id="the-handlers-patch"),
    pytest.param(fl("h", when='outcomes.zz == "Failed"'),
                 ['spec.flows[1].when: flow "h": unknown flow "zz" at position 0:'
                  + caret('outcomes.zz == "Failed"', 0)],
                 id="unknown-flow"),
    pytest.param(fl("h", when='outcomes.h == "Failed"'),
                 ['spec.flows[1].when: flow "h": the exit handler cannot read its own outcome (it has none while it '
                  'runs) at position 0:' + caret('outcomes.h == "Failed"', 0)], id="its-own"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{outcomes.a.x}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "h": outcomes.a has no fields (it is Completed, Failed, '
                  "Terminated, Skipped or NotCreated)"], id="no-fields"),
])
def test_the_exit_handler_reads_the_other_flows_outcomes(h, expected):
    assert messages(jf(fl("a"), h, **HANDLER)) == expected


@pytest.mark.parametrize("h, expected", [
    pytest.param(fl("h", when='workflow.status == "Failed" || len(workflow.failures) > 0'), [], id="the-handlers-when"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{workflow.status}}", "tasks": [{"name": "t", "template": {
        "spec": {"containers": [{"name": "c", "command": ["echo", "{{workflow.failures}}",
                                                          "{{workflow.failures.0.name}}"]}]}}}]}}), [],
                 id="the-handlers-patch"),
    pytest.param(fl("h", when="workflow.failed"),
                 ['spec.flows[1].when: flow "h": workflow has no field \'failed\' (it has status, failures) '
                  'at position 0:' + caret("workflow.failed", 0)], id="unknown-field"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{workflow.phase}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "h": workflow has no field \'phase\' (it has status, '
                  "failures)"], id="unknown-placeholder-field"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{workflow.status.x}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "h": workflow.status has no fields (it is Succeeded or '
                  "Failed)"], id="status-has-no-fields"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{workflow.failures.x}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "h": workflow.failures is a list: read an element by its '
                  "index (workflow.failures.0.name), not 'x'"], id="failures-not-an-index"),
    pytest.param(fl("h", patch={"jobSpec": {"queue": "{{workflow.failures.0.phase}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "h": a failure has no field \'phase\' (it has name, '
                  "outcome, message, handled; Argo's phase is outcome here)"], id="failure-unknown-field"),
    pytest.param(fl("h", when='len(workflow.failures.1.message.text) > 0'),
                 ['spec.flows[1].when: flow "h": workflow.failures.1.message has no fields at position 4:'
                  + caret("len(workflow.failures.1.message.text) > 0", 4)], id="failure-field-has-no-fields"),
])
def test_the_exit_handler_reads_the_whole_jobflow(h, expected):
    assert messages(jf(fl("a"), h, **HANDLER)) == expected


def _echo(*words: str) -> Obj:
    return {"jobSpec": {"tasks": [{"name": "t", "template": {"spec": {"containers": [
        {"name": "c", "command": ["echo", *words]}]}}}]}}


FAILURES = "{{workflow.failures}}"


@pytest.mark.parametrize("flows, expected", [
    pytest.param([fl("a"), fl("h", withParam=FAILURES, patch=_echo("{{item}}", "{{item.name}}", "{{item.outcome}}",
                                                                   "{{item.message}}", "{{item.handled}}"))], [],
                 id="the-exit-handler-loops-over-the-failures"),
    pytest.param([fl("a"), fl("h", withParam=" {{ workflow.failures }} ")], [], id="spaces"),
    pytest.param([fl("a", withParam=FAILURES), fl("h")],
                 ['spec.flows[0].withParam: flow "a": workflow is read by the exit handler (spec.onExit) only: the '
                  "JobFlow's status and failures are known once every other flow has finished at position 2:"
                  + caret(FAILURES, 2)], id="outside-the-exit-handler"),
    pytest.param([fl("a"), fl("h", withParam="{{workflow.status}}")],
                 ['spec.flows[1].withParam: flow "h": withParam needs a JSON list: {{workflow.status}} is not one '
                  "(loop over workflow.failures, one item per failed flow) at position 2:"
                  + caret("{{workflow.status}}", 2)], id="status-is-not-a-list"),
    pytest.param([fl("a"), fl("h", withParam="{{workflow.failures.0}}")],
                 ['spec.flows[1].withParam: flow "h": withParam needs a JSON list: {{workflow.failures.0}} is not '
                  "one (loop over workflow.failures, one item per failed flow) at position 2:"
                  + caret("{{workflow.failures.0}}", 2)], id="an-element-is-not-a-list"),
    pytest.param([fl("a"), fl("h", withParam="{{workflow.errors}}")],
                 ['spec.flows[1].withParam: flow "h": workflow has no field \'errors\' (it has status, failures) at '
                  "position 2:" + caret("{{workflow.errors}}", 2)], id="unknown-field"),
    pytest.param([fl("a"), fl("h", withParam=FAILURES, patch=_echo("{{item.displayName}}"))],
                 ['spec.flows[1].patch.jobSpec.tasks[0].template.spec.containers[0].command[1]: flow "h": a failure '
                  "has no field 'displayName' (it has name, outcome, message, handled; Argo's displayName is name "
                  "here)"], id="argos-field-name"),
    pytest.param([fl("a"), fl("h", withParam=FAILURES, patch=_echo("{{item.name.first}}"))],
                 ['spec.flows[1].patch.jobSpec.tasks[0].template.spec.containers[0].command[1]: flow "h": '
                  "item.name has no fields"], id="a-field-has-no-fields"),
    pytest.param([fl("a"), fl("h", withParam="{{outputs.a}}", patch=_echo("{{item.displayName}}"))], [],
                 id="another-lists-items-are-not-failures"),
])
def test_the_exit_handler_loops_over_the_failures(flows, expected):
    """`withParam: "{{workflow.failures}}"`: one item per failed flow, in the exit handler only; the fields of an
    item are a failure's."""
    assert messages(jf(*flows, **HANDLER)) == expected


def test_a_template_reading_a_failure_field_that_does_not_exist_is_refused():
    spec = {"onExit": "h", "flows": [fl("a"), fl("h", withParam=FAILURES)]}
    got = [f"{e.path}: {e.message}" for e in jobflow.template_errors(
        spec, {"h": {"item.phase": "spec.tasks[0].template.spec.containers[0].command[1]", "item.name": ""}})]
    assert got == ['spec.flows[1].name: JobTemplate "h": spec.tasks[0].template.spec.containers[0].command[1]: '
                   "a failure has no field 'phase' (it has name, outcome, message, handled; Argo's phase is "
                   "outcome here)"]


@pytest.mark.parametrize("b, expected", [
    pytest.param(fl("b", when='workflow.status == "Failed"'),
                 ['spec.flows[1].when: flow "b": workflow is read by the exit handler (spec.onExit) only: the '
                  "JobFlow's status and failures are known once every other flow has finished at position 0:"
                  + caret('workflow.status == "Failed"', 0)], id="workflow-in-when"),
    pytest.param(fl("b", patch={"jobSpec": {"queue": "{{workflow.failures}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "b": workflow is read by the exit handler (spec.onExit) '
                  "only: the JobFlow's status and failures are known once every other flow has finished"],
                 id="workflow-in-patch"),
    pytest.param(fl("b", when='outcomes.a == "Failed"'),
                 ['spec.flows[1].when: flow "b": outcomes are read by the exit handler (spec.onExit) only: another '
                  "flow says which outcomes it accepts in dependsOn.expression (a.Failed) at position 0:"
                  + caret('outcomes.a == "Failed"', 0)], id="when"),
    pytest.param(fl("b", patch={"jobSpec": {"queue": "{{outcomes.a}}"}}),
                 ['spec.flows[1].patch.jobSpec.queue: flow "b": outcomes are read by the exit handler (spec.onExit) '
                  "only: another flow says which outcomes it accepts in dependsOn.expression (a.Failed)"], id="patch"),
])
def test_another_flow_cannot_read_outcomes(b, expected):
    assert messages(jf(fl("a"), b)) == expected
