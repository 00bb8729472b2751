"""Volcano's jobseq e2e cases that run programs or plugins (job_plugins.go's env, the framework jobs of mpi.go,
mpi_plugin.go, tensorflow.go, tensorflow_plugin.go, pytorch_plugin.go), jobseq/queue.go's Queue Commands,
jobp/admission.go's refusals and the stress suite, against a real `vcctl server` over HTTP, with real processes
— the harness of test_volcano_e2e_jobs_server.py (its own server for this module).

The framework jobs run upstream's shell, with what needs an image (sshd, mpiexec, the training) replaced by
printing what it would be given: the svc plugin's hosts files, the ssh plugin's keys and the plugins' env, as a
process sees them. Not here: ray_plugin.go, whose plugin sets the containers' command to `ray start …`, which
needs Ray installed. jobp/admission.go's refusals are tests/scenarios/test_volcano_e2e_jobseq.py's
JOB_VALIDATE_CHECKS, sent over HTTP: a 422 naming the field, and nothing stored. The stress objects are made,
then deleted, from ten threads sharing one client, as upstream's goroutines share its clientset.
"""
from __future__ import annotations

import copy
import threading

import pytest

from tests.e2e.test_volcano_e2e_jobs_server import api, jobs, pol, server, task, wait_for  # noqa: F401 (fixtures)
from tests.scenarios.test_volcano_e2e_jobseq import JOB_VALIDATE_CHECKS
from vclite.api import bus, kinds
from vclite.lib import errors

pytestmark = pytest.mark.e2e


# ---- jobp/admission.go over HTTP -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def validate_ns(api):
    """admission.go's namespace, with the queues the queue rows name: q1 (a parent) and its leaf q11."""
    ns = "e2e-validate"
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name, parent in (("q1", "root"), ("q11", "q1")):
        api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                    "spec": {"weight": 1, "parent": parent}})
    return ns


@pytest.mark.parametrize("job", JOB_VALIDATE_CHECKS)
def test_job_validate_check_refuses_over_http(api, validate_ns, job):
    """`job validate check: …` and `Invalid CPU/memory unit` as upstream's client sends them: the server answers
    422 Invalid naming the job's field, and stores nothing."""
    job = copy.deepcopy(job)
    job["metadata"]["namespace"] = validate_ns
    with pytest.raises(errors.Invalid) as info:
        api.create(job)
    assert 'Job.batch.volcano.sh "test-job" is invalid: ' in str(info.value) and "spec." in str(info.value)
    assert api.list(kinds.JOB, validate_ns) == []


# ---- stress/*.go: e2eutil.NumStress objects made, then deleted, from as many goroutines at once -----------------
NUM_STRESS = 10


def at_once(fn) -> None:
    """One thread per index, sharing one client (upstream's goroutines share its clientset)."""
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            fn(i)
        except BaseException as exc:   # (reported below, on the test's thread)
            failures.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(NUM_STRESS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_stress_should_create_multiple_jobs_successfully(jobs):
    """stress/job.go: ten one-pod jobs created at once; each one's pod runs."""
    at_once(lambda i: jobs.create(f"job-{i}", [task("task", 1, resources={"requests": {"cpu": "250m"}})]))
    at_once(lambda i: wait_for(lambda: jobs.pod_running(f"job-{i}-task-0"), f"job-{i}'s pod to run"))


def test_stress_pod_groups_and_queues_are_created_and_deleted_at_once(jobs):
    """stress/podgroup.go, stress/queue.go: ten PodGroups (no pods: Completed here, docs in
    tests/scenarios/test_volcano_e2e_stress.py) and ten Queues (Open) made at once, then deleted at once."""
    api, ns = jobs.api, jobs.ns

    def make(i: int) -> None:
        api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": f"pod-group-{i}", "namespace": ns}, "spec": {"minResources": {}}})
        api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                    "metadata": {"name": f"{ns}-queue-{i}"}, "spec": {"weight": 1}})
        wait_for(lambda: (api.get(kinds.PODGROUP, ns, f"pod-group-{i}").get("status") or {}).get("phase")
                 == "Completed", f"pod-group-{i} to be admitted")
        wait_for(lambda: (api.get(kinds.QUEUE, "", f"{ns}-queue-{i}").get("status") or {}).get("state") == "Open",
                 f"{ns}-queue-{i} to be Open")

    def delete(i: int) -> None:
        api.delete(kinds.PODGROUP, ns, f"pod-group-{i}")
        api.delete(kinds.QUEUE, "", f"{ns}-queue-{i}")

    at_once(make)
    at_once(delete)
    wait_for(lambda: not api.list(kinds.PODGROUP, ns) and not [
        q for q in api.list(kinds.QUEUE) if q["metadata"]["name"].startswith(f"{ns}-queue-")], "all of them to go")


# ---- the framework jobs: mpi.go, mpi_plugin.go, tensorflow.go, tensorflow_plugin.go, pytorch_plugin.go ----------
# Upstream's commands, with what needs an image (sshd, mpiexec, the training) replaced by printing what it would
# be given; a mount path such as /etc/volcano is `etc/volcano` under the pod's directory, the process's working
# directory (tests/e2e cannot write /etc). The hosts files end without a newline, as svc.GenerateHosts writes
# them: upstream's `tr "\n" ","` makes no trailing comma of it. The pods' DNS names in the hosts files and the
# plugins' variables reach a local process as 127.0.0.1 (executor/localnames.py), so that is what it prints.
_TF = ("PS_HOST=`cat etc/volcano/ps.host | sed 's/$/&:2222/g' | sed 's/^/\"/;s/$/\"/' | tr \"\\n\" \",\"`; "
       "WORKER_HOST=`cat etc/volcano/worker.host | sed 's/$/&:2222/g' | sed 's/^/\"/;s/$/\"/' | tr \"\\n\" \",\"`; "
       "export TF_CONFIG={\\\"cluster\\\":{\\\"ps\\\":[${PS_HOST}],\\\"worker\\\":[${WORKER_HOST}]},"
       "\\\"task\\\":{\\\"type\\\":\\\"%s\\\",\\\"index\\\":${VK_TASK_INDEX}},\\\"environment\\\":\\\"cloud\\\"}; "
       "echo ${TF_CONFIG}; %s")
TF_NAME = "tensorflow-dist-mnist"
TF_HOSTS = '"cluster":{"ps":["127.0.0.1:2222"],"worker":["127.0.0.1:2222","127.0.0.1:2222"]}'


def tf_tasks(ps_command: str, worker_command: str) -> list[dict]:
    port = [{"name": "tfjob-port", "containerPort": 2222}]
    ps, worker = task("ps", 1, ps_command), task("worker", 2, worker_command, restartPolicy="Never",
                                                  policies=[pol("TaskCompleted", "CompleteJob")])
    for t in (ps, worker):
        t["template"]["spec"]["containers"][0]["ports"] = port
    return [ps, worker]


MPI_WORKER = "sleep 300"
FRAMEWORK_JOBS = [
    pytest.param(
        "mpi", {"ssh": [], "env": [], "svc": []}, [pol("TaskCompleted", "CompleteJob")], None,
        [task("mpimaster", 1, "sleep 1; cat etc/volcano/mpiworker.host; echo; test -s root/.ssh/authorized_keys && "
              "echo keys; echo index=$VK_TASK_INDEX", restartPolicy="Never"), task("mpiworker", 2, MPI_WORKER)],
        "mpi-mpimaster-0", "127.0.0.1\n127.0.0.1\nkeys\nindex=0\n",
        ["Pending", "Running", "Completing", "Completed"],
        id="mpi.go MPI E2E Test will run and complete finally"),
    pytest.param(
        "mpi", {"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"]},
        [pol("TaskCompleted", "CompleteJob")], 1,
        [task("mpimaster", 1, "sleep 1; echo mpiexec --host ${MPI_HOST}", restartPolicy="Never"),
         task("mpiworker", 2, MPI_WORKER)],
        "mpi-mpimaster-0", "mpiexec --host 127.0.0.1,127.0.0.1\n",
        ["Pending", "Running", "Completing", "Completed"],
        id="mpi_plugin.go MPI Plugin E2E Test will run and complete finally"),
    pytest.param(
        TF_NAME, {"svc": [], "env": []}, [pol("PodEvicted", "RestartJob")], 3,
        tf_tasks(_TF % ("ps", "sleep 300"), _TF % ("worker", "sleep 1")),
        f"{TF_NAME}-worker-1", '{' + TF_HOSTS + ',"task":{"type":"worker","index":1},"environment":"cloud"}\n',
        ["Pending", "Running", "Completed"],
        id="tensorflow.go TensorFlow E2E Test goes through phases to complete"),
    pytest.param(
        TF_NAME, {"tensorflow": ["--ps=ps", "--worker=worker", "--port=2222"]}, [pol("PodEvicted", "RestartJob")], 3,
        tf_tasks("sleep 300", "sleep 1; echo $TF_CONFIG | tr -d ' '"),
        f"{TF_NAME}-worker-1", '{' + TF_HOSTS + ',"task":{"type":"worker","index":1}}\n',
        ["Pending", "Running", "Completed"], id="tensorflow_plugin.go TensorFlow Plugin E2E Test completes"),
    pytest.param(
        "pytorch-job", {"pytorch": ["--master=master", "--worker=worker", "--port=23456"]},
        [pol("TaskCompleted", "CompleteJob")], 1,
        [task("master", 1, "sleep 1; echo $MASTER_ADDR $MASTER_PORT $WORLD_SIZE $RANK", restartPolicy="Never"),
         task("worker", 2, "sleep 300")],
        "pytorch-job-master-0", "127.0.0.1 23456 3 0\n", ["Pending", "Running", "Completed"],
        id="pytorch_plugin.go Pytorch Plugin E2E Test will run and complete finally"),
]


@pytest.mark.parametrize("name, plugins, policies, min_available, tasks, deciding, log, phases", FRAMEWORK_JOBS)
def test_a_framework_job_runs_its_programs_and_completes(jobs, name, plugins, policies, min_available, tasks,
                                                         deciding, log, phases):
    """The job's phases in order (WaitJobPhases, WaitJobStates); the deciding pod's log shows what its program
    was given — the svc plugin's hosts files, the ssh plugin's keys, the env and framework plugins' variables —
    as a process, not only as the pod's spec."""
    jobs.create(name, tasks, plugins=plugins, policies=policies,
                **({"minAvailable": min_available} if min_available else {}))
    jobs.wait_phases(name, phases)
    resp = jobs.api.transport.request("GET", f"/api/v1/namespaces/{jobs.ns}/pods/{deciding}/log", accept="text/plain")
    assert resp.status == 200 and resp.body.decode() == log, resp.body


# ---- job_plugins.go: the plugins' env as the processes see it ---------------------------------------------------
PRINT_ENV = "for v in VK_TASK_INDEX VC_TASK_INDEX VC_TASK_HOSTS VC_TASK_NUM; do echo $v=${!v-unset}; done"


@pytest.mark.parametrize("name, plugins, hosts", [
    pytest.param("job-with-all-plugin", {"ssh": ["--no-root"], "env": [], "svc": []}, True,
                 id="Check Functionality of all plugins"),
    pytest.param("svc-without-hosts-env", {"svc": ["--inject-hosts-env=false"], "env": []}, False,
                 id="Test SVC Plugin with injectHostsEnv disabled"),
])
def test_the_plugins_env_reaches_init_and_app_containers(jobs, name, plugins, hosts):
    """Upstream reads the env names from the pod's spec, of containers and init containers; here an init
    container and the app container print them: the task's index from env, the hosts and their number from
    svc — or not, with `--inject-hosts-env=false`."""
    t = task("task", 2, f"bash -c '{PRINT_ENV}'; sleep 300")
    t["template"]["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox", "command": ["bash", "-c", PRINT_ENV]}]
    jobs.create(name, [t], plugins=plugins, minAvailable=1)
    wait_for(lambda: jobs.pod_running(f"{name}-task-1"), f"{name}-task-1 to run")
    task_hosts = "127.0.0.1,127.0.0.1"   # (the pods' DNS names, as a local process reaches them: localnames.py)
    want = ["VK_TASK_INDEX=1", "VC_TASK_INDEX=1", f"VC_TASK_HOSTS={task_hosts}" if hosts else "VC_TASK_HOSTS=unset",
            "VC_TASK_NUM=2" if hosts else "VC_TASK_NUM=unset"]
    for container in ("init", "c"):
        path = f"/api/v1/namespaces/{jobs.ns}/pods/{name}-task-1/log?container={container}"
        wait_for(lambda: len(jobs.api.transport.request("GET", path, accept="text/plain").body.splitlines()) >= 4,
                 f"the {container} container's lines")
        assert jobs.api.transport.request("GET", path, accept="text/plain").body.decode().splitlines() == want


# ---- jobseq/queue.go: Queue Commands over HTTP -------------------------------------------------------------------
@pytest.mark.parametrize("parents, steps", [
    pytest.param({"queue-command-close": "root"},
                 [("queue-command-close", "CloseQueue", "queue-command-close", "Closed"),
                  ("queue-command-close", "OpenQueue", "queue-command-close", "Open")],
                 id="Queue Command Close And Open With State Check"),
    pytest.param({"queue1": "root", "queue2": "root", "queue11": "queue1"},
                 [("queue1", "CloseQueue", "queue11", "Closed"),     # the child closes with its parent
                  ("queue11", "OpenQueue", "queue11", "Closed"),     # not while its parent is closed
                  ("queue1", "OpenQueue", "queue1", "Open")],
                 id="Queue Command Close And Open With Hierarchical Queues"),
])
def test_queue_commands_close_and_open(jobs, parents, steps):
    """util.CreateQueueCommand: a bus.volcano.sh Command in `default` targeting the queue, posted over HTTP;
    e2eutil.WaitQueueStatus for the state. The queues are the case's own (prefixed with its namespace) and
    deleted after it, children first (upstream's CleanupTestContext order)."""
    api, prefix = jobs.api, jobs.ns + "-"
    try:
        for name, parent in parents.items():
            api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                        "metadata": {"name": prefix + name},
                        "spec": {"weight": 1, "parent": parent if parent == "root" else prefix + parent}})
        for target, action, watched, state in steps:
            queue = api.get(kinds.QUEUE, "", prefix + target)
            command = bus.command_for(queue, kinds.QUEUE, action)
            command["metadata"]["namespace"] = "default"
            api.create(command)
            wait_for(lambda: (api.get(kinds.QUEUE, "", prefix + watched).get("status") or {}).get("state") == state,
                     f"{prefix + watched} to be {state} after {action} of {prefix + target}")
    finally:
        for name in sorted(parents, key=lambda n: parents[n] == "root"):
            api.delete(kinds.QUEUE, "", prefix + name)
