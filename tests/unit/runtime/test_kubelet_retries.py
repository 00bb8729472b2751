"""The executor (vclite's kubelet) and the scheduler never give a failing key up: a kubelet's pod worker
retries a failing pod sync for ever (every backOffPeriod, 10 s), and Volcano's scheduler runs a session every
schedule period whatever the last one did. The real runtime, real pods; only the API's failure is made up (a
status write or a bind that fails the first few times, as a storage timeout would)."""
from __future__ import annotations

import asyncio

import pytest

from vclite.api import kinds
from vclite.executor import executor as executor_mod
from vclite.lib import clock, errors
from vclite.runtime import runtime
from vclite.scheduler import scheduler as scheduler_mod

NS = "default"


class Failing:
    """The runtime's real client, whose `method` raises a storage error its first `times` calls."""

    def __init__(self, client, method: str, times: int):
        self._client, self._method, self.left = client, method, times

    def __getattr__(self, name):
        real = getattr(self._client, name)
        if name != self._method:
            return real

        def failing(*args, **kwargs):
            if self.left > 0:
                self.left -= 1
                raise errors.ApiError("etcdserver: request timed out")
            return real(*args, **kwargs)
        return failing


def _phase(rt, name):
    return (rt.client.get(kinds.POD, NS, name).get("status") or {}).get("phase")


@pytest.mark.parametrize("component, call, placement", [
    pytest.param("executor", "update_status", {"nodeName": None}, id="a pod's status write (executor)"),
    pytest.param("scheduler", "bind", {"schedulerName": "volcano"}, id="a session's bind (scheduler)"),
])
def test_a_write_that_fails_past_max_requeues_is_tried_until_it_succeeds(tmp_path, component, call, placement):
    rt = runtime.Runtime(clock.RealClock(), workdir=tmp_path, max_requeues=2)
    try:
        failing = Failing(rt.client, call, 6)
        setattr(getattr(rt, component), "client", failing)
        spec = {k: v if v is not None else rt.node_names[0] for k, v in placement.items()}
        rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                          "spec": {**spec, "restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}})
        done = asyncio.run(rt.run_until(lambda: _phase(rt, "p") == "Succeeded" or rt.failures,
                                          timeout=30, chores=True))
        assert done and failing.left == 0 and not rt.failures
    finally:
        rt.close()


def test_their_back_off_is_capped_as_a_kubelets_and_a_schedule_periods():
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        assert rt.scheduler.retries_forever and rt.scheduler.queue._max == scheduler_mod.RETRY_MAX_DELAY == 1.0
    finally:
        rt.close()
    assert executor_mod.LocalExecutor.retries_forever and executor_mod.RETRY_MAX_DELAY == 10.0
