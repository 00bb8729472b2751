"""pods/exec: the checks made before the upgrade (kube-apiserver's and the kubelet's words) and the
error stream's Status kubectl reads an exit code from."""
import pytest

from vclite.httpserver import execstream
from vclite.lib import errors


def pod(*containers, init=(), node="local"):
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {**({"nodeName": node} if node else {}), "containers": [{"name": c} for c in containers],
                     **({"initContainers": [{"name": c} for c in init]} if init else {})}}


STREAMS = {"stdout": "true", "stderr": "true"}


@pytest.mark.parametrize("the_pod, query, command, want", [
    pytest.param(pod("main"), STREAMS, ["ls"], execstream.Options(["ls"], "main", False, True, True, False),
                 id="the-only-container"),
    pytest.param(pod("a", "b"), {**STREAMS, "container": "b"}, ["sh", "-c", "x"],
                 execstream.Options(["sh", "-c", "x"], "b", False, True, True, False), id="the-named-one"),
    pytest.param(pod("a", init=["setup"]), {**STREAMS, "container": "setup"}, ["ls"],
                 execstream.Options(["ls"], "setup", False, True, True, False), id="an-init-container"),
    pytest.param(pod("main"), {"stdin": "true", "stdout": "true", "stderr": "true", "tty": "true"}, ["sh"],
                 execstream.Options(["sh"], "main", True, True, False, True), id="a-terminal-has-no-stderr"),
    pytest.param(pod("main"), {"stdin": "1"}, ["cat"], execstream.Options(["cat"], "main", True, False, False, False),
                 id="stdin-only"),
])
def test_accepted(the_pod, query, command, want):
    assert execstream.check(the_pod, query, command) == want


@pytest.mark.parametrize("the_pod, query, command, words", [
    pytest.param(pod("main"), {**STREAMS, "container": "nope"}, ["ls"], "container nope is not valid for pod p",
                 id="unknown-container"),
    pytest.param(pod("a", "b", init=["i"]), STREAMS, ["ls"],
                 r"a container name must be specified for pod p, choose one of: \[i a b\]", id="which-container"),
    pytest.param(pod(), STREAMS, ["ls"], "a container name must be specified for pod p$", id="no-container"),
    pytest.param(pod("main", node=None), STREAMS, ["ls"], "pod p does not have a host assigned", id="no-node"),
    pytest.param(pod("main"), STREAMS, [], "you must specify at least one command for the container",
                 id="no-command"),
    pytest.param(pod("main"), {}, ["ls"], "you must specify at least 1 of stdin, stdout, stderr", id="no-stream"),
    pytest.param(pod("main"), {"stdout": "yes"}, ["ls"], 'invalid value for stdout: "yes"', id="not-a-boolean"),
])
def test_refused(the_pod, query, command, words):
    with pytest.raises(errors.BadRequest, match=words):
        execstream.check(the_pod, query, command)


def test_the_exit_status_kubectl_reads():
    assert execstream.exit_status(0, ["true"]) == {"metadata": {}, "status": "Success"}
    failed = execstream.exit_status(3, ["sh", "-c", "exit 3"])
    assert (failed["status"], failed["reason"], failed["details"]) == (
        "Failure", "NonZeroExitCode", {"causes": [{"reason": "ExitCode", "message": "3"}]})
    assert failed["message"] == "command terminated with non-zero exit code: error executing command [sh -c exit 3], " \
                                "exit code 3"
