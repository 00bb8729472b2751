"""JobFlow + JobTemplate controllers against the real in-process API, with a virtual clock.

The test plays the vcjob controller: it writes vcjob phases with `client.update_status` (with the
vcjob's own `lastTransitionTime`), then drains both controllers' queues. Scripts are tables of steps;
after each step the set of existing vcjobs and the JobFlow phase are checked.
Cases: Volcano's example DAG, D1, D5, D6, D12, D13, D15 and the fixed bugs (template created after
the flow, `flows: []`, deleting a running flow, histories with transition times, rejected vcjobs).
"""
from __future__ import annotations

import copy
import datetime as dt

import pytest

from vclite.admission import vcjob as vcjob_admission
from vclite.api import batch, flow, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import inprocess
from vclite.controllers import jobtemplate
from vclite.controllers.jobflow import controller, objects
from vclite.lib import clock as clock_mod
from vclite.lib import errors

JP = batch.JobPhase
NS = "default"
SPEC = {"minAvailable": 1, "schedulerName": "volcano", "queue": "default",
        "tasks": [{"name": "default-nginx", "replicas": 1,
                   "template": {"metadata": {"name": "web"},
                                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2",
                                                         "command": ["sh", "-c", "sleep 10s"],
                                                         "resources": {"requests": {"cpu": "1"}}}],
                                         "restartPolicy": "OnFailure"}}}]}


class Env:
    def __init__(self):
        self.clock = clock_mod.VirtualClock()
        self.client = inprocess.new_client(self.clock)
        self.flows = controller.JobFlowController(self.client, self.clock)
        self.templates = jobtemplate.JobTemplateController(self.client, self.clock)
        self.flows.start()
        self.templates.start()

    def drain(self, retry: bool = False) -> None:
        """Sync until nothing is left, jumping the virtual clock to delayed work (as Runtime.settle); `retry`: a
        sync that fails with an API error is tried again a second later (as the runtime's loop, with back-off)."""
        busy = True
        while busy:
            busy = False
            for ctrl in (self.flows, self.templates):
                while (key := ctrl.queue.get()) is not None:
                    try:
                        ctrl.sync(key)
                    except errors.ApiError:
                        if not retry:
                            raise
                        ctrl.queue.add_after(key, 1.0)
                    busy = True
            due = [t for t in (c.queue.next_ready_at() for c in (self.flows, self.templates)) if t is not None]
            if not busy and due:
                self.clock.jump_to(min(due))
                busy = True

    def template(self, name: str, spec: dict | None = None) -> None:
        self.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                            "metadata": {"name": name, "namespace": NS, "labels": {"tmpl": name}},
                            "spec": spec or SPEC})

    def jobflow(self, name: str, flows: list[dict], policy: str | None = None) -> None:
        spec: dict = {"flows": flows}
        if policy:
            spec["jobRetainPolicy"] = policy
        self.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                            "metadata": {"name": name, "namespace": NS}, "spec": spec})

    def set_phase(self, job: str, phase: str) -> None:
        """What the vcjob controller does: write the new phase with its transition time."""
        obj = self.client.get(kinds.JOB, NS, job)
        obj["status"] = {**(obj.get("status") or {}),
                         "state": {"phase": phase, "lastTransitionTime": clock_mod.format_time(self.clock.now())}}
        self.client.update_status(obj)

    def set_duration(self, job: str, duration: str) -> None:
        """What the vcjob controller writes just after a finished phase."""
        obj = self.client.get(kinds.JOB, NS, job)
        self.client.update_status({**obj, "status": {**obj["status"], "runningDuration": duration}})

    def jobs(self) -> set[str]:
        return {meta.name(j) for j in self.client.list(kinds.JOB, NS)}

    def get(self, kind: kinds.Kind, name: str) -> dict | None:
        try:
            return self.client.get(kind, NS, name)
        except errors.NotFound:
            return None

    def status(self, name: str) -> dict:
        return (self.get(kinds.JOBFLOW, name) or {}).get("status") or {}

    def phase(self, name: str) -> str:
        return (self.status(name).get("state") or {}).get("phase", "")

    def events(self, reason: str) -> list[dict]:
        return [e for e in self.client.list(kinds.EVENT, NS) if e.get("reason") == reason]


@pytest.fixture
def env() -> Env:
    return Env()


def fl(name: str, *targets: str) -> dict:
    return {"name": name, "dependsOn": {"targets": list(targets)}} if targets else {"name": name}


def done(job: str) -> list[tuple]:
    return [("phase", job, JP.RUNNING), ("phase", job, JP.COMPLETED)]


EXAMPLE = [fl("a"), fl("b", "a"), fl("c", "b"), fl("d", "b"), fl("e", "c", "d")]   # V:example/jobflow

# Each script: flows, policy, steps. A step is an action and the expected (vcjobs, phase) after it.
SCRIPTS = [
    pytest.param(EXAMPLE, None, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.RUNNING), {"test-a"}, "Running"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
        (("phase", "test-b", JP.COMPLETED), {"test-a", "test-b", "test-c", "test-d"}, "Running"),
        (("phase", "test-c", JP.COMPLETED), {"test-a", "test-b", "test-c", "test-d"}, "Running"),
        (("phase", "test-d", JP.COMPLETED), {"test-a", "test-b", "test-c", "test-d", "test-e"}, "Running"),
        (("phase", "test-e", JP.COMPLETED), {"test-a", "test-b", "test-c", "test-d", "test-e"}, "Succeed"),
    ], id="example-dag-runs-in-dependency-order"),
    pytest.param([fl("a"), fl("b", "a")], None, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.RUNNING), {"test-a"}, "Running"),
        (("phase", "test-a", JP.COMPLETING), {"test-a"}, "Running"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
    ], id="D1-completing-is-not-enough"),
    pytest.param([fl("a"), fl("b", "a")], None, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.FAILED), {"test-a"}, "Failed"),
        (("phase", "test-a", JP.RUNNING), {"test-a"}, "Failed"),
    ], id="D5-failure-fails-flow-and-stops-it"),
    pytest.param([fl("a"), fl("b", "a")], None, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.TERMINATED), {"test-a"}, "Failed"),
    ], id="D6-terminated-while-pending"),
    pytest.param([fl("a"), fl("b", "a")], flow.RetainPolicy.DELETE, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
        (("phase", "test-b", JP.COMPLETED), set(), "Succeed"),
    ], id="D12-delete-policy-removes-jobs-after-success"),
    pytest.param([fl("a"), fl("b")], flow.RetainPolicy.DELETE, [
        (("start",), {"test-a", "test-b"}, "Pending"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
        (("phase", "test-b", JP.FAILED), {"test-a", "test-b"}, "Failed"),
    ], id="D13-delete-policy-keeps-jobs-of-failed-flow"),
    pytest.param([fl("a"), fl("b", "a")], flow.RetainPolicy.RETAIN, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
        (("phase", "test-b", JP.COMPLETED), {"test-a", "test-b"}, "Succeed"),
        (("delete-job", "test-a"), {"test-b"}, "Succeed"),   # deviation: Volcano re-creates it
    ], id="retain-policy-keeps-jobs"),
    pytest.param([], None, [(("start",), set(), "Succeed")], id="no-flows-succeeds-at-once"),
    pytest.param([fl("a"), fl("b", "a")], None, [
        (("start",), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.ABORTED), {"test-a"}, "Pending"),
        (("phase", "test-a", JP.RUNNING), {"test-a"}, "Running"),
        (("phase", "test-a", JP.ABORTED), {"test-a"}, "Running"),
        (("phase", "test-a", JP.RESTARTING), {"test-a"}, "Running"),
        (("phase", "test-a", JP.COMPLETED), {"test-a", "test-b"}, "Running"),
    ], id="D7-suspend-resume-does-not-fail"),
    pytest.param([fl("a"), fl("b", "a")], None, [
        (("start",), {"test-a"}, "Pending"),
        (("delete-job", "test-a"), {"test-a"}, "Pending"),   # level-triggered: re-created while running
    ], id="deleted-job-of-running-flow-is-recreated"),
]


@pytest.mark.parametrize("flows, policy, steps", SCRIPTS)
def test_script(env, flows, policy, steps):
    for name in "abcde":
        env.template(name)
    for action, jobs, phase in steps:
        env.clock.advance(10)
        if action[0] == "start":
            env.jobflow("test", flows, policy)
        elif action[0] == "phase":
            env.set_phase(action[1], action[2])
        elif action[0] == "delete-job":
            env.client.delete(kinds.JOB, NS, action[1])
        env.drain()
        assert (env.jobs(), env.phase("test")) == (jobs, phase), action


def test_created_vcjob_is_volcanos(env):
    env.template("a")
    env.jobflow("test", [fl("a")])
    env.drain()
    jf = env.get(kinds.JOBFLOW, "test")
    job = env.get(kinds.JOB, "test-a")
    tags = {"volcano.sh/createdByJobTemplate": "default.a", "volcano.sh/createdByJobFlow": "default.test"}
    assert job["metadata"]["labels"] == tags and job["metadata"]["annotations"] == tags
    assert job["metadata"]["ownerReferences"] == [{
        "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "test", "uid": meta.uid(jf),
        "controller": True, "blockOwnerDeletion": True}]
    template = env.get(kinds.JOBTEMPLATE, "a")
    as_job = copy.deepcopy(template["spec"])
    vcjob_admission.set_spec_defaults(as_job)
    assert job["spec"] == as_job, "D16: spec is the template's plus the vcjob defaults"
    assert "minAvailable" not in template["spec"]["tasks"][0], "the template keeps its own spec"
    assert [e["message"] for e in env.events("Created")] == ["create a job named test-a!"]
    assert objects.FINALIZER in jf["metadata"]["finalizers"]
    assert template["status"] == {"jobDependsOnList": ["test-a"]}


def test_histories_record_vcjob_transition_times(env):
    env.template("a")
    env.jobflow("test", [fl("a")])
    env.drain()
    created = env.get(kinds.JOB, "test-a")["metadata"]["creationTimestamp"]
    times = []
    for phase in (JP.PENDING, JP.RUNNING, JP.COMPLETED):
        env.clock.advance(7)
        env.set_phase("test-a", phase)
        times.append(clock_mod.format_time(env.clock.now()))
        env.clock.advance(100)   # the controller syncs much later than the transition
        env.drain()
    entry = env.status("test")["jobStatusList"][0]
    assert entry["startTimestamp"] == created
    assert entry["runningHistories"] == [
        {"startTimestamp": times[0], "endTimestamp": times[1], "state": "Pending"},
        {"startTimestamp": times[1], "endTimestamp": times[2], "state": "Running"},
        {"startTimestamp": times[2], "state": "Completed"}]
    assert env.phase("test") == "Succeed"


def test_histories_keep_phases_the_coalesced_sync_never_saw(env):
    # The vcjob goes through every phase before the JobFlow controller syncs once: the watch saw them all.
    env.template("a")
    env.jobflow("test", [fl("a")])
    env.drain()
    times = []
    for phase in (JP.PENDING, JP.RUNNING, JP.RESTARTING, JP.PENDING, JP.RUNNING, JP.COMPLETED):
        env.clock.advance(1)
        env.set_phase("test-a", phase)
        times.append(clock_mod.format_time(env.clock.now()))
    env.drain()
    hist = env.status("test")["jobStatusList"][0]["runningHistories"]
    assert [(h["state"], h["startTimestamp"]) for h in hist] == list(zip(
        ["Pending", "Running", "Restarting", "Pending", "Running", "Completed"], times))


@pytest.mark.parametrize("duration", ["3s", None], ids=["runningDuration-written", "never-written"])
def test_delete_policy_deletes_a_job_once_its_final_status_is_recorded(env, duration):
    # The vcjob controller writes runningDuration just after the phase; the JobFlow succeeds in between.
    env.template("a")
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b", "a")], flow.RetainPolicy.DELETE)
    env.drain()
    env.set_phase("test-a", JP.COMPLETED)
    env.set_duration("test-a", "2s")
    env.drain()
    env.set_phase("test-b", JP.COMPLETED)
    while (key := env.flows.queue.get()) is not None:   # only what is due now: no timer fires
        env.flows.sync(key)
    assert (env.phase("test"), env.jobs()) == ("Succeed", {"test-b"})
    if duration:
        env.set_duration("test-b", duration)
        while (key := env.flows.queue.get()) is not None:
            env.flows.sync(key)
    else:
        env.drain()                                     # deleted anyway once DELETE_GRACE has passed
    assert env.jobs() == set()
    status = env.status("test")
    entry = {e["name"]: e for e in status["jobStatusList"]}["test-b"]
    assert ("endTimestamp" in entry, status["conditions"]["test-b"].get("runningDuration")) == \
        (duration is not None, duration)


def test_template_created_after_the_flow_starts_the_waiting_job(env):
    env.template("a")
    env.jobflow("test", [fl("a"), fl("b", "a")])
    env.drain()
    for phase in (JP.RUNNING, JP.COMPLETED):
        env.set_phase("test-a", phase)
        env.drain()
    assert env.jobs() == {"test-a"}
    assert env.status("test")["conditions"]["test-b"] == {
        "phase": "Pending", "reason": "JobTemplateNotFound", "message": 'JobTemplate "b" not found'}
    assert env.status("test")["pendingJobs"] == ["test-b"]
    env.set_phase("test-a", JP.COMPLETED)   # another trigger: the warning is not repeated
    env.client.patch(kinds.JOB, NS, "test-a", {"metadata": {"labels": {"poke": "1"}}})
    env.drain()
    warnings = env.events("JobTemplateNotFound")
    assert [(w["type"], w["message"], w["count"]) for w in warnings] == [("Warning", 'JobTemplate "b" not found', 1)]
    env.template("b")
    env.drain()
    assert env.jobs() == {"test-a", "test-b"}
    assert "reason" not in env.status("test")["conditions"]["test-b"]


def test_a_flow_whose_template_is_missing_is_not_created_once_the_jobflow_failed(env):
    """The failure of a stops the JobFlow: b, which waited for its JobTemplate, will never be made — `NotCreated`,
    as every flow the stop left, not `JobTemplateNotFound` (stale once the template is created: nothing resyncs
    a Failed JobFlow)."""
    env.template("a")
    env.jobflow("test", [fl("a"), fl("b")])
    env.drain()
    assert env.status("test")["conditions"]["test-b"]["reason"] == "JobTemplateNotFound"
    env.set_phase("test-a", JP.FAILED)
    env.drain()
    status = env.status("test")
    assert status["state"]["phase"] == "Failed"
    assert status["conditions"]["test-b"] == {"phase": "Pending", "reason": "NotCreated",
                                              "message": "not created: the JobFlow is Failed"}


def test_flows_waiting_on_a_flow_whose_template_is_missing_are_not_next(env):
    """`nextFlows` names the flows waiting only on flows that run: b waits on a, which started but whose vcjob
    cannot be made (its JobTemplate is missing), so b is not next until a's vcjob exists."""
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b", "a")])
    env.drain()
    status = env.status("test")
    assert status["conditions"]["test-a"]["reason"] == "JobTemplateNotFound" and "nextFlows" not in status, status
    env.template("a")
    env.drain()
    assert env.jobs() == {"test-a"} and env.status("test")["nextFlows"] == ["b"]
    env.set_phase("test-a", JP.COMPLETED)
    env.drain()
    assert env.jobs() == {"test-a", "test-b"} and "nextFlows" not in env.status("test")


def settle(env: Env) -> None:
    """Sync what is ready now, without moving the clock (unlike drain)."""
    busy = True
    while busy:
        busy = False
        for ctrl in (env.flows, env.templates):
            while (key := ctrl.queue.get()) is not None:
                ctrl.sync(key)
                busy = True


DELAY = controller.TEMPLATE_WARNING_DELAY


@pytest.mark.parametrize("template_after, warnings", [
    pytest.param(0.0, 0, id="applied-in-the-same-file-after-the-flow"),
    pytest.param(DELAY - 1, 0, id="created-within-the-delay"),
    pytest.param(DELAY, 1, id="still-missing-after-the-delay"),
    pytest.param(None, 1, id="never-created-warned-once"),
])
def test_a_missing_template_warns_only_once_it_has_been_missing_for_a_while(env, template_after, warnings):
    """As Volcano's Warning after its 15 rate-limited retries (D11, ~164 s); the condition says it at once."""
    env.jobflow("test", [fl("a")])
    settle(env)
    assert env.status("test")["conditions"]["test-a"]["reason"] == "JobTemplateNotFound"
    if template_after is None:
        env.drain()            # (jumps the clock over the Warning's timer)
        env.clock.advance(10 * DELAY)
        env.client.patch(kinds.JOBFLOW, NS, "test", {"metadata": {"labels": {"poke": "1"}}})
        env.drain()
        assert env.jobs() == set()
    else:
        env.clock.advance(template_after)
        settle(env)
        env.template("a")
        settle(env)
        assert env.jobs() == {"test-a"}
    assert [w["message"] for w in env.events("JobTemplateNotFound")] == ['JobTemplate "a" not found'] * warnings


@pytest.mark.parametrize("missing_for, warned, due, wait", [
    pytest.param([0.0], set(), [], DELAY, id="just-missing"),
    pytest.param([DELAY, 10.0, DELAY + 5], set(), ["j0", "j2"], DELAY - 10, id="two-due-one-waits"),
    pytest.param([DELAY, DELAY], {"j0"}, ["j1"], None, id="one-already-warned"),
    pytest.param([DELAY - 1], {"j0"}, [], None, id="warned-waits-for-nothing"),
])
def test_template_warnings_due(missing_for, warned, due, wait):
    now = clock_mod.VirtualClock().now()
    missing = {f"j{i}": now - dt.timedelta(seconds=d) for i, d in enumerate(missing_for)}
    got_due, got_wait = controller.template_warnings_due(missing, warned, now)
    assert got_due == due and (got_wait is None if wait is None else got_wait == pytest.approx(wait))


def test_thousands_of_flows_waiting_for_their_templates_are_noted_once_with_few_warnings(env):
    n = 3000
    env.jobflow("big", [fl(f"t{i}") for i in range(n)])
    tried, syncs = [], []
    real_template, real_sync = env.flows._template, env.flows.sync
    env.flows._template = lambda ns, name: tried.append(name) or real_template(ns, name)
    env.flows.sync = lambda key: syncs.append(key) or real_sync(key)
    env.drain()
    assert len(tried) == n * len(syncs)   # each missing template looked up once a sync, not once a pass
    conditions = env.status("big")["conditions"]
    assert all(conditions[f"big-t{i}"]["reason"] == "JobTemplateNotFound" for i in range(n))
    warnings = [w["message"] for w in env.events("JobTemplateNotFound")]
    cap = controller.WARNINGS_PER_REASON
    assert warnings[:cap] == [f'JobTemplate "t{i}" not found' for i in range(cap)]
    assert warnings[cap:] == [f"and {n - cap} more vcjobs: JobTemplateNotFound (each flow's status.conditions says why)"]
    env.template("t7")
    env.drain()
    assert env.jobs() == {"big-t7"}


def test_two_flows_sharing_templates_d15(env):
    env.template("a")
    env.template("b")
    env.jobflow("x", [fl("a"), fl("b", "a")])
    env.jobflow("y", [fl("a")])
    env.drain()
    assert env.jobs() == {"x-a", "y-a"}
    env.set_phase("x-a", JP.COMPLETED)
    env.drain()
    assert env.status("x")["completedJobs"] == ["x-a"] and env.status("x")["pendingJobs"] == ["x-b"]
    assert env.status("y")["pendingJobs"] == ["y-a"] and set(env.status("y")["conditions"]) == {"y-a"}
    assert env.get(kinds.JOBTEMPLATE, "a")["status"]["jobDependsOnList"] == ["x-a", "y-a"]
    assert env.get(kinds.JOBTEMPLATE, "b")["status"]["jobDependsOnList"] == ["x-b"]
    env.client.delete(kinds.JOBFLOW, NS, "y")
    env.drain()
    assert env.get(kinds.JOBTEMPLATE, "a")["status"]["jobDependsOnList"] == ["x-a"]
    env.client.delete(kinds.JOBFLOW, NS, "x")
    env.drain()
    assert env.get(kinds.JOBTEMPLATE, "a")["status"] == {}, "cleared when no vcjob is left (Volcano keeps it)"


def test_deleting_a_running_flow_terminates_it_and_removes_its_jobs(env):
    env.template("a")
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b")])
    env.drain()
    env.set_phase("test-a", JP.RUNNING)
    env.drain()
    seen: list[tuple[str, str, str]] = []

    def record(ev: client_mod.WatchEvent) -> None:
        seen.append((ev.type, ev.object["kind"], meta.name(ev.object) if ev.object["kind"] == "Job"
                     else (ev.object.get("status") or {}).get("state", {}).get("phase", "")))
    env.client.watch(None, lambda ev: record(ev) if ev.object["kind"] in ("Job", "JobFlow") else None)
    env.client.delete(kinds.JOBFLOW, NS, "test")
    assert env.phase("test") == "Running" and env.get(kinds.JOBFLOW, "test")["metadata"]["deletionTimestamp"]
    env.drain()
    assert env.get(kinds.JOBFLOW, "test") is None and env.jobs() == set()
    flow_events = [(t, p) for t, k, p in seen if k == "JobFlow"]
    assert flow_events[1] == ("MODIFIED", "Terminating")
    assert flow_events[-1] == ("DELETED", "Terminating")
    job_deletions = [i for i, (t, k, _) in enumerate(seen) if k == "Job" and t == "DELETED"]
    assert len(job_deletions) == 2 and max(job_deletions) < len(seen) - 1, "jobs go before the JobFlow"


@pytest.mark.parametrize("phase", [JP.RUNNING, JP.COMPLETED])
def test_a_deleted_flows_generation_bump_does_not_rebuild_or_restart_it(env, phase):
    """The delete that sets deletionTimestamp bumps the JobFlow's generation (kube-apiserver's markAsDeleting),
    and a new generation is what makes the controller compile the spec again: a deleting JobFlow is terminated
    all the same — its status Terminating, its vcjobs deleted and none created (not even the flow that was still
    to come), then the finalizer dropped — and its versions from the deletion on carry generation 2."""
    env.template("a")
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b", "a")])
    env.drain()
    env.set_phase("test-a", phase)
    created = []
    seen: list[tuple[str, int, str]] = []

    def record(ev: client_mod.WatchEvent) -> None:
        if ev.object["kind"] == "Job" and ev.type == client_mod.EventType.ADDED:
            created.append(meta.name(ev.object))
        elif ev.object["kind"] == "JobFlow":
            seen.append((ev.type, ev.object["metadata"]["generation"],
                         (ev.object.get("status") or {}).get("state", {}).get("phase", "")))
    env.client.watch(None, record)
    env.client.delete(kinds.JOBFLOW, NS, "test")
    env.drain()
    assert env.get(kinds.JOBFLOW, "test") is None and env.jobs() == set() and created == []
    assert seen[0] == ("MODIFIED", 2, "Pending") and seen[-1] == ("DELETED", 2, "Terminating")
    assert {g for _, g, _ in seen} == {2}


def test_deleting_a_flow_with_orphan_propagation_keeps_its_jobs(env):
    """propagationPolicy Orphan (kubectl delete --cascade=orphan): the vcjobs stay, as Kubernetes' GC
    leaves them, without their ownerReference to the JobFlow."""
    env.template("a")
    env.jobflow("test", [fl("a")])
    env.drain()
    env.client.delete(kinds.JOBFLOW, NS, "test", propagation="Orphan")
    env.drain()
    assert env.get(kinds.JOBFLOW, "test") is None and env.jobs() == {"test-a"}
    assert "ownerReferences" not in env.get(kinds.JOB, "test-a")["metadata"]


def test_rejected_vcjob_fails_the_flow_with_the_admission_message(env):
    env.template("a")
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b", "a")])
    env.drain()
    queue = env.client.get(kinds.QUEUE, "", "default")
    queue["status"] = {**(queue.get("status") or {}), "state": "Closed"}
    env.client.update_status(queue)
    env.set_phase("test-a", JP.COMPLETED)
    env.drain()
    cond = env.status("test")["conditions"]["test-b"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "FailedCreate")
    assert "can only submit job to queue with state `Open`" in cond["message"]
    assert env.phase("test") == "Failed" and env.status("test")["failedJobs"] == ["test-b"]
    assert [w["message"] for w in env.events("FailedCreate")] == [cond["message"]]


def test_a_foreign_job_with_the_flow_job_name_blocks_visibly(env):
    env.template("a")
    env.client.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "metadata": {"name": "test-a", "namespace": NS}, "spec": SPEC})
    env.jobflow("test", [fl("a")])
    env.drain()
    assert env.status("test")["conditions"]["test-a"]["reason"] == "JobAlreadyExists"
    assert env.phase("test") == "Pending" and len(env.events("JobAlreadyExists")) == 1


def test_a_restarted_controller_changes_nothing(env):
    env.template("a")
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b", "a")])
    env.drain()
    env.set_phase("test-a", JP.RUNNING)
    env.drain()
    before = (env.get(kinds.JOBFLOW, "test"), env.jobs())
    env.flows.stop()
    env.flows = controller.JobFlowController(env.client, env.clock)
    env.flows.start()
    env.clock.advance(60)
    env.drain()
    assert (env.get(kinds.JOBFLOW, "test"), env.jobs()) == before


def test_deleted_vcjob_of_a_completed_flow_is_recreated_while_the_flow_runs(env):
    # Volcano's level-triggered rule for a plain JobFlow: the vcjob is missing, so it is created again.
    for name in "abc":
        env.template(name)
    env.jobflow("test", [fl("a"), fl("b", "a"), fl("c", "b")])
    env.drain()
    env.set_phase("test-a", JP.COMPLETED)
    env.drain()
    assert env.jobs() == {"test-a", "test-b"}
    env.client.delete(kinds.JOB, NS, "test-a")
    env.drain()
    assert env.jobs() == {"test-a", "test-b"} and env.phase("test") == "Running"
    assert sorted(env.status("test")["pendingJobs"]) == ["test-a", "test-b", "test-c"], "a is created again"
    env.set_phase("test-a", JP.COMPLETED)
    env.set_phase("test-b", JP.COMPLETED)
    env.drain()
    assert env.jobs() == {"test-a", "test-b", "test-c"}


@pytest.mark.parametrize("flows", [
    pytest.param([fl("a"), fl("b", "a")], id="plain"),
    pytest.param([fl("a"), {"name": "b", "dependsOn": {"expression": "a.Completed"}}], id="vclite-fields"),
])
def test_a_vcjob_deleted_by_its_ttl_as_it_finishes_is_not_created_again(env, flows):
    """ttlSecondsAfterFinished: 0 deletes the vcjob right after it completes, before the JobFlow controller's
    sync: the deleted version says Completed, so the flow is done (Volcano re-creates it, forever)."""
    env.template("a", {**SPEC, "ttlSecondsAfterFinished": 0})
    env.template("b")
    env.jobflow("test", flows)
    env.drain()
    env.set_phase("test-a", JP.COMPLETED)
    env.client.delete(kinds.JOB, NS, "test-a")
    env.drain()
    assert env.jobs() == {"test-b"} and env.phase("test") == "Running"
    cond = env.status("test")["conditions"]["test-a"]
    assert cond["phase"] == "Completed" and cond["deleted"] is True
    env.set_phase("test-b", JP.COMPLETED)
    env.drain()
    assert env.jobs() == {"test-b"} and env.phase("test") == "Succeed"


def _reading(output_of: str) -> dict:
    spec = copy.deepcopy(SPEC)
    spec["tasks"][0]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", f"echo {{{{outputs.{output_of}}}}}"]
    return spec


@pytest.mark.parametrize("flows, on_exit, message", [
    pytest.param([fl("a"), fl("b", "a")], None, 'flow a: the template reads the output of "b", which waits for "a": '
                 "cycle: a -> b -> a", id="cycle-through-the-template"),
    pytest.param([fl("a"), fl("c", "b"), fl("b", "a")], None, "cycle: a -> b", id="longer-cycle"),
    pytest.param([fl("a"), fl("b")], "b", 'flow a: the template reads the output of the exit handler "b"',
                 id="exit-handler"),
])
def test_a_template_output_read_that_can_never_be_met_fails_the_flow(env, flows, on_exit, message):
    """Admission cannot see a JobTemplate's placeholders: the controller finds the deadlock when it would wait."""
    env.template("a", _reading("b"))
    env.template("b")
    env.template("c")
    spec: dict = {"flows": flows, **({"onExit": on_exit} if on_exit else {})}
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS}, "spec": spec})
    env.drain()
    cond = env.status("test")["conditions"]["test-a"]
    assert cond["reason"] == "InvalidTemplate" and message in cond["message"], cond
    assert "test-a" not in env.jobs()


def test_a_template_reading_an_unrelated_flows_output_waits_for_it(env):
    env.template("a", _reading("b"))
    env.template("b")
    env.jobflow("test", [fl("a"), fl("b")])
    env.drain()
    assert env.jobs() == {"test-b"} and env.status("test")["conditions"]["test-a"]["reason"] == "WaitingForOutput"
    env.set_phase("test-b", JP.COMPLETED)
    env.drain()
    assert env.jobs() == {"test-a", "test-b"}


def test_a_wide_flow_is_created_over_several_syncs_and_missing_templates_do_not_loop(env):
    """At most CREATES_PER_SYNC vcjobs a sync (other work goes between); flows that cannot be created
    (their JobTemplate is missing) do not count, so they never make the sync requeue itself for nothing."""
    n, missing = 450, 300
    for i in range(n):
        env.template(f"t{i}")
    env.jobflow("wide", [fl(f"t{i}") for i in range(n)] + [fl(f"m{i}") for i in range(missing)])
    syncs = []
    real_sync = env.flows.sync
    env.flows.sync = lambda key: (str(key).endswith("/wide") and syncs.append(key)) or real_sync(key)
    env.drain()
    assert env.jobs() == {f"wide-t{i}" for i in range(n)}
    assert len(syncs) >= -(-n // controller.CREATES_PER_SYNC), "created over several syncs"
    assert len(syncs) < 20, "no sync loop over the flows that cannot be created"


def test_jobtemplate_round_trip_and_a_manual_status_write_b4(env):
    """BoCloud e2e B4: a JobTemplate is created and deleted; a status written by hand is kept (the controller
    recomputes `jobDependsOnList` only when a vcjob made from the template comes or goes)."""
    env.template("a")
    env.drain()
    assert env.get(kinds.JOBTEMPLATE, "a").get("status") in (None, {})
    tmpl = env.get(kinds.JOBTEMPLATE, "a")
    env.client.update_status({**tmpl, "status": {"jobDependsOnList": ["by-hand"]}})
    env.clock.advance(60)
    env.drain()
    assert env.get(kinds.JOBTEMPLATE, "a")["status"] == {"jobDependsOnList": ["by-hand"]}
    env.client.delete(kinds.JOBTEMPLATE, NS, "a")
    env.drain()
    assert env.get(kinds.JOBTEMPLATE, "a") is None


def test_a_handler_started_by_a_vcjob_refused_as_built_is_built_before_the_moments_vcjobs_are_created(env):
    """a's vcjob is refused as it is built (its template reads its own output): a Failed, which h (`a.Failed`) handles,
    so h starts in that moment; h's template reads s, Skipped: h is Skipped as it is built and a's failure stops the
    JobFlow. c, made in the same moment, was created before h was built; now it is not (`NotCreated`)."""
    env.template("a", _reading("a"))
    env.template("h", _reading("s"))
    for name in ("s", "c"):
        env.template(name)
    flows = [fl("a"), {"name": "s", "when": "params.go == 'no'"}, {"name": "h", "dependsOn": {"expression": "a.Failed"}},
             fl("c")]
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS},
                       "spec": {"flows": flows, "arguments": {"parameters": [{"name": "go", "value": "yes"}]}}})
    env.drain()
    conditions = env.status("test")["conditions"]
    assert {k: (c["phase"], c.get("reason")) for k, c in conditions.items()} == {
        "test-a": ("Failed", "InvalidTemplate"), "test-s": ("Skipped", "WhenFalse"),
        "test-h": ("Skipped", "DependencyNeverMet"), "test-c": ("Pending", "NotCreated")}
    assert (env.jobs(), env.phase("test")) == (set(), "Failed")


# ---- a failed flow says why: its first failed pod's container, exit code and reason ---------------------------------
def _failed_pod(env: Env, job: str, exit_code: int = 3, message: str = "", uid: str | None = None,
                index: int = 0, finished: str = "2026-01-01T00:00:05Z") -> None:
    """What the vcjob controller and the kubelet leave of a pod that exited `exit_code` (its owner: the vcjob's
    uid, or `uid`: an earlier attempt's)."""
    owner = env.client.get(kinds.JOB, NS, job)
    ref = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job,
           "uid": uid or meta.uid(owner), "controller": True, "blockOwnerDeletion": True}
    pod = env.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"{job}-default-nginx-{index}", "namespace": NS, "labels": {batch.JOB_NAME: job},
        "ownerReferences": [ref]}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    term = {"exitCode": exit_code, "reason": "Error", "finishedAt": finished,
            **({"message": message} if message else {})}
    env.client.update_status({**pod, "status": {**(pod.get("status") or {}), "phase": "Failed", "containerStatuses": [
        {"name": "nginx", "state": {"terminated": term}, "ready": False, "restartCount": 0, "image": "nginx"}]}})


def _echo(text: str) -> dict:
    spec = copy.deepcopy(SPEC)
    spec["tasks"][0]["template"]["spec"]["containers"][0]["command"] = ["echo", text]
    return spec


WHY = "pod test-b-default-nginx-0: container nginx exited with code 3 (Error)"


@pytest.mark.parametrize("pods, message", [
    pytest.param([{}], WHY, id="exit-code"),
    pytest.param([{"message": "CUDA out of memory\n"}], WHY + ": CUDA out of memory", id="termination-message"),
    pytest.param([{"index": 1, "exit_code": 1}, {"index": 0, "finished": "2026-01-01T00:00:09Z"}],
                 "pod test-b-default-nginx-1: container nginx exited with code 1 (Error); " + WHY,
                 id="first-to-fail-first"),
    pytest.param([{"uid": "an-earlier-attempt"}], None, id="an-earlier-attempts-pod-is-not-read"),
    pytest.param([], None, id="no-pod-left"),
])
def test_a_failed_vcjob_says_which_container_exited_with_what(env, pods, message):
    """The condition of a failed vcjob and the exit handler's `workflow.failures[].message` name its first failed
    pod's container, exit code and reason (and termination message), read through the API as on a cluster."""
    spec = copy.deepcopy(SPEC)
    spec["tasks"][0]["replicas"] = 2
    spec["minAvailable"] = 2
    env.template("b", spec)
    env.template("notify", _echo("{{workflow.failures.0.message}}"))
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS},
                       "spec": {"onExit": "notify", "flows": [fl("notify"), fl("b")]}})
    env.drain()
    for p in pods:
        _failed_pod(env, "test-b", **p)
    env.set_phase("test-b", JP.FAILED)
    env.drain()
    cond = env.status("test")["conditions"]["test-b"]
    assert cond.get("message") == message, cond
    assert _told(env, "test-notify") == "vcjob test-b Failed" + (f": {message}" if message else "")
    # a restarted controller, the pods gone: the condition still says it
    for p in env.client.list(kinds.POD, NS):
        env.client.delete(kinds.POD, NS, meta.name(p))
    env.flows.stop()
    env.flows = controller.JobFlowController(env.client, env.clock)
    env.flows.start()
    env.drain()
    assert env.status("test")["conditions"]["test-b"].get("message") == message


def _told(env: Env, job: str) -> str:
    """What the vcjob's container echoes (its command's argument)."""
    return env.get(kinds.JOB, job)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][1]


def test_a_retried_vcjob_says_why_its_last_attempt_failed(env):
    env.template("b")
    env.template("notify", _echo("{{workflow.failures.0.message}}"))
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS},
                       "spec": {"onExit": "notify", "flows": [fl("notify"), {"name": "b", "retry": {"limit": 1}}]}})
    env.drain()
    _failed_pod(env, "test-b", exit_code=3)
    env.set_phase("test-b", JP.FAILED)
    env.drain()   # (the back-off, then the failed attempt is deleted and made again)
    assert env.status("test")["conditions"]["test-b"].get("retries") == 1
    for p in env.client.list(kinds.POD, NS):
        env.client.delete(kinds.POD, NS, meta.name(p))
    _failed_pod(env, "test-b", exit_code=4)
    env.set_phase("test-b", JP.FAILED)
    env.drain()
    cond = env.status("test")["conditions"]["test-b"]
    why = "pod test-b-default-nginx-0: container nginx exited with code 4 (Error)"
    assert (cond["reason"], cond["message"]) == ("RetriesExhausted",
                                                 f"attempt 2 failed; no retries left (limit 1); last attempt: {why}")
    assert _told(env, "test-notify") == f"vcjob test-b Failed: {why}"


class _PodsUnreadable:
    """The in-process client, but the `fail`th read of a pod (counting from 1) fails: a cluster's API throttling."""

    def __init__(self, client, fail: int):
        self.client, self.fail, self.reads = client, fail, 0

    def __getattr__(self, name):
        return getattr(self.client, name)

    def get(self, kind, namespace, name):
        if kind is kinds.POD:
            self.reads += 1
            if self.reads == self.fail:
                raise errors.TooManyRequests("the server is busy")
        return self.client.get(kind, namespace, name)


@pytest.mark.parametrize("fail", [pytest.param(1, id="reading-its-output"), pytest.param(2, id="reading-why")])
def test_a_failed_vcjob_whose_pod_could_not_be_read_at_once_is_still_told(env, fail):
    """An API error when the JobFlow reads a failed vcjob's pod: reading its output, the sync is tried again and
    sees the vcjob again (it was once lost: the flow never finished); reading why, the flow goes on and why is read
    again when the exit handler reads the failure (then the vcjob's condition says it too)."""
    flaky = _PodsUnreadable(env.client, fail)
    env.flows.stop()
    env.flows = controller.JobFlowController(flaky, env.clock)
    env.flows.start()
    for name in "ac":
        env.template(name)
    env.template("notify", _echo("{{workflow.failures.0.message}}"))
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS},
                       "spec": {"onExit": "notify", "flows": [fl("notify"), fl("a"), fl("c")]}})
    env.drain()
    _failed_pod(env, "test-a", exit_code=3)
    env.set_phase("test-a", JP.FAILED)
    env.drain(retry=True)
    assert env.status("test")["conditions"]["test-a"]["phase"] == "Failed" and "test-notify" not in env.jobs()
    env.set_phase("test-c", JP.COMPLETED)   # (the exit handler runs once c has finished)
    env.drain()
    why = "pod test-a-default-nginx-0: container nginx exited with code 3 (Error)"
    assert _told(env, "test-notify") == f"vcjob test-a Failed: {why}"
    assert env.status("test")["conditions"]["test-a"]["message"] == why


def _podgroup_of(env: Env, job: str, conditions: list[dict], create: bool) -> None:
    """What the vcjob controller and the scheduler write: the vcjob's PodGroup, with `conditions`."""
    vcjob = env.client.get(kinds.JOB, NS, job)
    if create:
        env.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                           "metadata": {"name": f"{job}-{meta.uid(vcjob)}", "namespace": NS, "ownerReferences": [
                               {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job,
                                "uid": meta.uid(vcjob), "controller": True}]},
                           "spec": {"minMember": 1}})
    pg = env.client.get(kinds.PODGROUP, NS, f"{job}-{meta.uid(vcjob)}")
    env.client.update_status({**pg, "status": {"phase": "Pending", "conditions": conditions}})


def _unschedulable(message: str) -> list[dict]:
    return [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": message,
             "transitionID": "t", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def test_a_waiting_vcjobs_condition_follows_its_podgroups_reason(env):
    """The reason appears, changes and goes with the PodGroup's Unschedulable condition while the vcjob is Pending,
    only for the vcjob whose PodGroup changed, and is gone once it runs."""
    env.template("a")
    env.template("b")
    env.jobflow("w", [fl("a"), fl("b")])
    env.drain()
    conds = lambda: env.status("w")["conditions"]   # noqa: E731
    for job in ("w-a", "w-b"):
        env.set_phase(job, JP.PENDING)
        _podgroup_of(env, job, [], create=True)
    env.drain()
    assert "reason" not in conds()["w-a"] and "reason" not in conds()["w-b"]
    steps = [("w-a", _unschedulable("1/1 tasks in gang unschedulable: 0/1 nodes are available")),
             ("w-b", _unschedulable("queue resource quota insufficient")),
             ("w-a", _unschedulable("1/1 tasks in gang unschedulable: 1 Insufficient cpu")),
             ("w-a", [])]
    want = {}
    for job, conditions in steps:
        _podgroup_of(env, job, conditions, create=False)
        env.drain()
        want[job] = conditions[0]["message"] if conditions else None
        for name, message in want.items():
            cond = conds()[name]
            assert cond["phase"] == JP.PENDING
            assert (cond.get("reason"), cond.get("message")) == (("NotEnoughResources", message) if message
                                                                else (None, None)), (job, name, cond)
    env.set_phase("w-b", JP.RUNNING)
    env.drain()
    assert conds()["w-b"]["phase"] == JP.RUNNING and "reason" not in conds()["w-b"]


def _restart_controller(env: Env) -> None:
    env.flows.stop()
    env.flows = controller.JobFlowController(env.client, env.clock)
    env.flows.start()


def _suspend_and_resume(env: Env) -> None:
    for value in ("true", None):
        jf = env.get(kinds.JOBFLOW, "w")
        annotations = {k: v for k, v in meta.annotations(jf).items() if k != flow.SUSPEND_ANNOTATION}
        if value:
            annotations[flow.SUSPEND_ANNOTATION] = value
        env.client.update({**jf, "metadata": {**jf["metadata"], "annotations": annotations}})
        env.drain()


@pytest.mark.parametrize("then", [
    pytest.param(lambda env: None, id="nothing"),
    pytest.param(_restart_controller, id="a restarted controller"),
    pytest.param(_suspend_and_resume, id="the JobFlow suspended and resumed"),
])
def test_a_waiting_vcjobs_reason_is_kept_when_its_jobflow_is_built_again(env, then):
    env.template("a")
    env.template("b")
    env.jobflow("w", [fl("a"), fl("b")])
    env.drain()
    env.set_phase("w-a", JP.PENDING)
    _podgroup_of(env, "w-a", _unschedulable("1/1 tasks in gang unschedulable: 1 Insufficient cpu"), create=True)
    env.drain()
    then(env)
    env.drain()
    cond = env.status("w")["conditions"]["w-a"]
    assert (cond.get("reason"), cond.get("message")) == ("NotEnoughResources",
                                                         "1/1 tasks in gang unschedulable: 1 Insufficient cpu")


def test_a_recreated_vcjob_shows_its_own_podgroups_reason_not_its_predecessors(env):
    env.template("a")
    env.jobflow("w", [fl("a")])
    env.drain()
    env.set_phase("w-a", JP.PENDING)
    _podgroup_of(env, "w-a", _unschedulable("old: queue resource quota insufficient"), create=True)
    env.drain()
    env.client.delete(kinds.JOB, NS, "w-a")
    env.drain()   # (a plain JobFlow makes it again)
    env.set_phase("w-a", JP.PENDING)
    cond = lambda: env.status("w")["conditions"]["w-a"]   # noqa: E731
    env.drain()
    assert "reason" not in cond(), "the deleted vcjob's PodGroup says nothing of the new one"
    _podgroup_of(env, "w-a", _unschedulable("new: 1/1 tasks in gang unschedulable"), create=True)
    env.drain()
    assert cond().get("message") == "new: 1/1 tasks in gang unschedulable"


class _CrashAfterCreating:
    """The in-process client, but once a vcjob whose name starts with `prefix` was created nothing more is written:
    the controller's process died there (kill -9), before the sync's last status write."""

    def __init__(self, client, prefix: str):
        self.client, self.prefix, self.crashed = client, prefix, False

    def __getattr__(self, name):
        return getattr(self.client, name)

    def _write(self, fn, obj):
        if self.crashed:
            raise errors.TooManyRequests("the controller's process is gone")
        out = fn(obj)
        if meta.name(obj).startswith(self.prefix) and obj.get("kind") == "Job":
            self.crashed = True
        return out

    def create(self, obj):
        return self._write(self.client.create, obj)

    def update(self, obj):
        return self._write(self.client.update, obj)

    def update_status(self, obj):
        return self._write(self.client.update_status, obj)


def test_the_exit_handlers_failure_items_survive_a_crash_as_its_first_vcjob_is_made(env):
    """`withParam: "{{workflow.failures}}"` over more failures than a sync creates (CREATES_PER_SYNC): a controller
    that dies after making the handler's first vcjob, before its status says how many items the handler has, is
    started again: it makes one vcjob per failure all the same (the count it would take from the vcjobs there
    is too small: the failures are settled only after its load)."""
    n = controller.CREATES_PER_SYNC + 50
    for i in range(n):
        env.template(f"f{i}")
    env.template("notify", _echo("{{item.name}}"))
    env.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                       "metadata": {"name": "test", "namespace": NS},
                       "spec": {"onExit": "notify", "flows": [{"name": "notify", "withParam": "{{workflow.failures}}"},
                                                              *(fl(f"f{i}") for i in range(n))]}})
    env.drain()
    for i in range(n):
        env.set_phase(f"test-f{i}", JP.RUNNING)
    env.drain()
    for i in range(n):
        env.set_phase(f"test-f{i}", JP.FAILED)
    crashing = _CrashAfterCreating(env.client, "test-notify-")
    env.flows.stop()
    env.flows = controller.JobFlowController(crashing, env.clock)
    env.flows.start()
    while not crashing.crashed and (key := env.flows.queue.get()) is not None:
        try:
            env.flows.sync(key)
        except errors.TooManyRequests:
            break
    assert crashing.crashed
    env.flows.stop()   # (the crash) and a new controller
    env.flows = controller.JobFlowController(env.client, env.clock)
    env.flows.start()
    env.drain()
    assert {j for j in env.jobs() if j.startswith("test-notify-")} == {f"test-notify-{i}" for i in range(n)}
    for i in range(n):
        env.set_phase(f"test-notify-{i}", JP.COMPLETED)
    env.drain()
    cond = env.status("test")["conditions"]["test-notify"]
    assert (env.phase("test"), cond["message"]) == ("Failed", f"{n} items: {n} Completed"), cond


def test_an_attempt_waiting_for_its_retry_says_why_it_failed(env):
    """`describe` during a retry's back-off (minutes, maybe) tells why the attempt failed, not only that it did."""
    env.template("b")
    env.jobflow("test", [{"name": "b", "retry": {"limit": 2, "backoff": {"duration": "300s"}}}])
    env.drain()
    _failed_pod(env, "test-b", exit_code=3, message="CUDA out of memory\n")
    env.set_phase("test-b", JP.FAILED)
    for key in list(iter(env.flows.queue.get, None)):   # (one sync: not the back-off's end)
        env.flows.sync(key)
    cond = env.status("test")["conditions"]["test-b"]
    why = "pod test-b-default-nginx-0: container nginx exited with code 3 (Error): CUDA out of memory"
    assert (cond["reason"], cond["message"]) == (
        "RetryBackoff", f"attempt 1 failed; retry 1 of 2 after a 5m0s back-off; last attempt: {why}"), cond
    env.flows.stop()   # a restarted controller says the same (from the status: no pod to read again)
    env.flows = controller.JobFlowController(env.client, env.clock)
    env.flows.start()
    for p in env.client.list(kinds.POD, NS):
        env.client.delete(kinds.POD, NS, meta.name(p))
    for key in list(iter(env.flows.queue.get, None)):
        env.flows.sync(key)
    assert env.status("test")["conditions"]["test-b"]["message"] == cond["message"]


# ---- Volcano's jobflow_controller_action_test.go / jobtemplate_controller_action_test.go, over the real API ----
@pytest.mark.parametrize("phase, listed_in, flow_phase", [
    pytest.param(JP.RUNNING, "runningJobs", "Running", id="SyncJobFlow-success-case"),
    pytest.param(JP.FAILED, "failedJobs", "Failed", id="SyncJobFlow-success-case-with-vcjob-Status-Failed"),
    pytest.param(JP.TERMINATED, "terminatedJobs", "Failed", id="SyncJobFlow-success-case-with-vcjob-Status-Terminated"),
])
def test_sync_jobflow_func(env, phase, listed_in, flow_phase):
    """TestSyncJobFlowFunc: one flow, jobRetainPolicy retain, its vcjob in `phase`. Volcano's empty lists and zero
    timestamps are left out here (omitempty, #3234); the history starts at the vcjob's transition time."""
    env.template("jobtemplate")
    env.jobflow("jobflow", [fl("jobtemplate")], flow.RetainPolicy.RETAIN)
    env.drain()
    created = env.get(kinds.JOB, "jobflow-jobtemplate")["metadata"]["creationTimestamp"]
    env.clock.advance(5)
    env.set_phase("jobflow-jobtemplate", phase)
    moved = clock_mod.format_time(env.clock.now())
    env.drain()
    assert env.status("jobflow") == {
        listed_in: ["jobflow-jobtemplate"],
        "jobStatusList": [{"name": "jobflow-jobtemplate", "state": phase, "startTimestamp": created,
                           "runningHistories": [{"startTimestamp": moved, "state": phase}]}],
        "conditions": {"jobflow-jobtemplate": {"phase": phase, "createTime": created}},
        "state": {"phase": flow_phase},
    }


def test_get_all_job_status_func(env):
    """TestGetAllJobStatusFunc: A Completed (retryCount 1, runningDuration 1s), B (after A) Running: the end time is
    the creation time plus the runningDuration, restartCount the retryCount, both in the conditions."""
    env.template("a")
    env.template("b")
    env.jobflow("jobflowa", [fl("a"), fl("b", "a")])
    env.drain()
    created_a = env.get(kinds.JOB, "jobflowa-a")["metadata"]["creationTimestamp"]
    env.clock.advance(1)
    obj = env.client.get(kinds.JOB, NS, "jobflowa-a")
    env.client.update_status({**obj, "status": {
        "state": {"phase": JP.COMPLETED, "lastTransitionTime": clock_mod.format_time(env.clock.now())},
        "retryCount": 1, "runningDuration": "1s"}})
    env.drain()
    created_b = env.get(kinds.JOB, "jobflowa-b")["metadata"]["creationTimestamp"]
    env.set_phase("jobflowa-b", JP.RUNNING)
    env.drain()
    status = env.status("jobflowa")
    assert (status["runningJobs"], status["completedJobs"], status["state"]) == (
        ["jobflowa-b"], ["jobflowa-a"], {"phase": "Running"})
    assert [{k: v for k, v in e.items() if k != "runningHistories"} for e in status["jobStatusList"]] == [
        {"name": "jobflowa-a", "state": JP.COMPLETED, "startTimestamp": created_a,
         "endTimestamp": "2026-01-01T00:00:01Z", "restartCount": 1},
        {"name": "jobflowa-b", "state": JP.RUNNING, "startTimestamp": created_b}]
    assert status["conditions"] == {
        "jobflowa-a": {"phase": JP.COMPLETED, "createTime": created_a, "runningDuration": "1s"},
        "jobflowa-b": {"phase": JP.RUNNING, "createTime": created_b}}


@pytest.mark.parametrize("namespace, label, listed", [
    # TestSyncJobTemplateFunc: a vcjob labelled for the template, made by hand, not by a JobFlow
    pytest.param(NS, "default.jobtemplate", ["job1"], id="SyncJobTemplate-success-case"),
    # addJob/syncJobTemplate: the label names the template's namespace; a vcjob elsewhere is not listed (Volcano lists
    # the template's namespace only)
    pytest.param("other", "default.jobtemplate", None, id="a-vcjob-of-another-namespace"),
    # a value without the namespace part names no template (TestAddJob's value, `volcano.sh/createdByJobTemplate`,
    # is no valid label value: an API server refuses it)
    pytest.param(NS, "jobtemplate", None, id="a-label-naming-no-template"),
])
def test_sync_jobtemplate_func(env, namespace, label, listed):
    env.template("jobtemplate")
    env.client.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {
        "name": "job1", "namespace": namespace, "labels": {flow.CREATED_BY_JOB_TEMPLATE: label},
        "annotations": {flow.CREATED_BY_JOB_TEMPLATE: label}}, "spec": SPEC})
    env.drain()
    status = env.get(kinds.JOBTEMPLATE, "jobtemplate").get("status") or {}
    assert status.get("jobDependsOnList") == listed
