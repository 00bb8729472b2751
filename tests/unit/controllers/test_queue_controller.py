"""The queue controller's state table (Volcano's pkg/controllers/queue/state: open.go, closed.go,
closing.go, unknown.go), every state × action × whether PodGroups are left in the queue."""
from __future__ import annotations

import pytest

from vclite.controllers import queue

SYNC, OPEN, CLOSE = queue.Op.SYNC, queue.Op.OPEN, queue.Op.CLOSE

CASES = [
    # state,    action,        podgroups left, (operation, new state)
    ("",        "SyncQueue",   False, (SYNC, "Open")),
    ("",        "SyncQueue",   True,  (SYNC, "Open")),
    ("",        "OpenQueue",   True,  (SYNC, "Open")),
    ("",        "CloseQueue",  False, (CLOSE, "Closed")),
    ("",        "CloseQueue",  True,  (CLOSE, "Closing")),
    ("Open",    "SyncQueue",   True,  (SYNC, "Open")),
    ("Open",    "OpenQueue",   False, (SYNC, "Open")),
    ("Open",    "CloseQueue",  False, (CLOSE, "Closed")),
    ("Open",    "CloseQueue",  True,  (CLOSE, "Closing")),
    ("Open",    "RestartJob",  True,  (SYNC, "Open")),        # any other action: a sync
    ("Closed",  "SyncQueue",   True,  (SYNC, "Closed")),      # Closed stays Closed, even with PodGroups
    ("Closed",  "OpenQueue",   True,  (OPEN, "Open")),
    ("Closed",  "CloseQueue",  True,  (SYNC, "Closed")),
    ("Closing", "SyncQueue",   True,  (SYNC, "Closing")),
    ("Closing", "SyncQueue",   False, (SYNC, "Closed")),      # the last PodGroup went: Closed
    ("Closing", "OpenQueue",   True,  (OPEN, "Open")),
    ("Closing", "CloseQueue",  True,  (SYNC, "Closing")),
    ("Closing", "CloseQueue",  False, (SYNC, "Closed")),
    ("Unknown", "SyncQueue",   False, (SYNC, "Unknown")),
    ("Unknown", "OpenQueue",   True,  (OPEN, "Open")),
    ("Unknown", "CloseQueue",  True,  (CLOSE, "Closing")),
    ("Unknown", "CloseQueue",  False, (CLOSE, "Closed")),
    ("Paused",  "SyncQueue",   False, None),                  # a state Volcano does not know
]


@pytest.mark.parametrize("state, action, podgroups, expected", CASES,
                         ids=[f"{c[0] or 'none'}-{c[1]}-{'pgs' if c[2] else 'empty'}" for c in CASES])
def test_decide(state, action, podgroups, expected):
    assert queue.decide(state, action, podgroups) == expected
