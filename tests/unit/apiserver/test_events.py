"""events.record: one Event per (object, reason, message), its count bumped on repeats; the
Recorder: noted now, written later, in order, nothing lost on a failed write."""
import asyncio

import pytest

from vclite.api import kinds
from vclite.apiserver import events, inprocess
from vclite.lib import clock, errors


def setup():
    clk = clock.VirtualClock()
    client = inprocess.new_client(clk, require_command=False)
    pod = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "command": ["true"]}]}})
    return clk, client, pod


def test_a_repeated_event_bumps_count_and_last_timestamp():
    clk, client, pod = setup()
    events.record(client, clk, pod, "Warning", "Failed", "boom")
    first = client.list(kinds.EVENT)
    clk.advance(5)
    events.record(client, clk, pod, "Warning", "Failed", "boom")
    events.record(client, clk, pod, "Normal", "Started", "ok")
    evs = {e["reason"]: e for e in client.list(kinds.EVENT)}
    assert len(first) == 1 and set(evs) == {"Failed", "Started"}
    failed = evs["Failed"]
    assert failed["count"] == 2 and failed["firstTimestamp"] == first[0]["firstTimestamp"]
    assert failed["lastTimestamp"] != failed["firstTimestamp"]
    assert failed["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "default",
                                        "uid": pod["metadata"]["uid"]}
    assert evs["Started"]["count"] == 1 and evs["Started"]["type"] == "Normal"


def test_events_of_an_object_are_listed_in_the_order_they_happened():
    """Named `<object>.<UnixNano in hex>` as client-go names them: a list, sorted by name as
    kube-apiserver's, shows an object's Events in order (`kubectl get events`), the Events of one
    instant too; a repeat is counted on the first, which keeps its place."""
    clk, client, pod = setup()
    messages = ["scheduled", "pulled", "started", "killing", "back-off", "started again", "done", "gone", "x", "y"]
    for i, message in enumerate(messages):
        events.record(client, clk, pod, "Normal", "Step", message)
        if i % 3 == 0:
            clk.advance(0.25)
    events.record(client, clk, pod, "Normal", "Step", "scheduled")
    listed = sorted(client.list(kinds.EVENT), key=lambda e: e["metadata"]["name"])
    assert [e["message"] for e in listed] == messages
    assert listed[0]["count"] == 2 and [e["count"] for e in listed[1:]] == [1] * (len(messages) - 1)
    name, _, stamp = listed[0]["metadata"]["name"].rpartition(".")
    assert name == "p" and int(stamp, 16) == int(clock.VirtualClock().now().timestamp() * 10**9)


class RefusingClient:
    """Every write fails as the API would (the event is dropped, the caller goes on)."""

    def __init__(self, error):
        self.error = error

    def create(self, obj):
        raise self.error

    def get(self, kind, namespace, name):
        raise errors.NotFound("gone")

    def update(self, obj):
        raise self.error


def test_an_event_that_cannot_be_written_is_dropped_without_raising():
    clk, _, pod = setup()
    for error in (errors.Forbidden("no"), errors.AlreadyExists("raced"), errors.Invalid("Event", "e", [])):
        events.record(RefusingClient(error), clk, pod, "Normal", "Started", "ok")


def test_a_recorder_writes_noted_events_when_synced_in_order_with_the_time_noted():
    clk, client, pod = setup()
    rec = events.Recorder(client, clk)
    rec.record(pod, "Normal", "Scheduled", "bound")
    clk.advance(3)
    rec.record(pod, "Warning", "Failed", "boom")
    rec.record(pod, "Warning", "Failed", "boom")
    assert client.list(kinds.EVENT) == [] and rec.queue.get() == events.Recorder.KEY   # noted, not written
    rec.sync(events.Recorder.KEY)
    evs = sorted(client.list(kinds.EVENT), key=lambda e: int(e["metadata"]["resourceVersion"]))
    assert [(e["reason"], e["count"]) for e in evs] == [("Scheduled", 1), ("Failed", 2)]
    assert evs[0]["firstTimestamp"] != evs[1]["firstTimestamp"]    # each as of its record() call
    rec.sync(events.Recorder.KEY)                                    # nothing noted since: nothing written
    assert len(client.list(kinds.EVENT)) == 2


@pytest.mark.parametrize("noted, syncs", [
    pytest.param(events.WRITES_PER_SYNC, 1, id="one-sync's-worth"),
    pytest.param(events.WRITES_PER_SYNC + 1, 2, id="one-more"),
    pytest.param(3 * events.WRITES_PER_SYNC + 5, 4, id="four-syncs"),
])
def test_a_recorder_writes_a_bounded_number_a_sync_and_queues_itself_for_the_rest(noted, syncs):
    clk, client, pod = setup()
    rec = events.Recorder(client, clk)
    for i in range(noted):
        rec.record(pod, "Normal", "Tick", f"tick {i}")
    written = []
    while rec.queue.get() == events.Recorder.KEY:   # (as the runtime: each sync the key was queued for)
        rec.sync(events.Recorder.KEY)
        written.append(len(client.list(kinds.EVENT)))
    assert len(written) == syncs and written[-1] == noted, written
    assert all(0 < b - a <= events.WRITES_PER_SYNC for a, b in zip([0, *written], written)), written
    stored = sorted(client.list(kinds.EVENT), key=lambda e: int(e["metadata"]["resourceVersion"]))
    messages = [e["message"] for e in stored]
    assert messages == [f"tick {i}" for i in range(noted)]   # in the order noted


def test_a_stop_writes_every_event_noted_at_once():
    clk, client, pod = setup()
    rec = events.Recorder(client, clk)
    for i in range(3 * events.WRITES_PER_SYNC):
        rec.record(pod, "Normal", "Tick", f"tick {i}")
    rec.flush()
    assert len(client.list(kinds.EVENT)) == 3 * events.WRITES_PER_SYNC


def test_a_recorder_writes_at_once_when_too_many_are_noted():
    clk, client, pod = setup()
    rec = events.Recorder(client, clk)
    for i in range(events.MAX_NOTED - 1):
        rec.record(pod, "Normal", "Tick", f"tick {i}")
    assert client.list(kinds.EVENT) == []
    rec.record(pod, "Normal", "Tick", "the last straw")
    assert len(client.list(kinds.EVENT)) == events.MAX_NOTED


class FailsOnce:
    """The real in-process client, but its second create fails with a non-API error (a full disk
    under a durable store, say)."""

    def __init__(self, client):
        self.client, self.creates = client, 0

    def create(self, obj):
        self.creates += 1
        if self.creates == 2:
            raise OSError("No space left on device")
        return self.client.create(obj)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_recorder_keeps_what_it_could_not_write_for_the_retry():
    clk, client, pod = setup()
    rec = events.Recorder(FailsOnce(client), clk)
    for i in range(3):
        rec.record(pod, "Normal", "Step", f"step {i}")
    with pytest.raises(OSError):
        rec.sync(events.Recorder.KEY)
    assert [e["message"] for e in client.list(kinds.EVENT)] == ["step 0"]
    rec.sync(events.Recorder.KEY)   # the runtime retries the key
    assert sorted(e["message"] for e in client.list(kinds.EVENT)) == ["step 0", "step 1", "step 2"]


class NoAnswer:
    """The real in-process client behind a network that loses its first `times` creates (errors.Unreachable, as
    kube/client.py raises when the server cannot be reached), or refuses them with `error` (a Status answer)."""

    def __init__(self, client, times, error=None):
        self.client, self.left, self.tried = client, times, 0
        self.error = error or errors.Unreachable('Post "https://cluster/api/v1/namespaces/default/events": '
                                                 'connection refused')

    def create(self, obj):
        self.tried += 1
        if self.left > 0:
            self.left -= 1
            raise self.error
        return self.client.create(obj)

    def __getattr__(self, name):
        return getattr(self.client, name)


def _rt_with(sink_of):
    from vclite.runtime import runtime
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    rt.events.client = sink_of(rt.client)
    pod = rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}})
    return rt, pod


@pytest.mark.parametrize("fails, error, written, tried, dropped", [
    (0, None, ["first", "second"], 2, 0),
    (1, None, ["first", "second"], 3, 0),                        # no answer: tried again 10 s later
    (events.MAX_TRIES - 1, None, ["first", "second"], 13, 0),     # written at the 12th try
    (events.MAX_TRIES, None, ["second"], 13, 1),                  # 12 tries: dropped, the next one written
    (1, errors.Forbidden("namespace default is being terminated"), ["second"], 2, 0),   # refused: dropped at once
])
def test_the_recorder_tries_an_event_the_server_did_not_answer_12_times_as_client_gos(fails, error, written,
                                                                                      tried, dropped):
    rt, pod = _rt_with(lambda client: NoAnswer(client, fails, error))
    try:
        start = rt.clock.monotonic()
        rt.events.record(pod, "Normal", "First", "first")
        rt.events.record(pod, "Normal", "Second", "second")
        rt.settle()
        assert sorted(e["message"] for e in rt.client.list(kinds.EVENT)) == sorted(written)
        assert (rt.events.client.tried, rt.events.dropped, rt.failures) == (tried, dropped, [])
        retries = min(fails, events.MAX_TRIES - 1) if error is None else 0
        assert rt.clock.monotonic() - start == pytest.approx(retries * events.RETRY_SECONDS)
    finally:
        rt.close()


def test_an_event_waiting_for_its_retry_keeps_neither_the_others_nor_the_loop_waiting():
    """While the recorder waits to try again, other components' work goes on, and Events noted meanwhile are
    written after it, in order, at the retry (not at once: the server did not answer)."""
    rt, pod = _rt_with(lambda client: NoAnswer(client, 1))
    try:
        rt.events.record(pod, "Normal", "First", "first")
        rt.step()
        rt.events.record(pod, "Normal", "Second", "second")
        rt.step()
        assert rt.client.list(kinds.EVENT) == [] and rt.events.client.tried == 1
        rt.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}})
        rt.step()   # (the loop goes on: nothing waits on the recorder's timer)
        rt.settle()
        evs = sorted(rt.client.list(kinds.EVENT), key=lambda e: int(e["metadata"]["resourceVersion"]))
        assert [e["message"] for e in evs] == ["first", "second"]
    finally:
        rt.close()


def test_a_direct_record_drops_an_event_the_server_did_not_answer_without_raising():
    clk, client, pod = setup()
    sink = NoAnswer(client, 1)
    events.record(sink, clk, pod, "Normal", "Started", "ok")
    assert sink.tried == 1 and client.list(kinds.EVENT) == []


def test_a_stop_tries_the_events_waiting_for_their_retry_once_more():
    rt, pod = _rt_with(lambda client: NoAnswer(client, 1))
    try:
        rt.events.record(pod, "Normal", "First", "first")
        rt.step()
        assert rt.client.list(kinds.EVENT) == [] and rt.events.client.tried == 1
        asyncio.run(rt.shutdown())   # (no 10 s wait: the process is about to end)
        assert [e["message"] for e in rt.client.list(kinds.EVENT)] == ["first"]
    finally:
        rt.close()
