"""deviceshare on the embedded control plane (virtual clock): the cards chosen reach the pods through their
bindings, and the next sessions count them from those annotations (GPU sharing and vGPU)."""
from __future__ import annotations

from vclite.api import kinds, meta
from vclite.lib import clock
from vclite.runtime import runtime
from vclite.scheduler import conf

BASE = {"cpu": "8", "memory": "16Gi", "pods": "110"}
CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: deviceshare
    arguments:
"""


def gpu_node(extra, annotations=None):
    res = {**BASE, **extra}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "g1", "labels": {"kubernetes.io/hostname": "g1"}, "annotations": annotations or {}},
            "status": {"allocatable": dict(res), "capacity": dict(res),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def vcjob(name, replicas, limits):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": replicas, "schedulerName": "volcano", "tasks": [
                {"name": "t", "replicas": replicas, "template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "command": ["true"],
                     "resources": {"requests": {"cpu": "1"}, "limits": dict(limits)}}]}}}]}}


def placed(rt, job, key):
    """pod name -> (node, annotation `key`) of the job's pods."""
    return {meta.name(p): ((p.get("spec") or {}).get("nodeName"), meta.annotations(p).get(key))
            for p in rt.client.list(kinds.POD, "default") if meta.name(p).startswith(job + "-")}


def start(node, arguments):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[node], run_pods=False,
                         scheduler_config=conf.parse(CONF + arguments))
    rt.start()
    return rt


def test_gpu_sharing_cards_reach_the_pods_and_count_in_later_sessions():
    rt = start(gpu_node({"volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "2"}),
               "      deviceshare.GPUSharingEnable: true\n")
    rt.client.create(vcjob("a", 3, {"volcano.sh/gpu-memory": "3000"}))
    rt.settle()
    assert placed(rt, "a", "volcano.sh/gpu-index") == {"a-t-0": ("g1", "0"), "a-t-1": ("g1", "0"),
                                                       "a-t-2": ("g1", "1")}
    rt.client.create(vcjob("b", 1, {"volcano.sh/gpu-memory": "4000"}))
    rt.settle()
    assert placed(rt, "b", "volcano.sh/gpu-index") == {"b-t-0": ("g1", "1")}   # 2000 left on card 0 (a's pods)
    rt.client.create(vcjob("c", 1, {"volcano.sh/gpu-memory": "2500"}))
    rt.settle()
    assert placed(rt, "c", "volcano.sh/gpu-index") == {"c-t-0": (None, None)}   # 3000 idle: 2000 + 1000
    (pg,) = [p for p in rt.client.list(kinds.PODGROUP, "default") if meta.name(p).startswith("c-")]
    assert "GpuShare no enough gpu memory" in str(pg["status"].get("conditions")), pg["status"]


def test_vgpu_ids_reach_the_pods():
    register = "GPU-0,10,16000,NVIDIA-Tesla T4,true,hami-core:GPU-1,10,16000,NVIDIA-Tesla T4,true,hami-core:"
    rt = start(gpu_node({"volcano.sh/vgpu-number": "20", "volcano.sh/vgpu-cores": "200",
                         "volcano.sh/vgpu-memory": "32000"}, {"volcano.sh/node-vgpu-register": register}),
               "      deviceshare.VGPUEnable: true\n      deviceshare.SchedulePolicy: spread\n")
    rt.client.create(vcjob("v", 2, {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3000"}))
    rt.settle()
    got = placed(rt, "v", "volcano.sh/vgpu-ids-new")
    assert got == {"v-t-0": ("g1", "GPU-0,NVIDIA,3000,0:"), "v-t-1": ("g1", "GPU-1,NVIDIA,3000,0:")}, got
    pod = rt.client.get(kinds.POD, "default", "v-t-0")
    assert meta.annotations(pod)["volcano.sh/bind-phase"] == "allocating"
    assert meta.annotations(pod)["volcano.sh/vgpu-node"] == "g1"
