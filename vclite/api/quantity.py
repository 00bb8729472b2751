"""Kubernetes resource quantities (`500m`, `2`, `1Gi`, `1e3`), held exactly as fractions.Fraction.

`parse` accepts what Kubernetes accepts (a signed decimal number with an optional decimal SI suffix
n u m "" k M G T P E, a binary suffix Ki Mi Gi Ti Pi Ei, or a decimal exponent e3 / E-2) and keeps
the exact value: no rounding to nano units as Kubernetes does, so sums and comparisons are exact.
`format` renders a value back in the form a user would write for the resource; `canonical` renders
it as Kubernetes' Quantity.String() does (what Go clients such as Volcano's vcctl print); `to_milli`
and `to_int` round up, as Kubernetes' MilliValue() and Value() do.
This module does no I/O and knows nothing of pods or resource lists (see resources.py).
"""
from __future__ import annotations

import fractions
import functools
import json
import math
import re

Fraction = fractions.Fraction

# Kubernetes' own wording names this expression in its error message.
K8S_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)"
    r"(?:(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?|\.(?P<frac_only>[0-9]+))"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exp>[+-]?[0-9]+))?",
    re.ASCII,
)

_MAX_EXPONENT = 1000  # guards against `1e999999999` building a gigantic integer

SUFFIXES: dict[str, Fraction] = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 10**3), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}
_BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")  # largest first
_DECIMAL = ("E", "P", "T", "G", "M", "k")
_SUB_UNIT = (("m", 10**3), ("u", 10**6), ("n", 10**9))
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def _invalid(value: object, why: str = "") -> ValueError:
    detail = why or f"quantities must match the regular expression '{K8S_PATTERN}'"
    return ValueError(f"invalid quantity {_show(value)}: {detail}")


def _show(value: object) -> str:
    """The value as the manifest wrote it (JSON: `"1x"`, `true`, `null`, `[1]`), not as Python prints it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def parse(value: str | int | float | Fraction) -> Fraction:
    """The exact value of a quantity. Raises ValueError naming the value when it is not one."""
    if type(value) is str:
        return _parse_str_cached(value)
    return _parse(value)


@functools.lru_cache(maxsize=4096)
def _parse_str_cached(value: str) -> Fraction:
    """Manifests repeat the same few quantities (`500m`, `1Gi`) thousands of times: memoised.
    Fractions are immutable, so sharing results is safe; errors are not cached."""
    return _parse(value)


def _parse(value: str | int | float | Fraction) -> Fraction:
    if isinstance(value, bool) or value is None:
        raise _invalid(value, "expected a string or a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(value, "must be a finite number")
        return Fraction(repr(value))  # 0.1 means one tenth, not the nearest binary float
    if not isinstance(value, str):
        raise _invalid(value, "expected a string or a number")
    m = _QUANTITY.fullmatch(value.strip())
    if m is None:
        raise _invalid(value)
    whole = m["int"] or "0"
    frac = m["frac"] or m["frac_only"] or ""
    number = Fraction(int(whole + frac), 10 ** len(frac))
    if m["exp"] is not None:
        exp = int(m["exp"])
        if abs(exp) > _MAX_EXPONENT:
            raise _invalid(value, f"exponent out of range (at most {_MAX_EXPONENT} either way)")
        number *= Fraction(10) ** exp
    else:
        number *= SUFFIXES[m["suffix"] or ""]
    return -number if m["sign"] == "-" else number


def is_valid(value: object) -> bool:
    """Whether `parse` would accept the value."""
    try:
        parse(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def format(value: Fraction | int | str, resource: str = "cpu", *, kind: str | None = None) -> str:
    """Render a quantity as a user writes it for `resource` (`kind=` is an accepted alias).

    cpu: whole cores as an integer (`2`), otherwise millicores (`500m`), finer if needed (`1500u`).
    memory / ephemeral-storage / storage / hugepages-*: whole bytes in the shortest exact form,
    preferring binary suffixes (`1Gi`, `1536Mi`), then decimal ones (`2G`, not `1953125Ki`), then
    plain bytes (`1001`). Anything else: an integer, or m/u/n when fractional.
    A value finer than a nano unit is rounded up to the next nano unit (as Kubernetes does).
    """
    v = parse(value)
    name = kind if kind is not None else resource
    if v.denominator == 1 and v != 0 and _is_bytes(name):
        n = v.numerator
        forms = [_with_suffix(n, suffix) for suffix in _BINARY + _DECIMAL] + [str(n)]
        return min((f for f in forms if f), key=len)  # shortest; ties: binary, then decimal SI
    return _decimal(v)


def _with_suffix(n: int, suffix: str) -> str:
    """`n` as a whole number of `suffix` units, or "" when it is not one."""
    unit = int(SUFFIXES[suffix])
    return f"{n // unit}{suffix}" if n % unit == 0 else ""


def _is_bytes(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def _decimal(v: Fraction) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    for suffix, scale in _SUB_UNIT:
        scaled = v * scale
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return f"{math.ceil(v * 10**9)}n"


# ---- Kubernetes' canonical form (resource.Quantity.String()) ---------------------------------------

_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_DECIMAL_EXPONENTS = {suffix: exponent for exponent, suffix in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_INT64_MAX = 2**63 - 1
_NANO = 10**9


def canonical(value: str | int | float) -> str:
    """The quantity as Kubernetes' Quantity.String() prints it once a Go client has read it from JSON
    (a number as the JSON text vclite writes for it): in the notation it was written in (a binary
    suffix, a decimal one, or an exponent), with the largest suffix or exponent that loses nothing:
    `1000m` -> `1`, `0.5` -> `500m`, `1.5Gi` -> `1536Mi`, `1024Mi` -> `1Gi`, `1e4` -> `10e3`, a number
    1000 -> `1k`; binary values under 1Ki, or not whole, in decimal (`0.5Ki` -> `512`); finer than
    nano units rounded up (`1.5n` -> `2n`); binary ones capped at 2^63-1. A text Kubernetes' parser
    keeps as written is printed as written (`1.500`, `+1`, `12E3`: its fast path), as Go does. One
    difference: a decimal value past the E suffix is printed with an exponent (`1000E` -> `1e21`),
    where Go prints the mantissa alone (`1`). ValueError (parse's) when it is no quantity."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _invalid(value, "expected a string or a number")
    text = value.strip() if isinstance(value, str) else _show(value)
    v, m = parse(text), _QUANTITY.fullmatch(text)
    if m is None:
        raise _invalid(value)
    if _kept_as_written(m):
        return text
    binary = m["suffix"] in _BINARY
    magnitude = Fraction(math.ceil(abs(v) * _NANO), _NANO)   # (rounded up to nano units, away from zero)
    if binary:
        magnitude = min(magnitude, Fraction(_INT64_MAX))
    sign = "-" if v < 0 and magnitude else ""
    if magnitude == 0:
        return "0"
    if binary and magnitude >= 1024 and magnitude.denominator == 1:
        n, power = magnitude.numerator, 0
        while n % 1024 == 0:
            n, power = n // 1024, power + 1
        return f"{sign}{n}{_BINARY_SUFFIXES[power]}"
    n, exponent = (magnitude * _NANO).numerator, -9   # (a whole number of nano units)
    while n % 10 == 0:
        n, exponent = n // 10, exponent + 1
    n, exponent = n * 10 ** (exponent % 3), exponent - exponent % 3
    if m["exp"] is not None or exponent not in _DECIMAL_SUFFIXES:
        return f"{sign}{n}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{n}{_DECIMAL_SUFFIXES[exponent]}"


def _kept_as_written(m: re.Match) -> bool:
    """Whether Kubernetes' ParseQuantity keeps the text it parsed as its String(): its int64 fast path, for a
    decimal text of at most 18 digits whose exponent is a multiple of 3 and whose digits do not end in 000,
    or a binary one of a whole number that is no multiple of 8 (so `1.500`, `+1`, `01`, `12E3` stay as written)."""
    num, denom = (m["int"] or "").lstrip("0") or "0", m["frac"] or m["frac_only"] or ""
    if m["suffix"] in _BINARY:
        exponent = _BINARY_SUFFIXES.index(m["suffix"]) * 10
        precision = 15 - len(num) - exponent * 3 // 10 - 1
        return (precision >= 0 and not denom and int(num) << exponent <= _INT64_MAX
                and int(num) & 0x07 != 0)
    exponent = int(m["exp"]) if m["exp"] is not None else _DECIMAL_EXPONENTS[m["suffix"] or ""]
    shifted, scale = num + denom, exponent - len(denom)
    return (len(shifted) <= 18 and scale >= -9 and scale % 3 == 0 and not shifted.endswith("000")
            and shifted[0] != "0")


def to_milli(value: Fraction | int | str) -> int:
    """The value in thousandths, rounded up (Kubernetes MilliValue): `0.5` -> 500, `1n` -> 1."""
    return math.ceil(parse(value) * 1000)


def to_int(value: Fraction | int | str) -> int:
    """The value as an integer, rounded up (Kubernetes Value): `500m` -> 1, `1Ki` -> 1024."""
    return math.ceil(parse(value))
