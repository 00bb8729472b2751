"""executor/vgpus.py: the variables a local vGPU pod's containers get from the cards Volcano's deviceshare chose
(volcano.sh/vgpu-ids-new), as the volcano-vgpu-device-plugin gives them on a cluster."""
from __future__ import annotations

import pytest

from vclite.executor import vgpus

NODE = ("G0", "G1")             # the node's share of the host's GPUs (devices.node_devices)
REGISTER = ("GPU-n-0", "GPU-n-1")   # the cards its volcano.sh/node-vgpu-register lists


def pod(chosen: str | None, asks: list[bool]) -> dict:
    containers = [{"name": f"c{i}", "command": ["true"],
                   **({"resources": {"limits": {"volcano.sh/vgpu-memory": "4000"}}} if ask else {})}
                  for i, ask in enumerate(asks)]
    return {"metadata": {"name": "p", "annotations": {} if chosen is None else {vgpus.CHOSEN: chosen}},
            "spec": {"nodeName": "n", "containers": containers}}


def hami(ids: str, *limits: str, cores: str, cache: str) -> dict:
    out = {"CUDA_VISIBLE_DEVICES": ids, "NVIDIA_VISIBLE_DEVICES": ids, vgpus.SM_LIMIT: cores,
           vgpus.SHARED_CACHE: f"/pods/p/logs/{cache}.vgpu.cache"}
    out.update({f"CUDA_DEVICE_MEMORY_LIMIT_{i}": m for i, m in enumerate(limits)})
    return out


@pytest.mark.parametrize("chosen, asks, expected", [
    pytest.param("GPU-n-1,NVIDIA,4000,30:", [True], {"c0": hami("G1", "4000m", cores="30", cache="c0")},
                 id="a card by its place in the register annotation"),
    pytest.param("GPU-n-0,NVIDIA,3000,0:GPU-n-1,NVIDIA,5000,0:", [True],
                 {"c0": hami("G0,G1", "3000m", "5000m", cores="0", cache="c0")}, id="two cards, a limit each"),
    pytest.param("G1,NVIDIA,4000,50:", [True], {"c0": hami("G1", "4000m", cores="50", cache="c0")},
                 id="a node registering this host's own UUIDs"),
    pytest.param("GPU-n-0,NVIDIA,1000,10:;GPU-n-1,NVIDIA,2000,20:", [False, True, True],
                 {"c1": hami("G0", "1000m", cores="10", cache="c1"), "c2": hami("G1", "2000m", cores="20", cache="c2")},
                 id="one part per container asking, in order"),
    pytest.param("GPU-x,NVIDIA,4000,30:", [True], {}, id="a card the node does not have: none"),
    pytest.param("GPU-n-0,NVIDIA,lots,30:", [True], {}, id="an unreadable card: left out"),
    pytest.param("", [True], {}, id="empty"),
    pytest.param(None, [True], {}, id="absent"),
])
def test_container_env(chosen, asks, expected):
    assert vgpus.container_env(pod(chosen, asks), NODE, REGISTER, "/pods/p/logs") == expected


def test_a_card_past_the_nodes_gpus_is_left_out():
    """(a node registering more cards than it was given host GPUs: only those it has)"""
    got = vgpus.container_env(pod("GPU-n-0,NVIDIA,1,0:GPU-n-1,NVIDIA,2,0:", [True]), ("G0",), REGISTER, "/l")
    assert got["c0"]["CUDA_VISIBLE_DEVICES"] == "G0" and "CUDA_DEVICE_MEMORY_LIMIT_1" not in got["c0"]
