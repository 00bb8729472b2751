"""vcjob lifecycle scenarios: the job controller against the real in-process API, with the test
acting as scheduler (PodGroup status -> Inqueue) and kubelet (pod status), on a virtual clock."""
from __future__ import annotations

import re

import pytest

from vclite.api import kinds, meta
from vclite.apiserver import inprocess
from vclite.controllers import garbagecollector
from vclite.controllers.job import commands
from vclite.controllers.job import controller as job_controller
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.runtime import gates, runtime

CLAIM_SPEC = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}


class Cluster:
    def __init__(self):
        self.clock = clock_mod.VirtualClock()
        self.client = inprocess.new_client(self.clock)
        self.ctrl = job_controller.JobController(self.client, self.clock)
        self.gc = garbagecollector.GarbageCollector(self.client, self.clock)   # ttlSecondsAfterFinished
        self.ctrl.start()
        self.gc.start()

    # the controllers
    def step(self) -> int:
        n, busy = 0, True
        while busy:
            busy = False
            for ctrl in (self.ctrl, self.gc):
                while (k := ctrl.queue.get()) is not None:
                    ctrl.sync(k)
                    n += 1
                    busy = True
                    assert n < 5000, "controller does not converge"
        return n

    # the scheduler
    def enqueue(self) -> None:
        for pg in self.client.list(kinds.PODGROUP):
            if (pg.get("status") or {}).get("phase", "") in ("", "Pending"):
                self.client.patch(kinds.PODGROUP, pg["metadata"]["namespace"], pg["metadata"]["name"],
                                  {"status": {"phase": "Inqueue"}}, status=True)
        self.step()

    # the kubelet
    def set_pod(self, name, phase, exit_code=None, ready=True, restarts=0):
        cs = {"name": "c", "ready": ready and phase == "Running", "restartCount": restarts, "state": {}}
        if exit_code is not None:
            cs["state"] = {"terminated": {"exitCode": exit_code}}
        self.client.patch(kinds.POD, "default", name, {"status": {"phase": phase, "containerStatuses": [cs]}},
                          status=True)

    def run_all(self, job="j"):
        for p in self.pods(job):
            if p["status"].get("phase") == "Pending":
                self.set_pod(p["metadata"]["name"], "Running")
        self.step()

    # reading
    def create(self, job):
        self.client.create(job)
        self.step()

    def job(self, name="j"):
        return self.client.get(kinds.JOB, "default", name)

    def phase(self, name="j"):
        return self.job(name)["status"]["state"]["phase"]

    def pods(self, job="j"):
        return sorted((p for p in self.client.list(kinds.POD, "default")
                       if p["metadata"].get("annotations", {}).get("volcano.sh/job-name") == job),
                      key=lambda p: p["metadata"]["name"])

    def pod_names(self, job="j"):
        return [p["metadata"]["name"] for p in self.pods(job)]

    def podgroups(self):
        return self.client.list(kinds.PODGROUP, "default")

    def events(self, reason):
        return [e for e in self.client.list(kinds.EVENT, "default") if e["reason"] == reason]


def vcjob(name="j", tasks=None, **spec):
    tasks = tasks or [task("t", 2)]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"tasks": tasks, **spec}}


def task(name, replicas, **extra):
    return {"name": name, "replicas": replicas,
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}},
            **extra}


@pytest.fixture
def c():
    return Cluster()


def test_job_completes(c):
    c.create(vcjob())
    assert c.phase() == "Pending"
    assert c.pod_names() == []  # no pods while the PodGroup is Pending
    (pg,) = c.podgroups()
    assert pg["metadata"]["name"] == f"j-{c.job()['metadata']['uid']}"
    assert pg["spec"]["minMember"] == 2 and pg["spec"]["queue"] == "default"
    c.enqueue()
    assert c.pod_names() == ["j-t-0", "j-t-1"]
    st = c.job()["status"]
    assert (st["state"]["phase"], st["pending"], st["minAvailable"]) == ("Pending", 2, 2)
    c.run_all()
    assert c.phase() == "Running" and c.job()["status"]["running"] == 2
    for name in c.pod_names():
        c.set_pod(name, "Succeeded", exit_code=0)
    c.step()
    st = c.job()["status"]
    assert st["state"]["phase"] == "Completed"
    assert [cond["status"] for cond in st["conditions"]] == ["Pending", "Running", "Completed"]
    assert c.podgroups() == []                                   # KillJob on the finished job
    assert [p["status"]["phase"] for p in c.pods()] == ["Succeeded", "Succeeded"]  # retained (Soft)
    assert st["version"] == 1 and "runningDuration" in st
    assert (st["succeeded"], st["taskStatusCount"]) == (2, {"t": {"phase": {"Succeeded": 2}}})  # issue #4616
    assert c.events("Completed")


def test_a_finished_jobs_clean_up_is_queued_after_the_work_that_moves_jobs_on(c):
    c.create(vcjob(tasks=[task("t", 1)]))
    c.enqueue()
    c.run_all()
    c.set_pod("j-t-0", "Succeeded", exit_code=0)
    while c.phase() != "Completed":
        key = c.ctrl.queue.get(later=False)
        assert key == "default/j"
        c.ctrl.sync(key)
    c.client.create(vcjob("next", tasks=[task("t", 1)]))
    assert c.ctrl.queue.get(later=False) == "default/next"        # the new job first,
    assert c.ctrl.queue.get(later=False) is None
    assert c.ctrl.queue.get_later() == "default/j"                # the finished one's KillJob after
    assert len(c.podgroups()) == 1
    c.ctrl.sync("default/j")
    assert c.podgroups() == [] and c.phase() == "Completed"
    c.client.patch(kinds.JOB, "default", "j", commands.set_patch("RestartJob"))   # (ignored: Completed is final)
    assert c.ctrl.queue.get(later=False) is None and c.ctrl.queue.get_later() == "default/j"


def test_a_job_moved_to_a_new_phase_is_synced_in_it_at_once(c):
    """A pod that ends before it is seen running (a quick job) moves its job Pending -> Running ->
    Completed: both phases are written, in order, by one sync (Volcano's controller takes two: the
    second is the re-sync its own status update requests), and the clean-up still comes after."""
    c.create(vcjob(tasks=[task("t", 1)]))
    c.enqueue()
    assert c.step() == 0 and c.phase() == "Pending"
    seen = []
    c.client.watch(kinds.JOB, lambda ev: seen.append(ev.object["status"]["state"]["phase"]))
    c.set_pod("j-t-0", "Succeeded", exit_code=0)
    assert c.ctrl.queue.get(later=False) == "default/j"
    c.ctrl.sync("default/j")
    assert seen == ["Running", "Completed"]
    assert [cond["status"] for cond in c.job()["status"]["conditions"]] == ["Pending", "Running", "Completed"]
    assert c.ctrl.queue.get(later=False) is None                  # no second sync on the path,
    assert c.ctrl.queue.get_later() == "default/j"                # the finished job's clean-up after
    c.ctrl.sync("default/j")
    assert c.podgroups() == [] and c.phase() == "Completed"


def test_pod_failure_restarts_then_completes(c):
    c.create(vcjob(policies=[{"event": "PodFailed", "action": "RestartJob"}]))
    c.enqueue()
    c.run_all()
    old_uids = {p["metadata"]["uid"] for p in c.pods()}
    c.set_pod("j-t-0", "Failed", exit_code=1)
    c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st["retryCount"], st["version"]) == ("Restarting", 1, 1)
    assert c.pod_names() == []                    # every pod killed, the PodGroup too, then recreated
    assert [pg.get("status", {}).get("phase", "") for pg in c.podgroups()] == [""]
    c.enqueue()
    assert c.phase() == "Pending"
    pods = c.pods()
    assert {p["metadata"]["uid"] for p in pods}.isdisjoint(old_uids)
    assert {p["metadata"]["annotations"]["volcano.sh/job-version"] for p in pods} == {"1"}
    assert {p["metadata"]["annotations"]["volcano.sh/job-retry-count"] for p in pods} == {"1"}
    c.run_all()
    for name in c.pod_names():
        c.set_pod(name, "Succeeded", exit_code=0)
    c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st["retryCount"]) == ("Completed", 1)


def test_max_retry_exhausted_fails(c):
    c.create(vcjob(maxRetry=2, policies=[{"event": "PodFailed", "action": "RestartJob"}]))
    for attempt in (1, 2):
        c.enqueue()
        c.run_all()
        assert c.phase() == "Running"
        c.set_pod("j-t-1", "Failed", exit_code=2)
        c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st["retryCount"]) == ("Failed", 2)
    # last retry keeps Failed pods (Soft): the failed pod is still there, the running one was killed
    assert [(p["metadata"]["name"], p["status"]["phase"]) for p in c.pods()] == [("j-t-1", "Failed")]
    c.enqueue()
    assert c.phase() == "Failed" and c.pod_names() == ["j-t-1"]  # terminal: nothing restarts


def test_task_completed_completes_job_while_ps_runs(c):
    c.create(vcjob(tasks=[task("ps", 1), task("worker", 2)],
                   policies=[{"event": "TaskCompleted", "action": "CompleteJob"}]))
    c.enqueue()
    c.run_all()
    assert c.phase() == "Running"
    c.set_pod("j-worker-0", "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Running"                  # one worker is not the whole task
    c.set_pod("j-worker-1", "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Completed"
    assert c.pod_names() == ["j-worker-0", "j-worker-1"]   # the running ps was killed
    assert c.job()["status"]["conditions"][-2]["status"] == "Completing"


@pytest.mark.parametrize("updates, phase", [
    pytest.param([("Running", 1)], "Running", id="restarts-below-maxRetry"),
    pytest.param([("Running", 1), ("Running", 2)], "Terminated", id="restarts-reach-maxRetry-TaskFailed"),
    pytest.param([("Running", 2)], "Running", id="the-move-into-Running-is-PodRunning-not-TaskFailed"),
    pytest.param([("Running", 2), ("Running", 3)], "Terminated", id="next-update-of-a-running-pod-is-TaskFailed"),
])
def test_task_failed_event_from_container_restarts(c, updates, phase):
    """Volcano's updatePod: a Running/Pending pod whose task's containers restarted maxRetry times in all gives
    TaskFailed, unless the update is the pod's move into that phase (PodRunning/PodPending win)."""
    c.create(vcjob(tasks=[task("t", 1, maxRetry=2, policies=[{"event": "TaskFailed", "action": "TerminateJob"}])]))
    c.enqueue()
    for pod_phase, restarts in updates:
        c.set_pod("j-t-0", pod_phase, restarts=restarts)
        c.step()
    assert c.phase() == phase


@pytest.mark.parametrize("policies, phase", [
    pytest.param([{"event": "Unknown", "action": "RestartJob"}], "Restarting", id="Unknown-policy-acts"),
    pytest.param([{"event": "PodFailed", "action": "RestartJob"}], "Running", id="no-Unknown-policy-plain-sync"),
])
def test_podgroup_unknown_is_the_job_unknown_event(c, policies, phase):
    """Volcano's updatePodGroup: a PodGroup moving to Unknown (running tasks, and now unschedulable) sends the job
    an `Unknown` event, which a lifecycle policy can act on."""
    c.create(vcjob(policies=policies))
    c.enqueue()
    c.run_all()
    assert c.phase() == "Running"
    (pg,) = c.podgroups()
    c.client.patch(kinds.PODGROUP, "default", pg["metadata"]["name"], {"status": {"phase": "Unknown"}}, status=True)
    c.step()
    assert c.phase() == phase


def test_abort_and_resume_by_command_annotation(c):
    c.create(vcjob())
    c.enqueue()
    c.run_all()
    c.client.patch(kinds.JOB, "default", "j", commands.set_patch("AbortJob"))
    c.step()
    job = c.job()
    assert job["status"]["state"]["phase"] == "Aborted"
    assert commands.ANNOTATION not in job["metadata"].get("annotations", {})
    assert c.pod_names() == [] and c.podgroups() == []
    assert c.events("CommandIssued")
    c.client.patch(kinds.JOB, "default", "j", commands.set_patch("ResumeJob"))
    c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st["retryCount"]) == ("Pending", 1)  # Restarting -> Pending: nothing left
    assert c.pod_names() == []
    c.enqueue()
    c.run_all()
    assert c.phase() == "Running" and c.pod_names() == ["j-t-0", "j-t-1"]


@pytest.mark.parametrize("value,phase", [
    pytest.param("Bogus", "Running", id="unknown-command-ignored"),
    pytest.param("TerminateJob", "Terminated", id="terminate"),
    pytest.param("RestartJob", "Restarting", id="restart"),
])
def test_other_commands(c, value, phase):
    c.create(vcjob())
    c.enqueue()
    c.run_all()
    c.client.patch(kinds.JOB, "default", "j", {"metadata": {"annotations": {commands.ANNOTATION: value}}})
    c.step()
    assert c.phase() == phase
    assert commands.ANNOTATION not in c.job()["metadata"].get("annotations", {})


def test_ttl_seconds_after_finished_deletes_job(c):
    c.create(vcjob(ttlSecondsAfterFinished=60))
    c.enqueue()
    c.run_all()
    for name in c.pod_names():
        c.set_pod(name, "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Completed"
    c.clock.advance(59)
    c.step()
    assert c.phase() == "Completed"
    c.clock.advance(1)
    c.step()
    with pytest.raises(errors.NotFound):
        c.job()
    assert c.pod_names() == []   # garbage-collected with their owner



def _finish(c, how):
    """Bring job `j` to a phase as its users would: its pods succeed or fail, or a command."""
    if how == "Completed":
        for name in c.pod_names():
            c.set_pod(name, "Succeeded", exit_code=0)
    elif how == "Failed":
        c.set_pod("j-t-0", "Failed", exit_code=1)
    elif how:
        c.client.patch(kinds.JOB, "default", "j", {"metadata": {"annotations": {commands.ANNOTATION: how}}})
    c.step()


def _exists(c):
    try:
        return c.job()["status"]["state"]["phase"]
    except errors.NotFound:
        return None


# garbagecollector_test.go (Volcano's TTL controller): TestGarbageCollector_ProcessTTL ("False Case": ttl 3 just
# finished; "True Case": ttl 0), TestGarbageCollector_NeedsCleanup / _IsJobFinished (Completed, Failed and
# Terminated are finished, Running is not; no ttl, no clean-up), TestGarbageCollector_TimeLeft (ttl counted
# from the state's lastTransitionTime). Aborted is not finished for it either.
@pytest.mark.parametrize("how, ttl, phase, gone_after", [
    pytest.param("Completed", 0, "Completed", 0, id="completed-ttl-0-deleted-at-once"),
    pytest.param("Completed", 3, "Completed", 3, id="completed-ttl-3-deleted-3s-after-it-finished"),
    pytest.param("Failed", 0, "Failed", 0, id="failed-is-finished"),
    pytest.param("TerminateJob", 0, "Terminated", 0, id="terminated-is-finished"),
    pytest.param("AbortJob", 0, "Aborted", None, id="aborted-is-not-finished"),
    pytest.param("", 0, "Running", None, id="running-is-not-finished"),
    pytest.param("Completed", None, "Completed", None, id="no-ttl-no-clean-up"),
])
def test_ttl_seconds_after_finished_table(c, how, ttl, phase, gone_after):
    spec = {"maxRetry": 1, "policies": [{"event": "PodFailed", "action": "RestartJob"}]}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    seen: list[str] = []
    c.client.watch(kinds.JOB, lambda ev: seen.append(meta.phase(ev.object)))
    c.create(vcjob(**spec))
    c.enqueue()
    c.run_all()
    _finish(c, how)
    assert seen[-1] == phase
    if gone_after == 0:
        assert _exists(c) is None
        return
    assert _exists(c) == phase
    c.clock.advance(3600 if gone_after is None else gone_after - 1)
    c.step()
    assert _exists(c) == phase
    if gone_after is not None:
        c.clock.advance(1)
        c.step()
        assert _exists(c) is None


def test_min_success(c):
    c.create(vcjob(tasks=[task("t", 3)], minSuccess=2))
    c.enqueue()
    c.run_all()
    c.set_pod("j-t-0", "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Running"
    c.set_pod("j-t-1", "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Completed"
    assert c.pod_names() == ["j-t-0", "j-t-1"]    # the still-running pod was killed


def test_depends_on_orders_pod_creation(c):
    c.create(vcjob(tasks=[task("master", 1), task("worker", 2, dependsOn={"name": ["master"]})]))
    c.enqueue()
    assert c.pod_names() == ["j-master-0"]
    c.set_pod("j-master-0", "Running", ready=False)
    c.step()
    assert c.pod_names() == ["j-master-0"]        # running but not ready
    c.set_pod("j-master-0", "Running", ready=True)
    c.step()
    assert c.pod_names() == ["j-master-0", "j-worker-0", "j-worker-1"]


def test_svc_and_env_plugins(c):
    c.create(vcjob(tasks=[task("ps", 1), task("my-worker", 2)], plugins={"svc": [], "env": [], "ssh": []}))
    cm = c.client.get(kinds.CONFIGMAP, "default", "j-svc")
    assert cm["data"] == {"ps.host": "j-ps-0.j", "VC_PS_HOSTS": "j-ps-0.j", "VC_PS_NUM": "1",
                          "my_worker.host": "j-my-worker-0.j\nj-my-worker-1.j",
                          "VC_MY_WORKER_HOSTS": "j-my-worker-0.j,j-my-worker-1.j", "VC_MY_WORKER_NUM": "2"}
    svc = c.client.get(kinds.SERVICE, "default", "j")
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["selector"] == {"volcano.sh/job-name": "j", "volcano.sh/job-namespace": "default"}
    assert c.job()["status"]["controlledResources"] == {"plugin-svc": "svc", "plugin-env": "env", "plugin-ssh": "ssh"}
    keys = c.client.get(kinds.SECRET, "default", "j-ssh")
    assert sorted(keys["data"]) == ["authorized_keys", "config", "id_rsa", "id_rsa.pub"]
    c.enqueue()
    pod = c.client.get(kinds.POD, "default", "j-my-worker-1")
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("j-my-worker-1", "j")
    env = {e["name"]: e.get("value") or e["valueFrom"]["configMapKeyRef"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["VC_TASK_INDEX"] == env["VK_TASK_INDEX"] == "1"
    assert env["VC_MY_WORKER_HOSTS"] == {"name": "j-svc", "key": "VC_MY_WORKER_HOSTS"}
    assert env["VC_PS_NUM"] == {"name": "j-svc", "key": "VC_PS_NUM"}
    assert {"mountPath": "/etc/volcano", "name": "j-svc"} in pod["spec"]["containers"][0]["volumeMounts"]


def test_framework_plugins_mark_the_job_and_ray_owns_a_head_service(c):
    c.create(vcjob(tasks=[task("head", 1), task("worker", 1)], plugins={"ray": [], "pytorch": [], "hcclrank": []}))
    assert c.job()["status"]["controlledResources"] == {"plugin-ray": "ray", "plugin-pytorch": "pytorch",
                                                       "plugin-svc": "svc"}   # the webhook added svc
    svc = c.client.get(kinds.SERVICE, "default", "j-head-svc")
    assert [p["port"] for p in svc["spec"]["ports"]] == [6379, 8265, 10001]
    c.enqueue()
    c.run_all()
    for name in c.pod_names():
        c.set_pod(name, "Succeeded", exit_code=0)
    c.step()
    assert c.phase() == "Completed"
    assert "controlledResources" not in c.job()["status"]
    with pytest.raises(errors.NotFound):
        c.client.get(kinds.SERVICE, "default", "j-head-svc")


def test_pending_timeout_policy_restarts_pod_unless_it_runs(c):
    c.create(vcjob(policies=[{"event": "PodPending", "action": "RestartPod", "timeout": "60s"}]))
    c.enqueue()
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in c.pods()}
    assert {d.pod_name for d in c.ctrl.delayed_actions("default/j")} == {"j-t-0", "j-t-1"}
    c.set_pod("j-t-1", "Running")             # j-t-1 runs in time: its timer is cancelled
    c.step()
    assert {d.pod_name for d in c.ctrl.delayed_actions("default/j")} == {"j-t-0"}
    c.clock.advance(59)
    c.step()
    assert c.pods()[0]["metadata"]["uid"] == uids["j-t-0"]
    c.clock.advance(1)
    c.step()
    st = c.job()["status"]
    # Restarting, then Pending again at once: RestartPod is a KillTarget (no version bump, the
    # PodGroup stays Inqueue) so the pod is recreated in the same round
    assert (st["state"]["phase"], st["retryCount"], st.get("version", 0)) == ("Pending", 1, 0)
    assert [cond["status"] for cond in st["conditions"]][-2:] == ["Restarting", "Pending"]
    now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in c.pods()}
    assert now["j-t-1"] == uids["j-t-1"] and now["j-t-0"] != uids["j-t-0"]


def test_exit_code_restarts_only_the_task(c):
    c.create(vcjob(tasks=[task("a", 1), task("b", 1, policies=[{"exitCode": 3, "action": "RestartTask"}])]))
    c.enqueue()
    c.run_all()
    a_uid = c.client.get(kinds.POD, "default", "j-a-0")["metadata"]["uid"]
    c.set_pod("j-b-0", "Failed", exit_code=3)
    c.step()
    assert c.client.get(kinds.POD, "default", "j-a-0")["metadata"]["uid"] == a_uid
    assert c.job()["status"]["retryCount"] == 1
    c.run_all()
    assert c.phase() == "Running"


@pytest.mark.parametrize("policies_", [
    pytest.param([{"event": "PodFailed", "exitCode": 1, "action": "RestartJob"}], id="event-and-exitCode"),
    pytest.param([{"exitCode": 0, "action": "RestartJob"}], id="exitCode-0"),
    pytest.param([{"event": "*", "action": "AbortJob"}, {"event": "PodFailed", "action": "RestartJob"}],
                 id="any-not-alone"),
    pytest.param([{"event": "OutOfSync", "action": "RestartJob"}], id="internal-event"),
])
def test_pol_11_invalid_policies_rejected(c, policies_):
    with pytest.raises(errors.Invalid):
        c.client.create(vcjob(policies=policies_))


def test_abort_keeps_finished_pods(c):
    """JOB-05: AbortJob kills live pods but keeps Succeeded/Failed ones (Soft)."""
    c.create(vcjob(tasks=[task("t", 3)], minAvailable=1))
    c.enqueue()
    c.run_all()
    c.set_pod("j-t-0", "Succeeded", exit_code=0)
    c.set_pod("j-t-1", "Failed", exit_code=1)
    c.step()
    c.client.patch(kinds.JOB, "default", "j", commands.set_patch("AbortJob"))
    c.step()
    st = c.job()["status"]
    assert st["state"]["phase"] == "Aborted"
    assert [(p["metadata"]["name"], p["status"]["phase"]) for p in c.pods()] == [
        ("j-t-0", "Succeeded"), ("j-t-1", "Failed")]
    assert (st["succeeded"], st["failed"], st.get("running", 0)) == (1, 1, 0)


def test_finished_job_ignores_restart(c):
    """JOB-24: Completed is terminal, even for RestartJob."""
    c.create(vcjob())
    c.enqueue()
    c.run_all()
    for name in c.pod_names():
        c.set_pod(name, "Succeeded", exit_code=0)
    c.step()
    version = c.job()["status"]["version"]
    c.client.patch(kinds.JOB, "default", "j", commands.set_patch("RestartJob"))
    c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st.get("retryCount", 0)) == ("Completed", 0)
    assert st["version"] == version + 1                 # KillJob(Soft) ran, nothing to kill
    assert c.pod_names() == ["j-t-0", "j-t-1"]


def test_restart_task_keeps_version_and_other_tasks(c):
    """JOB-04: RestartTask kills only the task's pods; status.version is unchanged."""
    c.create(vcjob(tasks=[task("a", 1), task("b", 2)],
                   policies=[{"event": "PodEvicted", "action": "RestartTask"}]))
    c.enqueue()
    c.run_all()
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in c.pods()}
    c.client.delete(kinds.POD, "default", "j-b-1")      # an eviction
    c.step()
    st = c.job()["status"]
    assert (st.get("version", 0), st["retryCount"], st["state"]["phase"]) == (0, 1, "Pending")
    now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in c.pods()}
    assert now["j-a-0"] == uids["j-a-0"]
    assert now["j-b-0"] != uids["j-b-0"] and set(now) == set(uids)


def test_scale_up_and_down(c):
    c.create(vcjob())
    c.enqueue()
    c.run_all()
    job = c.job()
    job["spec"]["tasks"][0]["replicas"] = 3
    c.client.update(job)
    c.step()
    assert c.pod_names() == ["j-t-0", "j-t-1", "j-t-2"]
    assert c.podgroups()[0]["spec"]["minResources"]["pods"] == "2"
    job = c.job()
    job["spec"]["tasks"][0]["replicas"] = 2
    c.client.update(job)
    c.step()
    assert c.pod_names() == ["j-t-0", "j-t-1"] and c.phase() == "Running"


def claim(name, namespace="default", **spec):
    """A PersistentVolumeClaim document (nothing binds it here: the job controller only needs it to exist)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def test_pods_carry_volcano_metadata(c):
    c.create(claim("vc"))
    c.create(vcjob(queue="default", tasks=[task("t", 1)], volumes=[{"mountPath": "/data", "volumeClaimName": "vc"}]))
    c.enqueue()
    (pod,) = c.pods()
    job = c.job()
    assert job["status"]["controlledResources"] == {"volume-pvc-vc": "vc"}
    assert pod["spec"]["volumes"] == [{"name": "j-volume-0", "persistentVolumeClaim": {"claimName": "vc"}}]
    ann = pod["metadata"]["annotations"]
    assert ann["scheduling.k8s.io/group-name"] == f"j-{job['metadata']['uid']}"
    assert (ann["volcano.sh/task-spec"], ann["volcano.sh/job-version"], ann["volcano.sh/queue-name"]) == (
        "t", "0", "default")
    assert pod["spec"]["schedulerName"] == "volcano"


def test_a_volume_with_only_a_claim_spec_gets_a_generated_claim_name_every_pod_mounts(c):
    """Volcano's createJobIOIfNotExist: a job volume with `volumeClaim` and no `volumeClaimName` is given
    `<job>-pvc-<12 chars>`, written into the job's spec before the pods are made, so each pod mounts it; that
    claim is made from the volume's `volumeClaim`, the job its controller owner (createPVC)."""
    c.create(claim("vc"))
    c.create(vcjob(queue="default", tasks=[task("t", 2)],
                   volumes=[{"mountPath": "/data", "volumeClaimName": "vc"},
                            {"mountPath": "/scratch", "volumeClaim": CLAIM_SPEC}]))
    c.enqueue()
    job = c.job()
    generated = job["spec"]["volumes"][1]["volumeClaimName"]
    assert re.fullmatch(r"j-pvc-[0-9a-z]{12}", generated)
    assert job["spec"]["volumes"][1]["volumeClaim"] == CLAIM_SPEC
    assert job["status"]["controlledResources"] == {"volume-pvc-vc": "vc", f"volume-pvc-{generated}": generated}
    for pod in c.pods():
        assert pod["spec"]["volumes"] == [
            {"name": "j-volume-0", "persistentVolumeClaim": {"claimName": "vc"}},
            {"name": "j-volume-1", "persistentVolumeClaim": {"claimName": generated}}]
        assert pod["spec"]["containers"][0]["volumeMounts"] == [
            {"mountPath": "/data", "name": "j-volume-0"}, {"mountPath": "/scratch", "name": "j-volume-1"}]
    c.step()
    assert c.job()["spec"]["volumes"][1]["volumeClaimName"] == generated  # named once
    assert pod["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    made = c.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", generated)
    assert made["spec"] == {**CLAIM_SPEC, "storageClassName": "standard", "volumeMode": "Filesystem"}  # (+ defaults)
    (owner,) = made["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Job", "j", job["metadata"]["uid"]) and owner["controller"]


# ---- requests that would only repeat the last SyncJob are not queued --------------------------------
def _bind(c, name):
    c.client.bind("default", name, "n1")


def _label(c, name):
    c.client.patch(kinds.POD, "default", name, {"metadata": {"labels": {"seen": "yes"}}})


def _pg_running(c, name, conditions=()):
    pg = c.podgroups()[0]
    c.client.patch(kinds.PODGROUP, "default", pg["metadata"]["name"],
                   {"status": {"phase": "Running", "conditions": list(conditions)}}, status=True)


def _pg_running_unschedulable(c, name):
    _pg_running(c, name, [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                           "message": "1/2 tasks in gang unschedulable", "lastTransitionTime": "2026-01-01T00:00:00Z"}])


def _run_pod(c, name):
    c.set_pod(name, "Running")


def _mark_out_of_sync(c, name):
    c.client.patch(kinds.POD, "default", name,
                   {"metadata": {"annotations": {"volcano.sh/controller-out-of-sync": "true"}}})


@pytest.mark.parametrize("change, syncs", [
    (_bind, 0),                       # the scheduler binds a pod: nothing SyncJob reads changed
    (_label, 0),                      # a label added by hand
    (_pg_running, 0),                 # Inqueue -> Running
    (_pg_running_unschedulable, 1),   # ... but with a warning to record on the job
    (_run_pod, 1),                    # a pod starts: PodRunning
    (_mark_out_of_sync, 2),           # the out-of-sync mark: the pod is deleted, then recreated
])
def test_only_changes_syncjob_reads_are_synced(c, change, syncs):
    c.create(vcjob())
    c.enqueue()
    assert len(c.pods()) == 2 and c.step() == 0   # its own pods' creation asked for no second sync
    before = c.job()["status"]
    change(c, "j-t-0")
    assert c.step() == syncs
    if syncs == 0:
        assert c.job()["status"] == before
    if change is _pg_running_unschedulable:
        assert len(c.events("PodGroupPending")) == 1


def test_pod_pending_policy_still_sees_the_pods_it_creates(c):
    c.create(vcjob(policies=[{"event": "PodPending", "action": "RestartPod", "timeout": "30s"}]))
    c.enqueue()
    assert {d.pod_name for d in c.ctrl.delayed_actions("default/j")} == {"j-t-0", "j-t-1"}


@pytest.mark.parametrize("timeout, phase, retries", [
    pytest.param(1, "Restarting", 1, id="first-timeout-restarts-once"),
    pytest.param(2, "Failed", 2, id="second-timeout-reaches-max-retry"),
])
def test_job_level_delayed_actions_falling_due_together_run_once(c, timeout, phase, retries):
    """Three pods pending past the timeout: their RestartJobs fall due in one sync; the first to run
    cancels the others (Volcano's cleanupDelayActions), so the job restarts once per timeout."""
    c.create(vcjob(tasks=[task("t", 3)], maxRetry=2,
                   policies=[{"event": "PodPending", "action": "RestartJob", "timeout": "3s"}]))
    for _ in range(timeout):
        c.enqueue()
        assert len(c.pods()) == 3 and len(c.ctrl.delayed_actions("default/j")) == 3   # (re)created
        c.clock.advance(3)
        c.step()
    st = c.job()["status"]
    assert (st["state"]["phase"], st["retryCount"]) == (phase, retries)


def test_a_pod_requests_its_limits_but_the_template_is_left_alone(c):
    """Kubernetes defaults a Pod's requests (and sets its qosClass), not a pod template's."""
    limits = {"cpu": "1", "memory": "1Gi"}
    t = task("t", 1)
    t["template"]["spec"]["containers"][0]["resources"] = {"limits": limits}
    c.create(vcjob(tasks=[t]))
    c.enqueue()
    (pod,) = c.pods()
    assert pod["spec"]["containers"][0]["resources"] == {"limits": limits, "requests": limits}
    assert pod["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert c.job()["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] == {"limits": limits}


@pytest.mark.parametrize("how", ["finalizer", "foreground"])
def test_a_deleting_vcjob_gets_a_new_generation_and_is_left_alone(c, how):
    """The delete that sets a vcjob's deletionTimestamp (a finalizer holds it, or its pods are deleted in the
    foreground first) bumps its generation, which keys the controller's caches of the spec: the job is not
    synced for it, its status and pods are as they were, and its pods' own deletions do not make new ones."""
    c.create(vcjob())
    c.enqueue()
    c.run_all()
    held = c.job() if how == "finalizer" else c.pods()[0]   # (foreground: the job waits for this pod)
    c.client.update({**held, "metadata": {**held["metadata"], "finalizers": ["example.com/hold"]}})
    c.step()
    before = c.job()
    c.client.delete(kinds.JOB, "default", "j", propagation="Foreground" if how == "foreground" else "Background")
    c.step()
    deleting = c.job()
    assert (before["metadata"]["generation"], deleting["metadata"]["generation"]) == (1, 2)
    assert deleting["metadata"]["deletionTimestamp"] and deleting["status"] == before["status"]
    if how == "finalizer":
        assert c.pod_names() == ["j-t-0", "j-t-1"]
    else:
        assert c.pod_names() == ["j-t-0"] and c.pods()[0]["metadata"]["deletionTimestamp"]
    held = c.job() if how == "finalizer" else c.pods()[0]
    c.client.update({**held, "metadata": {**held["metadata"], "finalizers": []}})
    c.step()
    with pytest.raises(errors.NotFound):
        c.job()
    assert c.pods() == [] and c.podgroups() == []


@pytest.mark.parametrize("gate, deleted", [
    pytest.param("*", True, id="every-controller"),
    pytest.param("*,-gc-controller", False, id="gc-controller-disabled-keeps-finished-vcjobs"),
    pytest.param("*,-job-controller", True, id="gc-controller-alone-still-deletes"),
])
def test_the_gc_controller_gate_decides_the_ttl_clean_up(gate, deleted):
    """Volcano's `gc-controller` is its own controller in the `--controllers` gate (server_test.go names it): without
    it a finished vcjob's ttlSecondsAfterFinished deletes nothing; with it alone, the TTL is still honoured."""
    rt = runtime.Runtime(clock_mod.VirtualClock(), run_pods=False, controllers=gates.enabled([gate]))
    rt.start()
    rt.client.create({**vcjob(ttlSecondsAfterFinished=5), "metadata": {"name": "j", "namespace": "default"}})
    rt.settle()
    job = rt.client.get(kinds.JOB, "default", "j")
    rt.client.update_status({**job, "status": {**(job.get("status") or {}), "state": {
        "phase": "Completed", "lastTransitionTime": clock_mod.format_time(rt.clock.now())}}})
    rt.settle()
    rt.clock.advance(5)
    rt.settle()
    kept = [meta.name(j) for j in rt.client.list(kinds.JOB, "default") if not meta.is_deleting(j)]
    assert kept == ([] if deleted else ["j"])   # (deleted in the foreground: its bound pods have no kubelet here)
