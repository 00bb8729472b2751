"""Volcano's own end-to-end vcjob cases (test/e2e/jobseq/job_error_handling.go, test/e2e/jobp/job_lifecycle.go,
min_success.go, job_restart.go, queue_job_status.go), restated against the whole embedded control plane on a
virtual clock: API, admission, controllers and the scheduler run for real; the test plays the kubelet
(bound pods go Running; a container's end, a restart count or a deletion is written as a kubelet or a user would).

Upstream waits with e2eutil.WaitJobPhases: the phases must be seen in order in the job's watch stream, each
with its counters (Restarting/Aborting/Terminating/Completing with `terminating > 0`, a finished phase with
nothing pending, running or terminating, Running with `running >= minAvailable`). `went_through` applies the
same rule to the recorded stream; each case also pins vclite's whole phase sequence."""
from __future__ import annotations

import pytest

from vclite.api import kinds, meta
from vclite.lib import clock
from vclite.lib import errors
from vclite.runtime import runtime


def node(name: str, cpu: str = "8") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def task(name: str, replicas: int, min_available: int | None = None, cpu: str = "1", **extra) -> dict:
    t = {"name": name, "replicas": replicas,
         "template": {"spec": {"restartPolicy": "Never", "containers": [{
             "name": "c", "image": "busybox", "command": ["sleep", "1000"], "resources": {"requests": {"cpu": cpu}}}]}},
         **extra}
    if min_available is not None:
        t["minAvailable"] = min_available
    return t


def vcjob(tasks: list[dict], name: str = "j", **spec) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": tasks, **spec}}


class Cluster:
    def __init__(self, nodes: list[dict] | None = None, scheduler_config=None):
        self.rt = runtime.Runtime(clock.VirtualClock(), nodes=nodes or [node("n1")], run_pods=False,
                                  scheduler_config=scheduler_config)
        self.client = self.rt.client
        self.history: dict[str, list[dict]] = {}
        self.client.watch(kinds.JOB, self._record)
        self.rt.start()

    def _record(self, ev) -> None:
        job = ev.object
        self.history.setdefault(meta.name(job), []).append(
            {**(job.get("status") or {}), "specMinAvailable": job["spec"].get("minAvailable", 0)})

    # the user
    def create(self, obj: dict) -> None:
        self.client.create(obj)
        self.rt.settle()

    # the kubelet
    def kubelet(self) -> None:
        """Until nothing more moves: every pod bound to a node that exists and still Pending starts (Running,
        ready), every pod being deleted has stopped (the last step of a graceful deletion); the control plane
        settles."""
        for _ in range(20):
            moved = 0
            nodes = {meta.name(n) for n in self.client.list(kinds.NODE)}
            for pod in self.client.list(kinds.POD):
                if pod["spec"].get("nodeName") not in nodes:   # (no kubelet runs a node that does not exist)
                    continue
                if meta.is_deleting(pod):
                    if pod["metadata"].get("deletionGracePeriodSeconds"):
                        self.client.delete(kinds.POD, "default", meta.name(pod), grace_period=0)
                        moved += 1
                elif self.pod_phase(pod) == "Pending":
                    self.set_pod(meta.name(pod), "Running")
                    moved += 1
            self.rt.settle()
            if not moved:
                return

    def set_pod(self, name: str, phase: str, exit_code: int = 0, restarts: int = 0) -> None:
        pod = self.client.get(kinds.POD, "default", name)
        state = {"running": {}} if phase == "Running" else {"terminated": {"exitCode": exit_code}}
        pod["status"] = {"phase": phase, "containerStatuses": [
            {"name": "c", "state": state, "restartCount": restarts, "ready": phase == "Running"}]}
        self.client.update_status(pod)

    def start(self) -> None:
        """Schedule and run the job's pods."""
        self.rt.settle()
        self.kubelet()

    # reading
    @staticmethod
    def pod_phase(pod: dict) -> str:
        return (pod.get("status") or {}).get("phase", "Pending")

    def job(self, name: str = "j") -> dict:
        return self.client.get(kinds.JOB, "default", name)

    def pods(self) -> dict[str, str]:
        return {meta.name(p): self.pod_phase(p) for p in self.client.list(kinds.POD, "default")}

    def phases(self, name: str = "j") -> list[str]:
        """The job's phases as its watch stream showed them, repeats folded."""
        seq: list[str] = []
        for st in self.history.get(name, []):
            phase = (st.get("state") or {}).get("phase")
            if phase and (not seq or seq[-1] != phase):
                seq.append(phase)
        return seq

    def went_through(self, phases: list[str], name: str = "j") -> bool:
        """e2eutil.WaitJobPhases: `phases` in order in the watch stream, each seen with its counters."""
        total = sum(t["replicas"] for t in self.job(name)["spec"]["tasks"])
        want = iter(phases)
        phase = next(want, None)
        for st in self.history.get(name, []):
            if phase is None:
                break
            if (st.get("state") or {}).get("phase") == phase and _counters_fit(phase, st, total):
                phase = next(want, None)
        return phase is None

    def events(self, reason: str, name: str = "j") -> list[str]:
        return [e["message"] for e in self.client.list(kinds.EVENT, "default")
                if e["reason"] == reason and e["involvedObject"]["name"] == name]


def _counters_fit(phase: str, st: dict, total: int) -> bool:
    n = {k: st.get(k, 0) for k in ("pending", "running", "succeeded", "failed", "terminating", "minAvailable")}
    if phase == "Pending":
        return n["pending"] + n["running"] + n["succeeded"] + n["failed"] == 0 or \
            total - n["terminating"] >= n["minAvailable"]
    if phase in ("Restarting", "Aborting", "Terminating", "Completing"):
        return n["terminating"] > 0
    if phase in ("Completed", "Aborted", "Terminated", "Failed"):
        return n["pending"] == n["running"] == n["terminating"] == 0
    if phase == "Running":
        return n["running"] >= st["specMinAvailable"]
    raise AssertionError(phase)


# ---- job_error_handling.go: one row per upstream case --------------------------------------------------------
def fail_pods(*names: str, code: int = 1):
    def act(c: Cluster) -> None:
        for n in names:
            c.set_pod(n, "Failed", exit_code=code)
    return act


def evict(name: str):
    return lambda c: c.client.delete(kinds.POD, "default", name)


def succeed_pods(*names: str):
    def act(c: Cluster) -> None:
        for n in names:
            c.set_pod(n, "Succeeded")
    return act


def restart_count(name: str, n: int):
    return lambda c: c.set_pod(name, "Running", restarts=n)


def pol(event, action, **extra):
    return {"event": event, "action": action, **extra}


TWO_BY_TWO = [task("success", 2, 2), task("fail", 2, 2)]
EVICTED = [task("success", 2, 2), task("delete", 2, 2)]
RESTARTED = ["Pending", "Running", "Restarting", "Pending", "Running"]
TERMINATED = ["Pending", "Running", "Terminating", "Terminated"]
ABORTED = ["Pending", "Running", "Aborting", "Aborted"]
COMPLETED = ["Pending", "Running", "Completing", "Completed"]


@pytest.mark.parametrize("policies, tasks, act, upstream, phases", [
    pytest.param([pol("PodFailed", "RestartJob")], TWO_BY_TWO, fail_pods("j-fail-0", "j-fail-1"),
                 ["Pending", "Running", "Restarting"], RESTARTED, id="job-PodFailed-RestartJob"),
    pytest.param([pol("PodFailed", "TerminateJob")], TWO_BY_TWO, fail_pods("j-fail-0", "j-fail-1"),
                 TERMINATED, TERMINATED, id="job-PodFailed-TerminateJob"),
    pytest.param([pol("PodFailed", "AbortJob")], TWO_BY_TWO, fail_pods("j-fail-0", "j-fail-1"),
                 ABORTED, ABORTED, id="job-PodFailed-AbortJob"),
    pytest.param([pol("PodFailed", "RestartPod"), pol("PodEvicted", "TerminateJob", timeout="5m")],
                 [task("success", 2, 2), task("fail", 1, 1)], fail_pods("j-fail-0"),
                 ["Pending", "Running", "Restarting", "Running"], RESTARTED,
                 id="job-PodFailed-RestartPod-and-PodEvicted-TerminateJob-timeout"),
    pytest.param([pol("PodEvicted", "RestartJob")], EVICTED, evict("j-delete-0"),
                 ["Pending", "Running", "Restarting", "Pending", "Running"], RESTARTED, id="job-PodEvicted-RestartJob"),
    pytest.param([pol("PodEvicted", "TerminateJob")], EVICTED, evict("j-delete-0"),
                 TERMINATED, TERMINATED, id="job-PodEvicted-TerminateJob"),
    pytest.param([pol("PodEvicted", "AbortJob")], EVICTED, evict("j-delete-0"),
                 ABORTED, ABORTED, id="job-PodEvicted-AbortJob"),
    pytest.param([pol("*", "RestartJob")], EVICTED, evict("j-delete-0"),
                 ["Pending", "Running", "Restarting", "Pending", "Running"], RESTARTED, id="job-Any-RestartJob"),
    pytest.param([pol("TaskCompleted", "CompleteJob")], [task("completed-task", 2, 2), task("terminating-task", 2, 2)],
                 succeed_pods("j-completed-task-0", "j-completed-task-1"),
                 ["Pending", "Completed"], COMPLETED, id="job-TaskCompleted-CompleteJob"),
    pytest.param([pol("TaskFailed", "TerminateJob")], [task("success", 2, 2), task("failed", 2, 2, maxRetry=3)],
                 restart_count("j-failed-0", 4), ["Pending", "Running", "Terminating", "Terminated"], TERMINATED,
                 id="job-TaskFailed-TerminateJob"),
    pytest.param([{"exitCode": 3, "action": "RestartJob"}], [task("success", 1, 1), task("fail", 1, 1)],
                 fail_pods("j-fail-0", code=3), ["Pending", "Running", "Restarting"], RESTARTED,
                 id="job-exitCode-3-RestartJob"),
    pytest.param([{"events": ["PodEvicted", "PodFailed", "PodEvicted"], "action": "TerminateJob"}], EVICTED,
                 evict("j-delete-0"), TERMINATED, TERMINATED, id="job-Events-list-TerminateJob"),
    pytest.param(None, [task("success", 2, 2), task("fail", 2, 2, policies=[pol("PodFailed", "RestartJob")])],
                 fail_pods("j-fail-0", "j-fail-1"), ["Pending", "Running", "Restarting"], RESTARTED,
                 id="task-PodFailed-RestartJob"),
    pytest.param(None, [task("success", 2, 2), task("delete", 2, 2, policies=[pol("PodEvicted", "RestartJob")])],
                 evict("j-delete-0"), ["Pending", "Running", "Restarting", "Pending", "Running"], RESTARTED,
                 id="task-PodEvicted-RestartJob"),
    pytest.param(None, [task("success", 2, 2), task("delete", 2, 2, policies=[pol("PodEvicted", "TerminateJob")])],
                 evict("j-delete-0"), TERMINATED, TERMINATED, id="task-PodEvicted-TerminateJob"),
    pytest.param(None, [task("completed-task", 2, 2, policies=[pol("TaskCompleted", "CompleteJob")]),
                        task("terminating-task", 2, 2)],
                 succeed_pods("j-completed-task-0", "j-completed-task-1"), ["Pending", "Completed"], COMPLETED,
                 id="task-TaskCompleted-CompleteJob"),
    pytest.param([pol("PodFailed", "AbortJob")],
                 [task("success", 2, 2), task("fail", 2, 2, policies=[pol("PodFailed", "RestartJob")])],
                 fail_pods("j-fail-0", "j-fail-1"), ["Pending", "Running", "Restarting"], RESTARTED,
                 id="job-PodFailed-AbortJob-overridden-by-task-PodFailed-RestartJob"),
])
def test_job_error_handling(policies, tasks, act, upstream, phases):
    c = Cluster()
    c.create(vcjob(tasks, policies=policies) if policies else vcjob(tasks))
    c.start()
    assert c.phases() == ["Pending", "Running"]
    act(c)
    c.rt.settle()
    c.kubelet()           # pods a restart created run again
    assert c.went_through(upstream), c.history["j"]
    assert c.phases() == phases
    restarted = phases[-1] == "Running"
    assert c.job()["status"].get("retryCount", 0) == (1 if restarted else 0)   # one restart for simultaneous events
    if restarted:
        assert set(c.pods().values()) == {"Running"}


@pytest.mark.parametrize("action, phases", [
    # (the deleted pod is Terminating until its kubelet is done, and a gang covered by its terminating pods
    # stays Running (Volcano's d725ce4); once it is gone, its replacement waits — the job is Pending — and,
    # unplaceable on the tainted nodes, makes the PodGroup Unknown: the policy acts)
    pytest.param("RestartJob", ["Pending", "Running", "Pending", "Restarting", "Pending", "Running"],
                 id="Unknown-RestartJob"),
    pytest.param("AbortJob", ["Pending", "Running", "Pending", "Aborting", "Aborted"], id="Unknown-AbortJob"),
])
def test_job_unschedulable_after_losing_a_pod_acts_on_the_unknown_event(action, phases):
    """`Job error handling: Restart/Abort job when job is unschedulable`: a gang that fills the cluster runs;
    every node is tainted and one pod deleted; its replacement cannot be placed, the PodGroup goes Unknown and
    the job's `Unknown` policy acts. Untainted, a restarted job runs again."""
    c = Cluster([node("n1", "2"), node("n2", "2")])
    c.create(vcjob([task("test", 4, 4)], policies=[pol("Unknown", action)]))
    c.start()
    assert c.phases() == ["Pending", "Running"]

    def taint(taints):
        for n in c.client.list(kinds.NODE):
            n["spec"] = {**(n.get("spec") or {}), "taints": taints}
            c.client.update(n)
        c.rt.settle()

    taint([{"key": "unschedulable-taint-key", "value": "unschedulable-taint-val", "effect": "NoSchedule"}])
    c.client.delete(kinds.POD, "default", "j-test-0")
    c.rt.settle()
    c.kubelet()
    if action == "RestartJob":
        assert c.went_through(["Restarting", "Pending"]) and c.phases()[-1] == "Pending"
        assert set(c.pods().values()) == {"Pending"}
        taint([])
        c.kubelet()
        assert c.went_through(["Restarting", "Pending", "Running"])
    else:
        assert c.went_through(["Aborting", "Aborted"]) and c.pods() == {}
    assert c.phases() == phases


# ---- jobp/job_lifecycle.go ------------------------------------------------------------------------------------
def _pending(c: Cluster) -> None:
    c.create(vcjob([task("success", 2, 2, cpu="10000")]))


def _running(c: Cluster) -> None:
    c.create(vcjob([task("success", 2, 2)]))
    c.start()


def _completed(c: Cluster) -> None:
    _running(c)
    succeed_pods("j-success-0", "j-success-1")(c)


def _finished_by(action: str):
    def setup(c: Cluster) -> None:
        c.create(vcjob([task("fail", 1, 1)], policies=[pol("PodFailed", action)]))
        c.start()
        fail_pods("j-fail-0", code=3)(c)
    return setup


@pytest.mark.parametrize("setup, phase, pods", [
    pytest.param(_pending, "Pending", 0, id="Delete-job-that-is-pending-state"),
    pytest.param(_running, "Running", 2, id="Delete-job-that-is-Running-state"),
    pytest.param(_completed, "Completed", 2, id="Delete-job-that-is-Completed-state"),
    pytest.param(_finished_by("AbortJob"), "Aborted", 1, id="Delete-job-that-is-Failed-job"),
    pytest.param(_finished_by("TerminateJob"), "Terminated", 1, id="Delete-job-that-is-terminated-job"),
])
def test_deleting_a_job_removes_it_its_podgroup_and_its_pods(setup, phase, pods):
    c = Cluster()
    setup(c)
    c.rt.settle()
    assert c.phases()[-1] == phase and len(c.pods()) == pods
    c.client.delete(kinds.JOB, "default", "j")
    c.rt.settle()
    c.kubelet()   # running pods stop (graceful deletion), then go
    with pytest.raises(errors.NotFound):
        c.job()
    assert c.client.list(kinds.PODGROUP, "default") == [] and c.pods() == {}


def test_a_job_with_a_cpu_request_runs_and_completes():
    """`Create and Delete job with CPU requirement` (its PodFailed policy never fires)."""
    c = Cluster()
    c.create(vcjob([task("complete", 1, 1, cpu="1")], policies=[pol("PodFailed", "TerminateJob")]))
    c.start()
    succeed_pods("j-complete-0")(c)
    c.rt.settle()
    assert c.went_through(["Pending", "Running", "Completed"])


def test_a_policy_action_is_recorded_as_an_execute_action_event():
    """`Checking Event Generation for job`: an `ExecuteAction` Event on the job names TerminateJob."""
    c = Cluster()
    c.create(vcjob([task("complete", 1, 1)], policies=[pol("PodFailed", "TerminateJob")]))
    c.start()
    fail_pods("j-complete-0", code=127)(c)
    c.rt.settle()
    assert [m for m in c.events("ExecuteAction") if "TerminateJob" in m] == ["Start to execute action TerminateJob "]


# ---- jobp/min_success.go, jobp/job_restart.go --------------------------------------------------------------------
def test_min_success_completes_the_job_while_other_tasks_run():
    c = Cluster()
    c.create(vcjob([task("short", 3, 1), task("log", 2, 1)], minSuccess=2))
    c.start()
    succeed_pods("j-short-0")(c)
    c.rt.settle()
    assert c.phases()[-1] == "Running"
    succeed_pods("j-short-1")(c)
    c.rt.settle()
    assert c.phases()[-1] == "Completed"   # (at once, as Volcano's SyncJob on minSuccess)
    c.kubelet()   # the running ones stop (graceful deletion)
    assert c.pods() == {"j-short-0": "Succeeded", "j-short-1": "Succeeded"}   # the running ones were killed


RETRY_POLICIES = [pol("PodEvicted", "RestartJob"), pol("PodFailed", "RestartJob")]


def test_the_failed_pod_of_the_last_retry_is_retained():
    """`Retain failed pod on last Retry`: maxRetry 2, a task that always fails: Failed with retryCount 2, the
    running task's pod deleted, the failed pod kept (not being deleted)."""
    c = Cluster()
    c.create(vcjob([task("running-task", 1, 1, maxRetry=1), task("failed-task", 1, 1, maxRetry=1)],
                   minSuccess=2, minAvailable=2, maxRetry=2, policies=RETRY_POLICIES))
    c.start()
    for _ in range(3):
        if c.phases()[-1] == "Failed":
            break
        fail_pods("j-failed-task-0")(c)
        c.rt.settle()
        c.kubelet()
    job = c.job()
    assert (meta.phase(job), job["status"]["retryCount"]) == ("Failed", 2)
    assert c.pods() == {"j-failed-task-0": "Failed"}
    assert not meta.is_deleting(c.client.get(kinds.POD, "default", "j-failed-task-0"))


def test_the_succeeded_pod_of_a_completed_job_is_retained():
    """`Retain succeeded pod when job complete`: TaskCompleted -> CompleteJob on a one-pod task."""
    c = Cluster()
    c.create(vcjob([task("running-task", 1, 1, maxRetry=1),
                    task("succeeded-task", 1, 1, maxRetry=1, policies=[pol("TaskCompleted", "CompleteJob")])],
                   minSuccess=2, minAvailable=2, maxRetry=1, policies=RETRY_POLICIES))
    c.start()
    succeed_pods("j-succeeded-task-0")(c)
    c.rt.settle()
    c.kubelet()   # the running task's pod stops
    job = c.job()
    assert (meta.phase(job), job["status"].get("retryCount", 0)) == ("Completed", 0)
    assert c.pods() == {"j-succeeded-task-0": "Succeeded"}


def test_a_gang_that_cannot_fit_is_reported_by_an_unschedulable_event_on_its_podgroup():
    """`Checking Unschedulable Event Generation for job`: one more 1-cpu pod than the node the tasks are pinned to
    holds. Upstream waits for an Event with reason `Unschedulable` about the job's PodGroup; the Event is
    written again only when what it says changes."""
    c = Cluster([node("n1", "2"), node("n2", "2")])
    t = task("complete", 3, 3, cpu="1")
    t["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}
    c.create(vcjob([t], policies=[pol("PodFailed", "TerminateJob")]))
    c.rt.settle()
    (pg,) = c.client.list(kinds.PODGROUP, "default")
    (event,) = [e for e in c.client.list(kinds.EVENT, "default") if e["reason"] == "Unschedulable"]
    assert event["involvedObject"]["name"] == meta.name(pg) and event["type"] == "Warning"
    # Volcano's words: the Event counts the Pending tasks (cache.RecordJobStatusEvent), the condition the
    # tasks short of minAvailable (the gang plugin): two of the three fit on n1
    condition = next(cond["message"] for cond in pg["status"]["conditions"] if cond["type"] == "Unschedulable")
    fit_error = ("pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable. "
                 "Origin reason is j-complete-2: 0/2 nodes are unavailable: 1 Insufficient cpu, 1 node(s) didn't "
                 "match Pod's node affinity/selector.")
    assert (event["message"], condition) == (f"3/3 tasks in gang unschedulable: {fit_error}",
                                             f"1/3 tasks in gang unschedulable: {fit_error}")
    assert event["source"]["component"] == "volcano" and event.get("count", 1) == 1
    assert c.pods() and set(c.pods().values()) == {"Pending"}


def test_the_pods_of_a_waiting_gang_say_why_in_their_podscheduled_condition_and_a_failedscheduling_event():
    """Volcano's cache (RecordJobStatusEvent, taskUnschedulable): each pod of a gang left waiting gets
    PodScheduled=False — Schedulable where it fit and the gang is short, Unschedulable with the nodes'
    reasons where it fit nowhere — and a Warning Event FailedScheduling; written again only when it changes.
    Once the gang fits, the bind turns the condition True."""
    c = Cluster([node("n1", "2"), node("n2", "2")])
    t = task("complete", 3, 3, cpu="1")
    t["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}
    c.create(vcjob([t]))
    c.rt.settle()

    def scheduled(name):
        pod = c.client.get(kinds.POD, "default", name)
        (cond,) = [x for x in pod["status"]["conditions"] if x["type"] == "PodScheduled"]
        return cond["status"], cond.get("reason"), cond.get("message")

    fits_nowhere = "0/2 nodes are unavailable: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector."
    assert [scheduled(f"j-complete-{i}") for i in range(3)] == [
        ("False", "Schedulable", "Pod default/j-complete-0 can possibly be assigned to n1, once minAvailable is satisfied"),
        ("False", "Schedulable", "Pod default/j-complete-1 can possibly be assigned to n1, once minAvailable is satisfied"),
        ("False", "Unschedulable", fits_nowhere)]
    failed = sorted((e["involvedObject"]["name"], e["type"], e["message"], e.get("count", 1))
                    for e in c.client.list(kinds.EVENT, "default") if e["reason"] == "FailedScheduling")
    assert [f[:2] for f in failed] == [(f"j-complete-{i}", "Warning") for i in range(3)] and failed[2][2] == fits_nowhere
    versions = [c.client.get(kinds.POD, "default", f"j-complete-{i}")["metadata"]["resourceVersion"] for i in range(3)]
    c.rt.scheduler.queue.add("session")   # another session: nothing new to say
    c.rt.settle()
    assert [c.client.get(kinds.POD, "default", f"j-complete-{i}")["metadata"]["resourceVersion"]
            for i in range(3)] == versions
    n1 = c.client.get(kinds.NODE, "", "n1")
    n1["status"]["allocatable"]["cpu"] = n1["status"]["capacity"]["cpu"] = "4"
    c.client.update_status(n1)
    c.rt.settle()
    assert [scheduled(f"j-complete-{i}")[0] for i in range(3)] == ["True"] * 3
    # and each bind is told by a Normal Event Scheduled, as Volcano's cache writes it
    assert sorted((e["involvedObject"]["name"], e["type"], e["message"], e["source"]["component"])
                  for e in c.client.list(kinds.EVENT, "default")
                  if e["reason"] == "Scheduled" and e["involvedObject"]["kind"] == "Pod") == [
        (f"j-complete-{i}", "Normal", f"Successfully assigned default/j-complete-{i} to n1", "volcano")
        for i in range(3)]


# ---- jobseq/queue_job_status.go ----------------------------------------------------------------------------------
@pytest.mark.parametrize("deleted, phases", [
    pytest.param(["m0"], ["Unknown"], id="Transform-from-running-to-unknown-after-a-member-is-gone"),
    pytest.param(["m0", "m1"], ["Pending", "Inqueue"], id="Transform-from-running-to-pending"),
])
def test_a_running_podgroup_that_loses_members(deleted, phases):
    """A PodGroup of two standalone pods (minMember 2) runs; members are force-deleted. One left running and the
    gang short: Unknown. None left: Pending (upstream deletes a running vcjob's pods; here the vcjob controller
    would recreate them before the next session, so the PodGroup's own members are deleted) — and then Inqueue,
    as Volcano's next periodic session enqueues it again (nothing it waits for is missing: no minResources)."""
    c = Cluster([node("n1", "2")])
    c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
              "spec": {"weight": 1}})
    c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
              "metadata": {"name": "pg", "namespace": "default"}, "spec": {"minMember": 2, "queue": "q1"}})
    for i in range(2):
        c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"m{i}", "namespace": "default", "annotations": {"scheduling.k8s.io/group-name": "pg"}},
            "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [
                {"name": "c", "image": "nginx", "command": ["sleep", "1000"],
                 "resources": {"requests": {"cpu": "500m"}}}]}})
    c.kubelet()
    assert meta.phase(c.client.get(kinds.PODGROUP, "default", "pg")) == "Running"
    for name in deleted:
        c.client.delete(kinds.POD, "default", name, grace_period=0)   # (force-deleted)
    seen = []
    c.client.watch(kinds.PODGROUP, lambda ev: seen.append(meta.phase(ev.object)))
    c.rt.settle()
    assert [p for i, p in enumerate(seen) if not i or p != seen[i - 1]] == phases
