"""task-topology: tasks of a job kept together or apart by its annotations (Volcano's plugins/task-topology):
the annotations read as Test_readTopologyFromPgAnnotations reads them, and placements in whole sessions."""
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import task_topology as tt

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue


class _Job:
    def __init__(self, roles, notes):
        self.tasks = {f"t{i}": type("T", (), {"role": r})() for i, r in enumerate(roles)}
        self.podgroup = {"metadata": {"annotations": notes}}


ROLES = ["ps", "ps", "worker", "worker", "chief", "evaluator"]
DASHED = ["ps-some", "worker-another-some", "chief-kk", "evaluator-tt"]


@pytest.mark.parametrize("roles, notes, want", [
    pytest.param(ROLES, {tt.AFFINITY: "ps,worker;ps,chief", tt.ANTI_AFFINITY: "ps;worker,chief",
                         tt.TASK_ORDER: "ps,worker,chief,evaluator"},
                 ([["ps", "worker"], ["ps", "chief"]], [["ps"], ["worker", "chief"]], ["ps", "worker", "chief",
                                                                                         "evaluator"]),
                 id="correct-annotation"),
    pytest.param(DASHED, {tt.AFFINITY: "ps-some,worker-another-some;ps-some,chief-kk",
                          tt.TASK_ORDER: "ps-some,worker-another-some,chief-kk,evaluator-tt"},
                 ([["ps-some", "worker-another-some"], ["ps-some", "chief-kk"]], [],
                  ["ps-some", "worker-another-some", "chief-kk", "evaluator-tt"]), id="names-with-dashes"),
    pytest.param(ROLES, {tt.AFFINITY: "ps,workers"}, None, id="a-task-the-job-lacks"),
    pytest.param(ROLES, {tt.ANTI_AFFINITY: "ps,ps"}, None, id="a-task-twice-in-a-group"),
    pytest.param(ROLES, {tt.TASK_ORDER: "ps;worker"}, None, id="order-is-one-comma-list"),
    pytest.param(ROLES, {"other": "x"}, None, id="no-annotation"),
])
def test_annotations(roles, notes, want):
    got = tt.parse(_Job(roles, notes))
    assert (None if got is None else (got.affinity, got.anti_affinity, got.order)) == want


def job_pods(name, tasks, cpu="1"):
    out = []
    for task, n in tasks:
        for i in range(n):
            p = pod(f"c1/{name}-{task}-{i}", name, cpu=cpu, mem="1Gi", role=task)
            out.append(p)
    return out


def place(notes, tiers, tasks=(("ps", 1), ("worker", 2)), nodes=None, min_member=None):
    group = pg("c1/tf", "q1", min_member or sum(n for _, n in tasks))
    group["metadata"]["annotations"] = notes
    state = snapshot.ClusterState(nodes=nodes or [node("n1", 4, "8Gi"), node("n2", 4, "8Gi")], queues=[queue("q1")],
                                  podgroups=[group], pods=job_pods("tf", tasks))
    binds = session.run_session(state, conf.build("allocate", tiers), NOW).binds
    return {k.split("/", 1)[1]: v for k, v in binds.items()}


GANG = P("gang", enableJobReady=True, enableJobOrder=True)
SPREAD = P("nodeorder", {"leastrequested.weight": 1, "balancedresource.weight": 0, "mostrequested.weight": 0,
                         "nodeaffinity.weight": 0, "podaffinity.weight": 0, "tainttoleration.weight": 0,
                         "imagelocality.weight": 0, "podtopologyspread.weight": 0}, enableNodeOrder=True)
TOPOLOGY = P("task-topology", {"task-topology.weight": 10}, enableNodeOrder=True, enableTaskOrder=True)


def test_affinity_keeps_ps_and_workers_on_one_node_where_spreading_would_split_them():
    alone = place({tt.AFFINITY: "ps,worker"}, [[GANG, P("predicates", enablePredicate=True), SPREAD]])
    assert len(set(alone.values())) == 2, alone           # least-requested spreads them
    together = place({tt.AFFINITY: "ps,worker"}, [[GANG, P("predicates", enablePredicate=True), SPREAD, TOPOLOGY]])
    assert len(set(together.values())) == 1, together


def test_self_anti_affinity_spreads_a_task_where_the_tie_break_would_pack_it():
    packed = place({}, [[GANG, P("predicates", enablePredicate=True)]], tasks=(("worker", 2),))
    assert set(packed.values()) == {"n1"}, packed
    spread = place({tt.ANTI_AFFINITY: "worker"}, [[GANG, P("predicates", enablePredicate=True), TOPOLOGY]],
                   tasks=(("worker", 2),))
    assert set(spread.values()) == {"n1", "n2"}, spread


@pytest.mark.parametrize("notes, winner", [
    pytest.param({}, "tf-chief-0", id="no-rules-first-by-name"),
    pytest.param({tt.TASK_ORDER: "worker,chief"}, "tf-chief-0", id="an-order-alone-puts-no-pod-in-a-bucket"),
    pytest.param({tt.AFFINITY: "chief;worker", tt.TASK_ORDER: "worker,chief"}, "tf-worker-0", id="order-in-a-bucket"),
])
def test_task_order_within_a_bucket(notes, winner):
    """One slot, a gang of one: the pod tried first takes it."""
    tiers = [[GANG, P("predicates", enablePredicate=True), TOPOLOGY]]
    got = place(notes, tiers, tasks=(("chief", 1), ("worker", 1)), nodes=[node("n1", 1, "8Gi")], min_member=1)
    assert list(got) == [winner], got


def test_an_invalid_annotation_leaves_the_job_to_the_other_plugins():
    tiers = [[GANG, P("predicates", enablePredicate=True), SPREAD, TOPOLOGY]]
    assert len(set(place({tt.AFFINITY: "ps,workers"}, tiers).values())) == 2
