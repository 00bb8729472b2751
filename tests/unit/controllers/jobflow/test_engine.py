"""The JobFlow engine's rules, as tables: when a flow starts, is Skipped, fails; when the JobFlow
Succeeds or Fails with skipped and handled-failure flows; loops, retries, the exit handler, suspend.

Each script: the flows (and spec extras), then steps `(action, expected vcjobs created so far, expected
JobFlow phase)`. Actions: ("done", job, phase[, output]) plays the vcjob controller; ("wait", s)
advances the clock; ("resume",) clears suspension. Names are without the `jf-` prefix.
"""
from __future__ import annotations

import datetime as dt
import json

import pytest

from tests import flowsim
from vclite.api import flowexpr, flowsyntax, flowtemplate
from vclite.controllers.jobflow import engine, outputs, readiness
from vclite.lib import clock as clock_mod


def fl(name, *targets, **extra):
    f = {"name": name, **extra}
    if targets:
        f["dependsOn"] = {"targets": list(targets)}
    return f


def expr(name, text, **extra):
    return {"name": name, "dependsOn": {"expression": text}, **extra}


def anyof(name, *targets):
    return {"name": name, "dependsOn": {"targets": list(targets), "strategy": "any"}}


def run(flows, steps, **spec):
    sim = flowsim.Sim(flows, **spec)
    for action, created, phase in steps:
        if action[0] == "done":
            sim.finish("jf-" + action[1], action[2], *action[3:])
        elif action[0] == "wait":
            sim.advance(action[1])
        elif action[0] == "resume":
            sim.eng.set_meta(flowsim.jobflow(flows))
            sim.step()
        assert [c.removeprefix("jf-") for c in sim.created] == created, action
        assert sim.phase == phase, action
        assert not sim.early, "a vcjob was created before its dependency held"
    return sim


C, F, T = "Completed", "Failed", "Terminated"

# ---- when a JobFlow Succeeds or Fails ------------------------------------------------------------------
RULES = [
    pytest.param([fl("a"), fl("b", "a"), fl("c"), fl("d", "c")], [
        (("start",), ["a", "c"], "Pending"),
        (("done", "a", F), ["a", "c"], "Failed"),
        (("done", "c", C), ["a", "c"], "Failed"),
    ], {"b": "DependencyNeverMet", "d": "NotCreated"}, id="plain-failure-fails-the-flow-and-nothing-starts"),
    # a dependency that can never hold says so even once the JobFlow has stopped (b), while a flow that
    # could still have run is NotCreated (d, ready after the failure)
    pytest.param([fl("a"), fl("c"), fl("d", "c")], [
        (("start",), ["a", "c"], "Pending"),
        (("done", "a", F), ["a", "c"], "Failed"),
        (("done", "c", F), ["a", "c"], "Failed"),
    ], {"d": "DependencyNeverMet"}, id="a-dependency-found-false-after-the-jobflow-failed-skips"),
    pytest.param([fl("e"), fl("a"), fl("c"), fl("d", "c")], [
        (("start",), ["a", "c"], "Pending"),
        (("done", "a", F), ["a", "c"], "Running"),
        (("done", "c", F), ["a", "c", "e"], "Running"),
        (("done", "e", C), ["a", "c", "e"], "Failed"),
    ], {"d": "DependencyNeverMet"}, id="the-same-with-an-exit-handler"),
    # (both ways: d's target failed after a's unhandled failure stopped the JobFlow; the JobFlow being
    # Failed already, without an exit handler, once left d NotCreated)
    pytest.param([fl("a"), fl("c", retry={"limit": 2}), fl("d", "c")], [
        (("start",), ["a", "c"], "Pending"),
        (("done", "a", F), ["a", "c"], "Failed"),
        (("done", "c", F), ["a", "c"], "Failed"),
    ], {"c": "NotRetried", "d": "DependencyNeverMet"}, id="a-failure-not-retried-after-the-stop-is-the-outcome"),
    pytest.param([fl("a"), fl("c", retry={"limit": 2, "backoff": {"duration": "5s"}}), fl("d", "c")], [
        (("start",), ["a", "c"], "Pending"),
        (("done", "c", F), ["a", "c"], "Running"),
        (("done", "a", F), ["a", "c"], "Failed"),
    ], {"c": "NotRetried", "d": "DependencyNeverMet"}, id="a-retry-waiting-when-the-jobflow-stops-is-the-outcome"),
    # (a retry that will not start leaves the failure as the flow's outcome: its dependents are decided;
    # they once stayed NotCreated, the flow having no outcome)
    *[pytest.param(flows, [
        (("start",), ["a", "c"], "Pending"),
        (("done", "a", F), ["a", "c"], "Running"),
        (("done", "c", C), ["a", "c"], "Failed"),
    ], {"b": "NotCreated", "h": "DependencyNeverMet"}, id=f"the-failure-wins-over-{what}-{order}")
      for what, b in [("an-empty-fan-out", fl("b", "c", withItems=[])),
                      ("a-false-when", fl("b", "c", when="params.go == 'yes'"))]
      for order, flows in [("before", [fl("a"), fl("c"), b, expr("h", "a.Failed && c.Failed")]),
                           ("after", [fl("a"), fl("c"), expr("h", "a.Failed && c.Failed"), b])]],
    # (c's completion skips h, a's only handler, and makes b ready: nothing starts — not even a fan-out of no
    # items — and b's `when` is not looked at, whatever the spec order; b before h once Completed or WhenFalse)
    pytest.param([fl("a"), fl("b"), anyof("c", "a", "b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "c"], "Running"),
        (("done", "c", C), ["a", "b", "c"], "Succeed"),
    ], {}, id="any-one-failure-is-handled-by-the-other-target"),
    pytest.param([fl("a"), fl("b"), anyof("c", "a", "b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", F), ["a", "b"], "Failed"),
    ], {"c": "DependencyNeverMet"}, id="any-both-fail-fails"),
    pytest.param([fl("a"), expr("h", "a.Failed")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F), ["a", "h"], "Running"),
        (("done", "h", C), ["a", "h"], "Succeed"),
    ], {}, id="expression-accepting-failed-handles-it"),
    pytest.param([fl("a"), expr("x", "a.Completed")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F), ["a"], "Failed"),
    ], {"x": "DependencyNeverMet"}, id="expression-not-accepting-failed"),
    pytest.param([fl("a"), expr("c", "a.Finished")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", T), ["a", "c"], "Running"),
        (("done", "c", C), ["a", "c"], "Succeed"),
    ], {}, id="finished-accepts-terminated"),
    pytest.param([fl("a"), fl("b"), expr("c", "a.Failed && b.Completed")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", F), ["a", "b"], "Failed"),
    ], {"c": "DependencyNeverMet"}, id="a-failure-no-reader-accepts-fails"),
    pytest.param([fl("a"), fl("x"), fl("b", "x", when="params.go == 'yes'"), expr("c", "a.Failed && b.Completed")], [
        (("start",), ["a", "x"], "Pending"),
        (("done", "a", F), ["a", "x"], "Running"),
        (("done", "x", C), ["a", "x"], "Failed"),
    ], {"b": "WhenFalse", "c": "DependencyNeverMet"}, id="handled-until-its-reader-is-skipped"),
    pytest.param([fl("a", when="params.go == 'yes'"), fl("b", "a"), expr("c", "a.Skipped")], [
        (("start",), ["c"], "Pending"),
        (("done", "c", C), ["c"], "Succeed"),
    ], {"a": "WhenFalse", "b": "DependencyNeverMet"}, id="skipped-propagates-and-succeeds"),
    pytest.param([fl("a"), expr("b", "a.Completed && !a.Completed")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a"], "Succeed"),
    ], {"b": "DependencyNeverMet"}, id="contradiction-skipped-once-decided"),
    # reading a flow's output needs it Completed (as Argo): a failure is not handled by a read
    pytest.param([fl("a"), fl("b", withParam="{{outputs.a}}")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F, "[1]"), ["a"], "Failed"),
    ], {"b": "DependencyNeverMet"}, id="reading-a-failed-output-does-not-handle-it"),
    pytest.param([fl("a", when="params.go == 'yes'"), fl("b", when="outputs.a == ''")], [
        (("start",), [], "Succeed"),
    ], {"a": "WhenFalse", "b": "DependencyNeverMet"}, id="reading-a-skipped-output-skips"),
    pytest.param([fl("a"), expr("b", "a.Finished", when="outputs.a != 'x'")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F, "partial"), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b"], "Succeed"),
    ], {}, id="an-expression-accepting-failure-may-read-its-output"),
    pytest.param([fl("e"), fl("a"), fl("b", "a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F), ["a", "e"], "Running"),
        (("done", "e", C), ["a", "e"], "Failed"),
    ], {"b": "DependencyNeverMet"}, id="exit-handler-runs-after-a-failure"),
    pytest.param([fl("e"), fl("a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a", "e"], "Running"),
        (("done", "e", C), ["a", "e"], "Succeed"),
    ], {}, id="exit-handler-runs-after-success"),
    pytest.param([fl("e"), fl("a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a", "e"], "Running"),
        (("done", "e", F), ["a", "e"], "Failed"),
    ], {}, id="exit-handler-failure-fails-the-flow"),
    pytest.param([fl("e"), fl("a"), fl("b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "e"], "Running"),
        (("done", "e", C), ["a", "b", "e"], "Failed"),
    ], {}, id="exit-handler-waits-for-running-jobs"),
    # the exit handler may read other flows' outputs: they are final when it runs, whatever the outcome
    pytest.param([fl("e", when='outputs.a == "" || true'), fl("a"), fl("b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "e"], "Running"),
        (("done", "e", C), ["a", "b", "e"], "Failed"),
    ], {}, id="exit-handler-reading-a-failed-flows-output-still-runs"),
    pytest.param([fl("e", when='outputs.a == "x"'), fl("a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a"], "Succeed"),
    ], {"e": "WhenFalse"}, id="exit-handler-whose-when-is-false-is-skipped"),
    # ... and after a stop, a flow that never ran (NotCreated) reads as "" (it was an error: no output)
    pytest.param([fl("e", when="outputs.c == ''"), fl("a"), fl("b"), fl("c", "b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "e"], "Running"),
        (("done", "e", C), ["a", "b", "e"], "Failed"),
    ], {"c": "NotCreated"}, id="exit-handler-reads-a-flow-not-created-as-empty"),
    pytest.param([fl("e", when="outputs.c == 'x'"), fl("a"), fl("b"), fl("c", "b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b"], "Failed"),
    ], {"e": "WhenFalse", "c": "NotCreated"}, id="exit-handler-reading-a-flow-not-created-may-be-skipped"),
    # the exit handler reads the other flows' outcomes: `when` runs it only if something did not complete
    pytest.param([fl("e", when='outcomes.a != "Completed" || outcomes.c != "Completed"'), fl("a"), fl("b"),
                  fl("c", "b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "e"], "Running"),
        (("done", "e", C), ["a", "b", "e"], "Failed"),
    ], {"c": "NotCreated"}, id="exit-handler-reading-outcomes-runs-after-a-failure"),
    pytest.param([fl("e", when='outcomes.a != "Completed"'), fl("a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a"], "Succeed"),
    ], {"e": "WhenFalse"}, id="exit-handler-reading-outcomes-is-skipped-after-success"),
    # … and the whole JobFlow's, as Argo's {{workflow.status}} / {{workflow.failures}}
    pytest.param([fl("e", when='workflow.status == "Failed"'), fl("a"), fl("b")], [
        (("start",), ["a", "b"], "Pending"),
        (("done", "a", F), ["a", "b"], "Running"),
        (("done", "b", C), ["a", "b", "e"], "Running"),
        (("done", "e", C), ["a", "b", "e"], "Failed"),
    ], {}, id="exit-handler-reading-workflow-status-runs-after-a-failure"),
    pytest.param([fl("e", when='workflow.status == "Failed"'), fl("a")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", C), ["a"], "Succeed"),
    ], {"e": "WhenFalse"}, id="exit-handler-reading-workflow-status-is-skipped-after-success"),
    pytest.param([fl("e", when="len(workflow.failures) > 0"), fl("a"), expr("h", "a.Failed")], [
        (("start",), ["a"], "Pending"),
        (("done", "a", F), ["a", "h"], "Running"),
        (("done", "h", C), ["a", "h", "e"], "Running"),
        (("done", "e", C), ["a", "h", "e"], "Succeed"),
    ], {}, id="a-handled-failure-is-among-the-failures-of-a-succeeding-jobflow"),
]


@pytest.mark.parametrize("flows, steps, reasons", RULES)
def test_succeed_fail_skip_rules(flows, steps, reasons):
    spec = {"onExit": "e"} if flows and flows[0]["name"] == "e" else {}
    if any("params." in str(f.get("when", "")) for f in flows):
        spec["arguments"] = {"parameters": [{"name": "go", "value": "no"}]}
    sim = run(flows, steps, **spec)
    assert {k: sim.reason(k) for k in reasons} == reasons


@pytest.mark.parametrize("reader, message", [
    pytest.param(fl("b", when="outputs.a == ''"),
                 "it reads the output of a Skipped: an output is read only from a Completed flow", id="when"),
    pytest.param(fl("b", "x", withParam="{{outputs.a}}"),
                 "it reads the output of a Skipped: an output is read only from a Completed flow", id="withParam"),
    pytest.param(expr("b", "a.Completed"), "dependsOn.expression a.Completed can never hold: a Skipped",
                 id="expression"),
])
def test_a_skip_message_names_the_output_read_from_a_flow_that_did_not_complete(reader, message):
    sim = flowsim.Sim([fl("a", when="params.go == 'yes'"), fl("x"), reader],
                      arguments={"parameters": [{"name": "go", "value": "no"}]})
    sim.finish("jf-x", C)
    assert sim.cond("b") == {"phase": "Skipped", "reason": "DependencyNeverMet", "message": message}


@pytest.mark.parametrize("finish, values", [
    pytest.param([("a", F), ("b", C)], {"outputs.c": "", "outputs.b": "b-out", "outputs.a": "a-out"},
                 id="after-a-stop-a-flow-not-created-reads-empty"),
    pytest.param([("b", C), ("c", C), ("a", C)], {"outputs.c": "c-out", "outputs.b": "b-out", "outputs.a": "a-out"},
                 id="after-success"),
])
def test_the_exit_handlers_template_reads_final_outputs_without_waiting(finish, values):
    """The exit handler's JobTemplate reading {{outputs.c}} of a flow left NotCreated by a stop: "" (it used
    to wait for it — for ever: c never runs)."""
    sim = flowsim.Sim([fl("e"), fl("a"), fl("b"), fl("c", "b")], onExit="e")
    for job, phase in finish:
        sim.finish("jf-" + job, phase, f"{job}-out")
    got, waiting = sim.eng.values_for(sim.eng.flows["e"].insts[0], sorted(values))
    assert ({k: got[k] for k in values} if got else got, waiting) == (values, [])


@pytest.mark.parametrize("finish, output", [
    pytest.param([("bad", F), ("t-0", C, "it0")], "it0", id="a-stop-left-iteration-1-not-created"),
    pytest.param([("t-0", C, "it0"), ("t-1", C, "it1"), ("bad", C)], "it1", id="until-held"),
    pytest.param([("bad", F)], "", id="iteration-0-still-running"),
])
def test_a_repeats_output_is_its_last_iteration_that_ran(finish, output):
    """docs/jobflow-primitives.md: a repeat's output is its last iteration's, and a flow that did not complete
    reads as its last vcjob's message. An iteration a stop left uncreated is no vcjob: it used to read as ""."""
    sim = flowsim.Sim([fl("e"), fl("bad"), fl("t", repeat={"until": "iteration >= 1", "limit": 3})], onExit="e")
    for job, phase, *out in finish:
        sim.finish("jf-" + job, phase, *out)
    assert sim.eng.output_of("t") == output


@pytest.mark.parametrize("reader, readable", [
    pytest.param(anyof("c", "a", "b"), False, id="a-target-of-strategy-any-must-complete"),
    pytest.param(expr("c", "a.Finished && b.Completed"), True, id="an-expression-naming-it-accepts-any-outcome"),
    pytest.param(expr("c", "b.Completed"), False, id="an-expression-not-naming-it"),
])
def test_a_template_reads_an_output_only_from_a_completed_flow_unless_its_expression_names_it(reader, readable):
    """docs/jobflow-expressions.md: to read the output of a flow whatever its outcome, name it in the
    expression. A JobTemplate's read follows the rule of a `when` or a patch: a target of `strategy: any`
    that Failed is not read (the template read it, where a `when` reading it skipped the flow)."""
    sim = flowsim.Sim([fl("a"), fl("b"), expr("h", "a.Failed"), reader])   # (h handles a's failure)
    sim.finish("jf-a", F, "a-out")
    sim.finish("jf-b", C, "b-out")
    values, waiting = sim.eng.values_for(sim.eng.flows["c"].insts[0], ["outputs.a"])
    assert (values["outputs.a"] if values else None, waiting) == ("a-out" if readable else None, [])


def test_every_rule_in_the_docs_has_a_row():
    ids = {p.id for p in RULES}
    assert {"plain-failure-fails-the-flow-and-nothing-starts", "expression-accepting-failed-handles-it",
            "handled-until-its-reader-is-skipped", "skipped-propagates-and-succeeds",
            "exit-handler-runs-after-a-failure"} <= ids


def test_the_exit_handler_says_what_it_waits_for():
    sim = flowsim.Sim([fl("e"), fl("a"), fl("b"), fl("c", "a")], onExit="e")
    waits = "the exit handler runs once every other flow has finished: "
    assert sim.cond("e")["message"] == waits + "waiting for jf-a, jf-b, jf-c"
    sim.finish("jf-a", C)
    assert sim.cond("e")["message"] == waits + "waiting for jf-b, jf-c"
    sim.finish("jf-b", F)          # unhandled: nothing new starts; the exit handler waits for running jobs
    assert sim.cond("e")["message"] == "the exit handler runs once the running jobs have finished (1 still running)"
    sim.finish("jf-c", C)
    assert sim.created[-1] == "jf-e"


@pytest.mark.parametrize("finish, message", [
    pytest.param([("jf-a", C), ("jf-b", C)], "exit handler: the JobFlow succeeds (Succeed) if it completes",
                 id="nothing-failed"),
    pytest.param([("jf-a", F), ("jf-b", F)], "exit handler: the JobFlow is Failed once it has run (a, b "
                 "failed)", id="failures-decided-the-outcome"),
])
def test_the_running_exit_handler_says_what_the_jobflow_becomes(finish, message):
    """`describe` while the handler runs: the JobFlow is Running either way; its outcome may be decided already."""
    sim = flowsim.Sim([fl("e"), fl("a"), fl("b")], onExit="e")
    for job, phase in finish:
        sim.finish(job, phase)
    sim.set("jf-e", "Running")
    assert (sim.phase, sim.cond("e")["phase"], sim.cond("e").get("message")) == ("Running", "Running", message)
    assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)   # (a restart says the same)
    sim.finish("jf-e", C)
    assert "message" not in sim.cond("e")


def test_the_exit_handler_of_a_wide_flow_counts_what_it_waits_for():
    sim = flowsim.Sim([fl("e"), *(fl(f"f{i}", "x") for i in range(30)), fl("x")], onExit="e")
    assert sim.cond("e")["message"] == "the exit handler runs once every other flow has finished: 31 still to finish"


# ---- loops ---------------------------------------------------------------------------------------------------
def test_a_fan_out_counts_its_items_waiting_to_retry():
    sim = flowsim.Sim([fl("f", withItems=["x", "y", "z"], retry={"limit": 1, "backoff": {"duration": "5s"}})])
    sim.finish("jf-f-0", C)
    sim.finish("jf-f-1", F)
    assert sim.cond("f")["message"] == "3 items: 1 Completed, 1 retrying, 1 in progress"


@pytest.mark.parametrize("ends, message", [
    ([], "4 items: 4 in progress"),
    ([("jf-f-0", C)], "4 items: 1 Completed, 3 in progress"),
    ([("jf-f-0", C), ("jf-f-1", F)], "4 items: 1 Completed, 1 Failed, 2 in progress"),
    ([("jf-f-0", C), ("jf-f-1", F), ("jf-f-2", C), ("jf-f-3", C)], "4 items: 3 Completed, 1 Failed"),
], ids=["none-finished", "one-completed", "one-failed", "all-finished"])
def test_a_fan_outs_message_counts_the_items_still_in_progress(ends, message):
    """While a loop runs, its condition says how many items have not finished, not only those that have."""
    sim = flowsim.Sim([fl("f", withItems=["w", "x", "y", "z"]), fl("after", "f")])
    for name, phase in ends:
        sim.finish(name, phase)
    assert sim.cond("f")["message"] == message


def test_fan_out_all_waits_for_every_item():
    sim = run([fl("f", withItems=["x", "y", "z"]), fl("d", "f")], [
        (("start",), ["f-0", "f-1", "f-2"], "Pending"),
        (("done", "f-0", C), ["f-0", "f-1", "f-2"], "Running"),
        (("done", "f-1", C), ["f-0", "f-1", "f-2"], "Running"),
        (("done", "f-2", C), ["f-0", "f-1", "f-2", "d"], "Running"),
    ])
    assert sim.cond("f") == {"phase": "Completed", "reason": "FanOut", "message": "3 items: 3 Completed", "items": 3}
    assert "jf-f" not in sim.status["completedJobs"], "the flow-level entry is no vcjob: not listed"


def test_fan_out_any_starts_after_the_first_item():
    run([fl("f", withItems=[1, 2]), anyof("d", "f")], [
        (("start",), ["f-0", "f-1"], "Pending"),
        (("done", "f-1", C), ["f-0", "f-1", "d"], "Running"),
    ])


def test_fan_out_item_failure_fails_the_flow_once_every_item_finished():
    sim = run([fl("f", withItems=[1, 2]), fl("d", "f")], [
        (("start",), ["f-0", "f-1"], "Pending"),
        (("done", "f-0", F), ["f-0", "f-1"], "Running"),
        (("done", "f-1", C), ["f-0", "f-1"], "Failed"),
    ])
    assert sim.eng.flows["f"].facts >= {"Failed", "AnyCompleted", "AnyFailed", "Finished"}


@pytest.mark.parametrize("output, created, phase, reason", [
    pytest.param('["a", "b"]', ["src", "f-0", "f-1"], "Running", "FanOut", id="json-list"),
    pytest.param("[]", ["src", "d"], "Running", "NoItems", id="empty-list-completes"),
    pytest.param("not json", ["src"], "Failed", "InvalidParam", id="not-json"),
    pytest.param('{"a": 1}', ["src"], "Failed", "InvalidParam", id="not-a-list"),
    pytest.param("", ["src"], "Failed", "InvalidParam", id="no-output"),
])
def test_with_param(output, created, phase, reason):
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam="{{outputs.src}}"), fl("d", "f")])
    sim.finish("jf-src", C, output)
    assert [c.removeprefix("jf-") for c in sim.created] == created
    assert (sim.phase, sim.reason("f")) == (phase, reason)


@pytest.mark.parametrize("output, message", [
    pytest.param("[1, 2", "withParam of flow f (the output of flow src): not a JSON list (Expecting ',' delimiter: "
                 "line 1 column 6 (char 5)): '[1, 2'", id="malformed"),
    pytest.param("", "withParam of flow f (the output of flow src): the output is empty, not a JSON list (did the "
                 "pod write its list to $TERMINATION_MESSAGE_PATH?)", id="no-output"),
])
def test_a_with_param_that_is_no_list_names_the_flow_it_came_from(output, message):
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam="{{outputs.src}}")])
    sim.finish("jf-src", C, output)
    assert sim.cond("f") == {"phase": "Failed", "reason": "InvalidParam", "message": message}


@pytest.mark.parametrize("param, output, created, message", [
    pytest.param("{{outputs.src.items}}", '{"items": [{"n": 1}, {"n": 2}], "total": 2}', ["src", "f-0", "f-1"], "",
                 id="list-under-a-field"),
    pytest.param("{{ outputs.src.runs.1 }}", '{"runs": [["a"], ["b", "c", "d"]]}', ["src", "f-0", "f-1", "f-2"], "",
                 id="nested-index"),
    pytest.param("{{outputs.src.itemz}}", '{"items": [1]}', ["src"],
                 "withParam of flow f (the output of flow src): outputs.src has no field 'itemz' (object; its "
                 "fields: items)", id="missing-field"),
    pytest.param("{{outputs.src}}", '{"items": [1]}', ["src"],
                 "withParam of flow f (the output of flow src): expected a JSON list, got object: '{\"items\": [1]}' "
                 '(a list under a field is looped over as withParam: "{{outputs.src.items}}")', id="object-hint"),
])
def test_with_param_reads_a_list_inside_a_json_output(param, output, created, message):
    """Argo users often emit an object whose list sits under a key: `withParam: "{{outputs.src.items}}"` loops over
    it; a path that leads nowhere fails the flow (InvalidParam) naming the flow and where the path stopped."""
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam=param)])
    sim.finish("jf-src", C, output)
    assert [c.removeprefix("jf-") for c in sim.created] == created
    if message:
        assert sim.cond("f") == {"phase": "Failed", "reason": "InvalidParam", "message": message}
    else:
        assert sim.reason("f") != "InvalidParam"


@pytest.mark.parametrize("order", [
    pytest.param(["p", "e", "j"], id="param-first"),
    pytest.param(["e", "p", "j"], id="items-first"),
    pytest.param(["j", "e", "p"], id="job-first"),
    pytest.param(["j", "p", "e"], id="job-param-items"),
])
def test_flows_started_together_all_start_whatever_the_spec_order(order):
    """e, p (no items: Completed at once) and j start together when s completes; p's completion makes r ready
    and r's `when` fails: the failure stops what is still to be created (j's vcjob), never one of the starts
    made with p's — e used to be NotCreated when p came first in the spec."""
    together = {"e": fl("e", "s", withItems=[]), "p": fl("p", "s", withParam="{{outputs.s}}"), "j": fl("j", "s")}
    sim = flowsim.Sim([fl("s"), *(together[n] for n in order), fl("r", "p", when="outputs.s >= 1")])
    sim.finish("jf-s", C, "[]")
    got = {n: (sim.cond(n)["phase"], sim.cond(n).get("reason")) for n in ["e", "p", "j", "r"]}
    assert got == {"e": ("Completed", "NoItems"), "p": ("Completed", "NoItems"), "j": ("Pending", "NotCreated"),
                   "r": ("Failed", "InvalidCondition")}
    assert (sim.created, sim.phase) == (["jf-s"], "Failed")


@pytest.mark.parametrize("dependency, runs", [
    pytest.param({"dependsOn": {"targets": ["f"]}}, True, id="all"),
    pytest.param({"dependsOn": {"targets": ["f"], "strategy": "any"}}, True, id="any-counted"),
    pytest.param({"dependsOn": {"targets": ["f", "g"], "strategy": "any"}, "when": "outputs.src == '[]'"}, True,
                 id="any-evaluated"),   # (reading src's output: a dependency tree, not counted)
    pytest.param({"dependsOn": {"expression": "f.AnyCompleted"}}, False, id="no-item-completed"),
])
def test_a_fan_out_with_no_items_is_a_completed_target(dependency, runs):
    """A fan-out with no items is Completed: a target met for `all` and for `any` alike (it has no item
    to complete), while the expression outcome AnyCompleted is false."""
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam="{{outputs.src}}"), fl("g", "src", withItems=[]),
                       {"name": "d", **dependency}])
    sim.finish("jf-src", C, "[]")
    assert ("jf-d" in sim.created) is runs, sim.status
    if not runs:
        assert sim.cond("d")["message"] == "dependsOn.expression f.AnyCompleted can never hold: f Completed"


def test_a_fan_outs_output_lists_its_items_json_objects_as_objects():
    """As Argo aggregates a loop's results: an item output that is a JSON object is listed as the object,
    anything else (a number, a list, text) as its string; `when` then reads the objects' fields."""
    sim = flowsim.Sim([fl("f", withItems=[0, 1, 2, 3]), fl("d", "f", when="outputs.f.1.acc == 2 && outputs.f.0 == '7'")])
    for i, out in enumerate(['7\n', ' {"acc": 2} ', "[1]", "{not json"]):
        sim.finish(f"jf-f-{i}", C, out)
    assert sim.eng.output_of("f") == '["7",{"acc":2},"[1]","{not json"]'
    assert "jf-d" in sim.created, sim.status


@pytest.mark.parametrize("flows, outputs, flow, output", [
    pytest.param([fl("f", withItems=[])], [], "f", "[]", id="no-items-an-empty-list"),
    pytest.param([fl("f", withItems=[0, 1])], [("f-0", "a"), ("f-1", "b")], "f", '["a","b"]', id="items"),
    pytest.param([fl("f", withItems=[], when="params.go != 'yes'")], [], "f", "", id="skipped-never-ran"),
    pytest.param([fl("s"), fl("f", "s", withParam="{{outputs.s}}")], [("s", "x")], "f", "", id="invalid-param"),
    pytest.param([fl("s"), fl("f", "s", withParam="{{outputs.s}}")], [("s", "[]")], "f", "[]", id="no-param-items"),
    # f starts with e (no items: Completed), then w's `when` fails: the stop cancels f's items, never made
    pytest.param([fl("s"), fl("f", "s", withItems=[1, 2]), fl("e", "s", withItems=[]),
                  fl("w", "e", when="outputs.s >= 1")], [("s", "x")], "f", "", id="items-a-stop-left-not-created"),
])
def test_a_fan_outs_output_is_the_list_of_its_items_outputs(flows, outputs, flow, output):
    """docs/jobflow-primitives.md, Outputs: a fan-out's output is the JSON list of its items' outputs, so one
    with no items outputs `[]`; a flow that never ran outputs ""."""
    sim = flowsim.Sim(flows, arguments={"parameters": [{"name": "go", "value": "yes"}]})
    for job, out in outputs:
        sim.finish("jf-" + job, C, out)
    assert sim.eng.output_of(flow) == output


@pytest.mark.parametrize("items, created, reason", [
    pytest.param([], ["b"], "NoItems", id="an-empty-fan-out-gives-no-items"),
    pytest.param([0, 1], ["e-0", "e-1", "b", "w-0", "w-1"], "FanOut", id="one-item-per-item-output"),
])
def test_with_param_over_a_fan_outs_output(items, created, reason):
    sim = flowsim.Sim([fl("e", withItems=items), fl("w", withParam="{{outputs.e}}"), fl("b")])
    for i in range(len(items)):
        sim.finish(f"jf-e-{i}", C, str(i))
    assert ([c.removeprefix("jf-") for c in sim.created], sim.reason("w")) == (created, reason)
    assert sim.phase not in ("Failed", "Succeed"), sim.status


def test_a_fan_out_failed_before_its_items_counts_as_one_failed_item():
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam="{{outputs.src}}"), expr("h", "f.AnyFailed && f.AllFailed")])
    sim.finish("jf-src", C, "not json")
    assert sim.reason("f") == "InvalidParam" and "jf-h" in sim.created, sim.status


def test_an_empty_fan_out_is_a_loop_summary_not_a_listed_job():
    sim = flowsim.Sim([fl("src"), fl("f", "src", withParam="{{outputs.src}}")])
    sim.finish("jf-src", C, "[]")
    assert sim.cond("f") == {"phase": "Completed", "reason": "NoItems", "message": "no items: nothing to run",
                             "items": 0}
    assert sim.status["completedJobs"] == ["jf-src"], sim.status   # (its jobs are listed: it has none)


def test_fan_out_facts_equal_flowexpr_outcome_facts():
    for n, outcomes in [(0, []), (2, ["Completed", None]), (2, ["Completed", "Failed"]), (2, ["Failed", "Failed"]),
                        (3, ["Completed"] * 3)]:
        done = [o for o in outcomes if o]
        final = None if len(done) < n else ("Completed" if all(o == "Completed" for o in done) else "Failed")
        assert readiness.fanout_facts(final, n, len(done), done.count("Completed"), done.count("Failed")) == \
            flowexpr.outcome_facts(final, outcomes), outcomes


@pytest.mark.parametrize("outputs, created, phase, reason", [
    pytest.param(["0.5", "0.95"], ["t-0", "t-1", "p"], "Running", "Repeat", id="until-holds-at-iteration-1"),
    pytest.param(["0.5", "0.6", "0.7"], ["t-0", "t-1", "t-2"], "Failed", "RepeatLimitReached", id="limit-reached"),
    pytest.param(["oops"], ["t-0"], "Failed", "InvalidCondition", id="until-cannot-be-evaluated"),
])
def test_repeat_until(outputs, created, phase, reason):
    sim = flowsim.Sim([fl("t", repeat={"until": "outputs.t >= 0.9", "limit": 3}), fl("p", "t")])
    for i, out in enumerate(outputs):
        sim.finish(f"jf-t-{i}", C, out)
    assert [c.removeprefix("jf-") for c in sim.created] == created
    assert (sim.phase, sim.reason("t")) == (phase, reason)
    assert sim.cond("t")["iterations"] == len(outputs)


@pytest.mark.parametrize("limit, message", [
    pytest.param(1, "until outputs.t >= 0.9 still false after 1 iteration (limit 1)", id="one"),
    pytest.param(2, "until outputs.t >= 0.9 still false after 2 iterations (limit 2)", id="two"),
])
def test_repeat_limit_message(limit, message):
    sim = flowsim.Sim([fl("t", repeat={"until": "outputs.t >= 0.9", "limit": limit})])
    for i in range(limit):
        sim.finish(f"jf-t-{i}", C, "0.5")
    assert (sim.cond("t")["reason"], sim.cond("t")["message"]) == ("RepeatLimitReached", message)


def test_repeat_iteration_failure_fails_the_flow():
    sim = flowsim.Sim([fl("t", repeat={"until": "false", "limit": 3})])
    sim.finish("jf-t-0", C, "x")
    sim.finish("jf-t-1", F)
    assert sim.phase == "Failed" and sim.created == ["jf-t-0", "jf-t-1"]


# ---- when ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("when, output, created, reason", [
    pytest.param("outputs.a == 'yes'", "yes\n", ["a", "b"], "", id="true-runs"),
    pytest.param("outputs.a == 'yes'", "no", ["a"], "WhenFalse", id="false-skips"),
    pytest.param("outputs.a > 3", "many", ["a"], "InvalidCondition", id="error-fails-with-position"),
    pytest.param("params.mode == 'fast'", "", ["a", "b"], "", id="parameter"),
])
def test_when(when, output, created, reason):
    sim = flowsim.Sim([fl("a"), fl("b", "a", when=when)],
                      arguments={"parameters": [{"name": "mode", "value": "fast"}]})
    sim.finish("jf-a", C, output)
    assert [c.removeprefix("jf-") for c in sim.created] == created
    assert sim.reason("b") == reason
    if reason == "InvalidCondition":
        assert sim.cond("b")["message"].startswith("flow b: when: ")
        assert sim.cond("b")["message"].endswith(f'at position 0 in "{when}"')


def test_when_reading_an_output_waits_for_that_flow_even_without_targets():
    sim = flowsim.Sim([fl("a"), fl("b", when="outputs.a == 'go'")])
    assert sim.created == ["jf-a"] and sim.reason("b") == "WaitingForOutput"
    sim.finish("jf-a", C, "go")
    assert sim.created == ["jf-a", "jf-b"]


@pytest.mark.parametrize("slow, created, reason, message", [
    pytest.param(C, ["fast", "slow", "use"], "", "", id="the-read-target-completes"),
    pytest.param(F, ["fast", "slow"], "DependencyNeverMet",
                 "it reads the output of slow Failed: an output is read only from a Completed flow", id="it-fails"),
])
def test_strategy_any_still_waits_for_a_target_whose_output_is_read(slow, created, reason, message):
    """`strategy: any` starts the flow on its first target, but a `when` reading another target's output
    needs that target Completed: it waits for it (the JobFlow was Failed: "slow has no output")."""
    use = {**anyof("use", "fast", "slow"), "when": "outputs.slow == 's'"}
    sim = flowsim.Sim([fl("fast"), fl("slow"), use])
    sim.finish("jf-fast", C, "f")
    assert sim.phase == "Running" and sim.created == ["jf-fast", "jf-slow"] and sim.reason("use") == "WaitingForOutput"
    sim.finish("jf-slow", slow, "s")
    assert [c.removeprefix("jf-") for c in sim.created] == created and sim.reason("use") == reason
    assert sim.cond("use").get("message", "") == message or reason == ""


@pytest.mark.parametrize("flows, reason", [
    pytest.param([fl("a"), fl("b"), expr("c", "a.Completed && b.Completed")], "WaitingForDependencies",
                 id="expression"),
    pytest.param([fl("a"), fl("b"), expr("c", "a.Completed", when="outputs.b == 'go'")], "WaitingForDependencies",
                 id="expression and an output still running"),
    pytest.param([fl("a"), fl("b"), fl("c", "a", when="outputs.b == 'go'")], "WaitingForDependencies",
                 id="targets and an output"),
    pytest.param([fl("a"), fl("c", when="outputs.a == 'go'")], "WaitingForOutput", id="output only"),
])
def test_waiting_reason_says_whether_a_dependency_or_only_an_output_is_awaited(flows, reason):
    sim = flowsim.Sim(flows)
    assert sim.reason("c") == reason


@pytest.mark.parametrize("flows, message", [
    # the expression as written (on one line), not its compiled tree (`a.Completed || (b.Completed && …)`)
    pytest.param([fl("a"), fl("b"), expr("c", "a  ||\n  (b.Succeeded && !a.Failed)\n")],
                 "waiting for jf-a, jf-b: a  || (b.Succeeded && !a.Failed)", id="expression"),
    pytest.param([fl("a"), fl("b"), expr("c", "a.Completed", when="outputs.b == 'go'")],
                 "waiting for jf-a, jf-b: a.Completed; reads the output of b", id="expression-and-a-read"),
    pytest.param([fl("a"), fl("b"), fl("c", "a", when="outputs.b == 'go'")],
                 "waiting for jf-a, jf-b: target a; reads the output of b", id="target-and-a-read"),
    # (not `(a.AnyCompleted || a.Completed || b.AnyCompleted || b.Completed) && b.Completed`)
    pytest.param([fl("a"), fl("b"), {**anyof("c", "a", "b"), "when": "outputs.b == 'go'"}],
                 "waiting for jf-a, jf-b: any of targets a, b; reads the output of b", id="any-and-a-read"),
    pytest.param([fl("a"), fl("b"), fl("c", "a", "a", when="outputs.b == 'go'")],
                 "waiting for jf-a, jf-b: target a; reads the output of b", id="a-target-named-twice"),
    pytest.param([fl("a"), fl("b"), expr("c", "a.Finished && b", when="outputs.a == 'x'")],
                 "waiting for jf-a, jf-b: a.Finished && b", id="a-read-the-expression-names"),
])
def test_waiting_message_shows_the_dependency_as_written(flows, message):
    sim = flowsim.Sim(flows)
    assert sim.cond("c") == {"phase": "Pending", "reason": "WaitingForDependencies", "message": message}


def test_conditions_written_over_lines_are_shown_on_one():
    sim = flowsim.Sim([fl("a"), fl("b", "a", when="outputs.a ==\n  'go'\n"),
                       fl("r", repeat={"until": "iteration >=\n  1\n", "limit": 2})])
    sim.finish("jf-a", C, "no")
    assert sim.cond("b") == {"phase": "Skipped", "reason": "WhenFalse", "message": "when outputs.a == 'go' is false"}
    sim.finish("jf-r-0", C)
    assert sim.cond("r")["message"] == "iteration 1 (at most 2): until iteration >= 1"
    sim.finish("jf-r-1", C)
    assert sim.cond("r")["message"] == "until iteration >= 1 held after iteration 1"


def test_a_never_met_expression_is_shown_as_written():
    sim = flowsim.Sim([fl("a"), expr("c", "a.Failed ||\n   a.Skipped")])
    sim.finish("jf-a", C)
    assert sim.reason("c") == "DependencyNeverMet"
    assert sim.cond("c")["message"].endswith("dependsOn.expression a.Failed || a.Skipped can never hold: a Completed")


# ---- retry ---------------------------------------------------------------------------------------------------
def test_retry_deletes_and_recreates_after_the_backoff_then_counts_attempts():
    sim = flowsim.Sim([fl("a", retry={"limit": 2, "backoff": {"duration": "10s", "factor": 3}}), fl("b", "a")])
    sim.finish("jf-a", F)
    assert sim.phase == "Running" and sim.reason("a") == "RetryBackoff" and sim.deleted == []
    assert sim.acts.wake_at == flowsim.T0 + __import__("datetime").timedelta(seconds=10)
    sim.advance(10)
    assert sim.deleted == ["jf-a"] and sim.created == ["jf-a", "jf-a"] and sim.cond("a")["retries"] == 1
    sim.finish("jf-a", F)
    assert (sim.acts.wake_at - sim.now).total_seconds() == 30, "10s x 3"
    sim.advance(30)
    sim.finish("jf-a", C)
    assert sim.created == ["jf-a", "jf-a", "jf-a", "jf-b"] and sim.cond("a")["retries"] == 2


def test_retry_exhausted_fails_and_says_so():
    sim = flowsim.Sim([fl("a", retry={"limit": 1, "backoff": {"duration": "3s"}})])
    sim.finish("jf-a", F)
    sim.advance(3)
    sim.finish("jf-a", F)
    assert sim.phase == "Failed" and len(sim.created) == 2 and sim.cond("a")["retries"] == 1
    assert (sim.reason("a"), sim.cond("a")["message"]) == ("RetriesExhausted", "attempt 2 failed; no retries left (limit 1)")
    assert sim.cond("a")["firstCreateTime"] == "2026-01-01T00:00:00Z" != sim.cond("a")["createTime"]


def test_max_duration_limits_all_attempts_together_as_in_argo():
    """Argo: no retry whose back-off would end later than maxDuration after the first attempt started."""
    sim = flowsim.Sim([fl("a", retry={"limit": 5, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "25s"}}),
                       fl("b", "a")])
    sim.finish("jf-a", F)
    assert sim.reason("a") == "RetryBackoff", "a 10s back-off ends at 10s, within 25s"
    sim.advance(10)
    sim.finish("jf-a", F)
    assert sim.phase == "Failed" and sim.created == ["jf-a", "jf-a"] and sim.acts.wake_at is None
    assert sim.reason("a") == "RetriesExhausted" and sim.cond("a")["message"] == (
        "attempt 2 failed; not retried: a 20s back-off would end after maxDuration 25s from the first attempt "
        "(2026-01-01T00:00:00Z)")
    assert sim.cond("b")["reason"] == "DependencyNeverMet"


@pytest.mark.parametrize("failed_at, reason, message", [
    pytest.param(25.5, "RetriesExhausted", "attempt 1 failed; not retried: a 5s back-off would end after maxDuration "
                 "30s from the first attempt (2026-01-01T00:00:00Z)", id="back-off-from-25.5s-ends-after-30s"),
    pytest.param(30.5, "RetriesExhausted", "attempt 1 failed; not retried: maxDuration 30s from the first attempt "
                 "(2026-01-01T00:00:00Z) has passed", id="failed-after-30s"),
    pytest.param(25.0, "RetryBackoff", "attempt 1 failed; retry 1 of 3 after a 5s back-off", id="ends-at-30s"),
])
def test_max_duration_is_decided_from_the_time_the_back_off_runs_from(failed_at, reason, message):
    """A failure seen within its second runs its back-off from then: the maxDuration check uses that time too.
    It used the transition time kept to the second (25s): the flow showed RetryBackoff for 5s, then refused the
    retry saying maxDuration `passed while the retry waited` — though nothing had held it back."""
    sim = flowsim.Sim([fl("a", retry={"limit": 3, "backoff": {"duration": "5s", "maxDuration": "30s"}})])
    sim.set("jf-a", "Running")
    sim.advance(failed_at)
    sim.set("jf-a", F)
    assert (sim.reason("a"), sim.cond("a")["message"]) == (reason, message)
    assert sim.phase == ("Running" if reason == "RetryBackoff" else "Failed")
    assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status), "a restart decides the same"


def test_an_attempt_that_fails_after_max_duration_is_not_retried():
    sim = flowsim.Sim([fl("a", retry={"limit": 5, "backoff": {"duration": "1s", "maxDuration": "1m"}})])
    sim.set("jf-a", "Running")
    sim.advance(61)
    sim.set("jf-a", F)
    assert sim.phase == "Failed" and sim.created == ["jf-a"]
    assert sim.cond("a")["message"] == ("attempt 1 failed; not retried: maxDuration 1m0s from the first attempt "
                                        "(2026-01-01T00:00:00Z) has passed")


@pytest.mark.parametrize("limit, backoff, done, first, failed, refusal", [
    pytest.param(2, {}, 2, None, None, "attempt 3 failed; no retries left (limit 2)", id="limit-spent"),
    pytest.param(2, {}, 1, None, None, "", id="limit-left"),
    pytest.param(3, {"max_duration": 30}, 0, 0, 31, "attempt 1 failed; not retried: maxDuration 30s from the first "
                 "attempt (2026-01-01T00:00:00Z) has passed", id="max-duration-passed"),
    pytest.param(3, {"duration": 5, "max_duration": 30}, 0, 0, 25, "", id="back-off-ends-at-the-limit"),
    pytest.param(3, {"duration": 5, "max_duration": 30}, 0, 0, 26, "attempt 1 failed; not retried: a 5s back-off "
                 "would end after maxDuration 30s from the first attempt (2026-01-01T00:00:00Z)", id="back-off-too-long"),
    pytest.param(3, {"duration": 5, "cap": 1, "max_duration": 30}, 0, 0, 29, "", id="cap-shortens-the-wait"),
    pytest.param(3, {"duration": 5, "max_duration": 30}, 0, None, 99, "", id="no-first-start-known"),
])
def test_retry_refusal(limit, backoff, done, first, failed, refusal):
    from vclite.controllers.jobflow import plan
    at = (lambda s: None if s is None else flowsim.T0 + __import__("datetime").timedelta(seconds=s))
    assert plan.retry_refusal(limit, plan.Backoff(**backoff), done, at(first), at(failed)) == refusal


@pytest.mark.parametrize("duration, factor, cap, delays", [
    pytest.param(0, 2, None, [0, 0, 0], id="no-backoff"),
    pytest.param(1, 2, None, [1, 2, 4], id="doubling"),
    pytest.param(1, 2, 3, [1, 2, 3], id="capped"),
    pytest.param(5, 1, None, [5, 5, 5], id="constant"),
])
def test_backoff(duration, factor, cap, delays):
    from vclite.controllers.jobflow import plan
    b = plan.Backoff(duration, factor, cap)
    assert [b.delay(n) for n in range(3)] == delays


def test_a_wait_never_overflows():
    from vclite.api import flow
    from vclite.controllers.jobflow import plan
    assert plan.Backoff(3600, 1000).delay(19) == plan.Backoff(1, 1000).delay(500) == flow.MAX_BACKOFF_SECONDS


@pytest.mark.parametrize("retry, limit, delays", [
    pytest.param({"limit": 3, "backoff": {"duration": "2s"}}, 3, [2, 2, 2], id="no-factor-is-constant-as-argo"),
    pytest.param({"limit": "2", "backoff": {"duration": "5", "factor": 2}}, 2, [5, 10, 20], id="argo-style-strings"),
    pytest.param({"limit": 1, "backoff": {"duration": 1.5, "maxDuration": 2}}, 1, [1.5, 1.5, 1.5], id="seconds"),
    pytest.param({"limit": "10", "backoff": {"duration": "1", "factor": "2", "maxDuration": "1m"}}, 10, [1, 2, 4],
                 id="argo-example-quoted-factor"),
    pytest.param({"limit": 3, "backoff": {"duration": "1s", "factor": 3, "cap": "5s"}}, 3, [1, 3, 5],
                 id="argo-cap"),
    pytest.param({"limit": 3, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "15s"}}, 3, [10, 20, 40],
                 id="max-duration-limits-the-attempts-not-each-wait"),
])
def test_retry_values_read_as_argo_reads_them(retry, limit, delays):
    from vclite.controllers.jobflow import plan
    fd = plan.compile_spec({"flows": [fl("a", retry=retry)]}, "jf").flows["a"]
    assert fd.retry_limit == limit and [fd.backoff.delay(n) for n in range(3)] == delays


def delete(sim, name):
    """The vcjob is deleted by someone else than the controller (its TTL, a user)."""
    sim.jobs.pop(name)
    sim.eng.observe(name, None, sim.now)
    sim.step()


@pytest.mark.parametrize("flows, ttl, created", [
    pytest.param([fl("a"), expr("b", "a.Completed")], None, ["jf-a", "jf-b"], id="vclite-fields-keep-the-outcome"),
    pytest.param([fl("a"), fl("b", "a")], 0, ["jf-a", "jf-b"], id="plain-flow-with-a-ttl-keeps-it-too"),
    pytest.param([fl("a"), fl("b", "a")], None, ["jf-a", "jf-b", "jf-a"], id="plain-flow-re-creates-as-volcano"),
])
def test_a_finished_vcjob_deleted_afterwards(flows, ttl, created):
    sim = flowsim.Sim(flows)
    if ttl is not None:
        sim.jobs["jf-a"]["spec"]["ttlSecondsAfterFinished"] = ttl
    sim.finish("jf-a", C)
    delete(sim, "jf-a")
    assert sim.created == created and sim.phase == "Running"
    if ttl is not None or len(created) == 2:
        assert sim.cond("a")["phase"] == "Completed", "the outcome stands"
        assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)
        rebuilt = __import__("vclite.controllers.jobflow.engine", fromlist=["build"]).build(
            flowsim.jobflow(flows, sim.status), list(sim.jobs.values()), sim.now)
        assert rebuilt.decide(sim.now).create == [], "a restarted controller does not create it again either"


def test_a_failed_vcjob_deleted_during_its_back_off_is_retried_once_and_counted():
    sim = flowsim.Sim([fl("a", retry={"limit": 1, "backoff": {"duration": "2s"}}), expr("b", "a.Finished")])
    sim.finish("jf-a", F)
    delete(sim, "jf-a")
    assert sim.created == ["jf-a"] and sim.reason("a") == "RetryBackoff"
    sim.advance(2)
    assert sim.created == ["jf-a", "jf-a"] and sim.deleted == [] and sim.cond("a")["retries"] == 1
    sim.finish("jf-a", F)
    delete(sim, "jf-a")
    sim.advance(10)
    assert sim.created == ["jf-a", "jf-a", "jf-b"] and sim.reason("a") == "RetriesExhausted"


def test_the_back_off_runs_from_the_failure_so_a_restart_waits_the_same():
    flows = [fl("a", retry={"limit": 1, "backoff": {"duration": "10s"}})]
    sim = flowsim.Sim(flows)
    sim.finish("jf-a", F)
    sim.now += __import__("datetime").timedelta(seconds=4)          # the controller restarts 4s later
    rebuilt = __import__("vclite.controllers.jobflow.engine", fromlist=["build"]).build(
        flowsim.jobflow(flows, sim.status), list(sim.jobs.values()), sim.now)
    assert rebuilt.decide(sim.now).wake_at == flowsim.T0 + __import__("datetime").timedelta(seconds=10)


def test_the_exit_handler_is_retried_after_an_unhandled_failure():
    sim = flowsim.Sim([fl("a"), fl("e", retry={"limit": 2})], onExit="e")
    sim.finish("jf-a", F)
    sim.finish("jf-e", F)
    assert sim.phase == "Running" and sim.created == ["jf-a", "jf-e", "jf-e"] and sim.cond("e")["retries"] == 1
    sim.finish("jf-e", C)
    assert sim.phase == "Failed"


def test_the_exit_handlers_back_off_after_an_unhandled_failure_wakes_the_controller():
    """Without a wake-up at the end of the back-off the handler's retry never starts: the JobFlow
    would stay Running for ever."""
    sim = flowsim.Sim([fl("a"), fl("e", retry={"limit": 1, "backoff": {"duration": "3s"}})], onExit="e")
    sim.finish("jf-a", F)
    sim.finish("jf-e", F)
    assert sim.reason("e") == "RetryBackoff" and sim.acts.wake_at == sim.now + dt.timedelta(seconds=3)
    sim.advance(3)
    assert sim.created == ["jf-a", "jf-e", "jf-e"]
    sim.finish("jf-e", C)
    assert sim.phase == "Failed" and sim.acts.wake_at is None


def test_a_retry_left_waiting_when_the_jobflow_stops_says_it_was_not_retried():
    sim = flowsim.Sim([fl("a", retry={"limit": 3, "backoff": {"duration": "5s"}}), fl("b")])
    sim.finish("jf-a", F)
    sim.finish("jf-b", F)
    assert sim.phase == "Failed" and sim.acts.wake_at is None
    assert (sim.reason("a"), sim.cond("a")["message"]) == ("NotRetried",
                                                           "attempt 1 failed; not retried: the JobFlow is Failed")


def test_retry_limit_zero_says_no_retries_left():
    sim = flowsim.Sim([fl("a", retry={"limit": 0})])
    sim.finish("jf-a", F)
    assert (sim.reason("a"), sim.cond("a")["message"]) == ("RetriesExhausted",
                                                           "attempt 1 failed; no retries left (limit 0)")


def test_max_duration_is_checked_again_when_a_suspended_retry_would_start():
    sim = flowsim.Sim([fl("a", retry={"limit": 3, "backoff": {"duration": "3s", "maxDuration": "5s"}})])
    sim.finish("jf-a", F)
    sim.eng.set_meta(flowsim.jobflow([], annotations={"flow.volcano.sh/suspend": "true"}))
    sim.advance(9)
    sim.eng.set_meta(flowsim.jobflow([]))
    sim.step()
    assert sim.created == ["jf-a"] and sim.phase == "Failed" and sim.reason("a") == "RetriesExhausted"
    assert sim.cond("a")["message"] == ("attempt 1 failed; not retried: maxDuration 5s from the first attempt "
                                        "(2026-01-01T00:00:00Z) passed while the retry waited")
    assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)


# ---- suspend, probes ---------------------------------------------------------------------------------------
def test_suspend_starts_nothing_until_resumed():
    sim = flowsim.Sim([fl("a"), fl("b", "a")], suspended=True)
    assert sim.created == [] and sim.reason("a") == "Suspended"
    sim.eng.set_meta(flowsim.jobflow([]))
    sim.step()
    assert sim.created == ["jf-a"]


def test_next_flows_while_suspended_are_what_the_resume_starts():
    """nextFlows, suspended: the flows whose dependency holds (the resume starts them) besides those waiting only
    on running flows; after the resume, the flows that start next, as always; a restarted controller agrees."""
    sim = flowsim.Sim([fl("a"), fl("b", "a"), fl("c", "b"), fl("d"), fl("e", "a", "c")], suspended=True)
    steps = [(sim.status.get("nextFlows"), sim.created[:])]
    sim.suspend(False)
    steps.append((sim.status.get("nextFlows"), sim.created[:]))
    sim.suspend(True)
    sim.finish("jf-a")
    steps.append((sim.status.get("nextFlows"), sim.created[:]))
    sim.restart()
    steps.append((sim.status.get("nextFlows"), sim.created[:]))
    sim.suspend(False)
    steps.append((sim.status.get("nextFlows"), sim.created[:]))
    assert steps == [(["a", "d"], []), (["b"], ["jf-a", "jf-d"]), (["b"], ["jf-a", "jf-d"]),
                     (["b"], ["jf-a", "jf-d"]), (["c"], ["jf-a", "jf-d", "jf-b"])]


def test_a_stopped_jobflow_has_no_next_flows_even_suspended():
    sim = flowsim.Sim([fl("a"), fl("b", "a"), fl("c")])
    sim.suspend(True)
    sim.finish("jf-a", "Failed")
    assert sim.phase == "Failed" and "nextFlows" not in sim.status


@pytest.mark.parametrize("namespace, command", [
    pytest.param("default", "vcctl jobflow resume jf", id="default-namespace"),
    pytest.param("team", "vcctl jobflow resume jf -n team", id="another-namespace"),
])
def test_a_suspended_flow_names_the_command_that_resumes_it(namespace, command):
    obj = flowsim.jobflow([fl("a")], annotations={"flow.volcano.sh/suspend": "true"})
    obj["metadata"]["namespace"] = namespace
    eng = engine.Engine(obj, flowsim.plan_mod.compile_spec(obj["spec"], "jf"), reader=lambda inst: "",
                        prober=lambda job, entry: None)
    eng.load([], flowsim.T0)
    eng.decide(flowsim.T0)
    cond = eng.status(flowsim.T0)["conditions"]["jf-a"]
    assert (cond["reason"], cond["message"]) == ("Suspended", f"dependencies are met; the JobFlow is suspended "
                                                              f"({command})")


def test_a_retry_waiting_while_the_jobflow_is_suspended_says_so_and_runs_once_resumed():
    sim = flowsim.Sim([fl("a", retry={"limit": 2, "backoff": {"duration": "10s"}}), fl("b", "a")])
    sim.finish("jf-a", F)
    assert sim.cond("a")["message"] == "attempt 1 failed; retry 1 of 2 after a 10s back-off"
    sim.eng.set_meta(flowsim.jobflow([], annotations={"flow.volcano.sh/suspend": "true"}))
    sim.step()
    waiting = "attempt 1 failed; retry 1 of 2 after a 10s back-off, once the JobFlow is resumed (it is suspended: " \
              "vcctl jobflow resume jf)"
    assert (sim.reason("a"), sim.cond("a")["message"]) == ("RetryBackoff", waiting)
    sim.advance(10)
    assert sim.created == ["jf-a"] and sim.deleted == [] and sim.cond("a")["message"] == waiting
    sim.eng.set_meta(flowsim.jobflow([]))
    sim.step()
    assert sim.created == ["jf-a", "jf-a"] and sim.cond("a")["retries"] == 1


@pytest.mark.parametrize("stops, reason, message", [
    pytest.param(True, "NotRetried", "attempt 1 failed; not retried: the JobFlow is Failed",
                 id="a-failure-found-at-the-resume-wins-over-the-retry"),
    pytest.param(False, "", None, id="else-the-retry-runs"),
])
def test_a_retry_due_at_the_resume_and_a_failure_found_then(stops, reason, message):
    """At the resume, w's `when` fails (InvalidCondition, unhandled: the JobFlow stops) in the moment a's
    retry is due: no retry starts after the stop, so a's failure is its outcome (a was NotCreated, no outcome)."""
    when = "outputs.s >= 1" if stops else "outputs.s == 'x'"
    sim = flowsim.Sim([fl("a", retry={"limit": 1, "backoff": {"duration": "1s"}}), fl("s"), fl("w", "s", when=when)])
    sim.suspend(True)
    sim.finish("jf-a", F)
    sim.finish("jf-s", C, "x")
    sim.advance(5)
    sim.suspend(False)
    if stops:
        assert (sim.cond("a")["phase"], sim.reason("a"), sim.cond("a")["message"]) == ("Failed", reason, message)
        assert sim.created == ["jf-a", "jf-s"] and sim.phase == "Failed" and sim.deleted == []
    else:
        assert sim.created == ["jf-a", "jf-s", "jf-w", "jf-a"] and sim.cond("a")["retries"] == 1


@pytest.mark.parametrize("counts, final, created, reason", [
    pytest.param({"ps": {"phase": {"Running": 1}}}, None, ["s", "c"], "", id="task-running-starts-it"),
    pytest.param({"ps": {"phase": {"Pending": 1}}}, None, ["s"], "WaitingForProbe", id="not-yet"),
    pytest.param({"ps": {"phase": {"Succeeded": 1}}}, "Completed", ["s"], "DependencyNeverMet",
                 id="target-finished-without-it-skips"),
])
def test_task_status_probe(counts, final, created, reason):
    probe = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}
    sim = flowsim.Sim([fl("s"), {"name": "c", "dependsOn": {"targets": ["s"], "probe": probe}}])
    sim.set("jf-s", final or "Running", tasks=counts)
    assert [c.removeprefix("jf-") for c in sim.created] == created and sim.reason("c") == reason


PS_UP, PS_DONE = {"ps": {"phase": {"Running": 1}}}, {"ps": {"phase": {"Succeeded": 1}}}


@pytest.mark.parametrize("while_suspended, reason", [
    pytest.param([], "Suspended", id="probe-holds"),
    pytest.param([("s-0", "Completed", PS_DONE)], "WaitingForProbe", id="an-item-finished"),
    pytest.param([("s-1", "Failed", {"ps": {"phase": {"Failed": 1}}})], "WaitingForProbe",
                 id="an-item-awaits-its-retry"),
    pytest.param([("s-0", "Running", {"ps": {"phase": {"Pending": 1}}})], "WaitingForProbe", id="a-ps-went-down"),
])
def test_a_probed_flow_held_by_a_suspension_shows_whether_its_probe_still_holds(while_suspended, reason):
    """Only the flows ready to start show Suspended: a probe that stops holding while the JobFlow is suspended
    is seen at once (it was seen only at the resume, the flow saying "dependencies are met" until then)."""
    probe = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}
    sim = flowsim.Sim([fl("s", withItems=[0, 1], retry={"limit": 1}), {"name": "c", "dependsOn": {
        "targets": ["s"], "probe": probe}}])
    sim.suspend(True)
    sim.set("jf-s-0", "Running", tasks=PS_UP)
    sim.set("jf-s-1", "Running", tasks=PS_UP)
    assert sim.reason("c") == "Suspended"
    for job, phase, tasks in while_suspended:
        sim.set("jf-" + job, phase, tasks=tasks)
    assert sim.reason("c") == reason
    sim.suspend(False)
    assert ("jf-c" in sim.created) is (reason == "Suspended") and not sim.early


@pytest.mark.parametrize("flows, finish, message", [
    pytest.param([fl("a", when="params.go == 'yes'"), fl("b", "a")], [], "dependsOn target a was Skipped",
                 id="target-skipped"),
    pytest.param([fl("a"), fl("s", when="params.go == 'yes'"), fl("b", "a", "s")],
                 [], "dependsOn targets a, s can no longer all be Completed: s Skipped", id="targets-all"),
    pytest.param([fl("a"), fl("s", when="params.go == 'yes'"), anyof("b", "a", "s"), expr("h", "a.Failed")],
                 [("a", F)], "dependsOn targets a, s (strategy any): none of them can complete: a Failed, s Skipped",
                 id="targets-any"),
    pytest.param([fl("tg"), {"name": "b", "dependsOn": {"targets": ["tg"], "probe": {
        "taskStatusList": [{"taskName": "ps", "phase": "Running"}]}}}], [("tg", C)],
                 "dependsOn target tg finished (Completed) before its probe (task ps Running) held", id="probe"),
])
def test_skip_message_names_what_the_user_wrote(flows, finish, message):
    sim = flowsim.Sim(flows, arguments={"parameters": [{"name": "go", "value": "no"}]})
    for job, phase in finish:
        sim.finish("jf-" + job, phase)
    assert sim.cond("b") == {"phase": "Skipped", "reason": "DependencyNeverMet", "message": message}


def test_http_probe_waits_for_the_prober_and_asks_to_be_polled():
    probe = {"httpGetList": [{"taskName": "ps", "port": 8080, "path": "/healthz"}]}
    answers: dict = {}
    sim = flowsim.Sim([fl("s"), {"name": "c", "dependsOn": {"targets": ["s"], "probe": probe}}], probe=answers)
    sim.set("jf-s", "Running")
    assert sim.created == ["jf-s"] and sim.acts.probing and sim.reason("c") == "WaitingForProbe"
    assert "task ps answers HTTP GET :8080/healthz" in sim.cond("c")["message"]
    answers[("jf-s", "ps")] = True
    sim.step()
    assert sim.created == ["jf-s", "jf-c"] and not sim.acts.probing


# ---- restart: the rebuilt state says the same ---------------------------------------------------------------
def test_a_rebuilt_engine_computes_the_same_status():
    sim = flowsim.Sim([fl("a", retry={"limit": 1}), fl("f", "a", withItems=[1, 2]), fl("r", "a", repeat={
        "until": "outputs.r == 'ok'", "limit": 3}), expr("h", "f.AnyFailed")])
    sim.finish("jf-a", F)
    sim.advance(0)
    sim.finish("jf-a", C, "out")
    sim.finish("jf-f-0", F)
    sim.finish("jf-r-0", C, "no")
    assert flowsim.normalized(sim.rebuilt()) == flowsim.normalized(sim.status)


# ---- histories: every phase the watch delivered, even when the sync sees only the last ---------------------
P, RUN, RST = "Pending", "Running", "Restarting"


@pytest.mark.parametrize("versions, histories", [
    pytest.param([(P, 0), (RUN, 1), (RST, 2), (P, 3), (RUN, 4), (C, 5)],
                 [(P, 0), (RUN, 1), (RST, 2), (P, 3), (RUN, 4), (C, 5)], id="restarted-job-every-phase"),
    pytest.param([(RUN, 1), (RUN, 2), (C, 3)], [(P, 0), (RUN, 1), (C, 3)], id="same-phase-once"),
    pytest.param([(RUN, None), (C, 12)], [(P, 0), (RUN, 9), (C, 12)], id="no-transition-time-when-seen"),
    pytest.param([(RUN, 1), (C, 0)], [(P, 0), (RUN, 1), (C, 1)], id="never-backwards"),
    pytest.param([(RUN, 1), (C, 2), ("new", 5), (RUN, 6)], [(P, 0), (RUN, 1), (C, 2), (P, 5), (RUN, 6)],
                 id="re-created-under-the-same-name-starts-pending"),
    pytest.param([(RUN, i) if i % 2 else (P, i) for i in range(1, 13)],
                 [(RUN, i) if i % 2 else (P, i) for i in range(3, 13)], id="capped-at-history-limit"),
])
def test_histories_record_every_phase_seen_before_the_sync(versions, histories):
    """`record(job, at)` for each version the watch delivered (at = when; its transition time wins), then
    one sync observing only the last version."""
    sim = flowsim.Sim([fl("a")])
    job = sim.jobs["jf-a"]
    t = lambda s: clock_mod.format_time(flowsim.T0 + dt.timedelta(seconds=s))
    for phase, at in versions:
        if phase == "new":   # deleted and created again: a new uid, Pending
            job = {**job, "metadata": {**job["metadata"], "uid": "u-new", "creationTimestamp": t(at)}}
            phase = P
        state = {"phase": phase, **({"lastTransitionTime": t(at)} if at is not None else {})}
        job = {**job, "status": {**job["status"], "state": state}}
        sim.eng.record(job, flowsim.T0 + dt.timedelta(seconds=9))   # when the watch delivered it
    sim.advance(20)
    sim.eng.observe("jf-a", job, sim.now)
    sim.step()
    entry = sim.status["jobStatusList"][0]
    assert [(h["state"], h["startTimestamp"]) for h in entry["runningHistories"]] == [(p, t(s)) for p, s in histories]


def test_compact_flow_keeps_no_history_for_completed_jobs(monkeypatch):
    monkeypatch.setattr(engine.rs, "COMPACT_AT", 1)
    sim = flowsim.Sim([fl("a")])
    job = sim.jobs["jf-a"]
    for phase in (RUN, C):
        job = {**job, "status": {**job["status"], "state": {"phase": phase}}}
        sim.eng.record(job, sim.now)
    sim.eng.observe("jf-a", job, sim.now)
    sim.step()
    assert "runningHistories" not in sim.status["jobStatusList"][0]


def test_a_big_flow_keeps_the_detail_of_its_first_running_vcjobs_only(monkeypatch):
    """In a big flow, rs.DETAILED_RUNNING Running vcjobs keep their detail at a time (start, histories, task
    counts), the others are as compact as Pending ones (a fan of 10,000 running at once fits etcd's limit); a
    slot is free again once its vcjob leaves Running."""
    monkeypatch.setattr(engine.rs, "COMPACT_AT", 1)
    monkeypatch.setattr(engine.rs, "DETAILED_RUNNING", 1)
    sim = flowsim.Sim([fl("a"), fl("b"), fl("c", "a")])
    tasks = {"main": {"phase": {"Running": 1}}}
    sim.set("jf-a", RUN, tasks=tasks)
    sim.set("jf-b", RUN, tasks=tasks)
    entries = {e["name"]: e for e in sim.status["jobStatusList"]}
    assert sim.cond("a")["taskStatusCount"] == tasks and entries["jf-a"]["runningHistories"]
    assert sim.cond("b") == {"phase": RUN} and entries["jf-b"] == {"name": "jf-b", "state": RUN}
    sim.finish("jf-a", C)
    sim.set("jf-c", RUN, tasks=tasks)
    entries = {e["name"]: e for e in sim.status["jobStatusList"]}
    assert sim.cond("a") == {"phase": C} and sim.cond("c")["taskStatusCount"] == tasks
    assert entries["jf-c"]["runningHistories"] and entries["jf-b"] == {"name": "jf-b", "state": RUN}

@pytest.mark.parametrize("flows", [
    pytest.param([fl("a"), fl("b", "a"), fl("c", "b"), fl("d", "c")], id="planned-flows"),
    pytest.param([fl("a"), fl("b", "a", withItems=[1, 2, 3])], id="planned-items"),
    pytest.param([fl("a"), fl("b", "a", withParam="{{outputs.a}}")], id="made-items"),
])
def test_a_flow_big_by_plan_or_by_its_items_keeps_completed_entries_compact(monkeypatch, flows):
    """Big is counted from the plan (a chain of flows, withItems) or, for items known only at run time,
    when they are made: then the entries written before are compacted too."""
    monkeypatch.setattr(engine.rs, "COMPACT_AT", 4)
    sim = flowsim.Sim(flows)
    sim.finish("jf-a", C, "[1, 2, 3]")
    entry, cond = sim.status["jobStatusList"][0], sim.cond("a")
    assert set(entry) == {"name", "state"} and cond.get("phase") == "Completed" and set(cond) <= {"phase", "output"}
    assert sim.eng.compact
    waiting = [c for c in sim.status["conditions"].values() if c.get("reason") in ("WaitingForDependencies", "Creating")]
    assert all("message" not in c for c in waiting) and (waiting or len(flows) == 2)   # (the chain's wait)
    sim.finish("jf-b" if "jf-b" in sim.jobs else "jf-b-0", C)
    assert set(sim.status["jobStatusList"][1]) == {"name", "state"}


def test_each_attempt_opens_its_history_even_when_first_seen_failed():
    sim = flowsim.Sim([fl("a", retry={"limit": 1})])
    sim.finish("jf-a", F)
    sim.advance(0)
    sim.set("jf-a", F)          # the new attempt is first seen already Failed
    hist = sim.status["jobStatusList"][0]["runningHistories"]
    assert [h["state"] for h in hist] == ["Pending", "Running", "Failed", "Pending", "Failed"]
    assert sim.phase == "Failed"


@pytest.mark.parametrize("flows", [
    pytest.param([fl("a", retry={"limit": 2, "backoff": {"duration": "10s"}})], id="retry-back-off"),
    pytest.param([fl("a"), expr("h", "a.Failed")], id="failure-handled-by-an-expression"),
])
def test_a_handled_failure_seen_without_running_makes_the_jobflow_running(flows):
    """A quick pod may fail before the controller ever sees its vcjob Running: the JobFlow still ran
    a job, so it is Running (not Pending) while the failure is retried or handled."""
    sim = flowsim.Sim(flows)
    assert sim.phase == "Pending"
    sim.set("jf-a", F)
    assert sim.phase == "Running"


def test_a_retry_attempt_may_run_what_is_left_of_max_duration():
    """Argo gives a retried pod the rest of maxDuration as its deadline; a first attempt runs unbounded."""
    sim = flowsim.Sim([fl("a", retry={"limit": 3, "backoff": {"duration": "10s", "maxDuration": "60s"}})])
    inst = sim.eng.insts["jf-a"]
    assert sim.eng.attempt_deadline(inst, sim.now) is None
    sim.advance(5)
    sim.finish("jf-a", F)
    sim.advance(10)
    assert sim.created == ["jf-a", "jf-a"] and sim.eng.attempt_deadline(inst, sim.now) == 45
    no_cap = flowsim.Sim([fl("a", retry={"limit": 3, "backoff": {"duration": "10s"}})])
    no_cap.finish("jf-a", F)
    no_cap.advance(10)
    assert no_cap.created == ["jf-a", "jf-a"] and no_cap.eng.attempt_deadline(no_cap.eng.insts["jf-a"], no_cap.now) is None


@pytest.mark.parametrize("failed_at, now, start", [
    (0, 0.4, 0.4),     # seen live, within the second its time was rounded to: from now
    (0, 3.0, 0),       # seen later (a restarted controller): from the recorded time
    (None, 2.0, 2.0),
    (0, None, 0),
])
def test_the_back_off_starts_from_the_failure(failed_at, now, start):
    at = lambda s: None if s is None else flowsim.T0 + dt.timedelta(seconds=s)
    assert engine._failure_time(at(failed_at), at(now)) == at(start)


def test_a_big_flows_pending_jobs_keep_only_their_phase_and_running_ones_their_detail(monkeypatch):
    """Most of a big flow's vcjobs are Pending (or Completed) at any moment: they stay small."""
    monkeypatch.setattr(engine.rs, "COMPACT_AT", 1)
    sim = flowsim.Sim([fl("a"), fl("b")])
    sim.set("jf-a", "Pending", tasks={"main": {"phase": {"Pending": 1}}})
    sim.set("jf-b", RUN, tasks={"main": {"phase": {"Running": 1}}})
    assert sim.cond("a") == {"phase": "Pending"}
    assert sim.cond("b")["taskStatusCount"] == {"main": {"phase": {"Running": 1}}}
    entries = {e["name"]: e for e in sim.status["jobStatusList"]}
    assert "runningHistories" not in entries["jf-a"] and entries["jf-b"]["runningHistories"]


# ---- found by the oracles (tests/flow_oracle.py): template reads, probes after a restart ----------------------
def test_a_vcjob_waiting_for_an_output_when_the_jobflow_stops_says_not_created():
    """b's JobTemplate reads c's output; a's unhandled failure stops the JobFlow, so c never runs: b's vcjob
    will never be made. It said `WaitingForOutput` for ever in the Failed JobFlow; now `NotCreated`, as every
    vcjob a stop leaves unmade."""
    sim = flowsim.Sim([fl("a"), fl("b"), fl("s"), fl("c", "s")], templates={"a": "", "b": "{{outputs.c}}", "s": "",
                                                                             "c": ""})
    assert sim.reason("b") == "WaitingForOutput"
    sim.finish("jf-a", F)
    assert (sim.phase, sim.reason("b"), sim.reason("c")) == ("Failed", "NotCreated", "NotCreated")
    sim.finish("jf-s", C)
    assert (sim.phase, sim.reason("b"), sim.reason("c")) == ("Failed", "NotCreated", "NotCreated")


@pytest.mark.parametrize("flow, command, outcome", [
    pytest.param(fl("a"), "a={{outputs.a}}", "InvalidTemplate", id="a-flow-reads-its-own-output"),
    pytest.param(fl("a", withItems=[1, 2]), "a={{outputs.a}}", "InvalidTemplate", id="a-fan-out-too"),
    pytest.param(fl("a", repeat={"until": "iteration >= 1", "limit": 2}), "a={{outputs.a}}", "Completed",
                 id="a-repeat-reads-its-previous-iteration"),
])
def test_a_template_reading_its_own_flows_output_outside_a_repeat_is_refused(flow, command, outcome):
    """Outside a repeat a flow has no output before it finishes: the read is a wait that never ends. It read
    the previous item's output — "" or another item's, depending on which had finished, retried or not."""
    sim = flowsim.Sim([flow], templates={"a": command})
    for _ in range(3):
        for job in [j for j, v in sim.jobs.items() if v["status"]["state"]["phase"] == "Pending"]:
            sim.finish(job, C, "out")
    if outcome == "InvalidTemplate":
        key = "a" if "withItems" not in flow else "a-0"
        assert (sim.cond(key)["reason"], sim.phase, sim.created) == ("InvalidTemplate", "Failed", [])
        assert sim.cond(key)["message"] == ('flow a: the template reads the output of its own flow "a", which it '
                                            "has only once it has finished (only a repeat reads its previous "
                                            "iteration's)")
    else:
        assert sim.commands == [("jf-a-0", "a="), ("jf-a-1", "a=out")] and sim.phase == "Succeed"


def test_a_probe_over_a_fan_out_whose_item_was_deleted_still_covers_it_after_a_restart():
    """The probe's entries cover a target by its tasks, read from the first item's vcjob: after a restart a
    finished item deleted by its TTL is a stand-in without a spec, so no entry covered the target and w waited
    for it as Completed — then started, though the target finished before its probe held."""
    probe = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}
    sim = flowsim.Sim([fl("t", withItems=[0, 1]), {"name": "w", "dependsOn": {"targets": ["t"], "probe": probe}}])
    sim.set("jf-t-0", "Running")
    sim.set("jf-t-0", C, tasks={"ps": {"phase": {"Succeeded": 1}}})
    del sim.jobs["jf-t-0"]
    sim.eng.observe("jf-t-0", None, sim.now)
    sim.step()
    sim.restart()
    sim.set("jf-t-1", "Running")
    sim.set("jf-t-1", C, tasks={"ps": {"phase": {"Succeeded": 1}}})
    assert (sim.cond("w")["phase"], sim.reason("w"), sim.created) == ("Skipped", "DependencyNeverMet",
                                                                      ["jf-t-0", "jf-t-1"])


def test_a_retry_due_when_building_the_moments_vcjobs_stops_the_jobflow_is_not_retried():
    """At the resume a's retry is due and h starts; h's JobTemplate reads f's output (f Failed, a target of
    `strategy: any`): h is Skipped, f's failure unhandled, the JobFlow stops. The docs: no retry starts after the
    stop, not even one due in that moment — a's failure is its outcome (`NotRetried`). The engine had already
    counted the retry and deleted the failed attempt before the vcjobs were built: a said `NotCreated`, with
    no outcome. Now the retries due start only once the moment's vcjobs are built."""
    sim = flowsim.Sim([fl("a", retry={"limit": 1, "backoff": {"duration": "1s"}}), fl("f"), fl("g"),
                       anyof("h", "f", "g")], templates={"a": "", "f": "", "g": "", "h": "{{outputs.f}}"})
    sim.suspend(True)
    sim.finish("jf-a", F)
    sim.finish("jf-f", F)
    sim.finish("jf-g", C)
    sim.advance(5)
    sim.suspend(False)
    assert (sim.phase, sim.reason("h")) == ("Failed", "DependencyNeverMet")
    assert (sim.cond("a")["phase"], sim.reason("a")) == ("Failed", "NotRetried")
    assert ("jf-a" in sim.deleted, sim.cond("a").get("retries"), sim.created.count("jf-a")) == (False, None, 1)


def test_a_retry_due_at_a_resume_starts_after_the_moments_vcjobs_are_built():
    """The same moment without a stop (f Completed: h's read holds): h is created, then a's retry starts."""
    sim = flowsim.Sim([fl("a", retry={"limit": 1, "backoff": {"duration": "1s"}}), fl("f"), fl("g"),
                       anyof("h", "f", "g")], templates={"a": "", "f": "", "g": "", "h": "{{outputs.f}}"})
    sim.suspend(True)
    sim.finish("jf-a", F)
    sim.finish("jf-f", C)
    sim.finish("jf-g", C)
    sim.advance(5)
    sim.suspend(False)
    assert (sim.created[-2:], sim.deleted, sim.cond("a").get("retries")) == (["jf-h", "jf-a"], ["jf-a"], 1)
    assert sim.phase == "Running"


def test_a_patch_that_cannot_be_merged_fails_its_flow_before_the_moments_vcjobs_are_created():
    """b's patch has a task without a name while its JobTemplate has two: its vcjob is refused (InvalidTemplate),
    found as the moment's vcjobs are built. The docs: every vcjob of a moment is built before any is created, and a
    failure found then wins over the starts of that moment, whatever the spec order — a is not created (it was)."""
    sim = flowsim.Sim([fl("a"), fl("b", patch={"jobSpec": {"tasks": [{}]}})], templates={"a": "", "b": ""})
    assert (sim.phase, sim.reason("b"), sim.cond("b")["phase"]) == ("Failed", "InvalidTemplate", "Failed")
    assert (sim.created, sim.reason("a")) == ([], "NotCreated")


def test_a_handler_skipped_by_what_a_template_read_skipped_stops_the_vcjobs_of_that_moment():
    """a Failed is handled by k (`h.Completed && a.Failed`) while h can complete. g completes: h and z start
    together; h's JobTemplate reads the output of f, Skipped (its `when` is false): h is Skipped as its vcjob is
    built, so k can never run and a's failure is unhandled. That is settled with the moment's starts: z is never
    created (it was, as only the failures h itself handled were looked at before creating)."""
    sim = flowsim.Sim([fl("a"), fl("f", when="params.go != 'yes'"), fl("g"), fl("h", "g"),
                       expr("k", "h.Completed && a.Failed"), fl("z", "g")],
                      templates={n: "{{outputs.f}}" if n == "h" else "" for n in "afghkz"},
                      arguments={"parameters": [{"name": "go", "value": "yes"}]})
    sim.finish("jf-a", F)
    assert sim.phase == "Running"
    sim.finish("jf-g", C)
    assert (sim.reason("h"), sim.reason("k"), sim.phase) == ("DependencyNeverMet", "DependencyNeverMet", "Failed")
    assert ("jf-z" in sim.created, sim.reason("z")) == (False, "NotCreated")


@pytest.mark.parametrize("reader_first", [False, True], ids=["reader-after", "reader-before"])
@pytest.mark.parametrize("b_fails, h_outcome, jobflow_phase", [
    pytest.param(True, ("Pending", "FanOut"), "Failed", id="the-skip-stops-the-jobflow-the-reader-is-not-created"),
    pytest.param(False, ("Skipped", "DependencyNeverMet"), "Succeed", id="no-stop-the-reader-reads-it-skipped"),
])
def test_a_read_of_a_flow_skipped_in_the_same_moment_does_not_depend_on_the_spec_order(reader_first, b_fails,
                                                                                          h_outcome, jobflow_phase):
    """Found by the flow oracle (a random draw): b Failed is handled by s (`strategy: any`, a still running). a
    completes: s, x and h start together. s's JobTemplate reads b's output, so s is Skipped as it is built, and
    b's failure is unhandled: the JobFlow stops. h (a fan-out) reads s's output. The engine said h was Skipped when
    s came before it in the spec, and NotCreated (its summary `Pending`, `FanOut`) when after. Now every vcjob of
    the moment reads the flows as they were at its start: h waits for s, and the stop leaves it NotCreated, in
    either order. Without a failure (b Skipped by its `when`), h then reads s Skipped: Skipped, in the same moment."""
    b = fl("b") if b_fails else fl("b", when="params.go != 'yes'")
    h = fl("h", "a", withItems=[0, 1])
    flows = [fl("a"), b, anyof("s", "a", "b"), fl("x", "a")]
    flows = [flows[0], flows[1], h, *flows[2:]] if reader_first else [*flows, h]
    sim = flowsim.Sim(flows, templates={"a": "", "b": "", "s": "{{outputs.b}}", "x": "", "h": "{{outputs.s}}"},
                      arguments={"parameters": [{"name": "go", "value": "yes"}]})
    if b_fails:
        sim.finish("jf-b", F)
    sim.finish("jf-a", C)
    assert (sim.cond("s")["phase"], sim.reason("s")) == ("Skipped", "DependencyNeverMet")
    assert (sim.cond("h")["phase"], sim.reason("h")) == h_outcome
    assert sim.reason("h-0") == ("NotCreated" if b_fails else "")
    assert (sim.reason("x"), sim.phase) == (("NotCreated", "Failed") if b_fails else ("", "Running"))
    if not b_fails:
        sim.finish("jf-x", C)
    assert sim.phase == jobflow_phase
    assert [j for j in sim.created if j not in ("jf-a", "jf-b")] == ([] if b_fails else ["jf-x"])


@pytest.mark.parametrize("items, read", [
    pytest.param([0], '[""]', id="its-only-item-refused"),
    pytest.param([0, 1], '["",""]', id="every-item-refused"),
])
def test_a_fan_out_whose_items_were_refused_reads_as_a_list_of_empty_outputs(items, read):
    """docs/jobflow-primitives.md: a flow that did not complete reads as its last vcjobs' messages, "" only if it
    never ran (Skipped, or left NotCreated by a stop); a fan-out's output is the list of its items' outputs. f's
    items are refused as they are built (its patch cannot be merged): f Failed, and the exit handler reads one ""
    per item (the flow oracle used to say "", a random draw found it)."""
    sim = flowsim.Sim([fl("f", withItems=items, patch={"jobSpec": {"tasks": [{}]}}), fl("x", withItems=[0])],
                      onExit="x", templates={"f": "", "x": "f={{outputs.f}}"})
    assert (sim.cond("f")["phase"], sim.phase) == ("Failed", "Running")
    assert dict(sim.commands)["jf-x-0"] == f"f={read}"


# ---- found by the flow oracle's status words (WhenFalse, NotCreated, Waiting…) ------------------------------------
PS = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}


def probed(name, *targets, probe=None, **extra):
    return {"name": name, "dependsOn": {"targets": list(targets), "probe": probe or PS}, **extra}


def test_strategy_any_waits_for_the_targets_that_can_still_complete():
    """`waiting for one of …` named every target, also one that had finished without completing."""
    sim = flowsim.Sim([fl("a"), fl("b"), anyof("c", "a", "b"), expr("h", "a.Failed")])
    assert sim.cond("c")["message"] == "waiting for one of jf-a, jf-b to complete"
    sim.finish("jf-a", F)
    assert sim.cond("c") == {"phase": "Pending", "reason": "WaitingForDependencies",
                             "message": "waiting for jf-b to complete (the only target that still can)"}



def test_strategy_any_on_one_fan_out_waits_for_one_of_its_items():
    """`strategy: any` on a single fan-out target starts after its first item completes: the condition says so
    (it read `waiting for one of jf-w to complete`, as if w were one of several targets)."""
    sim = flowsim.Sim([fl("w", withItems=[1, 2, 3]), anyof("c", "w")])
    assert sim.cond("c")["message"] == "waiting for one item of jf-w to complete"
    sim = flowsim.Sim([fl("a"), anyof("c", "a")])   # (a plain single target: as before)
    assert sim.cond("c")["message"] == "waiting for one of jf-a to complete"

@pytest.mark.parametrize("flows, moves, reason, message", [
    pytest.param([fl("t"), probed("w", "t", probe={"taskStatusList": [{"taskName": "nope", "phase": "Running"}]})],
                 [], "WaitingForProbe", "waiting for probe: jf-t to be Completed", id="no-entry-covers-the-target"),
    pytest.param([fl("t"), fl("o"), probed("w", "t", when="outputs.o == 'a'")], [("t", "Running", PS_UP)],
                 "WaitingForOutput", "waiting for jf-o to finish (its output is read)", id="probe-held-output-awaited"),
    pytest.param([fl("r", repeat={"until": "iteration >= 1", "limit": 3}), fl("q"), probed("w", "r", "q")],
                 [("r-0", "Running", PS_UP), ("r-0", C, PS_DONE), ("r-1", "Running", PS_UP)],
                 "WaitingForProbe", "waiting for probe: jf-q: task ps Running", id="a-repeats-last-iteration"),
    pytest.param([fl("r", repeat={"until": "iteration >= 1", "limit": 3}), probed("w", "r")],
                 [("suspend",), ("r-0", "Running", {}), ("r-0", C, PS_DONE)],
                 "WaitingForProbe", "waiting for probe: jf-r to start", id="its-next-iteration-to-be-made"),
])
def test_a_probed_flow_says_what_it_waits_for(flows, moves, reason, message):
    """docs/jobflow-primitives.md "Status": `WaitingForProbe` names the entries not holding on the target's current
    vcjob (a repeat's last iteration), a target no entry covers is waited for as Completed, and once every probe
    holds the flow waits for what it reads. It said `waiting for probe: targets to finish` for the first, `waiting for
    jf-t, jf-o: probe:t.Completed && o.Completed` for the second, and read the repeat's finished iterations (`jf-r:
    task ps Running`, `jf-r-0: task ps Running`) for the others."""
    sim = flowsim.Sim(flows, arguments={"parameters": [{"name": "go", "value": "yes"}]})
    for job, *change in moves:
        if change:
            sim.set("jf-" + job, change[0], tasks=change[1])
        else:
            sim.suspend(True)
    assert sim.cond("w") == {"phase": "Pending", "reason": reason, "message": message}


def test_not_created_names_the_unhandled_failures_as_they_are_and_then_the_final_phase():
    """Every entry a stop left uncreated (a flow, a repeat's next iteration) says the same thing, now: the unhandled
    failures in spec order while the exit handler is to run, then `the JobFlow is Failed`. A flow's entry kept the
    first failure (`z failed`) while an iteration left uncreated later said `a, z failed` (names sorted) and kept it
    after the JobFlow was Failed."""
    sim = flowsim.Sim([fl("z"), fl("a"), fl("k"), fl("c", "k"), fl("r", repeat={"until": "iteration >= 5",
                                                                                 "limit": 3}), fl("x")], onExit="x")
    sim.finish("jf-z", F)
    assert (sim.reason("c"), sim.cond("c")["message"]) == ("NotCreated", "not created: z failed")
    sim.finish("jf-a", F)
    sim.finish("jf-r-0", C)
    assert [sim.cond(k)["message"] for k in ("c", "r-1")] == ["not created: z, a failed"] * 2
    sim.finish("jf-k", C)
    sim.finish("jf-x", C)
    assert sim.phase == "Failed"
    assert [sim.cond(k)["message"] for k in ("c", "r-1")] == ["not created: the JobFlow is Failed"] * 2
    assert sim.rebuilt()["conditions"]["jf-r-1"] == sim.cond("r-1")


def test_a_vcjob_waiting_for_outputs_names_those_still_to_finish_in_spec_order():
    """It named the flows its template read as they were when it was built (sorted by name), also once one had
    finished."""
    sim = flowsim.Sim([fl("b"), fl("a"), fl("c")], templates={"b": "", "a": "", "c": "{{outputs.a}} {{outputs.b}}"})
    assert sim.cond("c")["message"] == "the template reads the output of jf-b, jf-a: waiting for it to finish"
    sim.finish("jf-b", C)
    assert sim.cond("c") == {"phase": "Pending", "reason": "WaitingForOutput",
                             "message": "the template reads the output of jf-a: waiting for it to finish"}


def test_what_building_decides_is_built_before_the_moments_vcjobs_are_created():
    """A random draw of the flow oracle: a's vcjob is refused as it is built (its template reads its own output), so
    a Failed — handled by h (`a.Failed`), which starts in that moment; h's template reads s (Skipped): h is Skipped as
    built, a's failure is unhandled and stops the JobFlow. c's vcjob, built in the same moment, was created before h
    was built; the docs: a failure that building leaves unhandled keeps every vcjob of that moment from being
    created."""
    sim = flowsim.Sim([fl("a"), fl("s", when="params.go == 'no'"), expr("h", "a.Failed"), fl("c")],
                      templates={"a": "{{outputs.a}}", "s": "", "h": "{{outputs.s}}", "c": ""},
                      arguments={"parameters": [{"name": "go", "value": "yes"}]})
    assert [sim.reason(f) for f in ("a", "s", "h", "c")] == ["InvalidTemplate", "WhenFalse", "DependencyNeverMet",
                                                            "NotCreated"]
    assert (sim.created, sim.phase) == ([], "Failed")


def test_a_dependency_found_dead_lists_its_targets_found_dead_in_that_moment_whatever_the_marking_order():
    """A random draw of the flow oracle (seed 7), in short: b fails (its `when` cannot read e's output); c, d and f
    read b's output and are Skipped in that moment, and g (targets f, c) with them. d's skip marked f again, which
    then went behind g: g was decided with f not yet Skipped (`…: c Skipped`). Flows are now decided after the flows
    they read."""
    sim = flowsim.Sim([fl("e"), fl("b", when="outputs.e.k == 'a'"), fl("c", when="outputs.b == 'a'"),
                       fl("d", when="outputs.b == 'a'"), fl("f", "d", when="outputs.b == 'a'"), fl("g", "f", "c")])
    sim.finish("jf-e", C, "x")
    assert sim.cond("g") == {"phase": "Skipped", "reason": "DependencyNeverMet",
                             "message": "dependsOn targets f, c can no longer all be Completed: f Skipped, c Skipped"}


@pytest.mark.parametrize("failed_at, retry_at", [
    pytest.param(12.0, "2026-01-01T00:00:17Z", id="failed-at-a-whole-second"),
    pytest.param(12.5, "2026-01-01T00:00:18Z", id="within-a-second-rounded-up"),
])
def test_a_retry_waiting_says_when_its_next_attempt_is_due(failed_at, retry_at):
    """`retryAt`: when the back-off ends (rounded up to the second: the attempt is never made after it); gone once
    the next attempt is made."""
    sim = flowsim.Sim([fl("a", retry={"limit": 2, "backoff": {"duration": "5s"}})])
    sim.set("jf-a", "Running")
    sim.advance(failed_at)
    sim.set("jf-a", F)
    assert (sim.reason("a"), sim.cond("a").get("retryAt")) == ("RetryBackoff", retry_at)
    sim.advance(6)
    assert sim.created == ["jf-a", "jf-a"] and "retryAt" not in sim.cond("a")


@pytest.mark.parametrize("finish, outcomes", [
    pytest.param([("a", F), ("b", C)], {"outcomes.a": "Failed", "outcomes.b": "Completed", "outcomes.c": "NotCreated",
                                        "outcomes.d": "Skipped"}, id="after-a-stop"),
    pytest.param([("b", C), ("c", C), ("a", C)], {"outcomes.a": "Completed", "outcomes.b": "Completed",
                                                  "outcomes.c": "Completed", "outcomes.d": "Skipped"},
                 id="after-success"),
])
def test_the_exit_handlers_template_reads_the_other_flows_outcomes(finish, outcomes):
    """`{{outcomes.<flow>}}`: what Argo's exit handler learns from {{workflow.status}} / {{workflow.failures}}."""
    sim = flowsim.Sim([fl("e"), fl("a"), fl("b"), fl("c", "b"), fl("d", when="params.go == 'yes'")], onExit="e",
                      arguments={"parameters": [{"name": "go", "value": "no"}]})
    for job, phase in finish:
        sim.finish("jf-" + job, phase)
    got, waiting = sim.eng.values_for(sim.eng.flows["e"].insts[0], sorted(outcomes))
    assert ({k: got[k] for k in outcomes} if got else got, waiting) == (outcomes, [])


@pytest.mark.parametrize("finish, workflow", [
    pytest.param([("a", F), ("b", C)], {"status": "Failed", "failures": [
        {"name": "a", "outcome": "Failed", "message": "vcjob jf-a Failed", "handled": False}]}, id="after-a-stop"),
    pytest.param([("b", C), ("c", C), ("a", C)], {"status": "Succeeded", "failures": []}, id="after-success"),
    pytest.param([("a", F), ("b", "Terminated")], {"status": "Failed", "failures": [
        {"name": "a", "outcome": "Failed", "message": "vcjob jf-a Failed", "handled": False},
        {"name": "b", "outcome": "Terminated", "message": "vcjob jf-b Terminated", "handled": False}]},
        id="spec-order"),
])
def test_the_exit_handlers_template_reads_the_whole_jobflow(finish, workflow):
    """`{{workflow.status}}` and `{{workflow.failures}}` (a JSON list; `{{workflow.failures.0.name}}` walks it)."""
    sim = flowsim.Sim([fl("e"), fl("a"), fl("b"), fl("c", "b")], onExit="e")
    for job, phase in finish:
        sim.finish("jf-" + job, phase)
    names = ["workflow.status", "workflow.failures"]
    got, waiting = sim.eng.values_for(sim.eng.flows["e"].insts[0], names)
    assert waiting == [] and got["workflow.status"] == workflow["status"]
    assert json.loads(got["workflow.failures"]) == workflow["failures"]
    if workflow["failures"]:
        assert flowtemplate.lookup("workflow.failures.0.name", got) == workflow["failures"][0]["name"]
        # (the fields admission lets a condition or placeholder read of an element: flowsyntax.FAILURE_FIELDS)
        assert all(tuple(f) == flowsyntax.FAILURE_FIELDS for f in json.loads(got["workflow.failures"]))


# ---- the exit handler looping over {{workflow.failures}} ------------------------------------------------------
FAILURES_FLOWS = [fl("e", withParam="{{workflow.failures}}"), fl("a"), expr("b", "a.Finished"), fl("c", "b")]
NOTIFY = "echo {{item.name}} {{item.outcome}} {{item.handled}}: {{item.message}}"


@pytest.mark.parametrize("finish, commands, phase, summary", [
    pytest.param([("a", F, "disk full"), ("b", F, "")],
                 [("jf-e-0", "echo a Failed true: vcjob jf-a Failed: disk full"),
                  ("jf-e-1", "echo b Failed false: vcjob jf-b Failed")], "Failed", ("FanOut", "2 items: 2 Completed"),
                 id="one-vcjob-per-failure-handled-or-not"),
    pytest.param([("a", F, "oom\n  at step 7\n"), ("b", C, ""), ("c", C, "")],
                 [("jf-e-0", "echo a Failed true: vcjob jf-a Failed: oom at step 7")], "Succeed",
                 ("FanOut", "1 item: 1 Completed"), id="a-handled-failure-of-a-succeeding-jobflow"),
    pytest.param([("a", C, ""), ("b", C, ""), ("c", C, "")], [], "Succeed",
                 ("NoItems", "no failures: nothing to run"), id="no-failures-nothing-to-run"),
])
def test_the_exit_handler_makes_one_vcjob_per_failure(finish, commands, phase, summary):
    """`withParam: "{{workflow.failures}}"` in the exit handler: one vcjob per flow that failed (spec order), each
    reading its failure's fields as `{{item.<field>}}` (its message says what the pod wrote, as Argo's does)."""
    sim = flowsim.Sim(FAILURES_FLOWS, onExit="e", templates={f: NOTIFY if f == "e" else "true" for f in "eabc"})
    for job, phase_, output in finish:
        sim.finish("jf-" + job, phase_, output)
    assert sim.commands[len(sim.commands) - len(commands):] == commands
    for name, _ in commands:
        sim.finish(name, C)
    assert sim.phase == phase
    assert (sim.reason("e"), sim.cond("e").get("message")) == summary


def test_the_exit_handlers_failure_items_are_the_same_after_a_restart():
    """A controller restarted while the handler's items run reads the same failures (the other flows' outcomes are
    settled after its load): an item retried then is made as it was the first time."""
    flows = [fl("e", withParam="{{workflow.failures}}", retry={"limit": 1}), *FAILURES_FLOWS[1:]]
    sim = flowsim.Sim(flows, onExit="e", templates={f: NOTIFY if f == "e" else "true" for f in "eabc"})
    sim.finish("jf-a", F, "disk full")
    sim.finish("jf-b", F)
    sim.finish("jf-e-0", C)
    sim.restart()
    sim.finish("jf-e-1", F)
    assert [c for c in sim.commands if c[0] == "jf-e-1"] == [("jf-e-1", "echo b Failed false: vcjob jf-b Failed")] * 2
    sim.finish("jf-e-1", C)
    assert sim.phase == "Failed" and (sim.reason("e"), sim.cond("e")["message"]) == ("FanOut", "2 items: 2 Completed")


def test_a_plan_refuses_the_failures_outside_the_exit_handler():
    """On a cluster without admission: the flow is blocked, saying why."""
    from vclite.controllers.jobflow import plan as plan_mod
    p = plan_mod.compile_spec({"flows": [fl("a", withParam="{{workflow.failures}}")]}, "jf")
    assert p.blocked == {"a": "withParam: {{workflow.failures}} is read by the exit handler (spec.onExit) only"}


def test_an_exit_handler_over_many_failures_reads_the_failures_once_not_once_per_item(monkeypatch):
    """`withParam: "{{workflow.failures}}"` over n failures: each item's vcjob reads its failure, and every
    `{{workflow.…}}`/`{{outcomes.…}}` value, from what was assembled once the other flows had finished — n failure
    messages in all, not n for each of n items (10,000 failures took minutes)."""
    n = 300
    told = []
    real = outputs.Outputs._failure_message
    monkeypatch.setattr(outputs.Outputs, "_failure_message", lambda self, fr: told.append(fr.d.name) or real(self, fr))
    templates = {f"f{i}": "exit 3" for i in range(n)}
    templates["e"] = "echo {{item.name}} {{outcomes.f0}} {{workflow.status}}"
    sim = flowsim.Sim([fl("e", withParam="{{workflow.failures}}"), *(fl(f"f{i}") for i in range(n))], onExit="e",
                      templates=templates)
    for i in range(n):
        sim.set(f"jf-f{i}", "Running")
    for i in range(n):
        sim.set(f"jf-f{i}", F)
    assert [c for job, c in sim.commands if job.startswith("jf-e-")] == [f"echo f{i} Failed Failed" for i in range(n)]
    assert len(told) <= 3 * n, f"{len(told)} failure messages for {n} failures"
