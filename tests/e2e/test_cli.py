"""The rest of the CLI contract: conversions, unschedulable jobs, Ctrl-C, -o yaml, --help."""
import json
import os
import signal
import subprocess
import time

import pytest
import yaml

from tests.e2e.conftest import ROOT, VCCTL

JOB = """
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}}}
spec:
  minAvailable: 1{extra}
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: [sh, -c, "{script}"]
"""
SLEEPER = JOB.format(name="sleeper", extra="", script="echo $$$$ > $VC_POD_DIR/pid; sleep 300 & wait")


def test_jobtemplate_from_job_and_back_round_trips(vcctl, write):
    job = write("job.yaml", SLEEPER)
    r = vcctl("jobtemplate", "from-job", "-f", job, "--name", "sleepy")
    assert r.code == 0, r
    jt = yaml.safe_load(r.out)
    assert (jt["apiVersion"], jt["kind"], jt["metadata"]["name"]) == ("flow.volcano.sh/v1alpha1", "JobTemplate", "sleepy")
    back = vcctl("job", "from-template", "-f", write("jt.yaml", r.out))
    assert back.code == 0, back
    again = yaml.safe_load(back.out)
    assert again["kind"] == "Job" and again["spec"] == yaml.safe_load(SLEEPER)["spec"]


def test_conversion_of_the_wrong_kind_is_a_clear_error(vcctl):
    r = vcctl("job", "from-template", "-f", "examples/retry.yaml")
    assert r.code == 0, r  # the file holds JobTemplates: they convert
    r = vcctl("jobtemplate", "from-job", "-f", "examples/retry.yaml")
    assert r.code == 2 and "no Job found" in r.err, r
    r = vcctl("job", "from-template", "-f", "examples/diamond.yaml", "--name", "x")
    assert r.code == 2 and "--name names one object" in r.err and not r.out, r


@pytest.mark.parametrize("command, source", [
    pytest.param(["jobtemplate", "from-job"], SLEEPER, id="from-job"),
    pytest.param(["job", "from-template"], SLEEPER.replace("batch.volcano.sh/v1alpha1\nkind: Job",
                                                           "flow.volcano.sh/v1alpha1\nkind: JobTemplate"),
                 id="from-template"),
])
@pytest.mark.parametrize("name", ["Bad_Name", "x..y", "-x"])
def test_a_conversion_to_a_name_no_object_can_have_is_refused(vcctl, write, command, source, name):
    r = vcctl(*command, "-f", write("src.yaml", source), "--name", name)
    assert r.code == 2 and not r.out, r
    assert r.err.startswith(f'--name: Invalid value: "{name}": a lowercase RFC 1123 subdomain'), r


@pytest.mark.parametrize("command, kind", [
    pytest.param(["jobtemplate", "from-job"], "batch.volcano.sh/v1alpha1\nkind: Job", id="from-job"),
    pytest.param(["job", "from-template"], "flow.volcano.sh/v1alpha1\nkind: JobTemplate", id="from-template"),
])
@pytest.mark.parametrize("change, line, message", [
    pytest.param(("replicas: 1", "replicas: -2"), 10, "spec.tasks[0].replicas: Invalid value: -2: should be greater "
                 "than or equal to 0", id="negative-replicas"),
    pytest.param(("minAvailable: 1", "minAvailable: 5"), 7, "spec.minAvailable: job 'minAvailable' should not be "
                 "greater than total replicas in tasks", id="minAvailable-above-replicas"),
    pytest.param(("minAvailable: 1", "minAvailable: 1\n  policies: [{event: PodFailed, exitCode: 3, action: "
                  "AbortJob}]"), 8, "spec.policies[0]: must not specify event and exitCode simultaneously",
                 id="event-and-exitCode"),
])
def test_a_conversion_of_a_spec_the_api_would_refuse_names_each_problem_and_converts_nothing(
        vcctl, write, command, kind, change, line, message):
    source = SLEEPER.replace("batch.volcano.sh/v1alpha1\nkind: Job", kind).replace(*change)
    path = write("src.yaml", source)
    r = vcctl(*command, "-f", path)
    assert r.code == 2 and not r.out, r
    assert f"{path}:{line}: JobTemplate/sleeper: {message}" in r.err, r
    assert r.err.rstrip().endswith("1 problem(s) found; nothing was converted."), r


def test_a_conversion_leaves_the_queue_and_the_local_command_rule_to_where_the_object_goes(vcctl, write):
    """The queue's existence and state are the cluster's, and a container without a command runs there."""
    source = JOB.format(name="elsewhere", extra="\n  queue: research", script="true").replace(
        '              command: [sh, -c, "true"]\n', "")
    r = vcctl("jobtemplate", "from-job", "-f", write("src.yaml", source))
    assert r.code == 0, r
    assert yaml.safe_load(r.out)["spec"]["queue"] == "research"


def test_job_that_can_never_fit_is_reported_not_hung(vcctl, write, tmp_path):
    big = SLEEPER.replace("command: [sh", 'resources: {requests: {cpu: "64"}}\n              command: [sh')
    r = vcctl("run", "--nodes", "1x(cpu=2,memory=4Gi)", "--workdir", tmp_path, write("big.yaml", big), timeout=60)
    assert r.code == 1, r
    assert "no further progress is possible" in r.err and "cpu" in r.err, r


def test_stuck_run_does_not_wait_for_a_finished_jobs_ttl(vcctl, write, tmp_path):
    """Only clean-up is left (a finished vcjob's TTL deletion in ten minutes): the run is stuck now."""
    done = JOB.format(name="done", extra="\n  ttlSecondsAfterFinished: 600", script="true")
    big = SLEEPER.replace("command: [sh", 'resources: {requests: {cpu: "64"}}\n              command: [sh')
    r = vcctl("run", "--nodes", "1x(cpu=2,memory=4Gi)", "--workdir", tmp_path, write("stuck.yaml", done + big),
              timeout=60)
    assert r.code == 1, r
    assert "no further progress is possible" in r.err and "cpu" in r.err, r


def test_output_yaml_is_a_v1_list(vcctl, tmp_path):
    r = vcctl("run", "--quiet", "-o", "yaml", "--workdir", tmp_path, "examples/retry.yaml")
    assert r.code == 0, r
    lst = yaml.safe_load(r.out)
    assert lst["apiVersion"] == "v1" and lst["kind"] == "List"
    assert {i["kind"] for i in lst["items"]} >= {"JobFlow", "JobTemplate", "Job", "PodGroup", "Pod"}
    # a finished vcjob's PodGroup is deleted (as Volcano's KillJob does): listed as its last version
    groups = [i for i in lst["items"] if i["kind"] == "PodGroup"]
    assert {g["metadata"]["ownerReferences"][0]["name"] for g in groups} >= {"retry-fetch", "retry-train-after-fetch"}
    assert all(g.get("status", {}).get("phase") for g in groups), groups


def test_exit_code_counts_a_job_deleted_after_it_finished(vcctl, write, tmp_path):
    """ttlSecondsAfterFinished deletes a finished vcjob at once: its failure still fails the run."""
    text = JOB.format(name="gone", extra="\n  ttlSecondsAfterFinished: 0", script="exit 1") + \
        JOB.format(name="fine", extra="", script="true")
    r = vcctl("run", "--workdir", tmp_path, write("ttl.yaml", text), timeout=60)
    assert r.code == 1, r
    last = r.err.strip().splitlines()[-1]
    assert last.startswith("failed: vcjob default/gone Failed; succeeded: vcjob default/fine Completed"), r
    # why it failed is not lost with it (its pods went too), nor is it missing from -o yaml
    assert "vcjob default/gone Failed: pod gone-main-0: container main exited with code 1 (Error)" in r.err, r
    r = vcctl("run", "-q", "-o", "yaml", "--workdir", tmp_path / "again", write("ttl.yaml", text), timeout=60)
    items = {(i["kind"], i["metadata"]["name"]): i for i in yaml.safe_load(r.out)["items"]}
    assert items[("Job", "gone")]["status"]["state"]["phase"] == "Failed"
    assert items[("Pod", "gone-main-0")]["status"]["phase"] == "Failed"


def test_a_failed_init_container_is_named_with_its_log(vcctl, write, tmp_path):
    text = JOB.format(name="init", extra="", script="true").replace(
        "          containers:", "          initContainers:\n            - {name: setup, image: busybox, command: "
        "[sh, -c, 'echo no input data >&2; exit 4']}\n          containers:")
    r = vcctl("run", "--workdir", tmp_path, write("init.yaml", text), timeout=60)
    assert r.code == 1, r
    assert "vcjob default/init Failed: pod init-main-0: init container setup exited with code 4 (Error)" in r.err, r
    assert "setup.log:" in r.err and "no input data" in r.err, r


def test_timeout_says_it_timed_out(vcctl, write, tmp_path):
    r = vcctl("run", "--timeout", "1", "--workdir", tmp_path,
              write("slow.yaml", JOB.format(name="slow", extra="", script="sleep 30")), timeout=60)
    assert r.code == 1, r
    assert "stopped: timed out after 1s" in r.err and "vcjob default/slow" in r.err, r


def test_a_timeout_lists_what_still_waits_up_to_a_limit(vcctl, write, tmp_path):
    """A big flow has thousands of waiting vcjobs: the report lists the first ones and counts the rest."""
    jobs = "".join(JOB.format(name=f"w{i}", extra="", script="sleep 30")
                   for i in range(45))
    r = vcctl("run", "--quiet", "--timeout", "1", "--workdir", tmp_path, write("many.yaml", jobs), timeout=60)
    lines = r.err.splitlines()
    assert r.code == 1 and lines[0] == "stopped: timed out after 1s", r
    assert lines[-1] == "  … and 5 more (vcctl run -o yaml shows every object)" and len(lines) == 42, r


def test_ctrl_c_stops_every_pod(write, tmp_path):
    """Ctrl-C: every pod stopped, exit 130, and `-o json` still prints the List of the objects as the stop left
    them (as after a timeout)."""
    path = write("sleeper.yaml", SLEEPER)
    work = tmp_path / "work"
    proc = subprocess.Popen([VCCTL, "run", "-o", "json", "--workdir", str(work), str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = None
    for _ in range(300):
        found = list(work.rglob("pid"))
        if found and found[0].read_text().strip():
            pid_file = found[0]
            break
        time.sleep(0.05)
    assert pid_file is not None, "the pod never started"
    pod_pid = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err
    listed = json.loads(out)
    assert listed["kind"] == "List" and {"Job", "PodGroup", "Pod"} <= {o["kind"] for o in listed["items"]}, out
    try:
        os.kill(pod_pid, 0)
        state = open(f"/proc/{pod_pid}/stat").read().split()[2]
        assert state == "Z", f"pod process {pod_pid} still alive after Ctrl-C"
    except ProcessLookupError:
        pass


def test_a_second_ctrl_c_kills_a_pod_that_ignores_sigterm(write, tmp_path):
    """Stopping waits out the grace period (here ten minutes) of a pod that ignores SIGTERM, as the
    kubelet does, unless the user presses Ctrl-C again: then its processes are killed at once."""
    stubborn = JOB.format(name="stubborn", extra="", script="trap '' TERM; echo $$$$ > $VC_POD_DIR/pid; sleep 300") \
        .replace("restartPolicy: Never", "restartPolicy: Never\n          terminationGracePeriodSeconds: 600")
    work = tmp_path / "work"
    proc = subprocess.Popen([VCCTL, "run", "--timeout", "1", "--workdir", str(work), str(write("s.yaml", stubborn))],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err_lines = []
    for line in proc.stderr:   # (the progress lines go to stdout)
        err_lines.append(line)
        if line.startswith("stopping 1 pod(s)"):
            break
    assert err_lines and "Ctrl-C to kill them now" in err_lines[-1], err_lines
    pod_pid = int(next(work.rglob("pid")).read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)   # far less than the pod's 600 s grace period
    assert proc.returncode == 1 and "stopped: timed out after 1s" in err, (out, err)
    try:
        os.kill(pod_pid, 0)
        assert open(f"/proc/{pod_pid}/stat").read().split()[2] == "Z", "the pod's process is still alive"
    except ProcessLookupError:
        pass


def test_help_teaches(vcctl):
    r = vcctl("run", "--help")
    assert r.code == 0 and "Exit status" in r.out and "--nodes" in r.out
    # the CronJob example on a line of its own (it was run into the paragraph before it)
    assert "\n    vcctl run --timeout 60 examples/cronjob.yaml\n" in r.out, r
    # a second terminal's `vcctl jobflow suspend` reaches the run only with --listen: the help says so
    assert "The run serves no API unless --listen asks" in " ".join(r.out.split()), r
    assert "kubectl --kubeconfig <printed path> get jf -w" in r.out, r


ROUND_TRIP = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: keep
  annotations: {team.example.com/owner: ml-infra}
spec:
  minAvailable: 1
  networkTopology: {mode: soft, highestTierAllowed: 2}
  tasks:
    - name: main
      replicas: 1
      topologyPolicy: none
      template:
        metadata: {labels: {app: keep}}
        spec:
          restartPolicy: Never
          tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
          securityContext: {runAsNonRoot: false}
          containers:
            - name: main
              image: busybox
              imagePullPolicy: IfNotPresent
              command: ["true"]
              ports: [{containerPort: 8080, name: http}]
"""


def test_fields_vclite_does_not_model_survive_the_round_trip(vcctl, write, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, write("keep.yaml", ROUND_TRIP))
    assert r.code == 0, r
    job = next(o for o in r.json()["items"] if o["kind"] == "Job")
    want = yaml.safe_load(ROUND_TRIP)
    assert job["metadata"]["annotations"]["team.example.com/owner"] == "ml-infra"
    assert job["spec"]["networkTopology"] == want["spec"]["networkTopology"]
    got_spec = job["spec"]["tasks"][0]["template"]["spec"]
    for field in ("tolerations", "securityContext"):
        assert got_spec[field] == want["spec"]["tasks"][0]["template"]["spec"][field]
    assert got_spec["containers"][0]["ports"] == [{"containerPort": 8080, "name": "http"}]
    pod = next(o for o in r.json()["items"] if o["kind"] == "Pod")
    assert pod["spec"]["tolerations"] == want["spec"]["tasks"][0]["template"]["spec"]["tolerations"]


def test_generate_name_jobs_run_as_on_kubernetes(vcctl, write, tmp_path):
    """Volcano's own TTL guide creates its job with metadata.generateName: each object gets a name
    made from the prefix; a bad prefix is one problem on metadata.generateName."""
    text = JOB.format(name="x", extra="", script="true").replace("{name: x}", "{generateName: sweep-}")
    r = vcctl("run", "--workdir", tmp_path, write("gen.yaml", text + text), timeout=60)
    assert r.code == 0, r
    last = r.err.strip().splitlines()[-1]
    assert last.startswith("succeeded: vcjob default/sweep-") and last.count("vcjob default/sweep-") == 2, r
    bad = vcctl("validate", write("bad.yaml", text.replace("sweep-", "Sweep_")))
    assert bad.code == 2 and "Job/Sweep_*: metadata.generateName: Invalid value" in bad.err, bad
    assert "1 problem(s) found" in bad.err, bad


def test_quiet_prints_nothing_on_success_and_only_why_on_failure(vcctl, write, tmp_path):
    fine = vcctl("run", "--quiet", "--workdir", tmp_path / "a", write("fine.yaml", JOB.format(name="fine", extra="",
                                                                                               script="true")))
    assert fine.code == 0 and fine.out == "" and fine.err == "", fine
    bad = vcctl("run", "--quiet", "--workdir", tmp_path / "b", write("bad.yaml", JOB.format(
        name="bad", extra="", script="echo boom >&2; exit 3")), timeout=60)
    assert bad.code == 1 and bad.out == "", bad
    assert "vcjob default/bad Failed" in bad.err and "boom" in bad.err, bad
    assert bad.err.strip().splitlines()[-1].startswith("failed: vcjob default/bad Failed"), bad


def test_a_temporary_workdir_no_pod_used_is_removed(write, tmp_path):
    """Without --workdir a run makes a temporary directory for pods; one that stayed empty (only a
    Queue applied) is removed, and the last line says what was done."""
    queue = write("queue.yaml", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                                "metadata: {name: q1}\nspec: {weight: 1}\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run([VCCTL, "run", str(queue)], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc
    assert proc.stderr.strip().splitlines()[-1] == "succeeded: 1 object(s) applied, no JobFlow or vcjob to run", proc
    assert list(tmp.iterdir()) == []


def test_pods_get_their_priority_class_value_as_on_kubernetes(vcctl, write, tmp_path):
    """Kubernetes' Priority admission: spec.priority from the task's PriorityClass, 0 without one."""
    text = ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
            "preemptionPolicy: Never\n" + JOB.format(name="prio", extra="", script="true").replace(
                "restartPolicy: Never", "restartPolicy: Never\n          priorityClassName: high")
            + JOB.format(name="plain", extra="", script="true"))
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, write("prio.yaml", text))
    assert r.code == 0, r
    pods = {i["metadata"]["name"]: i["spec"] for i in json.loads(r.out)["items"] if i["kind"] == "Pod"}
    assert (pods["prio-main-0"]["priority"], pods["prio-main-0"]["preemptionPolicy"]) == (1000, "Never")
    assert (pods["plain-main-0"]["priority"], pods["plain-main-0"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")


BARE_PODS = """
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers: [{name: main, image: busybox, command: [sh, -c, "echo hi"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: sad}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers: [{name: main, image: busybox, command: [sh, -c, "echo sad >&2; exit 2"]}]
"""


def test_bare_pods_are_followed_to_their_end(vcctl, write, tmp_path):
    """A pod no controller made runs through Volcano's podgroup controller and scheduler; the run
    waits for it and counts it, as a vcjob."""
    r = vcctl("run", "--workdir", tmp_path, write("pods.yaml", BARE_PODS), timeout=60)
    assert r.code == 1, r
    assert "pod default/sad Failed: container main exited with code 2 (Error)" in r.err and "    sad" in r.err, r
    assert r.err.strip().splitlines()[-1].startswith(
        "failed: pod default/sad Failed; succeeded: pod default/hello Succeeded"), r
    assert (tmp_path / "default" / "hello" / "logs" / "main.log").read_text() == "hi\n"


def test_a_pod_for_another_scheduler_is_reported_not_waited_for(vcctl, write, tmp_path):
    lonely = BARE_PODS.split("---")[0].replace("  schedulerName: volcano\n", "")
    r = vcctl("run", "--workdir", tmp_path, write("lonely.yaml", lonely), timeout=60)
    assert r.code == 1 and "no further progress is possible" in r.err, r
    assert "pod default/hello: schedulerName default-scheduler: only Volcano's scheduler runs here" in r.err, r


SPREAD_WORKERS = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: spread}
spec:
  minAvailable: 3
  tasks:
    - name: worker
      replicas: 3
      template:
        metadata: {labels: {app: worker}}
        spec:
          restartPolicy: Never
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - {labelSelector: {matchLabels: {app: worker}}, topologyKey: kubernetes.io/hostname}
          containers:
            - name: main
              image: busybox
              command: [sh, -c, "echo $NODE"]
              env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
              resources: {requests: {cpu: 100m}}
"""


def test_required_pod_anti_affinity_spreads_a_gang_over_nodes(vcctl, write, tmp_path):
    """MPI-style workers that must not share a node: one per node, or the gang waits and says why."""
    manifest = write("spread.yaml", SPREAD_WORKERS)
    r = vcctl("run", "--quiet", "-o", "json", "--nodes", "3", "--workdir", tmp_path / "three", manifest, timeout=60)
    assert r.code == 0, r
    nodes = {i["metadata"]["name"]: i["spec"]["nodeName"] for i in json.loads(r.out)["items"] if i["kind"] == "Pod"}
    assert sorted(nodes.values()) == ["local-0", "local-1", "local-2"], nodes
    log = tmp_path / "three" / "default" / "spread-worker-0" / "logs" / "main.log"
    assert log.read_text().strip() == nodes["spread-worker-0"]
    r = vcctl("run", "--nodes", "2", "--workdir", tmp_path / "two", manifest, timeout=60)
    assert r.code == 1 and "no further progress is possible" in r.err, r
    assert "0/2 nodes are unavailable: 2 node(s) didn't match pod anti-affinity rules." in r.err, r


SECRET_JOB = """
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: s3cr3t}
data: {user: YWxpY2U=}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: uses-secret}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          volumes: [{name: c, secret: {secretName: creds, items: [{key: token, path: t/token}], defaultMode: 0400}}]
          containers:
            - name: main
              image: busybox
              command: [sh, -c, 'echo "$TOKEN $S_user"; cat $VC_POD_DIR/etc/creds/t/token']
              env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: creds, key: token}}}]
              envFrom: [{prefix: S_, secretRef: {name: creds}}]
              volumeMounts: [{name: c, mountPath: /etc/creds}]
"""


def test_secrets_reach_env_and_volumes_as_on_kubernetes(vcctl, write, tmp_path):
    """API tokens kept in a Secret (secretKeyRef, envFrom.secretRef, secret volumes) run unchanged."""
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path, write("secret.yaml", SECRET_JOB), timeout=60)
    assert r.code == 0, r
    pod_dir = tmp_path / "default" / "uses-secret-main-0"
    assert (pod_dir / "logs" / "main.log").read_text() == "s3cr3t alice\ns3cr3t"
    token = pod_dir / "etc" / "creds" / "t" / "token"
    assert oct(token.stat().st_mode & 0o777) == "0o400"
    without_secret = SECRET_JOB.split("---")[1]
    r = vcctl("run", "--timeout", "5", "--workdir", tmp_path / "m", write("missing.yaml", without_secret), timeout=60)
    assert r.code == 1 and 'CreateContainerConfigError: secret "creds" not found' in r.err, r


COMPLETE_ON_TASK = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: psw}}
spec:
  minAvailable: 2
  tasks:
    - name: ps
      replicas: 1
      template:
        spec:
          restartPolicy: {policy}
          containers: [{{name: ps, image: busybox, command: [sh, -c, "sleep 60"]}}]
    - name: worker
      replicas: 1
      policies: [{{event: TaskCompleted, action: CompleteJob}}]
      template:
        spec:
          restartPolicy: {policy}
          containers: [{{name: worker, image: busybox, command: [sh, -c, "sleep 0.6"]}}]
"""


@pytest.mark.parametrize("policy", ["Never", "OnFailure"])
def test_complete_job_stopping_a_running_task_ends_completed(vcctl, write, tmp_path, policy):
    """TaskCompleted -> CompleteJob stops the ps (its pod deleted, then gone once its process ended):
    the standalone vcjob ends Completed, not stuck Completing (the run stopped while the ps's stop was
    still being reported, before the executor removed the pod)."""
    r = vcctl("run", "--workdir", tmp_path, write("psw.yaml", COMPLETE_ON_TASK.format(policy=policy)), timeout=60)
    assert r.code == 0, r
    assert "succeeded: vcjob default/psw Completed" in r.err + r.out, r


@pytest.mark.parametrize("workdir, says", [
    pytest.param("{tmp}/a-file/pods", "Not a directory", id="under-a-file"),
    pytest.param("/proc/vclite-pods", "No such file or directory", id="cannot-be-made"),
])
def test_a_workdir_that_cannot_be_made_is_refused_before_anything_runs(vcctl, write, tmp_path, workdir, says):
    """Not a traceback per pod sync and a job left Pending: the usage error, exit 2, nothing run."""
    (tmp_path / "a-file").write_text("")
    job = write("job.yaml", JOB.format(name="j", extra="", script="touch $VC_POD_DIR/../../../ran"))
    r = vcctl("run", "--workdir", workdir.format(tmp=tmp_path), job, timeout=60)
    assert r.code == 2, r
    assert f"--workdir {workdir.format(tmp=tmp_path)}" in r.err and says in r.err, r
    assert "Traceback" not in r.err and len(r.err.splitlines()) == 1, r


def test_run_dash_reads_the_manifests_from_standard_input(vcctl, tmp_path):
    marker = tmp_path / "ran"
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "work", "-",
              input=JOB.format(name="piped", extra="", script=f"touch {marker}"))
    assert r.code == 0 and marker.exists(), r


PIPED_NODE = """apiVersion: v1
kind: Node
metadata: {name: piped-node}
status:
  capacity: {cpu: "2", memory: 2Gi, pods: "10"}
"""
PIPED_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: predicates
"""


@pytest.mark.parametrize("option, text, check", [
    pytest.param("--nodes", PIPED_NODE, lambda pod: pod["spec"]["nodeName"] == "piped-node", id="nodes"),
    pytest.param("--scheduler-conf", PIPED_CONF, lambda pod: pod["status"]["phase"] == "Succeeded", id="conf"),
])
def test_run_options_read_standard_input_as_a_file(vcctl, write, tmp_path, option, text, check):
    job = write("job.yaml", JOB.format(name="j", extra="", script="true"))
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "work", option, "-", job, input=text)
    assert r.code == 0, r
    pods = [o for o in r.json()["items"] if o["kind"] == "Pod"]
    assert len(pods) == 1 and check(pods[0]), pods


FILE_NODE = """apiVersion: v1
kind: Node
metadata:
  name: gpu-box
  labels: {box: gpu}
status:
  capacity: {cpu: "2", memory: 2Gi, pods: "10"}
"""
ON_GPU_BOX = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  minAvailable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {box: gpu}
          containers:
            - name: c
              image: busybox
              command: [touch, MARKER]
"""


@pytest.mark.parametrize("node, args, code, says", [
    pytest.param(FILE_NODE, [], 0, "", id="declares-the-nodes"),
    pytest.param(FILE_NODE, ["--nodes", "2"], 2,
                 "nodes.yaml:1: Node/gpu-box: --nodes 2 declares the run's nodes: give them in one place",
                 id="and-nodes"),
    pytest.param(FILE_NODE.replace("status:", "spec: {taints: [{key: k, effect: Sometimes}]}\nstatus:"), [], 2,
                 'nodes.yaml:6: Node/gpu-box: spec.taints[0].effect: Unsupported value: "Sometimes"', id="bad-node"),
])
def test_run_runs_pods_on_the_nodes_a_file_among_the_files_declares(vcctl, write, tmp_path, node, args, code, says):
    """A file of Node objects among the FILES declares the run's nodes, as `--nodes FILE` does: a pod bound to one
    runs (a Node only created in the API had no executor: the pod stayed Pending and the run stopped as stuck)."""
    marker = tmp_path / "ran"
    nodes, job = write("nodes.yaml", node), write("job.yaml", ON_GPU_BOX.replace("MARKER", str(marker)))
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "work", *args, nodes, job, timeout=60)
    assert r.code == code and says in r.err and "Traceback" not in r.err, r
    assert marker.exists() == (code == 0), r
    if code == 0:
        pods = [o for o in r.json()["items"] if o["kind"] == "Pod"]
        assert [p["spec"]["nodeName"] for p in pods] == ["gpu-box"], pods


@pytest.mark.parametrize("node, code, says", [
    pytest.param(FILE_NODE, 0, "2 object(s) valid.", id="valid"),
    pytest.param(FILE_NODE.replace("status:", "spec: {taints: [{key: k, effect: Sometimes}]}\nstatus:"), 2,
                 'nodes.yaml:6: Node/gpu-box: spec.taints[0].effect: Unsupported value: "Sometimes"', id="bad-node"),
])
def test_validate_checks_the_nodes_among_the_files_as_run_does(vcctl, write, tmp_path, node, code, says):
    nodes, job = write("nodes.yaml", node), write("job.yaml", ON_GPU_BOX.replace("MARKER", str(tmp_path / "ran")))
    r = vcctl("validate", nodes, job)
    assert r.code == code and says in r.out + r.err, r


@pytest.mark.parametrize("args, text, says", [
    pytest.param(["--nodes", "-"], "kind: Node\nmetadata: {name: x\n", "--nodes <stdin>:3:1: document 1: invalid YAML",
                 id="nodes-broken-yaml"),
    pytest.param(["--scheduler-conf", "-"], 'actions: "enqueue, alocate"\n', "<stdin>:1: ", id="conf-unknown-action"),
    pytest.param(["--nodes", "-", "-"], PIPED_NODE,
                 "error: standard input (-) can be read only once, but FILES and --nodes both ask for it", id="two"),
    pytest.param(["--nodes", "-", "--scheduler-conf", "-", "-"], PIPED_NODE,
                 "FILES, --nodes and --scheduler-conf all ask for it", id="three"),
])
def test_run_refuses_a_bad_or_twice_read_standard_input(vcctl, write, tmp_path, args, text, says):
    marker = tmp_path / "ran"
    job = write("job.yaml", JOB.format(name="j", extra="", script=f"touch {marker}"))
    r = vcctl("run", "--quiet", *args, job, input=text)
    assert r.code == 2 and says in r.err and "Traceback" not in r.err, r
    assert not marker.exists()


@pytest.mark.parametrize("args, says", [
    pytest.param(["validate", "-"], "<stdin>:7: Job/piped: spec.minAvailable: Invalid value: -1", id="validate"),
    pytest.param(["run", "--quiet", "-"], "<stdin>:7: Job/piped: spec.minAvailable: Invalid value: -1", id="run"),
    pytest.param(["validate", "-", "-"], "<stdin>:7: Job/piped", id="named-twice-read-once"),
    pytest.param(["scheduler", "dry-run", "-f", "-"], "<stdin>:3: Job/piped: kind: a cluster state holds only",
                 id="dry-run"),
    pytest.param(["job", "from-template", "-f", "-"], "<stdin>: no JobTemplate found (found: Job)",
                 id="from-template"),
])
def test_problems_of_standard_input_name_it_stdin(vcctl, tmp_path, args, says):
    marker = tmp_path / "ran"
    text = JOB.format(name="piped", extra="", script=f"touch {marker}").replace("minAvailable: 1", "minAvailable: -1")
    r = vcctl(*args, input=text)
    assert r.code == 2 and says in r.err and r.err.count("<stdin>") == 1, r
    assert not marker.exists()


def test_conversion_reads_standard_input(vcctl):
    r = vcctl("jobtemplate", "from-job", "-f", "-", input=SLEEPER)
    assert r.code == 0 and yaml.safe_load(r.out)["kind"] == "JobTemplate", r


KUBE_SYSTEM = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: kube-system}
data: {greeting: hello}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: sysjob, namespace: kube-system}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: t
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        priorityClassName: system-node-critical
        containers:
        - name: main
          image: busybox
          command: ["sh", "-c", "echo $G"]
          env: [{name: G, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}]
"""


@pytest.mark.parametrize("namespace_doc", [
    pytest.param("", id="no-namespace-document"),
    pytest.param("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n", id="namespace-after"),
])
def test_a_manifest_for_kube_system_runs_unchanged(vcctl, write, tmp_path, namespace_doc):
    """The embedded control plane makes a namespace when something is put in it (kube-apiserver has
    kube-system from its start): a vcjob and a ConfigMap in kube-system run as written."""
    path = write("system.yaml", KUBE_SYSTEM + namespace_doc)
    r = vcctl("run", "--workdir", tmp_path / "work", path)
    assert r.code == 0 and "vcjob kube-system/sysjob Completed" in r.err + r.out, r
    assert (tmp_path / "work" / "kube-system" / "sysjob-t-0" / "logs" / "main.log").read_text() == "hello\n"
