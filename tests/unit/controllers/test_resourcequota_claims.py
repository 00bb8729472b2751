"""The resourcequota controller counts PersistentVolumeClaims: their number and their storage, per class too,
recounted when a claim comes, goes or asks for more (a real runtime on a virtual clock)."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.lib import clock
from vclite.runtime import runtime

NS = "default"
GOLD = "gold.storageclass.storage.k8s.io/"
HARD = {"persistentvolumeclaims": "10", "requests.storage": "100Gi", "standard.storageclass.storage.k8s.io/"
        "requests.storage": "50Gi", GOLD + "persistentvolumeclaims": "5"}


@pytest.fixture
def rt():
    r = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    r.client.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
                     "spec": {"hard": HARD}})
    r.settle()
    yield r
    r.close()


def claim(name, storage, cls=None):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def used(rt):
    rt.settle()
    return rt.client.get(kinds.RESOURCEQUOTA, NS, "q")["status"]["used"]


def test_claims_are_counted_per_class_and_recounted(rt):
    assert used(rt) == {name: "0" for name in HARD}
    rt.client.create(claim("a", "2Gi"))              # (the default class: standard)
    rt.client.create(claim("b", "1Gi", cls="gold"))
    assert used(rt) == {"persistentvolumeclaims": "2", "requests.storage": "3Gi",
                        "standard.storageclass.storage.k8s.io/requests.storage": "2Gi",
                        GOLD + "persistentvolumeclaims": "1"}
    a = rt.client.get(kinds.PERSISTENTVOLUMECLAIM, NS, "a")
    rt.client.update_status({**a, "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}}})
    a = rt.client.get(kinds.PERSISTENTVOLUMECLAIM, NS, "a")
    rt.client.update({**a, "spec": {**a["spec"], "resources": {"requests": {"storage": "5Gi"}}}})   # (expanded)
    assert used(rt)["requests.storage"] == "6Gi"
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, NS, "b")
    b = rt.client.get(kinds.PERSISTENTVOLUMECLAIM, NS, "b")   # (kept by its pvc-protection finalizer: still counted)
    rt.client.update({**b, "metadata": {**b["metadata"], "finalizers": []}})
    assert used(rt) == {"persistentvolumeclaims": "1", "requests.storage": "5Gi",
                        "standard.storageclass.storage.k8s.io/requests.storage": "5Gi",
                        GOLD + "persistentvolumeclaims": "0"}
