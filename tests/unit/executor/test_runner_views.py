"""PodRunner with containers that see their volumeMounts and termination message path at their own paths
(mountview.py), against real processes in real mount namespaces; and without, where the host cannot."""
import asyncio
import os

import pytest

from tests.unit.executor.test_runner import container, make_pod, new_runner, run, status_of
from vclite.api import core
from vclite.executor import exits, mountview, runner
from vclite.lib import clock

pytestmark = pytest.mark.skipif(mountview.available() is not None,
                                reason=f"no mount namespace on this host: {mountview.available()}")


def log_of(r, name="main"):
    return (r.pod_dir / "logs" / f"{name}.log").read_text()


def test_volumes_at_their_paths_and_the_message_at_dev_termination_log(tmp_path):
    """The svc plugin's hosts file at /etc/volcano, a script from a ConfigMap run by its path, an emptyDir two
    containers share, a read-only mount, and the output written where Kubernetes puts it."""
    pod = make_pod([
        container("main", "/scripts/run.sh; cat /etc/volcano/worker.host; echo; "
                          "until [ -e /shared/ready ]; do sleep 0.02; done; cat /shared/ready; "
                          "touch /etc/volcano/new 2>/dev/null || echo read-only; echo 0.93 > /dev/termination-log",
                  volumeMounts=[{"name": "hosts", "mountPath": "/etc/volcano", "readOnly": True},
                                {"name": "scripts", "mountPath": "/scripts"},
                                {"name": "shared", "mountPath": "/shared"}]),
        container("side", "echo from-side > /shared/ready", volumeMounts=[{"name": "shared", "mountPath": "/shared"}]),
    ], volumes=[{"name": "hosts", "configMap": {"name": "job-svc"}},
                {"name": "scripts", "configMap": {"name": "scripts", "defaultMode": 0o755}},
                {"name": "shared", "emptyDir": {}}])
    r = run(tmp_path, pod, {"job-svc": {"data": {"worker.host": "w-0.job"}},
                            "scripts": {"data": {"run.sh": "#!/bin/sh\necho script-ran"}}})
    assert r.phase() == core.PodPhase.SUCCEEDED, log_of(r)
    assert log_of(r) == "script-ran\nw-0.job\nfrom-side\nread-only\n"
    assert status_of(r, "main")["state"]["terminated"]["message"] == "0.93\n"
    assert "message" not in status_of(r, "side")["state"]["terminated"]
    assert not os.path.exists("/shared") and not os.path.exists("/scripts")


@pytest.mark.parametrize("extra, script, message", [
    pytest.param({}, 'echo via-variable > "$TERMINATION_MESSAGE_PATH"; echo $TERMINATION_MESSAGE_PATH >&2',
                 "via-variable\n", id="the-variable-names-the-same-file"),
    pytest.param({"terminationMessagePath": "/out/result"}, "mkdir -p /out; echo custom > /out/result",
                 "custom\n", id="a-path-of-its-own"),
    pytest.param({"terminationMessagePolicy": "FallbackToLogsOnError"}, "echo boom; exit 1", "boom",
                 id="an-empty-file-falls-back-to-the-log"),
])
def test_termination_messages_in_a_view(tmp_path, extra, script, message):
    pod = make_pod([container("main", script, volumeMounts=[{"name": "v", "mountPath": "/v"}], **extra)],
                   volumes=[{"name": "v", "emptyDir": {}}])
    r = run(tmp_path, pod)
    assert status_of(r, "main")["state"]["terminated"].get("message") == message, log_of(r)


def test_a_restart_starts_with_an_empty_message_file(tmp_path):
    script = ('[ -e "$VC_POD_DIR/m" ] && exit 0; touch "$VC_POD_DIR/m"; echo first-run > /dev/termination-log; '
              "exit 1")
    r = run(tmp_path, make_pod([container("main", script)], restart="OnFailure"))
    st = status_of(r, "main")
    assert st["restartCount"] == 1 and "message" not in st["state"]["terminated"]
    assert st["lastState"]["terminated"]["message"] == "first-run\n"


def test_a_working_directory_the_host_lacks_is_kept_in_the_pod_directory(tmp_path):
    r = run(tmp_path, make_pod([container("main", "pwd; echo x > made", workingDir="/workspace/vclite-test",
                                          volumeMounts=[{"name": "v", "mountPath": "/v"}])],
                               volumes=[{"name": "v", "emptyDir": {}}]))
    assert log_of(r) == "/workspace/vclite-test\n"
    assert (r.pod_dir / "workspace/vclite-test/made").read_text() == "x\n"


@pytest.mark.parametrize("program, message", [
    pytest.param("/scripts/missing.sh",
                 'exec: "/scripts/missing.sh": stat /scripts/missing.sh: no such file or directory', id="missing"),
    pytest.param("/scripts/not-executable.sh", 'exec: "/scripts/not-executable.sh": permission denied',
                 id="not-executable"),
    pytest.param("vclite-no-such-binary", 'exec: "vclite-no-such-binary": executable file not found in $PATH',
                 id="not-in-path"),
])
def test_a_program_the_view_lacks_is_a_start_error(tmp_path, program, message):
    pod = make_pod([{"name": "main", "command": [program],
                     "volumeMounts": [{"name": "scripts", "mountPath": "/scripts"}]}],
                   volumes=[{"name": "scripts", "configMap": {"name": "scripts", "defaultMode": 0o644}}])
    r = run(tmp_path, pod, {"scripts": {"data": {"not-executable.sh": "#!/bin/sh\n"}}})
    term = status_of(r, "main")["state"]["terminated"]
    assert (term["exitCode"], term["reason"], term["message"]) == (128, "StartError", message)


def test_a_program_in_a_mounted_path_on_the_containers_path(tmp_path):
    pod = make_pod([{"name": "main", "command": ["train"], "env": [{"name": "PATH", "value": "/tools:/usr/bin:/bin"}],
                     "volumeMounts": [{"name": "tools", "mountPath": "/tools"}]}],
                   volumes=[{"name": "tools", "configMap": {"name": "tools", "defaultMode": 0o755}}])
    r = run(tmp_path, pod, {"tools": {"data": {"train": "#!/bin/sh\necho trained"}}})
    assert r.phase() == core.PodPhase.SUCCEEDED and log_of(r) == "trained\n"


def test_the_exit_journal_records_a_program_run_in_a_view(tmp_path):
    journal = tmp_path / exits.JOURNAL
    journal.write_text("")
    pod = make_pod([{"name": "main", "command": ["/scripts/run.sh"],
                     "volumeMounts": [{"name": "scripts", "mountPath": "/scripts"}]}],
                   volumes=[{"name": "scripts", "configMap": {"name": "scripts", "defaultMode": 0o755}}])
    r = runner.PodRunner(pod, tmp_path / "ns" / "p", {"scripts": {"data": {"run.sh": "#!/bin/sh\nexit 3"}}},
                         clock.RealClock(), [].append,
                         exit_journal=journal)
    asyncio.run(r.run())
    assert status_of(r, "main")["state"]["terminated"]["exitCode"] == 3
    assert exits.read(journal)[exits.run_key(pod["metadata"]["uid"], "main", 0)].code == 3


def test_exec_gets_the_containers_view(tmp_path):
    from tests.unit.executor.test_podexec import drain
    from vclite.executor import podexec
    pod = make_pod([container("main", "until [ -e /data/stop ]; do sleep 0.02; done",
                              volumeMounts=[{"name": "data", "mountPath": "/data"}])],
                   volumes=[{"name": "data", "emptyDir": {}}])

    async def go():
        r = new_runner(tmp_path, pod)
        task = asyncio.create_task(r.run())
        while r.alive() < 1 or r.exec_problem("main"):
            await asyncio.sleep(0.01)
        with pytest.raises(podexec.ExecError, match='exec: "/data/nothing": executable file not found'):
            await r.exec("main", ["/data/nothing"], stdin=False, stdout=True, stderr=False, tty=False)
        s = await r.exec("main", ["sh", "-c", "echo seen > /data/by-exec; cat /data/by-exec; touch /data/stop"],
                         stdin=False, stdout=True, stderr=False, tty=False)
        out, rc = await drain(s)
        await task
        return out, rc
    out, rc = asyncio.run(asyncio.wait_for(go(), 30))
    assert (rc, out) == (0, {1: b"seen\n"})


def test_without_views_the_paths_stay_unmapped_and_an_event_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(mountview.OFF, "off")
    events = []
    pod = make_pod([container("main", 'cat "$VC_POD_DIR/etc/volcano/worker.host"; echo m > "$TERMINATION_MESSAGE_PATH"',
                              volumeMounts=[{"name": "hosts", "mountPath": "/etc/volcano"}]),
                    container("plain", "true")],
                   volumes=[{"name": "hosts", "configMap": {"name": "job-svc"}}])
    r = runner.PodRunner(pod, tmp_path / "ns" / "p", {"job-svc": {"data": {"worker.host": "w-0.job"}}},
                         clock.RealClock(), [].append,
                         on_event=lambda *e: events.append(e))
    asyncio.run(r.run())
    assert r.phase() == core.PodPhase.SUCCEEDED and log_of(r) == "w-0.job"
    assert status_of(r, "main")["state"]["terminated"]["message"] == "m\n"
    warned = [e for e in events if e[2] == runner.VIEW_UNAVAILABLE]
    assert len(warned) == 1 and warned[0][0] == "spec.containers{main}" and warned[0][1] == "Warning"
    assert warned[0][3] == (f"this host cannot give the container its own mount namespace ({mountview.OFF}=off): its "
                            "volumeMounts are at $VC_POD_DIR<mountPath> (/etc/volcano), and its termination message "
                            "goes to $TERMINATION_MESSAGE_PATH, not /dev/termination-log")


def test_a_volume_over_the_pods_own_directory_leaves_it_reachable(tmp_path):
    """An emptyDir at the top directory of the pod's (as /tmp over a work directory under /tmp): the pod's
    directory is bound again on top, so $VC_POD_DIR, relative paths and the working directory still work."""
    top = "/" + str(tmp_path).strip("/").split("/")[0]   # (/tmp)
    pod = make_pod([container("main", 'echo scratch > "$VC_POD_DIR/../../../scratch-vclite-test"; pwd; '
                                      'echo here > in-pod-dir; ls "$VC_POD_DIR/logs"',
                              volumeMounts=[{"name": "scratch", "mountPath": top}])],
                   volumes=[{"name": "scratch", "emptyDir": {}}])
    r = run(tmp_path, pod)
    assert r.phase() == core.PodPhase.SUCCEEDED, log_of(r)
    assert log_of(r).splitlines()[:2] == [str(r.pod_dir), "main.log"]
    assert (r.pod_dir / "in-pod-dir").read_text() == "here\n"
    assert not (r.pod_dir / "../../../scratch-vclite-test").exists()   # (written in the emptyDir, not the host)


def test_an_emptydir_at_dev_shm_is_the_containers_own(tmp_path):
    """The PyTorch DataLoader pattern: a Memory emptyDir at /dev/shm. /dev/termination-log makes /dev a view of its
    own too; /dev/shm stays the volume (it was the host's /dev/shm again, and the writes reached the host)."""
    name = f"vclite-test-{os.getpid()}-{id(tmp_path)}"
    pod = make_pod([container("main", f"echo batch > /dev/shm/{name}; ls /dev/shm; echo 0.5 > /dev/termination-log",
                              volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}])],
                   volumes=[{"name": "dshm", "emptyDir": {"medium": "Memory"}}])
    try:
        r = run(tmp_path, pod)
        assert not os.path.exists(f"/dev/shm/{name}")
    finally:
        if os.path.exists(f"/dev/shm/{name}"):
            os.unlink(f"/dev/shm/{name}")
    assert r.phase() == core.PodPhase.SUCCEEDED, log_of(r)
    assert log_of(r) == f"{name}\n"
    assert status_of(r, "main")["state"]["terminated"]["message"] == "0.5\n"
    assert (r.pod_dir / ".vclite/volumes/dshm" / name).read_text() == "batch\n"


@pytest.mark.parametrize("mount, program", [
    pytest.param("real/tools", "link/tools/hello", id="the-program-named-through-a-link"),
    pytest.param("link/tools", "real/tools/hello", id="the-mount-point-named-through-a-link"),
])
def test_a_program_in_a_volume_named_through_a_symbolic_link_starts(tmp_path, mount, program):
    """(/run/tools mounted, /var/run/tools/hello run: the check before the start looked the program up on the host,
    found nothing and made it a StartError)"""
    base = tmp_path / "host"
    (base / "real").mkdir(parents=True)
    (base / "link").symlink_to("real")
    pod = make_pod([{"name": "main", "image": "x", "command": [f"{base}/{program}"],
                     "volumeMounts": [{"name": "tools", "mountPath": f"{base}/{mount}"}]}],
                   volumes=[{"name": "tools", "configMap": {"name": "tools", "defaultMode": 0o755}}])
    r = run(tmp_path, pod, {"tools": {"data": {"hello": "#!/bin/sh\necho hello\n"}}})
    assert status_of(r, "main")["state"]["terminated"]["exitCode"] == 0, status_of(r, "main")
    assert log_of(r) == "hello\n"
    assert os.listdir(base / "real") == []



@pytest.mark.parametrize("mount, extra, field", [
    pytest.param({"name": "scratch", "mountPath": "/etc/hostname"}, {},
                 'volume "scratch" at "/etc/hostname" (volumeMounts[0]): a directory', id="a-directory-on-a-file"),
    pytest.param({"name": "cfg", "mountPath": "/usr", "subPath": "app.yaml"}, {},
                 'volume "cfg" at "/usr" (volumeMounts[0]): a file', id="a-file-on-a-directory"),
    pytest.param({"name": "scratch", "mountPath": "/scratch"}, {"terminationMessagePath": "/usr"},
                 'the termination message file at "/usr" (terminationMessagePath): a file', id="the-message-file"),
])
def test_a_view_that_cannot_be_made_is_a_start_error_naming_the_field(tmp_path, mount, extra, field):
    """As a kubelet reports a mount runc could not make: the container never started — StartError, exit code 128,
    what failed by its field, a Warning Event `Failed`, no `Started` (it was exit code 127, `Error`, the reason in
    the log alone, and an Event saying it started)."""
    events = []
    pod = make_pod([container("main", "echo ran", volumeMounts=[mount], **extra)],
                   volumes=[{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cfg"}}])
    r = runner.PodRunner(pod, tmp_path / "ns" / "p", {"cfg": {"data": {"app.yaml": "a: 1"}}}, clock.RealClock(),
                         [].append, on_event=lambda *e: events.append(e))
    asyncio.run(r.run())
    term = status_of(r, "main")["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (runner.START_ERROR_EXIT, "StartError")
    assert term["message"].startswith(f"error mounting {field}"), term["message"]
    assert [e[1:3] for e in events] == [("Warning", "Failed")] and events[0][3] == f"Error: {term['message']}"
    assert "ran" not in log_of(r) and "cannot give the container its volumeMounts' paths" in log_of(r)


@pytest.mark.parametrize("order", [pytest.param(1, id="outer-first"), pytest.param(-1, id="inner-first")])
def test_nested_mounts_in_either_order(tmp_path, order):
    """/data and /data/cache from two volumes: the manifest may name the inner one first (that was a ConfigError:
    `cannot mount at <poddir>/data: a file is already there`)."""
    mounts = [{"name": "data", "mountPath": "/data"}, {"name": "cache", "mountPath": "/data/cache"}][::order]
    pod = make_pod([container("main", "echo d > /data/d; echo c > /data/cache/c", volumeMounts=mounts)],
                   volumes=[{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}])
    r = run(tmp_path, pod)
    assert r.phase() == core.PodPhase.SUCCEEDED, log_of(r)
    volumes = r.pod_dir / ".vclite" / "volumes"
    assert (volumes / "data/d").read_text() == "d\n" and (volumes / "cache/c").read_text() == "c\n"
    assert (r.pod_dir / "data/cache/c").read_text() == "c\n"   # ($VC_POD_DIR/<mountPath> too)


@pytest.mark.parametrize("volume, mount", [
    pytest.param({"configMap": {"name": "cfg"}}, {}, id="configMap"),
    pytest.param({"configMap": {"name": "cfg"}}, {"subPath": "app.yaml"}, id="configMap-key-as-a-file"),
    pytest.param({"secret": {"secretName": "cfg"}}, {}, id="secret"),
    pytest.param({"projected": {"sources": []}}, {}, id="projected"),
])
def test_api_data_volumes_are_read_only_as_a_kubelet_mounts_them(tmp_path, volume, mount):
    """A program that writes into its ConfigMap's mount fails here as on a cluster (it wrote the pod's copy)."""
    path = "/etc/app/app.yaml" if mount.get("subPath") else "/etc/app"
    target = path if mount.get("subPath") else f"{path}/new"
    pod = make_pod([container("main", f"echo x >> {target} && echo wrote || echo refused",
                              volumeMounts=[{"name": "v", "mountPath": path, **mount}])],
                   volumes=[{"name": "v", **volume}])
    data = {"data": {"app.yaml": "a: 1\n"}}
    r = run(tmp_path, pod, {"cfg": data, runner.envvars.SECRET_PREFIX + "cfg": data})
    assert log_of(r).endswith("refused\n"), log_of(r)


def test_a_stop_while_the_view_is_being_made_kills_it(tmp_path, monkeypatch):
    """A view that does not get made (here: a script that hangs before it exec's the program, standing for a file
    system that does not answer) does not hold the pod's stop: the process is killed, the pod ends."""
    hang = tmp_path / "hang.py"
    hang.write_text("import time\ntime.sleep(60)\n")
    real = mountview.command
    monkeypatch.setattr(mountview, "command", lambda spec, argv, python=None, report=None:
                        [real(spec, argv, report=report)[0], str(hang)])
    pod = make_pod([container("main", "echo never", volumeMounts=[{"name": "v", "mountPath": "/v"}])],
                   volumes=[{"name": "v", "emptyDir": {}}])

    async def go():
        r = new_runner(tmp_path, pod)
        task = asyncio.create_task(r.run())
        await asyncio.sleep(0.5)
        await asyncio.wait_for(r.stop(grace=1), 20)
        await asyncio.wait_for(task, 20)
        return r
    r = asyncio.run(go())
    assert log_of(r) == ""
    assert r.phase() == core.PodPhase.FAILED


@pytest.mark.skipif(runner._NSENTER is None, reason="no nsenter (util-linux) on this host")
def test_exec_joins_the_containers_own_view(tmp_path):
    """What the container wrote outside its volumes — beside a mount point, in a directory its view shadows — is
    there for a `kubectl exec` too, as in the container's own namespaces; and the exec starts in its directory."""
    from tests.unit.executor.test_podexec import drain
    top = f"/vclite-test-{os.getpid()}-{id(tmp_path)}"
    pod = make_pod([container("main", f"echo mine > {top}/beside; until [ -e {top}/mnt/stop ]; do sleep 0.02; done",
                              workingDir=f"{top}/mnt", volumeMounts=[{"name": "data", "mountPath": f"{top}/mnt"}])],
                   volumes=[{"name": "data", "emptyDir": {}}])

    async def go():
        r = new_runner(tmp_path, pod)
        task = asyncio.create_task(r.run())
        while r.alive() < 1 or r.exec_problem("main") or not (r.pod_dir / "logs/main.log").exists():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)   # (time for the container's first line)
        s = await r.exec("main", ["sh", "-c", f"cat {top}/beside; pwd; touch stop"], stdin=False, stdout=True,
                         stderr=False, tty=False)
        out, rc = await drain(s)
        await task
        return out, rc
    out, rc = asyncio.run(asyncio.wait_for(go(), 30))
    assert (rc, out) == (0, {1: f"mine\n{top}/mnt\n".encode()})
    assert not os.path.exists(top)
