"""Compact builders of the API objects scheduler tests feed to sessions."""
from __future__ import annotations

import datetime as dt

import yaml

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def node(name, cpu="4", mem="8Gi", pods="10", labels=None, unschedulable=False, ready=None):
    n = {"metadata": {"name": name, "labels": labels or {}},
         "status": {"allocatable": {"cpu": str(cpu), "memory": mem, "pods": str(pods)}}}
    if unschedulable:
        n["spec"] = {"unschedulable": True}
    if ready is not None:
        n["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return n


def queue(name, weight=1, capability=None, guarantee=None, state="Open", priority=None):
    spec = {"weight": weight}
    if capability:
        spec["capability"] = capability
    if guarantee:
        spec["guarantee"] = {"resource": guarantee}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name}, "spec": spec, "status": {"state": state}}


def pg(key, q="default", min_member=1, phase="Inqueue", min_task_member=None, min_resources=None,
       priority_class=None, conditions=None):
    ns, name = key.split("/")
    spec = {"queue": q, "minMember": min_member}
    if min_task_member is not None:
        spec["minTaskMember"] = min_task_member
    if min_resources is not None:
        spec["minResources"] = min_resources
    if priority_class:
        spec["priorityClassName"] = priority_class
    status = {"phase": phase} if phase else {}
    if conditions:
        status["conditions"] = conditions
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec, "status": status}


def pod(key, group, cpu="1", mem="1Gi", node=None, phase="Pending", role=None, selector=None, deleting=False,
        scheduler="volcano", priority=None, tolerations=None):
    ns, name = key.split("/")
    md = {"name": name, "namespace": ns, "uid": key, "annotations": {}}
    if group:
        md["annotations"]["scheduling.k8s.io/group-name"] = group
    if role:
        md["annotations"]["volcano.sh/task-spec"] = role
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    requests = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v}
    spec = {"schedulerName": scheduler, "containers": [{"name": "c", "resources": {"requests": requests}}]}
    for k, v in (("nodeName", node), ("nodeSelector", selector), ("priority", priority), ("tolerations", tolerations)):
        if v is not None:
            spec[k] = v
    return {"metadata": md, "spec": spec, "status": {"phase": phase}}


def state(nodes=(), queues=None, podgroups=(), pods=(), priority_classes=()):
    return snapshot.ClusterState(list(nodes), list(queues if queues is not None else [queue("default")]),
                                 list(podgroups), list(pods), list(priority_classes))


def default_conf(actions="enqueue, allocate"):
    """Volcano's default tiers (every flag on, as parsed from YAML) with the given actions."""
    return conf.parse({"actions": actions, "tiers": yaml.safe_load(conf.DEFAULT_CONF_YAML)["tiers"]})


def open_session(st, actions="enqueue, allocate"):
    return session.open_session(st, default_conf(actions), NOW)


def run(st, actions="enqueue, allocate"):
    return session.run_session(st, default_conf(actions), NOW)
