"""pdb in a whole preempt session: a PodDisruptionBudget keeps as many victims as it protects, and the
preemptor waits when the room it needs would break a budget (Volcano's plugins/pdb with preempt)."""
import pytest

from tests import scheduler_confs
from tests.scenarios import test_volcano_e2e_preempt as e2e
from vclite.api import kinds
from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

from .test_scheduler_eviction import PRIO, T_PREEMPT, group, node, pending, q, running
from .test_scheduler_scenarios import NOW, P

T_PDB = [[P("pdb", enablePreemptable=True), *T_PREEMPT[0]]]


def budget(allowed, disrupted=()):
    status = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {name: "2026-01-01T00:00:00Z" for name in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "low", "namespace": "c1"},
            "spec": {"selector": {"matchLabels": {"app": "low"}}}, "status": status}


def labelled(p):
    p["metadata"]["labels"] = {**p["metadata"].get("labels", {}), "app": "low"}
    return p


def run(pdbs, cpu="2"):
    pods = [labelled(running(f"c1/low{i}", "pg1", "n1", preemptable=True)) for i in (1, 2, 3)]
    state = snapshot.ClusterState(
        nodes=[node("n1", 3, "3G")], queues=[q("q1")],
        podgroups=[group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q1", 1, prio="high-priority")],
        pods=pods + [pending("c1/preemptor", "pg2", cpu=cpu, mem=f"{cpu}G")], priority_classes=PRIO, pdbs=pdbs)
    return session.run_session(state, conf.build("preempt", T_PDB), NOW)


@pytest.mark.parametrize("pdbs, cpu, evicted", [
    pytest.param([], "2", 2, id="no-budget-two-victims"),
    pytest.param([budget(2)], "2", 2, id="the-budget-allows-both"),
    pytest.param([budget(1)], "1", 1, id="the-budget-allows-the-one-needed"),
    pytest.param([budget(1)], "2", 0, id="the-budget-allows-one-of-two-needed-nobody-goes"),
    pytest.param([budget(0, disrupted=["low1", "low2"])], "2", 2, id="pods-already-counted-by-the-api"),
])
def test_preempt_with_a_budget(pdbs, cpu, evicted):
    result = run(pdbs, cpu)
    assert len(result.evictions) == evicted, result.evictions


def test_evictions_earlier_in_the_session_spend_the_budget():
    """A gang of two preemptors of one cpu each, a budget allowing one disruption: Volcano's plugin starts
    every call from status.disruptionsAllowed, so each preemptor takes a victim (two disruptions); here the
    second finds the budget spent, the gang cannot be placed and nobody is evicted."""
    pods = [labelled(running(f"c1/low{i}", "pg1", "n1", preemptable=True)) for i in (1, 2, 3)]
    preemptors = [pending(f"c1/preemptor{i}", "pg2") for i in (1, 2)]
    state = snapshot.ClusterState(
        nodes=[node("n1", 3, "3G")], queues=[q("q1")],
        podgroups=[group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q1", 2, prio="high-priority")],
        pods=pods + preemptors, priority_classes=PRIO, pdbs=[budget(1)])
    result = session.run_session(state, conf.build("preempt", T_PDB), NOW)
    assert result.evictions == []
    state.pdbs = [budget(2)]
    assert len(session.run_session(state, conf.build("preempt", T_PDB), NOW).evictions) == 2


# ---- the embedded control plane: the disruption controller's status read by the scheduler --------------------

class ReadyCluster(e2e.Cluster):
    def set_pod(self, name, phase, exit_code=0, restarts=0):   # (with the Ready condition a kubelet writes)
        super().set_pod(name, phase, exit_code, restarts)
        pod = self.client.get(kinds.POD, "default", name)
        ready = "True" if phase == "Running" else "False"
        conditions = [{"type": "Ready", "status": ready}]
        self.client.update_status({**pod, "status": {**pod["status"], "conditions": conditions}})


def test_on_the_control_plane_a_budget_holds_preemption_until_it_allows_it():
    """The disruption controller counts the low job's Ready pods; the scheduler, woken by the budget's
    status, lets the high job preempt only as many as the budget allows."""
    conf_text = scheduler_confs.helm_conf(e2e.CI_ACTIONS).replace("  - name: conformance\n",
                                                                  "  - name: conformance\n  - name: pdb\n")
    c = e2e.cluster(scheduler_conf=conf_text)
    c.__class__ = ReadyCluster   # (e2e.cluster builds a plain Cluster: its pods then become Ready too)
    low = e2e.job("low", e2e.REP, 1, "low-priority")
    low["spec"]["tasks"][0]["template"]["metadata"]["labels"]["app"] = "low"
    e2e.run(c, low)
    e2e.run(c, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "low", "namespace": "default"},
                "spec": {"minAvailable": e2e.REP, "selector": {"matchLabels": {"app": "low"}}}})
    status = c.client.get(kinds.PODDISRUPTIONBUDGET, "default", "low")["status"]
    assert (status["currentHealthy"], status["disruptionsAllowed"]) == (e2e.REP, 0)
    e2e.run(c, e2e.job("high", e2e.REP, e2e.REP // 2, "high-priority"))
    assert (e2e.running(c, "low"), e2e.running(c, "high")) == (e2e.REP, 0)
    pdb = c.client.get(kinds.PODDISRUPTIONBUDGET, "default", "low")
    c.client.update({**pdb, "spec": {**pdb["spec"], "minAvailable": e2e.REP // 2}})
    e2e.run(c)
    assert (e2e.running(c, "low"), e2e.running(c, "high")) == (e2e.REP // 2, e2e.REP // 2)
