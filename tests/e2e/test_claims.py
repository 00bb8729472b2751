"""Claims through the real `vcctl run`: a run whose vcjob or pod names a claim no document defines warns at the
claim's line and stops as stuck saying so plainly; a run with its PersistentVolumeClaim documents runs (the claim
provisioned by the default class `standard` as `<workdir>/<namespace>/_pvc/<claim>`)."""
from __future__ import annotations

JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: x}
spec:
  minAvailable: 1
  schedulerName: volcano
  volumes:
    - {mountPath: /data, volumeClaimName: data}
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox, command: ["sh", "-c", "echo kept > $VC_POD_DIR/data/out"]}]
"""
POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: volcano
  restartPolicy: Never
  volumes: [{name: v, persistentVolumeClaim: {claimName: other}}]
  containers: [{name: c, image: busybox, command: ["true"]}]
"""
PVC = """---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""


def test_a_claim_without_its_document_is_a_warning_and_the_run_stops_saying_so(vcctl, write, tmp_path):
    r = vcctl("run", "--timeout", "60", "--workdir", tmp_path / "work", write("x.yaml", JOB + POD))
    assert r.code == 1, r
    assert ('x.yaml:8: Job/x: spec.volumes[0].volumeClaimName: PersistentVolumeClaim "data" is not defined in the '
            "files given") in r.err, r
    assert 'x.yaml:23: Pod/p: spec.volumes[0].persistentVolumeClaim.claimName: PersistentVolumeClaim "other"' in r.err
    assert "stopped: no further progress is possible" in r.err, r
    assert '  vcjob default/x: claim "data" not found: add a PersistentVolumeClaim document' in r.err, r
    assert '  pod default/p: claim "other" not found: add a PersistentVolumeClaim document' in r.err, r


def test_a_run_with_its_claim_document_writes_into_the_provisioned_directory(vcctl, write, tmp_path):
    """(needs the served PersistentVolumeClaim kind, the default class and the volume controller)"""
    r = vcctl("run", "--quiet", "--timeout", "60", "--workdir", tmp_path / "work", write("x.yaml", PVC + "---\n" + JOB))
    assert r.code == 0, r
    assert "PersistentVolumeClaim" not in r.err, r   # (no warning: the claim is defined)
    assert (tmp_path / "work" / "default" / "_pvc" / "data" / "out").read_text() == "kept\n"


UNBOUND = """apiVersion: v1
kind: PersistentVolume
metadata: {name: only}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: HOSTPATH}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: first}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: only
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: second}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: only
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: blk}
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: Block
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: volcano
  restartPolicy: Never
  volumes:
    - {name: a, persistentVolumeClaim: {claimName: first}}
    - {name: b, persistentVolumeClaim: {claimName: second}}
    - {name: c, persistentVolumeClaim: {claimName: blk}}
  containers: [{name: c, image: busybox, command: ["true"]}]
"""


def test_a_stopped_run_names_each_unbound_claim_and_why(vcctl, write, tmp_path):
    """Two claims naming one volume (the second stays Pending, as kube leaves it) and a Block claim (not
    provisioned here): the run stops as stuck and says which claims are not bound and why, in the volume
    controller's words, not only that "a claim" is not bound."""
    text = UNBOUND.replace("HOSTPATH", str(tmp_path / "only"))
    r = vcctl("run", "--timeout", "60", "--workdir", tmp_path / "work", write("u.yaml", text))
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r
    assert '  claim default/second is Pending: volume "only" already bound to a different claim.' in r.err, r
    assert ("  claim default/blk is Pending: vclite.io/local-dir does not support block volume provisioning"
            in r.err), r
    assert "claim default/first" not in r.err, r
