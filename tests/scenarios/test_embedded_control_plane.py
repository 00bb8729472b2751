"""The whole embedded control plane on a virtual clock: API, admission, vcjob / JobFlow / JobTemplate
controllers and the scheduler, wired by the Runtime. The test plays the kubelet through the API
(it marks bound pods Running, then Succeeded or Failed), so every run is deterministic."""
from vclite.api import kinds, meta, yamlio
from vclite.lib import clock
from vclite.runtime import runtime

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def template(name, replicas=1, cpu="1", policies=""):
    return f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: {replicas}
{policies}
  tasks:
    - name: main
      replicas: {replicas}
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: ["true"]
              resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def jobflow(name, deps):
    flows = "\n".join(f"    - name: {f}" + (f"\n      dependsOn: {{targets: [{', '.join(d)}]}}" if d else "")
                      for f, d in deps.items())
    return f"---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {{name: {name}}}\nspec:\n  flows:\n{flows}\n"


def start(text):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    rt.start()
    for doc in yamlio.load_string(text, "test.yaml"):
        rt.client.create(doc.obj)
    return rt


def finish_deletion(rt, pod) -> bool:
    """The kubelet's last step of a pod's graceful deletion (its containers stop at once here): True if it
    removed the pod, False if nothing was left to do."""
    if not pod["metadata"].get("deletionGracePeriodSeconds"):
        return False
    rt.client.delete(kinds.POD, meta.namespace(pod), meta.name(pod), grace_period=0)
    return True


def kubelet(rt, outcome=lambda pod: "Succeeded"):
    """Move every bound pod one step: Pending -> Running -> outcome(pod). Returns pods moved."""
    moved = 0
    for pod in rt.client.list(kinds.POD):
        if not pod["spec"].get("nodeName"):
            continue
        if meta.is_deleting(pod):
            moved += finish_deletion(rt, pod)
            continue
        phase = (pod.get("status") or {}).get("phase", "Pending")
        nxt = {"Pending": "Running", "Running": outcome(pod)}.get(phase)
        if nxt:
            code = 0 if nxt == "Succeeded" else 1
            state = {"running": {}} if nxt == "Running" else {"terminated": {"exitCode": code}}
            pod["status"] = {"phase": nxt, "containerStatuses": [{"name": "main", "state": state, "restartCount": 0}]}
            rt.client.update_status(pod)
            moved += 1
    return moved


def run_to_end(rt, outcome=lambda pod: "Succeeded", limit=200):
    order = []
    for _ in range(limit):
        rt.settle()
        for job in rt.client.list(kinds.JOB):
            if meta.name(job) not in order:
                order.append(meta.name(job))
        if not kubelet(rt, outcome):
            rt.settle()
            break
    return order


def flow_phase(rt, name):
    return meta.phase(rt.client.get(kinds.JOBFLOW, "default", name))


def test_diamond_runs_in_dependency_order_on_a_virtual_clock():
    deps = {"a": [], "b": ["a"], "c": ["b"], "d": ["b"], "e": ["c", "d"]}
    rt = start(jobflow("dia", deps) + "".join(template(n) for n in deps))
    order = run_to_end(rt)
    assert flow_phase(rt, "dia") == "Succeed"
    pos = {n: i for i, n in enumerate(order)}
    for flow, targets in deps.items():
        for t in targets:
            assert pos[f"dia-{t}"] < pos[f"dia-{flow}"], order
    assert sorted(rt.client.get(kinds.JOBFLOW, "default", "dia")["status"]["completedJobs"]) == \
        [f"dia-{x}" for x in "abcde"]


def test_a_failed_job_fails_the_flow_and_nothing_downstream_starts():
    rt = start(jobflow("f", {"a": [], "b": ["a"]}) + template("a") + template("b"))
    run_to_end(rt, outcome=lambda pod: "Failed")
    assert flow_phase(rt, "f") == "Failed"
    assert [meta.name(j) for j in rt.client.list(kinds.JOB)] == ["f-a"]


def test_restart_policy_retries_then_succeeds():
    policies = "  policies:\n    - {event: PodFailed, action: RestartJob}\n  maxRetry: 3"
    rt = start(jobflow("r", {"a": []}) + template("a", policies=policies))
    attempts = []

    def outcome(pod):
        retry = meta.annotations(pod).get("volcano.sh/job-retry-count", "0")
        attempts.append(retry)
        return "Failed" if retry == "0" else "Succeeded"

    run_to_end(rt, outcome)
    job = rt.client.get(kinds.JOB, "default", "r-a")
    assert job["status"]["retryCount"] == 1 and meta.phase(job) == "Completed"
    assert flow_phase(rt, "r") == "Succeed"


def test_gang_waits_until_the_whole_job_fits():
    # 3 replicas x 2 cpu on a 4-cpu node: the gang (minAvailable 3) never fits, nothing is bound.
    rt = start(jobflow("g", {"a": []}) + template("a", replicas=3, cpu="2"))
    rt.settle()
    assert not [p for p in rt.client.list(kinds.POD) if p["spec"].get("nodeName")]
    pgs = rt.client.list(kinds.PODGROUP)
    msgs = [c.get("message", "") for pg in pgs for c in (pg.get("status") or {}).get("conditions") or []]
    assert any("cpu" in m for m in msgs), msgs


def test_template_created_after_the_flow_starts_the_waiting_job():
    rt = start(jobflow("late", {"a": []}))
    rt.settle()
    assert rt.client.list(kinds.JOB) == []
    for doc in yamlio.load_string(template("a"), "t.yaml"):
        rt.client.create(doc.obj)
    run_to_end(rt)
    assert flow_phase(rt, "late") == "Succeed"


def test_deleting_a_namespace_deletes_what_is_inside_then_the_namespace():
    """Kubernetes' namespace lifecycle: Terminating, no new content, contents deleted (a running
    JobFlow through its own finalizer), then the namespace itself; `default` may not be deleted."""
    import pytest
    from vclite.lib import errors
    text = (template("a") + template("b") + jobflow("flow", {"a": [], "b": ["a"]})).replace(
        "metadata: {name:", "metadata: {namespace: team, name:")
    rt = start(text)
    rt.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "team"}})
    rt.settle()
    kubelet(rt)
    rt.settle()
    assert rt.client.list(kinds.JOB, "team") and rt.client.list(kinds.POD, "team")
    assert rt.client.get(kinds.NAMESPACE, "", "team")["spec"]["finalizers"] == ["kubernetes"]
    rt.client.delete(kinds.NAMESPACE, "", "team")
    ns = rt.client.get(kinds.NAMESPACE, "", "team")
    assert ns["status"]["phase"] == "Terminating" and ns["metadata"]["deletionTimestamp"]
    with pytest.raises(errors.Forbidden, match="unable to create new content in namespace team because it is "
                                               "being terminated"):
        rt.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late", "namespace": "team"}})
    for _ in range(50):
        # (bounded: while pods wait for the kubelet below, the namespace's re-check timer never runs out, and
        # an unbounded settle jumped through a million of them, most of this test's time)
        rt.settle(max_iterations=200)
        kubelet(rt)   # the running pods stop (graceful deletion): the kubelet's last step removes them
        if not any(n["metadata"]["name"] == "team" for n in rt.client.list(kinds.NAMESPACE)):
            break
        rt.clock.advance(0.2)
    assert not any(n["metadata"]["name"] == "team" for n in rt.client.list(kinds.NAMESPACE))
    for kind in kinds.ALL:
        if kind.namespaced:
            assert rt.client.list(kind, "team") == [], kind.kind
    assert rt.client.list(kinds.JOBTEMPLATE, "default") == [] and rt.client.get(kinds.QUEUE, "", "default")
    with pytest.raises(errors.Forbidden, match='namespaces "default" is forbidden: this namespace may not be deleted'):
        rt.client.delete(kinds.NAMESPACE, "", "default")


def test_a_bare_pod_for_volcano_gets_a_podgroup_and_is_scheduled():
    """Volcano's podgroup controller: `podgroup-<pod uid>`, minMember 1, the pod's requests, its
    queue annotation, its network topology and scheduling annotations; the pod is annotated with the
    group, then bound. Other schedulers' pods are
    left alone."""
    def pod(name, scheduler=None, annotations=None):
        spec = {"containers": [{"name": "c", "image": "busybox", "command": ["true"],
                                "resources": {"requests": {"cpu": "500m"}}}]}
        if scheduler:
            spec["schedulerName"] = scheduler
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
                "spec": spec}
    rt = start("")
    rt.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
                      "spec": {"weight": 1}})
    mine = rt.client.create(pod("mine", "volcano", {"scheduling.volcano.sh/queue-name": "q1",
                                                    "volcano.sh/network-topology-mode": "soft",
                                                    "volcano.sh/preemptable": "true"}))
    rt.client.create(pod("theirs"))
    rt.settle()
    group = rt.client.get(kinds.PODGROUP, "default", f"podgroup-{mine['metadata']['uid']}")
    assert group["spec"]["minMember"] == 1 and group["spec"]["queue"] == "q1"
    assert group["spec"]["networkTopology"] == {"mode": "soft"}
    assert group["metadata"]["annotations"] == {"volcano.sh/preemptable": "true"}
    assert group["spec"]["minResources"]["cpu"] == "500m"
    assert group["metadata"]["ownerReferences"][0]["uid"] == mine["metadata"]["uid"]
    placed = rt.client.get(kinds.POD, "default", "mine")
    assert placed["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == group["metadata"]["name"]
    assert placed["spec"]["nodeName"] == "n1"
    theirs = rt.client.get(kinds.POD, "default", "theirs")
    assert "scheduling.k8s.io/group-name" not in theirs["metadata"].get("annotations", {})
    assert not theirs["spec"].get("nodeName") and len(rt.client.list(kinds.PODGROUP)) == 1
    rt.client.delete(kinds.POD, "default", "mine")
    rt.settle()
    kubelet(rt)   # (a running pod: its kubelet ends the graceful deletion)
    rt.settle()
    assert rt.client.list(kinds.PODGROUP) == []   # owned by the pod: collected with it


def test_a_vcjob_whose_tasks_need_none_passes_a_completed_podgroup_and_completes():
    """Tasks with minAvailable 0 make a PodGroup of minMember 0 (upstream issue #2171). At the session
    that admits it, none of its 0 tasks is scheduled and all 0 are finished: Completed, as Volcano's
    getPodGroupPhase. That does not stop the job: SyncJob creates the pods (the PodGroup is past
    Pending), the scheduler places them one at a time (3 cpu each on 4), and the job completes."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    phases = []
    rt.client.watch(kinds.PODGROUP, lambda ev: phases.append((ev.object.get("status") or {}).get("phase")))
    rt.start()
    job = yamlio.load_string(template("a", replicas=2, cpu="3"), "t.yaml")[0].obj
    job.update(apiVersion="batch.volcano.sh/v1alpha1", kind="Job")
    job["spec"]["tasks"][0]["minAvailable"] = 0
    job["spec"]["minAvailable"] = 0
    rt.client.create(job)
    run_to_end(rt)
    assert [p for i, p in enumerate(phases) if i == 0 or p != phases[i - 1]] == [None, "Completed", "Running",
                                                                                  "Completed"]
    assert meta.phase(rt.client.get(kinds.JOB, "default", "a")) == "Completed"
