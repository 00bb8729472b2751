"""The extension points, declared once: point -> (combination rule, enable flag), and one dispatcher.

Volcano hand-writes a registrar and a dispatch loop per extension point (session_plugins.go).
Here every point is a row of TABLE and every combination is one function of RULES, so adding a
point is one line and every loop honours tiers and enable flags the same way:

- FIRST_NONZERO  orders: the first plugin returning non-zero decides (negative = left first); 0.
- FIRST_FAILURE  all must pass: the first non-None result (a failure) is returned; None.
- ALL_PASS       vectorised filters: every plugin's list of failures, concatenated; [].
- AND / OR       all true (default True) / any true (default False).
- VOTE_BY_TIER   Vote enum: any Reject -> False; a tier with a Permit -> True; all abstain ->
                 next tier; default True.
- AND_BY_TIER    the first tier that has any function decides with AND; default False.
- SUM            weighted sum of scores (scalars or arrays); 0.
- INTERSECT_BY_TIER  victims: None = abstain; per tier intersect the lists of non-abstaining
                 plugins; a plugin returning an empty list leaves its tier undecided (Volcano);
                 the first decided tier's list (possibly empty after intersecting) is returned.
- UNION_BY_TIER  the first tier whose plugins return any items: their union.
- CHAIN          filters: each function keeps what it allows of what the previous one kept; the
                 items as given when none is registered.
- FIRST_RESULT   the first non-None result; None.
- CALL_ALL       call every function (event handlers, accounting); None.

A function is registered only if its plugin's enable flag for the point is on (points without a
flag are always on). `caller(point)` gives a dispatcher specialised for the point's rule (a flat
loop where tiers do not matter), kept current by later registrations: the hot loops use it.

A NodeOrder function may be registered with `key=`: `key(task)` names everything about the task
its scores depend on (hashable; None: this task is not cached), and the function promises to be
row-local — a node's score depends only on that key and on the node's own state (its rows of the
NodeState arrays and its object), never on which other rows are scored (no normalising across
candidates), and it may be asked about any node, feasible or not. The session then keeps the
scores for all nodes per key and recomputes only the nodes changed since (framework/fitcache.py);
the result is the same as calling the function every time. It may also be registered with `row=`:
`row(key)` gives a function of one node row returning, as a Python float, exactly what the function gives
that node for a task of that key (the same float steps, to the bit), or None when it has no such form for
this key: the session then recomputes the few changed nodes without building arrays.

A Predicate function may be registered with `among=True`: it then takes a third argument, the mask of
nodes still in play — those the caller's own checks (allocate's resource fit) and every earlier
Predicate function left — and is asked about those only (Volcano's PredicateFn stops at a node's first
failing plugin, so a costly filter such as an HTTP extender is not asked about nodes already refused);
the session's dispatcher (fit.predicate_caller) computes the mask only when such a function is registered.

A Preemptable or Reclaimable function may be registered with `key=` too: `key(evictor)` names
everything about the evictor its verdict depends on besides the candidates, the session's state
and the identity of the evictor's job (which preempt adds itself when a candidate belongs to that
job). Preempt and reclaim then remember, until any node changes, that a node was hopeless for an
evictor of the same keys and request (actions/victims.py); a function without a key disables that.
Must not: know any plugin or action.
"""
from __future__ import annotations

import dataclasses
import enum
import types
from typing import Any, Callable, Mapping


class Rule(enum.Enum):
    FIRST_NONZERO = "first-nonzero"
    FIRST_FAILURE = "first-failure"
    ALL_PASS = "all-pass"
    AND = "and"
    OR = "or"
    VOTE_BY_TIER = "vote-by-tier"
    AND_BY_TIER = "and-by-tier"
    SUM = "weighted-sum"
    INTERSECT_BY_TIER = "intersect-by-tier"
    UNION_BY_TIER = "union-by-tier"
    CHAIN = "chain"
    FIRST_RESULT = "first-result"
    CALL_ALL = "call-all"


class Vote(enum.IntEnum):
    REJECT = -1
    ABSTAIN = 0
    PERMIT = 1


class Point(enum.StrEnum):
    JOB_ORDER = "jobOrder"
    TASK_ORDER = "taskOrder"
    QUEUE_ORDER = "queueOrder"
    VICTIM_QUEUE_ORDER = "victimQueueOrder"
    CLUSTER_ORDER = "clusterOrder"
    JOB_VALID = "jobValid"
    PRE_PREDICATE = "prePredicate"
    PREDICATE = "predicate"
    NODE_ORDER = "nodeOrder"
    BEST_NODE = "bestNode"
    JOB_READY = "jobReady"
    JOB_PIPELINED = "jobPipelined"
    JOB_STARVING = "jobStarving"
    JOB_ENQUEUEABLE = "jobEnqueueable"
    JOB_ENQUEUED = "jobEnqueued"
    OVERUSED = "overused"
    ALLOCATABLE = "allocatable"
    PREEMPTIVE = "preemptive"
    PREEMPTABLE = "preemptable"
    RECLAIMABLE = "reclaimable"
    UNIFIED_EVICTABLE = "unifiedEvictable"
    VICTIM_TASKS = "victimTasks"
    VICTIM_FILTER = "victimFilter"
    TARGET_JOB = "targetJob"
    RESERVED_NODES = "reservedNodes"
    ALLOCATE_EVENT = "allocateEvent"
    DEALLOCATE_EVENT = "deallocateEvent"
    HYPERNODE_ORDER = "hyperNodeOrder"


@dataclasses.dataclass(frozen=True)
class Spec:
    rule: Rule
    flag: str | None   # Volcano's enable flag (spelling included); None = always on
    signature: str     # what registered functions take and return


TABLE: Mapping[Point, Spec] = types.MappingProxyType({
    Point.JOB_ORDER: Spec(Rule.FIRST_NONZERO, "enableJobOrder", "(job, job) -> int"),
    Point.TASK_ORDER: Spec(Rule.FIRST_NONZERO, "enableTaskOrder", "(task, task) -> int"),
    Point.QUEUE_ORDER: Spec(Rule.FIRST_NONZERO, "enableQueueOrder", "(queue, queue) -> int"),
    # Which of two other queues gives back first to a preemptor's queue (Volcano registers it without
    # an enable flag; only hierarchical capacity does). 0 everywhere: the reverse of QueueOrder.
    Point.VICTIM_QUEUE_ORDER: Spec(Rule.FIRST_NONZERO, None, "(queue, queue, preemptor's queue) -> int"),
    Point.CLUSTER_ORDER: Spec(Rule.FIRST_NONZERO, "enabledClusterOrder", "(cluster, cluster) -> int"),
    Point.JOB_VALID: Spec(Rule.FIRST_FAILURE, None, "(job) -> ValidateResult | None"),
    Point.PRE_PREDICATE: Spec(Rule.FIRST_FAILURE, "enablePredicate", "(task) -> str reason | None"),
    Point.PREDICATE: Spec(Rule.ALL_PASS, "enablePredicate", "(task, nodes) -> list[fit.Failure]"),
    Point.NODE_ORDER: Spec(Rule.SUM, "enableNodeOrder", "(task, node rows) -> scores array"),
    Point.BEST_NODE: Spec(Rule.FIRST_RESULT, "enableBestNode", "(task, node rows, scores) -> row | None"),
    Point.JOB_READY: Spec(Rule.AND, "enableJobReady", "(job) -> bool"),
    Point.JOB_PIPELINED: Spec(Rule.VOTE_BY_TIER, "enableJobPipelined", "(job) -> Vote"),
    Point.JOB_STARVING: Spec(Rule.AND_BY_TIER, "enableJobStarving", "(job) -> bool"),
    Point.JOB_ENQUEUEABLE: Spec(Rule.VOTE_BY_TIER, "enableJobEnqueued", "(job) -> Vote"),
    Point.JOB_ENQUEUED: Spec(Rule.CALL_ALL, "enableJobEnqueued", "(job) -> None"),
    Point.OVERUSED: Spec(Rule.OR, "enabledOverused", "(queue) -> bool"),
    Point.ALLOCATABLE: Spec(Rule.AND, "enabledAllocatable", "(queue, task) -> bool"),
    Point.PREEMPTIVE: Spec(Rule.AND, "enablePreemptive", "(queue, task) -> bool"),
    Point.PREEMPTABLE: Spec(Rule.INTERSECT_BY_TIER, "enablePreemptable", "(preemptor, candidates) -> list | None"),
    Point.RECLAIMABLE: Spec(Rule.INTERSECT_BY_TIER, "enableReclaimable", "(reclaimer, candidates) -> list | None"),
    # gangpreempt / gangreclaim (Volcano registers it without an enable flag: `enablePreemptable: false`
    # does not turn it off): the candidates of a whole domain, in bundle order, at once.
    Point.UNIFIED_EVICTABLE: Spec(Rule.INTERSECT_BY_TIER, None, "(eviction.Context, candidates) -> list | None"),
    Point.VICTIM_TASKS: Spec(Rule.UNION_BY_TIER, "enabledVictim", "(tasks) -> list"),
    # What may not be evicted of the victims VictimTasks chose (vclite's: Volcano's pdb registers its
    # filter as a VictimTasks function, whose union then evicts every pod no budget protects)
    Point.VICTIM_FILTER: Spec(Rule.CHAIN, "enabledVictim", "(tasks) -> list"),
    Point.TARGET_JOB: Spec(Rule.FIRST_RESULT, "enableTargetJob", "(jobs) -> job | None"),
    Point.RESERVED_NODES: Spec(Rule.CALL_ALL, "enableReservedNodes", "() -> None"),
    # (a statement.Refused: why the allocation or pipeline must be undone; the statement calls them itself)
    Point.ALLOCATE_EVENT: Spec(Rule.CALL_ALL, None, "(task) -> None | statement.Refused"),
    Point.DEALLOCATE_EVENT: Spec(Rule.CALL_ALL, None, "(task) -> None"),
    Point.HYPERNODE_ORDER: Spec(Rule.SUM, "enabledHyperNodeOrder", "(job, hypernode names) -> scores array"),
})

Fn = Callable[..., Any]
KeyFn = Callable[[Any], Any]
Entry = tuple[Fn, float, Any]   # (fn, weight, key)
Tiers = list[list[Entry]]


def _first_nonzero(tiers: Tiers, args: tuple) -> Any:
    for tier in tiers:
        for fn, _, _ in tier:
            v = fn(*args)
            if v:
                return v
    return 0


def _first_non_none(tiers: Tiers, args: tuple) -> Any:
    """FIRST_FAILURE and FIRST_RESULT: the first non-None result (a failure, a chosen node...)."""
    for tier in tiers:
        for fn, _, _ in tier:
            v = fn(*args)
            if v is not None:
                return v
    return None


def _all_pass(tiers: Tiers, args: tuple) -> list:
    """(A function registered with among=True is given None: every node; the session's own dispatcher,
    fit.predicate_caller, gives it the nodes in play.)"""
    out: list = []
    for tier in tiers:
        for fn, _, key in tier:
            out.extend(fn(*args, None) if key is AMONG else fn(*args))
    return out


def _and(tiers: Tiers, args: tuple) -> bool:
    return all(fn(*args) for tier in tiers for fn, _, _ in tier)


def _or(tiers: Tiers, args: tuple) -> bool:
    return any(fn(*args) for tier in tiers for fn, _, _ in tier)


def _vote_by_tier(tiers: Tiers, args: tuple) -> bool:
    for tier in tiers:
        permitted = False
        for fn, _, _ in tier:
            v = fn(*args)
            if v < 0:
                return False
            if v > 0:
                permitted = True
        if permitted:
            return True
    return True


def _and_by_tier(tiers: Tiers, args: tuple) -> bool:
    for tier in tiers:
        if tier:
            return all(fn(*args) for fn, _, _ in tier)
    return False


def _sum(tiers: Tiers, args: tuple) -> Any:
    total: Any = 0
    for tier in tiers:
        for fn, weight, _ in tier:
            total = total + weight * fn(*args)
    return total


def _intersect_by_tier(tiers: Tiers, args: tuple) -> list | None:
    """Preemptable/Reclaimable, as Volcano's loop: within a tier, the victims every non-abstaining
    plugin offers; a plugin offering none ends the tier undecided, and the first tier that ends with
    victims decides. Volcano keeps the list in a Go slice that an empty intersection leaves nil, and
    a nil list is started again from the next plugin's offer: so do we, so the dry run answers what
    Volcano would do (an empty intersection drops the earlier plugins' offers; the last word of a
    tier can be a plugin that would not have intersected)."""
    for tier in tiers:
        victims: list | None = None
        for fn, _, _ in tier:
            candidates = fn(*args)
            if candidates is None:       # abstain
                continue
            if not candidates:           # the tier has no victims; the next tier is asked
                victims = None
                break
            if victims is None:
                victims = list(candidates)
            else:
                keep = {id(c) for c in candidates}
                victims = [v for v in victims if id(v) in keep] or None   # (Go: nil)
        if victims is not None:
            return victims
    return None


def _union_by_tier(tiers: Tiers, args: tuple) -> list:
    for tier in tiers:
        out: list = []
        seen: set[int] = set()
        for fn, _, _ in tier:
            for item in fn(*args) or ():
                if id(item) not in seen:
                    seen.add(id(item))
                    out.append(item)
        if out:
            return out
    return []


def _chain(tiers: Tiers, args: tuple) -> list:
    items = args[0]
    for tier in tiers:
        for fn, _, _ in tier:
            items = fn(items)
    return items


def _call_all(tiers: Tiers, args: tuple) -> None:
    for tier in tiers:
        for fn, _, _ in tier:
            fn(*args)


RULES: Mapping[Rule, Callable[[Tiers, tuple], Any]] = types.MappingProxyType({
    Rule.FIRST_NONZERO: _first_nonzero, Rule.FIRST_FAILURE: _first_non_none, Rule.ALL_PASS: _all_pass,
    Rule.AND: _and, Rule.OR: _or, Rule.VOTE_BY_TIER: _vote_by_tier, Rule.AND_BY_TIER: _and_by_tier,
    Rule.SUM: _sum, Rule.INTERSECT_BY_TIER: _intersect_by_tier, Rule.UNION_BY_TIER: _union_by_tier,
    Rule.CHAIN: _chain,
    Rule.FIRST_RESULT: _first_non_none,
    Rule.CALL_ALL: _call_all,
})


KEYED_POINTS = (Point.NODE_ORDER, Point.PREEMPTABLE, Point.RECLAIMABLE)
AMONG = "among"   # the key of a Predicate entry registered with among=True (it takes the nodes in play)
_FLAGS = {point: spec.flag for point, spec in TABLE.items()}   # (a plain dict: read at every registration)


class Hooks:
    """The functions registered for one session, per point, in tier order (configuration order)."""

    def __init__(self, n_tiers: int):
        self._n_tiers = n_tiers
        self._flat: dict[Point, list[Entry]] = {}   # tier order; the same list object stays current
        self._meta: dict[Point, list[tuple[int, str]]] = {}   # (tier, plugin) of each entry of _flat
        self._tiers: dict[Point, Tiers] = {}   # per tier, built when a tier rule first needs it
        self._callers: dict[Point, Callable[..., Any]] = {}
        self._row_forms: dict[int, tuple[Fn, Callable[[Any], Any]]] = {}   # id(fn) -> (fn, row) (fn kept alive)

    def register(self, point: Point, tier: int, fn: Fn, weight: float = 1.0, plugin: str = "",
                 key: KeyFn | None = None, row: Callable[[Any], Any] | None = None) -> None:
        entry = (fn, weight, key)
        if row is not None:
            self._row_forms[id(fn)] = (fn, row)
        flat = self._flat.get(point)
        if flat is None:
            flat = self._flat[point] = []
        meta = self._meta.setdefault(point, [])
        if not meta or meta[-1][0] <= tier:   # (sessions register tier by tier)
            flat.append(entry)
            meta.append((tier, plugin))
        else:
            at = next(i for i, (t, _) in enumerate(meta) if t > tier)
            flat.insert(at, entry)
            meta.insert(at, (tier, plugin))
        tiers = self._tiers.get(point)
        if tiers is not None:
            tiers[tier].append(entry)

    def _tiers_of(self, point: Point) -> Tiers:
        tiers = self._tiers.get(point)
        if tiers is None:
            tiers = self._tiers[point] = [[] for _ in range(self._n_tiers)]
            for (t, _), entry in zip(self._meta.get(point, ()), self._flat.get(point, ())):
                tiers[t].append(entry)
        return tiers

    def registered(self, point: Point) -> list[str]:
        """Names of the plugins that registered `point` (in order)."""
        return [plugin for _, plugin in self._meta.get(point, ())]

    def row_form(self, fn: Fn) -> Callable[[Any], Any] | None:
        """The `row=` a keyed NodeOrder function was registered with (see the module docstring), or None."""
        hit = self._row_forms.get(id(fn))
        return hit[1] if hit is not None and hit[0] is fn else None

    def flat(self, point: Point) -> list[Entry]:
        """(fn, weight, key) of every registration, in tier order; the same list object stays current."""
        return self._flat.setdefault(point, [])

    def call(self, point: Point, *args: Any) -> Any:
        c = self._callers.get(point)
        if c is None:
            c = self._callers[point] = self.caller(point)
        return c(*args)

    def caller(self, point: Point) -> Callable[..., Any]:
        """`call` bound to one point, for hot loops (later registrations stay visible)."""
        rule = TABLE[point].rule
        flat = self.flat(point)
        special = _SPECIAL.get(rule)
        if special is not None:
            return special(flat)
        fn_rule = RULES[rule]
        tiers = self._tiers_of(point)
        return lambda *args: fn_rule(tiers, args)


# ---- dispatchers specialised per rule, over the flat (tier-ordered) list -------------------------------
Flat = list[Entry]


def _flat_first_nonzero(flat: Flat) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        for fn, _, _ in flat:
            v = fn(*args)
            if v:
                return v
        return 0
    return call


def _flat_first_non_none(flat: Flat) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        for fn, _, _ in flat:
            v = fn(*args)
            if v is not None:
                return v
        return None
    return call


def _flat_all_pass(flat: Flat) -> Callable[..., list]:
    def call(*args: Any) -> list:
        out: list = []
        for fn, _, key in flat:
            out.extend(fn(*args, None) if key is AMONG else fn(*args))
        return out
    return call


def _flat_and(flat: Flat) -> Callable[..., bool]:
    def call(*args: Any) -> bool:
        for fn, _, _ in flat:
            if not fn(*args):
                return False
        return True
    return call


def _flat_or(flat: Flat) -> Callable[..., bool]:
    def call(*args: Any) -> bool:
        for fn, _, _ in flat:
            if fn(*args):
                return True
        return False
    return call


def _flat_sum(flat: Flat) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        total: Any = 0
        for fn, weight, _ in flat:
            total = total + weight * fn(*args)
        return total
    return call


def _flat_call_all(flat: Flat) -> Callable[..., None]:
    def call(*args: Any) -> None:
        for fn, _, _ in flat:
            fn(*args)
    return call


_SPECIAL: Mapping[Rule, Callable[[Flat], Callable[..., Any]]] = types.MappingProxyType({
    Rule.FIRST_NONZERO: _flat_first_nonzero, Rule.FIRST_FAILURE: _flat_first_non_none,
    Rule.FIRST_RESULT: _flat_first_non_none, Rule.ALL_PASS: _flat_all_pass, Rule.AND: _flat_and,
    Rule.OR: _flat_or, Rule.SUM: _flat_sum, Rule.CALL_ALL: _flat_call_all,
})


class Registrar:
    """What a plugin sees while its session opens: `add(point, fn)`, filtered by its enable flags."""

    def __init__(self, hooks: Hooks, tier: int, plugin: str, enabled: Callable[[str], bool]):
        self._hooks, self._tier, self._plugin, self._enabled = hooks, tier, plugin, enabled

    def add(self, point: Point, fn: Fn, weight: float = 1.0, *, key: KeyFn | None = None,
            among: bool = False, row: Callable[[Any], Any] | None = None) -> bool:
        """Register `fn` for `point` if the plugin's flag for it is on; returns whether it was.
        `key`: NodeOrder (row-local scores cached per key(task)), Preemptable and Reclaimable; `among`:
        a Predicate function asked only about the nodes still in play; `row`: a keyed NodeOrder function's
        scalar form (see the module docstring)."""
        flag = _FLAGS[point]
        if flag is not None and not self._enabled(flag):
            return False
        if key is not None and point not in KEYED_POINTS:
            raise ValueError(f"{self._plugin}: key= is only for {', '.join(KEYED_POINTS)}, not {point}")
        if row is not None and (point != Point.NODE_ORDER or key is None):
            raise ValueError(f"{self._plugin}: row= is only for a {Point.NODE_ORDER} function with key=")
        if among:
            if point != Point.PREDICATE:
                raise ValueError(f"{self._plugin}: among= is only for {Point.PREDICATE}, not {point}")
            key = AMONG
        self._hooks.register(point, self._tier, fn, weight, self._plugin, key, row)
        return True
