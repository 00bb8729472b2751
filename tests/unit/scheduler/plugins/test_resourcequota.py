"""resourcequota: Volcano's plugin test rows (resourcequota_test.go), ported, and the arithmetic: a
PodGroup is not enqueued while minResources + what the namespace uses (+ what this session already
enqueued there) exceeds a ResourceQuota's hard limit."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session, snapshot
from vclite.scheduler.plugins import resourcequota

from .. import objects

HUGE = {"cpu": "20000m", "memory": "20G"}
NORMAL = {"cpu": "2000m", "memory": "2G"}


def rq(name, ns, hard, used=None):
    status = {"hard": hard}
    if used is not None:
        status["used"] = used
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"hard": hard}, "status": status}


def state(podgroups, quotas=(), pods=(), nodes=(), queues=None):
    st = objects.state(nodes=nodes, queues=queues or [objects.queue("c1"), objects.queue("q1")],
                       podgroups=podgroups, pods=pods)
    st.resource_quotas = list(quotas)
    return st


def tiers(*extra):
    return [[conf.plugin("resourcequota", enableJobEnqueued=True), *extra]]


# ---- TestResourceQuotaPlugin -------------------------------------------------------------------------
@pytest.mark.parametrize("pg, quotas, want", [
    pytest.param(objects.pg("default/pg1", q="c1", min_member=2, min_resources=NORMAL),
                 [rq("test", "default", NORMAL)], True, id="ResourceQuota capacity can match the needs of this pg"),
    pytest.param(objects.pg("default/pg2", q="c1", min_member=2, min_resources=HUGE),
                 [rq("test", "default", NORMAL)], False,
                 id="ResourceQuota capacity can't match the needs of this pg"),
    pytest.param(objects.pg("default/pg2", q="c1", min_member=2, min_resources=HUGE), [], True,
                 id="No ResourceQuota resource object"),
    pytest.param(objects.pg("default/pg3", q="c1", min_member=2), [rq("test", "default", NORMAL)], True,
                 id="MinResources field of pg is not set"),
])
def test_resource_quota_plugin(pg, quotas, want):
    ssn = session.open_session(state([pg], quotas), conf.build("enqueue", tiers()), objects.NOW)
    assert [ssn.job_enqueueable(job) for job in ssn.jobs.values()] == [want]


# ---- TestJobEnqueuedOnOtherPluginsReject -------------------------------------------------------------
class Rejecter:
    """Volcano's uthelper.RejecterPlugin: rejects one job at enqueue, abstains on the others."""
    name = "test-rejecter"
    Arguments = plugin.NoArguments

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.JOB_ENQUEUEABLE,
                lambda job: hooks.Vote.REJECT if job.name == "pgA" else hooks.Vote.ABSTAIN)

    def on_session_close(self, ssn):
        return None


def test_a_job_another_plugin_rejects_takes_no_quota():
    one = {"cpu": "1", "memory": "1G"}
    st = state([objects.pg("ns1/pgA", q="q1", phase="Pending", min_resources=one),
                objects.pg("ns1/pgB", q="q1", phase="Pending", min_resources=one)],
               [rq("rq1", "ns1", one)],
               pods=[objects.pod("ns1/podA", "pgA", cpu="1", mem="1G"),
                     objects.pod("ns1/podB", "pgB", cpu="1", mem="1G")],
               nodes=[objects.node("n1", cpu="4", mem="4G", pods="10")])
    reg = registry.default_registry().with_plugins(Rejecter)
    c = conf.build("enqueue", [[conf.plugin("resourcequota", enableJobEnqueued=True),
                                conf.plugin("test-rejecter", enableJobEnqueued=True)]], registry=reg)
    result = session.run_session(st, c, objects.NOW)
    assert result.podgroup_status["ns1/pgB"]["phase"] == "Inqueue"
    assert (result.podgroup_status.get("ns1/pgA") or {}).get("phase", "Pending") == "Pending"


# ---- vclite's rows --------------------------------------------------------------------------------------
def _phases(result, keys):
    return [(result.podgroup_status.get(k) or {}).get("phase", "Pending") for k in keys]


def test_jobs_enqueued_in_a_session_count_against_the_quota_of_their_namespace_only():
    one = {"cpu": "1", "requests.cpu": "1", "pods": "1", "count/pods": "1"}
    pgs = [objects.pg(f"{ns}/{n}", phase="Pending", min_resources=one) for ns, n in
           (("a", "j1"), ("a", "j2"), ("a", "j3"), ("b", "j1"))]
    quotas = [rq("q", "a", {"requests.cpu": "3", "pods": "5"}, used={"requests.cpu": "1", "pods": "1"}),
              rq("q", "b", {"pods": "0"}, used={"pods": "0"})]
    result = session.run_session(state(pgs, quotas, queues=[objects.queue("default")]),
                                 conf.build("enqueue", tiers()), objects.NOW)
    # a: used 1 of 3 cpu: j1 and j2 fit, j3 would be the fourth; b allows no pod at all
    assert _phases(result, ["a/j1", "a/j2", "a/j3", "b/j1"]) == ["Inqueue", "Inqueue", "Pending", "Pending"]
    (cond,) = [c for c in result.podgroup_status["a/j3"]["conditions"] if c["type"] == "Unschedulable"]
    assert cond["message"] == ("resource quota insufficient, requested: requests.cpu=1, used: requests.cpu=1, "
                               "limited: requests.cpu=3")
    (cond,) = [c for c in result.podgroup_status["b/j1"]["conditions"] if c["type"] == "Unschedulable"]
    assert cond["message"] == "resource quota insufficient, requested: pods=1, used: pods=0, limited: pods=0"


@pytest.mark.parametrize("min_resources, quotas, pending, want", [
    pytest.param({"cpu": F(1)}, [({"cpu": F(2)}, {"cpu": F(1)})], {}, None, id="fits exactly"),
    pytest.param({"cpu": F(1)}, [({"cpu": F(2)}, {"cpu": F(1)})], {"cpu": F(1, 2)},
                 "resource quota insufficient, requested: cpu=1, used: cpu=1, limited: cpu=2",
                 id="pending counts; the message shows the quota's used"),
    pytest.param({"cpu": F(1), "memory": F(2**30)}, [({"memory": F(2**29)}, {})], {},
                 "resource quota insufficient, requested: memory=1Gi, used: memory=0, limited: memory=512Mi",
                 id="only the names the quota lists"),
    pytest.param({"nvidia.com/gpu": F(1)}, [({"cpu": F(0)}, {})], {}, None, id="a name no quota lists"),
    pytest.param({"cpu": F(1)}, [({"cpu": F(5)}, {}), ({"cpu": F(1, 2)}, {})], {},
                 "resource quota insufficient, requested: cpu=1, used: cpu=0, limited: cpu=500m",
                 id="every quota of the namespace"),
])
def test_verdict(min_resources, quotas, pending, want):
    assert resourcequota.verdict(min_resources, quotas, pending) == want


def test_the_plugin_is_accepted_in_a_configuration():
    c = conf.parse("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: resourcequota\n  - name: gang\n")
    assert [o.name for tier in c.tiers for o in tier] == ["resourcequota", "gang"]


def test_a_session_without_quotas_permits_everything():
    st = snapshot.ClusterState(queues=[objects.queue("default")],
                               podgroups=[objects.pg("ns/j", phase="Pending", min_resources=HUGE)])
    result = session.run_session(st, conf.build("enqueue", tiers()), objects.NOW)
    assert result.podgroup_status["ns/j"]["phase"] == "Inqueue"
