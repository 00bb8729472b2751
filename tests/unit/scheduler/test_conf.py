"""Scheduler configuration: Volcano's YAML format, flag defaults, and errors that name the offender."""
from __future__ import annotations

import pytest

from tests import scheduler_confs
from vclite.scheduler import conf

HELM = scheduler_confs.helm_conf("enqueue, allocate, backfill")


def test_default_conf_is_volcanos():
    c = conf.default_conf()
    assert c.action_names == ("enqueue", "allocate", "backfill")
    assert [[o.name for o in t] for t in c.tiers] == [
        ["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"]]


def test_yaml_flags_default_on_and_can_be_turned_off():
    c = conf.parse(HELM)
    gang = c.tiers[0][1]
    assert gang.enabled("enableJobReady") and not gang.enabled("enablePreemptable")
    assert not gang.enabled("enableHierarchy")  # opt-in even in YAML
    assert not gang.enabled("enabledClusterOrder")  # ApplyPluginConfDefaults leaves it unset too
    assert gang.enabled("enabledHyperNodeGradient") and gang.enabled("enabledSubJobOrder")


def test_in_code_flags_default_off():
    c = conf.build("allocate", [[conf.plugin("gang", enableJobReady=True)]])
    gang = c.tiers[0][0]
    assert gang.enabled("enableJobReady") and not gang.enabled("enableJobOrder")


def test_typed_arguments_are_parsed_at_load():
    c = conf.parse("""
actions: "allocate"
tiers:
- plugins:
  - name: predicates
    arguments: {predicate.NodeAffinityEnable: "false"}
  - name: binpack
    arguments: {binpack.weight: 10, binpack.resources: "nvidia.com/gpu", binpack.resources.nvidia.com/gpu: 7}
  - name: overcommit
    arguments: {overcommit-factor: 1.5}
configurations:
- name: allocate
  arguments: {predicateErrorCacheEnable: true}
""")
    predicates, binpack, overcommit = c.tiers[0]
    assert predicates.args.node_affinity is False
    assert binpack.args.weight == 10.0 and binpack.args.extra == {"binpack.resources.nvidia.com/gpu": 7}
    assert overcommit.args.factor == 1.5


# Arguments Volcano reads (each under the name its code reads it by) load here too.
@pytest.mark.parametrize("text, attr, want", [
    pytest.param('actions: "allocate, backfill"\ntiers: []\nconfigurations: [{name: backfill, arguments: '
                 '{predicateErrorCacheEnable: false}}]', None, None, id="backfill predicateErrorCacheEnable"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{volumebinding.weight: 2, volumebinding.bindTimeoutSeconds: 30}}]}]',
                 "volume_binding_timeout", 30, id="predicates volumebinding weight and timeout"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: {volumebinding.shape: '
                 '[{utilization: 0, score: 10}, {Utilization: 100, Score: 0}]}}]}]',
                 "volume_binding_shape", ((0, 10), (100, 0)), id="predicates volumebinding.shape"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{dynamicresources.filterTimeoutSeconds: 15}}]}]', "dra_filter_timeout", 15,
                 id="predicates dynamicresources.filterTimeoutSeconds"),
])
def test_volcano_arguments_load(text, attr, want):
    c = conf.parse(text)
    if attr:
        assert getattr(c.tiers[0][0].args, attr) == want


@pytest.mark.parametrize("text, message", [
    pytest.param('actions: "enqueue, allocat"\ntiers: []', 'unknown action "allocat"', id="unknown action"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{volumebinding.shape: [{utilization: 0, score: high}]}}]}]',
                 "argument 'volumebinding.shape'[0]: expected {utilization: <integer>, score: <integer>}",
                 id="shape point not integers"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{volumebinding.shape: 10}}]}]', "argument 'volumebinding.shape': expected a list",
                 id="shape not a list"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{volumebinding.bindTimeoutSeconds: "600"}}]}]',
                 "argument 'volumebinding.bindTimeoutSeconds': expected an integer", id="quoted timeout"),
    pytest.param('actions: "allocate, gangPreempt"\ntiers: []', 'unknown action "gangPreempt" (known: allocate, '
                 'backfill, enqueue, gangpreempt, gangreclaim, ', id="action names are lower case, as Volcano's"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: gangg}]}]', 'unknown plugin "gangg"',
                 id="unknown plugin"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: numa-aware, arguments: {weight: 1.5}}]}]',
                 "argument 'weight': expected an integer", id="numa-aware weight not an integer"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: proportion}]}, {plugins: [{name: capacity}]}]',
                 'capacity and proportion cannot be used together',
                 id="capacity and proportion, even in different tiers"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: gang, enableJobRedy: true}]}]',
                 'unknown field "enableJobRedy" (did you mean "enableJobReady"?)', id="unknown flag"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: gang, enableJobReady: "yes"}]}]',
                 "enableJobReady must be true or false", id="flag not a bool"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: {predicate.Foo: true}}]}]',
                 'plugin "predicates": unknown argument "predicate.Foo"', id="unknown argument"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: overcommit, arguments: {overcommit-factor: x}}]}]',
                 "argument 'overcommit-factor': expected a number, unquoted, got 'x'; Volcano ignores any other value",
                 id="argument of the wrong type"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: overcommit, arguments: {overcommit-factor: "1.5"}}]}]',
                 "argument 'overcommit-factor': expected a number, unquoted, got '1.5'", id="quoted float"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: binpack, arguments: {binpack.weight: "10"}}]}]',
                 "argument 'binpack.weight': expected an integer, unquoted, got '10'", id="quoted integer"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: binpack, arguments: {binpack.cpu: 2.5}}]}]',
                 "argument 'binpack.cpu': expected an integer, unquoted, got 2.5", id="float for an integer"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: binpack, arguments: {binpack.resources: gpu, '
                 'binpack.resources.gpu: "3"}}]}]', "argument 'binpack.resources.gpu': expected an integer",
                 id="quoted resource weight"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: predicates, arguments: '
                 '{predicate.NodeAffinityEnable: "yes"}}]}]', "argument 'predicate.NodeAffinityEnable': expected true "
                 "or false", id="bool string strconv.ParseBool refuses"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: binpack, arguments: {binpack.resources: 7}}]}]',
                 "argument 'binpack.resources': expected a string (quote it), got 7", id="number for a string"),
    pytest.param('actions: "enqueue, allocate,"\ntiers: []', 'an empty action name in "enqueue, allocate," '
                 "(a stray comma?)", id="trailing comma"),
    pytest.param('actions: "allocate"\nconfigurations: [{name: allocate, arguments: {foo: 1}}]\ntiers: []',
                 'action "allocate": unknown argument "foo"', id="unknown action argument"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: gang}, {name: gang}]}]', "listed twice",
                 id="plugin twice in a tier"),
    pytest.param('actions: "allocate"\ntiers: [{plugins: [{name: drf, enableHierarchy: true}, {name: proportion}]}]',
                 "cannot be used with proportion", id="hierarchical drf beside proportion"),
    pytest.param('actions: ""\ntiers: []', "at least one action", id="no action"),
    pytest.param('action: "allocate"', 'unknown field "action"', id="misspelt top-level field"),
])
def test_errors_name_the_offender(text, message):
    with pytest.raises(ValueError, match=None) as e:
        conf.parse(text)
    assert message in str(e.value)


def test_arguments_wrong_only_together_are_refused_at_the_arguments_line():
    """Each argument is parsed alone first (its own line); `check_together()` then sees the whole set."""
    import dataclasses

    from vclite.scheduler import registry
    from vclite.scheduler.framework import plugin as plugin_mod

    @dataclasses.dataclass(frozen=True)
    class Args:
        low: int = plugin_mod.arg("t.low", 0)
        high: int = plugin_mod.arg("t.high", 10)

        def check_together(self):
            if self.low > self.high:
                raise ValueError(f'plugin "together": t.low {self.low} is above t.high {self.high}')

    class Together:
        name, Arguments = "together", Args

    reg = registry.default_registry().with_plugins(Together)
    text = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: together\n    arguments:\n      t.low: 20\n'
    with pytest.raises(conf.ConfError) as e:
        conf.parse(text, "sched.conf", registry=reg)
    assert str(e.value) == 'sched.conf:5: plugin "together": t.low 20 is above t.high 10'
    assert conf.parse(text.replace("20", "5"), "sched.conf", registry=reg).tiers[0][0].args == Args(5, 10)
