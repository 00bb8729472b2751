"""The scheduler shell's node usage: read from a real Prometheus every metrics.interval, a session when it changes."""
from __future__ import annotations

import threading
import time

from tests import prometheus_server
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock as clock_mod
from vclite.scheduler import conf, metricsfeed
from vclite.scheduler import scheduler as scheduler_mod

CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: usage
metrics:
  type: prometheus
  address: {url}
  interval: 1m
"""


def test_feed_reads_when_due_and_says_when_the_usage_changed():
    cpu = {"n1": 10.0}
    clock = clock_mod.VirtualClock()
    with prometheus_server.running(lambda kind, node, form: cpu[node] if kind == "cpu" else 5.0) as prom:
        feed = metricsfeed.Feed({"type": "prometheus", "address": prom.url, "interval": "1m"}, clock)

        def settle():
            while True:
                changed, again = feed.poll(["n1"])
                if again != metricsfeed.POLL:
                    return changed, again
                time.sleep(0.01)   # (the read runs on its own thread, in real time)

        assert feed.poll(["n1"]) == (False, metricsfeed.POLL)   # a read started
        assert settle() == (True, 60.0)
        assert feed.usage["n1"].cpu_avg == {"10m": 10.0} and feed.usage["n1"].metrics_time == clock.now()
        clock.advance(60)
        assert feed.poll(["n1"]) == (False, metricsfeed.POLL)
        assert settle() == (False, 60.0)   # the same values: no session needed
        cpu["n1"] = 20.0
        clock.advance(60)
        feed.poll(["n1"])
        assert settle() == (True, 60.0)
        assert len(prom.calls) == 6


def test_a_failing_reader_keeps_the_usage_it_had():
    def read(conf_, nodes, now):
        raise RuntimeError("boom")
    feed = metricsfeed.Feed({"type": "prometheus", "address": "http://x"}, clock_mod.VirtualClock(), read)
    feed.usage = {"n1": "kept"}
    feed.poll(["n1"])
    while feed.poll(["n1"]) == (False, metricsfeed.POLL):
        time.sleep(0.01)
    assert feed.usage == {"n1": "kept"}


def test_sessions_wait_for_the_first_read_at_most_first_read_wait():
    release = threading.Event()

    def read(conf_, nodes, now):
        release.wait(10)
        return {}
    clock = clock_mod.VirtualClock()
    feed = metricsfeed.Feed({"type": "prometheus", "address": "http://x"}, clock, read)
    assert feed.holds_sessions()   # (the first read is to come)
    feed.poll(["n1"])
    clock.advance(metricsfeed.FIRST_READ_WAIT - 0.1)
    assert feed.holds_sessions() and feed.poll(["n1"]) == (False, metricsfeed.POLL)
    clock.advance(0.1)
    assert not feed.holds_sessions()   # a read without an answer holds them no longer
    release.set()


class Cluster:
    def __init__(self, url):
        self.clock = clock_mod.VirtualClock()
        self.client = inprocess.new_client(self.clock)
        self.client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        self.scheduler = scheduler_mod.Scheduler(self.client, self.clock, conf.parse(CONF.format(url=url)))
        self.scheduler.start()

    def step_until(self, done, limit=2000):
        """Run the scheduler's keys, moving the virtual clock to its next timer when none is ready."""
        for _ in range(limit):
            if done():
                return
            key = self.scheduler.queue.get()
            if key is not None:
                self.scheduler.sync(key)
                continue
            time.sleep(0.005)   # (a read under way runs on its own thread, in real time)
            due = self.scheduler.queue.next_ready_at()
            if due is not None and due > self.clock.monotonic():
                self.clock.advance(due - self.clock.monotonic())
        raise AssertionError("not done")

    def node_of(self, name):
        return (self.client.get(kinds.POD, "default", name).get("spec") or {}).get("nodeName")


def test_a_pod_waits_for_its_busy_node_to_calm_down():
    cpu = {"n1": 95.0}
    lock = threading.Lock()

    def answer(kind, node, form):
        with lock:
            return cpu[node] if kind == "cpu" else 10.0

    with prometheus_server.running(answer) as prom:
        c = Cluster(prom.url)
        c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                         "metadata": {"name": "pg", "namespace": "default"},
                         "spec": {"minMember": 1, "queue": "default"}})
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "p", "namespace": "default", "annotations": {"scheduling.k8s.io/group-name": "pg"}},
            "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "command": ["true"],
                                                                 "resources": {"requests": {"cpu": "1"}}}]}})
        c.step_until(lambda: "CPU load" in str(c.client.get(kinds.PODGROUP, "default", "pg").get("status")))
        assert c.node_of("p") is None
        with lock:
            cpu["n1"] = 20.0
        c.step_until(lambda: c.node_of("p") == "n1")
        assert len(prom.calls) == 4   # the second read, a minute later
