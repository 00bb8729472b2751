"""Volcano's scheduler ConfigMap as the scheduler's configuration (`vcctl server` without --scheduler-conf): read
whenever it changes; one that does not load is a Warning Event and the current configuration is kept."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.lib import errors
from vclite.scheduler import confmap
from vclite.scheduler import scheduler as scheduler_mod
from tests.unit.scheduler.test_scheduler import Cluster

ENQUEUE_ONLY = 'actions: "enqueue"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
ALLOCATE = ENQUEUE_ONLY.replace('"enqueue"', '"enqueue, allocate"') + "- plugins:\n  - name: predicates\n"
BAD = ALLOCATE.replace("name: gang", "name: gangg")


def configmap(text: str | None, name: str = "volcano-scheduler-configmap") -> dict:
    data = {} if text is None else {"volcano-scheduler.conf": text}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "volcano-system"},
            "data": data}


@pytest.mark.parametrize("obj, actions, problem", [
    pytest.param(None, None, None, id="none"),
    pytest.param(configmap(None), None, "no volcano-scheduler.conf in data", id="no-key"),
    pytest.param(configmap(ALLOCATE), ("enqueue", "allocate"), None, id="good"),
    pytest.param(configmap(BAD), None, 'volcano-scheduler.conf:5: unknown plugin "gangg"', id="bad-with-its-line"),
])
def test_read(obj, actions, problem):
    got = confmap.read(obj)
    assert (got.conf.action_names if got.conf else None) == actions
    assert (problem in got.problem) if problem else got.problem is None, got.problem


class ConfMapCluster(Cluster):
    def __init__(self):   # (Cluster's, with the scheduler following the ConfigMap)
        super().__init__()
        self.scheduler = scheduler_mod.Scheduler(self.client, self.clock, conf_map=True)

    def apply(self, text: str | None, name: str = "volcano-scheduler-configmap") -> None:
        obj = configmap(text, name)
        try:
            current = self.client.get(kinds.CONFIGMAP, "volcano-system", name)
        except errors.NotFound:
            self.client.create(obj)
        else:
            self.client.update({**current, "data": obj["data"]})

    def events(self, reason: str) -> list[str]:
        return [e["message"] for e in self.client.list(kinds.EVENT) if e.get("reason") == reason]


def _gang(c: Cluster) -> None:
    c.podgroup("pg1", 2, "2")
    c.pod("p-0", "pg1")
    c.pod("p-1", "pg1")


def test_a_stored_configmap_configures_the_first_session_and_an_edit_the_next_ones():
    c = ConfMapCluster()
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}})
    c.apply(ENQUEUE_ONLY)
    c.scheduler.start()
    _gang(c)
    c.drain()
    assert c.scheduler.conf.action_names == ("enqueue",)
    assert c.get(kinds.PODGROUP, "pg1")["status"]["phase"] == "Inqueue"
    assert "spec" in c.get(kinds.POD, "p-0") and not c.get(kinds.POD, "p-0")["spec"].get("nodeName")
    c.apply(ALLOCATE)     # kubectl edit: the next session allocates
    c.drain()
    assert [c.get(kinds.POD, p)["spec"].get("nodeName") for p in ("p-0", "p-1")] == ["n1", "n1"]
    assert c.events(confmap.LOADED) == ["loaded volcano-scheduler.conf (actions: enqueue)",
                                        "loaded volcano-scheduler.conf (actions: enqueue, allocate)"]


def test_a_configmap_that_does_not_load_is_a_warning_and_the_configuration_is_kept():
    c = ConfMapCluster()
    c.scheduler.start()
    c.drain()
    default = c.scheduler.conf
    c.apply(BAD)
    c.drain()
    assert c.scheduler.conf is default
    [warning] = c.events(confmap.INVALID)
    assert 'volcano-scheduler.conf:5: unknown plugin "gangg"' in warning and "keeps its configuration" in warning
    c.apply(BAD)          # the same text again: said once
    c.drain()
    assert len(c.events(confmap.INVALID)) == 1
    _gang(c)              # the default configuration still schedules
    c.drain()
    assert c.get(kinds.POD, "p-0")["spec"].get("nodeName") == "n1"


def test_other_configmaps_and_a_deleted_one_change_nothing():
    c = ConfMapCluster()
    c.scheduler.start()
    c.drain()
    default = c.scheduler.conf
    c.apply(ENQUEUE_ONLY, name="another")
    assert c.drain() == 0
    c.apply(ENQUEUE_ONLY)
    c.drain()
    assert c.scheduler.conf.action_names == ("enqueue",)
    c.client.delete(kinds.CONFIGMAP, "volcano-system", "volcano-scheduler-configmap")
    c.drain()
    assert c.scheduler.conf.action_names == ("enqueue",) and c.scheduler.conf is not default


def test_without_conf_map_the_configmap_is_not_read():
    c = Cluster()
    c.apply = ConfMapCluster.apply.__get__(c)
    c.apply(ENQUEUE_ONLY)
    c.drain()
    assert c.scheduler.conf.action_names == ("enqueue", "allocate", "backfill")


def test_podgroups_left_waiting_are_admitted_after_a_switch_of_the_waiting_pool():
    """The pool of PodGroups waiting for room (waiting.py) is for class-safe plugins only: a configuration with `sla`
    turns it off, the default one on again; either way a PodGroup that waited is admitted once there is room."""
    c = ConfMapCluster()
    c.scheduler.start()
    c.drain()
    assert c.scheduler.waiting is not None
    c.podgroup("big", 1, "8")          # more than the node: left waiting, in the pool
    c.drain()
    c.apply(ALLOCATE.replace("  - name: predicates\n", "  - name: predicates\n  - name: sla\n"))
    c.drain()
    assert c.scheduler.waiting is None
    c.client.delete(kinds.CONFIGMAP, "volcano-system", "volcano-scheduler-configmap")
    c.apply(ALLOCATE)
    c.drain()
    assert c.scheduler.waiting is not None
    node = c.get(kinds.NODE, "n1", ns="")
    c.client.update_status({**node, "status": {**node["status"], "allocatable": {**node["status"]["allocatable"],
                                                                                   "cpu": "16"}}})
    c.drain()
    assert c.get(kinds.PODGROUP, "big")["status"]["phase"] == "Inqueue"


def test_with_a_conf_option_the_configmap_is_not_read_and_told_so():
    c = ConfMapCluster()
    c.scheduler = scheduler_mod.Scheduler(c.client, c.clock, conf_map=True, conf_fixed_by="--scheduler-conf s.conf")
    c.apply(ENQUEUE_ONLY)
    c.scheduler.start()
    c.drain()
    c.apply(ENQUEUE_ONLY)   # the same text: told once
    c.drain()
    assert c.scheduler.conf.action_names == ("enqueue", "allocate", "backfill")
    assert c.events(confmap.NOT_READ) == ["not read: --scheduler-conf s.conf configures the scheduler (restart the "
                                          "server without it for this ConfigMap to)"]
