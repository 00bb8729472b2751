"""A flow's retries in time against an oracle written from the docs (tests/retry_oracle.py): random limits
and back-offs (duration, factor, cap, maxDuration), attempts of random lengths and phases, the JobFlow
suspended and resumed, failed vcjobs deleted during their back-off, and the controller down for a while then
rebuilt from the stored status. The engine runs on flowsim's virtual clock, one tick a second: every attempt
is created when the oracle says, with the deadline it says, and the flow ends as it says, with its reason and
message; the flow after it runs only if it Completed."""
from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings, strategies as st

from tests import flowsim, retry_oracle
from tests.retry_oracle import Retry, Script

SUSPEND = "flow.volcano.sh/suspend"


def flows(script: Script) -> list[dict]:
    return [{"name": "a", "retry": script.retry.spec()}, {"name": "b", "dependsOn": {"targets": ["a"]}}]


def end_attempt(sim: flowsim.Sim, phase: str, up: bool) -> None:
    """The vcjob controller ends the attempt now (the JobFlow controller sees it only if it is up)."""
    if up:
        if sim.jobs["jf-a"]["status"]["state"]["phase"] == "Pending":
            sim.set("jf-a", "Running")
        sim.set("jf-a", phase)
        return
    job = sim.jobs["jf-a"]
    sim.jobs["jf-a"] = {**job, "status": {**job["status"], "state": {
        "phase": phase, "lastTransitionTime": flowsim.clock_mod.format_time(sim.now)}}}


def drive(script: Script, horizon: int) -> flowsim.Sim:
    sim = flowsim.Sim(flows(script))
    for i in range(int(horizon / retry_oracle.TICK)):
        t = i * retry_oracle.TICK
        up = script.up(t)
        sim.now = flowsim.T0 + dt.timedelta(seconds=t)
        if script.down is not None and t == script.down[1]:
            sim.restart()
        elif up:
            sim.step()
        attempts = [at for name, at, _ in sim.created_at if name == "jf-a"]
        job = sim.jobs.get("jf-a")
        run, phase = script.attempt(len(attempts) - 1)
        if job is not None and job["status"]["state"]["phase"] in ("Pending", "Running") and \
                attempts[-1] + dt.timedelta(seconds=run) == sim.now:
            end_attempt(sim, phase, up)
            same = sim.jobs.get("jf-a", {}).get("metadata", {}).get("uid") == job["metadata"]["uid"]
            if up and same and len(attempts) - 1 in script.deleted:   # (a retry without back-off replaced it)
                del sim.jobs["jf-a"]          # its ttlSecondsAfterFinished: 0
                sim.eng.observe("jf-a", None, sim.now)
                sim.step()
        if t in script.toggles:
            on = not script.suspended_after(t - 1)
            if up:
                sim.suspend(on)
            else:
                sim.obj["metadata"]["annotations"] = {SUSPEND: "true"} if on else {}
        if up and sim.jobs.get("jf-b", {}).get("status", {}).get("state", {}).get("phase") == "Pending":
            sim.finish("jf-b")
    return sim


def check(script: Script, horizon: int = 120) -> None:
    want = retry_oracle.predict(script, horizon)
    sim = drive(script, horizon)
    made = [((at - flowsim.T0).total_seconds(), deadline) for name, at, deadline in sim.created_at if name == "jf-a"]
    assert made == [(a.created, a.deadline) for a in want.attempts], want
    cond = sim.cond("a")
    assert (cond.get("phase"), cond.get("reason", ""), cond.get("message", "") if want.reason else "") == \
        (want.outcome, want.reason, want.message)
    assert cond.get("retries", 0) == want.retries
    assert cond.get("firstCreateTime") == (retry_oracle.fmt_time(0) if want.retries else None)
    last = want.attempts[-1]
    assert bool(cond.get("deleted")) == (len(want.attempts) - 1 in script.deleted and script.up(last.ends)), cond
    assert ("jf-b" in sim.created) == (want.outcome == "Completed")
    assert sim.phase == ("Succeed" if want.outcome == "Completed" else "Failed")


R = Retry
# (script, the attempts' creation times) — the docs' own cases
RETRY_RULES = [
    pytest.param(Script(R(2, 10, 3), [(1, "Failed"), (1, "Failed"), (1, "Completed")]), [0, 11, 42],
                 id="waits-duration-times-factor-to-the-n"),
    pytest.param(Script(R(3, 10), [(1, "Failed")]), [0, 11, 22, 33], id="without-a-factor-every-wait-is-duration"),
    pytest.param(Script(R(3, 1, 3, cap=5), [(1, "Terminated")]), [0, 2, 6, 12], id="cap-bounds-each-wait"),
    pytest.param(Script(R(5, 10, 2, max_duration=25), [(1, "Failed")]), [0, 11],
                 id="no-retry-whose-back-off-would-end-after-max-duration"),
    pytest.param(Script(R(5, 1, max_duration=60), [(61, "Failed")]), [0], id="no-retry-once-max-duration-passed"),
    pytest.param(Script(R(3, 3, max_duration=5), [(1, "Failed")], toggles=frozenset({1, 9})), [0],
                 id="max-duration-checked-again-when-a-suspended-retry-would-start"),
    pytest.param(Script(R(1, 10), [(1, "Failed"), (1, "Completed")], down=(2, 5)), [0, 11],
                 id="a-controller-restarted-during-the-back-off-waits-the-same"),
    pytest.param(Script(R(1, 2), [(1, "Failed")], down=(1, 9)), [0, 9],
                 id="a-retry-due-while-the-controller-is-down-starts-when-it-is-back"),
    pytest.param(Script(R(1, 2), [(1, "Failed"), (1, "Completed")], deleted=frozenset({0})), [0, 3],
                 id="a-failed-vcjob-deleted-during-its-back-off-is-that-attempt"),
    pytest.param(Script(R(0, 2), [(1, "Failed")]), [0], id="limit-zero-retries-nothing"),
    pytest.param(Script(R(3, 5, max_duration=30), [(25.5, "Failed")]), [0],
                 id="a-failure-seen-at-25.5s-runs-its-back-off-past-max-duration-from-then"),
    pytest.param(Script(R(1, 2), [(1.5, "Failed")], down=(2, 3)), [0, 3],
                 id="a-controller-restarted-during-the-back-off-knows-the-failure-to-the-second"),
]


@pytest.mark.parametrize("script, times", RETRY_RULES)
def test_retry_timeline_rows_from_the_docs(script, times):
    assert [a.created for a in retry_oracle.predict(script, 200).attempts] == times
    check(script, 200)


def test_a_retry_attempts_pods_get_what_is_left_of_max_duration():
    want = retry_oracle.predict(Script(R(2, 4, 2, max_duration=40), [(3, "Failed")]), 100)
    assert [(a.created, a.deadline) for a in want.attempts] == [(0, None), (7, 33), (18, 22)]
    check(Script(R(2, 4, 2, max_duration=40), [(3, "Failed")]))


@st.composite
def scripts(draw) -> Script:
    limit = draw(st.integers(0, 3))
    retry = Retry(limit, draw(st.integers(0, 5)), draw(st.sampled_from([None, 1, 2])),
                  draw(st.sampled_from([None, None, 3, 6])), draw(st.one_of(st.none(), st.integers(3, 20))))
    phases = st.sampled_from(["Failed", "Failed", "Terminated", "Completed"])
    runs = st.integers(2, 12).map(lambda halves: halves / 2)           # whole or half seconds
    attempts = draw(st.lists(st.tuples(runs, phases), min_size=1, max_size=limit + 1))
    toggles = draw(st.lists(st.integers(1, 40), max_size=4, unique=True))
    toggles = frozenset(toggles[:len(toggles) // 2 * 2])     # (resumed in the end)
    deleted = frozenset(draw(st.lists(st.integers(0, limit), max_size=2, unique=True)))
    down = None
    if draw(st.booleans()):
        start = draw(st.integers(1, 30))
        down = (start, start + draw(st.integers(1, 12)))
    return Script(retry, attempts, toggles, deleted, down)


@settings(max_examples=120, deadline=None)
@given(scripts())
def test_the_engine_retries_when_and_as_the_oracle_says(script):
    check(script)
