"""deviceshare: GPU sharing, GPU number and vGPU devices — node inventory, fit, policy order and score,
the ledger rebuilt from placed pods' annotations, and the annotations a bind carries (sessions)."""
from __future__ import annotations

import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session
from vclite.scheduler.plugins import gpushare, vgpu

from .. import objects

# ---- builders -------------------------------------------------------------------------------------------


def share_node(name, mem, num, unhealthy=None, field="allocatable"):
    n = objects.node(name)
    n["status"][field] = {**n["status"].get(field, {}), gpushare.GPU_MEMORY: str(mem), gpushare.GPU_NUMBER: str(num)}
    if unhealthy is not None:
        n["metadata"]["annotations"] = {gpushare.UNHEALTHY_IDS: unhealthy}
    return n


def vgpu_node(name, cards, alloc=True):
    """cards: (uuid, count, memory[, type]) tuples."""
    n = objects.node(name)
    entry = [f"{c[0]},{c[1]},{c[2]},{c[3] if len(c) > 3 else 'NVIDIA-Tesla T4'},true,hami-core" for c in cards]
    n["metadata"]["annotations"] = {vgpu.REGISTER: ":".join(entry) + ":"}
    if alloc:
        n["status"]["allocatable"].update({vgpu.VGPU_NUMBER: "20", vgpu.VGPU_CORES: "200", vgpu.VGPU_MEMORY: "32000"})
    return n


def gpod(key, limits, node=None, group="pg1", annotations=None, init_limits=None, phase=None):
    p = objects.pod(key, group, node=node, phase=phase or ("Running" if node else "Pending"))
    p["spec"]["containers"][0]["resources"]["limits"] = dict(limits)
    if init_limits is not None:
        p["spec"]["initContainers"] = [{"name": "init", "resources": {"limits": dict(init_limits)}}]
    p["metadata"]["annotations"].update(annotations or {})
    return p


def mem(n):
    return {gpushare.GPU_MEMORY: str(n)}


def num(n):
    return {gpushare.GPU_NUMBER: str(n)}


def vg(number=None, memory=None, cores=None):
    out = {}
    for k, v in ((vgpu.VGPU_NUMBER, number), (vgpu.VGPU_MEMORY, memory), (vgpu.VGPU_CORES, cores)):
        if v is not None:
            out[k] = str(v)
    return out


def placed_vgpu(key, node, uuid, memory, cores=0):
    return gpod(key, vg(1, memory), node=node, group="other",
                annotations={vgpu.ASSIGNED_IDS: f"{uuid},NVIDIA,{memory},{cores}:"})


def share_ledger(node, *pods):
    dev = gpushare.node_devices(node)
    for p in pods:
        dev.add(p["metadata"]["uid"], p, gpushare.gpu_index(p))
    return dev


def vgpu_ledger(node, *pods):
    dev = vgpu.node_devices(node)
    for p in pods:
        dev.add_placed(p["metadata"]["uid"], p)
    return dev


# ---- GPU share: inventory and requests ------------------------------------------------------------------
@pytest.mark.parametrize("node, cards", [
    pytest.param(share_node("n", 16000, 2), {0: 8000, 1: 8000}, id="memory split evenly"),
    pytest.param(share_node("n", 10000, 3), {0: 3333, 1: 3333, 2: 3333}, id="integer division"),
    pytest.param(share_node("n", 16000, 4, unhealthy="1,x,3"), {0: 4000, 2: 4000}, id="unhealthy ids dropped"),
    # Go's Atoi refuses " 3" and "3_0": upstream keeps those cards in use (int() took them)
    pytest.param(share_node("n", 16000, 4, unhealthy="1, 3,0_0"), {0: 4000, 2: 4000, 3: 4000},
                 id="unhealthy ids as atoi reads them"),
    pytest.param(share_node("n", 16000, 2, field="capacity"), {0: 8000, 1: 8000}, id="from capacity"),
    pytest.param(share_node("n", 16000, 0), None, id="no cards"),
    pytest.param(objects.node("n"), None, id="no gpu resources"),
])
def test_share_inventory(node, cards):
    dev = gpushare.node_devices(node)
    assert (None if dev is None else {i: c.memory for i, c in dev.cards.items()}) == cards


@pytest.mark.parametrize("limits, init, want", [
    ({gpushare.GPU_MEMORY: "3000"}, None, 3000),
    ({gpushare.GPU_MEMORY: "3000"}, {gpushare.GPU_MEMORY: "5000"}, 5000),   # the larger init container
    ({gpushare.GPU_MEMORY: "3k"}, None, 3000),
    ({}, None, 0),
])
def test_share_pod_memory(limits, init, want):
    assert gpushare.pod_amount(gpod("default/p", limits, init_limits=init), gpushare.GPU_MEMORY) == want


# ---- GPU share: fit and allocation (memory fragmentation, cards in use, multi-GPU) ----------------------
N2 = share_node("n", 16000, 2)
N3 = share_node("n", 24000, 3)
USES_0 = gpod("default/u0", mem(6000), node="n", annotations={gpushare.GPU_INDEX: "0"})
NUMBER_0 = gpod("default/g0", num(1), node="n", annotations={gpushare.GPU_INDEX: "0"})


@pytest.mark.parametrize("node, placed, pod, sharing, number, why, index", [
    pytest.param(N2, [], gpod("default/p", mem(8000)), True, False, None, "0", id="fits a card exactly"),
    pytest.param(N2, [USES_0], gpod("default/p", mem(4000)), True, False, None, "1",
                 id="card 0 partly used by a running pod: card 1"),
    pytest.param(N2, [USES_0], gpod("default/p", mem(2000)), True, False, None, "0",
                 id="the first card that holds it"),
    pytest.param(N2, [USES_0], gpod("default/p", mem(9000)), True, False, gpushare.NO_MEMORY, None,
                 id="10000 idle in all but no card holds 9000 (fragmentation)"),
    pytest.param(N3, [NUMBER_0], gpod("default/p", num(2)), False, True, None, "1,2",
                 id="two whole idle cards"),
    pytest.param(N3, [NUMBER_0], gpod("default/p", num(3)), False, True, gpushare.NO_NUMBER, None,
                 id="a used card is not idle"),
    pytest.param(N2, [gpod("default/two", mem(6000), node="n", annotations={gpushare.GPU_INDEX: "0,1"})],
                 gpod("default/p", mem(3000)), True, False, gpushare.NO_MEMORY, None,
                 id="a pod on two cards is charged its whole request on each"),
    pytest.param(share_node("n", 1000, 1),
                 [gpod("default/big", mem(3000), node="n", annotations={gpushare.GPU_INDEX: "0"})],
                 gpod("default/p", mem(500)), True, False, gpushare.NO_MEMORY, None,
                 id="an over-subscribed card has no idle memory (upstream share_test.go)"),
])
def test_share_fit_and_allocate(node, placed, pod, sharing, number, why, index):
    dev = share_ledger(node, *placed)
    assert gpushare.filter_node(dev, pod, sharing, number) == why
    got = gpushare.allocate(dev, "uid", pod, 42)
    assert (got or {}).get(gpushare.GPU_INDEX) == index
    if index:
        assert got[gpushare.PREDICATE_TIME] == "42"
        dev.remove("uid")
        assert all("uid" not in c.pods for c in dev.cards.values())


# ---- vGPU: inventory ------------------------------------------------------------------------------------
def _fractional(node):
    node["status"]["allocatable"][vgpu.VGPU_CORES] = "500m"
    return node


def short_entry_node():
    n = vgpu_node("n", [("GPU-a", 10, 16000)])
    n["metadata"]["annotations"][vgpu.REGISTER] += "GPU-b,10,100:"
    return n


@pytest.mark.parametrize("node, want", [
    pytest.param(vgpu_node("n", [("GPU-a", 10, 16000), ("GPU-b", 5, 8000)]),
                 {0: ("GPU-a", 10, 16000), 1: ("GPU-b", 5, 8000)}, id="two cards"),
    pytest.param(vgpu_node("n", [("GPU-a", 10, 16000)], alloc=False), None, id="no vgpu allocatable"),
    pytest.param(_fractional(vgpu_node("n", [("GPU-a", 10, 16000)])), {0: ("GPU-a", 10, 16000)},
                 id="allocatable read as Value() reads it: 500m is 1"),
    pytest.param(short_entry_node(), None, id="an entry with too few fields voids the node"),
    pytest.param(objects.node("n"), None, id="no register annotation"),
])
def test_vgpu_inventory(node, want):
    dev = vgpu.node_devices(node)
    assert (None if dev is None else {i: (c.uuid, c.count, c.memory) for i, c in dev.cards.items()}) == want


# ---- vGPU: fit, order and score per policy --------------------------------------------------------------
V2 = vgpu_node("n", [("GPU-a", 10, 16000), ("GPU-b", 10, 16000)])
A_USED = placed_vgpu("default/u", "n", "GPU-a", 4000)


@pytest.mark.parametrize("placed, pod, policy, ids, score", [
    pytest.param([A_USED], gpod("default/p", vg(1, 4000)), "binpack", [("GPU-a", 4000, 0)], 50.0,
                 id="binpack: the most used card, scored with this pod's memory"),
    pytest.param([A_USED], gpod("default/p", vg(1, 4000)), "spread", [("GPU-b", 4000, 0)], 100.0,
                 id="spread: the card no pod uses"),
    pytest.param([A_USED], gpod("default/p", vg(1, 4000)), "", [("GPU-b", 4000, 0)], 0.0,
                 id="no policy: from the last card, no score"),
    pytest.param([], gpod("default/p", vg(2, 4000)), "binpack", [("GPU-a", 4000, 0), ("GPU-b", 4000, 0)], 50.0,
                 id="two cards for one container"),
    pytest.param([], gpod("default/p", vg(1)), "binpack", [("GPU-a", 16000, 0)], 100.0,
                 id="no memory asked: the whole card"),
    pytest.param([A_USED], gpod("default/p", vg(1, 14000)), "binpack", [("GPU-b", 14000, 0)], 88.0,
                 id="memory fragmentation: 12000 left on GPU-a"),
    pytest.param([A_USED], gpod("default/p", vg(2, 14000)), "binpack", None, 0.0,
                 id="two cards of 14000: only one holds it"),
    pytest.param([], gpod("default/p", vg(3, 100)), "binpack", None, 0.0, id="more cards than the node has"),
    pytest.param([placed_vgpu("default/u", "n", "GPU-a", 100, cores=60)], gpod("default/p", vg(1, 100, 50)),
                 "binpack", [("GPU-b", 100, 50)], 1.0, id="cores over 100 on GPU-a"),
    pytest.param([A_USED], gpod("default/p", vg(1, 100, 100)), "binpack", [("GPU-b", 100, 100)], 1.0,
                 id="100 cores: a card no pod uses"),
    pytest.param([], gpod("default/p", vg(1, 100), annotations={vgpu.USE_UUID: "GPU-b"}), "binpack",
                 [("GPU-b", 100, 0)], 1.0, id="uuid allowlist"),
    pytest.param([], gpod("default/p", vg(2, 100), annotations={vgpu.NOUSE_UUID: " GPU-b "}), "binpack", None, 0.0,
                 id="uuid denylist leaves one card"),
    pytest.param([], gpod("default/p", vg(1, 100), annotations={vgpu.USE_TYPE: "A100"}), "binpack", None, 0.0,
                 id="card type not wanted"),
    pytest.param([], gpod("default/p", vg(1, 100), annotations={vgpu.MODE: "mig"}), "binpack", None, 0.0,
                 id="mode mismatch"),
    pytest.param([gpod("default/u", vg(1, 100), node="n", group="pg1",
                       annotations={vgpu.ASSIGNED_IDS: "GPU-a,NVIDIA,100,0:"})],
                 gpod("default/p", vg(1, 100), annotations={vgpu.PODGROUP_POLICY: "spread"}), "binpack",
                 [("GPU-b", 100, 0)], 1.0, id="podgroup spread: not the card of a pod of the same group"),
])
def test_vgpu_fit(placed, pod, policy, ids, score):
    chosen, got_score, why = vgpu.fit(vgpu_ledger(V2, *placed), pod, policy)
    assert chosen == (None if ids is None else [ids])
    assert (why != "") == (ids is None)
    assert round(got_score) == score


def test_vgpu_allocate_and_remove():
    dev = vgpu_ledger(V2, A_USED)
    got = vgpu.allocate(dev, "uid", gpod("default/p", vg(1, 3000, 20)), "binpack", 7)
    assert got == {vgpu.ASSIGNED_NODE: "n", vgpu.ASSIGNED_TIME: "7", vgpu.ASSIGNED_IDS: "GPU-a,NVIDIA,3000,20:",
                   vgpu.TO_ALLOCATE: "GPU-a,NVIDIA,3000,20:", vgpu.BIND_PHASE: "allocating", vgpu.BIND_TIME: "7"}
    a = dev.cards[0]
    assert (a.used_num, a.used_mem, a.used_core) == (2, 7000, 20)
    dev.remove("uid")
    assert (a.used_num, a.used_mem, a.used_core) == (1, 4000, 0)


def test_vgpu_decode_encode_round_trip():
    chosen = [[("GPU-a", 100, 10), ("GPU-b", 200, 0)], [("GPU-c", 1, 2)]]
    assert vgpu.decode_pod_devices(vgpu.encode_pod_devices(chosen)) == chosen


# ---- sessions ---------------------------------------------------------------------------------------------
def ds_conf(**arguments):
    return conf.parse({"actions": "enqueue, allocate", "tiers": [
        [{"name": "priority"}, {"name": "gang"}],
        [{"name": "predicates"}, {"name": "deviceshare", "arguments": arguments}]]})


def run(nodes, pods, arguments, min_member=1):
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1", min_member=min_member)], pods=pods)
    return session.run_session(st, ds_conf(**arguments), objects.NOW)


VGPU = {"deviceshare.VGPUEnable": True, "deviceshare.ScheduleWeight": 10}


@pytest.mark.parametrize("policy, node", [("binpack", "n1"), ("spread", "n2")])
def test_session_policy_picks_the_node(policy, node):
    nodes = [vgpu_node("n1", [("GPU-1", 10, 16000)]), vgpu_node("n2", [("GPU-2", 10, 16000)])]
    used = placed_vgpu("default/u", "n1", "GPU-1", 4000)
    r = run(nodes, [used, gpod("default/p", vg(1, 2000))], {**VGPU, "deviceshare.SchedulePolicy": policy})
    assert r.binds == {"default/p": node}
    ids = r.bind_annotations["default/p"][vgpu.ASSIGNED_IDS]
    assert ids == f"GPU-{node[-1]},NVIDIA,2000,0:"
    assert r.bind_annotations["default/p"][vgpu.ASSIGNED_NODE] == node


def test_session_gang_shares_cards_and_records_each():
    nodes = [share_node("n1", 16000, 2)]
    pods = [gpod(f"default/p{i}", mem(4000)) for i in range(3)]
    r = run(nodes, pods, {"deviceshare.GPUSharingEnable": True}, min_member=3)
    assert r.binds == {"default/p0": "n1", "default/p1": "n1", "default/p2": "n1"}
    assert [r.bind_annotations[f"default/p{i}"][gpushare.GPU_INDEX] for i in range(3)] == ["0", "0", "1"]


def test_session_third_pod_finds_no_card_after_fragmentation():
    nodes = [share_node("n1", 16000, 2)]
    pods = [gpod(f"default/p{i}", mem(5000)) for i in range(3)]
    r = run(nodes, pods, {"deviceshare.GPUSharingEnable": True}, min_member=3)
    assert r.binds == {} and r.bind_annotations == {}   # 6000 idle in all, 3000 per card


def test_session_gang_that_does_not_fit_binds_nothing_and_keeps_no_annotation():
    nodes = [share_node("n1", 16000, 2)]
    pods = [gpod(f"default/p{i}", num(1)) for i in range(3)]
    r = run(nodes, pods, {"deviceshare.GPUNumberEnable": True}, min_member=3)
    assert r.binds == {} and r.bind_annotations == {}


def test_session_fit_error_names_the_device():
    nodes = [share_node("n1", 16000, 2)]
    pods = [gpod("default/p", mem(9000))]
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1")], pods=pods)
    ssn = session.open_session(st, ds_conf(**{"deviceshare.GPUSharingEnable": True}), objects.NOW)
    task = next(iter(ssn.jobs["default/pg1"].tasks.values()))
    _, errors = ssn.predicate_nodes(task)
    assert errors.histogram == {gpushare.NO_MEMORY: 1}


def test_pods_without_devices_are_unaffected():
    nodes = [share_node("n1", 16000, 2), vgpu_node("n2", [("GPU-2", 10, 16000)])]
    pods = [objects.pod("default/a", "pg1"), objects.pod("default/b", "pg1")]
    with_plugin = run(nodes, pods, {**VGPU, "deviceshare.SchedulePolicy": "binpack"}, min_member=2)
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1", min_member=2)], pods=pods)
    without = session.run_session(st, conf.parse({"actions": "enqueue, allocate", "tiers": [
        [{"name": "priority"}, {"name": "gang"}], [{"name": "predicates"}]]}), objects.NOW)
    assert with_plugin.binds == without.binds and len(without.binds) == 2
    assert with_plugin.bind_annotations == {}


def test_finished_and_deleting_pods_hold_no_device():
    nodes = [share_node("n1", 8000, 1)]
    done = gpod("default/done", mem(8000), node="n1", annotations={gpushare.GPU_INDEX: "0"}, phase="Succeeded")
    r = run(nodes, [done, gpod("default/p", mem(8000))], {"deviceshare.GPUSharingEnable": True})
    assert r.binds == {"default/p": "n1"}


# ---- configuration ----------------------------------------------------------------------------------------
CONF = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n'


def test_volcano_arguments_load():
    text = CONF + ("      deviceshare.VGPUEnable: true\n      deviceshare.SchedulePolicy: binpack\n"
                   "      deviceshare.ScheduleWeight: 10\n      deviceshare.NodeLockEnable: \"false\"\n"
                   "      deviceshare.KnownGeometriesCMName: volcano-vgpu-device-config\n"
                   "      deviceshare.AscendHAMiVNPUEnable: false\n")
    option = conf.parse(text, "sched.conf").tiers[0][1]
    args = option.args
    assert (option.name, args.vgpu, args.schedule_policy, args.schedule_weight) == ("deviceshare", True, "binpack", 10)


@pytest.mark.parametrize("arguments, problem", [
    pytest.param("      deviceshare.SchedulePolicy: Binpack\n",
                 "sched.conf:7: plugin \"deviceshare\": argument 'deviceshare.SchedulePolicy': expected binpack or "
                 "spread, got 'Binpack'", id="policy spelt otherwise"),
    pytest.param("      deviceshare.ScheduleWeight: \"10\"\n",
                 "sched.conf:7: plugin \"deviceshare\": argument 'deviceshare.ScheduleWeight': expected an integer",
                 id="weight quoted"),
    pytest.param("      deviceshare.VGPUEnable: yes please\n",
                 "sched.conf:7: plugin \"deviceshare\": argument 'deviceshare.VGPUEnable': expected true or false",
                 id="switch not a boolean"),
    pytest.param("      deviceshare.GPUSharingEnable: true\n      deviceshare.GPUNumberEnable: true\n",
                 "sched.conf:6: deviceshare: can not define true in both gpu sharing and gpu number",
                 id="sharing with number"),
    pytest.param("      deviceshare.GPUNumberEnable: true\n      deviceshare.VGPUEnable: true\n",
                 "sched.conf:6: deviceshare: gpu-share and vgpu can't be used together", id="gpu share with vgpu"),
    pytest.param("      deviceshare.AscendMindClusterVNPUEnable: true\n",
                 "sched.conf:7: plugin \"deviceshare\": argument 'deviceshare.AscendMindClusterVNPUEnable': Ascend NPU "
                 "sharing is not supported by vclite yet", id="ascend"),
    pytest.param("      deviceshare.GPUShareEnable: true\n",
                 "sched.conf:7: plugin \"deviceshare\": unknown argument \"deviceshare.GPUShareEnable\"",
                 id="misspelt argument"),
])
def test_bad_arguments_are_refused_at_their_line(arguments, problem):
    with pytest.raises(conf.ConfError) as e:
        conf.parse(CONF + arguments, "sched.conf")
    got = [str(p) for p in e.value.problems]
    assert len(got) == 1 and got[0].startswith(problem), got


def test_a_discarded_gang_gives_its_vgpu_cards_back_in_the_session():
    """pg1 needs three whole cards of a two-card node: discarded; pg2's pod then finds a card free
    (upstream's vGPU ledger keeps the discarded counts until the next session: docs/differences.md)."""
    nodes = [vgpu_node("n1", [("GPU-a", 10, 16000), ("GPU-b", 10, 16000)])]
    pods = [gpod(f"default/a{i}", vg(1, 16000), group="pg1") for i in range(3)]
    pods.append(gpod("default/b0", vg(1, 16000), group="pg2"))
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1", min_member=3), objects.pg("default/pg2")],
                       pods=pods)
    r = session.run_session(st, ds_conf(**{"deviceshare.VGPUEnable": True}), objects.NOW)
    assert r.binds == {"default/b0": "n1"}
    assert r.bind_annotations["default/b0"][vgpu.ASSIGNED_IDS] == "GPU-b,NVIDIA,16000,0:"


def test_preempt_evicts_for_a_card_and_the_victim_frees_it():
    """Resources would hold the preemptor (vgpu-memory allocatable 64000); only the cards are full."""
    node = vgpu_node("n1", [("GPU-a", 10, 16000), ("GPU-b", 10, 16000)])
    node["status"]["allocatable"][vgpu.VGPU_MEMORY] = "64000"
    lows = [gpod(f"default/low{i}", vg(1, 16000), node="n1", group="pglow",
                 annotations={vgpu.ASSIGNED_IDS: f"GPU-{x},NVIDIA,16000,0:"}) for i, x in enumerate("ab")]
    st = objects.state(nodes=[node], podgroups=[objects.pg("default/pglow", phase="Running", priority_class="low"),
                                                 objects.pg("default/pghigh", priority_class="high")],
                       pods=[*lows, gpod("default/high", vg(1, 16000), group="pghigh")],
                       priority_classes=[{"metadata": {"name": "low"}, "value": 1},
                                         {"metadata": {"name": "high"}, "value": 100}])
    c = conf.parse({"actions": "enqueue, allocate, preempt", "tiers": [
        [{"name": "priority"}, {"name": "gang"}],
        [{"name": "predicates"}, {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True}}]]})
    r = session.run_session(st, c, objects.NOW)
    assert (r.evictions, r.pipelined, r.binds) == (["default/low1"], {"default/pghigh": ["n1"]}, {})


def _register(text, alloc=True):
    n = vgpu_node("n", [("GPU-a", 10, 16000)], alloc=alloc)
    n["metadata"]["annotations"][vgpu.REGISTER] = text
    return n


GOOD = "GPU-a,10,16000,NVIDIA-T4,true,hami-core"


@pytest.mark.parametrize("node, why", [
    pytest.param(_register(GOOD + ":"), None, id="readable"),
    pytest.param(_register(GOOD), "lists no card", id="no trailing colon"),
    pytest.param(_register(GOOD + ":GPU-b,10,16000,T4,true:"), "entry 'GPU-b,10,16000,T4,true' has fewer than six",
                 id="five fields"),
    pytest.param(_register(GOOD + ":", alloc=False), "status.allocatable has no (or zero) volcano.sh/vgpu-number",
                 id="no allocatable"),
    pytest.param(_register(":"), "lists no card", id="empty list"),
])
def test_vgpu_why_ignored_says_why_exactly_when_the_inventory_is_empty(node, why):
    got = vgpu.why_ignored(node)
    assert (got is None) == (why is None) == (vgpu.node_devices(node) is not None)
    assert why is None or why in got, got


@pytest.mark.parametrize("node, why", [
    pytest.param(share_node("n", 16000, 2), None, id="both"),
    pytest.param(share_node("n", 16000, 0), "without a non-zero volcano.sh/gpu-number", id="zero cards"),
    pytest.param({"metadata": {"name": "n"}, "status": {"allocatable": {gpushare.GPU_NUMBER: "2"}}},
                 "volcano.sh/gpu-number is advertised without volcano.sh/gpu-memory", id="number only"),
])
def test_share_why_ignored(node, why):
    got = gpushare.why_ignored(node)
    assert (got is None) == (why is None) == (gpushare.node_devices(node) is not None)
    assert why is None or why in got, got


# ---- upstream's TestGPUUUIDConstraints (vgpu/utils_test.go): two 16384 cards shared by 4, policy unset ------
@pytest.mark.parametrize("annotations, uuid, error", [
    ({vgpu.USE_UUID: "GPU-0000A"}, "GPU-0000A", None),
    ({vgpu.NOUSE_UUID: "GPU-0000B"}, "GPU-0000A", None),
    ({vgpu.USE_UUID: "GPU-unknown"}, None, vgpu.USE_UUID),
    ({vgpu.NOUSE_UUID: "GPU-0000A,GPU-0000B"}, None, vgpu.NOUSE_UUID),
    ({vgpu.USE_UUID: "GPU-0000"}, None, vgpu.USE_UUID),              # no partial match
    ({vgpu.USE_UUID: "GPU-0000B", vgpu.NOUSE_UUID: "GPU-0000B"}, None, vgpu.USE_UUID),   # the denylist wins
])
def test_upstream_gpu_uuid_constraints(annotations, uuid, error):
    dev = vgpu_ledger(vgpu_node("n", [("GPU-0000A", 4, 16384), ("GPU-0000B", 4, 16384)]))
    chosen, _, why = vgpu.fit(dev, gpod("default/worker", vg(1, 4096, 25), annotations=annotations), "")
    assert (chosen[0][0][0] if chosen else None) == uuid
    assert (error is None and why == "") or (error is not None and error in why), why


@pytest.mark.parametrize("count, memory, read", [
    pytest.param("10", "16000", (10, 16000), id="integers"),
    pytest.param("+10", "016000", (10, 16000), id="sign-and-leading-zero-as-atoi"),
    pytest.param("1_0", "16_000", (0, 0), id="underscores-atoi-refuses"),
    pytest.param(" 10", "16000 ", (0, 0), id="spaces-atoi-refuses"),
    pytest.param("\u0661\u0660", "16000", (0, 16000), id="non-ascii-digits-atoi-refuses"),
])
def test_vgpu_register_numbers_read_as_gos_atoi(count, memory, read):
    """Python's int() took '16_000', ' 10' and Arabic-Indic digits where upstream's Atoi fails and reads 0."""
    node = {"metadata": {"name": "n", "annotations": {
        "volcano.sh/node-vgpu-register": f"GPU-0,{count},{memory},NVIDIA-T4,true,hami-core:"}},
        "status": {"allocatable": {"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-cores": "100",
                                   "volcano.sh/vgpu-memory": "16000"}}}
    card = vgpu.node_devices(node).cards[0]
    assert (card.count, card.memory) == read


@pytest.mark.parametrize("value, ids", [
    pytest.param("0,2", [0, 2], id="ids"),
    pytest.param("0, 2", [], id="a space voids the annotation as upstream"),
    pytest.param("1_0", [], id="underscore"),
])
def test_gpu_index_read_as_upstream(value, ids):
    assert gpushare.gpu_index({"metadata": {"annotations": {gpushare.GPU_INDEX: value}}}) == ids


# ---- an allocation no card fits: refused and undone (upstream: the allocate handler's error) -----------------
def unchecked_conf(arguments):
    """deviceshare without its predicate (enablePredicate: false): allocate is not told the cards are full."""
    return conf.parse({"actions": "enqueue, allocate", "tiers": [
        [{"name": "priority"}, {"name": "gang"}],
        [{"name": "predicates"}, {"name": "deviceshare", "enablePredicate": False, "arguments": arguments}]]})


SHARE_REFUSED = ('allocation to node "n1" undone: deviceshare: the node n1 can\'t place the pod p2 in ns default '
                 f"({gpushare.NO_MEMORY})")
VGPU_REFUSED = 'allocation to node "n1" undone: deviceshare: '


@pytest.mark.parametrize("nodes, pods, arguments, min_member, binds, refused, why", [
    pytest.param([share_node("n1", 16000, 2)], [gpod(f"default/p{i}", mem(5000)) for i in range(3)],
                 {"deviceshare.GPUSharingEnable": True}, 1, {"default/p0": "0", "default/p1": "1"}, ["default/p2"],
                 SHARE_REFUSED, id="gpu share: the third pod is not bound without a card"),
    pytest.param([share_node("n1", 16000, 2)], [gpod(f"default/p{i}", mem(5000)) for i in range(3)],
                 {"deviceshare.GPUSharingEnable": True}, 3, {}, ["default/p2"], SHARE_REFUSED,
                 id="gpu share gang: the refusal leaves the gang short, nothing is bound"),
    pytest.param([share_node("n1", 16000, 2, unhealthy="1")], [gpod(f"default/p{i}", num(1)) for i in range(3)],
                 {"deviceshare.GPUNumberEnable": True}, 1, {"default/p0": "0"}, ["default/p1", "default/p2"],
                 SHARE_REFUSED.replace(gpushare.NO_MEMORY, gpushare.NO_NUMBER).replace("p2", "p1"),
                 id="gpu number: the second card is unhealthy"),
    pytest.param([vgpu_node("n1", [("GPU-a", 10, 16000)])], [gpod(f"default/p{i}", vg(1, 10000)) for i in range(3)],
                 {"deviceshare.VGPUEnable": True}, 1, {"default/p0": "GPU-a"}, ["default/p1", "default/p2"],
                 VGPU_REFUSED, id="vgpu"),
])
def test_an_allocation_no_card_fits_is_refused_and_undone(nodes, pods, arguments, min_member, binds, refused, why):
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1", min_member=min_member)], pods=pods)
    ssn = session.open_session(st, unchecked_conf(arguments), objects.NOW)
    session.run_actions(ssn)
    r = session.close_session(ssn)
    assert set(r.binds) == set(binds) and set(r.bind_annotations) == set(binds), r
    for key, card in binds.items():
        ann = r.bind_annotations[key]
        assert (ann.get(gpushare.GPU_INDEX) or ann[vgpu.ASSIGNED_IDS]).startswith(card), ann
    job = ssn.jobs["default/pg1"]
    assert sorted(job.task_notes) == refused
    assert job.task_notes[refused[0]].startswith(why), job.task_notes
    for t in job.tasks.values():   # nothing half-done: a task is bound with its node, or Pending without one
        assert (t.key in r.binds) == bool(t.node), (t.key, t.status, t.node)
    # the session's node columns hold exactly the bound pods (1 cpu each)
    assert ssn.nodes.used[0][ssn.nodes.dims.index["cpu"]] == 1000 * len(binds)
    # each refused pod is told why (PodScheduled=False; the shell adds a Warning FailedScheduling Event), even
    # when its gang is satisfied, with the first refusal (the job's JobFitErrors: Volcano keeps no reason per pod
    # for it); the PodGroup's Unschedulable message says it when the gang is short
    assert sorted(r.pod_conditions) == (refused if min_member == 1 else pods_keys(pods))
    for key in refused:
        assert r.pod_conditions[key] == ("Unschedulable", job.task_notes[refused[0]], "")
    if min_member > 1:
        assert why in r.podgroup_status["default/pg1"]["conditions"][-1]["message"]


def pods_keys(pods):
    return [f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}' for p in pods]
