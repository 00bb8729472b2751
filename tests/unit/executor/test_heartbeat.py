"""The kubelet's heartbeat: node Leases renewed every 10 s, stale node conditions re-stamped, a
cordoned node renewed, a deleted one not."""
import datetime

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import heartbeat, nodes
from vclite.lib import clock as clock_mod
from vclite.runtime import loop as loop_mod

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _setup(names=("n0", "n1")):
    clock = clock_mod.VirtualClock(START)
    client = inprocess.new_client(clock)
    stamp = clock_mod.format_time(clock.now())
    for name in names:
        node = client.create(nodes.stamped(nodes.node(name, {"cpu": "1", "memory": "1Gi", "pods": "10"}), stamp))
        client.create(nodes.node_lease(node, clock_mod.format_micro_time(clock.now())))
    beat = heartbeat.NodeHeartbeat(client, clock, names)
    return clock, client, beat, loop_mod.Loop(clock, [beat])


def _renewed(client, name):
    return client.get(kinds.LEASE, nodes.NODE_LEASE_NAMESPACE, name)["spec"]["renewTime"]


def _beat(clock, loop, seconds):
    clock.advance(seconds)
    loop.step()


def test_leases_are_renewed_every_ten_seconds_and_nothing_else_is_written():
    clock, client, beat, loop = _setup()
    loop.step()
    _beat(clock, loop, 5)
    rv = int(client.store.resource_version)
    assert _renewed(client, "n0") == clock_mod.format_micro_time(START)   # (not due yet)
    _beat(clock, loop, 5)
    ten = clock_mod.format_micro_time(START + datetime.timedelta(seconds=10))
    assert _renewed(client, "n0") == _renewed(client, "n1") == ten
    assert int(client.store.resource_version) == rv + 2   # one write per node: its Lease
    assert loop.next_timer() == clock.monotonic() + heartbeat.RENEW_SECONDS


def test_a_stale_heartbeat_of_the_conditions_is_written_again():
    clock, client, beat, loop = _setup(("n0",))
    loop.step()
    before = client.get(kinds.NODE, "", "n0")["status"]["conditions"][0]
    for _ in range(30):
        _beat(clock, loop, 10)
    after = client.get(kinds.NODE, "", "n0")["status"]["conditions"][0]
    assert after["lastHeartbeatTime"] == clock_mod.format_time(START + datetime.timedelta(seconds=300))
    assert after["lastTransitionTime"] == before["lastTransitionTime"]
    rv = client.get(kinds.NODE, "", "n0")["metadata"]["resourceVersion"]
    _beat(clock, loop, 10)
    assert client.get(kinds.NODE, "", "n0")["metadata"]["resourceVersion"] == rv   # recent: not written


def test_a_cordoned_node_is_renewed_a_deleted_one_is_not_and_a_missing_lease_is_made_again():
    clock, client, beat, loop = _setup()
    loop.step()
    cordoned = client.get(kinds.NODE, "", "n0")
    client.update({**cordoned, "spec": {"unschedulable": True}})
    client.delete(kinds.NODE, "", "n1")   # (its Lease goes with it: the Node owns it)
    client.delete(kinds.LEASE, nodes.NODE_LEASE_NAMESPACE, "n0")
    _beat(clock, loop, 10)
    lease = client.get(kinds.LEASE, nodes.NODE_LEASE_NAMESPACE, "n0")
    assert lease["spec"]["renewTime"] == clock_mod.format_micro_time(clock.now())
    assert lease["metadata"]["ownerReferences"][0]["uid"] == cordoned["metadata"]["uid"]
    assert client.store.peek(kinds.LEASE, nodes.NODE_LEASE_NAMESPACE, "n1") is None
