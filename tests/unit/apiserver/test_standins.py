"""Embedded mode (`vcctl run`): a vcjob created makes the ServiceAccounts its pods name that its namespace lacks,
with a Warning Event, so a JobFlow that fills the name in only when it makes the vcjob (`{{item}}`, an output)
runs as one whose files name the account; the runtime of `vcctl server` (and by default) keeps refusing the pods,
as kube-apiserver's ServiceAccount admission does."""
import pytest

from vclite.api import kinds
from vclite.apiserver import standins
from vclite.lib import clock, errors
from vclite.runtime import runtime


def vcjob(*accounts, name="j", key="serviceAccountName"):
    tasks = [{"name": f"t{i}", "replicas": 1, "template": {"spec": {
        **({key: a} if a else {}), "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}} for i, a in enumerate(accounts)]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"minAvailable": len(tasks), "schedulerName": "volcano", "tasks": tasks}}


def accounts(rt):
    return sorted(a["metadata"]["name"] for a in rt.client.list(kinds.SERVICEACCOUNT, "ml"))


@pytest.mark.parametrize("names, made", [
    pytest.param([None], [], id="none-named"),
    pytest.param(["default"], [], id="default"),
    pytest.param(["ci"], [("spec.tasks[0].template.spec.serviceAccountName", "ci")], id="missing"),
    pytest.param(["ci", "ci", "bot"], [("spec.tasks[0].template.spec.serviceAccountName", "ci"),
                                       ("spec.tasks[2].template.spec.serviceAccountName", "bot")],
                 id="once-per-name"),
    pytest.param(["reader"], [], id="existing"),
])
def test_a_vcjob_created_makes_the_accounts_its_pods_name(names, made):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False, accounts_on_demand=True)
    try:
        rt.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
        rt.client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader",
                                                                                     "namespace": "ml"}})
        rt.client.create(vcjob(*names))
        assert [(m.field, m.name) for m in rt.made_accounts] == made
        assert accounts(rt) == sorted({"default", "reader", *(n for _, n in made)})
        rt.settle()   # (the Events are written in the background; the pods are created and not refused)
        events = [e for e in rt.client.list(kinds.EVENT, "ml") if e.get("reason") == standins.STAND_IN]
        assert [e["message"] for e in events] == [
            f'{field}: ServiceAccount "{name}" is not defined in the files given: the embedded control plane made one '
            f"in namespace ml for the run when it created vcjob ml/j (on a cluster it must exist, or its pods are "
            "refused)" for field, name in made]
        assert all(e["type"] == "Warning" and e["involvedObject"]["name"] == "j" for e in events)
        assert len(rt.client.list(kinds.POD, "ml")) == len(names)
    finally:
        rt.close()


def test_the_deprecated_field_names_the_account_too():
    assert standins.named_accounts(vcjob("ci", key="serviceAccount")) == [
        ("spec.tasks[0].template.spec.serviceAccount", "ci")]


def test_without_accounts_on_demand_the_pods_are_refused_as_kube_refuses_them():
    """`vcctl server`'s runtime (and the default): nothing is made, the pod create is Forbidden."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        rt.client.create(vcjob("ci"))
        assert accounts(rt) == ["default"] and rt.made_accounts == []
        with pytest.raises(errors.Forbidden, match='serviceaccount "ci" not found'):
            rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
                              "spec": {"serviceAccountName": "ci", "containers": [
                                  {"name": "c", "image": "busybox", "command": ["true"]}]}})
    finally:
        rt.close()
