"""Go's strconv.ParseFloat(s, 64), for the checks that quote its result or its error in Volcano's words.

Accepted as Go accepts them: an optional sign; decimal digits with an optional point and exponent;
hexadecimal floats (`0x1.8p3`, the `p` exponent required); `_` between digits only in a hexadecimal
float; `inf`, `infinity` (signed) and `nan`, in any case. No surrounding spaces. A finite number too
large for a float64 gives ±Inf and a "value out of range" error, as Go. Pure.
"""
from __future__ import annotations

import json
import math
import re

_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_HEX = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+))[pP]([+-]?\d+)")
_SPECIAL = re.compile(r"[+-]?(inf|infinity)|nan", re.IGNORECASE)


class NumError(ValueError):
    """strconv.NumError: its text is Go's (`strconv.ParseFloat: parsing "a": invalid syntax`)."""

    def __init__(self, text: str, reason: str):
        super().__init__(f"strconv.ParseFloat: parsing {json.dumps(text, ensure_ascii=False)}: {reason}")


def _hex_underscores_ok(digits: str) -> bool:
    """Go's underscoreOK: `_` only between digits (or after the base prefix)."""
    body = digits.replace(".", "")
    return "__" not in body and not body.endswith("_") and "._" not in digits and "_." not in digits


def parse_float(text: str) -> float:
    """The float64 Go's ParseFloat gives for `text`; NumError where Go returns an error."""
    if _SPECIAL.fullmatch(text):
        return float(text)
    hexed = _HEX.fullmatch(text)
    if hexed:
        sign, digits, exponent = hexed.groups()
        if not _hex_underscores_ok(digits) or not digits.replace("_", "").replace(".", ""):
            raise NumError(text, "invalid syntax")
        mantissa = digits.replace("_", "")
        try:
            value = float.fromhex(f"{sign}0x{mantissa}p{exponent}")
        except OverflowError:
            raise NumError(text, "value out of range") from None
    elif _DECIMAL.fullmatch(text):
        value = float(text)
    else:
        raise NumError(text, "invalid syntax")
    if math.isinf(value):
        raise NumError(text, "value out of range")
    return value
