"""Admission rules for hierarchical queues (pkg/webhooks/admission/queues/validate, Volcano's messages):
- depth: a queue at most `MAX_DEPTH` levels below `root` (the webhook's --max-queue-depth, 5 unless
  `vcctl server --max-queue-depth` says otherwise);
- a queue without children that already has pods allocated cannot become a parent;
- the root queue's capability, deserved and guarantee cannot change (--enable-root-queue-protection,
  on by default);
- resources, when a non-root queue is created or its parent or resources change: its capability
  not above the nearest ancestor's that sets the resource; its siblings' and its own deserved and
  guarantee summed not above the parent's (LessPartly: where the parent sets less on some dimension);
  for a parent, its capability not below the largest capability found in any child's subtree, and
  its children's deserved and guarantee sums not above its own.
Resources compare as Volcano's api.Resource: cpu in millicores, memory in bytes, other scalars in
thousandths (pods in units); a resource a parent does not list counts as 0 in the sums.

Must not: write anything (pure functions over a View).
"""
from __future__ import annotations

from typing import Any, Callable

from vclite.admission import base
from vclite.api import kinds, meta, quantity, scheduling

Obj = dict[str, Any]
MAX_DEPTH = base.MAX_QUEUE_DEPTH
MIN = 0.1   # Volcano's minResource


def _spec(q: Obj | None) -> Obj:
    s = (q or {}).get("spec")
    return s if isinstance(s, dict) else {}


def resource(rl: Any) -> dict[str, float]:
    """api.NewResource of a resource list: name -> value in Volcano's units (bad entries left out)."""
    out: dict[str, float] = {"cpu": 0.0, "memory": 0.0}
    for name, value in (rl.items() if isinstance(rl, dict) else ()):
        name = str(name)
        if name.startswith("count/"):
            continue
        try:
            q = quantity.parse(value)
        except ValueError:
            continue
        scale = 1 if name in ("memory", "pods") else 1000
        out[name] = out.get(name, 0.0) + float(-((-q.numerator * scale) // q.denominator))
    return out


def _guarantee(q: Obj | None) -> dict[str, float]:
    g = _spec(q).get("guarantee")
    return resource(g.get("resource") if isinstance(g, dict) else None)


def _show(r: dict[str, float]) -> str:
    """Resource.String()."""
    rest = sorted(k for k in r if k not in ("cpu", "memory"))
    return ", ".join(f"{k} {r.get(k, 0.0):0.2f}" for k in ["cpu", "memory", *rest])


def _with_type(name: str, value: float) -> str:
    """formatResourceWithType."""
    if name == "cpu":
        return quantity.format(quantity.Fraction(int(value)) / 1000, "cpu")
    if name == "memory":
        return quantity.format(quantity.Fraction(int(value)), "memory")
    return f"{value:0.2f}"


def _less_partly(r: dict[str, float], rr: dict[str, float]) -> bool:
    """r.LessPartly(rr, Zero): some dimension of r below rr's (a name r lacks counts as below)."""
    if r["cpu"] < rr["cpu"] or r["memory"] < rr["memory"]:
        return True
    if any(k not in r for k in rr):
        return True
    return any(v < rr.get(k, 0.0) for k, v in r.items())


def _add(total: dict[str, float], r: dict[str, float]) -> None:
    for k, v in r.items():
        total[k] = total.get(k, 0.0) + v


def _names(r: dict[str, float]) -> list[str]:
    return [k for k, v in r.items() if v >= MIN]


def _children(view: Any, name: str) -> list[Obj]:
    return [q for q in view.list(kinds.QUEUE) if _spec(q).get("parent") == name]


def check_cycle(name: str, parent: Any, view: Any) -> str | None:
    """vclite's own rule (Volcano's webhook lets an update close a loop, e.g. `a` under its own child
    `b`): the new parent must not be the queue itself nor lie below it. The loop is named."""
    chain, seen = [name], {name}
    while isinstance(parent, str) and parent not in ("", scheduling.ROOT_QUEUE) and parent not in seen:
        chain.append(parent)
        seen.add(parent)
        p = view.get(kinds.QUEUE, "", parent)
        parent = _spec(p).get("parent") if p is not None else None
    if parent != name:
        return None
    return (f"queue {name} cannot use {chain[1]} as parent: {chain[1]} is under {name}, "
            f"so the parents would loop ({' -> '.join([*chain, name])})")


def check_depth(name: str, parent: Any, view: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """`max_depth`: the webhook's `--max-queue-depth` (a queue right under `root` is at depth 1)."""
    depth = 1
    seen = set()
    while isinstance(parent, str) and parent not in ("", scheduling.ROOT_QUEUE) and parent not in seen:
        seen.add(parent)
        depth += 1
        if depth > max_depth:
            return f"queue {name} exceeds the maximum allowed depth of {max_depth}"
        p = view.get(kinds.QUEUE, "", parent)
        if p is None:
            return None   # (the parent check says it)
        parent = _spec(p).get("parent")
    return None


def check_parent_without_children_has_no_pods(name: str, parent: str, view: Any) -> str | None:
    p = view.get(kinds.QUEUE, "", parent)
    if p is None or _children(view, parent):
        return None
    pods = allocated_pods(p)
    if pods:
        return f"queue {parent} cannot be the parent queue of queue {name} because it has allocated Pods: {pods}"
    return None


def allocated_pods(queue: Obj) -> int:
    """The pods the queue's `status.allocated` counts, as Quantity.Value() reads them: a fraction rounded away
    from zero (`500m` -> 1, so a non-zero quantity never reads as none, as the webhook's `!IsZero()`); 0 when
    absent or unreadable."""
    allocated = ((queue.get("status") or {}).get("allocated") or {}).get("pods")
    try:
        q = quantity.parse(allocated) if allocated is not None else quantity.Fraction(0)
    except (ValueError, TypeError):
        return 0
    return quantity.to_int(q) if q >= 0 else -quantity.to_int(-q)


def check_root_update(new: Obj, old: Obj) -> str | None:
    for key in ("capability", "deserved"):
        if resource(_spec(new).get(key)) != resource(_spec(old).get(key)):
            break
    else:
        if _guarantee(new) == _guarantee(old):
            return None
    return "root queue's resource attributes (capability, deserved, guarantee) cannot be modified"


def resources_changed(new: Obj, old: Obj | None) -> bool:
    """needsValidateHierarchicalQueue (for a non-root queue)."""
    if old is None:
        return True
    ns, os_ = _spec(new), _spec(old)
    return ns.get("parent") != os_.get("parent") or any(
        resource(ns.get(k)) != resource(os_.get(k)) for k in ("capability", "deserved")) or \
        _guarantee(new) != _guarantee(old)


def check_resources(new: Obj, view: Any) -> str | None:
    """validateHierarchicalQueueResources."""
    name, spec = meta.name(new), _spec(new)
    parent_name = spec.get("parent")
    if isinstance(parent_name, str) and parent_name not in ("", scheduling.ROOT_QUEUE):
        parent = view.get(kinds.QUEUE, "", parent_name)
        if parent is None:
            return f"parent queue {parent_name} not found"
        why = _child_against_ancestors(new, view) or _siblings(new, parent, view)
        if why:
            return why
    children = [c for c in _children(view, name) if meta.name(c) != name]
    return _children_constraints(new, children, view) if children else None


def _child_against_ancestors(child: Obj, view: Any) -> str | None:
    cap = _spec(child).get("capability")
    if cap is None:
        return None
    mine = resource(cap)
    for r in _names(mine):
        limit = _nearest_ancestor_capability(child, r, view)
        if limit is not None and mine[r] > limit:
            return (f"queue {meta.name(child)} capability[{r}]={_with_type(r, mine[r])} exceeds its ancestor's "
                    f"capability={_with_type(r, limit)}")
    return None


def _nearest_ancestor_capability(q: Obj, r: str, view: Any) -> float | None:
    parent, seen = _spec(q).get("parent"), set()
    while isinstance(parent, str) and parent not in ("", scheduling.ROOT_QUEUE) and parent not in seen:
        seen.add(parent)
        p = view.get(kinds.QUEUE, "", parent)
        if p is None:
            return None
        cap = _spec(p).get("capability")
        if cap is not None and resource(cap).get(r, 0.0) > 0:
            return resource(cap)[r]
        parent = _spec(p).get("parent")
    return None


def _sum_check(parent: Obj, members: list[Obj], prefix: str) -> Callable[[], str | None]:
    def check() -> str | None:
        pg, pd = _guarantee(parent), resource(_spec(parent).get("deserved"))
        tg: dict[str, float] = {"cpu": 0.0, "memory": 0.0}
        td: dict[str, float] = {"cpu": 0.0, "memory": 0.0}
        for m in members:
            _add(tg, _guarantee(m))
            if _less_partly(pg, tg):
                return (f"{prefix} validation failed: sum of children's guarantee ({_show(tg)}) exceeds "
                        f"parent's guarantee limit ({_show(pg)})")
            _add(td, resource(_spec(m).get("deserved")))
            if _less_partly(pd, td):
                return (f"{prefix} validation failed: sum of children's deserved ({_show(td)}) exceeds "
                        f"parent's deserved limit ({_show(pd)})")
        return None
    return check


def _siblings(queue: Obj, parent: Obj, view: Any) -> str | None:
    others = [s for s in _children(view, meta.name(parent)) if meta.name(s) != meta.name(queue)]
    return _sum_check(parent, others + [queue], f"parent queue {meta.name(parent)}")()


def _subtree_max_capability(q: Obj, r: str, view: Any, depth: int = 0) -> float:
    cap = _spec(q).get("capability")
    if cap is not None and resource(cap).get(r, 0.0) > 0:
        return resource(cap)[r]
    if depth > 64:
        return 0.0
    return max((_subtree_max_capability(c, r, view, depth + 1) for c in _children(view, meta.name(q))), default=0.0)


def _children_constraints(parent: Obj, children: list[Obj], view: Any) -> str | None:
    cap = _spec(parent).get("capability")
    if cap is not None:
        mine = resource(cap)
        for r in _names(mine):
            most = max((_subtree_max_capability(c, r, view) for c in children), default=0.0)
            if mine[r] < most:
                return (f"queue {meta.name(parent)} capability[{r}]={_with_type(r, mine[r])} is smaller than its "
                        f"descendants' max capability={_with_type(r, most)}")
    return _sum_check(parent, children, f"queue {meta.name(parent)}")()
