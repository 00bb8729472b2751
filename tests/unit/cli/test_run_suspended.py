"""What a JobFlow suspended in its file is told to do, in each way of running it: the resume command where a
client can reach the API (`vcctl server`, `vcctl run --listen`), the annotation to remove in a plain `vcctl run`
(nothing can resume it there). The real runtime each command builds; no pod runs."""
from __future__ import annotations

import pathlib
import shlex

import pytest

from vclite.api import kinds
from vclite.cli import run as run_mod
from vclite.cli import server as server_mod

TEMPLATE = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "a"},
            "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}}
FLOW = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
        "metadata": {"name": "wp", "annotations": {"flow.volcano.sh/suspend": "true"}},
        "spec": {"flows": [{"name": "a"}]}}
RESUME = "the JobFlow is suspended (vcctl jobflow resume wp)"
REMOVE = "the JobFlow is suspended (nothing resumes it in this run; remove the annotation flow.volcano.sh/suspend " \
         "to run it)"


def _plain_run(tmp_path):
    return run_mod.build_runtime(None, None, str(tmp_path / "work"), serves=False)


def _listening_run(tmp_path):
    return run_mod.build_runtime(None, None, str(tmp_path / "work"), serves=True)


def _server(tmp_path):
    return server_mod.build_runtime(tmp_path / "data", None, None)


@pytest.mark.parametrize("build, says", [
    pytest.param(_plain_run, REMOVE, id="vcctl-run"),
    pytest.param(_listening_run, RESUME, id="vcctl-run-listen"),
    pytest.param(_server, RESUME, id="vcctl-server"),
])
def test_a_suspended_flow_is_told_what_resumes_it(tmp_path, build, says):
    rt = build(tmp_path)
    try:
        rt.client.create(TEMPLATE | {"metadata": {"name": "a", "namespace": "default"}})
        rt.client.create(FLOW | {"metadata": {**FLOW["metadata"], "namespace": "default"}})
        while rt.step():   # (no pod runs: the flow is suspended)
            pass
        cond = rt.client.get(kinds.JOBFLOW, "default", "wp")["status"]["conditions"]["wp-a"]
    finally:
        rt.close()
    assert (cond["reason"], cond["message"]) == ("Suspended", f"dependencies are met; {says}")


@pytest.mark.parametrize("vclite_data, data_dir, flags", [
    (None, "HOME/.vclite", ""),                       # the default: vcctl finds its kubeconfig by itself
    ("ELSEWHERE", "ELSEWHERE", ""),                   # $VCLITE_DATA names it: found too
    (None, "ELSEWHERE", "-k ELSEWHERE/kubeconfig"),   # --data-dir elsewhere: the command must name it
    ("OTHER", "ELSEWHERE", "-k ELSEWHERE/kubeconfig"),
])
def test_the_server_names_its_kubeconfig_in_the_resume_command_where_vcctl_would_not_find_it(
        tmp_path, monkeypatch, vclite_data, data_dir, flags):
    def path(text):
        return str(tmp_path / "HOME" / ".vclite") if text == "HOME/.vclite" else str(tmp_path / text)
    monkeypatch.setenv("HOME", str(tmp_path / "HOME"))
    if vclite_data:
        monkeypatch.setenv("VCLITE_DATA", path(vclite_data))
    else:
        monkeypatch.delenv("VCLITE_DATA", raising=False)
    expected = flags.replace("ELSEWHERE", str(tmp_path / "ELSEWHERE"))
    assert server_mod.resume_flags(pathlib.Path(path(data_dir))) == expected


@pytest.mark.parametrize("dirname", ["with space", "it's", 'say "hi"', "$HOME"])
def test_the_servers_kubeconfig_in_the_resume_command_is_quoted_for_a_shell(tmp_path, monkeypatch, dirname):
    monkeypatch.delenv("VCLITE_DATA", raising=False)
    data_dir = tmp_path / dirname
    flags = server_mod.resume_flags(data_dir)
    assert shlex.split(flags) == ["-k", str(data_dir / "kubeconfig")], flags
