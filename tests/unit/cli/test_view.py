"""The live view's DAG: rows in dependency order, loop items under their flow, the state of a flow without a
vcjob read from the JobFlow's status condition (waiting, probe, suspended, Skipped), and big fans and long
flows summarised (counts per state, the failed and running flows listed up to a cap)."""
from __future__ import annotations

import datetime as dt

import pytest
from rich.console import Console

from vclite.cli import runlines, view, viewdraw

NOW = dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.timezone.utc)


def jobflow(flows, conditions=None, annotations=None, on_exit=None, **status):
    spec = {"flows": flows, **({"onExit": on_exit} if on_exit else {})}
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "jf", "namespace": "default", "annotations": annotations or {},
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": spec, "status": {"conditions": conditions or {}, "state": {"phase": "Running"}, **status}}


def job(name, phase="Running"):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"tasks": [{"name": "main", "replicas": 1}]}, "status": {"state": {"phase": phase}}}


def snap(jf, *jobs):
    return view.Snapshot([jf], list(jobs), [], [])


def test_rows_follow_dependencies_with_items_under_their_flow_and_the_exit_handler_last():
    jf = jobflow([{"name": "e"}, {"name": "m", "dependsOn": {"expression": "f.AllCompleted"}},
                  {"name": "f", "withItems": list(range(10))}, {"name": "s"}],
                 {"jf-f": {"phase": "Running", "reason": "FanOut", "items": 10}}, on_exit="e")
    rows = view.dag_rows(jf, snap(jf))
    assert [r.label for r in rows] == ["f", *[f"  item {i}: {i}" for i in range(view.LOOP_ROWS)],
                                       f"  … {10 - view.LOOP_ROWS} more", "m", "s", "e"]
    assert rows[0].depends == "each of 10 items" and rows[-1].depends == "on exit"


def annotated(name, item_text):
    j = job(name)
    j["metadata"]["annotations"] = {"flow.volcano.sh/item": item_text}
    return j


FAILURE = '{"name":"train","outcome":"Failed","message":"vcjob jf-train Failed: pod jf-train-main-0: ' \
          'container main exited with code 3 (Error)","handled":false}'


@pytest.mark.parametrize("loop, jobs, labels", [
    pytest.param({"withItems": ["resnet50", "vit-b16"]}, [], ["item 0: resnet50", "item 1: vit-b16"],
                 id="withItems-from-the-spec"),
    pytest.param({"withItems": [{"lr": 0.1, "batch": 256, "optimizer": "adamw"}, 3, True]}, [],
                 ['item 0: {"lr":0.1,"batch":256,"…', "item 1: 3", "item 2: true"], id="withItems-cut-as-json"),
    pytest.param({"withItems": ["a very long model name indeed, longer than shown"]}, [],
                 ["item 0: a very long model name …"], id="withItems-long-string"),
    pytest.param({"withParam": "{{outputs.pick}}"}, [annotated("jf-f-0", "resnet50")], ["item 0: resnet50", "item 1"],
                 id="withParam-from-its-vcjob-none-yet-for-item-1"),
    pytest.param({"withParam": "{{outputs.pick}}"}, [annotated("jf-f-0", '{"lr":0.1}'), job("jf-f-1")],
                 ['item 0: {"lr":0.1}', "item 1"], id="withParam-an-object-a-vcjob-without-the-annotation"),
    pytest.param({"withParam": "{{workflow.failures}}"}, [annotated("jf-f-0", FAILURE),
                                                          annotated("jf-f-1", FAILURE[:40] + "…")],
                 ["item 0: train Failed", "item 1: train Failed"], id="the-exit-handlers-failures"),
    pytest.param({"repeat": {"until": "true", "limit": 3}}, [job("jf-f-0")], ["iteration 0", "iteration 1"],
                 id="repeat-iterations-have-no-value"),
])
def test_a_loop_row_names_its_item(loop, jobs, labels):
    """Under a loop flow each item's row shows its value, ITEM_SHOWN characters at most: withItems' from the spec,
    a withParam's from its vcjob's annotation (the JobFlow status keeps no item values)."""
    jf = jobflow([{"name": "pick"}, {"name": "f", **loop}],
                 {"jf-f": {"phase": "Running", "reason": "FanOut", "items": len(labels)}})
    rows = view.dag_rows(jf, snap(jf, *jobs))
    assert [r.label.strip() for r in rows if r.child] == labels


@pytest.mark.parametrize("loop, key, jobs, expected", [
    pytest.param({"withItems": ["resnet50", "vit-b16"]}, "jf-f-1", [], ("f", "item 1: vit-b16"), id="withItems"),
    pytest.param({"withItems": ["x" * 100]}, "jf-f-0", [], ("f", f"item 0: {'x' * 59}…"), id="cut-at-60"),
    pytest.param({"withParam": "{{outputs.pick}}"}, "jf-f-0", [annotated("jf-f-0", "resnet50")],
                 ("f", "item 0: resnet50"), id="withParam-from-its-vcjob"),
    pytest.param({"withParam": "{{outputs.pick}}"}, "jf-f-3", [], ("f", "item 3"), id="withParam-no-vcjob"),
    pytest.param({"repeat": {"until": "true", "limit": 3}}, "jf-f-2", [], ("f", "iteration 2"), id="repeat"),
    pytest.param({"withItems": [1]}, "jf-f", [], ("", ""), id="the-loops-own-summary"),
    pytest.param({}, "jf-f-1", [], ("", ""), id="not-a-loop"),
    pytest.param({"withItems": [1]}, "jf-pick", [], ("", ""), id="another-flow"),
])
def test_a_loop_vcjob_is_named_as_its_row(loop, key, jobs, expected):
    """view.loop_item: the name a report gives a loop item's vcjob, the live view's label of its row."""
    jf = jobflow([{"name": "pick"}, {"name": "f", **loop}], {"jf-f": {"phase": "Running", "items": 4}})
    assert view.loop_item(jf, key, snap(jf, *jobs)) == expected
    rows = {r.key: r.label.strip() for r in view.dag_rows(jf, snap(jf, *jobs)) if r.item}
    if expected[1] and len(expected[1]) <= view.ITEM_SHOWN:
        assert rows[key] == expected[1]


@pytest.mark.parametrize("flow, condition, state", [
    pytest.param({"name": "b", "dependsOn": {"targets": ["a"]}},
                 {"phase": "Pending", "reason": "WaitingForDependencies", "message": "waiting for jf-a"}, "waiting",
                 id="waiting"),
    pytest.param({"name": "b", "dependsOn": {"targets": ["a"], "probe": {"httpGetList": [
        {"taskName": "s", "port": 80}]}}}, {"phase": "Pending", "reason": "WaitingForProbe", "message": "m"}, "probe",
                 id="probe"),
    pytest.param({"name": "b"}, {"phase": "Pending", "reason": "Suspended", "message": "m"}, "suspended",
                 id="suspended"),
    pytest.param({"name": "b", "when": "false"}, {"phase": "Skipped", "reason": "WhenFalse", "message": "m"},
                 "Skipped", id="skipped"),
    pytest.param({"name": "b"}, {"phase": "Pending", "reason": "NotCreated", "message": "m"}, "not created",
                 id="not-created"),
])
def test_state_of_a_flow_without_a_vcjob(flow, condition, state):
    jf = jobflow([{"name": "a"}, flow], {"jf-b": condition})
    row = next(r for r in view.dag_rows(jf, snap(jf)) if r.label == "b")
    cells = viewdraw.row_cells(snap(jf), jf, row, NOW)
    assert (cells[0].plain, cells[3]) == (state, condition["message"])


def test_retries_and_outputs_in_the_detail():
    jf = jobflow([{"name": "a"}], {"jf-a": {"phase": "Completed", "retries": 2, "output": "0.93\n"}})
    row = view.dag_rows(jf, snap(jf, job("jf-a", "Completed")))[0]
    assert viewdraw.row_cells(snap(jf, job("jf-a", "Completed")), jf, row, NOW)[3] == "retry 2; output: 0.93"


@pytest.mark.parametrize("phase, condition, state, detail", [
    pytest.param("Failed", {"phase": "Failed", "reason": "RetryBackoff", "message": "attempt 1 failed; retry 1 of 2 "
                            "after a 10s back-off"}, "retrying", "attempt 1 failed; retry 1 of 2 after a 10s back-off",
                 id="back-off"),
    pytest.param("Failed", {"phase": "Failed", "reason": "Retrying", "retries": 1,
                            "message": "deleting attempt 1 to run it again"}, "retrying",
                 "retry 1; deleting attempt 1 to run it again", id="replacing"),
    pytest.param("Failed", {"phase": "Failed", "reason": "RetriesExhausted", "retries": 2,
                            "message": "attempt 3 failed; no retries left (limit 2)"}, "Failed",
                 "retry 2; attempt 3 failed; no retries left (limit 2)", id="exhausted"),
])
def test_a_retried_flow_shows_retrying_while_it_waits_and_why_it_stopped(phase, condition, state, detail):
    jf = jobflow([{"name": "a", "retry": {"limit": 2}}], {"jf-a": condition})
    s = snap(jf, job("jf-a", phase))
    cells = viewdraw.row_cells(s, jf, view.dag_rows(jf, s)[0], NOW)
    assert (cells[0].plain, cells[3]) == (state, detail)


def test_depends_text_puts_conditions_written_over_lines_on_one():
    """A `|` block's line breaks (and its last one) would break the flow's row of the table."""
    f = {"dependsOn": {"expression": "a.Completed &&\n  b.Failed\n"}, "when": "outputs.a ==\n  'go'\n",
         "repeat": {"until": "iteration  >= 2\n", "limit": 3}}
    assert view.depends_text(f) == "a.Completed && b.Failed; when outputs.a == 'go'; repeat until iteration  >= 2 (≤3)"


def test_depends_text():
    assert view.depends_text({"dependsOn": {"targets": ["a", "b"], "strategy": "any"}, "when": "params.x == 1",
                              "repeat": {"until": "outputs.t > 1", "limit": 3}}) == \
        "any of a, b; when params.x == 1; repeat until outputs.t > 1 (≤3)"


@pytest.mark.parametrize("f, depends", [
    pytest.param({"dependsOn": {"targets": ["split"]}, "withParam": "{{outputs.split}}"}, "split → each item",
                 id="withParam-its-target-named-once"),
    pytest.param({"withParam": "{{ outputs.split }}"}, "split → each item", id="withParam-an-implicit-dependency"),
    pytest.param({"dependsOn": {"targets": ["split"]}, "withParam": "{{outputs.split.shards}}"},
                 "split.shards → each item", id="withParam-a-list-inside-the-output"),
    pytest.param({"dependsOn": {"targets": ["a", "split"]}, "withParam": "{{outputs.split}}"},
                 "a; split → each item", id="withParam-and-another-target"),
    pytest.param({"dependsOn": {"targets": ["a", "split"], "strategy": "any"}, "withParam": "{{outputs.split}}"},
                 "any of a, split; split → each item", id="withParam-any-of-its-targets-kept-whole"),
    pytest.param({"withItems": [1, 2, 3, 4]}, "each of 4 items", id="withItems"),
    pytest.param({"dependsOn": {"targets": ["prep"]}, "withItems": ["x"]}, "prep; each of 1 item",
                 id="withItems-one-item-after-a-target"),
    pytest.param({"repeat": {"until": "outputs.t > 1", "limit": 3}}, "repeat until outputs.t > 1 (≤3)",
                 id="repeat"),
])
def test_depends_text_names_a_loop_in_a_few_words(f, depends):
    """`split; for each in {{outputs.split}}` took 3–4 lines of the 10-character column at 80 columns."""
    assert view.depends_text(f) == depends


@pytest.mark.parametrize("f, depends", [
    pytest.param({"dependsOn": {"targets": ["w"], "strategy": "any"}}, "any item of w", id="any-item-of-a-loop"),
    pytest.param({"dependsOn": {"targets": ["w"]}}, "w", id="every-item-of-a-loop"),
    pytest.param({"dependsOn": {"targets": ["a"], "strategy": "any"}}, "a", id="any-of-one-flow-is-that-flow"),
])
def test_depends_text_tells_any_item_of_a_loop_from_all(f, depends):
    """strategy any on a fan-out starts after its first item, all after every item: the two rows differed in nothing."""
    assert view.depends_text(f, loops={"w"}) == depends


def test_dag_rows_tell_any_item_of_a_loop_from_all():
    jf = jobflow([{"name": "w", "withItems": [0, 3]}, {"name": "first", "dependsOn": {"targets": ["w"],
                                                                                   "strategy": "any"}},
                  {"name": "all", "dependsOn": {"targets": ["w"]}}], {})
    rows = {r.label: r.depends for r in view.dag_rows(jf, snap(jf)) if not r.child}
    assert (rows["first"], rows["all"]) == ("any item of w", "w")


@pytest.mark.parametrize("handler, depends", [
    pytest.param({"name": "e"}, "on exit", id="plain"),
    pytest.param({"name": "e", "when": 'workflow.status == "Failed"'}, 'on exit; when workflow.status == "Failed"',
                 id="with-a-when"),
    pytest.param({"name": "e", "withParam": "{{workflow.failures}}"}, "on exit; each failure",
                 id="looping-over-the-failures"),
])
def test_the_exit_handlers_row_says_on_exit_apart_from_its_condition(handler, depends):
    """`when workflow.status == "Failed"on exit` ran the two together."""
    jf = jobflow([handler, {"name": "a"}], {}, on_exit="e")
    assert view.dag_rows(jf, snap(jf))[-1].depends == depends


def test_title_counts_the_failed_jobs():
    jf = jobflow([{"name": "a"}], {}, completedJobs=["jf-x"], failedJobs=["jf-a", "jf-b"], terminatedJobs=["jf-c"])
    console = Console(width=120, record=True)
    console.print(viewdraw.render(snap(jf), NOW))
    assert "1/4 jobs completed, 3 failed" in " ".join(console.export_text().split())


def test_title_says_suspended_and_what_starts_next():
    jf = jobflow([{"name": "a"}], {}, annotations={"flow.volcano.sh/suspend": "true"}, nextFlows=["b", "c"],
                 completedJobs=["jf-x"], skippedJobs=["jf-y"], pendingJobs=["jf-a"])
    console = Console(width=120, record=True)
    console.print(viewdraw.render(snap(jf), NOW))
    text = " ".join(console.export_text().split())    # the title wraps with the table's width
    assert "suspended" in text and "1/3 jobs completed, 1 skipped" in text and "next: b, c" in text


def _pod(phase, waiting=None, last_exit=None, restart_policy=None, last_reason=None, last_message=None):
    cs = {"name": "c", "state": {"waiting": waiting} if waiting else {"running": {}}}
    if last_exit is not None:
        cs["lastState"] = {"terminated": {"exitCode": last_exit}}
        if last_reason:
            cs["lastState"]["terminated"]["reason"] = last_reason
        if last_message:
            cs["lastState"]["terminated"]["message"] = last_message
    spec = {"restartPolicy": restart_policy} if restart_policy else {}
    return {"metadata": {"name": "j-main-0", "namespace": "default", "labels": {"volcano.sh/job-name": "j"}},
            "spec": spec, "status": {"phase": phase, "containerStatuses": [cs]}}


RESTARTS = " (it exited 0 and restartPolicy Always restarts it; a task that should end wants Never or OnFailure)"


@pytest.mark.parametrize("pod, expected", [
    pytest.param(_pod("Pending", {"reason": "CreateContainerConfigError", "message": 'configmap "x" not found'}),
                 'pod j-main-0: container c CreateContainerConfigError: configmap "x" not found', id="config-error"),
    pytest.param(_pod("Pending", {"reason": "ContainerCreating"}), "", id="starting-is-no-reason"),
    pytest.param(_pod("Pending", {"reason": "ContainerCreating", "message": "waiting for nvidia.com/gpu held by pod "
                                  "default/a, being stopped, to be released: requested 1, available 0"}),
                 "pod j-main-0: container c ContainerCreating: waiting for nvidia.com/gpu held by pod default/a, "
                 "being stopped, to be released: requested 1, available 0", id="starting-with-a-reason"),
    pytest.param(_pod("Running"), "", id="running"),
    pytest.param(_pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=0),
                 "pod j-main-0: container c CrashLoopBackOff: back-off 10s" + RESTARTS, id="exit-0-restarted"),
    pytest.param(_pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=1,
                      restart_policy="OnFailure"),
                 "pod j-main-0: container c CrashLoopBackOff: back-off 10s (last run: exit code 1)",
                 id="failure-restarted"),
    pytest.param(_pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=128,
                      restart_policy="OnFailure", last_reason="StartError",
                      last_message='exec: "paddle_k8s": executable file not found in $PATH'),
                 "pod j-main-0: container c CrashLoopBackOff: back-off 10s (last run: StartError, exit code 128: "
                 'exec: "paddle_k8s": executable file not found in $PATH)', id="missing-binary-restarted"),
    pytest.param(_pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=2,
                      restart_policy="OnFailure", last_reason="Error", last_message="usage:\n  bad flag\n\n"),
                 "pod j-main-0: container c CrashLoopBackOff: back-off 10s (last run: exit code 2: bad flag)",
                 id="message-last-line"),
    pytest.param(_pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=137,
                      restart_policy="OnFailure", last_reason="OOMKilled", last_message="x" * 300),
                 "pod j-main-0: container c CrashLoopBackOff: back-off 10s (last run: OOMKilled, exit code 137: "
                 + "x" * 200 + "…)", id="long-message-cut"),
    pytest.param(_pod("Succeeded", {"reason": "CrashLoopBackOff"}), "", id="finished-pod"),
])
def test_why_waiting_names_a_container_that_cannot_start(pod, expected):
    assert view.why_waiting(view.Snapshot([], [job("j")], [], [pod]), job("j")) == expected


def test_a_running_job_shows_its_restarting_container():
    pod = _pod("Running", {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, last_exit=0)
    phase, _, _, detail = viewdraw.job_cells(view.Snapshot([], [job("j")], [], [pod]), job("j"), [], NOW)
    assert phase.plain == "Running" and detail == "pod j-main-0: container c CrashLoopBackOff: back-off 10s" + RESTARTS


def _failed_pod(init_exit=None, main_exit=None, reason=None):
    status = {"phase": "Failed"}
    if init_exit is not None:
        status["initContainerStatuses"] = [{"name": "setup", "state": {"terminated": {"exitCode": init_exit}}}]
    if main_exit is not None:
        status["containerStatuses"] = [{"name": "main", "state": {"terminated": {"exitCode": main_exit,
                                                                                "reason": "Error"}}}]
    if reason:
        status["reason"] = reason
    return {"metadata": {"name": "j-main-0", "namespace": "default", "labels": {"volcano.sh/job-name": "j"}},
            "spec": {}, "status": status}


def _stopped_pod(restarts, exit_code=1):
    """A pod its job stopped (TerminateJob, AbortJob): not Failed itself; its container ran before."""
    last = {"terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}}
    return {"metadata": {"name": "j-main-0", "namespace": "default", "labels": {"volcano.sh/job-name": "j"}},
            "spec": {}, "status": {"phase": "Running", "containerStatuses": [
                {"name": "main", "state": {"running": {}}, "lastState": last, "restartCount": restarts}]}}


def _failed_job(retries=0, max_retry=None, state_reason=None):
    j = job("j", "Failed")
    j["status"]["retryCount"] = retries
    if max_retry is not None:
        j["spec"]["maxRetry"] = max_retry
    if state_reason:
        j["status"]["state"].update(reason=state_reason, message="why")
    return j


@pytest.mark.parametrize("the_job, pods, expected", [
    pytest.param(_failed_job(), [_failed_pod(main_exit=3)], "pod j-main-0: container main exited with code 3 (Error)",
                 id="container"),
    pytest.param(_failed_job(), [_failed_pod(init_exit=4)],
                 "pod j-main-0: init container setup exited with code 4 (Error)",
                 id="init-container"),
    pytest.param(_failed_job(retries=2, max_retry=2), [_failed_pod(main_exit=1)],
                 "pod j-main-0: container main exited with code 1 (Error) (after 2 retries, maxRetry 2)", id="retried"),
    pytest.param(_failed_job(retries=1), [_failed_pod(main_exit=1)],
                 "pod j-main-0: container main exited with code 1 (Error) (after 1 retry, maxRetry 3)",
                 id="default-max-retry"),
    pytest.param(_failed_job(), [_failed_pod(reason="Evicted")], "pod j-main-0: Evicted", id="pod-reason"),
    pytest.param(_failed_job(state_reason="PodGroupPending"), [], "PodGroupPending: why", id="job-state"),
    pytest.param(_failed_job(), [], "", id="nothing-known"),
    pytest.param(_failed_job(), [_stopped_pod(restarts=2)],
                 "pod j-main-0: container main exited with code 1 (Error), restarted "
                 "2 times", id="pod-stopped-by-the-jobs-action-after-its-container-failed"),
    pytest.param(_failed_job(), [_stopped_pod(restarts=0, exit_code=0)], "", id="pod-stopped-whose-container-did-well"),
])
def test_failure_reason(the_job, pods, expected):
    assert view.failure_reason(view.Snapshot([], [the_job], [], pods), the_job) == expected


def test_failed_init_containers():
    assert view.failed_init_containers(_failed_pod(init_exit=4, main_exit=None)) == ["setup"]
    assert view.failed_init_containers(_failed_pod(init_exit=0, main_exit=2)) == []


@pytest.mark.parametrize("cost, gap", [(0.0, 0.1), (0.005, 0.1), (0.02, 0.2), (0.5, 5.0)])
def test_a_costly_redraw_makes_the_live_view_redraw_less_often(cost, gap):
    assert view.redraw_gap(cost) == pytest.approx(gap)


# ---- big flows: summarised ---------------------------------------------------------------------------------
def fan(n, phases=(), conditions=None):
    """`start -> m0 … m<n-1> -> end`: start Completed, the i-th middle vcjob in phases[i] (none beyond), end
    waiting."""
    mids = [f"m{i}" for i in range(n)]
    flows = [{"name": "start"}, *({"name": m, "dependsOn": {"targets": ["start"]}} for m in mids),
             {"name": "end", "dependsOn": {"targets": mids}}]
    jf = jobflow(flows, conditions)
    return jf, snap(jf, flow_job("jf-start", "Completed"), *(flow_job(f"jf-m{i}", p) for i, p in enumerate(phases)))


def flow_job(name, phase):
    j = job(name, phase)
    j["metadata"]["labels"] = {"volcano.sh/createdByJobFlow": "default.jf"}
    return j


def summary(rows):
    """Each row as (label, state cell) — a summary row's state cell counts its flows' states."""
    return [(r.label, viewdraw.row_cells(s_, jf_, r, NOW)[0].plain) for jf_, s_, r in rows]


@pytest.mark.parametrize("n, phases, conditions, expected", [
    pytest.param(view.FAN_MIN - 1, ["Running"] * (view.FAN_MIN - 1), None,
                 [("start", "Completed"), *((f"m{i}", "Running") for i in range(view.FAN_MIN - 1)), ("end", "waiting")],
                 id="fewer-than-FAN_MIN-siblings-row-by-row"),
    pytest.param(view.FAN_MIN, [], None,
                 [("start", "Completed"), (f"m0 … m{view.FAN_MIN - 1} ({view.FAN_MIN} flows)",
                                           f"{view.FAN_MIN} waiting"), ("end", "waiting")],
                 id="FAN_MIN-siblings-one-row"),
    pytest.param(10_000, ["Completed"] * 9_000 + ["Failed"] * 3 + ["Running"] * 10 + ["Pending"] * 900, None,
                 [("start", "Completed"),
                  ("m0 … m9999 (10,000 flows)", "3 Failed, 10 Running, 900 Pending, 87 waiting, 9,000 Completed"),
                  ("  m9000", "Failed"), ("  m9001", "Failed"), ("  m9002", "Failed"),
                  *((f"  m{i}", "Running") for i in range(9003, 9008)), ("  … 5 more", "5 Running"),
                  ("end", "waiting")],
                 id="10000-counted-failed-and-running-listed-up-to-LISTED_ROWS"),
    pytest.param(30, ["Completed"] * 10, {**{f"jf-m{i}": {"phase": "Completed"} for i in range(10, 20)},
                                          **{f"jf-m{i}": {"phase": "Pending", "reason": "WaitingForDependencies"}
                                             for i in range(20, 29)},
                                          "jf-m29": {"phase": "Failed", "reason": "RetryBackoff", "message": "m"}},
                 [("start", "Completed"), ("m0 … m29 (30 flows)", "1 Failed, 9 waiting, 20 Completed"),
                  ("  m29", "Failed"), ("end", "waiting")],
                 id="compact-conditions-of-flows-without-a-vcjob"),
    pytest.param(30, ["Failed"] * 30, {"jf-m0": {"phase": "Failed", "reason": "RetryBackoff", "retries": 1}},
                 [("start", "Completed"), ("m0 … m29 (30 flows)", "29 Failed, 1 retrying"),
                  *((f"  m{i}", "Failed") for i in range(1, 9)), ("  … 22 more", "21 Failed, 1 retrying"),
                  ("end", "waiting")],
                 id="a-retrying-flow-counted-as-retrying"),
])
def test_a_fan_of_FAN_MIN_or_more_siblings_is_one_row_with_counts(n, phases, conditions, expected):
    jf, s = fan(n, phases, conditions)
    assert summary([(jf, s, r) for r in view.dag_rows(jf, s)]) == expected


@pytest.mark.parametrize("targets, text", [
    pytest.param([f"m{i}" for i in range(view.FAN_MIN)], ", ".join(f"m{i}" for i in range(view.FAN_MIN)),
                 id="FAN_MIN-named"),
    pytest.param([f"m{i}" for i in range(10_000)], "m0, m1, m2, … 9,997 more", id="more-counted"),
])
def test_a_dependency_on_many_flows_names_the_first(targets, text):
    assert view.depends_text({"dependsOn": {"targets": targets}}) == text


def chain(n, completed):
    flows = [{"name": f"c{i}", **({"dependsOn": {"targets": [f"c{i - 1}"]}} if i else {})} for i in range(n)]
    jf = jobflow(flows)
    return jf, snap(jf, *(flow_job(f"jf-c{i}", "Completed") for i in range(completed)),
                    flow_job(f"jf-c{completed}", "Running"))


@pytest.mark.parametrize("n, completed, expected_tail", [
    pytest.param(view.MAX_ROWS, 50, [("c99", "waiting")], id="MAX_ROWS-row-by-row"),
    pytest.param(view.MAX_ROWS + 1, 50,
                 [("c89", "waiting"), ("… 11 more flows", "11 waiting")], id="one-more-summarised"),
    pytest.param(10_000, 5_000, [("c89", "Completed"),
                                 ("… 9,910 more flows", "1 Running, 4,999 waiting, 4,910 Completed"),
                                 ("  c5000", "Running")], id="the-running-one-listed-under-the-rest"),
])
def test_the_flows_beyond_MAX_ROWS_rows_are_one_row(n, completed, expected_tail):
    jf, s = chain(n, completed)
    rows = view.dag_rows(jf, s)
    assert len(rows) <= view.MAX_ROWS
    assert summary([(jf, s, r) for r in rows])[-len(expected_tail):] == expected_tail


def test_a_summary_row_says_why_its_first_pending_vcjob_waits():
    jf, s = fan(30, ["Completed", "Pending", "Pending"])
    pg = {"metadata": {"name": "pg", "namespace": "default", "ownerReferences": [
        {"kind": "Job", "name": "jf-m2", "controller": True}]},
        "status": {"conditions": [{"type": "Unschedulable", "status": "True", "message": "0/1 nodes are available"}]}}
    s = view.Snapshot(s.jobflows, s.jobs, [pg], [])
    row = view.dag_rows(jf, s)[1]
    assert viewdraw.row_cells(s, jf, row, NOW)[3] == "m2: 0/1 nodes are available"


@pytest.mark.parametrize("n", [100, 1_000, 10_000])
def test_the_view_of_a_big_fan_is_as_long_as_a_small_ones(n):
    """A frame of a fan of any size: start, the fan's row, its listed flows and count, end (and the title, header)."""
    jf, s = fan(n, ["Completed"] * (n // 2) + ["Running"] * (n // 4))
    console = Console(width=200, record=True)
    console.print(viewdraw.render(s, NOW))
    lines = console.export_text().splitlines()
    assert len(lines) == 3 + 1 + 1 + view.LISTED_ROWS + 1 + 1, lines
    assert f"{n // 4:,} Running, {n - n // 2 - n // 4:,} waiting, {n // 2:,} Completed" in lines[4], lines


REFUSED = 'Error creating pods: [j-main-1: pods "j-main-1" is forbidden: exceeded quota: q, ...]'
GANG = {"metadata": {"name": "j-pg", "namespace": "default", "ownerReferences": [
    {"kind": "Job", "name": "j", "controller": True}]}, "status": {"phase": "Inqueue", "conditions": [
        {"type": "Unschedulable", "status": "True", "message": "Not enough valid pods of each task"}]}}


@pytest.mark.parametrize("replicas, failures, expected", [
    pytest.param(2, {("default", "j"): REFUSED}, "FailedCreate: " + REFUSED, id="a pod refused: the API's reason"),
    pytest.param(1, {("default", "j"): REFUSED}, "Not enough valid pods of each task",
                 id="every pod made since: the scheduler's reason"),
    pytest.param(2, {}, "Not enough valid pods of each task", id="no refusal"),
    pytest.param(2, {("default", "other"): REFUSED}, "Not enough valid pods of each task", id="another job's"),
])
def test_why_waiting_names_the_refusal_of_the_pods_a_job_lacks(replicas, failures, expected):
    j = job("j")
    j["spec"] = {"tasks": [{"name": "main", "replicas": replicas}]}
    snap = view.Snapshot([], [j], [GANG], [_pod("Pending")], create_failures=failures)
    assert view.why_waiting(snap, j) == expected


@pytest.mark.parametrize("phase, annotations, expected", [
    pytest.param("Running", {"flow.volcano.sh/suspend": "true"}, "Running (suspended)", id="suspended"),
    pytest.param("Pending", {"flow.volcano.sh/suspend": "TRUE"}, "Pending (suspended)", id="any-case"),
    pytest.param("Running", {"flow.volcano.sh/suspend": "yes"}, "Running", id="not-true-does-not-suspend"),
    pytest.param("Succeed", {"flow.volcano.sh/suspend": "true"}, "Succeed", id="finished"),
    pytest.param("Running", {}, "Running", id="not-suspended"),
])
def test_the_lines_of_a_watch_without_the_live_view_say_when_a_jobflow_is_suspended(phase, annotations, expected):
    jf = jobflow([{"name": "a"}], annotations=annotations)
    jf["status"]["state"]["phase"] = phase
    before = view.phases(snap(jobflow([{"name": "a"}])))
    assert view.phases(snap(jf)) == {"JobFlow default/jf": expected}
    after = view.phases(snap(jf))
    changed = [what for what, phase in after.items() if before.get(what) != phase]
    assert runlines.change_lines(changed, after, {}, {}) == ([] if expected == "Running" else
                                                             [f"JobFlow default/jf: {expected}"])


@pytest.mark.parametrize("retry_at, expected", [
    pytest.param("2026-01-01T00:01:25Z", "next attempt in 25s", id="in-25s"),
    pytest.param("2026-01-01T00:01:00Z", "next attempt now", id="due-now"),
    pytest.param(None, None, id="no-retry-at"),
])
def test_a_vcjob_waiting_for_its_retry_says_when_the_next_attempt_is_due(retry_at, expected):
    message = "attempt 1 failed; retry 1 of 2 after a 30s back-off"
    cond = {"phase": "Failed", "reason": "RetryBackoff", "message": message,
            **({"retryAt": retry_at} if retry_at else {})}
    jf = jobflow([{"name": "a"}], {"jf-a": cond})
    rows = view.dag_rows(jf, snap(jf, job("jf-a", "Failed")))
    detail = viewdraw.row_cells(snap(jf, job("jf-a", "Failed")), jf, rows[0], NOW)[3]
    assert detail.endswith(message + (f"; {expected}" if expected else ""))


def _unplaced(name, node=None, status="False", message="0/1 nodes are unavailable: 1 Insufficient cpu."):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"volcano.sh/job-name": "j"}},
            "spec": {"containers": [{"name": "c"}], **({"nodeName": node} if node else {})},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": status, "reason": "Unschedulable", "message": message}]}}


@pytest.mark.parametrize("pods, expected", [
    pytest.param([_unplaced("j-main-1"), _unplaced("j-main-0", node="n1", status="True", message="")],
                 "pod j-main-1: 0/1 nodes are unavailable: 1 Insufficient cpu.", id="the-pod-the-scheduler-left"),
    pytest.param([_unplaced("j-main-0", node="n1")], "", id="placed-since"),
    pytest.param([_unplaced("j-main-0", status="True")], "", id="no-refusal"),
])
def test_why_waiting_names_a_pod_beyond_its_gang_that_fits_nowhere(pods, expected):
    """A Running vcjob (its gang placed) with a pod the scheduler could not place: the pod's PodScheduled=False message
    (a run stopped on such a job used to say only `vcjob is Running`)."""
    assert view.why_waiting(view.Snapshot([], [job("j")], [], pods), job("j")) == expected


def _at(seconds: float) -> dt.datetime:
    return dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)


def _ended(phase, ltt=None, running=None):
    j = job("j", phase)
    j["status"]["state"]["lastTransitionTime"] = ltt
    if running is not None:
        j["status"]["runningDuration"] = running
    return j


# A vcjob created at 00:00:00.4 (stamped 00:00:00) that ends at 00:00:02.9 (its state stamped 00:00:02): the live
# figure counts whole seconds as the API's stamps do, so the finished one (runningDuration 2s) is never below it.
ELAPSED = [
    (job("j"), _at(0.4), "0s"),
    (job("j"), _at(1.0), "1s"),
    (job("j"), _at(2.9), "2s"),
    (_ended("Completed", "2026-01-01T00:00:02Z"), _at(3.1), "2s"),   # runningDuration not written yet
    (_ended("Completed", "2026-01-01T00:00:02Z", "2s"), _at(3.5), "2s"),
    (_ended("Failed", "2026-01-01T00:01:05Z", "1m5s"), _at(90), "1m05s"),
    (_ended("Completed", "2026-01-01T00:00:02Z", "1.5s"), _at(9), "1.5s"),  # (Volcano writes fractions)
    (job("j"), _at(59.99), "59s"),
]


@pytest.mark.parametrize("obj, now, want", [pytest.param(*row, id=f"{i}") for i, row in enumerate(ELAPSED)])
def test_elapsed_counts_whole_seconds_and_never_drops_when_the_job_finishes(obj, now, want):
    assert view.elapsed(obj, now) == want


def test_elapsed_of_a_job_as_it_runs_and_finishes_never_goes_down():
    seen = [float(view.elapsed(obj, now).removesuffix("s")) for obj, now, _ in ELAPSED[:5]]
    assert seen == sorted(seen)
