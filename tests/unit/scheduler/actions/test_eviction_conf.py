"""preempt and reclaim in volcano-scheduler.conf: Volcano's arguments load, what vclite lacks fails
at load with a plain message."""
from __future__ import annotations

import pytest

from vclite.scheduler import conf
from vclite.scheduler.actions import preempt, reclaim

CI_CONF = """
actions: "enqueue, allocate, backfill, reclaim, preempt"
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: false, topologyAwarePreemptWorkerNum: 8,
              minCandidateNodesPercentage: 5, minCandidateNodesAbsolute: 2, maxCandidateNodesAbsolute: 50,
              predicateErrorCacheEnable: true}
- name: reclaim
  arguments: {predicateErrorCacheEnable: false}
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}]
"""


def test_volcano_ci_style_configuration_loads():
    c = conf.parse(CI_CONF)
    assert c.action_names == ("enqueue", "allocate", "backfill", "reclaim", "preempt")
    actions = {a.name: a for a in c.actions}
    assert actions["preempt"].action is preempt.Preempt and actions["reclaim"].action is reclaim.Reclaim
    assert actions["preempt"].args.minCandidateNodesAbsolute == 2
    assert actions["reclaim"].args.predicateErrorCacheEnable is False


@pytest.mark.parametrize("text, message", [
    pytest.param('actions: "preempt"\nconfigurations: [{name: preempt, arguments: {enableTopologyAwarePreemption: true}}]'
                 '\ntiers: []', "enableTopologyAwarePreemption: true is not supported", id="topology-aware preemption"),
    pytest.param('actions: "reclaim"\nconfigurations: [{name: reclaim, arguments: {foo: 1}}]\ntiers: []',
                 'action "reclaim": unknown argument "foo"', id="unknown reclaim argument"),
    pytest.param('actions: "preempt"\ntiers: [{plugins: [{name: drf, enableHierarchy: true}]}]',
                 "enableHierarchy is not supported", id="hierarchical drf"),
])
def test_rejected_at_load(text, message):
    with pytest.raises(ValueError) as e:
        conf.parse(text)
    assert message in str(e.value)
