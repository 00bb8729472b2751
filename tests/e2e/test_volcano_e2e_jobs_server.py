"""Volcano's vcjob e2e cases (test/e2e/jobseq/job_error_handling.go, test/e2e/jobp/job_lifecycle.go,
min_success.go, job_restart.go, job_scale_up_down.go) again, with real processes: a `vcctl server` of two 2-cpu
nodes, driven over its HTTP API as upstream's Vcclient/Kubeclient drive a cluster, whose pods run upstream's
commands as local processes (`/bin/sh -c <command>`, as e2eutil.CreateContainers; nginx's endless server is
`sleep 300`, and upstream's `sleep 10s` before a failure is `sleep 1`). test_volcano_e2e_jobseq_server.py
uses the same harness for the rest of jobseq, jobp/admission.go and the stress suite.

tests/scenarios/test_volcano_e2e_jobs.py ports the same cases on a virtual clock, the test playing the kubelet;
here the pods' exits (`xxx` not found: 127, `exit 3`), the graceful deletion of a running pod (SIGTERM to its
process, then the pod gone) and the status writes are the executor's. The phases are read, as
e2eutil.WaitJobPhases reads them, from a watch of the job: in order, each with its counters.
`TaskFailed; Action: TerminateJob` writes a restart count into a running pod's status, as upstream does, over
the executor's (the failing command sleeps long enough for the write to find the pod running).
"""
from __future__ import annotations

import copy
import itertools
import threading

import pytest

from tests import vcctl_server
from tests.scenarios.test_volcano_e2e_jobs import _counters_fit
from vclite.api import kinds
from vclite.kube import client as kube_client
from vclite.lib import errors

pytestmark = pytest.mark.e2e
wait_for = vcctl_server.wait_until
LONG, FAIL, EXIT3 = "sleep 300", "sleep 1 && xxx", "sleep 1 && exit 3"
_names = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "2x(cpu=2,memory=8Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


@pytest.fixture(scope="module")
def api(server):
    return kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))


class Jobs:
    """One case's namespace (e2eutil.InitTestContext) and the watch of its vcjobs' statuses."""

    def __init__(self, api):
        self.api, self.ns = api, f"e2e-jobs-{next(_names)}"
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}})
        self.history: dict[str, list[dict]] = {}
        self.lock = threading.Lock()
        self.sub = api.watch(kinds.JOB, self._record, namespace=self.ns)

    def _record(self, ev) -> None:
        job = ev.object
        with self.lock:
            self.history.setdefault(job["metadata"]["name"], []).append(
                {**(job.get("status") or {}), "specMinAvailable": job["spec"].get("minAvailable", 0)})

    def create(self, name: str, tasks: list[dict], **spec) -> None:
        """e2eutil.CreateJob: the job's minAvailable is the sum of the tasks' Min unless given."""
        tasks = copy.deepcopy(tasks)
        spec.setdefault("minAvailable", sum([t.pop("_min") for t in tasks]))
        self.api.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                         "metadata": {"name": name, "namespace": self.ns}, "spec": {"tasks": tasks, **spec}})

    def went_through(self, name: str, phases: list[str]) -> bool:
        """e2eutil.WaitJobPhases over the statuses watched so far."""
        total = sum(t["replicas"] for t in self.api.get(kinds.JOB, self.ns, name)["spec"]["tasks"])
        want = iter(phases)
        phase = next(want, None)
        with self.lock:
            seen = list(self.history.get(name, []))
        for st in seen:
            if phase is None:
                break
            if (st.get("state") or {}).get("phase") == phase and _counters_fit(phase, st, total):
                phase = next(want, None)
        return phase is None

    def wait_phases(self, name: str, phases: list[str]) -> None:
        wait_for(lambda: self.went_through(name, phases), f"{name} to go through {phases}: {self.phases(name)}")

    def phases(self, name: str) -> list[str]:
        with self.lock:
            seen = [(st.get("state") or {}).get("phase") for st in self.history.get(name, [])]
        return [p for i, p in enumerate(seen) if p and (i == 0 or seen[i - 1] != p)]

    def pod(self, name: str) -> dict | None:
        try:
            return self.api.get(kinds.POD, self.ns, name)
        except errors.NotFound:
            return None

    def pod_running(self, name: str) -> bool:
        return ((self.pod(name) or {}).get("status") or {}).get("phase") == "Running"

    def close(self) -> None:
        """e2eutil.CleanupTestContext: the namespace's jobs deleted and their processes gone."""
        self.sub.cancel()
        for job in self.api.list(kinds.JOB, self.ns):
            try:
                self.api.delete(kinds.JOB, self.ns, job["metadata"]["name"])
            except errors.NotFound:
                pass
        wait_for(lambda: not self.api.list(kinds.POD, self.ns), f"the pods of {self.ns} to go")


@pytest.fixture
def jobs(api):
    j = Jobs(api)
    yield j
    j.close()


def task(name: str, replicas: int, command: str = LONG, min_available: int | None = None, **extra) -> dict:
    """e2eutil.TaskSpec: `Min` (the task's share of the job's minAvailable; Rep unless given), the command
    through `/bin/sh -c`, restartPolicy OnFailure unless given; the task's own minAvailable is left to the
    webhook's default, as upstream leaves it."""
    spec = {"restartPolicy": extra.pop("restartPolicy", "OnFailure"), "containers": [{
        "name": "c", "image": "busybox", "command": ["/bin/sh"], "args": ["-c", command],
        **({"resources": extra.pop("resources")} if "resources" in extra else {})}]}
    return {"name": name, "replicas": replicas, "_min": replicas if min_available is None else min_available,
            "template": {"spec": spec}, **extra}


def pol(event: str, action: str, **extra) -> dict:
    return {"event": event, "action": action, **extra}


def failing(name: str, replicas: int, command: str = FAIL, **extra) -> dict:
    return task(name, replicas, command, restartPolicy="Never", **extra)


RESTARTING = ["Pending", "Running", "Restarting"]
RESTARTED = ["Pending", "Running", "Restarting", "Pending", "Running"]
TERMINATED = ["Pending", "Running", "Terminating", "Terminated"]
ABORTED = ["Pending", "Running", "Aborting", "Aborted"]
SUCCESS = task("success", 2)
EVICTED_TASK = task("delete", 2)


# ---- job_error_handling.go: one row per upstream case ---------------------------------------------------------
# (policies, tasks, the pod deleted once the job runs, the phases upstream waits for)
@pytest.mark.parametrize("policies, tasks, delete, phases", [
    pytest.param([pol("PodFailed", "RestartJob")], [SUCCESS, failing("fail", 2)], None, RESTARTING,
                 id="job level LifecyclePolicy, Event: PodFailed; Action: RestartJob"),
    pytest.param([pol("PodFailed", "TerminateJob")], [SUCCESS, failing("fail", 2)], None, TERMINATED,
                 id="job level LifecyclePolicy, Event: PodFailed; Action: TerminateJob"),
    pytest.param([pol("PodFailed", "AbortJob")], [SUCCESS, failing("fail", 2)], None, ABORTED,
                 id="job level LifecyclePolicy, Event: PodFailed; Action: AbortJob"),
    pytest.param([pol("PodFailed", "RestartPod"), pol("PodEvicted", "TerminateJob", timeout="5m")],
                 [SUCCESS, failing("fail", 1)], None, ["Pending", "Running", "Restarting", "Running"],
                 id="job level LifecyclePolicy, Event: PodFailed, Action: RestartPod; Event PodEvicted, "
                    "Action: TerminateJob, Timeout: 5m"),
    pytest.param([pol("PodEvicted", "RestartJob")], [SUCCESS, EVICTED_TASK], "delete-0", RESTARTED,
                 id="job level LifecyclePolicy, Event: PodEvicted; Action: RestartJob"),
    pytest.param([pol("PodEvicted", "TerminateJob")], [SUCCESS, EVICTED_TASK], "delete-0", TERMINATED,
                 id="job level LifecyclePolicy, Event: PodEvicted; Action: TerminateJob"),
    pytest.param([pol("PodEvicted", "AbortJob")], [SUCCESS, EVICTED_TASK], "delete-0", ABORTED,
                 id="job level LifecyclePolicy, Event: PodEvicted; Action: AbortJob"),
    pytest.param([pol("*", "RestartJob")], [SUCCESS, EVICTED_TASK], "delete-0", RESTARTED,
                 id="job level LifecyclePolicy, Event: Any; Action: RestartJob"),
    pytest.param([pol("TaskCompleted", "CompleteJob")], [task("completed-task", 2, "sleep 2"),
                                                         task("terminating-task", 2)], None, ["Pending", "Completed"],
                 id="job level LifecyclePolicy, Event: TaskCompleted; Action: CompletedJob"),
    pytest.param([{"exitCode": 3, "action": "RestartJob"}], [task("success", 1), failing("fail", 1, EXIT3)], None,
                 RESTARTING, id="job level LifecyclePolicy, error code: 3; Action: RestartJob"),
    pytest.param([{"events": ["PodEvicted", "PodFailed", "PodEvicted"], "action": "TerminateJob"}],
                 [SUCCESS, EVICTED_TASK], "delete-0", TERMINATED,
                 id="job level LifecyclePolicy, Event[]: PodEvicted, PodFailed; Action: TerminateJob"),
    pytest.param(None, [SUCCESS, failing("fail", 2, policies=[pol("PodFailed", "RestartJob")])], None, RESTARTING,
                 id="Task level LifecyclePolicy, Event: PodFailed; Action: RestartJob"),
    pytest.param(None, [SUCCESS, task("delete", 2, policies=[pol("PodEvicted", "RestartJob")])], "delete-0",
                 RESTARTED, id="Task level LifecyclePolicy, Event: PodEvicted; Action: RestartJob"),
    pytest.param(None, [SUCCESS, task("delete", 2, policies=[pol("PodEvicted", "TerminateJob")])], "delete-0",
                 TERMINATED, id="Task level LifecyclePolicy, Event: PodEvicted; Action: TerminateJob"),
    pytest.param(None, [task("completed-task", 2, "sleep 2", policies=[pol("TaskCompleted", "CompleteJob")]),
                        task("terminating-task", 2)], None, ["Pending", "Completed"],
                 id="Task level LifecyclePolicy, Event: TaskCompleted; Action: CompletedJob"),
    pytest.param([pol("PodFailed", "AbortJob")],
                 [SUCCESS, failing("fail", 2, policies=[pol("PodFailed", "RestartJob")])], None, RESTARTING,
                 id="job level LifecyclePolicy, Event: PodFailed; Action: AbortJob and Task level "
                    "lifecyclePolicy, Event : PodFailed; Action: RestartJob"),
])
def test_job_error_handling_with_real_processes(jobs, policies, tasks, delete, phases):
    jobs.create("j", tasks, **({"policies": policies} if policies else {}))
    if delete:
        jobs.wait_phases("j", ["Pending", "Running"])
        wait_for(lambda: jobs.pod_running(f"j-{delete}"), f"j-{delete} to run")
        jobs.api.delete(kinds.POD, jobs.ns, f"j-{delete}")
    jobs.wait_phases("j", phases)


def test_task_failed_terminates_the_job(jobs):
    """`job level LifecyclePolicy, Event: TaskFailed; Action: TerminateJob`: a pod of the task of maxRetry 3 is
    written a restart count of 4 (upstream's UpdateStatus, replacing its container statuses); the task has
    failed, and the job is terminated."""
    jobs.create("j", [task("success", 2, "sleep 5"), failing("failed", 2, "sleep 30 && xxx", maxRetry=3)],
                policies=[pol("TaskFailed", "TerminateJob")])
    jobs.wait_phases("j", ["Pending", "Running"])
    wait_for(lambda: jobs.pod_running("j-failed-0"), "j-failed-0 to run")
    pod = jobs.api.get(kinds.POD, jobs.ns, "j-failed-0")
    pod["status"]["containerStatuses"] = [{"restartCount": 4}]
    jobs.api.update_status(pod)
    jobs.wait_phases("j", ["Pending", "Running", "Terminating", "Terminated"])


def set_taints(api, taints: list[dict]) -> None:
    """e2eutil.TaintAllNodes / RemoveTaintsFromAllNodes."""
    for n in api.list(kinds.NODE):
        n["spec"] = {**(n.get("spec") or {}), "taints": taints}
        api.update(n)


@pytest.mark.parametrize("action, after_delete, after_untaint", [
    pytest.param("RestartJob", ["Restarting", "Pending"], ["Running"],
                 id="Job error handling: Restart job when job is unschedulable"),
    pytest.param("AbortJob", ["Aborting", "Aborted"], [], id="Job error handling: Abort job when job is unschedulable"),
])
def test_job_unschedulable_after_losing_a_pod(jobs, action, after_delete, after_untaint):
    """A job of one 1-cpu pod per cpu of the cluster runs; every node is tainted NoSchedule and one pod deleted:
    the gang is short with nowhere to go (PodGroup Unknown, the job's `Unknown` event) and the policy acts;
    untainted, a restarted job runs again."""
    one_cpu = {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}
    jobs.create("j", [task("test", 4, resources=one_cpu)], policies=[pol("Unknown", action)])
    jobs.wait_phases("j", ["Pending", "Running"])
    wait_for(lambda: jobs.pod_running("j-test-0"), "j-test-0 to run")
    taint = {"key": "unschedulable-taint-key", "value": "unschedulable-taint-val", "effect": "NoSchedule"}
    set_taints(jobs.api, [taint])
    try:
        jobs.api.delete(kinds.POD, jobs.ns, "j-test-0")
        jobs.wait_phases("j", ["Pending", "Running", *after_delete])
    finally:
        set_taints(jobs.api, [])
    jobs.wait_phases("j", ["Pending", "Running", *after_delete, *after_untaint])


# ---- job_lifecycle.go ------------------------------------------------------------------------------------------
def test_create_and_delete_job_with_cpu_requirement(jobs):
    """`Create and Delete job with CPU requirement`: Pending -> Running -> Completed, then deleted: the job, its
    PodGroup and its pod are gone (e2eutil.WaitJobCleanedUp)."""
    jobs.create("terminate-delete-job", [task("complete", 1, "sleep 1", restartPolicy="Never",
                                              resources={"requests": {"cpu": "1"}})],
                policies=[pol("PodFailed", "TerminateJob")])
    jobs.wait_phases("terminate-delete-job", ["Pending", "Running", "Completed"])
    assert jobs.pod("terminate-delete-job-complete-0")   # (retained; the PodGroup went with the kill, as Volcano's)
    jobs.api.delete(kinds.JOB, jobs.ns, "terminate-delete-job")
    wait_for(lambda: not jobs.api.list(kinds.JOB, jobs.ns) and not jobs.api.list(kinds.PODGROUP, jobs.ns)
             and jobs.pod("terminate-delete-job-complete-0") is None, "the job to be cleaned up")


def test_checking_event_generation_for_job(jobs):
    """`Checking Event Generation for job`: `sleep 10s && xyz` fails; an ExecuteAction Event about the job
    names TerminateJob."""
    jobs.create("terminate-job", [task("complete", 1, "sleep 1 && xyz", restartPolicy="Never")],
                policies=[pol("PodFailed", "TerminateJob")])

    def executed() -> list[str]:
        return [e["message"] for e in jobs.api.list(kinds.EVENT, jobs.ns)
                if e["reason"] == "ExecuteAction" and e["involvedObject"]["name"].startswith("terminate-job")
                and "TerminateJob" in e["message"]]
    wait_for(executed, "an ExecuteAction event naming TerminateJob")
    jobs.wait_phases("terminate-job", ["Terminated"])


def test_checking_unschedulable_event_generation_for_job(jobs):
    """`Checking Unschedulable Event Generation for job`: one more 1-cpu pod than the node the task is pinned to
    (by hostname) holds; an `Unschedulable` Event about the job's PodGroup (`<job>-<uid>`) follows."""
    node = jobs.api.list(kinds.NODE)[0]
    cpus = int(node["status"]["allocatable"]["cpu"])
    t = task("complete", cpus + 1, "sleep 10", restartPolicy="Never",
             resources={"requests": {"cpu": "1"}, "limits": {"cpu": "1"}})
    hostname = {"key": "kubernetes.io/hostname", "operator": "In",
                "values": [node["metadata"]["labels"]["kubernetes.io/hostname"]]}
    t["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [hostname]}]}}}
    jobs.create("unschedulable-job", [t], policies=[pol("PodFailed", "TerminateJob")])
    group = "unschedulable-job-" + jobs.api.get(kinds.JOB, jobs.ns, "unschedulable-job")["metadata"]["uid"]
    wait_for(lambda: [e for e in jobs.api.list(kinds.EVENT, jobs.ns) if e["reason"] == "Unschedulable"
                      and e["involvedObject"]["name"].startswith(group)], "an Unschedulable event about the PodGroup")


@pytest.mark.parametrize("phase, setup", [
    pytest.param("Pending", [task("wait", 2, resources={"requests": {"cpu": "10000"}})],
                 id="Delete job that is pending state"),
    pytest.param("Running", [task("run", 2)], id="Delete job that is Running state"),
    pytest.param("Completed", [task("done", 2, "true", restartPolicy="Never")],
                 id="Delete job that is Completed state"),
    pytest.param("Aborted", [failing("fail", 1)], id="Delete job that is Failed job"),
    pytest.param("Terminated", [failing("fail", 1)], id="Delete job that is terminated job"),
])
def test_deleting_a_job_in_a_phase_cleans_it_up(jobs, phase, setup):
    """job_lifecycle.go `Delete job that is … `: the job reaches the phase, is deleted, and is cleaned up."""
    action = {"Aborted": "AbortJob", "Terminated": "TerminateJob"}.get(phase)
    jobs.create("j", setup, **({"policies": [pol("PodFailed", action)]} if action else {}))
    jobs.wait_phases("j", [phase])
    jobs.api.delete(kinds.JOB, jobs.ns, "j")
    wait_for(lambda: not jobs.api.list(kinds.JOB, jobs.ns) and not jobs.api.list(kinds.PODGROUP, jobs.ns)
             and not jobs.api.list(kinds.POD, jobs.ns), "the job to be cleaned up")


# ---- min_success.go, job_restart.go ---------------------------------------------------------------------------
def test_min_success(jobs):
    """`Min Success`: minSuccess 2; three 1-pod-minimum short pods end, the long ones still run: Completed."""
    jobs.create("min-success-job", [task("short", 3, "sleep 1", min_available=1, restartPolicy="Never"),
                                    task("log", 2, "sleep 100000", min_available=1, restartPolicy="Never")],
                minSuccess=2)
    jobs.wait_phases("min-success-job", ["Running", "Completed"])


@pytest.mark.parametrize("name, max_retry, second, phase, retries", [
    pytest.param("last-retry-job", 2, failing("failed-task", 1, "sh fake.sh", maxRetry=1), "Failed", 2,
                 id="Retain failed pod on last Retry"),
    pytest.param("complete-retry-job", 1, task("succeeded-task", 1, "sleep 1", restartPolicy="Never", maxRetry=1,
                                                policies=[pol("TaskCompleted", "CompleteJob")]), "Completed", 0,
                 id="Retain succeeded pod when job complete"),
])
def test_job_restart_retains_the_deciding_pod(jobs, name, max_retry, second, phase, retries):
    """job_restart.go: the job ends in `phase` after `retries` restarts; the running pod is deleted, the pod
    that decided it (failed on the last retry, or succeeded) is kept."""
    running = task("running-task", 1, "sleep 1000", restartPolicy="Never", maxRetry=1)
    jobs.create(name, [running, second], minSuccess=2, minAvailable=2, maxRetry=max_retry,
                policies=[pol("PodEvicted", "RestartJob"), pol("PodFailed", "RestartJob")])
    jobs.wait_phases(name, [phase])
    assert jobs.api.get(kinds.JOB, jobs.ns, name)["status"].get("retryCount", 0) == retries
    wait_for(lambda: jobs.pod(f"{name}-running-task-0") is None, "the running pod to go")
    kept = jobs.pod(f"{name}-{second['name']}-0")
    assert kept is not None and not kept["metadata"].get("deletionTimestamp")


# ---- job_scale_up_down.go ---------------------------------------------------------------------------------------
def svc_hosts(job: str, task_name: str, n: int) -> dict[str, str]:
    """svc.GenerateHosts for one task of `n` replicas."""
    names = [f"{job}-{task_name}-{i}.{job}" for i in range(n)]
    key = task_name.upper()
    return {f"{task_name}.host": "\n".join(names), f"VC_{key}_HOSTS": ",".join(names), f"VC_{key}_NUM": str(n)}


@pytest.mark.parametrize("name, steps", [
    pytest.param("scale-up-job", [(4, 4, None)], id="Scale up"),
    pytest.param("scale-down-job", [(1, 1, 1)], id="Scale down"),
    pytest.param("scale-down-job", [(0, 0, 0), (2, 2, None)], id="Scale down to zero and scale up"),
])
def test_a_running_job_with_the_svc_plugin_scales(jobs, name, steps):
    """A running job of two half-cpu pods with the svc plugin is updated (e2eutil.UpdateJob: the job's
    minAvailable, the task's replicas and minAvailable); its pods follow — new ones run, those scaled away
    stop and go — and the `<job>-svc` ConfigMap is svc.GenerateHosts of the updated job. Then deleted, it is
    cleaned up, the plugin's objects with it."""
    jobs.create(name, [task("default", 2, resources={"requests": {"cpu": "500m"}})], plugins={"svc": []})
    jobs.wait_phases(name, ["Pending", "Running"])

    def pods_running(n: int) -> bool:
        pods = jobs.api.list(kinds.POD, jobs.ns)
        return sorted(p["metadata"]["name"] for p in pods) == [f"{name}-default-{i}" for i in range(n)] and all(
            (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
            for p in pods)

    for replicas, min_available, task_min in steps:
        job = jobs.api.get(kinds.JOB, jobs.ns, name)
        job["spec"]["minAvailable"] = min_available
        job["spec"]["tasks"][0]["replicas"] = replicas
        if task_min is not None:
            job["spec"]["tasks"][0]["minAvailable"] = task_min
        jobs.api.update(job)
        wait_for(lambda: pods_running(replicas), f"{replicas} pods of {name} to run and no other")
        wait_for(lambda: jobs.api.get(kinds.CONFIGMAP, jobs.ns, f"{name}-svc")["data"]
                 == svc_hosts(name, "default", replicas), "the svc ConfigMap to list the pods")
        wait_for(lambda: ((jobs.api.get(kinds.JOB, jobs.ns, name).get("status") or {}).get("state") or {})
                 .get("phase") == "Running", f"{name} to be Running")
    jobs.api.delete(kinds.JOB, jobs.ns, name)
    wait_for(lambda: not any(jobs.api.list(k, jobs.ns) for k in (kinds.JOB, kinds.PODGROUP, kinds.POD, kinds.SERVICE))
             and not [c for c in jobs.api.list(kinds.CONFIGMAP, jobs.ns) if c["metadata"]["name"] == f"{name}-svc"],
             "the job to be cleaned up")
