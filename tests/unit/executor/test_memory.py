"""memory.py: a container's memory limit, the resident memory of process groups read from a /proc
(a fake one, then the real one), and which groups are over their limit."""
import os
import signal
import subprocess
import sys
import time

import pytest

from vclite.executor import memory


@pytest.mark.parametrize("container, limit", [
    pytest.param({"resources": {"limits": {"memory": "64Mi"}}}, 64 * 2**20, id="binary-suffix"),
    pytest.param({"resources": {"limits": {"memory": "1G"}}}, 10**9, id="decimal-suffix"),
    pytest.param({"resources": {"limits": {"memory": "1.5"}}}, 2, id="a-fraction-of-a-byte-rounds-up"),
    pytest.param({"resources": {"limits": {"cpu": "1"}}}, None, id="no-memory-limit"),
    pytest.param({"resources": {"requests": {"memory": "1Gi"}}}, None, id="a-request-is-no-limit"),
    pytest.param({}, None, id="no-resources"),
    pytest.param({"resources": {"limits": {"memory": "lots"}}}, None, id="not-a-quantity"),
])
def test_limit_of(container, limit):
    assert memory.limit_of(container) == limit


def _stat(pid, name, pgrp, rss_pages):
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    # priority nice threads itrealvalue starttime vsize rss ...
    return (f"{pid} ({name}) S 1 {pgrp} {pgrp} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 123456 {rss_pages} 0 0 0\n")


def test_resident_by_group_adds_up_a_groups_processes(tmp_path):
    for pid, name, pgrp, pages in [(10, "train", 10, 100), (11, "a (weird) name", 10, 50), (12, "other", 12, 7),
                                   (13, "elsewhere", 99, 1000)]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, pgrp, pages))
    (tmp_path / "self").mkdir()
    (tmp_path / "14").mkdir()   # (a process gone meanwhile: no stat)
    assert memory.resident_by_group([10, 12, 77], proc=str(tmp_path)) == {
        10: 150 * memory.PAGE_SIZE, 12: 7 * memory.PAGE_SIZE, 77: 0}


def test_resident_by_group_of_a_real_process_group():
    child = subprocess.Popen([sys.executable, "-c", "b = bytearray(64 * 2**20); import time; time.sleep(60)"],
                             start_new_session=True, stdout=subprocess.PIPE)
    try:
        for _ in range(500):   # (until the bytearray is in memory)
            used = memory.resident_by_group([child.pid])[child.pid]
            if used > 64 * 2**20:
                break
            time.sleep(0.02)
        assert used > 64 * 2**20 and memory.over_limit({child.pid: used}, {child.pid: 32 * 2**20}) == [child.pid]
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


@pytest.mark.parametrize("used, limits, over", [
    ({1: 100, 2: 300}, {1: 200, 2: 200}, [2]),
    ({1: 200}, {1: 200}, []),   # at the limit is not over it
    ({}, {1: 1}, []),           # a group with no process left
])
def test_over_limit(used, limits, over):
    assert memory.over_limit(used, limits) == over
