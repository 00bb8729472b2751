"""What `vcctl run` and `vcctl validate` say of PersistentVolumeClaims (pure functions over manifests and report
lines).

- `claim_refs`: where a manifest names a claim — a pod's `persistentVolumeClaim.claimName` (a bare Pod, the pod
  templates of a vcjob's or JobTemplate's tasks, a CronJob's job template) and a vcjob's or JobTemplate's
  `spec.volumes[].volumeClaimName` (one with a `volumeClaim` is made by the vcjob itself). `undefined_claims`:
  those no PersistentVolumeClaim document of the run defines in that namespace; the run would stop as stuck
  (a vcjob waits Pending with Volcano's PVCError, a pod is never placed), so `warnings` names each, file:line.
  A name with a placeholder (`{{item}}`) is known only at run time: not checked.
- `claim_spec_problems`: a vcjob's or JobTemplate's `spec.volumes[].volumeClaim` that kube-apiserver would refuse
  when the vcjob makes its claim (Volcano's admission does not look at it: the vcjob is created, then waits
  Pending with PVCError), with kube's field messages under the volume's path.
- `plain_reason`: a stopped run's line about a vcjob or a pod waiting for a claim, in plain words
  (`claim "data" not found: add a PersistentVolumeClaim document`), from what the controller, the scheduler
  or the executor said (Volcano's PVCError, kube's VolumeBinding PreFilter reasons, the kubelet's).
- `unbound_notes`: a stopped run's lines about each claim an unfinished pod names that is not Bound, with the
  volume controller's latest Event on it (`claim default/b is Pending: volume "v" already bound to a different
  claim.`), since the scheduler says only that a pod has unbound claims.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import persistentvolumeclaim as claim_admission
from vclite.api import flowtemplate

Obj = dict[str, Any]
ADD_DOCUMENT = "add a PersistentVolumeClaim document"
_JOB_KINDS = ("Job", "JobTemplate")


BY_JOB, BY_TEMPLATE, BY_POD = "job", "template", "pod"   # what names a claim: spec.volumes, a task's pods, a Pod


def claim_refs(obj: Any) -> list[tuple[str, str, str]]:
    """(field path, claim name, BY_JOB | BY_TEMPLATE | BY_POD) of each claim the manifest names, in order."""
    if not isinstance(obj, dict):
        return []
    kind, spec = obj.get("kind"), obj.get("spec")
    if not isinstance(spec, dict):
        return []
    if kind == "Pod":
        return _pod_refs(spec, "spec", BY_POD)
    if kind == "CronJob":
        job = spec.get("jobTemplate")
        job_spec = job.get("spec") if isinstance(job, dict) else None
        return _job_refs(job_spec, "spec.jobTemplate.spec") if isinstance(job_spec, dict) else []
    if kind in _JOB_KINDS:
        return _job_refs(spec, "spec")
    return []


def _job_refs(spec: Obj, path: str) -> list[tuple[str, str, str]]:
    out = []
    volumes = spec.get("volumes")
    for i, vol in enumerate(volumes if isinstance(volumes, list) else ()):
        if isinstance(vol, dict) and isinstance(vol.get("volumeClaimName"), str) and vol["volumeClaimName"] \
                and vol.get("volumeClaim") is None:
            out.append((f"{path}.volumes[{i}].volumeClaimName", vol["volumeClaimName"], BY_JOB))
    tasks = spec.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else ()):
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if isinstance(pod_spec, dict):
            out += _pod_refs(pod_spec, f"{path}.tasks[{i}].template.spec", BY_TEMPLATE)
    return out


def _pod_refs(spec: Obj, path: str, by: str) -> list[tuple[str, str, str]]:
    volumes = spec.get("volumes")
    out = []
    for i, vol in enumerate(volumes if isinstance(volumes, list) else ()):
        source = vol.get("persistentVolumeClaim") if isinstance(vol, dict) else None
        name = source.get("claimName") if isinstance(source, dict) else None
        if isinstance(name, str) and name:
            out.append((f"{path}.volumes[{i}].persistentVolumeClaim.claimName", name, by))
    return out


def undefined_claims(objs: list[tuple[Any, str]]) -> list[tuple[int, str, str, str]]:
    """(index of the manifest in `objs`, field path, claim name, what names it: claim_refs) of each claim named
    that no PersistentVolumeClaim of `objs` defines in the namespace of the manifest naming it; `objs`: (manifest,
    its namespace) pairs."""
    defined = {(ns, (o.get("metadata") or {}).get("name")) for o, ns in objs
               if isinstance(o, dict) and o.get("kind") == "PersistentVolumeClaim"
               and isinstance(o.get("metadata"), dict)}
    return [(i, path, name, by) for i, (o, ns) in enumerate(objs) for path, name, by in claim_refs(o)
            if (ns, name) not in defined and not flowtemplate.PLACEHOLDER.search(name)]


def claim_spec_problems(obj: Any) -> list[tuple[str, str]]:
    """(field path, message) of each problem kube-apiserver would find in the claims a vcjob or JobTemplate makes
    from its `spec.volumes[].volumeClaim` (a CronJob's job template too)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("spec"), dict):
        return []
    spec, path = obj["spec"], "spec"
    if obj.get("kind") == "CronJob":
        job = spec.get("jobTemplate")
        spec, path = (job.get("spec") if isinstance(job, dict) else None), "spec.jobTemplate.spec"
    elif obj.get("kind") not in _JOB_KINDS:
        return []
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    out = []
    for i, vol in enumerate(volumes if isinstance(volumes, list) else ()):
        claim = vol.get("volumeClaim") if isinstance(vol, dict) else None
        if isinstance(claim, dict):
            out += [(err.path, f"{err.message}: the claim the vcjob makes from it is refused, so the vcjob waits "
                               "Pending (Volcano's PVCError)")
                    for err in claim_admission.spec_errors(claim, f"{path}.volumes[{i}].volumeClaim")]
    return out


_WAITS = {BY_JOB: "the vcjob waits Pending (Volcano's PVCError)", BY_TEMPLATE: "its pods are never placed",
          BY_POD: "the pod is never placed"}


def undefined_message(name: str, namespace: str, by: str) -> str:
    what = _WAITS.get(by, _WAITS[BY_TEMPLATE])
    return (f'PersistentVolumeClaim "{name}" is not defined in the files given (namespace {namespace}): {what}, '
            f"and vcctl run stops as stuck; {ADD_DOCUMENT} (on a cluster the claim must exist too)")


_NOT_FOUND = (re.compile(r'persistentvolumeclaim "([^"]+)" not found'),
              re.compile(r"pvc (\S+) is not found, the job will be in the Pending state"))
_DELETING = re.compile(r'persistentvolumeclaim "([^"]+)" is being deleted')
_NOT_BOUND = re.compile(r'persistentvolumeclaim "([^"]+)" is not bound')
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
UNBOUND_PLAIN = "a claim its pods mount is not bound to a volume"


def plain_reason(reason: str) -> str | None:
    """A waiting vcjob's or pod's reason in plain words when it waits for a claim; None otherwise."""
    for pattern in _NOT_FOUND:
        found = pattern.search(reason)
        if found:
            return f'claim "{found.group(1)}" not found: {ADD_DOCUMENT}'
    found = _DELETING.search(reason)
    if found:
        return f'claim "{found.group(1)}" is being deleted: a pod that needs it cannot start'
    found = _NOT_BOUND.search(reason)
    if found:
        return f'claim "{found.group(1)}" is not bound to a volume'
    if UNBOUND_IMMEDIATE in reason:
        return UNBOUND_PLAIN + (" (a claim with storageClassName \"\" needs a PersistentVolume that fits it: see "
                                "kubectl describe pvc)")
    return None


def unbound_notes(pods: list[Obj], claims: list[Obj], events: list[Obj]) -> list[str]:
    """`claim <ns>/<name> is <phase>[: <why>]` for each claim, in the order the pods name them, that a pod of `pods`
    (those left unfinished) names and that exists and is not Bound; `why`: the latest Event recorded on that claim
    (the volume controller's or the provisioner's words)."""
    by_key = {(_meta(c).get("namespace") or "", _meta(c).get("name")): c for c in claims if isinstance(c, dict)}
    latest: dict[str, tuple[str, int, str]] = {}   # claim uid -> (last time, order, message)
    for i, ev in enumerate(events):
        inv = ev.get("involvedObject") or {}
        if inv.get("kind") == "PersistentVolumeClaim" and inv.get("uid"):
            when = str(ev.get("lastTimestamp") or ev.get("eventTime") or "")
            latest[inv["uid"]] = max(latest.get(inv["uid"], ("", -1, "")), (when, i, ev.get("message") or ""))
    out, seen = [], set()
    for pod in pods:
        namespace = _meta(pod).get("namespace") or ""
        for path, name, _ in _pod_refs((pod.get("spec") or {}), "spec", BY_POD):
            claim = by_key.get((namespace, name))
            phase = ((claim or {}).get("status") or {}).get("phase") or "Pending"
            if claim is None or phase == "Bound" or (namespace, name) in seen:
                continue
            seen.add((namespace, name))
            why = latest.get(_meta(claim).get("uid") or "", ("", 0, ""))[2]
            out.append(f"claim {namespace}/{name} is {phase}" + (f": {why}" if why else ""))
    return out


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
