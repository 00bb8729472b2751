"""A detector for changes made to objects the store shares (client-go's cache mutation detector).

The store hands out its own objects where a copy would be waste: watch events, and the results of
writes through the in-process client. Those are read-only; a component that changed one would
change the store behind its back (no resourceVersion, no watch event, no admission). With the
detector on, the store seals every object it keeps (a deep copy) and checks the seal when
the object is replaced, deleted or delivered, and whenever `check_all` runs: a changed object
raises SharedObjectMutated naming it. Off by default (a copy per write); the test suite
turns it on for every store with VCLITE_CHECK_MUTATIONS=1 and sweeps all of them after each test.
"""
from __future__ import annotations

import os
import weakref
from typing import Any, Hashable

from vclite.lib import jsoncopy

ENV = "VCLITE_CHECK_MUTATIONS"
_live: "weakref.WeakSet[Detector]" = weakref.WeakSet()


class SharedObjectMutated(AssertionError):
    """A component changed an object the store shares (read-only by contract)."""


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


class Detector:
    def __init__(self) -> None:
        self._sealed: dict[Hashable, tuple[Any, Any]] = {}   # key -> (stored object, its copy)
        _live.add(self)

    def seal(self, key: Hashable, obj: Any) -> None:
        self._sealed[key] = (obj, jsoncopy.deep_copy(obj))

    def check(self, key: Hashable) -> None:
        entry = self._sealed.get(key)
        if entry is not None and entry[0] != entry[1]:
            raise SharedObjectMutated(f"stored object {key} was changed in place by a reader: objects from "
                                      "watch events and from in-process writes are read-only (copy one to change it)")

    def forget(self, key: Hashable) -> None:
        self.check(key)
        self._sealed.pop(key, None)

    def check_all(self) -> None:
        for key in list(self._sealed):
            self.check(key)


def check_all_live() -> None:
    """Check every detector still alive (the test suite calls this after each test)."""
    for detector in list(_live):
        detector.check_all()
