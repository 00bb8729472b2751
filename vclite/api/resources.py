"""Resource lists as exact dicts (`{"cpu": Fraction(1, 2), "memory": Fraction(2**30), "pods": 1}`).

A pod's effective request follows Kubernetes (`PodRequests`): the sum over containers (a missing
request falls back to the container's limit), sidecar init containers (restartPolicy Always) added
to it, the max with every plain init container's need — or the pod's own `spec.resources` request of
cpu, memory or hugepages (PodLevelResources) —, plus `spec.overhead`; and, as Volcano
counts pods as a resource, it always carries `pods: 1`. Arithmetic treats a missing key as zero.
`pod_limits` is Kubernetes' PodLimits (the same sum and max over limits, overhead added only to what is
limited). `to_quota_list` / `from_resource_list` convert to and from the string ResourceLists objects carry
(PodGroup minResources, node allocatable, queue capability).
Pure functions over plain dicts: no I/O, never mutates an argument.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from vclite.api import quantity

Fraction = quantity.Fraction
Resources = dict[str, Fraction]

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
REQUESTS_PREFIX = "requests."
LIMITS_PREFIX = "limits."
COUNT_PODS = "count/pods"
_SIDECAR_RESTART_POLICY = "Always"


def _parse_list(raw: Any, path: str) -> Resources:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{path or 'resources'}: must be a mapping of resource name to quantity")
    out: Resources = {}
    for name, value in raw.items():
        try:
            out[str(name)] = quantity.parse(value)
        except ValueError as e:
            raise ValueError(f"{path}.{name}: {e}" if path else f"{name}: {e}") from None
    return out


def container_requests(container: Mapping[str, Any], path: str = "container") -> Resources:
    """A container's requests; a resource with a limit but no request requests its limit."""
    res = container.get("resources") or {}
    requests = _parse_list(res.get("requests"), f"{path}.resources.requests")
    for name, value in _parse_list(res.get("limits"), f"{path}.resources.limits").items():
        requests.setdefault(name, value)
    return requests


def _spec_of(pod_or_spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The PodSpec in a Pod, a PodTemplateSpec (`{"spec": ...}`) or a PodSpec itself."""
    if "containers" not in pod_or_spec and isinstance(pod_or_spec.get("spec"), Mapping):
        return pod_or_spec["spec"]
    return pod_or_spec


def _pod_total(spec: Mapping[str, Any], of_container: Callable[[Mapping[str, Any], str], Resources]) -> Resources:
    """Kubernetes' pod-level sum of a per-container quantity (requests or limits): the app containers'
    summed, sidecar init containers added, the max with every plain init container's (plus the sidecars
    started before it). Overhead not included."""
    total: Resources = {}
    for i, c in enumerate(spec.get("containers") or []):
        total = add(total, of_container(c, f"spec.containers[{i}]"))
    sidecars: Resources = {}
    init_need: Resources = {}
    for i, c in enumerate(spec.get("initContainers") or []):
        amount = of_container(c, f"spec.initContainers[{i}]")
        if c.get("restartPolicy") == _SIDECAR_RESTART_POLICY:
            # A sidecar keeps running beside the app containers and every later init container.
            total = add(total, amount)
            sidecars = add(sidecars, amount)
            need = dict(sidecars)
        else:
            need = add(amount, sidecars)
        init_need = maximum(init_need, need)
    return maximum(total, init_need)


def aggregate_container_requests(pod_or_podspec: Mapping[str, Any]) -> Resources:
    """Kubernetes' AggregateContainerRequests: what the containers of a pod request together (init
    containers and sidecars as `_pod_total` counts them), without the overhead or `pods`."""
    return _pod_total(_spec_of(pod_or_podspec), container_requests)


def _pod_level(spec: Mapping[str, Any], key: str) -> Resources:
    """The pod's own `resources.requests` or `.limits` (Kubernetes' PodLevelResources) of the resources a
    pod may set: cpu, memory and hugepages-*."""
    res = spec.get("resources")
    if not isinstance(res, Mapping):
        return {}
    own = _parse_list(res.get(key), f"spec.resources.{key}")
    return {name: value for name, value in own.items() if name in (CPU, MEMORY) or name.startswith("hugepages-")}


def pod_requests(pod_or_podspec: Mapping[str, Any]) -> Resources:
    """The pod's effective request (Kubernetes PodRequests), always with `pods: 1`: a resource the pod
    requests itself (`spec.resources`) is that request, not its containers' sum."""
    spec = _spec_of(pod_or_podspec)
    total = _pod_total(spec, container_requests) | _pod_level(spec, "requests")
    total = add(total, _parse_list(spec.get("overhead"), "spec.overhead"))
    total[PODS] = Fraction(1)
    return total


def container_limits(container: Mapping[str, Any], path: str = "container") -> Resources:
    """A container's limits as written."""
    return _parse_list((container.get("resources") or {}).get("limits"), f"{path}.resources.limits")


_limits = container_limits


def pod_limits(pod_or_podspec: Mapping[str, Any]) -> Resources:
    """The pod's limits (Kubernetes PodLimits): as requests are summed (`_pod_total`), with the overhead
    added to the resources that have a limit. No `pods` entry."""
    spec = _spec_of(pod_or_podspec)
    total = _pod_total(spec, _limits) | _pod_level(spec, "limits")
    overhead = _parse_list(spec.get("overhead"), "spec.overhead")
    return {name: value + overhead.get(name, Fraction(0)) for name, value in total.items()}


def add(a: Mapping[str, Fraction], b: Mapping[str, Fraction]) -> Resources:
    """a + b per resource (keys of either)."""
    out = dict(a)
    for name, value in b.items():
        out[name] = out.get(name, Fraction(0)) + value
    return out


def sub(a: Mapping[str, Fraction], b: Mapping[str, Fraction]) -> Resources:
    """a - b per resource, exactly: a result may be negative (see `floor_zero`)."""
    out = dict(a)
    for name, value in b.items():
        out[name] = out.get(name, Fraction(0)) - value
    return out


def floor_zero(r: Mapping[str, Fraction]) -> Resources:
    """Negative entries raised to zero (Volcano's `max(0, a - b)` accounting)."""
    return {name: max(value, Fraction(0)) for name, value in r.items()}


def scale(a: Mapping[str, Fraction], k: Fraction | int) -> Resources:
    """a × k per resource."""
    return {name: value * k for name, value in a.items()}


def maximum(a: Mapping[str, Fraction], b: Mapping[str, Fraction]) -> Resources:
    """Per-resource max (keys of either; a missing key is zero)."""
    out = dict(a)
    for name, value in b.items():
        out[name] = max(out.get(name, Fraction(0)), value)
    return out


def minimum(a: Mapping[str, Fraction], b: Mapping[str, Fraction]) -> Resources:
    """Per-resource min (keys of either; a missing key is zero)."""
    out = {name: min(value, Fraction(0)) for name, value in a.items() if name not in b}
    for name, value in b.items():
        out[name] = min(a.get(name, Fraction(0)), value)
    return out


def less_equal(a: Mapping[str, Fraction], b: Mapping[str, Fraction], ignore: Iterable[str] = (),
               dims: Iterable[str] | None = None) -> bool:
    """Whether a ≤ b for every resource (a missing key is zero, so a request for a resource that
    b lacks does not fit). `ignore` skips names; `dims`, if given, compares only those names
    (Volcano's LessEqualWithDimension, for capability checks over the request's dimensions)."""
    skip = set(ignore)
    names = set(dims) if dims is not None else set(a) | set(b)
    zero = Fraction(0)
    return all(a.get(n, zero) <= b.get(n, zero) for n in names if n not in skip)


def is_best_effort(r: Mapping[str, Fraction]) -> bool:
    """True when nothing but pods is requested (every other entry is zero or absent)."""
    return all(value == 0 for name, value in r.items() if name != PODS)


QUOTA_LIMITED = (CPU, MEMORY, "ephemeral-storage")   # the limits Kubernetes' pod quota usage counts


def to_quota_list(r: Mapping[str, Fraction], limits: Mapping[str, Fraction] | None = None) -> dict[str, str]:
    """A quota-style ResourceList, as Volcano writes PodGroup minResources (Kubernetes' PodUsageFunc):
    each request under its name and its quota name (`requests.cpu`, `requests.memory`, `count/pods`,
    `requests.<name>`), and the `limits` of cpu, memory and ephemeral-storage as `limits.<name>`. Unlike
    Kubernetes' quota usage, extended resources keep the bare name too (Volcano's GetPodQuotaUsage).
    """
    out: dict[str, str] = {}
    for name, value in r.items():
        text = quantity.format(value, name)
        out[name] = text
        out[COUNT_PODS if name == PODS else REQUESTS_PREFIX + name] = text
    for name in QUOTA_LIMITED:
        if limits and name in limits:
            out[LIMITS_PREFIX + name] = quantity.format(limits[name], name)
    return out


def from_resource_list(d: Mapping[str, Any] | None, path: str = "") -> Resources:
    """Parse a ResourceList (node allocatable, queue capability, minResources). Quota-style
    duplicates (`requests.x`, `count/pods`) are ignored when the plain name is present and stand
    in for it when it is not; `limits.x` entries are ignored. A bad value raises ValueError
    naming `path.name`."""
    if not d:
        return {}
    parsed = _parse_list(d, path)
    out: Resources = {}
    for name, value in parsed.items():
        if name.startswith(LIMITS_PREFIX):
            continue
        if name == COUNT_PODS:
            plain = PODS
        elif name.startswith(REQUESTS_PREFIX):
            plain = name[len(REQUESTS_PREFIX):]
        else:
            out[name] = value
            continue
        if plain not in parsed:
            out[plain] = value
    return out


def format_list(r: Mapping[str, Fraction]) -> dict[str, str]:
    """A plain ResourceList (`{"cpu": "500m", "memory": "1Gi"}`), no quota duplicates."""
    return {name: quantity.format(value, name) for name, value in r.items()}
