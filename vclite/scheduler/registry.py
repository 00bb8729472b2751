"""Name -> class tables for actions and plugins, built by a function (nothing registers at import).

A table names each class's module; the module is imported when its name is first looked up, so a
configuration pays only for the actions and plugins it names (importing all 24 plugins took about
as long as the rest of `vcctl run`'s start-up).

`default_registry()` holds what vclite implements plus the names Volcano's default and Helm
configurations use that vclite accepts as no-ops for now (see actions/unsupported.py). Other
Volcano names get a "not supported yet" error, anything else an "unknown" error; both name the
offender. Tests add their own plugins with `with_plugins`.

Must not: instantiate anything.
"""
from __future__ import annotations

import dataclasses
import importlib
import types
from typing import Iterator, Mapping

from vclite.scheduler.actions import unsupported as unsupported_actions

# Everything Volcano can be configured with, for a clearer error on names vclite lacks.
VOLCANO_ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim",
                   "shuffle")
VOLCANO_PLUGINS = ("priority", "gang", "conformance", "drf", "proportion", "capacity", "predicates",
                   "nodeorder", "binpack", "overcommit", "sla", "tdm", "numa-aware", "task-topology",
                   "deviceshare", "nodegroup", "usage", "resource-strategy-fit", "network-topology-aware",
                   "pdb", "cdp", "rescheduling", "resourcequota", "extender")


@dataclasses.dataclass(frozen=True)
class Registry:
    actions: "LazyTable"
    plugins: "LazyTable"

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
        return Registry(self.actions, self.plugins.with_classes(classes))


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


class LazyTable(Mapping[str, type]):
    """Name -> class, where each class is named "module:Class" and imported on first lookup."""

    def __init__(self, package: str, where: Mapping[str, str],
                 loaded: Mapping[str, type] = types.MappingProxyType({})):
        self._package, self._where, self._loaded = package, dict(where), dict(loaded)

    def __getitem__(self, name: str) -> type:
        if name not in self._loaded:
            module, _, attr = self._where[name].partition(":")
            cls = getattr(importlib.import_module(f"{self._package}.{module}"), attr)
            if cls.name != name:
                raise ValueError(f"{self._where[name]} is named {cls.name!r}, registered as {name!r}")
            self._loaded[name] = cls
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._where or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        return iter({**self._where, **self._loaded})

    def __len__(self) -> int:
        return len({**self._where, **self._loaded})

    def with_classes(self, classes: tuple[type, ...]) -> "LazyTable":
        """This table and `classes` (each has a `name`); a duplicate name is an error."""
        loaded = dict(self._loaded)
        for cls in classes:
            if cls.name in self._where or cls.name in loaded:   # (`loaded`: also a name twice in `classes`)
                raise ValueError(f"plugin {cls.name!r} is already registered")
            loaded[cls.name] = cls
        return LazyTable(self._package, self._where, loaded)


ACTION_MODULES = {
    "enqueue": "enqueue:Enqueue", "allocate": "allocate:Allocate", "backfill": "backfill:Backfill",
    "preempt": "preempt:Preempt", "reclaim": "reclaim:Reclaim", "gangpreempt": "gangpreempt:GangPreempt",
    "gangreclaim": "gangreclaim:GangReclaim", "shuffle": "shuffle:Shuffle",
}
PLUGIN_MODULES = {
    "priority": "priority:Priority", "gang": "gang:Gang", "conformance": "conformance:Conformance",
    "drf": "drf:Drf", "predicates": "predicates:Predicates", "proportion": "proportion:Proportion",
    "capacity": "capacity:Capacity", "nodeorder": "nodeorder:NodeOrder", "binpack": "binpack:Binpack",
    "overcommit": "overcommit:Overcommit", "network-topology-aware": "network_topology:NetworkTopologyAware",
    "sla": "sla:Sla", "nodegroup": "nodegroup:NodeGroup", "cdp": "cdp:Cdp", "task-topology": "task_topology:TaskTopology",
    "resource-strategy-fit": "resource_strategy_fit:ResourceStrategyFit", "tdm": "tdm:Tdm",
    "extender": "extender:Extender", "pdb": "pdb:Pdb", "resourcequota": "resourcequota:ResourceQuota",
    "deviceshare": "deviceshare:DeviceShare", "usage": "usage:Usage", "rescheduling": "rescheduling:Rescheduling",
    "numa-aware": "numa_aware:NumaAware",
}


def default_registry() -> Registry:
    return Registry(
        actions=LazyTable("vclite.scheduler.actions", ACTION_MODULES,
                          _table(list(unsupported_actions.ACTIONS))),
        plugins=LazyTable("vclite.scheduler.plugins", PLUGIN_MODULES),
    )
