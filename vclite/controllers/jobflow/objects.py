"""The objects the JobFlow controller writes, and how it recognises the ones it owns: pure helpers.

A flow's vcjob is built exactly as Volcano builds it (`loadJobTemplateAndSetJob`): name
`<jobflow>-<flow>`, the JobFlow's namespace, labels *and* annotations exactly
`{volcano.sh/createdByJobTemplate: <ns>.<flow>, volcano.sh/createdByJobFlow: <ns>.<jobflow>}` (the
template's own labels and annotations are not copied), `spec` = a deep copy of the template's spec,
and one ownerReference to the JobFlow with `controller: true, blockOwnerDeletion: true`.

`build_instance` adds vclite's flow primitives on top: the instance's name (`<jobflow>-<flow>-<n>` for
loop items and iterations), `flows[].patch.jobSpec` merged onto the spec (flowtemplate.apply_patch),
`{{params.x}}`, `{{item}}`, `{{iteration}}`, `{{outputs.f}}` placeholders filled in (only when the
spec uses one of them: other `{{…}}` text is left alone, so a plain Volcano template is unchanged),
and the template's `flow.volcano.sh/output-task` annotation copied, which designates whose
termination message is the job's output (`output_pod`).

No I/O here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vclite.api import convert, flow, flowtemplate, kinds, meta, placeholdertypes

Obj = dict[str, Any]

# vclite's own finalizer on JobFlows: deletion moves the flow through Terminating and removes its
# vcjobs before the JobFlow disappears (Volcano leaves that to garbage collection, no Terminating).
FINALIZER = "vclite.volcano.sh/jobflow"
# The finalizer kube-apiserver adds for `propagationPolicy: Orphan` (removed by its garbage collector once
# the dependents' ownerReferences are gone); vclite's store orphans at once and never shows it.
ORPHAN_FINALIZER = "orphan"


def owner_labels(jobflow: Obj, flow_name: str) -> dict[str, str]:
    ns = meta.namespace(jobflow)
    return {flow.CREATED_BY_JOB_TEMPLATE: flow.object_string(ns, flow_name),
            flow.CREATED_BY_JOB_FLOW: flow.object_string(ns, meta.name(jobflow))}


def build_job(jobflow: Obj, template: Obj, flow_name: str) -> Obj:
    """The vcjob for flow `flow_name` of `jobflow`, from `template` (a JobTemplate object)."""
    job = convert.template_to_job(template, flow.job_name(meta.name(jobflow), flow_name))
    owner = {"apiVersion": kinds.JOBFLOW.api_version, "kind": kinds.JOBFLOW.kind, "name": meta.name(jobflow),
             "uid": meta.uid(jobflow), "controller": True, "blockOwnerDeletion": True}
    job["metadata"] = {
        "name": job["metadata"]["name"],
        "namespace": meta.namespace(jobflow),
        "labels": owner_labels(jobflow, flow_name),
        "annotations": owner_labels(jobflow, flow_name),
        "ownerReferences": [owner],
    }
    return job


OUTPUT_TASK = flow.OUTPUT_TASK_ANNOTATION
ITEM = flow.ITEM_ANNOTATION
NO_ITEM = object()   # build_instance's `item` for a vcjob that is no loop item


def placeholders(spec: Obj) -> list[str]:
    """The flow placeholders (`params.x`, `outputs.f`, `item…`, `iteration`) a spec uses, sorted."""
    return sorted(flowtemplate.placeholders(spec))


def build_instance(jobflow: Obj, template: Obj, flow_name: str, job_name: str, patch: Obj | None = None,
                   values: Mapping[str, str] | None = None, only: Callable[[str], bool] | None = None,
                   item: Any = NO_ITEM) -> Obj:
    """The vcjob `job_name` of flow `flow_name`: build_job, then the patch, then the placeholders
    (`only` those: flowtemplate.in_context), and a loop item's `item` in the ITEM annotation. ValueError (naming
    the field) when the patch or a placeholder cannot be applied."""
    job = build_job(jobflow, template, flow_name)
    job["metadata"]["name"] = job_name
    spec = flowtemplate.apply_patch(job["spec"], patch) if patch else job["spec"]
    if values is not None and placeholders(spec):
        spec = fill(spec, values, only)
    job["spec"] = spec
    task = meta.annotations(template).get(OUTPUT_TASK)
    if task:
        job["metadata"]["annotations"] = {**job["metadata"]["annotations"], OUTPUT_TASK: task}
    if item is not NO_ITEM:
        job["metadata"]["annotations"] = {**job["metadata"]["annotations"], ITEM: flow.item_text(item)}
    return job


def fill(spec: Obj, values: Mapping[str, str], only: Callable[[str], bool] | None = None) -> Obj:
    """A vcjob spec with its placeholders filled in (`only` those), and its integer and boolean fields that held
    one typed (`replicas: "{{item}}"` -> 3: placeholdertypes). ValueError naming the field of an unknown one."""
    return placeholdertypes.typed(spec, flowtemplate.substitute(spec, values, "spec", only))


def with_active_deadline(job: Obj, seconds: int) -> Obj:
    """`job` whose every task's pods have `activeDeadlineSeconds` at most `seconds` (a retry attempt's
    share of its flow's maxDuration). A new object: `job`'s own dicts, which may be the JobFlow's patch or
    the template's, are not changed."""
    tasks = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if not isinstance(pod_spec, dict):
            tasks.append(task)
            continue
        own = pod_spec.get("activeDeadlineSeconds")
        limit = min(own, seconds) if isinstance(own, int) and not isinstance(own, bool) and own > 0 else seconds
        tasks.append({**task, "template": {**template, "spec": {**pod_spec, "activeDeadlineSeconds": limit}}})
    return {**job, "spec": {**job["spec"], "tasks": tasks}}


def output_pod(job: Obj) -> str:
    """The pod whose termination message is the job's output: the first pod of the task named by the
    `flow.volcano.sh/output-task` annotation, else of the job's first task."""
    tasks = (job.get("spec") or {}).get("tasks") or []
    task = meta.annotations(job).get(OUTPUT_TASK) or (tasks[0].get("name", "") if tasks else "")
    return f"{meta.name(job)}-{task}-0"


PODS_READ = 32   # pods of a failed vcjob read to tell why it failed (a gang of thousands: the first few)


def pod_names(job: Obj, limit: int = PODS_READ) -> list[str]:
    """The names of a vcjob's pods as Volcano makes them (`<job>-<task>-<index>`), task by task, the first
    `limit`."""
    names: list[str] = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        if not isinstance(task, dict):
            continue
        replicas = task.get("replicas", 1)
        replicas = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
        for i in range(min(max(replicas, 0), limit - len(names))):
            names.append(f"{meta.name(job)}-{task.get('name', '')}-{i}")
        if len(names) >= limit:
            break
    return names


def pod_of(pod: Obj, job: Obj) -> bool:
    """Whether `pod` is one of this very vcjob's (its controller ownerReference, when it has one, names the
    vcjob's uid: a pod of an earlier attempt of the same name is not)."""
    ref = meta.controller_ref(pod)
    return ref is None or not ref.get("uid") or not meta.uid(job) or ref.get("uid") == meta.uid(job)


def termination_message(pod: Obj) -> str:
    """The first container (spec order) termination message of a pod's last run, "" if none: what the
    kubelet reports in `state.terminated.message` (an earlier run's, in `lastState`, is not the output)."""
    statuses = {cs.get("name"): cs for cs in (pod.get("status") or {}).get("containerStatuses") or []}
    for c in (pod.get("spec") or {}).get("containers") or []:
        cs = statuses.get(c.get("name")) or {}
        msg = (((cs.get("state") or {}).get("terminated")) or {}).get("message")
        if msg:
            return str(msg)
    return ""


def flow_selector(jobflow: Obj) -> dict[str, str]:
    """Label selector for the vcjobs a JobFlow created (by flow label, not template label: #4089)."""
    return {flow.CREATED_BY_JOB_FLOW: flow.object_string(meta.namespace(jobflow), meta.name(jobflow))}


def split_object_string(value: str) -> tuple[str, str] | None:
    """`<ns>.<name>` -> (ns, name). A namespace is a DNS label (no dots), so the first dot splits;
    names with dots work (Volcano splits on every dot and skips them)."""
    ns, dot, name = (value or "").partition(".")
    return (ns, name) if dot and ns and name else None


def jobflow_key_of(job: Obj) -> str | None:
    """`ns/name` of the JobFlow that controls a vcjob (controller ownerReference first, else the
    createdByJobFlow label), or None if no JobFlow created it."""
    ref = meta.controller_ref(job)
    if ref and ref.get("kind") == kinds.JOBFLOW.kind and \
            kinds.lookup(ref.get("apiVersion", ""), kinds.JOBFLOW.kind) is not None:
        return f"{meta.namespace(job)}/{ref.get('name', '')}"
    parsed = split_object_string(meta.labels(job).get(flow.CREATED_BY_JOB_FLOW, ""))
    return f"{parsed[0]}/{parsed[1]}" if parsed else None


def belongs_to(job: Obj, jobflow: Obj) -> bool:
    """Whether `job` is one of `jobflow`'s vcjobs: it carries the flow label, and its controller
    ownerReference (if any) names this JobFlow's uid — not a same-named JobFlow deleted earlier."""
    if meta.labels(job).get(flow.CREATED_BY_JOB_FLOW) != flow.object_string(meta.namespace(jobflow),
                                                                              meta.name(jobflow)):
        return False
    ref = meta.controller_ref(job)
    if ref is None or ref.get("kind") != kinds.JOBFLOW.kind or not ref.get("uid") or not meta.uid(jobflow):
        return True
    return ref.get("uid") == meta.uid(jobflow)


def collected_with(jobflow: Obj, jobs: list[Obj]) -> list[Obj]:
    """The vcjobs deleting `jobflow` takes with it, as Kubernetes' garbage collector decides: those whose
    ownerReferences still name the JobFlow's uid. A deletion with `propagationPolicy: Orphan` (kubectl
    delete --cascade=orphan) takes none: the store has removed those references already, and on a
    cluster, while the `orphan` finalizer is there, the garbage collector is removing them."""
    if ORPHAN_FINALIZER in (jobflow.get("metadata") or {}).get("finalizers") or []:
        return []
    owner = meta.uid(jobflow)
    return [j for j in jobs if owner and any(r.get("uid") == owner for r in meta.owner_references(j))]
