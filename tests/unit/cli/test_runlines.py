"""The lines of a run without a terminal (a CI log): a loop's items counted in one line per loop flow, each failed
item named as the live view names its row; every other object a line per phase change, as before."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.cli import run, runlines

ITEMS = [0.001, 0.002, 0.013, 0.004]


def jobflow(flows, conditions):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "sweep", "namespace": "default"}, "spec": {"flows": flows},
            "status": {"state": {"phase": "Running"}, "conditions": conditions}}


def vcjob(name, phase, item=None):
    annotations = {"flow.volcano.sh/item": item} if item is not None else {}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations,
                         "labels": {"volcano.sh/createdByJobFlow": "default.sweep"}},
            "spec": {"tasks": []}, "status": {"state": {"phase": phase}}}


SWEEP = jobflow([{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}, "withItems": ITEMS}],
                {"sweep-train": {"phase": "Running", "reason": "FanOut", "items": 4}})
PARAM = jobflow([{"name": "train", "withParam": "{{outputs.pick}}"}],
                {"sweep-train": {"phase": "Running", "reason": "FanOut", "items": 2}})
REPEAT = jobflow([{"name": "train", "repeat": {"until": "false", "limit": 3}}],
                 {"sweep-train": {"phase": "Running", "reason": "Repeat", "iterations": 2}})


@pytest.mark.parametrize("jf, jobs, earlier, expected", [
    pytest.param(SWEEP, [vcjob("sweep-prep", "Completed")], {}, ["vcjob default/sweep-prep: Completed"],
                 id="a-flows-own-vcjob-a-line-as-before"),
    pytest.param(SWEEP, [vcjob(f"sweep-train-{i}", "Pending") for i in range(4)], {},
                 ["JobFlow default/sweep: flow train: 4 items: 4 Pending"], id="four-items-one-line"),
    pytest.param(SWEEP, [vcjob("sweep-train-0", "Running"), vcjob("sweep-train-2", "Failed")],
                 {"vcjob default/sweep-train-1": "Completed"},
                 ["JobFlow default/sweep: flow train: 4 items: 1 Failed, 1 Running, 1 not created, 1 Completed",
                  "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"],
                 id="counts-of-every-item-and-the-failed-one-named"),
    pytest.param(PARAM, [vcjob("sweep-train-1", "Failed", "resnet50")], {"vcjob default/sweep-train-0": "Running"},
                 ["JobFlow default/sweep: flow train: 2 items: 1 Failed, 1 Running",
                  "vcjob default/sweep-train-1 (flow train, item 1: resnet50): Failed"],
                 id="withParam-the-value-from-its-vcjob"),
    pytest.param(REPEAT, [vcjob("sweep-train-1", "Running")], {"vcjob default/sweep-train-0": "Completed"},
                 ["JobFlow default/sweep: flow train: 2 iterations: 1 Running, 1 Completed"], id="repeat-iterations"),
    pytest.param(jobflow([{"name": "train", "withItems": [1, 2]}], {}), [vcjob("sweep-train-1", "Pending")], {},
                 ["JobFlow default/sweep: flow train: 2 items: 1 Pending, 1 not created"],
                 id="no-status-yet-the-items-made-so-far"),
    pytest.param(jobflow([{"name": "train", "repeat": {"until": "false", "limit": 3}}],
                         {"sweep-train": {"phase": "Running", "reason": "Repeat", "iterations": 1}}),
                 [vcjob("sweep-train-0", "Running")], {}, ["JobFlow default/sweep: flow train: 1 iteration: 1 Running"],
                 id="one-iteration-in-the-singular"),
    pytest.param(jobflow([{"name": "train", "withItems": [1]}], {"sweep-train": {"phase": "Running", "items": 1}}),
                 [vcjob("sweep-train-0", "Running")], {}, ["JobFlow default/sweep: flow train: 1 item: 1 Running"],
                 id="one-item-in-the-singular"),
])
def test_change_lines(jf, jobs, earlier, expected):
    changed = {f"vcjob default/{j['metadata']['name']}": j for j in jobs}
    phases = {**earlier, **{what: j["status"]["state"]["phase"] for what, j in changed.items()}}
    assert runlines.change_lines(list(changed), phases, {"default/sweep": jf}, changed) == expected


def test_a_runs_lines_count_a_loops_items():
    """Through run.Progress as the watch feeds it: the JobFlow, then its items' vcjobs."""
    progress = run.Progress()

    def seen(kind, obj):
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
    seen(kinds.JOBFLOW, SWEEP)
    for i in range(4):
        seen(kinds.JOB, vcjob(f"sweep-train-{i}", "Running"))
    assert progress.changes() == ["JobFlow default/sweep: Running",
                                  "JobFlow default/sweep: flow train: 4 items: 4 Running"]
    seen(kinds.JOB, vcjob("sweep-train-2", "Failed"))
    seen(kinds.JOB, vcjob("sweep-train-3", "Completed"))
    assert progress.changes() == ["JobFlow default/sweep: flow train: 4 items: 1 Failed, 2 Running, 1 Completed",
                                  "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"]


def item(i, phase):
    """A change of item i of SWEEP's loop: its key, its vcjob."""
    return f"vcjob default/sweep-train-{i}", vcjob(f"sweep-train-{i}", phase)


COUNT = "JobFlow default/sweep: flow train: 4 items: "
FAILED_2 = "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"


# steps: (time, changes — (key, vcjob or a JobFlow's phase) —, final, the lines written then)
@pytest.mark.parametrize("steps", [
    pytest.param([(0.0, [item(0, "Pending"), item(1, "Pending")], False, []),
                  (0.1, [item(2, "Pending"), item(3, "Pending")], False, []),
                  (0.2, [], False, []),
                  (0.6, [], False, [COUNT + "4 Pending"]),
                  (5.0, [], False, [])],
                 id="items-starting-over-ticks-one-line-once-settled"),
    pytest.param([(0.0, [item(i, "Running") for i in range(4)], False, []),
                  (0.1, [item(0, "Completed")], False, []),
                  (0.4, [item(1, "Completed")], False, []),
                  (0.8, [item(2, "Completed")], False, []),
                  (1.2, [item(3, "Completed")], False, []),
                  (1.6, [], False, []),
                  (1.7, [], False, [COUNT + "4 Completed"])],
                 id="settled-half-a-second-after-the-last-change"),
    pytest.param([(0.0, [item(0, "Running")], False, []),
                  (0.4, [item(1, "Running")], False, []),
                  (0.8, [item(2, "Running")], False, []),
                  (1.2, [item(3, "Running")], False, []),
                  (1.6, [item(0, "Completed")], False, []),
                  (2.0, [item(1, "Completed")], False, [COUNT + "2 Running, 2 Completed"]),
                  (2.4, [item(2, "Completed")], False, []),
                  (2.9, [], False, [COUNT + "1 Running, 3 Completed"])],
                 id="never-settling-a-line-every-two-seconds-at-most"),
    pytest.param([(0.0, [item(0, "Running"), item(1, "Running")], False, []),
                  (0.1, [item(2, "Failed")], False, [COUNT + "1 Failed, 2 Running, 1 not created", FAILED_2]),
                  (0.7, [], False, [])],
                 id="a-failure-at-once-after-its-counts"),
    pytest.param([(0.0, [item(i, "Running") for i in range(4)], False, []),
                  (0.1, [("JobFlow default/sweep", "Running")], False,
                   [COUNT + "4 Running", "JobFlow default/sweep: Running"])],
                 id="the-counts-before-a-line-about-their-JobFlow"),
    pytest.param([(0.0, [item(i, "Completed") for i in range(4)], False, []),
                  (0.1, [("pod default/bare", "Running")], False, ["pod default/bare: Running"]),
                  (0.15, [], True, [COUNT + "4 Completed"])],
                 id="other-lines-at-once-the-held-one-at-the-end"),
    pytest.param([(0.0, [item(i, "Running") for i in range(4)], False, []),
                  (1.0, [], False, [COUNT + "4 Running"]),
                  (1.1, [item(0, "Pending")], False, []),
                  (1.2, [item(0, "Running")], False, []),
                  (2.0, [], False, [])],
                 id="counts-back-to-the-last-line-no-line"),
])
def test_loop_lines_hold_a_loops_count_until_it_settles(steps):
    loop_lines = runlines.LoopLines()
    phases: dict[str, str] = {}
    jobflows = {"default/sweep": SWEEP}
    for now, changes, final, expected in steps:
        jobs = {key: obj for key, obj in changes if isinstance(obj, dict)}
        phases.update({key: obj["status"]["state"]["phase"] if isinstance(obj, dict) else obj for key, obj in changes})
        assert loop_lines.lines([key for key, _ in changes], phases, jobflows, jobs, now, final) == expected, now


def test_loop_lines_say_when_the_next_is_due():
    loop_lines = runlines.LoopLines()
    assert loop_lines.due_in(0.0) is None
    key, job = item(0, "Running")
    loop_lines.lines([key], {key: "Running"}, {"default/sweep": SWEEP}, {key: job}, 1.0)
    assert loop_lines.due_in(1.2) == pytest.approx(0.3)
    assert loop_lines.due_in(9.0) == 0.0


def test_loop_lines_keep_a_line_per_loop_not_per_item():
    """Memory: what is kept follows the loop flows, however many items changed."""
    loop_lines = runlines.LoopLines()
    changes = [item(i % 4, phase) for i in range(400) for phase in ("Pending", "Running")]
    phases = {}
    for n, (key, job) in enumerate(changes):
        phases[key] = job["status"]["state"]["phase"]
        loop_lines.lines([key], phases, {"default/sweep": SWEEP}, {key: job}, n * 0.01)
    assert len(loop_lines._held) <= 1 and len(loop_lines._written) <= 1


def test_a_runs_lines_hold_a_loops_count_given_the_time():
    """run.Progress.changes(now): the count line held until the loop settles; `final` writes it."""
    progress = run.Progress()

    def seen(kind, obj):
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
    seen(kinds.JOBFLOW, SWEEP)
    seen(kinds.JOB, vcjob("sweep-train-0", "Pending"))
    assert progress.changes(0.0) == ["JobFlow default/sweep: Running"]
    for i in range(1, 4):
        seen(kinds.JOB, vcjob(f"sweep-train-{i}", "Pending"))
        assert progress.changes(0.1 * i) == []
    seen(kinds.JOB, vcjob("sweep-train-0", "Running"))
    assert progress.changes(0.4) == []
    assert progress.changes(0.5, final=True) == ["JobFlow default/sweep: flow train: 4 items: 1 Running, 3 Pending"]


ONE = jobflow([{"name": "bad"}], {})
FAILED_WHY = {"phase": "Failed", "createTime": "2026-01-01T00:00:00Z",
              "message": "pod sweep-bad-t-0: container main exited with code 3 (Error)"}


def flow_version(phase, conditions=None, suspended=False):
    jf = jobflow([{"name": "bad"}], conditions or {})
    jf["status"]["state"]["phase"] = phase
    if suspended:
        jf["metadata"]["annotations"] = {"flow.volcano.sh/suspend": "true"}
    return jf


# events: (kind, object) as the watch gives them in one burst, then the lines of that burst
@pytest.mark.parametrize("earlier, events, expected", [
    pytest.param([(kinds.JOBFLOW, flow_version("Pending")), (kinds.JOB, vcjob("sweep-bad", "Pending"))],
                 [(kinds.JOBFLOW, flow_version("Running")), (kinds.JOB, vcjob("sweep-bad", "Running")),
                  (kinds.JOB, vcjob("sweep-bad", "Failed")),
                  (kinds.JOBFLOW, flow_version("Failed", {"sweep-bad": FAILED_WHY}))],
                 ["JobFlow default/sweep: Running", "vcjob default/sweep-bad: Running",
                  "vcjob default/sweep-bad: Failed",
                  "vcjob default/sweep-bad: pod sweep-bad-t-0: container main exited with code 3 (Error)",
                  "JobFlow default/sweep: Failed"],
                 id="the-vcjobs-failure-and-why-before-the-JobFlows"),
    pytest.param([(kinds.JOBFLOW, flow_version("Running")), (kinds.JOB, vcjob("sweep-bad", "Running"))],
                 [(kinds.JOB, vcjob("sweep-bad", "Failed")),
                  (kinds.JOBFLOW, flow_version("Running", {"sweep-bad": {
                      **FAILED_WHY, "reason": "RetryBackoff", "message": "attempt 1 failed; retry 1 of 3"}}))],
                 ["vcjob default/sweep-bad: Failed", "vcjob default/sweep-bad: attempt 1 failed; retry 1 of 3"],
                 id="a-retry-after-the-failure"),
    pytest.param([(kinds.JOBFLOW, flow_version("Running"))],
                 [(kinds.JOBFLOW, flow_version("Running", suspended=True))],
                 ["JobFlow default/sweep: Running (suspended)"], id="suspended-as-get-w-says-it"),
    pytest.param([(kinds.JOB, vcjob("sweep-bad", "Pending"))],
                 [(kinds.JOB, vcjob("sweep-bad", "Restarting")), (kinds.JOB, vcjob("sweep-bad", "Pending"))],
                 ["vcjob default/sweep-bad: Restarting", "vcjob default/sweep-bad: Pending"],
                 id="a-restart-between-two-lines-of-the-same-phase-is-written"),
    pytest.param([(kinds.JOB, vcjob("sweep-bad", "Running"))],
                 [(kinds.JOB, vcjob("sweep-bad", p)) for p in ("Restarting", "Pending", "Running")],
                 ["vcjob default/sweep-bad: Restarting", "vcjob default/sweep-bad: Pending",
                  "vcjob default/sweep-bad: Running"], id="back-to-running-after-a-restart"),
    pytest.param([(kinds.JOB, vcjob("sweep-bad", "Pending"))],
                 [(kinds.JOB, vcjob("sweep-bad", p)) for p in ("Restarting", "Pending", "Running")],
                 ["vcjob default/sweep-bad: Restarting", "vcjob default/sweep-bad: Pending",
                  "vcjob default/sweep-bad: Running"], id="a-restart-before-a-new-phase"),
    pytest.param([],
                 [(kinds.JOB, vcjob("sweep-bad", p)) for p in ("Pending", "Running", "Completed")],
                 ["vcjob default/sweep-bad: Pending", "vcjob default/sweep-bad: Running",
                  "vcjob default/sweep-bad: Completed"], id="a-short-job-seen-whole-in-one-burst"),
    pytest.param([(kinds.JOB, vcjob("a", "Pending")), (kinds.JOB, vcjob("b", "Pending"))],
                 [(kinds.JOB, vcjob("a", "Running")), (kinds.JOB, vcjob("b", "Running")),
                  (kinds.JOB, vcjob("a", "Restarting")), (kinds.JOB, vcjob("b", "Completed")),
                  (kinds.JOB, vcjob("a", "Pending"))],
                 ["vcjob default/a: Running", "vcjob default/b: Running", "vcjob default/a: Restarting",
                  "vcjob default/b: Completed", "vcjob default/a: Pending"], id="two-jobs-interleaved-in-order"),
    pytest.param([(kinds.JOBFLOW, flow_version("Pending"))],
                 [(kinds.JOBFLOW, flow_version(p)) for p in ("Running", "Succeed")],
                 ["JobFlow default/sweep: Running", "JobFlow default/sweep: Succeed"], id="a-jobflow-s-every-phase"),
])
def test_a_runs_lines_say_a_cause_before_its_effect(earlier, events, expected):
    """Every phase an object passes through has its line, in the order the changes happened, however many come
    in one burst of work (a restart between two lines; a job that started and ended between two)."""
    progress = run.Progress()
    for kind, obj in earlier:
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
    progress.changes()
    for kind, obj in events:
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
    assert progress.changes() == expected
    assert progress.changes(1.0, True) == []
    progress = run.Progress()   # (and the same lines through LoopLines, as `vcctl run` writes them)
    for batch, seen in ((earlier, None), (events, expected)):
        for kind, obj in batch:
            progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
        lines = progress.changes(0.0)
        assert seen is None or lines == seen


@pytest.mark.parametrize("changed, phase, expected", [
    pytest.param(["vcjob default/sweep-bad", "JobFlow default/sweep"], "Failed",
                 ["vcjob default/sweep-bad: Failed", "NOTE", "JobFlow default/sweep: Failed"],
                 id="before-a-JobFlow-that-finished"),
    pytest.param(["JobFlow default/sweep", "vcjob default/sweep-bad"], "Running",
                 ["JobFlow default/sweep: Running", "NOTE", "vcjob default/sweep-bad: Failed"],
                 id="after-a-JobFlow-that-goes-on"),
    pytest.param(["vcjob default/sweep-bad"], "Running", ["vcjob default/sweep-bad: Failed", "NOTE"],
                 id="at-the-end-without-a-JobFlow-line"),
])
def test_a_jobflows_notes_next_to_its_line(changed, phase, expected):
    phases = {"vcjob default/sweep-bad": "Failed", "JobFlow default/sweep": phase}
    args = (changed, phases, {"default/sweep": ONE}, {"vcjob default/sweep-bad": vcjob("sweep-bad", "Failed")})
    assert runlines.change_lines(*args, {"default/sweep": ["NOTE"]}) == expected
    assert runlines.LoopLines().lines(*args, 0.0, False, {"default/sweep": ["NOTE"]}) == expected


def test_an_item_that_failed_and_was_retried_in_one_burst_is_named():
    """A loop item's failure has its line even when its retry made it Pending again before the lines were written."""
    progress = run.Progress()
    for obj in (SWEEP, *(vcjob(f"sweep-train-{i}", "Running") for i in range(4))):
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, obj["kind"], obj, None))
    progress.changes()
    for phase in ("Failed", "Pending"):
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kinds.JOB.kind,
                                               vcjob("sweep-train-2", phase), None))
    assert progress.changes() == ["JobFlow default/sweep: flow train: 4 items: 3 Running, 1 Pending",
                                  "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"]
