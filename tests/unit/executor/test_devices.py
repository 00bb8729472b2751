"""executor/devices.py: which GPUs each local container gets (CUDA_VISIBLE_DEVICES), as a node's device
manager gives them on a cluster."""
from __future__ import annotations

import stat

import pytest

from vclite.executor import devices, nodes


def gpu_node(name: str, n: int) -> dict:
    return nodes.node(name, {"cpu": "4", devices.GPU: str(n)})


def pod(apps: list[int], inits: list[int] = (), annotations: dict | None = None) -> dict:
    def container(prefix: str, i: int, n: int) -> dict:
        c = {"name": f"{prefix}{i}", "command": ["true"]}
        if n:
            c["resources"] = {"limits": {devices.GPU: str(n)}}
        return c
    return {"metadata": {"name": "p", "namespace": "ns", "annotations": annotations or {}},
            "spec": {"nodeName": "n0", "containers": [container("c", i, n) for i, n in enumerate(apps)],
                     "initContainers": [container("i", i, n) for i, n in enumerate(inits)]}}


@pytest.mark.parametrize("counts, host, expected", [
    pytest.param([2, 2], ("G0", "G1", "G2", "G3"), {"n0": ("G0", "G1"), "n1": ("G2", "G3")},
                 id="the host's GPUs split over the nodes in order"),
    pytest.param([4], ("G0", "G1", "G2", "G3"), {"n0": ("G0", "G1", "G2", "G3")}, id="one node: all of them"),
    pytest.param([0, 2], ("G0", "G1"), {"n1": ("G0", "G1")}, id="a node without GPUs has no entry"),
    pytest.param([2, 2], ("G0", "G1", "G2"), {"n0": ("G0", "G1"), "n1": ("G2", "G0")},
                 id="more declared than the host has: they wrap around"),
    pytest.param([2, 1], (), {"n0": ("0", "1"), "n1": ("2",)}, id="no host GPU: numbered across the nodes"),
    pytest.param([0, 0], ("G0",), {}, id="no node declares any: nothing"),
])
def test_node_devices(counts, host, expected):
    assert devices.node_devices([gpu_node(f"n{i}", n) for i, n in enumerate(counts)], host) == expected


@pytest.mark.parametrize("allocatable, count", [
    pytest.param({devices.GPU: "2"}, 2, id="nvidia.com/gpu"),
    pytest.param({devices.GPU_NUMBER: "3"}, 3, id="volcano.sh/gpu-number (GPU sharing)"),
    pytest.param({devices.GPU: "1", devices.GPU_NUMBER: "3"}, 1, id="nvidia.com/gpu first"),
    pytest.param({devices.GPU: "1k"}, 1000, id="a quantity"),
    pytest.param({devices.GPU: "1500m"}, 2, id="a fraction rounded up, as Quantity.Value()"),
    pytest.param({devices.GPU_NUMBER: "500m"}, 1, id="half a card is one"),
    pytest.param({devices.GPU: "-1"}, 0, id="negative: none"),
    pytest.param({devices.GPU: "lots"}, 0, id="unreadable: none"),
    pytest.param({}, 0, id="neither"),
])
def test_node_count(allocatable, count):
    assert devices.node_count(nodes.node("n", {"cpu": "1", **allocatable})) == count


REGISTER = "GPU-a,10,16000,NVIDIA-Tesla T4,true,hami-core:GPU-b,10,16000,NVIDIA-Tesla T4,true,hami-core:"


@pytest.mark.parametrize("allocatable, register, cards, count", [
    pytest.param({"volcano.sh/vgpu-number": "20"}, REGISTER, ("GPU-a", "GPU-b"), 2,
                 id="a vGPU node: the cards it registers"),
    pytest.param({devices.GPU: "1"}, REGISTER, ("GPU-a", "GPU-b"), 1, id="nvidia.com/gpu first"),
    pytest.param({}, "GPU-a,10,16000,NVIDIA,true,hami-core", ("GPU-a",), 1, id="no final colon"),
    pytest.param({}, "", (), 0, id="an empty annotation"),
    pytest.param({}, None, (), 0, id="no annotation"),
])
def test_a_vgpu_nodes_cards_are_its_gpus(allocatable, register, cards, count):
    node = nodes.node("n", {"cpu": "1", **allocatable})
    if register is not None:
        node["metadata"]["annotations"] = {devices.VGPU_REGISTER: register}
    assert devices.registered_cards(node) == cards
    assert devices.node_count(node) == count


@pytest.mark.parametrize("gpus, host, warned", [
    pytest.param({"n0": ("G0", "G1"), "n1": ("G0", "G1")}, ("G0", "G1"), True, id="4 declared, 2 here"),
    pytest.param({"n0": ("G0", "G1")}, ("G0", "G1"), False, id="as many as the host has"),
    pytest.param({"n0": ("0", "1")}, (), False, id="no host GPU: nothing to share"),
])
def test_shared_gpus_warning(gpus, host, warned):
    warning = devices.shared_gpus(gpus, host)
    assert (warning is not None) is warned
    if warned:
        assert "declare 4 GPUs (nvidia.com/gpu) and this host has 2" in warning


@pytest.mark.parametrize("apps, inits, held, expected", [
    pytest.param([1, 1], [], set(), {"c0": [0], "c1": [1]}, id="each app container its own"),
    pytest.param([2, 0], [], set(), {"c0": [0, 1], "c1": []}, id="a container asking none gets none"),
    pytest.param([1], [], {0, 1}, {"c0": [2]}, id="running pods' GPUs are not given again"),
    pytest.param([1], [2], set(), {"i0": [0, 1], "c0": [0]}, id="an init container reuses the pod's GPUs"),
    pytest.param([1, 1], [1], {3}, {"i0": [0], "c0": [0], "c1": [1]}, id="init and apps, one held"),
    pytest.param([0], [], {0, 1, 2, 3}, {"c0": []}, id="asking none fits a full node"),
])
def test_assign(apps, inits, held, expected):
    assert devices.assign(pod(apps, inits), ("G0", "G1", "G2", "G3"), held) == expected


@pytest.mark.parametrize("apps, inits, held, requested, available", [
    pytest.param([3], [], {0, 1}, 3, 2, id="app containers"),
    pytest.param([2, 2], [], {0}, 4, 3, id="two app containers together"),
    pytest.param([1], [3], {0, 1}, 3, 2, id="an init container"),
])
def test_too_few_free_is_the_kubelets_admission_error(apps, inits, held, requested, available):
    with pytest.raises(devices.NotEnough) as exc:
        devices.assign(pod(apps, inits), ("G0", "G1", "G2", "G3"), held)
    assert str(exc.value) == ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
                              f"Requested: {requested}, Available: {available}, which is unexpected")


@pytest.mark.parametrize("annotation, expected", [
    pytest.param("1", ["G1"], id="one card"),
    pytest.param("0,2", ["G0", "G2"], id="two cards"),
    pytest.param("5", None, id="no such card on this node: not shared"),
    pytest.param("a", None, id="not indices"),
    pytest.param("", None, id="empty"),
    pytest.param(None, None, id="absent"),
])
def test_shared_cards_follow_volcano_gpu_index(annotation, expected):
    annotations = {} if annotation is None else {devices.GPU_INDEX: annotation}
    assert devices.shared_cards(pod([0], annotations=annotations), ("G0", "G1", "G2")) == expected


@pytest.mark.parametrize("ids, expected", [
    pytest.param(["G1", "G3"], {"CUDA_VISIBLE_DEVICES": "G1,G3", "NVIDIA_VISIBLE_DEVICES": "G1,G3"}, id="two"),
    pytest.param([], {"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void"}, id="none: hidden"),
    pytest.param(["G0", "G0"], {"CUDA_VISIBLE_DEVICES": "G0", "NVIDIA_VISIBLE_DEVICES": "G0"},
                 id="a wrapped-around id once"),
])
def test_env(ids, expected):
    assert devices.env(ids) == expected


@pytest.fixture
def fresh_host(monkeypatch, tmp_path):
    """host_gpus read anew, with no CUDA_VISIBLE_DEVICES, no driver files (a test may give some) and a PATH
    holding only `bin` (filled by the test)."""
    devices.host_gpus.cache_clear()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(devices, "PROC_GPUS", str(tmp_path / "no-driver"), raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    yield bin_dir
    devices.host_gpus.cache_clear()


def fake_nvidia_smi(bin_dir, script: str) -> None:
    path = bin_dir / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_host_gpus_are_nvidia_smis_uuids(fresh_host):
    fake_nvidia_smi(fresh_host, 'case "$*" in *query-gpu=uuid*) echo GPU-aaa; echo GPU-bbb;; *) exit 9;; esac\n')
    assert devices.host_gpus() == ("GPU-aaa", "GPU-bbb")
    assert nodes.host_node()["status"]["allocatable"][devices.GPU] == "2"


def test_host_gpus_follow_vclites_own_cuda_visible_devices(fresh_host, monkeypatch):
    fake_nvidia_smi(fresh_host, "echo GPU-aaa; echo GPU-bbb\n")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1, 0")
    assert devices.host_gpus() == ("1", "0")


@pytest.mark.parametrize("listed, gpus", [
    pytest.param("-1", (), id="-1: CUDA's usual way to hide every GPU"),
    pytest.param("0,1,-1,2", ("0", "1"), id="up to the first invalid entry, as CUDA reads it"),
    pytest.param("1,3,0", ("1",), id="up to the first index past the host's GPUs (before: 1, 3 and 0)"),
    pytest.param("3, 5", (), id="only indices past the host's GPUs (before: both)"),
    pytest.param("none", (), id="not an index nor a UUID"),
    pytest.param("GPU-bb,GPU-aa", ("GPU-bbb", "GPU-aaa"), id="UUIDs, abbreviated (before: as written)"),
    pytest.param("GPU-bb,GPU-a", ("GPU-bbb",), id="up to an ambiguous UUID (before: both as written)"),
    pytest.param("GPU-bbb,GPU-ccc,GPU-aaa", ("GPU-bbb",), id="up to a UUID the host has not (before: all three)"),
    pytest.param("0,1,0", (), id="a GPU twice: none (before: 0 and 1)"),
    pytest.param(" 1 , 0 ", ("1", "0"), id="spaces around"),
    pytest.param("0,,1", ("0",), id="an empty entry ends the list (before: skipped)"),
    pytest.param("", (), id="empty"),
])
def test_cuda_visible_devices_as_cuda_reads_it(fresh_host, monkeypatch, listed, gpus):
    fake_nvidia_smi(fresh_host, "echo GPU-aaa; echo GPU-bbb; echo GPU-abc\n")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", listed)
    assert devices.host_gpus() == gpus
    assert (devices.GPU in nodes.host_node()["status"]["allocatable"]) is bool(gpus)


def test_cuda_visible_devices_on_a_host_without_gpus_is_none(fresh_host, monkeypatch):
    """(before: `CUDA_VISIBLE_DEVICES=0,1` on a host without GPUs gave the run two)"""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert devices.host_gpus() == ()


def test_cuda_visible_devices_with_gpus_known_by_number_only(fresh_host, monkeypatch, tmp_path):
    """The driver's files show no UUID and nvidia-smi is missing: indices are checked against their number."""
    driver_gpus(tmp_path / "gpus", {"0000:07:00.0": "Model: NVIDIA A100\n", "0000:81:00.0": "Model: NVIDIA A100\n"})
    monkeypatch.setattr(devices, "PROC_GPUS", str(tmp_path / "gpus"), raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,2,0")
    assert devices.host_gpus() == ("1",)


def test_an_empty_cuda_visible_devices_means_none(fresh_host, monkeypatch):
    fake_nvidia_smi(fresh_host, "echo GPU-aaa\n")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert devices.host_gpus() == ()
    assert devices.GPU not in nodes.host_node()["status"]["allocatable"]


def driver_gpus(root, infos: dict[str, str]) -> None:
    for slot, info in infos.items():
        (root / slot).mkdir(parents=True)
        (root / slot / "information").write_text(info)


UUID_A, UUID_B = "GPU-aaaaaaaa-0000-1111-2222-333333333333", "GPU-bbbbbbbb-0000-1111-2222-333333333333"


def info(uuid: str) -> str:
    return f"Model: \t\t NVIDIA A100\nIRQ:   \t\t 42\nGPU UUID: \t {uuid}\nBus Type: \t PCIe\n"


def test_host_gpus_are_read_from_the_drivers_proc_files_without_nvidia_smi(fresh_host, monkeypatch, tmp_path):
    """(nvidia-smi may take seconds to start: the driver's own files say the same at once)"""
    calls = tmp_path / "calls"
    fake_nvidia_smi(fresh_host, f"echo called >> {calls}; echo GPU-from-smi\n")
    driver_gpus(tmp_path / "gpus", {"0000:81:00.0": info(UUID_B), "0000:07:00.0": info(UUID_A)})
    monkeypatch.setattr(devices, "PROC_GPUS", str(tmp_path / "gpus"), raising=False)
    assert devices.host_gpus() == (UUID_A, UUID_B)   # (PCI order, as nvidia-smi lists them)
    assert not calls.exists()


# What drivers write in /proc/driver/nvidia/gpus/<PCI address>/information, as users posted it: an initialised
# H100 (driver 535; spaces align the values), and a GPU the driver has not initialised (its UUID and BIOS unknown).
H100 = """Model:           NVIDIA H100 80GB HBM3
IRQ:             10
GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b
Video BIOS:      96.00.99.00.01
Bus Type:        PCIe
DMA Size:        52 bits
DMA Mask:        0xfffffffffffff
Bus Location:    0000:62:00.0
Device Minor:    5
GPU Firmware:    535.129.03
GPU Excluded:    No
"""
UNINITIALISED = """Model:           GeForce GTX 980
IRQ:             11
GPU UUID:        GPU-????????-????-????-????-????????????
Video BIOS:      ??.??.??.??.??
Bus Type:        PCIe
DMA Size:        36 bits
DMA Mask:        0xfffffffff
Bus Location:    0000:00:05.0
Device Minor:    0
"""


@pytest.mark.parametrize("text, expected", [
    pytest.param(H100, ("GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b", False), id="H100, driver 535"),
    pytest.param(UNINITIALISED, (None, False), id="not initialised: GPU-????????-…"),
    pytest.param(H100.replace("Excluded:    No", "Excluded:    Yes"),
                 ("GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b", True), id="excluded (NVreg_ExcludedGpus)"),
    pytest.param(H100.replace("\n", "\r\n"), ("GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b", False), id="CRLF"),
    pytest.param(info("GPU-aaaa-1"), (None, False), id="not a UUID's shape"),
    pytest.param("Model: NVIDIA A100\n", (None, False), id="no UUID line (an older driver)"),
    pytest.param("", (None, False), id="empty"),
])
def test_driver_info(text, expected):
    assert devices.driver_info(text) == expected


@pytest.mark.parametrize("infos, gpus", [
    pytest.param({"0000:62:00.0": H100, "0000:07:00.0": H100.replace("9221d5d1", "11111111")},
                 ("GPU-11111111-b60b-a624-bf14-0a1819cfda3b", "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b"),
                 id="initialised GPUs: their UUIDs in PCI order"),
    pytest.param({"0000:62:00.0": H100, "0000:07:00.0": H100.replace("Excluded:    No", "Excluded:    Yes")},
                 ("GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b",), id="an excluded GPU left out (before: counted)"),
    pytest.param({"0000:62:00.0": H100, "0000:07:00.0": UNINITIALISED}, ("0", "1"),
                 id="one not initialised, no nvidia-smi: numbered"),
    pytest.param({"0000:00:05.0": UNINITIALISED,
                  "0000:07:00.0": UNINITIALISED.replace("Device Minor:", "GPU Excluded: Yes\nDevice Minor:")}, ("0",),
                 id="not initialised, one excluded: numbered, the excluded one left out (before: two)"),
])
def test_host_gpus_from_real_driver_files(fresh_host, monkeypatch, tmp_path, infos, gpus):
    driver_gpus(tmp_path / "gpus", infos)
    monkeypatch.setattr(devices, "PROC_GPUS", str(tmp_path / "gpus"), raising=False)
    assert devices.host_gpus() == gpus


@pytest.mark.parametrize("infos", [
    pytest.param({"0000:07:00.0": info(UUID_A), "0000:81:00.0": info("??")}, id="one shows no UUID"),
    pytest.param({"0000:07:00.0": "Model: NVIDIA A100\n"}, id="no UUID line"),
    pytest.param({"0000:07:00.0": H100, "0000:00:05.0": UNINITIALISED}, id="one not initialised yet"),
])
def test_nvidia_smi_is_asked_when_the_proc_files_show_no_uuid(fresh_host, monkeypatch, tmp_path, infos):
    fake_nvidia_smi(fresh_host, "echo GPU-from-smi-0; echo GPU-from-smi-1\n")
    driver_gpus(tmp_path / "gpus", infos)
    monkeypatch.setattr(devices, "PROC_GPUS", str(tmp_path / "gpus"), raising=False)
    assert devices.host_gpus() == ("GPU-from-smi-0", "GPU-from-smi-1")


def test_a_failing_nvidia_smi_is_no_gpu(fresh_host):
    """(and no driver files: a host without GPUs)"""
    fake_nvidia_smi(fresh_host, "echo 'NVIDIA-SMI has failed' >&2; exit 9\n")
    assert devices.host_gpus() == ()


def test_no_nvidia_smi_no_gpu(fresh_host):
    assert devices.host_gpus() == ()
    assert devices.GPU not in nodes.host_node()["status"]["allocatable"]
