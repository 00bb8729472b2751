"""vcctl's client commands on objects stored with a field of the wrong type (by an older version, or written
into the store by hand: the API serves stored objects as they are). Volcano's vcctl decodes each object into
its Go types and fails the command with the decoder's error; vclite's says the same in one line — never a
traceback — and a well-formed store still lists as before."""
from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import uuid

import pytest

from tests import jobs_yaml, vcctl_server
from vclite.runtime import runtime

BAD = [
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "heavyq"},
     "spec": {"weight": "heavy"}, "status": {"state": "Open"}},
    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
     "metadata": {"name": "oldjob", "namespace": "default", "creationTimestamp": "yesterday"},
     "spec": {"minAvailable": 1, "queue": "default", "tasks": [
         {"name": "t", "replicas": "two", "template": {"spec": {"containers": [
             {"name": "c", "image": "x", "command": ["true"]}]}}}]},
     "status": {"state": {"phase": "Pending"}}},
]
# one per namespace, so that each command meets one of them; `nobody` schedules them (nothing acts on the pods)
_TEMPLATE = {"spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x", "command": ["true"]}]}}
MISTYPED = [
    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "s", "namespace": "strstatus"},
     "spec": {"minAvailable": 1, "queue": "nosuchq", "tasks": [{"name": "t", "replicas": 1, "template": _TEMPLATE}]},
     "status": "weird"},
    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "t", "namespace": "maptasks"},
     "spec": {"minAvailable": 1, "queue": "nosuchq", "tasks": {"name": "t"}},
     "status": {"state": {"phase": "Pending"}}},
    {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f", "namespace": "badflow"},
     "spec": {"flows": [{"name": "a", "dependsOn": {"targets": "b"}}]}, "status": {"state": {"phase": "Succeed"}}},
    {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t", "namespace": "badtpl"},
     "spec": {"tasks": [{"name": "t", "replicas": "two", "template": _TEMPLATE}]}},
    {"apiVersion": "v1", "kind": "Pod", **_TEMPLATE,
     "metadata": {"name": "p", "namespace": "badpod", "labels": {"volcano.sh/job-name": "j"}},
     "status": {"phase": "Pending", "containerStatuses": {"name": "c"}}},
    {"apiVersion": "v1", "kind": "Pod", **_TEMPLATE, "metadata": {"name": "q", "namespace": "liststatus"},
     "status": ["Running"]},
    # a running flow whose vcjob is mistyped: what `jobflow get -w` lists and watches (the flow itself is sound)
    {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f", "namespace": "watchflow"},
     "spec": {"flows": [{"name": "a"}]}, "status": {"state": {"phase": "Running"}}},
    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
     "metadata": {"name": "f-a", "namespace": "watchflow", "labels": {"volcano.sh/createdByJobFlow": "watchflow.f"}},
     "spec": {"minAvailable": "one", "queue": "nosuchq",
              "tasks": [{"name": "t", "replicas": 1, "template": _TEMPLATE}]},
     "status": {"state": {"phase": "Running"}}},
    # a flow's finished vcjob whose status counts in words: left out of the components' view as a whole
    {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f", "namespace": "countflow"},
     "spec": {"flows": [{"name": "a"}]}, "status": {"state": {"phase": "Running"}}},
    {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
     "metadata": {"name": "f-a", "namespace": "countflow", "labels": {"volcano.sh/createdByJobFlow": "countflow.f"}},
     "spec": {"minAvailable": 1, "queue": "default", "tasks": [{"name": "t", "replicas": 1, "template": _TEMPLATE}]},
     "status": {"state": {"phase": "Completed"}, "taskStatusCount": {"t": {"phase": {"Succeeded": "one"}}}}},
]


def _store_as_is(data_dir, objects):
    """Write `objects` straight into the stopped server's SQLite store, past admission."""
    db = sqlite3.connect(str(data_dir / runtime.STORE_FILE))
    try:
        rv = int(db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])
        for obj in objects:
            rv += 1
            md = obj["metadata"]
            md.update(uid=str(uuid.uuid4()), resourceVersion=str(rv))
            md.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
            db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                       (obj["kind"], md.get("namespace", ""), md["name"], rv, json.dumps(obj)))
        db.execute("UPDATE meta SET value = ? WHERE key = 'rv'", (str(rv),))
        db.commit()
    finally:
        db.close()


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("malformed")
    with vcctl_server.running(data_dir) as srv:
        vcctl_server.stop_cleanly(srv)
    _store_as_is(data_dir, BAD + MISTYPED)
    with vcctl_server.running(data_dir) as srv:   # (every controller: none trips over the bad objects)
        yield srv.kubeconfig


def _vcctl(kubeconfig, *args, tool="vcctl"):
    """`vcctl ARGS` (or another of its commands: `vjobs`) against the server."""
    program = str(pathlib.Path(vcctl_server.VCCTL).with_name(tool))
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, KUBECONFIG=str(kubeconfig)))


@pytest.mark.parametrize("argv, said", [
    (["queue", "list"], "Failed to list queue: json: cannot unmarshal string into Go struct field Queue.spec.weight "
                        "of type int32 (heavyq: 'heavy')"),
    (["queue", "get", "-n", "heavyq"], "Failed to get queue: json: cannot unmarshal string into Go struct field "
                                       "Queue.spec.weight of type int32"),
    (["job", "list"], 'Failed to list job: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse '
                      "\"yesterday\" as a time (Job.metadata.creationTimestamp, default/oldjob: 'yesterday')"),
    (["job", "view", "-N", "oldjob"], 'Failed to view job: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00"'),
    (["job", "list", "-n", "strstatus"], "Failed to list job: json: cannot unmarshal string into Go struct field "
                                         "Job.status of type v1alpha1.JobStatus (strstatus/s: 'weird')"),
    (["job", "view", "-N", "s", "-n", "strstatus"], "Failed to view job: json: cannot unmarshal string into Go struct "
                                                    "field Job.status of type v1alpha1.JobStatus"),
    (["vjobs", "-N", "strstatus"], "Failed to: json: cannot unmarshal string into Go struct field Job.status"),
    (["job", "list", "-n", "maptasks"], "Failed to list job: json: cannot unmarshal object into Go struct field "
                                        "Job.spec.tasks of type []v1alpha1.TaskSpec"),
    (["jobflow", "describe", "-N", "f", "-n", "badflow"], "Failed to describe jobflow: json: cannot unmarshal string "
     "into Go struct field JobFlow.spec.flows.dependsOn.targets of type []string (badflow/f: 'b')"),
    (["jobflow", "list", "-n", "badflow"], "Failed to list jobflow: json: cannot unmarshal string into Go struct field "
                                           "JobFlow.spec.flows.dependsOn.targets"),
    (["jobtemplate", "describe", "-N", "t", "-n", "badtpl"], "Failed to describe jobtemplate: json: cannot unmarshal "
     "string into Go struct field JobTemplate.spec.tasks.replicas of type int32 (badtpl/t: 'two')"),
    (["pod", "list", "-n", "badpod"], "Failed to list pod: json: cannot unmarshal object into Go struct field "
                                      "Pod.status.containerStatuses of type []v1.ContainerStatus (badpod/p: "),
    (["jobflow", "get", "-N", "f", "-n", "watchflow", "-w"], "Failed to get jobflow: json: cannot unmarshal string "
     "into Go struct field Job.spec.minAvailable of type int32 (watchflow/f-a: 'one')"),
])
def test_a_mistyped_stored_field_fails_the_command_in_the_go_decoders_words(kubeconfig, argv, said):
    tool = argv[0] == "vjobs"
    p = _vcctl(kubeconfig, *argv[tool:], tool=argv[0] if tool else "vcctl")
    assert p.returncode == 255, (p.stdout, p.stderr)
    assert said in p.stdout, p.stdout
    assert "Traceback" not in p.stdout + p.stderr, p.stderr


def test_well_formed_objects_still_list(kubeconfig):
    p = _vcctl(kubeconfig, "queue", "get", "-n", "default")
    assert p.returncode == 0 and p.stdout.splitlines()[1].split()[:3] == ["default", "1", "Open"], p.stdout


RUNS = jobs_yaml.vcjob("fresh", ["true"])


def test_the_control_plane_runs_new_work_beside_objects_whose_status_is_not_an_object(kubeconfig):
    """A vcjob whose status is a string and a pod whose status is a list are left out of the controllers' and the
    scheduler's caches (a warning names them): the server started, and a new vcjob runs to Completed."""
    created = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "apply", "-f", "-"], input=RUNS,
                             capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr

    def phase():
        p = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", "vcjob", "fresh", "-o",
                            "jsonpath={.status.state.phase}"], capture_output=True, text=True, timeout=60)
        return p.stdout if p.stdout in ("Completed", "Failed") else None
    assert vcctl_server.wait_until(phase, "the new vcjob to finish") == "Completed"
    log = (kubeconfig.parent / "server.log").read_text()
    assert "Job strstatus/s has a status that is not an object" in log
    assert "Pod liststatus/q has a status that is not an object" in log


def _kubectl_json(kubeconfig, *args):
    p = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", *args, "-o", "json"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_a_vcjob_whose_status_counts_in_words_is_left_out_of_the_components_view(kubeconfig):
    """A typed informer cannot decode a vcjob whose taskStatusCount holds "one": Volcano's controllers do not see
    it. Nor do vclite's: the JobFlow controller does not copy it into the flow's status (which vcctl then could not
    read), the vcjob controller leaves its status as written, and a warning names it."""
    def flow_synced():
        status = _kubectl_json(kubeconfig, "jobflow", "f", "-n", "countflow").get("status") or {}
        return status if "f-a" in (status.get("conditions") or {}) else None
    status = vcctl_server.wait_until(flow_synced, "the JobFlow controller to look at flow a")
    assert "taskStatusCount" not in status["conditions"]["f-a"], status
    job = _kubectl_json(kubeconfig, "vcjob", "f-a", "-n", "countflow")
    assert job["status"] == {"state": {"phase": "Completed"}, "taskStatusCount": {"t": {"phase": {"Succeeded": "one"}}}}
    got = _vcctl(kubeconfig, "jobflow", "get", "-N", "f", "-n", "countflow")
    assert got.returncode == 0 and "Failed" not in got.stdout, (got.stdout, got.stderr)
    log = (kubeconfig.parent / "server.log").read_text()
    assert "Job countflow/f-a has a status.taskStatusCount.phase of the wrong type ('one', where Go's decoder " \
           "wants int32" in log, log[-2000:]
