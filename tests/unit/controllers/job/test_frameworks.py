"""The distributed-framework job plugins (pytorch, tensorflow, mpi, ray, hcclrank) on the pods
build_pod makes, with cases from Volcano's plugin tests, and Go flag parsing."""
from __future__ import annotations

import json

import pytest

from vclite.controllers.job import frameworks, pods
from vclite.lib import goflags


def job(name, plugins, *tasks):
    """tasks: (name, replicas) or (name, replicas, template spec extras)."""
    out = []
    for t in tasks:
        tname, replicas, extra = (*t, {}) if len(t) == 2 else t
        out.append({"name": tname, "replicas": replicas, "template": {"spec": {
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}], **extra}}})
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "ns", "uid": "u1"},
            "spec": {"plugins": plugins, "tasks": out}}


def pod_of(j, task, index):
    t = next(t for t in j["spec"]["tasks"] if t["name"] == task)
    return pods.build_pod(j, t, index)


def env(p, container="containers"):
    return {e["name"]: e.get("value") for e in p["spec"][container][0].get("env") or []}


# ---- pytorch ---------------------------------------------------------------------------------------
PT = job("pt", {"pytorch": ["--master=master", "--worker=worker", "--port=5000"]}, ("master", 1), ("worker", 2))


@pytest.mark.parametrize("task, index, rank", [("master", 0, "0"), ("worker", 0, "1"), ("worker", 1, "2")])
def test_pytorch_env_and_port(task, index, rank):
    p = pod_of(PT, task, index)
    assert env(p) == {"MASTER_ADDR": "pt-master-0.pt", "MASTER_PORT": "5000", "WORLD_SIZE": "3", "RANK": rank}
    assert p["spec"]["containers"][0]["ports"] == [{"name": "pytorchjob-port", "containerPort": 5000}]


def test_pytorch_defaults_other_tasks_and_a_port_already_open():
    j = job("pt", {"pytorch": []}, ("master", 1, {"hostname": "boss", "subdomain": "net"}),
            ("worker", 1, {"containers": [{"name": "c", "command": ["true"], "ports": [{"containerPort": 23456}]}]}),
            ("logger", 1))
    w = pod_of(j, "worker", 0)
    assert env(w) == {"MASTER_ADDR": "boss.net", "MASTER_PORT": "23456", "WORLD_SIZE": "2", "RANK": "1"}
    assert w["spec"]["containers"][0]["ports"] == [{"containerPort": 23456}]
    assert "RANK" not in env(pod_of(j, "logger", 0))


def test_pytorch_without_its_master_task_changes_nothing():
    j = job("pt", {"pytorch": ["--master=chief"]}, ("master", 1), ("worker", 1))
    assert env(pod_of(j, "worker", 0)) == {}


def test_pytorch_wait_for_master_init_container_on_workers_only():
    j = job("pt", {"pytorch": ["--wait-master-enabled", "--wait-master-timeout=30"]}, ("master", 1), ("worker", 1))
    [init] = pod_of(j, "worker", 0)["spec"]["initContainers"]
    assert (init["name"], init["image"], init["command"][:2]) == ("wait-for-master", "busybox:1.36.1", ["sh", "-c"])
    assert "nc -z pt-master-0.pt 23456" in init["command"][2] and "TIMEOUT=30" in init["command"][2]
    assert "initContainers" not in pod_of(j, "master", 0)["spec"]


# ---- tensorflow ------------------------------------------------------------------------------------
TF = job("train-123", {"tensorflow": ["--port=5000", "--worker=worker", "--ps=ps"]},
         ("ps", 2), ("worker", 2), ("chief", 1))
CLUSTER = ('{"cluster":{"ps":["train-123-ps-0.train-123:5000","train-123-ps-1.train-123:5000"],'
           '"worker":["train-123-worker-0.train-123:5000","train-123-worker-1.train-123:5000"],'
           '"chief":["train-123-chief-0.train-123:5000"]},')


@pytest.mark.parametrize("task, index, task_json", [
    ("ps", 0, '"task":{"type":"ps","index":0}}'),
    ("worker", 1, '"task":{"type":"worker","index":1}}'),
    ("chief", 0, '"task":{"type":"chief","index":0}}'),
])
def test_tensorflow_config_is_volcanos_exact_json(task, index, task_json):
    assert env(pod_of(TF, task, index))["TF_CONFIG"] == CLUSTER + task_json


def test_tensorflow_flags_naming_one_task_twice_follow_volcanos_switch_orders():
    j = job("tf", {"tensorflow": ["--chief=worker"]}, ("worker", 1), ("ps", 1))
    config = json.loads(env(pod_of(j, "worker", 0))["TF_CONFIG"])
    assert config == {"cluster": {"ps": ["tf-ps-0.tf:2222"], "worker": ["tf-worker-0.tf:2222"]},
                      "task": {"type": "chief", "index": 0}}


def test_ray_ports_missing_are_decided_before_adding():
    j = job("r", {"ray": ["--dashboardPort=6379"]}, ("head", 1, {"containers": [{"name": "head", "command": ["x"]}]}))
    ports = pod_of(j, "head", 0)["spec"]["containers"][0]["ports"]
    assert [(p["name"], p["containerPort"]) for p in ports] == [("gcs", 6379), ("dashboard", 6379),
                                                                ("client-server", 10001)]


def test_tensorflow_other_task_names_and_single_pod_jobs():
    j = job("tf", {"tensorflow": []}, ("worker", 1), ("driver", 1))
    config = json.loads(env(pod_of(j, "driver", 0))["TF_CONFIG"])
    assert config == {"cluster": {"worker": ["tf-worker-0.tf:2222"]}, "task": {"type": "driver", "index": 0}}
    assert "TF_CONFIG" not in env(pod_of(job("one", {"tensorflow": []}, ("worker", 1)), "worker", 0))


# ---- mpi -------------------------------------------------------------------------------------------
MPI = job("test-mpi-valid-worker", {"mpi": ["--master=master", "--worker=worker", "--port=22"]},
          ("master", 1), ("worker", 2))


def test_mpi_master_gets_the_worker_hosts_every_pod_the_port():
    master, worker = pod_of(MPI, "master", 0), pod_of(MPI, "worker", 1)
    assert env(master)["MPI_HOST"] == ("test-mpi-valid-worker-worker-0.test-mpi-valid-worker,"
                                       "test-mpi-valid-worker-worker-1.test-mpi-valid-worker")
    assert "MPI_HOST" not in env(worker)
    for p in (master, worker):
        assert {"name": "mpijob-port", "containerPort": 22} in p["spec"]["containers"][0]["ports"]


def test_mpi_hosts_with_a_fixed_hostname_and_init_containers():
    j = job("m", {"mpi": []}, ("master", 1, {"initContainers": [{"name": "i", "command": ["true"]}]}),
            ("worker", 3, {"hostname": "w", "subdomain": "s"}))
    p = pod_of(j, "master", 0)
    assert env(p)["MPI_HOST"] == "w.s" and env(p, "initContainers")["MPI_HOST"] == "w.s"
    assert p["spec"]["initContainers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 22}]


# ---- ray -------------------------------------------------------------------------------------------
def test_ray_commands_ports_and_service():
    j = job("r", {"ray": []}, ("head", 1, {"containers": [{"name": "head", "command": ["x"]}]}),
            ("worker", 2, {"containers": [{"name": "worker", "command": ["x"]}, {"name": "side", "command": ["y"]}]}))
    head = pod_of(j, "head", 0)["spec"]["containers"][0]
    assert head["command"] == ["sh", "-c", "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 "
                                           "--dashboard-port=8265 --ray-client-server-port=10001"]
    assert [(p["name"], p["containerPort"]) for p in head["ports"]] == [
        ("gcs", 6379), ("dashboard", 8265), ("client-server", 10001)]
    worker = pod_of(j, "worker", 1)["spec"]["containers"]
    assert worker[0]["command"] == ["sh", "-c", "ray start --block --address=r-head-0.r:6379"]
    assert worker[1]["command"] == ["y"]
    svc = frameworks.ray_service(j, ["--port=7000"])
    assert svc["metadata"]["name"] == "r-head-svc" and svc["spec"]["ports"][0] == {
        "name": "gcs", "port": 7000, "targetPort": "gcs", "protocol": "TCP"}
    assert svc["spec"]["selector"]["volcano.sh/task-spec"] == "head"


def test_ray_without_a_head_task_cannot_make_pods():
    j = job("r", {"ray": []}, ("worker", 1))
    with pytest.raises(frameworks.PluginError, match="job r doesn't have head task head"):
        pod_of(j, "worker", 0)


# ---- hcclrank --------------------------------------------------------------------------------------
@pytest.mark.parametrize("plugins, task, index, want", [
    ({"hcclrank": []}, "master", 0, "0"),
    ({"hcclrank": []}, "worker", 1, "3"),          # 2 masters + index 1
    ({"hcclrank": []}, "other", 0, None),
    ({"pytorch": [], "hcclrank": []}, "worker", 1, "2"),   # the RANK pytorch set (worker i -> i + 1)
])
def test_hcclrank(plugins, task, index, want):
    j = job("h", plugins, ("master", 2), ("worker", 2), ("other", 1))
    assert pod_of(j, task, index)["metadata"]["annotations"].get("hccl/rankIndex") == want


# ---- Go flags ----------------------------------------------------------------------------------------
DEFAULTS = {"master": "master", "port": 22, "on": False}


@pytest.mark.parametrize("args, want, error", [
    (["--master=m", "-port", "30", "-on"], {"master": "m", "port": 30, "on": True}, ""),
    (["--on=false", "--port=0x10"], {"master": "master", "port": 16, "on": False}, ""),
    (["--master", "m", "stop", "--port=1"], {"master": "m", "port": 22, "on": False}, ""),
    (["--", "--port=1"], {"master": "master", "port": 22, "on": False}, ""),
    (["--master=m", "--nope=1", "--port=1"], {"master": "m", "port": 22, "on": False},
     "flag provided but not defined: -nope"),
    (["--port=abc", "--master=m"], DEFAULTS, "invalid value 'abc' for flag -port"),
    (["--on=maybe"], DEFAULTS, "invalid value 'maybe' for flag -on"),
    (["--port"], DEFAULTS, "flag needs an argument: -port"),
    (["---port=1"], DEFAULTS, "bad flag syntax: ---port=1"),
    (["--port=017", "--master=m"], {"master": "m", "port": 15, "on": False}, ""),      # Go: a leading 0 is octal
    (["--port=0b1_1", "--port=-0o7"], {"master": "master", "port": -7, "on": False}, ""),
    (["--port= 80"], DEFAULTS, "invalid value ' 80' for flag -port"),
    (["--port=1_0"], DEFAULTS, "invalid value '1_0' for flag -port"),
    (["--port=09"], DEFAULTS, "invalid value '09' for flag -port"),
])
def test_go_flags(args, want, error):
    values, err = goflags.parse(args, DEFAULTS)
    assert values == want and err.startswith(error) and bool(err) == bool(error)


# ---- ssh -------------------------------------------------------------------------------------------
def test_ssh_secret_holds_a_key_pair_and_the_hosts_config():
    import base64

    from vclite.controllers.job import ssh
    j = job("m", {"ssh": ["--ssh-port=2200"]}, ("master", 1), ("worker", 2, {"hostname": "w", "subdomain": "s"}))
    data = {k: base64.b64decode(v).decode() for k, v in ssh.secret(j, ["--ssh-port=2200"])["data"].items()}
    assert data["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert data["id_rsa.pub"] == data["authorized_keys"] and data["id_rsa.pub"].startswith("ssh-rsa ")
    assert data["config"] == ("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
                              "Host m-master-0\n  HostName m-master-0.m\n  Port 2200\n"
                              "Host w\n  HostName w.s\n  Port 2200\n")
    given = ssh.secret(j, ["--ssh-private-key=PRIV", "--ssh-public-key=PUB", "--ssh-port=99999"])["data"]
    assert base64.b64decode(given["id_rsa"]) == b"PRIV" and b"Port 22\n" in base64.b64decode(given["config"])


@pytest.mark.parametrize("args, path, mode", [([], "/root/.ssh", 0o600), (["--ssh-key-file-path=/home/u/.ssh"],
                                                                          "/home/u/.ssh", 0o644)])
def test_ssh_mount(args, path, mode):
    p = pod_of(job("m", {"ssh": args}, ("master", 1, {"initContainers": [{"name": "i", "command": ["true"]}]})),
               "master", 0)
    [vol] = p["spec"]["volumes"]
    assert vol["name"] == "m-ssh" and vol["secret"]["secretName"] == "m-ssh" and vol["secret"]["defaultMode"] == mode
    assert [i["path"] for i in vol["secret"]["items"]] == [".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/authorized_keys",
                                                            ".ssh/config"]
    for c in p["spec"]["containers"] + p["spec"]["initContainers"]:
        assert c["volumeMounts"] == [{"mountPath": path, "subPath": ".ssh", "name": "m-ssh"}]


# ---- ported from Volcano's plugin tests (pkg/controllers/job/plugins/distributed-framework/*/*_test.go) ----
# Upstream calls OnPodCreate on a bare pod (name, task-spec annotation, containers); so do these, against the
# same plugin functions build_pod calls.
def bare_pod(name, task=None, containers=None, init=None, labels=None, annotations=None):
    ann = dict(annotations or {})
    if task is not None:
        ann["volcano.sh/task-spec"] = task
    spec = {"containers": containers if containers is not None else [{"name": "main"}]}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": {"name": name, "annotations": ann, "labels": dict(labels or {})}, "spec": spec}


def bare_job(name, *tasks, plugins=None):
    """tasks: (name, replicas); templates empty, as upstream's."""
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"plugins": plugins or {}, "tasks": [
        {"name": n, "replicas": r, "template": {}} for n, r in tasks]}}


PT_ENV = [("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"), ("MASTER_PORT", "23456")]


# pytorch_test.go TestPytorchPodEnvAndPort, case by case: (job tasks, pod, first port wanted, env wanted)
@pytest.mark.parametrize("tasks, pod, port, envs", [
    pytest.param((("worker", 1),), bare_pod("test-pytorch-worker-0", containers=[{"name": "worker"}]),
                 None, None, id="test-pod-without-master"),
    pytest.param((("master", 1), ("worker", 1)), bare_pod("test-pytorch-master-0", "master", [{"name": "master"}]),
                 23456, PT_ENV + [("WORLD_SIZE", "2"), ("RANK", "0")], id="test-master-pod-without-port"),
    pytest.param((("master", 1), ("worker", 1)), bare_pod("test-pytorch-master-0", "master", [
        {"name": "master", "ports": [{"name": "pytorchjob-port", "containerPort": 23456}]}]),
        23456, PT_ENV + [("WORLD_SIZE", "2"), ("RANK", "0")], id="test-master-pod-with-port"),
    pytest.param((("master", 1), ("worker", 2), ("extra", 2)), bare_pod("test-pytorch-master-0", "master", [
        {"name": "master", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}]),
        123, PT_ENV + [("WORLD_SIZE", "3"), ("RANK", "0")], id="test-master-pod-env"),
    pytest.param((("master", 1), ("worker", 2), ("extra", 2)), bare_pod("test-pytorch-worker-0", "worker", [
        {"name": "worker", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}]),
        123, PT_ENV + [("WORLD_SIZE", "3"), ("RANK", "1")], id="test-worker-1-pod-env"),
    pytest.param((("master", 1), ("worker", 2), ("extra", 2)), bare_pod("test-pytorch-worker-1", "worker", [
        {"name": "worker", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}]),
        123, PT_ENV + [("WORLD_SIZE", "3"), ("RANK", "2")], id="test-worker-2-pod-env"),
])
def test_upstream_pytorch_pod_env_and_port(tasks, pod, port, envs):
    frameworks.pytorch(pod, bare_job("test-pytorch", *tasks), [])
    c = pod["spec"]["containers"][0]
    assert (c["ports"][0]["containerPort"] if port else c.get("ports")) == port
    assert ([(e["name"], e["value"]) for e in c["env"]] if envs else c.get("env")) == envs


WAIT = [("master", 1), ("worker", 2)]


# pytorch_test.go TestPytorchInitContainer: (args, tasks, pod, init containers wanted)
@pytest.mark.parametrize("args, tasks, pod, want", [
    pytest.param(["--wait-master-enabled=true"], WAIT, bare_pod("test-pytorch-worker-0", "worker"),
                 [("wait-for-master", "busybox:1.36.1", 300)], id="worker-wait-master-enabled"),
    pytest.param(["--wait-master-enabled=false"], WAIT, bare_pod("test-pytorch-worker-0", "worker"), None,
                 id="worker-wait-master-disabled"),
    pytest.param(["--wait-master-enabled=true"], WAIT, bare_pod("test-pytorch-master-0", "master"), None,
                 id="master-has-no-wait-for-master"),
    pytest.param(["--wait-master-enabled=true"], [("worker", 1)], bare_pod("test-pytorch-worker-0", "worker"), None,
                 id="no-master-task-no-init-container"),
    pytest.param(["--wait-master-enabled=true"], WAIT, bare_pod(
        "test-pytorch-worker-0", "worker", init=[{"name": "wait-for-master", "image": "busybox:1.36.1",
                                                  "command": ["sh", "-c", "echo 'already exists'"]}]),
        [("wait-for-master", "busybox:1.36.1", "echo 'already exists'")], id="existing-wait-for-master-kept"),
    pytest.param(["--wait-master-enabled=true", "--wait-master-image=alpine:latest", "--wait-master-timeout=600"],
                 WAIT, bare_pod("test-pytorch-worker-0", "worker"), [("wait-for-master", "alpine:latest", 600)],
                 id="custom-image-and-timeout"),
])
def test_upstream_pytorch_init_container(args, tasks, pod, want):
    frameworks.pytorch(pod, bare_job("test-pytorch", *tasks), args)
    got = pod["spec"].get("initContainers")
    if want is None:
        assert not got
        return
    [(name, image, script)] = want
    [init] = got
    assert (init["name"], init["image"], init["command"][:2]) == (name, image, ["sh", "-c"])
    if isinstance(script, int):   # upstream's generateWaitForMasterScript for the master's address
        assert init["command"][2] == frameworks._wait_for_master_script(
            "test-pytorch-master-0.test-pytorch", 23456, script)
    else:
        assert init["command"][2] == script


# tensorflow_test.go TestTensorflow (ps, worker, chief pods): covered by test_tensorflow_config_is_volcanos_exact_json.


# mpi_test.go TestMpi: a pod of no known task still opens the port (--port=5000, else 22)
@pytest.mark.parametrize("plugins, port", [pytest.param({}, 22, id="add-port"),
                                           pytest.param({"mpi": ["--port=5000"]}, 5000, id="add-5000-port")])
def test_upstream_mpi_port(plugins, port):
    j = bare_job("test-mpi-1", ("fakeMaster", 1), ("fakeWorker", 2), plugins=plugins)
    pod = bare_pod("test-mpi-fakeMaster-0", containers=[{"name": "master"}])
    frameworks.mpi(pod, j, plugins.get("mpi", []))
    assert pod["spec"]["containers"][0]["ports"][0]["containerPort"] == port


# mpi_test.go TestMpiWithEmptyWorker: (job, tasks, pod's task, MPI_HOST wanted: None = absent)
@pytest.mark.parametrize("name, tasks, task, host", [
    pytest.param("test-mpi-no-worker", [("master", 1)], "master", None, id="master-no-worker-task"),
    pytest.param("test-mpi-zero-worker", [("master", 1), ("worker", 0)], "master", "",
                 id="master-worker-zero-replicas"),
    pytest.param("test-mpi-valid-worker", [("master", 1), ("worker", 2)], "master",
                 "test-mpi-valid-worker-worker-0.test-mpi-valid-worker,"
                 "test-mpi-valid-worker-worker-1.test-mpi-valid-worker", id="master-valid-worker"),
    pytest.param("test-mpi-worker-pod", [("master", 1), ("worker", 1)], "worker", None, id="worker-has-no-mpi-host"),
])
def test_upstream_mpi_with_empty_worker(name, tasks, task, host):
    pod = bare_pod(f"{name}-{task}-0", task, [{"name": task}])
    frameworks.mpi(pod, bare_job(name, *tasks), [])
    assert env(pod).get("MPI_HOST") == host


# ray_test.go TestRayPlugin (OnPodCreate part; OnJobAdd/OnJobDelete's head Service and controlledResources:
# tests/scenarios/test_vcjob_lifecycle.py test_framework_plugins_mark_the_job_and_ray_owns_a_head_service)
@pytest.mark.parametrize("job_name, tasks, args, pod, command", [
    pytest.param("ray-cluster-test", [("test-head", 1)],
                 ["--port=1234", "--dashboardPort=3456", "--clientPort=4567", "--head=test-head"],
                 bare_pod("ray-cluster-test-head-0", "test-head", [{"name": "head"}]),
                 "ray start --head --block --dashboard-host=0.0.0.0 --port=1234 --dashboard-port=3456 "
                 "--ray-client-server-port=4567", id="only-head-task"),
    pytest.param("ray-cluster-worker", [("head", 1), ("worker", 2)], [],
                 bare_pod("ray-cluster-test-worker-0", "worker", [{"name": "worker"}]),
                 "ray start --block --address=ray-cluster-worker-head-0.ray-cluster-worker:6379", id="worker-task"),
])
def test_upstream_ray_pod(job_name, tasks, args, pod, command):
    frameworks.ray(pod, bare_job(job_name, *tasks), args)
    c = pod["spec"]["containers"][0]
    assert c["command"] == ["sh", "-c", command]
    if "--head" in command:
        assert {p["containerPort"] for p in c["ports"]} == {1234, 3456, 4567}
    assert len(frameworks.ray_service(bare_job(job_name, *tasks), args)["spec"]["ports"]) == 3


# hcclrank_test.go TestHcclrankPlugin_OnPodCreate, _WithCustomTaskNames, _WithHelpers, _EdgeCases and TestGetEnv*:
# (args, pod, tasks, rank wanted)
HC = {"volcano.sh/task-spec": "master"}


@pytest.mark.parametrize("args, pod, tasks, rank", [
    pytest.param([], bare_pod("test-pod", containers=[], annotations={"hccl/rankIndex": "1"}), [], "1",
                 id="already-annotated-kept"),
    pytest.param([], bare_pod("test-pod", containers=[{"name": "c", "env": [{"name": "RANK", "value": "5"}]}]), [],
                 "5", id="rank-env-used"),
    pytest.param([], bare_pod("test-pod", "master", [], labels={"volcano.sh/task-index": "2"}),
                 [("master", 3), ("worker", 2)], "2", id="master-rank"),
    pytest.param([], bare_pod("test-pod", "worker", [], labels={"volcano.sh/task-index": "1"}),
                 [("master", 2), ("worker", 3)], "3", id="worker-rank-after-masters"),
    pytest.param(["--master=custom-master", "--worker=custom-worker"],
                 bare_pod("test-pod", "custom-master", [], labels={"volcano.sh/task-index": "3"}),
                 [("custom-master", 5), ("custom-worker", 3)], "3", id="custom-master"),
    pytest.param(["--master", "custom-master", "--worker", "custom-worker"],
                 bare_pod("test-pod", "custom-worker", [], labels={"volcano.sh/task-index": "2"}),
                 [("custom-master", 4), ("custom-worker", 3)], "6", id="custom-worker"),
    pytest.param([], bare_pod("test-pod", "master", [], labels={"volcano.sh/task-index": "5"}),
                 [("master", 10), ("worker", 5)], "5", id="with-helpers"),
    pytest.param([], bare_pod("test-pod", "worker", [], labels={"volcano.sh/task-index": "0"}),
                 [("master", 0), ("worker", 2)], "0", id="zero-master-replicas"),
    pytest.param([], bare_pod("p", containers=[{"name": "a", "env": [{"name": "OTHER", "value": "v"}]},
                                               {"name": "b", "env": [{"name": "RANK", "value": "1"}]}]), [], "1",
                 id="rank-env-in-second-container"),
    pytest.param([], bare_pod("p", containers=[{"name": "a", "env": [{"name": "RANK", "value": "first"}]},
                                               {"name": "b", "env": [{"name": "RANK", "value": "second"}]}]), [],
                 "first", id="first-rank-env-wins"),
    pytest.param([], bare_pod("p", containers=[{"name": "a", "env": [{"name": "OTHER", "value": "v"}]}]), [], None,
                 id="no-rank-env-no-task-no-annotation"),
])
def test_upstream_hcclrank(args, pod, tasks, rank):
    frameworks.hcclrank(pod, bare_job("test-job", *tasks), args)
    assert pod["metadata"]["annotations"].get("hccl/rankIndex") == rank


# ssh_test.go TestSSHPlugin, TestInvalidSSHPortFallsBackToDefault: the flags as parsed (the user's keys verbatim,
# their `\n` escapes kept as written)
@pytest.mark.parametrize("args, path, private, public, port", [
    pytest.param([], "/root/.ssh", "", "", 22, id="no-params"),
    pytest.param(["--ssh-key-file-path=/a/b"], "/a/b", "", "", 22, id="key-file-path"),
    pytest.param(["--ssh-private-key=-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----\\n",
                  "--ssh-public-key=ssh-rsa AAAAB3 root@aiplatform"], "/root/.ssh",
                 "-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----\\n",
                 "ssh-rsa AAAAB3 root@aiplatform", 22, id="user-provided-keys"),
    pytest.param(["--ssh-port=2026"], "/root/.ssh", "", "", 2026, id="custom-port"),
    pytest.param(["--ssh-port=-10"], "/root/.ssh", "", "", 22, id="invalid-port-falls-back-to-22"),
])
def test_upstream_ssh_flags(args, path, private, public, port):
    from vclite.controllers.job import ssh
    f = ssh.flags(args)
    assert (f["ssh-key-file-path"], f["ssh-private-key"], f["ssh-public-key"], f["ssh-port"]) == (
        path, private, public, port)


def test_upstream_ssh_config_with_custom_port():
    """ssh_test.go TestGenerateSSHConfigWithCustomPort."""
    from vclite.controllers.job import ssh
    assert "Port 2026" in ssh.ssh_config(bare_job("", ("worker", 1)), 2026)


# helpers_test.go TestGetTaskIndexOfPod, through its one user (hcclrank on a master pod): the rank, or the error
@pytest.mark.parametrize("labels, rank", [
    pytest.param({"volcano.sh/task-index": "0"}, "0", id="valid-index"),
    pytest.param({}, None, id="missing-label-is-an-error"),
    pytest.param({"volcano.sh/task-index": "invalid"}, None, id="invalid-format-is-an-error"),
    pytest.param({"volcano.sh/task-index": "-1"}, "-1", id="negative-index-valid"),
])
def test_upstream_task_index_of_pod(labels, rank):
    pod = bare_pod("test-pod", "master", [], labels=labels)
    job = bare_job("test-job", ("master", 1))
    if rank is None:
        with pytest.raises(frameworks.PluginError, match="test-pod doesn't have a valid volcano.sh/task-index label"):
            frameworks.hcclrank(pod, job, [])
        assert "hccl/rankIndex" not in pod["metadata"]["annotations"]
    else:
        frameworks.hcclrank(pod, job, [])
        assert pod["metadata"]["annotations"]["hccl/rankIndex"] == rank
