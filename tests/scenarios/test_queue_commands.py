"""Queues and Commands through the whole embedded control plane on a virtual clock: the queue
controller's states (Open on creation, Closing while PodGroups are left, Closed, parents closing
and reopening their children) and bus.volcano.sh Commands consumed by the queue and vcjob
controllers, as Volcano's pkg/controllers/queue and job controller do."""
import pytest

from tests.scenarios.test_embedded_control_plane import kubelet, start
from vclite.api import bus, kinds, meta
from vclite.lib import errors


def queue(name, **spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, **spec}}


def vcjob(name, queue_name):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"queue": queue_name, "minAvailable": 1, "tasks": [{"name": "main", "replicas": 1, "template": {
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "image": "busybox", "command": ["true"],
                     "resources": {"requests": {"cpu": "1"}}}]}}}]}}


def command(rt, kind, name, action, namespace="default"):
    target = rt.client.get(kind, namespace if kind.namespaced else "", name)
    cmd = bus.command_for(target, kind, action)
    cmd["metadata"]["namespace"] = namespace
    return rt.client.create(cmd)


def state(rt, name):
    return (rt.client.get(kinds.QUEUE, "", name).get("status") or {}).get("state")


def closed_by_parent(rt, name):
    return meta.annotations(rt.client.get(kinds.QUEUE, "", name)).get("volcano.sh/closed-by-parent")


def events(rt, name, reason):
    return [(e["type"], e["message"], e["source"]["component"]) for e in rt.client.list(kinds.EVENT)
            if e["involvedObject"]["name"] == name and e["reason"] == reason]


def test_a_queue_created_without_state_is_opened_and_given_the_root_parent():
    rt = start("")
    rt.client.create(queue("q1"))
    rt.settle()
    q = rt.client.get(kinds.QUEUE, "", "q1")
    assert q["status"]["state"] == "Open" and q["spec"]["parent"] == "root"
    assert "parent" not in rt.client.get(kinds.QUEUE, "", "root")["spec"]


def test_closing_a_queue_waits_for_its_podgroups_and_refuses_new_jobs():
    rt = start("")
    rt.client.create(queue("q1"))
    rt.client.create(vcjob("j", "q1"))
    rt.settle()
    command(rt, kinds.QUEUE, "q1", "CloseQueue")
    rt.settle()
    assert state(rt, "q1") == "Closing" and rt.client.list(kinds.COMMAND) == []
    assert events(rt, "q1", "CloseQueue") == [("Normal", "Close queue succeed", "vc-controller-manager")]
    with pytest.raises(errors.Invalid, match="can only submit job to queue with state `Open`"):
        rt.client.create(vcjob("late", "q1"))
    while kubelet(rt):
        rt.settle()
    assert meta.phase(rt.client.get(kinds.JOB, "default", "j")) == "Completed"
    assert rt.client.list(kinds.PODGROUP) == [] and state(rt, "q1") == "Closed"   # its last PodGroup went
    command(rt, kinds.QUEUE, "q1", "OpenQueue")
    rt.settle()
    assert state(rt, "q1") == "Open" and closed_by_parent(rt, "q1") == "false"


def test_a_parent_closes_and_reopens_its_children():
    rt = start("")
    for q in (queue("p"), queue("c1", parent="p"), queue("c2", parent="p")):
        rt.client.create(q)
    rt.settle()
    command(rt, kinds.QUEUE, "c2", "CloseQueue")      # closed by itself: stays closed when p reopens
    rt.settle()
    command(rt, kinds.QUEUE, "p", "CloseQueue")
    rt.settle()
    assert [state(rt, n) for n in ("p", "c1", "c2")] == ["Closed"] * 3
    assert closed_by_parent(rt, "c1") == "true" and closed_by_parent(rt, "c2") is None
    rt.client.create(queue("c3", parent="p"))         # a new child of a closed parent is closed too
    rt.settle()
    assert state(rt, "c3") == "Closed" and closed_by_parent(rt, "c3") == "true"
    command(rt, kinds.QUEUE, "p", "OpenQueue")
    rt.settle()
    assert [state(rt, n) for n in ("p", "c1", "c2", "c3")] == ["Open", "Open", "Closed", "Open"]


def test_opening_a_child_of_a_closed_parent_is_retried_then_reported():
    rt = start("")
    rt.client.create(queue("p"))
    rt.client.create(queue("c", parent="p"))
    rt.settle()
    command(rt, kinds.QUEUE, "p", "CloseQueue")
    rt.settle()
    command(rt, kinds.QUEUE, "c", "OpenQueue")
    rt.settle()   # (the virtual clock runs the back-off out)
    assert state(rt, "c") == "Closed"
    assert [e[:1] for e in events(rt, "c", "OpenQueue")] == [("Warning",)]
    assert "its parent queue p is closing or closed" in events(rt, "c", "OpenQueue")[0][1]


def test_the_root_queue_is_never_closed():
    rt = start("")
    command(rt, kinds.QUEUE, "root", "CloseQueue")
    rt.settle()
    assert state(rt, "root") == "Open" and rt.client.list(kinds.COMMAND) == []


def test_a_job_command_is_consumed_once_and_runs_its_action():
    rt = start("")
    rt.client.create(vcjob("j", "default"))
    rt.settle()
    kubelet(rt)
    rt.settle()
    command(rt, kinds.JOB, "j", "AbortJob")
    rt.settle()
    assert meta.phase(rt.client.get(kinds.JOB, "default", "j")) == "Aborting"   # while its pods stop
    kubelet(rt)
    rt.settle()
    assert meta.phase(rt.client.get(kinds.JOB, "default", "j")) == "Aborted"
    assert rt.client.list(kinds.COMMAND) == []
    assert [m for _, m, _ in events(rt, "j", "CommandIssued")] == [
        "Start to execute command AbortJob, and clean it up to make sure executed not more than once."]
    command(rt, kinds.JOB, "j", "ResumeJob")
    rt.settle()
    assert meta.phase(rt.client.get(kinds.JOB, "default", "j")) in ("Restarting", "Pending", "Running")


def test_commands_for_other_targets_are_left_alone_and_a_missing_job_s_is_consumed():
    rt = start("")
    rt.client.create(vcjob("j", "default"))
    rt.settle()
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": "u"}
    rt.client.create({"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
                      "metadata": {"name": "other", "namespace": "default"}, "target": ref, "action": "AbortJob"})
    gone = dict(ref, apiVersion="batch.volcano.sh/v1alpha1", kind="Job", name="nobody")
    rt.client.create({"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
                      "metadata": {"name": "gone", "namespace": "default"}, "target": gone, "action": "AbortJob"})
    rt.settle()
    assert [meta.name(c) for c in rt.client.list(kinds.COMMAND)] == ["other"]
    assert meta.phase(rt.client.get(kinds.JOB, "default", "j")) != "Aborted"


@pytest.mark.parametrize("body, field", [
    pytest.param({"target": {"kind": "Job", "name": "j", "uid": "u"}}, "target.apiVersion", id="reference incomplete"),
    pytest.param({"target": "j"}, "target", id="target not an object"),
    pytest.param({"action": 3}, "action", id="action not a string"),
])
def test_a_malformed_command_is_refused(body, field):
    rt = start("")
    with pytest.raises(errors.Invalid) as caught:
        rt.client.create({"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
                          "metadata": {"name": "bad", "namespace": "default"}, **body})
    assert field in str(caught.value)
    assert rt.client.list(kinds.COMMAND) == []


def test_commands_issued_while_no_controller_ran_are_carried_out_at_start():
    from tests.scenarios.test_embedded_control_plane import NODE
    from vclite.lib import clock
    from vclite.runtime import runtime
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    rt.client.create(queue("q1"))
    command(rt, kinds.QUEUE, "q1", "CloseQueue")
    rt.start()
    rt.settle()
    assert state(rt, "q1") == "Closed" and rt.client.list(kinds.COMMAND) == []


def test_a_request_being_retried_does_not_hold_up_the_queue_s_others():
    """Opening a child of a closed parent is retried; meanwhile the child still moves from Closing
    to Closed when its last PodGroup goes, and a later Command is consumed at once."""
    rt = start("")
    rt.client.create(queue("p"))
    rt.client.create(queue("c", parent="p"))
    rt.client.create(vcjob("j", "c"))
    rt.settle()
    command(rt, kinds.QUEUE, "p", "CloseQueue")
    rt.step()
    assert state(rt, "c") == "Closing"
    command(rt, kinds.QUEUE, "c", "OpenQueue")      # refused while p is closed: retried
    rt.step()
    command(rt, kinds.QUEUE, "c", "CloseQueue")
    rt.step()
    assert rt.client.list(kinds.COMMAND) == []
    kubelet(rt)
    rt.step()
    kubelet(rt)
    for _ in range(5):
        rt.step()
    assert rt.client.list(kinds.PODGROUP) == [] and state(rt, "c") == "Closed"
    rt.settle()   # the retries run out: Volcano's words
    (warning,) = events(rt, "c", "OpenQueue")
    assert warning[1] == ("OpenQueue queue failed for sync queue c failed for Failed to open queue c because its "
                          "parent queue p is closing or closed. Open the parent queue first., event is CommandIssued, "
                          "action is OpenQueue")


def test_a_state_nobody_knows_is_reported_once_retries_run_out():
    rt = start("")
    rt.client.create(queue("q1"))
    rt.settle()
    # (a state the CRD's enum refuses: only a store an older version wrote, or another tool, can hold it)
    stored = rt.client.get(kinds.QUEUE, "", "q1")
    rt.client.store.update(kinds.QUEUE, {**stored, "status": {**stored["status"], "state": "Paused"}},
                           subresource="status")
    command(rt, kinds.QUEUE, "q1", "CloseQueue")
    rt.settle()
    assert [e[:2] for e in events(rt, "q1", "CloseQueue")] == [
        ("Warning", "CloseQueue queue failed for queue q1 state Paused is invalid")]


@pytest.mark.parametrize("kind, name", [pytest.param(kinds.JOB, "j", id="job"), pytest.param(kinds.QUEUE, "q1", id="queue")])
def test_a_command_whose_target_goes_before_it_is_handled_is_still_consumed(kind, name):
    rt = start("")
    rt.client.create(queue("q1"))
    rt.client.create(vcjob("j", "q1"))
    rt.settle()
    if kind is kinds.QUEUE:
        rt.client.delete(kinds.JOB, "default", "j")
        rt.settle()
    cmd = command(rt, kind, name, "CloseQueue" if kind is kinds.QUEUE else "AbortJob")
    cmd_copy = dict(cmd, metadata={"name": "orphan", "namespace": "default"})   # no owner: not collected
    rt.client.create(cmd_copy)
    rt.client.delete(kind, "default" if kind.namespaced else "", name)
    rt.settle()
    assert rt.client.list(kinds.COMMAND) == []


def test_a_write_that_fails_keeps_the_request_for_the_runtime_s_retry(monkeypatch):
    rt = start("")
    rt.client.create(queue("q1"))
    rt.settle()
    real_patch, failures = rt.client.patch, []

    def flaky_patch(kind, namespace, name, patch, status=False):
        if kind is kinds.QUEUE and status and not failures:
            failures.append(name)
            raise errors.Conflict("the object has been modified")
        return real_patch(kind, namespace, name, patch, status=status)

    monkeypatch.setattr(rt.client, "patch", flaky_patch)
    command(rt, kinds.QUEUE, "q1", "CloseQueue")
    rt.settle()
    assert failures == ["q1"] and state(rt, "q1") == "Closed" and rt.client.list(kinds.COMMAND) == []
