"""A bad volcano-scheduler.conf is refused at load, every problem named by file and line."""
from __future__ import annotations

import pytest

from vclite.scheduler import conf, registry

KNOWN_PLUGINS = ", ".join(sorted(registry.default_registry().plugins))
HEAD = 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'


@pytest.mark.parametrize("text, problems", [
    pytest.param(HEAD + "- plugins:\n  - name: nodeorderr\n",
                 [f'sched.conf:7: unknown plugin "nodeorderr" (known: {KNOWN_PLUGINS})'],
                 id="unknown plugin"),
    pytest.param('actions: "enqueue, alocate"\ntiers: []\n',
                 ['sched.conf:1: unknown action "alocate" (known: allocate, backfill, enqueue, gangpreempt, '
                  'gangreclaim, preempt, reclaim, shuffle)'],
                 id="unknown action"),
    pytest.param('actions: "allocate, gangpreempt"\nconfigurations:\n- name: gangpreempt\n  arguments:\n'
                 '    maxDomains: 0\n    allowWholeBundle: sometimes\ntiers: []\n',
                 ['sched.conf:5: action "gangpreempt": argument \'maxDomains\': must be a positive number of '
                  'HyperNodes to search, got 0 (Volcano logs it and searches 8)',
                  'sched.conf:6: action "gangpreempt": argument \'allowWholeBundle\': expected true or false (or a '
                  'string strconv.ParseBool reads: "true", "1", "f"…), got \'sometimes\'; Volcano ignores any other '
                  'value and keeps the default'], id="bad gangpreempt arguments"),
    pytest.param(HEAD + "  - name: numa-aware\n    arguments:\n      weight: \"10\"\n",
                 ['sched.conf:8: plugin "numa-aware": argument \'weight\': expected an integer, unquoted, got \'10\'; '
                  'Volcano ignores any other value and keeps the default'],
                 id="numa-aware weight quoted"),
    pytest.param(HEAD + "  - name: numa-aware\n    arguments:\n      numa-aware.weight: 10\n",
                 ['sched.conf:8: plugin "numa-aware": unknown argument "numa-aware.weight" (known: weight)'],
                 id="numa-aware argument misnamed"),
    pytest.param(HEAD + "  - name: predicates\n    arguments:\n      predicate.GPUNumberEnable: true\n",
                 ['sched.conf:8: plugin "predicates": unknown argument "predicate.GPUNumberEnable": GPU number is the '
                  "deviceshare plugin's now (Volcano ignores this old name, which its how_to_use_gpu_number.md still "
                  'shows): write "deviceshare.GPUNumberEnable: true" under a plugin "deviceshare"'],
                 id="gpu number under predicates, as Volcano's guide shows it"),
    pytest.param(HEAD + "  - name: predicates\n    arguments:\n      predicate.resources: nvidia.com/gpu\n"
                        "      predicate.resources.nvidia.com/gpu.cpu: 8\n",
                 [f'sched.conf:{line}: plugin "predicates": unknown argument "{key}": the proportional policy (a GPU\'s '
                  "share of cpu and memory kept for it) is the resource-strategy-fit plugin's now (Volcano's predicates "
                  "ignores this old argument, which its how_to_configure_scheduler.md still shows): write proportional: "
                  "{enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 8, "
                  'nvidia.com/gpu.memory: 8}} under a plugin "resource-strategy-fit"'
                  for line, key in ((8, "predicate.resources"), (9, "predicate.resources.nvidia.com/gpu.cpu"))],
                 id="proportional arguments under predicates, as Volcano's guide lists them"),
    pytest.param(HEAD + "- plugins:\n  - name: capacity\n  - name: proportion\n",
                 ['sched.conf:7: capacity and proportion cannot be used together'],
                 id="capacity with proportion"),
    pytest.param(HEAD + "    enableJobRedy: true\n",
                 ['sched.conf:6: plugin "gang": unknown field "enableJobRedy" (did you mean "enableJobReady"?)'],
                 id="misspelt flag"),
    pytest.param(HEAD + "    binpack.weight: 10\n",
                 ['sched.conf:6: plugin "gang": unknown field "binpack.weight" '
                  '(not an enable flag; arguments go under `arguments:`)'], id="an argument outside arguments"),
    pytest.param(HEAD + "    enableJobReady: maybe\n",
                 ["sched.conf:6: plugin \"gang\": enableJobReady must be true or false, got 'maybe'"],
                 id="flag not a boolean"),
    pytest.param(HEAD + "- plugins:\n  - name: nodeorder\n    arguments:\n      leastrequested.weight: 1\n"
                        "      leastrequested.wieght: 2\n",
                 ['sched.conf:10: plugin "nodeorder": unknown argument "leastrequested.wieght" (known: '],
                 id="unknown argument"),
    pytest.param(HEAD + "- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factr: 2\n",
                 ['sched.conf:9: plugin "overcommit": unknown argument "overcommit-factr" (known: overcommit-factor, '
                  'overcommit-factor.<name>)'],
                 id="unknown argument: the known ones are the arguments only (no internal field)"),
    pytest.param(HEAD + "- plugins:\n  - name: overcommit\n    arguments:\n      _factors: {}\n",
                 ['sched.conf:9: plugin "overcommit": unknown argument "_factors" (known: overcommit-factor, '
                  'overcommit-factor.<name>)'],
                 id="an internal field is no argument"),
    pytest.param(HEAD + "- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: lots\n",
                 ["sched.conf:9: plugin \"overcommit\": argument 'overcommit-factor': expected a number, unquoted, got 'lots'"],
                 id="argument of the wrong type"),
    pytest.param(HEAD + "- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: 1.5\n"
                        "      overcommit-factor.cpu: 0.8\n",
                 ["sched.conf:10: plugin \"overcommit\": argument 'overcommit-factor.cpu': must be at least 1, got 0.8 "
                  "(Volcano warns that overcommit-factor cannot be less than 1 and uses 1.2 instead); "
                  "1 means no overcommit"], id="overcommit factor below 1"),
    pytest.param(HEAD + "- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: 1.5\n",
                 ["sched.conf:9: plugin \"binpack\": argument 'binpack.weight': expected an integer, unquoted, got 1.5"],
                 id="binpack weight not an integer"),
    pytest.param(HEAD + "- plugins:\n  - name: binpack\n    arguments: [binpack.weight]\n",
                 ['sched.conf:8: plugin "binpack": arguments must be a mapping, got a list'],
                 id="arguments not a mapping"),
    pytest.param(HEAD + "  - name: gang\n", ['sched.conf:6: plugin "gang" is listed twice in this tier'],
                 id="plugin twice in a tier"),
    pytest.param(HEAD + "- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n",
                 ['sched.conf:8: drf with enableHierarchy cannot be used with proportion in the same tier'],
                 id="hierarchical drf beside proportion"),
    pytest.param(HEAD + "configurations:\n- name: allocate\n  arguments:\n    predicateErrorCacheEnable: true\n"
                        "    enableTopology: false\n",
                 ['sched.conf:10: action "allocate": unknown argument "enableTopology" '
                  '(known: predicateErrorCacheEnable)'], id="unknown action argument"),
    pytest.param(HEAD + "configurations:\n- name: preempt\n  arguments:\n    minCandidateNodesAbsolute: ten\n",
                 ["sched.conf:9: action \"preempt\": argument 'minCandidateNodesAbsolute': expected an integer"],
                 id="an action argument of the wrong type"),
    pytest.param(HEAD + "configurations:\n- name: allocat\n",
                 ['sched.conf:7: unknown action "allocat" (known: '], id="configuration of an unknown action"),
    pytest.param('actions: "allocate, allocate"\ntiers: []\n',
                 ['sched.conf:1: action "allocate" is listed twice in "allocate, allocate"'], id="action twice"),
    pytest.param('actions: [enqueue, allocate]\ntiers: []\n',
                 ['sched.conf:1: actions: must be a comma-separated string such as "enqueue, allocate, backfill"; '
                  'Volcano cannot read a list (it would fall back to its default configuration)'],
                 id="actions as a flow list"),
    pytest.param('tiers: []\nactions:\n- enqueue\n- allocate\n',
                 ['sched.conf:2: actions: must be a comma-separated string such as "enqueue, allocate, backfill"; '
                  'Volcano cannot read a list'], id="actions as a block list"),
    pytest.param('actions: {allocate: true}\ntiers: []\n',
                 ['sched.conf:1: actions: must be a comma-separated string such as "enqueue, allocate, backfill", '
                  'got a mapping'], id="actions as a mapping"),
    pytest.param('actions: ""\ntiers: []\n', ["sched.conf:1: at least one action is required"], id="no action"),
    pytest.param("tiers: []\n", ['sched.conf:1: actions: Required value'], id="actions missing"),
    pytest.param('action: "allocate"\nactions: "allocate"\n',
                 ['sched.conf:1: unknown field "action" (known: actions, tiers, configurations, metrics)'],
                 id="misspelt top-level field"),
    pytest.param('actions: "allocate"\ntiers:\n  plugins: [{name: gang}]\n',
                 ["sched.conf:2: must be a list of tiers"], id="tiers not a list"),
    pytest.param('actions: "allocate"\ntiers:\n- plugins: {name: gang}\n', ["sched.conf:3: must list plugins"],
                 id="plugins not a list"),
    pytest.param('actions: "allocate"\ntiers:\n- plugins:\n  - gang\n',
                 ["sched.conf:4: a plugin must be a mapping with a name"], id="plugin not a mapping"),
    pytest.param('actions: [allocate\n', ["sched.conf:2: invalid YAML: "], id="YAML syntax"),
    pytest.param("- allocate\n", ["sched.conf:1: a scheduler configuration must be a mapping with actions and tiers"],
                 id="not a mapping"),
    pytest.param("", ["sched.conf:1: a scheduler configuration must be a mapping"], id="empty file"),
    # Volcano's ConfigMap given as the file: four problems about apiVersion, kind, metadata and data
    pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap}\ndata:\n"
                 "  volcano-scheduler.conf: |\n    actions: \"allocate\"\n",
                 ['sched.conf:2: a Kubernetes manifest (kind: ConfigMap), not a volcano-scheduler.conf (actions and '
                  'tiers): give the configuration itself (a ConfigMap\'s data["volcano-scheduler.conf"]), or leave '
                  "this option out and give Volcano's ConfigMap volcano-system/volcano-scheduler-configmap with the "
                  "manifests (vcctl run, scheduler dry-run -f) or apply it (vcctl server)"], id="a ConfigMap"),
    pytest.param('apiVersion: v1\nkind: x\nactions: "allocat"\n',
                 ['sched.conf:1: unknown field "apiVersion"', 'sched.conf:2: unknown field "kind"',
                  'sched.conf:3: unknown action "allocat"'], id="a configuration with stray fields"),
    pytest.param('actions: "allocate"\n---\nactions: "enqueue"\n',
                 ["sched.conf:3: one YAML document expected"], id="two documents"),
    pytest.param('actions: "enqueue, alocate"\ntiers:\n- plugins:\n  - name: gangg\n  - name: drf\n'
                 '    enablePreemptable: no\n    enableJobOrdr: true\n',
                 ['sched.conf:1: unknown action "alocate"', 'sched.conf:4: unknown plugin "gangg"',
                  'sched.conf:7: plugin "drf": unknown field "enableJobOrdr"'],
                 id="every problem at once, in line order"),
])
def test_bad_configuration_names_file_and_line(text, problems):
    with pytest.raises(conf.ConfError) as e:
        conf.parse(text, "sched.conf")
    got = [str(p) for p in e.value.problems]
    assert len(got) == len(problems), got
    for g, want in zip(got, problems):
        assert g.startswith(want), got


def test_a_loaded_mapping_refuses_listed_actions_too():
    """A conf already loaded from YAML is Volcano's format as well; only `build` (in code) takes a list."""
    with pytest.raises(conf.ConfError) as e:
        conf.parse({"actions": ["allocate"], "tiers": []})
    assert str(e.value) == conf.LISTED_ACTIONS
    assert conf.build(["enqueue", "allocate"], []).action_names == ("enqueue", "allocate")


def test_load_file_names_the_file(tmp_path):
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(HEAD + "- plugins:\n  - name: nodeorderr\n")
    with pytest.raises(conf.ConfError) as e:
        conf.load_file(str(path))
    assert str(e.value).startswith(f'{path}:7: unknown plugin "nodeorderr"')
    with pytest.raises(conf.ConfError) as e:
        conf.load_file(str(tmp_path / "missing.conf"))
    assert str(e.value) == f"{tmp_path / 'missing.conf'}: cannot read: No such file or directory"
    path.write_bytes(b'actions: "allocate"\n# \xff\n')
    with pytest.raises(conf.ConfError) as e:
        conf.load_file(str(path))
    assert str(e.value).startswith(f"{path}:2: not UTF-8 text")


def test_without_text_problems_are_named_by_field_path():
    with pytest.raises(conf.ConfError) as e:
        conf.build("allocate", [[conf.plugin("gang"), conf.plugin("nodeorderr")]])
    assert str(e.value).startswith('tiers[0].plugins[1].name: unknown plugin "nodeorderr"')
    with pytest.raises(ValueError):   # ConfError is a ValueError: callers that caught those still do
        conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "arguments": {"x": 1}}]}]})


def test_a_good_file_loads(tmp_path):
    path = tmp_path / "ok.conf"
    path.write_text(HEAD + "- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: 10\n"
                           "      binpack.resources: nvidia.com/gpu\n      binpack.resources.nvidia.com/gpu: 5\n")
    c = conf.load_file(str(path))
    assert [[o.name for o in t] for t in c.tiers] == [["priority", "gang"], ["binpack"]]
