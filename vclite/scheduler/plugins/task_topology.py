"""task-topology: keep the tasks of a job that talk to each other together, and apart those that
should not share a node (plugins/task-topology).

A job says which of its tasks (vcjob task names, the pods' `volcano.sh/task-spec`) go together in
its PodGroup's annotations (a vcjob's annotations are its PodGroup's):
- `volcano.sh/task-topology-affinity: "ps,worker;chief"` — groups separated by `;`: tasks named
  together attract each other, a task alone attracts its own pods;
- `volcano.sh/task-topology-anti-affinity: "ps"` — likewise, but they repel (a task alone: its pods
  spread);
- `volcano.sh/task-topology-task-order: "ps,worker"` — which task is placed first.
A name that is not one of the job's tasks, or is written twice in a group, makes the plugin ignore
the job (upstream logs it). Argument: `task-topology.weight` (1).

Each session, for each job with pending tasks and such annotations, its pods whose task has a rule
are put in buckets (pods meant to share a node): pods already on a node form that node's bucket;
each pending pod, in order (user order, then the strongest rule — self anti-affinity, inter
affinity, self affinity, inter anti-affinity —, then name), joins the bucket it is most attracted
to (ties: the bucket asking for fewer resources, counting 1 cpu-milli = 1 MiB = 1 unit), or a new
one when every bucket repels it.
- TaskOrder: pods in a bucket before those in none; within a job, the bigger bucket first, then the
  older bucket, then the task order above;
- NodeOrder: for a pod in a bucket, on a node its request can fit (idle + releasing): the bucket's
  pods already on the node, minus the anti-affine pods of the job placed there this session, plus
  the bucket's pending pods — less one for each other pending pod to take out until the bucket's
  request fits the node (upstream takes them in map order, i.e. at random; vclite by name) — ×
  weight × 100 / the largest bucket's size.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

AFFINITY = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"
TASK_ORDER = "volcano.sh/task-topology-task-order"
TASK_SPEC = "volcano.sh/task-spec"
MAX_NODE_SCORE = 100
SELF_ANTI, INTER, SELF, INTER_ANTI = 4, 3, 2, 1   # upstream's affinityPriority


@dataclasses.dataclass(frozen=True)
class Arguments:
    weight: int = plugin.arg("task-topology.weight", 1)


def task_name(task: "tasks_mod.TaskInfo") -> str:
    return ((task.pod.get("metadata") or {}).get("annotations") or {}).get(TASK_SPEC) or ""


def parse(job: "jobs_mod.JobInfo") -> "Topology | None":
    """The job's rules from its PodGroup's annotations; None without any, or when one is invalid."""
    notes = (job.podgroup.get("metadata") or {}).get("annotations") or {} if isinstance(job.podgroup, dict) else {}
    if not any(k in notes for k in (AFFINITY, ANTI_AFFINITY, TASK_ORDER)):
        return None
    roles = {t.role for t in job.tasks.values()}

    def groups(text: str) -> list[list[str]] | None:
        out = [part.split(",") for part in text.split(";")]
        for group in out:
            named = [n for n in group if n]
            if any(n not in roles for n in named) or len(set(named)) != len(named):
                return None
        return out
    topo = Topology()
    for key, target in ((AFFINITY, topo.affinity), (ANTI_AFFINITY, topo.anti_affinity)):
        if key in notes:
            parsed = groups(str(notes[key]))
            if parsed is None:
                return None
            target.extend(parsed)
    if TASK_ORDER in notes:   # one list: a ";" is part of a name here, as upstream splits on "," only
        order = str(notes[TASK_ORDER]).split(",")
        named = [n for n in order if n]
        if any(n not in roles for n in named) or len(set(named)) != len(named):
            return None
        topo.order = order
    return topo


@dataclasses.dataclass
class Topology:
    affinity: list = dataclasses.field(default_factory=list)
    anti_affinity: list = dataclasses.field(default_factory=list)
    order: list = dataclasses.field(default_factory=list)


def req_score(req: np.ndarray, dims: dims_mod.Dims) -> float:
    """Upstream's bucket weight: cpu (milli) + memory (MiB) + every other resource (milli); not pods."""
    score = 0.0
    for i, name in enumerate(dims.names):
        if name == dims_mod.MEMORY:
            score += req[i] / 1024 / 1024
        elif i != dims.pods:
            score += req[i]
    return score


class Bucket:
    def __init__(self, index: int, dims: dims_mod.Dims):
        self.index, self.dims = index, dims
        self.tasks: dict[str, "tasks_mod.TaskInfo"] = {}     # pending, by uid, in insertion order
        self.names: dict[str, int] = {}                       # task name -> pods (pending and placed)
        self.request = np.zeros(len(dims))
        self.score = 0.0
        self.bound = 0
        self.nodes: dict[str, int] = {}

    def add(self, name: str, task: "tasks_mod.TaskInfo") -> None:
        self.names[name] = self.names.get(name, 0) + 1
        if task.node:
            self.nodes[task.node] = self.nodes.get(task.node, 0) + 1
            self.bound += 1
            return
        self.tasks[task.uid] = task
        self.request = self.request + task.req
        self.score += req_score(task.req, self.dims)

    def placed(self, task: "tasks_mod.TaskInfo") -> None:
        self.nodes[task.node] = self.nodes.get(task.node, 0) + 1
        self.bound += 1
        if self.tasks.pop(task.uid, None) is not None:
            self.request = self.request - task.req
            self.score -= req_score(task.req, self.dims)


class JobManager:
    def __init__(self, topo: Topology, dims: dims_mod.Dims):
        self.dims = dims
        self.priority: dict[str, int] = {}
        self.order: dict[str, int] = {n: len(topo.order) - i for i, n in enumerate(topo.order)}
        self.inter: dict[str, set] = {}
        self.inter_anti: dict[str, set] = {}
        self.self_aff: set = set()
        self.self_anti: set = set()
        for groups, pairs, alone, p_alone, p_pair in ((topo.affinity, self.inter, self.self_aff, SELF, INTER),
                                                      (topo.anti_affinity, self.inter_anti, self.self_anti,
                                                       SELF_ANTI, INTER_ANTI)):
            for group in groups:
                if len(group) == 1:
                    alone.add(group[0])
                    self._mark(group[0], p_alone)
                    continue
                for i, src in enumerate(group):
                    for dst in group[:i]:
                        pairs.setdefault(src, set()).add(dst)
                        pairs.setdefault(dst, set()).add(src)
                    self._mark(src, p_pair)
        self.buckets: list[Bucket] = []
        self.bucket_of: dict[str, int] = {}        # task uid -> bucket index
        self.name_of: dict[str, str] = {}
        self.max_size = 0
        self.node_names: dict[str, dict[str, int]] = {}   # node -> task name -> pods placed this session

    def _mark(self, name: str, priority: int) -> None:
        if priority > self.priority.get(name, 0):
            self.priority[name] = priority

    def affinity_order(self, l_name: str, r_name: str) -> int:
        if l_name == r_name:
            return 0
        lo, ro = self.order.get(l_name, 0), self.order.get(r_name, 0)
        if lo != ro:
            return 1 if lo > ro else -1
        lp, rp = self.priority.get(l_name, 0), self.priority.get(r_name, 0)
        if lp != rp:
            return 1 if lp > rp else -1
        return 0

    def attraction(self, name: str, names: dict[str, int], only_anti: bool) -> int:
        total = 0
        if not name:
            return total
        for other, count in names.items():
            same = other == name
            if not only_anti and (name in self.self_aff if same else other in self.inter.get(name, ())):
                total += count
            if name in self.self_anti if same else other in self.inter_anti.get(name, ()):
                total -= count
        return total

    def build(self, tasks: list["tasks_mod.TaskInfo"]) -> None:
        chosen = []
        for t in tasks:
            name = task_name(t)
            if name and name in self.priority:
                self.name_of[t.uid] = name
                chosen.append(t)

        def first(a: "tasks_mod.TaskInfo", b: "tasks_mod.TaskInfo") -> int:   # upstream's reversed TaskOrder
            if a.node or b.node:
                if bool(a.node) != bool(b.node):
                    return -1 if a.node else 1
                return (a.node > b.node) - (a.node < b.node)
            r = self.affinity_order(self.name_of[a.uid], self.name_of[b.uid])
            if r:
                return -r
            return (a.name > b.name) - (a.name < b.name)
        by_node: dict[str, Bucket] = {}
        for t in sorted(chosen, key=functools.cmp_to_key(first)):
            name = self.name_of[t.uid]
            best, most = None, None
            if t.node:
                most, best = 0, by_node.get(t.node)
            else:
                for b in self.buckets:
                    aff = self.attraction(name, b.names, False)
                    if most is None or aff > most or (aff == most and b.score < best.score):
                        most, best = aff, b
            if best is None or (most is not None and most < 0):
                best = Bucket(len(self.buckets), self.dims)
                self.buckets.append(best)
                if t.node:
                    by_node[t.node] = best
            self.bucket_of[t.uid] = best.index
            best.add(name, t)
            self.max_size = max(self.max_size, len(best.tasks) + best.bound)

    def bucket(self, task: "tasks_mod.TaskInfo") -> Bucket | None:
        i = self.bucket_of.get(task.uid)
        return self.buckets[i] if i is not None else None


class TaskTopology:
    name = "task-topology"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.managers: dict[str, JobManager] = {}
        for job in ssn.jobs.values():
            if not any(not t.node for t in job.tasks.values()):
                continue
            topo = parse(job)
            if topo is None:
                continue
            manager = JobManager(topo, ssn.dims)
            manager.build(list(job.tasks.values()))
            self.managers[job.uid] = manager
        if not self.managers:
            return
        reg.add(hooks.Point.TASK_ORDER, self.task_order)
        reg.add(hooks.Point.NODE_ORDER, self.node_order)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)

    def task_order(self, l: "tasks_mod.TaskInfo", r: "tasks_mod.TaskInfo") -> int:
        lm, rm = self.managers.get(l.job), self.managers.get(r.job)
        if lm is None or rm is None:
            return 0
        lb, rb = lm.bucket(l), rm.bucket(r)
        if (lb is None) != (rb is None):
            return -1 if lb is not None else 1
        if l.job != r.job or lb is None:
            return 0
        if len(lb.tasks) != len(rb.tasks):
            return -1 if len(lb.tasks) > len(rb.tasks) else 1
        if lb.index == rb.index:
            return -lm.affinity_order(lm.name_of[l.uid], lm.name_of[r.uid])
        return -1 if lb.index < rb.index else 1

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows))
        manager = self.managers.get(task.job)
        if manager is None:
            return out
        bucket = manager.bucket(task)
        if bucket is None:
            return out
        nodes = self.ssn.nodes
        counted = task.req > 0
        counted[nodes.dims.pods] = False
        name = task_name(task)
        for i, row in enumerate(rows.tolist()):
            room = nodes.idle[row] + nodes.releasing[row]
            if (room[counted] < task.req[counted]).any():
                continue
            node = nodes.names[row]
            score = bucket.nodes.get(node, 0)
            placed = manager.node_names.get(node)
            if placed:
                aff = manager.attraction(name, placed, True)
                if aff < 0:
                    score += aff
            score += len(bucket.tasks)
            if not _fits(bucket.request, room, nodes.dims):
                remains = bucket.request.copy()
                for uid in sorted(bucket.tasks, key=lambda u: bucket.tasks[u].name):
                    if uid == task.uid:
                        continue
                    remains = remains - bucket.tasks[uid].req
                    score -= 1
                    if _fits(remains, room, nodes.dims):
                        break
            value = float(score * self.arguments.weight)
            if manager.max_size:
                value = value * MAX_NODE_SCORE / manager.max_size
            out[i] = value
        return out

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        manager = self.managers.get(task.job)
        if manager is None:
            return
        name = task_name(task)
        if name:
            per_node = manager.node_names.setdefault(task.node, {})
            per_node[name] = per_node.get(name, 0) + 1
        bucket = manager.bucket(task)
        if bucket is not None:
            bucket.placed(task)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None


def _fits(request: np.ndarray, room: np.ndarray, dims: dims_mod.Dims) -> bool:
    mask = np.ones(len(request), dtype=bool)
    mask[dims.pods] = False
    return bool((request[mask] <= room[mask]).all())
