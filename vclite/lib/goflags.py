"""Go's `flag` package, as Volcano's job plugins parse their arguments (`flag.ContinueOnError`).

`parse(args, defaults)`: `defaults` maps each flag name to its default, whose type (bool, int, str)
is the flag's type. Accepted forms: `-name`, `--name`, `-name=value`, and `-name value` for a
non-bool flag. Parsing stops at the first argument that is not a flag (or after `--`), and at the
first error — an unknown flag, a bad value, a missing value —, as Go's FlagSet.Parse does: flags
parsed before it keep their values, the others their defaults (Volcano logs the error and goes on).
Returns the values and the error text ("" when none). Pure.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))


def _convert(kind: type, text: str) -> Any:
    if kind is bool:
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"parse error: invalid boolean {text!r}")
    if kind is int:
        return _go_int(text)
    return text


def _go_int(text: str) -> int:
    """strconv.ParseInt(text, 0, 64): an optional sign, then 0x / 0o / 0b / a leading 0 (octal) or
    decimal digits; underscores only between digits after a base prefix; nothing else (no spaces)."""
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    base = 10
    if digits[:2].lower() in ("0x", "0o", "0b"):
        base, digits = {"x": 16, "o": 8, "b": 2}[digits[1].lower()], digits[2:]
    elif len(digits) > 1 and digits[0] == "0":
        base, digits = 8, digits[1:]
    underscores_ok = base != 10
    if not digits or not all(c.isascii() and (c.isalnum() or (c == "_" and underscores_ok)) for c in digits) \
            or digits.startswith("_") or digits.endswith("_") or "__" in digits:
        raise ValueError(f"parse error: invalid integer {text!r}")
    try:
        return sign * int(digits.replace("_", ""), base)
    except ValueError:
        raise ValueError(f"parse error: invalid integer {text!r}") from None


def parse(args: Iterable[Any], defaults: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    values = dict(defaults)
    rest = [str(a) for a in args]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if len(arg) < 2 or arg[0] != "-":
            break
        if arg == "--":
            break
        name = arg[2:] if arg.startswith("--") else arg[1:]
        if not name or name[0] in "-=":
            return values, f"bad flag syntax: {arg}"
        name, has_value, value = name.partition("=")
        if name not in defaults:
            return values, f"flag provided but not defined: -{name}"
        kind = type(defaults[name])
        if not has_value and kind is not bool:
            if i + 1 >= len(rest):
                return values, f"flag needs an argument: -{name}"
            i += 1
            value, has_value = rest[i], "="
        try:
            values[name] = _convert(kind, value) if has_value else True
        except ValueError as exc:
            return values, f"invalid value {value!r} for flag -{name}: {exc}"
        i += 1
    return values, ""
