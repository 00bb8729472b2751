"""The JobFlow engine against an oracle written from the docs (tests/flow_oracle.py): random DAGs of
targets (all/any, a taskStatusList probe), expressions over every outcome, `when` over parameters and
outputs, fan-outs (withItems, withParam over an earlier flow's output), repeat-until, retries, an exit
handler, JobTemplates' placeholders and `patch.jobSpec`, with predetermined job outcomes and outputs, played
in a random order through the engine as the controller drives it (tests/flowsim.py), the JobFlow suspended
and resumed at random moments. At every step the same vcjobs run and the same flows wait for the resume; at
the end every flow has the same state (and a Skipped flow the same reason) and the JobFlow the same phase,
every vcjob was created with the same command (or whole spec); no vcjob was created before its dependency
held. The oracle's own rows come from the docs' examples."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests import flow_oracle, flowsim
from vclite.admission import jobflow as admission

GO = {"go": "yes"}
WHEN_TRUE, WHEN_FALSE = "params.go == 'yes'", "params.go != 'yes'"


def dep(**kw) -> dict:
    return {"dependsOn": kw}


# (flows, onExit, attempts per vcjob, order to finish, states, phase); a state "Skipped:<reason>"
ORACLE_RULES = [
    # a plain Volcano JobFlow: one failed job fails it, nothing else starts
    ([{"name": "a"}, {"name": "b", **dep(targets=["a"])}], None, {"jf-a": ["Failed"]}, None,
     {"a": "Failed", "b": "Skipped:DependencyNeverMet"}, "Failed"),
    ([{"name": "a"}, {"name": "b", **dep(targets=["a"])}], None, {}, None,
     {"a": "Completed", "b": "Completed"}, "Succeed"),
    # docs/jobflow-expressions.md: h accepts a's failure, k is Skipped, the JobFlow Succeeds
    ([{"name": "a"}, {"name": "h", **dep(expression="a.Failed")}, {"name": "k", **dep(targets=["a"])}], None,
     {"jf-a": ["Failed"]}, None, {"a": "Failed", "h": "Completed", "k": "Skipped:DependencyNeverMet"}, "Succeed"),
    # examples/any-expression.yaml
    ([{"name": "ma"}, {"name": "mb"}, {"name": "train", **dep(targets=["ma", "mb"], strategy="any")},
      {"name": "alert", **dep(expression="ma.Failed")},
      {"name": "deploy", **dep(expression="train.Completed && ma.Completed && mb.Completed")},
      {"name": "cleanup", **dep(expression="train.Finished")}], None, {"jf-ma": ["Failed"]}, None,
     {"ma": "Failed", "mb": "Completed", "train": "Completed", "alert": "Completed",
      "deploy": "Skipped:DependencyNeverMet", "cleanup": "Completed"}, "Succeed"),
    # examples/exit-handler.yaml: a failure, then the handler, then Failed
    ([{"name": "a"}, {"name": "b", **dep(targets=["a"])}, {"name": "x"}], "x", {"jf-a": ["Failed"]}, None,
     {"a": "Failed", "b": "Skipped:DependencyNeverMet", "x": "Completed"}, "Failed"),
    # the exit handler's own failure fails the JobFlow
    ([{"name": "a"}, {"name": "x"}], "x", {"jf-x": ["Failed"]}, None, {"a": "Completed", "x": "Failed"}, "Failed"),
    # a JobFlow whose flows are all Skipped succeeds
    ([{"name": "a", "when": WHEN_FALSE}, {"name": "b", **dep(targets=["a"])}], None, {}, None,
     {"a": "Skipped:WhenFalse", "b": "Skipped:DependencyNeverMet"}, "Succeed"),
    # the handler Skipped: the failure is unhandled from then on
    ([{"name": "a"}, {"name": "h", "when": WHEN_FALSE, **dep(expression="a.Failed")}], None,
     {"jf-a": ["Failed"]}, None, {"a": "Failed", "h": "Skipped:WhenFalse"}, "Failed"),
    # a failure handled by `strategy: any` only while another target can still complete
    ([{"name": "a"}, {"name": "b"}, {"name": "c", **dep(targets=["a", "b"], strategy="any")}], None,
     {"jf-a": ["Failed"], "jf-b": ["Terminated"]}, None,
     {"a": "Failed", "b": "Terminated", "c": "Skipped:DependencyNeverMet"}, "Failed"),
    # retries: the failure counts only when none is left
    ([{"name": "a", "retry": {"limit": 1}}], None, {"jf-a": ["Failed", "Completed"]}, None,
     {"a": "Completed"}, "Succeed"),
    ([{"name": "a", "retry": {"limit": 1}}], None, {"jf-a": ["Failed", "Terminated"]}, None,
     {"a": "Terminated"}, "Failed"),
    # no items: Completed at once, a met target, every fan-out outcome false
    ([{"name": "e", "withItems": []}, {"name": "b", **dep(targets=["e"])},
      {"name": "c", **dep(expression="e.AnyCompleted || e.AllFailed")}], None, {}, None,
     {"e": "Completed", "b": "Completed", "c": "Skipped:DependencyNeverMet"}, "Succeed"),
    # strategy any over a fan-out: one completed item meets it, and handles the fan-out's failure
    ([{"name": "e", "withItems": [1, 2]}, {"name": "b", **dep(targets=["e"], strategy="any")}], None,
     {"jf-e-1": ["Failed"]}, None, {"e": "Failed", "b": "Completed"}, "Succeed"),
    # after an unhandled failure nothing new starts: c is NotCreated (its dependency could still hold)
    ([{"name": "a"}, {"name": "b"}, {"name": "c", **dep(targets=["b"])}], None, {"jf-a": ["Failed"]},
     ["jf-a", "jf-b"], {"a": "Failed", "b": "Completed", "c": "NotCreated"}, "Failed"),
    # ... not even a flow that became ready at the same moment as the failure became unhandled
    ([{"name": "a"}, {"name": "c"}, {"name": "h", "when": WHEN_FALSE, **dep(expression="a.Failed && c.Completed")},
      {"name": "b", **dep(targets=["c"])}], None, {"jf-a": ["Failed"]}, ["jf-a", "jf-c"],
     {"a": "Failed", "c": "Completed", "h": "Skipped:WhenFalse", "b": "NotCreated"}, "Failed"),
]


@pytest.mark.parametrize("flows, on_exit, attempts, order, states, phase", ORACLE_RULES)
def test_oracle_rows_from_the_docs(flows, on_exit, attempts, order, states, phase):
    sequence = iter(order or [])
    pick = (lambda running: next(sequence)) if order else min
    result = flow_oracle.predict(flows, attempts, on_exit, GO, pick=pick)
    got = {n: f"Skipped:{result.reasons[n]}" if s == "Skipped" else s for n, s in result.states.items()}
    assert (got, result.phase) == (states, phase)


def test_the_oracles_skip_messages_are_the_docs_words():
    """docs/jobflow-primitives.md "Status": `dependsOn target b was Skipped`, `dependsOn targets c, d can no longer
    all be Completed: d Failed`, `… (strategy any): none of them can complete: …`, `dependsOn.expression <as
    written> can never hold: …` — and the engine says the same."""
    flows = [{"name": "b", "when": WHEN_FALSE}, {"name": "c"}, {"name": "d"}, {"name": "h", **dep(targets=["b"])},
             {"name": "e", **dep(targets=["c", "d"])}, {"name": "y", **dep(targets=["b", "d"], strategy="any")},
             {"name": "z", **dep(expression="c.Failed ||  d.Completed")}, {"name": "k", **dep(expression="!d.Failed")}]
    result = flow_oracle.predict(flows, {"jf-d": ["Failed"]}, None, GO)
    assert result.messages == {
        "h": ("dependsOn target b was Skipped", "whole"),
        "e": ("dependsOn targets c, d can no longer all be Completed: ", "list", ("d Failed",)),
        "y": ("dependsOn targets b, d (strategy any): none of them can complete: b Skipped, d Failed", "whole"),
        "z": ("dependsOn.expression c.Failed ||  d.Completed can never hold", "start"),
        "k": ("dependsOn.expression !d.Failed can never hold", "start")}
    check((flows, None, {"jf-d": ["Failed"]}, {}), False, min)


def test_a_vcjob_whose_output_comes_in_the_moment_a_failure_stops_the_jobflow_is_not_created():
    """s's JobTemplate reads a's output: s waits for it. f Fails, handled by h (`strategy: any` over f and a). a
    completes: in that moment s's output is there and h starts, but h's JobTemplate reads f's output: h is Skipped,
    f's failure unhandled, and the JobFlow stops — s is never made (`NotCreated`, the docs: "A vcjob still waiting
    for an output when an unhandled failure stops the JobFlow is never made"). The oracle had s wait again as if
    it were a retry, then called it a repeat's iteration (`Pending:Repeat`)."""
    flows = [{"name": "a"}, {"name": "f"}, {"name": "h", **dep(targets=["f", "a"], strategy="any")}, {"name": "s"}]
    templates = {"a": "", "f": "", "h": "{{outputs.f}}", "s": "{{outputs.a}}"}
    oracle = flow_oracle.Oracle(flows, {"jf-f": ["Failed"]}, None, GO, templates=templates)
    sim = flowsim.Sim(flows, templates=templates)
    for job in ("jf-f", "jf-a"):
        finish(sim, job, oracle.next_phase(job), "")
        oracle.finish(job)
    result = oracle.result()
    want = {"a": "Completed", "f": "Failed", "h": "Skipped:DependencyNeverMet", "s": "NotCreated"}
    assert (oracle_states(result), result.phase) == (want, "Failed")
    assert (engine_states(sim, flows), sim.phase) == (want, "Failed")


PS_PROBE = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}

# (flows, onExit, attempts, outputs, moves, states, phase, vcjobs created); moves: ("finish", job), ("ps", job),
# ("suspend",), ("resume",) — then the running vcjobs finish in name order
PRIMITIVE_RULES = [
    # examples/fan-out.yaml: one vcjob per item of the earlier flow's JSON list
    ([{"name": "s"}, {"name": "p", **dep(targets=["s"]), "withParam": "{{outputs.s}}"}], None, {},
     {"jf-s": ['["a", "b"]']}, [], {"s": "Completed", "p": "Completed"}, "Succeed", {"jf-s", "jf-p-0", "jf-p-1"}),
    # an empty list: Completed at once; not a JSON list: one failed item (handled here by p.AllFailed)
    ([{"name": "s"}, {"name": "p", "withParam": "{{outputs.s}}"}, {"name": "d", **dep(targets=["p"])}], None, {},
     {"jf-s": ["[]"]}, [], {"s": "Completed", "p": "Completed", "d": "Completed"}, "Succeed", {"jf-s", "jf-d"}),
    ([{"name": "s"}, {"name": "p", "withParam": "{{outputs.s}}"}, {"name": "h", **dep(expression="p.AllFailed")}],
     None, {}, {"jf-s": ["x"]}, [], {"s": "Completed", "p": "Failed", "h": "Completed"}, "Succeed", {"jf-s", "jf-h"}),
    # a fan-out's output is the list of its items' outputs: `[]` with no items
    ([{"name": "e", "withItems": []}, {"name": "p", "withParam": "{{outputs.e}}"}], None, {}, {}, [],
     {"e": "Completed", "p": "Completed"}, "Succeed", set()),
    # examples/if-else.yaml: two flows with opposite conditions over an output
    ([{"name": "e"}, {"name": "deploy", "when": "outputs.e >= 1"}, {"name": "retrain", "when": "outputs.e < 1"}],
     None, {}, {"jf-e": ["2"]}, [], {"e": "Completed", "deploy": "Completed", "retrain": "Skipped:WhenFalse"},
     "Succeed", {"jf-e", "jf-deploy"}),
    # docs/jobflow-expressions.md: `params.env == "prod" && outputs.eval.acc >= 0.9` — the output parsed as JSON
    ([{"name": "e"}, {"name": "deploy", "when": "params.go == 'yes' && outputs.e.acc >= 0.9"}], None, {},
     {"jf-e": ['{"acc": 0.95}']}, [], {"e": "Completed", "deploy": "Completed"}, "Succeed", {"jf-e", "jf-deploy"}),
    # a missing field is an error that fails the flow; `null` equals only `null`
    ([{"name": "e"}, {"name": "d", "when": "outputs.e.acc >= 0.9"}], None, {}, {"jf-e": ['{"loss": 1}']}, [],
     {"e": "Completed", "d": "Failed"}, "Failed", {"jf-e"}),
    ([{"name": "e"}, {"name": "d", "when": "outputs.e.1 != 1"}], None, {}, {"jf-e": ['[0, null]']}, [],
     {"e": "Completed", "d": "Completed"}, "Succeed", {"jf-e", "jf-d"}),
    # reading a flow's output needs it Completed, unless the expression names it
    ([{"name": "a"}, {"name": "b", "when": "outputs.a == 'x'"}, {"name": "h", **dep(expression="a.Failed")}], None,
     {"jf-a": ["Failed"]}, {"jf-a": ["x"]}, [], {"a": "Failed", "b": "Skipped:DependencyNeverMet",
                                                 "h": "Completed"}, "Succeed", {"jf-a", "jf-h"}),
    ([{"name": "a"}, {"name": "b", **dep(expression="a.Finished"), "when": "outputs.a == 'x'"}], None,
     {"jf-a": ["Failed"]}, {"jf-a": ["x"]}, [], {"a": "Failed", "b": "Completed"}, "Succeed", {"jf-a", "jf-b"}),
    # examples/repeat-until.yaml: until holds after iteration 1; the limit reached fails it
    ([{"name": "t", "repeat": {"until": "outputs.t == 'done'", "limit": 3}}, {"name": "p", **dep(targets=["t"])}],
     None, {}, {"jf-t-0": ["no"], "jf-t-1": ["done"]}, [], {"t": "Completed", "p": "Completed"}, "Succeed",
     {"jf-t-0", "jf-t-1", "jf-p"}),
    ([{"name": "t", "repeat": {"until": "iteration >= 5", "limit": 2}}], None, {}, {}, [], {"t": "Failed"},
     "Failed", {"jf-t-0", "jf-t-1"}),
    ([{"name": "t", "repeat": {"until": "outputs.t >= 2", "limit": 3}}], None, {}, {"jf-t-0": ["many"]}, [],
     {"t": "Failed"}, "Failed", {"jf-t-0"}),
    ([{"name": "t", "repeat": {"until": "iteration >= 5", "limit": 3}}], None, {"jf-t-1": ["Terminated"]}, {}, [],
     {"t": "Terminated"}, "Failed", {"jf-t-0", "jf-t-1"}),
    # examples/probe.yaml: the flow starts once the target's ps task runs; a target finished first skips it
    ([{"name": "ps"}, {"name": "w", "dependsOn": {"targets": ["ps"], "probe": PS_PROBE}}], None, {}, {},
     [("ps", "jf-ps")], {"ps": "Completed", "w": "Completed"}, "Succeed", {"jf-ps", "jf-w"}),
    ([{"name": "ps"}, {"name": "w", "dependsOn": {"targets": ["ps"], "probe": PS_PROBE}}], None, {}, {},
     [("finish", "jf-ps")], {"ps": "Completed", "w": "Skipped:DependencyNeverMet"}, "Succeed", {"jf-ps"}),
    # a probe never accepts its target's failure
    ([{"name": "ps"}, {"name": "w", "dependsOn": {"targets": ["ps"], "probe": PS_PROBE}}], None,
     {"jf-ps": ["Failed"]}, {}, [("ps", "jf-ps")], {"ps": "Failed", "w": "Completed"}, "Failed", {"jf-ps", "jf-w"}),
    # suspended: nothing new starts (running vcjobs go on) until resumed
    ([{"name": "a"}, {"name": "b", **dep(targets=["a"])}], None, {}, {},
     [("suspend",), ("finish", "jf-a"), ("resume",)], {"a": "Completed", "b": "Completed"}, "Succeed",
     {"jf-a", "jf-b"}),
    # after a stop the exit handler reads a flow that never ran as ""
    ([{"name": "a"}, {"name": "b"}, {"name": "c", **dep(targets=["b"])}, {"name": "x", "when": "outputs.c == ''"}],
     "x", {"jf-a": ["Failed"]}, {}, [("finish", "jf-a"), ("finish", "jf-b")],
     {"a": "Failed", "b": "Completed", "c": "NotCreated", "x": "Completed"}, "Failed", {"jf-a", "jf-b", "jf-x"}),
]


@pytest.mark.parametrize("flows, on_exit, attempts, outputs, moves, states, phase, created", PRIMITIVE_RULES)
def test_oracle_rows_for_outputs_loops_probes_and_suspend(flows, on_exit, attempts, outputs, moves, states, phase,
                                                         created):
    oracle = flow_oracle.Oracle(flows, attempts, on_exit, GO, outputs=outputs)
    for move, *job in moves:
        if move == "finish":
            oracle.finish(job[0])
        elif move == "ps":
            oracle.ps_up(job[0])
        else:
            oracle.suspend(move == "suspend")
    while oracle.running:
        oracle.finish(min(oracle.running))
    result = oracle.result()
    assert (oracle_states(result), result.phase, set(result.created)) == (states, phase, created)


# ---- random JobFlows ------------------------------------------------------------------------------------

EXPR_OUTCOMES = ["Completed", "Succeeded", "Failed", "Terminated", "Skipped", "Finished",
                 "AnyCompleted", "AnyFailed", "AllCompleted", "AllFailed", ""]


@st.composite
def expressions(draw, names: list[str], depth: int = 0):
    if depth > 1 or draw(st.booleans()):
        outcome = draw(st.sampled_from(EXPR_OUTCOMES))
        name = draw(st.sampled_from(names))
        return f"{name}.{outcome}" if outcome else name
    op = draw(st.sampled_from([" && ", " || "]))
    text = f"({draw(expressions(names, depth + 1))}{op}{draw(expressions(names, depth + 1))})"
    return f"!{text}" if draw(st.integers(0, 4)) == 0 else text


LISTS = ["[]", "[1]", '["a", "b"]', " [1, 2, 3] ", '{"k": 1}', "x"]     # outputs a withParam reads
WORDS = ["a", "1", "2", "x", "", "[1]",                                 # outputs a `when` or `until` reads
         '{"acc": 0.95}', ' {"acc": "0.5", "k": "a"} ', '{"acc": "x"}', '{"k": 1}', '[2, {"acc": 1}]', "{}"]
UNTILS = ["iteration >= {n}", "outputs.{f} == 'a'", "outputs.{f} >= 2", "iteration >= 1 || outputs.{f} == '1'",
          "outputs.{f} == '2' && iteration >= 1"]
WHENS = [WHEN_TRUE, WHEN_FALSE, "outputs.{f} == 'a'", "outputs.{f} != 'a'", "outputs.{f} >= 1",
         "outputs.{f}.acc >= 0.9", "outputs.{f}.k == 'a'", "outputs.{f}.k != '1'", "outputs.{f}.1.acc < 2",
         "outputs.{f}.0 == 2 || outputs.{f}.acc > 0.5"]


def vcjobs(f: dict) -> list[str]:
    """Every vcjob a flow may make: its own, one per item (withParam: at most 3), one per iteration."""
    base = f"jf-{f['name']}"
    if "withItems" in f:
        return [f"{base}-{i}" for i in range(len(f["withItems"]))]
    if "withParam" in f:
        return [f"{base}-{i}" for i in range(3)]
    if "repeat" in f:
        return [f"{base}-{i}" for i in range(f["repeat"]["limit"])]
    return [base]


@st.composite
def loops(draw, f: dict, earlier: list[dict]) -> None:
    """None, withItems, withParam over an earlier flow's output, or repeat-until."""
    kinds = ["", "", "items", "param", "repeat"]
    kind = draw(st.sampled_from(kinds if earlier else [k for k in kinds if k != "param"]))
    if kind == "items":
        f["withItems"] = list(range(draw(st.integers(0, 3))))
    elif kind == "param":
        f["withParam"] = "{{outputs.%s}}" % draw(st.sampled_from(earlier))["name"]
    elif kind == "repeat":
        until = draw(st.sampled_from(UNTILS)).format(n=draw(st.integers(0, 2)), f=f["name"])
        f["repeat"] = {"until": until, "limit": draw(st.integers(1, 3))}


@st.composite
def whens(draw, earlier: list[dict]) -> str:
    """A `when` over the parameter, or over the output of an earlier flow without items."""
    sources = [e["name"] for e in earlier if "withItems" not in e and "withParam" not in e]
    forms = WHENS if sources else WHENS[:2]
    return draw(st.sampled_from(forms)).format(f=draw(st.sampled_from(sources)) if sources else "")


PROBE_ENTRIES = [("taskStatusList", {"taskName": "ps", "phase": "Running"}),
                 ("httpGetList", {"taskName": "main", "port": 8080, "path": "/healthz"}),
                 ("tcpSocketList", {"taskName": "main", "port": 6379}),
                 ("taskStatusList", {"taskName": "nope", "phase": "Running"})]     # (a task no vcjob has)


@st.composite
def probes(draw) -> dict:
    """A probe: one to three entries (taskStatusList on ps, httpGetList / tcpSocketList on main, one on a task
    the targets do not have)."""
    probe: dict = {}
    for i in draw(st.lists(st.integers(0, len(PROBE_ENTRIES) - 1), min_size=1, max_size=3, unique=True)):
        key, entry = PROBE_ENTRIES[i]
        probe.setdefault(key, []).append(entry)
    return probe


@st.composite
def runs(draw):
    """(flows, onExit, attempts, outputs): every vcjob of a retried flow fails 0-2 times (Failed or
    Terminated), then every vcjob ends as drawn (Completed 5 times in 7); each attempt writes an output
    (a list if a withParam reads it)."""
    n = draw(st.integers(1, 7))
    names = [f"f{i}" for i in range(n)]
    flows: list[dict] = []
    for i, name in enumerate(names):
        f: dict = {"name": name}
        earlier = names[:i]
        kind = draw(st.sampled_from(["none", "all", "any", "expression", "probe"])) if earlier else "none"
        if kind in ("all", "any", "probe"):
            most = 2 if kind == "probe" else 3     # (a probe holds only while every target's ps task runs)
            f.update(dep(targets=draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=most, unique=True))))
            if kind == "any":
                f["dependsOn"]["strategy"] = "any"
            if kind == "probe":
                f["dependsOn"]["probe"] = draw(probes())
        elif kind == "expression":
            f.update(dep(expression=draw(expressions(earlier))))
        if draw(st.integers(0, 3)) == 0:
            f["when"] = draw(whens(flows))
        draw(loops(f, flows))
        if draw(st.integers(0, 3)) == 0:
            f["retry"] = {"limit": draw(st.integers(1, 2)), "backoff": {"duration": "1s"}}
        flows.append(f)
    on_exit = None
    if draw(st.booleans()):
        x: dict = {"name": "x"}
        if draw(st.integers(0, 4)) == 0:
            x["when"] = draw(whens(flows))
        if draw(st.integers(0, 3)) == 0:
            x["retry"] = {"limit": 1, "backoff": {"duration": "1s"}}
        if draw(st.integers(0, 4)) == 0:
            x["withItems"] = list(range(draw(st.integers(0, 2))))
        elif draw(st.integers(0, 4)) == 0:
            x["withParam"] = "{{outputs.%s}}" % draw(st.sampled_from(flows))["name"]
        flows.append(x)
        on_exit = "x"
    attempts, outputs = {}, {}
    listed = {flow_oracle.PARAM.fullmatch(f["withParam"]).group(1) for f in flows if "withParam" in f}
    for f in flows:
        for job in vcjobs(f):
            failures = draw(st.lists(st.sampled_from(["Failed", "Terminated"]), max_size=2 if "retry" in f else 0))
            attempts[job] = [*failures, draw(st.sampled_from(["Completed"] * 5 + ["Failed", "Terminated"]))]
            pool = LISTS if f["name"] in listed else WORDS
            outputs[job] = draw(st.lists(st.sampled_from(pool), min_size=len(attempts[job]),
                                         max_size=len(attempts[job])))
    return flows, on_exit, attempts, outputs


def active(sim: flowsim.Sim) -> set[str]:
    return {n for n, j in sim.jobs.items() if j["status"]["state"]["phase"] in ("Pending", "Running")}


def suspended_flows(sim: flowsim.Sim, flows: list[dict]) -> set[str]:
    return {f["name"] for f in flows if sim.cond(f["name"]).get("reason") == "Suspended"}


def engine_states(sim: flowsim.Sim, flows: list[dict]) -> dict[str, str]:
    out = {}
    for f in flows:
        cond = sim.cond(f["name"])
        phase = cond.get("phase")
        if phase == "Skipped":
            out[f["name"]] = f"Skipped:{cond.get('reason')}"
        elif phase == "Pending":
            reason = cond.get("reason")
            out[f["name"]] = reason if reason == "NotCreated" else f"Pending:{reason}"
        else:
            out[f["name"]] = phase
    return out


def oracle_states(result: flow_oracle.Result) -> dict[str, str]:
    return {n: f"Skipped:{result.reasons[n]}" if s == "Skipped" else s for n, s in result.states.items()}


POD_PHASE = {"Completed": "Succeeded", "Failed": "Failed", "Terminated": "Failed"}


def finish(sim: flowsim.Sim, job: str, phase: str, output: str) -> None:
    """The vcjob runs, then ends in `phase`, its pods with it (its status counts both tasks' pods, as Volcano's
    does: a vcjob deleted afterwards is known by them), its designated pod having written `output`."""
    if sim.jobs[job]["status"]["state"]["phase"] == "Pending":
        sim.set(job, "Running")
    sim.set(job, phase, output, tasks={task: {"phase": {POD_PHASE[phase]: 1}} for task in ("main", "ps")})


def settle_time(sim: flowsim.Sim) -> None:
    """Lets the back-offs pass: a retry's vcjob is created again once it is over (unless suspended)."""
    for _ in range(5):
        if sim.acts.wake_at is None:
            return
        sim.advance(max(0.0, (sim.acts.wake_at - sim.now).total_seconds()))


def moves(sim: flowsim.Sim, oracle: flow_oracle.Oracle, probes: bool, suspends: bool,
          chaos: bool = False) -> list[tuple[str, str]]:
    """What may happen next: a running vcjob ends or its ps task comes up; the JobFlow (not finished, as
    vcctl refuses that) is suspended, or resumed; with `chaos`, the controller restarts (rebuilt from the stored
    status and the vcjobs) or a finished vcjob is deleted (its ttlSecondsAfterFinished, a user) — neither
    changes anything: a flow using vclite's fields keeps a finished vcjob's outcome (docs: `deleted: true`)."""
    running = sorted(oracle.running)
    out = [("finish", job) for job in running]
    if probes:
        out += [("ps", job) for job in running if job not in oracle.ps]
        out += [("http", job) for job in running if job not in oracle.http]
    if suspends and (oracle.suspended or sim.phase not in ("Succeed", "Failed")):
        out.append(("resume" if oracle.suspended else "suspend", ""))
    if chaos:
        out.append(("restart", ""))
        out += [("delete", job) for job in sorted(sim.jobs) if job not in oracle.running]
    return out


def play(flows: list[dict], on_exit: str | None, attempts: dict, choose, outputs: dict | None = None,
         suspends: bool = False, chaos: bool = False,
         templates: dict[str, str] | None = None) -> tuple[flowsim.Sim, flow_oracle.Oracle]:
    """Both run the same vcjobs (and hold the same flows while suspended) at every step; `choose` picks the
    next move: a running vcjob ends, its ps task comes up, the JobFlow is suspended or resumed."""
    spec: dict = {"arguments": {"parameters": [{"name": "go", "value": "yes"}]}}
    if on_exit:
        spec["onExit"] = on_exit
    assert admission.validate_spec({"flows": flows, **spec}, "jf", "default") == []
    sim = flowsim.Sim(flows, templates=templates, **spec)
    oracle = flow_oracle.Oracle(flows, attempts, on_exit, GO, outputs=outputs, templates=templates)
    probes = any((f.get("dependsOn") or {}).get("probe") for f in flows)
    for step in range(300):
        settle_time(sim)
        assert active(sim) == oracle.running, (step, sim.created, engine_states(sim, flows))
        assert suspended_flows(sim, flows) == oracle.held(), (step, engine_states(sim, flows))
        for name, (reason, message, whole) in oracle.conditions().items():   # (WhenFalse, NotCreated, Waiting…)
            cond = sim.cond(name)
            said = cond.get("message", "")
            assert cond.get("reason") == reason and (said == message if whole else said.startswith(message)), \
                (step, name, cond, message)
        if oracle.idle:
            return sim, oracle
        options = moves(sim, oracle, probes, suspends, chaos)
        move, job = choose(options) if oracle.running or not oracle.suspended else ("resume", "")
        if move == "restart":
            sim.restart()
        elif move == "delete":
            del sim.jobs[job]
            sim.eng.observe(job, None, sim.now)
            sim.step()
        elif move == "finish":
            sim.probe.pop((job, "main"), None)      # (a retry's new attempt answers anew)
            finish(sim, job, oracle.next_phase(job), oracle.next_output(job))
            oracle.finish(job)
        elif move == "ps":
            sim.set(job, "Running", tasks={"ps": {"phase": {"Running": 1}}})
            oracle.ps_up(job)
        elif move == "http":          # its main task's pods answer: what the prober's http and tcp checks see
            sim.probe[(job, "main")] = True
            sim.step()
            oracle.http_up(job)
        else:
            sim.suspend(move == "suspend")
            oracle.suspend(move == "suspend")
    raise AssertionError("the run does not end")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans(), st.data())
def test_the_engine_runs_skips_and_ends_as_the_oracle_says(run, suspends, data):
    check(run, suspends, lambda options: data.draw(st.sampled_from(options)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans(), st.data())
def test_restarts_and_deleted_vcjobs_change_nothing(run, suspends, data):
    check(run, suspends, lambda options: data.draw(st.sampled_from(options)), chaos=True)


@st.composite
def templates(draw, flows: list[dict]) -> dict[str, str]:
    """A JobTemplate command per flow: the parameter, `{{item}}` and `{{iteration}}` (left as written where they
    mean nothing), text that is no placeholder, and the outputs of earlier flows (any flow for the exit handler;
    itself in a repeat: the previous iteration's)."""
    out = {}
    names = [f["name"] for f in flows]
    for i, f in enumerate(flows):
        readable = names if f["name"] == "x" else names[:i] + ([f["name"]] if "repeat" in f else [])
        reads = draw(st.lists(st.sampled_from(readable), max_size=2, unique=True)) if readable else []
        parts = ["p={{params.go}}", "i={{item}}", "n={{iteration}}", "{{outputs.nope}} {{ name }}"]
        out[f["name"]] = " ".join(draw(st.permutations(parts))[:draw(st.integers(0, 4))] +
                                  [f"{r}={{{{outputs.{r}}}}}" for r in reads])
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans(), st.data())
def test_job_templates_wait_for_skip_on_and_fill_in_what_they_read(run, suspends, data):
    """docs/jobflow-primitives.md "Outputs" and "Templates": a JobTemplate reading `{{outputs.<flow>}}` makes
    its vcjob wait for that flow; a flow that did not complete skips the reader (unless its expression names it,
    or it is the exit handler); every vcjob is created with its parameters, item, iteration and outputs filled
    in — the JobFlow suspended and resumed at random moments (its reads are decided once resumed)."""
    check(run, suspends, lambda options: data.draw(st.sampled_from(options)),
          templates=data.draw(templates(run[0])))


def text_with(placeholders: list[str]):
    """A string of a template or patch: plain, or holding one or two of `placeholders`."""
    plain = st.sampled_from(["v", "1", "a b"])
    if not placeholders:
        return plain
    one = st.sampled_from(placeholders)
    return st.one_of(plain, one, st.tuples(one, one).map(lambda p: f"{p[0]}-{p[1]}"))


@st.composite
def template_specs(draw, command: str) -> dict:
    """A JobTemplate's spec around `command` (tasks main and ps, whose main container runs it): job fields, vcjob
    volumes, plugins, policies; in the pods, containers (one or two), env, resources, ports, mounts, pod volumes,
    tolerations, affinity, a security context, labels — each there or not."""
    text = text_with(["{{params.go}}", "{{item}}", "{{ name }}"])   # (left as written where they mean nothing)

    def maybe(key: str, value) -> dict:
        return {key: value} if draw(st.booleans()) else {}

    def pod(name: str, cmd: list[str]) -> dict:
        c = {"name": "c", "image": "busybox", "command": cmd,
             **maybe("env", [{"name": "A", "value": draw(text)}, {"name": "B", "value": "b"}]),
             **maybe("resources", {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}),
             **maybe("ports", [{"containerPort": 80, "name": "http"}]),
             **maybe("volumeMounts", [{"name": "v", "mountPath": "/v"}])}
        containers = [c] + ([{"name": "side", "image": "busybox:1"}] if draw(st.booleans()) else [])
        spec = {"containers": containers, "restartPolicy": "Never",
                **maybe("volumes", [{"name": "v", "emptyDir": {}}]),
                **maybe("tolerations", [{"key": "k", "operator": "Exists"}]),
                **maybe("affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}),
                **maybe("securityContext", {"runAsUser": 1000, "runAsGroup": 1000}),
                **maybe("nodeSelector", {"zone": "a", "disk": "ssd"})}
        return {**maybe("metadata", {"labels": {"app": name}}), "spec": spec}
    tasks = [{"name": "main", "replicas": draw(st.integers(1, 2)), "template": pod("main", ["sh", "-c", command])},
             {"name": "ps", "replicas": 1, "template": pod("ps", ["sleep", "1"])}]
    return {**maybe("queue", "default"), **maybe("maxRetry", 3), **maybe("schedulerName", draw(text)),
            **maybe("minAvailable", 1), **maybe("plugins", {"svc": ["--a"], "env": []}),
            **maybe("volumes", [{"mountPath": "/data", "volumeClaimName": "pvc"}]),
            **maybe("policies", [{"event": "PodEvicted", "action": "RestartJob"}]), "tasks": tasks}


@st.composite
def patches(draw, f: dict, flows: list[dict]) -> dict:
    """A `patch.jobSpec` for flow `f`: job fields replaced (some null: kept), policies, plugins' arguments, vcjob
    volumes by mountPath, tasks by name (a new one, one without a name: refused, as two tasks are there) and in their
    pods containers (one without a name: merged when its task has one container, else refused), env, ports, mounts,
    resources, pod volumes, tolerations, sections replaced whole; strings with the placeholders it may use: the
    parameter, `{{item}}` in a loop, `{{iteration}}` in a repeat, the outputs of earlier flows (any for the exit
    handler; its own in a repeat)."""
    names = [g["name"] for g in flows]
    i = names.index(f["name"])
    readable = [n for n in names if n != "x"] if f["name"] == "x" else names[:i] + (
        [f["name"]] if "repeat" in f else [])
    holes = ["{{params.go}}", *["{{item}}"] * ("withItems" in f or "withParam" in f),
             *["{{iteration}}"] * ("repeat" in f), *[f"{{{{outputs.{n}}}}}" for n in readable]]
    text = text_with(holes)

    def some(options: dict) -> dict:
        keys = draw(st.lists(st.sampled_from(sorted(options)), max_size=3, unique=True))
        return {k: draw(options[k]) for k in keys}

    def keyed(key: str, values: list, element) -> st.SearchStrategy:
        return st.lists(st.sampled_from(values), min_size=1, max_size=2, unique=True).flatmap(
            lambda ks: st.tuples(*[element(k) for k in ks]).map(
                lambda es: [{**({key: k} if k is not None else {}), **e} for k, e in zip(ks, es)]))

    container = st.fixed_dictionaries({}, optional={
        "image": st.one_of(text, st.none()), "command": st.lists(text, min_size=1, max_size=3),
        "env": keyed("name", ["A", "C"], lambda k: st.one_of(
            text.map(lambda t: {"value": t}), st.just({"valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}))),
        "resources": st.fixed_dictionaries({}, optional={"limits": st.just({"memory": "1Gi"}),
                                                         "requests": st.just({"cpu": "3"})}),
        "ports": keyed("containerPort", [80, 81], lambda k: text.map(lambda t: {"name": "p"})),
        "volumeMounts": keyed("mountPath", ["/v", "/w"], lambda k: st.just({"name": "v", "readOnly": True})),
        "securityContext": st.just({"privileged": False})})
    pod_spec = st.fixed_dictionaries({}, optional={
        "containers": st.one_of(keyed("name", ["c", "side", "new"], lambda k: container.map(
            lambda c: c if k != "new" else {"image": "busybox:2", **c})), container.map(lambda c: [c])),
        "volumes": keyed("name", ["v", "w"], lambda k: st.just({"hostPath": {"path": "/tmp"}})),
        "tolerations": keyed("key", ["k", "k2"], lambda k: text.map(lambda t: {"operator": "Equal", "value": t})),
        "affinity": st.just({"podAffinity": {}}), "securityContext": st.just({"runAsUser": 0}),
        "nodeSelector": text.map(lambda t: {"zone": t}), "restartPolicy": st.just("OnFailure")})
    pod = st.fixed_dictionaries({}, optional={"metadata": text.map(lambda t: {"labels": {"flow": t}}),
                                              "spec": pod_spec})
    task = st.fixed_dictionaries({}, optional={"maxRetry": st.just(2), "template": pod})
    named_tasks = keyed("name", ["main", "ps", "extra"], lambda k: task if k == "ps" else st.tuples(
        task, st.booleans()).map(lambda p: {**p[0], "replicas": 2} if p[1] else p[0]))   # (ps keeps 1: probes read it)
    tasks = st.integers(0, 5).flatmap(lambda n: task.map(lambda t: [t]) if n == 0 else named_tasks)
    spec = some({"queue": st.one_of(text, st.none()), "schedulerName": text, "maxRetry": st.just(5),
                 "minAvailable": st.one_of(st.just(1), st.none()), "priorityClassName": text,
                 "policies": st.just([{"event": "PodFailed", "action": "AbortJob"}]),
                 "plugins": st.dictionaries(st.sampled_from(["svc", "ssh"]), st.lists(
                     st.sampled_from(["--a", "--b", "--c"]), max_size=3)),
                 "volumes": keyed("mountPath", ["/data", "/new"], lambda k: text.map(
                     lambda t: {"volumeClaimName": t})),
                 "tasks": tasks})
    return spec


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.booleans(), st.data())
def test_patches_merge_onto_the_job_templates_and_are_filled_in_as_documented(run, suspends, data):
    """docs/jobflow-expressions.md "Patches" and docs/jobflow-primitives.md "Templates": each vcjob's spec is its
    JobTemplate's with the flow's `patch.jobSpec` merged onto it (job fields replaced, tasks by name, volumes by
    mountPath, plugin arguments appended, pod templates merged by their keyed lists), then the placeholders filled
    in; a patch reading an output is a dependency; one that cannot be merged fails the flow — the oracle's own
    model of the rules, the JobFlow suspended and resumed at random moments."""
    flows, on_exit, attempts, outputs = run
    commands = data.draw(templates(flows))
    specs = {f["name"]: data.draw(template_specs(commands[f["name"]])) for f in flows}
    flows = [{**f, "patch": {"jobSpec": data.draw(patches(f, flows))}} if data.draw(st.booleans()) else f
             for f in flows]
    check((flows, on_exit, attempts, outputs), suspends, lambda options: data.draw(st.sampled_from(options)),
          templates=specs)



def scripted(*script: tuple[str, str]):
    """A chooser playing `script`, then the first move offered."""
    left = list(script)
    return lambda options: left.pop(0) if left else options[0]


def test_found_a_read_of_a_flow_skipped_in_the_moment_its_skip_stops_the_jobflow():
    """A random draw: f1 Failed (its `until` cannot read "a" as a number) is handled by f2 (`strategy: any`) while f0
    runs; f0 completes: f2, f3, f4 and f5 start together; f2's JobTemplate reads f1's output, so f2 is Skipped as it is
    built and the JobFlow stops; f5 reads f2's output. The engine said f5 Skipped (its reads saw f2 Skipped because f2
    came first in the spec); the docs: every vcjob of the moment reads the flows as at its start — NotCreated."""
    flows = [{"name": "f0"},
             {"name": "f1", "dependsOn": {"targets": ["f0"], "probe": {"taskStatusList": [
                 {"taskName": "ps", "phase": "Running"}]}},
              "when": "params.go == 'yes'", "repeat": {"until": "outputs.f1 >= 2", "limit": 2}},
             {"name": "f2", "dependsOn": {"targets": ["f0", "f1"], "strategy": "any"}, "when": "params.go == 'yes'"},
             {"name": "f3", "dependsOn": {"expression": "f0.Completed"}},
             {"name": "f4", "dependsOn": {"targets": ["f0"]}, "withItems": [0, 1, 2]},
             {"name": "f5", "dependsOn": {"targets": ["f0"]}, "withItems": [0, 1, 2]}]
    jobs = ["jf-f0", "jf-f1-0", "jf-f1-1", "jf-f2", "jf-f3", *(f"jf-f{n}-{i}" for n in (4, 5) for i in range(3))]
    templates = {"f0": "", "f1": "", "f2": "f0={{outputs.f0}} f1={{outputs.f1}}", "f3": "", "f4": "",
                 "f5": "f2={{outputs.f2}}"}
    for order in (flows, [*flows[:2], flows[5], *flows[2:5]]):    # (either spec order)
        check((order, None, {j: ["Completed"] for j in jobs}, {j: ["a"] for j in jobs}), False,
              scripted(("ps", "jf-f0"), ("finish", "jf-f1-0"), ("finish", "jf-f0")), templates=templates)


def test_found_the_exit_handler_reads_a_fan_out_whose_item_was_refused_as_a_list():
    """A random draw: f0's only item is refused as it is built (its patch, a task without a name, cannot be merged
    onto a JobTemplate of two tasks): f0 Failed; the exit handler reads its output — `[""]`, one entry per item (the
    oracle said "", as for a flow that never ran)."""
    spec = {"tasks": [{"name": name, "replicas": 1, "template": {"spec": {"containers": [
        {"name": "c", "image": "busybox", "command": command}], "restartPolicy": "Never"}}}
        for name, command in (("main", ["sh", "-c", "f0={{outputs.f0}}"]), ("ps", ["sleep", "1"]))]}
    flows = [{"name": "f0", "withItems": [0], "patch": {"jobSpec": {"tasks": [{}]}}}, {"name": "x", "withItems": [0]}]
    check((flows, "x", {"jf-f0-0": ["Completed"], "jf-x-0": ["Completed"]}, {"jf-x-0": ["a"]}), False,
          scripted(), templates={"f0": spec, "x": spec})


def test_found_a_dependency_found_dead_lists_every_target_dead_in_that_moment():
    """A random draw: f0 Failed (after its retry) skips f1 (its withParam reads f0), f2 and f3 in one moment; f4
    (targets f1, f2) is Skipped in the same moment. The engine, deciding f4 as soon as f2 was Skipped (f4 was queued
    before f1), said `… can no longer all be Completed: f2 Skipped`; it now decides a flow after those queued before
    it, and says `f1 Skipped, f2 Skipped`."""
    flows = [{"name": "f0", "withItems": [0], "retry": {"limit": 1, "backoff": {"duration": "1s"}}},
             {"name": "f1", "when": "params.go == 'yes'", "withParam": "{{outputs.f0}}"},
             {"name": "f2", "dependsOn": {"targets": ["f0"], "probe": {"taskStatusList": [
                 {"taskName": "ps", "phase": "Running"}]}}, "when": "params.go == 'yes'"},
             {"name": "f3", "dependsOn": {"targets": ["f0"]}, "when": "params.go == 'yes'"},
             {"name": "f4", "dependsOn": {"targets": ["f1", "f2"], "probe": {"taskStatusList": [
                 {"taskName": "nope", "phase": "Running"}]}}},
             {"name": "f5", "when": "params.go == 'yes'"}]
    jobs = ["jf-f0-0", "jf-f1-0", "jf-f1-1", "jf-f1-2", "jf-f2", "jf-f3", "jf-f4", "jf-f5"]
    attempts = {j: ["Failed" if j == "jf-f0-0" else "Completed"] for j in jobs}
    outputs = {j: ["[]" if j == "jf-f0-0" else "a"] for j in jobs}
    check((flows, None, attempts, outputs), False,
          scripted(("finish", "jf-f0-0"), ("finish", "jf-f0-0"), ("finish", "jf-f5")))


# ---- found by checking the status's words (oracle.conditions: WhenFalse, NotCreated, Waiting…) ----------------------
PS_ONLY = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}


def test_found_strategy_any_named_a_target_that_could_no_longer_complete():
    """y (`strategy: any` over b and d) waits while d runs; b was Skipped (its `when`). The engine said `waiting for
    one of jf-b, jf-d to complete`: only d can still complete."""
    flows = [{"name": "b", "when": WHEN_FALSE}, {"name": "d"}, {"name": "y", **dep(targets=["b", "d"], strategy="any")}]
    check((flows, None, {}, {}), False, scripted())


def test_found_a_probe_covering_no_task_of_its_target_said_targets_to_finish():
    """A probe whose only entry names a task its target does not have covers nothing: the target is waited for as
    Completed (the docs), and the entry says so: `waiting for probe: jf-f0 to be Completed` (it said `targets to
    finish`)."""
    flows = [{"name": "f0"}, {"name": "f4", "dependsOn": {"targets": ["f0"], "probe": {"taskStatusList": [
        {"taskName": "nope", "phase": "Running"}]}}, "withItems": []}]
    check((flows, None, {}, {}), False, scripted())


def test_found_a_probed_flow_whose_probe_held_waits_for_the_output_it_reads():
    """w's probe holds once t's ps task runs; its `when` reads o's output, o still running: `WaitingForOutput` on o —
    the engine went on saying `waiting for jf-t, jf-o: probe:t.Completed && o.Completed`, t's probe held."""
    flows = [{"name": "t"}, {"name": "o"}, {"name": "w", "dependsOn": {"targets": ["t"], "probe": PS_ONLY},
                                            "when": "outputs.o == 'a'"}]
    check((flows, None, {}, {"jf-o": ["a"]}), False, scripted(("ps", "jf-t")))


def test_found_a_probe_on_a_repeat_reads_its_next_iteration_not_its_finished_one():
    """A random draw: f0's iteration 0 completes while the JobFlow is suspended, so iteration 1 is not made yet; f1's
    probe reads the repeat's last iteration: `waiting for probe: jf-f0 to start`. The oracle said `jf-f0-0: task ps
    Running`, a finished vcjob (the engine, which read every iteration, said so too once iteration 1 ran)."""
    flows = [{"name": "f0", "repeat": {"until": "iteration >= 1", "limit": 3}},
             {"name": "f1", "dependsOn": {"targets": ["f0"], "probe": PS_ONLY}}]
    check((flows, None, {}, {}), True, scripted(("suspend", ""), ("finish", "jf-f0-0"), ("resume", ""),
                                                ("ps", "jf-f0-1")))


def test_found_not_created_named_only_the_first_failure_for_good():
    """A random draw: f0 fails and stops the JobFlow, f3 is `NotCreated`; then f1 fails too. The engine kept `not
    created: f0 failed` (a vcjob left uncreated later said `f0, f1`): every such entry now says the unhandled
    failures as they are (`not created: f0, f1 failed`), then `the JobFlow is Failed` once the exit handler ran."""
    flows = [{"name": "f0"}, {"name": "f1"}, {"name": "f2"}, {"name": "f3", **dep(targets=["f2"])}, {"name": "x"}]
    check((flows, "x", {"jf-f0": ["Failed"], "jf-f1": ["Failed"]}, {}), False,
          scripted(("finish", "jf-f0"), ("finish", "jf-f1")))


def test_found_a_vcjob_waiting_for_outputs_named_one_that_had_finished():
    """A random draw: f2's JobTemplate reads f1's and f0's outputs; once f0 finished the engine still said `the
    template reads the output of jf-f0, jf-f1: waiting for it to finish`: now jf-f1 only (in spec order)."""
    flows = [{"name": "f0"}, {"name": "f1"}, {"name": "f2"}]
    check((flows, None, {}, {}), False, scripted(("finish", "jf-f0")),
          templates={"f0": "", "f1": "", "f2": "f1={{outputs.f1}} f0={{outputs.f0}}"})


def test_found_a_handler_that_a_refused_vcjob_starts_is_built_before_the_moments_vcjobs_are_created():
    """A random draw (seed 2), in short: a's vcjob is refused as it is built (its template reads its own output), h
    (`a.Failed`) starts in that moment and is Skipped as it is built (its template reads s, Skipped): a's failure is
    unhandled. The engine had created c's vcjob, built in the same moment, before it built h's."""
    flows = [{"name": "a"}, {"name": "s", "when": WHEN_FALSE}, {"name": "h", **dep(expression="a.Failed")},
             {"name": "c"}]
    check((flows, None, {}, {}), False, scripted(), templates={"a": "{{outputs.a}}", "s": "", "h": "{{outputs.s}}",
                                                               "c": ""})


def test_found_a_dependency_found_dead_missed_a_target_whose_skip_was_marked_behind_it():
    """A random draw (seed 7), in short: b Failed (its `when` cannot read e's output as JSON); c, d and f, reading
    b's output, are Skipped in that moment, and g (targets f, c) with them. The engine said `…: c Skipped`: d's skip
    had marked f again, behind g."""
    flows = [{"name": "e"}, {"name": "b", "when": "outputs.e.k == 'a'"}, {"name": "c", "when": "outputs.b == 'a'"},
             {"name": "d", "when": "outputs.b == 'a'"}, {"name": "f", **dep(targets=["d"]), "when": "outputs.b == 'a'"},
             {"name": "g", **dep(targets=["f", "c"])}]
    check((flows, None, {}, {"jf-e": ["x"]}), False, scripted())


def test_found_a_probe_on_a_vcjob_deleted_in_its_back_off_reads_its_tasks_after_a_restart():
    """A random draw (seed 41), in short: f0's first attempt fails while the JobFlow is suspended; its vcjob is
    deleted (f1 runs on), then the controller restarts: f0 is known by its status only, its tasks by the pods its
    status counted. The harness (`finish`) counted only ps's, so the engine said f4's http probe (on task main)
    covered nothing (`jf-f0 to be Completed`); a vcjob's status counts the pods of every task that has some, as
    Volcano's does."""
    http = {"httpGetList": [{"taskName": "main", "port": 8080, "path": "/healthz"}]}
    flows = [{"name": "f0", "retry": {"limit": 1, "backoff": {"duration": "1s"}}}, {"name": "f1"},
             {"name": "f4", "dependsOn": {"targets": ["f0"], "probe": http}}]
    check((flows, None, {"jf-f0": ["Failed", "Completed"]}, {}), True,
          scripted(("suspend", ""), ("finish", "jf-f0"), ("delete", "jf-f0"), ("restart", "")), chaos=True)


def spec_key(entry: tuple[str, dict]) -> str:
    return json.dumps(entry, sort_keys=True)


def check(run: tuple, suspends: bool, choose, chaos: bool = False, templates: dict | None = None) -> None:
    flows, on_exit, attempts, outputs = run
    sim, oracle = play(flows, on_exit, attempts, choose, outputs, suspends, chaos, templates)
    assert sorted(sim.commands) == sorted(oracle.commands)
    assert sorted(sim.specs, key=spec_key) == sorted(oracle.specs, key=spec_key)
    result = oracle.result()
    assert engine_states(sim, flows) == oracle_states(result), (engine_states(sim, flows), oracle_states(result))
    for name, (message, how, *found) in result.messages.items():   # (docs/jobflow-primitives.md "Status")
        said = sim.cond(name).get("message", "")
        assert said == message if how == "whole" else said.startswith(message), (name, said, message)
        if how == "list":    # the targets found dead, maybe with others of the same moment, in their order
            listed, targets = said[len(message):].split(", "), next(f for f in flows if f["name"] == name)
            may = [f"{t} {result.states[t]}" for t in targets["dependsOn"]["targets"]]
            assert set(found[0]) <= set(listed) and listed == [w for w in may if w in listed], (name, said, found)
    assert sim.phase == result.phase, (sim.phase, oracle_states(result))
    assert set(sim.created) == result.created
    assert sim.early == [], f"created before their dependency held: {sim.early}"
    assert sim.acts.wake_at is None, "the run must end"


@settings(max_examples=150, deadline=None)
@given(runs(), st.randoms(use_true_random=False))
def test_the_oracles_phase_does_not_depend_on_the_order(run, rnd):
    # the final phase is a function of the outcomes; so are the flows' states unless an unhandled failure
    # stopped the JobFlow (what had started by then depends on the order)
    flows, on_exit, attempts, outputs = run
    first = flow_oracle.predict(flows, attempts, on_exit, GO, outputs=outputs)
    other = flow_oracle.predict(flows, attempts, on_exit, GO, pick=rnd.choice, outputs=outputs)
    assert (first.phase, first.stopped) == (other.phase, other.stopped)
    if not first.stopped:
        assert oracle_states(first) == oracle_states(other)


# ---- a plain Volcano JobFlow whose vcjobs are deleted ------------------------------------------------------


@st.composite
def plain_runs(draw):
    """Targets only (Volcano's fields): each flow's targets among the earlier ones; a vcjob Completed or Failed."""
    n = draw(st.integers(1, 6))
    flows = []
    for i in range(n):
        f: dict = {"name": f"f{i}"}
        targets = draw(st.lists(st.sampled_from([f"f{k}" for k in range(i)]), max_size=2, unique=True)) if i else []
        if targets:
            f["dependsOn"] = {"targets": targets}
        flows.append(f)
    attempts = {f"jf-{f['name']}": [draw(st.sampled_from(["Completed"] * 6 + ["Failed"]))] for f in flows}
    return flows, attempts


@settings(max_examples=120, deadline=None)
@given(plain_runs(), st.data())
def test_a_plain_jobflow_re_creates_a_completed_vcjob_a_user_deleted_as_volcano(run, data):
    """docs/differences.md: a plain JobFlow re-creates a Completed vcjob deleted while it runs (Volcano's rule),
    but not one deleted by its ttlSecondsAfterFinished, nor once the JobFlow finished; moves drawn at random."""
    flows, attempts = run
    sim, oracle = flowsim.Sim(flows), flow_oracle.Oracle(flows, attempts)
    for step in range(200):
        assert active(sim) == oracle.running, (step, sim.created, engine_states(sim, flows))
        finished = sorted(j for j in sim.jobs if j not in oracle.running)
        options = [("finish", j) for j in sorted(oracle.running)] + [("delete", j) for j in finished]
        if not oracle.running and (not finished or data.draw(st.integers(0, 2)) == 0):
            break
        move, job = data.draw(st.sampled_from(options))
        if move == "finish":
            finish(sim, job, oracle.next_phase(job), "")
            oracle.finish(job)
            continue
        ttl = data.draw(st.booleans())
        if ttl:   # the version it was deleted in, as its TTL deletes it
            sim.jobs[job] = {**sim.jobs[job], "spec": {**sim.jobs[job]["spec"], "ttlSecondsAfterFinished": 0}}
            sim.eng.observe(job, sim.jobs[job], sim.now)
        del sim.jobs[job]
        sim.eng.observe(job, None, sim.now)
        sim.step()
        oracle.delete(job, ttl, plain=True)
    result = oracle.result()
    assert engine_states(sim, flows) == oracle_states(result)
    assert sim.phase == result.phase


# ---- `when` over JSON outputs ------------------------------------------------------------------------------

SCALARS = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 2.5]), st.sampled_from(["a", "1", "0.9", "x", ""]),
                    st.booleans(), st.none())
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["acc", "k", "0"]), inner, max_size=3)),
    max_leaves=6)


@st.composite
def json_whens(draw) -> str:
    path = ".".join(draw(st.lists(st.sampled_from(["acc", "k", "0", "1"]), min_size=1, max_size=2)))
    op = draw(st.sampled_from(["==", "!=", ">=", "<", ">"]))
    literal = draw(st.sampled_from(["1", "0.9", "-1", "'a'", "'1'", "''"]) if op in ("==", "!=")
                   else st.sampled_from(["1", "0.9", "-1"]))
    return f"outputs.a.{path} {op} {literal}"


@settings(max_examples=200, deadline=None)
@given(st.one_of(JSON.map(json.dumps), st.sampled_from(["x", "", " [1, 2] "])), json_whens(), st.booleans())
def test_a_when_over_a_json_output_runs_skips_or_fails_as_the_docs_say(output, when, handled):
    """docs/jobflow-expressions.md: `outputs.<flow>.<field>.<index>…` is the output parsed as JSON, then fields
    and list indexes; a string compared with a number is read as one; a missing field, an output that is not
    JSON or mixed types are errors, which fail the flow (InvalidCondition) — handled here or not."""
    flows = [{"name": "a"}, {"name": "b", "when": when}]
    if handled:
        flows.append({"name": "h", "dependsOn": {"expression": "b.Failed || b.Skipped || b.Completed"}})
    oracle = flow_oracle.Oracle(flows, {}, outputs={"jf-a": [output]})
    sim = flowsim.Sim(flows)
    finish(sim, "jf-a", "Completed", output)
    oracle.finish("jf-a")
    while oracle.running:
        job = min(oracle.running)
        finish(sim, job, "Completed", "")
        oracle.finish(job)
    result = oracle.result()
    assert (engine_states(sim, flows), sim.phase) == (oracle_states(result), result.phase), sim.cond("b")
