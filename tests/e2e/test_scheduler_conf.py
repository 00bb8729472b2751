"""`--scheduler-conf` of `vcctl run` and `vcctl server`: a bad file is named by file and line, exit 2,
nothing runs; a good one changes what the scheduler does."""
from __future__ import annotations

import json
import shutil

import pytest

from tests import extender_server, vcctl_server

BAD_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: nodeorderr
  - name: predicates
    arguments:
      predicate.NodeAffinityEnabled: true
"""
PAIR = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: pair}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
    - name: main
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: ["sh", "-c", "touch $VC_POD_DIR/../../ran-$VC_TASK_INDEX"]
              resources: {requests: {cpu: "1", memory: 1Gi}}
"""
BINPACK_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
"""
NODES = "2x(cpu=4,memory=8Gi)"


def test_run_with_a_bad_conf_names_file_and_line_and_runs_nothing(vcctl, write, tmp_path):
    conf = write("sched.conf", BAD_CONF)
    work = tmp_path / "work"
    r = vcctl("run", "--scheduler-conf", conf, "--workdir", work, write("pair.yaml", PAIR), timeout=60)
    assert r.code == 2, r
    assert f'{conf}:7: unknown plugin "nodeorderr" (known: binpack, capacity, ' in r.err, r
    assert ", nodeorder, " in r.err.split('"nodeorderr"')[1].splitlines()[0], r   # the known names, sorted
    assert f'{conf}:10: plugin "predicates": unknown argument "predicate.NodeAffinityEnabled"' in r.err, r
    assert "2 problem(s) found; nothing was run." in r.err, r
    assert not list(tmp_path.rglob("ran-*")), "a pod ran"


def test_run_reports_conf_and_manifest_problems_together(vcctl, write, tmp_path):
    conf = write("sched.conf", BAD_CONF)
    bad_job = write("job.yaml", PAIR.replace("replicas: 2", "replicas: -1"))
    r = vcctl("run", "--scheduler-conf", conf, "--workdir", tmp_path / "work", bad_job, timeout=60)
    assert r.code == 2, r
    assert f"{conf}:7:" in r.err and f"{bad_job}:" in r.err and "replicas" in r.err, r


def test_server_with_a_bad_conf_exits_2_before_starting(vcctl, write, tmp_path):
    conf = write("sched.conf", BAD_CONF)
    data = tmp_path / "data"
    r = vcctl("server", "--data-dir", data, "--port", "0", "--scheduler-conf", conf, timeout=60)
    assert r.code == 2, r
    assert f'{conf}:7: unknown plugin "nodeorderr"' in r.err, r
    assert "the server was not started" in r.err, r
    assert "listening" not in r.out, r
    assert not data.exists(), "the data directory was created"


@pytest.mark.parametrize("args, text, says", [
    pytest.param(["--scheduler-conf", "-"], BAD_CONF, '<stdin>:7: unknown plugin "nodeorderr"', id="conf"),
    pytest.param(["--nodes", "-"], "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: x}}\n",
                 "error: --nodes <stdin>:4: Node/n1: status.capacity.cpu: invalid quantity", id="nodes"),
    pytest.param(["--nodes", "-", "--scheduler-conf", "-"], "", "error: standard input (-) can be read only once, but "
                 "--nodes and --scheduler-conf both ask for it", id="both"),
])
def test_server_reads_standard_input_for_one_option(vcctl, tmp_path, args, text, says):
    data = tmp_path / "data"
    r = vcctl("server", "--data-dir", data, "--port", "0", *args, timeout=60, input=text)
    assert r.code == 2 and says in r.err and "listening" not in r.out, r
    assert not data.exists(), "the data directory was created"


def _nodes_of_pods(out: str) -> list[str]:
    items = json.loads(out)["items"]
    return sorted(p["spec"]["nodeName"] for p in items if p["kind"] == "Pod")


def test_a_good_conf_is_used(vcctl, write, tmp_path):
    """Volcano's default spreads the pair over both nodes (least requested); with binpack both
    pods go to one node."""
    job = write("pair.yaml", PAIR)
    spread = vcctl("run", "-q", "-o", "json", "--nodes", NODES, "--workdir", tmp_path / "a", job, timeout=90)
    assert spread.code == 0, spread
    assert len(set(_nodes_of_pods(spread.out))) == 2, spread
    conf = write("binpack.conf", BINPACK_CONF)
    packed = vcctl("run", "-q", "-o", "json", "--nodes", NODES, "--scheduler-conf", conf, "--workdir", tmp_path / "b",
                   job, timeout=90)
    assert packed.code == 0, packed
    assert len(set(_nodes_of_pods(packed.out))) == 1, packed


PLUGINS_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
  - name: task-topology
    arguments: {task-topology.weight: 10}
- plugins:
  - name: predicates
  - name: proportion
  - name: nodegroup
    arguments: {strict: false}
  - name: binpack
"""


def test_the_added_plugins_work_through_vcctl_run(vcctl, write, tmp_path):
    """With binpack the pair would share a node; task-topology's anti-affinity (from the vcjob's annotation, which
    its PodGroup carries) spreads it; nodegroup (not strict) lets a queue without affinity use unlabelled nodes."""
    job = PAIR.replace("metadata: {name: pair}",
                       'metadata: {name: pair, annotations: {volcano.sh/task-topology-anti-affinity: "main"}}')
    conf = write("plugins.conf", PLUGINS_CONF)
    r = vcctl("run", "-q", "-o", "json", "--nodes", NODES, "--scheduler-conf", conf, "--workdir", tmp_path / "w",
              write("pair.yaml", job), timeout=90)
    assert r.code == 0, r
    assert len(set(_nodes_of_pods(r.out))) == 2, r


EXTENDER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: extender
    arguments:
      extender.urlPrefix: {url}
      extender.httpTimeout: 5s
      extender.predicateVerb: filter
      extender.onSessionOpenVerb: open
"""


def test_an_extender_that_refuses_a_node_keeps_the_pods_off_it(vcctl, write, tmp_path):
    """Without it the pair spreads over both nodes (test_a_good_conf_is_used); the extender refuses local-0."""
    def refuse(body):
        if body["node"]["Name"] == "local-0":
            return {"status": "local-0 is drained by the extender", "code": 3}
        return {"status": "", "code": 0}
    with extender_server.running({"filter": refuse, "open": lambda body: {}}) as ext:
        conf = write("extender.conf", EXTENDER_CONF.format(url=ext.url))
        r = vcctl("run", "-q", "-o", "json", "--nodes", NODES, "--scheduler-conf", conf, "--workdir", tmp_path / "w",
                  write("pair.yaml", PAIR), timeout=90)
    assert r.code == 0, r
    assert _nodes_of_pods(r.out) == ["local-1", "local-1"], r
    asked = {body["node"]["Name"] for body in ext.bodies("filter")}
    assert asked == {"local-0", "local-1"} and "open" in ext.verbs(), ext.verbs()


def test_bad_extender_arguments_are_named_by_file_and_line(vcctl, write, tmp_path):
    conf = write("extender.conf", EXTENDER_CONF.format(url="localhost:8713").replace("5s", "5"))
    r = vcctl("run", "--scheduler-conf", conf, "--workdir", tmp_path / "w", write("pair.yaml", PAIR), timeout=60)
    assert r.code == 2, r
    assert f"{conf}:11: plugin \"extender\": argument 'extender.urlPrefix': 'localhost:8713' must start with " \
           "http:// or https://" in r.err, r
    assert f"{conf}:12: plugin \"extender\": argument 'extender.httpTimeout': expected a Go duration string" in r.err, r
    assert not list(tmp_path.rglob("ran-*")), "a pod ran"


def test_pods_refused_by_the_extender_are_placed_once_it_accepts(vcctl, write, tmp_path):
    """The extender refuses every node for its first 6 answers, then accepts: nothing else changes in the cluster,
    so only the plugin's request for another session (Volcano's periodic session) lets the pair run."""
    answers = []

    def refuse_at_first(body):
        answers.append(body["node"]["Name"])
        if len(answers) <= 6:
            return {"status": "not yet", "code": 2}
        return {"status": "", "code": 0}
    with extender_server.running({"filter": refuse_at_first, "open": lambda body: {}}) as ext:
        conf = write("extender.conf", EXTENDER_CONF.format(url=ext.url))
        r = vcctl("run", "-q", "-o", "json", "--nodes", NODES, "--scheduler-conf", conf, "--workdir", tmp_path / "w",
                  write("pair.yaml", PAIR), timeout=90)
    assert r.code == 0, r
    assert len(_nodes_of_pods(r.out)) == 2 and len(answers) > 6, (answers, r)


def _scheduler_configmap(conf: str) -> str:
    """Volcano's scheduler ConfigMap (as its user guides apply it) carrying `conf`."""
    body = "".join(f"    {line}\n" for line in conf.splitlines())
    return ("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: volcano-scheduler-configmap\n"
            f"  namespace: volcano-system\ndata:\n  volcano-scheduler.conf: |\n{body}---\n")


def test_run_uses_the_scheduler_configmap_among_its_files(vcctl, write, tmp_path):
    """Volcano's default spreads the pair (test_a_good_conf_is_used); the ConfigMap's binpack packs it."""
    manifest = write("packed.yaml", _scheduler_configmap(BINPACK_CONF) + PAIR)
    r = vcctl("run", "-o", "json", "--nodes", NODES, "--workdir", tmp_path / "w", manifest, timeout=90)
    assert r.code == 0, r
    assert len(set(_nodes_of_pods(r.out))) == 1, r
    assert (f"note: {manifest}:1: ConfigMap volcano-system/volcano-scheduler-configmap: the scheduler runs with its "
            "volcano-scheduler.conf") in r.err, r


def test_scheduler_conf_option_wins_over_the_configmap(vcctl, write, tmp_path):
    manifest = write("packed.yaml", _scheduler_configmap(BINPACK_CONF) + PAIR)
    conf = write("spread.conf", BINPACK_CONF.replace("  - name: binpack\n    arguments:\n      binpack.weight: 10\n",
                                                     ""))
    r = vcctl("run", "-o", "json", "--nodes", NODES, "--scheduler-conf", conf, "--workdir", tmp_path / "w", manifest,
              timeout=90)
    assert r.code == 0, r
    assert len(set(_nodes_of_pods(r.out))) == 2, r
    assert f"its volcano-scheduler.conf is not used: --scheduler-conf {conf} configures the scheduler" in r.err, r


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_bad_configmap_conf_is_named_by_the_manifests_line_and_nothing_runs(vcctl, write, tmp_path, command):
    manifest = write("bad.yaml", _scheduler_configmap(BAD_CONF) + PAIR)
    extra = ["--workdir", tmp_path / "w"] if command == "run" else []
    r = vcctl(command, *extra, manifest, timeout=60)
    assert r.code == 2, r
    assert (f'{manifest}:14: ConfigMap/volcano-scheduler-configmap: data[volcano-scheduler.conf]: unknown plugin '
            '"nodeorderr"') in r.err, r
    assert f'{manifest}:17: ConfigMap/volcano-scheduler-configmap: data[volcano-scheduler.conf]: plugin "predicates"' \
           in r.err, r
    assert "2 problem(s) found" in r.err, r
    assert not list(tmp_path.rglob("ran-*")), "a pod ran"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_server_follows_the_scheduler_configmap_applied_with_kubectl(tmp_path):
    """Without --scheduler-conf the server spreads the pair (Volcano's default); `kubectl apply` of Volcano's
    scheduler ConfigMap with binpack packs the next pair; a broken edit is a Warning Event and binpack stays."""
    with vcctl_server.running(tmp_path / "d", "--nodes", NODES) as srv:
        kubectl = vcctl_server.kubectl_runner(srv.kubeconfig, tmp_path / "cache")

        def nodes_of(job: str) -> set[str]:
            def placed():
                out = kubectl("get", "pods", "-l", f"volcano.sh/job-name={job}", "-o",
                              "jsonpath={.items[*].spec.nodeName}").stdout.split()
                return set(out) if len(out) == 2 else None
            return vcctl_server.wait_until(placed, f"the pods of {job} placed")

        kubectl("apply", "-f", "-", input=PAIR.replace("name: pair", "name: spread"))
        assert len(nodes_of("spread")) == 2
        kubectl("create", "namespace", "volcano-system")
        kubectl("apply", "-f", "-", input=_scheduler_configmap(BINPACK_CONF))
        vcctl_server.wait_until(lambda: "SchedulerConfLoaded" in kubectl(
            "get", "events", "-n", "volcano-system", "-o", "jsonpath={.items[*].reason}").stdout, "the conf loaded")
        kubectl("apply", "-f", "-", input=PAIR.replace("name: pair", "name: packed"))
        assert len(nodes_of("packed")) == 1
        kubectl("apply", "-f", "-", input=_scheduler_configmap(BAD_CONF))
        warning = vcctl_server.wait_until(lambda: kubectl(
            "get", "events", "-n", "volcano-system", "--field-selector", "reason=InvalidSchedulerConf", "-o",
            "jsonpath={.items[*].message}").stdout, "the warning")
        assert 'volcano-scheduler.conf:7: unknown plugin "nodeorderr"' in warning
        kubectl("apply", "-f", "-", input=PAIR.replace("name: pair", "name: still-packed"))
        assert len(nodes_of("still-packed")) == 1
        vcctl_server.stop_cleanly(srv)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_server_with_a_conf_option_tells_the_configmap_it_is_not_read(write, tmp_path):
    conf = write("binpack.conf", BINPACK_CONF)
    with vcctl_server.running(tmp_path / "d", "--scheduler-conf", str(conf)) as srv:
        kubectl = vcctl_server.kubectl_runner(srv.kubeconfig, tmp_path / "cache")
        kubectl("create", "namespace", "volcano-system")
        kubectl("apply", "-f", "-", input=_scheduler_configmap(BAD_CONF))
        told = vcctl_server.wait_until(lambda: kubectl(
            "get", "events", "-n", "volcano-system", "--field-selector", "reason=SchedulerConfNotRead", "-o",
            "jsonpath={.items[*].message}").stdout, "the warning")
        assert told == f"not read: --scheduler-conf {conf} configures the scheduler (restart the server without it " \
                       "for this ConfigMap to)"
        vcctl_server.stop_cleanly(srv)
