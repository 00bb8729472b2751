"""The scheduler's configuration from Volcano's ConfigMap (`volcano-system/volcano-scheduler-configmap`, key
`volcano-scheduler.conf`), which `vcctl server` without `--scheduler-conf` reads whenever it changes, as
Volcano's scheduler re-reads the file the ConfigMap is mounted as.

`read(configmap)` is pure: the configuration, or why it cannot be used (the scheduler then keeps the one it
has, as Volcano keeps its last good configuration, and says why in a Warning Event on the ConfigMap).

Must not: touch the API (scheduler.py reads the ConfigMap and records the Event).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from vclite.api import scheduling
from vclite.scheduler import conf as conf_mod

REF = (scheduling.SCHEDULER_CONFIGMAP_NAMESPACE, scheduling.SCHEDULER_CONFIGMAP)   # (namespace, name)
KEY = scheduling.SCHEDULER_CONF_KEY
INVALID = "InvalidSchedulerConf"   # the Warning Event's reason
LOADED = "SchedulerConfLoaded"     # the Normal Event's reason
NOT_READ = "SchedulerConfNotRead"  # the Warning Event's reason when --scheduler-conf configures the scheduler


@dataclasses.dataclass(frozen=True)
class Read:
    """What a ConfigMap gives: `conf` to use, or `problem` (why not); both None: nothing to read."""
    text: str | None = None
    conf: conf_mod.SchedulerConf | None = None
    problem: str | None = None


def read(configmap: dict[str, Any] | None) -> Read:
    if configmap is None:
        return Read()
    data = configmap.get("data")
    text = data.get(KEY) if isinstance(data, dict) else None
    if not isinstance(text, str):
        return Read(problem=f"no {KEY} in data: the scheduler keeps its configuration")
    try:
        return Read(text, conf_mod.parse(text, KEY))
    except conf_mod.ConfError as exc:
        return Read(text, problem=f"{exc}\n(the scheduler keeps its configuration)")
