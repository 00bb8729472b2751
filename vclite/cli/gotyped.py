"""An object as Volcano's vcctl prints it after decoding it into a Go struct: `describe` output.

Volcano's `vcctl jobflow describe` / `jobtemplate describe` decode the API's JSON into Go types and
marshal them again (encoding/json, or sigs.k8s.io/yaml over it). That changes the object:

* a field the Go type does not have is dropped (a `Struct` with `keep_unknown` keeps them after its own);
* a field absent from the JSON takes its Go zero value, and is printed unless its tag says `omitempty`
  (or `omitzero`) and the value is empty: a `metav1.Time` struct is never "empty" to `omitempty`, so an
  unset one prints as `null` (`endTimestamp: null`); a plain struct prints as `{}`;
* struct fields come in the struct's order, map keys sorted (JSON); YAML keys are all sorted.

A type is described by the small nodes below (`Struct`, `Ptr`, `Slice`, `Map`, scalars); `marshal`
applies one to a JSON value, `mismatch` finds where the value could not be decoded into it (the field the Go
decoder's error names: a status that is a string, a list that is an object, a word where a number goes).
`go_yaml` writes the result as sigs.k8s.io/yaml does (go-yaml v2's key order and quoting). Pure functions.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Iterable, Union

import yaml

from vclite.api import quantity, yamlio
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Scalar:
    """A Go string, integer, float or bool: `zero` is its zero value, `go` its type's name in the decoder's errors
    (`int32`, `v1alpha1.Phase`: a named string type)."""
    zero: Any
    go: str = ""


STR, INT, BOOL = Scalar("", "string"), Scalar(0, "int32"), Scalar(False, "bool")
INT64 = Scalar(0, "int64")


@dataclasses.dataclass(frozen=True)
class Time:
    """metav1.Time: a struct whose zero value marshals as null."""


TIME = Time()


@dataclasses.dataclass(frozen=True)
class Raw:
    """A value kept as the API wrote it (a type vclite does not model field by field)."""


RAW = Raw()


@dataclasses.dataclass(frozen=True)
class Quantity:
    """resource.Quantity: read from a string or a number, written as Quantity.String() (`cpu: 1` reads `"1"`,
    `1024Mi` reads `1Gi`, `1.5` reads `1500m`); a value that is no quantity as written (Go could not decode it)."""


QUANTITY = Quantity()


@dataclasses.dataclass(frozen=True)
class Ptr:
    to: "GoType"


@dataclasses.dataclass(frozen=True)
class Slice:
    of: "GoType"


@dataclasses.dataclass(frozen=True)
class Map:
    """map[string]<of>: encoding/json writes its keys sorted."""
    of: "GoType"


# omit: "" (always printed), "empty" (`omitempty`), "zero" (`omitzero`)
Field = tuple[str, "GoType", str]


@dataclasses.dataclass(frozen=True)
class Struct:
    """A Go struct: its JSON fields in declaration order. With `keep_unknown`, fields it does not name
    are kept after its own (for types vclite lists only partly, as a pod's spec)."""
    fields: tuple[Field, ...]
    keep_unknown: bool = False
    go: str = "struct"   # its type's name in the decoder's errors (`v1alpha1.JobStatus`)


GoType = Union[Scalar, Time, Raw, Quantity, Ptr, Slice, Map, Struct]

_OMIT = object()


def fields(text: str, **types: GoType) -> tuple[Field, ...]:
    """Fields from a compact list: `"name uid! creationTimestamp~ labels"` — a plain name is `omitempty`,
    `!` marks a field without it, `~` one with `omitzero`. A field's type is `types[name]`, else STR."""
    out = []
    for word in text.split():
        omit = {"!": "", "~": "zero"}.get(word[-1], "empty")
        name = word.rstrip("!~")
        out.append((name, types.get(name, STR), omit))
    return tuple(out)


def marshal(value: Any, typ: GoType) -> Any:
    """`value` (decoded JSON) as encoding/json writes it after decoding it into `typ`."""
    out = _field(value, typ, "")
    return None if out is _OMIT else out


def _field(value: Any, typ: GoType, omit: str) -> Any:
    if isinstance(typ, Struct):
        return _struct(value if isinstance(value, dict) else {}, typ)
    if isinstance(typ, Time):
        if value in (None, ""):
            return _OMIT if omit == "zero" else None
        return value
    if isinstance(typ, Scalar):
        if value is None:
            value = typ.zero
        if omit and value == typ.zero and type(value) is type(typ.zero):
            return _OMIT
        return value
    if isinstance(typ, Quantity):
        return _quantity(value)
    if value is None:                                   # a nil pointer, slice or map
        return _OMIT if omit else None
    if isinstance(typ, Ptr):
        return _field(value, typ.to, "")
    if isinstance(typ, Slice):
        if omit == "empty" and not value:
            return _OMIT
        return [_field(v, typ.of, "") for v in value] if isinstance(value, list) else value
    if isinstance(typ, Map):
        if omit == "empty" and not value:
            return _OMIT
        if not isinstance(value, dict):
            return value
        return {k: _field(value[k], typ.of, "") for k in sorted(value, key=_go_bytes)}
    return value                                        # RAW: as written


def _quantity(value: Any) -> Any:
    if value is None:
        return "0"   # (a null decodes to the zero Quantity)
    try:
        return quantity.canonical(value)
    except ValueError:
        return value


def _struct(value: Obj, typ: Struct) -> Obj:
    out: Obj = {}
    for name, ftype, omit in typ.fields:
        got = _field(value.get(name), ftype, omit)
        if got is not _OMIT:
            out[name] = got
    if typ.keep_unknown:
        known = {name for name, _, _ in typ.fields}
        out.update((k, v) for k, v in value.items() if k not in known)
    return out


# ---- what the Go decoder refuses ---------------------------------------------------------------------
QUANTITY_WORDS = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_INT_RANGE = {"int32": 1 << 31, "int64": 1 << 63}


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """Where a JSON value could not be decoded into a Go type: the field's path (Go's error names no list index or
    map key), the value found there and the Go type's name; `words`: an UnmarshalJSON's own error (a Quantity's)."""
    path: tuple[str, ...]
    value: Any
    go_type: str
    words: str = ""


def time_words(text: Any) -> str:
    """metav1.Time's error for a text that is no RFC 3339 time (time.Parse's words)."""
    quoted = json.dumps(str(text))
    return f'parsing time {quoted} as "2006-01-02T15:04:05Z07:00": cannot parse {quoted} as a time'


def go_name(typ: GoType) -> str:
    """The Go type's name as the decoder's errors print it."""
    if isinstance(typ, (Scalar, Struct)):
        return typ.go
    if isinstance(typ, Time):
        return "v1.Time"
    if isinstance(typ, Quantity):
        return "resource.Quantity"
    if isinstance(typ, Ptr):
        return go_name(typ.to)   # (the decoder allocates the pointer and reports its element)
    if isinstance(typ, Slice):
        return "[]" + go_name(typ.of)
    if isinstance(typ, Map):
        return "map[string]" + go_name(typ.of)
    return "interface {}"


def mismatch(value: Any, typ: GoType, path: tuple[str, ...] = (),
             holes: re.Pattern[str] | None = None) -> Mismatch | None:
    """The first place (in the JSON's order, as the decoder reads it) where `value` does not decode into `typ`, or
    None. A null decodes into anything; fields the type does not have are skipped; RAW is not looked into.
    `holes`: a string it matches stands for any scalar, quantity or time (a JobTemplate's or a flow patch's
    `replicas: "{{params.n}}"`, which vclite's CRDs type int-or-string: filled in when a flow makes the vcjob)."""
    if value is None or isinstance(typ, Raw):
        return None
    if isinstance(typ, Ptr):
        return mismatch(value, typ.to, path, holes)
    if isinstance(typ, Struct):
        if not isinstance(value, dict):
            return Mismatch(path, value, typ.go)
        types = {name: ftype for name, ftype, _ in typ.fields}
        for key, item in value.items():
            if key in types and (found := mismatch(item, types[key], path + (key,), holes)):
                return found
        return None
    if isinstance(typ, (Slice, Map)):
        if not isinstance(value, list if isinstance(typ, Slice) else dict):
            return Mismatch(path, value, go_name(typ))
        for item in value if isinstance(value, list) else value.values():
            if found := mismatch(item, typ.of, path, holes):
                return found
        return None
    if holes is not None and isinstance(value, str) and holes.search(value):
        return None
    if isinstance(typ, Quantity):
        try:
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise ValueError(value)
            quantity.canonical(value)
        except ValueError:
            return Mismatch(path, value, go_name(typ), QUANTITY_WORDS)
        return None
    if isinstance(typ, Time):
        if not isinstance(value, str):
            return Mismatch(path, value, go_name(typ))
        try:
            clock_mod.parse_time(value)
        except ValueError:
            return Mismatch(path, value, go_name(typ), time_words(value))
        return None
    return None if _scalar_fits(value, typ) else Mismatch(path, value, typ.go)


def _scalar_fits(value: Any, typ: Scalar) -> bool:
    if isinstance(typ.zero, bool):
        return isinstance(value, bool)
    if isinstance(typ.zero, str):
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(typ.zero, float):
        return True
    if isinstance(value, float) and not value.is_integer():
        return False
    bound = _INT_RANGE.get(typ.go, 1 << 63)
    return -bound <= int(value) < bound


def _go_bytes(key: str) -> bytes:
    return key.encode("utf-8", "surrogatepass")


# ---- sigs.k8s.io/yaml ------------------------------------------------------------------------------
def _go_yaml_less(a: str, b: str) -> bool:
    """go-yaml v2's order of map keys (sorter.go): a letter sorts after any other character, and runs of
    digits compare as numbers (`f-2` before `f-10`)."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an, ai = an * 10 + int(a[ai]), ai + 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn, bi = bn * 10 + int(b[bi]), bi + 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


class _Key(str):
    def __lt__(self, other: str) -> bool:    # type: ignore[override]
        return _go_yaml_less(self, other)


def go_sorted(keys: Iterable[str]) -> list[str]:
    return [str(k) for k in sorted(_Key(k) for k in keys)]


def _sorted_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_deep(value[k]) for k in go_sorted(value)}
    if isinstance(value, list):
        return [_sorted_deep(v) for v in value]
    return value


_DATE = r"\d{4}-\d{1,2}-\d{1,2}"
_CLOCK = r"\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?"
_TIMESTAMP = re.compile(rf"{_DATE}|{_DATE}[Tt]{_CLOCK}(Z|[+-]\d{{2}}:\d{{2}})|{_DATE} {_CLOCK}")   # parseTimestamp


def _reads_as_other_type(text: str) -> bool:
    """go-yaml v2 would read the plain scalar as something else than this string (a number, bool, null,
    timestamp): it writes such a string double-quoted."""
    if text == "" or _TIMESTAMP.fullmatch(text):
        return True
    for tag, rx in IMPLICIT_RESOLVERS.get(text[:1], []):
        if tag != "tag:yaml.org,2002:str" and rx.match(text):
            return True
    return False


IMPLICIT_RESOLVERS = yamlio.IMPLICIT_RESOLVERS


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else '"' if _reads_as_other_type(data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=style)


class _GoYamlDumper(yaml.SafeDumper):
    """go-yaml v2 as sigs.k8s.io/yaml drives it: block style, lists not indented under their key, a
    string with a newline as a `|` block, one that would read as another type double-quoted (other
    strings that cannot be plain single-quoted, as libyaml's emitter chooses)."""

    yaml_representers = {**yaml.SafeDumper.yaml_representers, str: _represent_str}
    yaml_multi_representers = {**yaml.SafeDumper.yaml_multi_representers, str: _represent_str}
    yaml_implicit_resolvers = IMPLICIT_RESOLVERS

    def ignore_aliases(self, data: Any) -> bool:
        return True


def go_yaml(obj: Any) -> str:
    """sigs.k8s.io/yaml.Marshal of a JSON value: keys sorted as go-yaml v2 sorts them."""
    return yaml.dump(_sorted_deep(obj), Dumper=_GoYamlDumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 30)
