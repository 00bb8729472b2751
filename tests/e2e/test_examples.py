"""Every file in examples/ runs through the real `vcctl run`, with the outcome it documents."""
import pathlib

import pytest

from vclite.api import meta

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))
EXPECTED_EXIT = {"failing.yaml": 1, "exit-handler.yaml": 1}
# a CronJob never finishes: its run ends at --timeout (exit 0 when nothing failed)
TOPOLOGY_NODES = ("--nodes", "4x(cpu=2,memory=4Gi)")   # local-0 .. local-3, the racks examples/topology.yaml names
EXTRA_ARGS = {"cronjob.yaml": ("--timeout", "5"), "topology.yaml": TOPOLOGY_NODES}
KINDS = {"cronjob.yaml": {"CronJob", "Job", "Pod"}}


def by_kind(items, kind):
    return {meta.name(o): o for o in items if o["kind"] == kind}


def test_every_example_is_covered():
    assert set(EXAMPLES) >= {"diamond.yaml", "ps-worker.yaml", "retry.yaml", "failing.yaml"}
    # one per flow primitive (tests/e2e/test_flow_primitives.py checks what each shows)
    assert set(EXAMPLES) >= {"probe.yaml", "any-expression.yaml", "if-else.yaml", "switch.yaml", "fan-out.yaml",
                             "repeat-until.yaml", "patch.yaml", "flow-retry.yaml", "exit-handler.yaml"}


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_with_documented_outcome(vcctl, tmp_path, example):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "work", *EXTRA_ARGS.get(example, ()),
              f"examples/{example}")
    assert r.code == EXPECTED_EXIT.get(example, 0), r
    items = r.json()["items"]
    # PodGroups of finished jobs are deleted (Volcano's KillJob) and listed as their last version
    assert {o["kind"] for o in items} >= KINDS.get(example, {"JobFlow", "JobTemplate", "Job", "PodGroup", "Pod"}), r
    assert all(o.get("status") for o in items if o["kind"] in ("JobFlow", "Job", "Pod")), r


def test_diamond_runs_in_dependency_order(vcctl, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, "examples/diamond.yaml")
    assert r.code == 0, r
    items = r.json()["items"]
    jf = by_kind(items, "JobFlow")["diamond"]
    assert jf["status"]["state"]["phase"] == "Succeed"
    assert sorted(jf["status"]["completedJobs"]) == [f"diamond-{x}" for x in "abcde"]
    jobs = by_kind(items, "Job")
    created = {n: jobs[n]["metadata"]["creationTimestamp"] for n in jobs}
    finished = {}
    for entry in jf["status"]["jobStatusList"]:
        finished[entry["name"]] = entry["endTimestamp"]
    for before, after in [("a", "b"), ("b", "c"), ("b", "d"), ("c", "e"), ("d", "e")]:
        assert finished[f"diamond-{before}"] <= created[f"diamond-{after}"], (before, after)
    for name, job in jobs.items():
        assert job["metadata"]["labels"]["volcano.sh/createdByJobFlow"] == "default.diamond"
        assert job["metadata"]["ownerReferences"][0]["kind"] == "JobFlow"


def test_ps_worker_completes_by_policy_and_sees_hosts(vcctl, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, "examples/ps-worker.yaml")
    assert r.code == 0, r
    jobs = by_kind(r.json()["items"], "Job")
    assert jobs["ps-worker-train"]["status"]["state"]["phase"] == "Completed"
    logs = sorted(tmp_path.rglob("worker.log"))
    assert logs, list(tmp_path.rglob("*"))
    text = logs[0].read_text()
    assert "talks to ps at 127.0.0.1" in text, text   # (the ps pod's DNS name, as a local process reaches it)


def test_retry_restarts_the_failed_job_then_succeeds(vcctl, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, "examples/retry.yaml")
    assert r.code == 0, r
    jobs = by_kind(r.json()["items"], "Job")
    assert jobs["retry-fetch"]["status"]["retryCount"] == 1
    assert jobs["retry-fetch"]["status"]["state"]["phase"] == "Completed"
    assert jobs["retry-train-after-fetch"]["status"]["state"]["phase"] == "Completed"


def test_failing_flow_says_why(vcctl, tmp_path):
    r = vcctl("run", "--workdir", tmp_path, "examples/failing.yaml")
    assert r.code == 1, r
    assert "failing-validate-data" in r.err and "exited with code 3" in r.err, r
    assert "column price is negative" in r.err, r
    assert not list(tmp_path.rglob("failing-train-model-*")), "the dependent job must never start"


def test_pytorch_plugin_gives_every_pod_its_rank(vcctl, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, "examples/pytorch.yaml")
    assert r.code == 0, r
    lines = sorted((tmp_path / "default" / pod / "logs" / "trainer.log").read_text().strip()
                   for pod in ("ddp-train-master-0", "ddp-train-worker-0", "ddp-train-worker-1"))
    assert lines == [f"rank {i} of 3, rendezvous at 127.0.0.1:23456" for i in range(3)], lines
    job = by_kind(r.json()["items"], "Job")["ddp-train"]
    pods = by_kind(r.json()["items"], "Pod")   # (the pod spec keeps Volcano's name; the process got 127.0.0.1)
    env = {e["name"]: e.get("value") for e in pods["ddp-train-worker-0"]["spec"]["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "ddp-train-master-0.ddp-train", env
    assert set(job["spec"]["plugins"]) == {"pytorch", "svc"}   # the webhook adds svc, as Volcano's


@pytest.mark.parametrize("topology", [True, False], ids=["hard rack limit", "no limit"])
def test_topology_keeps_the_gang_in_the_one_rack_that_holds_it(vcctl, tmp_path, topology):
    """The loader takes a cpu of rack-a (local-0, local-1): the 4-cpu gang fits whole only in rack-b; without
    its networkTopology, the same flow spreads the workers over both racks (so the first run shows the limit)."""
    text = (ROOT / "examples" / "topology.yaml").read_text()
    if not topology:
        text = text.replace("  networkTopology:\n    mode: hard\n    highestTierAllowed: 1\n", "")
        assert "networkTopology:" not in text
    (tmp_path / "flow.yaml").write_text(text)
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "work", *TOPOLOGY_NODES, tmp_path / "flow.yaml")
    assert r.code == 0, r
    pods = by_kind(r.json()["items"], "Pod")
    workers = {p["spec"]["nodeName"] for n, p in pods.items() if n.startswith("allreduce-train-")}
    assert pods["allreduce-loader-main-0"]["spec"]["nodeName"] == "local-0"
    if topology:
        assert workers == {"local-2", "local-3"}, workers
    else:
        assert workers & {"local-0", "local-1"} and workers & {"local-2", "local-3"}, workers


LABELLED_NODES = "".join(f"""---
apiVersion: v1
kind: Node
metadata:
  name: local-{i}
  labels: {{kubernetes.io/hostname: local-{i}, example.com/rack: rack-{"ab"[i // 2]}}}
status:
  capacity: {{cpu: "2", memory: 4Gi, pods: "110"}}
  allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}
""" for i in range(4))
DISCOVERY = """---
apiVersion: v1
kind: Namespace
metadata: {name: volcano-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-controller-configmap, namespace: volcano-system}
data:
  volcano-controller.conf: |
    networkTopologyDiscovery:
      - source: label
        enabled: true
        config:
          networkTopologyTypes:
            racks:
              - nodeLabel: example.com/rack
              - nodeLabel: kubernetes.io/hostname
"""


def test_topology_with_hypernodes_discovered_from_node_labels(vcctl, tmp_path):
    """The same flow with its racks written as node labels and Volcano's label discovery instead of HyperNodes."""
    text = (ROOT / "examples" / "topology.yaml").read_text()
    flow = text[text.index("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow"):]
    (tmp_path / "flow.yaml").write_text(DISCOVERY + "---\n" + flow)
    (tmp_path / "nodes.yaml").write_text(LABELLED_NODES)
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "work", "--nodes", tmp_path / "nodes.yaml",
              tmp_path / "flow.yaml")
    assert r.code == 0, r
    pods = by_kind(r.json()["items"], "Pod")
    workers = {p["spec"]["nodeName"] for n, p in pods.items() if n.startswith("allreduce-train-")}
    assert workers == {"local-2", "local-3"}, workers
