"""lib/enumspeed.py: with EnumType.__getattr__ gone (as Python 3.12 removed it), every way vclite and its libraries
read an Enum still gives what Python 3.11's own Enum gives, and a member read no longer takes the slow path."""
from __future__ import annotations

import enum
import subprocess
import sys

import pytest

import vclite  # noqa: F401  (installs it)
from vclite.lib import enumspeed


class Phase(str, enum.Enum):
    PENDING = "Pending"
    RUNNING = "Running"


class Clash(enum.Enum):   # members named as Enum's own properties: reached through enum.property
    name = 1
    value = 2


class Perm(enum.Flag):
    R = 1
    W = 2


class Aliased(enum.IntEnum):
    ONE = 1
    UNO = 1


@pytest.mark.parametrize("read, expected", [
    pytest.param(lambda: Phase.PENDING, Phase("Pending"), id="member"),
    pytest.param(lambda: Phase["RUNNING"], Phase.RUNNING, id="by-name"),
    pytest.param(lambda: Phase.PENDING == "Pending", True, id="str-mixin-equality"),
    pytest.param(lambda: (Phase.PENDING.name, Phase.PENDING.value), ("PENDING", "Pending"), id="name-and-value"),
    pytest.param(lambda: (Clash.name.value, Clash.value.name), (1, "value"), id="members-named-name-and-value"),
    pytest.param(lambda: Perm.R | Perm.W, Perm(3), id="flag"),
    pytest.param(lambda: Aliased.UNO is Aliased.ONE, True, id="alias"),
    pytest.param(lambda: list(Phase), [Phase.PENDING, Phase.RUNNING], id="iteration"),
    pytest.param(lambda: Phase.__members__["RUNNING"], Phase.RUNNING, id="members-mapping"),
])
def test_enums_read_as_before(read, expected):
    assert read() == expected


@pytest.mark.parametrize("read", [lambda: Phase.NOPE, lambda: Phase.__nope__, lambda: Clash.other])
def test_a_missing_name_is_still_an_attribute_error(read):
    with pytest.raises(AttributeError):
        read()


def test_the_hook_is_gone_once_vclite_is_imported():
    assert "__getattr__" not in vars(enum.EnumType)
    assert enumspeed.install() is False   # (already done: a second call changes nothing)


def test_plain_python_has_the_hook_until_vclite_is_imported():
    """On Python 3.11 a fresh interpreter has EnumType.__getattr__ (what install removes); 3.12 has none."""
    code = ("import enum; had = '__getattr__' in vars(enum.EnumType); import vclite; "
            "print(had, '__getattr__' in vars(enum.EnumType))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(sys.version_info < (3, 12)), "False"], out
