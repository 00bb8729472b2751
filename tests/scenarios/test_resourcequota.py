"""ResourceQuota on the embedded control plane (virtual clock): admission refuses what would exceed
`spec.hard`, the resourcequota controller keeps `status.used`, and a vcjob whose pods are refused
behaves as Volcano's job controller: a FailedCreate Warning naming the quota, retries with back-off,
and, after --max-requeue-num retries, the job terminated."""
from __future__ import annotations

import pytest

from vclite.api import kinds, meta
from vclite.lib import clock, errors
from vclite.runtime import runtime

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def quota(hard, name="q", ns="default"):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns},
            "spec": {"hard": hard}}


def pod(name, cpu="1", phase=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"restartPolicy": "Never", "containers": [
             {"name": "main", "command": ["true"], "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}
    if phase:
        p["status"] = {"phase": phase}
    return p


def vcjob(name="j", replicas=3, cpu="1"):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": replicas, "schedulerName": "volcano", "tasks": [
                {"name": "t", "replicas": replicas, "template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "command": ["true"], "resources": {"requests": {"cpu": cpu}}}]}}}]}}


@pytest.fixture
def rt():
    r = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    r.start()
    yield r


def status(rt, name="q"):
    return rt.client.get(kinds.RESOURCEQUOTA, "default", name).get("status")


def test_status_follows_the_namespace_pods(rt):
    rt.client.create(quota({"pods": "3", "requests.cpu": "4", "limits.cpu": "4", "count/configmaps": "5"}))
    rt.settle()
    assert status(rt) == {"hard": {"pods": "3", "requests.cpu": "4", "limits.cpu": "4", "count/configmaps": "5"},
                          "used": {"pods": "0", "requests.cpu": "0", "limits.cpu": "0", "count/configmaps": "0"}}
    rt.client.create(pod("a", "500m"))
    rt.client.create(pod("b", "1"))
    rt.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "namespace": "default"}})
    rt.settle()
    assert status(rt)["used"] == {"pods": "2", "requests.cpu": "1500m", "limits.cpu": "1500m", "count/configmaps": "1"}
    b = rt.client.get(kinds.POD, "default", "b")
    rt.client.update_status({**b, "status": {"phase": "Succeeded"}})   # a finished pod frees what it used
    rt.settle()
    assert status(rt)["used"]["requests.cpu"] == "500m" and status(rt)["used"]["pods"] == "1"
    rt.client.delete(kinds.POD, "default", "a")
    rt.settle()
    assert status(rt)["used"]["pods"] == "0"


def test_services_count_their_load_balancers_and_node_ports(rt):
    rt.client.create(quota({"services": "5", "services.loadbalancers": "1", "services.nodeports": "3"}))

    def service(name, type_, ports):
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                "spec": {"type": type_, "ports": [{"name": f"p{i}", "port": 80 + i} for i in range(ports)]}}
    rt.client.create(service("lb", "LoadBalancer", 2))
    rt.client.create(service("plain", "ClusterIP", 4))
    with pytest.raises(errors.Forbidden, match="exceeded quota: q, requested: services.loadbalancers=1, "
                                               "used: services.loadbalancers=1, limited: services.loadbalancers=1"):
        rt.client.create(service("lb2", "LoadBalancer", 1))
    with pytest.raises(errors.Forbidden, match="requested: services.nodeports=2, used: services.nodeports=2"):
        rt.client.create(service("np", "NodePort", 2))
    rt.client.create(service("np", "NodePort", 1))
    rt.settle()
    assert status(rt)["used"] == {"services": "3", "services.loadbalancers": "1", "services.nodeports": "3"}


def test_events_are_counted_as_admission_counts_them(rt):
    rt.client.create(quota({"count/events": "1"}))
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R", "message": "m"}
    rt.client.create(event)
    rt.settle()
    assert status(rt)["used"] == {"count/events": "1"}
    with pytest.raises(errors.Forbidden, match="exceeded quota: q, requested: count/events=1"):
        rt.client.create({**event, "metadata": {"name": "e2", "namespace": "default"}})


@pytest.mark.parametrize("hard, create, message", [
    pytest.param({"pods": "1"}, [pod("a"), pod("b")],
                 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1',
                 id="pods"),
    pytest.param({"requests.cpu": "2", "limits.cpu": "10"}, [pod("a", "1500m"), pod("b", "1")],
                 'pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=1, used: requests.cpu=1500m, '
                 'limited: requests.cpu=2', id="requests.cpu, only the name exceeded"),
    pytest.param({"cpu": "1", "memory": "1Gi"}, [pod("a", "2")],
                 'pods "a" is forbidden: failed quota: q: must specify memory for: main', id="must specify"),
    pytest.param({"count/pods": "1"}, [pod("a", phase="Succeeded"), pod("b")],
                 'pods "b" is forbidden: exceeded quota: q, requested: count/pods=1, used: count/pods=1, '
                 'limited: count/pods=1', id="count/pods counts finished pods too"),
])
def test_admission_refuses_what_exceeds_hard(rt, hard, create, message):
    rt.client.create(quota(hard))
    with pytest.raises(errors.Forbidden) as info:
        for obj in create:
            rt.client.create(obj)
    assert str(info.value) == message
    assert meta.name(create[-1]) not in {meta.name(p) for p in rt.client.list(kinds.POD)}


def test_a_finished_pod_makes_room(rt):
    rt.client.create(quota({"pods": "1"}))
    rt.client.create(pod("a"))
    a = rt.client.get(kinds.POD, "default", "a")
    rt.client.update_status({**a, "status": {"phase": "Failed"}})
    rt.client.create(pod("b"))   # (admitted: a no longer counts)


def test_another_namespace_is_not_limited(rt):
    rt.client.create(quota({"pods": "0"}, ns="team"))
    rt.client.create(pod("a"))


def test_a_vcjob_whose_pods_exceed_the_quota_is_terminated_after_retries(rt):
    rt.client.create(quota({"pods": "2"}))
    rt.client.create(vcjob(replicas=3))
    for _ in range(5):
        rt.step()
    assert len(rt.client.list(kinds.POD, "default")) == 2   # the third is refused (and retried)
    rt.settle()
    warnings = [e for e in rt.client.list(kinds.EVENT, "default") if e["reason"] == "FailedCreate"]
    assert warnings and "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2" in warnings[0]["message"]
    job = rt.client.get(kinds.JOB, "default", "j")
    assert job["status"]["state"]["phase"] == "Terminated", job["status"]
    assert rt.client.list(kinds.POD, "default") == []   # (a terminated job's pods are deleted)
    executed = [e["message"] for e in rt.client.list(kinds.EVENT, "default") if e["reason"] == "ExecuteAction"]
    assert "Job failed on action SyncJob for retry limit reached" in executed, executed


def test_a_refused_vcjobs_retry_is_a_chore_so_a_run_with_nothing_else_left_is_stuck(rt):
    """Only another pod's end or a quota change can let the third pod in: the retry alone moves nothing, so
    `vcctl run` can stop at once and say why (before, it counted as progress until the job was terminated)."""
    rt.client.create(quota({"pods": "2"}))
    rt.client.create(vcjob(replicas=3))
    for _ in range(5):
        rt.step()
    assert len(rt.client.list(kinds.POD, "default")) == 2
    assert rt.next_timer() is not None   # (the retry is still due: a server keeps trying)
    assert not rt.awaits_progress()


def test_a_quota_change_tries_a_refused_vcjob_again_at_once(rt):
    rt.client.create(quota({"pods": "2"}))
    rt.client.create(vcjob(replicas=3))
    for _ in range(5):
        rt.step()
    q = rt.client.get(kinds.RESOURCEQUOTA, "default", "q")
    rt.client.update({**q, "spec": {"hard": {"pods": "3"}}})
    rt.step()   # (no clock moved: not the back-off's retry)
    assert len(rt.client.list(kinds.POD, "default")) == 3


def test_a_pod_refused_for_another_reason_is_retried_as_progress(rt):
    """Only a quota's refusal waits on others; any other failed create is retried as before (progress)."""
    rt.client.create(vcjob(replicas=1) | {"spec": {**vcjob()["spec"], "tasks": [
        {**vcjob()["spec"]["tasks"][0], "replicas": 1,
         "template": {"spec": {"restartPolicy": "Never", "serviceAccountName": "missing", "containers": [
             {"name": "main", "command": ["true"]}]}}}], "minAvailable": 1}})
    for _ in range(5):
        rt.step()
    assert rt.client.list(kinds.POD, "default") == []
    assert rt.awaits_progress()


def test_a_vcjob_within_the_quota_runs(rt):
    rt.client.create(quota({"pods": "3", "requests.cpu": "3"}))
    rt.client.create(vcjob(replicas=3))
    rt.settle()
    assert len(rt.client.list(kinds.POD, "default")) == 3
    assert status(rt)["used"] == {"pods": "3", "requests.cpu": "3"}


QUOTA_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: resourcequota
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def test_with_the_resourcequota_plugin_the_podgroup_waits_until_the_quota_has_room():
    from vclite.scheduler import conf as conf_mod
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False,
                         scheduler_config=conf_mod.parse(QUOTA_CONF))
    rt.start()
    rt.client.create(quota({"pods": "2"}))
    rt.client.create(vcjob(replicas=3))
    rt.settle()
    (pg,) = rt.client.list(kinds.PODGROUP, "default")
    assert pg["status"]["phase"] == "Pending"
    (cond,) = [c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable"]
    assert cond["message"] == "resource quota insufficient, requested: pods=3, used: pods=0, limited: pods=2"
    assert rt.client.list(kinds.POD, "default") == []   # no pod created, none refused: the job waits
    assert rt.client.get(kinds.JOB, "default", "j")["status"]["state"]["phase"] == "Pending"
    q = rt.client.get(kinds.RESOURCEQUOTA, "default", "q")
    rt.client.update({**q, "spec": {"hard": {"pods": "3"}}})   # the controller writes status.hard; that wakes it
    rt.settle()
    assert meta.phase(rt.client.list(kinds.PODGROUP, "default")[0]) in ("Inqueue", "Running")
    assert len(rt.client.list(kinds.POD, "default")) == 3


def test_a_scoped_quota_counts_and_limits_the_pods_its_scopes_match(rt):
    be = quota({"pods": "1"}, name="best-effort")
    be["spec"]["scopes"] = ["BestEffort"]
    rt.client.create(be)

    def best_effort(name):
        p = pod(name)
        p["spec"]["containers"][0].pop("resources")
        return p
    rt.client.create(best_effort("a"))
    rt.client.create(pod("b"))   # (it requests cpu: not best effort, not counted)
    with pytest.raises(errors.Forbidden, match="exceeded quota: best-effort, requested: pods=1, used: pods=1"):
        rt.client.create(best_effort("c"))
    rt.settle()
    assert status(rt, "best-effort") == {"hard": {"pods": "1"}, "used": {"pods": "1"}}


def test_usage_is_followed_only_once_a_quota_exists_and_what_was_made_before_counts(rt):
    rt.client.create(pod("a", "500m"))
    rt.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "namespace": "default"}})
    rt.settle()
    assert list(rt.resourcequota_controller.pods.items()) == []   # (no quota: nothing followed, nothing paid)
    rt.client.create(quota({"pods": "3", "requests.cpu": "4", "count/configmaps": "5"}))
    rt.settle()
    assert status(rt)["used"] == {"pods": "1", "requests.cpu": "500m", "count/configmaps": "1"}
    rt.client.create(pod("b", "1"))
    rt.settle()
    assert status(rt)["used"]["pods"] == "2"


FLOW = [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "a", "namespace": "default"},
         "spec": vcjob(replicas=1)["spec"]},
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f", "namespace": "default"},
         "spec": {"flows": [{"name": "a"}]}}]


def test_a_jobflow_whose_vcjob_a_quota_refuses_says_why_and_creates_it_once_there_is_room(rt):
    rt.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        rt.client.create(obj)
    for _ in range(6):
        rt.step()
    cond = rt.client.get(kinds.JOBFLOW, "default", "f")["status"]["conditions"]["f-a"]
    assert (cond["phase"], cond["reason"]) == ("Pending", "CreateRefused"), cond
    assert 'jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: q' in cond["message"]
    warnings = [e["message"] for e in rt.client.list(kinds.EVENT, "default") if e["reason"] == "CreateRefused"]
    assert len(warnings) == 1 and "exceeded quota: q" in warnings[0]   # (once, not at every retry)
    q = rt.client.get(kinds.RESOURCEQUOTA, "default", "q")
    rt.client.update({**q, "spec": {"hard": {"count/jobs.batch.volcano.sh": "1"}}})
    rt.settle()   # (the retry with back-off makes it)
    assert meta.phase(rt.client.get(kinds.JOB, "default", "f-a")) in ("Pending", "Running")
    assert rt.client.get(kinds.JOBFLOW, "default", "f")["status"]["conditions"]["f-a"].get("reason") != "CreateRefused"


def test_a_refused_vcjob_is_made_as_soon_as_a_quota_change_gives_room_even_late(rt):
    rt.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        rt.client.create(obj)
    rt.step()
    rt.clock.advance(150)   # (past the runtime's own 15 rate-limited requeues: 141.9 s, capped at 60 s each)
    rt.step()
    q = rt.client.get(kinds.RESOURCEQUOTA, "default", "q")
    rt.client.update({**q, "spec": {"hard": {"count/jobs.batch.volcano.sh": "1"}}})
    rt.step()   # (no timer: the quota's change brings the JobFlow back)
    assert meta.phase(rt.client.get(kinds.JOB, "default", "f-a")) in ("", "Pending")
    assert rt.failures == []


def test_a_vcjob_refused_for_volcanos_retry_time_fails_its_flow_with_the_quota_message(rt):
    rt.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        rt.client.create(obj)
    started = rt.clock.monotonic()
    rt.settle()
    jf = rt.client.get(kinds.JOBFLOW, "default", "f")
    cond = jf["status"]["conditions"]["f-a"]
    assert (meta.phase(jf), cond["phase"], cond["reason"]) == ("Failed", "Failed", "FailedCreate"), jf["status"]
    assert cond["message"].startswith('jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: q, ')
    assert cond["message"].endswith("over 163.8s: not tried again)")
    assert rt.clock.monotonic() - started == pytest.approx(163.835)   # (virtual time: the last try)
    assert rt.failures == []   # (nothing given up on by the runtime)
    assert not rt.client.list(kinds.JOB, "default")


def test_a_long_stop_of_the_server_does_not_count_in_the_refusal_window(tmp_path):
    """`vcctl server` refused a vcjob, was stopped for longer than the window and started again on its data
    directory: the window counts only time the control plane ran, so the flow is not failed on the first try
    after the restart (it was refused only briefly while anything ran); it waits a new window, and the
    condition keeps when the vcjob was first refused."""
    virtual = clock.VirtualClock()
    first = runtime.Runtime(virtual, nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    first.start()
    first.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        first.client.create(obj)
    first.step()
    refused_at = clock.format_micro_time(virtual.now())
    cond = first.client.get(kinds.JOBFLOW, "default", "f")["status"]["conditions"]["f-a"]
    assert (cond["reason"], cond["refusedSince"]) == ("CreateRefused", refused_at), cond
    first.close()   # (the server stops; its timers with it)
    virtual.advance(1000)   # stopped for longer than the window
    again = runtime.Runtime(virtual, nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    try:
        again.start()
        restarted = virtual.monotonic()
        again.step()
        jf = again.client.get(kinds.JOBFLOW, "default", "f")
        cond = jf["status"]["conditions"]["f-a"]
        assert (meta.phase(jf), cond["reason"], cond["refusedSince"]) == ("Pending", "CreateRefused", refused_at), \
            jf["status"]
        again.settle()   # nothing gives room: a whole new window, then the flow fails
        jf = again.client.get(kinds.JOBFLOW, "default", "f")
        cond = jf["status"]["conditions"]["f-a"]
        assert (meta.phase(jf), cond["reason"]) == ("Failed", "FailedCreate"), jf["status"]
        assert virtual.monotonic() - restarted == pytest.approx(163.835, abs=1e-3)   # (virtual time: the last try)
        assert cond["message"].endswith("over 163.8s: not tried again)")
    finally:
        again.close()


def test_a_refused_vcjob_is_made_after_a_long_stop_when_the_quota_has_room(tmp_path):
    virtual = clock.VirtualClock()
    first = runtime.Runtime(virtual, nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    first.start()
    first.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        first.client.create(obj)
    first.step()
    first.close()
    virtual.advance(1000)
    again = runtime.Runtime(virtual, nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    try:
        again.start()
        again.step()
        q = again.client.get(kinds.RESOURCEQUOTA, "default", "q")
        again.client.update({**q, "spec": {"hard": {"count/jobs.batch.volcano.sh": "1"}}})
        again.step()
        assert meta.phase(again.client.get(kinds.JOB, "default", "f-a")) in ("", "Pending")
        assert again.failures == []
    finally:
        again.close()


class _NoQuotaWatch:
    """The runtime's client, but ResourceQuotas may not be listed or watched (a cluster's credentials without
    that permission, as `vcctl controller` may have)."""

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def watch(self, kind, handler, *args, **kw):
        if kind == kinds.RESOURCEQUOTA:
            raise errors.Forbidden('resourcequotas is forbidden: User "vclite" cannot list resource "resourcequotas"')
        return self._client.watch(kind, handler, *args, **kw)


def test_without_a_quota_watch_a_refused_vcjob_is_still_made_on_its_back_off(rt):
    rt.jobflow_controller.client = _NoQuotaWatch(rt.client)
    rt.client.create(quota({"count/jobs.batch.volcano.sh": "0"}))
    for obj in FLOW:
        rt.client.create(obj)
    rt.step()
    cond = rt.client.get(kinds.JOBFLOW, "default", "f")["status"]["conditions"]["f-a"]
    assert (cond["phase"], cond["reason"]) == ("Pending", "CreateRefused"), cond   # (written: the sync did not fail)
    q = rt.client.get(kinds.RESOURCEQUOTA, "default", "q")
    rt.client.update({**q, "spec": {"hard": {"count/jobs.batch.volcano.sh": "1"}}})
    rt.clock.advance(10)   # (at most one back-off: RETRY_MAX)
    rt.step()
    assert meta.phase(rt.client.get(kinds.JOB, "default", "f-a")) in ("", "Pending")
    assert rt.failures == []
