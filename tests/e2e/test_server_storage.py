"""Storage's API through a real `vcctl server` and the real kubectl: discovery names pvc, pv and sc; the server
starts with the default class `standard`; `kubectl apply` of the three kinds, `kubectl get pvc,pv,sc` with
kube-apiserver's columns (`-o wide` too), `kubectl describe pvc`; a bad claim refused with kube's words, an
update of a class's provisioner refused."""
import json
import shutil

import pytest

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

OBJECTS = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: manual
  hostPath: {path: /tmp/vclite-e2e-pv1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: store}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources: {requests: {storage: 1Gi}}
"""

BAD_CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bad, namespace: store}
spec:
  resources: {requests: {storage: "0"}}
"""


def test_discovery_names_the_three_kinds(kubectl):
    out = kubectl("api-resources", "--no-headers").stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in out}
    assert rows["persistentvolumeclaims"][1:] == ["pvc", "v1", "true", "PersistentVolumeClaim"]
    assert rows["persistentvolumes"][1:] == ["pv", "v1", "false", "PersistentVolume"]
    assert rows["storageclasses"][1:] == ["sc", "storage.k8s.io/v1", "false", "StorageClass"]


def test_the_default_class_is_there_from_the_start(kubectl):
    out = kubectl("get", "sc").stdout.splitlines()
    assert out[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION",
                              "AGE"]
    assert out[1].split()[:6] == ["standard", "(default)", "vclite.io/local-dir", "Delete", "Immediate", "true"]


def test_apply_get_and_describe(kubectl, write):
    kubectl("create", "namespace", "store")
    kubectl("apply", "-f", write("storage.yaml", OBJECTS))
    out = kubectl("get", "pvc", "-n", "store").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                              "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert out[1].split()[:3] == ["data", out[1].split()[1], out[1].split()[2]]   # (Pending or Bound: the binder's)
    wide = kubectl("get", "pvc", "data", "-n", "store", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-1] == "VOLUMEMODE" and wide[1].split()[-1] == "Filesystem"
    pv = kubectl("get", "pv", "pv1").stdout.splitlines()
    assert pv[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM",
                             "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert pv[1].split()[:4] == ["pv1", "5Gi", "RWO,ROX", "Retain"]
    both = kubectl("get", "pvc,pv,sc", "-n", "store").stdout
    assert "persistentvolumeclaim/data" in both and "persistentvolume/pv1" in both and \
        "storageclass.storage.k8s.io/standard" in both
    claim = json.loads(kubectl("get", "pvc", "data", "-n", "store", "-o", "json").stdout)
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert claim["spec"]["volumeMode"] == "Filesystem" and claim["spec"]["storageClassName"] == "manual"
    described = kubectl("describe", "pvc", "data", "-n", "store").stdout
    assert "Name:" in described and "StorageClass:  manual" in described and "Access Modes:" in described


def test_a_claim_without_a_class_gets_the_default_one(kubectl, write):
    kubectl("create", "namespace", "plain")
    kubectl("apply", "-f", write("plain.yaml", OBJECTS.split("---")[2].replace("store", "plain")
                                  .replace("  storageClassName: manual\n", "")))
    claim = json.loads(kubectl("get", "pvc", "data", "-n", "plain", "-o", "json").stdout)
    assert claim["spec"]["storageClassName"] == "standard"


def test_a_bad_claim_is_refused_with_kubes_words(kubectl, write):
    kubectl("create", "namespace", "store", check=False)
    out = kubectl("apply", "-f", write("bad.yaml", BAD_CLAIM), check=False)
    assert out.returncode != 0
    assert 'The PersistentVolumeClaim "bad" is invalid' in out.stderr
    assert "spec.accessModes: Required value: at least 1 access mode is required" in out.stderr
    assert 'spec.resources[storage]: Invalid value: "0": must be greater than zero' in out.stderr


def test_a_class_provisioner_may_not_change(kubectl):
    out = kubectl("patch", "sc", "standard", "-p", '{"provisioner": "other.io/x"}', check=False)
    assert out.returncode != 0 and "provisioner: Forbidden: updates to provisioner are forbidden." in out.stderr
