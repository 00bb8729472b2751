"""The exit journal's wrapper run for real (/bin/sh): what it records, and that the program sees what it saw
without it (exit code, signals, stdin, stderr, no extra descriptors or messages)."""
import datetime as dt
import os
import signal
import subprocess
import time

import pytest

from vclite.executor import exits

ENV = {b"PATH": os.environ.get("PATH", os.defpath).encode()}


def run(tmp_path, argv, key="u1/main/0", sig=None, stdin=b""):
    journal = tmp_path / exits.JOURNAL
    journal.touch()
    log = tmp_path / "main.log"
    wrapped = exits.wrap(argv, ENV, tmp_path, journal, key)
    assert wrapped[:2] == [exits.SHELL, "-c"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(wrapped, cwd=tmp_path, env=ENV, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.PIPE, start_new_session=True)
        if sig is not None:
            time.sleep(0.3)
            os.killpg(proc.pid, sig)
        proc.communicate(stdin)
    return proc.returncode, log.read_text(), exits.read(journal)


@pytest.mark.parametrize("argv, sig, code, output", [
    pytest.param(["sh", "-c", "echo out; echo err >&2; exit 4"], None, 4, "out\nerr\n", id="exit-code-and-output"),
    pytest.param(["sh", "-c", "read line; echo got $line"], None, 0, "got hello\n", id="stdin"),
    pytest.param(["sh", "-c", "ls /proc/$$/fd"], None, 0, "0\n1\n2\n", id="no-extra-descriptors"),
    pytest.param(["sleep", "30"], signal.SIGTERM, 143, "", id="sigterm-reaches-the-program-no-shell-words"),
    pytest.param(["sh", "-c", "trap 'echo bye; exit 7' TERM; sleep 30 & wait"], signal.SIGTERM, 7, "bye\n",
                 id="the-program-handles-sigterm"),
])
def test_the_wrapper_records_the_exit_and_the_program_sees_no_difference(tmp_path, argv, sig, code, output):
    rc, log, recorded = run(tmp_path, argv, sig=sig, stdin=b"hello\n")
    assert (rc, log) == (code, output)
    assert set(recorded) == {"u1/main/0"} and recorded["u1/main/0"].code == code
    at = recorded["u1/main/0"].finished_at
    assert at is not None and abs((at - dt.datetime.now(dt.timezone.utc)).total_seconds()) < 60


def test_a_group_killed_records_nothing(tmp_path):
    rc, _, recorded = run(tmp_path, ["sleep", "30"], sig=signal.SIGKILL)
    assert rc == -signal.SIGKILL and recorded == {}


@pytest.mark.parametrize("argv", [
    pytest.param(["no-such-program-xyz"], id="not-on-the-path"),
    pytest.param(["./missing"], id="no-such-path"),
    pytest.param(["./plain"], id="no-interpreter-line"),
    pytest.param(["./notexec"], id="not-executable"),
    pytest.param([], id="nothing"),
])
def test_a_program_exec_cannot_start_is_not_wrapped(tmp_path, argv):
    """Popen then fails as before, in runc's words (the wrapper's shell would say it differently)."""
    (tmp_path / "plain").write_text("echo hi\n")
    (tmp_path / "plain").chmod(0o755)
    (tmp_path / "notexec").write_text("#!/bin/sh\n")
    assert exits.wrap(argv, ENV, tmp_path, tmp_path / exits.JOURNAL, "k") == argv


def test_a_script_with_its_interpreter_line_is_wrapped(tmp_path):
    (tmp_path / "s").write_text("#!/bin/sh\nexit 5\n")
    (tmp_path / "s").chmod(0o755)
    assert exits.wrap(["./s"], ENV, tmp_path, tmp_path / "j", "k")[-1] == "./s"
    assert run(tmp_path, ["./s"])[0] == 5


def test_the_journal_is_rewritten_with_the_pods_still_to_recover(tmp_path):
    journal = tmp_path / exits.JOURNAL
    journal.write_text("a/main/0 0 10.00\nb/main/0 3 11.00\nnot a record\na/main/0 1 12.00\nc/x/0 2 -1.00\n")
    recorded = exits.read(journal)
    assert {k: v.code for k, v in recorded.items()} == {"a/main/0": 1, "b/main/0": 3, "c/x/0": 2}
    assert recorded["c/x/0"].finished_at is None   # (time not known)
    exits.rewrite(journal, recorded, {"a", "c"})
    again = exits.read(journal)
    assert {k: v.code for k, v in again.items()} == {"a/main/0": 1, "c/x/0": 2}
    assert again["a/main/0"].finished_at == recorded["a/main/0"].finished_at or \
        abs((again["a/main/0"].finished_at - recorded["a/main/0"].finished_at).total_seconds()) < 0.02
    exits.rewrite(tmp_path / "new" / exits.JOURNAL, {}, ())
    assert (tmp_path / "new" / exits.JOURNAL).read_text() == ""
