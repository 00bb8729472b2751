"""Kubernetes protobuf request bodies, for the few kinds kubectl sends that way.

kubectl's generator commands (`kubectl create namespace|configmap|secret|priorityclass|service|pdb|quota`),
`kubectl auth` (self-subject reviews) and `kubectl drain` (the DeleteOptions of each pod it deletes) send their
object as `application/vnd.kubernetes.protobuf`: the magic `k8s\\0`, then a `runtime.Unknown` (typeMeta
{apiVersion=1, kind=2} = 1, raw = 2) whose `raw` is the object's protobuf message. This module decodes
those messages for Namespace, ConfigMap, Secret, ServiceAccount (and the TokenRequest of `kubectl create
token`), PriorityClass, Service, PodDisruptionBudget, ResourceQuota, the
reviews and DeleteOptions into the JSON-shaped objects their JSON form would give (zero values omitted, as the JSON
`omitempty` tags do; binary
data base64, times RFC 3339). Any other kind, or a malformed message, is refused with
UnsupportedMediaType / BadRequest: the client can send JSON instead. Pure; a bounded walk over
the bytes (nesting limited by the schemas).
"""
from __future__ import annotations

import base64
import datetime
from typing import Any

from vclite.httpserver import status as status_mod
from vclite.lib import errors

MAGIC = b"k8s\x00"
Schema = dict[int, tuple[str, Any]]  # field number -> (JSON name, type)

TIME = "time"
OWNER_REF: Schema = {1: ("kind", "string"), 2: ("name", "string"), 3: ("uid", "string"),
                     4: ("controller", "bool"), 5: ("apiVersion", "string"), 6: ("blockOwnerDeletion", "bool")}
OBJECT_META: Schema = {
    1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"), 5: ("uid", "string"),
    6: ("resourceVersion", "string"), 7: ("generation", "int"), 8: ("creationTimestamp", TIME),
    10: ("deletionGracePeriodSeconds", "int"), 11: ("labels", ("map", "string")),
    12: ("annotations", ("map", "string")), 13: ("ownerReferences", ("repeated", OWNER_REF)),
    14: ("finalizers", ("repeated", "string")),
}
OBJECT_REF: Schema = {1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"), 4: ("uid", "string"),
                      5: ("apiVersion", "string"), 6: ("resourceVersion", "string"), 7: ("fieldPath", "string")}
SCHEMAS: dict[tuple[str, str], Schema] = {
    ("v1", "Namespace"): {1: ("metadata", OBJECT_META), 2: ("spec", {1: ("finalizers", ("repeated", "string"))}),
                          3: ("status", {1: ("phase", "string")})},
    ("v1", "ConfigMap"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "string")),
                          3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool")},
    ("v1", "Secret"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "bytes")), 3: ("type", "string"),
                       4: ("stringData", ("map", "string")), 5: ("immutable", "bool")},
    ("v1", "ServiceAccount"): {1: ("metadata", OBJECT_META), 2: ("secrets", ("repeated", OBJECT_REF)),
                               3: ("imagePullSecrets", ("repeated", {1: ("name", "string")})),
                               4: ("automountServiceAccountToken", "bool")},
    # (`kubectl create token`: the TokenRequest posted to serviceaccounts/<name>/token)
    ("authentication.k8s.io/v1", "TokenRequest"): {
        1: ("metadata", OBJECT_META),
        2: ("spec", {1: ("audiences", ("repeated", "string")), 4: ("expirationSeconds", "int"),
                     3: ("boundObjectRef", {1: ("kind", "string"), 2: ("apiVersion", "string"),
                                            3: ("name", "string"), 4: ("uid", "string")})})},
    ("scheduling.k8s.io/v1", "PriorityClass"): {1: ("metadata", OBJECT_META), 2: ("value", "int"),
                                                3: ("globalDefault", "bool"), 4: ("description", "string"),
                                                5: ("preemptionPolicy", "string")},
}
INT_OR_STRING = "intorstr"   # util/intstr.IntOrString: {type = 1 (0 int, 1 string), intVal = 2, strVal = 3}
SERVICE_PORT: Schema = {1: ("name", "string"), 2: ("protocol", "string"), 3: ("port", "int"),
                        4: ("targetPort", INT_OR_STRING), 5: ("nodePort", "int"), 6: ("appProtocol", "string")}
# `kubectl create service clusterip|nodeport|loadbalancer|externalname` (its status is not read)
SCHEMAS[("v1", "Service")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("ports", ("repeated", SERVICE_PORT)), 2: ("selector", ("map", "string")), 3: ("clusterIP", "string"),
    4: ("type", "string"), 5: ("externalIPs", ("repeated", "string")), 7: ("sessionAffinity", "string"),
    8: ("loadBalancerIP", "string"), 9: ("loadBalancerSourceRanges", ("repeated", "string")),
    10: ("externalName", "string"), 11: ("externalTrafficPolicy", "string"), 12: ("healthCheckNodePort", "int"),
    13: ("publishNotReadyAddresses", "bool"), 17: ("ipFamilyPolicy", "string"),
    18: ("clusterIPs", ("repeated", "string")), 19: ("ipFamilies", ("repeated", "string")),
    20: ("allocateLoadBalancerNodePorts", "bool"), 21: ("loadBalancerClass", "string"),
    22: ("internalTrafficPolicy", "string"), 23: ("trafficDistribution", "string")})}
# `kubectl create poddisruptionbudget`: a pointer field (IntOrString, LabelSelector) sent is kept even when its
# value is zero (`--min-available=0`, an empty selector): ("kept", type)
LABEL_SELECTOR: Schema = {1: ("matchLabels", ("map", "string")), 2: ("matchExpressions", ("repeated", {
    1: ("key", "string"), 2: ("operator", "string"), 3: ("values", ("repeated", "string"))}))}
SCHEMAS[("policy/v1", "PodDisruptionBudget")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("minAvailable", ("kept", INT_OR_STRING)), 2: ("selector", ("kept", LABEL_SELECTOR)),
    3: ("maxUnavailable", ("kept", INT_OR_STRING)), 4: ("unhealthyPodEvictionPolicy", "string")})}
QUANTITY = "quantity"   # api/resource.Quantity: {string = 1}
# `kubectl create quota NAME --hard=... [--scopes=...]`
SCHEMAS[("v1", "ResourceQuota")] = {1: ("metadata", OBJECT_META), 2: ("spec", {
    1: ("hard", ("map", QUANTITY)), 2: ("scopes", ("repeated", "string")),
    3: ("scopeSelector", {1: ("matchExpressions", ("repeated", {
        1: ("scopeName", "string"), 2: ("operator", "string"), 3: ("values", ("repeated", "string"))}))})}),
    3: ("status", {1: ("hard", ("map", QUANTITY)), 2: ("used", ("map", QUANTITY))})}
RESOURCE_ATTRIBUTES: Schema = {1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
                               4: ("version", "string"), 5: ("resource", "string"), 6: ("subresource", "string"),
                               7: ("name", "string")}
# the self-subject reviews kubectl sends (`kubectl auth can-i`, `auth can-i --list`, `auth whoami`; reviews.py)
SCHEMAS.update({
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {1: ("metadata", OBJECT_META), 2: ("spec", {
        1: ("resourceAttributes", RESOURCE_ATTRIBUTES),
        2: ("nonResourceAttributes", {1: ("path", "string"), 2: ("verb", "string")})})},
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): {1: ("metadata", OBJECT_META),
                                                            2: ("spec", {1: ("namespace", "string")})},
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {1: ("metadata", OBJECT_META)},
})
# the options of a DELETE (`kubectl drain` deletes each pod through client-go, which sends them as protobuf;
# resources.delete_options reads them); client-go names them in the client's group version or in meta's
DELETE_OPTIONS: Schema = {1: ("gracePeriodSeconds", "int"),
                          2: ("preconditions", {1: ("uid", "string"), 2: ("resourceVersion", "string")}),
                          3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "string"),
                          5: ("dryRun", ("repeated", "string"))}
SCHEMAS.update({(version, "DeleteOptions"): DELETE_OPTIONS for version in ("v1", "meta.k8s.io/v1")})
KEEP_ZERO = {("scheduling.k8s.io/v1", "PriorityClass"): {"value"},
             # 0 is a grace period of its own (delete now), not an absent one
             **{(version, "DeleteOptions"): {"gracePeriodSeconds"} for version in ("v1", "meta.k8s.io/v1")}}
UNKNOWN: Schema = {1: ("typeMeta", {1: ("apiVersion", "string"), 2: ("kind", "string")}), 2: ("raw", "raw"),
                   3: ("contentEncoding", "string"), 4: ("contentType", "string")}


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def varint(self) -> int:
        shift = result = 0
        while True:
            if self.pos >= len(self.data) or shift > 63:
                raise errors.BadRequest("malformed protobuf body (varint)")
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise errors.BadRequest("malformed protobuf body (length)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) for every field of one message."""
    r, out = _Reader(data), []
    while r.pos < len(data):
        key = r.varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            value: Any = r.varint()
        elif wire == 1:
            value = r.take(8)
        elif wire == 2:
            value = r.take(r.varint())
        elif wire == 5:
            value = r.take(4)
        else:
            raise errors.BadRequest(f"malformed protobuf body (wire type {wire})")
        out.append((number, wire, value))
    return out


def _time(data: bytes) -> str:
    secs = nanos = 0
    for number, _, value in _fields(data):
        if number == 1:
            secs = value if value < 1 << 63 else value - (1 << 64)
        elif number == 2:
            nanos = value
    if secs == 0 and nanos == 0:
        return ""
    t = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(kind: Any, wire: int, value: Any) -> Any:
    if kind == "string":
        if wire != 2:
            raise errors.BadRequest("malformed protobuf body (string)")
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.BadRequest("malformed protobuf body (string is not UTF-8)") from None
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "raw":
        return value
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value if value < 1 << 63 else value - (1 << 64)
    if kind == TIME:
        return _time(value)
    if kind == QUANTITY:
        return _scalar("string", 2, next((v for n, _, v in _fields(value) if n == 1), b""))
    if kind == INT_OR_STRING:
        parts = {n: v for n, _, v in _fields(value)}
        if parts.get(1, 0) == 1:
            return _scalar("string", 2, parts.get(3, b""))
        return _scalar("int", 0, parts.get(2, 0))
    if isinstance(kind, dict):
        return _message(value, kind)
    raise errors.BadRequest("malformed protobuf body")


def _message(data: bytes, schema: Schema, keep_zero: frozenset[str] = frozenset()) -> dict:
    out: dict[str, Any] = {}
    kept = set(keep_zero)
    for number, wire, value in _fields(data):
        if number not in schema:
            continue  # fields vclite does not keep (selfLink, managedFields, …)
        name, kind = schema[number]
        if isinstance(kind, tuple) and kind[0] == "map":
            entry = {n: v for n, _, v in _fields(value)}
            key = _scalar("string", 2, entry.get(1, b""))
            out.setdefault(name, {})[key] = _scalar(kind[1], 2, entry.get(2, b""))
        elif isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(name, []).append(_scalar(kind[1], wire, value))
        elif isinstance(kind, tuple) and kind[0] == "kept":
            out[name] = _scalar(kind[1], wire, value)
            kept.add(name)
        else:
            out[name] = _scalar(kind, wire, value)
    return {k: v for k, v in out.items() if k in kept or v not in ("", b"", 0, False, {}, [], None)}


def decode(raw: bytes) -> dict:
    """The JSON-shaped object of a Kubernetes protobuf body, or an ApiError."""
    if not raw.startswith(MAGIC):
        raise errors.BadRequest("malformed protobuf body (no k8s magic prefix)")
    unknown = _message(raw[len(MAGIC):], UNKNOWN)
    type_meta = unknown.get("typeMeta") or {}
    key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
    schema = SCHEMAS.get(key)
    if schema is None:
        known = ", ".join(dict.fromkeys(k for _, k in SCHEMAS))
        raise status_mod.UnsupportedMediaType(
            f"vclite reads protobuf bodies only for {known}, not {key[1] or 'this kind'}: send application/json")
    obj = _message(unknown.get("raw", b""), schema, frozenset(KEEP_ZERO.get(key, ())))
    return {"apiVersion": key[0], "kind": key[1], **obj}
