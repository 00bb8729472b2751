"""PodDisruptionBudget (policy/v1) names and pure helpers shared by admission, the disruption
controller, the eviction subresource and the scheduler's `pdb` plugin.

- `scaled(value, total, round_up)`: an int-or-percent against a total, as apimachinery's
  GetScaledValueFromIntOrPercent (`"50%"` of 3 is 2 rounded up, 1 rounded down).
- `selects(pdb, labels)`: the policy/v1 rule the disruption controller and the eviction
  subresource use: an absent selector selects nothing, an empty one (`{}`) every pod of the namespace.
- `selects_strict(pdb, labels)`: the rule of Volcano's `pdb` plugin: absent or empty selects nothing.
- `pod_ready(pod)`: the pod's Ready condition is True (podutil.IsPodReady).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

Obj = dict[str, Any]

# status.conditions[type=DisruptionAllowed] and its reasons (k8s.io/api/policy/v1)
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS, INSUFFICIENT_PODS, SYNC_FAILED = "SufficientPods", "InsufficientPods", "SyncFailed"
# the cause type of an eviction refused for a budget
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
# spec.unhealthyPodEvictionPolicy
IF_HEALTHY_BUDGET, ALWAYS_ALLOW = "IfHealthyBudget", "AlwaysAllow"
UNHEALTHY_POLICIES = (IF_HEALTHY_BUDGET, ALWAYS_ALLOW)
# how long an eviction's entry in status.disruptedPods keeps its pod out of currentHealthy
DELETION_TIMEOUT_SECONDS = 120
MAX_DISRUPTED_PODS = 2000

_PERCENT = re.compile(r"^[0-9]+%$")


def is_percent(value: Any) -> bool:
    return isinstance(value, str) and bool(_PERCENT.match(value))


def scaled(value: int | str, total: int, round_up: bool) -> int:
    """An integer as it is; a percentage of `total`, rounded up or down (the value was validated)."""
    if isinstance(value, int):
        return value
    percent = int(value[:-1])
    exact = percent * total
    return -(-exact // 100) if round_up else exact // 100


def _requirement_holds(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or ()
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """matchLabels and matchExpressions ANDed; no requirement at all selects everything."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_requirement_holds(e, labels) for e in selector.get("matchExpressions") or ())


def _selector(pdb: Obj) -> Any:
    spec = pdb.get("spec")
    return spec.get("selector") if isinstance(spec, dict) else None


def selects(pdb: Obj, labels: Mapping[str, str]) -> bool:
    """policy/v1: a nil selector selects nothing, `{}` every pod (of the budget's namespace)."""
    selector = _selector(pdb)
    return isinstance(selector, dict) and selector_matches(selector, labels)


def selects_strict(pdb: Obj, labels: Mapping[str, str]) -> bool:
    """Volcano's `pdb` plugin: a nil or empty selector selects nothing."""
    selector = _selector(pdb)
    if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    return selector_matches(selector, labels)


def pod_ready(pod: Obj) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def int_or_percent_text(value: Any) -> str:
    """How kubectl prints an IntOrString (`2`, `50%`), or N/A when absent."""
    return "N/A" if value is None else str(value)

