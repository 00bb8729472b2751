"""The JobFlow engine against an oracle written from the docs (tests/flow_oracle.py): random DAGs of
targets (all/any), expressions over every outcome, `when`, fan-outs, retries and an exit handler, with
predetermined job outcomes, played in a random order through the engine as the controller drives it
(tests/flowsim.py). At every step the same vcjobs run; at the end every flow has the same state (and a
Skipped flow the same reason) and the JobFlow the same phase; no vcjob was created before its dependency
held. The oracle's own rows come from the docs' examples."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests import flow_oracle, flowsim

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


@st.composite
def runs(draw):
    """(flows, onExit, attempts): every vcjob fails 0-2 times (Failed or Terminated), then ends as drawn."""
    n = draw(st.integers(1, 7))
    names = [f"f{i}" for i in range(n)]
    flows = []
    for i, name in enumerate(names):
        f: dict = {"name": name}
        earlier = names[:i]
        kind = draw(st.sampled_from(["none", "all", "any", "expression"])) if earlier else "none"
        if kind in ("all", "any"):
            f.update(dep(targets=draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3, unique=True))))
            if kind == "any":
                f["dependsOn"]["strategy"] = "any"
        elif kind == "expression":
            f.update(dep(expression=draw(expressions(earlier))))
        if draw(st.integers(0, 4)) == 0:
            f["when"] = draw(st.sampled_from([WHEN_TRUE, WHEN_FALSE]))
        if draw(st.integers(0, 3)) == 0:
            f["withItems"] = list(range(draw(st.integers(0, 3))))
        if draw(st.integers(0, 3)) == 0:
            f["retry"] = {"limit": draw(st.integers(1, 2)), "backoff": {"duration": "1s"}}
        flows.append(f)
    on_exit = None
    if draw(st.booleans()):
        x: dict = {"name": "x"}
        if draw(st.integers(0, 4)) == 0:
            x["when"] = draw(st.sampled_from([WHEN_TRUE, WHEN_FALSE]))
        if draw(st.integers(0, 3)) == 0:
            x["retry"] = {"limit": 1, "backoff": {"duration": "1s"}}
        if draw(st.integers(0, 4)) == 0:
            x["withItems"] = list(range(draw(st.integers(0, 2))))
        flows.append(x)
        on_exit = "x"
    attempts = {}
    for f in flows:
        jobs = [f"jf-{f['name']}"] if "withItems" not in f else [f"jf-{f['name']}-{i}" for i in f["withItems"]]
        for job in jobs:
            failures = draw(st.lists(st.sampled_from(["Failed", "Terminated"]), max_size=2))
            attempts[job] = [*failures, draw(st.sampled_from(["Completed", "Completed", "Failed", "Terminated"]))]
    return flows, on_exit, attempts


def active(sim: flowsim.Sim) -> set[str]:
    return {n for n, j in sim.jobs.items() if j["status"]["state"]["phase"] in ("Pending", "Running")}


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


def play(flows: list[dict], on_exit: str | None, attempts: dict, choose) -> tuple[flowsim.Sim, flow_oracle.Oracle]:
    """Both run the same vcjobs at every step; `choose` picks which running vcjob ends next."""
    spec = {"arguments": {"parameters": [{"name": "go", "value": "yes"}]}}
    if on_exit:
        spec["onExit"] = on_exit
    sim = flowsim.Sim(flows, **spec)
    oracle = flow_oracle.Oracle(flows, attempts, on_exit, GO)
    for step in range(200):
        assert active(sim) == oracle.running, (step, sim.created, engine_states(sim, flows))
        if not oracle.running:
            return sim, oracle
        job = choose(sorted(oracle.running))
        sim.finish(job, oracle.next_phase(job))
        for _ in range(5):                       # a retry: the back-off passes, the vcjob is created again
            if job in active(sim) or sim.acts.wake_at is None:
                break
            sim.advance((sim.acts.wake_at - sim.now).total_seconds())
        oracle.finish(job)
    raise AssertionError("the run does not end")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), st.data())
def test_the_engine_runs_skips_and_ends_as_the_oracle_says(run, data):
    flows, on_exit, attempts = run
    sim, oracle = play(flows, on_exit, attempts, lambda running: data.draw(st.sampled_from(running)))
    result = oracle.result()
    assert engine_states(sim, flows) == oracle_states(result)
    assert sim.phase == result.phase, (sim.phase, oracle_states(result))
    assert set(sim.created) == result.created
    assert sim.early == [], f"created before their dependency held: {sim.early}"
    assert sim.acts.wake_at is None, "the run must end"


@settings(max_examples=150, deadline=None)
@given(runs(), st.randoms(use_true_random=False))
def test_the_oracles_phase_does_not_depend_on_the_order(run, rnd):
    # the final phase is a function of the outcomes; so are the flows' states unless an unhandled failure
    # stopped the JobFlow (what had started by then depends on the order)
    flows, on_exit, attempts = run
    first = flow_oracle.predict(flows, attempts, on_exit, GO)
    other = flow_oracle.predict(flows, attempts, on_exit, GO, pick=rnd.choice)
    assert (first.phase, first.stopped) == (other.phase, other.stopped)
    if not first.stopped:
        assert oracle_states(first) == oracle_states(other)
