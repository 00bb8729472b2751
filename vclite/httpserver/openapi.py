"""OpenAPI v3 documents: the root index and one document per group-version; an empty v2 document.

Enough for `kubectl apply` with its default validation: every kind's item path has a PATCH
operation carrying `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter
(kubectl then validates on the server, sending `fieldValidation=Strict`). The request bodies list
JSON, merge and apply patch types but not strategic merge, so kubectl computes strategic patches
for built-in kinds from its compiled-in types, as it does with OpenAPI v2 absent. Schemas are
open objects (`x-kubernetes-preserve-unknown-fields`): admission is the validator, not the
schema; Volcano's kinds (JobFlow, JobTemplate, Job, Queue, PodGroup) also describe every field
(api/kindschemas), for `kubectl explain`. Pure functions of the kinds table.

OpenAPI v2 (`/openapi/v2`) is a Swagger 2.0 document without paths or definitions. kubectl reads it
only for a kind the v3 documents do not have (a mistyped kind or version, a kind vclite does not
serve): its strict validation falls back to v2, finds no schema and lets the mapping fail with
kubectl's own words (`no matches for kind "Jobflow" in version "flow.volcano.sh/v1alpha1"`), as on
a cluster without that CRD. Without the document kubectl stops at `failed to download openapi`.
Client-go asks for it as protobuf (gnostic's `openapi_v2.Document`), other clients as JSON.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from vclite.api import kinds, kindschemas
from vclite.httpserver import discovery, routes

Obj = dict[str, Any]

PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
QUERY_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def schema_name(k: kinds.Kind) -> str:
    """kube-apiserver's naming: reversed group (`sh.volcano.flow.v1alpha1.JobFlow`), core `io.k8s.api.core.v1.Pod`."""
    if not k.group:
        return f"io.k8s.api.core.{k.version}.{k.kind}"
    return ".".join(reversed(k.group.split("."))) + f".{k.version}.{k.kind}"


def _gvk(k: kinds.Kind) -> Obj:
    return {"group": k.group, "version": k.version, "kind": k.kind}


def _schema(k: kinds.Kind) -> Obj:
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    props: Obj = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": open_object}
    for field in ("spec", "status") if k.has_status else ("spec",):
        props[field] = open_object
    out: Obj = {"type": "object", "x-kubernetes-group-version-kind": [_gvk(k)],
                "x-kubernetes-preserve-unknown-fields": True, "properties": props}
    found = kindschemas.described(k)   # field by field: `kubectl explain vcjob.spec.tasks.policies`
    if found is not None:
        out["description"], described = found
        props.update(described)
    return out


def _item_path(k: kinds.Kind, group: str, version: str) -> str:
    base = f"/{gv_path(group, version)}"
    return f"{base}/namespaces/{{namespace}}/{k.plural}/{{name}}" if k.namespaced else f"{base}/{k.plural}/{{name}}"


def _operations(k: kinds.Kind, group: str, version: str) -> Obj:
    ref = {"$ref": f"#/components/schemas/{schema_name(k)}"}
    content = {"application/json": {"schema": ref}}
    params = [{"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": True}} for p in QUERY_PARAMS]
    path_params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    if k.namespaced:
        path_params.append({"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}})
    ops: Obj = {"parameters": path_params}
    common = {"tags": [gv_path(group, version)], "x-kubernetes-group-version-kind": _gvk(k),
              "responses": {"200": {"description": "OK", "content": content}}}
    ops["get"] = {**common, "operationId": f"read{k.kind}", "x-kubernetes-action": "get"}
    ops["put"] = {**common, "operationId": f"replace{k.kind}", "x-kubernetes-action": "put", "parameters": params,
                  "requestBody": {"content": content, "required": True}}
    ops["patch"] = {**common, "operationId": f"patch{k.kind}", "x-kubernetes-action": "patch", "parameters": params,
                    "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in PATCH_TYPES},
                                    "required": True}}
    ops["delete"] = {**common, "operationId": f"delete{k.kind}", "x-kubernetes-action": "delete",
                     "parameters": [p for p in params if p["name"] in ("dryRun", "pretty")]}
    return ops


def group_version_document(group: str, version: str) -> Obj:
    ks = discovery.kinds_of(group, version)
    major, minor, patch = discovery.KUBE_VERSION
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (vclite)", "version": f"v{major}.{minor}.{patch}"},
        "paths": {_item_path(k, group, version): _operations(k, group, version) for k in ks},
        "components": {"schemas": {schema_name(k): _schema(k) for k in ks}},
    }


def document_hash(group: str, version: str) -> str:
    text = json.dumps(group_version_document(group, version), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32].upper()


def root() -> Obj:
    return {"paths": {gv_path(g, v): {"serverRelativeURL": f"/openapi/v3/{gv_path(g, v)}?hash={document_hash(g, v)}"}
                      for g, v in routes.served_group_versions()}}


# (client-go asks for `…spec.v2@v1.0+protobuf`; kube-openapi answers with a type Go's mime package can parse)
V2_PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def v2_document() -> Obj:
    major, minor, patch = discovery.KUBE_VERSION
    return {"swagger": "2.0", "info": {"title": "Kubernetes (vclite)", "version": f"v{major}.{minor}.{patch}"},
            "paths": {}, "definitions": {}}


def _pb_string(field: int, text: str) -> bytes:
    data = text.encode()
    return bytes([field << 3 | 2, len(data)]) + data   # (every string here is shorter than 128 bytes)


def v2_document_protobuf() -> bytes:
    """`v2_document` as gnostic's openapi_v2.Document: swagger = 1, info = 2 (title = 1, version = 2)."""
    doc = v2_document()
    info = _pb_string(1, doc["info"]["title"]) + _pb_string(2, doc["info"]["version"])
    return _pb_string(1, doc["swagger"]) + bytes([2 << 3 | 2, len(info)]) + info
