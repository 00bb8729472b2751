"""The scheduler's hot paths decide exactly what the general paths decide (Hypothesis).

allocate takes a shortcut when no predicate plugin rejects a node and every NodeOrder function is
row-local (registered with `key=`): the best idle-fitting node comes from a memo over all nodes
(fitcache.BestCache) instead of scoring the candidate rows. A plugin that registers a keyless
NodeOrder function (scoring 0) or a predicate that rejects no node forces the general path
without changing any verdict, so the two sessions must agree on everything."""
from __future__ import annotations

import copy
import datetime as dt

import numpy as np
import yaml
from hypothesis import given, settings

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import fit, hooks, plugin, session

from .test_scheduler_properties import clusters

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
ACTIONS = "enqueue, allocate, backfill"


class KeylessZeroScore:
    name = "keyless-zero-score"
    Arguments = plugin.NoArguments

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.NODE_ORDER, lambda task, rows: np.zeros(len(rows)))

    def on_session_close(self, ssn):
        pass


class RejectsNothing(KeylessZeroScore):
    name = "rejects-nothing"

    def on_session_open(self, ssn, reg):
        n = len(ssn.nodes)
        reg.add(hooks.Point.PREDICATE, lambda task, nodes: [fit.Failure((("never", np.zeros(n, dtype=bool)),))])


def _conf(extra: str | None, binpack: bool) -> conf.SchedulerConf:
    tiers = yaml.safe_load(conf.DEFAULT_CONF_YAML)["tiers"]
    if binpack:
        tiers[1]["plugins"].append({"name": "binpack"})
    reg = registry.default_registry()
    if extra:
        tiers[1]["plugins"].append({"name": extra})
        reg = reg.with_plugins(KeylessZeroScore, RejectsNothing)
    return conf.parse({"actions": ACTIONS, "tiers": tiers}, registry=reg)


@settings(max_examples=120, deadline=None)
@given(clusters())
def test_shortcuts_decide_as_the_general_path(state):
    for binpack in (False, True):
        fast = session.run_session(copy.deepcopy(state), _conf(None, binpack), NOW)
        for extra in ("keyless-zero-score", "rejects-nothing"):
            general = session.run_session(copy.deepcopy(state), _conf(extra, binpack), NOW)
            assert general == fast, (extra, binpack)
