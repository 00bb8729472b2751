"""What a Pod's update (PUT or PATCH of the pod, not of its status) may change: kube-apiserver's
ValidatePodUpdate and ValidatePodSpecificAnnotationUpdates.

A pod's spec is fixed once created, but for:
- `spec.containers[*].image` and `spec.initContainers[*].image` (no container added or removed:
  `pod updates may not add or remove containers`; an image with leading or trailing whitespace is refused);
- `spec.activeDeadlineSeconds`: set where there was none, or lowered (never raised, never unset);
- `spec.tolerations`: added ones (an existing one may change only its `tolerationSeconds`);
- `spec.schedulingGates`: removed ones (`only deletion is allowed, but found new scheduling gate 'x'`);
- `spec.terminationGracePeriodSeconds`: to 1 when it was negative;
- while the pod has scheduling gates: entries added to `spec.nodeSelector`, match expressions or fields
  added to the existing terms of `spec.affinity.nodeAffinity.requiredDuringScheduling…`, and anything
  in the preferred terms.
Any other change of the spec (its `nodeName` too: the binding subresource sets it) is refused with
kube's 422 `spec: Forbidden: pod updates may not change fields other than …`, followed by the fields
that differ. Metadata stays mutable, except that the mirror-pod annotation and AppArmor's container
annotations may not be added, changed or removed (podannotations.py).

Specs are compared as kube-apiserver compares its decoded, defaulted objects: a field left out equals
its default or zero value (`restartPolicy: Always`, a port's `protocol: TCP`, `hostNetwork: false`, an
empty list…), quantities by value (`1000m` is `1`), the deprecated `serviceAccount` as an alias of
`serviceAccountName`. Deliberate difference: a container's `image` is not required (vclite runs
commands, see pod.py). The diff shown after the message is vclite's own (one `-`/`+` pair of lines
per field path), not Go's cmp.Diff of the internal structs. Pure.
"""
from __future__ import annotations

import dataclasses
import fractions
import json
from typing import Any

from vclite.admission import common, podannotations
from vclite.api import quantity
from vclite.lib import errors, jsoncopy

Obj = dict[str, Any]
FieldError = errors.FieldError

UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
NOT_UPDATABLE = "pod updates may not change fields other than " + ",".join(UPDATABLE_FIELDS)
MAX_INT32 = 2**31 - 1


def errors_of(new: Obj, old: Obj) -> list[FieldError]:
    """The problems of updating pod `old` to `new` (both after defaulting), in kube-apiserver's order."""
    errs = podannotations.update_errors(new, old)
    nspec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    ospec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    for key in ("containers", "initContainers"):
        found, stop = _container_updates(nspec.get(key), ospec.get(key), f"spec.{key}")
        errs += found
        if stop:
            return errs
    found, stop = _deadline(nspec.get("activeDeadlineSeconds"), ospec.get("activeDeadlineSeconds"))
    errs += found
    if stop:
        return errs
    errs += _only_added_tolerations(nspec.get("tolerations"), ospec.get("tolerations"))
    errs += _only_deleted_gates(nspec.get("schedulingGates"), ospec.get("schedulingGates"))
    munged = _munged(nspec, ospec)
    if _listed(ospec.get("schedulingGates")):
        errs += _gated_changes(munged, ospec)
    before, after = canonical_spec(ospec), canonical_spec(munged)
    if before != after:
        errs.append(FieldError("spec", f"Forbidden: {NOT_UPDATABLE}\n{diff(before, after)}"))
    return errs


def _listed(value: Any) -> list:
    return value if isinstance(value, list) else []


def _container_updates(new: Any, old: Any, path: str) -> tuple[list[FieldError], bool]:
    """ValidateContainerUpdates: as many containers as before (else stop there); images without
    surrounding whitespace (an absent image is accepted here, see the module docstring)."""
    new, old = _listed(new), _listed(old)
    if len(new) != len(old):
        return [FieldError(path, "Forbidden: pod updates may not add or remove containers")], True
    errs = []
    for i, c in enumerate(new):
        image = c.get("image") if isinstance(c, dict) else None
        if isinstance(image, str) and image.strip() != image:
            errs.append(FieldError(f"{path}[{i}].image",
                                   common.invalid(image, "must not have leading or trailing whitespace")))
    return errs, False


def _deadline(new: Any, old: Any) -> tuple[list[FieldError], bool]:
    """activeDeadlineSeconds: set from none, or lowered; never raised nor unset."""
    path = "spec.activeDeadlineSeconds"
    if not _is_int(new) and new is not None or not _is_int(old) and old is not None:
        return [], False   # (a mistyped value is the shape check's error)
    if new is not None:
        if not 0 <= new <= MAX_INT32:
            return [FieldError(path, common.invalid(new, f"must be between 0 and {MAX_INT32}, inclusive"))], True
        if old is not None and old < new:
            return [FieldError(path, common.invalid(new, "must be less than or equal to previous value"))], True
    elif old is not None:
        return [FieldError(path, common.invalid("null", "must not update from a positive integer to nil value"))], False
    return [], False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _only_added_tolerations(new: Any, old: Any) -> list[FieldError]:
    """Each toleration the pod had is still there, but for its tolerationSeconds."""
    def key(t: Any) -> Any:
        return canonical({k: v for k, v in t.items() if k != "tolerationSeconds"}) if isinstance(t, dict) else t
    now = [key(t) for t in _listed(new)]
    for t in _listed(old):
        if key(t) not in now:
            return [FieldError("spec.tolerations",
                               "Forbidden: existing toleration can not be modified except its tolerationSeconds")]
    return []


def _only_deleted_gates(new: Any, old: Any) -> list[FieldError]:
    """No scheduling gate the pod did not have before."""
    had = {g.get("name") for g in _listed(old) if isinstance(g, dict)}
    added: dict[Any, int] = {}
    for i, g in enumerate(_listed(new)):
        if isinstance(g, dict):
            added[g.get("name")] = i   # (the last of a name, as kube's map of them)
    return [FieldError(f"spec.schedulingGates[{i}].name",
                       f"Forbidden: only deletion is allowed, but found new scheduling gate '{name}'")
            for name, i in sorted(added.items(), key=lambda item: item[1]) if name not in had]


def _munged(nspec: Obj, ospec: Obj) -> Obj:
    """The new spec with what may change set back to the old values (kube's mungedPodSpec)."""
    munged = jsoncopy.deep_copy(nspec)
    for key in ("containers", "initContainers"):
        for c, before in zip(_listed(munged.get(key)), _listed(ospec.get(key))):
            if isinstance(c, dict):
                c.pop("image", None)
                if isinstance(before, dict) and "image" in before:
                    c["image"] = before["image"]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged.pop(key, None)
        if key in ospec:
            munged[key] = ospec[key]
    old_grace, new_grace = ospec.get("terminationGracePeriodSeconds"), munged.get("terminationGracePeriodSeconds")
    if _is_int(old_grace) and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


# ---- a gated pod's scheduling directives ---------------------------------------------------------
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _gated_changes(munged: Obj, ospec: Obj) -> list[FieldError]:
    """While the pod is gated: checks additions to its nodeSelector and required node affinity, then sets
    both back in `munged` so the final comparison looks at the rest only."""
    errs: list[FieldError] = []
    new_sel, old_sel = munged.get("nodeSelector"), ospec.get("nodeSelector")
    if canonical(new_sel) != canonical(old_sel):
        now = new_sel if isinstance(new_sel, dict) else {}
        if any(k not in now or now[k] != v for k, v in (old_sel if isinstance(old_sel, dict) else {}).items()):
            errs.append(FieldError("spec.nodeSelector", common.invalid(
                new_sel, "only additions to spec.nodeSelector are allowed (no mutations or deletions)")))
        munged.pop("nodeSelector", None)
        if old_sel is not None:
            munged["nodeSelector"] = old_sel
    old_aff = ospec.get("affinity") if isinstance(ospec.get("affinity"), dict) else None
    new_aff = munged.get("affinity") if isinstance(munged.get("affinity"), dict) else None
    old_node = old_aff.get("nodeAffinity") if old_aff else None
    new_node = new_aff.get("nodeAffinity") if new_aff else None
    if canonical(old_node) == canonical(new_node):
        return errs
    errs += _node_affinity_changes(new_node, old_node)
    if new_aff is None:
        if old_node is not None:
            munged["affinity"] = {"nodeAffinity": old_node}
    elif old_aff is None and not new_aff.get("podAffinity") and not new_aff.get("podAntiAffinity"):
        munged.pop("affinity", None)
    else:
        munged["affinity"] = {k: v for k, v in new_aff.items() if k != "nodeAffinity"}
        if old_node is not None:
            munged["affinity"]["nodeAffinity"] = old_node
    return errs


def _node_affinity_changes(new: Any, old: Any) -> list[FieldError]:
    """validateNodeAffinityMutation: the required terms keep their number and each keeps its expressions
    and fields, in order, adding only; anything goes where there were none."""
    old_req = old.get(_REQUIRED) if isinstance(old, dict) else None
    if not isinstance(old_req, dict):
        return []
    old_terms = _listed(old_req.get("nodeSelectorTerms"))
    new_req = new.get(_REQUIRED) if isinstance(new, dict) else None
    new_terms = _listed(new_req.get("nodeSelectorTerms")) if isinstance(new_req, dict) else []
    path = f"spec.affinity.nodeAffinity.{_REQUIRED}.nodeSelectorTerms"
    if old_terms and len(old_terms) != len(new_terms):
        return [FieldError(path, common.invalid(new_terms, "no additions/deletions to non-empty NodeSelectorTerms "
                                                           "list are allowed"))]
    return [FieldError(f"{path}[{i}]", common.invalid(new_terms[i], "only additions are allowed (no mutations or "
                                                                    "deletions)"))
            for i, before in enumerate(old_terms) if not _only_additions(new_terms[i], before)]


def _only_additions(new: Any, old: Any) -> bool:
    new, old = (t if isinstance(t, dict) else {} for t in (new, old))
    for key in ("matchExpressions", "matchFields"):
        had, now = _listed(old.get(key)), _listed(new.get(key))
        if len(had) > len(now) or any(canonical(a) != canonical(b) for a, b in zip(had, now)):
            return False
    return True


# ---- comparison as kube-apiserver's decoded, defaulted objects -------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class _Quantity:
    """A resource quantity compared by value, shown as written."""
    value: fractions.Fraction
    text: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return json.dumps(self.text)


_SPEC_DEFAULTS = {"restartPolicy": "Always", "schedulerName": "default-scheduler", "dnsPolicy": "ClusterFirst",
                  "terminationGracePeriodSeconds": 30, "enableServiceLinks": True}
_CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_MODE_DEFAULTED = ("configMap", "secret", "downwardAPI", "projected")
# Go fields that are not pointers: false (0) is the field left out
_PLAIN_BOOLS = frozenset({"hostNetwork", "hostPID", "hostIPC", "stdin", "stdinOnce", "tty", "readOnly"})
_PLAIN_INTS = frozenset({"hostPort"})
_RESOURCE_LISTS = frozenset({"limits", "requests", "overhead"})


def canonical(value: Any) -> Any:
    """A part of a PodSpec as kube-apiserver compares it: zero values and empty collections dropped,
    quantities by value. A new structure."""
    return _pruned(value, "")


def canonical_spec(spec: Obj) -> Obj:
    """A whole PodSpec as kube-apiserver compares it: `canonical`, after its defaults are filled in."""
    spec = jsoncopy.deep_copy(spec)
    _default_spec(spec)
    return _pruned(spec, "")


def _default_spec(spec: Obj) -> None:
    for key, value in _SPEC_DEFAULTS.items():
        if spec.get(key) in (None, ""):
            spec[key] = value
    account = spec.pop("serviceAccount", None)
    if not spec.get("serviceAccountName") and account:
        spec["serviceAccountName"] = account
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in _listed(spec.get(key)):
            if isinstance(c, dict):
                _default_container(c)
    for vol in _listed(spec.get("volumes")):
        for source in _MODE_DEFAULTED:
            if isinstance(vol, dict) and isinstance(vol.get(source), dict):
                vol[source].setdefault("defaultMode", 420)


def _default_container(c: Obj) -> None:
    for key, value in _CONTAINER_DEFAULTS.items():
        if c.get(key) in (None, ""):
            c[key] = value
    if c.get("imagePullPolicy") in (None, ""):
        c["imagePullPolicy"] = _pull_policy(c.get("image"))
    for port in _listed(c.get("ports")):
        if isinstance(port, dict) and port.get("protocol") in (None, ""):
            port["protocol"] = "TCP"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        p = c.get(probe)
        if isinstance(p, dict):
            for key, value in _PROBE_DEFAULTS.items():
                if p.get(key) in (None, 0):
                    p[key] = value
            if isinstance(p.get("httpGet"), dict) and p["httpGet"].get("scheme") in (None, ""):
                p["httpGet"]["scheme"] = "HTTP"
    for env in _listed(c.get("env")):
        ref = ((env.get("valueFrom") or {}) if isinstance(env, dict) else {}).get("fieldRef")
        if isinstance(ref, dict) and ref.get("apiVersion") in (None, ""):
            ref["apiVersion"] = "v1"


def _pull_policy(image: Any) -> str:
    """SetDefaults_Container: Always for an image without a tag (or `:latest`), else IfNotPresent."""
    if not isinstance(image, str) or "@" in image:
        return "IfNotPresent"
    tail = image.rsplit("/", 1)[-1]
    tag = tail.split(":", 1)[1] if ":" in tail else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _pruned(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _quantities(v) if k in _RESOURCE_LISTS else _pruned(v, k)
            if not _is_zero(k, v):
                out[k] = v
        return out
    if isinstance(value, list):
        return [_pruned(v, key) for v in value]
    return value


def _quantities(rl: Any) -> Any:
    if not isinstance(rl, dict):
        return _pruned(rl, "")
    out = {}
    for name, text in rl.items():
        try:
            out[name] = _Quantity(quantity.parse(text), str(text))
        except (ValueError, TypeError):
            out[name] = text
    return out


def _is_zero(key: str, value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    return (key in _PLAIN_BOOLS and value is False) or (key in _PLAIN_INTS and value == 0 and value is not False)


# ---- the diff shown with the refusal --------------------------------------------------------------
_UNSET = "<unset>"


def diff(before: Any, after: Any, path: str = "spec") -> str:
    """One `- path: old` / `+ path: new` pair of lines per field that differs (lists of another length
    whole), each indented by two spaces."""
    lines: list[str] = []
    _diff(before, after, path, lines)
    return "\n".join(lines)


def _diff(before: Any, after: Any, path: str, lines: list[str]) -> None:
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for k in list(before) + [k for k in after if k not in before]:
            _diff(before.get(k, _UNSET), after.get(k, _UNSET), f"{path}.{k}", lines)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after)):
            _diff(b, a, f"{path}[{i}]", lines)
        return
    lines.append(f"  - {path}: {_show(before)}")
    lines.append(f"  + {path}: {_show(after)}")


def _show(value: Any) -> str:
    if value is _UNSET:
        return _UNSET
    try:
        return json.dumps(value, ensure_ascii=False, default=lambda q: q.text, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
