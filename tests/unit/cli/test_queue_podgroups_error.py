"""`vcctl queue list|get` count each queue's PodGroups; when listing them fails, Volcano's vcctl
(pkg/cli/queue/list.go, get.go) wraps the API's error: `failed to list podgroups with err: …` (list),
`failed to list podgroup for queue <name> with err: …` (get), printed as `Failed to <sub> queue: …`, exit 255.

The API here is a small HTTP server (as Volcano's own tests use httptest) that serves the queues and refuses
the PodGroup list as a cluster's RBAC would (403 Forbidden)."""
import contextlib
import http.server
import json
import threading

import pytest
from click.testing import CliRunner

from vclite.cli import main as main_mod

QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": "q1", "resourceVersion": "1"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
FORBIDDEN = ('podgroups.scheduling.volcano.sh is forbidden: User "bob" cannot list resource "podgroups" '
             'in API group "scheduling.volcano.sh" at the cluster scope')


@contextlib.contextmanager
def api_refusing_podgroups():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/apis/scheduling.volcano.sh/v1beta1/queues":
                status, body = 200, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "QueueList",
                                     "metadata": {"resourceVersion": "1"}, "items": [QUEUE]}
            elif path == "/apis/scheduling.volcano.sh/v1beta1/queues/q1":
                status, body = 200, QUEUE
            elif path == "/apis/scheduling.volcano.sh/v1beta1/podgroups":
                status, body = 403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": FORBIDDEN,
                                     "reason": "Forbidden", "code": 403}
            else:
                status, body = 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": path,
                                     "reason": "NotFound", "code": 404}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("args, want", [
    pytest.param(["queue", "list"], f"Failed to list queue: failed to list podgroups with err: {FORBIDDEN}", id="list"),
    pytest.param(["queue", "get", "-n", "q1"],
                 f"Failed to get queue: failed to list podgroup for queue q1 with err: {FORBIDDEN}", id="get"),
])
def test_a_refused_podgroup_list_is_wrapped_as_volcano_does(tmp_path, args, want):
    with api_refusing_podgroups() as url:
        config = tmp_path / "kubeconfig"
        config.write_text(f"apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{url}'}}}}]\n"
                          "contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
                          "users: [{name: u, user: {}}]\n")
        result = CliRunner().invoke(main_mod.cli, [*args, "-k", str(config)], catch_exceptions=False)
    assert (result.exit_code, result.output.strip()) == (255, want)
