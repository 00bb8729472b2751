"""Helpers for end-to-end tests: the real `vcctl` console script, real processes."""
import json
import pathlib
import subprocess
import sys

import pytest

from tests import vcctl_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
VCCTL = str(pathlib.Path(sys.executable).with_name("vcctl"))


class Result:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.out[-3000:]}\n--- stderr\n{self.err[-3000:]}"


@pytest.fixture
def vcctl(tmp_path):
    def run(*args, timeout=120, input=None):
        proc = subprocess.run([VCCTL, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, input=input)
        return Result(proc)
    return run


@pytest.fixture
def write(tmp_path):
    def write_file(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write_file


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real `vcctl server` with one 4-cpu node for the module's tests (a module may define its own);
    it must stop cleanly at the end."""
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


@pytest.fixture(scope="module")
def kubectl(server, tmp_path_factory):
    """The real kubectl against the module's server (vcctl_server.kubectl_runner)."""
    return vcctl_server.kubectl_runner(server.kubeconfig, tmp_path_factory.mktemp("kube-cache"))
