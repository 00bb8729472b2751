"""What `vcctl run`/`validate` say of claims: a claim the run's documents name but do not define is a warning at
its file:line; a stopped run names a claim a vcjob or pod waits for in plain words."""
from __future__ import annotations

import pytest

from vclite.api import yamlio
from vclite.cli import manifests, run, runclaims, view

PVC = """---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data%s}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
JOB = """---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j%s}
spec:
  volumes:
    - {mountPath: /data, volumeClaimName: data}
    - mountPath: /scratch
      volumeClaim: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          volumes:
            - name: cache
              persistentVolumeClaim: {claimName: cache}
            - name: item
              persistentVolumeClaim: {claimName: 'c-{{item}}'}
          containers: [{name: c, image: busybox, command: ["true"]}]
"""
POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]
  containers: [{name: c, image: busybox, command: ["true"]}]
"""


def claim_warnings(text):
    docs = yamlio.load_string(text.removeprefix("---\n"), "f.yaml")
    return [(w.line, w.field, w.message) for w in manifests.warnings(docs, paths_mapped=True)
            if "PersistentVolumeClaim" in w.message]


def test_claims_named_without_their_document_are_warnings_at_their_lines():
    got = claim_warnings(JOB % "" + POD)
    assert [(line, field) for line, field, _ in got] == [
        (6, "spec.volumes[0].volumeClaimName"),
        (17, "spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim.claimName"),
        (26, "spec.volumes[0].persistentVolumeClaim.claimName")]
    assert got[0][2] == ('PersistentVolumeClaim "data" is not defined in the files given (namespace default): the '
                         "vcjob waits Pending (Volcano's PVCError), and vcctl run stops as stuck; add a "
                         "PersistentVolumeClaim document (on a cluster the claim must exist too)")
    assert "its pods are never placed" in got[1][2]


@pytest.mark.parametrize("text, want", [
    pytest.param(PVC % "" + JOB % "", ["cache"], id="the-defined-claim-is-not-named"),
    pytest.param(PVC % ", namespace: other" + POD, ["data"], id="a-claim-of-another-namespace-does-not-count"),
    pytest.param(POD + PVC % "", [], id="defined-after-its-use"),
])
def test_which_claims_are_undefined(text, want):
    assert [msg.split('"')[1] for _, _, msg in claim_warnings(text)] == want


@pytest.mark.parametrize("reason, want", [
    pytest.param("PVCError: Failed to create PVC, err: pvc data is not found, the job will be in the Pending state "
                 "until the PVC is created", 'claim "data" not found: add a PersistentVolumeClaim document',
                 id="vcjob-controller"),
    pytest.param("1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: "
                 "1 Unschedulable. Origin reason is j-t-0: 0/1 nodes are unavailable: 1 plugin VolumeBinding "
                 'pre-predicates failed persistentvolumeclaim "data" not found.',
                 'claim "data" not found: add a PersistentVolumeClaim document', id="scheduler"),
    pytest.param('pod j-t-0: container c ContainerCreating: persistentvolumeclaim "data" is not bound',
                 'claim "data" is not bound to a volume', id="executor"),
    pytest.param('0/1 nodes are unavailable: 1 plugin VolumeBinding pre-predicates failed persistentvolumeclaim '
                 '"data" is being deleted.', 'claim "data" is being deleted: a pod that needs it cannot start',
                 id="deleting"),
    pytest.param("0/1 nodes are unavailable: 1 plugin VolumeBinding pre-predicates failed pod has unbound immediate "
                 "PersistentVolumeClaims.", runclaims.plain_reason(runclaims.UNBOUND_IMMEDIATE), id="unbound"),
    pytest.param("0/1 nodes are unavailable: 1 Insufficient cpu.", None, id="not-a-claim"),
])
def test_plain_reason(reason, want):
    assert runclaims.plain_reason(reason) == want


def test_a_stopped_run_names_the_claim_a_vcjob_waits_for():
    """The vcjob controller's PVCError (kept from its Event by the run's Progress) for a vcjob without PodGroup."""
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "x", "namespace": "default", "uid": "u"},
           "spec": {"tasks": [{"name": "t", "replicas": 1}]}, "status": {"state": {"phase": "Pending"}}}
    progress = run.Progress()
    event = {"kind": "Event", "metadata": {"name": "e", "namespace": "default"}, "reason": "PVCError",
             "involvedObject": {"kind": "Job", "namespace": "default", "name": "x"},
             "message": "Failed to create PVC, err: pvc data is not found, the job will be in the Pending state until "
                        "the PVC is created"}
    progress.observe_event(type("Ev", (), {"type": "ADDED", "object": event})())
    snap = view.Snapshot([], [job], [], [], claim_errors=progress.claim_errors)
    assert run.stuck_report(snap) == ['vcjob default/x: claim "data" not found: add a PersistentVolumeClaim document']


@pytest.mark.parametrize("claim, want", [
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}, [], id="valid"),
    pytest.param({"accessModes": ["ReadWriteOnce"]},
                 ["spec.volumes[0].volumeClaim.resources[storage]: Required value"], id="no-storage"),
    pytest.param({"resources": {"requests": {"storage": "1Gi"}}},
                 ["spec.volumes[0].volumeClaim.accessModes: Required value: at least 1 access mode is required"],
                 id="no-access-mode"),
    pytest.param({"accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}},
                 ['spec.volumes[0].volumeClaim.accessModes: Unsupported value: "ReadWriteSometimes"'], id="bad-mode"),
])
def test_a_vcjobs_volume_claim_kube_would_refuse_is_a_warning(claim, want):
    for kind, spec_path in (("Job", "spec"), ("JobTemplate", "spec"), ("CronJob", "spec.jobTemplate.spec")):
        job_spec = {"volumes": [{"mountPath": "/scratch", "volumeClaim": claim}], "tasks": []}
        spec = {"jobTemplate": {"spec": job_spec}} if kind == "CronJob" else job_spec
        found = runclaims.claim_spec_problems({"kind": kind, "spec": spec})
        assert [p for p, _ in found] == [w.split(":")[0].replace("spec.", spec_path + ".", 1) for w in want]
        for (path, message), w in zip(found, want):
            assert f"{path}: {message}".startswith(w.replace("spec.", spec_path + ".", 1))
            assert message.endswith("the vcjob waits Pending (Volcano's PVCError)")


def test_a_volume_claim_problem_is_a_warning_at_its_line_and_the_file_still_runs():
    docs = yamlio.load_string(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj}\nspec:\n  volumes:\n"
        "  - mountPath: /scratch\n    volumeClaim: {accessModes: [ReadWriteOnce]}\n  tasks:\n  - name: t\n"
        "    replicas: 1\n    template: {spec: {containers: [{name: c, image: busybox}]}}\n", "vj.yaml")
    (warning,) = [w for w in manifests.warnings(docs, paths_mapped=True) if "volumeClaim" in w.field]
    assert (warning.file, warning.line, warning.field) == ("vj.yaml", 7,
                                                           "spec.volumes[0].volumeClaim.resources[storage]")


def _pod(ns, *claims):
    return {"metadata": {"name": "p", "namespace": ns}, "spec": {"volumes": [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}}


def _claim(name, phase, uid=None, ns="default"):
    return {"metadata": {"name": name, "namespace": ns, "uid": uid or f"{name}-uid"}, "status": {"phase": phase}}


def _event(uid, message, when, kind="PersistentVolumeClaim"):
    return {"involvedObject": {"kind": kind, "uid": uid}, "message": message, "lastTimestamp": when}


@pytest.mark.parametrize("pods, claims, events, want", [
    pytest.param([_pod("default", "a")], [_claim("a", "Bound")], [], [], id="bound: nothing"),
    pytest.param([_pod("default", "a")], [], [], [], id="missing: said elsewhere"),
    pytest.param([_pod("default", "a")], [_claim("a", "Pending")], [], ["claim default/a is Pending"],
                 id="no event"),
    pytest.param([_pod("default", "a", "b")], [_claim("a", "Pending"), _claim("b", "Lost")],
                 [_event("a-uid", "old", "2026-01-01T00:00:01Z"), _event("a-uid", "newer", "2026-01-01T00:00:02Z"),
                  _event("a-uid", "older", "2026-01-01T00:00:00Z"), _event("b-uid", "gone", "2026-01-01T00:00:00Z"),
                  _event("a-uid", "a pod's", "2026-01-01T00:00:09Z", kind="Pod")],
                 ["claim default/a is Pending: newer", "claim default/b is Lost: gone"], id="latest event of each"),
    pytest.param([_pod("default", "a"), _pod("default", "a"), _pod("other", "a")],
                 [_claim("a", "Pending"), _claim("a", "Bound", ns="other")], [], ["claim default/a is Pending"],
                 id="once, in its namespace"),
])
def test_unbound_notes(pods, claims, events, want):
    assert runclaims.unbound_notes(pods, claims, events) == want


@pytest.mark.parametrize("made, want", [
    pytest.param([], "", id="nothing"),
    pytest.param(["default/p/logs/main.log"], " (pod logs under W)", id="logs-only"),
    pytest.param(["default/p/logs/main.log", "default/_pvc/data/x"],
                 " (pod logs under W; claims' data in W/default/_pvc/data)", id="logs-and-a-claim"),
    pytest.param(["a/_pvc/c1/", "a/_pvc/c2/", "b/_pvc/c3/", "b/_pvc/c4/"],
                 " (claims' data in W/a/_pvc/c1, W/a/_pvc/c2, W/b/_pvc/c3 and 1 more)", id="many-claims"),
])
def test_a_finished_run_says_where_its_logs_and_claims_data_are(tmp_path, made, want):
    for rel in made:
        path = tmp_path / rel
        if rel.endswith("/"):
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    assert run._where(tmp_path) == want.replace("W", str(tmp_path))
