"""Health endpoints as kube-apiserver answers them (`kubectl get --raw '/readyz?verbose'`)."""
import pytest

from vclite.httpserver import health

OK = [("ping", True), ("shutdown", True)]
STOPPING = [("ping", True), ("shutdown", False)]


@pytest.mark.parametrize("sub, checks, verbose, code, text", [
    pytest.param(None, OK, False, 200, "ok", id="ok"),
    pytest.param(None, STOPPING, False, 503, "not ready", id="failing"),
    pytest.param(None, OK, True, 200, "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n", id="verbose"),
    pytest.param(None, STOPPING, True, 503,
                 "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n", id="verbose-failing"),
    pytest.param("ping", STOPPING, False, 200, "ok", id="one-check"),
    pytest.param("shutdown", STOPPING, False, 503, "internal server error: shutdown failed", id="one-failing-check"),
    pytest.param("etcd", OK, False, 404, "404 page not found\n", id="unknown-check"),
])
def test_answer(sub, checks, verbose, code, text):
    assert health.answer("readyz", sub, checks, verbose) == (code, text)
