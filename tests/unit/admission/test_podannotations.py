"""The annotations kube-apiserver reads on a Pod: the deletion cost a 32-bit integer, the mirror-pod one only
with a node."""
from __future__ import annotations

import pytest

from vclite.admission import admit, podannotations
from vclite.api import kinds
from vclite.lib import errors

from . import views

COST = podannotations.DELETION_COST


def create(annotations, **spec):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                          "annotations": annotations},
           "spec": {"containers": [{"name": "c", "command": ["true"]}], **spec}}
    return admit.admit(admit.Operation.CREATE, kinds.POD, pod, None, views.DictView())


@pytest.mark.parametrize("value", ["abc", "+10", "008", "2147483648", "-2147483649", " 1", "", "1.5"])
def test_a_deletion_cost_that_is_no_plain_int32_is_refused(value):
    with pytest.raises(errors.Invalid) as e:
        create({COST: value})
    assert [str(fe) for fe in e.value.errors] == [
        f'metadata.annotations[{COST}]: Invalid value: "{value}": must be a 32bit integer']


@pytest.mark.parametrize("value", ["0", "-5", "10", "2147483647", "-2147483648"])
def test_a_plain_int32_deletion_cost_passes(value):
    assert create({COST: value})["metadata"]["annotations"][COST] == value


def test_a_mirror_pod_needs_a_node():
    with pytest.raises(errors.Invalid) as e:
        create({podannotations.MIRROR_ANNOTATION: "x"})
    assert [str(fe) for fe in e.value.errors] == [
        f'metadata.annotations[{podannotations.MIRROR_ANNOTATION}]: Invalid value: "x": must set spec.nodeName if '
        "mirror pod annotation is set"]
    assert create({podannotations.MIRROR_ANNOTATION: "x"}, nodeName="n1")["spec"]["nodeName"] == "n1"
