"""A Service's cluster IP, node ports and IP families, as kube-apiserver's Service registry gives them.

`resolve` (admission's hook that reads the other objects) runs after service.py's defaults and
checks:
- an update that leaves out the cluster IP or a node port keeps the one the Service has (kubectl
  apply of a manifest without them); changing an assigned cluster IP is refused (immutable);
- a headless Service (`clusterIP: None`) gets `clusterIPs: [None]`; an ExternalName one no address;
- any other gets a free address of the service CIDR (SERVICE_CIDR, 10.96.0.0/12, kube-apiserver's
  default range): the lowest free one above the first STATIC_BLOCK addresses, which kube-apiserver
  keeps for addresses users choose; an address asked for must be in the range and free;
- NodePort and LoadBalancer Services get free node ports (30000-32767); one asked for must be free;
- `ipFamilies: [IPv4]`, `ipFamilyPolicy: SingleStack` (a single-stack IPv4 cluster); a headless
  Service without selector `RequireDualStack` and both families (no address is allocated for it).
Problems are one 422 naming the field, worded as kube-apiserver's allocator words them.
"""
from __future__ import annotations

import ipaddress
from typing import Any

from vclite.admission import base, common, service
from vclite.api import kinds, meta
from vclite.lib import errors

Obj = dict[str, Any]
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
STATIC_BLOCK = 256          # kube-apiserver: min(max(16, size/16), 256) low addresses for chosen IPs
NODE_PORT_MIN, NODE_PORT_MAX = 30000, 32767
RANGE = f"The range of valid IPs is {SERVICE_CIDR}"


def _invalid(obj: Obj, path: str, message: str) -> errors.Invalid:
    return errors.Invalid("Service", str(meta.name(obj)), [errors.FieldError(path, message)])


def _keep_assigned(spec: Obj, before: Obj) -> None:
    """What an update leaves out keeps its assigned value (kube-apiserver's patchAllocatedValues)."""
    if before.get("type") == service.EXTERNAL_NAME or spec.get("type") == service.EXTERNAL_NAME:
        return
    if not spec.get("clusterIP") and not spec.get("clusterIPs"):
        for key in ("clusterIP", "clusterIPs"):
            if before.get(key):
                spec[key] = before[key]
    for key in ("ipFamilies", "ipFamilyPolicy"):
        if not spec.get(key) and before.get(key):
            spec[key] = before[key]
    if spec.get("type") in (service.NODE_PORT, service.LOAD_BALANCER):
        assigned = {(p.get("port"), p.get("protocol")): p.get("nodePort")
                    for p in before.get("ports") or () if isinstance(p, dict) and p.get("nodePort")}
        for port in spec.get("ports") or ():
            if not port.get("nodePort") and (port.get("port"), port.get("protocol")) in assigned:
                port["nodePort"] = assigned[(port.get("port"), port.get("protocol"))]


def _others(view: base.View, obj: Obj) -> list[Obj]:
    me = (meta.namespace(obj), meta.name(obj))
    return [s for s in view.list(kinds.SERVICE) if (meta.namespace(s), meta.name(s)) != me]


def _cluster_ip(obj: Obj, spec: Obj, view: base.View) -> str:
    wanted = spec.get("clusterIP") or (spec.get("clusterIPs") or [""])[0]
    if wanted == service.HEADLESS:
        return wanted
    used = {ip for s in _others(view, obj) for ip in (s.get("spec") or {}).get("clusterIPs") or ()}
    if wanted:
        try:
            address = ipaddress.ip_address(wanted)
        except ValueError:
            raise _invalid(obj, "spec.clusterIPs[0]", common.invalid(
                wanted, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")) from None
        if address not in SERVICE_CIDR or address in (SERVICE_CIDR.network_address, SERVICE_CIDR.broadcast_address):
            raise _invalid(obj, "spec.clusterIPs", f'Invalid value: ["{wanted}"]: failed to allocate IP {wanted}: '
                                                   f"provided IP is not in the valid range. {RANGE}")
        if wanted in used:
            raise _invalid(obj, "spec.clusterIPs", f'Invalid value: ["{wanted}"]: failed to allocate IP {wanted}: '
                                                   "provided IP is already allocated")
        return wanted
    base_ip = int(SERVICE_CIDR.network_address)
    for offset in range(STATIC_BLOCK, SERVICE_CIDR.num_addresses - 1):
        candidate = str(ipaddress.ip_address(base_ip + offset))
        if candidate not in used:
            return candidate
    raise _invalid(obj, "spec.clusterIPs", f"failed to allocate a serviceIP: range is full ({RANGE})")


def _node_ports(obj: Obj, spec: Obj, view: base.View) -> None:
    used = {p.get("nodePort") for s in _others(view, obj) for p in (s.get("spec") or {}).get("ports") or ()
            if isinstance(p, dict)}
    mine: set[int] = set()
    for i, port in enumerate(spec.get("ports") or ()):
        wanted = port.get("nodePort")
        if wanted:
            if not NODE_PORT_MIN <= wanted <= NODE_PORT_MAX:
                raise _invalid(obj, f"spec.ports[{i}].nodePort", common.invalid(
                    wanted, "provided port is not in the valid range. The range of valid ports is "
                            f"{NODE_PORT_MIN}-{NODE_PORT_MAX}"))
            if wanted in used or wanted in mine:
                raise _invalid(obj, f"spec.ports[{i}].nodePort", common.invalid(wanted,
                                                                                "provided port is already allocated"))
            mine.add(wanted)
    for port in spec.get("ports") or ():
        if not port.get("nodePort"):
            port["nodePort"] = next(n for n in range(NODE_PORT_MIN, NODE_PORT_MAX + 1) if n not in used | mine)
            mine.add(port["nodePort"])


def resolve(op: base.Operation, obj: Obj, old: Obj | None, view: base.View) -> None:
    """Give the Service its address, node ports and families (see the module docstring); raises
    errors.Invalid naming the field when one asked for cannot be given."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or getattr(view, "existing_state", False):
        return
    before = (old or {}).get("spec") or {}
    if op is base.Operation.UPDATE:
        _keep_assigned(spec, before)
        assigned = before.get("clusterIP")
        if assigned and before.get("type") != service.EXTERNAL_NAME and spec.get("type") != service.EXTERNAL_NAME \
                and spec.get("clusterIP") != assigned:
            raise _invalid(obj, "spec.clusterIP", common.invalid(spec.get("clusterIP", ""), "field is immutable"))
    if spec.get("type") == service.EXTERNAL_NAME:
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            spec.pop(key, None)
        return
    ip = spec.get("clusterIP") if op is base.Operation.UPDATE and before.get("clusterIP") else \
        _cluster_ip(obj, spec, view)
    spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
    if ip == service.HEADLESS and not spec.get("selector"):
        spec.setdefault("ipFamilyPolicy", "RequireDualStack")
        spec.setdefault("ipFamilies", list(service.FAMILIES))
    else:
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("ipFamilies", ["IPv4"])
        if spec["ipFamilyPolicy"] == "RequireDualStack":
            raise _invalid(obj, "spec.ipFamilyPolicy", common.invalid(
                "RequireDualStack", "this cluster is not configured for dual-stack services"))
        for i, family in enumerate(spec["ipFamilies"]):
            if family != "IPv4":
                raise _invalid(obj, f"spec.ipFamilies[{i}]", common.invalid(family, "not configured on this cluster"))
    if spec.get("type") in (service.NODE_PORT, service.LOAD_BALANCER) and not (
            spec.get("type") == service.LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is False):
        _node_ports(obj, spec, view)
