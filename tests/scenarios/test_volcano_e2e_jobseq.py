"""More of Volcano's e2e vcjob cases on the embedded control plane on a virtual clock, with the harness and test
kubelet of test_volcano_e2e_jobs.py:
- test/e2e/jobp/job_scale_up_down.go: `Scale up`, `Scale down`, `Scale down to zero and scale up` (a running
  job with the svc plugin is updated; upstream's WaitJobReady counts the job's ready pods against minAvailable;
  the `<job>-svc` ConfigMap must equal svc.GenerateHosts of the updated job, spelled out here; then
  WaitJobCleanedUp after the job is deleted);
- test/e2e/jobp/job_controlled_resource.go: `Generate PodGroup and valid minResource when creating job` (found
  that minResources lacked the limits.cpu / limits.memory of Kubernetes' pod quota usage), and `use exisisting
  PVC in job` (skipped upstream for its flakiness, issue #3102; here the volume controller binds the claim to the
  hand-made hostPath PV and provisions the job's generated claim);
- test/e2e/jobp/admission.go: every `job validate check` (one table row each), `Default queue would be added`,
  `Job mutate check`, `create job with privileged container`, `Invalid CPU/memory unit`, `Create volcano-scheduler
  pod`, `Create volcano pod with volcano scheduler`, `Allow to create pod when podgroup is Pending`, `queue
  check: open queue can be deleted`;
- test/e2e/jobp/pg_controller.go: both cases, with the pod the ReplicationController would make;
- test/e2e/jobseq/job_error_handling.go: `Task Priority` (the one case test_volcano_e2e_jobs.py left);
- test/e2e/jobseq/queue.go: both Queue Command cases (bus.volcano.sh Commands, as util.CreateQueueCommand);
  test_queue_commands.py covers the same controller in more depth.

Not ported:
- admission.go `Create default-scheduler pod` runs the pod with kube-scheduler, which vclite does not have: such a
  pod is never placed (docs/differences.md); test_a_pod_of_another_scheduler_gets_no_podgroup pins that.
- pg_controller.go's ReplicationController itself (no such kind; docs/differences.md, "kinds not served").
- queue_job_status.go `Transform from inqueque to running` is disabled upstream (XIt, then Skip "Prepare 2 job").
"""
from __future__ import annotations

import pytest

from tests.scenarios.test_volcano_e2e_jobs import Cluster, node, pol, task, vcjob
from vclite.api import bus, kinds, meta, quantity
from vclite.lib import errors


def ready(c: Cluster, job: str) -> int:
    """e2eutil.WaitJobReady's count: the job's pods Running."""
    return sum(1 for p in c.client.list(kinds.POD, "default")
               if meta.labels(p).get("volcano.sh/job-name") == job and c.pod_phase(p) == "Running")


def hosts(job: str, task_name: str, n: int) -> dict[str, str]:
    """svc.GenerateHosts for one task of `n` replicas."""
    names = [f"{job}-{task_name}-{i}.{job}" for i in range(n)]
    key = task_name.upper()
    return {f"{task_name}.host": "\n".join(names), f"VC_{key}_HOSTS": ",".join(names), f"VC_{key}_NUM": str(n)}


def scale(c: Cluster, name: str, replicas: int, min_available: int, task_min: int | None) -> None:
    """e2eutil.UpdateJob: the job's minAvailable and its task's replicas (and minAvailable) changed."""
    job = c.job(name)
    job["spec"]["minAvailable"] = min_available
    job["spec"]["tasks"][0]["replicas"] = replicas
    if task_min is not None:
        job["spec"]["tasks"][0]["minAvailable"] = task_min
    c.client.update(job)
    c.rt.settle()
    c.kubelet()   # new pods run, pods scaled away stop


def cleaned_up(c: Cluster, name: str) -> bool:
    """e2eutil.WaitJobCleanedUp: the job, its PodGroup and its pods gone (and, by their owner, the plugin's)."""
    try:
        c.job(name)
    except errors.NotFound:
        pass
    else:
        return False
    return not (c.client.list(kinds.PODGROUP, "default") or c.pods() or c.client.list(kinds.CONFIGMAP, "default")
                or c.client.list(kinds.SERVICE, "default"))


# ---- jobp/job_scale_up_down.go -----------------------------------------------------------------------------
# (Volcano's Running state: more pending pods than replicas - minAvailable is Pending again; no replicas at all
# keeps the phase)
@pytest.mark.parametrize("name, steps, phases", [
    pytest.param("scale-up-job", [(4, 4, None)], ["Pending", "Running", "Pending", "Running"], id="Scale-up"),
    pytest.param("scale-down-job", [(1, 1, 1)], ["Pending", "Running"], id="Scale-down"),
    pytest.param("scale-down-job", [(0, 0, 0), (2, 2, None)], ["Pending", "Running", "Pending", "Running"],
                 id="Scale-down-to-zero-and-scale-up"),
])
def test_a_running_job_with_the_svc_plugin_scales(name, steps, phases):
    c = Cluster([node("n1", "4")])
    c.create(vcjob([task("default", 2, 2, cpu="500m")], name=name, plugins={"svc": []}))
    c.start()
    assert ready(c, name) == 2 and c.phases(name) == ["Pending", "Running"]
    for replicas, min_available, task_min in steps:
        scale(c, name, replicas, min_available, task_min)
        assert ready(c, name) == replicas
        assert sorted(c.pods()) == [f"{name}-default-{i}" for i in range(replicas)]
        assert c.client.get(kinds.CONFIGMAP, "default", f"{name}-svc")["data"] == hosts(name, "default", replicas)
        (pg,) = c.client.list(kinds.PODGROUP, "default")
        assert pg["spec"]["minMember"] == min_available
        assert meta.phase(c.job(name)) == "Running"
    assert c.phases(name) == phases
    c.client.delete(kinds.JOB, "default", name)
    c.rt.settle()
    c.kubelet()
    assert cleaned_up(c, name)


# ---- jobp/job_controlled_resource.go ------------------------------------------------------------------------
def test_a_job_s_podgroup_gets_its_min_resources_from_the_tasks_requests_and_limits():
    """`Generate PodGroup and valid minResource when creating job`: two one-pod tasks each requesting and
    limited to 1 cpu, 1000Mi and one GPU; the PodGroup `<job>-<uid>` sums them under each of Volcano's names."""
    c = Cluster()
    res = {"cpu": "1000m", "memory": "1000Mi", "nvidia.com/gpu": "1"}
    tasks = [task("task-1", 1, 1), task("task-2", 1, 1)]
    for t in tasks:
        t["template"]["spec"]["containers"][0]["resources"] = {"requests": dict(res), "limits": dict(res)}
    c.create(vcjob(tasks, name="job-name-podgroup"))
    job = c.job("job-name-podgroup")
    assert meta.phase(job) == "Pending"
    pg = c.client.get(kinds.PODGROUP, "default", f"job-name-podgroup-{meta.uid(job)}")
    mem = str(2000 * 1024 * 1024)
    want = {"count/pods": "2", "cpu": "2", "memory": mem, "nvidia.com/gpu": "2", "limits.cpu": "2",
            "limits.memory": mem, "requests.memory": mem, "requests.nvidia.com/gpu": "2", "pods": "2",
            "requests.cpu": "2"}
    got = pg["spec"]["minResources"]
    assert {k: str(quantity.parse(got[k])) if k in got else None for k in want} == \
        {k: str(quantity.parse(v)) for k, v in want.items()}


def test_a_job_uses_an_existing_claim_and_makes_one_from_its_volume_claim(tmp_path):
    """`use exisisting PVC in job`: a hostPath PV (class standard, 1Gi, DirectoryOrCreate), a PVC naming it by
    volumeName, a job mounting that PVC by volumeClaimName and a second volume by volumeClaim. The job runs
    (WaitJobReady); its first volume keeps the name given, the second gets a generated one; both claims are
    Bound (the first to the PV, the second to a provisioned volume) and in status.controlledResources."""
    c = Cluster()
    c.client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "job-pv-name"},
                     "spec": {"storageClassName": "standard", "capacity": {"storage": "1Gi"},
                              "hostPath": {"path": str(tmp_path / "pvtest"), "type": "DirectoryOrCreate"},
                              "accessModes": ["ReadWriteOnce"]}})
    c.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
              "metadata": {"name": "job-pvc-name-exist", "namespace": "default"},
              "spec": {"storageClassName": "standard", "volumeName": "job-pv-name",
                       "resources": {"requests": {"storage": "1Gi"}}, "accessModes": ["ReadWriteOnce"]}})
    t = task("pvctask", 1, 1, cpu="500m")
    c.create(vcjob([t], name="job-pvc-name-exist", minAvailable=1, volumes=[
        {"mountPath": "/mountone", "volumeClaimName": "job-pvc-name-exist"},
        {"mountPath": "/mounttwo", "volumeClaim": {"resources": {"requests": {"storage": "1Gi"}},
                                                   "accessModes": ["ReadWriteOnce"]}}]))
    c.start()
    assert ready(c, "job-pvc-name-exist") == 1
    job = c.job("job-pvc-name-exist")
    volumes = job["spec"]["volumes"]
    assert len(volumes) == 2
    assert volumes[0]["volumeClaimName"] == "job-pvc-name-exist"
    generated = volumes[1]["volumeClaimName"]
    assert generated not in ("", "job-pvc-name-exist")
    assert job["status"]["controlledResources"] == {"volume-pvc-job-pvc-name-exist": "job-pvc-name-exist",
                                                    f"volume-pvc-{generated}": generated}
    existing = c.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", "job-pvc-name-exist")
    made = c.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", generated)
    assert existing["status"]["phase"] == made["status"]["phase"] == "Bound"
    assert existing["spec"]["volumeName"] == "job-pv-name" and made["spec"]["volumeName"] == f"pvc-{meta.uid(made)}"
    assert made["metadata"]["ownerReferences"][0]["uid"] == meta.uid(job)
    assert c.client.get(kinds.PERSISTENTVOLUME, "", "job-pv-name")["status"]["phase"] == "Bound"


# ---- jobp/admission.go ----------------------------------------------------------------------------------------
def _admission_job(**spec) -> dict:
    """admission.go's JSON job: minAvailable 1, one task of two 1-cpu nginx pods (what a row changes)."""
    t = task("", 2, cpu="1")
    del t["name"]
    return vcjob([t], name="test-job", **{"minAvailable": 1, **spec})


def _with_task(min_available: int = 1, **fields):
    job = _admission_job(minAvailable=min_available)
    job["spec"]["tasks"][0].update(fields)
    return job


def _with_request(name: str, value: str):
    job = _admission_job(minAvailable=3)
    job["spec"]["tasks"][0].update(replicas=3, name="default-nginx")
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"requests": {name: value}}
    return job


def _two_tasks(name: str | None):
    job = _admission_job()
    job["spec"]["tasks"] = [task(name, 1, cpu="1") for _ in range(2)]
    for t in job["spec"]["tasks"]:
        if name is None:
            del t["name"]
    return job


def _privileged():
    job = _admission_job()
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    return job


JOB_VALIDATE_CHECKS = [   # (tests/e2e/test_volcano_e2e_jobs_server.py sends them to a `vcctl server` too)
    pytest.param(_with_request("cpu", "-1"), id="Invalid-CPU-unit"),
    pytest.param(_with_request("memory", "-1"), id="Invalid-memory-unit"),
    pytest.param(_two_tasks("test"), id="duplicate-task-name-check-when-create"),
    pytest.param(_admission_job(policies=[pol("PodFailed", "AbortJob"), pol("PodFailed", "RestartJob")]),
                 id="duplicate-job-policy-event-when-create"),
    pytest.param(_with_task(2, replicas=1), id="minAvailable-larger-than-replicas-when-create"),
    pytest.param(_admission_job(plugins={"big_plugin": []}), id="illegal-plugin-when-create"),
    pytest.param(_admission_job(ttlSecondsAfterFinished=-1), id="illegal-ttl-when-create"),
    pytest.param(_admission_job(minAvailable=-1), id="illegal-minAvailable-when-create"),
    pytest.param(_admission_job(maxRetry=-1), id="illegal-maxRetry-when-create"),
    pytest.param(vcjob([], name="test-job", minAvailable=1), id="no-task-spec-when-create"),
    pytest.param(_with_task(replicas=-1), id="illegal-replicas-when-create"),
    pytest.param(_with_task(name="Task-1"), id="illegal-task-name-when-create"),
    pytest.param(_admission_job(policies=[{"event": "PodFailed", "action": "AbortJob", "exitCode": -1}]),
                 id="policy-event-with-exit-code-when-create"),
    pytest.param(_admission_job(policies=[{"action": "AbortJob"}]),
                 id="policy-event-and-exit-code-both-nil-when-create"),
    pytest.param(_admission_job(policies=[pol("fakeEvent", "AbortJob")]), id="invalid-policy-event-when-create"),
    pytest.param(_admission_job(policies=[pol("PodEvicted", "fakeAction")]), id="invalid-action-when-create"),
    pytest.param(_admission_job(policies=[{"action": "AbortJob", "exitCode": 0}]), id="zero-exitCode-when-create"),
    pytest.param(_admission_job(policies=[pol("*", "AbortJob"), pol("PodFailed", "RestartJob")]),
                 id="both-any-event-and-other-events-exist-when-create"),
    pytest.param(_admission_job(volumes=[{"mountPath": ""}]), id="invalid-volume-mount-when-create"),
    pytest.param(_admission_job(volumes=[{"mountPath": "/var", "volumeClaimName": "pvc1"},
                                         {"mountPath": "/var", "volumeClaimName": "pvc2"}]),
                 id="duplicate-mount-volume-when-create"),
    pytest.param(_admission_job(volumes=[{"mountPath": "/var"}]),
                 id="vloume-without-volumeClaimName-and-volumeClaim-when-create"),
    pytest.param(_admission_job(queue="fakeQueue"), id="invalid-queue-when-create"),
    pytest.param(_admission_job(queue="root"), id="create-job-with-root-queue"),
    pytest.param(_admission_job(queue="q1"), id="create-job-with-non-leaf-queue"),
]


@pytest.mark.parametrize("job", JOB_VALIDATE_CHECKS)
def test_job_validate_check_refuses(job):
    """`job validate check: …`: the create is refused, and nothing is stored."""
    c = Cluster()
    for name, parent in (("q1", "root"), ("q11", "q1")):
        c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                  "spec": {"weight": 1, "parent": parent}})
    with pytest.raises(errors.Invalid):
        c.client.create(job)
    assert c.client.list(kinds.JOB, "default") == []


def test_job_mutate_check_defaults_queue_scheduler_and_task_names():
    """`Default queue would be added`, `Job mutate check` (and `create job with privileged container`, accepted)."""
    c = Cluster()
    c.create(_two_tasks(None))
    job = c.job("test-job")
    assert (job["spec"]["queue"], job["spec"]["schedulerName"]) == ("default", "volcano")
    assert [t["name"] for t in job["spec"]["tasks"]] == ["default0", "default1"]
    c.create(_privileged() | {"metadata": {"name": "privileged", "namespace": "default"}})
    assert c.job("privileged")["spec"]["queue"] == "default"


def _pod(name: str, cpu: str, scheduler: str | None = "volcano", group: str | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "command": ["sleep", "1000"],
                                    "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}
    if scheduler:
        pod["spec"]["schedulerName"] = scheduler
    if group:
        pod["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": group}
    return pod


def _podgroup(name: str, cpu: str) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": 1, "minResources": {"cpu": cpu}}}


def test_a_volcano_pod_gets_a_podgroup_and_runs():
    """`Create volcano-scheduler pod`; pg_controller.go `Create volcano rc, pg controller process` (the pod as
    the ReplicationController makes it — vclite has no ReplicationController kind): its PodGroup Running."""
    c = Cluster()
    c.create(_pod("pod-volcano-scheduler", "1"))
    c.kubelet()
    assert c.pods() == {"pod-volcano-scheduler": "Running"}
    (pg,) = c.client.list(kinds.PODGROUP, "default")
    assert meta.phase(pg) == "Running" and pg["spec"]["minMember"] == 1


def test_a_pod_of_another_scheduler_gets_no_podgroup():
    """pg_controller.go `Create default-scheduler rc, pg controller don't process` (upstream's pod also runs, by
    kube-scheduler, which vclite does not have: see `Create default-scheduler pod` below)."""
    c = Cluster()
    c.create(_pod("pod-default-scheduler", "1", scheduler=None))
    c.kubelet()
    assert c.client.list(kinds.PODGROUP, "default") == []
    assert c.pods() == {"pod-default-scheduler": "Pending"}


@pytest.mark.parametrize("group, group_cpu, group_phase, pod, pod_cpu, pod_phase", [
    # `Create volcano pod with volcano scheduler`: the PodGroup goes Inqueue, then its pod is created and runs
    pytest.param("running-pg", "1", "Inqueue", "volcano-pod", "500m", "Running", id="an-inqueue-podgroups-pod-runs"),
    # `Allow to create pod when podgroup is Pending`: a PodGroup asking 30 cpu stays Pending; its pod is admitted
    # all the same (and waits)
    pytest.param("pending-pg", "30", "Pending", "pod-volcano", "1", "Pending",
                 id="a-pod-may-be-created-for-a-pending-podgroup"),
])
def test_a_pod_of_a_podgroup_made_before_it(group, group_cpu, group_phase, pod, pod_cpu, pod_phase):
    """A PodGroup (minMember 1) made first, then its pod."""
    c = Cluster()
    c.create(_podgroup(group, group_cpu))
    assert meta.phase(c.client.get(kinds.PODGROUP, "default", group)) == group_phase
    c.create(_pod(pod, pod_cpu, group=group))
    c.kubelet()
    assert c.pods() == {pod: pod_phase}


def test_an_open_queue_can_be_deleted():
    """`queue check: open queue can be deleted`."""
    c = Cluster()
    c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
              "metadata": {"name": "deleted-open-queue"}, "spec": {"weight": 1}, "status": {"state": "Open"}})
    assert c.client.get(kinds.QUEUE, "", "deleted-open-queue")["status"]["state"] == "Open"
    c.client.delete(kinds.QUEUE, "", "deleted-open-queue")
    c.rt.settle()
    with pytest.raises(errors.NotFound):
        c.client.get(kinds.QUEUE, "", "deleted-open-queue")


# ---- jobseq/queue.go ----------------------------------------------------------------------------------------
def _queue_command(c: Cluster, name: str, action: str) -> None:
    """util.CreateQueueCommand: a bus.volcano.sh Command in `default` targeting the queue."""
    cmd = bus.command_for(c.client.get(kinds.QUEUE, "", name), kinds.QUEUE, action)
    cmd["metadata"]["namespace"] = "default"
    c.create(cmd)


def _queue_state(c: Cluster, name: str) -> str:
    return c.client.get(kinds.QUEUE, "", name)["status"]["state"]


@pytest.mark.parametrize("parents, steps", [
    pytest.param({"queue-command-close": "root"},
                 [("queue-command-close", "CloseQueue", "queue-command-close", "Closed"),
                  ("queue-command-close", "OpenQueue", "queue-command-close", "Open")],
                 id="Queue-Command-Close-And-Open-With-State-Check"),
    pytest.param({"queue1": "root", "queue2": "root", "queue11": "queue1"},
                 [("queue1", "CloseQueue", "queue11", "Closed"),     # the child closes with its parent
                  ("queue11", "OpenQueue", "queue11", "Closed"),     # not while its parent is closed
                  ("queue1", "OpenQueue", "queue1", "Open")],
                 id="Queue-Command-Close-And-Open-With-Hierarchical-Queues"),
])
def test_queue_commands_close_and_open(parents, steps):
    c = Cluster()
    for name, parent in parents.items():
        c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                  "spec": {"weight": 1, "parent": parent}})
    for target, action, watched, state in steps:
        _queue_command(c, target, action)
        assert _queue_state(c, watched) == state, (target, action)
    assert c.client.list(kinds.COMMAND, "default") == []   # each consumed


# ---- jobseq/job_error_handling.go `Task Priority` --------------------------------------------------------------
@pytest.mark.parametrize("lower_class, running", [
    # Upstream gives both tasks master-pri (expecting nodecount master-pri pods ready and no worker-pri ones): it
    # cannot tell the tasks apart. The intended case — the lower task in worker-pri — is the first row.
    pytest.param("worker-pri", {"higherprioritytask": 2, "lowerprioritytask": 0}, id="Task-Priority-intended"),
    pytest.param("master-pri", None, id="Task-Priority-as-upstream-writes-it"),
])
def test_the_higher_priority_task_gets_the_nodes(lower_class, running):
    """Two nodes that hold one (cpu per node - 1) pod each; a job of minAvailable = node count with two tasks of
    node-count such pods: the pods of the task with the higher PriorityClass are placed first."""
    c = Cluster([node("n1", "4"), node("n2", "4")])
    for name, value in (("master-pri", 100), ("worker-pri", -50)):
        c.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                  "value": value})
    tasks = [task("higherprioritytask", 2, cpu="3"), task("lowerprioritytask", 2, cpu="3")]
    for t, pc in zip(tasks, ("master-pri", lower_class)):
        t["template"]["spec"]["priorityClassName"] = pc
    c.create(vcjob(tasks, name="task-priority-job", minAvailable=2))
    c.start()
    assert c.went_through(["Pending", "Running"], "task-priority-job")
    ready = {}
    for p in c.client.list(kinds.POD, "default"):
        if c.pod_phase(p) in ("Running", "Succeeded"):
            pc = p["spec"]["priorityClassName"]
            ready[pc] = ready.get(pc, 0) + 1
            t = meta.labels(p)["volcano.sh/task-spec"]
            ready[t] = ready.get(t, 0) + 1
    assert (ready.get("master-pri", 0), ready.get("worker-pri", 0)) == (2, 0)   # WaitTasksReadyEx
    if running is not None:
        assert {t: ready.get(t, 0) for t in running} == running
