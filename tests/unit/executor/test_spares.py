"""Spare pod directories: made only once a pod asked, taken by rename, cleaned up, never in the way."""
import asyncio
import os

import pytest

from vclite.executor import runner, spares
from vclite.lib import clock


def fill(sp: spares.SparePodDirs) -> int:
    made = 0
    while sp.make_one():
        made += 1
    return made


def test_nothing_is_made_before_a_pod_asks(tmp_path):
    sp = spares.SparePodDirs(tmp_path, target=2)
    assert not sp.make_one()
    assert not (tmp_path / spares.SPARE_DIR).exists()


def test_a_pod_takes_a_whole_skeleton_by_rename(tmp_path):
    sp = spares.SparePodDirs(tmp_path, target=3)
    (tmp_path / "ns").mkdir()
    assert not sp.take(tmp_path / "ns" / "first")   # none ready yet: the caller makes its own
    assert fill(sp) == 3 and sp.ready() == 3
    assert sp.take(tmp_path / "ns" / "p")
    assert sorted(os.listdir(tmp_path / "ns" / "p")) == ["logs"]
    assert os.listdir(tmp_path / "ns" / "p" / "logs") == [spares.SPARE_LOG]
    assert sp.ready() == 2 and fill(sp) == 1   # made again up to the target, no more


@pytest.mark.parametrize("dest, why", [
    ("missing-namespace/p", "parent missing"),
    ("ns/taken", "a pod directory with files is there"),
])
def test_a_move_that_fails_keeps_the_skeleton_for_the_next_pod(tmp_path, dest, why):
    sp = spares.SparePodDirs(tmp_path, target=1)
    (tmp_path / "ns" / "taken" / "logs").mkdir(parents=True)
    (tmp_path / "ns" / "taken" / "logs" / "main.log").write_text("old run\n")
    sp.take(tmp_path / "ns" / "first")
    fill(sp)
    assert not sp.take(tmp_path / dest), why
    assert (tmp_path / "ns" / "taken" / "logs" / "main.log").read_text() == "old run\n"
    assert sp.ready() == 1 and sp.take(tmp_path / "ns" / "other")


def test_what_a_crashed_process_left_is_removed_and_close_removes_the_rest(tmp_path):
    left = tmp_path / spares.SPARE_DIR / "0"
    left.mkdir(parents=True)   # (half made when the process died: no logs/)
    sp = spares.SparePodDirs(tmp_path, target=2)
    sp.take(tmp_path / "ns" / "p")
    fill(sp)
    assert all((tmp_path / spares.SPARE_DIR / n / "logs" / spares.SPARE_LOG).is_file()
               for n in os.listdir(tmp_path / spares.SPARE_DIR))
    sp.close()
    assert not (tmp_path / spares.SPARE_DIR).exists()
    assert not sp.make_one() and not sp.take(tmp_path / "ns" / "q")


def test_a_failure_to_make_one_stops_making_them(tmp_path):
    (tmp_path / spares.SPARE_DIR).write_text("a file where the spare directory goes")
    sp = spares.SparePodDirs(tmp_path / spares.SPARE_DIR / "below-a-file", target=2)
    sp.take(tmp_path / "p")
    assert not sp.make_one()
    assert not sp.short()


def test_the_first_containers_log_is_the_spare_file_and_the_pod_runs_as_before(tmp_path):
    sp = spares.SparePodDirs(tmp_path, target=1)
    (tmp_path / "ns").mkdir()
    sp.take(tmp_path / "ns" / "first")
    fill(sp)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": {"nodeName": "local", "restartPolicy": "Never",
                    "initContainers": [{"name": "init", "command": ["sh", "-c", "echo init"]}],
                    "containers": [{"name": "a", "command": ["sh", "-c", "echo a"]},
                                   {"name": "b", "command": ["sh", "-c", "echo b"]}]}}
    r = runner.PodRunner(pod, tmp_path / "ns" / "p", {}, clock.RealClock(), lambda key: None, spares=sp)
    asyncio.run(r.run())
    logs = tmp_path / "ns" / "p" / "logs"
    assert sp.ready() == 0   # (it was taken)
    assert sorted(os.listdir(logs)) == ["a.log", "b.log", "init.log"]
    assert [(logs / f"{c}.log").read_text() for c in ("init", "a", "b")] == ["init\n", "a\n", "b\n"]


def test_the_runtime_makes_spares_while_it_waits_and_its_pods_take_them(tmp_path):
    from vclite.api import kinds
    from vclite.runtime import runtime

    rt = runtime.Runtime(workdir=tmp_path)

    def pod(name, script):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": "local", "restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script]}]}}

    def succeeded(name):
        return lambda: (rt.client.get(kinds.POD, "default", name).get("status") or {}).get("phase") == "Succeeded"

    async def scenario():
        rt.start()
        rt.client.create(pod("slow", "sleep 0.3"))
        assert await rt.run_until(succeeded("slow"), timeout=30)
        before = set(os.listdir(tmp_path / spares.SPARE_DIR))
        assert before   # made while the runtime waited for the slow pod
        rt.client.create(pod("quick", "echo quick"))
        assert await rt.run_until(succeeded("quick"), timeout=30)
        assert len(before - set(os.listdir(tmp_path / spares.SPARE_DIR))) == 1   # the quick pod took one
        await rt.shutdown()

    asyncio.run(scenario())
    assert (tmp_path / "default" / "quick" / "logs" / "main.log").read_text() == "quick\n"
    assert not (tmp_path / spares.SPARE_DIR).exists()
