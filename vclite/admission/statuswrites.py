"""What kube-apiserver checks when a Pod's, a Node's or a Service's status is written (the `/status`
subresource, PUT or PATCH): its registry strategies' ValidatePodStatusUpdate, ValidateNodeUpdate and
ValidateServiceStatusUpdate, the parts that hold for vclite's objects.

- Pod (`pod_update(new, old)`): `status.podIPs[*].ip` and `status.hostIPs[*].ip` valid IP addresses,
  no duplicates, at most one per family; `status.nominatedNodeName` a node name; a container that has
  terminated may not go back to waiting or running unless the pod's `restartPolicy` restarts it
  (Always; OnFailure after a non-zero exit; a restartable init container); `status.qosClass` may not
  change (`field is immutable`); a condition type other than PodScheduled, Ready and Initialized a
  qualified name (kube 1.32, the version vclite reports, names the field `metadata.conditions[i].Type`;
  a condition's `status` is not checked, by kube either); `status.observedGeneration` and each condition's
  not negative (1.33+). Before the checks, `pod_status_defaults` (the pod status strategy's
  PrepareForUpdate and kube's conversion) gives a write that leaves `qosClass` out (or empty) the
  stored one (`observedGeneration` too, of the status and of each condition), and makes `podIP` and
  `podIPs[0]` (`hostIP`, `hostIPs[0]`) agree as kube's conversion of a v1 PodStatus does: the single
  field wins when both are given and differ, else each is filled from the other. Beyond kube-apiserver:
  `status.phase` must be one of the five pod phases (kube accepts any string; vclite's controllers act
  on the phase, see docs/differences.md).
- Node (`node_status(status)`; `node_validate` on a create or update too): each `status.capacity` and
  `status.allocatable` entry a valid resource name and a quantity of at least 0 (`pods` whole).
- Pods, Nodes and Services: the JSON types of the status fields (shapes.POD_STATUS, NODE_STATUS,
  SERVICE_STATUS: `conditions` a list of objects, `containerStatuses[*].state` an object…), which
  kube-apiserver's decoding refuses (a `conditions: "x"` stored would break the tables, the scheduler's node
  reads and kubectl describe).
- Service (`service_update(new, old)`): `status.loadBalancer.ingress` only for a LoadBalancer Service;
  each entry's `ip` a valid IP address, its `ipMode` VIP or Proxy and only with an `ip` (defaulted to
  VIP when an `ip` is given, as kube-apiserver defaults it), its `hostname` a DNS name, not an IP;
  `status.conditions` shaped as metav1.Conditions (what kube's decoding refuses; their values are not
  checked, as kube-apiserver does not check them).
Problems name their field (`status.capacity[cpu]: Invalid value: "-1": must be greater than or equal
to 0`); admit.py refuses the write with 422 and nothing is stored. Pure.
"""
from __future__ import annotations

import datetime
import functools
import ipaddress
import re
from typing import Any

from vclite.admission import common, shapes
from vclite.api import quota
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
POD_PHASES = ("Failed", "Pending", "Running", "Succeeded", "Unknown")
IP_MODES = ("Proxy", "VIP")
BAD_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _ip(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    return _parsed_ip(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=1024)
def _parsed_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `text` writes (an immutable object), or None. Kept: a pod's every status write carries the same
    podIPs and hostIPs, and the ipaddress module parses in Python."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _ips(entries: Any, path: str) -> list[FieldError]:
    """A list of `{ip: ...}` (podIPs, hostIPs): valid addresses, no duplicates, one per family."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        return [FieldError(path, common.type_error(entries, "array"))]
    errs: list[FieldError] = []
    seen: list[str] = []
    families: list[int] = []
    for i, entry in enumerate(entries):
        value = entry.get("ip") if isinstance(entry, dict) else entry
        address = _ip(value)
        if address is None:
            errs.append(FieldError(f"{path}[{i}].ip", common.invalid(value, BAD_IP)))
            continue
        if value in seen:
            errs.append(FieldError(f"{path}[{i}].ip", common.duplicate(value)))
        seen.append(value)
        families.append(address.version)
    if not errs and len(entries) > 1 and (len(entries) > 2 or families[0] == families[1]):
        errs.append(FieldError(path, common.invalid(seen, "may specify no more than one IP for each IP family")))
    return errs


def _restarts(restart_policy: str, old_state: Obj, container_restart: Any) -> bool:
    """Whether a container that terminated (`old_state`) may run again (ValidateContainerStateTransition)."""
    if restart_policy == "Always" or container_restart == "Always":
        return True
    code = (old_state.get("terminated") or {}).get("exitCode")
    return restart_policy == "OnFailure" and code not in (0, None)


def _transitions(new: Any, old: Any, path: str, restart_policy: str, container_policies: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    if not isinstance(new, list) or not isinstance(old, list):
        return errs
    now = {s.get("name"): s for s in new if isinstance(s, dict)}
    for i, before in enumerate(old):
        if not isinstance(before, dict):
            continue
        state = before.get("state") if isinstance(before.get("state"), dict) else {}
        if not state.get("terminated") or _restarts(restart_policy, state, container_policies.get(before.get("name"))):
            continue
        after = now.get(before.get("name"))
        if after is not None and not ((after.get("state") or {}).get("terminated")):
            errs.append(FieldError(f"{path}[{i}].state", "Forbidden: may not be transitioned to non-terminated state"))
    return errs


def pod_update(new: Obj, old: Obj | None) -> list[FieldError]:
    """The problems kube-apiserver (and vclite: `status.phase`) finds in a pod status write."""
    status = new.get("status")
    if not isinstance(status, dict):
        return []   # (admit refuses a status that is no object)
    errs = shapes.check(status, shapes.POD_STATUS, "status")
    if errs:
        return errs   # (as decoding refuses a wrongly typed field: nothing else is looked at)
    phase = status.get("phase")
    if phase not in (None, "") and phase not in POD_PHASES:
        errs.append(FieldError("status.phase", common.unsupported(phase, POD_PHASES)))
    errs += _ips(status.get("podIPs"), "status.podIPs") + _ips(status.get("hostIPs"), "status.hostIPs")
    errs += _condition_types(status.get("conditions"))
    nominated = status.get("nominatedNodeName")
    if nominated and (old is None or (old.get("status") or {}).get("nominatedNodeName") != nominated):
        errs += [FieldError("status.nominatedNodeName", common.invalid(nominated, m))
                 for m in (common.dns1123_subdomain(nominated) if isinstance(nominated, str) else ["must be a string"])]
    errs += _negative_generation(status.get("observedGeneration"), "status.observedGeneration")
    if old is not None and isinstance(old.get("status"), dict):
        qos, before_qos = status.get("qosClass") or "", old["status"].get("qosClass") or ""
        if qos != before_qos:   # (left out: pod_status_defaults gave it the stored one)
            errs.append(FieldError("status.qosClass", common.invalid(qos, "field is immutable")))
        spec = old.get("spec") or {}
        policy = str(spec.get("restartPolicy") or "Always")
        inits = {c.get("name"): c.get("restartPolicy") for c in spec.get("initContainers") or [] if isinstance(c, dict)}
        before = old["status"]
        errs += _transitions(status.get("containerStatuses"), before.get("containerStatuses"),
                             "status.containerStatuses", policy, {})
        errs += _transitions(status.get("initContainerStatuses"), before.get("initContainerStatuses"),
                             "status.initContainerStatuses", policy, inits)
    return errs


SYSTEM_POD_CONDITIONS = ("PodScheduled", "Ready", "Initialized")


NEGATIVE_GENERATION = "must be a non-negative integer"


def _negative_generation(generation: Any, path: str) -> list[FieldError]:
    """Kubernetes 1.33+ (ValidatePodStatusUpdate, validatePodConditions): an observedGeneration below 0 is refused
    (shapes.POD_STATUS has already refused one that is not an integer)."""
    if common.is_int(generation) and generation < 0:
        return [FieldError(path, common.invalid(generation, NEGATIVE_GENERATION))]
    return []


def _condition_types(conditions: Any) -> list[FieldError]:
    """validatePodConditions: a condition's `observedGeneration` not negative (kube names it
    `status.conditions[i].observedGeneration`), and the type of a condition of one's own a qualified name
    (`example.com/ok`)."""
    errs: list[FieldError] = []
    for i, cond in enumerate(conditions if isinstance(conditions, list) else []):
        if isinstance(cond, dict):
            errs += _negative_generation(cond.get("observedGeneration"), f"status.conditions[{i}].observedGeneration")
        ctype = cond.get("type") if isinstance(cond, dict) else None
        if isinstance(ctype, str) and ctype not in SYSTEM_POD_CONDITIONS:
            errs += [FieldError(f"metadata.conditions[{i}].Type", common.invalid(ctype, m))
                     for m in common.qualified_name(ctype)]
    return errs


def pod_status_defaults(status: Any, old: Obj | None) -> None:
    """What a pod status write gets before it is checked: the stored `qosClass` when it leaves it out or
    empty (podStatusStrategy.PrepareForUpdate backfills it: old kubelets dropped it), and `podIP`/`podIPs`
    made to agree (reconcile_pod_ips). Changes `status` in place."""
    if not isinstance(status, dict):
        return
    before = (old or {}).get("status")
    if not status.get("qosClass") and isinstance(before, dict) and before.get("qosClass"):
        status["qosClass"] = before["qosClass"]
    if isinstance(before, dict):
        keep_observed_generations(status, before)
    reconcile_pod_ips(status)


def keep_observed_generations(status: Obj, before: Obj) -> None:
    """preserveOldObservedGeneration: a write that leaves `observedGeneration` out (or 0) keeps the stored one,
    of the status and of each condition — matched by type, the n-th condition of a type taking the n-th stored
    one of that type. Changes `status` in place (new condition objects, a new list)."""
    if not status.get("observedGeneration") and before.get("observedGeneration"):
        status["observedGeneration"] = before["observedGeneration"]
    old_conds, conds = before.get("conditions"), status.get("conditions")
    if not isinstance(old_conds, list) or not isinstance(conds, list):
        return
    stored: dict[str, list[Any]] = {}
    for cond in old_conds:
        if isinstance(cond, dict):
            stored.setdefault(str(cond.get("type")), []).append(cond.get("observedGeneration"))
    kept, changed = [], False
    for cond in conds:
        generation = (stored.get(str(cond.get("type"))) or [None]).pop(0) if isinstance(cond, dict) else None
        if generation and not cond.get("observedGeneration"):
            cond, changed = {**cond, "observedGeneration": generation}, True
        kept.append(cond)
    if changed:   # (a new list: the one given may be shared with the stored object)
        status["conditions"] = kept


def reconcile_pod_ips(status: Any) -> None:
    """Convert_v1_PodStatus_To_core_PodStatus and back: `podIP` wins over a `podIPs` whose first entry differs
    (which becomes `[{ip: podIP}]`), `podIPs` is made from a lone `podIP`, and `podIP` is read from `podIPs[0]`
    when empty; `hostIP` and `hostIPs` likewise. Changes `status` in place."""
    if not isinstance(status, dict):
        return
    for one, many in (("podIP", "podIPs"), ("hostIP", "hostIPs")):
        ip, ips = status.get(one), status.get(many)
        first = ips[0].get("ip") if isinstance(ips, list) and ips and isinstance(ips[0], dict) else None
        if isinstance(ip, str) and ip:
            if ips in (None, []) or (isinstance(ips, list) and first != ip):
                status[many] = [{"ip": ip}]
        elif ip in (None, "") and isinstance(first, str) and first:
            status[one] = first


def _resource_list(rl: Any, path: str) -> list[FieldError]:
    if rl is None:
        return []
    if not isinstance(rl, dict):
        return [FieldError(path, common.type_error(rl, "object"))]
    errs: list[FieldError] = []
    for name, value in rl.items():
        where = f"{path}[{name}]"
        problems = common.qualified_name(str(name))
        if problems:
            errs += [FieldError(where, common.invalid(name, m)) for m in problems]
            continue
        q = common.nonnegative_quantity(value, where, errs)
        if q is not None and quota.is_integer(str(name)) and q.denominator != 1:
            errs.append(FieldError(where, common.invalid(value, "must be an integer")))
    return errs


def node_status(status: Any) -> list[FieldError]:
    """The problems of a Node's `status` (its capacity and allocatable), on any write of it."""
    if not isinstance(status, dict):
        return []
    return shapes.check(status, shapes.NODE_STATUS, "status") or \
        _resource_list(status.get("capacity"), "status.capacity") + \
        _resource_list(status.get("allocatable"), "status.allocatable")


def node_validate(op: Any, new: Obj, old: Obj | None, view: Any, options: Any) -> list[FieldError]:
    """A Node's create or update (ValidateNode, ValidateNodeUpdate): its spec's types, its status's too."""
    return shapes.check(new.get("spec"), shapes.NODE["spec"], "spec") + node_status(new.get("status"))


def default_ingress(status: Any, old: Obj | None = None) -> None:
    """kube-apiserver's default: a load-balancer ingress with an `ip` and no `ipMode` gets `ipMode: VIP`."""
    lb = status.get("loadBalancer") if isinstance(status, dict) else None
    for entry in (lb.get("ingress") if isinstance(lb, dict) else None) or []:
        if isinstance(entry, dict) and entry.get("ip") and "ipMode" not in entry:
            entry["ipMode"] = "VIP"


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_CONDITION_STRINGS = ("type", "status", "reason", "message")


def condition_shapes(conditions: Any, path: str) -> list[FieldError]:
    """metav1.Conditions as kube-apiserver decodes them: objects whose `type`, `status`, `reason` and `message`
    are strings, `observedGeneration` an integer and `lastTransitionTime` an RFC 3339 time (kube fails to
    decode another value, 400; a 422 naming the field here). Their values are not checked further: kube does
    not validate a Service's conditions."""
    errs: list[FieldError] = []
    for at, cond in common.objects_in(conditions, path, errs):
        for key in _CONDITION_STRINGS:
            common.check_type(cond, key, f"{at}.{key}", errs, str, "string")
        generation = cond.get("observedGeneration")
        if generation is not None and not common.is_int(generation):
            errs.append(FieldError(f"{at}.observedGeneration", common.type_error(generation, "integer")))
        when = cond.get("lastTransitionTime")
        if when is not None and not _is_time(when):
            errs.append(FieldError(f"{at}.lastTransitionTime", common.invalid(when, "must be an RFC 3339 date-time "
                                                                                    "(2006-01-02T15:04:05Z)")))
    return errs


def _is_time(value: Any) -> bool:
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        return False
    try:
        datetime.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def service_update(new: Obj, old: Obj | None) -> list[FieldError]:
    """The problems of a Service's `status.loadBalancer` (ValidateLoadBalancerStatus), its fields' types, and
    its conditions' shapes (`condition_shapes`)."""
    status = new.get("status")
    if not isinstance(status, dict):
        return []
    shape_errors = shapes.check(status, shapes.SERVICE_STATUS, "status")
    if shape_errors:
        return shape_errors
    return condition_shapes(status.get("conditions"), "status.conditions") + _load_balancer(new, status)


def _load_balancer(new: Obj, status: Obj) -> list[FieldError]:
    lb = status.get("loadBalancer")
    if lb is None:
        return []
    if not isinstance(lb, dict):
        return [FieldError("status.loadBalancer", common.type_error(lb, "object"))]
    ingress = lb.get("ingress")
    path = "status.loadBalancer.ingress"
    if isinstance(ingress, list) and ingress and (new.get("spec") or {}).get("type") != "LoadBalancer":
        return [FieldError(path, "Forbidden: may only be used when `spec.type` is 'LoadBalancer'")]
    errs: list[FieldError] = []
    for at, entry in common.objects_in(ingress, path, errs):
        ip, mode, hostname = entry.get("ip"), entry.get("ipMode"), entry.get("hostname")
        if ip and _ip(ip) is None:
            errs.append(FieldError(f"{at}.ip", common.invalid(ip, BAD_IP)))
        if mode is not None and not ip:
            errs.append(FieldError(f"{at}.ipMode", "Forbidden: may not be specified when `ip` is not set"))
        elif mode is not None and mode not in IP_MODES:
            errs.append(FieldError(f"{at}.ipMode", common.unsupported(mode, IP_MODES)))
        if hostname:
            if not isinstance(hostname, str):
                errs.append(FieldError(f"{at}.hostname", common.type_error(hostname, "string")))
                continue
            errs += [FieldError(f"{at}.hostname", common.invalid(hostname, m))
                     for m in common.dns1123_subdomain(hostname)]
            if _ip(hostname) is not None:
                errs.append(FieldError(f"{at}.hostname", common.invalid(hostname, "must be a DNS name, not an IP "
                                                                                  "address")))
    return errs
