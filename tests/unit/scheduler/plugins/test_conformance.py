"""conformance: critical pods are never victims."""
from __future__ import annotations

import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import conformance


def _task(namespace, priority_class):
    pod = o.pod(f"{namespace}/p", "g", node="n1", phase="Running")
    if priority_class:
        pod["spec"]["priorityClassName"] = priority_class
    st = o.state([o.node("n1")], None, [o.pg(f"{namespace}/g")], [pod])
    ssn = session.open_session(st, o.default_conf(), o.NOW)
    return next(iter(ssn.jobs[f"{namespace}/g"].tasks.values()))


@pytest.mark.parametrize("namespace, priority_class, is_critical", [
    pytest.param("default", None, False, id="ordinary pod"),
    pytest.param("default", "system-cluster-critical", True, id="cluster critical"),
    pytest.param("default", "system-node-critical", True, id="node critical"),
    pytest.param("kube-system", None, True, id="kube-system namespace"),
    pytest.param("kube-system", "low", True, id="kube-system with any class"),
    pytest.param("default", "high-priority", False, id="another class"),
    pytest.param("kube-public", None, False, id="other system-looking namespace"),
])
def test_critical(namespace, priority_class, is_critical):
    task = _task(namespace, priority_class)
    assert conformance.critical(task) is is_critical
    assert conformance.evictable(task, [task]) == ([] if is_critical else [task])


def test_volcano_conformance_plugin():
    """conformance_test.go TestConformancePlugin: with conformance{preemptable} alone, of a kube-system pod
    and an ordinary one, only the ordinary one is a victim."""
    pods = [o.pod("kube-system/test-pod", "pg1", node="test-node", phase="Running"),
            o.pod("test-namespace/test-pod", "pg1", node="test-node", phase="Running")]
    st = o.state([o.node("test-node")], None, [o.pg("kube-system/pg1"), o.pg("test-namespace/pg1")], pods)
    c = conf.build("preempt", [[conf.plugin("conformance", enablePreemptable=True)]])
    ssn = session.open_session(st, c, o.NOW)
    system, ordinary = (next(iter(ssn.jobs[f"{ns}/pg1"].tasks.values())) for ns in ("kube-system", "test-namespace"))
    victims = ssn.hooks.call(hooks.Point.PREEMPTABLE, ordinary, [system, ordinary])
    assert victims == [ordinary]
