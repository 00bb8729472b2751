"""Manifests with storage documents: StorageClasses and PersistentVolumes are applied before the claims, claims
before what mounts them; `vcctl validate` reports their problems at file:line:field as for every kind, a typo'd
field as a warning; the `standard` class the API starts with is applied onto as `kubectl apply` would."""
import pytest

from vclite.api import kinds, yamlio
from vclite.apiserver import inprocess
from vclite.cli import manifests

JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  minAvailable: 1
  volumes: [{mountPath: /data, volumeClaimName: data}]
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox, command: ["true"]}]
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: busybox, command: ["true"]}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""
CLAIM = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
"""
VOLUME = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /srv/pv1}
"""
CLASS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
"""
QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {requests.storage: 10Gi}}
"""


def docs(*texts):
    return yamlio.load_string("---".join(texts), "f.yaml")


def test_classes_and_volumes_before_claims_and_claims_before_what_mounts_them():
    got = [d.obj["kind"] for d in manifests.ordered(docs(JOB, POD, CLAIM, VOLUME, CLASS, QUOTA))]
    assert got == ["ResourceQuota", "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "Job", "Pod"]


def test_storage_documents_are_admitted_with_their_defaults():
    client = inprocess.new_client()
    assert manifests.validate(docs(CLAIM, VOLUME, CLASS, QUOTA), client=client) == []
    claim = client.get(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    assert claim["spec"]["storageClassName"] == "fast" and claim["metadata"]["finalizers"] == [
        "kubernetes.io/pvc-protection"]
    assert client.get(kinds.STORAGECLASS, "", "fast")["reclaimPolicy"] == "Delete"


BAD_CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accesModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
"""
BAD_VOLUME = """apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMost]
  hostPath: {path: /srv/pv1}
"""


@pytest.mark.parametrize("text, line, path, message", [
    pytest.param(BAD_CLAIM, 4, "spec.accessModes", "Required value: at least 1 access mode is required",
                 id="claim"),
    pytest.param(BAD_VOLUME, 6, "spec.accessModes", 'Unsupported value: "ReadWriteMost"', id="volume"),
    pytest.param(CLASS.replace("example.com/fast", '""').lstrip("\n"), 4, "provisioner", "Required value",
                 id="class"),
])
def test_problems_name_file_line_and_field(text, line, path, message):
    [problem] = manifests.validate(yamlio.load_string(text, "f.yaml"))
    assert (problem.file, problem.line, problem.field) == ("f.yaml", line, path)
    assert problem.what.split("/")[0] in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass")
    assert problem.message.startswith(message)


def test_a_typod_claim_field_is_a_warning_with_the_name_meant():
    [warning] = manifests.warnings(yamlio.load_string(BAD_CLAIM, "f.yaml"))
    assert (warning.line, warning.field) == (5, "spec.accesModes")
    assert 'unknown field "accesModes" (did you mean "accessModes"?)' in warning.message


@pytest.mark.parametrize("text, problem", [
    pytest.param("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n"
                 "  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\n"
                 "provisioner: vclite.io/local-dir\n", None, id="the same class: applied onto it"),
    pytest.param("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: standard}\n"
                 "provisioner: rancher.io/local-path\n", "Forbidden: updates to provisioner are forbidden.",
                 id="kind's own: its provisioner may not change"),
])
def test_a_document_naming_the_standard_class(text, problem):
    found = manifests.validate(yamlio.load_string(text, "f.yaml"), client=inprocess.new_client())
    assert [p.message for p in found] == ([problem] if problem else [])
