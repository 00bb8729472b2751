"""The scheduler configuration a manifest carries: Volcano's ConfigMap `volcano-system/volcano-scheduler-configmap`.

On a cluster Volcano's scheduler reads `volcano-scheduler.conf` from that ConfigMap (the Helm chart mounts it),
and Volcano's user guides configure a plugin by applying it. `vcctl run FILES` uses the configuration of
such a ConfigMap among its FILES (when no `--scheduler-conf` is given), so does `vcctl scheduler dry-run -f`
(without `--conf`), and `vcctl validate` checks it: a
problem is placed at the line of the ConfigMap where the configuration's faulty line was written.

Must not: read files (the documents are read by manifests.py) or start anything; import the scheduler's
configuration before a ConfigMap asks (it brings the metrics sources' HTTP client).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vclite.api import scheduling, yamlio

if TYPE_CHECKING:
    from vclite.scheduler import conf as scheduler_conf

NAME, NAMESPACE = scheduling.SCHEDULER_CONFIGMAP, scheduling.SCHEDULER_CONFIGMAP_NAMESPACE
KEY = scheduling.SCHEDULER_CONF_KEY
FIELD = f"data[{KEY}]"


def _is_it(obj: Any) -> bool:
    if not isinstance(obj, dict) or obj.get("kind") != "ConfigMap" or obj.get("apiVersion") != "v1":
        return False
    md = obj.get("metadata")
    return isinstance(md, dict) and md.get("name") == NAME and md.get("namespace") == NAMESPACE


def carries_conf(obj: Any) -> bool:
    """Whether `obj` is the scheduler's ConfigMap with a `volcano-scheduler.conf` string."""
    data = obj.get("data") if _is_it(obj) else None
    return isinstance(data, dict) and isinstance(data.get(KEY), str)


def find(docs: list[yamlio.Document]) -> yamlio.Document | None:
    """The last document that is the scheduler's ConfigMap with a `volcano-scheduler.conf` string (as
    `kubectl apply` of them all would leave it); None when there is none."""
    found = None
    for d in docs:
        if carries_conf(d.obj):
            found = d
    return found


def describe(doc: yamlio.Document) -> str:
    """`file:line: ConfigMap volcano-system/volcano-scheduler-configmap`: where a configuration came from."""
    return f"{doc.file}:{doc.line}: ConfigMap {NAMESPACE}/{NAME}"


def _offset_of_line(text: str, line: int) -> int:
    """The offset in `text` of the first character of its 1-based `line` (the end for a line past it)."""
    offset = 0
    for _ in range(max(line, 1) - 1):
        at = text.find("\n", offset)
        if at < 0:
            return len(text)
        offset = at + 1
    return offset


def parse(doc: yamlio.Document) -> tuple[scheduler_conf.SchedulerConf | None, list[tuple[int, str]]]:
    """(the configuration, None if it has a problem; every problem as (line of the manifest, message))."""
    from vclite.scheduler import conf as scheduler_conf   # (only then: `vcctl validate` starts without its imports)

    text = doc.obj["data"][KEY]
    try:
        return scheduler_conf.parse(text, KEY), []
    except scheduler_conf.ConfError as exc:
        located = []
        for p in exc.problems:
            line = doc.line_of(FIELD, _offset_of_line(text, p.line)) if p.line else doc.line_of(FIELD)
            located.append((line, p.message if p.file else str(p)))
        return None, located
