"""Admission for Pods, and the pod-spec checks vcjob task templates share: what vclite needs to run a
pod — named containers, parseable resource quantities, a restart policy it knows, and (for local
processes) a command.

Light by design: this is not Kubernetes' full ValidatePod; images may be absent and probes are not
checked. What would make a pod fail to start on any cluster is refused here, with Kubernetes'
messages, rather than left to the kubelet: a volumeMount naming no volume, two mounts on one path,
a volume name used twice, an env var whose `valueFrom` names no source or several, a downward-API
`fieldPath` env vars cannot read. `mutate` applies Kubernetes' pod defaults: a limit without a request
becomes the request (containers and init containers; the scheduler already counted limits so), and a
created pod gets `restartPolicy: Always` and `schedulerName: default-scheduler` if it has none, and its
`status.qosClass`. An update may change only what kube-apiserver lets it (podupdate.py); a create may not
bring ephemeral containers, nor a node while scheduling gates hold the pod.
Pure functions; nothing here reads the store.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import (base, common, podannotations, podpriority, podupdate, resgroups, serviceaccount,
                              shapes, tolerations)
from vclite.api import batch, core, quantity, resources, scheduling
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

_RESTART_POLICIES = tuple(p.value for p in core.RestartPolicy)
DEFAULT_SCHEDULER_NAME = "default-scheduler"   # Kubernetes' SetDefaults_PodSpec


def no_command_message(name: str, has_args: bool = False) -> str:
    what = "has args but no command" if has_args else "has no command"
    return (f'container "{name}" {what}: vclite runs pods as local processes and cannot run an '
            "image's default entrypoint")


def validate_pod_spec(spec: Any, path: str, *, require_command: bool,
                      commanded: frozenset[str] = frozenset(), crd: bool = False) -> list[FieldError]:
    """Check a PodSpec at `path` (e.g. `spec.tasks[0].template.spec`). `commanded`: the names of the
    (app) containers a job plugin gives a command (ray's head and worker): they need none of their own.
    `crd`: the spec is a CRD's (a vcjob's template): a field of the wrong type, an array's item included, is
    refused in the words of the CRD's schema validation (common.crd_type_error)."""
    if not isinstance(spec, dict):
        return [FieldError(path, common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if containers is None or containers == []:   # (another type is the shape check's one error)
        errs.append(FieldError(f"{path}.containers", common.REQUIRED))
    seen: set[str] = set()
    volumes = _volume_names(spec.get("volumes"), f"{path}.volumes", errs)
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            errs.append(FieldError(f"{path}.{key}", common.type_error(items, "array")))
            continue
        for j, c in enumerate(items):
            own = key == "containers" and isinstance(c, dict) and isinstance(c.get("name"), str) \
                and c["name"] in commanded
            errs += _validate_container(c, f"{path}.{key}[{j}]", seen, require_command and not own, crd)
            if isinstance(c, dict):
                errs += _volume_mounts(c.get("volumeMounts"), f"{path}.{key}[{j}].volumeMounts", volumes)
                errs += _env(c.get("env"), f"{path}.{key}[{j}].env")
    policy = spec.get("restartPolicy")
    if policy not in (None, "") and policy not in _RESTART_POLICIES:
        errs.append(FieldError(f"{path}.restartPolicy", common.unsupported(policy, _RESTART_POLICIES)))
    common.parse_resource_list(spec.get("overhead"), f"{path}.overhead", errs)
    errs += tolerations.errors_of(spec.get("tolerations"), f"{path}.tolerations")
    errs += _pod_level_resources(spec, path)
    errs += _seconds(spec, path)
    errs += serviceaccount.pod_errors(spec, path)
    return errs + shapes.check(spec, shapes.POD_SPEC, path, crd=crd)


MAX_INT32 = 2**31 - 1


def _seconds(spec: dict, path: str) -> list[FieldError]:
    """activeDeadlineSeconds between 1 and 2^31-1, as Kubernetes (a mistyped value is the shape
    check's error). A negative terminationGracePeriodSeconds is accepted: Kubernetes reads it as 1."""
    value = spec.get("activeDeadlineSeconds")
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= MAX_INT32:
        return [FieldError(f"{path}.activeDeadlineSeconds",
                           common.invalid(value, f"must be between 1 and {MAX_INT32}, inclusive"))]
    return []


def _validate_container(c: Any, path: str, seen: set[str], require_command: bool,
                        crd: bool = False) -> list[FieldError]:
    if not isinstance(c, dict):
        return [FieldError(path, common.type_error(c, "object"))]
    errs: list[FieldError] = []
    name = c.get("name")
    if name in (None, ""):
        errs.append(FieldError(f"{path}.name", common.REQUIRED))
    elif not isinstance(name, str):
        errs.append(FieldError(f"{path}.name", common.type_error(name, "string")))
    else:
        errs += [FieldError(f"{path}.name", common.invalid(name, m)) for m in common.dns1123_label(name)]
        if name in seen:
            errs.append(FieldError(f"{path}.name", common.duplicate(name)))
        seen.add(name)
    for key in ("command", "args"):
        errs += common.string_array_errors(c.get(key), f"{path}.{key}", crd)
    if require_command and not c.get("command"):   # args alone would go to the image's entrypoint
        errs.append(FieldError(f"{path}.command", no_command_message(name if isinstance(name, str) else "",
                                                                     bool(c.get("args")))))
    errs += validate_resources(c.get("resources"), f"{path}.resources")
    errs += _container_ports(c.get("ports"), f"{path}.ports")
    return errs + shapes.check(c, shapes.CONTAINER, path, crd=crd)


PORT_RANGE = "must be between 1 and 65535, inclusive"
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _container_ports(ports: Any, path: str) -> list[FieldError]:
    """Kubernetes' validateContainerPorts, for the ports whose fields have the right types (the shape
    check reports the others): containerPort 1..65535 (required), hostPort 0 or 1..65535, a known protocol."""
    errs: list[FieldError] = []
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        at = f"{path}[{i}]"
        number, host, protocol = port.get("containerPort"), port.get("hostPort"), port.get("protocol")
        if number in (None, 0):
            errs.append(FieldError(f"{at}.containerPort", common.REQUIRED))
        elif common.is_int(number) and not 1 <= number <= 65535:
            errs.append(FieldError(f"{at}.containerPort", common.invalid(number, PORT_RANGE)))
        if common.is_int(host) and host != 0 and not 1 <= host <= 65535:
            errs.append(FieldError(f"{at}.hostPort", common.invalid(host, PORT_RANGE)))
        if isinstance(protocol, str) and protocol and protocol not in PORT_PROTOCOLS:
            errs.append(FieldError(f"{at}.protocol", common.unsupported(protocol, PORT_PROTOCOLS)))
    return errs


# ---- references inside a pod (Kubernetes' ValidatePodSpec: volumes, volumeMounts, env) ----------
# the fieldPaths an env var can read (validEnvDownwardAPIFieldPathExpressions), besides
# metadata.labels['k'] / metadata.annotations['k']
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
_SUBSCRIPTED_PATH = re.compile(r"metadata\.(labels|annotations)\['(.*)'\]")
ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
_NO_SOURCE = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"


def _volume_names(volumes: Any, path: str, errs: list[FieldError]) -> set[str] | None:
    """The pod's volume names (None: `volumes` is mistyped, mounts are not checked against it); a
    name missing, not a DNS label or used twice is an error."""
    if volumes is None:
        return set()
    if not isinstance(volumes, list):
        return None   # (the shape check reports it)
    names: set[str] = set()
    for k, vol in enumerate(volumes):
        if not isinstance(vol, dict) or not isinstance(vol.get("name", ""), str):
            continue   # (the shape check reports it)
        name = vol.get("name") or ""
        if not name:
            errs.append(FieldError(f"{path}[{k}].name", common.REQUIRED))
            continue
        errs += [FieldError(f"{path}[{k}].name", common.invalid(name, m)) for m in common.dns1123_label(name)]
        if name in names:
            errs.append(FieldError(f"{path}[{k}].name", common.duplicate(name)))
        names.add(name)
    return names


def _volume_mounts(mounts: Any, path: str, volumes: set[str] | None) -> list[FieldError]:
    """Each mount names a volume of the pod and a path no other mount of the container uses."""
    if not isinstance(mounts, list):
        return []   # (absent, or mistyped: the shape check reports it)
    errs: list[FieldError] = []
    paths: set[str] = set()
    for k, vm in enumerate(mounts):
        if not isinstance(vm, dict):
            continue
        name, mount_path = vm.get("name"), vm.get("mountPath")
        if name in (None, ""):
            errs.append(FieldError(f"{path}[{k}].name", common.REQUIRED))
        elif isinstance(name, str) and volumes is not None and name not in volumes:
            errs.append(FieldError(f"{path}[{k}].name", f"Not found: {common.show(name)}"))
        if mount_path in (None, ""):
            errs.append(FieldError(f"{path}[{k}].mountPath", common.REQUIRED))
        elif isinstance(mount_path, str):
            if mount_path in paths:
                errs.append(FieldError(f"{path}[{k}].mountPath", common.invalid(mount_path, "must be unique")))
            paths.add(mount_path)
        sub = vm.get("subPath")
        if isinstance(sub, str) and sub:
            if sub.startswith("/"):
                errs.append(FieldError(f"{path}[{k}].subPath", common.invalid(sub, "must be a relative path")))
            elif ".." in sub.split("/"):
                errs.append(FieldError(f"{path}[{k}].subPath", common.invalid(sub, "must not contain '..'")))
    return errs


def _env(env: Any, path: str) -> list[FieldError]:
    """Each env var has a name and a value, or a `valueFrom` with exactly one source (an env
    fieldPath one Kubernetes serves to env vars)."""
    if not isinstance(env, list):
        return []   # (absent, or mistyped: the shape check reports it)
    errs: list[FieldError] = []
    for k, item in enumerate(env):
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if name in (None, ""):
            errs.append(FieldError(f"{path}[{k}].name", common.REQUIRED))
        elif isinstance(name, str) and ("=" in name or not all(" " <= ch <= "~" for ch in name)):
            errs.append(FieldError(f"{path}[{k}].name", common.invalid(
                name, "a valid environment variable name must consist only of printable ASCII characters "
                      "other than '='")))
        source = item.get("valueFrom")
        if not isinstance(source, dict):
            continue
        vp = f"{path}[{k}].valueFrom"
        given = [s for s in ENV_SOURCES if source.get(s) is not None]
        if item.get("value") not in (None, ""):
            errs.append(FieldError(vp, common.invalid("", "may not be specified when `value` is not empty")))
        if not given:
            errs.append(FieldError(vp, common.invalid("", _NO_SOURCE)))
        elif len(given) > 1:
            errs.append(FieldError(vp, common.invalid("", "may not have more than one field specified at a time")))
        errs += _env_source(source, vp)
    return errs


def _env_source(source: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict):
        fp = field_ref.get("fieldPath")
        if fp in (None, ""):
            errs.append(FieldError(f"{path}.fieldRef.fieldPath", common.REQUIRED))
        elif isinstance(fp, str) and fp not in ENV_FIELD_PATHS:
            m = _SUBSCRIPTED_PATH.fullmatch(fp)
            if m is None:
                errs.append(FieldError(f"{path}.fieldRef.fieldPath", common.unsupported(fp, ENV_FIELD_PATHS)))
            else:
                errs += [FieldError(f"{path}.fieldRef.fieldPath", common.invalid(m[2], e))
                         for e in common.qualified_name(m[2])]
    for ref in ("configMapKeyRef", "secretKeyRef"):
        sel = source.get(ref)
        if isinstance(sel, dict):
            for key in ("name", "key"):
                if sel.get(key) in (None, ""):
                    errs.append(FieldError(f"{path}.{ref}.{key}", common.REQUIRED))
    return errs


def _pod_level_resources(spec: Obj, path: str) -> list[FieldError]:
    """A PodSpec's own `resources` (Kubernetes' PodLevelResources): quantities parse, a request is at most
    its limit, and covers what the containers request together (ValidatePodSpec's words)."""
    res = spec.get("resources")
    errs = validate_resources(res, f"{path}.resources")
    if errs or not isinstance(res, dict) or not isinstance(res.get("requests"), dict):
        return errs
    try:
        aggregate = resources.aggregate_container_requests(spec)
    except ValueError:
        return errs   # (a container's bad quantity is its own error)
    for name, value in res["requests"].items():
        if name in aggregate and aggregate[name] > quantity.parse(value):
            errs.append(FieldError(f"{path}.resources.requests.{name}", common.invalid(
                value, "must be greater than or equal to aggregate container requests of "
                       + quantity.format(aggregate[name], name))))
    return errs


def validate_resources(res: Any, path: str) -> list[FieldError]:
    """ResourceRequirements: quantities parse and are ≥ 0; a request is at most its limit. An extended
    resource (`nvidia.com/gpu`, `volcano.sh/vgpu-memory`: a name with a domain outside kubernetes.io) is an
    integer; it and hugepages cannot be overcommitted: a request needs a limit and equals it (Kubernetes'
    ValidateResourceRequirements, which a device plugin's whole devices rely on)."""
    if res is None:
        return []
    if not isinstance(res, dict):
        return [FieldError(path, common.type_error(res, "object"))]
    errs: list[FieldError] = []
    limits = common.parse_resource_list(res.get("limits"), f"{path}.limits", errs)
    requests = common.parse_resource_list(res.get("requests"), f"{path}.requests", errs)
    for part, parsed in (("limits", limits), ("requests", requests)):
        for name, q in parsed.items():
            if _extended(name) and q.denominator != 1:
                errs.append(FieldError(f"{path}.{part}.{name}", common.invalid(res[part][name], "must be an integer")))
    for name, req in requests.items():
        overcommit = not _extended(name) and not name.startswith("hugepages-")
        if name not in limits:
            if not overcommit:
                errs.append(FieldError(f"{path}.limits", f"{common.REQUIRED}: Limit must be set for non "
                                                         "overcommitable resources"))
        elif req != limits[name] and not overcommit:
            errs.append(FieldError(f"{path}.requests.{name}", common.invalid(
                res["requests"][name], f"must be equal to {name} limit of {res['limits'][name]}")))
        elif req > limits[name]:
            errs.append(FieldError(f"{path}.requests.{name}", common.invalid(
                res["requests"][name], f"must be less than or equal to {name} limit of {res['limits'][name]}")))
    return errs


def _extended(name: str) -> bool:
    """Kubernetes' IsExtendedResourceName: not a native resource (a name without a domain, or one in
    kubernetes.io), not a quota's `requests.` name, and a qualified name."""
    native = "/" not in name or "kubernetes.io/" in name
    return not native and not name.startswith("requests.") and not common.qualified_name(f"requests.{name}")


# ---- defaults (Kubernetes' SetDefaults_Pod and the pod strategy's PrepareForCreate) ---------------
_CONTAINER_LISTS = ("containers", "initContainers")   # (ephemeral containers have no resources)
_QOS_RESOURCES = (core.CPU, core.MEMORY)


def _containers(spec: Obj) -> list[Obj]:
    """The containers and init containers of a PodSpec that are mappings (others are validate's)."""
    return [c for key in _CONTAINER_LISTS if isinstance(spec.get(key), list) for c in spec[key] if isinstance(c, dict)]


def default_requests(spec: Obj) -> None:
    """A resource a container limits but does not request requests its limit (Kubernetes' SetDefaults_Pod,
    for a Pod only, not a pod template): the value is copied as written."""
    for c in _containers(spec):
        res = c.get("resources")
        if not isinstance(res, dict) or not isinstance(res.get("limits"), dict) or not res["limits"]:
            continue
        if res.get("requests") is None:
            res["requests"] = {}
        if isinstance(res["requests"], dict):
            for name, value in res["limits"].items():
                res["requests"].setdefault(name, value)


def _qos_list(rl: Any) -> dict[str, quantity.Fraction]:
    """The positive cpu and memory quantities of a ResourceList (the only resources QoS looks at)."""
    out = {}
    for name in _QOS_RESOURCES:
        q = quantity.parse(rl[name]) if isinstance(rl, dict) and name in rl else quantity.Fraction(0)
        if q > 0:
            out[name] = q
    return out


def qos_class(spec: Obj) -> core.QOSClass:
    """Kubernetes' ComputePodQOS over containers and init containers (after `default_requests`): BestEffort
    when no cpu/memory is requested or limited; Guaranteed when every container limits both cpu and
    memory and the summed requests equal the summed limits; else Burstable. Raises ValueError on a
    quantity that does not parse (validation refuses the pod then)."""
    requests: dict[str, quantity.Fraction] = {}
    limits: dict[str, quantity.Fraction] = {}
    guaranteed = True
    for c in _containers(spec):
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        req, lim = _qos_list(res.get("requests")), _qos_list(res.get("limits"))
        requests = resources.add(requests, req)
        limits = resources.add(limits, lim)
        guaranteed = guaranteed and set(lim) == set(_QOS_RESOURCES)
    if not requests and not limits:
        return core.QOSClass.BEST_EFFORT
    if guaranteed and requests == limits:
        return core.QOSClass.GUARANTEED
    return core.QOSClass.BURSTABLE


def mutate(op: base.Operation, obj: Obj) -> None:
    """A pod spec's null items read as kube's decoder reads them (shapes.null_items_zeroed), then Kubernetes' pod
    defaults: requests from limits (SetDefaults_Pod); at create and update, `restartPolicy:
    Always` and `schedulerName: default-scheduler` when none is given (an update's `serviceAccount` and
    `serviceAccountName` name the same account, as kube's conversion reads them); at create
    `status.qosClass` (Kubernetes
    resets a created pod's whole status; vclite keeps the rest of one the pod brings, as a scheduler
    dry-run's pods carry the phase a cluster gave them, and a pod without a phase is Pending to every
    reader)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if op in (base.Operation.CREATE, base.Operation.UPDATE):
        shapes.null_items_zeroed(spec, shapes.POD_SPEC_DECODED)   # (as kube's decoder reads them: `[null]` -> `[""]`)
    default_requests(spec)
    if op not in (base.Operation.CREATE, base.Operation.UPDATE):
        return
    if spec.get("restartPolicy") in (None, ""):
        spec["restartPolicy"] = core.RestartPolicy.ALWAYS.value
    if spec.get("schedulerName") in (None, ""):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    if op is base.Operation.UPDATE:
        account = spec.get("serviceAccountName") or spec.get("serviceAccount")
        if account:   # (kube reads the deprecated field when the other is empty, and shows both)
            spec["serviceAccountName"] = spec["serviceAccount"] = account
        return
    try:
        qos = qos_class(spec)
    except (ValueError, TypeError):
        return   # (a quantity that does not parse: validate refuses the pod)
    status = obj.setdefault("status", {})
    if isinstance(status, dict):
        status["qosClass"] = qos.value


def resolve(op: base.Operation, obj: Obj, old: Obj | None, view: base.View) -> None:
    """After validation: the pod's priority (podpriority.py), its ServiceAccount (serviceaccount.py), then a
    created pod's queue-allocation gate and its resource group (resgroups.py: Volcano's pod webhook) — not for
    a cluster's existing pods (a scheduler dry-run's state), which were admitted there."""
    podpriority.resolve(op, obj, old, view)
    serviceaccount.resolve_pod(op, obj, view)
    spec = obj.get("spec")
    if op is base.Operation.CREATE and isinstance(spec, dict) and not getattr(view, "existing_state", False):
        _gate_for_queue_admission(obj, spec)
        resgroups.apply(obj, resgroups.groups_of(view))


def _gate_for_queue_admission(obj: Obj, spec: Obj) -> None:
    """Volcano's pod webhook (patchSchedulingGates, SchedulingGatesQueueAdmission): a pod that opts in with the
    annotation `scheduling.volcano.sh/queue-allocation-gate: "true"` is created with that scheduling gate, which
    the scheduler removes once its queue has room for it (docs/differences.md: on without a feature gate)."""
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or annotations.get(scheduling.QUEUE_ALLOCATION_GATE) != "true":
        return
    gates = spec.get("schedulingGates")
    if gates is None:
        spec["schedulingGates"] = [{"name": scheduling.QUEUE_ALLOCATION_GATE}]
    elif isinstance(gates, list) and not any(isinstance(g, dict) and g.get("name") == scheduling.QUEUE_ALLOCATION_GATE
                                             for g in gates):
        gates.append({"name": scheduling.QUEUE_ALLOCATION_GATE})


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    # Pods made by the vcjob controller come from templates already checked (with the command rule);
    # plain pods are kept light: the command rule is the executor's to report.
    errs = validate_pod_spec(new.get("spec"), "spec", require_command=False)
    if op is base.Operation.UPDATE and isinstance(old, dict) and not errs:
        errs += podupdate.errors_of(_priority_kept(new, old), old)
    spec = new.get("spec")
    if op is base.Operation.CREATE and isinstance(spec, dict):
        errs += _create_only(spec)
    errs += podannotations.errors_of((new.get("metadata") or {}).get("annotations"), spec)
    volcano = isinstance(spec, dict) and spec.get("schedulerName") == batch.DEFAULT_SCHEDULER
    if op is base.Operation.CREATE and volcano and not getattr(view, "existing_state", False):
        errs += jdb_annotations((new.get("metadata") or {}).get("annotations"), "metadata.annotations")
    return errs


def _create_only(spec: Obj) -> list[FieldError]:
    """ValidatePodCreate: no ephemeral containers (their subresource adds them), no node while a scheduling gate
    holds the pod (the binding subresource sets it once the gates are gone)."""
    errs = []
    if spec.get("ephemeralContainers"):
        errs.append(FieldError("spec.ephemeralContainers", "Forbidden: cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(FieldError("spec.nodeName", "Forbidden: cannot be set until all schedulingGates have been "
                                                "cleared"))
    return errs


def _priority_kept(new: Obj, old: Obj) -> Obj:
    """`new` as the Priority plugin leaves it on an update (podpriority.resolve, which runs after validation
    here and before it on kube-apiserver): the priority and preemption policy it leaves out kept."""
    spec, before = new.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(before, dict):
        return new
    kept = {k: before[k] for k in ("priority", "preemptionPolicy") if spec.get(k) is None and before.get(k) is not None}
    return {**new, "spec": {**spec, **kept}} if kept else new


# ---- Volcano's pod webhook (admit_pod.go validateAnnotation) ------------------------------------
JDB_KEYS = (batch.JDB_MIN_AVAILABLE, batch.JDB_MAX_UNAVAILABLE)
_GO_INT = re.compile(r"[+-]?[0-9]+")


def jdb_annotations(annotations: Any, path: str, *, one_only: bool = True) -> list[FieldError]:
    """A volcano pod's disruption budget annotations: a positive integer or a percentage of 1% to 99%,
    and (`one_only`) not both keys. The first problem only, in Volcano's words."""
    if not isinstance(annotations, dict):
        return []
    found = [key for key in JDB_KEYS if key in annotations]
    for key in found:
        why = jdb_value_problem(key, str(annotations[key]))
        if why:
            return [FieldError(f"{path}[{key}]", why)]
    if one_only and len(found) > 1:
        return [FieldError(f"{path}[{found[1]}]",
                           f"not allow configure multiple annotations <[{' '.join(JDB_KEYS)}]> at same time")]
    return []


def jdb_value_problem(key: str, value: str) -> str | None:
    """validateIntPercentageStr: intstr.Parse reads an integer (Go's Atoi) or else a string, whose `%`
    signs are dropped before it is read as a percentage."""
    if _GO_INT.fullmatch(value):
        return None if int(value) > 0 else (f"invalid value <{common.show(value)}> for {key}, it must be a positive "
                                            "integer")
    digits = value.replace("%", "")
    if not _GO_INT.fullmatch(digits):
        return f"invalid value strconv.Atoi: parsing {common.show(digits)}: invalid syntax for {key}"
    if not 0 < int(digits) < 100:
        return (f"invalid value <{common.show(value)}> for {key}, it must be a valid percentage which between "
                "1% ~ 99%")
    return None
