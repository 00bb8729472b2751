"""overcommit: admit jobs while the cluster, inflated by a factor, still has room (plugins/overcommit).

Arguments: `overcommit-factor` (default 1.2) and, per resource, `overcommit-factor.<name>` (e.g.
`overcommit-factor.cpu: 1.0`; a resource without one uses `overcommit-factor`). A factor below 1 is
refused when the configuration loads (file:line): Volcano logs a warning nobody reads and uses 1.2.
At session open: idle = total allocatable × factor − Σ node used; inqueue = Σ over PodGroups with
minResources that are Inqueue, or Running with placed tasks reaching minMember, of
max(0, minResources − allocated). For Inqueue ones Volcano's overcommit adds all of minResources;
vclite deducts what is already placed, as upstream's proportion and capacity now do: a PodGroup
stays Inqueue for a session after its pods are bound, and those pods are already in `used`.
JobEnqueueable: Permit without minResources; else Permit iff inqueue + minResources ≤ idle on the
dimensions minResources requests (pods ignored, Volcano's 0.1 tolerance), else Reject with
"resource in cluster is overused" and what was missing. JobEnqueued: inqueue += minResources.
Both leave out the requests of the job's scheduling-gated pods (JobInfo.deduct_gated, Volcano's
DeductSchGatedResources): pods waiting for their gates hold no room.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import scheduling
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin
from vclite.scheduler.framework import status as status_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

DEFAULT_FACTOR = 1.2
PREFIX = "overcommit-factor."
OVERUSED = "resource in cluster is overused"


def _factor(value: Any, key: str) -> float:
    """A factor read from argument `key`, at least 1 (ValueError naming the argument otherwise)."""
    where = f"plugin \"overcommit\": argument {key!r}"
    f = plugin.convert(value, float, where)
    if f < 1.0:
        raise ValueError(f"{where}: must be at least 1, got {f:g} (Volcano warns that overcommit-factor "
                         f"cannot be less than 1 and uses {DEFAULT_FACTOR} instead); 1 means no overcommit")
    return f


@dataclasses.dataclass(frozen=True)
class Arguments:
    factor: float = plugin.arg("overcommit-factor", DEFAULT_FACTOR)
    extra: Any = None   # overcommit-factor.<resource>: a factor for one resource (checked at load)
    # factors by session dimensions (sessions share a Dims while the resource names stay the same)
    _factors: dict = dataclasses.field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _factor(self.factor, "overcommit-factor")
        for key, value in (self.extra or {}).items():
            _factor(value, key)

    def factors(self, dims: dims_mod.Dims) -> np.ndarray:
        """The factor of each session dimension (read-only)."""
        hit = self._factors.get(id(dims))
        if hit is not None and hit[0] is dims:
            return hit[1]
        out = np.full(len(dims), self.factor, dtype=np.float64)
        for key, value in (self.extra or {}).items():
            i = dims.index.get(key[len(PREFIX):])
            if i is not None:
                out[i] = _factor(value, key)
        out.flags.writeable = False
        if len(self._factors) > 64:
            self._factors.clear()
        self._factors[id(dims)] = (dims, out)
        return out


class Overcommit:
    name = "overcommit"
    Arguments = Arguments
    argument_prefixes = (PREFIX,)

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        dims = ssn.dims
        self.idle = ssn.total * self.arguments.factors(dims) - ssn.nodes.used.sum(axis=0)
        self.inqueue = dims.zeros()
        for job in ssn.jobs.values():
            min_res = job.min_resources
            if min_res is None:
                continue
            if job.phase == scheduling.PodGroupPhase.INQUEUE or (
                    job.phase == scheduling.PodGroupPhase.RUNNING and job.allocated_task_num() >= job.min_available):
                self.inqueue += job.deduct_gated(np.maximum(min_res - job.allocated, 0))
        # Verdicts by minResources vector (snapshots share one read-only vector per distinct list)
        # while `inqueue` is unchanged: a queue of equal jobs costs one check, not one per job.
        self._verdicts: dict[int, tuple[np.ndarray, str | None]] = {}
        reg.add(hooks.Point.JOB_ENQUEUEABLE, self.job_enqueueable)
        reg.add(hooks.Point.JOB_ENQUEUED, self.job_enqueued)

    def _verdict(self, min_req: np.ndarray) -> str | None:
        """None if `min_req` fits; else why not."""
        hit = self._verdicts.get(id(min_req))
        if hit is not None and hit[0] is min_req:
            return hit[1]
        dims = self.ssn.dims
        why = None
        # (asked again after every job enqueued: checked with Python floats first, the same steps as below)
        if dims_mod.exceeds(self.inqueue.tolist(), min_req.tolist(), self.idle.tolist(), dims.pods):
            short = (min_req > 0) & dims.not_pods & (self.inqueue + min_req > self.idle + dims_mod.TOLERANCE)
            which = list(np.flatnonzero(short))
            room = np.maximum(self.idle - self.inqueue, 0)
            why = (f"{status_mod.resource_names(OVERUSED, 'overused', [dims.names[i] for i in which])}; "
                   f"job needs {dims.describe(min_req, which)} but the cluster can admit at most "
                   f"{dims.describe(room, which)} more (overcommit-factor {self.arguments.factor:g})")
        self._verdicts[id(min_req)] = (min_req, why)
        return why

    def job_enqueueable(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        min_req = job.min_resources
        if min_req is None:
            return hooks.Vote.PERMIT
        why = self._verdict(min_req)
        if why is None:
            return hooks.Vote.PERMIT
        self.ssn.note_enqueue_rejection(job, scheduling.ConditionReason.NOT_ENOUGH_RESOURCES, why)
        return hooks.Vote.REJECT

    def job_enqueued(self, job: "jobs_mod.JobInfo") -> None:
        if job.min_resources is not None:
            self.inqueue += job.deduct_gated(job.min_resources)
            self._verdicts.clear()

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
