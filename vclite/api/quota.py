"""ResourceQuota arithmetic, as Kubernetes' quota evaluators count (pure, exact fractions).

- `pod_usage(pod)`: what a pod charges (Kubernetes' PodUsageFunc): `count/pods` always; while the
  pod is not Succeeded/Failed also `pods`, `cpu`/`requests.cpu`, `memory`/`requests.memory`,
  `ephemeral-storage`/`requests.ephemeral-storage`, `limits.cpu|memory|ephemeral-storage`,
  hugepages under both names and extended resources as `requests.<name>` only.
- `service_usage(svc)`: `services.loadbalancers` and `services.nodeports` of a Service.
- `claim_usage(pvc)`: what a PersistentVolumeClaim charges (kube's PVC evaluator): `persistentvolumeclaims`,
  `count/persistentvolumeclaims`, `requests.storage`, and per class `<class>.storageclass.storage.k8s.io/
  requests.storage` and `<class>.storageclass.storage.k8s.io/persistentvolumeclaims`.
- `count_names(kind)`: the object-count names an object of `kind` charges one of
  (`count/<plural>[.<group>]`, and the legacy bare name of the few kinds that have one).
- `object_counts(names, list_of)`: the object counts among those names (`count/…`, `services.nodeports`, …)
  and the claims' storage (`requests.storage`, per class).
- `usage(hard, pods, counts)`: a namespace's `status.used` for the names a quota lists.
- `exceeded(name, hard, used, requested)`: kube-apiserver's "exceeded quota: ..." refusal, or None.
- `must_specify(pod, hard)`: the "must specify ..." constraint on containers when cpu/memory are limited.
- `name_problem(name)`: why a name is no quota resource name (kube's validation), or None.
- scopes: `pod_matches(spec, pod)` whether a quota's `scopes`/`scopeSelector` select the pod (kube's
  pod evaluator: Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
  CrossNamespacePodAffinity), `scope_allows(scope, name)` which names a scope may limit.
No I/O; never mutates an argument.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from vclite.api import kinds, quantity, resources, storage

Fraction = quantity.Fraction
Resources = dict[str, Fraction]

COUNT_PREFIX = "count/"
REQUESTS, LIMITS = "requests.", "limits."
HUGEPAGES = "hugepages-"
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
# Kubernetes' standardQuotaResources (IsStandardQuotaResourceName also takes hugepages-* in both forms)
STANDARD = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services",
    "replicationcontrollers", "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims",
    "services.nodeports", "services.loadbalancers"})
# Names that only count whole objects: a fraction of one is refused (IsIntegerResourceName)
INTEGER = frozenset({"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
                     "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"})
# cpu/memory names whose presence in `hard` makes every container say its own (the pod evaluator's Constraints)
CONSTRAINED = frozenset({"requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "cpu", "memory"})
# kinds whose objects a bare legacy name counts too (besides count/<plural>)
_LEGACY_COUNT = {"ConfigMap": "configmaps", "Secret": "secrets", "Service": "services",
                 "ResourceQuota": "resourcequotas", "PersistentVolumeClaim": "persistentvolumeclaims"}
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"   # <class>.storageclass.storage.k8s.io/<name>
REQUESTS_STORAGE = "requests.storage"
CLAIMS = "persistentvolumeclaims"
_TERMINAL = ("Succeeded", "Failed")


def is_extended(name: str) -> bool:
    """Kubernetes' IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not a quota name."""
    if "/" not in name or name.startswith(REQUESTS) or name.startswith(COUNT_PREFIX):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def is_integer(name: str) -> bool:
    """Whether quantities of `name` must be whole (object counts and extended resources)."""
    return name in INTEGER or name.startswith(COUNT_PREFIX) or is_extended(name) or \
        (name.startswith(REQUESTS) and is_extended(name[len(REQUESTS):]))


def name_problem(name: str) -> str | None:
    """Why `name` may not be a key of `hard` (kube's validateResourceQuotaResourceName), or None.
    A name with a `/` (count/<resource>, requests.nvidia.com/gpu) passes as a qualified name."""
    if "/" in name:
        return None
    if name in STANDARD or name.startswith(HUGEPAGES) or name.startswith(REQUESTS + HUGEPAGES):
        return None
    return "must be a standard resource for quota"


def compute_usage(requests: Mapping[str, Fraction], limits: Mapping[str, Fraction]) -> Resources:
    """Kubernetes' podComputeUsageHelper: requests and limits under their quota names, `pods` 1."""
    out: Resources = {"pods": Fraction(1)}
    for name in _COMPUTE:
        if name in requests:
            out[name] = out[REQUESTS + name] = requests[name]
        if name in limits:
            out[LIMITS + name] = limits[name]
    for name, value in requests.items():
        if name.startswith(HUGEPAGES):
            out[name] = out[REQUESTS + name] = value
        elif is_extended(name):
            out[REQUESTS + name] = value
    return out


def counts_compute(pod: Mapping[str, Any]) -> bool:
    """Whether the pod still charges compute resources (QuotaV1Pod: not Succeeded nor Failed)."""
    status = pod.get("status")
    return not (isinstance(status, Mapping) and status.get("phase") in _TERMINAL)


def pod_usage(pod: Mapping[str, Any]) -> Resources:
    """What one pod charges (PodUsageFunc). ValueError for a quantity that does not parse."""
    out: Resources = {COUNT_PREFIX + "pods": Fraction(1)}
    if not counts_compute(pod):
        return out
    requests = {k: v for k, v in resources.pod_requests(pod).items() if k != "pods"}
    return {**out, **compute_usage(requests, resources.pod_limits(pod))}


SERVICE_NAMES = ("services.loadbalancers", "services.nodeports")


def service_usage(svc: Mapping[str, Any]) -> Resources:
    """What a Service charges besides its count (kube's service evaluator): a LoadBalancer one
    `services.loadbalancers` 1; NodePort and LoadBalancer ones a node port per port (a LoadBalancer with
    `allocateLoadBalancerNodePorts: false` only the ports that name their nodePort)."""
    spec = svc.get("spec") if isinstance(svc.get("spec"), Mapping) else {}
    ports = [p for p in spec.get("ports") or () if isinstance(p, Mapping)]
    kind = spec.get("type")
    if kind == "NodePort":
        return {"services.nodeports": Fraction(len(ports))}
    if kind == "LoadBalancer":
        node_ports = len(ports) if spec.get("allocateLoadBalancerNodePorts") is not False else \
            sum(1 for p in ports if p.get("nodePort"))
        return {"services.nodeports": Fraction(node_ports), "services.loadbalancers": Fraction(1)}
    return {}


def claim_usage(claim: Mapping[str, Any]) -> Resources:
    """What one PersistentVolumeClaim charges (kube's pvcEvaluator.Usage): the claim counted, its requested
    storage (or what status.allocatedResources says, when more: an expansion under way), both also under its
    class's names when it has a class."""
    out: Resources = {CLAIMS: Fraction(1), COUNT_PREFIX + CLAIMS: Fraction(1)}
    cls = storage.claim_class(dict(claim))
    if cls:
        out[cls + STORAGE_CLASS_SUFFIX + CLAIMS] = Fraction(1)
    spec = claim.get("spec") if isinstance(claim.get("spec"), Mapping) else {}
    if ((spec.get("resources") or {}).get("requests") or {}).get("storage") is None:
        return out
    requested = storage.requested_storage(dict(claim))
    status = claim.get("status") if isinstance(claim.get("status"), Mapping) else {}
    allocated = (status.get("allocatedResources") or {}).get("storage")
    if allocated is not None:
        try:
            requested = max(requested, quantity.parse(allocated))
        except ValueError:
            pass
    out[REQUESTS_STORAGE] = requested
    if cls:
        out[cls + STORAGE_CLASS_SUFFIX + REQUESTS_STORAGE] = requested
    return out


def is_claim_name(name: str) -> bool:
    """Whether only claims charge `name` besides their count: `requests.storage` and the per-class names."""
    return name == REQUESTS_STORAGE or STORAGE_CLASS_SUFFIX in name


def claim_totals(names: Iterable[str], claims: Iterable[Mapping[str, Any]]) -> dict[str, Fraction]:
    """The namespace's `requests.storage` and per-class names among `names`, summed over its claims."""
    out = {n: Fraction(0) for n in names if is_claim_name(n)}
    if out:
        for claim in claims:
            for name, value in claim_usage(claim).items():
                if name in out:
                    out[name] += value
    return out


def service_totals(names: Iterable[str], services: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The namespace's `services.loadbalancers` / `services.nodeports` among `names` (count-style)."""
    wanted = [n for n in SERVICE_NAMES if n in set(names)]
    out = {n: 0 for n in wanted}
    if wanted:
        for svc in services:
            for name, value in service_usage(svc).items():
                if name in out:
                    out[name] += int(value)
    return out


def count_names(kind: kinds.Kind) -> tuple[str, ...]:
    """The object-count names one object of `kind` charges: `count/<plural>` (core) or
    `count/<plural>.<group>`, and the legacy bare name (`configmaps`, `secrets`, …) where there is one."""
    own = COUNT_PREFIX + kind.resource
    legacy = _LEGACY_COUNT.get(kind.kind)
    return (own, legacy) if legacy else (own,)


def object_counts(names: Iterable[str], list_of: Callable[[kinds.Kind], Sequence[Any]]) -> dict[str, Fraction]:
    """The object counts among `names` (`count/<resource>`, the legacy bare names, `services.loadbalancers`/
    `services.nodeports`) and the claims' storage (`requests.storage`, per class) of one namespace,
    `list_of(kind)` giving its stored objects of a namespaced kind (pods are counted by `usage`). What
    admission and the resourcequota controller both count."""
    wanted = set(names)
    out: dict[str, Fraction] = {}
    for k in kinds.ALL:
        if not k.namespaced or k.kind == kinds.POD.kind:
            continue
        counted = [n for n in count_names(k) if n in wanted]
        if counted:
            n = Fraction(len(list_of(k)))
            out.update({name: n for name in counted})
    if any(n in wanted for n in SERVICE_NAMES):
        out.update({n: Fraction(v) for n, v in service_totals(wanted, list_of(kinds.SERVICE)).items()})
    if any(is_claim_name(n) for n in wanted):
        out.update(claim_totals(wanted, list_of(kinds.PERSISTENTVOLUMECLAIM)))
    return out


def needs_pods(names: Iterable[str]) -> bool:
    """Whether some of `names` is charged by pods (not an object count of another kind)."""
    legacy = set(_LEGACY_COUNT.values()) | set(SERVICE_NAMES)
    return any(n == COUNT_PREFIX + "pods" or not (n.startswith(COUNT_PREFIX) or n in legacy or is_claim_name(n))
               for n in names)


def usage(hard: Iterable[str], pods: Iterable[Mapping[str, Any]],
          counts: Mapping[str, Fraction]) -> Resources:
    """`status.used` for the names in `hard`: the pods' usage summed, and what `object_counts` counted
    (a count name -> the number of objects, a claim's storage name -> the amount). A name nothing charges
    (one only pods of a scope the quota does not select would) is used 0, as the controller writes it."""
    names = list(hard)
    out: Resources = {name: Fraction(0) for name in names}
    if needs_pods(names):
        for pod in pods:
            try:
                charged = pod_usage(pod)
            except ValueError:
                continue   # (admission refuses such pods)
            for name, value in charged.items():
                if name in out:
                    out[name] += value
    for name, n in counts.items():
        if name in out and name != COUNT_PREFIX + "pods":
            out[name] += n
    return out


def mask(r: Mapping[str, Fraction], names: Iterable[str]) -> Resources:
    """Only the entries of `r` named in `names` (quota.Mask)."""
    keep = set(names)
    return {k: v for k, v in r.items() if k in keep}


def _base(name: str) -> str:
    """The resource a quota name measures (`requests.memory` -> memory), for printing its quantity."""
    if STORAGE_CLASS_SUFFIX in name:
        name = name.split("/", 1)[1]
    for prefix in (REQUESTS, LIMITS):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def show(value: Fraction | str, name: str) -> str:
    """A quantity as a quota prints it: as written for text, else in the unit a user writes for `name`."""
    if isinstance(value, str):
        try:
            return quantity.canonical(value)
        except ValueError:
            return value
    return quantity.format(value, _base(name))


def pretty(r: Mapping[str, Any]) -> str:
    """kube's prettyPrint: `name=quantity` sorted by name, comma-separated."""
    return ",".join(f"{name}={show(r[name], name)}" for name in sorted(r))


def parse_list(rl: Mapping[str, Any] | None) -> Resources:
    """A stored ResourceList (`status.hard`, `status.used`) as exact values; a bad entry is left out."""
    out: Resources = {}
    for name, value in (rl or {}).items():
        try:
            out[str(name)] = quantity.parse(value)
        except ValueError:
            continue
    return out


def exceeded(quota_name: str, hard: Mapping[str, Fraction], used: Mapping[str, Fraction],
             requested: Mapping[str, Fraction]) -> str | None:
    """kube's check of one quota: the request masked to what `hard` lists, added to `used`; a name over
    its hard limit refuses it with "exceeded quota: NAME, requested: ..., used: ..., limited: ..."."""
    asked = mask(requested, hard)
    over = sorted(n for n, v in asked.items() if used.get(n, Fraction(0)) + v > hard[n])
    if not over:
        return None
    return (f"exceeded quota: {quota_name}, requested: {pretty(mask(asked, over))}, "
            f"used: {pretty({n: used.get(n, Fraction(0)) for n in over})}, limited: {pretty(mask(hard, over))}")


def must_specify(pod: Mapping[str, Any], hard: Iterable[str]) -> str | None:
    """The pod evaluator's Constraints: when `hard` limits cpu or memory (CONSTRAINED), every container
    and init container must request / limit each such name itself: "must specify limits.cpu for: a,b; ..."."""
    required = CONSTRAINED.intersection(hard)
    if not required:
        return None
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    missing: dict[str, set[str]] = {}
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key) or ()):
            if not isinstance(c, Mapping):
                continue
            path = f"spec.{key}[{i}]"
            have = compute_usage(resources.container_requests(c, path), resources.container_limits(c, path))
            for name in required - set(have):
                missing.setdefault(name, set()).add(str(c.get("name", "")))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


# ---- scopes ----------------------------------------------------------------------------------------
TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
PRIORITY_CLASS, CROSS_NAMESPACE = "PriorityClass", "CrossNamespacePodAffinity"
VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"
SCOPES = (TERMINATING, NOT_TERMINATING, BEST_EFFORT, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE,
          VOLUME_ATTRIBUTES_CLASS)
EXISTS_ONLY = (BEST_EFFORT, NOT_BEST_EFFORT, TERMINATING, NOT_TERMINATING, CROSS_NAMESPACE)
CONFLICTING = ((BEST_EFFORT, NOT_BEST_EFFORT), (TERMINATING, NOT_TERMINATING))
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_POD_COUNT = frozenset({"pods"})
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"})
_PVC = frozenset({"persistentvolumeclaims", "requests.storage"})


def scope_allows(scope: str, name: str) -> bool:
    """kube's IsResourceQuotaScopeValidForResource, for the standard names (others are not checked)."""
    if name not in STANDARD:
        return True
    if scope in (TERMINATING, NOT_TERMINATING, NOT_BEST_EFFORT, PRIORITY_CLASS, CROSS_NAMESPACE):
        return name in _POD_COUNT or name in _POD_COMPUTE
    if scope == BEST_EFFORT:
        return name in _POD_COUNT
    if scope == VOLUME_ATTRIBUTES_CLASS:
        return name in _PVC
    return True


def selectors(spec: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(scope, operator, values) of every scope a quota's spec names: `scopes` as Exists, then the
    scopeSelector's matchExpressions (kube's getScopeSelectorsFromQuota)."""
    out = [(str(s), "Exists", []) for s in spec.get("scopes") or ()]
    for req in ((spec.get("scopeSelector") or {}).get("matchExpressions") or ()):
        if isinstance(req, Mapping):
            out.append((str(req.get("scopeName", "")), str(req.get("operator", "")), list(req.get("values") or ())))
    return out


def is_best_effort(pod: Mapping[str, Any]) -> bool:
    """The pod's QoS class is BestEffort: no container (init ones included) requests or limits cpu or memory."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            res = (c.get("resources") or {}) if isinstance(c, Mapping) else {}
            for part in ("requests", "limits"):
                if any(n in ("cpu", "memory") for n in (res.get(part) or {})):
                    return False
    return True


def _cross_namespace(pod: Mapping[str, Any]) -> bool:
    """A pod (anti-)affinity term names other namespaces (`namespaces` or a `namespaceSelector`)."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {})
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        for term in terms.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
            if term.get("namespaces") or term.get("namespaceSelector") is not None:
                return True
        for weighted in terms.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            term = weighted.get("podAffinityTerm") or {}
            if term.get("namespaces") or term.get("namespaceSelector") is not None:
                return True
    return False


def _scope_matches(scope: str, operator: str, values: list[str], pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    if scope in (TERMINATING, NOT_TERMINATING):
        deadline = spec.get("activeDeadlineSeconds")
        terminating = isinstance(deadline, int) and deadline >= 0
        return terminating == (scope == TERMINATING)
    if scope in (BEST_EFFORT, NOT_BEST_EFFORT):
        return is_best_effort(pod) == (scope == BEST_EFFORT)
    if scope == CROSS_NAMESPACE:
        return _cross_namespace(pod)
    if scope == PRIORITY_CLASS:
        name = spec.get("priorityClassName") or ""
        if operator == "Exists":
            return bool(name)
        if operator == "In":
            return name in values
        if operator == "NotIn":
            return name not in values
        return False   # DoesNotExist: the class is always a (possibly empty) value, as kube's selector sees it
    return False


def pod_matches(spec: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether a quota with this spec counts the pod: every scope it names matches (none: all pods)."""
    return all(_scope_matches(scope, op, values, pod) for scope, op, values in selectors(spec))


def is_scoped(spec: Mapping[str, Any]) -> bool:
    return bool(spec.get("scopes")) or bool((spec.get("scopeSelector") or {}).get("matchExpressions"))
