"""Resource dimensions of one session: resource name -> column, and the unit each column holds.

Node, task, job and queue resources are numpy float64 vectors over the session's dimensions, in
the integer units Volcano uses: cpu in millicores, memory (and other byte resources) in bytes,
pods in pods, every other scalar resource in thousandths. Values are rounded up to those units
(Kubernetes' MilliValue/Value), so they are integers held in floats and add and subtract exactly
(below 2**53): a discarded statement restores node arrays bit for bit. Queue limits may be +inf.

Must not: know about nodes, pods or queues (callers hand it resource lists).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from vclite.api import quantity

Fraction = quantity.Fraction
Vec = np.ndarray

CPU, MEMORY, PODS = "cpu", "memory", "pods"
BASE = (CPU, MEMORY, PODS)
TOLERANCE = 0.1  # Volcano's minResource: values closer than this compare equal in quota checks
_BYTES = ("memory", "ephemeral-storage", "storage")


def unit(name: str) -> int:
    """How many stored units make one unit of the resource as users write it."""
    if name in _BYTES or name.startswith("hugepages-") or name == PODS:
        return 1
    return 1000  # cpu -> millicores; scalar resources -> thousandths, as Volcano stores them


class Dims:
    """The ordered resource names of a session (cpu, memory, pods first, then the rest sorted)."""

    def __init__(self, names: Iterable[str] = ()):
        rest = sorted(set(names) - set(BASE))
        self.names: tuple[str, ...] = BASE + tuple(rest)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.units = np.array([unit(n) for n in self.names], dtype=np.float64)
        self._units = [unit(n) for n in self.names]
        self.pods = self.index[PODS]
        mask = np.ones(len(self.names), dtype=bool)
        mask[self.pods] = False
        self.not_pods = mask  # quota checks and BestEffort detection ignore `pods`
        self.units.flags.writeable = mask.flags.writeable = False   # shared by sessions (snapshot memo)

    def __len__(self) -> int:
        return len(self.names)

    def zeros(self) -> Vec:
        return np.zeros(len(self.names), dtype=np.float64)

    def vector(self, resources: Mapping[str, Fraction], missing: float = 0.0) -> Vec:
        """A resource list as a vector; names outside the session are ignored, absent ones get `missing`."""
        v = np.full(len(self.names), missing, dtype=np.float64)
        index, units = self.index, self._units
        for name, value in resources.items():
            i = index.get(name)
            if i is not None:
                try:   # ceil(value · unit) in integers: -(-n·u // d)
                    v[i] = -((-value.numerator * units[i]) // value.denominator)
                except AttributeError:
                    v[i] = math.ceil(value * units[i])
        return v

    def resource_list(self, v: Vec, keep_zero: Iterable[str] = (CPU, MEMORY)) -> dict[str, Fraction]:
        """A vector back as a resource list (zero entries dropped except `keep_zero`)."""
        keep = set(keep_zero)
        out: dict[str, Fraction] = {}
        for i, name in enumerate(self.names):
            if v[i] != 0 or name in keep:
                out[name] = Fraction(int(round(v[i]))) / int(self.units[i])
        return out

    def format(self, name: str, value: float) -> str:
        """One stored value as a user writes it (`cpu` 8000 -> `8`, memory 2**30 -> `1Gi`)."""
        if math.isinf(value):
            return "unlimited"
        return quantity.format(Fraction(int(round(value))) / unit(name), name)

    def describe(self, v: Vec, which: Iterable[int]) -> str:
        """`cpu 8, memory 1Gi` for the given columns."""
        return ", ".join(f"{self.names[i]} {self.format(self.names[i], float(v[i]))}" for i in which)


def less_equal(a: Vec, b: Vec, mask: np.ndarray | None = None) -> bool:
    """a ≤ b on every (masked) dimension, with Volcano's tolerance (+inf on the right always fits).
    Session vectors are a handful of numbers: compared as Python floats (the same IEEE steps as
    numpy's, without its per-call cost); anything else goes through numpy."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 1 and a.shape == b.shape:
        al, bl = a.tolist(), b.tolist()
        if mask is None:
            for i in range(len(al)):
                if not al[i] <= bl[i] + TOLERANCE:
                    return False
            return True
        if type(mask) is np.ndarray and mask.shape == a.shape and mask.dtype == bool:
            for i, m in enumerate(mask.tolist()):
                if m and not al[i] <= bl[i] + TOLERANCE:
                    return False
            return True
    ok = a <= b + TOLERANCE
    return bool(ok.all() if mask is None else ok[mask].all())


def within(base: list[float], extra: list[float], limit: list[float], skip: int) -> bool:
    """`less_equal(base + extra, limit, (extra > 0) & dims.not_pods)` on lists of Python floats (`skip`: the pods
    column): the same IEEE additions and comparisons as on arrays, without numpy's cost per call on a handful of
    numbers (a quota check per task)."""
    for i, x in enumerate(extra):
        if x > 0 and i != skip and not base[i] + x <= limit[i] + TOLERANCE:
            return False
    return True


def exceeds(base: list[float], extra: list[float], limit: list[float], skip: int) -> bool:
    """`((extra > 0) & dims.not_pods & (base + extra > limit + TOLERANCE)).any()` on lists of Python floats, as
    `within` (not its negation: a NaN exceeds nothing here, as on arrays)."""
    for i, x in enumerate(extra):
        if x > 0 and i != skip and base[i] + x > limit[i] + TOLERANCE:
            return True
    return False


def is_empty(v: Vec, dims: Dims) -> bool:
    """Volcano's Resource.IsEmpty: every dimension but pods below the tolerance."""
    if type(v) is np.ndarray and v.ndim == 1 and len(v) == len(dims):
        pods = dims.pods
        return all(x < TOLERANCE for i, x in enumerate(v.tolist()) if i != pods)
    return bool((v[dims.not_pods] < TOLERANCE).all())
