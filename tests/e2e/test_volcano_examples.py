"""Volcano's own example manifests (its `example/` directory), in the same shapes, through the real CLI.

Each manifest here is our own minimal one exercising the fields and shapes of one of Volcano's examples
(named in the case id): the valid ones are accepted with no problem and no warning, the webhook's
refusals (`example/invalid_jobs`) read as Volcano's webhook words them, and the kinds vclite does not run
(a Deployment, ReplicaSets, RBAC objects, Argo and Spark operator kinds, retired API versions) are refused
saying why. The runs: a gang in the shape of the MPI examples completes; a command that does not exist
here (a binary of the example's image) fails as a missing binary fails in a pod, and `vcctl run` says how.
"""
import pytest

# --- valid shapes ------------------------------------------------------------------------------------

TRAINING = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore-cpu}
spec:
  minAvailable: 1
  schedulerName: volcano
  policies:
    - {event: PodEvicted, action: RestartJob}
  plugins: {ssh: [], env: [], svc: []}
  maxRetry: 5
  queue: default
  tasks:
    - replicas: 2
      name: "pod"
      template:
        spec:
          containers:
            - command: ["/bin/bash", "-c", "true"]
              image: example/mindspore-cpu:0.2.0
              imagePullPolicy: IfNotPresent
              name: train
              resources: {limits: {cpu: "1"}, requests: {cpu: "1"}}
          restartPolicy: OnFailure
"""

GPU = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore-gpu}
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins: {ssh: [], svc: []}
  tasks:
    - replicas: 1
      name: mpimaster
      template:
        spec:
          containers:
            - command: ["/bin/bash", "-c", "true"]
              image: example/mindspore-gpu:0.2.0
              name: mpimaster
              ports: [{containerPort: 22, name: mpijob-port}]
              workingDir: /home
          restartPolicy: OnFailure
    - replicas: 1
      name: mpiworker
      template:
        spec:
          containers:
            - command: ["/bin/bash", "-c", "true"]
              image: example/mindspore-gpu:0.2.0
              name: mpiworker
              resources: {limits: {nvidia.com/gpu: "1"}}
          restartPolicy: OnFailure
"""

CRONJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: hello}
spec:
  schedule: "*/5 * * * *"
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 60
  successfulJobsHistoryLimit: 5
  failedJobsHistoryLimit: 3
  jobTemplate:
    spec:
      schedulerName: volcano
      minAvailable: 1
      policies: [{event: PodEvicted, action: RestartJob}]
      tasks:
        - replicas: 1
          name: "task-1"
          template:
            spec:
              containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "date"]}]
              restartPolicy: OnFailure
"""

QUEUE = """\
# a queue first, as Volcano's deployment example creates one
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: test}
spec:
  weight: 1
  reclaimable: false
  capability:
    cpu: 2"""   # (no final newline, as the example's)


def hierarchy_queue(name, path, weights):
    return (f"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: {name}\n"
            f'  annotations:\n    "volcano.sh/hierarchy": "{path}"\n    "volcano.sh/hierarchy-weights": "{weights}"\n'
            "spec:\n  weight: 1\n")


HIERARCHY = hierarchy_queue("root-eng-prod", "root/eng/prod", "1/2/8") + hierarchy_queue(
    "root-sci-dev", "root/sci/dev", "1/8/2") + """\
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: eng-prod-job}
spec:
  minAvailable: 1
  schedulerName: volcano
  queue: root-eng-prod
  tasks:
    - replicas: 2
      name: "default-nginx"
      template:
        metadata: {name: web}
        spec:
          schedulerName: volcano
          containers:
            - {image: nginx, name: nginx, command: ["true"], resources: {requests: {cpu: "0.5"}}}
          restartPolicy: OnFailure
"""

MPI = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: lm-mpi-job}
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    ssh: []
    svc: []
  tasks:
    - replicas: 1
      name: mpimaster
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        spec:
          containers:
            - command:
                - /bin/sh
                - -c
                - |
                  MPI_HOST=`cat /etc/volcano/mpiworker.host | tr "\\n" ","`;
                  echo "hosts: ${MPI_HOST}"; test -n "${MPI_HOST}" && test -s /root/.ssh/id_rsa
              image: example/mpi:0.0.3
              name: mpimaster
              ports:
                - containerPort: 22
                  name: mpijob-port
          restartPolicy: OnFailure
    - replicas: 2
      name: mpiworker
      template:
        spec:
          containers:
            - command:
                - /bin/sh
                - -c
                - |
                  sleep 60
              image: example/mpi:0.0.3
              name: mpiworker
              ports:
                - containerPort: 22
                  name: mpijob-port
          restartPolicy: OnFailure
---
"""

PADDLE = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ctr-volcano}
spec:
  minAvailable: 1
  schedulerName: volcano
  policies:
  - {event: PodEvicted, action: RestartJob}
  - {event: PodFailed, action: RestartJob}
  tasks:
  - replicas: 1
    name: pserver
    template:
      metadata:
        labels: {paddle-job-pserver: fluid-ctr}
      spec:
        imagePullSecrets:
        - name: default-secret
        volumes:
        - hostPath: {path: /home/work/, type: ""}
          name: seqdata
        containers:
        - image: example/edlctr:v1
          command: [paddle_k8s, start_fluid]
          name: pserver
          volumeMounts:
          - {mountPath: /mnt/seqdata, name: seqdata}
          resources:
            limits: {cpu: 10, memory: 30Gi, ephemeral-storage: 10Gi}
            requests: {cpu: 1, memory: 100M, ephemeral-storage: 1Gi}
          env:
          - {name: TOPOLOGY, value: ""}
          - name: NAMESPACE
            valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}
        restartPolicy: OnFailure
"""

RAY = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ray-cluster-job}
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins: {ray: []}
  policies: [{event: PodEvicted, action: RestartJob}]
  queue: default
  tasks:
    - replicas: 1
      name: head
      template:
        spec:
          containers: [{name: head, image: example/ray:2.49.0, resources: {}}]
          restartPolicy: OnFailure
    - replicas: 1
      name: worker
      template:
        spec:
          containers: [{name: worker, image: example/ray:2.49.0, resources: {}}]
          restartPolicy: OnFailure
"""

TENSORFLOW = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tensorflow-dist-mnist}
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins: {env: [], svc: []}
  policies: [{event: PodEvicted, action: RestartJob}]
  queue: default
  tasks:
    - replicas: 1
      name: ps
      template:
        spec:
          containers:
            - command: ["sh", "-c", "PS_HOST=`cat /etc/volcano/ps.host | tr '\\\\n' ','`; echo $PS_HOST"]
              image: example/dist-mnist-tf:0.0.1
              name: tensorflow
              ports: [{containerPort: 2222, name: tfjob-port}]
              resources: {}
          restartPolicy: Never
    - replicas: 1
      name: worker
      policies: [{event: TaskCompleted, action: CompleteJob}]
      template:
        spec:
          containers:
            - {command: ["sh", "-c", "true"], image: example/dist-mnist-tf:0.0.1, name: tensorflow}
          restartPolicy: Never
"""

TASK_DEPENDENCY = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: 1
  tasks:
    - replicas: 1
      name: "job-nginx1"
      template:
        metadata: {name: nginx1}
        spec:
          nodeSelector: {kubernetes.io/os: linux}
          containers: [{image: nginx, name: nginx, command: ["true"], resources: {requests: {cpu: "100m"}}}]
          restartPolicy: OnFailure
    - replicas: 2
      name: "job-nginx2"
      template:
        metadata: {name: nginx2}
        spec:
          nodeSelector: {kubernetes.io/os: linux}
          containers: [{image: nginx, name: nginx, command: ["true"], resources: {requests: {cpu: "100m"}}}]
          restartPolicy: OnFailure
      dependsOn:
        name:
        - "job-nginx1"
"""


def flow_template(name):
    return f"""\
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  schedulerName: volcano
  policies: [{{event: PodEvicted, action: RestartJob}}]
  plugins: {{env: [], svc: []}}
  tasks:
    - replicas: 1
      name: "default-nginx"
      template:
        metadata: {{name: web}}
        spec:
          containers:
            - image: nginx:1.14.2
              command: [sh, -c, "sleep 0"]
              imagePullPolicy: IfNotPresent
              name: nginx
              resources: {{requests: {{cpu: "1"}}}}
          restartPolicy: OnFailure
"""


JOBFLOW = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: test, namespace: default}
spec:
  jobRetainPolicy: delete
  flows:
    - name: a
    - name: b
      dependsOn: {targets: [a]}
    - name: c
      dependsOn: {targets: [b]}
""" + "".join(flow_template(n) for n in "abc")

SHARDING = """\
# a controller's configuration, as Volcano's sharding example
apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-sharding-configmap
  namespace: volcano-system
data:
  sharding.yaml: |
    schedulerConfigs:
      - name: agent-scheduler
        type: agent
"""

PLUGIN_ARGS = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: test-job-plugin}
spec:
  minAvailable: 1
  schedulerName: volcano
  plugins:
    env: []
    ssh: ["--ssh-key-file-path=/home/user/.ssh"]
    svc: ["--publish-not-ready-addresses=false", "--disable-network-policy=false", "--inject-hosts-env=true"]
  maxRetry: 5
  queue: default
  tasks:
    - replicas: 1
      name: "default-nginx"
      template:
        spec:
          containers: [{image: nginx, name: nginx, command: ["true"], resources: {requests: {cpu: "1"}}}]
          restartPolicy: OnFailure
"""

VALID = [
    pytest.param(TRAINING, id="MindSpore-example/mindspore_cpu"),
    pytest.param(GPU, id="MindSpore-example/mindspore_gpu"),
    pytest.param(CRONJOB, id="cronjob"),
    pytest.param(QUEUE, id="deployment/queue"),
    pytest.param(HIERARCHY, id="hierarchical-jobs"),
    pytest.param(MPI, id="integrations/mpi"),
    pytest.param(PADDLE, id="integrations/paddlepaddle"),
    pytest.param(RAY, id="integrations/ray"),
    pytest.param(TENSORFLOW, id="integrations/tensorflow"),
    pytest.param(TASK_DEPENDENCY, id="task-start-dependency"),
    pytest.param(JOBFLOW, id="jobflow"),
    pytest.param(SHARDING, id="sharding"),
    pytest.param(PLUGIN_ARGS, id="job-plugin"),
]


@pytest.mark.parametrize("manifest", VALID)
def test_a_valid_example_shape_is_accepted_without_warnings(vcctl, write, manifest):
    r = vcctl("validate", write("example.yaml", manifest))
    assert r.code == 0 and r.err == "" and r.out.endswith("valid.\n"), r


# --- refused: the webhook's denials, and kinds vclite does not run -----------------------------------

def webhook_job(tasks, policies="", min_available=1):
    """A job in the shape of Volcano's invalid_jobs: one task per (name, replicas)."""
    text = ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: test-job-webhook-disallow}\n"
            f"spec:\n  schedulerName: volcano\n  minAvailable: {min_available}\n")
    if policies:
        text += "  policies:\n" + policies
    text += "  tasks:\n"
    for name, replicas in tasks:
        text += (f"    - replicas: {replicas}\n      name: {name}\n      template:\n        spec:\n"
                 "          containers: [{image: nginx, name: nginx, command: ['true']}]\n"
                 "          restartPolicy: OnFailure\n")
    return text


def kind(api_version, kind_name, name="x"):
    return f"---\napiVersion: {api_version}\nkind: {kind_name}\nmetadata: {{name: {name}}}\nspec: {{}}\n"


RBAC = ("vclite has one user, who may do everything (no RBAC): leave this document out of a vclite run; "
        "a cluster needs it")
WORKLOAD = ("vclite runs no Kubernetes workload controller: write the pods as a Volcano Job "
            "(batch.volcano.sh/v1alpha1, one gang) or as Pods with schedulerName: volcano")

REFUSED = [
    pytest.param(webhook_job([("task-1", 1)], "    - {event: PodFailed, action: AbortJob}\n"
                                              "    - {event: PodFailed, action: RestartJob}\n"),
                 ["example.yaml:9: Job/test-job-webhook-disallow: spec.policies[1].event: "
                  "duplicate event PodFailed  across different policy"], id="invalid_jobs/duplicatedPolicyEvent"),
    pytest.param(webhook_job([("task-1", 1), ("task-1", 1)]),
                 ["example.yaml:15: Job/test-job-webhook-disallow: spec.tasks[1].name: duplicated task name task-1"],
                 id="invalid_jobs/duplicatedTaskName"),
    pytest.param(webhook_job([("task-1", 1), ("task-2", 1)], min_available=3),
                 ["example.yaml:6: Job/test-job-webhook-disallow: spec.minAvailable: "
                  "job 'minAvailable' should not be greater than total replicas in tasks"],
                 id="invalid_jobs/minAvailable"),
    pytest.param(kind("apps/v1", "Deployment", "deploy-with-volcano"),
                 ['example.yaml:3: document 1 (Deployment/deploy-with-volcano): kind: kind "Deployment" of apiVersion '
                  f'"apps/v1" is not served: {WORKLOAD}'], id="deployment/deployment"),
    pytest.param(kind("apps/v1", "ReplicaSet", "nginx"),
                 ['example.yaml:3: document 1 (ReplicaSet/nginx): kind: kind "ReplicaSet" of apiVersion "apps/v1" '
                  f"is not served: {WORKLOAD}"], id="kubecon-2019-china/drf,gang,node-selector,task-priority"),
    pytest.param(kind("rbac.authorization.k8s.io/v1", "Role", "r") + kind("rbac.authorization.k8s.io/v1",
                                                                          "RoleBinding", "b"),
                 ['example.yaml:3: document 1 (Role/r): kind: kind "Role" of apiVersion "rbac.authorization.k8s.io/v1" '
                  f"is not served: {RBAC}",
                  'example.yaml:8: document 2 (RoleBinding/b): kind: kind "RoleBinding" of apiVersion '
                  f'"rbac.authorization.k8s.io/v1" is not served: {RBAC}'], id="integrations/argo/mpi/rbac"),
    pytest.param(kind("argoproj.io/v1alpha1", "Workflow", "volcano-step-job"),
                 ['example.yaml:3: document 1 (Workflow/volcano-step-job): kind: kind "Workflow" of apiVersion '
                  '"argoproj.io/v1alpha1" is not served: Argo\'s controller runs it, not vclite: a JobFlow '
                  "(flow.volcano.sh/v1alpha1) runs a DAG of Volcano Jobs, `vcctl jobtemplate from-job` turns a Job "
                  "into its JobTemplate"], id="integrations/argo"),
    pytest.param(kind("sparkoperator.k8s.io/v1beta1", "SparkApplication", "spark-pi")
                 + kind("scheduling.incubator.k8s.io/v1alpha1", "PodGroup", "spark-pi-group"),
                 ['example.yaml:3: document 1 (SparkApplication/spark-pi): kind: kind "SparkApplication" of apiVersion '
                  '"sparkoperator.k8s.io/v1beta1" is not served: its operator runs it, not vclite: write the pods as '
                  "a Volcano Job (batch.volcano.sh/v1alpha1)",
                  'example.yaml:7: document 2 (PodGroup/spark-pi-group): apiVersion: kind PodGroup is not served as '
                  '"scheduling.incubator.k8s.io/v1alpha1": use scheduling.volcano.sh/v1beta1'],
                 id="kubecon-2019-china/spark-sample"),
    pytest.param("apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\nmetadata: {name: high-pri}\n"
                 "value: 1000\n",
                 ['example.yaml:1: document 1 (PriorityClass/high-pri): apiVersion: kind PriorityClass is not served '
                  'as "scheduling.k8s.io/v1beta1": use scheduling.k8s.io/v1'],
                 id="kubecon-2019-china/task-priority/high-priority"),
    pytest.param(TRAINING.replace('- command: ["/bin/bash", "-c", "true"]\n              image',
                                  "- image"),
                 ["example.yaml:18: Job/mindspore-cpu: spec.tasks[0].template.spec.containers[0].command: container "
                  '"train" has no command: vclite runs pods as local processes and cannot run an image\'s default '
                  "entrypoint"], id="job,nginx-without-command"),
]


@pytest.mark.parametrize("manifest, problems", REFUSED)
def test_a_refused_example_shape_says_why(vcctl, write, tmp_path, manifest, problems):
    path = write("example.yaml", manifest)
    for command in ("validate", "run"):
        args = [command, path] if command == "validate" else [command, "--workdir", tmp_path / "wd", path]
        r = vcctl(*args)
        lines = [ln.replace(str(path), "example.yaml") for ln in r.err.splitlines() if "problem(s) found" not in ln]
        assert r.code == 2 and lines == problems, r
    assert not (tmp_path / "wd").exists() or not any((tmp_path / "wd").rglob("*.log"))   # nothing ran


def test_an_unknown_pod_field_of_an_example_is_a_warning(vcctl, write):
    """task-priority/elastic-job.yaml writes `priorityClass` (not a PodSpec field): kept and named."""
    manifest = TRAINING.replace("        spec:\n          containers:",
                                "        spec:\n          priorityClass: high-pri\n          containers:")
    r = vcctl("validate", write("example.yaml", manifest))
    assert r.code == 0, r
    assert 'spec.tasks[0].template.spec.priorityClass: unknown field "priorityClass" (did you mean ' \
           '"priorityClassName"?): it is ignored' in r.err, r


# --- runs ---------------------------------------------------------------------------------------------

def test_an_mpi_shaped_gang_runs_to_completion(vcctl, write, tmp_path):
    """ssh + svc plugins, the master's TaskCompleted -> CompleteJob ends the job while the workers run."""
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, write("mpi.yaml", MPI))
    assert r.code == 0, r
    log = (tmp_path / "wd/default/lm-mpi-job-mpimaster-0/logs/mpimaster.log").read_text()
    assert log == "hosts: 127.0.0.1,127.0.0.1\n", log   # (the workers' DNS names, as a local process reaches them)


MISSING = "vclite-example-no-such-binary"


@pytest.mark.parametrize("command, says", [
    pytest.param(f'["{MISSING}", "start_fluid"]',
                 [f'(last run: StartError, exit code 128: exec: "{MISSING}": executable file not found in $PATH)'],
                 id="command-not-found"),
    pytest.param(f'["/bin/sh", "-c", "echo starting; {MISSING} --np 2"]',
                 ["(last run: exit code 127)", "    last lines of ", "      starting", MISSING, "not found"],
                 id="not-found-in-a-shell"),
])
def test_a_missing_binary_crash_loops_and_the_stopped_run_says_why(vcctl, write, tmp_path, command, says):
    """A binary of the example's image that this machine lacks: the container fails as a missing binary
    fails in a pod (StartError, exit 128; or the shell's 127) and restartPolicy OnFailure restarts it; the
    run stopped by --timeout says how its last run ended and shows its last log lines."""
    manifest = PADDLE.replace("[paddle_k8s, start_fluid]", command)
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 3, write("paddle.yaml", manifest))
    assert r.code == 1 and "stopped: timed out after 3s" in r.err, r
    [line] = [ln for ln in r.err.splitlines() if "vcjob default/ctr-volcano: pod ctr-volcano-pserver-0" in ln]
    assert "container pserver CrashLoopBackOff: back-off" in line and line.endswith(says[0]), r
    for text in says[1:]:
        assert text in r.err, r


def test_a_job_written_for_bigger_nodes_says_how_to_declare_them(vcctl, write, tmp_path):
    """The GPU example on this machine's one node (no GPU): stuck, with how to declare the cluster's nodes;
    with them, it runs."""
    path = write("gpu.yaml", GPU)
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, path)
    assert r.code == 1 and "stopped: no further progress is possible" in r.err, r
    assert "job needs nvidia.com/gpu 1 but the cluster can admit at most nvidia.com/gpu 0 more" in r.err, r
    assert "  the one node is this machine (cpu " in r.err and "no GPU); declare the nodes the manifest was written " \
           'for with --nodes, e.g. --nodes "1x(cpu=1,memory=1Gi,nvidia.com/gpu=1)" (at least that many nodes the ' \
           "size of the largest pod: they hold every pod of a waiting job at once)\n" in r.err, r
    r = vcctl("run", "--quiet", "--nodes", "1x(cpu=1,memory=1Gi,nvidia.com/gpu=1)", "--workdir", tmp_path / "wd2",
              "--timeout", 60, path)   # (the nodes suggested: the master asks for nothing, the worker's node holds it)
    assert r.code == 0, r


def test_declared_nodes_too_small_get_no_hint_about_this_machine(vcctl, write, tmp_path):
    r = vcctl("run", "--quiet", "--nodes", "1x(cpu=1,memory=1Gi)", "--workdir", tmp_path / "wd", "--timeout", 60,
              write("gpu.yaml", GPU))
    assert r.code == 1 and "nvidia.com/gpu 0 more" in r.err and "this machine" not in r.err, r


HOSTS_FILE = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf}
spec:
  minAvailable: 1
  schedulerName: volcano
  plugins: {svc: []}
  tasks:
    - replicas: 1
      name: worker
      template:
        spec:
          containers:
            - {name: tensorflow, image: example/tf, command: ["sh", "-c", "cat /etc/volcano/worker.host"]}
          restartPolicy: Never
"""


def test_the_svc_plugins_mount_is_at_its_path(vcctl, write, tmp_path):
    """Volcano's MPI and TensorFlow examples read /etc/volcano/*.host, the svc plugin's mount: the container sees
    it there (a mount namespace of its own: executor/mountview.py), the pods' names as 127.0.0.1."""
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "wd", "--timeout", 60,
              write("tf.yaml", HOSTS_FILE))
    assert r.code == 0, r
    assert (tmp_path / "wd/default/tf-worker-0/logs/tensorflow.log").read_text() == "127.0.0.1"


def test_a_log_naming_the_svc_plugins_mount_says_where_it_is_here(vcctl, write, tmp_path, monkeypatch):
    """Where the host cannot give a container its own view (here: turned off), the file is under the pod's
    directory, and the failure report says so under the log lines that name it."""
    monkeypatch.setenv("VCLITE_MOUNT_VIEW", "off")
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, write("tf.yaml", HOSTS_FILE))
    assert r.code == 1 and "vcjob default/tf Failed" in r.err, r
    assert "cat: /etc/volcano/worker.host: No such file or directory" in r.err, r
    assert "\n  note: the volume mounted at /etc/volcano is at $VC_POD_DIR/etc/volcano here (pods run as processes " \
           "on this machine's filesystem)\n" in r.err, r
    assert (tmp_path / "wd/default/tf-worker-0/etc/volcano/worker.host").read_text() == "127.0.0.1"   # (localnames.py)


BARE_POD = f"""\
# Volcano's deployment example's pod, written as a bare Pod for Volcano's scheduler
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations: {{scheduling.volcano.sh/queue-name: test}}
spec:
  schedulerName: volcano
  restartPolicy: OnFailure
  containers:
    - name: nginx
      image: nginx:latest
      command: ["sh", "-c", "echo serving; exec {MISSING} -g 'daemon off;'"]
      resources: {{requests: {{cpu: 300m}}}}
"""


def test_a_bare_pods_crash_loop_is_explained_too(vcctl, write, tmp_path):
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 3, write("queue.yaml", QUEUE),
              write("pod.yaml", BARE_POD))
    assert r.code == 1 and "stopped: timed out after 3s" in r.err, r
    [line] = [ln for ln in r.err.splitlines() if ln.startswith("  pod default/web: ")]
    assert "container nginx CrashLoopBackOff: back-off" in line and line.endswith("(last run: exit code 127)"), r
    assert "\n      serving\n" in r.err and f"{MISSING}: not found" in r.err, r


def test_an_example_directory_runs_as_kubectl_apply_f_dir_reads_it(vcctl, tmp_path):
    """Volcano's hierarchical-jobs/ holds jobs.yaml and queues.yaml: `vcctl run DIR` reads both (the jobs'
    queues are defined, whatever the order), as `kubectl apply -f DIR`; other files are skipped."""
    example = tmp_path / "hierarchical-jobs"
    example.mkdir()
    queues, jobs = HIERARCHY.split("---\napiVersion: batch.volcano.sh/v1alpha1", 1)
    (example / "queues.yaml").write_text(queues)
    (example / "jobs.yaml").write_text("apiVersion: batch.volcano.sh/v1alpha1" + jobs)
    (example / "README.md").write_text("# not a manifest\n")
    r = vcctl("validate", example)
    assert r.code == 0 and r.out == "3 object(s) valid.\n" and r.err == "", r
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, example)
    assert r.code == 0, r


HDRF_CONF = """\
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf, enableHierarchy: true}, {name: predicates}, {name: nodeorder}]
"""


def example_job(name, queue):
    """One vcjob of Volcano's example/hierarchical-jobs/jobs.yaml (six 0.5-cpu pods), with a command."""
    return f"""\
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  schedulerName: volcano
  policies: [{{event: PodEvicted, action: RestartJob}}]
  plugins: {{ssh: [], env: [], svc: []}}
  maxRetry: 5
  queue: {queue}
  tasks:
    - replicas: 6
      name: "default-nginx"
      template:
        metadata: {{name: web}}
        spec:
          schedulerName: volcano
          containers:
            - {{image: nginx, imagePullPolicy: IfNotPresent, name: nginx, command: [sleep, "0.2"],
               resources: {{requests: {{cpu: "0.5"}}}}}}
          restartPolicy: OnFailure
"""


def test_hierarchical_jobs_run_under_hierarchical_drf(vcctl, write, tmp_path):
    """The whole example (four queues in the tree root/{eng,sci}/{prod,dev}, a job in each) on a 4-cpu node with
    drf's `enableHierarchy: true`: it loads, validates and every job completes."""
    manifests = (hierarchy_queue("root-eng-prod", "root/eng/prod", "1/2/8")
                 + hierarchy_queue("root-eng-dev", "root/eng/dev", "1/2/2")
                 + hierarchy_queue("root-sci-prod", "root/sci/prod", "1/8/8")
                 + hierarchy_queue("root-sci-dev", "root/sci/dev", "1/8/2")
                 + "".join(example_job(f"{q}-job", f"root-{q}")
                           for q in ("eng-prod", "eng-dev", "sci-prod", "sci-dev")))
    path = write("hierarchical-jobs.yaml", manifests)
    r = vcctl("validate", path)
    assert r.code == 0 and r.out == "8 object(s) valid.\n", r
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, "--nodes", "1x(cpu=4,memory=8Gi)",
              "--scheduler-conf", write("hdrf.conf", HDRF_CONF), path)
    assert r.code == 0, r


PACKED = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: packed}
spec:
  minAvailable: 4
  schedulerName: volcano
  tasks:
    - {name: big, replicas: 1, template: {spec: {restartPolicy: Never, containers: [
        {name: c, image: busybox, command: ["true"], resources: {requests: {cpu: "200"}}}]}}}
    - {name: small, replicas: 3, template: {spec: {restartPolicy: Never, containers: [
        {name: c, image: busybox, command: ["true"], resources: {requests: {cpu: "50"}}}]}}}
"""


def test_the_nodes_suggested_are_as_few_as_hold_the_jobs_pods(vcctl, write, tmp_path):
    """A 200-cpu pod and three 50-cpu pods: two nodes of the largest pod's size hold them (not one per pod); the
    run on the nodes suggested succeeds."""
    path = write("packed.yaml", PACKED)
    r = vcctl("run", "--quiet", "--workdir", tmp_path / "wd", "--timeout", 60, path)
    assert r.code == 1 and 'e.g. --nodes "2x(cpu=200,memory=1Gi)" (at least that many nodes' in r.err, r
    r = vcctl("run", "--quiet", "--nodes", "2x(cpu=200,memory=1Gi)", "--workdir", tmp_path / "wd2", "--timeout", 60,
              path)
    assert r.code == 0, r
