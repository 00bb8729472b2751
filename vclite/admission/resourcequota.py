"""ResourceQuota (v1): its validation, and kube-apiserver's ResourceQuota admission plugin for creates.

`validate`: `spec.hard` maps quota resource names (api/quota.py: the standard ones, hugepages, or a
qualified name such as `count/pods` or `requests.nvidia.com/gpu`) to quantities that are not negative
(whole for object counts and extended resources), as kube's ValidateResourceQuota words it; scopes
(`spec.scopes`, `spec.scopeSelector`: Terminating, NotTerminating, BestEffort, NotBestEffort,
PriorityClass, CrossNamespacePodAffinity) known, valid for the names in `hard`, not conflicting.
`validate_status` (ValidateResourceQuotaStatusUpdate): `status.hard` and `status.used` hold the same
kind of names and quantities as `spec.hard` (the scheduler's `resourcequota` plugin reads them).

`refusal(kind, obj, view)`: the quota plugin's verdict on creating `obj`: for each quota of its
namespace whose scopes match it (api/quota.py `pod_matches`; a scoped quota counts pods only) and that
lists a name the object charges, the object's usage (api/quota.py; a claim's storage, per class too, after
the DefaultStorageClass plugin named its class) added to what the
namespace uses now must stay within `spec.hard`; the first quota (by name) it would exceed refuses it
with kube's message. A pod must also name its own cpu/memory requests or limits when a quota limits
them ("failed quota: NAME: must specify ..."), checked for every quota first. What the namespace uses
is counted from the stored objects at that moment (kube reads the quota's `status.used`, which its
admission and controller keep), so it is never stale and a new quota needs no status first.
Pure over the View.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import kinds, meta, quantity
from vclite.api import quota as quota_mod
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
Fraction = quantity.Fraction


def mutate(op: base.Operation, obj: Obj) -> None:
    """ResourceQuotas get no defaults."""


def hard_errors(hard: Any, path: str) -> list[FieldError]:
    """Problems of a ResourceList of quota names and quantities (`spec.hard`, `status.used`)."""
    if hard is None:
        return []
    if not isinstance(hard, dict):
        return [FieldError(path, common.type_error(hard, "object"))]
    errs: list[FieldError] = []
    for name, value in hard.items():
        where = f"{path}[{name}]"
        name = str(name)
        why = quota_mod.name_problem(name)
        if why is None and "/" in name:
            why = next(iter(common.qualified_name(name)), None)
        if why is not None:
            errs.append(FieldError(where, common.invalid(name, why)))
            continue
        q = common.nonnegative_quantity(value, where, errs)
        if q is not None and quota_mod.is_integer(name) and q.denominator != 1:
            errs.append(FieldError(where, common.invalid(value, "must be an integer")))
    return errs


def validate_status(status: Any) -> list[FieldError]:
    """Problems of a quota's `status` (a status write, or a dry-run state's quota as written)."""
    if not isinstance(status, dict):
        return []   # (admit refuses a status that is no object)
    return hard_errors(status.get("hard"), "status.hard") + hard_errors(status.get("used"), "status.used")


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs = hard_errors(spec.get("hard"), "spec.hard")
    hard = [str(n) for n in spec.get("hard") or {}] if isinstance(spec.get("hard"), dict) else []
    return errs + _scope_errors(spec, hard) + _selector_errors(spec, hard)


def _scope_errors(spec: Obj, hard: list[str]) -> list[FieldError]:
    """kube's validateResourceQuotaScopes: known scopes, valid for every standard name in `hard` (the
    name said, where kube says only "unsupported scope applied to resource"), no conflicting pair; each
    problem shows the whole list, as kube does."""
    scopes = spec.get("scopes")
    if scopes is None:
        return []
    if not isinstance(scopes, list) or not all(isinstance(x, str) for x in scopes):
        return [FieldError("spec.scopes", common.type_error(scopes, "array of strings"))]
    errs: list[FieldError] = []
    for scope in scopes:
        if scope not in quota_mod.SCOPES:
            errs.append(FieldError("spec.scopes", common.invalid(scopes, "unsupported scope")))
        errs += [FieldError("spec.scopes", common.invalid(scopes, f"unsupported scope applied to resource {name}"))
                 for name in sorted(hard) if not quota_mod.scope_allows(scope, name)]
    errs += [FieldError("spec.scopes", common.invalid(scopes, "conflicting scopes"))
             for pair in quota_mod.CONFLICTING if set(pair) <= set(scopes)]
    return errs


def _selector_errors(spec: Obj, hard: list[str]) -> list[FieldError]:
    """kube's validateScopedResourceSelectorRequirement, with each expression's index in the path."""
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    if not isinstance(selector, dict) or not isinstance(selector.get("matchExpressions") or [], list):
        return [FieldError("spec.scopeSelector", common.type_error(selector, "object with matchExpressions"))]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, req in enumerate(selector.get("matchExpressions") or []):
        path = f"spec.scopeSelector.matchExpressions[{i}]"
        if not isinstance(req, dict):
            errs.append(FieldError(path, common.type_error(req, "object")))
            continue
        scope, op, values = req.get("scopeName"), req.get("operator"), req.get("values") or []
        if scope not in quota_mod.SCOPES:
            errs.append(FieldError(f"{path}.scopeName", common.invalid(scope, "unsupported scope")))
        errs += [FieldError(path, common.invalid(scope, f"unsupported scope applied to resource {name}"))
                 for name in sorted(hard) if not quota_mod.scope_allows(str(scope), name)]
        if scope in quota_mod.EXISTS_ONLY and op != "Exists":
            errs.append(FieldError(f"{path}.operator", common.invalid(
                op, "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort "
                    "or ResourceQuotaScopeCrossNamespacePodAffinity")))
        if op in ("In", "NotIn") and not values:
            errs.append(FieldError(f"{path}.values", f"{common.REQUIRED}: must be at least one value when "
                                                     "`operator` is 'In' or 'NotIn' for scope selector"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(FieldError(f"{path}.values", common.invalid(
                values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector")))
        elif op not in quota_mod.OPERATORS:
            errs.append(FieldError(f"{path}.operator", common.invalid(op, "not a valid selector operator")))
        names.add(str(scope))
    errs += [FieldError("spec.scopeSelector.matchExpressions", common.invalid(
        " and ".join(pair), "conflicting scopes")) for pair in quota_mod.CONFLICTING if set(pair) <= names]
    return errs


def _usage_of(kind: kinds.Kind, obj: Obj) -> dict[str, Fraction]:
    charged = {name: Fraction(1) for name in quota_mod.count_names(kind)}
    if kind.kind == kinds.POD.kind:
        charged.update(quota_mod.pod_usage(obj))
    elif kind.kind == kinds.SERVICE.kind:
        charged.update(quota_mod.service_usage(obj))
    elif kind.kind == kinds.PERSISTENTVOLUMECLAIM.kind:
        charged.update(quota_mod.claim_usage(obj))
    return charged


def refusal(kind: kinds.Kind, obj: Obj, view: base.View) -> str | None:
    """Why creating `obj` would break a quota of its namespace (kube's message), or None."""
    namespace = meta.namespace(obj)
    if not kind.namespaced or not namespace:
        return None
    quotas = sorted(view.list(kinds.RESOURCEQUOTA, namespace), key=meta.name)
    if not quotas:
        return None
    try:
        charged = _usage_of(kind, obj)
    except ValueError:
        return None   # (the pod's own validation names a bad quantity)
    is_pod = kind.kind == kinds.POD.kind
    matching = [q for q in quotas if (quota_mod.pod_matches(q.get("spec") or {}, obj) if is_pod
                                      else not quota_mod.is_scoped(q.get("spec") or {}))]
    hards = [(q, quota_mod.parse_list((q.get("spec") or {}).get("hard"))) for q in matching]
    if is_pod:   # (every quota's constraints first, as kube checks them)
        for q, hard in hards:
            why = quota_mod.must_specify(obj, hard)
            if why:
                return f"failed quota: {meta.name(q)}: {why}"
    touched = [(q, hard) for q, hard in hards if set(hard) & set(charged)]
    if not touched:
        return None
    names = {n for _, hard in touched for n in hard}
    pods = view.list(kinds.POD, namespace) if quota_mod.needs_pods(names) else []
    counts = quota_mod.object_counts(names, lambda k: view.list(k, namespace))
    for q, hard in touched:
        spec = q.get("spec") or {}
        if quota_mod.is_scoped(spec):   # (only the pods its scopes match; no other kind)
            used = quota_mod.usage(hard, [p for p in pods if quota_mod.pod_matches(spec, p)], {})
        else:
            used = quota_mod.usage(hard, pods, counts)
        why = quota_mod.exceeded(meta.name(q), hard, used, charged)
        if why:
            return why
    return None


def check_create(kind: kinds.Kind, obj: Obj, view: base.View) -> None:
    """Raise Forbidden as kube-apiserver does (`pods "p" is forbidden: exceeded quota: ...`)."""
    why = refusal(kind, obj, view)
    if why:
        raise errors.Forbidden(f'{kind.resource} "{meta.name(obj)}" is forbidden: {why}')   # (plural.group)
