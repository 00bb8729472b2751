"""Name -> class tables for actions and plugins, built by a function (nothing registers at import).

`default_registry()` holds what vclite implements plus the names Volcano's default and Helm
configurations use that vclite accepts as no-ops for now (see actions/unsupported.py). Other
Volcano names get a "not supported yet" error, anything else an "unknown" error; both name the
offender. Tests add their own plugins with `with_plugins`.

Must not: instantiate anything.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Mapping

from vclite.scheduler.actions import allocate, backfill, enqueue, gangpreempt, gangreclaim, preempt, reclaim, shuffle
from vclite.scheduler.actions import unsupported as unsupported_actions
from vclite.scheduler.plugins import (binpack, capacity, cdp, conformance, deviceshare, drf, extender, gang,
                                      network_topology, nodegroup, nodeorder, numa_aware, overcommit, pdb, predicates, priority,
                                      proportion, rescheduling, resource_strategy_fit, resourcequota, sla,
                                      task_topology, tdm, usage)

# Everything Volcano can be configured with, for a clearer error on names vclite lacks.
VOLCANO_ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim",
                   "shuffle")
VOLCANO_PLUGINS = ("priority", "gang", "conformance", "drf", "proportion", "capacity", "predicates",
                   "nodeorder", "binpack", "overcommit", "sla", "tdm", "numa-aware", "task-topology",
                   "deviceshare", "nodegroup", "usage", "resource-strategy-fit", "network-topology-aware",
                   "pdb", "cdp", "rescheduling", "resourcequota", "extender")


@dataclasses.dataclass(frozen=True)
class Registry:
    actions: Mapping[str, type]
    plugins: Mapping[str, type]

    def action(self, name: str) -> type:
        if name in self.actions:
            return self.actions[name]
        raise ValueError(_unknown("action", name, self.actions, VOLCANO_ACTIONS))

    def plugin(self, name: str) -> type:
        if name in self.plugins:
            return self.plugins[name]
        raise ValueError(_unknown("plugin", name, self.plugins, VOLCANO_PLUGINS))

    def with_plugins(self, *classes: type) -> "Registry":
        """A registry with extra plugin classes (each has a `name`); a duplicate name is an error."""
        plugins = dict(self.plugins)
        for cls in classes:
            if cls.name in plugins:
                raise ValueError(f"plugin {cls.name!r} is already registered")
            plugins[cls.name] = cls
        return Registry(self.actions, types.MappingProxyType(plugins))


def _unknown(what: str, name: str, known: Mapping[str, type], volcano: tuple[str, ...]) -> str:
    if name in volcano:
        return f'{what} "{name}" is not supported by vclite yet (supported: {", ".join(sorted(known))})'
    return f'unknown {what} "{name}" (known: {", ".join(sorted(known))})'


def _table(classes: list[type]) -> Mapping[str, type]:
    table: dict[str, type] = {}
    for cls in classes:
        if cls.name in table:
            raise ValueError(f"{cls.name!r} is registered twice")
        table[cls.name] = cls
    return types.MappingProxyType(table)


def default_registry() -> Registry:
    return Registry(
        actions=_table([enqueue.Enqueue, allocate.Allocate, backfill.Backfill, preempt.Preempt, reclaim.Reclaim,
                        gangpreempt.GangPreempt, gangreclaim.GangReclaim, shuffle.Shuffle,
                        *unsupported_actions.ACTIONS]),
        plugins=_table([priority.Priority, gang.Gang, conformance.Conformance, drf.Drf, predicates.Predicates,
                        proportion.Proportion, capacity.Capacity, nodeorder.NodeOrder, binpack.Binpack,
                         overcommit.Overcommit, network_topology.NetworkTopologyAware, sla.Sla,
                         nodegroup.NodeGroup, cdp.Cdp, task_topology.TaskTopology,
                         resource_strategy_fit.ResourceStrategyFit, tdm.Tdm, extender.Extender, pdb.Pdb,
                         resourcequota.ResourceQuota, deviceshare.DeviceShare, usage.Usage,
                         rescheduling.Rescheduling, numa_aware.NumaAware]),
    )
