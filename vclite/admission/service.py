"""Service admission (v1 Service): kube-apiserver's defaults and field validation.

`mutate` sets what kube-apiserver's defaulting sets: `type: ClusterIP`, `sessionAffinity: None`
(`ClientIP` gets its 10800 s timeout, at whichever level of `sessionAffinityConfig` it is missing),
each port's `protocol: TCP` and `targetPort` = its `port`, `internalTrafficPolicy: Cluster` (all but
ExternalName), `externalTrafficPolicy: Cluster` (NodePort, LoadBalancer),
`allocateLoadBalancerNodePorts: true` (LoadBalancer), an empty `status.loadBalancer`.
`validate` refuses what ValidateService refuses, each problem naming its field
(`spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`), a headless NodePort or
LoadBalancer Service, an `externalTrafficPolicy` on a Service that is not externally accessible, a
`clusterIPs` whose first value is not `clusterIP` and a `sessionAffinityConfig` that is not ClientIP's
(`timeoutSeconds` 1..86400) included. The addresses, node ports and IP families a Service is given are
serviceips.py's (they read the other Services). Status writes: statuswrites.py.
Pure functions.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import base, common
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

CLUSTER_IP, NODE_PORT, LOAD_BALANCER, EXTERNAL_NAME = "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"
TYPES = (CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT)
AFFINITIES = ("ClientIP", "None")
PROTOCOLS = ("SCTP", "TCP", "UDP")
TRAFFIC_POLICIES = ("Cluster", "Local")
FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
FAMILIES = ("IPv4", "IPv6")
HEADLESS = "None"
CLIENT_IP_TIMEOUT = 10800
MAX_AFFINITY_TIMEOUT = 86400   # (kube's MaxClientIPServiceAffinitySeconds: one day)
PORT_RANGE = "must be between 1 and 65535, inclusive"
_SVC_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")


def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return   # (validate reports it)
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "ClientIP":
        _default_affinity_timeout(spec)
    for port in spec.get("ports") if isinstance(spec.get("ports"), list) else ():
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    kind = spec["type"]
    if kind != EXTERNAL_NAME and not spec.get("internalTrafficPolicy"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind in (NODE_PORT, LOAD_BALANCER) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    status = obj.get("status")
    if status is None or (isinstance(status, dict) and "loadBalancer" not in status):
        obj["status"] = {**(status or {}), "loadBalancer": {}}


def _default_affinity_timeout(spec: Obj) -> None:
    """ClientIP affinity without a timeout gets CLIENT_IP_TIMEOUT, at whichever level is missing (kube's
    SetDefaults_Service); a part of the wrong type is left for validate to report."""
    config = spec.get("sessionAffinityConfig")
    if config is None:
        config = spec["sessionAffinityConfig"] = {}
    if not isinstance(config, dict):
        return
    client_ip = config.get("clientIP")
    if client_ip is None:
        client_ip = config["clientIP"] = {}
    if isinstance(client_ip, dict) and client_ip.get("timeoutSeconds") is None:
        client_ip["timeoutSeconds"] = CLIENT_IP_TIMEOUT


def _affinity_config(spec: Obj) -> list[FieldError]:
    """kube's validateClientIPAffinityConfig: with ClientIP, `clientIP.timeoutSeconds` an integer of
    1..MAX_AFFINITY_TIMEOUT; with None, no `sessionAffinityConfig` at all."""
    path = "spec.sessionAffinityConfig"
    config = spec.get("sessionAffinityConfig")
    if config is None:
        return []
    if spec.get("sessionAffinity") == "None":
        return [FieldError(path, "Forbidden: must not be set when session affinity is None")]
    if not isinstance(config, dict):
        return [FieldError(path, common.type_error(config, "object"))]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [FieldError(f"{path}.clientIP", common.type_error(client_ip, "object"))]
    timeout = client_ip.get("timeoutSeconds")
    if not common.is_int(timeout):
        return [FieldError(f"{path}.clientIP.timeoutSeconds", common.type_error(timeout, "integer"))]
    if not 0 < timeout <= MAX_AFFINITY_TIMEOUT:
        return [FieldError(f"{path}.clientIP.timeoutSeconds",
                           common.invalid(timeout, f"must be greater than 0 and less than {MAX_AFFINITY_TIMEOUT}"))]
    return []


def _cluster_ips(op: base.Operation, spec: Obj) -> list[FieldError]:
    """kube's validateServiceClusterIPsRelatedFields, the part that ties `clusterIP` to `clusterIPs`: when
    both are given the first of `clusterIPs` is `clusterIP`; a create with `clusterIPs` names `clusterIP`
    too (an update that leaves it out keeps the assigned one: serviceips.py)."""
    ips = spec.get("clusterIPs")
    if ips is None or spec.get("type") == EXTERNAL_NAME:
        return []
    if not isinstance(ips, list) or not all(isinstance(ip, str) for ip in ips):
        return [FieldError("spec.clusterIPs", common.type_error(ips, "array of strings"))]
    single = spec.get("clusterIP") or ""
    if not ips or not isinstance(single, str):
        return []
    if single and ips[0] != single:
        return [FieldError("spec.clusterIPs", common.invalid(ips, "first value must match `clusterIP`"))]
    if not single and op is base.Operation.CREATE:
        return [FieldError("spec.clusterIPs", common.invalid(ips, "must be empty when `clusterIP` is not specified"))]
    return []


def _is_svc_name(value: str) -> bool:
    """IANA_SVC_NAME (a named port): at most 15 lowercase alphanumerics or '-', a letter among them,
    no '--', no '-' at either end."""
    return (len(value) <= 15 and _SVC_NAME.fullmatch(value) is not None and "--" not in value
            and any(c.isalpha() for c in value))


def _target_port(port: Obj, path: str) -> list[FieldError]:
    value = port.get("targetPort")
    if common.is_int(value):
        return [] if 1 <= value <= 65535 else [FieldError(path, common.invalid(value, PORT_RANGE))]
    if isinstance(value, str):
        if value.isdigit():
            return [FieldError(path, common.invalid(value, "must contain at least one letter (a-z)"))]
        if not _is_svc_name(value):
            return [FieldError(path, common.invalid(value, "must be no more than 15 characters, contain only "
                                                           "lowercase alphanumerics and '-', at least one letter, "
                                                           "and no '-' at either end or twice in a row"))]
        return []
    return [FieldError(path, common.type_error(value, "integer or string"))]


def _ports(spec: Obj, kind: str) -> list[FieldError]:
    ports = spec.get("ports")
    if ports is None:
        ports = []
    if not isinstance(ports, list):
        return [FieldError("spec.ports", common.type_error(ports, "array"))]
    errs: list[FieldError] = []
    if not ports and kind != EXTERNAL_NAME and spec.get("clusterIP") != HEADLESS:
        errs.append(FieldError("spec.ports", common.REQUIRED))
    names: set[str] = set()
    keys: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        path = f"spec.ports[{i}]"
        if not isinstance(port, dict):
            errs.append(FieldError(path, common.type_error(port, "object")))
            continue
        name = common.check_type(port, "name", f"{path}.name", errs, str, "string")
        if not name and len(ports) > 1:
            errs.append(FieldError(f"{path}.name", common.REQUIRED))
        elif name:
            errs += [FieldError(f"{path}.name", common.invalid(name, m)) for m in common.dns1123_label(name)]
            if name in names:
                errs.append(FieldError(f"{path}.name", common.duplicate(name)))
            names.add(name)
        number = port.get("port", 0)   # (absent is Go's zero, as kube-apiserver words it)
        if not common.is_int(number):
            errs.append(FieldError(f"{path}.port", common.type_error(number, "integer")))
        elif not 1 <= number <= 65535:
            errs.append(FieldError(f"{path}.port", common.invalid(number, PORT_RANGE)))
        protocol = port.get("protocol")
        if protocol not in PROTOCOLS:
            errs.append(FieldError(f"{path}.protocol", common.unsupported(protocol, PROTOCOLS)))
        errs += _target_port(port, f"{path}.targetPort")
        node_port = port.get("nodePort")
        if node_port not in (None, 0):
            if not common.is_int(node_port):
                errs.append(FieldError(f"{path}.nodePort", common.type_error(node_port, "integer")))
            elif kind not in (NODE_PORT, LOAD_BALANCER):
                errs.append(FieldError(f"{path}.nodePort", f"Forbidden: may not be used when `type` is '{kind}'"))
        if not (common.is_int(number) and isinstance(protocol, str)):
            continue   # (refused above; a list or an object is no key)
        key = (number, protocol)
        if key in keys:
            errs.append(FieldError(path, common.duplicate({"port": number, "protocol": protocol})))
        keys.add(key)
    return errs


def _choice(spec: Obj, key: str, allowed: tuple[str, ...], errs: list[FieldError]) -> None:
    value = spec.get(key)
    if value not in (None, "") and value not in allowed:
        errs.append(FieldError(f"spec.{key}", common.unsupported(value, allowed)))


def _externally_accessible(spec: Obj) -> bool:
    """kube's ExternallyAccessible: NodePort or LoadBalancer, or a ClusterIP one with externalIPs."""
    kind = spec.get("type")
    return kind in (NODE_PORT, LOAD_BALANCER) or (kind == CLUSTER_IP and bool(spec.get("externalIPs")))


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    kind = spec.get("type")
    if kind not in TYPES:
        errs.append(FieldError("spec.type", common.unsupported(kind, TYPES)))
    _choice(spec, "sessionAffinity", AFFINITIES, errs)
    errs += _affinity_config(spec)
    errs += _cluster_ips(op, spec)
    _choice(spec, "internalTrafficPolicy", TRAFFIC_POLICIES, errs)
    _choice(spec, "externalTrafficPolicy", TRAFFIC_POLICIES, errs)
    _choice(spec, "ipFamilyPolicy", FAMILY_POLICIES, errs)
    for key in ("clusterIP", "externalName", "loadBalancerIP"):
        common.check_type(spec, key, f"spec.{key}", errs, str, "string")
    errs += common.label_map(spec, "selector", "spec.selector")   # (the endpoints are computed from it)
    families = common.check_type(spec, "ipFamilies", "spec.ipFamilies", errs, list, "array") or []
    for i, family in enumerate(families):
        if family not in FAMILIES:
            errs.append(FieldError(f"spec.ipFamilies[{i}]", common.unsupported(family, FAMILIES)))
    errs += _ports(spec, str(kind))
    if kind in (NODE_PORT, LOAD_BALANCER) and spec.get("clusterIP") == HEADLESS:
        errs.append(FieldError("spec.clusterIPs[0]", common.invalid(HEADLESS,
                                                                    f"may not be set to 'None' for {kind} services")))
    policy = spec.get("externalTrafficPolicy")
    if policy not in (None, "") and not _externally_accessible(spec) and \
            (old is None or (old.get("spec") or {}).get("externalTrafficPolicy") != policy):
        # (an update that only changes the type keeps it, where kube-apiserver's strategy drops it)
        errs.append(FieldError("spec.externalTrafficPolicy",
                               common.invalid(policy, "may only be set for externally-accessible services")))
    if kind == EXTERNAL_NAME:
        name = spec.get("externalName")
        if not name:
            errs.append(FieldError("spec.externalName", common.REQUIRED))
        elif isinstance(name, str):
            errs += [FieldError("spec.externalName", common.invalid(name, m))
                     for m in common.dns1123_subdomain(name.removesuffix("."))]
        if spec.get("clusterIP"):
            errs.append(FieldError("spec.clusterIP", "Forbidden: may not be set for ExternalName services"))
    return errs
