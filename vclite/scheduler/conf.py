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
`parse(text, filename)` reads YAML (every unset enable flag ON, as Volcano's ApplyPluginConfDefaults,
except the opt-in `enableHierarchy`); `load_file(path)` reads a file;
`build(actions, tiers)` is the in-code form used by tests, where flags are OFF unless given
(as in Volcano's unit tests): `build("allocate", [[plugin("gang", enableJobReady=True)]])`.
Every unknown action, plugin, flag or argument and every bad value is collected into one
ConfError (a ValueError) whose lines name the place: `sched.conf:7: unknown plugin "nodeorderr"
(known: …)` when parsed from text (the YAML node marks, as api/yamlio.py keeps them), else the
field path (`tiers[1].plugins[0].name: …`). Nothing is half-applied. A file's `actions` must be one
comma-separated string, as Volcano reads it into a Go string (a YAML list makes Volcano fall back to
its default configuration, so it is refused); `build` also takes a list. An action listed twice, or
a plugin listed twice in a tier, is refused (Volcano would run it twice).
`default_conf()` is Volcano's DefaultSchedulerConf.

Must not: run anything; plugins and actions are only instantiated by the session.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
from typing import Any, Iterable, Mapping, Sequence

from vclite.api import scheduling, yamlio
from vclite.scheduler import nodemetrics
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
# Opt-in even in YAML: ApplyPluginConfDefaults (plugins/defaults.go) leaves these two unset, and
# an unset flag is off (isEnabled). Volcano's default configuration puts drf beside proportion,
# which hierarchical drf forbids.
_OPT_IN = frozenset({"enableHierarchy", "enabledClusterOrder"})
TOP_LEVEL = ("actions", "tiers", "configurations", "metrics")
TOP_LEVEL_SET = frozenset(TOP_LEVEL)

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
class Problem:
    """One thing wrong with a configuration: where (a field path; file and line once located)."""
    path: str
    message: str
    file: str = ""
    line: int = 0

    def __str__(self) -> str:
        if self.file:
            return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"
        if not self.path or self.message.startswith(f"{self.path}: "):   # (a message may name its field)
            return self.message
        return f"{self.path}: {self.message}"


class ConfError(ValueError):
    """A configuration that cannot be used; `problems` lists every problem found, in order."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


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
    # the `metrics` section as Volcano reads it (strings; scheduler/nodemetrics.py): where node usage comes from
    metrics: Mapping[str, str] = dataclasses.field(default_factory=dict)

    # What is derived from the configuration alone is computed once per configuration (it is immutable;
    # a changed configuration is a new object): sessions ask for it every time.
    @functools.cached_property
    def action_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actions)

    @functools.cached_property
    def plugin_names(self) -> frozenset[str]:
        """The names of every configured plugin, whatever its tier."""
        return frozenset(option.name for tier in self.tiers for option in tier)

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


class _Problems(list):
    """Problems collected while validating (path, message)."""

    def add(self, path: str, message: str) -> None:
        self.append(Problem(path, message))


def _q(value: Any) -> str:
    """A name as the messages quote it: "gang"."""
    return '"' + str(value).replace('"', '\\"') + '"'


def _child(path: str, key: Any) -> str:
    """The path of a mapping entry (`a.b`, or `a[b.c]` when the key has dots or brackets)."""
    key = str(key)
    if any(c in key for c in ".[]"):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


_PROPORTIONAL_MOVED = (
    "the proportional policy (a GPU's share of cpu and memory kept for it) is the resource-strategy-fit plugin's now "
    "(Volcano's predicates ignores this old argument, which its how_to_configure_scheduler.md still shows): write "
    "proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 8, "
    "nvidia.com/gpu.memory: 8}} under a plugin \"resource-strategy-fit\"")

# Arguments Volcano's user guides still show under a plugin that no longer reads them (upstream ignores them, so
# the feature stays off): (owner, argument) -> where the argument is now.
MOVED_ARGUMENTS = {
    ('plugin "predicates"', "predicate.GPUNumberEnable"):
        'GPU number is the deviceshare plugin\'s now (Volcano ignores this old name, which its '
        'how_to_use_gpu_number.md still shows): write "deviceshare.GPUNumberEnable: true" under a plugin "deviceshare"',
    ('plugin "predicates"', "predicate.resources"): _PROPORTIONAL_MOVED,
}
# (owner, argument prefix) -> where arguments under it are now
MOVED_ARGUMENT_PREFIXES = {('plugin "predicates"', "predicate.resources."): _PROPORTIONAL_MOVED}


def _moved(owner: str, key: str) -> str | None:
    return MOVED_ARGUMENTS.get((owner, key)) or next(
        (where for (o, prefix), where in MOVED_ARGUMENT_PREFIXES.items() if o == owner and key.startswith(prefix)), None)


def _arguments(cls: type, raw: Any, owner: str, path: str, prefixes: tuple[str, ...], out: _Problems) -> Any:
    """The typed Arguments, or None after adding a problem per bad argument (each at its own path)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        out.add(path, f"{owner}: arguments must be a mapping, got {_type_name(raw)}")
        return None
    keys = {f.metadata.get("key", f.name) for f in dataclasses.fields(cls) if f.name != "extra" and f.init}
    ok = True
    usable: dict[str, Any] = {}   # key -> value, or a PARTIAL-wrapped value read in part
    for key, value in raw.items():
        at = _child(path, key)
        if str(key) not in keys and not any(str(key).startswith(p) for p in prefixes):
            known = ", ".join([*sorted(keys), *(f"{p}<name>" for p in prefixes)]) or "none"
            moved = _moved(owner, str(key))
            out.add(at, f"{owner}: unknown argument {_q(key)}: {moved}" if moved else
                    f"{owner}: unknown argument {_q(key)} (known: {known})")
            ok = False
            continue
        try:
            plugin_mod.parse_arguments(cls, {key: value}, owner, prefixes)   # alone: the error is this key's
            usable[str(key)] = value
        except plugin_mod.ArgumentProblems as e:   # every problem inside the value, each at its own place
            _add_inside(out, at, e)
            if e.partial is not None:
                usable[str(key)] = _Partial(e.partial)
            ok = False
        except (ValueError, TypeError) as e:
            out.add(at, str(e))
            ok = False
    if not ok:
        _check_together_anyway(cls, raw, usable, owner, path, prefixes, out)
        return None
    try:
        args = plugin_mod.parse_arguments(cls, raw, owner, prefixes)
        check = getattr(args, "check_together", None)
        if check is not None:
            check()
        return args
    except plugin_mod.ArgumentProblems as e:   # arguments only wrong together, at the places it names
        _add_inside(out, path, e)
        return None
    except (ValueError, TypeError) as e:   # arguments that are only wrong together
        out.add(path, str(e))
        return None


def _add_inside(out: _Problems, at: str, e: plugin_mod.ArgumentProblems) -> None:
    """Each of `e`'s problems at its place inside the value at `at` (`[0].name`, `.x`, or a key)."""
    for inside, message in e.problems:
        out.add(at + inside if inside[:1] in ("[", ".", "") else f"{at}.{inside}", message)


@dataclasses.dataclass(frozen=True)
class _Partial:
    """An argument's value as read without its faulty parts (ArgumentProblems.partial)."""
    value: Any


def _check_together_anyway(cls: type, raw: Mapping[str, Any], usable: Mapping[str, Any], owner: str, path: str,
                           prefixes: tuple[str, ...], out: _Problems) -> None:
    """With other arguments bad, a class's check_together still runs when every key it reads (TOGETHER_KEYS)
    that was given could be read (in part at least): its problem is reported in the same round."""
    together = getattr(cls, "TOGETHER_KEYS", None)
    check = getattr(cls, "check_together", None)
    if not together or check is None:
        return
    given = [k for k in together if k in raw]
    if any(k not in usable for k in given):
        return
    try:
        args = plugin_mod.parse_arguments(cls, {k: v for k, v in usable.items()
                                                if k in given and not isinstance(v, _Partial)}, owner, prefixes)
        fields = {f.metadata.get("key", f.name): f.name for f in dataclasses.fields(cls)}
        partial = {fields[k]: v.value for k, v in usable.items() if k in given and isinstance(v, _Partial)}
        dataclasses.replace(args, **partial).check_together()
    except plugin_mod.ArgumentProblems as e:
        _add_inside(out, path, e)
    except (ValueError, TypeError) as e:
        out.add(path, str(e))


_ACTIONS_FORM = 'must be a comma-separated string such as "enqueue, allocate, backfill"'
LISTED_ACTIONS = (f"actions: {_ACTIONS_FORM}; Volcano cannot read a list (it would fall back to its default "
                  "configuration)")


def _split_actions(actions: Any, out: _Problems) -> list[str]:
    if isinstance(actions, str):
        names = [a.strip() for a in actions.split(",")]
        if actions.strip() and "" in names:   # Volcano: "failed to find Action " (the whole file is refused)
            out.add("actions", f'an empty action name in "{actions}" (a stray comma?)')
        return [a for a in names if a]
    if isinstance(actions, list) and all(isinstance(a, str) for a in actions):
        return [a.strip() for a in actions]   # (in-code form only: a file's list is refused by _from_mapping)
    out.add("actions", f"actions: {_ACTIONS_FORM}, got {_type_name(actions)}")
    return []


def _action_options(names: list[str], configurations: Any, reg: registry_mod.Registry,
                    out: _Problems) -> tuple[ActionOption, ...]:
    classes: dict[str, type] = {}
    for n in names:
        try:
            classes[n] = reg.action(n)
        except ValueError as e:
            out.add("actions", str(e))
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        out.add("actions", f"action {_q(twice[0])} is listed twice in {_q(', '.join(names))}")
    parsed: dict[str, Any] = {}   # action name -> its typed arguments, from `configurations`
    if configurations is None:
        configurations = []
    if not isinstance(configurations, list):
        out.add("configurations", "must be a list of {name, arguments}")
        configurations = []
    for i, c in enumerate(configurations):
        where = f"configurations[{i}]"
        if not isinstance(c, Mapping) or not c.get("name"):
            out.add(where, "must be a mapping with a name (an action)")
            continue
        for key in sorted(set(c) - {"name", "arguments"}):
            out.add(_child(where, key), f"unknown field {_q(key)} (known: name, arguments)")
        name = str(c["name"])
        try:
            cls = reg.action(name)
        except ValueError as e:
            out.add(f"{where}.name", str(e))
            continue
        if name in parsed:
            out.add(f"{where}.name", f"action {_q(name)} is configured twice")
        parsed[name] = _arguments(cls.Arguments, c.get("arguments"), f"action {_q(name)}", f"{where}.arguments",
                                  (), out)
    return tuple(ActionOption(n, cls, parsed[n] if n in parsed else
                              _arguments(cls.Arguments, None, f"action {_q(n)}", "actions", (), out))
                 for n, cls in classes.items())


def _plugin_option(entry: Any, where: str, reg: registry_mod.Registry, default_on: bool,
                   out: _Problems) -> PluginOption | None:
    if not isinstance(entry, Mapping) or not entry.get("name"):
        out.add(where, "a plugin must be a mapping with a name")
        return None
    name = str(entry["name"])
    try:
        cls = reg.plugin(name)
    except ValueError as e:
        out.add(f"{where}.name", str(e))
        return None
    before = len(out)
    flags = set(_FLAG_SET - _OPT_IN) if default_on else set()
    for key, value in entry.items():
        if key in ("name", "arguments"):
            continue
        if key not in _FLAG_SET:
            close = difflib.get_close_matches(str(key), FLAGS, n=1)
            hint = f"did you mean {_q(close[0])}?" if close else "not an enable flag; arguments go under `arguments:`"
            out.add(_child(where, key), f"plugin {_q(name)}: unknown field {_q(key)} ({hint})")
        elif not isinstance(value, bool):
            out.add(_child(where, key), f"plugin {_q(name)}: {key} must be true or false, got {value!r}")
        else:
            (flags.add if value else flags.discard)(key)
    for flag, why in getattr(cls, "unsupported_flags", {}).items():
        if flag in flags:
            out.add(f"{where}.{flag}" if flag in entry else f"{where}.name",
                    f"plugin {_q(name)}: {flag} is not supported: {why}")
    args = _arguments(cls.Arguments, entry.get("arguments"), f"plugin {_q(name)}", f"{where}.arguments",
                      getattr(cls, "argument_prefixes", ()), out)
    if len(out) > before:
        return None
    return PluginOption(name, cls, args, frozenset(flags), dict(entry.get("arguments") or {}))


def _tier(t: int, tier: Any, reg: registry_mod.Registry, default_on: bool, out: _Problems) -> tuple[PluginOption, ...]:
    plugins = tier.get("plugins") if isinstance(tier, Mapping) else tier
    if isinstance(tier, Mapping):
        for key in sorted(set(tier) - {"plugins"}):
            out.add(_child(f"tiers[{t}]", key), f"unknown field {_q(key)} (a tier has only `plugins`)")
    if plugins is None or not isinstance(plugins, (list, tuple)):
        out.add(f"tiers[{t}]", "must list plugins (`- plugins: [{name: gang}, ...]`)")
        return ()
    opts = [_plugin_option(p, f"tiers[{t}].plugins[{i}]", reg, default_on, out) for i, p in enumerate(plugins)]
    names = [p.get("name") if isinstance(p, Mapping) else None for p in plugins]
    for i, n in enumerate(names):
        if n and n in names[:i]:
            out.add(f"tiers[{t}].plugins[{i}].name", f"plugin {_q(n)} is listed twice in this tier")
    valid = tuple(o for o in opts if o is not None)
    hierarchical = [i for i, p in enumerate(plugins)
                    if names[i] == "drf" and isinstance(p, Mapping) and p.get("enableHierarchy") is True]
    if hierarchical and "proportion" in names:
        at = f"tiers[{t}].plugins[{hierarchical[0]}].enableHierarchy"
        out.add(at, "drf with enableHierarchy cannot be used with proportion in the same tier")
    return valid


EXCLUSIVE = ("capacity", "proportion")
EXCLUSIVE_WHY = ("capacity and proportion cannot be used together (Volcano's capacity plugin guide: they "
                 "conflict, each deciding what a queue deserves); keep one of them")


def _exclusive(tiers: Sequence[Any], out: _Problems) -> None:
    """Refuse plugins that each decide queue quotas (Volcano accepts both and mixes their votes)."""
    where: dict[str, str] = {}
    for t, tier in enumerate(tiers):
        plugins = tier.get("plugins") if isinstance(tier, Mapping) else tier
        for i, p in enumerate(plugins if isinstance(plugins, (list, tuple)) else ()):
            name = p.get("name") if isinstance(p, Mapping) else None
            if name in EXCLUSIVE and name not in where:
                where[name] = f"tiers[{t}].plugins[{i}].name"
    if len(where) == len(EXCLUSIVE):
        out.add(where[EXCLUSIVE[0]], EXCLUSIVE_WHY)


def _build(actions: Any, tiers: Any, configurations: Any, reg: registry_mod.Registry, default_on: bool,
           out: _Problems) -> SchedulerConf | None:
    names = _split_actions(actions, out)
    if not names and not out:
        out.add("actions", "at least one action is required")
    if not isinstance(tiers, (list, tuple)):
        out.add("tiers", "must be a list of tiers (`- plugins: [...]`)")
        tiers = []
    out_tiers = tuple(_tier(t, tier, reg, default_on, out) for t, tier in enumerate(tiers))
    _exclusive(tiers, out)
    action_opts = _action_options(names, configurations, reg, out)
    return None if out else SchedulerConf(action_opts, out_tiers)


def build(actions: str | Sequence[str], tiers: Sequence[Sequence[Mapping[str, Any]]],
          configurations: Iterable[Mapping[str, Any]] = (), registry: registry_mod.Registry | None = None,
          default_on: bool = False) -> SchedulerConf:
    """A validated configuration from in-code values (flags off unless given, or `default_on`).
    Raises ConfError (problems named by field path)."""
    out = _Problems()
    conf = _build(actions, list(tiers), list(configurations), registry or registry_mod.default_registry(),
                  default_on, out)
    if conf is None:
        raise ConfError(out)
    return conf


def _from_mapping(data: Any, reg: registry_mod.Registry, out: _Problems) -> SchedulerConf | None:
    if not isinstance(data, Mapping):
        out.add("", "a scheduler configuration must be a mapping with actions and tiers, "
                    f"got {_type_name(data)}")
        return None
    if "apiVersion" in data and "kind" in data and not TOP_LEVEL_SET & set(data):
        out.add("kind", _manifest_given(data.get("kind")))
        return None
    for key in data:
        if key not in TOP_LEVEL:
            out.add(_child("", key), f"unknown field {_q(key)} (known: {', '.join(TOP_LEVEL)})")
    if "actions" not in data:
        out.add("", 'actions: Required value (e.g. actions: "enqueue, allocate, backfill")')
    metrics, problems = nodemetrics.check(data.get("metrics"))
    for path, message in problems:
        out.add(path, message)
    actions = data.get("actions", "")
    if isinstance(actions, list):   # Volcano reads `actions` into a Go string: yaml.v2 fails on a list
        out.add("actions", LISTED_ACTIONS)
        actions = ""
    tiers = data.get("tiers")
    conf = _build(actions, [] if tiers is None else tiers, data.get("configurations"), reg, True, out)
    return None if conf is None else dataclasses.replace(conf, metrics=metrics)


def _manifest_given(kind: Any) -> str:
    """What a Kubernetes manifest given as the configuration (Volcano's ConfigMap, most often) is told."""
    configmap = f"{scheduling.SCHEDULER_CONFIGMAP_NAMESPACE}/{scheduling.SCHEDULER_CONFIGMAP}"
    return (f"a Kubernetes manifest (kind: {kind}), not a volcano-scheduler.conf (actions and tiers): give the "
            'configuration itself (a ConfigMap\'s data["volcano-scheduler.conf"]), or leave this option out and '
            f"give Volcano's ConfigMap {configmap} with the manifests (vcctl run, scheduler dry-run -f) or apply "
            "it (vcctl server)")


def parse(text: str | Mapping[str, Any], filename: str = "<string>",
          registry: registry_mod.Registry | None = None) -> SchedulerConf:
    """Parse `volcano-scheduler.conf` (YAML text, or an already-loaded mapping). Raises ConfError;
    for text, each problem carries `filename` and the line of the offending field."""
    reg = registry or registry_mod.default_registry()
    out = _Problems()
    if not isinstance(text, str):
        conf = _from_mapping(text, reg, out)
        if conf is None:
            raise ConfError(out)
        return conf
    docs, problems = yamlio.parse_string(text, filename, objects=False)
    if problems:
        raise ConfError(Problem("", p.message, filename, p.line) for p in problems)
    if len(docs) > 1:
        raise ConfError([Problem("", "one YAML document expected (found a second one)", filename, docs[1].line)])
    doc = docs[0] if docs else None
    conf = _from_mapping(doc.obj if doc is not None else None, reg, out)
    if conf is None:
        located = [dataclasses.replace(p, file=filename, line=doc.line_of(p.path) if doc else 1) for p in out]
        raise ConfError(sorted(located, key=lambda p: p.line))
    return conf


def load_file(path: str, registry: registry_mod.Registry | None = None) -> SchedulerConf:
    """Read and parse a configuration file (ConfError names the file for every problem)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfError([Problem("", f"cannot read: {e.strerror or e}", path)]) from None
    return load_bytes(data, path, registry)


def load_bytes(data: bytes, filename: str, registry: registry_mod.Registry | None = None) -> SchedulerConf:
    """`load_file` for the bytes of a configuration the caller read (standard input), named `filename`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfError([Problem("", f"not UTF-8 text: {e.reason} at byte {e.start}", filename,
                                 data[:e.start].count(b"\n") + 1)]) from None
    return parse(text, filename, registry)


def default_conf(registry: registry_mod.Registry | None = None) -> SchedulerConf:
    return parse(DEFAULT_CONF_YAML, "<default>", registry)
