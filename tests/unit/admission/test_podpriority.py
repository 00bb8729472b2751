"""Kubernetes' Priority admission for pods, through the real in-process API: spec.priority and
preemptionPolicy from the PriorityClass, the global default, the system classes, and refusals."""
import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock, errors


def priority_class(name, value, default=False, policy=None):
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if default:
        pc["globalDefault"] = True
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


def pod(**spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "command": ["true"]}], **spec}}


HIGH = priority_class("high", 1000)
NEVER = priority_class("batch", 10, policy="Never")
DEFAULT_LOW, DEFAULT_MID = priority_class("default-low", 5, default=True), priority_class("default-mid", 50, default=True)


@pytest.mark.parametrize("classes, spec, want", [
    pytest.param([], {}, (None, 0, "PreemptLowerPriority"), id="no-class-no-default"),
    pytest.param([HIGH], {"priorityClassName": "high"}, ("high", 1000, "PreemptLowerPriority"), id="named-class"),
    pytest.param([NEVER], {"priorityClassName": "batch"}, ("batch", 10, "Never"), id="class-preemption-policy"),
    pytest.param([HIGH, DEFAULT_MID], {}, ("default-mid", 50, "PreemptLowerPriority"), id="global-default"),
    pytest.param([DEFAULT_MID, DEFAULT_LOW], {}, ("default-low", 5, "PreemptLowerPriority"),
                 id="two-defaults-lowest-wins"),
    pytest.param([DEFAULT_MID], {"priorityClassName": "high"}, "no PriorityClass with name high was found",
                 id="missing-class-refused"),
    pytest.param([], {"priorityClassName": "system-node-critical"},
                 ("system-node-critical", 2_000_001_000, "PreemptLowerPriority"), id="system-class-without-object"),
    pytest.param([HIGH], {"priorityClassName": "high", "priority": 1000}, ("high", 1000, "PreemptLowerPriority"),
                 id="same-priority-given"),
    pytest.param([HIGH], {"priorityClassName": "high", "priority": 7},
                 "the integer value of priority (7) must not be provided in pod spec; priority admission controller "
                 "computed 1000 from the given PriorityClass name", id="other-priority-refused"),
    pytest.param([], {"priority": 3}, "the integer value of priority (3) must not be provided", id="priority-no-class"),
    pytest.param([NEVER], {"priorityClassName": "batch", "preemptionPolicy": "PreemptLowerPriority"},
                 "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec",
                 id="other-preemption-policy-refused"),
    pytest.param([], {"preemptionPolicy": ""},
                 "the string value of PreemptionPolicy () must not be provided in pod spec", id="empty-policy-is-a-value"),
])
def test_pod_priority_on_create(classes, spec, want):
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    for pc in classes:
        client.create(pc)
    if isinstance(want, str):
        with pytest.raises(errors.Forbidden) as refused:
            client.create(pod(**spec))
        assert refused.value.message.startswith('pods "p" is forbidden: ') and want in refused.value.message
        assert client.list(kinds.POD) == []   # nothing stored
        return
    created = client.create(pod(**spec))["spec"]
    assert (created.get("priorityClassName"), created["priority"], created["preemptionPolicy"]) == want


@pytest.mark.parametrize("spec, field", [
    pytest.param({"priority": "5"}, "spec.priority", id="priority-not-an-integer"),
    pytest.param({"priorityClassName": 7}, "spec.priorityClassName", id="class-name-not-a-string"),
])
def test_a_mistyped_field_is_invalid_before_priority_is_resolved(spec, field):
    """Kubernetes refuses these when decoding the request (400), before any admission plugin: here
    validation names the field (422), and the Priority plugin never sees them."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    with pytest.raises(errors.Invalid) as refused:
        client.create(pod(**spec))
    assert [fe.path for fe in refused.value.errors] == [field]


def test_an_update_keeps_the_resolved_priority():
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    client.create(HIGH)
    created = client.create(pod(priorityClassName="high"))
    update = {**created, "metadata": {**created["metadata"], "labels": {"x": "y"}}}
    update["spec"] = {k: v for k, v in created["spec"].items() if k not in ("priority", "preemptionPolicy")}
    stored = client.update(update)
    assert (stored["spec"]["priority"], stored["spec"]["preemptionPolicy"]) == (1000, "PreemptLowerPriority")


def test_a_clusters_existing_pods_keep_their_priority():
    """A scheduler dry-run loads a cluster's state: its pods were admitted there already."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False, existing_state=True)
    assert client.create(pod(priority=4))["spec"]["priority"] == 4
