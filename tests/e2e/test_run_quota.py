"""`vcctl run` with a ResourceQuota that refuses a JobFlow's vcjob: the run waits while something it runs
may give room back, makes the vcjob as soon as there is room, and stops, naming the quota, when nothing can."""
from __future__ import annotations

import pytest

from tests import jobs_yaml

TEMPLATE_AND_FLOW = "\n---\n" + jobs_yaml.template("a", ["true"]) + """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows: [{name: a}]
"""


def quota(jobs: int) -> str:
    return f"""apiVersion: v1
kind: ResourceQuota
metadata: {{name: jobs}}
spec:
  hard: {{count/jobs.batch.volcano.sh: "{jobs}"}}
"""


def test_a_vcjob_no_room_will_come_for_stops_the_run_at_once_with_the_quota_message(vcctl, write):
    path = write("refused.yaml", quota(0) + TEMPLATE_AND_FLOW)
    r = vcctl("run", "--timeout", "60", path)
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r   # (not the timeout: nothing could give room)
    assert 'JobFlow default/f: flow a: jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: jobs, ' \
           'requested: count/jobs.batch.volcano.sh=1, used: count/jobs.batch.volcano.sh=0' in r.err, r
    assert "internal:" not in r.err, r


def test_a_refused_vcjob_is_made_once_a_finished_job_gives_its_room_back(vcctl, write):
    holder = """
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: holder}
spec:
  minAvailable: 1
  schedulerName: volcano
  ttlSecondsAfterFinished: 0
  tasks:
  - name: t
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, command: ["sleep", "1"]}]
"""
    path = write("room.yaml", quota(1) + holder + TEMPLATE_AND_FLOW)
    r = vcctl("run", "--timeout", "60", path)
    assert r.code == 0, r
    assert "succeeded: " in r.err and "JobFlow default/f" in r.err, r


def cpu_job(name: str, cpu: str, command: str) -> str:
    return "---\n" + jobs_yaml.vcjob(name, ["sh", "-c", command], cpu=cpu)


CPU_QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: small}
spec:
  hard: {requests.cpu: "1"}
"""


def test_a_vcjob_whose_pods_no_room_will_come_for_stops_the_run_at_once(vcctl, write):
    """Its pods refused (not the vcjob): before, the run waited out the vcjob's retries (2-3 minutes) and said
    only `Terminated`; now it stops at once with the quota's words, and warns once."""
    path = write("pods.yaml", CPU_QUOTA + cpu_job("big", "2", "true"))
    r = vcctl("run", "--timeout", "60", path)
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r
    assert 'vcjob default/big: FailedCreate: Error creating pods: [big-t-0: pods "big-t-0" is forbidden: ' \
           "exceeded quota: small, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1]" in r.err
    assert r.err.count("sync default/big failed") == 1, r   # (its retries are not a warning each)


def test_a_vcjob_whose_pods_wait_for_room_gets_them_when_a_running_job_ends(vcctl, write):
    path = write("wait.yaml", CPU_QUOTA + cpu_job("first", "1", "sleep 1") + cpu_job("second", "1", "true"))
    r = vcctl("run", "--timeout", "60", path)
    assert r.code == 0, r
    assert "succeeded: vcjob default/first Completed, vcjob default/second Completed" in r.err, r


PODGROUP_QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: no-groups}
spec:
  hard: {count/podgroups.scheduling.volcano.sh: "0"}
"""
BARE_POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers: [{name: main, image: busybox, command: ["true"]}]
"""
GROUP_REFUSED = ('forbidden: exceeded quota: no-groups, requested: count/podgroups.scheduling.volcano.sh=1, '
                 'used: count/podgroups.scheduling.volcano.sh=0, limited: count/podgroups.scheduling.volcano.sh=0')


@pytest.mark.parametrize("objects, line, failing", [
    pytest.param(cpu_job("j", "1", "true"), "  vcjob default/j: PodGroupError: Failed to create PodGroup, err: "
                 'podgroups.scheduling.volcano.sh "j-', "sync default/j failed", id="vcjob"),
    pytest.param(BARE_POD, '  pod default/p: PodGroup not created: podgroups.scheduling.volcano.sh "podgroup-',
                 "sync default/p failed", id="bare-pod"),
])
def test_a_podgroup_a_quota_refuses_is_named_when_the_run_stops(vcctl, write, objects, line, failing):
    """The PodGroup of a vcjob (Volcano's PodGroupError Warning) or of a bare pod (the PodGroup controller's
    refusal) a ResourceQuota refuses: the run stops at once and says which quota and why, in kube's words (before,
    `pod is Pending`; a vcjob's run waited out its 15 retries, then said `vcjob is Pending`)."""
    path = write("groups.yaml", PODGROUP_QUOTA + objects)
    r = vcctl("run", "--timeout", "60", path)
    assert r.code == 1, r
    assert "stopped: no further progress is possible" in r.err, r
    reported = [x for x in r.err.splitlines() if x.startswith(line)]
    assert len(reported) == 1 and reported[0].endswith(GROUP_REFUSED), r
    assert r.err.count(failing) == 1, r   # (its retries are not a warning each)
