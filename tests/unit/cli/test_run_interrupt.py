"""`vcctl run` interrupted (Ctrl-C, SIGINT) outside the run's own signal handling — while the manifests load, or
while the report of a stopped run is written — ends as an interrupted run does: `interrupted: …`, exit 130, and
never click's `Aborted!` (its words for a KeyboardInterrupt that escapes a command). A real SIGINT is sent to the
process itself at the moment the case names, so the race is driven, not waited for."""
from __future__ import annotations

import os
import signal

import pytest

from vclite.cli import main as main_mod
from vclite.cli import manifests, run
from tests import jobs_yaml

STUCK = jobs_yaml.vcjob("huge", ["true"], cpu="100000")   # (no node can ever hold it: the run stops stuck)


def _sigint_when_called(monkeypatch, module, name):
    real = getattr(module, name)

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)   # (Python's handler raises KeyboardInterrupt at once, in this thread)
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, interrupted)


@pytest.mark.parametrize("module, name, said", [
    (manifests, "load_and_validate", "interrupted: nothing was run."),
    (run, "_stopped_report", "interrupted: every pod was stopped."),
])
def test_a_ctrl_c_outside_the_run_loop_is_an_interrupted_run(tmp_path, monkeypatch, capfd, module, name, said):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    path = tmp_path / "stuck.yaml"
    path.write_text(STUCK)
    _sigint_when_called(monkeypatch, module, name)
    with pytest.raises(SystemExit) as exited:
        main_mod.cli.main(["run", "--workdir", str(tmp_path / "w"), str(path)], prog_name="vcctl")
    err = capfd.readouterr().err
    assert exited.value.code == 130, err
    assert said in err and "Aborted!" not in err, err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
