"""Claim volumes: claims.resolve over a table of claims and volumes, and the executor's pods that wait for a claim
(ContainerCreating, FailedMount) and start once it is Bound, against the in-process API and real processes."""
import asyncio
import os
import pathlib

import pytest

from tests.unit.executor.test_executor import drive, env, make_pod, phase  # noqa: F401 (env: a fixture)
from tests.unit.executor.test_runner import container, run
from tests.unit.executor.test_runner import make_pod as runner_pod
from vclite.api import kinds
from vclite.executor import claims, envvars, mountview, runner
from vclite.lib import clock

ROOT = pathlib.Path("/work-root")


def claim(name="data", phase_="Bound", volume="pv-1", uid="u-1", deleting=False):
    md = {"name": name, "namespace": "ns", "uid": uid, **({"deletionTimestamp": "2025-01-01T00:00:00Z"}
                                                        if deleting else {})}
    return {"metadata": md, "spec": {"volumeName": volume} if volume else {}, "status": {"phase": phase_}}


def volume(name="pv-1", ref=("ns", "data", "u-1"), **source):
    spec = {**source, **({"claimRef": {"namespace": ref[0], "name": ref[1], "uid": ref[2]}} if ref else {})}
    return {"metadata": {"name": name}, "spec": spec}


def pod_with(*claim_names, **source):
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c, **source}}
                                 for i, c in enumerate(claim_names)] + [{"name": "e", "emptyDir": {}}]}}


HOST = {"hostPath": {"path": "/srv/data", "type": "DirectoryOrCreate"}}


@pytest.mark.parametrize("claims_, volumes, want", [
    pytest.param([claim()], [volume(**HOST)], {"data": (pathlib.Path("/srv/data"), "DirectoryOrCreate")},
                 id="bound-hostPath-volume"),
    pytest.param([claim()], [volume(local={"path": "/mnt/disk"})], {"data": (pathlib.Path("/mnt/disk"), "Directory")},
                 id="local-volume-must-be-a-directory"),
    pytest.param([claim()], [volume(nfs={"server": "x", "path": "/"})],
                 {"data": (ROOT / "_pv" / "pv-1", "DirectoryOrCreate")}, id="unattachable-source-under-the-root"),
    pytest.param([claim()], [volume(ref=("ns", "data", ""), **HOST)],
                 {"data": (pathlib.Path("/srv/data"), "DirectoryOrCreate")}, id="claimRef-without-uid"),
    pytest.param([], [], 'persistentvolumeclaim "data" not found', id="claim-missing"),
    pytest.param([claim(deleting=True)], [volume(**HOST)], 'persistentvolumeclaim "data" is being deleted',
                 id="claim-being-deleted"),
    pytest.param([claim(phase_="Pending", volume="")], [], 'persistentvolumeclaim "data" is not bound',
                 id="claim-pending"),
    pytest.param([claim(phase_="Lost")], [], 'persistentvolumeclaim "data" is not bound', id="claim-lost"),
    pytest.param([claim(volume="")], [], 'persistentvolumeclaim "data" is not bound', id="bound-without-volumeName"),
    pytest.param([claim()], [], 'persistentvolumeclaim "data": its persistentvolume "pv-1" not found',
                 id="volume-missing"),
    pytest.param([claim()], [volume(ref=("ns", "data", "u-other"), **HOST)],
                 'persistentvolumeclaim "data": persistentvolume "pv-1" is not bound to it',
                 id="volume-of-another-claim"),
    pytest.param([claim()], [volume(ref=None, **HOST)],
                 'persistentvolumeclaim "data": persistentvolume "pv-1" is not bound to it',
                 id="volume-without-claimRef"),
])
def test_resolve(claims_, volumes, want):
    by_name = {c["metadata"]["name"]: c for c in claims_}
    vols = {v["metadata"]["name"]: v for v in volumes}
    get_claim = lambda ns, name: by_name.get(name) if ns == "ns" else None  # noqa: E731
    if isinstance(want, dict):
        assert claims.resolve(pod_with("data", "data"), get_claim, vols.get, ROOT) == want
        return
    with pytest.raises(claims.Unmountable) as err:
        claims.resolve(pod_with("data"), get_claim, vols.get, ROOT)
    assert err.value.message == want and err.value.volume == "v0" and err.value.claim == "data"


def test_the_first_claim_that_cannot_be_mounted_is_named():
    got = {"a": claim("a", volume="pv-a", uid="ua")}
    vols = {"pv-a": volume("pv-a", ref=("ns", "a", "ua"), **HOST)}
    with pytest.raises(claims.Unmountable) as err:
        claims.resolve(pod_with("a", "b"), lambda ns, n: got.get(n), vols.get, ROOT)
    assert (err.value.volume, err.value.claim) == ("v1", "b")
    assert err.value.event_message("ns") == (
        "Unable to attach or mount volumes: unmounted volumes=[v1], failed to process volumes=[v1]: error processing "
        'PVC ns/b: failed to fetch PVC from API server: persistentvolumeclaims "b" not found')


@pytest.mark.parametrize("source, message, event", [
    pytest.param({"local": {"path": "/mnt/gone"}}, 'persistentvolumeclaim "data": its persistentvolume "pv-1" has no '
                 "directory /mnt/gone", 'MountVolume.NewMounter initialization failed for volume "pv-1" : path '
                 '"/mnt/gone" does not exist', id="local"),
    pytest.param({"hostPath": {"path": "/mnt/gone", "type": "Directory"}}, 'persistentvolumeclaim "data": its '
                 'persistentvolume "pv-1" has no directory /mnt/gone', 'MountVolume.SetUp failed for volume "pv-1" : '
                 "hostPath type check failed: /mnt/gone is not a directory", id="hostPath-Directory"),
])
def test_a_volume_whose_directory_is_missing_cannot_be_mounted(source, message, event):
    """The kubelet refuses to mount a local volume, or a hostPath one of type Directory, whose directory is not
    there: the pod waits (it ran without its data before, its writes in its own file system)."""
    vols = {"pv-1": volume(**source)}
    with pytest.raises(claims.Unmountable) as err:
        claims.resolve(pod_with("data"), lambda ns, n: claim(), vols.get, ROOT, is_dir=lambda p: False)
    assert err.value.message == message and err.value.event_message("ns") == event
    assert claims.resolve(pod_with("data"), lambda ns, n: claim(), vols.get, ROOT, is_dir=lambda p: True) == {
        "data": (pathlib.Path("/mnt/gone"), "Directory")}
    assert claims.resolve(pod_with("data"), lambda ns, n: claim(), {"pv-1": volume(**HOST)}.get, ROOT,
                          is_dir=lambda p: False)["data"][1] == "DirectoryOrCreate"   # (made by the runner)


def test_a_pod_without_claims_reads_nothing():
    def fail(*_):
        raise AssertionError("read")
    assert claims.resolve({"spec": {"volumes": [{"name": "e", "emptyDir": {}}]}}, fail, fail, ROOT) == {}


# ---- the executor: a pod waits for its claim, then runs with its volume's directory ------------------------
def bound_pair(client, path, name="data", read_only_pv=False, existing=False):
    """A Bound claim (made here, or the `existing` one) and its volume, written as the volume controller writes
    them."""
    pvc = client.get(kinds.PERSISTENTVOLUMECLAIM, "default", name) if existing else client.create(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                  "storageClassName": ""}})
    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
                   "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": str(path), "type": "DirectoryOrCreate"},
                            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": name,
                                         "uid": pvc["metadata"]["uid"]}}})
    pvc = client.update({**pvc, "spec": {**pvc["spec"], "volumeName": f"pv-{name}"}})
    client.update_status({**pvc, "status": {"phase": "Bound"}})


def claim_pod(name, script, claim_name="data", **source):
    pod = make_pod(name, script, volumeMounts=[{"name": "v", "mountPath": "/data"}])
    pod["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim_name, **source}}]
    return pod


def waiting_of(client, name):
    return client.get(kinds.POD, "default", name)["status"]["containerStatuses"][0]["state"].get("waiting") or {}


def test_pod_waits_for_its_claim_to_be_bound_then_runs_in_its_volume(env):  # noqa: F811
    client, ex, workdir = env
    data = workdir / "disk" / "data"
    client.create(claim_pod("user", 'echo hi > "$VC_POD_DIR/data/out"'))
    asyncio.run(drive(ex, lambda: waiting_of(client, "user").get("message")))
    waiting = waiting_of(client, "user")
    assert waiting == {"reason": "ContainerCreating", "message": 'persistentvolumeclaim "data" not found'}
    (event,) = [e for e in client.list(kinds.EVENT) if e["reason"] == claims.FAILED_MOUNT]
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "user"
    assert 'error processing PVC default/data: failed to fetch PVC' in event["message"]
    bound_pair(client, data)
    asyncio.run(drive(ex, lambda: phase(client, "user") == "Succeeded"))
    assert (data / "out").read_text() == "hi\n"
    assert not (workdir / "default" / "_pvc").exists()   # (no directory of its own any more)


def test_pod_of_an_unbound_claim_says_so_and_starts_when_it_binds(env):  # noqa: F811
    client, ex, workdir = env
    client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "data", "namespace": "default"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    client.create(claim_pod("user", "true"))
    asyncio.run(drive(ex, lambda: waiting_of(client, "user").get("message")))
    assert waiting_of(client, "user")["message"] == 'persistentvolumeclaim "data" is not bound'
    bound_pair(client, workdir / "disk", existing=True)
    asyncio.run(drive(ex, lambda: phase(client, "user") == "Succeeded"))


@pytest.mark.skipif(mountview.available() is not None, reason=f"no mount namespace: {mountview.available()}")
@pytest.mark.parametrize("source, want", [
    pytest.param({"readOnly": True}, "refused", id="readOnly-claim-mounted-read-only"),
    pytest.param({}, "wrote", id="writable-claim"),
])
def test_a_read_only_claim_is_bound_read_only_in_the_view(tmp_path, source, want):
    disk = tmp_path / "disk"
    pod = runner_pod([container("main", "echo x > /data/f && echo wrote || echo refused",
                                volumeMounts=[{"name": "v", "mountPath": "/data"}])],
                     volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c", **source}}])
    r = run_with_claims(tmp_path, pod, {"c": (disk, "DirectoryOrCreate")})
    assert (r.pod_dir / "logs" / "main.log").read_text().endswith(want + "\n")
    assert disk.is_dir() and os.path.exists(disk / "f") == (want == "wrote")


def run_with_claims(tmp_path, pod, claim_paths):
    r = runner.PodRunner(pod, tmp_path / "ns" / "p", {}, clock.RealClock(), [].append, restart_backoff=0.05,
                         claims=claim_paths)
    asyncio.run(r.run())
    return r


def test_a_claim_volume_the_executor_did_not_resolve_is_a_config_error(tmp_path):
    pod = runner_pod([container("main", "true")], volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}])
    with pytest.raises(envvars.ConfigError, match='persistentvolumeclaim "c" is not resolved'):
        run(tmp_path, pod)
