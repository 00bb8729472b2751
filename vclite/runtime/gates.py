"""Which controllers run: Volcano's `--controllers` gate (vc-controller-manager), as a pure function.

The value is a list of items: `*` (every controller), `NAME` or `+NAME` (this one), `-NAME` (not
this one). For each controller the first item naming it decides; a controller no item names runs
only if `*` is there; an empty list runs them all (`isControllerEnabled` in Volcano's
`cmd/controller-manager/app/server.go`). Naming one controller twice is refused, as Volcano's
`checkControllers` does; so is a name vclite does not know (Volcano accepts it silently, and a typo
then disables nothing).

Names are Volcano's: `cronjob-controller`, `gc-controller` (a finished vcjob's ttlSecondsAfterFinished),
`hyperNode-controller`, `job-controller`, `jobflow-controller`, `jobtemplate-controller`, `pg-controller`
(vclite's podgroup-controller) and `queue-controller`.
"""
from __future__ import annotations

from typing import Iterable

KNOWN = ("cronjob-controller", "gc-controller", "hyperNode-controller", "job-controller", "jobflow-controller",
         "jobtemplate-controller", "pg-controller", "queue-controller")
COMPONENT_NAMES = {"pg-controller": "podgroup-controller",   # Volcano's name -> vclite's component name
                   "hyperNode-controller": "hypernode-controller"}


class GateError(ValueError):
    """The --controllers value is malformed; the message says which item and why."""


def items(spec: Iterable[str]) -> list[str]:
    """Items of a flag given once as `a,b` or several times (as pflag's StringSlice)."""
    return [part.strip() for value in spec for part in value.split(",") if part.strip()]


def enabled(spec: Iterable[str]) -> frozenset[str]:
    """The Volcano names of the controllers `spec` enables (see the module docstring)."""
    given = items(spec)
    seen: set[str] = set()
    for item in given:
        if item == "*":
            continue
        name = item[1:] if item[:1] in "+-" else item
        if name not in KNOWN:
            raise GateError(f"--controllers: unknown controller {name!r}; known: {', '.join(KNOWN)}")
        if name in seen:
            raise GateError(f"--controllers: {name!r} is named twice (enable or disable it once)")
        seen.add(name)
    if not given:
        return frozenset(KNOWN)
    out = set()
    for name in KNOWN:
        decided = next((not item.startswith("-") for item in given if item in (name, "+" + name, "-" + name)), None)
        if decided if decided is not None else "*" in given:
            out.add(name)
    return frozenset(out)


def component_names(volcano_names: Iterable[str]) -> frozenset[str]:
    """vclite's component names for Volcano controller names."""
    return frozenset(COMPONENT_NAMES.get(n, n) for n in volcano_names)
