"""`vcctl run` gives each container the GPUs it asked for (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES) and
hides them from the others, as a cluster's device plugin does; real processes print what they were given."""
from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess

import pytest

from tests.e2e.conftest import ROOT, VCCTL

pytestmark = pytest.mark.e2e

SHOW = "echo gpus=[$CUDA_VISIBLE_DEVICES] nvidia=[$NVIDIA_VISIBLE_DEVICES]"


def container(gpus: int = 0, resource: str = "nvidia.com/gpu") -> dict:
    c = {"name": "main", "image": "pytorch", "command": ["sh", "-c", SHOW]}
    if gpus:
        c["resources"] = {"limits": {resource: gpus}}
    return c


def job(name: str, tasks: dict[str, tuple[int, dict]]) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": sum(n for n, _ in tasks.values()), "schedulerName": "volcano",
                     "tasks": [{"name": t, "replicas": n, "template": {"spec": {"restartPolicy": "Never",
                                                                              "containers": [c]}}}
                               for t, (n, c) in tasks.items()]}}


def run(tmp_path: pathlib.Path, objects: list[dict], *args: str, env: dict | None = None,
        path_first: pathlib.Path | None = None) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """vcctl run of `objects`; the process and each pod's log (pod name -> its one line)."""
    manifest = tmp_path / "gpus.json"
    manifest.write_text("\n".join(json.dumps(o) for o in objects))
    clean = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")}
    if path_first is not None:
        clean["PATH"] = f"{path_first}:{clean.get('PATH', '')}"
    work = tmp_path / "work"
    proc = subprocess.run([VCCTL, "run", "--workdir", str(work), *args, str(manifest)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**clean, **(env or {})})
    logs = {p.parent.parent.name: p.read_text().strip() for p in work.glob("default/*/logs/main.log")}
    return proc, logs


NO_DRIVER = pytest.mark.skipif(os.path.isdir("/proc/driver/nvidia/gpus"),
                               reason="this host's driver shows its own GPUs (a fake nvidia-smi is not asked)")


def fake_gpus(tmp_path: pathlib.Path, n: int) -> pathlib.Path:
    """A directory holding an nvidia-smi that lists `n` GPUs (GPU-0000, GPU-0001, …), for `path_first`: with
    CUDA_VISIBLE_DEVICES, vclite keeps to those of them CUDA would see."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + "".join(f"echo GPU-{i:04d}\n" for i in range(n)))
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def given(line: str) -> list[str]:
    """The GPUs a pod's line says it was given."""
    inner = line.split("gpus=[", 1)[1].split("]", 1)[0]
    return [x for x in inner.split(",") if x]


def test_each_worker_gets_its_own_gpu_and_a_cpu_pod_none(tmp_path):
    proc, logs = run(tmp_path, [job("train", {"worker": (4, container(1)), "prep": (1, container())})],
                     "--nodes", "2x(cpu=8,nvidia.com/gpu=2)")
    assert proc.returncode == 0, proc.stderr
    workers = [given(line) for name, line in logs.items() if "-worker-" in name]
    assert sorted(w for ids in workers for w in ids) == ["0", "1", "2", "3"]   # (no host GPU: numbered)
    assert logs["train-prep-0"] == "gpus=[] nvidia=[void]"


@NO_DRIVER
def test_the_hosts_gpus_from_nvidia_smi_are_the_default_nodes(tmp_path):
    proc, logs = run(tmp_path, [job("train", {"worker": (2, container(1))})], path_first=fake_gpus(tmp_path, 2))
    assert proc.returncode == 0, proc.stderr
    assert sorted(given(line)[0] for line in logs.values()) == ["GPU-0000", "GPU-0001"]


@NO_DRIVER
def test_the_default_node_declares_the_hosts_gpus_so_a_third_gang_member_waits(tmp_path):
    """Two GPUs here: a gang of three one-GPU workers cannot start (minAvailable 3), and the run says why."""
    proc, logs = run(tmp_path, [job("big", {"worker": (3, container(1))})], "--timeout", "3",
                     env={"CUDA_VISIBLE_DEVICES": "0,1"}, path_first=fake_gpus(tmp_path, 4))
    assert proc.returncode == 1
    assert "job needs nvidia.com/gpu 3" in proc.stderr and logs == {}, proc.stderr
    assert "the one node is this machine (cpu " in proc.stderr and ", 2 GPUs); declare the nodes" in proc.stderr


@NO_DRIVER
def test_vclites_own_cuda_visible_devices_limits_the_run(tmp_path):
    proc, logs = run(tmp_path, [job("train", {"worker": (2, container(1))})], env={"CUDA_VISIBLE_DEVICES": "5,7"},
                     path_first=fake_gpus(tmp_path, 8))
    assert proc.returncode == 0, proc.stderr
    assert sorted(given(line)[0] for line in logs.values()) == ["5", "7"]


@NO_DRIVER
@pytest.mark.parametrize("listed, host", [
    pytest.param("1,9,0", "1 GPU)", id="ends at an index past the host's GPUs"),
    pytest.param("GPU-0003,GPU-00", "1 GPU)", id="ends at an ambiguous UUID"),
    pytest.param("2,0,2", "no GPU)", id="a GPU twice: none"),
])
def test_vclites_own_cuda_visible_devices_is_read_as_cuda_reads_it(tmp_path, listed, host):
    """(before: `1,9,0` gave the run three GPUs, one of them a GPU this host has not, `2,0,2` two)"""
    proc, logs = run(tmp_path, [job("pair", {"worker": (2, container(1))})], "--timeout", "3",
                     env={"CUDA_VISIBLE_DEVICES": listed}, path_first=fake_gpus(tmp_path, 4))
    assert proc.returncode == 1
    assert "job needs nvidia.com/gpu 2" in proc.stderr, proc.stderr
    assert f", {host}; declare the nodes" in proc.stderr, proc.stderr


@NO_DRIVER
def test_vclites_own_cuda_visible_devices_names_gpus_by_uuid(tmp_path):
    proc, logs = run(tmp_path, [job("pair", {"worker": (2, container(1))})],
                     env={"CUDA_VISIBLE_DEVICES": "GPU-0003,GPU-0001"}, path_first=fake_gpus(tmp_path, 4))
    assert proc.returncode == 0, proc.stderr
    assert sorted(given(line)[0] for line in logs.values()) == ["GPU-0001", "GPU-0003"]


def test_cuda_visible_devices_on_a_host_without_gpus_gives_none(tmp_path):
    """As CUDA, which sees no GPU there (before: `CUDA_VISIBLE_DEVICES=0,1` gave the run two)."""
    proc, _ = run(tmp_path, [job("big", {"worker": (1, container(1))})], "--timeout", "3",
                  env={"CUDA_VISIBLE_DEVICES": "0,1"}, path_first=fake_gpus(tmp_path, 0))
    assert proc.returncode == 1
    assert "job needs nvidia.com/gpu 1" in proc.stderr and ", no GPU); declare" in proc.stderr, proc.stderr


@NO_DRIVER
def test_a_pod_asking_more_than_its_node_has_free_fails_as_the_kubelet_fails_it(tmp_path):
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "greedy"},
            "spec": {"nodeName": "local", "restartPolicy": "Never", "containers": [container(3)]}}
    proc, logs = run(tmp_path, [bare], env={"CUDA_VISIBLE_DEVICES": "0,1"}, path_first=fake_gpus(tmp_path, 2))
    assert proc.returncode == 1
    assert ("pod default/greedy Failed: UnexpectedAdmissionError: Allocate failed due to requested number of "
            "devices unavailable for nvidia.com/gpu. Requested: 3, Available: 2, which is unexpected") in proc.stderr
    assert logs == {}   # (nothing ran)


def test_gpu_sharing_pods_see_the_card_volcano_chose(tmp_path):
    conf = ROOT / "tests" / "scenarios" / "states" / "conf" / "gpushare.conf"
    proc, logs = run(tmp_path, [job("infer", {"a": (1, container(6000, "volcano.sh/gpu-memory")),
                                              "b": (1, container(6000, "volcano.sh/gpu-memory"))})],
                     "--scheduler-conf", str(conf), "-o", "json",
                     "--nodes", "(cpu=8,volcano.sh/gpu-memory=16000,volcano.sh/gpu-number=2)")
    assert proc.returncode == 0, proc.stderr
    pods = {o["metadata"]["name"]: o for o in json.loads(proc.stdout)["items"] if o["kind"] == "Pod"}
    assert set(pods) == set(logs) == {"infer-a-0", "infer-b-0"}
    for name, pod in pods.items():
        assert given(logs[name]) == [pod["metadata"]["annotations"]["volcano.sh/gpu-index"]], (name, logs)


def test_a_gpu_sharing_pods_container_that_asks_for_no_card_sees_none(tmp_path):
    """Volcano's device plugin is asked for the containers requesting volcano.sh/gpu-memory only."""
    conf = ROOT / "tests" / "scenarios" / "states" / "conf" / "gpushare.conf"
    infer = job("infer", {"a": (1, container(6000, "volcano.sh/gpu-memory"))})
    side = {"name": "side", "image": "busybox", "command": ["sh", "-c", SHOW]}
    infer["spec"]["tasks"][0]["template"]["spec"]["containers"].append(side)
    proc, _ = run(tmp_path, [infer], "--scheduler-conf", str(conf),
                  "--nodes", "(cpu=8,volcano.sh/gpu-memory=16000,volcano.sh/gpu-number=2)")
    assert proc.returncode == 0, proc.stderr
    logs = tmp_path / "work" / "default" / "infer-a-0" / "logs"
    assert given((logs / "main.log").read_text()) != []
    assert (logs / "side.log").read_text().strip() == "gpus=[] nvidia=[void]"


VGPU_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "g1", "annotations": {
    "volcano.sh/node-vgpu-register": "GPU-g1-0,10,16000,NVIDIA-Tesla T4,true,hami-core:"
                                     "GPU-g1-1,10,16000,NVIDIA-Tesla T4,true,hami-core:"}},
    "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "20", "volcano.sh/vgpu-number": "20",
                               "volcano.sh/vgpu-cores": "200", "volcano.sh/vgpu-memory": "32000"}}}


@NO_DRIVER
def test_vgpu_pods_see_their_cards_and_hami_cores_limits(tmp_path):
    """On a host with GPUs, a vGPU pod sees the host GPU behind the card deviceshare chose (before: none)."""
    conf = ROOT / "tests" / "scenarios" / "states" / "conf" / "vgpu.conf"
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps(VGPU_NODE))
    show = {"name": "main", "image": "cuda", "command": ["sh", "-c", SHOW + " mem=$CUDA_DEVICE_MEMORY_LIMIT_0 "
                                                                        "sm=$CUDA_DEVICE_SM_LIMIT"],
            "resources": {"limits": {"volcano.sh/vgpu-memory": 6000, "volcano.sh/vgpu-cores": 30}}}
    proc, logs = run(tmp_path, [job("infer", {"a": (1, show), "b": (1, show), "c": (1, show)})],
                     "--scheduler-conf", str(conf), "--nodes", str(nodes), "-o", "json",
                     env={"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, path_first=fake_gpus(tmp_path, 8))
    assert proc.returncode == 0, proc.stderr
    pods = {o["metadata"]["name"]: o for o in json.loads(proc.stdout)["items"] if o["kind"] == "Pod"}
    assert set(logs) == set(pods) == {"infer-a-0", "infer-b-0", "infer-c-0"}
    for name, pod in pods.items():
        card = pod["metadata"]["annotations"]["volcano.sh/vgpu-ids-new"].split(",")[0]   # GPU-g1-<i>
        assert logs[name] == f"gpus=[{4 + int(card[-1])}] nvidia=[{4 + int(card[-1])}] mem=6000m sm=30", name
