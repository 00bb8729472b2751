"""Which controllers give a failing key up after --max-requeue-num (15) retries and which retry it for ever, as
Volcano's: the job, queue, JobFlow and JobTemplate controllers drop it; the PodGroup, CronJob, garbage collector
and HyperNode controllers (and kube-controller-manager's) re-add it rate-limited for ever, the back-off capped."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.lib import clock, workqueue
from vclite.runtime import runtime

NS = "default"
QUOTA = "no-podgroups"


def _quota(rt, hard: str) -> None:
    rq = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": QUOTA, "namespace": NS},
          "spec": {"hard": {"count/podgroups.scheduling.volcano.sh": hard}}}
    try:
        old = rt.client.get(kinds.RESOURCEQUOTA, NS, QUOTA)
    except Exception:   # noqa: BLE001 - first time
        rt.client.create(rq)
    else:
        rt.client.update({**old, "spec": rq["spec"]})


def _advance(rt) -> float:
    """One step and a jump to the next timer; the jump's length (0: no timer left)."""
    rt.step()
    now, t = rt.clock.monotonic(), rt.next_timer()
    if t is None:
        return 0.0
    rt.clock.jump_to(t)
    return t - now


def test_the_podgroup_controller_retries_a_failing_pod_for_ever_then_succeeds():
    """A bare volcano pod whose PodGroup a ResourceQuota refuses: Volcano's pg_controller re-adds the request
    rate-limited for ever (processNextReq: AddRateLimited, no maxRequeueNum), so once the quota lets it, after
    more than 15 failures, the PodGroup is made; the back-off stops growing at client-go's 1000 s."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        _quota(rt, "0")
        rt.settle(max_iterations=3)
        rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                          "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}})
        key = f"{NS}/p"
        pgc = rt.podgroup_controller
        longest = 0.0
        for _ in range(400):
            longest = max(longest, _advance(rt))
            if pgc.queue.num_requeues(key) >= 25:
                break
        assert pgc.queue.num_requeues(key) >= 25
        assert longest <= workqueue.CONTROLLER_MAX_DELAY and not rt.failures
        assert rt.client.list(kinds.PODGROUP, NS) == []
        _quota(rt, "1")
        for _ in range(50):
            if rt.client.list(kinds.PODGROUP, NS):
                break
            _advance(rt)
        groups = rt.client.list(kinds.PODGROUP, NS)
        assert [g["metadata"]["name"] for g in groups] == [rt.client.get(kinds.POD, NS, "p")["metadata"]["annotations"][
            "scheduling.k8s.io/group-name"]]
        assert pgc.queue.num_requeues(key) == 0   # forgotten once it succeeded
    finally:
        rt.close()


@pytest.mark.parametrize("component, forever", [
    ("podgroup_controller", True), ("cronjob_controller", True), ("gc_controller", True),
    ("hypernode_controller", True), ("namespace_controller", True), ("resourcequota_controller", True),
    ("disruption_controller", True), ("volume_controller", True),
    ("job_controller", False), ("queue_controller", False), ("jobflow_controller", False),
    ("jobtemplate_controller", False),
])
def test_which_components_retry_for_ever(component, forever):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        assert getattr(getattr(rt, component), "retries_forever", False) is forever
    finally:
        rt.close()


@pytest.mark.parametrize("hard, stuck", [
    pytest.param("0", True, id="refused by a quota: the retry waits on others, a run may stop at once"),
    pytest.param("1", False, id="room: the PodGroup is made, the pod goes on"),
])
def test_a_podgroup_a_quota_refuses_is_retried_as_waiting_on_others(hard, stuck):
    """The retry of a PodGroup create a ResourceQuota refused is a chore (errors.Expected.waits_on_others, as a
    vcjob's refused pods): `vcctl run` with nothing else to wait for stops as stuck at once, not after the 15
    retries' back-off (164 s); the retry itself still comes, for ever."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        _quota(rt, hard)
        rt.settle(max_iterations=3)
        rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                          "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}})
        rt.step()
        key = f"{NS}/p"
        assert rt.podgroup_controller.queue.num_requeues(key) == (1 if stuck else 0)
        assert bool(rt.client.list(kinds.PODGROUP, NS)) is not stuck
        assert rt.podgroup_controller.queue.next_progress_at() is None
        assert (rt.podgroup_controller.queue.next_ready_at() is not None) is stuck   # (retried all the same)
        assert not rt.failures
    finally:
        rt.close()
