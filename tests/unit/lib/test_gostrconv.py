"""lib/gostrconv.py: Go's strconv.ParseFloat(s, 64) — what it accepts and the errors it gives."""
from __future__ import annotations

import math

import pytest

from vclite.lib import gostrconv


@pytest.mark.parametrize("text, value", [
    ("1", 1.0), ("-1", -1.0), ("+2.5", 2.5), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E-2", 0.01),
    ("0x1p-2", 0.25), ("0X1.8P1", 3.0), ("0x_1p0", 1.0), ("Inf", math.inf), ("-infinity", -math.inf),
])
def test_accepted(text: str, value: float) -> None:
    assert gostrconv.parse_float(text) == value


def test_nan() -> None:
    assert math.isnan(gostrconv.parse_float("NaN"))


@pytest.mark.parametrize("text, reason", [
    ("a", "invalid syntax"), ("", "invalid syntax"), (" 1", "invalid syntax"), ("1_000", "invalid syntax"),
    ("0x1", "invalid syntax"), ("0x1__0p0", "invalid syntax"), ("1e", "invalid syntax"), ("--1", "invalid syntax"),
    ("1e400", "value out of range"), ("-1e400", "value out of range"), ("0x1p99999", "value out of range"),
])
def test_refused(text: str, reason: str) -> None:
    with pytest.raises(gostrconv.NumError) as info:
        gostrconv.parse_float(text)
    assert str(info.value) == f'strconv.ParseFloat: parsing "{text}": {reason}'
