"""ResourceQuota through a real `vcctl server` and the real kubectl: `get quota` and `describe quota`
as kube-apiserver's printers show them, a pod over the quota refused with 403 and kube's message,
`status.used` following the pods, a vcjob whose pods the quota refuses (FailedCreate), and a quota
whose names or quantities are wrong refused with each problem named."""
import json
import shutil
import time

import pytest

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: team}
spec:
  hard: {pods: "2", requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi}
"""


def pod(name, cpu, extra=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team}}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sleep", "600"]
    resources: {{requests: {{cpu: "{cpu}", memory: 100Mi}}, limits: {{cpu: "{cpu}", memory: 100Mi}}}}
{extra}"""


def wait_for(check, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def used(kubectl):
    return json.loads(kubectl("get", "quota", "compute", "-n", "team", "-o", "json").stdout)["status"]["used"]


def test_quota_get_describe_and_admission(kubectl, write):
    kubectl("create", "namespace", "team")
    kubectl("apply", "-f", write("quota.yaml", QUOTA))
    wait_for(lambda: "status" in json.loads(kubectl("get", "quota", "compute", "-n", "team", "-o", "json").stdout),
             "the controller's status")
    out = kubectl("get", "quota", "-n", "team").stdout.splitlines()
    assert out[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert "pods: 0/2, requests.cpu: 0/1, requests.memory: 0/1Gi   limits.cpu: 0/2, limits.memory: 0/2Gi" in out[1]
    kubectl("apply", "-f", write("small.yaml", pod("small", "500m")))
    wait_for(lambda: used(kubectl).get("requests.cpu") == "500m", "status.used")
    assert used(kubectl) == {"pods": "1", "requests.cpu": "500m", "requests.memory": "100Mi", "limits.cpu": "500m",
                             "limits.memory": "100Mi"}
    described = kubectl("describe", "quota", "compute", "-n", "team").stdout
    assert [line.split() for line in described.splitlines() if line.startswith(("requests.cpu", "pods"))] == \
        [["pods", "1", "2"], ["requests.cpu", "500m", "1"]]

    big = write("big.yaml", pod("big", "1"))
    out = kubectl("apply", "-f", big, check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (f'Error from server (Forbidden): error when creating "{big}": pods "big" is '
                                  'forbidden: exceeded quota: compute, requested: requests.cpu=1, '
                                  'used: requests.cpu=500m, limited: requests.cpu=1'), out.stderr
    assert kubectl("get", "pod", "big", "-n", "team", check=False).returncode == 1
    bare = write("bare.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: team}\nspec:\n"
                              "  containers: [{name: c, image: busybox, command: [\"true\"]}]\n")
    out = kubectl("apply", "-f", bare, check=False)
    assert ('pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: c; limits.memory for: c; '
            'requests.cpu for: c; requests.memory for: c') in out.stderr, out.stderr

    kubectl("delete", "pod", "small", "-n", "team", "--grace-period=0", "--force")
    wait_for(lambda: used(kubectl).get("pods") == "0", "the deleted pod's usage given back")


def test_a_vcjob_whose_pods_are_refused_records_failed_create(kubectl, write):
    kubectl("create", "namespace", "tight")
    kubectl("create", "quota", "one", "--hard=pods=1", "-n", "tight")
    job = write("job.yaml", """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: two, namespace: tight}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - name: t
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, command: ["sleep", "600"]}]
""")
    kubectl("apply", "-f", job)

    def warned():
        events = kubectl("get", "events", "-n", "tight", "--field-selector", "reason=FailedCreate", "-o", "json").stdout
        return any("exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1" in e["message"]
                   for e in json.loads(events)["items"])
    wait_for(warned, "the FailedCreate warning")
    pods = json.loads(kubectl("get", "pods", "-n", "tight", "-o", "json").stdout)["items"]
    assert len(pods) == 1


def test_a_quota_with_bad_names_or_quantities_is_refused(kubectl, write):
    bad = write("bad.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: bad}\nspec:\n"
                            "  hard: {pods: \"1.5\", foo: \"1\", cpu: \"-1\"}\n")
    out = kubectl("apply", "-f", bad, check=False)
    assert out.returncode == 1
    assert 'The ResourceQuota "bad" is invalid' in out.stderr, out.stderr
    for line in ('spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
                 'spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota',
                 'spec.hard[pods]: Invalid value: "1.5": must be an integer'):
        assert line in out.stderr, out.stderr
    assert kubectl("get", "quota", "bad", check=False).returncode == 1
