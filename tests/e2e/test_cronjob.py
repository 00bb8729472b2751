"""A CronJob through the real `vcctl run` and `vcctl validate`: vcjobs at their scheduled times, named,
annotated and owned as Volcano makes them; a run ending at --timeout is not a failure unless a vcjob
failed (Volcano's test/e2e/cronjob/cronjob_basic.go scenarios that fit a few seconds)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def cronjob(name: str = "cron", schedule: str = "@every 1s", command: str = "true", **spec) -> str:
    extra = "".join(f"  {k}: {v}\n" for k, v in spec.items())
    return f"""apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata:
  name: {name}
spec:
  schedule: "{schedule}"
{extra}  jobTemplate:
    metadata:
      labels: {{team: a}}
    spec:
      tasks:
        - name: t
          replicas: 1
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: c
                  image: busybox
                  command: ["sh", "-c", "{command}"]
"""


def items(r, kind):
    return [o for o in r.json()["items"] if o["kind"] == kind]


def test_scheduled_vcjobs_run_until_the_timeout(vcctl, write, tmp_path):
    r = vcctl("run", "-o", "json", "--timeout", "4", "--workdir", tmp_path / "w", write("c.yaml", cronjob()))
    assert r.code == 0, r
    assert "stopped: timed out after 4s, as a run with a CronJob ends; nothing failed" in r.err, r
    (cj,) = items(r, "CronJob")
    jobs = items(r, "Job")
    assert jobs and all(j["status"]["state"]["phase"] == "Completed" for j in jobs), r
    job = jobs[0]
    md = job["metadata"]
    minutes = md["name"].removeprefix("cron-")
    assert minutes.isdigit()
    stamp = md["annotations"]["volcano.sh/cronjob-scheduled-timestamp"]
    assert stamp.endswith("Z") and md["labels"] == {"team": "a"}
    assert md["ownerReferences"][0] | {"uid": ""} == {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                                                      "name": "cron", "uid": "", "controller": True,
                                                      "blockOwnerDeletion": True}
    assert cj["status"]["lastScheduleTime"] and cj["status"]["lastSuccessfulTime"], cj
    assert cj["spec"]["concurrencyPolicy"] == "Allow" and cj["spec"]["successfulJobsHistoryLimit"] == 3


def test_a_failed_scheduled_vcjob_fails_the_run(vcctl, write, tmp_path):
    r = vcctl("run", "--timeout", "4", "--workdir", tmp_path / "w", write("c.yaml", cronjob(command="exit 3")))
    assert r.code == 1, r
    assert "Failed" in r.err, r


def test_a_suspended_cronjob_runs_nothing(vcctl, write, tmp_path):
    r = vcctl("run", "-o", "json", "--timeout", "3", write("c.yaml", cronjob(suspend="true")))
    assert r.code == 0, r
    assert items(r, "Job") == [], r


def test_validate_names_file_line_and_field(vcctl, write):
    path = write("bad.yaml", cronjob(schedule="TZ=UTC 0 1 * * *", timeZone="Local", concurrencyPolicy="Never"))
    r = vcctl("validate", path)
    assert r.code == 2, r
    assert (f"{path}:6: CronJob/cron: spec.schedule: schedule should not contain TZ or CRON_TZ, TZ should only be "
            "set in the timeZone field") in r.err, r
    assert f"{path}:7: CronJob/cron: spec.timeZone: timeZone can't be Local" in r.err, r
    assert f'{path}:8: CronJob/cron: spec.concurrencyPolicy: Unsupported value: "Never"' in r.err, r
    assert vcctl("validate", write("good.yaml", cronjob())).code == 0


def test_kubectl_against_a_server(tmp_path):
    """`kubectl get cronvj` and the full name, `explain`, a vcjob made and owned, a bad schedule refused in
    the webhook's words, suspend by patch, and deletion taking the vcjobs with it."""
    import shutil

    from tests import vcctl_server
    from tests.e2e.test_server_kubectl import wait_for
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        kubectl = vcctl_server.kubectl_runner(srv.kubeconfig, tmp_path / "cache")
        assert kubectl("apply", "-f", "-", input=cronjob()).stdout == "cronjob.batch.volcano.sh/cron created\n"
        assert kubectl("get", "cronvj", "-o", "name").stdout == "cronjob.batch.volcano.sh/cron\n"
        assert kubectl("get", "cronjobs.batch.volcano.sh").stdout.split()[:3] == ["NAME", "AGE", "cron"]
        out = wait_for(kubectl, ["get", "vcjob", "-l", "team=a", "-o",
                                 "jsonpath={.items[0].metadata.ownerReferences[0].name}"],
                       lambda o: o.stdout == "cron", "a vcjob owned by the CronJob")
        assert out.returncode == 0
        assert "robfig/cron" in kubectl("explain", "cronvj.spec.schedule").stdout
        bad = kubectl("patch", "cronvj", "cron", "--type=merge", "-p", '{"spec":{"schedule":"bogus"}}', check=False)
        assert bad.returncode == 1 and "spec.schedule: schedule is not a valid cron expression" in bad.stderr
        kubectl("patch", "cronvj", "cron", "--type=merge", "-p", '{"spec":{"suspend":true}}')
        assert kubectl("get", "cronvj", "cron", "-o", "jsonpath={.spec.suspend}").stdout == "true"
        kubectl("delete", "cronvj", "cron")
        wait_for(kubectl, ["get", "vcjob", "-l", "team=a", "-o", "name"], lambda o: o.stdout == "",
                 "the CronJob's vcjobs to be deleted with it")
        vcctl_server.stop_cleanly(srv)
