"""JobFlow primitives through the whole embedded control plane on a virtual clock: the JobFlow,
JobTemplate and vcjob controllers and the scheduler, wired by the Runtime. The test plays the kubelet
through the API (bound pods go Running, then Succeeded or Failed with a termination message), so
outputs, retries (delete and re-create of a real vcjob), suspension, probes against a real local
HTTP server and a controller restart are exercised against the real parts."""
from __future__ import annotations

import http.server
import threading

import pytest

from tests import flowsim
from tests.scenarios.test_embedded_control_plane import NODE, finish_deletion
from vclite.api import flow, kinds, meta
from vclite.controllers.jobflow import controller as controller_mod
from vclite.controllers.jobflow import prober as prober_mod
from vclite.lib import clock
from vclite.runtime import runtime


def template(name: str, task: str = "main") -> dict:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": name},
            "spec": {"minAvailable": 1, "tasks": [{"name": task, "replicas": 1, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", "echo {{params.x}}"],
                                "resources": {"requests": {"cpu": "100m"}}}]}}}]}}


def start(flows: list[dict], templates: list[str], annotations: dict | None = None, **spec) -> runtime.Runtime:
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    rt.jobflow_controller.prober = prober_mod.Prober(rt.clock, inline=True)
    rt.start()
    for name in templates:
        rt.client.create(template(name))
    rt.client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                      "metadata": {"name": "p", "annotations": annotations or {}},
                      "spec": {"flows": flows, "arguments": {"parameters": [{"name": "x", "value": "1"}]}, **spec}})
    return rt


def kubelet(rt: runtime.Runtime, outcome) -> int:
    """Move every bound pod one step: Pending -> Running -> outcome(pod) = (phase, message)."""
    moved = 0
    for pod in rt.client.list(kinds.POD):
        if not pod["spec"].get("nodeName"):
            continue
        if meta.is_deleting(pod):
            moved += finish_deletion(rt, pod)
            continue
        phase = (pod.get("status") or {}).get("phase", "Pending")
        if phase == "Pending":
            pod["status"] = {"phase": "Running", "podIP": "127.0.0.1",
                             "containerStatuses": [{"name": "main", "state": {"running": {}}, "restartCount": 0}]}
        elif phase == "Running":
            end, message = outcome(pod)
            if end is None:
                continue
            term = {"exitCode": 0 if end == "Succeeded" else 1, "message": message}
            pod["status"] = {"phase": end, "podIP": "127.0.0.1",
                             "containerStatuses": [{"name": "main", "state": {"terminated": term}, "restartCount": 0}]}
        else:
            continue
        rt.client.update_status(pod)
        moved += 1
    return moved


def run(rt: runtime.Runtime, outcome=lambda pod: ("Succeeded", ""), limit: int = 300) -> list[str]:
    """Drive to the end; the vcjobs in creation order (names repeat when a vcjob is re-created)."""
    seen: dict[str, str] = {}
    order: list[str] = []
    for _ in range(limit):
        rt.settle(max_iterations=200)   # bounded: a probe being polled keeps a timer pending
        for job in rt.client.list(kinds.JOB):
            if seen.get(meta.name(job)) != meta.uid(job):
                seen[meta.name(job)] = meta.uid(job)
                order.append(meta.name(job))
        if not kubelet(rt, outcome):
            rt.settle(max_iterations=200)
            if not kubelet(rt, outcome):
                break
    return order


def status(rt: runtime.Runtime) -> dict:
    return rt.client.get(kinds.JOBFLOW, "default", "p").get("status") or {}


def by_job(results: dict):
    """An outcome function: (phase, message) by the pod's vcjob name (default: Succeeded, "")."""
    def outcome(pod):
        return results.get(meta.labels(pod).get("volcano.sh/job-name"), ("Succeeded", ""))
    return outcome


def test_outputs_choose_the_branch():
    rt = start([{"name": "check"},
                {"name": "yes", "dependsOn": {"targets": ["check"]}, "when": "outputs.check == 'go'"},
                {"name": "no", "dependsOn": {"targets": ["check"]}, "when": "outputs.check != 'go'"}],
               ["check", "yes", "no"])
    order = run(rt, by_job({"p-check": ("Succeeded", "go\n")}))
    st = status(rt)
    assert order == ["p-check", "p-yes"] and st["state"]["phase"] == "Succeed"
    assert st["conditions"]["p-check"]["output"] == "go\n"
    assert st["conditions"]["p-no"]["reason"] == "WhenFalse" and st["skippedJobs"] == ["p-no"]


def test_with_param_fans_out_over_an_output_and_substitutes_items():
    rt = start([{"name": "split"}, {"name": "work", "dependsOn": {"targets": ["split"]},
                                    "withParam": "{{outputs.split}}", "patch": {"jobSpec": {"tasks": [{
                                        "name": "main", "template": {"metadata": {"labels": {"shard": "{{item}}"}}}}]}}},
                {"name": "merge", "dependsOn": {"targets": ["work"]}}], ["split", "work", "merge"])
    order = run(rt, by_job({"p-split": ("Succeeded", '["a", "b"]')}))
    assert order == ["p-split", "p-work-0", "p-work-1", "p-merge"]
    shards = {meta.name(j): j["spec"]["tasks"][0]["template"]["metadata"]["labels"]["shard"]
              for j in rt.client.list(kinds.JOB) if meta.name(j).startswith("p-work-")}
    assert shards == {"p-work-0": "a", "p-work-1": "b"}
    assert status(rt)["state"]["phase"] == "Succeed"


def test_retry_deletes_the_failed_vcjob_and_creates_it_again_after_the_backoff():
    rt = start([{"name": "a", "retry": {"limit": 2, "backoff": {"duration": "30s"}}}, {"name": "b", "dependsOn":
                                                                                        {"targets": ["a"]}}], ["a", "b"])
    attempts = []

    def outcome(pod):
        if meta.labels(pod).get("volcano.sh/job-name") != "p-a":
            return "Succeeded", ""
        attempts.append(rt.clock.now())
        return ("Failed", "boom") if len(attempts) < 3 else ("Succeeded", "")
    order = run(rt, outcome)
    assert order == ["p-a", "p-a", "p-a", "p-b"], "the same name, three vcjobs (uids)"
    assert [round((b - a).total_seconds()) for a, b in zip(attempts, attempts[1:])] >= [30, 30]
    st = status(rt)
    assert st["conditions"]["p-a"]["retries"] == 2 and st["state"]["phase"] == "Succeed"
    hist = next(e for e in st["jobStatusList"] if e["name"] == "p-a")["runningHistories"]
    assert [h["state"] for h in hist].count("Failed") == 2, hist


def test_suspended_flow_starts_nothing_until_resumed():
    rt = start([{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], ["a", "b"],
               annotations={flow.SUSPEND_ANNOTATION: "true"})
    rt.settle()
    assert rt.client.list(kinds.JOB) == []
    assert status(rt)["conditions"]["p-a"]["reason"] == "Suspended"
    rt.client.patch(kinds.JOBFLOW, "default", "p", {"metadata": {"annotations": {flow.SUSPEND_ANNOTATION: None}}})
    order = run(rt)
    assert order == ["p-a", "p-b"] and status(rt)["state"]["phase"] == "Succeed"


@pytest.fixture
def http_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), type("H", (http.server.BaseHTTPRequestHandler,), {
        "do_GET": lambda self: (self.send_response(200 if self.path == "/ready" else 404), self.end_headers()),
        "log_message": lambda self, *a: None}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.mark.parametrize("path, created", [
    pytest.param("/ready", ["p-serve", "p-client"], id="answers-client-starts-while-server-runs"),
    pytest.param("/nope", ["p-serve"], id="never-answers-client-skipped-when-server-ends"),
])
def test_http_probe_against_a_real_server(http_server, path, created):
    probe = {"httpGetList": [{"taskName": "main", "port": http_server, "path": path}]}
    rt = start([{"name": "serve"}, {"name": "client", "dependsOn": {"targets": ["serve"], "probe": probe}}],
               ["serve", "client"])
    server_done = []

    def outcome(pod):
        if meta.labels(pod).get("volcano.sh/job-name") == "p-serve":
            # the server runs until the client finished (or, when it never starts, for a while)
            client = [j for j in rt.client.list(kinds.JOB) if meta.name(j) == "p-client"]
            done = client and meta.phase(client[0]) == "Completed"
            server_done.append(1)
            return ("Succeeded", "") if done or len(server_done) > 1 else (None, "")
        return "Succeeded", ""
    order = run(rt, outcome)
    assert order == created
    st = status(rt)
    assert st["state"]["phase"] == "Succeed"
    if len(created) == 1:
        assert st["conditions"]["p-client"]["phase"] == "Skipped"


def test_exit_handler_runs_after_a_failure_then_the_flow_fails():
    rt = start([{"name": "notify"}, {"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
               ["notify", "a", "b"], onExit="notify")
    order = run(rt, by_job({"p-a": ("Failed", "")}))
    assert order == ["p-a", "p-notify"] and status(rt)["state"]["phase"] == "Failed"


def test_a_restarted_controller_finishes_the_same_way():
    flows = [{"name": "a", "retry": {"limit": 1}}, {"name": "f", "dependsOn": {"targets": ["a"]}, "withItems": [1, 2]},
             {"name": "r", "dependsOn": {"targets": ["f"]}, "repeat": {"until": "iteration >= 1", "limit": 3}}]
    rt = start(flows, ["a", "f", "r"])
    fails = []

    def outcome(pod):
        if meta.labels(pod).get("volcano.sh/job-name") == "p-a" and not fails:
            fails.append(1)
            return "Failed", ""
        return "Succeeded", "ok"
    for _ in range(4):          # part of the way
        rt.settle()
        kubelet(rt, outcome)
    rt.settle()
    before = flowsim.normalized(status(rt))
    old = rt.jobflow_controller
    old.stop()
    new = controller_mod.JobFlowController(rt.client, rt.clock)
    rt.components[rt.components.index(old)] = new
    new.queue.on_add = old.queue.on_add
    rt.jobflow_controller = new
    new.start()
    rt.settle()
    assert flowsim.normalized(status(rt)) == before, "a restarted controller computes the same status"
    run(rt, outcome)
    st = status(rt)
    assert st["state"]["phase"] == "Succeed" and st["conditions"]["p-a"]["retries"] == 1
    assert sorted(st["completedJobs"]) == ["p-a", "p-f-0", "p-f-1", "p-r-0", "p-r-1"]


def start_with(flows: list[dict], commands: dict[str, str]) -> runtime.Runtime:
    """start(), with a JobTemplate per flow running `commands[flow]` (where its placeholders are)."""
    rt = start(flows, [])
    for name, command in commands.items():
        t = template(name)
        t["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", command]
        rt.client.create(t)
    return rt


def test_a_failure_found_building_a_moments_vcjobs_keeps_the_others_of_that_moment_from_being_created():
    """c completes: h (`strategy: any` over a, c: it handled a's failure) and k start together. h's JobTemplate
    reads a's output — a target that Failed: h is Skipped, a's failure is unhandled and stops the JobFlow. The
    docs: that failure wins over the starts of the same moment. k was created all the same (the controller
    created each vcjob as it built it)."""
    rt = start_with([{"name": "a"}, {"name": "s"}, {"name": "c", "dependsOn": {"targets": ["s"]}},
                     {"name": "h", "dependsOn": {"targets": ["a", "c"], "strategy": "any"}},
                     {"name": "k", "dependsOn": {"targets": ["c"]}}],
                    {"a": "true", "s": "true", "c": "true", "h": "echo {{outputs.a}}", "k": "true"})
    order = run(rt, by_job({"p-a": ("Failed", "")}))
    st = status(rt)
    assert sorted(order) == ["p-a", "p-c", "p-s"] and st["state"]["phase"] == "Failed"
    assert (st["conditions"]["p-h"]["reason"], st["conditions"]["p-k"]["reason"]) == ("DependencyNeverMet",
                                                                                     "NotCreated")


def test_a_vcjob_whose_awaited_output_is_settled_in_the_same_sync_is_decided_in_it():
    """f2's template reads f1's output (Skipped: f2 is Skipped), f4's reads f3's — f3 waits for f2. Building
    f2 and f4 together, f4 waits for f3; f3 is then Skipped in the same sync, so f4 can be decided — but it had
    been tried in that sync already: it stayed `Creating` until an unrelated vcjob event brought a status
    refresh (0.25 s later here; nothing at all if none came)."""
    rt = start_with([{"name": "f0"}, {"name": "f1", "dependsOn": {"expression": "f0.Failed"}},
                     {"name": "f2", "dependsOn": {"targets": ["f0"]}}, {"name": "f3", "dependsOn": {"targets": ["f2"]}},
                     {"name": "f4", "dependsOn": {"targets": ["f0"]}}],
                    {"f0": "true", "f1": "true", "f2": "echo {{outputs.f1}}", "f3": "true",
                     "f4": "echo {{outputs.f3}}"})
    rt.settle(max_iterations=200)
    kubelet(rt, lambda pod: ("Succeeded", ""))      # f0's pod runs
    rt.settle(max_iterations=200)
    kubelet(rt, lambda pod: ("Succeeded", ""))      # f0's pod succeeds
    seen = rt.clock.now()
    rt.settle(max_iterations=200)
    st = status(rt)
    assert st["state"]["phase"] == "Succeed" and rt.clock.now() == seen
    assert {k: st["conditions"][f"p-{k}"]["reason"] for k in ("f1", "f2", "f3", "f4")} == dict.fromkeys(
        ("f1", "f2", "f3", "f4"), "DependencyNeverMet")
