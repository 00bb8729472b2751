"""Volcano's e2e scheduling cases — test/e2e/schedulingaction/allocate.go, enqueue.go, guarantee.go,
predicates.go and test/e2e/schedulingbase/job_scheduling.go, drf.go, sla.go — on the embedded control plane on a
virtual clock, with the scheduler configuration of Volcano's e2e (tests/scenarios/test_volcano_e2e_preempt.py
says which). The "Gang scheduling" ReplicaSet is played by pods of another scheduler bound by nodeName.

The cluster is upstream's kind cluster (hack/e2e-kind-config.yaml): a control-plane node, tainted NoSchedule, and
four workers, 8 cpu / 16Gi each. e2eutil.InitTestContext's `NodesNumLimit: n, NodesResourceLimit: r` is played
as upstream plays it: a pod of another scheduler, bound by nodeName, leaves `r` free on the first n workers and
fills the others. The totals the scheduler divides (proportion's deserved, overcommit's idle) are therefore the
whole cluster's, as upstream's are, not the room left for the test.

Upstream waits for "at least n pods Running" (WaitTasksReady, WaitJobReady) or "n pods Pending"
(WaitJobPending, WaitTasksPending); a pod is Pending from its creation until its kubelet starts it, so the latter
holds the moment the pods exist. These pin the exact pods: how many run, where, and which wait unbound.

Not ported:
- allocate.go "allocate don't work when podgroup is pending": skipped upstream (a vcjob makes its own PodGroup,
  so pointing it at a pending one tests nothing).
- allocate.go "Scheduling gates block Deployment", and the Deployment/ReplicaSet/batch-v1-Job cases of
  schedulingbase/job_scheduling.go: vclite has no Deployment, ReplicaSet or Job controller.
- job_scheduling.go "Queue Fair Share": skipped upstream ("may fail in some condition"); "PodGroup's Count
  change with Deployment's Request change", "PodGroup's Phase with k8s Job in Completed" / "... when Job
  fails", "Schedule v1.Job type using Volcano scheduler" (and its error case): see above (no such controllers).
- drf.go "drf works": skipped upstream ("may fail in some condition"), and it cannot hold under the e2e
  configuration: j1-reference's minAvailable is all of its pods, so gang lets none of them be evicted, and drf
  runs with enablePreemptable false.
"""
from __future__ import annotations

import pytest

from tests import scheduler_confs
from tests.scenarios.test_volcano_e2e_jobs import Cluster, vcjob
from vclite.api import kinds, meta
from vclite.scheduler import conf

CI_ACTIONS = "enqueue, allocate, backfill, reclaim, preempt"
WORKERS = [f"worker{i}" for i in range(1, 5)]
NODE_CPU, NODE_MEM_GI = 8, 16
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def res(cpu: str, mem: str | None = None) -> dict:
    return {"cpu": cpu, **({"memory": mem} if mem else {})}


CPU1MEM1, CPU2MEM2, HALF, ONE = res("1", "1Gi"), res("2", "2Gi"), res("500m"), res("1")


def _node(name: str, taints: list[dict] = ()) -> dict:
    cap = {"cpu": str(NODE_CPU), "memory": f"{NODE_MEM_GI}Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": list(taints)} if taints else {},
            "status": {"allocatable": cap, "capacity": dict(cap), "conditions": [{"type": "Ready", "status": "True"}]}}


def kind(limit: int = 0, free: dict | None = None, actions: str = CI_ACTIONS, queues: tuple[str, ...] = (),
         nodes: list[dict] | None = None) -> Cluster:
    """Upstream's kind cluster; with `limit`, the first `limit` workers keep `free` (cpu and memory) and the
    other workers are full."""
    nodes = nodes or [_node("control-plane", [CONTROL_PLANE_TAINT])] + [_node(n) for n in WORKERS]
    c = Cluster(nodes, conf.parse(scheduler_confs.helm_conf(actions)))
    if limit:
        for i, n in enumerate(WORKERS):
            cpu = NODE_CPU * 1000 - (_milli(free["cpu"]) if i < limit else 0)
            mem = NODE_MEM_GI * 1024 - (_mebi(free["memory"]) if i < limit else 0)
            c.client.create({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": f"{n}-placeholder", "namespace": "kube-system"},
                             "spec": {"nodeName": n, "containers": [{
                                 "name": "placeholder", "image": "nginx",
                                 "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}]},
                             "status": {"phase": "Running"}})
    for q in queues:
        queue(c, q)
    c.rt.settle()
    return c


def _milli(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)


def _mebi(mem: str) -> int:
    return int(mem[:-2]) * (1024 if mem.endswith("Gi") else 1)


def queue(c: Cluster, name: str, **spec) -> None:
    c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                     "spec": {"weight": 1, **spec}})


def spec_task(req: dict | None, rep: int, min_: int, name: str = "", labels: dict | None = None, **pod) -> dict:
    """e2eutil.TaskSpec: one nginx container requesting (and limited to) `req`; `pod` adds pod spec fields
    (affinity, tolerations, schedulingGates, nodeName); a host port goes on the container."""
    port = pod.pop("hostport", None)
    container = {"name": "nginx", "image": "nginx", "command": ["sleep", "1000"]}
    if req:
        container["resources"] = {"requests": dict(req), "limits": dict(req)}
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    return {"name": name, "replicas": rep, "minAvailable": min_,
            "template": {"metadata": {"labels": dict(labels or {})},
                         "spec": {"restartPolicy": "OnFailure", "containers": [container], **pod}}}


def spec_job(name: str, *tasks: dict, queue: str = "default", **spec) -> dict:
    """e2eutil.JobSpec: the job's minAvailable is the sum of its tasks' `Min`; tasks unnamed are
    `<job>-task-<i>`, as CreateJobInner names them."""
    tasks = [{**t, "name": t["name"] or f"{name}-task-{i}"} for i, t in enumerate(tasks)]
    return vcjob(tasks, name=name, queue=queue, minAvailable=sum(t["minAvailable"] for t in tasks), **spec)


def run(c: Cluster, *objs: dict) -> None:
    for obj in objs:
        c.client.create(obj)
    for _ in range(4):   # sessions, the vcjob controller, the kubelet
        c.kubelet()


def pods_of(c: Cluster, job: str) -> dict[str, tuple[str, str | None]]:
    """The job's pods: name -> (phase, node)."""
    return {meta.name(p): (c.pod_phase(p), p["spec"].get("nodeName"))
            for p in c.client.list(kinds.POD, "default")
            if p["metadata"].get("annotations", {}).get("volcano.sh/job-name") == job}


def phases(c: Cluster, job: str) -> list[str]:
    return sorted(phase for phase, _ in pods_of(c, job).values())


def pg_phase(c: Cluster, job: str) -> str:
    (pg,) = [pg for pg in c.client.list(kinds.PODGROUP, "default")
             if pg["metadata"]["ownerReferences"][0]["name"] == job]
    return meta.phase(pg)


def pg_condition(c: Cluster, job: str) -> str:
    (pg,) = [pg for pg in c.client.list(kinds.PODGROUP, "default")
             if pg["metadata"]["ownerReferences"][0]["name"] == job]
    return next(cond["message"] for cond in pg["status"]["conditions"] if cond["type"] == "Unschedulable")


# ---- allocate.go, enqueue.go ------------------------------------------------------------------------------------
@pytest.mark.parametrize("actions", [
    pytest.param(CI_ACTIONS, id="allocate-work-when-resource-is-enough"),
    pytest.param("allocate, backfill, reclaim, preempt", id="allocate-work-even-not-config-enqueue-action"),
])
def test_two_jobs_that_fit_both_run(actions):
    """Two workers with 2 cpu / 2Gi free: a job of 500m/512Mi, then one of 1 cpu/1Gi, each one pod, both run;
    without `enqueue` in the actions, allocate admits the PodGroups itself."""
    c = kind(2, CPU2MEM2, actions)
    run(c, spec_job("low", spec_task(res("500m", "512Mi"), 1, 1)))
    run(c, spec_job("high", spec_task(CPU1MEM1, 1, 1)))
    assert (phases(c, "low"), phases(c, "high")) == (["Running"], ["Running"])
    assert (pg_phase(c, "low"), pg_phase(c, "high")) == ("Running", "Running")


def test_allocate_does_not_place_a_job_bigger_than_the_room_left():
    """`allocate don't work when resource is NOT enough`: one worker with 2 cpu free; 1 cpu and 500m run, then a
    job of 3 cpu is admitted (overcommit counts the whole cluster) but its pod waits unbound."""
    c = kind(1, CPU2MEM2)
    run(c, spec_job("middle", spec_task(CPU1MEM1, 1, 1)))
    run(c, spec_job("low", spec_task(res("500m", "512Mi"), 1, 1)))
    run(c, spec_job("high", spec_task(res("3", "3Gi"), 1, 1)))
    assert (phases(c, "middle"), phases(c, "low")) == (["Running"], ["Running"])
    assert pods_of(c, "high") == {"high-high-task-0-0": ("Pending", None)}
    assert pg_phase(c, "high") == "Inqueue"
    assert pg_condition(c, "high") == (
        "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable. "
        "Origin reason is high-high-task-0-0: 0/5 nodes are unavailable: 1 node(s) had untolerated taint(s), "
        "4 Insufficient cpu.")


def test_allocate_does_not_place_a_job_that_fails_predicates():
    """`allocate don't work when job NOT satisfy predicates`: one worker with room; j2's pod is anti-affine (by
    hostname) to j1's label, and j1 runs on the only worker with room."""
    c = kind(1, CPU2MEM2)
    labels = {"job": "for-test-predicate"}
    run(c, spec_job("j1", spec_task(res("500m", "512Mi"), 1, 1, labels=labels)))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [{"key": "job", "operator": "In", "values": ["for-test-predicate"]}]},
        "topologyKey": "kubernetes.io/hostname"}]}}
    run(c, spec_job("j2", spec_task(res("500m", "512Mi"), 1, 1, labels=labels, affinity=anti)))
    assert pods_of(c, "j1") == {"j1-j1-task-0-0": ("Running", "worker1")}
    assert pods_of(c, "j2") == {"j2-j2-task-0-0": ("Pending", None)}
    assert "1 node(s) didn't match pod anti-affinity rules" in pg_condition(c, "j2")


def test_a_queue_asking_for_more_than_half_still_gets_what_the_other_queue_leaves():
    """`allocate don't work when queue is overused`. Two workers with 2 cpu / 2Gi free; q1 runs 1 + 1 cpu, q2
    500m; then j4-q1 (500m). Upstream's WaitJobPending holds as soon as j4's pod exists; the pod in fact runs:
    proportion divides the whole cluster (40 cpu), not the 4 cpu left for the test, and water-fills what q2
    does not ask for back to q1, so q1 deserves all it asks (2.5 cpu) and is not overused."""
    c = kind(2, CPU2MEM2, queues=("q1", "q2"))
    run(c, spec_job("j1-q1", spec_task(CPU1MEM1, 1, 1), queue="q1"))
    run(c, spec_job("j2-q1", spec_task(CPU1MEM1, 1, 1), queue="q1"))
    run(c, spec_job("j3-q2", spec_task(res("500m", "512Mi"), 1, 1), queue="q2"))
    run(c, spec_job("j4-q1", spec_task(res("500m", "512Mi"), 1, 1), queue="q1"))
    assert [phases(c, j) for j in ("j1-q1", "j2-q1", "j3-q2", "j4-q1")] == [["Running"]] * 4


def test_a_gated_vcjob_waits_unschedulable_and_runs_once_its_gates_are_removed():
    """`Scheduling gates block vcjob. vcjob allocated after removed.`: four workers with 2 cpu / 2Gi free; a job of
    two 2-cpu pods (minAvailable 2) gated by `example.com/g1` is admitted, its pods are created and wait;
    the PodGroup is reported Unschedulable (upstream waits for that Event); without the gates it runs."""
    c = kind(4, CPU2MEM2, queues=("q1",))
    run(c, spec_job("j1-q1", spec_task(CPU2MEM2, 2, 2, schedulingGates=[{"name": "example.com/g1"}]), queue="q1"))
    assert phases(c, "j1-q1") == ["Pending", "Pending"] and set(n for _, n in pods_of(c, "j1-q1").values()) == {None}
    assert pg_phase(c, "j1-q1") == "Inqueue"
    (pg,) = c.client.list(kinds.PODGROUP, "default")
    assert [e["type"] for e in c.client.list(kinds.EVENT, "default")
            if e["involvedObject"]["name"] == meta.name(pg) and e["reason"] == "Unschedulable"] == ["Warning"]
    for name in pods_of(c, "j1-q1"):
        pod = c.client.get(kinds.POD, "default", name)
        pod["spec"]["schedulingGates"] = []
        c.client.update(pod)
    run(c)
    assert phases(c, "j1-q1") == ["Running", "Running"]
    assert meta.phase(c.client.get(kinds.JOB, "default", "j1-q1")) == "Running"


def test_a_job_with_partitions_and_no_network_topology_runs():
    """`allocate work when job has subgroups (partitionPolicy) but no network topology constraint`."""
    c = kind(2, CPU2MEM2)
    partitions = {"totalPartitions": 2, "partitionSize": 1, "minPartitions": 2}
    run(c, spec_job("job-subgroups-no-topology", spec_task(res("500m", "512Mi"), 2, 2, partitionPolicy=partitions)))
    assert phases(c, "job-subgroups-no-topology") == ["Running", "Running"]


def test_scheduling_gated_pods_do_not_hold_room_other_jobs_could_be_admitted_to():
    """enqueue.go `Scheduling gated task will not consume inqueue resources`: the whole cluster (32 one-cpu
    slots on the workers); j-gated asks for all of it, every pod gated; job1 and job2 ask for half each. With
    overcommit's 1.2 (48 cpu of 40, nothing used) j-gated and job1 are admitted at once; job2 only once
    j-gated's pods exist and, being gated, are not counted as held."""
    c = kind()
    run(c, spec_job("j-gated", spec_task(ONE, 32, 32, schedulingGates=[{"name": "g1"}])),
        spec_job("job1", spec_task(ONE, 16, 16)), spec_job("job2", spec_task(ONE, 16, 16)))
    assert phases(c, "j-gated") == ["Pending"] * 32
    assert (phases(c, "job1"), phases(c, "job2")) == (["Running"] * 16, ["Running"] * 16)


# ---- guarantee.go ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("guarantee, req, message", [
    pytest.param(CPU2MEM2, res("500m", "512Mi"),
                 'queue resource quota insufficient: insufficient cpu, insufficient memory; '
                 'job needs cpu 500m, memory 512Mi but queue "queue2" can get at '
                 "most cpu 0, memory 0", id="one-queue-reserve-all-cluster-resource"),
    pytest.param(CPU1MEM1, res("1500m", "512Mi"),
                 'queue resource quota insufficient: insufficient cpu; '
                 'job needs cpu 1500m but queue "queue2" can get at most 1',
                 id="one-queue-reserve-some-cluster-resource-so-it-is-NOT-enough-to-create-job"),
])
def test_what_another_queue_guarantees_is_not_given_to_a_job(guarantee, req, message):
    """queue1 guarantees part of the cluster; a one-pod job in queue2 needs more than the rest and is not
    admitted. Upstream limits the room left on one node, but a guarantee is subtracted from the cluster's whole
    capacity, so there the job always fits (and WaitJobPending holds only because the created pod is Pending
    until it runs, while a PodGroup that is not admitted gets no pods). Here the cluster is that one node of
    2 cpu / 2Gi, so the guarantee takes what the upstream test means it to."""
    c = kind(nodes=[{**_node("n1"), "status": {**_node("n1")["status"], "allocatable": res("2", "2Gi") | {
        "pods": "110"}}}])
    queue(c, "queue1", guarantee={"resource": guarantee}, deserved=guarantee)   # (CreateQueueWithQueueSpec's default)
    queue(c, "queue2")
    run(c, spec_job("queue2-job", spec_task(req, 1, 1), queue="queue2"))
    assert pods_of(c, "queue2-job") == {}
    assert pg_phase(c, "queue2-job") == "Pending"
    assert pg_condition(c, "queue2-job") == message


# ---- predicates.go: the whole cluster (four free workers, the control plane tainted) -------------------------
def test_hostport_one_pod_per_node():
    """`Hostport`: twice as many pods as untainted nodes, all on host port 28080, minAvailable one per node:
    one runs on each worker, the other half wait unbound."""
    c = kind()
    run(c, spec_job("hp-spec", spec_task(ONE, 8, 4, hostport=28080)))
    placed = sorted(n for phase, n in pods_of(c, "hp-spec").values() if phase == "Running")
    assert placed == WORKERS
    assert [n for phase, n in pods_of(c, "hp-spec").values() if phase == "Pending"] == [None] * 4


@pytest.mark.parametrize("target", [
    pytest.param("worker1", id="NodeAffinity"),
    # (not upstream: worker1 is also where equal scores put them without the affinity)
    pytest.param("worker3", id="NodeAffinity-to-another-worker"),
])
def test_node_affinity_by_field_puts_every_pod_on_the_node_named(target):
    """`NodeAffinity`: matchFields metadata.name In [the first worker with room, e2eutil.ComputeNode's]; as
    many 1-cpu pods as it holds (8), minAvailable 1: all run there."""
    c = kind()
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [target]}]}]}}}
    run(c, spec_job("na-job", spec_task(ONE, 8, 1, affinity=affinity)))
    assert set(pods_of(c, "na-job").values()) == {("Running", target)} and len(pods_of(c, "na-job")) == 8


@pytest.mark.parametrize("anchor", [
    pytest.param(None, id="Pod-Affinity"),
    # (not upstream: with nothing else placed, equal scores put the gang on worker1 with or without the
    # affinity; a foo=bar pod already on worker3 shows the term is what places them)
    pytest.param("worker3", id="Pod-Affinity-to-a-pod-already-placed"),
])
def test_pod_affinity_to_their_own_label_puts_a_gang_on_one_node(anchor):
    """`Pod Affinity`: half a node's worth of 500m pods (8 of 16), minAvailable all of them, each required to be
    on the node (hostname) of a pod labelled foo=bar, which they all are: the first may go anywhere (it matches
    its own term, and no pod matches yet), the others follow it."""
    c = kind()
    labels = {"foo": "bar"}
    if anchor:
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {   # (in the job's namespace: the term's)
            "name": "anchor", "namespace": "default", "labels": labels}, "status": {"phase": "Running"},
            "spec": {"nodeName": anchor, "containers": [{"name": "c", "image": "nginx"}]}})
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
    run(c, spec_job("pa-job", spec_task(HALF, 8, 8, labels=labels, affinity=affinity)))
    placed = pods_of(c, "pa-job")
    assert set(placed.values()) == {("Running", anchor or "worker1")} and len(placed) == 8


def test_pod_anti_affinity_to_their_own_label_spreads_a_gang():
    """`Pod Anti-Affinity`: two 1-cpu pods labelled foo=bar, each anti-affine to foo=bar by hostname."""
    c = kind()
    labels = {"foo": "bar"}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
    run(c, spec_job("pa-job", spec_task(ONE, 2, 2, labels=labels, affinity=affinity)))
    assert sorted(pods_of(c, "pa-job").values()) == [("Running", "worker1"), ("Running", "worker2")]


TAINT = {"key": "test-taint-key", "value": "test-taint-val", "effect": "NoSchedule"}
TOLERATION = {"key": "test-taint-key", "value": "test-taint-val", "operator": "Equal", "effect": "NoSchedule"}


def _taint_all(c: Cluster, on: bool) -> None:
    """e2eutil.TaintAllNodes / RemoveTaintsFromAllNodes: the test's taint added to or removed from every node,
    the control plane's own taint kept."""
    for n in c.client.list(kinds.NODE):
        taints = [t for t in (n.get("spec") or {}).get("taints") or [] if t["key"] != TAINT["key"]]
        n["spec"] = {**(n.get("spec") or {}), "taints": taints + ([TAINT] if on else [])}
        c.client.update(n)


@pytest.mark.parametrize("tolerant", [
    pytest.param(False, id="Taints"),
    pytest.param(True, id="Taints-and-Tolerations"),
])
def test_a_pod_waits_for_a_taint_it_does_not_tolerate_to_be_removed(tolerant):
    """Every node tainted test-taint-key=test-taint-val:NoSchedule: a one-pod job that tolerates it runs at once
    (on a worker: the control plane's own taint is not tolerated); one that does not waits, and runs once the
    taint is removed."""
    c = kind()
    _taint_all(c, True)
    if tolerant:
        run(c, spec_job("tt-job", spec_task(ONE, 1, 1, tolerations=[TOLERATION])))
        assert pods_of(c, "tt-job") == {"tt-job-tt-job-task-0-0": ("Running", "worker1")}
    run(c, spec_job("tt-job-no-toleration", spec_task(ONE, 1, 1)))
    assert list(pods_of(c, "tt-job-no-toleration").values()) == [("Pending", None)]
    assert pg_condition(c, "tt-job-no-toleration").endswith(
        "0/5 nodes are unavailable: 5 node(s) had untolerated taint(s).")
    _taint_all(c, False)
    run(c)
    assert phases(c, "tt-job-no-toleration") == ["Running"]


# ---- schedulingbase/job_scheduling.go: the whole cluster, 32 one-cpu slots on the workers ---------------------
def test_schedule_job_and_multiple_jobs():
    """`Schedule Job` / `Schedule Multiple Jobs`: three jobs of 32 one-cpu pods, minAvailable 2, created
    together: each gets at least its gang; the cluster holds 32, shared in creation order as drf's job order
    keeps their shares even (11, 11, 10)."""
    c = kind()
    run(c, *(spec_job(f"mqj-{i}", spec_task(ONE, 32, 2)) for i in (1, 2, 3)))
    assert [phases(c, f"mqj-{i}").count("Running") for i in (1, 2, 3)] == [11, 11, 10]
    assert all(pg_phase(c, f"mqj-{i}") == "Running" for i in (1, 2, 3))


def _other_scheduler_pods(c: Cluster, n: int) -> None:
    """e2eutil.CreateReplicaSet's pods (1 cpu each, the default scheduler's), bound as it would: filling
    workers in order."""
    for i in range(n):
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"rs-1-{i}", "namespace": "default"},
                         "spec": {"nodeName": WORKERS[i // NODE_CPU], "schedulerName": "default-scheduler",
                                  "containers": [{"name": "nginx", "image": "nginx",
                                                  "resources": {"requests": {"cpu": "1"}}}]},
                         "status": {"phase": "Running"}})


def test_gang_scheduling_waits_for_the_whole_gang_then_runs():
    """`Gang scheduling`: a ReplicaSet of the default scheduler takes 17 of the 32 slots; a gang of 17 cannot
    fit the 15 left: none of its pods is bound, it is reported Unschedulable; once the ReplicaSet is gone,
    all 17 run."""
    c = kind()
    _other_scheduler_pods(c, 17)
    run(c, spec_job("gang-qj", spec_task(ONE, 17, 17)))
    assert phases(c, "gang-qj") == ["Pending"] * 17 and {n for _, n in pods_of(c, "gang-qj").values()} == {None}
    assert meta.phase(c.client.get(kinds.JOB, "default", "gang-qj")) == "Pending"
    # (15 fit the room left: within-job preemption pipelines them there without evicting anything, as
    # Volcano's does; the whole gang stays unbound)
    assert pg_condition(c, "gang-qj").startswith("17/17 tasks in gang unschedulable: pod group is not ready, "
                                                 "15 Pipelined, 17 minAvailable, 2 Pending; Pending: 2 Unschedulable. "
                                                 "Origin reason is gang-qj-gang-qj-task-0-")
    assert ": 0/5 nodes are unavailable: " in pg_condition(c, "gang-qj")
    # nothing was evicted for them: no pod is nominated to a node, nor said to wait for resources being released
    assert "being released" not in pg_condition(c, "gang-qj")
    assert not any((c.client.get(kinds.POD, "default", n).get("status") or {}).get("nominatedNodeName")
                   for n in pods_of(c, "gang-qj"))
    for i in range(17):
        c.client.delete(kinds.POD, "default", f"rs-1-{i}", grace_period=0)
    run(c)
    assert phases(c, "gang-qj") == ["Running"] * 17


def test_a_gang_that_cannot_fit_beside_a_full_one_waits_and_evicts_nothing():
    """`Gang scheduling: Full Occupied` and `Statement`: a gang of 32 fills the cluster; a second equal gang
    stays Pending (its PodGroup reported Unschedulable) and the first keeps every pod: no eviction."""
    c = kind()
    run(c, spec_job("st-qj-1", spec_task(ONE, 32, 32)))
    run(c, spec_job("st-qj-2", spec_task(ONE, 32, 32)))
    assert phases(c, "st-qj-1") == ["Running"] * 32
    assert not any(meta.is_deleting(c.client.get(kinds.POD, "default", n)) for n in pods_of(c, "st-qj-1"))
    assert meta.phase(c.client.get(kinds.JOB, "default", "st-qj-2")) == "Pending"
    assert {phase for phase, _ in pods_of(c, "st-qj-2").values()} <= {"Pending"}
    assert pg_condition(c, "st-qj-2")


@pytest.mark.parametrize("tasks, running", [
    # upstream's task named "best-effort" is the one with requests (its names are swapped)
    pytest.param([spec_task(ONE, 16, 16, "best-effort"), spec_task(None, 16, 16, "non-best-effort")], 32,
                 id="Gang-scheduling-Contains-both-best-effort-pod-and-non-best-effort-pod"),
    pytest.param([spec_task(ONE, 32, 2), spec_task(None, 16, 2)], 48, id="Schedule-BestEffort-Job"),
])
def test_a_gang_with_best_effort_pods_runs(tasks, running):
    """Pods without requests (BestEffort) are placed by backfill once the gang is admitted; they count in
    the gang and take no cpu, so every pod of both tasks runs."""
    c = kind()
    run(c, spec_job("test", *tasks))
    assert phases(c, "test") == ["Running"] * running


def test_binpack_fills_the_node_of_the_first_job():
    """`support binpack policy`: a 1-cpu pod runs (on worker1); a gang of as many 500m pods as that node has room
    for (14) is placed there too: binpack scores the fuller node higher."""
    c = kind()
    run(c, spec_job("binpack-base-1", spec_task(ONE, 1, 1)))
    (base,) = [n for _, n in pods_of(c, "binpack-base-1").values()]
    run(c, spec_job("binpack-test-1", spec_task(HALF, 14, 14)))
    assert set(pods_of(c, "binpack-test-1").values()) == {("Running", base)}


# ---- schedulingbase/sla.go ---------------------------------------------------------------------------------------
# volcano-scheduler-ci.conf has `sla` (no arguments) after conformance; the job's `sla-waiting-time` annotation
# reaches its PodGroup. Upstream's test runs for a few minutes of real time, so no deadline of 30 min or more
# passes in it: the virtual clock here moves through timers only within the first 10 minutes.
SLA_CONF = scheduler_confs.helm_conf(CI_ACTIONS).replace("  - name: conformance\n",
                                                         "  - name: conformance\n  - name: sla\n")
REP = 32   # e2eutil.ClusterSize(ctx, OneCPU): 4 workers of 8 cpu


def sla_cluster() -> Cluster:
    c = Cluster([_node("control-plane", [CONTROL_PLANE_TAINT])] + [_node(n) for n in WORKERS], conf.parse(SLA_CONF))
    horizon = c.rt.clock.monotonic() + 600

    def settle_within_the_test() -> None:
        while True:
            c.rt.step()
            t = c.rt.next_timer()
            if t is None or t > horizon:
                return
            c.rt.clock.jump_to(t)

    c.rt.settle = settle_within_the_test   # (what Cluster.kubelet and run call)
    return c


def sla_job(name: str, rep: int, waiting_time: str) -> dict:
    """e2eutil.CreateJobWithPodGroup with the `sla-waiting-time` annotation on the job."""
    job = spec_job(name, spec_task(ONE, rep, rep))
    job["metadata"]["annotations"] = {"sla-waiting-time": waiting_time}
    return job


def test_sla_permits_job_to_be_inqueue():
    """`sla permits job to be inqueue`: a gang of twice the cluster is let in once its 3 s have passed (over
    overcommit's limit): all its pods are created, and wait Pending."""
    c = sla_cluster()
    run(c, sla_job("j1-overlarge", 2 * REP, "3s"))
    assert pg_phase(c, "j1-overlarge") == "Inqueue"
    assert phases(c, "j1-overlarge") == ["Pending"] * (2 * REP)


def test_sla_adjusts_job_order():
    """`sla adjusts job order`: behind the over-large job, a job with a 1 h waiting time and then one with 30 min
    get no pods; once the over-large job is deleted, the one whose deadline comes first (30 min) runs on the whole
    cluster and the other still has no pod."""
    c = sla_cluster()
    run(c, sla_job("j1-overlarge", 2 * REP, "3s"))
    assert phases(c, "j1-overlarge") == ["Pending"] * (2 * REP)
    run(c, sla_job("j2-slow-sla", REP, "1h"))
    run(c, sla_job("j3-fast-sla", REP, "30m"))
    assert pods_of(c, "j2-slow-sla") == {} and pods_of(c, "j3-fast-sla") == {}
    c.client.delete(kinds.JOB, "default", "j1-overlarge")
    run(c)
    assert pods_of(c, "j2-slow-sla") == {}
    assert phases(c, "j3-fast-sla") == ["Running"] * REP
