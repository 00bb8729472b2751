"""The scheduler configuration: Volcano's `volcano-scheduler.conf`, parsed and validated whole.

```yaml
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
    enableJobReady: true        # any of FLAGS; unset = true when parsed from YAML
    arguments: {...}            # checked against the plugin's typed Arguments
configurations:
- name: allocate
  arguments: {...}
```
`parse(text)` reads YAML (every unset enable flag ON, as Volcano's ApplyPluginConfDefaults, except
the opt-in `enableHierarchy`);
`build(actions, tiers)` is the in-code form used by tests, where flags are OFF unless given
(as in Volcano's unit tests): `build("allocate", [[plugin("gang", enableJobReady=True)]])`.
An unknown action, plugin, flag or argument is a ValueError naming it; nothing is half-applied.
`default_conf()` is Volcano's DefaultSchedulerConf.

Must not: run anything; plugins and actions are only instantiated by the session.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, Sequence

import yaml

from vclite.scheduler import registry as registry_mod
from vclite.scheduler.framework import plugin as plugin_mod

FLAGS: tuple[str, ...] = (
    "enableJobOrder", "enableHierarchy", "enableJobReady", "enableJobPipelined", "enableTaskOrder",
    "enablePreemptable", "enableReclaimable", "enablePreemptive", "enableQueueOrder", "enabledClusterOrder",
    "enablePredicate", "enableBestNode", "enableNodeOrder", "enableTargetJob", "enableReservedNodes",
    "enableJobEnqueued", "enabledVictim", "enableJobStarving", "enabledOverused", "enabledAllocatable",
    "enabledHyperNodeOrder", "enabledSubJobReady", "enabledSubJobPipelined", "enabledSubJobOrder",
    "enabledHyperNodeGradient",
)
_FLAG_SET = frozenset(FLAGS)  # hypernode and sub-job flags are accepted; vclite has no such points yet
# Opt-in even in YAML: Volcano's default configuration puts drf beside proportion, which
# hierarchical drf forbids, so ApplyPluginConfDefaults cannot be turning it on.
_OPT_IN = frozenset({"enableHierarchy"})

DEFAULT_CONF_YAML = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


@dataclasses.dataclass(frozen=True)
class PluginOption:
    name: str
    plugin: type
    args: Any                       # the plugin's typed Arguments
    flags: frozenset[str]           # the enable flags that are on
    arguments: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # as written

    def enabled(self, flag: str) -> bool:
        return flag in self.flags

    def instantiate(self) -> Any:
        return self.plugin(self.args)


@dataclasses.dataclass(frozen=True)
class ActionOption:
    name: str
    action: type
    args: Any


@dataclasses.dataclass(frozen=True)
class SchedulerConf:
    actions: tuple[ActionOption, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actions)

    def has_action(self, name: str) -> bool:
        return name in self.action_names

    def instantiate_actions(self) -> list[Any]:
        return [a.action(a.args) for a in self.actions]


def plugin(name: str, arguments: Mapping[str, Any] | None = None, **flags: bool) -> dict[str, Any]:
    """An in-code plugin entry: `plugin("gang", enableJobReady=True)` (unlisted flags are off)."""
    entry: dict[str, Any] = {"name": name, **flags}
    if arguments is not None:
        entry["arguments"] = dict(arguments)
    return entry


def _split_actions(actions: str | Sequence[str]) -> list[str]:
    if isinstance(actions, str):
        return [a.strip() for a in actions.split(",") if a.strip()]
    return [str(a).strip() for a in actions]


def _action_options(names: list[str], configurations: Iterable[Mapping[str, Any]],
                    reg: registry_mod.Registry) -> tuple[ActionOption, ...]:
    for n in names:
        reg.action(n)  # raises for unknown names
    if len(set(names)) != len(names):
        raise ValueError(f"actions: an action is listed twice in {', '.join(names)}")
    raw_args: dict[str, Mapping[str, Any]] = {}
    for i, c in enumerate(configurations or ()):
        if not isinstance(c, Mapping) or "name" not in c:
            raise ValueError(f"configurations[{i}]: must be a mapping with a name")
        unknown = set(c) - {"name", "arguments"}
        if unknown:
            raise ValueError(f"configurations[{i}]: unknown field {sorted(unknown)[0]!r}")
        reg.action(str(c["name"]))
        raw_args[str(c["name"])] = c.get("arguments") or {}
    out = []
    for n in names:
        cls = reg.action(n)
        out.append(ActionOption(n, cls, plugin_mod.parse_arguments(cls.Arguments, raw_args.get(n), f"action {n!r}")))
    return tuple(out)


def _plugin_option(entry: Any, where: str, reg: registry_mod.Registry, default_on: bool) -> PluginOption:
    if not isinstance(entry, Mapping) or not entry.get("name"):
        raise ValueError(f"{where}: a plugin must be a mapping with a name")
    name = str(entry["name"])
    cls = reg.plugin(name)
    flags = set(_FLAG_SET - _OPT_IN) if default_on else set()
    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        if key not in _FLAG_SET:
            raise ValueError(f"{where} ({name}): unknown field {key!r}")
        if not isinstance(value, bool):
            raise ValueError(f"{where} ({name}): {key} must be true or false, got {value!r}")
        (flags.add if value else flags.discard)(key)
    raw = entry.get("arguments") or {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} ({name}): arguments must be a mapping")
    args = plugin_mod.parse_arguments(cls.Arguments, raw, f"plugin {name!r}", getattr(cls, "argument_prefixes", ()))
    return PluginOption(name, cls, args, frozenset(flags), dict(raw))


def build(actions: str | Sequence[str], tiers: Sequence[Sequence[Mapping[str, Any]]],
          configurations: Iterable[Mapping[str, Any]] = (), registry: registry_mod.Registry | None = None,
          default_on: bool = False) -> SchedulerConf:
    """A validated configuration from in-code values (flags off unless given, or `default_on`)."""
    reg = registry or registry_mod.default_registry()
    names = _split_actions(actions)
    if not names:
        raise ValueError("actions: at least one action is required")
    out_tiers = []
    for t, tier in enumerate(tiers):
        plugins = tier.get("plugins") if isinstance(tier, Mapping) else tier
        if plugins is None or isinstance(plugins, (str, Mapping)):
            raise ValueError(f"tiers[{t}]: must list plugins")
        opts = tuple(_plugin_option(p, f"tiers[{t}].plugins[{i}]", reg, default_on) for i, p in enumerate(plugins))
        seen = [o.name for o in opts]
        dup = {n for n in seen if seen.count(n) > 1}
        if dup:
            raise ValueError(f"tiers[{t}]: plugin {sorted(dup)[0]!r} is listed twice")
        if any(o.name == "drf" and o.enabled("enableHierarchy") for o in opts) and "proportion" in seen:
            raise ValueError(f"tiers[{t}]: drf with enableHierarchy cannot be used with proportion in the same tier")
        for i, o in enumerate(opts):
            for flag, why in getattr(o.plugin, "unsupported_flags", {}).items():
                if o.enabled(flag):
                    raise ValueError(f"tiers[{t}].plugins[{i}] ({o.name}): {flag} is not supported: {why}")
        out_tiers.append(opts)
    return SchedulerConf(_action_options(names, configurations, reg), tuple(out_tiers))


def parse(text: str | Mapping[str, Any], registry: registry_mod.Registry | None = None) -> SchedulerConf:
    """Parse `volcano-scheduler.conf` (YAML text or an already-loaded mapping)."""
    data = yaml.safe_load(text) if isinstance(text, str) else text
    if not isinstance(data, Mapping):
        raise ValueError("scheduler configuration must be a mapping with actions and tiers")
    unknown = set(data) - {"actions", "tiers", "configurations", "metrics"}
    if unknown:
        raise ValueError(f"scheduler configuration: unknown field {sorted(unknown)[0]!r}")
    actions = data.get("actions")
    if not isinstance(actions, (str, list)):
        raise ValueError('actions: must be a comma-separated string such as "enqueue, allocate"')
    tiers = data.get("tiers") or []
    if not isinstance(tiers, list):
        raise ValueError("tiers: must be a list")
    return build(actions, tiers, data.get("configurations") or (), registry, default_on=True)


def default_conf(registry: registry_mod.Registry | None = None) -> SchedulerConf:
    return parse(DEFAULT_CONF_YAML, registry)
