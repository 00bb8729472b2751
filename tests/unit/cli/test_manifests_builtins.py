"""A document naming an object the API starts with (the `default` Namespace, the `root` and `default`
Queues) is applied as `kubectl apply` applies it on a Volcano cluster, where they exist too: its fields
are merged onto the live object through update admission, instead of being refused as existing."""
import pytest

from vclite.api import kinds, yamlio
from vclite.apiserver import inprocess
from vclite.cli import manifests

DEFAULT_QUEUE_WITH_AFFINITY = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: default
  annotations: {example.com/limits: "cpu=4"}
spec:
  weight: 3
  capability: {cpu: "4"}
  affinity:
    nodeGroupAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: [group-a]
status: {state: Closed}
"""

ROOT_QUEUE = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: root}
spec:
  affinity:
    nodeGroupAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: [prod]
"""

DEFAULT_NAMESPACE = """
apiVersion: v1
kind: Namespace
metadata:
  name: default
  labels: {team: a}
"""


@pytest.mark.parametrize("text, kind, name, expected", [
    pytest.param(DEFAULT_QUEUE_WITH_AFFINITY, kinds.QUEUE, "default", {
        "spec.weight": 3, "spec.capability": {"cpu": "4"}, "spec.parent": "root", "spec.reclaimable": True,
        "spec.affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["group-a"]}},
        "metadata.annotations": {"example.com/limits": "cpu=4"},
        "status.state": "Open"}, id="default-queue: fields merged, parent kept, status ignored"),
    pytest.param(ROOT_QUEUE, kinds.QUEUE, "root", {
        "spec.weight": 1, "spec.reclaimable": False,
        "spec.affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["prod"]}}},
        id="root-queue"),
    pytest.param(DEFAULT_NAMESPACE, kinds.NAMESPACE, "default", {
        "metadata.labels": {"kubernetes.io/metadata.name": "default", "team": "a"}}, id="default-namespace"),
])
def test_a_document_naming_a_builtin_object_updates_it(text, kind, name, expected):
    client = inprocess.new_client()
    problems = manifests.validate(yamlio.load_string(text, "f.yaml"), client=client)
    assert problems == []
    stored = client.get(kind, "", name)
    for path, value in expected.items():
        obj = stored
        for seg in path.split("."):
            obj = obj[seg]
        assert obj == value, path


def test_an_update_of_a_builtin_object_admission_refuses_is_a_problem_at_its_line():
    text = DEFAULT_QUEUE_WITH_AFFINITY.replace('capability: {cpu: "4"}', 'capability: {cpu: "-1"}')
    problems = manifests.validate(yamlio.load_string(text, "f.yaml"))
    assert [(p.line, p.field) for p in problems] == [(9, "spec.capability.cpu")]


def test_a_builtin_object_defined_twice_is_still_a_problem():
    problems = manifests.validate(yamlio.load_string(ROOT_QUEUE + "---" + ROOT_QUEUE, "f.yaml"))
    assert [p.message.split(" (")[0] for p in problems] == ["defined twice"]
