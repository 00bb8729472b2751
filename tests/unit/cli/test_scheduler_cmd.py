"""`vcctl scheduler dry-run`'s pure parts: reading a state (defaults, notes) and the answer's shape."""
from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

from vclite.cli import dryrun, manifests, scheduler_cmd
from vclite.scheduler import conf
from vclite.scheduler.framework import session

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def node(name, cpu="4"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}


def queue(name, state="Open"):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1}, "status": {"state": state}}


def podgroup(name, q="default", phase="Inqueue", ns=None, min_member=1, conditions=None):
    md = {"name": name, **({"namespace": ns} if ns else {})}
    status = {"phase": phase} if phase else {}
    if conditions:
        status["conditions"] = conditions
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": md,
            "spec": {"queue": q, "minMember": min_member}, "status": status}


def pod(name, group, cpu="1", ns=None, scheduler="volcano", node_name=None, phase="Pending"):
    md = {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}, **({"namespace": ns} if ns else {})}
    spec = {"schedulerName": scheduler, "containers": [{"name": "c", "image": "busybox",
                                                       "resources": {"requests": {"cpu": cpu}}}]}
    if scheduler is None:
        del spec["schedulerName"]
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": {"phase": phase}}


@pytest.mark.parametrize("objects, added, notes", [
    pytest.param([node("n1")], True, ['Queue "default" is not declared: Volcano\'s default queue was added (weight 1).'],
                 id="default queue added"),
    pytest.param([queue("default")], False, [], id="default queue declared"),
    pytest.param([queue("default"), podgroup("pg", q="gone")], False,
                 ['PodGroup default/pg: queue "gone" does not exist, so the job is not in the session (as in Volcano): '
                  "nothing of it is scheduled and its status is not updated."], id="podgroup of a missing queue"),
    pytest.param([queue("default"), node("n1"), podgroup("pg"), pod("p", "pg", scheduler="default-scheduler")],
                 False,
                 ['Pod default/p: schedulerName is "default-scheduler", not "volcano": Volcano does not schedule it '
                  "(it only occupies its node, if bound)."], id="pod for another scheduler"),
    pytest.param([queue("default"), node("n1"), pod("p", "nope")], False,
                 ["Pod default/p: its PodGroup default/nope is not in the state: the pod is not scheduled (it only "
                  "occupies its node, if bound)."], id="pod of a missing podgroup"),
    # a bare volcano pod was silently left out (no bind, no PodGroup, no note)
    pytest.param([queue("default"), node("n1"), pod("p", None), pod("bound", None, node_name="n1"),
                  pod("kube", None, scheduler="default-scheduler")], False,
                 ["Pod default/p: no scheduling.k8s.io/group-name annotation, so it is not scheduled: Volcano's "
                  "controller first gives such a pod a PodGroup (podgroup-<uid>); a state lists that PodGroup and the "
                  "pod's annotation."],
                 id="volcano pod without a podgroup"),
    pytest.param([queue("default"), node("n1"), podgroup("pg"), pod("p", "pg", scheduler=None),
                  pod("q", "pg", scheduler=None),
                  pod("lost", "nope", scheduler=None)], False,
                 ['2 pod(s) of a PodGroup of the state name no schedulerName (default/p, default/q): taken as '
                  '"volcano"\'s (on a cluster they would get "default-scheduler", which Volcano does not schedule).',
                  "Pod default/lost: its PodGroup default/nope is not in the state: the pod is not scheduled (it only "
                  "occupies its node, if bound)."],
                 id="pods of a podgroup without a schedulerName"),
    pytest.param([queue("default"), node("n1"),
                  {**node("n2"), "status": {"allocatable": {"cpu": "1", "pods": "10"}, "conditions": [{"type": "Ready",
                                                                                       "status": "False"}]}}],
                 False, ["Node n2: its Ready condition is not True, so it is not in the session (as in Volcano's "
                         "snapshot): nothing is placed on it, and what runs there is not seen."],
                 id="a node that is not Ready"),
    # a typo'd class or node name changed the answer without a word
    pytest.param([queue("default"), node("n1"), {**podgroup("pg"), "spec": {"minMember": 1, "priorityClassName": "hi"}},
                  pod("p", "pg", node_name="n2", phase="Running")], False,
                 ['PodGroup default/pg: PriorityClass "hi" is not in the state: the job has the global default '
                  "class's priority (0 without one), as Volcano gives it when the class does not exist.",
                  'Pod default/p: bound to node "n2", which is not in the state: it counts for its job but occupies '
                  "no node of the session."],
                 id="a class and a node the state lacks"),
    pytest.param([queue("default"), node("n1"), podgroup("pg"), pod("p", "pg", phase="Running")], False,
                 ["Pod default/p: Running without a spec.nodeName: it counts for its job (as a task of Volcano's own "
                  "tests does) but occupies no node of the session."], id="running on no node"),
    # the gang's message said nothing of why (as Volcano's: no node, no fit error)
    pytest.param([queue("default"), podgroup("pg"), pod("p", "pg")], False,
                 ["The state declares no Node: nothing can be placed, and Volcano's message then names no node (give "
                  "the cluster's Nodes, with their status.allocatable)."], id="no node at all"),
    # the answer differs from Volcano's (nothing fits there) without a word
    pytest.param([queue("default"), {**node("n1"), "status": {"allocatable": {"cpu": "4"}}}, node("n2")], False,
                 ["Node n1: its status.allocatable has no pods: taken as 110, a kubelet's default (Volcano's scheduler "
                  "fits no pod on a node that advertises none; give pods as the cluster's node does)."],
                 id="a node without pods"),
    pytest.param([queue("default"), {**podgroup("pg"), "spec": {"minMember": 1,
                                                                "priorityClassName": "system-node-critical"}}],
                 False, [], id="a system class: every cluster has it"),
])
def test_build_state_notes(objects, added, notes):
    state = dryrun.build_state(objects)
    assert state.added_default_queue is added
    assert state.notes == notes

@pytest.mark.parametrize("scheduler, binds", [
    pytest.param(None, {"default/a": "n1", "default/b": "n1"}, id="none named: Volcano's, as the issue's states"),
    pytest.param("volcano", {"default/a": "n1", "default/b": "n1"}, id="volcano"),
    pytest.param("default-scheduler", {}, id="another scheduler named: not placed"),
])
def test_pods_of_a_podgroup_that_name_no_scheduler_are_scheduled(scheduler, binds):
    """A state written as the issue describes it (pods grouped by the annotation, no schedulerName) was read as
    kube-scheduler's pods: nothing was placed, whatever the scenario."""
    objects = [node("n1"), queue("default"), podgroup("pg", min_member=2),
               pod("a", "pg", scheduler=scheduler), pod("b", "pg", scheduler=scheduler)]
    out = dryrun.dry_run(dryrun.build_state(objects), conf.default_conf(), NOW)
    assert out["binds"] == binds
    assert "spec" in objects[3] and objects[3]["spec"].get("schedulerName") == scheduler   # the input is left alone



def test_build_state_defaults_namespaces_and_leaves_the_input_alone():
    objects = [node("n1"), podgroup("pg"), pod("p", "pg")]
    state = dryrun.build_state(objects)
    assert [p["metadata"]["namespace"] for p in state.cluster.pods + state.cluster.podgroups] == ["default", "default"]
    assert "namespace" not in objects[2]["metadata"] and "namespace" not in objects[1]["metadata"]
    assert [q["metadata"]["name"] for q in state.cluster.queues] == ["default"]


WAITING = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "old reason"}


def test_dry_run_answer_shape_and_content():
    objects = [node("n1", cpu="2"), queue("default"),
               podgroup("fits", ns="a"), pod("fits-0", "fits", ns="a"),
               podgroup("big", ns="a", min_member=1), pod("big-0", "big", cpu="8", ns="a"),
               podgroup("orphan", q="missing", ns="a", phase="", conditions=[WAITING])]
    state = dryrun.build_state(objects)
    out = dryrun.dry_run(state, conf.default_conf(), NOW)
    assert list(out) == ["binds", "evictions", "pipelined", "podGroupPhases", "unschedulable"]
    assert out["binds"] == {"a/fits-0": "n1"} and out["evictions"] == [] and out["pipelined"] == {}
    assert out["podGroupPhases"] == {"a/big": "Inqueue", "a/fits": "Inqueue", "a/orphan": "Pending"}
    assert set(out["unschedulable"]) == {"a/big", "a/orphan"}
    assert out["unschedulable"]["a/orphan"] == "old reason"   # not in the session: the condition as written
    assert "pod needs cpu 8, but the largest node has 2" in out["unschedulable"]["a/big"]
    table = dryrun.render_table(state, "Volcano's default", conf.default_conf(), out)
    for text in ("BINDS (1)", "a/fits-0   n1", "WHY PENDING", "a/orphan: old reason", 'queue "missing" does not exist'):
        assert text in table, table


def test_device_annotations_in_the_answer_and_the_table():
    gpu = node("g1")
    gpu["status"]["allocatable"].update({"volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "2"})
    p = pod("train-0", "train", ns="a")
    p["spec"]["containers"][0]["resources"]["limits"] = {"volcano.sh/gpu-memory": "4000"}
    state = dryrun.build_state([gpu, queue("default"), podgroup("train", ns="a"), p])
    cfg = conf.parse({"actions": "enqueue, allocate", "tiers": [[{"name": "gang"}, {"name": "predicates"}, {
        "name": "deviceshare", "arguments": {"deviceshare.GPUSharingEnable": True}}]]})
    out = dryrun.dry_run(state, cfg, NOW, details=True)
    assert "bindAnnotations" not in dryrun.dry_run(state, cfg, NOW)
    assert out["bindAnnotations"] == {"a/train-0": {"volcano.sh/gpu-index": "0",
                                                    "volcano.sh/predicate-time": "1767225600000000000"}}
    table = dryrun.render_table(state, "gpu.conf", cfg, out)
    assert "a/train-0 is bound with: volcano.sh/gpu-index=0, volcano.sh/predicate-time=1767225600000000000" in table



def test_a_pod_left_pending_in_a_placed_gang_says_why_with_details_and_in_the_table():
    """deviceshare without its predicate: the third pod gets no card, its allocation is refused and its gang (1 of 3)
    is satisfied, so no PodGroup message says why it waits; --details and the table show the pod's own reason
    (before: nothing at all about it)."""
    gpu = node("g1", cpu="8")
    gpu["status"]["allocatable"].update({"volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "2"})
    pods = [pod(f"p{i}", "pg", ns="a") for i in range(3)]
    for p in pods:
        p["spec"]["containers"][0]["resources"]["limits"] = {"volcano.sh/gpu-memory": "5000"}
    state = dryrun.build_state([gpu, queue("default"), podgroup("pg", ns="a"), *pods])
    cfg = conf.parse({"actions": "enqueue, allocate", "tiers": [[{"name": "gang"}, {"name": "predicates"}, {
        "name": "deviceshare", "enablePredicate": False, "arguments": {"deviceshare.GPUSharingEnable": True}}]]})
    plain = dryrun.dry_run(state, cfg, NOW)
    assert "pendingPods" not in plain and plain["unschedulable"] == {} and len(plain["binds"]) == 2
    out = dryrun.dry_run(state, cfg, NOW, details=True)
    assert list(out["pendingPods"]) == ["a/p2"]
    assert out["pendingPods"]["a/p2"].startswith('allocation to node "g1" undone: deviceshare: the node g1 '
                                                 "can't place the pod p2 in ns a"), out["pendingPods"]
    table = dryrun.render_table(state, "gpu.conf", cfg, out)
    assert "WHY PENDING (pods whose PodGroup is not waiting)\n  a/p2: allocation to node" in table, table

def test_a_node_whose_gpus_deviceshare_cannot_read_is_noted():
    gpu = node("g1")
    gpu["metadata"]["annotations"] = {"volcano.sh/node-vgpu-register": "GPU-0,10,16000,T4,true:"}
    gpu["status"]["allocatable"].update({"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-cores": "100",
                                         "volcano.sh/vgpu-memory": "16000"})
    state = dryrun.build_state([gpu, queue("default")])
    assert state.notes == ["Node g1: volcano.sh/node-vgpu-register entry 'GPU-0,10,16000,T4,true' has fewer than six "
                           "fields (UUID,count,memory,type,health,mode): deviceshare sees no GPU there (pods asking "
                           "for one fit it only by its resources, and get no device annotation)."]


def test_a_vgpu_card_whose_count_or_memory_is_no_integer_is_noted():
    """Volcano reads such a field as 0 (Atoi's error ignored): the card takes no pod, and nothing said so."""
    gpu = node("g1")
    gpu["metadata"]["annotations"] = {"volcano.sh/node-vgpu-register":
                                      "GPU-0,x,16000,NVIDIA-T4,true,hami-core:GPU-1,10,16_000,NVIDIA-T4,true,hami-core:"
                                      "GPU-2,10,16000,NVIDIA-T4,true,hami-core:"}
    gpu["status"]["allocatable"].update({"volcano.sh/vgpu-number": "30", "volcano.sh/vgpu-cores": "300",
                                         "volcano.sh/vgpu-memory": "48000"})
    state = dryrun.build_state([gpu, queue("default")])
    assert state.notes == [
        "Node g1: volcano.sh/node-vgpu-register card 'GPU-0': count 'x' is not an integer, so it counts 0 and the "
        "card takes no pod.",
        "Node g1: volcano.sh/node-vgpu-register card 'GPU-1': memory '16_000' is not an integer, so it counts 0 and "
        "the card takes no pod."]


def test_an_unhealthy_gpu_id_that_is_no_card_id_is_noted():
    gpu = node("g1")
    gpu["metadata"]["annotations"] = {"volcano.sh/gpu-unhealthy-ids": "1, 2"}
    gpu["status"]["allocatable"].update({"volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "4"})
    state = dryrun.build_state([gpu, queue("default")])
    assert state.notes == ["Node g1: volcano.sh/gpu-unhealthy-ids entry ' 2' is not a card id (an integer, no spaces), "
                           "so it is skipped and no card is taken out of use for it."]


def test_decisions_prefer_the_sessions_status():
    state = dryrun.build_state([podgroup("pg", ns="a", phase="Pending", conditions=[WAITING])])
    result = session.SessionResult(podgroup_status={"a/pg": {"phase": "Inqueue", "conditions": [
        dict(WAITING, status="False")]}})
    assert dryrun.decisions(state.cluster, result)["podGroupPhases"] == {"a/pg": "Inqueue"}
    assert dryrun.decisions(state.cluster, result)["unschedulable"] == {}


BAD_TIMES = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: c1, creationTimestamp: yesterday}
spec: {queue: default, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: c1
  annotations: {scheduling.k8s.io/group-name: pg}
spec:
  schedulerName: volcano
  nodeName: n1
  containers: [{name: c, image: x}]
status:
  phase: Running
  conditions:
    - {type: PodScheduled, status: "True", lastTransitionTime: "junk"}
"""


def test_a_time_that_does_not_parse_is_a_problem_of_its_file_and_line(tmp_path):
    """The session reads these times (job order, sla, cdp): a state file with one that is no RFC 3339
    time is refused with the field named, instead of a traceback from inside the session."""
    path = tmp_path / "state.yaml"
    path.write_text(BAD_TIMES)
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    got = sorted(str(p) for p in e.value.problems)
    assert got == [
        f"{path}:19: Pod/p: status.conditions[0].lastTransitionTime: Invalid value: 'junk': not an RFC 3339 time",
        f"{path}:3: PodGroup/pg: metadata.creationTimestamp: Invalid value: 'yesterday': not an RFC 3339 time"], got


PDB_CONF = """\
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
"""


@pytest.mark.parametrize("allowed, evictions", [pytest.param(0, [], id="the-budget-protects-both"),
                                                 pytest.param(1, ["default/low-1"], id="the-budget-allows-one")])
def test_a_state_with_a_disruption_budget_and_the_pdb_plugin(allowed, evictions):
    priority = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}
    low = [pod(f"low-{i}", "low", node_name="n1", phase="Running") for i in (0, 1)]
    for p in low:
        p["metadata"]["labels"] = {"app": "low"}
    high = pod("hi-0", "hi")
    high["spec"].update(priorityClassName="high", priority=1000)
    hi_group = podgroup("hi")
    hi_group["spec"]["priorityClassName"] = "high"
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "low"},
              "spec": {"minAvailable": 2 - allowed, "selector": {"matchLabels": {"app": "low"}}},
              "status": {"disruptionsAllowed": allowed}}
    state = dryrun.build_state([node("n1", cpu="2"), queue("default"), priority,
                                       podgroup("low", phase="Running", min_member=0), *low, hi_group, high, budget])
    c = conf.parse(PDB_CONF)
    out = dryrun.dry_run(state, c, NOW)
    assert out["evictions"] == evictions
    assert "1 PodDisruptionBudget(s)." in dryrun.render_table(state, "sched.conf", c, out)


BAD_STATUSES = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: low}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: low}}
status:
  disruptionsAllowed: one
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {cpu: "2"}
status:
  hard: {cpu: "2"}
  used: {cpu: lots}
"""


def test_a_status_the_session_reads_that_does_not_parse_is_a_problem_of_its_file_and_line(tmp_path):
    """The pdb and resourcequota plugins read these statuses as written: a budget's disruptionsAllowed that is
    no integer (a traceback from inside the session) or a quota's quantity that does not parse (silently
    left out) is refused with the field named, as a status write is."""
    path = tmp_path / "state.yaml"
    path.write_text(BAD_STATUSES)
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    got = sorted(str(p) for p in e.value.problems)
    assert got == [
        f'{path}:17: ResourceQuota/q: status.used[cpu]: invalid quantity "lots": quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f'{path}:8: PodDisruptionBudget/low: status.disruptionsAllowed: Invalid value: "one": must be of type integer',
    ], got


BAD_PHASES = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: c1}
spec: {queue: default, minMember: 1}
status: {phase: Inqeue}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: c1
  annotations: {scheduling.k8s.io/group-name: pg}
spec:
  schedulerName: volcano
  containers: [{name: c, image: x}]
status:
  phase: Runing
"""


@pytest.mark.parametrize("pg_phase, pod_phase, problems", [
    pytest.param("Inqeue", "Runing", [
        '{path}:17: Pod/p: status.phase: Unsupported value: "Runing": supported values: "Failed", "Pending", '
        '"Running", "Succeeded", "Unknown"',
        '{path}:5: PodGroup/pg: status.phase: Unsupported value: "Inqeue": supported values: "Completed", '
        '"Inqueue", "Pending", "Running", "Unknown"'], id="typos"),
    pytest.param("Inqueue", "Running", [], id="phases"),
    pytest.param("Completed", "Succeeded", [], id="finished phases"),
    pytest.param('""', "Unknown", [], id="empty PodGroup phase (Pending)"),
])
def test_a_phase_that_is_none_of_its_kinds_is_a_problem_of_its_file_and_line(tmp_path, pg_phase, pod_phase,
                                                                              problems):
    """The session reads the phases as written: a typo'd one (which the API would take: only controllers write
    it) changed what the dry run decided without a word; it is refused with the field named."""
    path = tmp_path / "state.yaml"
    path.write_text(BAD_PHASES.replace("Inqeue", pg_phase).replace("Runing", pod_phase))
    if not problems:
        dryrun.load_state([str(path)])
        return
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    got = sorted(str(p) for p in e.value.problems)
    assert got == [p.format(path=path) for p in problems], got


def test_a_bad_node_status_is_one_problem_per_field(tmp_path):
    """A Node's status is checked by its create and by the status check of the state: each problem was
    listed twice."""
    path = tmp_path / "state.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n"
                    '  capacity: {cpu: "4", volcano.sh/gpu-number: "-2"}\n'
                    '  allocatable: {cpu: "4", volcano.sh/gpu-memory: "abc"}\n')
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    got = [str(p) for p in e.value.problems]
    assert len(got) == len(set(got)) == 2, got
    assert any(":5: Node/n1: status.capacity[volcano.sh/gpu-number]" in p for p in got), got
    assert any(":6: Node/n1: status.allocatable[volcano.sh/gpu-memory]" in p for p in got), got


def test_the_help_names_every_kind_a_state_may_hold():
    """`vcctl scheduler dry-run --help` lists what -f takes (it left out HyperNodes and ResourceQuotas)."""
    from click.testing import CliRunner
    out = CliRunner().invoke(scheduler_cmd.scheduler, ["dry-run", "--help"], terminal_width=1000).output
    text = " ".join(out.split())
    plurals = [k.kind[:-1] + "ies" if k.kind.endswith("y") else k.kind + ("es" if k.kind.endswith("s") else "s")
               for k in dryrun.STATE_KINDS]
    missing = [p for p in plurals if p not in text]
    assert missing == [], text


def affinity_state(declare_namespace):
    """A pod that must share a zone with a pod of a namespace labelled team=a (namespaceSelector)."""
    nodes = [node("n1"), node("n2")]
    for n, zone in zip(nodes, ("z1", "z2")):
        n["metadata"]["labels"] = {"zone": zone}
    other = pod("web", "web", ns="other", node_name="n2", phase="Running")
    other["metadata"]["labels"] = {"app": "web"}
    new = pod("p", "pg")
    new["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": {"matchLabels": {"team": "a"}},
         "topologyKey": "zone"}]}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "a"}}}
    return [*nodes, queue("default"), podgroup("web", ns="other", phase="Running", min_member=0), other,
            podgroup("pg"), new, *([namespace] if declare_namespace else [])]


@pytest.mark.parametrize("declared, binds", [
    pytest.param(True, {"default/p": "n2"}, id="a-declared-namespace-is-selected-by-its-labels"),
    pytest.param(False, {}, id="an-undeclared-namespace-has-no-labels"),
])
def test_namespaces_labels_are_read_as_the_live_scheduler_reads_them(declared, binds):
    """The live scheduler gives the session every Namespace (pod affinity's namespaceSelector reads their
    labels); a dry run ignored the state's Namespaces, so the same affinity never matched there."""
    state = dryrun.build_state(affinity_state(declared))
    assert dryrun.dry_run(state, conf.parse(PDB_CONF.replace("pdb", "predicates")), NOW)["binds"] == binds


def test_a_namespace_the_pods_use_exists_with_its_name_label():
    """`kubernetes.io/metadata.name` selects the namespace of a pod though no document declares it."""
    objects = affinity_state(False)
    objects[-1]["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": "other"}}
    state = dryrun.build_state(objects)
    assert [meta["metadata"]["name"] for meta in state.cluster.namespaces] == ["default", "other"]
    assert dryrun.dry_run(state, conf.parse(PDB_CONF.replace("pdb", "predicates")), NOW)["binds"] == \
        {"default/p": "n2"}


def _write_state_dir(root, files):
    root.mkdir()
    for name, objects in files.items():
        if objects is None:
            (root / name).mkdir()
        else:
            (root / name).write_text(objects if isinstance(objects, str) else yaml.safe_dump_all(objects))
    return root


def _dry_run_cli(*args):
    from click.testing import CliRunner
    return CliRunner().invoke(scheduler_cmd.scheduler, ["dry-run", *args, "-o", "json"])


TWO_PODS = [queue("default"), node("n1", cpu="2"), podgroup("pg", min_member=2), pod("a", "pg"), pod("b", "pg")]
BAD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x,\n" \
          "    resources: {requests: {cpu: two}}}]\n"


@pytest.mark.parametrize("files, extra, code, says", [
    pytest.param({"1-nodes.yaml": TWO_PODS[:2], "2-pods.yml": TWO_PODS[2:], "notes.txt": "not read",
                  "sub": None}, [], 0, '"default/a": "n1"', id="a-directory-of-yaml-and-yml"),
    pytest.param({"a.json": json.dumps(TWO_PODS[2]), "pods.yaml": TWO_PODS[3:]}, ["nodes"], 0, '"default/b": "n1"',
                 id="a-directory-and-a-file"),
    pytest.param({"ok.yaml": TWO_PODS, "z-bad.yaml": BAD_POD}, [], 2,
                 "state/z-bad.yaml:6: Pod/p: spec.containers[0].resources.requests.cpu", id="a-bad-file-named-by-line"),
    pytest.param({"notes.txt": "x", "sub": None}, [], 2,
                 "state: no .json, .yaml or .yml file in this directory", id="no-manifest-in-it"),
])
def test_a_directory_stands_for_its_manifests_as_for_run_and_validate(tmp_path, files, extra, code, says):
    state = _write_state_dir(tmp_path / "state", files)
    args = ["-f", str(state)]
    if extra:
        (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all(TWO_PODS[:2]))
        args += ["-f", str(tmp_path / "nodes.yaml")]
    r = _dry_run_cli(*args)
    assert (r.exit_code, says in r.output) == (code, True), r.output
    if code == 0:
        assert json.loads(r.output)["binds"] == {"default/a": "n1", "default/b": "n1"}


BINPACK_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
    arguments: {binpack.weight: 10}
"""


def scheduler_configmap(conf: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": conf}}


SPREAD_STATE = [queue("default"), node("n1"), node("n2"), podgroup("pg", min_member=2), pod("a", "pg"), pod("b", "pg")]


@pytest.mark.parametrize("configmap, conf, nodes, says", [
    pytest.param(None, None, 2, "", id="volcano-default-spreads"),
    pytest.param(BINPACK_CONF, None, 1, "", id="the-configmap-packs"),
    pytest.param(BINPACK_CONF, "spread.conf", 2, "its volcano-scheduler.conf is not used: --conf ", id="conf-wins"),
])
def test_the_scheduler_configmap_of_the_state_is_the_configuration(tmp_path, configmap, conf, nodes, says):
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(SPREAD_STATE + ([scheduler_configmap(configmap)] if configmap else [])))
    args = ["-f", str(state)]
    if conf:
        (tmp_path / conf).write_text(BINPACK_CONF.replace("  - name: binpack\n    arguments: {binpack.weight: 10}\n",
                                                          ""))
        args += ["--conf", str(tmp_path / conf)]
    r = _dry_run_cli(*args)
    assert r.exit_code == 0, r.output
    assert len(set(json.loads(r.stdout)["binds"].values())) == nodes, r.output
    assert says in r.stderr, r.stderr


def test_a_bad_configmap_conf_in_the_state_is_a_problem_of_its_line(tmp_path):
    state = tmp_path / "state.yaml"
    conf = "".join(f"    {line}\n" for line in BINPACK_CONF.replace("name: gang", "name: gangg").splitlines())
    state.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: volcano-scheduler-configmap\n"
                     f"  namespace: volcano-system\ndata:\n  volcano-scheduler.conf: |\n{conf}---\n"
                     + yaml.safe_dump_all(SPREAD_STATE))
    r = _dry_run_cli("-f", str(state))
    assert r.exit_code == 2, r.output
    assert (f'{state}:12: ConfigMap/volcano-scheduler-configmap: data[volcano-scheduler.conf]: unknown plugin "gangg"'
            in r.output), r.output
    assert "1 problem(s) found; no session was run." in r.output


SYSTEM_CLASS = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", pods: "10"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {minMember: 1}
status: {phase: Inqueue}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: b, namespace: ns, creationTimestamp: "2026-01-01T00:01:00Z"}
spec: {minMember: 1, priorityClassName: system-cluster-critical}
status: {phase: Inqueue}
---
apiVersion: v1
kind: Pod
metadata: {name: pa, namespace: ns, annotations: {scheduling.k8s.io/group-name: a}}
spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: pb, namespace: ns, annotations: {scheduling.k8s.io/group-name: b}}
spec:
  schedulerName: volcano
  priorityClassName: system-cluster-critical
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
status: {phase: Pending}
"""


def test_a_system_priority_class_has_its_value_as_on_a_cluster(tmp_path):
    """Every cluster has system-cluster-critical (2,000,000,000): Volcano places that job first. The dry run
    knew no such class, gave the job priority 0 and bound the older one instead."""
    path = tmp_path / "state.yaml"
    path.write_text(SYSTEM_CLASS)
    state = dryrun.load_state([str(path)])
    out = dryrun.dry_run(state, conf.default_conf(), NOW)
    assert out["binds"] == {"ns/pb": "n1"}
    assert state.notes == ['Queue "default" is not declared: Volcano\'s default queue was added (weight 1).']
    assert "0 PriorityClass(es)" in dryrun.render_table(state, "default", conf.default_conf(), out)


@pytest.mark.parametrize("priority, problems", [
    pytest.param("priorityClassName: hi", [
        "{path}:7: Pod/p: spec.priorityClassName: no PriorityClass with name hi was found: no document defines it "
        "and the pod sets no spec.priority, so a cluster would refuse the pod (declare the PriorityClass, or the "
        "pod's spec.priority)"], id="undefined: refused"),
    pytest.param("priorityClassName: hi\n  priority: 7", [], id="with its priority: read as written"),
    pytest.param("priorityClassName: system-node-critical", [], id="a system class"),
])
def test_a_pod_naming_a_priority_class_no_document_defines(tmp_path, priority, problems):
    """A pod naming a class the state lacks was scheduled at a guessed priority (1): a typo'd class changed
    preemption without a word. A cluster refuses such a pod; so does the dry run, at its line."""
    path = tmp_path / "state.yaml"
    path.write_text(f"""\
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {{scheduling.k8s.io/group-name: pg}}
spec:
  {priority}
  schedulerName: volcano
  containers: [{{name: c, image: x}}]
""")
    if not problems:
        dryrun.load_state([str(path)])
        return
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    got = [str(p) for p in e.value.problems]
    assert got == [p.format(path=path) for p in problems], got
