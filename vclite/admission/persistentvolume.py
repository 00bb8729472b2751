"""PersistentVolume (v1) admission, as kube-apiserver's defaults, registry strategy and
ValidatePersistentVolume(Update) (pkg/apis/core/validation) treat it; and the checks claims share.

- Defaults (every write, as decoding defaults): `spec.persistentVolumeReclaimPolicy` Retain,
  `spec.volumeMode` Filesystem, a hostPath's `type` "". On create (`resolve`, not for a cluster's existing
  state): the status is reset to `phase: Pending` (the strategy's PrepareForCreate; the volume controller
  makes it Available), and the StorageObjectInUseProtection plugin adds the `kubernetes.io/pv-protection`
  finalizer.
- Validation: access modes (at least one, each known, ReadWriteOncePod alone), `capacity` with `storage`
  only, a positive quantity; reclaim policy Delete|Recycle|Retain; exactly one volume source (`spec: Required
  value: must specify a volume type`, a second one `Forbidden: may not specify more than 1 volume type`),
  checked as kube checks hostPath (path, no `..`, type), local (path; nodeAffinity required), nfs (server,
  absolute path) and csi (driver, volumeHandle) — other sources only counted; nodeAffinity's required node
  selector terms; a class name a DNS subdomain; volumeMode Block|Filesystem. kube does not check `claimRef`
  beyond its shape, nor does this.
- Update: the volume source is immutable (`spec.persistentvolumesource: Forbidden: ...`), as are
  `volumeMode` and a nodeAffinity once set (`field is immutable`, kube's paths without `spec.`).
Pure functions.
"""
from __future__ import annotations

import posixpath
from typing import Any

from vclite.admission import base, common
from vclite.api import quantity, storage
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

# kube's PersistentVolumeSource members, in the order ValidatePersistentVolumeSpec counts them
SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
           "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
           "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                   "Socket")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
IMMUTABLE = "field is immutable"


# ---- shared with claims ------------------------------------------------------------------------

def strings(value: Any, path: str, errs: list[FieldError]) -> list[str]:
    """A field typed as an array of strings (absent: empty); another shape is one type error."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errs.append(FieldError(path, common.type_error(value, "array of strings")))
        return []
    return value


def access_mode_errors(modes: list[str], path: str, required: str) -> list[FieldError]:
    """kube's accessModes checks: at least one (`required` the message), each supported, ReadWriteOncePod alone."""
    errs: list[FieldError] = []
    if not modes:
        errs.append(FieldError(path, f"{common.REQUIRED}: {required}" if required else common.REQUIRED))
    supported = sorted(storage.ACCESS_MODES)
    rwop = other = False
    for mode in modes:
        if mode not in storage.ACCESS_MODES:
            errs.append(FieldError(path, common.unsupported(mode, supported)))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(FieldError(path, "Forbidden: may not use ReadWriteOncePod with other access modes"))
    return errs


def class_name_errors(spec: Obj, key: str, path: str) -> list[FieldError]:
    """A class name (storageClassName, volumeAttributesClassName): a string, a DNS subdomain when not empty."""
    value = spec.get(key)
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return [FieldError(path, common.type_error(value, "string"))]
    return [FieldError(path, common.invalid(value, m)) for m in common.dns1123_subdomain(value)]


def volume_mode_errors(spec: Obj, path: str) -> list[FieldError]:
    mode = spec.get("volumeMode")
    if mode is None or mode in storage.VOLUME_MODES:
        return []
    return [FieldError(path, common.unsupported(mode, sorted(storage.VOLUME_MODES)))]


def positive_quantity(value: Any, path: str) -> tuple[list[FieldError], quantity.Fraction | None]:
    """A quantity greater than zero (ValidatePositiveQuantityValue; a malformed one fails decoding in kube)."""
    try:
        q = quantity.parse(value)
    except ValueError as e:
        return [FieldError(path, str(e))], None
    if q <= 0:
        return [FieldError(path, common.invalid(_shown(value), "must be greater than zero"))], q
    return [], q


def _shown(value: Any) -> str:
    try:
        return quantity.canonical(value)
    except ValueError:
        return str(value)


def normal(value: Any) -> Any:
    """A value as kube's semantic equality compares it: null, [] and {} alike (as absent in a map), quantities
    by their amount where the caller marks them (`quantities` below)."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if normal(v) not in (None, [], {})}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


def quantities(rl: Any) -> Any:
    """A ResourceList with each quantity as its amount (so `1Gi` equals `1073741824`)."""
    if not isinstance(rl, dict):
        return rl
    out = {}
    for k, v in rl.items():
        try:
            out[k] = quantity.parse(v)
        except ValueError:
            out[k] = v
    return out


def diff(old: Obj, new: Obj, prefix: str) -> str:
    """The fields that differ, one line each (`- field: old` / `+ field: new`), for an immutability message
    (kube appends a Go cmp.Diff of the two specs)."""
    lines = []
    for key in sorted(set(old) | set(new), key=str):
        if old.get(key) != new.get(key):
            if key in old:
                lines.append(f"-  {prefix}{key}: {common.show(old[key])}")
            if key in new:
                lines.append(f"+  {prefix}{key}: {common.show(new[key])}")
    return "\n".join(lines)


def node_selector_errors(selector: Any, path: str) -> list[FieldError]:
    """kube's ValidateNodeSelector: at least one term; each requirement's key, operator and values."""
    if not isinstance(selector, dict):
        return [FieldError(path, common.type_error(selector, "object"))]
    terms_path = f"{path}.nodeSelectorTerms"
    terms = selector.get("nodeSelectorTerms")
    if not terms:
        return [FieldError(terms_path, f"{common.REQUIRED}: must have at least one node selector term")]
    errs: list[FieldError] = []
    for at, term in common.objects_in(terms, terms_path, errs):
        for key in ("matchExpressions", "matchFields"):
            for req_at, req in common.objects_in(term.get(key), f"{at}.{key}", errs):
                errs += _node_requirement(req, req_at)
    return errs


def _node_requirement(req: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    values = strings(req.get("values"), f"{path}.values", errs)
    op = req.get("operator")
    set_errors = common.set_operator_errors(op, values, path)
    if set_errors is not None:
        errs += set_errors
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(FieldError(f"{path}.values",
                                   f"{common.REQUIRED}: must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(FieldError(f"{path}.operator", common.invalid(op, "not a valid selector operator")))
    key = req.get("key")
    if not isinstance(key, str) or not key:
        errs.append(FieldError(f"{path}.key", common.REQUIRED if not key else common.type_error(key, "string")))
    else:
        errs += [FieldError(f"{path}.key", common.invalid(key, m)) for m in common.qualified_name(key)]
    return errs


def no_backsteps(value: str, path: str) -> list[FieldError]:
    if ".." in value.replace("\\", "/").split("/"):
        return [FieldError(path, common.invalid(value, "must not contain '..'"))]
    return []


# ---- the volume --------------------------------------------------------------------------------

def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    host = spec.get("hostPath")
    if isinstance(host, dict) and host.get("type") is None:
        host["type"] = ""


def resolve(op: base.Operation, obj: Obj, old: Obj | None, view: base.View) -> None:
    """At create: the status PrepareForCreate gives, and the pv-protection finalizer."""
    if op is base.Operation.CREATE and not getattr(view, "existing_state", False):
        obj["status"] = {"phase": storage.VOLUME_PENDING}
        add_finalizer(obj, storage.PV_PROTECTION)


def add_finalizer(obj: Obj, finalizer: str) -> None:
    md = obj["metadata"]
    finalizers = md.get("finalizers") or []
    if finalizer not in finalizers:
        md["finalizers"] = [*finalizers, finalizer]


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    modes = strings(spec.get("accessModes"), "spec.accessModes", errs)
    if isinstance(spec.get("accessModes"), list) or spec.get("accessModes") is None:
        errs += access_mode_errors(modes, "spec.accessModes", "")
    errs += _capacity_errors(spec.get("capacity"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in storage.RECLAIM_POLICIES:
        errs.append(FieldError("spec.persistentVolumeReclaimPolicy",
                               common.unsupported(policy, sorted(storage.RECLAIM_POLICIES))))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        if not isinstance(affinity, dict):
            errs.append(FieldError("spec.nodeAffinity", common.type_error(affinity, "object")))
        elif affinity.get("required") is None:
            errs.append(FieldError("spec.nodeAffinity.required",
                                   f"{common.REQUIRED}: must specify required node constraints"))
        else:
            errs += node_selector_errors(affinity["required"], "spec.nodeAffinity.required")
    errs += _source_errors(spec, affinity is not None)
    host = spec.get("hostPath")
    if (isinstance(host, dict) and isinstance(host.get("path"), str) and host["path"]
            and posixpath.normpath(host["path"]) == "/" and policy == "Recycle"):
        errs.append(FieldError("spec.persistentVolumeReclaimPolicy",
                               "Forbidden: may not be 'recycle' for a hostPath mount of '/'"))
    errs += class_name_errors(spec, "storageClassName", "spec.storageClassName")
    errs += volume_mode_errors(spec, "spec.volumeMode")
    errs += _claim_ref_errors(spec.get("claimRef"))
    for key in ("mountOptions",):
        strings(spec.get(key), f"spec.{key}", errs)
    if op is base.Operation.UPDATE and isinstance(old, dict):
        errs += _update_errors(spec, old.get("spec") if isinstance(old.get("spec"), dict) else {})
    return errs


def _capacity_errors(capacity: Any) -> list[FieldError]:
    if capacity is not None and not isinstance(capacity, dict):
        return [FieldError("spec.capacity", common.type_error(capacity, "object"))]
    capacity = capacity or {}
    errs: list[FieldError] = []
    if not capacity:
        errs.append(FieldError("spec.capacity", common.REQUIRED))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(FieldError("spec.capacity", common.unsupported(capacity, ["storage"])))
    for name, value in capacity.items():
        found, _ = positive_quantity(value, f"spec.capacity[{name}]")
        errs += found
    return errs


def _source_errors(spec: Obj, affinity_given: bool) -> list[FieldError]:
    """Exactly one volume source, each checked as kube checks it (flexVolume, as in kube, is counted
    without the check for a second source)."""
    errs: list[FieldError] = []
    count = 0
    for key in SOURCES:
        source = spec.get(key)
        if source is None:
            continue
        if count > 0 and key != "flexVolume":
            errs.append(FieldError(f"spec.{key}", "Forbidden: may not specify more than 1 volume type"))
            continue
        count += 1
        if not isinstance(source, dict):
            errs.append(FieldError(f"spec.{key}", common.type_error(source, "object")))
            continue
        errs += _one_source(key, source, f"spec.{key}")
        if key == "local" and not affinity_given:
            errs.append(FieldError("spec.nodeAffinity", f"{common.REQUIRED}: Local volume requires node affinity"))
    if count == 0:
        errs.append(FieldError("spec", f"{common.REQUIRED}: must specify a volume type"))
    return errs


def _one_source(key: str, source: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if key in ("hostPath", "local"):
        p = common.check_type(source, "path", f"{path}.path", errs, str, "string")
        if not p:
            return errs or [FieldError(f"{path}.path", common.REQUIRED)]
        errs += no_backsteps(p, f"{path}.path")
        kind = source.get("type")
        if key == "hostPath" and kind is not None and kind not in HOST_PATH_TYPES:
            errs.append(FieldError(f"{path}.type", common.unsupported(kind, HOST_PATH_TYPES)))
    elif key == "nfs":
        if not source.get("server"):
            errs.append(FieldError(f"{path}.server", common.REQUIRED))
        p = source.get("path")
        if not p:
            errs.append(FieldError(f"{path}.path", common.REQUIRED))
        elif not isinstance(p, str) or not p.startswith("/"):
            errs.append(FieldError(f"{path}.path", common.invalid(p, "must be an absolute path")))
    elif key == "csi":
        for field in ("driver", "volumeHandle"):
            if not source.get(field):
                errs.append(FieldError(f"{path}.{field}", common.REQUIRED))
    return errs


def _claim_ref_errors(ref: Any) -> list[FieldError]:
    if ref is None:
        return []
    if not isinstance(ref, dict):
        return [FieldError("spec.claimRef", common.type_error(ref, "object"))]
    errs: list[FieldError] = []
    for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
        common.check_type(ref, key, f"spec.claimRef.{key}", errs, str, "string")
    return errs


def _update_errors(spec: Obj, old_spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    new_source = {k: normal(spec.get(k)) for k in SOURCES if spec.get(k) is not None}
    old_source = {k: normal(old_spec.get(k)) for k in SOURCES if old_spec.get(k) is not None}
    if new_source != old_source:
        errs.append(FieldError("spec.persistentvolumesource", "Forbidden: spec.persistentvolumesource is immutable "
                                                              "after creation\n" + diff(old_source, new_source, "")))
    if (spec.get("volumeMode") or "Filesystem") != (old_spec.get("volumeMode") or "Filesystem"):
        errs.append(FieldError("volumeMode", common.invalid(spec.get("volumeMode"), IMMUTABLE)))
    if old_spec.get("nodeAffinity") is not None and normal(old_spec["nodeAffinity"]) != normal(spec.get("nodeAffinity")):
        errs.append(FieldError("nodeAffinity", common.invalid(
            spec.get("nodeAffinity"), IMMUTABLE + ", except for updating from beta label to GA")))
    return errs
