"""Actions Volcano's default configurations name that vclite accepts but does not run yet.

None at the moment: every action Volcano has is implemented (`preempt`, `reclaim`: preempt.py,
reclaim.py; `gangpreempt`, `gangreclaim`: gangpreempt.py, gangreclaim.py).
An action added here must be a no-op, so that Volcano configurations naming it load unchanged.

Must not: do anything.
"""
from __future__ import annotations

ACTIONS: tuple[type, ...] = ()
