"""numa-aware through `vcctl scheduler dry-run -f STATE.yaml`: Numatopology objects in a state file, pods with
a topology policy (the annotation the vcjob controller copies from `topologyPolicy`), and the CPU sets chosen.

Every node has 16 CPUs on two NUMA nodes (CPUs 0-7 on NUMA node 0 / socket 0, 8-15 on NUMA node 1 / socket 1;
two CPUs per core) and the same Node allocatable, so nodeorder scores them alike and numa-aware decides."""
from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from click.testing import CliRunner

from vclite.api import kinds
from vclite.cli import dryrun, manifests, scheduler_cmd
from vclite.scheduler import conf as conf_mod
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import numa_aware

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
Obj = dict[str, Any]

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: numa-aware
    arguments:
      weight: 10
"""


def node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}


def topo(name: str, free: str, policy: str = "single-numa-node", cpu_manager: str = "static",
         reserved: str | None = None, allocated: list[Obj] | None = None) -> Obj:
    spec: Obj = {"policies": {"CPUManagerPolicy": cpu_manager, "TopologyManagerPolicy": policy},
                 "numares": {"cpu": {"allocatable": free, "capacity": 16}},
                 "cpuDetail": {str(c): {"numa": c // 8, "socket": c // 8, "core": c // 2} for c in range(16)}}
    if reserved is not None:
        spec["resReserved"] = {"cpu": reserved}
    if allocated is not None:
        spec["podAllocations"] = allocated
    return {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": name},
            "spec": spec}


def job(name: str, cpus: str, policy: str | None, pods: int = 1, memory_limit: bool = True,
        node_name: str | None = None) -> list[Obj]:
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": name, "namespace": "default"}, "spec": {"minMember": pods},
          "status": {"phase": "Running" if node_name else "Inqueue"}}
    out = [pg]
    for i in range(pods):
        notes = {"scheduling.k8s.io/group-name": name}
        if policy is not None:
            notes["volcano.sh/numa-topology-policy"] = policy
        limits = {"cpu": cpus, **({"memory": "1Gi"} if memory_limit else {})}
        spec: Obj = {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox",
                                                                "resources": {"limits": limits}}]}
        if node_name:
            spec["nodeName"] = node_name
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{name}-{i}", "namespace": "default", "uid": f"uid-{name}-{i}", "annotations": notes},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}})
    return out


def dry_run(tmp_path, objects: list[Obj], *flags: str) -> Obj:
    state_file, conf_file = tmp_path / "state.yaml", tmp_path / "sched.conf"
    state_file.write_text("\n---\n".join(json.dumps(o) for o in objects))
    conf_file.write_text(CONF)
    result = CliRunner().invoke(scheduler_cmd.scheduler, ["dry-run", "-f", str(state_file), "--conf",
                                                          str(conf_file), "-o", "json", *(flags or ["--details"])])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)   # (notes go to stderr)


TWO = [node("node-a"), node("node-b")]


@pytest.mark.parametrize("numatopologies, jobs, binds, cpus, why", [
    # single-numa-node: the request must fit the free CPUs of one NUMA node
    pytest.param([topo("node-a", "0-3,8-11"), topo("node-b", "2-7,12-13")], job("j", "6", "single-numa-node"),
                 {"default/j-0": "node-b"}, {"default/j-0": "2-7"}, None, id="single-fits-on-one-node-only"),
    pytest.param([topo("node-a", "0-3,8-11"), topo("node-b", "0-4,8-12")], job("j", "6", "single-numa-node"),
                 {}, {}, "2 container c cannot be assigned by numa", id="single-fits-nowhere"),
    # restricted: refused when only a wider set than the narrowest possible has the CPUs free
    pytest.param([topo("node-a", "0-3,8-11", "restricted"), topo("node-b", "0-5", "restricted")],
                 job("j", "6", "restricted"), {"default/j-0": "node-b"}, {"default/j-0": "0-5"}, None,
                 id="restricted-fits-on-one-node-only"),
    pytest.param([topo("node-a", "0-5,8-13", "restricted"), topo("node-b", "0-15", "restricted")],
                 job("j", "10", "restricted"), {"default/j-0": "node-a"}, {"default/j-0": "0-5,8-11"}, None,
                 id="restricted-two-numa-nodes-needed-either-way"),
    pytest.param([topo("node-a", "0-3,8-11", "restricted"), topo("node-b", "0-15", "restricted")],
                 job("j", "10", "restricted"), {"default/j-0": "node-b"}, {"default/j-0": "0-9"}, None,
                 id="restricted-too-few-free-cpus"),
    # best-effort: admitted everywhere; the node where the CPUs span fewer NUMA nodes scores higher
    pytest.param([topo("node-a", "0-3,8-11", "best-effort"), topo("node-b", "8-15", "best-effort")],
                 job("j", "6", "best-effort"), {"default/j-0": "node-b"}, {"default/j-0": "8-13"}, None,
                 id="best-effort-prefers-one-numa-node"),
    pytest.param([topo("node-a", "0-3,8-11", "best-effort"), topo("node-b", "0-2,8-10", "best-effort")],
                 job("j", "6", "best-effort"), {"default/j-0": "node-a"}, {"default/j-0": "0-3,8-9"}, None,
                 id="best-effort-spans-two-when-it-must"),
    # the node's policy must be the pod's, with a static CPU manager and a Numatopology
    pytest.param([topo("node-a", "0-15", "best-effort"), topo("node-b", "0-15", cpu_manager="none")],
                 job("j", "2", "single-numa-node"), {}, {},
                 "1 cpu manager policy isn't static, 1 task topology policy[single-numa-node] is different with "
                 "node[best-effort]", id="policies-differ"),
    pytest.param([topo("node-a", "0-15")], job("j", "2", "single-numa-node"), {"default/j-0": "node-a"},
                 {"default/j-0": "0-1"}, None, id="a-node-without-numatopology-is-refused"),
    pytest.param([topo("node-a", "", "single-numa-node")], job("j", "2", "single-numa-node"), {}, {},
                 "1 cpu allocatable map is empty, 1 numa info is empty", id="no-free-cpu"),
    # without a policy (none), or not Guaranteed: no NUMA constraint on nodes without a topology manager
    pytest.param([topo("node-a", "0-15", "none"), topo("node-b", "", "none")], job("j", "6", None),
                 {"default/j-0": "node-a"}, {}, None, id="none-policy-unconstrained"),
    pytest.param([topo("node-a", "0-3,8-11"), topo("node-b", "0-4,8-12")],
                 job("j", "6", "single-numa-node", memory_limit=False), {"default/j-0": "node-a"}, {}, None,
                 id="burstable-pod-is-not-checked"),
    # a Guaranteed pod without a policy on a node with a topology manager follows the node's policy
    pytest.param([topo("node-a", "0-3,8-11"), topo("node-b", "0-4,8-12")], job("j", "6", None), {}, {},
                 "2 container c cannot be assigned by numa", id="no-policy-still-checked-on-numa-nodes"),
    # reserved CPUs (rounded up, taken by topology) are never given: 0-1 on node-a, so 7 CPUs fit NUMA node 1 only
    pytest.param([topo("node-a", "0-15", reserved="1500m")], job("j", "7", "single-numa-node"),
                 {"default/j-0": "node-a"}, {"default/j-0": "8-14"}, None, id="reservation"),
    pytest.param([topo("node-a", "0-15")], job("j", "7", "single-numa-node"),
                 {"default/j-0": "node-a"}, {"default/j-0": "0-6"}, None, id="no-reservation"),
    pytest.param([topo("node-a", "0-15", reserved="9"), topo("node-b", "0-15", reserved="10")],
                 job("j", "7", "single-numa-node"), {"default/j-0": "node-a"}, {"default/j-0": "9-15"},
                 "", id="reservation-leaves-too-few-on-node-b"),
])
def test_dry_run_with_numatopologies(tmp_path, numatopologies, jobs, binds, cpus, why):
    out = dry_run(tmp_path, [*TWO, *numatopologies, *jobs])
    assert out["binds"] == binds
    assert {k: v["cpu"] for k, v in out.get("numaCpuSets", {}).items()} == cpus
    if not why:
        assert out["unschedulable"] == {}
    else:
        assert why in out["unschedulable"]["default/j"], out["unschedulable"]


def test_pods_of_one_session_do_not_share_cpus(tmp_path):
    out = dry_run(tmp_path, [node("node-a"), topo("node-a", "0-15"), *job("j", "6", "single-numa-node", pods=2)])
    assert out["binds"] == {"default/j-0": "node-a", "default/j-1": "node-a"}
    assert out["numaCpuSets"] == {"default/j-0": {"node": "node-a", "cpu": "0-5"},
                                  "default/j-1": {"node": "node-a", "cpu": "8-13"}}
    plain = dry_run(tmp_path, [node("node-a"), topo("node-a", "0-15"), *job("j", "6", "single-numa-node", pods=2)],
                    "-o", "json")
    assert list(plain) == ["binds", "evictions", "pipelined", "podGroupPhases", "unschedulable"]   # (without --details)
    out = dry_run(tmp_path, [node("node-a"), topo("node-a", "0-15"), *job("j", "5", "single-numa-node", pods=3)])
    assert out["binds"] == {} and "numaCpuSets" not in out   # 3 CPUs left on each NUMA node: the gang waits
    assert "container c cannot be assigned by numa" in out["unschedulable"]["default/j"]


def test_the_table_lists_the_cpu_sets(tmp_path):
    (tmp_path / "state.yaml").write_text("\n---\n".join(json.dumps(o) for o in [
        node("node-a"), topo("node-a", "0-15"), *job("j", "4", "single-numa-node")]))
    out = CliRunner().invoke(scheduler_cmd.scheduler, ["dry-run", "-f", str(tmp_path / "state.yaml"), "--conf", "-"],
                             input=CONF).output
    assert "1 Numatopology(ies)" in out and "NUMA CPU SETS (1, numa-aware's choice)" in out, out
    assert "default/j-0   node-a   0-3" in out, out


def test_a_bad_numatopology_in_a_state_file_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "state.yaml"
    path.write_text("apiVersion: nodeinfo.volcano.sh/v1alpha1\nkind: Numatopology\nmetadata: {name: node-a}\n"
                    "spec:\n  numares:\n    cpu: {allocatable: 0-x}\n")
    with pytest.raises(manifests.InvalidManifests) as e:
        dryrun.load_state([str(path)])
    assert [str(p) for p in e.value.problems] == [
        f"{path}:6: Numatopology/node-a: spec.numares.cpu.allocatable: Invalid value: \"0-x\": invalid cpuset item "
        "'0-x' (expected N or N-M, comma-separated: `0-3,8`)"]


def _session(objects: list[Obj], memory: dict) -> session.SessionResult:
    state = dryrun.build_state(objects).cluster
    return session.run_session(snapshot.ClusterState(**{**state.__dict__, "memory": memory}),
                               conf_mod.parse(CONF, "sched.conf"), NOW)


def test_cpus_chosen_stay_taken_until_the_numatopology_lists_the_pod():
    """As Volcano's scheduler cache: the CPUs chosen for a bound pod are kept from later sessions until the
    resource-exporter reports the pod in podAllocations (its free set then says what the kubelet pinned)."""
    memory: dict = {}
    first = _session([node("node-a"), topo("node-a", "0-15"), *job("a", "6", "single-numa-node")], memory)
    assert first.binds == {"default/a-0": "node-a"}
    assert numa_aware.assignments(memory) == {"default/a-0": ("node-a", {"cpu": frozenset(range(6))})}
    running = job("a", "6", "single-numa-node", node_name="node-a")
    # the kubelet has not reported it yet: CPUs 0-5 stay taken, so b goes to NUMA node 1
    second = _session([node("node-a"), topo("node-a", "0-15"), *running, *job("b", "6", "single-numa-node")],
                      memory)
    assert second.binds == {"default/b-0": "node-a"}
    assert numa_aware.assignments(memory)["default/b-0"] == ("node-a", {"cpu": frozenset(range(8, 14))})
    # both reported (their CPUs out of the free set): nothing is kept any more
    reported = [{"uid": "uid-a-0"}, {"namespace": "default", "name": "b-0"}]
    _session([node("node-a"), topo("node-a", "6-7,14-15", allocated=reported), *running], memory)
    assert numa_aware.assignments(memory) == {}


def test_a_kept_choice_is_forgotten_when_its_pod_is_gone():
    memory: dict = {}
    _session([node("node-a"), topo("node-a", "0-15"), *job("a", "6", "single-numa-node")], memory)
    assert numa_aware.assignments(memory)
    _session([node("node-a"), topo("node-a", "0-15")], memory)
    assert numa_aware.assignments(memory) == {}


def test_the_embedded_scheduler_keeps_chosen_cpus_until_their_pod_finishes():
    """A vcjob's topologyPolicy reaches its pods; the live scheduler keeps each pod's CPUs across sessions
    (Session.memory), so a third 8-CPU pod waits until one of the two placed ones finishes."""
    from tests.scenarios.test_volcano_e2e_jobs import Cluster, node as e2e_node, vcjob

    c = Cluster([e2e_node("n1", cpu="32")], conf_mod.parse(CONF, "sched.conf"))
    c.create(topo("n1", "0-15"))
    limits = {"cpu": "8", "memory": "1Gi"}
    for name in ("a", "b", "c"):
        c.create(vcjob([{"name": "t", "replicas": 1, "topologyPolicy": "single-numa-node", "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"],
                                                       "resources": {"limits": limits}}]}}}],
                       name=name, schedulerName="volcano", minAvailable=1))
        c.start()
    pods = {meta_name(p): p for p in c.client.list(kinds.POD)}
    assert pods["a-t-0"]["metadata"]["annotations"]["volcano.sh/numa-topology-policy"] == "single-numa-node"
    assert [c.pod_phase(pods[n]) for n in ("a-t-0", "b-t-0", "c-t-0")] == ["Running", "Running", "Pending"]
    c.set_pod("a-t-0", "Succeeded")
    c.start()
    assert c.pod_phase(c.client.get(kinds.POD, "default", "c-t-0")) == "Running"


def meta_name(obj: Obj) -> str:
    return obj["metadata"]["name"]


def test_a_kept_choice_is_forgotten_when_its_pod_runs_on_another_node():
    """A pod whose CPUs were chosen on node-a but which runs on node-b (its bind there failed and a later
    session placed it again) holds nothing on node-a any more: node-a's CPUs are free for the next pod."""
    memory: dict = {}
    _session([node("node-a"), topo("node-a", "0-15"), *job("a", "6", "single-numa-node")], memory)
    assert numa_aware.assignments(memory) == {"default/a-0": ("node-a", {"cpu": frozenset(range(6))})}
    elsewhere = job("a", "6", "single-numa-node", node_name="node-b")
    _session([node("node-a"), node("node-b"), topo("node-a", "0-15"), *elsewhere], memory)
    assert "default/a-0" not in numa_aware.assignments(memory)
