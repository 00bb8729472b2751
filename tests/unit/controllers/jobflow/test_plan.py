"""Compiling a JobFlow spec: one dependency tree per flow, reverse edges, and why a flow is blocked
(DAG validation with the new dependency kinds: cycles through expressions and outputs, unknown names)."""
from __future__ import annotations

import pytest

from vclite.controllers.jobflow import plan


def compiled(flows, **spec):
    return plan.compile_spec({"flows": flows, **spec}, "jf")


@pytest.mark.parametrize("flow, dependency, refs", [
    pytest.param({"name": "b"}, None, (), id="none"),
    pytest.param({"name": "b", "dependsOn": {"targets": []}}, None, (), id="empty-targets"),
    pytest.param({"name": "b", "dependsOn": {"targets": ["a"]}}, "a.Completed", ("a",), id="one-target"),
    pytest.param({"name": "b", "dependsOn": {"targets": ["a", "c", "a"]}}, "a.Completed && c.Completed", ("a", "c"),
                 id="all-deduplicated"),
    pytest.param({"name": "b", "dependsOn": {"targets": ["a", "c"], "strategy": "any"}},
                 "a.AnyCompleted || a.Completed || c.AnyCompleted || c.Completed", ("a", "c"), id="any"),
    pytest.param({"name": "b", "dependsOn": {"expression": "a.Failed || !c"}}, "a.Failed || !c.Completed", ("a", "c"),
                 id="expression"),
    pytest.param({"name": "b", "dependsOn": {"targets": ["a"], "probe": {"taskStatusList": [
        {"taskName": "ps", "phase": "Running"}]}}}, "probe:a.Completed", ("a",), id="probe-pseudo-flow"),
    pytest.param({"name": "b", "when": "outputs.c == 'x'", "dependsOn": {"targets": ["a"]}},
                 "a.Completed && c.Completed", ("a", "c"), id="when-reads-an-output"),
    pytest.param({"name": "b", "withParam": "{{outputs.c}}"}, "c.Completed", ("c",), id="with-param"),
    # an expression naming the flow read decides which outcomes it accepts: the read only waits
    pytest.param({"name": "b", "when": "outputs.c == 'x'", "dependsOn": {"expression": "c.Failed"}},
                 "c.Failed && c.Finished", ("c",), id="output-of-a-flow-the-expression-names"),
    pytest.param({"name": "b", "repeat": {"until": "outputs.b > 1", "limit": 2}}, None, (), id="until-own-output"),
    pytest.param({"name": "b", "patch": {"jobSpec": {"queue": "{{outputs.c}}"}}}, "c.Completed", ("c",),
                 id="patch-reads-an-output"),
])
def test_dependency_tree(flow, dependency, refs):
    fd = compiled([{"name": "a"}, {"name": "c"}, flow]).flows["b"]
    assert (str(fd.dependency) if fd.dependency else None, fd.refs, fd.error) == (dependency, refs, "")


def test_simple_dependencies_are_counted_not_evaluated():
    p = compiled([{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}},
                  {"name": "c", "dependsOn": {"expression": "a"}}])
    assert (p.flows["b"].simple, p.flows["c"].simple) == (True, False)
    assert p.dependents == {"a": ("b", "c"), "b": (), "c": ()}


@pytest.mark.parametrize("flows, spec, blocked", [
    pytest.param([{"name": "a", "dependsOn": {"expression": "a.Completed"}}], {}, {"a": "cycle"}, id="self-cycle"),
    pytest.param([{"name": "a", "dependsOn": {"expression": "b.Failed"}}, {"name": "b", "when": "outputs.a == 1"}],
                 {}, {"a": "cycle", "b": "cycle"}, id="cycle-through-expression-and-output"),
    pytest.param([{"name": "a", "dependsOn": {"expression": "zz.Completed"}}], {}, {"a": "undefined"},
                 id="expression-names-no-flow"),
    pytest.param([{"name": "a", "dependsOn": {"expression": "a.Completed &&"}}], {}, {"a": "expected a flow"},
                 id="malformed-expression"),
    pytest.param([{"name": "a", "when": "params.x =="}], {}, {"a": "expected a value"}, id="malformed-when"),
    pytest.param([{"name": "a", "withItems": [1], "repeat": {"until": "true", "limit": 2}}], {},
                 {"a": "cannot be combined"}, id="loop-and-repeat"),
    pytest.param([{"name": "a", "withParam": "outputs.b"}, {"name": "b"}], {}, {"a": "withParam"},
                 id="with-param-not-a-placeholder"),
    pytest.param([{"name": "a", "retry": {"limit": -1}}], {}, {"a": "retry.limit"}, id="negative-retry"),
    pytest.param([{"name": "a", "retry": {"limit": 1, "backoff": {"duration": "soon"}}}], {},
                 {"a": "invalid duration"}, id="bad-backoff"),
    pytest.param([{"name": "e", "dependsOn": {"targets": ["a"]}}, {"name": "a"}], {"onExit": "e"},
                 {"e": "cannot have dependencies"}, id="exit-handler-with-dependencies"),
    pytest.param([{"name": "e"}, {"name": "a", "dependsOn": {"targets": ["e"]}}], {"onExit": "e"},
                 {"a": "exit handler"}, id="depending-on-the-exit-handler"),
    pytest.param([{"name": "e", "when": "outputs.a == 1", "withParam": "{{outputs.b}}"}, {"name": "a"}, {"name": "b"}],
                 {"onExit": "e"}, {}, id="the-exit-handler-may-read-outputs"),
    pytest.param([{"name": "a", "withItems": [1, 2]}, {"name": "a-1"}], {}, {"a-1": "clash with item 1"},
                 id="name-clash-with-a-loop-item"),
])
def test_blocked(flows, spec, blocked):
    p = compiled(flows, **spec)
    got = {}
    for name in p.flows:
        if name in p.cycle:
            got[name] = "cycle"
        elif name in p.undefined:
            got[name] = "undefined"
        elif name in p.blocked:
            got[name] = p.blocked[name]
    assert set(got) == set(blocked)
    for name, text in blocked.items():
        assert text in got[name], got[name]


def test_exit_handler_goes_last_and_may_be_implicit():
    assert list(compiled([{"name": "e"}, {"name": "a"}], onExit="e").flows) == ["a", "e"]
    p = compiled([{"name": "a"}], onExit="notify")
    assert list(p.flows) == ["a", "notify"] and p.flows["notify"].exit and p.exit == "notify"


@pytest.mark.parametrize("spec, extended", [
    pytest.param({"flows": [{"name": "a", "dependsOn": {"targets": ["b"]}}, {"name": "b"}],
                  "jobRetainPolicy": "delete"}, False, id="volcano"),
    pytest.param({"flows": [{"name": "a", "dependsOn": {"targets": ["b"], "probe": {"taskStatusList": []}}},
                            {"name": "b"}]}, False, id="volcano-probe"),
    pytest.param({"flows": [{"name": "a", "when": "true"}]}, True, id="when"),
    pytest.param({"flows": [{"name": "a", "dependsOn": {"strategy": "any", "targets": []}}]}, True, id="strategy"),
    pytest.param({"flows": [], "arguments": {"parameters": []}}, False, id="empty-arguments"),
    pytest.param({"flows": [{"name": "a"}], "onExit": "a"}, True, id="on-exit"),
])
def test_extended(spec, extended):
    assert plan.is_extended(spec) is extended


@pytest.mark.parametrize("probe, entries", [
    pytest.param({"taskStatusList": [{"taskName": "ps", "phase": "Running"}]},
                 [plan.ProbeEntry("taskStatus", "ps", phase="Running")], id="task-status"),
    pytest.param({"httpGetList": [{"taskName": "s", "port": 80, "httpHeader": {"name": "X", "value": "1"}}]},
                 [plan.ProbeEntry("httpGet", "s", port=80, path="/", header=("X", "1"))], id="http-default-path"),
    pytest.param({"tcpSocketList": [{"taskName": "s", "port": 5432}, {"port": 1}]},
                 [plan.ProbeEntry("tcpSocket", "s", port=5432)], id="tcp-entry-without-task-ignored"),
])
def test_probe_entries(probe, entries):
    fd = compiled([{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"], "probe": probe}}]).flows["b"]
    assert list(fd.probe) == entries
    assert fd.probes_for("a", ["ps", "s"]) == tuple(entries) and fd.probes_for("a", ["other"]) == ()
