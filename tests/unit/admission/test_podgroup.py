"""PodGroup admission: the rows of Volcano's validate_podgroup_test.go (the queue a user's PodGroup is
submitted to, networkTopology and subGroupPolicy tiers), and what vclite leaves to the scheduler."""
from __future__ import annotations

from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]
BOTH_TIERS = {"mode": "hard", "highestTierAllowed": 1, "highestTierName": "volcano.sh/hypernode"}
QUEUES = views.default_view(views.queue("open-q", "Open"), views.queue("closed-q", "Closed"),
                            views.queue("closing-q", "Closing"), views.queue("fresh-q"))


def pg(owned: bool = False, **spec: Any) -> Obj:
    md: Obj = {"name": "test-podgroup", "namespace": "default"}
    if owned:
        md["ownerReferences"] = [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j",
                                  "uid": "u-1", "controller": True}]
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": md, "spec": spec}


@pytest.mark.parametrize("obj, expected", [
    pytest.param(pg(queue="open-q"), [], id="valid-podgroup-with-open-queue"),
    pytest.param(pg(queue="closed-q"), ["spec.queue: can only submit PodGroup to queue with state `Open`, "
                                        "queue `closed-q` status is `Closed`."],
                 id="invalid-podgroup-with-closed-queue"),
    pytest.param(pg(queue="closing-q"), ["spec.queue: can only submit PodGroup to queue with state `Open`, "
                                         "queue `closing-q` status is `Closing`."], id="closing-queue"),
    pytest.param(pg(), [], id="valid-podgroup-with-empty-queue-defaulted"),
    pytest.param(pg(queue="fresh-q"), [], id="queue-whose-state-is-not-written-yet-counts-open"),
    pytest.param(pg(queue="test-queue"),
                 ['spec.queue: unable to find queue: queues.scheduling.volcano.sh "test-queue" not found'],
                 id="invalid-podgroup-with-a-queue-that-does-not-exist"),
    pytest.param(pg(subGroupPolicy=[{"name": "test-policy", "networkTopology": {
        "mode": "hard", "highestTierName": "volcano.sh/hypernode"}}]), [], id="subgrouppolicy-highest-tier-name"),
    pytest.param(pg(subGroupPolicy=[{"name": "test-policy", "networkTopology": {
        "mode": "hard", "highestTierAllowed": 1}}]), [], id="subgrouppolicy-highest-tier-allowed"),
    pytest.param(pg(subGroupPolicy=[{"name": "test-policy", "networkTopology": BOTH_TIERS}]),
                 ["spec.subGroupPolicy[0].networkTopology: in subGroupPolicy 'test-policy': must not specify "
                  "'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"],
                 id="invalid-subgrouppolicy-both-tiers"),
    pytest.param(pg(networkTopology=BOTH_TIERS),
                 ["spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
                  "networkTopology simultaneously"], id="invalid-networktopology-both-tiers"),
    pytest.param(pg(queue="test-queue", networkTopology=BOTH_TIERS),
                 ["spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
                  "networkTopology simultaneously",
                  'spec.queue: unable to find queue: queues.scheduling.volcano.sh "test-queue" not found'],
                 id="both-queue-and-networktopology-reported"),
    # vclite: a PodGroup a controller makes (for its vcjob or pod) is held by the scheduler, not refused
    pytest.param(pg(owned=True, queue="closed-q"), [], id="controller-made-podgroup-left-to-the-scheduler"),
    pytest.param(pg(owned=True, queue="missing"), [], id="controller-made-podgroup-missing-queue"),
    pytest.param({**pg(), "spec": []}, ["spec: Invalid value: []: must be of type object"], id="spec-a-list"),
    pytest.param(pg(queue={}), ["spec.queue: Invalid value: {}: must be of type string"], id="queue-an-object"),
    pytest.param(pg(queue=[]), ["spec.queue: Invalid value: []: must be of type string"], id="queue-a-list"),
])
def test_create(obj: Obj, expected: list[str]) -> None:
    if not expected:
        assert admit.admit(Op.CREATE, kinds.PODGROUP, obj, None, QUEUES)
        return
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.PODGROUP, obj, None, QUEUES)
    assert sorted(f"{e.path}: {e.message}" for e in info.value.errors) == expected


def test_update_does_not_look_at_the_queue() -> None:
    """Volcano's webhook admits CREATE only: a PodGroup whose queue was closed since may be updated."""
    old = pg(queue="open-q")
    new = pg(queue="closed-q", minMember=2)
    assert admit.admit(Op.UPDATE, kinds.PODGROUP, new, old, QUEUES)


class _ClusterState(views.DictView):
    existing_state = True


def test_a_cluster_state_for_a_dry_run_is_not_refused_for_its_queues() -> None:
    """A scheduler dry-run's state was admitted on its cluster: a PodGroup of a queue closed since is kept."""
    view = _ClusterState(views.queue("root", "Open"), views.queue("closed-q", "Closed"))
    assert admit.admit(Op.CREATE, kinds.PODGROUP, pg(queue="closed-q"), None, view)


def _namespace(annotations: dict[str, str] | None) -> Obj:
    md: Obj = {"name": "default"}
    if annotations is not None:
        md["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


ANNOTATED = {"scheduling.volcano.sh/queue-name": "open-q"}


@pytest.mark.parametrize("obj, namespace, queue", [
    pytest.param(pg(queue="custom-queue", owned=True), _namespace(ANNOTATED), "custom-queue",
                 id="podgroup-with-non-default-queue"),
    pytest.param(pg(queue="default"), _namespace(ANNOTATED), "open-q",
                 id="podgroup-with-default-queue-and-namespace-with-queue-annotation"),
    pytest.param(pg(), _namespace(ANNOTATED), "open-q", id="podgroup-without-queue-and-annotated-namespace"),
    pytest.param(pg(queue="default"), _namespace({}), "default",
                 id="podgroup-with-default-queue-and-namespace-without-queue-annotation"),
    pytest.param(pg(queue="default", owned=True), _namespace(ANNOTATED), "open-q",
                 id="a-controllers-podgroup-too"),
])
def test_namespace_queue_annotation(obj: Obj, namespace: Obj, queue: str) -> None:
    """mutate_podgroup_test.go: a PodGroup of the `default` queue goes to its namespace's queue."""
    view = views.default_view(views.queue("open-q", "Open"), namespace)
    assert admit.admit(Op.CREATE, kinds.PODGROUP, obj, None, view)["spec"]["queue"] == queue


def test_the_namespace_queue_is_the_one_checked() -> None:
    view = views.default_view(views.queue("closed-q", "Closed"),
                              _namespace({"scheduling.volcano.sh/queue-name": "closed-q"}))
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.PODGROUP, pg(queue="default"), None, view)
    assert "queue `closed-q` status is `Closed`." in str(info.value)
