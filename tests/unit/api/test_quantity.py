"""Quantities: parsing every accepted form exactly, rejecting junk by name, formatting back."""
from __future__ import annotations

import fractions
import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vclite.api import quantity

F = fractions.Fraction


@pytest.mark.parametrize("text, want", [
    pytest.param("2", F(2), id="integer"),
    pytest.param("0", F(0), id="zero"),
    pytest.param("0.5", F(1, 2), id="decimal"),
    pytest.param(".5", F(1, 2), id="leading-dot"),
    pytest.param("5.", F(5), id="trailing-dot"),
    pytest.param("1e3", F(1000), id="exponent"),
    pytest.param("1E3", F(1000), id="exponent-upper"),
    pytest.param("1.5e-3", F(3, 2000), id="negative-exponent"),
    pytest.param("2e+2", F(200), id="plus-exponent"),
    pytest.param("100n", F(1, 10**7), id="nano"),
    pytest.param("3u", F(3, 10**6), id="micro"),
    pytest.param("500m", F(1, 2), id="milli"),
    pytest.param("1500m", F(3, 2), id="milli-over-one"),
    pytest.param("2k", F(2000), id="kilo"),
    pytest.param("2M", F(2 * 10**6), id="mega"),
    pytest.param("2G", F(2 * 10**9), id="giga"),
    pytest.param("1T", F(10**12), id="tera"),
    pytest.param("1P", F(10**15), id="peta"),
    pytest.param("1E", F(10**18), id="exa-suffix-not-exponent"),
    pytest.param("1Ki", F(1024), id="kibi"),
    pytest.param("1Mi", F(2**20), id="mebi"),
    pytest.param("1Gi", F(2**30), id="gibi"),
    pytest.param("1.5Gi", F(3 * 2**29), id="fractional-gibi"),
    pytest.param("1Ti", F(2**40), id="tebi"),
    pytest.param("1Pi", F(2**50), id="pebi"),
    pytest.param("1Ei", F(2**60), id="exbi"),
    pytest.param("-1", F(-1), id="negative"),
    pytest.param("+250m", F(1, 4), id="explicit-plus"),
    pytest.param("-0.5Gi", F(-(2**29)), id="negative-binary"),
    pytest.param(" 1 ", F(1), id="surrounding-space-trimmed"),
    pytest.param("0.1", F(1, 10), id="exact-tenth"),
])
def test_parse_strings(text, want):
    assert quantity.parse(text) == want


@pytest.mark.parametrize("value, want", [
    pytest.param(2, F(2), id="int"),
    pytest.param(0.5, F(1, 2), id="float"),
    pytest.param(0.1, F(1, 10), id="float-decimal-not-binary"),
    pytest.param(-3, F(-3), id="negative-int"),
    pytest.param(F(1, 3), F(1, 3), id="fraction-passes-through"),
])
def test_parse_numbers(value, want):
    assert quantity.parse(value) == want


@pytest.mark.parametrize("value", [
    pytest.param("1.5.5", id="two-dots"),
    pytest.param("2GB", id="unknown-suffix"),
    pytest.param("", id="empty"),
    pytest.param("abc", id="letters"),
    pytest.param("1K", id="capital-k"),
    pytest.param("1ki", id="lowercase-binary"),
    pytest.param("1e", id="exponent-without-digits"),
    pytest.param("1e1.5", id="fractional-exponent"),
    pytest.param(".", id="dot-only"),
    pytest.param("--1", id="double-sign"),
    pytest.param("1 Gi", id="inner-space"),
    pytest.param("1Gi\n2", id="newline"),
    pytest.param("١", id="non-ascii-digit"),
    pytest.param("1_000", id="underscore"),
    pytest.param("1e99999", id="exponent-too-large"),
])
def test_parse_rejects_junk_strings(value):
    with pytest.raises(ValueError) as e:
        quantity.parse(value)
    assert f"invalid quantity {json.dumps(value, ensure_ascii=False)}" in str(e.value)


@pytest.mark.parametrize("value, shown", [
    pytest.param(None, "null", id="none"),
    pytest.param(True, "true", id="bool"),
    pytest.param(float("nan"), "NaN", id="nan"),
    pytest.param(float("inf"), "Infinity", id="inf"),
    pytest.param([1], "[1]", id="list"),
])
def test_parse_rejects_non_quantities(value, shown):
    """The message shows the value as the manifest wrote it (YAML/JSON), never Python's repr."""
    with pytest.raises(ValueError, match=f"invalid quantity {re.escape(shown)}: "):
        quantity.parse(value)


def test_parse_error_names_kubernetes_pattern():
    with pytest.raises(ValueError, match="quantities must match the regular expression"):
        quantity.parse("2GB")


@pytest.mark.parametrize("value, resource, want", [
    pytest.param(F(2), "cpu", "2", id="cpu-whole"),
    pytest.param(F(1, 2), "cpu", "500m", id="cpu-milli"),
    pytest.param(F(3, 2), "cpu", "1500m", id="cpu-milli-over-one"),
    pytest.param(F(1, 10**4), "cpu", "100u", id="cpu-micro"),
    pytest.param(F(1, 3), "cpu", "333333334n", id="cpu-rounds-up-to-nano"),
    pytest.param(F(0), "cpu", "0", id="cpu-zero"),
    pytest.param(F(-1, 4), "cpu", "-250m", id="cpu-negative"),
    pytest.param(F(2**30), "memory", "1Gi", id="memory-gibi"),
    pytest.param(F(3 * 2**29), "memory", "1536Mi", id="memory-not-whole-gibi"),
    pytest.param(F(2**10), "memory", "1Ki", id="memory-kibi"),
    pytest.param(F(2**60), "memory", "1Ei", id="memory-exbi"),
    pytest.param(F(1001), "memory", "1001", id="memory-bytes"),
    pytest.param(F(1000), "memory", "1k", id="memory-decimal-kilo-shorter"),
    pytest.param(F(1024000), "memory", "1024k", id="memory-shortest-wins"),
    pytest.param(F(2**30 * 1000), "memory", "1000Gi", id="memory-binary-beats-longer-decimal"),
    pytest.param(F(2 * 10**9), "memory", "2G", id="memory-decimal-shorter-than-binary"),
    pytest.param(F(6 * 10**9 + 1), "memory", "6000000001", id="memory-odd-bytes"),
    pytest.param(F(0), "memory", "0", id="memory-zero"),
    pytest.param(F(1, 2), "memory", "500m", id="memory-fractional"),
    pytest.param(F(2**31), "ephemeral-storage", "2Gi", id="ephemeral-storage-binary"),
    pytest.param(F(2**21), "hugepages-2Mi", "2Mi", id="hugepages-binary"),
    pytest.param(F(1), "pods", "1", id="pods"),
    pytest.param(F(1024), "pods", "1024", id="pods-never-binary"),
    pytest.param(F(4), "nvidia.com/gpu", "4", id="extended"),
    pytest.param(F(1, 2), "nvidia.com/gpu", "500m", id="extended-fractional"),
])
def test_format(value, resource, want):
    assert quantity.format(value, resource) == want


def test_format_accepts_kind_keyword_alias():
    assert quantity.format(F(2**30), kind="memory") == "1Gi"


@pytest.mark.parametrize("value, milli, whole", [
    pytest.param("500m", 500, 1, id="half"),
    pytest.param("2", 2000, 2, id="two"),
    pytest.param("1n", 1, 1, id="nano-rounds-up"),
    pytest.param("1Ki", 1024000, 1024, id="kibi"),
    pytest.param("0", 0, 0, id="zero"),
    pytest.param("-1500m", -1500, -1, id="negative-ceil"),
])
def test_to_milli_and_to_int_round_up(value, milli, whole):
    assert quantity.to_milli(value) == milli
    assert quantity.to_int(value) == whole


@pytest.mark.parametrize("value, ok", [
    pytest.param("1Gi", True, id="valid"),
    pytest.param("1GB", False, id="invalid"),
    pytest.param(None, False, id="none"),
])
def test_is_valid(value, ok):
    assert quantity.is_valid(value) is ok


@given(st.integers(min_value=-10**12, max_value=10**12))
def test_cpu_millicores_round_trip(milli):
    x = F(milli, 1000)
    assert quantity.parse(quantity.format(x, "cpu")) == x


@given(st.integers(min_value=-10**6, max_value=10**6), st.integers(min_value=0, max_value=6))
def test_binary_memory_round_trip(count, power):
    x = F(count * 1024**power)
    text = quantity.format(x, "memory")
    assert quantity.parse(text) == x
    if count and power:  # never longer than the binary form the value was built from
        assert len(text) <= len(f"{count}{['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][power]}")


@given(st.integers(min_value=0, max_value=10**18))
def test_memory_bytes_round_trip(n):
    assert quantity.parse(quantity.format(F(n), "memory")) == F(n)


# Kubernetes' Quantity.String() of a parsed value (what Volcano's vcctl prints): the notation it was written
# in, with the largest suffix or exponent that loses nothing; a text ParseQuantity's fast path keeps, as written.
@pytest.mark.parametrize("value, want", [
    pytest.param("1000m", "1", id="millicores-whole"),
    pytest.param("0.5", "500m", id="fraction-to-milli"),
    pytest.param("1.5", "1500m", id="fraction-over-one"),
    pytest.param("1500m", "1500m", id="already-canonical"),
    pytest.param("1024Mi", "1Gi", id="binary-up"),
    pytest.param("1.5Gi", "1536Mi", id="binary-fraction-down"),
    pytest.param("1025Ki", "1025Ki", id="binary-kept"),
    pytest.param("0.5Ki", "512", id="binary-under-1Ki-is-decimal"),
    pytest.param("1.1Ki", "1126400m", id="binary-not-whole-is-decimal"),
    pytest.param("10Ei", "9223372036854775807", id="binary-capped"),
    pytest.param("2000", "2k", id="decimal-up"),
    pytest.param("1200", "1200", id="decimal-no-exact-suffix"),
    pytest.param("1000000Ki", "1000000Ki", id="binary-stays-binary"),
    pytest.param("59762562.5Ki", "61196864000", id="binary-whole-but-not-of-1Ki"),   # (no suffix: not "61196864k")
    pytest.param("1e3", "1e3", id="exponent-kept"),
    pytest.param("1e4", "10e3", id="exponent-multiple-of-3"),
    pytest.param("1.5e3", "1500", id="exponent-zero-has-no-suffix"),
    pytest.param("1e100", "10e99", id="exponent-not-capped"),
    pytest.param("1e-10", "1e-9", id="exponent-rounded-up-to-nano"),
    pytest.param("1.5n", "2n", id="rounded-up-to-nano"),
    pytest.param("-1.5n", "-2n", id="negative-rounded-away-from-zero"),
    pytest.param("-1000m", "-1", id="negative"),
    pytest.param("0", "0", id="zero"),
    pytest.param("0Mi", "0", id="zero-binary"),
    pytest.param("-0.0", "0", id="negative-zero"),
    pytest.param(" 2 ", "2", id="spaces-trimmed"),
    pytest.param("1.500", "1.500", id="fast-path-keeps-the-text"),
    pytest.param("+1", "+1", id="fast-path-keeps-the-sign"),
    pytest.param("01", "01", id="fast-path-keeps-leading-zeros"),
    pytest.param("12E3", "12E3", id="fast-path-keeps-upper-e"),
    pytest.param("1000E", "1e21", id="past-E-an-exponent-not-go's-bare-1"),
    pytest.param(1000, "1k", id="json-integer"),
    pytest.param(2, "2", id="json-small-integer"),
    pytest.param(0.5, "500m", id="json-float"),
    pytest.param(1000.0, "1k", id="json-whole-float"),
    pytest.param(1e20, "100e18", id="json-float-exponent"),
    # (from Kubernetes' quantity_test.go: TestQuantityString's alternates, TestQuantityParseEmit)
    pytest.param("0.001T", "1G", id="upstream-decimal-up"),
    pytest.param("1.08", "1080m", id="upstream-fraction"),
    pytest.param("1000e-12", "1e-9", id="upstream-exponent-up"),
    pytest.param(".001Ki", "1024m", id="upstream-binary-fraction"),
    pytest.param(".000000000001Ki", "2n", id="upstream-binary-rounded-up"),
    pytest.param("-307200Ki", "-300Mi", id="upstream-negative-binary"),
])
def test_canonical_as_kubernetes_prints_it(value, want):
    assert quantity.canonical(value) == want


@pytest.mark.parametrize("value, message", [
    pytest.param("1GB", "invalid quantity \"1GB\": quantities must match the regular expression", id="junk"),
    pytest.param("", "invalid quantity \"\"", id="empty"),
    pytest.param(True, "invalid quantity true: expected a string or a number", id="bool"),
    pytest.param(None, "invalid quantity null: expected a string or a number", id="null"),
    pytest.param([1], "invalid quantity [1]: expected a string or a number", id="list"),
])
def test_canonical_refuses_non_quantities_by_name(value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        quantity.canonical(value)


@given(st.integers(min_value=-10**9, max_value=10**9), st.integers(min_value=0, max_value=4),
       st.sampled_from(["", "n", "u", "m", "k", "M", "G", "Ki", "Mi", "Gi", "e2", "e-3"]))
def test_canonical_keeps_the_value_rounded_up_to_nano_units(digits, point, suffix):
    """(Binary values up to 1e9Gi: below the 2^63-1 cap.)"""
    whole, frac = divmod(abs(digits), 10**point)
    text = f"{'-' if digits < 0 else ''}{whole}{f'.{frac:0{point}d}' if point else ''}{suffix}"
    once, exact = quantity.canonical(text), quantity.parse(text)
    assert quantity.parse(once) == F(math.ceil(abs(exact) * 10**9), 10**9) * (1 if exact >= 0 else -1)
