"""vclite: Volcano's batch system (vcjobs, queues, podgroups, the gang scheduler) and JobFlow, in Python.

Layers (imports point down only; enforced by tests/unit/test_layers.py):
cli -> runtime -> controllers | scheduler | executor -> apiserver -> admission -> store -> api -> lib
"""
__version__ = "0.1.0"

from vclite.lib import enumspeed as _enumspeed

_enumspeed.install()   # (Enum member reads at plain attribute speed on Python 3.11: lib/enumspeed.py)
