"""Reading an Enum member (`TaskStatus.PENDING`) at the speed of a plain class attribute on Python 3.11.

Python 3.11's `EnumType` defines `__getattr__`, and any metaclass that does makes every attribute read of its
classes take CPython's slow path (a Python-level hook wrapped around the lookup): about 0.15 µs and 800
instructions a read, where a plain class attribute costs a fifth of that. vclite's hot paths compare with enum
members everywhere (a chain job reads some 870 of them: about 3 % of its instructions). Since 3.11 every member
is in its class's `__dict__` (or a redirecting `enum.property` that finds it in `_member_map_` itself), so the hook
only ever runs for names that do not exist, to raise AttributeError; Python 3.12 removed it for that reason
(gh-95083: "no longer needed for enum attribute access"). `install()` does the same for this process, once, at
vclite's import; on 3.12 and later there is nothing to remove. Process-wide: the only code in a vclite process is
vclite's and its libraries' (pods run in processes of their own).
"""
from __future__ import annotations

import enum


def install() -> bool:
    """Remove `EnumType.__getattr__` where Python still has it (3.11). True if it was removed now."""
    if "__getattr__" not in vars(enum.EnumType):
        return False
    del enum.EnumType.__getattr__
    return True
