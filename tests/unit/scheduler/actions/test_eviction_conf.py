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


def test_topology_aware_preemption_loads():
    """Volcano's preempt_test.go configuration for TestTopologyAwarePreempt: accepted, with its defaults."""
    c = conf.parse('actions: "preempt"\n'
                   'configurations: [{name: preempt, arguments: {enableTopologyAwarePreemption: true}}]\ntiers: []')
    args = c.actions[0].args
    assert args.enableTopologyAwarePreemption is True
    bounds = (args.minCandidateNodesPercentage, args.minCandidateNodesAbsolute, args.maxCandidateNodesAbsolute)
    assert bounds == (10, 1, 100)


@pytest.mark.parametrize("nodes, pct, lo, hi, want", [
    (0, 10, 1, 100, 0), (1, 10, 1, 100, 1), (9, 10, 1, 100, 1), (50, 10, 1, 100, 5), (2000, 10, 1, 100, 100),
    (50, 10, 8, 100, 8), (5, 10, 8, 100, 5), (50, 100, 1, 20, 20), (50, -10, 1, 100, 1),
])
def test_num_candidates(nodes, pct, lo, hi, want):
    """calculateNumCandidates: the percentage of the nodes, clamped by the absolute bounds and the nodes."""
    assert preempt.Arguments(minCandidateNodesPercentage=pct, minCandidateNodesAbsolute=lo,
                             maxCandidateNodesAbsolute=hi).num_candidates(nodes) == want


def test_volcano_ci_style_configuration_loads():
    c = conf.parse(CI_CONF)
    assert c.action_names == ("enqueue", "allocate", "backfill", "reclaim", "preempt")
    actions = {a.name: a for a in c.actions}
    assert actions["preempt"].action is preempt.Preempt and actions["reclaim"].action is reclaim.Reclaim
    assert actions["preempt"].args.minCandidateNodesAbsolute == 2
    assert actions["reclaim"].args.predicateErrorCacheEnable is False


@pytest.mark.parametrize("text, message", [
    pytest.param('actions: "reclaim"\nconfigurations: [{name: reclaim, arguments: {foo: 1}}]\ntiers: []',
                 'action "reclaim": unknown argument "foo"', id="unknown reclaim argument"),
    pytest.param('actions: "reclaim"\ntiers: [{plugins: [{name: drf, enableHierarchy: true}, {name: proportion}]}]',
                 "drf with enableHierarchy cannot be used with proportion", id="hierarchical drf beside proportion"),
])
def test_rejected_at_load(text, message):
    with pytest.raises(ValueError) as e:
        conf.parse(text)
    assert message in str(e.value)
