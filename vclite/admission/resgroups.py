"""Volcano's pod webhook resource groups (pkg/webhooks/admission/pods/mutate, pkg/webhooks/config): the
admission configuration's `resourceGroups` send a created pod to a group of nodes.

Volcano's webhook reads its configuration from a file (`--admission-conf`) that its Helm chart mounts from the
ConfigMap `volcano-system/volcano-admission-configmap`, key `volcano-admission.conf`; vclite reads that
ConfigMap from the store, so applying it takes effect at once (Volcano's webhook reloads the file on change).

A pod belongs to the first group whose `object` matches it: `key: namespace` and the pod's namespace among
`value`; `key: annotation` (or no key) and one of `value`'s `"name: value"` annotations on the pod; no `object`
at all and the pod annotated `volcano.sh/resource-group: <the group's name>`. The group then gives the pod
its `labels` as nodeSelector (over the pod's own), its `affinity` (JSON text; only to a pod without one),
its `tolerations` (after the pod's) and its `schedulerName`.

`shape_errors` checks the configuration when the ConfigMap is written (Volcano's webhook logs a file that
does not decode and keeps the groups it had); `apply` is pure over the pod and the configuration.
"""
from __future__ import annotations

import functools
import json
from typing import Any

import yaml

from vclite.admission import base, common, tolerations as tolerations_mod
from vclite.api import kinds, meta, scheduling
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

CONFIGMAP_NAMESPACE, CONFIGMAP = scheduling.SCHEDULER_CONFIGMAP_NAMESPACE, "volcano-admission-configmap"
CONF_KEY = "volcano-admission.conf"
DEFAULT_ANNOTATION = "volcano.sh/resource-group"
INVALID = "InvalidAdmissionConf"   # the reason of the Warning Event on a stored ConfigMap that is not used
_STRING_FIELDS = ("resourceGroup", "schedulerName", "affinity")


def is_admission_configmap(obj: Obj) -> bool:
    return meta.namespace(obj) == CONFIGMAP_NAMESPACE and meta.name(obj) == CONFIGMAP


def parse(text: str) -> list[Obj]:
    """The `resourceGroups` of a configuration text; ValueError (with the line) when it cannot be read."""
    try:
        conf = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise ValueError(f"{where}{getattr(e, 'problem', None) or e}") from None
    if conf is None:
        return []
    if not isinstance(conf, dict):
        raise ValueError(common.type_error(conf, "object"))
    groups = conf.get("resourceGroups")
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise ValueError(f"resourceGroups: {common.type_error(groups, 'array')}")
    return groups


def shape_errors(configmap: Obj) -> list[FieldError]:
    """What is wrong with the admission configuration a ConfigMap `volcano-system/volcano-admission-configmap`
    carries (none for any other ConfigMap): its text parses, and each group's fields have Volcano's types."""
    data = configmap.get("data")
    text = data.get(CONF_KEY) if isinstance(data, dict) and is_admission_configmap(configmap) else None
    if not isinstance(text, str):
        return []
    path = f"data[{CONF_KEY}]"
    try:
        groups = parse(text)
    except ValueError as e:
        return [FieldError(path, f"the admission configuration cannot be read: {e}")]
    errs: list[FieldError] = []
    for i, group in enumerate(groups):
        errs += [FieldError(path, f"resourceGroups[{i}]{m}") for m in _group_problems(group)]
    return errs


def _group_problems(group: Any) -> list[str]:
    if not isinstance(group, dict):
        return [f": {common.type_error(group, 'object')}"]
    out = [f".{k}: {common.type_error(group[k], 'string')}" for k in _STRING_FIELDS
           if group.get(k) is not None and not isinstance(group[k], str)]
    obj = group.get("object")
    if obj is not None and not isinstance(obj, dict):
        out.append(f".object: {common.type_error(obj, 'object')}")
    elif isinstance(obj, dict):
        if obj.get("key") is not None and not isinstance(obj["key"], str):
            out.append(f".object.key: {common.type_error(obj['key'], 'string')}")
        if obj.get("value") is not None and not _strings(obj["value"]):
            out.append(f".object.value: {common.type_error(obj['value'], 'array of strings')}")
    labels = group.get("labels")
    if labels is not None and not (isinstance(labels, dict) and all(isinstance(v, str) for v in labels.values())):
        out.append(f".labels: {common.type_error(labels, 'map of strings')}")
    tols = group.get("tolerations")
    if tols is not None and not (isinstance(tols, list) and all(isinstance(t, dict) for t in tols)):
        out.append(f".tolerations: {common.type_error(tols, 'array of objects')}")
    elif tols:
        out += [f"{e.path}: {e.message}" for e in tolerations_mod.errors_of(tols, ".tolerations")]
    affinity = group.get("affinity")
    if isinstance(affinity, str) and affinity and not isinstance(_json_object(affinity), dict):
        out.append(f".affinity: {common.invalid(affinity, 'must be an Affinity written as a JSON object')}")
    return out


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def stored_problem(configmap: Obj | None) -> str | None:
    """Why a stored admission ConfigMap is not used (written before its check, or straight into the store), in
    one message naming it; None when it is sound or absent. Volcano's webhook logs a file it cannot decode."""
    if not isinstance(configmap, dict):
        return None
    errs = shape_errors(configmap)
    if not errs:
        return None
    return (f"admission configuration of ConfigMap {CONFIGMAP_NAMESPACE}/{CONFIGMAP} not used (no resource group "
            f"applies until it is fixed): " + "; ".join(str(e) for e in errs))


def groups_of(view: base.View) -> list[Obj]:
    """The resource groups the stored admission ConfigMap names (none when there is none or it cannot be read:
    a ConfigMap written before this check is not trusted); a fresh copy for each pod."""
    cm = view.get(kinds.CONFIGMAP, CONFIGMAP_NAMESPACE, CONFIGMAP)
    data = cm.get("data") if isinstance(cm, dict) else None
    text = data.get(CONF_KEY) if isinstance(data, dict) else None
    return json.loads(_checked_groups(text)) if isinstance(text, str) else []


@functools.lru_cache(maxsize=4)
def _checked_groups(text: str) -> str:
    """The groups of a configuration text as JSON ("[]" when it has problems): parsed once per text."""
    if shape_errors(_admission_configmap(text)):
        return "[]"
    return json.dumps([g for g in parse(text) if isinstance(g, dict)], default=str)   # (a YAML date: text)


def _admission_configmap(text: str) -> Obj:
    return {"metadata": {"namespace": CONFIGMAP_NAMESPACE, "name": CONFIGMAP}, "data": {CONF_KEY: text}}


def belongs(pod: Obj, group: Obj) -> bool:
    """GetResGroup(...).IsBelongResGroup: by namespace, or by annotation (the default)."""
    obj = group.get("object") if isinstance(group.get("object"), dict) else {}
    key, values = obj.get("key") or "", obj.get("value") or []
    if key == "namespace":
        return (meta.namespace(pod) or "default") in values
    if key not in ("", "annotation"):
        return False
    annotations = meta.annotations(pod)
    wanted: dict[str, str] = {}
    for text in values:
        try:
            pairs = yaml.load(text, Loader=yaml.BaseLoader)   # (every scalar a string, as Go's map[string]string)
        except yaml.YAMLError:
            continue
        if isinstance(pairs, dict):
            for k, v in pairs.items():
                if isinstance(v, str):
                    wanted.setdefault(str(k), v)   # (mergo.Merge: the first value of a key stays)
    if any(annotations.get(k) == v for k, v in wanted.items()):
        return True
    return key == "" and annotations.get(DEFAULT_ANNOTATION) == group.get("resourceGroup")


def apply(pod: Obj, groups: list[Obj]) -> None:
    """createPatch: the first group the pod belongs to patches its spec; later groups are not looked at."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for group in groups:
        if not belongs(pod, group):
            continue
        labels = group.get("labels") or {}
        if labels:
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **labels}
        affinity = _json_object(group["affinity"]) if group.get("affinity") else None
        if isinstance(affinity, dict) and spec.get("affinity") is None:
            spec["affinity"] = affinity
        if group.get("tolerations"):
            spec["tolerations"] = [*(spec.get("tolerations") or []), *group["tolerations"]]
        if group.get("schedulerName"):
            spec["schedulerName"] = group["schedulerName"]
        return
