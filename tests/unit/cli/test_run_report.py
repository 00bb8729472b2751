"""`vcctl run`'s final report: why a vcjob failed, even when its failed pods were since replaced."""
from __future__ import annotations

import copy
import datetime as dt
import types

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.cli import flownotes, flowreport, run, runhints, runlines, view

ADDED, MODIFIED, DELETED = client_mod.EventType.ADDED, client_mod.EventType.MODIFIED, client_mod.EventType.DELETED


def job(phase, retries=2):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "life", "namespace": "default", "uid": "j1"},
            "spec": {"maxRetry": 2, "tasks": [{"name": "w", "replicas": 1}]},
            "status": {"state": {"phase": phase}, "retryCount": retries}}


def pod(uid, phase, exit_code=None):
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": "c", "state": {"terminated": {"exitCode": exit_code,
                                                                              "reason": "Error"}}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "life-w-0", "namespace": "default", "uid": uid,
                         "labels": {"volcano.sh/job-name": "life"},
                         "ownerReferences": [{"kind": "Job", "name": "life", "controller": True}]},
            "status": status}


def observe(progress, events):
    for type_, obj in events:
        kind = kinds.POD if obj["kind"] == "Pod" else kinds.JOB
        progress.observe(client_mod.WatchEvent(type_, kind, obj, None))


@pytest.mark.parametrize("events, live_pods, expected", [
    pytest.param([(ADDED, pod("p1", "Failed", 3))], [pod("p1", "Failed", 3)],
                 "pod life-w-0: container c exited with code 3 (Error) (after 2 retries, maxRetry 2)",
                 id="failed-pod-live"),
    pytest.param([(ADDED, pod("p1", "Failed", 3)), (DELETED, pod("p1", "Failed", 3)), (ADDED, pod("p2", "Pending"))],
                 [pod("p2", "Pending")],
                 "pod life-w-0: container c exited with code 3 (Error) (after 2 retries, maxRetry 2)",
                 id="failed-pod-replaced-by-a-restart"),
    pytest.param([(ADDED, pod("p2", "Pending"))], [pod("p2", "Pending")], "Failed", id="no-failed-pod-seen"),
])
def test_a_failed_vcjob_says_why_even_when_its_failed_pod_was_replaced(events, live_pods, expected):
    progress = run.Progress()
    failed = job("Failed")
    observe(progress, [(ADDED, job("Running", 0)), *events, (MODIFIED, failed)])
    snap = view.Snapshot([], [failed], [], live_pods)
    no_runtime = types.SimpleNamespace(executor=None, failures=[])   # (no pod logs to show)
    lines = run.failure_report(snap, no_runtime, progress.failed_pods)
    assert lines == [f"vcjob default/life Failed: {expected}"]


UNPLACED = "0/1 nodes are unavailable: 1 node(s) didn't match Pod's node affinity/selector."


def podgroup(*conditions):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "life-j1", "namespace": "default",
                         "ownerReferences": [{"kind": "Job", "name": "life", "controller": True}]},
            "status": {"phase": "Inqueue", "conditions": list(conditions)}}


@pytest.mark.parametrize("phase, groups, expected", [
    pytest.param("Aborted", [podgroup({"type": "Unschedulable", "status": "True", "message": UNPLACED})],
                 f"Aborted while its pods waited: {UNPLACED}", id="aborted-by-a-PodPending-timeout"),
    pytest.param("Terminated", [podgroup({"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources"})],
                 "Terminated while its pods waited: NotEnoughResources", id="a-reason-without-message"),
    pytest.param("Aborted", [podgroup({"type": "Scheduled", "status": "True"})], "Aborted", id="nothing-says-why"),
    pytest.param("Aborted", [], "Aborted", id="no-podgroup"),
])
def test_a_vcjob_stopped_before_its_pods_ran_says_what_they_waited_for(phase, groups, expected):
    """A vcjob a policy stopped while it waited to be scheduled (PodPending with a timeout -> AbortJob): no pod
    failed, so the reason is the PodGroup's last Unschedulable condition (the run used to say `Aborted: Aborted`)."""
    stopped = job(phase, retries=0)
    no_runtime = types.SimpleNamespace(executor=None, failures=[])
    lines = run.failure_report(view.Snapshot([], [stopped], groups, []), no_runtime)
    assert lines == [f"vcjob default/life {phase}: {expected}"]


def test_pods_failed_by_the_stop_at_the_end_are_not_a_reason():
    progress = run.Progress()
    progress.ended = True
    observe(progress, [(ADDED, pod("p1", "Failed", 143))])
    assert progress.failed_pods == {}


def _flow_job(name, phase):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "labels": {"volcano.sh/createdByJobFlow": "default.rt"}},
            "spec": {"tasks": []}, "status": {"state": {"phase": phase}}}


@pytest.mark.parametrize("cond, annotations, served, expected", [
    # a failed vcjob in its retry back-off when the run stopped (--timeout): what the run waited on
    pytest.param({"phase": "Failed", "reason": "RetryBackoff", "message": "attempt 1 failed; retry 1 of 2 after a 30s "
                  "back-off"}, {}, False,
                 ["JobFlow default/rt: flow fail (vcjob rt-fail): attempt 1 failed; retry 1 of 2 after a 30s back-off"],
                 id="retry-back-off"),
    pytest.param({"phase": "Failed"}, {}, False, [], id="failed-for-good"),   # (the failure report says why)
    # a JobFlow suspended in its file: nothing can resume it in `vcctl run`
    pytest.param({"phase": "Failed"}, {"flow.volcano.sh/suspend": "true"}, False,
                 ['JobFlow default/rt is suspended (annotation flow.volcano.sh/suspend: "true"): vcctl run starts none '
                  "of its vcjobs; remove the annotation to run it"], id="suspended"),
    # … but a client of `vcctl run --listen` could have resumed it, until the run stopped (--timeout, Ctrl-C)
    pytest.param({"phase": "Failed"}, {"flow.volcano.sh/suspend": "true"}, True,
                 ['JobFlow default/rt is suspended (annotation flow.volcano.sh/suspend: "true"): no client resumed it '
                  "while the run served its API; remove the annotation to run it"], id="suspended-while-served"),
])
def test_stuck_report_says_what_a_finished_vcjob_of_a_running_jobflow_waits_for(cond, annotations, served, expected):
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "rt", "namespace": "default", "annotations": annotations},
          "spec": {"flows": [{"name": "fail"}]},
          "status": {"state": {"phase": "Running"}, "conditions": {"rt-fail": cond}}}
    assert run.stuck_report(view.Snapshot([jf], [_flow_job("rt-fail", "Failed")], [], []), served=served) == expected


@pytest.mark.parametrize("on_exit, cond, expected", [
    pytest.param("h", {"phase": "Failed"}, ["JobFlow default/x: the exit handler (spec.onExit: h) was Failed, which "
                                            "fails the JobFlow"], id="the-handler-failed"),
    pytest.param("h", {"phase": "Completed"}, [], id="the-handler-completed"),
    pytest.param(None, {"phase": "Failed"}, [], id="no-handler"),
])
def test_failure_report_says_when_the_exit_handler_failed(on_exit, cond, expected):
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "x", "namespace": "default"},
          "spec": {"flows": [{"name": "a"}, {"name": "h"}], **({"onExit": on_exit} if on_exit else {})},
          "status": {"state": {"phase": "Failed"}, "conditions": {"x-a": {"phase": "Completed"}, "x-h": cond}}}
    no_runtime = types.SimpleNamespace(executor=None, failures=[])
    assert run.failure_report(view.Snapshot([jf], [], [], []), no_runtime) == expected


@pytest.mark.parametrize("line, short", [
    pytest.param("vcjob default/g: resource in cluster is overused: overused nvidia.com/gpu; "
                 "job needs nvidia.com/gpu 2 but the cluster can "
                 "admit at most nvidia.com/gpu 0 more (overcommit-factor 1.2)", True, id="enqueue-overused"),
    pytest.param("vcjob default/g: 0/1 nodes are unavailable: 1 Insufficient cpu.", True, id="predicate"),
    pytest.param("vcjob default/g: pod g-w-0: container c CrashLoopBackOff: back-off 10s", False, id="crash-loop"),
    pytest.param("vcjob default/g: 0/2 nodes are unavailable: 2 node(s) didn't match pod anti-affinity rules.", False,
                 id="affinity"),
])
def test_a_stuck_line_short_of_resources_is_recognised(line, short):
    assert runhints.short_of_resources(line) is short


def test_the_hint_names_this_machine_and_the_nodes_option():
    hint = runhints.host_node_hint()
    assert hint.startswith("the one node is this machine (cpu ") and "--nodes" in hint


def _vcjob(*tasks):
    """A vcjob of (replicas, requests, limits) tasks."""
    return {"spec": {"tasks": [{"name": f"t{i}", "replicas": replicas, "template": {"spec": {"containers": [
        {"name": "c", "resources": {"requests": requests, "limits": limits}}]}}}
        for i, (replicas, requests, limits) in enumerate(tasks)]}}


@pytest.mark.parametrize("jobs, nodes", [
    pytest.param([], None, id="no-job"),
    pytest.param([_vcjob((1, {"cpu": "3", "memory": "1Gi"}, {}))], "1x(cpu=3,memory=1Gi)", id="one-big-pod"),
    pytest.param([_vcjob((2, {"cpu": "1", "memory": "100M"}, {"cpu": "10", "memory": "30Gi"}),
                         (2, {"cpu": "500m", "memory": "1500Mi"}, {}))],
                 "4x(cpu=1,memory=2Gi)", id="requests-not-limits-rounded-up"),
    pytest.param([_vcjob((1, {}, {}), (1, {}, {"nvidia.com/gpu": "2"}))], "1x(cpu=1,memory=1Gi,nvidia.com/gpu=2)",
                 id="a-gpu-limit-is-its-request"),
    pytest.param([_vcjob((3, {"cpu": "1"}, {})), _vcjob((1, {"cpu": "6"}, {}))], "1x(cpu=6,memory=1Gi)",
                 id="the-largest-pod-of-all-holds-the-other-jobs-pods"),
    pytest.param([_vcjob((1, {"cpu": "4"}, {}), (4, {"cpu": "1"}, {}))], "2x(cpu=4,memory=1Gi)",
                 id="small-pods-share-a-node"),
    pytest.param([_vcjob((3, {"cpu": "500m", "memory": "1Gi"}, {}), (1, {"cpu": "2", "memory": "3Gi"}, {}))],
                 "2x(cpu=2,memory=3Gi)", id="the-largest-first"),
    pytest.param([_vcjob((1, {"cpu": "2", "memory": "1Gi"}, {}), (3, {"cpu": "500m", "memory": "3Gi"}, {}))],
                 "4x(cpu=2,memory=3Gi)", id="memory-bound"),
    pytest.param([_vcjob((3, {"cpu": "3"}, {}), (2, {"cpu": "2"}, {}), (2, {"cpu": "1"}, {}))],
                 "5x(cpu=3,memory=1Gi)", id="first-fit-fills-the-gaps"),
    pytest.param([_vcjob((200, {}, {}))], "2x(cpu=1,memory=1Gi)", id="110-pods-a-node"),
    pytest.param([_vcjob((10000, {"cpu": "1"}, {}))], "10000x(cpu=1,memory=1Gi)", id="many-replicas"),
    pytest.param([_vcjob((4, {"cpu": "1"}, {})), _vcjob((2, {"cpu": "2"}, {}))], "2x(cpu=2,memory=1Gi)",
                 id="the-job-needing-most-nodes"),
    pytest.param([_vcjob((0, {"cpu": "1"}, {}), ("2", {"cpu": "1"}, {}))], None, id="no-pods"),
])
def test_nodes_for_the_waiting_jobs_hold_a_jobs_pods_at_once(jobs, nodes):
    assert runhints.nodes_for(jobs) == nodes
    hint = runhints.host_node_hint(jobs)
    assert f'--nodes "{nodes or runhints.GENERIC_NODES}"' in hint


def _mounted_pod(*paths, container="c"):
    return {"spec": {"containers": [{"name": container, "volumeMounts": [{"name": f"v{i}", "mountPath": p}
                                                                          for i, p in enumerate(paths)]}]}}


@pytest.mark.parametrize("pod, tail, mounts", [
    pytest.param(_mounted_pod("/etc/volcano", "/root/.ssh"), ["cat: /etc/volcano/mpiworker.host: No such file"],
                 ["/etc/volcano"], id="svc-hosts-file"),
    pytest.param(_mounted_pod("/etc/volcano/"), ["ls: cannot access '/etc/volcano': No such file"], ["/etc/volcano/"],
                 id="the-mount-itself"),
    pytest.param(_mounted_pod("/etc/volcano"), ["cat: /etc/volcanoes: No such file"], [], id="a-longer-name"),
    pytest.param(_mounted_pod("/data", "/data"), ["open /data/x: no such file", "again /data/x"], ["/data"],
                 id="named-once"),
    pytest.param(_mounted_pod("/etc/volcano", container="other"), ["cat: /etc/volcano/x.host"], [],
                 id="another-container's-mount"),
    pytest.param(_mounted_pod("relative", "/"), ["relative/x /x"], [], id="relative-or-root"),
])
def test_a_log_naming_a_mount_path_gets_a_note_where_it_is_here(pod, tail, mounts):
    assert runhints.mount_notes(pod, "c", tail) == [
        f"note: the volume mounted at {m} is at $VC_POD_DIR{m} here (pods run as processes on this machine's "
        "filesystem)" for m in mounts]


NOW = dt.datetime(2026, 1, 1, 0, 0, 5, tzinfo=dt.timezone.utc)
BACKOFF = {"phase": "Failed", "reason": "RetryBackoff",
           "message": "attempt 1 failed; retry 1 of 3 after a 30s back-off", "retryAt": "2026-01-01T00:00:30Z"}


@pytest.mark.parametrize("spec_flow, conditions, expected", [
    pytest.param({"name": "s", "withItems": ["resnet50", "vit-b16", "bert", "gpt2"]},
                 {"rt-s": {"phase": "Pending", "reason": "FanOut", "message": "4 items: 2 Completed, 2 retrying"},
                  "rt-s-0": {"phase": "Completed"}, "rt-s-3": {**BACKOFF, "message": "attempt 2 failed; retry 2 of 3 "
                                                                           "after a 30s back-off"},
                  "rt-s-1": BACKOFF, "rt-s-2": {"phase": "Completed"}},
                 ["JobFlow default/rt: flow s: 4 items: 2 Completed, 2 retrying",
                  "  item 1: vit-b16 (vcjob rt-s-1): attempt 1 failed; retry 1 of 3 after a 30s back-off; next attempt "
                  "due at "
                  "2026-01-01T00:00:30Z (in 25s)",
                  "  item 3: gpt2 (vcjob rt-s-3): attempt 2 failed; retry 2 of 3 after a 30s back-off; next attempt "
                  "due at "
                  "2026-01-01T00:00:30Z (in 25s)"], id="fan-out-items-in-index-order"),
    pytest.param({"name": "s", "withParam": "{{outputs.a}}"},
                 {"rt-s": {"phase": "Pending", "reason": "FanOut", "message": "2 items: 1 Completed, 1 retrying"},
                  "rt-s-10": {**BACKOFF, "retryAt": "2026-01-01T00:00:02Z"}, "rt-s-9": {"phase": "Completed"}},
                 ["JobFlow default/rt: flow s: 2 items: 1 Completed, 1 retrying",
                  "  item 10 (vcjob rt-s-10): attempt 1 failed; retry 1 of 3 after a 30s back-off; next attempt due at "
                  "2026-01-01T00:00:02Z (3s ago)"], id="with-param-past-due"),
    pytest.param({"name": "s", "withItems": [1, 2]},
                 {"rt-s": {"phase": "Pending", "reason": "FanOut", "message": "2 items: 1 Completed, 1 retrying"},
                  "rt-s-0": {"phase": "Completed"},
                  "rt-s-1": {**BACKOFF, "message": BACKOFF["message"] + "; last attempt: pod rt-s-1-main-0: container "
                                                                        "main exited with code 1 (Error)"}},
                 ["JobFlow default/rt: flow s: 2 items: 1 Completed, 1 retrying",
                  "  item 1: 2 (vcjob rt-s-1): attempt 1 failed; retry 1 of 3 after a 30s back-off; next attempt due "
                  "at 2026-01-01T00:00:30Z (in 25s)"], id="why-is-left-to-the-failed-vcjobs-line"),
    pytest.param({"name": "s", "repeat": {"until": "iteration >= 3", "limit": 5}},
                 {"rt-s": {"phase": "Pending", "reason": "Repeat", "message": "iteration 1 (at most 5)"},
                  "rt-s-0": {"phase": "Completed"},
                  "rt-s-1": {"phase": "Pending", "reason": "Suspended", "message": "attempt 2 is created once the "
                             "JobFlow is resumed (it is suspended: vcctl jobflow resume)"}},
                 ["JobFlow default/rt: flow s: iteration 1 (at most 5)",
                  "  iteration 1 (vcjob rt-s-1): attempt 2 is created once the JobFlow is resumed (it is suspended: "
                  "vcctl jobflow resume)"], id="repeat-iteration-suspended"),
    pytest.param({"name": "s", "withItems": [1]},
                 {"rt-s": {"phase": "Pending", "reason": "FanOut", "message": "1 items: 1 Running"},
                  "rt-s-0": {"phase": "Pending", "reason": "Suspended", "message": "the JobFlow is suspended"}},
                 ["JobFlow default/rt: flow s: 1 items: 1 Running"], id="a-suspended-first-attempt-is-no-retry"),
])
def test_stuck_report_lists_each_loop_vcjob_waiting_for_its_retry(spec_flow, conditions, expected):
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "rt", "namespace": "default"}, "spec": {"flows": [spec_flow]},
          "status": {"state": {"phase": "Running"}, "conditions": conditions}}
    jobs = [_flow_job(name, cond["phase"]) for name, cond in conditions.items() if name != "rt-s"]
    assert run.stuck_report(view.Snapshot([jf], jobs, [], []), NOW) == expected


def test_failure_report_names_the_loop_item_a_stop_left_unretried():
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "x", "namespace": "default"},
          "spec": {"flows": [{"name": "s", "withItems": [0.1, 0.01]}, {"name": "b"}, {"name": "r-2"}]},
          "status": {"state": {"phase": "Failed"}, "conditions": {
              "x-s-1": {"phase": "Failed", "reason": "NotRetried",
                        "message": "attempt 1 failed; not retried: the JobFlow is Failed"},
              "x-b": {"phase": "Failed", "reason": "RetriesExhausted", "message": "attempt 2 failed"},
              "x-r-2": {"phase": "Failed", "reason": "RetriesExhausted", "message": "attempt 2 failed"}}}}
    no_runtime = types.SimpleNamespace(executor=None, failures=[])
    assert run.failure_report(view.Snapshot([jf], [], [], []), no_runtime) == [
        "JobFlow default/x: flow s, item 1: 0.01 (vcjob x-s-1) NotRetried: attempt 1 failed; not retried: the "
        "JobFlow is "
        "Failed",
        "JobFlow default/x: x-b RetriesExhausted: attempt 2 failed",
        "JobFlow default/x: x-r-2 RetriesExhausted: attempt 2 failed"]


def test_progress_lines_say_once_that_a_failed_attempt_will_be_retried():
    """Without them, a log read `Failed` then `Pending` for the same vcjob, unexplained."""
    def flow_event(cond):
        jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
              "metadata": {"name": "x", "namespace": "ns"}, "spec": {"flows": [{"name": "a"}]},
              "status": {"state": {"phase": "Running"}, "conditions": {"x-a": cond}}}
        return client_mod.WatchEvent(MODIFIED, kinds.JOBFLOW, jf, None)

    progress = run.Progress()
    first = {"phase": "Failed", "reason": "RetryBackoff",
             "message": "attempt 1 failed; retry 1 of 3 after a 1s back-off"}
    progress.observe(flow_event(first))
    assert progress.changes() == ["JobFlow ns/x: Running",
                                  "vcjob ns/x-a: attempt 1 failed; retry 1 of 3 after a 1s back-off"]
    progress.observe(flow_event({**first, "podFailureRatio": "1/1"}))   # (the same attempt, written again)
    assert progress.changes() == []
    second = {**first, "retries": 1, "message": "attempt 2 failed; retry 2 of 3 after a 2s back-off"}
    progress.observe(flow_event(second))
    assert progress.changes() == ["vcjob ns/x-a: attempt 2 failed; retry 2 of 3 after a 2s back-off"]


@pytest.mark.parametrize("conditions, expected", [
    pytest.param({"x-a": {"reason": "RetryBackoff", "message": "attempt 1 failed; retry 1 of 2 after a 1s back-off"}},
                 ["vcjob ns/x-a: attempt 1 failed; retry 1 of 2 after a 1s back-off"], id="announced"),
    pytest.param({"x-a": {"reason": "RetriesExhausted", "message": "attempt 3 failed; no retries left (limit 2)"},
                  "x-b": {"phase": "Failed"}}, ["vcjob ns/x-a: attempt 3 failed; no retries left (limit 2)"],
                 id="no-retry-to-come-why"),
    pytest.param({"x-s-1": {"reason": "RetryBackoff",
                            "message": "attempt 1 failed; retry 1 of 2 after a 1s back-off"}},
                 ["vcjob ns/x-s-1 (flow s, item 1: vit-b16): attempt 1 failed; retry 1 of 2 after a 1s back-off"],
                 id="a-loop-item-named"),
])
def test_retry_notes_announce_each_coming_retry_once(conditions, expected):
    """The lines `vcctl run` and `vcctl jobflow get -w` write (without a terminal) after a vcjob's Failed."""
    jf = {"metadata": {"name": "x", "namespace": "ns"}, "status": {"conditions": conditions},
          "spec": {"flows": [{"name": "a"}, {"name": "s", "withItems": ["resnet50", "vit-b16"]}]}}
    notes = flownotes.FlowNotes()
    assert notes.lines(jf) == expected
    assert notes.lines(copy.deepcopy(jf)) == []


def _item_job(name, phase, item=None):
    j = _flow_job(name, phase)
    if item is not None:
        j["metadata"]["annotations"] = {"flow.volcano.sh/item": item}
    return j


def _loop_flow(spec_flow, n, phase="Running"):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "rt", "namespace": "default"}, "spec": {"flows": [spec_flow]},
            "status": {"state": {"phase": phase}, "conditions": {
                "rt-s": {"phase": "Running", "reason": "FanOut", "message": f"{n} items: 1 Completed", "items": n}}}}


@pytest.mark.parametrize("spec_flow, jobs, expected", [
    pytest.param({"name": "s", "withItems": ["resnet50", "vit-b16", "bert"]},
                 [_item_job("rt-s-0", "Completed"), _item_job("rt-s-1", "Running"), _item_job("rt-s-2", "Pending")],
                 ["  item 1: vit-b16 (vcjob rt-s-1): vcjob is Running",
                  "  item 2: bert (vcjob rt-s-2): vcjob is Pending"], id="withItems-the-unfinished-ones"),
    pytest.param({"name": "s", "withParam": "{{outputs.a}}"},
                 [_item_job("rt-s-0", "Running", '{"lr":0.01}'), _item_job("rt-s-1", "Running")],
                 ['  item 0: {"lr":0.01} (vcjob rt-s-0): vcjob is Running',
                  "  item 1 (vcjob rt-s-1): vcjob is Running"], id="withParam-from-the-vcjobs-annotation"),
    pytest.param({"name": "s", "withItems": list(range(12))}, [_item_job(f"rt-s-{i}", "Running") for i in range(12)],
                 [f"  item {i}: {i} (vcjob rt-s-{i}): vcjob is Running" for i in range(run.ITEMS_LISTED)]
                 + [f"  … and {12 - run.ITEMS_LISTED} more unfinished"], id="the-first-ITEMS_LISTED-then-a-count"),
])
def test_a_stopped_run_names_each_unfinished_loop_item_as_the_live_view_does(spec_flow, jobs, expected):
    n = len(spec_flow.get("withItems") or jobs)
    jf = _loop_flow(spec_flow, n)
    assert run.stuck_report(view.Snapshot([jf], jobs, [], []), NOW) == [
        f"JobFlow default/rt: flow s: {n} items: 1 Completed", *expected]


def test_the_failure_of_a_loop_items_vcjob_names_the_item():
    jf = _loop_flow({"name": "s", "withItems": [0.1, 0.013]}, 2, phase="Failed")
    no_runtime = types.SimpleNamespace(executor=None, failures=[])
    report = run.failure_report(view.Snapshot([jf], [_item_job("rt-s-1", "Failed")], [], []), no_runtime)
    assert report[0] == "vcjob default/rt-s-1 (flow s, item 1: 0.013) Failed: Failed"


@pytest.mark.parametrize("cond, expected", [
    pytest.param({"phase": "Failed", "reason": "FanOut", "message": "20 items: 19 Completed, 1 Failed"},
                 "JobFlow default/rt: flow s: 20 items: 19 Completed, 1 Failed", id="the-loops-counts-by-its-name"),
    pytest.param({"phase": "Failed", "reason": "InvalidItems", "message": "not a JSON list"},
                 "JobFlow default/rt: rt-s InvalidItems: not a JSON list", id="another-reason-kept"),
])
def test_a_failed_loop_flow_is_named_by_its_flow(cond, expected):
    """`sweep-train FanOut: 20 items: …` named the loop by its vcjob prefix and a reason that says nothing."""
    jf = _loop_flow({"name": "s", "withItems": [1, 2]}, 2, phase="Failed")
    jf["status"]["conditions"]["rt-s"] = cond
    no_runtime = types.SimpleNamespace(executor=None, failures=[])
    assert run.failure_report(view.Snapshot([jf], [], [], []), no_runtime) == [expected]


def _looping_pod(policy, *containers):
    """A pod whose containers (name, reason waiting, lastState.terminated) are as given."""
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"restartPolicy": policy} if policy else {},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": name, "state": {"waiting": {"reason": reason}} if reason else {"running": {}},
                 "lastState": {"terminated": last} if last else {}} for name, reason, last in containers]}}


NOT_FOUND = {"exitCode": 128, "reason": "StartError", "message": 'exec: "x": executable file not found in $PATH'}


@pytest.mark.parametrize("pod, notes", [
    pytest.param(_looping_pod("OnFailure", ("main", "CrashLoopBackOff", NOT_FOUND)),
                 ['pod default/p: container main is restarted by restartPolicy OnFailure, with back-off (last run: '
                  'StartError, exit code 128: exec: "x": executable file not found in $PATH)'], id="missing-command"),
    pytest.param(_looping_pod(None, ("main", "CrashLoopBackOff", {"exitCode": 0, "reason": "Completed"})),
                 ["pod default/p: container main is restarted by restartPolicy Always, with back-off (last run: "
                  "exit code 0)"], id="exited-0-under-always"),
    pytest.param(_looping_pod("OnFailure", ("main", None, NOT_FOUND), ("side", "ContainerCreating", None)), [],
                 id="running-or-starting"),
])
def test_a_crash_loop_is_announced_once_per_container(pod, notes):
    announced: set = set()
    assert runlines.crash_loop_notes(pod, announced) == notes
    assert runlines.crash_loop_notes(pod, announced) == []
