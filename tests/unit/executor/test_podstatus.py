"""Pod phase rule and status building (pure)."""
import pytest

from vclite.api import core
from vclite.executor import podstatus

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z"


def st(kind, exit_code=None, restarts=0):
    s = podstatus.ContainerState("c")
    if kind in ("running", "terminated", "backoff"):
        s.start(T0, 100)
    if kind in ("terminated", "backoff"):
        s.finish(exit_code, T1)
    if kind == "backoff":
        s.back_off("back-off 10s")
    s.restart_count += restarts
    return s


@pytest.mark.parametrize("init, main, finished, phase", [
    pytest.param([], [st("waiting")], False, core.PodPhase.PENDING, id="not-started"),
    pytest.param([st("running")], [st("waiting")], False, core.PodPhase.PENDING, id="initializing"),
    pytest.param([st("backoff", 1)], [st("waiting")], False, core.PodPhase.PENDING, id="init-restarting"),
    pytest.param([st("terminated", 0)], [st("running")], False, core.PodPhase.RUNNING, id="init-done-running"),
    pytest.param([], [st("running"), st("waiting")], False, core.PodPhase.PENDING, id="one-not-started"),
    pytest.param([], [st("terminated", 1), st("running")], False, core.PodPhase.RUNNING, id="one-failed-one-runs"),
    pytest.param([], [st("backoff", 1)], False, core.PodPhase.RUNNING, id="restarting-counts-as-running"),
    pytest.param([], [st("terminated", 0), st("terminated", 0)], True, core.PodPhase.SUCCEEDED, id="all-zero"),
    pytest.param([], [st("terminated", 0), st("terminated", 2)], True, core.PodPhase.FAILED, id="one-nonzero"),
    pytest.param([st("terminated", 3)], [st("waiting")], True, core.PodPhase.FAILED, id="init-failed"),
    pytest.param([], [st("waiting")], True, core.PodPhase.FAILED, id="stopped-before-start"),
])
def test_pod_phase(init, main, finished, phase):
    assert podstatus.pod_phase(init, main, finished) == phase


def test_backoff_shows_waiting_with_last_termination_then_restart_counts():
    s = st("backoff", 1)
    out = s.to_status()
    assert out["state"] == {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}}
    assert out["lastState"]["terminated"]["exitCode"] == 1 and out["restartCount"] == 0
    s.start(T1, 101)
    out = s.to_status()
    assert out["state"] == {"running": {"startedAt": T1}} and out["ready"] and out["started"]
    assert out["restartCount"] == 1 and out["lastState"]["terminated"]["exitCode"] == 1


def test_build_status_keeps_unknown_fields_and_unchanged_transition_times():
    prev = {"nominatedNodeName": "n1", "conditions": [{"type": "PodScheduled", "status": "True",
                                                       "lastTransitionTime": "2025-12-31T00:00:00Z"}]}
    first = podstatus.build_status(prev, core.PodPhase.RUNNING, T0, start_time=T0, init=[], main=[st("running")])
    assert first["nominatedNodeName"] == "n1"
    conds = {c["type"]: c for c in first["conditions"]}
    assert conds["PodScheduled"]["lastTransitionTime"] == "2025-12-31T00:00:00Z"
    assert conds["Ready"]["status"] == "True" and conds["ContainersReady"]["status"] == "True"
    again = podstatus.build_status(first, core.PodPhase.RUNNING, T1, start_time=T0, init=[], main=[st("running")])
    assert again == first
    done = podstatus.build_status(first, core.PodPhase.SUCCEEDED, T1, start_time=T0, init=[],
                                  main=[st("terminated", 0)])
    conds = {c["type"]: c for c in done["conditions"]}
    assert (conds["Ready"]["status"], conds["Ready"]["reason"], conds["Ready"]["lastTransitionTime"]) == \
        ("False", "PodCompleted", T1)
    assert done["phase"] == "Succeeded" and "reason" not in done


def test_container_statuses_are_sorted_by_name_as_kubelet_sorts_them():
    """Volcano's job controller takes a failed pod's exit code from containerStatuses[0]: with the
    kubelet's order (by name; init containers in spec order), `aaa`'s, not the first in the spec."""
    def named(name, kind, code=None):
        s = st(kind, code)
        s.name = name
        return s
    out = podstatus.build_status(None, core.PodPhase.FAILED, T1, start_time=T0,
                                 init=[named("z-init", "terminated", 0), named("a-init", "terminated", 0)],
                                 main=[named("main", "terminated", 3), named("aaa", "terminated", 0)])
    assert [c["name"] for c in out["containerStatuses"]] == ["aaa", "main"]
    assert [c["name"] for c in out["initContainerStatuses"]] == ["z-init", "a-init"]
    assert out["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


@pytest.mark.parametrize("generation, want", [
    pytest.param(1, 1, id="created"),
    pytest.param(3, 3, id="spec-changed-twice"),
    pytest.param(None, None, id="stored-before-pods-had-one"),
])
def test_the_status_reports_the_generation_it_was_made_from(generation, want):
    """Kubernetes 1.33+ kubelet: status.observedGeneration and each of its conditions' observedGeneration are
    the pod's metadata.generation; a condition it does not own (a readiness gate's) is left as it is."""
    prev = {"conditions": [{"type": "example.com/gate", "status": "True"}]}
    out = podstatus.build_status(prev, core.PodPhase.RUNNING, T0, start_time=T0, init=[], main=[st("running")],
                                 generation=generation)
    assert out.get("observedGeneration") == want
    by_type = {c["type"]: c.get("observedGeneration") for c in out["conditions"]}
    assert by_type == {"example.com/gate": None, "PodReadyToStartContainers": want, "PodScheduled": want,
                       "Initialized": want, "Ready": want, "ContainersReady": want}


def _named(name, kind, code=None):
    s = st(kind, code)
    s.name = name
    return s


R, I, RD, CR, S = "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"


@pytest.mark.parametrize("phase, init, main, kw, want", [
    pytest.param(core.PodPhase.RUNNING, [], [st("running")], {}, {
        R: ("True", None, None), I: ("True", None, None), RD: ("True", None, None), CR: ("True", None, None),
        S: ("True", None, None)}, id="running"),
    pytest.param(core.PodPhase.SUCCEEDED, [], [st("terminated", 0)], {}, {
        R: ("False", None, None), I: ("True", "PodCompleted", None), RD: ("False", "PodCompleted", None),
        CR: ("False", "PodCompleted", None), S: ("True", None, None)}, id="succeeded"),
    pytest.param(core.PodPhase.FAILED, [_named("setup", "terminated", 0)], [st("terminated", 2)], {}, {
        R: ("False", None, None), I: ("True", None, None), RD: ("False", "PodFailed", None),
        CR: ("False", "PodFailed", None), S: ("True", None, None)}, id="failed"),
    pytest.param(core.PodPhase.FAILED, [_named("setup", "terminated", 3)], [st("waiting")], {}, {
        R: ("False", None, None),
        I: ("False", "ContainersNotInitialized", "containers with incomplete status: [setup]"),
        RD: ("False", "PodFailed", None), CR: ("False", "PodFailed", None), S: ("True", None, None)},
        id="init-failed"),
    pytest.param(core.PodPhase.PENDING, [_named("setup", "running")], [_named("a", "waiting"), _named("b", "waiting")],
                 {}, {R: ("True", None, None),
                      I: ("False", "ContainersNotInitialized", "containers with incomplete status: [setup]"),
                      RD: ("False", "ContainersNotReady", "containers with unready status: [a b]"),
                      CR: ("False", "ContainersNotReady", "containers with unready status: [a b]"),
                      S: ("True", None, None)}, id="initializing"),
    pytest.param(core.PodPhase.PENDING, [], [st("waiting")], {"sandbox": False}, {
        R: ("False", None, None), I: ("True", None, None),
        RD: ("False", "ContainersNotReady", "containers with unready status: [c]"),
        CR: ("False", "ContainersNotReady", "containers with unready status: [c]"), S: ("True", None, None)},
        id="waiting-for-gpus"),
    pytest.param(core.PodPhase.RUNNING, [], [st("backoff", 1)], {}, {
        R: ("True", None, None), I: ("True", None, None),
        RD: ("False", "ContainersNotReady", "containers with unready status: [c]"),
        CR: ("False", "ContainersNotReady", "containers with unready status: [c]"), S: ("True", None, None)},
        id="crash-loop"),
    pytest.param(core.PodPhase.RUNNING, [], [st("running")], {"gates": ("example.com/lb", "example.com/dns")}, {
        R: ("True", None, None), I: ("True", None, None),
        RD: ("False", "ReadinessGatesNotReady", 'the status of pod readiness gate "example.com/lb" is not "True", '
             'but False, corresponding condition of pod readiness gate "example.com/dns" does not exist.'),
        CR: ("True", None, None), S: ("True", None, None)}, id="readiness-gates"),
])
def test_conditions_as_a_1_32_kubelet_writes_them(phase, init, main, kw, want):
    """generateAPIPodStatus: the kubelet's conditions after the others, in its order (`kubectl describe pod`
    lists them so), with the reasons and messages of status/generate.go."""
    prev = {"conditions": [{"type": "example.com/lb", "status": "False"},
                           {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-12-31T00:00:00Z"}]}
    out = podstatus.build_status(prev, phase, T1, start_time=T0, init=init, main=main, **kw)
    conds = out["conditions"]
    assert [c["type"] for c in conds] == ["example.com/lb", R, I, RD, CR, S]
    assert {c["type"]: (c["status"], c.get("reason"), c.get("message")) for c in conds[1:]} == want
    assert all(c["lastProbeTime"] is None for c in conds[1:])
    assert conds[-1]["lastTransitionTime"] == "2025-12-31T00:00:00Z"   # (unchanged: kept)
    assert {c["lastTransitionTime"] for c in conds[1:-1]} == {T1}


def test_ready_to_start_containers_turns_false_when_the_pod_ends_and_keeps_its_time_until_then():
    running = podstatus.build_status(None, core.PodPhase.RUNNING, T0, start_time=T0, init=[], main=[st("running")])
    still = podstatus.build_status(running, core.PodPhase.RUNNING, T1, start_time=T0, init=[], main=[st("backoff", 1)])
    done = podstatus.build_status(still, core.PodPhase.FAILED, T1, start_time=T0, init=[], main=[st("terminated", 1)])
    cond = [{c["type"]: c for c in s["conditions"]}[R] for s in (running, still, done)]
    assert [(c["status"], c["lastTransitionTime"]) for c in cond] == [("True", T0), ("True", T0), ("False", T1)]
