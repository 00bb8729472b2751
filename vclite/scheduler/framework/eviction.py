"""What a gang-aware eviction asks the UnifiedEvictable plugins about (Volcano's api.EvictionContext).

`Context(kind, job, hypernode)`: which action evicts (`Kind.GANG_PREEMPT`, `Kind.GANG_RECLAIM`), for
which starving job, in which HyperNode (the search domain). Plugins registered at
hooks.Point.UNIFIED_EVICTABLE branch on `kind`: priority gates preemption only, capacity reclaim only.
Volcano's legacy kinds (task preempt and reclaim) are not used: preempt and reclaim keep their own
Preemptable / Reclaimable points, as upstream.

Must not: know any plugin or action.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod


class Kind(enum.StrEnum):
    GANG_PREEMPT = "gangpreempt"
    GANG_RECLAIM = "gangreclaim"


@dataclasses.dataclass(frozen=True, eq=False)
class Context:
    kind: Kind
    job: "jobs_mod.JobInfo"   # the starving job the victims would make room for
    hypernode: str            # the domain searched (hypernodes.TOP: the whole cluster)
