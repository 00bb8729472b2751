"""PodRunner against real processes: phases, restarts, env, volumes, logs, kill, termination messages."""
import asyncio
import os
import pathlib
import time
import uuid

import pytest

from vclite.api import core
from vclite.executor import envvars, runner
from vclite.lib import clock


def container(name, script, **extra):
    return {"name": name, "image": "busybox", "command": ["sh", "-c", script], **extra}


def make_pod(containers, init=(), restart="Never", **spec):
    """A pod with a uid of its own: a runner kills every process of the host its pod's uid marks (strays.py),
    a test session running at the same time elsewhere included."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "uid": f"uid-{uuid.uuid4()}", "labels": {"app": "demo"}},
            "spec": {"nodeName": "local", "restartPolicy": restart, "containers": list(containers),
                     "initContainers": list(init), **spec}}


def test_each_pod_made_here_has_a_uid_of_its_own():
    """(with one uid for all, a pod stopped here killed the processes of this file's pods that another checkout's
    test session ran at the same moment: their owner marks were the same)"""
    assert make_pod([])["metadata"]["uid"] != make_pod([])["metadata"]["uid"]


def new_runner(tmp_path, pod, config_maps=None, changes=None):
    return runner.PodRunner(pod, tmp_path / "ns" / "p", config_maps or {}, clock.RealClock(),
                            (changes if changes is not None else []).append, restart_backoff=0.05)


def run(tmp_path, pod, config_maps=None):
    r = new_runner(tmp_path, pod, config_maps)
    asyncio.run(r.run())
    return r


def status_of(r, name):
    return next(c.to_status() for c in r.init + r.main if c.name == name)


@pytest.mark.parametrize("script, restart, phase, exit_code, reason, restarts", [
    pytest.param("exit 0", "Never", core.PodPhase.SUCCEEDED, 0, "Completed", 0, id="true-succeeds"),
    pytest.param("exit 3", "Never", core.PodPhase.FAILED, 3, "Error", 0, id="exit-3-fails"),
    pytest.param("kill -9 $$$$", "Never", core.PodPhase.FAILED, 137, "Error", 0,
                 id="killed-by-signal-dollar-escaped"),
    pytest.param('[ -e "$VC_POD_DIR/marker" ] && exit 0; touch "$VC_POD_DIR/marker"; exit 1', "OnFailure",
                 core.PodPhase.SUCCEEDED, 0, "Completed", 1, id="onfailure-restarts-then-succeeds"),
    pytest.param('n=$(cat "$VC_POD_DIR/n" 2>/dev/null || echo 0); echo $((n+1)) > "$VC_POD_DIR/n"; [ $n -ge 2 ]',
                 "OnFailure", core.PodPhase.SUCCEEDED, 0, "Completed", 2, id="onfailure-two-restarts"),
    pytest.param('[ -e "$VC_POD_DIR/marker" ] && exit 0; touch "$VC_POD_DIR/marker"; exit 1', "Never",
                 core.PodPhase.FAILED, 1, "Error", 0, id="never-does-not-restart"),
])
def test_exit_codes_phases_and_restarts(tmp_path, script, restart, phase, exit_code, reason, restarts):
    r = run(tmp_path, make_pod([container("main", script)], restart=restart))
    assert r.phase() == phase
    st = status_of(r, "main")
    assert st["state"]["terminated"]["exitCode"] == exit_code
    assert st["state"]["terminated"]["reason"] == reason
    assert st["restartCount"] == restarts
    assert st["ready"] is False
    if restarts:
        assert st["lastState"]["terminated"]["exitCode"] == 1
    assert {"startedAt", "finishedAt"} <= set(st["state"]["terminated"])


def test_one_failed_container_fails_the_pod_after_all_end(tmp_path):
    r = run(tmp_path, make_pod([container("ok", "exit 0"), container("bad", "sleep 0.1; exit 4")]))
    assert r.phase() == core.PodPhase.FAILED
    assert [c.exit_code for c in r.main] == [0, 4]


def test_env_fieldrefs_configmap_and_expansion(tmp_path):
    env = [{"name": "A", "value": "alpha"},
           {"name": "B", "value": "$(A)-beta"},
           {"name": "ESC", "value": "$$(A)"},
           {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
           {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
           {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
           {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
           {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
           {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "greeting"}}}]
    c = {"name": "main", "env": env,
         "command": ["sh", "-c", 'echo "$* $ESC $POD $NS $APP $NODE $IP $CM" > "$VC_POD_DIR/out"', "sh"],
         "args": ["$(B)", "$(NOPE)"]}
    r = run(tmp_path, make_pod([c]), {"cfg": {"data": {"greeting": "hello"}}})
    assert r.phase() == core.PodPhase.SUCCEEDED
    out = (tmp_path / "ns" / "p" / "out").read_text()
    assert out == "alpha-beta $(NOPE) $(A) p ns demo local 127.0.0.1 hello\n"


def test_missing_configmap_is_a_config_error(tmp_path):
    c = container("main", "true", env=[{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}])
    r = new_runner(tmp_path, make_pod([c]))
    with pytest.raises(envvars.ConfigError, match='configmap "cfg" not found'):
        r.prepare()


def test_no_command_is_refused(tmp_path):
    r = new_runner(tmp_path, make_pod([{"name": "main", "image": "busybox", "args": ["x"]}]))
    with pytest.raises(runner.NoCommandError) as ei:
        r.prepare()
    assert ei.value.reason == envvars.NO_COMMAND
    assert "cannot run an image's entrypoint" in ei.value.message


def test_logs_capture_stdout_and_stderr_the_current_run_and_the_one_before(tmp_path):
    script = 'n=$(cat "$VC_POD_DIR/n" 2>/dev/null || echo 0); echo "out $n"; echo "err $n" >&2; ' \
             'echo $((n + 1)) > "$VC_POD_DIR/n"; [ "$n" = 2 ]'
    run(tmp_path, make_pod([container("main", script)], restart="OnFailure"))
    logs = tmp_path / "ns" / "p" / "logs"
    assert (logs / "main.log").read_text() == "out 2\nerr 2\n"
    assert (logs / "main.previous.log").read_text() == "out 1\nerr 1\n"   # (run 0's is gone, as on a node)


def test_a_pod_made_again_under_its_name_starts_without_the_old_ones_logs(tmp_path):
    run(tmp_path, make_pod([container("main", "echo first; echo gone > $TERMINATION_MESSAGE_PATH")]))
    logs = tmp_path / "ns" / "p" / "logs"
    (logs / "main.previous.log").write_text("older\n")
    r = run(tmp_path, make_pod([container("main", "echo second; exit 3")]))
    assert (logs / "main.log").read_text() == "second\n"
    assert not (logs / "main.previous.log").exists()
    assert "message" not in status_of(r, "main")["state"]["terminated"]   # not the old pod's message


def test_init_containers_run_first_in_order(tmp_path):
    record = 'echo {} >> "$VC_POD_DIR/order"'
    pod = make_pod([container("main", record.format("main"))],
                   init=[container("init-a", record.format("a")), container("init-b", record.format("b"))])
    r = run(tmp_path, pod)
    assert r.phase() == core.PodPhase.SUCCEEDED
    assert (tmp_path / "ns" / "p" / "order").read_text() == "a\nb\nmain\n"
    assert [status_of(r, n)["state"]["terminated"]["reason"] for n in ("init-a", "init-b")] == ["Completed"] * 2


def test_failed_init_container_with_never_fails_the_pod_and_skips_containers(tmp_path):
    pod = make_pod([container("main", 'touch "$VC_POD_DIR/ran"')], init=[container("init", "exit 5")])
    r = run(tmp_path, pod)
    assert r.phase() == core.PodPhase.FAILED
    assert status_of(r, "init")["state"]["terminated"]["exitCode"] == 5
    assert status_of(r, "main")["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert not (tmp_path / "ns" / "p" / "ran").exists()


def test_configmap_volume_is_materialized_under_the_pod_dir(tmp_path):
    pod = make_pod([container("main", 'cp "$VC_POD_DIR/etc/volcano/worker.host" "$VC_POD_DIR/copy"',
                              volumeMounts=[{"name": "hosts", "mountPath": "/etc/volcano"}])],
                   volumes=[{"name": "hosts", "configMap": {"name": "job-svc"}}])
    r = run(tmp_path, pod, {"job-svc": {"data": {"worker.host": "job-worker-0.job\njob-worker-1.job"}}})
    assert r.phase() == core.PodPhase.SUCCEEDED
    assert (tmp_path / "ns" / "p" / "copy").read_text() == "job-worker-0.job\njob-worker-1.job"


@pytest.mark.parametrize("script, extra", [
    pytest.param('cat etc/volcano/worker.host > copy', {}, id="mount-from-the-pod-dir"),
    pytest.param('cat "$VC_POD_DIR/etc/volcano/worker.host" > "$VC_POD_DIR/copy"',
                 {"workingDir": "/no/such/dir/vclite-test"}, id="vc-pod-dir-from-another-working-dir"),
])
def test_a_relative_pod_dir_still_gives_working_mounts_and_vc_pod_dir(tmp_path, monkeypatch, script, extra):
    """`vcctl run --workdir wd`: the volume's symlink and $VC_POD_DIR must not be relative to the wrong place."""
    monkeypatch.chdir(tmp_path)
    pod = make_pod([container("main", script, volumeMounts=[{"name": "hosts", "mountPath": "/etc/volcano"}], **extra)],
                   volumes=[{"name": "hosts", "configMap": {"name": "job-svc"}}])
    r = runner.PodRunner(pod, pathlib.Path("wd") / "ns" / "p", {"job-svc": {"data": {"worker.host": "w-0.job"}}},
                         clock.RealClock(), [].append, restart_backoff=0.05)
    asyncio.run(r.run())
    assert r.phase() == core.PodPhase.SUCCEEDED, (tmp_path / "wd/ns/p/logs/main.log").read_text()
    assert (tmp_path / "wd/ns/p/copy").read_text() == "w-0.job"


def test_working_dir_maps_into_the_pod_dir_when_absent_on_the_host(tmp_path):
    run(tmp_path, make_pod([container("main", "pwd > here", workingDir="/no/such/dir/vclite-test")]))
    assert (tmp_path / "ns" / "p" / "no/such/dir/vclite-test/here").read_text().strip() == \
        str(tmp_path / "ns" / "p" / "no/such/dir/vclite-test")


@pytest.mark.parametrize("extra, script, message", [
    pytest.param({}, 'printf "all good" > "$TERMINATION_MESSAGE_PATH"; exit 2', "all good", id="message-file"),
    pytest.param({"terminationMessagePolicy": "FallbackToLogsOnError"}, "echo boom; exit 1", "boom",
                 id="fallback-to-logs"),
    pytest.param({}, "echo boom; exit 1", None, id="no-fallback-by-default"),
    pytest.param({}, '{ printf "head"; head -c 5000 /dev/zero | tr "\\0" x; printf "tail"; } > "$TERMINATION_MESSAGE_PATH"',
                 "x" * 4092 + "tail", id="its-last-4096-bytes-as-the-kubelet"),
])
def test_termination_message(tmp_path, extra, script, message):
    r = run(tmp_path, make_pod([container("main", script, **extra)]))
    assert status_of(r, "main")["state"]["terminated"].get("message") == message


@pytest.mark.parametrize("program, message", [
    pytest.param("/nonexistent/vclite-binary",
                 'exec: "/nonexistent/vclite-binary": stat /nonexistent/vclite-binary: no such file or directory',
                 id="missing-path"),
    pytest.param("vclite-no-such-binary", 'exec: "vclite-no-such-binary": executable file not found in $PATH',
                 id="not-in-path"),
])
def test_start_error_for_a_missing_executable(tmp_path, program, message):
    """A binary of the image this machine lacks fails as in a pod: StartError, exit 128, runc's words, and the
    kubelet's Warning Event `Failed` (no `Started`)."""
    events = []
    r = runner.PodRunner(make_pod([{"name": "main", "command": [program]}]), tmp_path / "ns" / "p", {},
                         clock.RealClock(), [].append, on_event=lambda *e: events.append(e))
    asyncio.run(r.run())
    term = status_of(r, "main")["state"]["terminated"]
    assert (term["exitCode"], term["reason"], term["message"]) == (128, "StartError", message)
    assert r.phase() == core.PodPhase.FAILED
    assert events == [("spec.containers{main}", "Warning", "Failed", f"Error: {message}")]


@pytest.mark.parametrize("error, message", [
    pytest.param(PermissionError(13, "Permission denied", "./run.sh"), 'exec: "./run.sh": permission denied',
                 id="not-executable"),
    pytest.param(OSError(8, "Exec format error", "./run.sh"), 'exec: "./run.sh": exec format error',
                 id="other-error"),
    pytest.param(FileNotFoundError(2, "No such file or directory", "/gone/dir"),
                 "failed to start './run.sh': No such file or directory: /gone/dir", id="another-file"),
])
def test_start_error_message(error, message):
    assert runner.start_error_message("./run.sh", error) == message


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def _wait_until(cond) -> None:
    for _ in range(500):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


@pytest.mark.parametrize("script, grace, exit_code", [
    pytest.param('sleep 100 & echo $! > "$VC_POD_DIR/child.pid"; sleep 100', 5.0, 143, id="sigterm-kills-group"),
    pytest.param('trap "" TERM; sleep 100 & echo $! > "$VC_POD_DIR/child.pid"; sleep 100', 0.2, 137,
                 id="sigkill-after-grace"),
])
def test_stop_kills_the_whole_process_group(tmp_path, script, grace, exit_code):
    changes = []
    r = new_runner(tmp_path, make_pod([container("main", script)], restart="Always"), changes=changes)

    async def scenario():
        task = asyncio.create_task(r.run())
        pid_file = tmp_path / "ns" / "p" / "child.pid"
        try:
            await _wait_until(lambda: r.phase() == core.PodPhase.RUNNING and pid_file.exists() and pid_file.read_text())
            assert r.alive() == 1
            await r.stop(grace=grace)
        finally:
            await r.stop(grace=0)  # a no-op after the stop above; cleans up if an assertion failed
        await task
        return int(pid_file.read_text())

    grandchild = asyncio.run(scenario())
    for _ in range(1000):  # the orphan is killed at once; wait (up to ~10 s on a loaded machine) for it to go
        if _dead(grandchild):
            break
        time.sleep(0.01)
    assert _dead(grandchild)
    assert r.finished and r.alive() == 0
    assert status_of(r, "main")["state"]["terminated"]["exitCode"] == exit_code
    assert status_of(r, "main")["restartCount"] == 0
    assert r.phase() == core.PodPhase.FAILED
    assert set(changes) == {"ns/p"}


def test_always_restarts_even_after_success_until_stopped(tmp_path):
    r = new_runner(tmp_path, make_pod([container("main", 'echo x >> "$VC_POD_DIR/runs"')], restart="Always"))

    async def scenario():
        task = asyncio.create_task(r.run())
        runs = tmp_path / "ns" / "p" / "runs"
        try:
            await _wait_until(lambda: runs.exists() and len(runs.read_text().split()) >= 2)
            assert r.phase() == core.PodPhase.RUNNING
        finally:
            await r.stop(grace=1)
        await task

    asyncio.run(scenario())
    assert status_of(r, "main")["restartCount"] >= 1
    assert r.phase() == core.PodPhase.SUCCEEDED  # every run exited 0


@pytest.mark.parametrize("before, made", [
    pytest.param([], True, id="first-pod-of-its-namespace"),
    pytest.param(["ns"], True, id="new-pod"),
    pytest.param(["ns", "ns/pod"], False, id="pod-dir-left-by-an-earlier-run"),
    pytest.param(["ns", "ns/pod", "ns/pod/logs"], False, id="pod-dir-and-logs-left"),
])
def test_make_pod_dirs(tmp_path, before, made):
    for d in before:
        (tmp_path / d).mkdir()
    pod_dir = tmp_path / "ns" / "pod"
    assert runner.make_pod_dirs(pod_dir) is made
    assert (pod_dir / "logs").is_dir()


def test_make_pod_dirs_refuses_a_file_in_the_way(tmp_path):
    (tmp_path / "ns").mkdir()
    (tmp_path / "ns" / "pod").write_text("not a directory")
    with pytest.raises(FileExistsError):
        runner.make_pod_dirs(tmp_path / "ns" / "pod")


def test_a_restart_does_not_report_the_run_befores_termination_message(tmp_path):
    script = '[ -e "$VC_POD_DIR/m" ] && exit 0; touch "$VC_POD_DIR/m"; echo first-run > $TERMINATION_MESSAGE_PATH; exit 1'
    r = run(tmp_path, make_pod([container("main", script)], restart="OnFailure"))
    st = status_of(r, "main")
    assert st["restartCount"] == 1 and st["state"]["terminated"]["exitCode"] == 0
    assert "message" not in st["state"]["terminated"]
    assert st["lastState"]["terminated"]["message"] == "first-run\n"


def test_exec_runs_in_the_containers_context_and_ends_with_it(tmp_path):
    """kubectl exec: the command gets the container's env and working directory; not before the
    container runs, nor in a container that does not; what it left running ends with the container."""
    from vclite.executor import podexec
    from tests.unit.executor.test_podexec import alive, drain
    pod = make_pod([container("main", 'while [ ! -e "$VC_POD_DIR/stop" ]; do sleep 0.02; done'),
                    container("side", "exit 0")],
                   restartPolicy="Never")
    pod["spec"]["containers"][0]["env"] = [{"name": "MY_ENV", "value": "set-in-the-spec"}]

    async def go():
        r = new_runner(tmp_path, pod)
        assert r.exec_problem("main") == 'container not found ("main")'   # (nothing runs yet)
        task = asyncio.create_task(r.run())
        while r.alive() < 1 or r.exec_problem("main"):
            await asyncio.sleep(0.01)
        s = await r.exec("main", ["sh", "-c", "echo $MY_ENV; pwd; sleep 60 & echo $!"], stdin=False, stdout=True,
                         stderr=False, tty=False)
        line = lambda: s.outputs[0][1].readline()   # noqa: E731
        env, cwd, left = (await line()).strip(), (await line()).strip(), int(await line())
        while r.alive() > 1:   # (side ends)
            await asyncio.sleep(0.01)
        with pytest.raises(podexec.ExecError, match=r'container not found \("side"\)'):
            await r.exec("side", ["true"], stdin=False, stdout=True, stderr=False, tty=False)
        assert alive(left, settle=0)   # (left running by an exec that ended: it stays while the container runs)
        (r.pod_dir / "stop").touch()
        await task
        _, rc = await drain(s)
        return env, cwd, left, rc
    env, cwd, left, rc = asyncio.run(asyncio.wait_for(go(), 30))
    assert (env, cwd, rc) == (b"set-in-the-spec", str(tmp_path / "ns" / "p").encode(), 0)
    assert not alive(left)


def test_attach_follows_a_running_container_and_writes_its_stdin(tmp_path):
    """kubectl attach: the output from the attach on (not the history), the container's stdin (`stdin:
    true`: a pipe kept open between clients; without it, /dev/null), the end with the container's run;
    not before the container runs, nor after."""
    from vclite.executor import podexec
    from tests.unit.executor.test_podattach import read_to_end, read_until
    pod = make_pod([container("main", "echo before; while read l; do echo got $l; done; echo stdin-closed",
                              stdin=True),
                    container("side", 'read x; echo "side read [$x]"; while [ ! -e "$VC_POD_DIR/stop" ]; do '
                                      'sleep 0.02; done')])

    async def go():
        r = new_runner(tmp_path, pod)
        assert r.attach_problem("main") == "container main not found in pod p_ns"   # (nothing runs yet)
        task = asyncio.create_task(r.run())
        log = r.pod_dir / "logs" / "main.log"
        while r.alive() < 2 or b"before" not in (log.read_bytes() if log.exists() else b""):
            await asyncio.sleep(0.01)
        a = r.attach("main", stdin=True, output=podexec.STDOUT)
        a.stdin.write(b"hello\n")
        first = await read_until(a, b"got hello\n")
        a.end_stdin()   # (no stdinOnce: the client is detached, the container's stdin stays open)
        assert await a.read() == b"" and not r._attached["main"]
        b = r.attach("main", stdin=True, output=podexec.STDOUT)
        b.stdin.write(b"again\n")
        await read_until(b, b"got again\n")
        side = r.attach("side", stdin=True, output=podexec.STDOUT)
        assert side.stdin is None   # (no stdin: true)
        await r.stop(grace=5)
        await task
        rest, side_rest = await read_to_end(b), await read_to_end(side)
        assert await b.wait() == 0 and not r._attached and not r._stdins
        with pytest.raises(podexec.ExecError, match="container main not found in pod p_ns"):
            r.attach("main", stdin=False, output=podexec.STDOUT)
        return first, rest, side_rest
    first, rest, side_rest = asyncio.run(asyncio.wait_for(go(), 30))
    assert (first, rest, side_rest) == (b"got hello\n", b"", b"")   # (SIGTERM: no "stdin-closed")
    assert (tmp_path / "ns" / "p" / "logs" / "side.log").read_bytes() == b"side read []\n"


def test_stdin_once_closes_the_containers_stdin_when_the_client_is_done(tmp_path):
    from vclite.executor import podexec
    from tests.unit.executor.test_podattach import read_to_end
    pod = make_pod([container("main", "tr a-z A-Z; echo stdin-closed", stdin=True, stdinOnce=True)])

    async def go():
        r = new_runner(tmp_path, pod)
        task = asyncio.create_task(r.run())
        while r.attach_problem("main"):
            await asyncio.sleep(0.01)
        a = r.attach("main", stdin=True, output=podexec.STDOUT)
        a.stdin.write(b"shout\n")
        a.end_stdin()
        out = await read_to_end(a)   # (the container's end ends the attach)
        await task
        return out, r.phase()
    out, phase = asyncio.run(asyncio.wait_for(go(), 30))
    assert (out, phase) == (b"SHOUT\nstdin-closed\n", core.PodPhase.SUCCEEDED)
