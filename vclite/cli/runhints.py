"""What a stopped or failed `vcctl run` adds to its report so that a manifest written for a cluster
(Volcano's examples) says how to make it run here: the default node's size and `--nodes` when a job waits
for resources this machine lacks, and where a volume is mounted when a container's log names its path.
Pure functions over report lines, pods and log lines.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from vclite.api import quantity, resources
from vclite.executor import devices
from vclite.executor import nodes as nodes_mod

Obj = dict[str, Any]

# the scheduler's words for a job or pod the nodes are too small for (enqueue's overcommit, a predicate)
SHORT_OF_RESOURCES = ("resource in cluster is overused", "Insufficient ")


def short_of_resources(line: str) -> bool:
    """Whether a stuck report's line says the nodes lack the resources a job or pod asks for."""
    return any(words in line for words in SHORT_OF_RESOURCES)


GENERIC_NODES = "2x(cpu=4,memory=8Gi,nvidia.com/gpu=1)"   # (the example when no waiting job says more)


def host_node_hint(waiting_jobs: Iterable[Obj] = ()) -> str:
    """What the default node is and how to declare bigger ones (a manifest written for a cluster asks
    for more cpus than this machine has, or for GPUs): `--nodes` sized for `waiting_jobs` (nodes_for)."""
    memory = f"{float(quantity.parse(nodes_mod.host_memory())) / 2**30:.1f}Gi"
    gpus = len(devices.host_gpus())
    gpu = f"{gpus} GPU{'s' if gpus > 1 else ''}" if gpus else "no GPU"
    fitted = nodes_for(waiting_jobs)
    example = f'--nodes "{fitted}" (a node for each pod, the size of the largest)' if fitted else \
        f'--nodes "{GENERIC_NODES}"'
    return (f"the one node is this machine (cpu {nodes_mod.host_cpu()}, memory {memory}, {gpu}); "
            f"declare the nodes the manifest was written for with --nodes, e.g. {example}")


def nodes_for(jobs: Iterable[Obj]) -> str | None:
    """A `--nodes` value on which every pod of the vcjobs `jobs` has a node of its own: as many nodes as the
    largest of them has pods, each the size of the largest pod's request (whole cpus, memory in whole Gi, at
    least 1 of each; its extended resources such as nvidia.com/gpu); None when they have no pods."""
    count, size = 0, {}
    for job in jobs:
        pods = 0
        for task in (job.get("spec") or {}).get("tasks") or []:
            replicas = task.get("replicas") if isinstance(task, dict) else None
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas <= 0:
                continue
            try:
                size = resources.maximum(size, resources.pod_requests(task.get("template") or {}))
            except (ValueError, AttributeError):
                continue   # (admission refused such a task: no pod of it waits)
            pods += replicas
        count = max(count, pods)
    if not count:
        return None
    parts = [f"cpu={max(1, math.ceil(size.get(resources.CPU, 0)))}",
             f"memory={max(1, math.ceil(size.get(resources.MEMORY, 0) / 2**30))}Gi"]
    parts += [f"{name}={math.ceil(value)}" for name, value in sorted(size.items()) if "/" in name and value > 0]
    return f"{count}x({','.join(parts)})"


def mount_notes(pod: Obj, container: str, tail: list[str]) -> list[str]:
    """For each volumeMount of the container whose absolute path the log lines name (`cat:
    /etc/volcano/mpiworker.host: No such file or directory`, a manifest written for a container's
    filesystem): where that mount is here, since a pod's processes see this machine's filesystem."""
    spec = pod.get("spec") or {}
    mounts = [m.get("mountPath") for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
              if isinstance(c, dict) and c.get("name") == container for m in c.get("volumeMounts") or []
              if isinstance(m, dict)]
    text = "\n".join(tail)
    return [f"note: the volume mounted at {m} is at $VC_POD_DIR{m} here (pods run as processes on this "
            "machine's filesystem)"
            for m in dict.fromkeys(mounts) if isinstance(m, str) and m.startswith("/") and m != "/"
            and re.search(re.escape(m.rstrip("/")) + r"(/|\b)", text)]
