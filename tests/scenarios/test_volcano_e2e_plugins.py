"""Volcano's e2e job plugin cases (test/e2e/jobseq/job_plugins.go; the framework jobs of mpi.go, mpi_plugin.go,
tensorflow.go, tensorflow_plugin.go, pytorch_plugin.go, ray_plugin.go) on the embedded control plane on a virtual
clock, with the test kubelet of test_volcano_e2e_jobs.py.

Upstream's framework jobs run real programs (mpiexec over ssh, MNIST training, a Ray cluster) and wait for the
job's phases. Here the test kubelet plays the programs: what is checked is what the controller and the
scheduler do with the plugins — the objects they make (ConfigMap `<job>-svc`, Service `<job>`, Secret
`<job>-ssh`), what each pod is given (volumes, env, ports), where the pods go, and the phases once the
master's (or the workers') containers end with 0.

Not ported:
- `Test SVC Plugin with disableNetworkPolicy`: vclite has no NetworkPolicy kind, so no NetworkPolicy is ever
  made, with or without `--disable-network-policy` (pods.py says so); a check that none exists could not fail.
- What the programs themselves do (mpi_hello_world's output, the training's convergence, `ray start`): no
  images run here (vclite runs pods as local processes; tests/e2e covers real processes).
"""
from __future__ import annotations

import pytest

from tests.scenarios.test_volcano_e2e_jobs import Cluster, node, pol, succeed_pods, task, vcjob
from vclite.api import kinds, meta
from vclite.lib import errors


def pod(c: Cluster, name: str) -> dict:
    return c.client.get(kinds.POD, "default", name)


def env_names(container: dict) -> list[str]:
    return [e["name"] for e in container.get("env") or []]


def all_containers(p: dict) -> list[dict]:
    return list(p["spec"].get("containers") or []) + list(p["spec"].get("initContainers") or [])


def exists(c: Cluster, kind, name: str) -> bool:
    try:
        c.client.get(kind, "default", name)
    except errors.NotFound:
        return False
    return True


def job_pods(c: Cluster, job: str) -> list[dict]:
    return [p for p in c.client.list(kinds.POD, "default") if meta.labels(p).get("volcano.sh/job-name") == job]


def with_init_container(t: dict) -> dict:
    """Upstream checks the env of init containers too; give the task one so that check means something."""
    t["template"]["spec"]["initContainers"] = [{"name": "init", "image": "busybox", "command": ["true"]}]
    return t


# ---- job_plugins.go ----------------------------------------------------------------------------------------
def test_svc_plugin_with_node_affinity_mounts_its_configmap_and_the_pod_goes_to_the_chosen_node():
    """`Test SVC Plugin with Node Affinity`: a one-pod job pinned by matchFields metadata.name to a node
    (the second of two, so the scheduler's default choice would not pass by luck)."""
    c = Cluster([node("n1", "4"), node("n2", "4")])
    t = task("task", 1, 1)
    t["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}
    c.create(vcjob([t], name="job-with-svc-plugin", plugins={"svc": []}))
    c.start()
    assert c.phases("job-with-svc-plugin") == ["Pending", "Running"]
    assert exists(c, kinds.CONFIGMAP, "job-with-svc-plugin-svc")
    p = pod(c, "job-with-svc-plugin-task-0")
    assert "job-with-svc-plugin-svc" in [v["name"] for v in p["spec"]["volumes"]]
    assert [q["spec"]["nodeName"] for q in job_pods(c, "job-with-svc-plugin")] == ["n2"]


def test_ssh_plugin_with_pod_affinity_mounts_its_secret_and_keeps_the_pods_on_one_node():
    """`Test SSh Plugin with Pod Affinity`: as many half-cpu pods as one node holds one-cpu pods, each
    requiring (by hostname) a pod labelled foo=bar — themselves; `--no-root` is not a flag of the plugin
    (upstream logs the parse error and goes on with the defaults)."""
    c = Cluster([node("n1", "4"), node("n2", "4")])
    rep = 4
    t = task("task", rep, rep, cpu="500m")
    t["template"]["metadata"] = {"labels": {"foo": "bar"}}
    t["template"]["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"foo": "bar"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    c.create(vcjob([t], name="job-with-ssh-plugin", plugins={"ssh": ["--no-root"]}))
    c.start()
    assert c.phases("job-with-ssh-plugin") == ["Pending", "Running"]
    assert exists(c, kinds.SECRET, "job-with-ssh-plugin-ssh")
    p = pod(c, "job-with-ssh-plugin-task-0")
    assert "job-with-ssh-plugin-ssh" in [v["name"] for v in p["spec"]["volumes"]]
    assert {m["mountPath"] for m in p["spec"]["containers"][0]["volumeMounts"]} >= {"/root/.ssh"}
    placed = [q["spec"]["nodeName"] for q in job_pods(c, "job-with-ssh-plugin")]
    assert len(placed) == rep and len(set(placed)) == 1, placed


def test_svc_plugin_with_inject_hosts_env_disabled_makes_its_configmap_but_no_hosts_env():
    """`Test SVC Plugin with injectHostsEnv disabled`: no VC_TASK_HOSTS / VC_TASK_NUM in any container."""
    c = Cluster([node("n1", "4")])
    c.create(vcjob([with_init_container(task("task", 4, 1))], name="svc-without-hosts-env",
                   plugins={"svc": ["--inject-hosts-env=false"]}))
    c.start()
    assert c.phases("svc-without-hosts-env") == ["Pending", "Running"]
    assert exists(c, kinds.CONFIGMAP, "svc-without-hosts-env-svc")
    p = pod(c, "svc-without-hosts-env-task-0")
    assert len(all_containers(p)) == 2
    for container in all_containers(p):
        assert not {"VC_TASK_HOSTS", "VC_TASK_NUM"} & set(env_names(container)), container


def test_all_plugins_together_make_their_objects_and_env():
    """`Check Functionality of all plugins`: ssh, env and svc on one job: the Secret mounted, the env of both
    env and svc in every container and init container, and the headless Service named after the job."""
    c = Cluster([node("n1", "4")])
    c.create(vcjob([with_init_container(task("task", 4, 1))], name="job-with-all-plugin",
                   plugins={"ssh": ["--no-root"], "env": [], "svc": []}))
    c.start()
    assert c.phases("job-with-all-plugin") == ["Pending", "Running"]
    assert exists(c, kinds.SECRET, "job-with-all-plugin-ssh")
    p = pod(c, "job-with-all-plugin-task-0")
    assert "job-with-all-plugin-ssh" in [v["name"] for v in p["spec"]["volumes"]]
    for container in all_containers(p):
        assert {"VK_TASK_INDEX", "VC_TASK_INDEX", "VC_TASK_HOSTS", "VC_TASK_NUM"} <= set(env_names(container)), \
            container
    svc = c.client.get(kinds.SERVICE, "default", "job-with-all-plugin")
    assert svc["spec"]["clusterIP"] == "None"


# ---- the framework jobs ----------------------------------------------------------------------------------
def mpi_tasks() -> list[dict]:
    master, worker = task("mpimaster", 1, 1), task("mpiworker", 2, 2)
    master["template"]["spec"]["containers"][0]["workingDir"] = "/home"
    return [master, worker]


def tf_tasks(worker_policies: bool = True) -> list[dict]:
    ps, worker = task("ps", 1), task("worker", 2)
    for t in (ps, worker):
        t["template"]["spec"]["containers"][0]["ports"] = [{"name": "tfjob-port", "containerPort": 2222}]
    if worker_policies:
        worker["policies"] = [pol("TaskCompleted", "CompleteJob")]
    return [ps, worker]


def check_mpi_with_ssh_env_svc(c: Cluster) -> None:
    """mpi.go's master reads /etc/volcano/mpiworker.host and ssh-es into the workers."""
    cm = c.client.get(kinds.CONFIGMAP, "default", "mpi-svc")
    assert cm["data"]["mpiworker.host"] == "mpi-mpiworker-0.mpi\nmpi-mpiworker-1.mpi"
    assert exists(c, kinds.SECRET, "mpi-ssh")
    for p in job_pods(c, "mpi"):
        mounts = {m["mountPath"] for m in p["spec"]["containers"][0]["volumeMounts"]}
        assert {"/etc/volcano", "/root/.ssh"} <= mounts, p["metadata"]["name"]


def check_mpi_plugin(c: Cluster) -> None:
    """mpi_plugin.go's master runs `mpiexec --host ${MPI_HOST}`: the workers' addresses, port 22 opened."""
    master = pod(c, "mpi-mpimaster-0")["spec"]["containers"][0]
    assert {e["name"]: e.get("value") for e in master["env"]}["MPI_HOST"] == "mpi-mpiworker-0.mpi,mpi-mpiworker-1.mpi"
    for p in job_pods(c, "mpi"):
        assert {"name": "mpijob-port", "containerPort": 22} in p["spec"]["containers"][0]["ports"]


def check_tf_with_svc_env(c: Cluster) -> None:
    """tensorflow.go's command builds TF_CONFIG from /etc/volcano/{ps,worker}.host and VK_TASK_INDEX."""
    cm = c.client.get(kinds.CONFIGMAP, "default", "tensorflow-dist-mnist-svc")
    assert (cm["data"]["ps.host"], cm["data"]["worker.host"]) == (
        "tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist",
        "tensorflow-dist-mnist-worker-0.tensorflow-dist-mnist\ntensorflow-dist-mnist-worker-1.tensorflow-dist-mnist")
    env = {e["name"]: e.get("value") for e in pod(c, "tensorflow-dist-mnist-worker-1")["spec"]["containers"][0]["env"]}
    assert env["VK_TASK_INDEX"] == "1"


def check_tf_plugin(c: Cluster) -> None:
    env = {e["name"]: e.get("value") for e in pod(c, "tensorflow-dist-mnist-worker-1")["spec"]["containers"][0]["env"]}
    assert env["TF_CONFIG"].replace(" ", "") == (
        '{"cluster":{"ps":["tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist:2222"],'
        '"worker":["tensorflow-dist-mnist-worker-0.tensorflow-dist-mnist:2222",'
        '"tensorflow-dist-mnist-worker-1.tensorflow-dist-mnist:2222"]},"task":{"type":"worker","index":1}}')


def check_pytorch_plugin(c: Cluster) -> None:
    env = {e["name"]: e.get("value") for e in pod(c, "pytorch-job-worker-1")["spec"]["containers"][0]["env"]}
    assert {k: env[k] for k in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")} == {
        "MASTER_ADDR": "pytorch-job-master-0.pytorch-job", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "2"}


COMPLETE_ON_TASK = [pol("TaskCompleted", "CompleteJob")]
EVICT_RESTARTS = [pol("PodEvicted", "RestartJob")]


@pytest.mark.parametrize("job, check, ends, phases", [
    pytest.param(vcjob(mpi_tasks(), name="mpi", policies=COMPLETE_ON_TASK, plugins={"ssh": [], "env": [], "svc": []}),
                 check_mpi_with_ssh_env_svc, ["mpi-mpimaster-0"], ["Pending", "Running", "Completing", "Completed"],
                 id="mpi.go-MPI-E2E-Test-will-run-and-complete-finally"),
    pytest.param(vcjob(mpi_tasks(), name="mpi", minAvailable=1, policies=COMPLETE_ON_TASK,
                       plugins={"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"]}),
                 check_mpi_plugin, ["mpi-mpimaster-0"], ["Pending", "Running", "Completing", "Completed"],
                 id="mpi_plugin.go-MPI-Plugin-E2E-Test-will-run-and-complete-finally"),
    pytest.param(vcjob(tf_tasks(), name="tensorflow-dist-mnist", minAvailable=3, policies=EVICT_RESTARTS,
                       plugins={"svc": [], "env": []}),
                 check_tf_with_svc_env, ["tensorflow-dist-mnist-worker-0", "tensorflow-dist-mnist-worker-1"],
                 ["Pending", "Running", "Completed"],
                 id="tensorflow.go-TensorFlow-E2E-Test-goes-through-phases-to-complete"),
    pytest.param(vcjob(tf_tasks(), name="tensorflow-dist-mnist", minAvailable=3, policies=EVICT_RESTARTS,
                       plugins={"tensorflow": ["--ps=ps", "--worker=worker", "--port=2222"]}),
                 check_tf_plugin, ["tensorflow-dist-mnist-worker-0", "tensorflow-dist-mnist-worker-1"],
                 ["Pending", "Running", "Completed"],
                 id="tensorflow_plugin.go-TensorFlow-Plugin-E2E-Test-goes-through-phases-to-complete"),
    pytest.param(vcjob([task("master", 1, 1), task("worker", 2, 2)], name="pytorch-job", minAvailable=1,
                       policies=COMPLETE_ON_TASK,
                       plugins={"pytorch": ["--master=master", "--worker=worker", "--port=23456"]}),
                 check_pytorch_plugin, ["pytorch-job-master-0"], ["Pending", "Running", "Completed"],
                 id="pytorch_plugin.go-Pytorch-Plugin-E2E-Test-will-run-and-complete-finally"),
])
def test_a_framework_job_runs_and_completes_when_its_deciding_task_ends(job, check, ends, phases):
    """Upstream's WaitJobPhases (mpi) / WaitJobStates (tensorflow, pytorch): the phases in order. The deciding
    task is the one whose TaskCompleted policy completes the job: its pods end with 0, the others are killed."""
    name = job["metadata"]["name"]
    c = Cluster([node("n1", "4")])
    c.create(job)
    c.start()
    assert c.phases(name) == ["Pending", "Running"]
    check(c)
    succeed_pods(*ends)(c)
    c.rt.settle()
    c.kubelet()   # the other pods stop (graceful deletion)
    assert c.went_through(phases, name), c.history[name]
    assert c.phases(name)[-1] == "Completed"
    assert {meta.name(p) for p in job_pods(c, name)} == set(ends)


def test_a_ray_cluster_job_gets_its_service_and_runs():
    """`Ray Plugin E2E Test: Will Start in pending state and get running phase`: the svc plugin's Service
    `<job>` (what upstream waits for) and the ray plugin's `<job>-head-svc`; the head and worker containers
    are given `ray start` commands pointing at the head."""
    c = Cluster([node("n1", "4")])
    tasks = [task("head", 1, 1), task("worker", 1, 1)]
    for t in tasks:
        t["template"]["spec"]["containers"][0]["name"] = "ray"
    c.create(vcjob(tasks, name="ray-cluster-job", minAvailable=1, policies=EVICT_RESTARTS, plugins={
        "ray": ["--head=head", "--worker=worker", "--port=2345", "--headContainer=ray", "--workerContainer=ray"],
        "svc": []}))
    c.start()
    assert c.went_through(["Pending", "Running"], "ray-cluster-job")
    assert exists(c, kinds.SERVICE, "ray-cluster-job") and exists(c, kinds.SERVICE, "ray-cluster-job-head-svc")
    worker = pod(c, "ray-cluster-job-worker-0")["spec"]["containers"][0]
    assert worker["command"] == ["sh", "-c", "ray start --block --address=ray-cluster-job-head-0.ray-cluster-job:2345"]
