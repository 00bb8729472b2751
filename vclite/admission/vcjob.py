"""Admission for vcjobs (batch.volcano.sh Job): Volcano's mutating defaults and its validating rules,
including the ones Volcano moved to the CRD schema / ValidatingAdmissionPolicy, with Volcano's
messages and a field path on every error.

Sources: pkg/webhooks/admission/jobs/{mutate/mutate_job.go, validate/admit_job.go, validate/util.go}
and installer/helm/chart/volcano/policy/jobs-validating.yaml. Differences, on purpose: every problem
is reported (Volcano's UPDATE check stops at the first), the pod-name length check uses the largest
replica index (Volcano uses the task index), undefined `dependsOn` names and cycles are named, and
containers must have a command (vclite runs pods as local processes; `Options.require_command`) — but
those the ray plugin gives one (`plugin_commands`).
The spec-level functions are shared with JobTemplate. Pure functions; the only reads go through View.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, pod, policies, shapes
from vclite.api import batch, kinds, meta, quantity, scheduling
from vclite.lib import clock, dag, errors, goflags
from vclite.lib import jsoncopy

Obj = dict[str, Any]
FieldError = errors.FieldError

TOPOLOGY_NONE = "none"
TOPOLOGY_POLICIES = (TOPOLOGY_NONE, "best-effort", "restricted", "single-numa-node")
_FRAMEWORK_PLUGINS = ("tensorflow", "mpi", "pytorch", "ray")
_UPDATE_ONLY = ("job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` "
                "and `PriorityClassName`")
DAG_MESSAGE = "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)"


# ---- mutation ----------------------------------------------------------------------------------

def mutate(op: base.Operation, obj: Obj) -> None:
    """Volcano defaults vcjobs on CREATE only; vclite fills absent defaults on UPDATE too, so re-applying
    an unchanged manifest is not refused: `kubectl apply`'s JSON merge patch replaces `tasks` with the
    file's, without their defaults (task maxRetry, minAvailable…), and the update rule then saw them
    change (upstream volcano-sh/volcano#2238). A field the update really changes is still refused."""
    if op in (base.Operation.CREATE, base.Operation.UPDATE) and isinstance(obj.get("spec"), dict):
        set_spec_defaults(obj["spec"])


def set_spec_defaults(spec: Obj) -> None:
    """mutate_job.go createPatch: queue, schedulerName, maxRetry, per-task name / dnsPolicy /
    minAvailable / maxRetry, job minAvailable = Σ task minAvailable, svc/ssh plugins. A string field is
    defaulted when absent or empty only: `queue: off` (YAML's false) is refused as no string, not taken
    for an empty queue."""
    if spec.get("queue") in (None, ""):
        spec["queue"] = batch.DEFAULT_QUEUE
    if spec.get("schedulerName") in (None, ""):
        spec["schedulerName"] = batch.DEFAULT_SCHEDULER
    if spec.get("maxRetry") in (None, 0):
        spec["maxRetry"] = batch.DEFAULT_MAX_RETRY
    tasks = spec.get("tasks")
    if isinstance(tasks, list):
        for i, task in enumerate(tasks):
            if isinstance(task, dict):
                _set_task_defaults(task, i)
    if spec.get("minAvailable") in (None, 0) and isinstance(tasks, list):
        mins = [t.get("minAvailable") for t in tasks if isinstance(t, dict)]
        if all(common.is_int(m) for m in mins):
            spec["minAvailable"] = sum(mins)
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        if any(p in plugins for p in _FRAMEWORK_PLUGINS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])


def _set_task_defaults(task: Obj, index: int) -> None:
    if task.get("name") in (None, ""):
        task["name"] = f"default{index}"
    pod_spec = common.dict_at(task.get("template"), "spec")
    if pod_spec.get("hostNetwork") is True and not pod_spec.get("dnsPolicy"):
        pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if task.get("minAvailable") is None:
        pp = common.dict_at(task, "partitionPolicy")
        min_parts, size = pp.get("minPartitions"), pp.get("partitionSize")
        if common.is_int(min_parts) and min_parts > 0 and common.is_int(size):
            task["minAvailable"] = min_parts * size
        elif common.is_int(task.get("replicas", 0)) and 0 <= task.get("replicas", 0) <= common.INT32_MAX:
            task["minAvailable"] = task.get("replicas", 0)  # (a count out of range is reported, not copied)
    if task.get("maxRetry") in (None, 0):
        task["maxRetry"] = batch.DEFAULT_MAX_RETRY


# ---- dispatch ----------------------------------------------------------------------------------

def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    if op is base.Operation.UPDATE and old is not None:
        return validate_update(spec, common.dict_at(old, "spec"))
    return validate_spec(spec, meta.name(new), view, options) + _pod_annotations(new)


def _pod_annotations(job: Obj) -> list[FieldError]:
    """vclite: the disruption budget annotations its pods will carry — the job's (the controller copies
    one of them) and each task template's — are checked as Volcano's pod webhook checks each pod, so a
    bad one is refused with the job rather than making every pod creation fail."""
    errs = pod.jdb_annotations(meta.annotations(job), "metadata.annotations", one_only=False)
    for i, task in enumerate(common.list_at(job.get("spec"), "tasks")):
        template_md = common.dict_at(common.dict_at(task, "template"), "metadata")
        errs += pod.jdb_annotations(template_md.get("annotations"), f"spec.tasks[{i}].template.metadata.annotations")
    return errs


# ---- CREATE ------------------------------------------------------------------------------------

def validate_spec(spec: Obj, job_name: str, view: base.View, options: base.Options,
                  live_queue: bool = True) -> list[FieldError]:
    """Every CREATE rule of admit_job.go validateJobCreate plus the CRD/VAP rules, on a defaulted spec.
    Without `live_queue`, the queue named is not looked up (exists, Open, leaf): a JobTemplate's."""
    errs: list[FieldError] = []
    tasks = spec.get("tasks")
    if not tasks:
        errs.append(FieldError("spec.tasks", "No task specified in job spec"))
    elif not isinstance(tasks, list):
        errs.append(FieldError("spec.tasks", common.type_error(tasks, "array")))
        tasks = []
    reported = len(errs)
    total = _validate_tasks(tasks or [], job_name, options, errs, plugin_commands(spec.get("plugins")))
    if _min_available_derived(spec, any(e.path.endswith(".minAvailable") for e in errs[reported:])):
        _validate_job_fields(spec, None, errs, check_min_available=False)
    else:
        _validate_job_fields(spec, total, errs)
    # Volcano's own name check; only its length rule can fail once the name is a valid subdomain.
    name_msgs = common.qualified_name(job_name) if job_name and not common.dns1123_subdomain(job_name) else []
    if name_msgs:
        errs.append(FieldError("metadata.name", f"create job with name {job_name} validate failed [{' '.join(name_msgs)}]"))
    errs += policies.validate_policies(spec.get("policies"), "spec.policies")
    errs += _validate_plugins(spec, tasks or [])
    errs += _validate_volumes(spec.get("volumes"))
    queue = spec.get("queue")
    if isinstance(queue, str) and queue:
        errs += validate_queue(queue, view) if live_queue else []
    else:
        errs.append(FieldError("spec.queue", common.REQUIRED if queue in (None, "")
                               else common.type_error(queue, "string")))
    errs += _validate_task_dag(tasks or [])
    return errs


def _min_available_derived(spec: Obj, task_min_errors: bool) -> bool:
    """The job's minAvailable is the sum of its tasks' (as the defaults make it when absent) and a task's
    minAvailable is already refused: the job-level rules would only repeat that problem, at a line the
    user may never have written (Volcano reports both)."""
    mins = [t.get("minAvailable") for t in common.list_at(spec, "tasks") if isinstance(t, dict)]
    return task_min_errors and all(common.is_int(m) for m in mins) and spec.get("minAvailable") == sum(mins)


def _validate_job_fields(spec: Obj, total_replicas: int | None, errs: list[FieldError],
                         check_min_available: bool = True) -> None:
    min_available = common.check_int(spec, "minAvailable", "spec.minAvailable", errs,
                                     minimum=0) if check_min_available else None
    if min_available is not None and total_replicas is not None and min_available > total_replicas:
        errs.append(FieldError("spec.minAvailable", "job 'minAvailable' should not be greater than total replicas in tasks"))
    common.check_int(spec, "maxRetry", "spec.maxRetry", errs, minimum=0)
    common.check_int(spec, "ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished", errs, minimum=0)
    common.check_int(spec, "minSuccess", "spec.minSuccess", errs, minimum=1)
    scheduler = common.check_type(spec, "schedulerName", "spec.schedulerName", errs, str, "string")
    if scheduler and len(scheduler) > 63:
        errs.append(FieldError("spec.schedulerName", common.invalid(scheduler, "must be no more than 63 characters")))
    pcn = common.check_type(spec, "priorityClassName", "spec.priorityClassName", errs, str, "string")
    if pcn:
        errs += [FieldError("spec.priorityClassName", common.invalid(pcn, m)) for m in common.dns1123_subdomain(pcn)]
    errs += _validate_network_topology(spec.get("networkTopology"), "spec.networkTopology")
    check_running_estimate(spec, "spec.runningEstimate", errs)


def check_running_estimate(spec: Obj, path: str, errs: list[FieldError]) -> None:
    """`runningEstimate` is a *metav1.Duration: Volcano's webhook cannot decode a job whose value is not a
    string Go's time.ParseDuration reads (`90s`, `1h30m`, `1.5h`, `-2m`, `0`), so the job is refused.
    A number written for it (`5`) is told what works (`"5s"`): quoting it would not do, Go's
    durations need a unit (but `0`, which is refused as a number and works quoted)."""
    raw = spec.get("runningEstimate")
    if isinstance(raw, bool):
        errs.append(FieldError(path, common.invalid(raw, 'must be a duration string such as "90s", "30m" or "1h30m"')))
        return
    if isinstance(raw, int | float) and raw != 0:
        errs.append(FieldError(path, common.invalid(raw, _NEEDS_UNIT.format(n=f"{raw:g}"))))
        return
    value = common.check_type(spec, "runningEstimate", path, errs, str, "string")
    if value is None:
        return
    try:
        clock.parse_duration(value)
    except ValueError:
        bare = _bare_number(value)
        why = _NEEDS_UNIT.format(n=bare) if bare else 'must be a duration such as "90s", "30m" or "1h30m"'
        errs.append(FieldError(path, common.invalid(value, f"time: invalid duration {common.show(value)}: {why}")))


_NEEDS_UNIT = 'must be a duration string with a unit, such as "{n}s" or "{n}m" (a bare number is no Go duration)'


def _bare_number(text: str) -> str:
    """`text` as a number `{:g}` shows (`"5"` -> `5`), or "" if it is not one."""
    try:
        number = float(text)
    except ValueError:
        return ""
    return f"{number:g}" if number == number and abs(number) != float("inf") else ""


def _validate_network_topology(nt: Any, path: str) -> list[FieldError]:
    return common.network_topology(nt, path)


def plugin_commands(plugins: Any) -> dict[str, frozenset[str]]:
    """task name -> the names of its containers whose command a job plugin sets when their pods are
    made: ray's head and worker containers (`ray start …`, ray.go OnPodCreate), so a ray job needs no
    command of its own there, as Volcano's ray example writes it."""
    if not isinstance(plugins, dict) or "ray" not in plugins:
        return {}
    f = goflags.parse(plugins["ray"] if isinstance(plugins["ray"], list) else [], batch.RAY_PLUGIN_FLAGS)[0]
    out: dict[str, frozenset[str]] = {}
    for task, container in ((f["head"], f["headContainer"]), (f["worker"], f["workerContainer"])):
        out[task] = out.get(task, frozenset()) | {container}
    return out


def _validate_tasks(tasks: list, job_name: str, options: base.Options, errs: list[FieldError],
                    commanded: dict[str, frozenset[str]]) -> int | None:
    """Per-task rules; returns Σ replicas, or None when some task's replicas is invalid (already
    reported: the rules comparing with replicas would only repeat it). `commanded`: plugin_commands."""
    names: set[str] = set()
    total: int | None = 0
    for i, task in enumerate(tasks):
        tp = f"spec.tasks[{i}]"
        if not isinstance(task, dict):
            errs.append(FieldError(tp, common.type_error(task, "object")))
            continue
        name = common.check_type(task, "name", f"{tp}.name", errs, str, "string") or ""
        if task.get("name") in (None, ""):
            errs.append(FieldError(f"{tp}.name", common.REQUIRED))
        elif name:
            errs += [FieldError(f"{tp}.name", common.invalid(name, m)) for m in common.dns1123_label(name)]
            if name in names:
                errs.append(FieldError(f"{tp}.name", f"duplicated task name {name}"))
            names.add(name)
        reported = len(errs)
        replicas = common.check_int(task, "replicas", f"{tp}.replicas", errs, minimum=0)
        if len(errs) > reported:
            total = None
        replicas = replicas if replicas is not None else 0
        total = None if total is None else total + replicas
        min_av = common.check_int(task, "minAvailable", f"{tp}.minAvailable", errs, minimum=0)
        if min_av is not None and min_av > replicas and len(errs) == reported:
            errs.append(FieldError(f"{tp}.minAvailable",
                                   f"'minAvailable' is greater than 'replicas' in task: {name}, job: {job_name}"))
        common.check_int(task, "maxRetry", f"{tp}.maxRetry", errs, minimum=0)
        errs += policies.validate_policies(task.get("policies"), f"{tp}.policies")
        if name and job_name:
            pod_name = f"{job_name}-{name}-{max(replicas - 1, 0)}"
            msgs = common.qualified_name(pod_name)
            if msgs:
                errs.append(FieldError(f"{tp}.name", f"create pod with name {pod_name} validate failed [{' '.join(msgs)}]"))
        errs += _validate_template(task, i, options, commanded.get(name, frozenset()))
        errs += _validate_partition_policy(task, tp, name, job_name)
        errs += _validate_depends_on_shape(task.get("dependsOn"), f"{tp}.dependsOn")
    return total


def _validate_template(task: Obj, index: int, options: base.Options,
                       commanded: frozenset[str] = frozenset()) -> list[FieldError]:
    tp = f"spec.tasks[{index}].template"
    template = task.get("template")
    if not isinstance(template, dict):
        return [FieldError(tp, common.REQUIRED if template is None else common.type_error(template, "object"))]
    errs = pod.validate_pod_spec(template.get("spec"), f"{tp}.spec", require_command=options.require_command,
                                 commanded=commanded, crd=True)
    errs += shapes.check(template.get("metadata"), shapes.TEMPLATE_METADATA, f"{tp}.metadata")
    policy = task.get("topologyPolicy")
    if policy in (None, "", TOPOLOGY_NONE):
        return errs
    if policy not in TOPOLOGY_POLICIES:
        return errs + [FieldError(f"spec.tasks[{index}].topologyPolicy", common.unsupported(policy, TOPOLOGY_POLICIES))]
    spec = common.dict_at(template, "spec")
    containers = [("containers", j, c) for j, c in enumerate(common.list_at(spec, "containers"))]
    containers += [("initContainers", j, c) for j, c in enumerate(common.list_at(spec, "initContainers"))]
    for number, (key, j, c) in enumerate(containers):
        if not _integral_cpu(c):
            errs.append(FieldError(f"{tp}.spec.{key}[{j}].resources.requests.cpu",
                                   f"the cpu request isn't an integer in spec.task[{index}] container[{number}]."))
    return errs


def _integral_cpu(container: Any) -> bool:
    """admit_job.go guaranteedCPUs != 0: requests (or limits when there are no requests) name a whole,
    non-zero number of cpus."""
    res = common.dict_at(container, "resources")
    requests = common.dict_at(res, "requests") or common.dict_at(res, "limits")
    try:
        cpu = quantity.parse(requests.get("cpu", 0))
    except ValueError:
        return True  # already reported as an unparseable quantity
    return cpu.denominator == 1 and cpu != 0


def _validate_partition_policy(task: Obj, tp: str, name: str, job_name: str) -> list[FieldError]:
    pp = task.get("partitionPolicy")
    if pp is None:
        return []
    path = f"{tp}.partitionPolicy"
    if not isinstance(pp, dict):
        return [FieldError(path, common.type_error(pp, "object"))]
    errs: list[FieldError] = []
    total = common.check_int(pp, "totalPartitions", f"{path}.totalPartitions", errs) or 0
    size = common.check_int(pp, "partitionSize", f"{path}.partitionSize", errs) or 0
    min_parts = common.check_int(pp, "minPartitions", f"{path}.minPartitions", errs, minimum=0) or 0
    replicas = task.get("replicas", 0)
    min_av = task.get("minAvailable")
    where = f"in task: {name}, job: {job_name}"
    if total <= 0:
        errs.append(FieldError(f"{path}.totalPartitions", f"'TotalPartitions' must be greater than 0 {where}"))
    elif size <= 0:
        errs.append(FieldError(f"{path}.partitionSize", f"'PartitionSize' must be greater than 0 {where}"))
    elif replicas != total * size:
        errs.append(FieldError(f"{tp}.replicas", f"'Replicas' are not equal to TotalPartitions*PartitionSize {where}"))
    elif common.is_int(min_av) and min_parts > 0 and min_parts * size != min_av:
        errs.append(FieldError(f"{tp}.minAvailable", f"'MinAvailable' is not equal to MinPartitions*PartitionSize {where}"))
    return errs + _validate_network_topology(pp.get("networkTopology"), f"{path}.networkTopology")


def _validate_depends_on_shape(dep: Any, path: str) -> list[FieldError]:
    if dep is None:
        return []
    if not isinstance(dep, dict):
        return [FieldError(path, common.type_error(dep, "object"))]
    return common.string_array_errors(dep.get("name"), f"{path}.name", crd=True)


def _validate_task_dag(tasks: list) -> list[FieldError]:
    """Task `dependsOn.name` must name tasks of this job and form a DAG (admit_job.go topoSort)."""
    graph: dict[str, list[str]] = {}
    paths: dict[str, str] = {}
    for i, task in enumerate(tasks):
        if isinstance(task, dict) and isinstance(task.get("name"), str) and task["name"] not in graph:
            names = common.list_at(common.dict_at(task, "dependsOn"), "name")
            graph[task["name"]] = [n for n in names if isinstance(n, str)]
            paths[task["name"]] = f"spec.tasks[{i}].dependsOn.name"
    errs: list[FieldError] = []
    undefined = set(dag.undefined_vertices(graph))
    for vertex, deps in graph.items():
        for k, d in enumerate(deps):
            if d in undefined:
                errs.append(FieldError(f"{paths[vertex]}[{k}]", f'{DAG_MESSAGE}: task "{d}" is not defined'))
    cycle = dag.find_cycle({v: [d for d in deps if d in graph] for v, deps in graph.items()})
    if cycle:
        errs.append(FieldError(paths[cycle[0]], f"{DAG_MESSAGE} (cycle: {' -> '.join(cycle)})"))
    return errs


def _validate_plugins(spec: Obj, tasks: list) -> list[FieldError]:
    plugins = spec.get("plugins")
    if plugins is None:
        return []
    if not isinstance(plugins, dict):
        return [FieldError("spec.plugins", common.type_error(plugins, "object"))]
    errs: list[FieldError] = []
    for name, args in plugins.items():
        if name not in batch.KNOWN_PLUGINS:
            errs.append(FieldError(f"spec.plugins.{name}", f"unable to find job plugin: {name}"))
        errs += common.string_array_errors(args, f"spec.plugins.{name}", crd=True)
    if "mpi" in plugins:
        master = mpi_master_name(plugins["mpi"] if isinstance(plugins["mpi"], list) else [])
        if master not in [t.get("name") for t in tasks if isinstance(t, dict)]:
            errs.append(FieldError("spec.plugins.mpi", "The specified mpi master task was not found"))
    if "ray" in plugins:   # (vclite: Volcano accepts it, then can never create the job's pods)
        args = plugins["ray"] if isinstance(plugins["ray"], list) else []
        head = goflags.parse(args, batch.RAY_PLUGIN_FLAGS)[0]["head"]
        if head not in [t.get("name") for t in tasks if isinstance(t, dict)]:
            errs.append(FieldError("spec.plugins.ray", f"the ray head task {head!r} was not found"))
    return errs


def mpi_master_name(args: list) -> str:
    """The mpi plugin's `--master` flag, parsed as Go's flag package does; default `master`."""
    return goflags.parse(args, batch.MPI_PLUGIN_FLAGS)[0]["master"]


def _validate_volumes(volumes: Any) -> list[FieldError]:
    if volumes is None:
        return []
    if not isinstance(volumes, list):
        return [FieldError("spec.volumes", common.type_error(volumes, "array"))]
    errs: list[FieldError] = []
    mounts: set[str] = set()
    for k, vol in enumerate(volumes):
        vp = f"spec.volumes[{k}]"
        if not isinstance(vol, dict):
            errs.append(FieldError(vp, common.type_error(vol, "object")))
            continue
        mount = common.check_type(vol, "mountPath", f"{vp}.mountPath", errs, str, "string")
        claim_name = common.check_type(vol, "volumeClaimName", f"{vp}.volumeClaimName", errs, str, "string")
        claim = common.check_type(vol, "volumeClaim", f"{vp}.volumeClaim", errs, dict, "object")
        if vol.get("mountPath") in (None, ""):
            errs.append(FieldError(f"{vp}.mountPath", "mountPath is required"))
        elif mount in mounts:
            errs.append(FieldError(f"{vp}.mountPath", f"duplicated mountPath: {mount}"))
        if mount:
            mounts.add(mount)
        if vol.get("volumeClaim") is None and not vol.get("volumeClaimName"):
            errs.append(FieldError(vp, "either VolumeClaim or VolumeClaimName must be specified"))
        elif claim_name and claim is not None:
            errs.append(FieldError(vp, "conflict: If you want to use an existing PVC, just specify VolumeClaimName."
                                       "If you want to create a new PVC, you do not need to specify VolumeClaimName"))
        elif claim_name:
            msgs = common.dns1123_subdomain(str(claim_name))
            if msgs:
                errs.append(FieldError(f"{vp}.volumeClaimName", f"invalid VolumeClaimName {claim_name} : [{' '.join(msgs)}]"))
    return errs


def validate_queue(name: str, view: base.View) -> list[FieldError]:
    """The queue exists, is Open (no status yet counts as Open), is not `root`, and has no child queues."""
    q = view.get(kinds.QUEUE, "", name)
    if q is None:
        return [FieldError("spec.queue", f'unable to find job queue: {kinds.QUEUE.resource} "{name}" not found')]
    errs: list[FieldError] = []
    state = common.dict_at(q, "status").get("state") or scheduling.QueueState.OPEN
    if state != scheduling.QueueState.OPEN:
        errs.append(FieldError("spec.queue", f"can only submit job to queue with state `Open`, queue `{name}` status is `{state}`"))
    if name == scheduling.ROOT_QUEUE:
        errs.append(FieldError("spec.queue", "can not submit job to root queue"))
    else:
        children = [c for c in view.list(kinds.QUEUE) if common.dict_at(c, "spec").get("parent") == name]
        if children:
            errs.append(FieldError("spec.queue", f"can only submit job to leaf queue, queue `{name}` has {len(children)} child queues"))
    return errs


# ---- UPDATE ------------------------------------------------------------------------------------

def validate_update(new: Obj, old: Obj) -> list[FieldError]:
    """admit_job.go validateJobUpdate: only minAvailable, tasks[*].replicas, tasks[*].minAvailable and
    priorityClassName may change, within bounds; tasks may not be added or removed."""
    errs: list[FieldError] = []
    tasks = common.list_at(new, "tasks")
    total = 0
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        tp, name = f"spec.tasks[{i}]", task.get("name", "")
        replicas = common.check_int(task, "replicas", f"{tp}.replicas", errs)
        replicas = replicas if replicas is not None else 0
        min_av = common.check_int(task, "minAvailable", f"{tp}.minAvailable", errs)
        if replicas < 0:
            errs.append(FieldError(f"{tp}.replicas", f"'replicas' must be >= 0 in task: {name}"))
        if min_av is not None and min_av < 0:
            errs.append(FieldError(f"{tp}.minAvailable", f"'minAvailable' must be >= 0 in task: {name}"))
        elif min_av is not None and min_av > replicas:
            errs.append(FieldError(f"{tp}.minAvailable", f"'minAvailable' must be <= 'replicas' in task: {name}"))
        errs += _validate_partition_policy(task, tp, name, "")
        total += replicas
    min_available = common.check_int(new, "minAvailable", "spec.minAvailable", errs)
    if min_available is not None and min_available > total:
        errs.append(FieldError("spec.minAvailable", "job 'minAvailable' must not be greater than total replicas"))
    if min_available is not None and min_available < 0:
        errs.append(FieldError("spec.minAvailable", "job 'minAvailable' must be >= 0"))
    errs += _validate_network_topology(new.get("networkTopology"), "spec.networkTopology")
    if len(tasks) != len(common.list_at(old, "tasks")):
        errs.append(FieldError("spec.tasks", "job updates may not add or remove tasks"))
    else:
        errs += [FieldError(p, _UPDATE_ONLY) for p in _diff_paths(_frozen_part(old), _frozen_part(new), "spec")]
    return errs


def _frozen_part(spec: Obj) -> Any:
    """The spec without the fields an update may change, empty values dropped (Go's zero values), its
    absent defaults filled as the new spec's are (`mutate`): a stored spec not defaulted (written before
    admission defaulted it) does not make every default a change."""
    s = jsoncopy.deep_copy(spec)
    set_spec_defaults(s)
    for key in ("minAvailable", "priorityClassName"):
        s.pop(key, None)
    for task in common.list_at(s, "tasks"):
        if isinstance(task, dict):
            task.pop("replicas", None)
            task.pop("minAvailable", None)
    for vol in common.list_at(s, "volumes"):
        if isinstance(vol, dict) and vol.get("volumeClaim") is not None:
            vol.pop("volumeClaimName", None)  # filled in by the controller
    return _drop_empty(s)


def _drop_empty(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _drop_empty(v) for k, v in x.items() if v not in (None, "", [], {})}
    if isinstance(x, list):
        return [_drop_empty(v) for v in x]
    return x


def _diff_paths(a: Any, b: Any, path: str) -> list[str]:
    """Paths where two JSON values differ, descending into dicts and equal-length lists."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in list(a) + [k for k in b if k not in a]:
            if a.get(k) != b.get(k):
                out += _diff_paths(a.get(k), b.get(k), f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _diff_paths(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]
