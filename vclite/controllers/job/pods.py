"""Building the pods of a vcjob and the objects of its job plugins (pure: dicts in, dicts out).

`build_pod(job, task, index)` is Volcano's `createJobPod` followed by the plugins' `OnPodCreate`:
name `<job>-<task>-<index>`, controller ownerReference to the job, the template's labels and
annotations plus Volcano's (§1.6), schedulerName / priorityClassName inherited from the job when the
template has none, the job's volumes mounted into every container, and `status.phase: Pending`
(what the Kubernetes apiserver sets on create).

Plugins implemented (in the order the job lists them):
- `env`: VK_TASK_INDEX and VC_TASK_INDEX on every container and initContainer.
- `svc`: pod hostname/subdomain; env VC_<TASK>_HOSTS / VC_<TASK>_NUM from the `<job>-svc`
  ConfigMap (unless `--inject-hosts-env=false`); that ConfigMap mounted at /etc/volcano;
  `svc_configmap` and `svc_service` build the ConfigMap and the headless Service `<job>`.
  Volcano's NetworkPolicy `<job>` is not created (vclite has no NetworkPolicy kind).
- `pytorch`, `tensorflow`, `mpi`, `ray`, `hcclrank`: see frameworks.py; `ssh`: see ssh.py.

Differences from Volcano: job volumes get deterministic pod volume names `<job>-volume-<i>`
(Volcano: random suffix), and a job volume with only `volumeClaim` gets a claim name derived from the
job's uid (`generated_claim_name`: Volcano's shape `<job>-pvc-<12 characters>`, random there). The claims
themselves are made or checked before the PodGroup (jobio.py, actions.create_job_io).
"""
from __future__ import annotations

import hashlib
from typing import Any, Iterable

from vclite.api import batch
from vclite.api import core
from vclite.api import meta
from vclite.controllers.job import frameworks, podgroup, ssh
from vclite.lib import goflags, jsoncopy

Obj = dict[str, Any]

ENV_PLUGIN = "env"
SVC_PLUGIN = "svc"
IMPLEMENTED_PLUGINS = (ENV_PLUGIN, SVC_PLUGIN, ssh.NAME, *frameworks.ON_POD_CREATE)
DEFAULT_TASK_SPEC = "default"
CONFIGMAP_MOUNT_PATH = "/etc/volcano"
TASK_VK_INDEX_ENV = "VK_TASK_INDEX"
TASK_INDEX_ENV = "VC_TASK_INDEX"


def pod_name(job_name: str, task_name: str, index: int) -> str:
    return f"{job_name}-{task_name}-{index}"


def _copy_job_keys(src: dict[str, str], dst: dict[str, str], keys: Iterable[str]) -> None:
    for k in keys:
        if k in src:
            dst[k] = src[k]


_CLAIM_SUFFIX_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"  # Volcano's GenRandomStr alphabet


def generated_claim_name(job: Obj, index: int) -> str:
    """The claim name the controller gives `spec.volumes[index]` when it has only `volumeClaim` (Volcano's
    GenPVCName `<job>-pvc-<12 random [0-9a-z]>`; here derived from the job's uid and the index, so a run
    names it the same way each time it syncs)."""
    digest = int.from_bytes(hashlib.sha256(f"{meta.uid(job)}/{index}".encode()).digest(), "big")
    chars = []
    for _ in range(12):
        digest, r = divmod(digest, len(_CLAIM_SUFFIX_CHARS))
        chars.append(_CLAIM_SUFFIX_CHARS[r])
    return f"{meta.name(job)}-pvc-{''.join(chars)}"


def _mount_job_volumes(pod: Obj, job: Obj) -> None:
    spec = pod["spec"]
    seen: set[str] = set()
    for i, vol in enumerate((job.get("spec") or {}).get("volumes") or []):
        claim = vol.get("volumeClaimName")
        if not claim or claim in seen:
            continue
        seen.add(claim)
        name = f"{meta.name(job)}-volume-{i}"
        _list(spec, "volumes").append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
        for c in spec.get("containers") or []:
            _list(c, "volumeMounts").append({"mountPath": vol.get("mountPath", ""), "name": name})


def build_pod(job: Obj, task: Obj, index: int, forwarding: bool = False) -> Obj:
    """The pod `<job>-<task>-<index>` for `task` (a spec.tasks[] entry) of `job`, plugins applied.
    `forwarding`: the job's queue names extendClusters (annotation and label `volcano.sh/job-forwarding`)."""
    job_name, ns = meta.name(job), meta.namespace(job)
    jspec, jmd = job.get("spec") or {}, job.get("metadata") or {}
    template = jsoncopy.deep_copy(task.get("template") or {})
    tmd = template.get("metadata") or {}
    task_name = task.get("name") or ""
    ts_key = task_name or DEFAULT_TASK_SPEC
    spec = template.get("spec") or {}
    pod: Obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod_name(job_name, task_name, index), "namespace": ns,
                     "ownerReferences": [meta.owner_ref(job)],
                     "labels": dict(tmd.get("labels") or {}), "annotations": dict(tmd.get("annotations") or {})},
        "spec": spec,
        "status": {"phase": core.PodPhase.PENDING.value},
    }
    if not spec.get("schedulerName"):
        spec["schedulerName"] = jspec.get("schedulerName") or batch.DEFAULT_SCHEDULER
    if not spec.get("priorityClassName") and jspec.get("priorityClassName"):
        spec["priorityClassName"] = jspec["priorityClassName"]
    _mount_job_volumes(pod, job)

    ann, labels = pod["metadata"]["annotations"], pod["metadata"]["labels"]
    status = job.get("status") or {}
    ann.update({
        batch.TASK_INDEX: str(index),
        batch.TASK_SPEC: ts_key,
        batch.GROUP_NAME: podgroup.name(job),
        batch.JOB_NAME: job_name,
        batch.QUEUE_NAME: jspec.get("queue") or batch.DEFAULT_QUEUE,
        batch.JOB_VERSION: str(int(status.get("version", 0) or 0)),
        batch.TEMPLATE_UID: f"{job_name}-{task_name}",
        batch.JOB_RETRY_COUNT: str(int(status.get("retryCount", 0) or 0)),
    })
    if task.get("topologyPolicy"):
        ann[batch.NUMA_POLICY] = str(task["topologyPolicy"])
    job_ann = jmd.get("annotations") or {}
    _copy_job_keys(job_ann, ann, (batch.PREEMPTABLE, batch.COOLDOWN_TIME, batch.REVOCABLE_ZONE))
    _copy_job_keys(job_ann, ann, (batch.JDB_MIN_AVAILABLE,) if batch.JDB_MIN_AVAILABLE in job_ann
                   else (batch.JDB_MAX_UNAVAILABLE,))
    labels.update({
        batch.TASK_INDEX: str(index),
        batch.JOB_NAME: job_name,
        batch.TASK_SPEC: ts_key,
        batch.JOB_NAMESPACE: ns,
        batch.QUEUE_NAME: jspec.get("queue") or batch.DEFAULT_QUEUE,
    })
    _copy_job_keys(jmd.get("labels") or {}, labels, (batch.PREEMPTABLE, batch.COOLDOWN_TIME))
    if forwarding:
        ann[batch.JOB_FORWARDING] = labels[batch.JOB_FORWARDING] = "true"
    partition = task.get("partitionPolicy")
    if partition is not None:
        size = int(partition.get("partitionSize", 0) or 0)
        labels[batch.PARTITION_ID] = str(index // size if size > 0 else 0)

    for plugin, args in (jspec.get("plugins") or {}).items():
        if plugin == ENV_PLUGIN:
            apply_env(pod)
        elif plugin == SVC_PLUGIN:
            apply_svc(pod, job, args or [])
        elif plugin == ssh.NAME:
            ssh.mount(pod, job, args or [])
        elif plugin in frameworks.ON_POD_CREATE:
            frameworks.ON_POD_CREATE[plugin](pod, job, args or [])   # may raise frameworks.PluginError
    return pod


# ---- env plugin --------------------------------------------------------------------------------
def pod_index(pod: Obj) -> str:
    """The index from the pod name's last `-` segment (Volcano's GetPodIndexUnderTask)."""
    parts = meta.name(pod).split("-")
    return parts[-1] if len(parts) >= 3 else ""


def _containers(pod: Obj) -> list[Obj]:
    spec = pod.get("spec") or {}
    return list(spec.get("containers") or []) + list(spec.get("initContainers") or [])


def _list(obj: Obj, key: str) -> list:
    """obj[key], made an empty list when absent or null (`env: null` means no env, as in Kubernetes)."""
    if obj.get(key) is None:
        obj[key] = []
    return obj[key]


def apply_env(pod: Obj) -> None:
    index = pod_index(pod)
    for c in _containers(pod):
        _list(c, "env").extend([{"name": TASK_VK_INDEX_ENV, "value": index},
                                        {"name": TASK_INDEX_ENV, "value": index}])


# ---- svc plugin --------------------------------------------------------------------------------
SVC_FLAGS = batch.PLUGIN_FLAGS["svc"]


def svc_flags(args: Iterable[str]) -> dict[str, bool]:
    """The svc plugin's Go bool flags (`--publish-not-ready-addresses`, `--disable-network-policy`,
    `--inject-hosts-env=false`), parsed as Go's flag package does: an unknown flag ends the parsing."""
    return goflags.parse(args, SVC_FLAGS)[0]


def svc_configmap_name(job: Obj) -> str:
    return f"{meta.name(job)}-{SVC_PLUGIN}"


def _env_key(task_name: str) -> str:
    return task_name.replace("-", "_")


def svc_hosts(job: Obj) -> dict[str, str]:
    """The `<job>-svc` ConfigMap data (Volcano's GenerateHosts)."""
    data: dict[str, str] = {}
    job_name = meta.name(job)
    for task in (job.get("spec") or {}).get("tasks") or []:
        tspec = (task.get("template") or {}).get("spec") or {}
        hosts = []
        for i in range(int(task.get("replicas", 0) or 0)):
            host = tspec.get("hostname") or pod_name(job_name, task.get("name", ""), i)
            hosts.append(f"{host}.{tspec.get('subdomain') or job_name}")
            if tspec.get("hostname"):
                break
        key = _env_key(task.get("name", ""))
        data[f"{key}.host"] = "\n".join(hosts)
        data[f"VC_{key.upper()}_HOSTS"] = ",".join(hosts)
        data[f"VC_{key.upper()}_NUM"] = str(len(hosts))
    return data


def svc_configmap(job: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": svc_configmap_name(job), "namespace": meta.namespace(job),
                         "ownerReferences": [meta.owner_ref(job)]},
            "data": svc_hosts(job)}


def svc_service(job: Obj, args: Iterable[str] = ()) -> Obj:
    """The headless Service `<job>` selecting the job's pods."""
    spec: Obj = {"clusterIP": "None",
                 "selector": {batch.JOB_NAME: meta.name(job), batch.JOB_NAMESPACE: meta.namespace(job)}}
    if svc_flags(args)["publish-not-ready-addresses"]:
        spec["publishNotReadyAddresses"] = True
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": meta.name(job), "namespace": meta.namespace(job),
                         "ownerReferences": [meta.owner_ref(job)]},
            "spec": spec}


def apply_svc(pod: Obj, job: Obj, args: Iterable[str]) -> None:
    spec = pod["spec"]
    if not spec.get("hostname"):
        spec["hostname"] = meta.name(pod)
    if not spec.get("subdomain"):
        spec["subdomain"] = meta.name(job)
    cm = svc_configmap_name(job)
    if svc_flags(args)["inject-hosts-env"]:
        env = []
        for task in (job.get("spec") or {}).get("tasks") or []:
            key = _env_key(task.get("name", "")).upper()
            for name in (f"VC_{key}_HOSTS", f"VC_{key}_NUM"):
                env.append({"name": name, "valueFrom": {"configMapKeyRef": {"name": cm, "key": name}}})
        for c in _containers(pod):
            _list(c, "env").extend(jsoncopy.deep_copy(env))
    _list(spec, "volumes").append({"name": cm, "configMap": {"name": cm}})
    for c in _containers(pod):
        _list(c, "volumeMounts").append({"mountPath": CONFIGMAP_MOUNT_PATH, "name": cm})
