"""Why is it pending? Each reason the scheduler gives, in plain words where users look: a `vcctl run`
that can make no more progress exits 1 printing it, the JobFlow's per-job condition carries it, and
`vcctl job view` / `vcctl jobflow describe` show it on a server."""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from tests import vcctl_server
from tests.e2e.conftest import ROOT, VCCTL, Result

pytestmark = pytest.mark.e2e


def vcjob(name, tasks, min_available, queue="default", kind="Job", api="batch.volcano.sh/v1alpha1"):
    lines = [f"apiVersion: {api}", f"kind: {kind}", f"metadata: {{name: {name}}}", "spec:",
             f"  minAvailable: {min_available}", "  schedulerName: volcano", f"  queue: {queue}", "  tasks:"]
    for task, replicas, cpu, selector in tasks:
        lines += [f"    - name: {task}", f"      replicas: {replicas}", "      template:", "        spec:",
                  "          restartPolicy: Never"]
        if selector:
            lines.append(f"          nodeSelector: {selector}")
        lines += ["          containers:",
                  f'            - {{name: main, image: busybox, command: ["true"], resources: {{requests: {{cpu: "{cpu}"}}}}}}']
    return "\n".join(lines) + "\n"


def template(name, tasks, min_available, queue="default"):
    return vcjob(name, tasks, min_available, queue, kind="JobTemplate", api="flow.volcano.sh/v1alpha1")


def without_requests(manifest):
    return manifest.replace(', resources: {requests: {cpu: "1"}}', "")


FLOW = "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: flow}\nspec:\n  flows:\n    - name: step\n"
SMALL_QUEUE = ("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: small}\n"
               "spec: {weight: 1, capability: {cpu: \"1\"}}\n---\n")
GANG = [("worker", 4, "1200m", None), ("gpu", 1, "1", "{accelerator: gpu}")]

CASES = [
    pytest.param(SMALL_QUEUE + vcjob("wide", [("main", 1, "2", None)], 1, queue="small"), "2x(cpu=4,memory=8Gi)",
                 re.escape('vcjob default/wide: queue resource quota insufficient: insufficient cpu; '
                           'job needs cpu 2 but queue "small" '
                           "can get at most 1"), id="queue at capability"),
    pytest.param(vcjob("big", [("main", 1, "3", None)], 1), "2x(cpu=2,memory=4Gi)",
                 re.escape("vcjob default/big: 1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, "
                           "1 minAvailable; Pending: 1 Unschedulable. Origin reason is big-main-0: 0/2 nodes are "
                           "unavailable: 2 Insufficient cpu. pod needs cpu 3, but the largest node has 2"),
                 id="job bigger than any node"),
    pytest.param(vcjob("cm", [("main", 1, "1", None)], 1).replace(
        'command: ["true"]', 'command: ["true"], env: [{name: X, valueFrom: {configMapKeyRef: {name: nope, key: k}}}]'),
        "1x(cpu=2,memory=4Gi)",
        re.escape('vcjob default/cm: pod cm-main-0: container main CreateContainerConfigError: configmap "nope" '
                  "not found"), id="container cannot start"),
    pytest.param(vcjob("gang", GANG, 5), "3x(cpu=2,memory=4Gi)",
                 # which task fails first depends on the pods' creation order (uids break equal times)
                 r"vcjob default/gang: [45]/5 tasks in gang unschedulable: pod group is not ready, 5 Pending, "
                 r"5 minAvailable; Pending: (1 Schedulable, 4 Unschedulable|5 Unschedulable)\. Origin reason is "
                 r"gang-(gpu|worker)-\d: 0/3 nodes are unavailable: (1 Insufficient cpu, 2|3) node\(s\) didn't match "
                 r"Pod's node affinity/selector\.", id="gang fit errors"),
    # the pod count is checked, and said, whether or not the pod requests resources (a pending pod without
    # requests counts as ready in Volcano's IsReady, so its FitError says `pod group is ready`, as Volcano's Event)
    *(pytest.param(make(vcjob(name, [("main", 1, "1", None)], 1)),
                   "1x(cpu=2,memory=4Gi,pods=0)",
                   re.escape(f"vcjob default/{name}: 1/1 tasks in gang unschedulable: pod group is {ready}, "
                             f"1 Pending, 1 minAvailable; Pending: 1 Unschedulable. Origin reason is {name}-main-0: "
                             "0/1 nodes are unavailable: 1 Insufficient pods. pod needs pods 1, but the largest node "
                             "has 0"), id=f"node without pod slots, {name}")
      for name, make, ready in (("requests", str, "not ready"), ("no-requests", without_requests, "ready"))),
]


@pytest.mark.parametrize("manifest, nodes, reason", CASES)
def test_run_that_cannot_progress_says_why(vcctl, write, tmp_path, manifest, nodes, reason):
    r = vcctl("run", "--nodes", nodes, "--workdir", tmp_path / "work", write("job.yaml", manifest), timeout=90)
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r
    assert any(re.fullmatch(f"  {reason}", line) for line in r.err.splitlines()), r


def test_jobflow_condition_carries_the_reason(vcctl, write, tmp_path):
    path = write("flow.yaml", template("step", GANG, 5) + FLOW)
    r = vcctl("run", "-o", "json", "--nodes", "3x(cpu=2,memory=4Gi)", "--workdir", tmp_path / "work", path, timeout=90)
    assert r.code == 1, r
    jf = next(i for i in json.loads(r.out)["items"] if i["kind"] == "JobFlow")
    cond = jf["status"]["conditions"]["flow-step"]
    assert cond["phase"] == "Pending" and cond["reason"] == "NotEnoughResources", cond
    assert re.match(r"[45]/5 tasks in gang unschedulable: pod group is not ready", cond["message"]), cond
    assert f"JobFlow default/flow: flow step (vcjob flow-step): {cond['message']}" in r.err, r


def test_closed_queue_is_refused_at_submission(vcctl, write, tmp_path):
    """As Volcano's webhook: a vcjob (or JobTemplate) for a Closed queue is refused, nothing runs."""
    closed = SMALL_QUEUE.replace('spec: {weight: 1, capability: {cpu: "1"}}', "spec: {weight: 1}\nstatus: {state: Closed}")
    r = vcctl("run", "--workdir", tmp_path / "work", write("job.yaml", closed + vcjob("j", [("main", 1, "1", None)], 1,
                                                                                       queue="small")), timeout=60)
    assert r.code == 2, r
    assert "can only submit job to queue with state `Open`, queue `small` status is `Closed`" in r.err, r


# ---- a queue closed under a waiting job, on a server --------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        yield srv


def _client(server, *args: str, timeout=60) -> Result:
    return Result(subprocess.run([VCCTL, *args, "-k", str(server.kubeconfig)], cwd=ROOT, capture_output=True,
                                 text=True, timeout=timeout))


def _wait_for(server, args, text, timeout=60.0) -> Result:
    deadline = time.monotonic() + timeout
    while True:
        r = _client(server, *args)
        if text in r.out:
            return r
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {text!r}: {r!r}")
        time.sleep(0.2)


def test_closed_queue_on_a_server(server, write):
    from vclite.cli import client_common

    api = client_common.connect("", str(server.kubeconfig))
    api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "small"},
                "spec": {"weight": 1, "capability": {"cpu": "1"}}})
    path = write("flow.yaml", template("step", [("main", 1, "2", None)], 1, queue="small") + FLOW)
    for group in ("jobtemplate", "jobflow"):
        r = _client(server, group, "create", "-f", str(path))
        assert r.code == 0, r
    _wait_for(server, ["job", "view", "-N", "flow-step"],
              'queue resource quota insufficient: insufficient cpu; '
              'job needs cpu 2 but queue "small" can get at most 1')
    r = _client(server, "queue", "operate", "-n", "small", "-a", "close")
    assert r.code == 0, r
    # (Closing, not Closed: the waiting job's PodGroup is still in the queue, as on Volcano)
    _wait_for(server, ["job", "view", "-N", "flow-step"], 'queue "small" is Closing')
    r = _wait_for(server, ["jobflow", "describe", "-N", "flow", "-o", "json"], 'queue \\"small\\" is Closing')
    cond = json.loads(r.out)["status"]["conditions"]["flow-step"]
    assert cond["phase"] == "Pending" and cond["message"] == 'queue "small" is Closing', cond


def test_a_run_whose_pods_a_quota_refuses_says_so(vcctl, write, tmp_path):
    """The gang then lacks pods too; the reason to print is the API's refusal (FailedCreate). Nothing the run does
    can give the quota room back (the pod made waits for its gang): the run stops at once, not at its timeout."""
    quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: one}\nspec:\n  hard: {pods: \"1\"}\n---\n"
    path = write("job.yaml", quota + vcjob("two", [("t", 2, "100m", None)], 2))
    r = vcctl("run", "--timeout", "60", "--nodes", "1x(cpu=2,memory=4Gi)", "--workdir", tmp_path / "work", path,
              timeout=90)
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r
    assert ('  vcjob default/two: FailedCreate: Error creating pods: [two-t-1: pods "two-t-1" is forbidden: '
            'exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1]') in r.err.splitlines(), r
