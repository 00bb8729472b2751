"""pods/exec and pods/attach: the checks made before the upgrade (kube-apiserver's and the kubelet's
words), the error stream's Status kubectl reads an exit code from, and an attach over the channels."""
import asyncio
import json

import pytest
from aiohttp import WSMsgType, test_utils, web

from vclite.executor import podexec
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


@pytest.mark.parametrize("the_pod, query, want", [
    pytest.param(pod("main"), {"stdout": "true", "stderr": "true"}, execstream.AttachOptions("main", False, True, True),
                 id="output-only"),
    pytest.param(pod("a", init=["setup"]), {"container": "setup", "stdin": "true", "stdout": "true"},
                 execstream.AttachOptions("setup", True, True, False), id="an-init-container-with-stdin"),
    pytest.param(pod("main"), {"stdin": "true"}, execstream.AttachOptions("main", True, False, False),
                 id="stdin-only"),
])
def test_attach_accepted(the_pod, query, want):
    assert execstream.check_attach(the_pod, query) == want


@pytest.mark.parametrize("opts, output", [
    pytest.param(execstream.AttachOptions("c", False, True, True), 1, id="stdout"),
    pytest.param(execstream.AttachOptions("c", False, False, True), 2, id="stderr-only"),
    pytest.param(execstream.AttachOptions("c", True, False, False), None, id="none"),
])
def test_the_stream_an_attached_containers_output_goes_out_as(opts, output):
    assert opts.output == output


@pytest.mark.parametrize("the_pod, query, words", [
    pytest.param(pod("main"), {**STREAMS, "container": "nope"}, "container nope is not valid for pod p",
                 id="unknown-container"),
    pytest.param(pod("main", node=None), STREAMS, "pod p does not have a host assigned", id="no-node"),
    pytest.param(pod("main"), {}, "you must specify at least 1 of stdin, stdout, stderr", id="no-stream"),
    pytest.param(pod("main"), {"stdin": "true", "stdout": "true", "tty": "true"},
                 "container main has no terminal: the local executor runs containers without one", id="a-terminal"),
])
def test_attach_refused(the_pod, query, words):
    with pytest.raises(errors.BadRequest, match=words):
        execstream.check_attach(the_pod, query)


class FakeAttachment:
    """A running container as execstream sees one: its output queued by the test, its stdin recorded."""

    def __init__(self):
        self.output, self.typed, self.calls = asyncio.Queue(), bytearray(), []
        self.ended = asyncio.Event()
        self.stdin, self.outputs = self, [(1, self)]

    def write(self, data):
        self.typed += data

    async def drain(self):
        pass

    def is_closing(self):
        return False

    async def read(self, n=-1):
        return await self.output.get()

    def end(self):   # (the container ends)
        self.output.put_nowait(b"")
        self.ended.set()

    async def wait(self):
        await self.ended.wait()
        return 0

    def resize(self, width, height):
        self.calls.append(("resize", width, height))

    def end_stdin(self):
        self.calls.append("end_stdin")

    def kill(self):
        self.calls.append("kill")
        self.end()


def attach_over_websocket(test, start):
    """`test(ws)` against a WebSocket served by execstream.serve_attach(request, start)."""
    async def main():
        async def handler(request):
            return await execstream.serve_attach(request, start, stopping)
        stopping = asyncio.Event()
        app = web.Application()
        app.router.add_get("/attach", handler)
        async with test_utils.TestClient(test_utils.TestServer(app)) as client:
            ws = await client.ws_connect("/attach", protocols=["v5.channel.k8s.io"])
            assert ws.protocol == "v5.channel.k8s.io"
            await asyncio.wait_for(test(ws), 10)
    asyncio.run(main())


def test_an_attachs_output_stdin_and_end_on_the_channels():
    """Output as stream 1, stdin from stream 0 (its end, 255 [0], told once), sizes, and at the container's
    end a Success Status on stream 3 (an attach has no exit code), then the connection's close."""
    fake = FakeAttachment()

    async def start():
        return fake

    async def test(ws):
        fake.output.put_nowait(b"hello\n")
        assert await ws.receive_bytes() == b"\x01hello\n"
        await ws.send_bytes(b"\x00typed\n")
        await ws.send_bytes(b'\x04{"Width": 80, "Height": 24}')
        await ws.send_bytes(b"\xff\x00")
        await ws.send_bytes(b"\xff\x00")
        while "end_stdin" not in fake.calls:
            await asyncio.sleep(0.01)
        fake.end()
        assert json.loads((await ws.receive_bytes())[1:]) == {"metadata": {}, "status": "Success"}
        assert (await ws.receive()).type in (WSMsgType.CLOSE, WSMsgType.CLOSED)
        assert bytes(fake.typed) == b"typed\n" and fake.calls[:2] == [("resize", 80, 24), "end_stdin"]
        assert fake.calls.count("end_stdin") == 1
    attach_over_websocket(test, start)


def test_a_client_that_goes_away_is_detached():
    fake = FakeAttachment()

    async def start():
        return fake

    async def test(ws):
        fake.output.put_nowait(b"x")
        await ws.receive_bytes()
        await ws.close()
        while "kill" not in fake.calls:
            await asyncio.sleep(0.01)
    attach_over_websocket(test, start)
    assert "end_stdin" not in fake.calls


def test_a_container_that_ended_before_the_upgrade_is_told_on_the_error_stream():
    async def start():
        raise podexec.ExecError("Internal error occurred: error attaching to container: container main is gone")

    async def test(ws):
        status = json.loads((await ws.receive_bytes())[1:])
        assert (status["status"], status["reason"], status["message"]) == (
            "Failure", "InternalError", "Internal error occurred: error attaching to container: container main is gone")
    attach_over_websocket(test, start)


def test_a_stopping_server_detaches_its_clients_with_a_status_saying_so():
    fake, stopping = FakeAttachment(), None

    async def start():
        return fake

    async def test(ws):
        fake.output.put_nowait(b"x")
        await ws.receive_bytes()
        stopping.set()
        status = json.loads((await ws.receive_bytes())[1:])
        assert (status["status"], status["message"]) == ("Failure", execstream.STOPPING_MESSAGE)
        assert "kill" in fake.calls   # (detached: never the container)

    async def main():
        nonlocal stopping
        stopping = asyncio.Event()

        async def handler(request):
            return await execstream.serve_attach(request, start, stopping)
        app = web.Application()
        app.router.add_get("/attach", handler)
        async with test_utils.TestClient(test_utils.TestServer(app)) as client:
            ws = await client.ws_connect("/attach", protocols=["v5.channel.k8s.io"])
            await asyncio.wait_for(test(ws), 10)
    asyncio.run(main())
