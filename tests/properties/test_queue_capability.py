"""A queue never exceeds its capability (Hypothesis): over random clusters, queues with capabilities
on some of cpu, memory and nvidia.com/gpu, and jobs, Volcano's default configuration is run session
after session — each session's binds applied (the pods then run), PodGroup statuses written back, and
some running pods finishing in between — and after every session each queue's bound, unfinished pods
request no more than its capability on every dimension the capability sets. (Volcano's proportion
plugin enforces it through `Allocatable`: allocated + request ≤ deserved ≤ capability.)"""
from __future__ import annotations

import datetime as dt
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.api import resources
from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
CONF = conf.default_conf()
GPU = "nvidia.com/gpu"
FINISHED = ("Succeeded", "Failed")


@st.composite
def capabilities(draw):
    cap = {}
    if draw(st.booleans()):
        cap["cpu"] = f"{draw(st.integers(1, 12))}"
    if draw(st.booleans()):
        cap["memory"] = f"{draw(st.integers(1, 24))}Gi"
    if draw(st.booleans()):
        cap[GPU] = str(draw(st.integers(0, 4)))
    return cap


@st.composite
def clusters(draw):
    nodes = []
    for i in range(draw(st.integers(1, 4))):
        alloc = {"cpu": str(draw(st.integers(1, 8))), "memory": f"{draw(st.integers(1, 16))}Gi",
                 "pods": str(draw(st.integers(2, 10)))}
        if draw(st.booleans()):
            alloc[GPU] = str(draw(st.integers(1, 4)))
        nodes.append({"metadata": {"name": f"n{i}"}, "status": {"allocatable": alloc}})
    queues = []
    for i in range(draw(st.integers(1, 3))):
        spec = {"weight": draw(st.integers(1, 3))}
        cap = draw(capabilities())
        if cap:
            spec["capability"] = cap
        queues.append({"metadata": {"name": f"q{i}"}, "spec": spec, "status": {"state": "Open"}})
    pgs, pods = [], []
    for j in range(draw(st.integers(1, 6))):
        group, n_tasks = f"g{j}", draw(st.integers(1, 4))
        spec = {"queue": draw(st.sampled_from(queues))["metadata"]["name"],
                "minMember": draw(st.integers(0, n_tasks))}
        if draw(st.booleans()):
            spec["minResources"] = {"cpu": f"{draw(st.integers(0, 4000))}m"}
        pgs.append({"metadata": {"name": group, "namespace": "ns", "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                    "spec": spec, "status": {"phase": draw(st.sampled_from(["Pending", "Inqueue"]))}})
        for t in range(n_tasks):
            requests = {"cpu": f"{draw(st.integers(100, 4000))}m", "memory": f"{draw(st.integers(64, 8192))}Mi"}
            if draw(st.integers(0, 3)) == 0:
                requests[GPU] = str(draw(st.integers(1, 2)))
            pods.append({"metadata": {"name": f"{group}-{t}", "namespace": "ns", "uid": f"{group}-{t}",
                                      "annotations": {"scheduling.k8s.io/group-name": group}},
                         "spec": {"schedulerName": "volcano",
                                  "containers": [{"name": "c", "resources": {"requests": requests}}]},
                         "status": {"phase": "Pending"}})
    return snapshot.ClusterState(nodes, queues, pgs, pods)


def _queue_use(state: snapshot.ClusterState) -> dict[str, dict[str, Fraction]]:
    queue_of = {pg["metadata"]["name"]: pg["spec"]["queue"] for pg in state.podgroups}
    use: dict[str, dict[str, Fraction]] = {}
    for p in state.pods:
        if p["spec"].get("nodeName") and p["status"]["phase"] not in FINISHED:
            q = queue_of[p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]]
            use[q] = resources.add(use.get(q, {}), resources.pod_requests(p))
    return use


def _apply(state: snapshot.ClusterState, result: session.SessionResult) -> None:
    for p in state.pods:
        node = result.binds.get(f"ns/{p['metadata']['name']}")
        if node:
            p["spec"]["nodeName"], p["status"]["phase"] = node, "Running"
    for pg in state.podgroups:
        status = result.podgroup_status.get(f"ns/{pg['metadata']['name']}")
        if status is not None:
            pg["status"] = status


@settings(max_examples=120, deadline=None)
@given(clusters(), st.lists(st.sets(st.integers(0, 30), max_size=4), min_size=2, max_size=4))
def test_no_queue_ever_exceeds_its_capability(state, finishing):
    caps = {q["metadata"]["name"]: resources.from_resource_list(q["spec"]["capability"])
            for q in state.queues if q["spec"].get("capability")}
    for session_no, done in enumerate(finishing):
        result = session.run_session(state, CONF, NOW + dt.timedelta(seconds=session_no))
        _apply(state, result)
        for q, used in _queue_use(state).items():
            for dim, cap in caps.get(q, {}).items():
                if dim in ("cpu", "memory") and cap <= 0:
                    continue   # Volcano: a cpu/memory capability ≤ 0 means unlimited
                assert used.get(dim, 0) <= cap, (session_no, q, dim, used, caps[q], result.binds)
        running = [p for p in state.pods if p["status"]["phase"] == "Running"]
        for i in sorted(done):   # some running pods finish before the next session
            if i < len(running):
                running[i]["status"]["phase"] = "Succeeded"
