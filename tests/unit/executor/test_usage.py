"""What a container's processes use, read from /proc (executor/usage.py): a fake /proc for the sums, a real
process group for what the kernel says, and the CPU rate's window."""
import subprocess
import sys
import time

import pytest

from vclite.executor import usage

T = usage.TICKS


def _stat(pid, name, pgrp, utime, stime, cutime, cstime, start, rss_pages):
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    # priority nice threads itrealvalue starttime vsize rss ...
    return (f"{pid} ({name}) S 1 {pgrp} {pgrp} 0 -1 0 0 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 1 0 {start} "
            f"123456 {rss_pages} 0 0 0\n")


def test_a_groups_processes_are_added_up_its_leaders_start_is_its_start(tmp_path):
    for pid, name, pgrp, cpu, start, pages in [(10, "train", 10, (2 * T, T, T, 0), 5 * T, 100),
                                               (11, "a (weird) name) x", 10, (T, 0, 0, 0), 9 * T, 50),
                                               (12, "other", 12, (0, 0, 0, 0), 7 * T, 7),
                                               (13, "elsewhere", 99, (T, T, T, T), T, 1000)]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, pgrp, *cpu, start, pages))
    (tmp_path / "self").mkdir()
    (tmp_path / "14").mkdir()   # (a process gone meanwhile: no stat)
    got = usage.by_group([10, 12, 77], proc=str(tmp_path))
    assert got == {10: usage.Usage(5.0, 150 * usage.PAGE_SIZE, 5.0), 12: usage.Usage(0.0, 7 * usage.PAGE_SIZE, 7.0),
                   77: usage.Usage()}


def test_a_real_busy_group_uses_cpu_and_its_memory():
    child = subprocess.Popen([sys.executable, "-c", "b = bytearray(48 * 2**20)\nwhile True: pass"],
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 60     # (a wait, not a time limit: a loaded machine gives it less CPU)
        while (used := usage.by_group([child.pid])[child.pid]).cpu_seconds <= 0.2 or used.resident <= 48 * 2**20:
            assert time.monotonic() < deadline, used
            time.sleep(0.1)
        now = usage.boot_seconds()
    finally:
        child.kill()
        child.wait()
    cores, window = usage.usage_rate(now, used, None)
    assert 0 < cores <= 1.05 and window > 0.2


@pytest.mark.parametrize("now, current, previous, expected", [
    pytest.param(100.0, usage.Usage(6.0, 0, 90.0), (98.0, 4.0), (1.0, 2.0), id="since-the-previous-sample"),
    pytest.param(100.0, usage.Usage(6.0, 0, 90.0), (99.5, 4.0), (0.6, 10.0), id="too-recent-since-the-start"),
    pytest.param(100.0, usage.Usage(6.0, 0, 90.0), None, (0.6, 10.0), id="first-look-since-the-start"),
    pytest.param(100.0, usage.Usage(1.0, 0, 90.0), (98.0, 4.0), (0.1, 10.0), id="another-process-since-the-start"),
    pytest.param(100.0, usage.Usage(0.0, 0, None), None, (0.0, 0.0), id="leader-not-seen"),
])
def test_the_cpu_rate_and_its_window(now, current, previous, expected):
    assert usage.usage_rate(now, current, previous) == pytest.approx(expected)


@pytest.mark.parametrize("wrapped, want", [
    pytest.param((), usage.Usage(4.0, 150 * usage.PAGE_SIZE, 5.0), id="the-leader-is-the-container"),
    pytest.param((10,), usage.Usage(1.0, 50 * usage.PAGE_SIZE, 5.0), id="the-leader-is-the-exit-wrapper"),
])
def test_the_exit_journals_wrapper_leading_a_group_is_not_the_containers(tmp_path, wrapped, want):
    for pid, name, cpu, start, pages in [(10, "sh", (2 * T, T, 0, 0), 5 * T, 100), (11, "train", (T, 0, 0, 0), 6 * T, 50)]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, 10, *cpu, start, pages))
    assert usage.by_group([10], proc=str(tmp_path), wrapped=wrapped) == {10: want}
