"""The scheduler shell against the real in-process API: watches -> one coalesced session -> writes."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock as clock_mod
from vclite.scheduler import conf as conf_mod
from vclite.scheduler import scheduler as scheduler_mod


class Cluster:
    def __init__(self, cpu="4", conf=None):
        self.clock = clock_mod.VirtualClock()
        self.client = inprocess.new_client(self.clock)
        self.client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
        self.scheduler = scheduler_mod.Scheduler(self.client, self.clock, conf)
        self.scheduler.start()

    def podgroup(self, name, min_member, cpu_total, phase=None):
        obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"minMember": min_member, "queue": "default", "minResources": {"cpu": cpu_total}}}
        return self.client.create(obj)

    def pod(self, name, group, cpu="1", scheduler="volcano", **spec):
        return self.client.create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": {"scheduling.k8s.io/group-name": group}},
            "spec": {"schedulerName": scheduler, **spec,
                     "containers": [{"name": "c", "command": ["true"], "resources": {"requests": {"cpu": cpu}}}]}})

    def drain(self, limit=20) -> int:
        """Run sessions until the scheduler has no work; returns how many ran."""
        n = 0
        while (key := self.scheduler.queue.get()) is not None:
            self.scheduler.sync(key)
            n += 1
            assert n < limit, "the scheduler keeps waking itself up"
        return n

    def get(self, kind, name, ns="default"):
        return self.client.get(kind, ns if kind.namespaced else "", name)


def test_binds_a_gang_and_reaches_running():
    c = Cluster()
    c.podgroup("pg1", 2, "2")
    c.pod("p-0", "pg1")
    c.pod("p-1", "pg1")
    c.drain()
    for name in ("p-0", "p-1"):
        pod = c.get(kinds.POD, name)
        assert pod["spec"]["nodeName"] == "n1"
        assert {"type": "PodScheduled", "status": "True"}.items() <= pod["status"]["conditions"][0].items()
    pg = c.get(kinds.PODGROUP, "pg1")
    assert pg["status"]["phase"] == "Running"
    assert [cond["type"] for cond in pg["status"]["conditions"]] == ["Scheduled"]
    assert c.get(kinds.QUEUE, "default")["status"]["allocated"]["cpu"] == "2"


def test_gang_that_does_not_fit_stays_unbound_and_says_why():
    c = Cluster(cpu="1")
    c.podgroup("pg1", 2, "2")
    c.drain()
    pg = c.get(kinds.PODGROUP, "pg1")
    assert pg["status"]["phase"] == "Pending"
    # overcommit (before proportion in Volcano's default tiers) is the first to refuse: 1 cpu × 1.2
    assert ("resource in cluster is overused: overused cpu; "
            "job needs cpu 2 but the cluster can admit at most cpu 1200m more") in pg["status"]["conditions"][0]["message"]


def podgroup_events(c, name):
    return [(e["type"], e["reason"], e["message"], e["source"]["component"])
            for e in c.client.list(kinds.EVENT, "default")
            if e["involvedObject"]["kind"] == "PodGroup" and e["involvedObject"]["name"] == name]


@pytest.mark.parametrize("cpu, want", [
    pytest.param("4", [("Normal", "Scheduled", "pod group is ready", "volcano")], id="running: pod group is ready"),
    pytest.param("1", [], id="pending: no Scheduled event"),
])
def test_a_podgroup_status_written_running_is_told_as_a_scheduled_event(cpu, want):
    """Volcano's cache records a Normal Event Scheduled ("pod group is ready") on a PodGroup whose status
    it writes in a phase other than Pending, Inqueue or Unknown (RecordJobStatusEvent): `kubectl describe pg`."""
    c = Cluster(cpu=cpu)
    c.podgroup("pg1", 2, "2")
    c.pod("p-0", "pg1")
    c.pod("p-1", "pg1")
    c.drain()
    assert [e for e in podgroup_events(c, "pg1") if e[1] == "Scheduled"] == want


def test_quiescent_when_nothing_changes_and_woken_by_new_work():
    c = Cluster()
    c.drain()
    assert c.scheduler.queue.get() is None
    c.podgroup("pg1", 1, "1")
    assert len(c.scheduler.queue) == 1          # a new PodGroup wakes it
    c.drain()
    rv = c.get(kinds.PODGROUP, "pg1")["metadata"]["resourceVersion"]
    c.scheduler.sync(scheduler_mod.KEY)         # an extra session writes nothing
    assert c.get(kinds.PODGROUP, "pg1")["metadata"]["resourceVersion"] == rv


def test_pods_of_other_schedulers_are_ignored():
    c = Cluster()
    c.podgroup("pg1", 1, "1")
    c.pod("p-0", "pg1", scheduler="default-scheduler")
    c.drain()
    assert not c.get(kinds.POD, "p-0")["spec"].get("nodeName")


def test_queue_allocated_is_written_at_most_once_per_gap_and_always_in_the_end():
    c = Cluster()
    c.podgroup("pg1", 1, "1")
    c.pod("a-0", "pg1")
    c.drain()
    assert c.get(kinds.QUEUE, "default")["status"]["allocated"]["cpu"] == "1"   # the first change: at once
    c.podgroup("pg2", 1, "1")
    c.pod("b-0", "pg2")
    c.drain()
    assert c.get(kinds.POD, "b-0")["spec"]["nodeName"] == "n1"                  # placing is never delayed
    assert c.get(kinds.QUEUE, "default")["status"]["allocated"]["cpu"] == "1"   # the bookkeeping waits
    due = c.scheduler.queue.next_ready_at()
    assert due is not None and due - c.clock.monotonic() <= scheduler_mod.QUEUE_STATUS_GAP
    c.clock.jump_to(due)
    assert c.drain() == 1
    assert c.get(kinds.QUEUE, "default")["status"]["allocated"]["cpu"] == "2"
    assert c.get(kinds.QUEUE, "root")["status"]["allocated"]["cpu"] == "2"
    assert c.drain() == 0 and c.scheduler.queue.next_ready_at() is None        # nothing left to write


def test_a_deferred_queue_status_is_dropped_when_a_later_session_finds_the_stored_one_right():
    """A value kept for later is never written after a session has found the stored status current
    again (the pod that raised `allocated` went away within the gap); the deferred write is a chore of
    its own, not a session, and counts nothing as scheduled."""
    c = Cluster()
    c.podgroup("pg1", 1, "1")
    c.pod("a-0", "pg1")
    c.drain()
    c.podgroup("pg2", 1, "1")
    c.pod("b-0", "pg2")
    c.drain()                                                                  # allocated 2: deferred
    assert c.scheduler.queue.next_progress_at() is None                        # (a chore)
    c.client.delete(kinds.POD, "default", "b-0")
    c.drain()                                                                  # allocated 1 again
    c.clock.jump_to(c.scheduler.queue.next_ready_at())
    assert c.drain() == 1 and c.scheduler.last_result is None                  # the chore: no session
    assert c.get(kinds.QUEUE, "default")["status"]["allocated"]["cpu"] == "1"  # not the stale 2


@pytest.mark.parametrize("waiting", [0, 5], ids=["few PodGroups", "more PodGroups than finished pods' groups"])
def test_a_session_reads_running_pods_and_the_finished_pods_of_live_podgroups_only(waiting):
    c = Cluster()
    c.podgroup("pg1", 1, "1")
    for i in range(waiting):            # (the shell looks finished pods up from the smaller side)
        c.podgroup(f"wait{i}", 1, "1")
    c.pod("live-0", "pg1")
    c.pod("done-0", "pg1")
    c.pod("old-0", "gone")              # its PodGroup no longer exists
    for name in ("done-0", "old-0"):
        pod = c.get(kinds.POD, name)
        pod["status"] = {"phase": "Succeeded"}
        c.client.update_status(pod)
    pgs = c.scheduler.informers[kinds.PODGROUP.kind].list()
    assert sorted(p["metadata"]["name"] for p in c.scheduler._session_pods(pgs)) == ["done-0", "live-0"]
    pod = c.get(kinds.POD, "live-0")
    pod["status"] = {"phase": "Failed"}
    c.client.update_status(pod)
    assert sorted(p["metadata"]["name"] for p in c.scheduler._session_pods(pgs)) == ["done-0", "live-0"]
    c.client.delete(kinds.PODGROUP, "default", "pg1")
    pgs = c.scheduler.informers[kinds.PODGROUP.kind].list()
    assert c.scheduler._session_pods(pgs) == []


def _phase(c, name):
    return (c.get(kinds.PODGROUP, name).get("status") or {}).get("phase")


def test_podgroups_waiting_for_room_are_admitted_oldest_first_as_room_frees():
    c = Cluster(cpu="2")                 # 2 cpu x overcommit 1.2: room for two 1-cpu PodGroups
    for i in range(5):
        c.podgroup(f"w{i}", 1, "1")
        c.clock.advance(1)               # creation order w0 < w1 < ... (names sort the same)
    c.drain()
    assert [_phase(c, f"w{i}") for i in range(5)] == ["Inqueue", "Inqueue", "Pending", "Pending", "Pending"]
    assert sorted(key for _, members in c.scheduler.waiting.classes() for _, key, _ in members) == [
        "default/w2", "default/w3", "default/w4"]
    c.client.delete(kinds.PODGROUP, "default", "w0")     # room for one more: the oldest waiting one
    c.drain()
    assert [_phase(c, f"w{i}") for i in range(1, 5)] == ["Inqueue", "Inqueue", "Pending", "Pending"]
    assert len(c.scheduler.waiting) == 2
    c.client.delete(kinds.PODGROUP, "default", "w4")     # a waiting PodGroup deleted leaves the pool
    assert len(c.scheduler.waiting) == 1


def test_a_scheduler_started_over_waiting_podgroups_finds_them():
    c = Cluster(cpu="1")
    c.podgroup("big", 1, "2")
    c.drain()
    fresh = scheduler_mod.Scheduler(c.client, c.clock)
    fresh.start()
    assert "default/big" in fresh.waiting


def test_pod_affinity_selects_namespaces_by_their_labels_and_a_label_change_wakes_a_session():
    c = Cluster()
    c.client.create({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n2", "labels": {"kubernetes.io/hostname": "n2"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "data"}})
    c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "data",
                                                                     "labels": {"app": "db"}},
                     "spec": {"nodeName": "n2", "containers": [{"name": "c", "command": ["true"]}]}})
    c.podgroup("pg1", 1, "1")
    c.pod("near-db", "pg1", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname",
        "namespaceSelector": {"matchLabels": {"tier": "storage"}}}]}})
    c.drain()
    assert not c.get(kinds.POD, "near-db")["spec"].get("nodeName")   # no namespace is labelled tier=storage yet
    assert "pod affinity" in c.get(kinds.PODGROUP, "pg1")["status"]["conditions"][0]["message"]
    c.client.patch(kinds.NAMESPACE, "", "data", {"metadata": {"labels": {"tier": "storage"}}})
    assert c.scheduler.queue.has_ready()   # the label change wakes a session
    c.drain()
    assert c.get(kinds.POD, "near-db")["spec"]["nodeName"] == "n2"
    assert c.get(kinds.NAMESPACE, "data")["metadata"]["labels"] == {
        "kubernetes.io/metadata.name": "data", "tier": "storage"}


WITH_QUOTAS = conf_mod.DEFAULT_CONF_YAML.replace("  - name: conformance", "  - name: conformance\n  - name: resourcequota")


@pytest.mark.parametrize("conf_text, sessions", [
    pytest.param(conf_mod.DEFAULT_CONF_YAML, 0, id="default configuration: no plugin reads quotas"),
    pytest.param(WITH_QUOTAS, 1, id="with the resourcequota plugin"),
])
def test_a_quota_status_write_wakes_a_session_only_when_a_plugin_reads_quotas(conf_text, sessions):
    """The resourcequota controller writes status.used each time a pod starts or ends in the namespace: a
    scheduler whose plugins do not read quotas runs no session for it."""
    c = Cluster(conf=conf_mod.parse(conf_text))
    quota = c.client.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rq",
                                                                                       "namespace": "default"},
                             "spec": {"hard": {"pods": "10"}}})
    c.drain()
    c.client.update_status({**quota, "status": {"hard": {"pods": "10"}, "used": {"pods": "1"}}})
    assert c.drain() == sessions


def test_a_pod_waits_for_its_claim_and_is_bound_once_the_claim_is():
    """kube's VolumeBinding PreFilter through the shell: the pod's claim missing, then Pending, then Bound — the
    scheduler watches claims, and the claim's binding alone wakes the session that places the pod."""
    c = Cluster()
    c.podgroup("pg1", 1, "1")
    c.pod("p-0", "pg1", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
    c.drain()
    cond = c.get(kinds.POD, "p-0")["status"]["conditions"][0]
    assert (cond["reason"], cond["message"]) == ("Unschedulable", "0/1 nodes are unavailable: 1 plugin VolumeBinding "
                                                 'pre-predicates failed persistentvolumeclaim "data" not found.')
    pvc = c.client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": "data", "namespace": "default"},
                           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert c.drain() >= 1
    assert "nodeName" not in c.get(kinds.POD, "p-0")["spec"]
    assert "unbound immediate" in c.get(kinds.POD, "p-0")["status"]["conditions"][0]["message"]
    pvc = c.client.update({**pvc, "spec": {**pvc["spec"], "volumeName": "pv-1"}})
    assert c.drain() == 0   # (its volumeName alone changes nothing the session reads)
    c.client.update_status({**pvc, "status": {"phase": "Bound"}})
    assert c.drain() >= 1
    assert c.get(kinds.POD, "p-0")["spec"]["nodeName"] == "n1"


def test_sessions_know_the_claims_only_while_a_pod_to_place_names_one():
    """(VolumeBinding is then not even asked of the pods without claims: ClusterState.claims None)"""
    c = Cluster()
    seen = []
    real = scheduler_mod.session_mod.run_session
    scheduler_mod.session_mod.run_session = lambda state, *a, **k: seen.append(state.claims) or real(state, *a, **k)
    try:
        c.podgroup("pg1", 1, "1")
        c.pod("p-0", "pg1")
        c.drain()
        c.podgroup("pg2", 1, "1")
        c.pod("p-1", "pg2", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
        c.drain()
    finally:
        scheduler_mod.session_mod.run_session = real
    assert seen[0] is None and seen[-1] == []
