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
