"""What a plugin and an action are, and how their typed arguments are read from configuration.

A plugin is a class with `name`, an `Arguments` frozen dataclass (field metadata `key` gives the
configuration spelling, e.g. `predicate.NodeAffinityEnable`), `on_session_open(session,
registrar)` and `on_session_close(session)`. An action is a class with `name`, `Arguments` and
`execute(session)`. Both are built once per session from already-validated arguments.
`parse_arguments` fails at configuration load with a ValueError naming the bad argument; an Arguments
class may also have `check_together()`, which configuration load calls on the whole set (each argument
is first parsed alone, so that one bad argument is reported at its own line) to refuse arguments that
are only wrong together (ValueError).
An argument with a nested value (a list of mappings) reports every problem in it at once: its `read` raises
`ArgumentProblems`, each problem at its own place inside the value (configuration load gives each its line),
with the value read without its faulty parts (`partial`). When an Arguments class names the keys its
`check_together` reads (`TOGETHER_KEYS`), that check still runs when other arguments are bad, as long as
those keys were read (in part, at least), so that it is reported in the same round.

Must not: hold state between sessions (a new instance is made per session).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Protocol

if TYPE_CHECKING:
    from vclite.scheduler.framework import hooks
    from vclite.scheduler.framework import session as session_mod


@dataclasses.dataclass(frozen=True)
class NoArguments:
    pass


class Plugin(Protocol):
    name: ClassVar[str]
    Arguments: ClassVar[type]

    def __init__(self, arguments: Any) -> None: ...

    def on_session_open(self, ssn: "session_mod.Session", reg: "hooks.Registrar") -> None: ...

    def on_session_close(self, ssn: "session_mod.Session") -> None: ...


class Action(Protocol):
    name: ClassVar[str]
    Arguments: ClassVar[type]

    def __init__(self, arguments: Any) -> None: ...

    def execute(self, ssn: "session_mod.Session") -> None: ...


class ArgumentProblems(ValueError):
    """Every problem of one argument's value: (where inside the value — `[0].params.thresholds.cpu`, "" for the
    value itself —, message) pairs, and `partial`, the value read without its faulty parts (None: nothing)."""

    def __init__(self, problems: list[tuple[str, str]], partial: Any = None):
        self.problems = list(problems)
        self.partial = partial
        super().__init__("\n".join(message for _, message in self.problems))


def arg(key: str, default: Any, read: Callable[[Any, str], Any] | None = None) -> Any:
    """A dataclass field read from configuration key `key`; `read(value, where)` converts a value of a
    kind `convert` does not know (a list, a mapping) or raises ValueError naming `where`."""
    return dataclasses.field(default=default, metadata={"key": key, **({"read": read} if read else {})})


# Volcano reads plugin arguments from gopkg.in/yaml.v2 values (framework/arguments.go): GetBool takes a
# boolean or a string strconv.ParseBool accepts; GetInt only a YAML integer; GetFloat64 an integer or
# a float; GetString only a string. Any other value is logged and ignored there (the default stays):
# vclite refuses it at load instead, so a configuration means the same on both.
_TRUE, _FALSE = ("1", "t", "T", "TRUE", "true", "True"), ("0", "f", "F", "FALSE", "false", "False")
_WHY_IGNORED = "Volcano ignores any other value and keeps the default"


def convert(value: Any, kind: type, where: str) -> Any:
    """A configuration value as Volcano's Get{Bool,Int,Float64,String} would read it, or ValueError."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value in _TRUE + _FALSE:
            return value in _TRUE
        want = "true or false (or a string strconv.ParseBool reads: \"true\", \"1\", \"f\"…)"
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        want = "an integer, unquoted"
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        want = "a number, unquoted"
    else:
        if isinstance(value, str):
            return value
        want = "a string (quote it)"
    raise ValueError(f"{where}: expected {want}, got {value!r}; {_WHY_IGNORED}")


_TYPES = {"bool": bool, "int": int, "float": float, "str": str}


def parse_arguments(cls: type, raw: Mapping[str, Any] | None, owner: str, prefixes: tuple[str, ...] = ()) -> Any:
    """Build `cls` (an Arguments dataclass) from a configuration mapping.

    Unknown keys raise ValueError naming them, except keys under one of `prefixes` (kept raw in
    a field named `extra` if the dataclass has one). Values are converted to the field's type
    (bool, int, float, str) with Volcano's rules (`convert`), or by the field's own `read`.
    """
    raw = dict(raw or {})
    fields = {f.metadata.get("key", f.name): f for f in dataclasses.fields(cls) if f.name != "extra" and f.init}
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"{owner}: argument {key!r}"
        f = fields.get(str(key))
        if f is None:
            if any(str(key).startswith(p) for p in prefixes):
                extra[str(key)] = value
                continue
            known = ", ".join(sorted(fields)) or "none"
            raise ValueError(f"{owner}: unknown argument {key!r} (known: {known})")
        if "read" in f.metadata:
            values[f.name] = f.metadata["read"](value, where)
            continue
        kind = _TYPES.get(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""), str)
        values[f.name] = convert(value, kind, where)
    if extra:
        if "extra" not in {f.name for f in dataclasses.fields(cls)}:
            raise ValueError(f"{owner}: unknown arguments {sorted(extra)}")
        values["extra"] = extra
    return cls(**values)


@dataclasses.dataclass(frozen=True)
class ValidateResult:
    """A JobValid failure: the job is not scheduled this session, and this is why."""
    reason: str
    message: str
