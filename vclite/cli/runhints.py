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
    example = f'--nodes "{fitted}" (at least that many nodes the size of the largest pod: they hold every pod ' \
        "of a waiting job at once)" if fitted else f'--nodes "{GENERIC_NODES}"'
    return (f"the one node is this machine (cpu {nodes_mod.host_cpu()}, memory {memory}, {gpu}); "
            f"declare the nodes the manifest was written for with --nodes, e.g. {example}")


def nodes_for(jobs: Iterable[Obj]) -> str | None:
    """A `--nodes` value on which the pods of any one of the vcjobs `jobs` fit at once (a gang): nodes the size of
    the largest pod's request (whole cpus, memory in whole Gi, at least 1 of each; its extended resources such as
    nvidia.com/gpu; 110 pods), as many as first-fit decreasing packs the job needing most of them into (pods_bins);
    None when they have no pods."""
    tasks_of, size = [], {}
    for job in jobs:
        tasks = []
        for task in (job.get("spec") or {}).get("tasks") or []:
            replicas = task.get("replicas") if isinstance(task, dict) else None
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas <= 0:
                continue
            try:
                request = resources.pod_requests(task.get("template") or {})
            except (ValueError, AttributeError):
                continue   # (admission refused such a task: no pod of it waits)
            size = resources.maximum(size, request)
            tasks.append((replicas, request))
        tasks_of.append(tasks)
    if not any(tasks_of):
        return None
    node = {resources.CPU: max(1, math.ceil(size.get(resources.CPU, 0))),
            resources.MEMORY: max(1, math.ceil(size.get(resources.MEMORY, 0) / 2**30)) * 2**30,
            resources.PODS: nodes_mod.DEFAULT_PODS}
    node.update((name, math.ceil(value)) for name, value in size.items() if "/" in name and value > 0)
    count = max(pods_bins(tasks, node) for tasks in tasks_of)
    parts = [f"cpu={node[resources.CPU]}", f"memory={node[resources.MEMORY] // 2**30}Gi"]
    parts += [f"{name}={value}" for name, value in sorted(node.items()) if "/" in name]
    return f"{count}x({','.join(parts)})"


def pods_bins(tasks: list[tuple[int, dict[str, Any]]], node: dict[str, Any]) -> int:
    """How many nodes of capacity `node` (each resource it names) hold `tasks` — (replicas, one pod's request) —
    by first-fit decreasing: the pods in decreasing order of their largest share of a node, each on the first node
    with room for it. A task's replicas are placed together, as many on a node as fit (what FFD does with equal
    pods), so ten thousand replicas cost no more than one."""
    def share(request: dict[str, Any]) -> Any:
        return max(request.get(name, 0) / cap for name, cap in node.items())

    free: list[dict[str, Any]] = []   # what each node opened so far has left
    for replicas, request in sorted(tasks, key=lambda task: share(task[1]), reverse=True):
        needs = {name: request.get(name, 0) for name in node if request.get(name, 0) > 0}
        for left in [*free, None]:
            if left is None:   # (new nodes: each holds `per` of them)
                per = min(node[name] // amount for name, amount in needs.items()) if needs else replicas
                while replicas > 0:
                    placed = min(per, replicas)
                    free.append({name: cap - placed * needs.get(name, 0) for name, cap in node.items()})
                    replicas -= placed
                break
            fit = min(left[name] // amount for name, amount in needs.items()) if needs else replicas
            placed = min(int(fit), replicas)
            for name, amount in needs.items():
                left[name] -= placed * amount
            replicas -= placed
            if not replicas:
                break
    return len(free)


def mount_notes(pod: Obj, container: str, tail: list[str]) -> list[str]:
    """For each volumeMount of the container whose absolute path the log lines name (`cat:
    /etc/volcano/mpiworker.host: No such file or directory`, a manifest written for a container's
    filesystem): where that mount is here, on a host where a pod's processes see this machine's filesystem
    as it is (no mount namespace: executor/mountview.py)."""
    spec = pod.get("spec") or {}
    mounts = [m.get("mountPath") for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
              if isinstance(c, dict) and c.get("name") == container for m in c.get("volumeMounts") or []
              if isinstance(m, dict)]
    text = "\n".join(tail)
    return [f"note: the volume mounted at {m} is at $VC_POD_DIR{m} here (pods run as processes on this "
            "machine's filesystem)"
            for m in dict.fromkeys(mounts) if isinstance(m, str) and m.startswith("/") and m != "/"
            and re.search(re.escape(m.rstrip("/")) + r"(/|\b)", text)]
