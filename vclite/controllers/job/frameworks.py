"""Volcano's distributed-framework job plugins: what each adds to a pod it creates (pure: the pod
dict is changed in place, nothing else is read but the job).

The addresses are the pods' DNS names under the job's headless Service, as on a cluster
(`<host>.<subdomain>`: the task template's hostname/subdomain, else `<job>-<task>-<i>.<job>`); the
webhook adds the `svc` plugin that makes them, as Volcano's does. Arguments are Go flags (goflags.py).

- `pytorch` (`--master=master --worker=worker --port=23456`): every container gets MASTER_ADDR (the
  master task's pod 0), MASTER_PORT, WORLD_SIZE (master + worker replicas) and RANK (master 0,
  worker i -> i+1; none for other tasks) and the port `pytorchjob-port` unless it has that port;
  `--wait-master-enabled` adds to workers an init container `wait-for-master` (image
  `--wait-master-image`, default busybox:1.36.1) polling the master's port for up to
  `--wait-master-timeout` s (default 300). No master task: the pod is left alone.
- `tensorflow` (`--ps=ps --worker=worker --chief=chief --evaluator=evaluator --port=2222`): TF_CONFIG
  `{"cluster":{"ps":[…],"worker":[…],"chief":[…],"evaluator":[…]},"task":{"type":…,"index":i}}` on
  every container (roles with no pods omitted; a task that is none of the four has its own name as
  type); nothing for a job of one task with one replica.
- `mpi` (`--master=master --worker=worker --port=22`): the master's containers and init containers
  get MPI_HOST, the worker pods' names joined by `,`; every container and init container gets the
  port `mpijob-port` unless it has that port.
- `ray` (`--head=head --headContainer=head --worker=worker --workerContainer=worker --port=6379
  --dashboardPort=8265 --clientPort=10001`): the head container's command becomes
  `ray start --head --block …` with ports gcs, dashboard and client-server; a worker container's
  `ray start --block --address=<head>:<port>`; the job gets a Service `<job>-head-svc` for them.
  A job without the head task: its pods cannot be created (PluginError; the sync is retried).
- `hcclrank` (`--master=master --worker=worker`): annotation `hccl/rankIndex`, the pod's RANK env
  when a container has one (the pytorch plugin, listed before it), else master i -> i, worker
  i -> master replicas + i.
Volcano applies a job's plugins in Go map order (random); vclite in the order the job lists them.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from vclite.api import batch, meta
from vclite.lib import goflags

Obj = dict[str, Any]

PYTORCH, TENSORFLOW, MPI, RAY, HCCLRANK = "pytorch", "tensorflow", "mpi", "ray", "hcclrank"
PYTORCH_FLAGS = batch.PLUGIN_FLAGS[PYTORCH]
TENSORFLOW_FLAGS = batch.PLUGIN_FLAGS[TENSORFLOW]
MPI_FLAGS = batch.MPI_PLUGIN_FLAGS
RAY_FLAGS = batch.RAY_PLUGIN_FLAGS
HCCLRANK_FLAGS = batch.PLUGIN_FLAGS[HCCLRANK]
WAIT_FOR_MASTER = "wait-for-master"
HCCL_RANK_KEY = "hccl/rankIndex"


class PluginError(ValueError):
    """A plugin cannot make this pod (Volcano: OnPodCreate returns an error, the sync is retried)."""


def _flags(args: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    return goflags.parse(args if isinstance(args, list) else [], defaults)[0]


def _tasks(job: Obj) -> list[Obj]:
    return [t for t in (job.get("spec") or {}).get("tasks") or [] if isinstance(t, dict)]


def _task(job: Obj, name: str) -> Obj | None:
    """The first task named `name` (Volcano's GetTaskIndexUnderJob)."""
    return next((t for t in _tasks(job) if t.get("name") == name), None)


def _replicas(task: Obj | None) -> int:
    return int((task or {}).get("replicas", 0) or 0)


def domain_name(job: Obj, task: Obj, index: int) -> str:
    """`<host>.<subdomain>` of pod `index` of `task` (Volcano's MakeDomainName)."""
    spec = (task.get("template") or {}).get("spec") or {}
    host = spec.get("hostname") or f"{meta.name(job)}-{task.get('name', '')}-{index}"
    return f"{host}.{spec.get('subdomain') or meta.name(job)}"


def _task_key(pod: Obj) -> str:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(batch.TASK_SPEC) or "default"


def _pod_index(pod: Obj) -> int:
    parts = meta.name(pod).split("-")
    try:
        return int(parts[-1]) if len(parts) >= 3 else int("")
    except ValueError:
        raise PluginError(f"pod {meta.name(pod)}: no task index in its name") from None


def _containers(pod: Obj, init: bool = False) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get("initContainers" if init else "containers") or []
            if isinstance(c, dict)]


def _add_env(container: Obj, *pairs: tuple[str, str]) -> None:
    if container.get("env") is None:
        container["env"] = []
    container["env"].extend({"name": n, "value": v} for n, v in pairs)


def _open_port(container: Obj, name: str, port: int) -> None:
    ports = container.get("ports") or []
    if not any(isinstance(p, dict) and p.get("containerPort") == port for p in ports):
        container["ports"] = [*ports, {"name": name, "containerPort": port}]


# ---- pytorch ---------------------------------------------------------------------------------------
def _wait_for_master_script(addr: str, port: int, timeout: int) -> str:
    return (f'echo "Waiting for master node {addr}:{port} to be ready..."\n'
            f"TIMEOUT={timeout}\nELAPSED=0\n"
            f"until {{ nc -z {addr} {port} || echo > /dev/tcp/{addr}/{port}; }} 2>/dev/null; do\n"
            '  if [ $ELAPSED -ge $TIMEOUT ]; then\n'
            '    echo "Timeout waiting for master after ${TIMEOUT} seconds"\n    exit 1\n  fi\n'
            '  echo "Master not ready yet, retrying in 2 seconds... (elapsed: ${ELAPSED}s)"\n'
            "  sleep 2\n  ELAPSED=$((ELAPSED + 2))\ndone\n"
            'echo "Master node is ready!"')


def pytorch(pod: Obj, job: Obj, args: Any) -> None:
    f = _flags(args, PYTORCH_FLAGS)
    master = _task(job, f["master"])
    if master is None:
        return
    addr, port = domain_name(job, master, 0), f["port"]
    role = _task_key(pod)
    rank = None
    if role == f["worker"]:
        rank = _pod_index(pod) + 1
        spec = pod.setdefault("spec", {})
        inits = spec.get("initContainers") or []
        if f["wait-master-enabled"] and not any(c.get("name") == WAIT_FOR_MASTER for c in _containers(pod, True)):
            spec["initContainers"] = [*inits, {
                "name": WAIT_FOR_MASTER, "image": f["wait-master-image"],
                "command": ["sh", "-c", _wait_for_master_script(addr, port, f["wait-master-timeout"])]}]
    elif role == f["master"]:
        rank = 0
    world = sum(_replicas(t) for t in _tasks(job) if t.get("name") in (f["master"], f["worker"]))
    for c in _containers(pod):
        _open_port(c, "pytorchjob-port", port)
        _add_env(c, ("MASTER_ADDR", addr), ("MASTER_PORT", str(port)), ("WORLD_SIZE", str(world)))
        if rank is not None:
            _add_env(c, ("RANK", str(rank)))


# ---- tensorflow ------------------------------------------------------------------------------------
def tensorflow(pod: Obj, job: Obj, args: Any) -> None:
    tasks = _tasks(job)
    if len(tasks) == 1 and _replicas(tasks[0]) == 1:
        return
    f = _flags(args, TENSORFLOW_FLAGS)
    # Volcano's two switches, in their orders: a task's hosts go to the first of ps, worker, chief,
    # evaluator its name matches; a pod's type is the first of chief, worker, ps, evaluator
    cluster: dict[str, list[str]] = {}
    for t in tasks:
        role = next((r for r in ("ps", "worker", "chief", "evaluator") if t.get("name", "") == f[r]), None)
        if role is not None:
            cluster[role] = [f"{domain_name(job, t, i)}:{f['port']}" for i in range(_replicas(t))]
    ordered = {r: cluster[r] for r in ("ps", "worker", "chief", "evaluator") if cluster.get(r)}
    key = _task_key(pod)
    kind = next((r for r in ("chief", "worker", "ps", "evaluator") if key == f[r]), key)
    config = {"cluster": ordered, "task": {"type": kind, "index": _pod_index(pod)}}
    text = json.dumps(config, separators=(",", ":"))
    for c in _containers(pod):
        _add_env(c, ("TF_CONFIG", text))


# ---- mpi -------------------------------------------------------------------------------------------
def mpi_hosts(job: Obj, task: Obj) -> str:
    """The task's pods' DNS names joined by `,` (one name when the template sets a hostname)."""
    hosts = []
    for i in range(_replicas(task)):
        hosts.append(domain_name(job, task, i))
        if ((task.get("template") or {}).get("spec") or {}).get("hostname"):
            break
    return ",".join(hosts)


def mpi(pod: Obj, job: Obj, args: Any) -> None:
    f = _flags(args, MPI_FLAGS)
    host = None
    if _task_key(pod) == f["master"]:
        worker = _task(job, f["worker"])
        if worker is None:
            return
        host = mpi_hosts(job, worker)
    for c in _containers(pod, True) + _containers(pod):
        _open_port(c, "mpijob-port", f["port"])
        if host is not None:
            _add_env(c, ("MPI_HOST", host))


# ---- ray -------------------------------------------------------------------------------------------
def ray(pod: Obj, job: Obj, args: Any) -> None:
    f = _flags(args, RAY_FLAGS)
    head = _task(job, f["head"])
    if head is None:
        raise PluginError(f"job {meta.name(job)} doesn't have head task {f['head']}")
    role = _task_key(pod)
    for c in _containers(pod):
        if role == f["head"] and c.get("name") == f["headContainer"]:
            have = {p.get("containerPort") for p in c.get("ports") or [] if isinstance(p, dict)}
            c["ports"] = [*(c.get("ports") or []), *({"name": name, "containerPort": port} for name, port in (
                ("gcs", f["port"]), ("dashboard", f["dashboardPort"]), ("client-server", f["clientPort"]))
                if port not in have)]   # (what is missing is decided before adding any, as upstream)
            c["command"] = ["sh", "-c", f"ray start --head --block --dashboard-host=0.0.0.0 --port={f['port']} "
                                        f"--dashboard-port={f['dashboardPort']} "
                                        f"--ray-client-server-port={f['clientPort']}"]
        if role == f["worker"] and c.get("name") == f["workerContainer"]:
            c["command"] = ["sh", "-c", f"ray start --block --address={domain_name(job, head, 0)}:{f['port']}"]


def ray_service(job: Obj, args: Any) -> Obj:
    """The Service `<job>-head-svc` in front of the head pod's three ports."""
    f = _flags(args, RAY_FLAGS)
    ports = [{"name": n, "port": p, "targetPort": n, "protocol": "TCP"}
             for n, p in (("gcs", f["port"]), ("dashboard", f["dashboardPort"]), ("client-server", f["clientPort"]))]
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": ray_service_name(job), "namespace": meta.namespace(job),
                         "ownerReferences": [meta.owner_ref(job)]},
            "spec": {"selector": {batch.JOB_NAME: meta.name(job), batch.JOB_NAMESPACE: meta.namespace(job),
                                  batch.TASK_SPEC: f["head"]},
                     "ports": ports}}


def ray_service_name(job: Obj) -> str:
    return f"{meta.name(job)}-head-svc"


# ---- hcclrank --------------------------------------------------------------------------------------
def hcclrank(pod: Obj, job: Obj, args: Any) -> None:
    md = pod.setdefault("metadata", {})
    ann = md.get("annotations") or {}
    if ann.get(HCCL_RANK_KEY):
        return
    rank = next((e.get("value") for c in _containers(pod) for e in c.get("env") or []
                 if isinstance(e, dict) and e.get("name") == "RANK"), None)
    if not rank:
        f = _flags(args, HCCLRANK_FLAGS)
        role = _task_key(pod)
        if role not in (f["master"], f["worker"]):
            return
        try:
            index = int((md.get("labels") or {})[batch.TASK_INDEX])
        except (KeyError, ValueError):
            raise PluginError(f"pod {meta.name(pod)} doesn't have a valid {batch.TASK_INDEX} label") from None
        rank = str(index if role == f["master"] else _replicas(_task(job, f["master"])) + index)
    md["annotations"] = {**ann, HCCL_RANK_KEY: str(rank)}


ON_POD_CREATE: dict[str, Callable[[Obj, Obj, Any], None]] = {
    PYTORCH: pytorch, TENSORFLOW: tensorflow, MPI: mpi, RAY: ray, HCCLRANK: hcclrank}
# plugins that mark themselves in status.controlledResources (`plugin-<name>`), as Volcano's OnJobAdd
MARKS_CONTROLLED = (PYTORCH, TENSORFLOW, MPI, RAY)
