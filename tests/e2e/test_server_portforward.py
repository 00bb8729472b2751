"""`kubectl port-forward` against a real `vcctl server`, with the real kubectl binary (SPDY tunnelled in
a WebSocket, as kubectl 1.31+ speaks it) and the official Python client (the v4 channel protocol):
an HTTP server in a pod reached from the laptop side, a megabyte echoed, connections at once, and a
port nothing listens on reported as kubectl reports it on a cluster."""
import contextlib
import hashlib
import json
import os
import select
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from tests.e2e.test_server_kubectl import wait_for
from tests.unit.httpserver.test_portforward import free_port

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

ECHO = ("import socketserver\n"
        "class H(socketserver.StreamRequestHandler):\n"
        "    def handle(self):\n"
        "        while data := self.request.recv(65536):\n"
        "            self.request.sendall(data)\n"
        "socketserver.ThreadingTCPServer.allow_reuse_address = True\n"
        "socketserver.ThreadingTCPServer(('127.0.0.1', PORT), H).serve_forever()\n")
POD = """
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
    - name: main
      image: python
      command: COMMAND
"""


def start_pod(kubectl, name, command):
    kubectl("apply", "-f", "-", input=POD.replace("NAME", name).replace("COMMAND", json.dumps(command)))
    wait_for(kubectl, ["get", "pod", name, "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Running",
             f"pod {name} did not start")


def listening(port, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        assert time.monotonic() < deadline, f"nothing listens on {port}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def web_port(kubectl):
    port = free_port()
    start_pod(kubectl, "web", ["python3", "-m", "http.server", str(port), "--bind", "127.0.0.1"])
    listening(port)
    return port


@pytest.fixture(scope="module")
def echo_port(kubectl):
    port = free_port()
    start_pod(kubectl, "echo", ["python3", "-c", ECHO.replace("PORT", str(port))])
    listening(port)
    return port


@contextlib.contextmanager
def port_forward(kubectl, *args):
    """`kubectl port-forward ARGS` running; yields (local port, process). Its output is read until it
    says where it listens."""
    proc = subprocess.Popen([*kubectl.argv, "port-forward", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    try:
        line, deadline = "", time.monotonic() + 30
        while not line.startswith("Forwarding from 127.0.0.1:"):
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else line
            if select.select([proc.stdout], [], [], 0.5)[0]:
                line = proc.stdout.readline()
        yield int(line.split(":")[1].split()[0]), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def echo_through(port, payload):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        sender = threading.Thread(target=lambda: (s.sendall(payload), s.shutdown(socket.SHUT_WR)))
        sender.start()
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        sender.join()
    return b"".join(chunks)


def test_an_http_server_in_a_pod(kubectl, web_port):
    with port_forward(kubectl, "pod/web", f":{web_port}") as (local, _):
        with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=30) as response:
            assert response.status == 200 and b"Directory listing for /" in response.read()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{local}/no-such-file", timeout=30)
        assert missing.value.code == 404


def test_a_megabyte_echoed_and_connections_at_once(kubectl, echo_port):
    payload = os.urandom(1 << 20)
    with port_forward(kubectl, "echo", f"{free_port()}:{echo_port}") as (local, proc):
        assert hashlib.sha256(echo_through(local, payload)).digest() == hashlib.sha256(payload).digest()
        results = {}
        threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, echo_through(local, b"%d" % i * 1000)))
                   for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert results == {i: b"%d" % i * 1000 for i in range(5)}
        assert proc.poll() is None   # (still forwarding)


def test_a_port_nothing_listens_on(kubectl, echo_port):
    """As on a cluster: the connection is closed, kubectl prints the kubelet's error and stops."""
    closed = free_port()
    with port_forward(kubectl, "pod/echo", f":{closed}") as (local, proc):
        with socket.create_connection(("127.0.0.1", local), timeout=30) as s:
            assert s.recv(10) == b""
        assert proc.wait(timeout=30) == 1
        err = proc.stderr.read()
    assert f"error forwarding port {closed} to pod echo, uid " in err
    assert f"failed to connect to localhost:{closed} inside the pod, IPv4: dial tcp4 127.0.0.1:{closed}: " \
           f"connect: connection refused" in err
    assert "lost connection to pod" in err


def test_a_finished_pod_is_refused_by_kubectl(kubectl):
    kubectl("apply", "-f", "-", input=POD.replace("NAME", "done").replace("COMMAND", '["true"]'))
    wait_for(kubectl, ["get", "pod", "done", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Succeeded",
             "pod done did not finish")
    out = kubectl("port-forward", "pod/done", "8080", check=False)
    assert out.returncode == 1
    assert "unable to forward port because pod is not running. Current status=Succeeded" in out.stderr


def test_the_official_python_client(server, echo_port):
    """kubernetes.stream.portforward: the v4.channel.k8s.io WebSocket protocol."""
    from kubernetes import client, config
    from kubernetes.stream import portforward
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(server.kubeconfig)))
    forward = portforward(api.connect_get_namespaced_pod_portforward, "echo", "default", ports=str(echo_port))
    sock = forward.socket(echo_port)
    sock.settimeout(30)
    sock.sendall(b"through the python client")
    got = b""
    while got != b"through the python client":
        chunk = sock.recv(1024)
        assert chunk, got
        got += chunk
    sock.close()
    forward.close()
    assert forward.error(echo_port) is None


def test_the_servers_refusals(server, kubectl):
    """What kubectl's own checks let through, answered before the upgrade: a pod no node runs, and
    kubectl before 1.31 (plain SPDY)."""
    from kubernetes import client, config
    from kubernetes.stream import portforward
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(server.kubeconfig)))
    kubectl("apply", "-f", "-", input=POD.replace("NAME", "unplaced").replace("COMMAND", '["true"]')
            .replace("schedulerName: volcano", "schedulerName: nobody"))
    with pytest.raises(Exception) as raised:
        portforward(api.connect_get_namespaced_pod_portforward, "unplaced", "default", ports="80")
    assert "400" in str(raised.value)
    request = urllib.request.Request(
        f"{server.url}/api/v1/namespaces/default/pods/echo/portforward", method="POST",
        headers={"Authorization": f"Bearer {server.token()}", "Upgrade": "SPDY/3.1", "Connection": "Upgrade"})
    import ssl
    context = ssl._create_unverified_context()
    with pytest.raises(urllib.error.HTTPError) as spdy:
        urllib.request.urlopen(request, context=context, timeout=30)
    assert spdy.value.code == 400 and "use kubectl 1.31 or newer" in spdy.value.read().decode()
