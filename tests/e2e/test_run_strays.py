"""`vcctl run` leaves nothing running behind it: what a pod's command starts outside its process group (a sleeper
in a session of its own, as a launcher's workers or a dataloader may be) is killed with the pod's container."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import ROOT, VCCTL
from tests.unit.executor.test_recovery import _alive
from vclite.executor import strays

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not strays.supported(), reason="needs /proc and pidfds")]

SLEEPER = "import os, sys, time; os.setsid(); open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"


@pytest.mark.parametrize("then, code", [
    pytest.param("echo trained", 0, id="the pod ends"),
    pytest.param("sleep 120", 1, id="the run times out"),
])
def test_a_pods_daemonized_sleeper_is_gone_when_the_run_ends(tmp_path, then, code):
    """(before: the sleeper was still running after `vcctl run` had returned)"""
    pid_file = tmp_path / "sleeper.pid"
    script = f'{sys.executable} -c "$SLEEPER" {pid_file} & while [ ! -s {pid_file} ]; do sleep 0.01; done; {then}'
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"},
           "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "main", "image": "python", "command": ["sh", "-c", script],
                                    "env": [{"name": "SLEEPER", "value": SLEEPER}]}]}}
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps(pod))
    proc = subprocess.run([VCCTL, "run", "--workdir", str(tmp_path / "work"), "--timeout", "5", str(manifest)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != strays.MARK})
    pid = int(pid_file.read_text())
    try:
        assert proc.returncode == code, proc.stderr
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, 9)
