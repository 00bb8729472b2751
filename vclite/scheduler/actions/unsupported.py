"""Actions Volcano's default configurations name that vclite accepts but does not run yet.

TODO(issue #3): implement `preempt` and `reclaim`. Until then each is a no-op
so that Volcano's default configuration and common Helm
configurations load unchanged.

Must not: do anything.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from vclite.scheduler.framework import plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod


class _NoOpAction:
    name = ""
    Arguments: type = plugin.NoArguments

    def __init__(self, arguments: Any):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        return None


@dataclasses.dataclass(frozen=True)
class PreemptArguments:
    enableTopologyAwarePreemption: bool = False
    topologyAwarePreemptWorkerNum: int = 16
    minCandidateNodesPercentage: int = 10
    minCandidateNodesAbsolute: int = 1
    maxCandidateNodesAbsolute: int = 100
    predicateErrorCacheEnable: bool = True


class Preempt(_NoOpAction):
    name = "preempt"
    Arguments = PreemptArguments


class Reclaim(_NoOpAction):
    name = "reclaim"


ACTIONS: tuple[type, ...] = (Preempt, Reclaim)
