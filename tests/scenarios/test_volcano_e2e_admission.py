"""Volcano's admission e2e suite (test/e2e/admission/*_test.go) against the embedded control plane's API
(admission, store and controllers on a virtual clock): what a create or an update returns, or the error
it is refused with — upstream asserts substrings of the error, these assert the same substrings.

Ported here: job_mutate_test.go, jobflow_validation_test.go, pod_mutate_test.go, podgroup_mutate_test.go,
podgroup_validation_test.go, queue_mutate_test.go, queue_validation_test.go, hypernode_validation_test.go.
Elsewhere: job_validation_test.go is tests/unit/admission/test_vcjob.py's `e2e-*` rows, pod_validation_test.go
test_pod.py's test_volcano_pod_disruption_budget_annotations (the same cases through the same API).

Where vclite differs on purpose (docs/differences.md), the case pins vclite's answer and says so:
- jobflow `duplicate flow names` (and `multiple flows having same dependency target`, which repeats a name)
  and `update with valid DAG structure` are refused here: duplicate names would never let the flow
  succeed (D9) and spec updates are not acted on.
- upstream's pods and vcjob containers have no `command` (the image's entrypoint runs); vclite runs pods as
  local processes, so the vcjob templates here carry one (a bare pod is still admitted without).
- pod_mutate_test.go runs with no resource groups configured (upstream's e2e install has none), so every
  case checks that nothing but Kubernetes' defaults is added; vclite has no resource-group configuration.
"""
from __future__ import annotations

from typing import Any

import pytest

from vclite.api import kinds
from vclite.lib import clock, errors
from vclite.runtime import runtime

Obj = dict[str, Any]
NS = "default"


class Api:
    """The embedded control plane's API: e2e's Vcclient / Kubeclient."""

    def __init__(self):
        self.rt = runtime.Runtime(clock.VirtualClock(), run_pods=False)
        self.rt.start()
        self.client = self.rt.client

    def create(self, obj: Obj) -> Obj:
        out = self.client.create(obj)
        self.rt.settle()
        return out

    def refused(self, obj: Obj, kind: kinds.Kind | None = None) -> str:
        """The error text of a refused create; nothing is stored."""
        with pytest.raises(errors.ApiError) as info:
            self.client.create(obj)
        md = obj["metadata"]
        kind = kind or kinds.lookup(obj["apiVersion"], obj["kind"])
        with pytest.raises(errors.NotFound):
            self.client.get(kind, md.get("namespace", ""), md["name"])
        return str(info.value)

    def update(self, kind: kinds.Kind, namespace: str, name: str, change) -> Obj:
        obj = self.client.get(kind, namespace, name)
        change(obj)
        out = self.client.update(obj)
        self.rt.settle()
        return out


@pytest.fixture
def api() -> Api:
    return Api()


def container(name: str = "fake-name", command: bool = True) -> Obj:
    return {"name": name, "image": "busybox:1.24", **({"command": ["sleep", "10"]} if command else {})}


def task(name: str, replicas: int = 1, **extra: Any) -> Obj:
    return {"name": name, "replicas": replicas,
            "template": {"metadata": {"labels": {"name": "test"}}, "spec": {"containers": [container()]}}, **extra}


def vcjob(name: str, **spec: Any) -> Obj:
    spec.setdefault("tasks", [task("task-1")])
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def queue(name: str, annotations: dict[str, str] | None = None, status: Obj | None = None, **spec: Any) -> Obj:
    md: Obj = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": md, "spec": spec,
            **({"status": status} if status else {})}


# ---- job_mutate_test.go ----------------------------------------------------------------------------------
JOB_MUTATE = [
    pytest.param(vcjob("default-queue-job", minAvailable=1), {"queue": "default"},
                 id="Should add default queue when not specified"),
    pytest.param(vcjob("default-scheduler-job", minAvailable=1, queue="default"), {"schedulerName": "volcano"},
                 id="Should add default scheduler name when not specified"),
    pytest.param(vcjob("default-max-retry-job", minAvailable=1, queue="default"), {"maxRetry": 3},
                 id="Should add default maxRetry when not specified"),
    pytest.param(vcjob("default-min-available-job", queue="default", tasks=[task("task-1", 2), task("task-2", 3)]),
                 {"minAvailable": 5}, id="Should calculate and set default minAvailable when not specified"),
    pytest.param(vcjob("task-min-available-job", queue="default",
                       tasks=[task("task-1", 2, minAvailable=1), task("task-2", 3)]), {"minAvailable": 4},
                 id="Should calculate minAvailable considering task-level minAvailable when specified"),
]


@pytest.mark.parametrize("job, expected", JOB_MUTATE)
def test_job_mutate(api: Api, job: Obj, expected: Obj) -> None:
    spec = api.create(job)["spec"]
    assert {k: spec.get(k) for k in expected} == expected


@pytest.mark.parametrize("plugins, expected", [
    pytest.param({"tensorflow": []}, {"tensorflow": [], "svc": []}, id="Should add svc plugin for tensorflow plugin"),
    pytest.param({"mpi": ["--master=task-1", "--worker=task-1"]},
                 {"mpi": ["--master=task-1", "--worker=task-1"], "svc": [], "ssh": []},
                 id="Should add svc plugin for mpi plugin; Should add ssh plugin for mpi plugin"),
    pytest.param({"pytorch": []}, {"pytorch": [], "svc": []}, id="Should add svc plugin for pytorch plugin"),
    pytest.param({"tensorflow": [], "svc": ["--enable-networking"]},
                 {"tensorflow": [], "svc": ["--enable-networking"]}, id="Should not override existing plugins"),
])
def test_job_mutate_adds_the_plugins_a_framework_plugin_needs(api: Api, plugins: Obj, expected: Obj) -> None:
    assert api.create(vcjob("plugin-job", minAvailable=1, queue="default", plugins=plugins))["spec"]["plugins"] \
        == expected


def test_job_mutate_should_preserve_existing_field_values_when_specified(api: Api) -> None:
    api.create(queue("custom-queue-job", weight=1))
    assert api.client.get(kinds.QUEUE, "", "custom-queue-job")["status"]["state"] == "Open"
    spec = api.create(vcjob("preserve-values-job", minAvailable=2, queue="custom-queue-job",
                            schedulerName="custom-sched", maxRetry=10,
                            tasks=[task("custom-task", 3, minAvailable=2, maxRetry=5)]))["spec"]
    assert (spec["minAvailable"], spec["queue"], spec["schedulerName"], spec["maxRetry"]) == \
        (2, "custom-queue-job", "custom-sched", 10)
    assert (spec["tasks"][0]["name"], spec["tasks"][0]["minAvailable"], spec["tasks"][0]["maxRetry"]) == \
        ("custom-task", 2, 5)


# ---- jobflow_validation_test.go ------------------------------------------------------------------------
def flow(name: str, *targets: str) -> Obj:
    return {"name": name, **({"dependsOn": {"targets": list(targets)}} if targets else {})}


def jobflow(name: str, *flows: Obj) -> Obj:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": name, "namespace": NS},
            "spec": {"jobRetainPolicy": "retain", "flows": list(flows)}}


@pytest.mark.parametrize("flows", [
    pytest.param([flow("a"), flow("b", "a"), flow("c", "a", "b"), flow("d", "b"), flow("e", "c", "d")],
                 id="Should allow jobflow creation with valid DAG structure"),
    pytest.param([flow("start"), flow("middle", "start"), flow("end", "middle")],
                 id="Should allow jobflow creation with simple linear dependency chain"),
    pytest.param([flow("root1"), flow("root2"), flow("level1-a", "root1"), flow("level1-b", "root2"),
                  flow("level2", "level1-a", "level1-b"), flow("final", "level2")],
                 id="Should allow jobflow creation with complex valid DAG structure"),
    pytest.param([], id="Should allow jobflow creation with empty flows list"),
    pytest.param([flow("single-flow")], id="Should allow jobflow creation with single flow (no dependencies)"),
])
def test_jobflow_validation_allows(api: Api, flows: list[Obj]) -> None:
    assert api.create(jobflow("jf", *flows))["spec"]["flows"] == flows


@pytest.mark.parametrize("flows, substrings", [
    pytest.param([flow("b", "a"), flow("c", "a", "b")], ["jobflow Flow is not DAG", "vertex is not defined"],
                 id="Should reject jobflow creation with missing flow definition"),
    pytest.param([flow("self-dependent", "self-dependent")], ["jobflow Flow is not DAG"],
                 id="Should reject jobflow creation with self-dependency"),
    # deliberate differences (docs/differences.md, "duplicate flow names"): allowed upstream
    pytest.param([flow("a"), flow("a"), flow("b", "a")], ['jobflow Flow names must be unique: "a"'],
                 id="Should allow jobflow creation with duplicate flow names (refused here)"),
    pytest.param([flow("a"), flow("b", "a"), flow("c", "a"), flow("c", "b")],
                 ['jobflow Flow names must be unique: "c"'],
                 id="Should allow jobflow creation with multiple flows having same dependency target (refused here)"),
])
def test_jobflow_validation_refuses(api: Api, flows: list[Obj], substrings: list[str]) -> None:
    text = api.refused(jobflow("jf", *flows))
    assert all(s in text for s in substrings), text


def test_jobflow_update_with_a_valid_dag_is_refused_as_every_spec_update(api: Api) -> None:
    """`Should allow jobflow update with valid DAG structure`: allowed upstream and never acted on; refused here
    (docs/differences.md, "spec updates"), and the stored JobFlow keeps its flows."""
    api.create(jobflow("jf", flow("a"), flow("b", "a")))
    with pytest.raises(errors.Invalid, match="jobflow spec updates are not supported"):
        api.update(kinds.JOBFLOW, NS, "jf", lambda o: o["spec"]["flows"].append(flow("c", "b")))
    assert [f["name"] for f in api.client.get(kinds.JOBFLOW, NS, "jf")["spec"]["flows"]] == ["a", "b"]


# ---- pod_mutate_test.go (no resource groups configured, as upstream's e2e install) ------------------------
def pod(name: str, annotations: dict[str, str] | None = None, **spec: Any) -> Obj:
    md: Obj = {"name": name, "namespace": NS, **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"containers": [container("test-container", command=False)], **spec}}


AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "custom-key", "operator": "In", "values": ["custom-value"]}]}]}}}
TOLERATION = {"key": "existing-taint", "operator": "Equal", "value": "existing-value", "effect": "NoSchedule"}
RG = "volcano.sh/resource-group"


@pytest.mark.parametrize("obj, expected", [
    pytest.param(pod("management-pod"), {"nodeSelector": None, "affinity": None, "tolerations": None},
                 id="Should add nodeSelector / affinity / tolerations for management namespace pods"),
    pytest.param(pod("cpu-pod", {RG: "cpu"}), {"nodeSelector": None, "schedulerName": "default-scheduler"},
                 id="Should add nodeSelector for pods with cpu resource-group annotation; "
                    "Should set scheduler name based on resource group"),
    pytest.param(pod("gpu-pod", {RG: "gpu"}), {"nodeSelector": None},
                 id="Should add nodeSelector for pods with gpu resource-group annotation"),
    pytest.param(pod("existing-affinity-pod", affinity=AFFINITY), {"affinity": AFFINITY},
                 id="Should not override existing affinity"),
    pytest.param(pod("existing-tolerations-pod", tolerations=[TOLERATION]), {"tolerations": [TOLERATION]},
                 id="Should append tolerations to existing ones"),
    pytest.param(pod("merge-nodeselector-pod", {RG: "cpu"}, nodeSelector={"existing-label": "existing-value"}),
                 {"nodeSelector": {"existing-label": "existing-value"}},
                 id="Should merge nodeSelector with existing ones"),
    pytest.param(pod("normal-pod"), {"nodeSelector": None, "affinity": None, "schedulerName": "default-scheduler"},
                 id="Should not mutate pods that don't match any resource group"),
    pytest.param(pod("custom-annotation-pod", {RG: "custom-group"}), {"nodeSelector": None},
                 id="Should handle pods with custom annotation-based resource group matching"),
    pytest.param(pod("existing-scheduler-pod", schedulerName="custom-scheduler"), {"schedulerName": "custom-scheduler"},
                 id="Should preserve existing scheduler name when already specified"),
])
def test_pod_mutate(api: Api, obj: Obj, expected: Obj) -> None:
    created = api.create(obj)
    assert {k: created["spec"].get(k) for k in expected} == expected
    assert created["metadata"].get("annotations") == obj["metadata"].get("annotations")   # kept as given


# ---- podgroup_mutate_test.go, podgroup_validation_test.go ------------------------------------------------
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


def podgroup(name: str, namespace: str, queue_name: str | None) -> Obj:
    spec: Obj = {"minMember": 1, **({"queue": queue_name} if queue_name is not None else {})}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def namespace(api: Api, name: str, queue_name: str | None) -> None:
    ann = {QUEUE_ANNOTATION: queue_name} if queue_name else {}
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": ann}})


@pytest.mark.parametrize("ns_queue, groups", [
    pytest.param(None, [("custom-queue-podgroup", "custom-queue-podgroup")],
                 id="Should not modify podgroup with custom queue"),
    pytest.param("namespace-queue", [("default", "namespace-queue")],
                 id="Should set queue from namespace annotation when podgroup uses default queue"),
    pytest.param(None, [("default", "default")], id="Should keep default queue when namespace has no queue annotation"),
    pytest.param("namespace-queue",
                 [("default", "namespace-queue"), ("custom-queue-podgroup", "custom-queue-podgroup")],
                 id="Should handle multiple podgroups in same namespace"),
    pytest.param(None, [(None, "default")], id="Should allow PodGroup creation without queue specified"),
    pytest.param(None, [("test-queue-open", "test-queue-open")],
                 id="Should allow PodGroup creation with valid open queue"),
])
def test_podgroup_queue(api: Api, ns_queue: str | None, groups: list[tuple[str | None, str]]) -> None:
    namespace(api, "team", ns_queue)
    for name in {"custom-queue-podgroup", "test-queue-open", ns_queue} - {None}:
        api.create(queue(name, weight=1))
    for i, (asked, stored) in enumerate(groups):
        assert api.create(podgroup(f"pg-{i}", "team", asked))["spec"]["queue"] == stored


# ---- queue_mutate_test.go -----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, expected", [
    pytest.param({"weight": 1}, {"weight": 1, "reclaimable": True},
                 id="Should set default reclaimable to true when not specified"),
    pytest.param({"reclaimable": True}, {"weight": 1, "reclaimable": True},
                 id="Should set default weight to 1 when not specified"),
    pytest.param({}, {"weight": 1, "reclaimable": True},
                 id="Should apply both default reclaimable and weight when not specified"),
    pytest.param({"weight": 5, "reclaimable": False}, {"weight": 5, "reclaimable": False},
                 id="Should preserve existing field values when specified"),
])
def test_queue_mutate(api: Api, spec: Obj, expected: Obj) -> None:
    created = api.create(queue("q", **spec))["spec"]
    assert {k: created.get(k) for k in expected} == expected


# ---- queue_validation_test.go -------------------------------------------------------------------------------
def res(cpu: str, memory: str | None = None) -> Obj:
    return {"cpu": cpu, **({"memory": memory} if memory else {})}


H, HW = "volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"


@pytest.mark.parametrize("obj, state", [
    pytest.param(queue("test-queue-open", weight=1, status={"state": "Open"}), "Open",
                 id="Should allow queue creation with valid state (Open)"),
    pytest.param(queue("test-queue-closed-queue", weight=1, status={"state": "Closed"}), "Closed",
                 id="Should allow queue creation with valid state (Closed)"),
    pytest.param(queue("test-queue-no-state", weight=1), "Open", id="Should allow queue creation without state set"),
    pytest.param(queue("test-queue-weight-default"), "Open",
                 id="Should allow queue creation without weight specified (uses default)"),
    pytest.param(queue("test-queue-deserved-only", weight=1, deserved=res("1", "1Gi")), "Open",
                 id="Should allow queue creation with only deserved resource"),
    pytest.param(queue("test-queue-deserved-type-not-in-capability", weight=1, capability=res("10"),
                       deserved=res("5", "10Gi")), "Open",
                 id="Should allow queue creation with deserved resource type not in capability"),
    pytest.param(queue("test-queue-guarantee-type-not-in-capability", weight=1, capability=res("10"),
                       deserved=res("5", "8Gi"), guarantee={"resource": res("5", "8Gi")}), "Open",
                 id="Should allow queue creation with guarantee resource type not in capability"),
])
def test_queue_validation_allows(api: Api, obj: Obj, state: str) -> None:
    """The state is what the queue then shows (vclite keeps a created state, docs/differences.md)."""
    assert api.create(obj)["spec"]["weight"] == obj["spec"].get("weight", 1)
    assert api.client.get(kinds.QUEUE, "", obj["metadata"]["name"])["status"]["state"] == state


@pytest.mark.parametrize("obj, substrings", [
    pytest.param(queue("test-queue-weight-negative", weight=-1),
                 ["spec.weight", "should be greater than or equal to 1"],
                 id="Should reject queue creation with negative weight"),
    pytest.param(queue("test-queue-guarantee-only", weight=1, guarantee={"resource": res("1", "1Gi")}),
                 ["must be >= guarantee"], id="Should reject queue creation with only guarantee resource"),
    pytest.param(queue("test-queue-capability-less-deserved", weight=1, capability=res("1", "1Gi"),
                       deserved=res("2", "1Gi")), ["must be <= capability"],
                 id="Should reject queue creation with capability less than deserved"),
    pytest.param(queue("test-queue-capability-less-guarantee", weight=1, capability=res("1", "1Gi"),
                       guarantee={"resource": res("2", "3Gi")}), ["must be >= guarantee"],
                 id="Should reject queue creation with capability less than guarantee"),
    pytest.param(queue("test-queue-deserved-less-guarantee", weight=1, deserved=res("2", "1Gi"),
                       guarantee={"resource": res("2", "3Gi")}), ["must be >= guarantee"],
                 id="Should reject queue creation with deserved less than guarantee"),
    pytest.param(queue("test-queue-guarantee-type-not-in-deserved", weight=1, deserved=res("10"),
                       guarantee={"resource": res("5", "8Gi")}), ["must be >= guarantee"],
                 id="Should reject queue creation with guarantee resource type not in deserved"),
    pytest.param(queue("hierarchy-only-queue", {H: "a"}, weight=1), [H],
                 id="Should reject queue creation with only hierarchy annotation but no weights"),
    pytest.param(queue("mismatched-hierarchy-queue", {H: "a/b", HW: "1/2/3"}, weight=1), ["must have the same length"],
                 id="Should reject queue creation with mismatched hierarchy annotation lengths"),
    pytest.param(queue("test-queue-hierarchy-mismatch", {H: "root/a/b", HW: "1/2/3/4"}, weight=1),
                 ["must have the same length"],
                 id="Should reject queue creation with mismatched hierarchy and weights"),
    pytest.param(queue("test-queue-negative-hierarchy-weight", {H: "root/a/b", HW: "1/-1/3"}, weight=1),
                 ["must be larger than 0"], id="Should reject queue creation with negative hierarchical weight"),
    pytest.param(queue("test-queue-invalid-hierarchy-weight", {H: "root/a/b", HW: "1/a/3"}, weight=1),
                 ["invalid number"], id="Should reject queue creation with invalid hierarchical weight format"),
])
def test_queue_validation_refuses(api: Api, obj: Obj, substrings: list[str]) -> None:
    """(`only hierarchy annotation but no weights`: upstream asserts "denied", the webhook's framing of any
    refusal; vclite answers as the API server does for a schema error, 422 `… is invalid: <field>: …`.)"""
    text = api.refused(obj)
    assert all(s in text for s in substrings), text


def test_queue_state_update_from_open_to_closed_is_allowed(api: Api) -> None:
    """`Should allow queue state update from Open to Closed`: an update carrying `status.state: Closed` is
    accepted; the status subresource keeps the state (Closing a queue is the queue controller's, by Command)."""
    api.create(queue("test-queue-state-update", weight=1, status={"state": "Open"}))
    api.update(kinds.QUEUE, "", "test-queue-state-update", lambda o: o["status"].update(state="Closed"))
    assert api.client.get(kinds.QUEUE, "", "test-queue-state-update")["status"]["state"] == "Open"


def test_queue_update_with_negative_weight_is_refused(api: Api) -> None:
    api.create(queue("test-queue-update-weight", weight=1))
    with pytest.raises(errors.Invalid) as info:
        api.update(kinds.QUEUE, "", "test-queue-update-weight", lambda o: o["spec"].update(weight=-1))
    assert "spec.weight" in str(info.value) and "should be greater than or equal to 1" in str(info.value)
    assert api.client.get(kinds.QUEUE, "", "test-queue-update-weight")["spec"]["weight"] == 1


def test_regular_queues_can_be_deleted_and_hierarchical_ones_created(api: Api) -> None:
    """`Should allow deletion of regular queues`, `Should allow hierarchical queue creation with valid parent`."""
    api.create(queue("test-queue-deletable", weight=1))
    api.client.delete(kinds.QUEUE, "", "test-queue-deletable")
    api.rt.settle()
    with pytest.raises(errors.NotFound):
        api.client.get(kinds.QUEUE, "", "test-queue-deletable")
    api.create(queue("test-parent-queue", weight=1, parent="root"))
    assert api.create(queue("test-child-queue", weight=1, parent="test-parent-queue"))["spec"]["parent"] == \
        "test-parent-queue"
    for name in ("test-child-queue", "test-parent-queue"):
        api.client.delete(kinds.QUEUE, "", name)
        api.rt.settle()
    assert {q["metadata"]["name"] for q in api.client.list(kinds.QUEUE)} == {"default", "root"}


# ---- hypernode_validation_test.go -------------------------------------------------------------------------
def hypernode(name: str, *selectors: Obj) -> Obj:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": 1, "members": [{"type": "Node", "selector": s} for s in selectors]}}


EXACT = {"exactMatch": {"name": "node-1"}}


@pytest.mark.parametrize("selector", [
    pytest.param(EXACT, id="Should allow HyperNode creation with valid exactMatch selector"),
    pytest.param({"regexMatch": {"pattern": "node-[0-9]+"}},
                 id="Should allow HyperNode creation with valid regexMatch selector"),
    pytest.param({"labelMatch": {"matchLabels": {"topology-rack": "rack1"}}},
                 id="Should allow HyperNode creation with valid labelMatch selector"),
])
def test_hypernode_validation_allows(api: Api, selector: Obj) -> None:
    assert api.create(hypernode("hn", selector))["spec"]["members"][0]["selector"] == selector


@pytest.mark.parametrize("obj, substrings", [
    pytest.param(hypernode("invalid-exact-match", {"exactMatch": {"name": ""}}),
                 ["spec.members[0].selector.exactMatch.name", "should be at least 1 chars long"],
                 id="Should reject HyperNode creation with empty exactMatch name"),
    pytest.param(hypernode("invalid-regex-match", {"regexMatch": {"pattern": ""}}),
                 ["spec.members[0].selector.regexMatch.pattern", "should be at least 1 chars long"],
                 id="Should reject HyperNode creation with empty regexMatch pattern"),
    pytest.param(hypernode("invalid-regex-pattern", {"regexMatch": {"pattern": "a(b"}}),
                 ["member regexMatch pattern is invalid"],
                 id="Should reject HyperNode creation with invalid regex pattern"),
    pytest.param(hypernode("invalid-no-members"), ["members"], id="Should reject HyperNode creation with no members"),
    pytest.param(hypernode("invalid-dns-name", {"exactMatch": {"name": "Node_with_invalid@characters"}}),
                 ["spec.members[0].selector.exactMatch.name", "should match"],
                 id="Should reject HyperNode creation with invalid exactMatch name (invalid DNS name)"),
])
def test_hypernode_validation_refuses(api: Api, obj: Obj, substrings: list[str]) -> None:
    text = api.refused(obj)
    assert all(s in text for s in substrings), text


def test_hypernode_updates(api: Api) -> None:
    """`Should allow HyperNode update with valid changes`, `Should reject HyperNode update with invalid changes`."""
    api.create(hypernode("hn", EXACT))
    regex = {"type": "Node", "selector": {"regexMatch": {"pattern": "node-[1-5]"}}}
    api.update(kinds.HYPERNODE, "", "hn", lambda o: o["spec"].update(members=[regex]))
    with pytest.raises(errors.Invalid, match="members"):
        api.update(kinds.HYPERNODE, "", "hn", lambda o: o["spec"].update(members=[]))
    assert api.client.get(kinds.HYPERNODE, "", "hn")["spec"]["members"] == [regex]
