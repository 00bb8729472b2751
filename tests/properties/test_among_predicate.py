"""A Predicate function registered with `among=True` (asked only about the nodes still in play, as the
extender's) decides as one asked about every node (Hypothesis), over the eviction properties' random clusters
with allocate, preempt, reclaim and backfill:
- one that accepts every node changes no decision (nor does it when asked: the session is the same as without
  it, the default tiers alone);
- one that refuses a fixed set of (pod, node) pairs decides as a plain Predicate function refusing the same
  pairs, in either tier, unresolvably or resolvably. (These clusters have no host ports, affinities or taints,
  so no earlier plugin refuses a node resolvably; where one does, the two differ on purpose: Volcano's
  PredicateFn stops at the first failing plugin, so the among-function is not asked and its verdict is not
  there to make the node unresolvable for preempt.)"""
from __future__ import annotations

import datetime as dt
import zlib

import numpy as np
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import fit, hooks, plugin, session

from .test_eviction_properties import clusters

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
ACTIONS = "enqueue, allocate, preempt, reclaim, backfill"
asked: list[tuple[str, int]] = []   # (pod, node rows in play) of every call of an among-function


def refuses(task, node: str, salt: int) -> bool:
    """The fixed pairs refused: about one in three, depending on `salt`."""
    return zlib.crc32(f"{salt}/{task.key}/{node}".encode()) % 3 == 0


class _Base:
    Arguments = plugin.NoArguments
    salt = 0
    resolvable = False

    def __init__(self, arguments):
        pass

    def on_session_close(self, ssn):
        pass

    def verdict(self, task, nodes, rows) -> list[fit.Failure]:
        mask = np.zeros(len(nodes), dtype=bool)
        for row in rows:
            mask[row] = refuses(task, nodes.names[row], self.salt)
        return [fit.Failure((("refused pair", mask),), resolvable=self.resolvable)] if mask.any() else []


class AcceptsAll(_Base):
    name = "among-accepts-all"

    def on_session_open(self, ssn, reg):
        def predicate(task, nodes, among):
            asked.append((task.key, -1 if among is None else int(np.count_nonzero(among))))
            return []
        reg.add(hooks.Point.PREDICATE, predicate, among=True)


class AmongRefuses(_Base):
    name = "among-refuses"

    def on_session_open(self, ssn, reg):
        def predicate(task, nodes, among):
            rows = range(len(nodes)) if among is None else np.flatnonzero(among).tolist()
            return self.verdict(task, nodes, rows)
        reg.add(hooks.Point.PREDICATE, predicate, among=True)


class PlainRefuses(_Base):
    name = "plain-refuses"

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.PREDICATE, lambda task, nodes: self.verdict(task, nodes, range(len(nodes))))


def _run(state, extra: str | None = None, tier: int = 1, salt: int = 0, resolvable: bool = False):
    tiers = yaml.safe_load(conf.DEFAULT_CONF_YAML)["tiers"]
    classes = []
    for cls in (AcceptsAll, AmongRefuses, PlainRefuses):
        classes.append(type(cls.__name__, (cls,), {"salt": salt, "resolvable": resolvable}))
    if extra:
        tiers[tier]["plugins"].append({"name": extra})
    reg = registry.default_registry().with_plugins(*classes)
    return session.run_session(state, conf.parse({"actions": ACTIONS, "tiers": tiers}, registry=reg), NOW)


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 1))
def test_an_among_predicate_that_accepts_everything_changes_nothing(state, tier):
    asked.clear()
    assert _run(state, "among-accepts-all", tier) == _run(state)
    assert all(n >= 0 for _, n in asked)   # (always told which nodes are in play)


@settings(max_examples=80, deadline=None)
@given(clusters(), st.integers(0, 1), st.integers(0, 1000), st.booleans())
def test_an_among_predicate_decides_as_one_asked_about_every_node(state, tier, salt, resolvable):
    among = _run(state, "among-refuses", tier, salt, resolvable)
    plain = _run(state, "plain-refuses", tier, salt, resolvable)
    assert among == plain
