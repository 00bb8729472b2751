"""Numatopology admission: the CRD schema (nodeinfo.volcano.sh_numatopologies.yaml), plus what Volcano's
scheduler could not read (a cpuset that is not one, a CPU id that is not a number, a reservation it
drops), refused with the field named."""
from __future__ import annotations

from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds, numatopo
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]
VIEW = views.default_view()


def topo(**spec: Any) -> Obj:
    return {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": "node-1"},
            "spec": spec}


def refusal(new: Obj) -> list[str]:
    try:
        admit.admit(Op.CREATE, kinds.NUMATOPOLOGY, new, None, VIEW)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


FULL = topo(policies={"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
            resReserved={"cpu": "1", "memory": "1Gi"},
            numares={"cpu": {"allocatable": "1-7", "capacity": 8}},
            cpuDetail={str(c): {"numa": c // 4, "socket": c // 4, "core": c // 2} for c in range(8)},
            podAllocations=[{"uid": "u1", "name": "p", "namespace": "default",
                             "containerAllocations": [{"name": "c", "allocations": {"cpu": "1-2"}}]}])


@pytest.mark.parametrize("obj", [pytest.param(FULL, id="full"), pytest.param(topo(), id="empty-spec"),
                                 pytest.param(topo(numares={"cpu": {"allocatable": ""}}), id="no-free-cpu")])
def test_good_numatopologies_are_admitted(obj: Obj) -> None:
    assert refusal(obj) == []


@pytest.mark.parametrize("obj, expected", [
    pytest.param(topo(policies={"CPUManagerPolicy": 1}), ["spec.policies.CPUManagerPolicy: Invalid value: 1: "
                                                          "must be of type string"], id="policy-not-a-string"),
    pytest.param(topo(numares={"cpu": {"allocatable": "0-3,9-x"}}),
                 ["spec.numares.cpu.allocatable: Invalid value: \"0-3,9-x\": invalid cpuset item '9-x'"],
                 id="bad-cpuset"),
    pytest.param(topo(numares={"cpu": {"allocatable": "5-2"}}),
                 ["spec.numares.cpu.allocatable: Invalid value: \"5-2\": invalid range '5-2' (5 > 2)"],
                 id="backwards-range"),
    pytest.param(topo(numares={"cpu": {"capacity": "8"}}), ["spec.numares.cpu.capacity: Invalid value: \"8\""],
                 id="capacity-not-an-integer"),
    pytest.param(topo(cpuDetail={"x": {"numa": 0}}), ["spec.cpuDetail.x: Invalid value: \"x\": a CPU id must be"],
                 id="cpu-id-not-a-number"),
    # str.isdigit() accepted these, and the scheduler's int() raised a traceback out of the session
    pytest.param(topo(cpuDetail={"\u00b2": {"numa": 0}}),
                 ["spec.cpuDetail.\u00b2: Invalid value: \"\u00b2\": a CPU id"],
                 id="cpu-id-superscript-digit"),
    pytest.param(topo(cpuDetail={"\u0663": {"numa": 0}}),
                 ["spec.cpuDetail.\u0663: Invalid value: \"\u0663\": a CPU id"],
                 id="cpu-id-arabic-indic-digit"),
    pytest.param(topo(cpuDetail={"0": {"numa": -1}}), ["spec.cpuDetail.0.numa: Invalid value: -1: should be "
                                                       "greater than or equal to 0"], id="negative-numa"),
    pytest.param(topo(resReserved={"nvidia.com/gpu": "1"}), ["spec.resReserved.nvidia.com/gpu: Unsupported value"],
                 id="reserved-resource-volcano-drops"),
    pytest.param(topo(resReserved={"cpu": "-1"}), ["spec.resReserved.cpu: Invalid value: \"-1\""],
                 id="negative-reservation"),
    pytest.param(topo(podAllocations=[{"uid": 7}]), ["spec.podAllocations[0].uid: Invalid value: 7"],
                 id="pod-allocation-uid"),
])
def test_bad_numatopologies_are_refused_naming_the_field(obj: Obj, expected: list[str]) -> None:
    got = refusal(obj)
    assert len(got) == len(expected), got
    for g, want in zip(got, expected):
        assert g.startswith(want), got


def test_kind_lookups() -> None:
    assert kinds.by_resource_name("numatopo") is kinds.NUMATOPOLOGY and not kinds.NUMATOPOLOGY.namespaced
    assert kinds.lookup("nodeinfo.volcano.sh/v1alpha1", "Numatopology") is kinds.NUMATOPOLOGY
    assert not kinds.NUMATOPOLOGY.has_status


@pytest.mark.parametrize("text, cpus", [("", set()), ("3", {3}), ("0-3,8", {0, 1, 2, 3, 8}), ("1-1", {1})])
def test_cpusets_read_and_written_as_linux_lists(text: str, cpus: set[int]) -> None:
    assert numatopo.parse_cpuset(text) == cpus
    assert numatopo.format_cpuset(cpus) == ("1" if text == "1-1" else text)
