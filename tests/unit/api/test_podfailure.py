"""podfailure: why a pod, or a vcjob through its pods, failed — one wording for the CLI and the JobFlow controller."""
import pytest

from vclite.api import podfailure


def pod(name, phase="Failed", exits=(), init_exits=(), reason="", message="", finished="2026-01-01T00:00:05Z"):
    def statuses(exits):
        return [{"name": c, "state": {"terminated": {"exitCode": code, "reason": why, "finishedAt": finished,
                                                     **({"message": text} if text else {})}}}
                for c, code, why, text in exits]
    status = {"phase": phase, "containerStatuses": statuses(exits), "initContainerStatuses": statuses(init_exits)}
    if reason:
        status.update(reason=reason, message=message)
    return {"metadata": {"name": name}, "status": status}


JOB = {"metadata": {"name": "j"}, "status": {"state": {"phase": "Failed"}}}


@pytest.mark.parametrize("job, pods, told", [
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 3, "Error", "")])],
                 "pod j-main-0: container main exited with code 3 (Error)", id="exit-code"),
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 137, "OOMKilled", "")])],
                 "pod j-main-0: container main exited with code 137 (OOMKilled)", id="oom"),
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 2, "Error", "CUDA out of memory\n  at step 3\n")])],
                 "pod j-main-0: container main exited with code 2 (Error): CUDA out of memory at step 3",
                 id="termination-message-on-one-line"),
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 2, "Error", "x" * 300)])],
                 "pod j-main-0: container main exited with code 2 (Error): " + "x" * 200 + "…", id="long-message"),
    pytest.param(JOB, [pod("j-main-0", init_exits=[("setup", 4, "", "")])],
                 "pod j-main-0: init container setup exited with code 4 (Error)", id="init-container"),
    pytest.param(JOB, [pod("j-main-0", reason="DeadlineExceeded", message="Pod was active too long")],
                 "pod j-main-0: DeadlineExceeded: Pod was active too long", id="pod-reason"),
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 137, "ProcessLost", "its process was lost")],
                           reason="ProcessLost", message="the server restarted")],
                 "pod j-main-0: ProcessLost: the server restarted", id="a-container-its-pods-reason-ended-once"),
    pytest.param(JOB, [pod("j-main-0", exits=[("main", 137, "Error", "")], reason="DeadlineExceeded", message="m")],
                 "pod j-main-0: DeadlineExceeded: m; pod j-main-0: container main exited with code 137 (Error)",
                 id="pod-reason-and-another-exit"),
    pytest.param(JOB, [pod("j-w-1", exits=[("c", 1, "Error", "")], finished="2026-01-01T00:00:09Z"),
                       pod("j-w-0", exits=[("c", 5, "Error", "")], finished="2026-01-01T00:00:02Z")],
                 "pod j-w-0: container c exited with code 5 (Error); pod j-w-1: container c exited with code 1 (Error)",
                 id="first-to-fail-first"),
    pytest.param(JOB, [pod(f"j-w-{i}", exits=[("c", 1, "Error", "")]) for i in range(5)],
                 "; ".join(f"pod j-w-{i}: container c exited with code 1 (Error)" for i in range(3)) + " (+2 more)",
                 id="three-then-a-count"),
    pytest.param(JOB, [pod("j-w-0", phase="Succeeded", exits=[("c", 137, "Error", "")])],
                 "pod j-w-0: container c exited with code 137 (Error)", id="stopped-by-its-job"),
    pytest.param({"metadata": {"name": "j"}, "status": {"state": {"phase": "Failed", "reason": "PodEvicted"}}}, [],
                 "PodEvicted", id="no-pod-the-state"),
    pytest.param(JOB, [], "", id="nothing-says"),
    pytest.param({**JOB, "spec": {"maxRetry": 2}, "status": {**JOB["status"], "retryCount": 2}},
                 [pod("j-main-0", exits=[("main", 3, "Error", "")])],
                 "pod j-main-0: container main exited with code 3 (Error) (after 2 retries, maxRetry 2)", id="retries"),
])
def test_job_failure(job, pods, told):
    assert podfailure.job_failure(job, pods) == told
