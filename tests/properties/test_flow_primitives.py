"""Random JobFlows using every dependency kind (targets all/any, expressions, probes, `when`, fan-outs,
repeat, retry, an exit handler) with random job outcomes, through the engine as the controller drives
it. Properties: no vcjob is created before its flow's dependency holds; no flow whose `when` is false
runs; every run ends (the JobFlow is Succeed or Failed once no job is left running); a controller
rebuilt from the status and the vcjobs computes the same status."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from tests import flowsim
from vclite.api import flowexpr

OUTCOMES = ["Completed", "Failed", "Terminated"]


@st.composite
def expressions(draw, names: list[str], depth: int = 0):
    if depth > 1 or draw(st.booleans()):
        outcome = draw(st.sampled_from(["Completed", "Failed", "Finished", "Skipped", "AnyCompleted", "AllFailed"]))
        return f"{draw(st.sampled_from(names))}.{outcome}"
    op = draw(st.sampled_from([" && ", " || "]))
    left, right = draw(expressions(names, depth + 1)), draw(expressions(names, depth + 1))
    text = f"({left}{op}{right})"
    return f"!{text}" if draw(st.integers(0, 4)) == 0 else text


@st.composite
def jobflows(draw):
    n = draw(st.integers(1, 6))
    names = [f"f{i}" for i in range(n)]
    flows = []
    for i, name in enumerate(names):
        f: dict = {"name": name}
        earlier = names[:i]
        kind = draw(st.sampled_from(["none", "all", "any", "expression", "probe"])) if earlier else "none"
        if kind in ("all", "any", "probe"):
            targets = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3, unique=True))
            f["dependsOn"] = {"targets": targets}
            if kind == "any":
                f["dependsOn"]["strategy"] = "any"
            if kind == "probe":
                f["dependsOn"]["probe"] = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}
        elif kind == "expression":
            f["dependsOn"] = {"expression": draw(expressions(earlier))}
        if draw(st.integers(0, 4)) == 0:
            f["when"] = draw(st.sampled_from(["params.go == 'yes'", "params.go != 'yes'"]))
        loop = draw(st.sampled_from(["", "", "", "items", "repeat"]))
        if loop == "items":
            f["withItems"] = list(range(draw(st.integers(0, 3))))
        elif loop == "repeat":
            f["repeat"] = {"until": f"iteration >= {draw(st.integers(0, 2))}", "limit": draw(st.integers(1, 3))}
        if draw(st.integers(0, 3)) == 0:
            f["retry"] = {"limit": draw(st.integers(1, 2)), "backoff": {"duration": "1s"}}
        flows.append(f)
    spec = {"arguments": {"parameters": [{"name": "go", "value": "yes"}]}}
    if draw(st.booleans()):
        flows.append({"name": "exit"})
        spec["onExit"] = "exit"
    return flows, spec


def active(sim: flowsim.Sim) -> list[str]:
    return sorted(n for n, j in sim.jobs.items() if j["status"]["state"]["phase"] in ("Pending", "Running"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobflows(), st.data())
def test_random_flows_respect_dependencies_and_end(flow_spec, data):
    flows, spec = flow_spec
    sim = flowsim.Sim(flows, **spec)
    for _ in range(200):
        running = active(sim)
        if not running:
            if sim.acts.wake_at is None:
                break
            sim.advance((sim.acts.wake_at - sim.now).total_seconds())
            continue
        name = data.draw(st.sampled_from(running))
        if data.draw(st.integers(0, 3)) == 0 and sim.jobs[name]["status"]["state"]["phase"] == "Pending":
            sim.set(name, "Running", tasks={"ps": {"phase": {"Running": 1}}})   # a probe target's ps is up
            continue
        sim.finish(name, data.draw(st.sampled_from(OUTCOMES)))
        if data.draw(st.integers(0, 4)) == 0:
            assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)
    assert not active(sim) and sim.acts.wake_at is None, "the run must end"
    assert sim.phase in ("Succeed", "Failed"), (sim.phase, sim.status.get("conditions"))
    assert sim.early == [], f"created before their dependency held: {sim.early}"
    for f in flows:
        if f.get("when") == "params.go != 'yes'":
            assert not [c for c in sim.created if c == f"jf-{f['name']}" or c.startswith(f"jf-{f['name']}-")]
    assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)
    if sim.phase == "Succeed":
        assert not sim.status.get("failedJobs") or all(
            sim.eng.flows[n].final in ("Completed", "Skipped") or n not in sim.eng.unhandled
            for n in sim.eng.flows), "a Succeeded JobFlow has no unhandled failure"
    exit_flow = spec.get("onExit")
    if exit_flow and f"jf-{exit_flow}" in sim.created:
        first_exit = sim.created.index(f"jf-{exit_flow}")
        assert all(c == f"jf-{exit_flow}" for c in sim.created[first_exit:]), "the exit handler runs last"


def test_expression_strategy_draws_parse():
    # the generator's expressions are valid for the parser (a guard on the property's input)
    assert flowexpr.parse_depends("!(f0.Completed || f1.AllFailed)")
