"""A sync that keeps failing, in a real embedded runtime: its traceback is logged the first time a
component fails with an error, each retry after that is one line with a count, and the retries, the
give-up and `failures` are as before."""
import logging

import pytest

from vclite.lib import clock, errors, workqueue
from vclite.runtime import runtime

MAX_REQUEUES = 4


class Failing:
    """A component whose sync raises on every attempt: `errors` maps a key to its error's text."""

    def __init__(self, name, clk, errors):
        self.name, self.errors = name, errors
        self.queue = workqueue.WorkQueue(clk)

    def start(self):
        pass

    def sync(self, key):
        error = self.errors[key]
        raise error if isinstance(error, Exception) else RuntimeError(error)


def run(caplog, components):
    """Settle a runtime with `components` ({name: {key: error}}) added to its own; the runtime's log records."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False, max_requeues=MAX_REQUEUES)
    try:
        for name, errors in components.items():
            c = Failing(name, rt.clock, errors)
            rt.components.append(c)
            c.queue.on_add = rt._on_add
            for key in errors:
                c.queue.add(key)
        with caplog.at_level(logging.INFO, logger="vclite.runtime"):
            rt.settle()
        return rt, [r for r in caplog.records if r.name == "vclite.runtime"]
    finally:
        rt.close()


def test_the_traceback_is_logged_once_and_each_retry_is_one_line_with_a_count(caplog):
    rt, records = run(caplog, {"broken": {"k": "boom"}})
    attempts = MAX_REQUEUES + 1
    assert [r.exc_info is not None for r in records] == [True] + [False] * MAX_REQUEUES
    assert records[0].getMessage() == "broken: sync k failed (attempt 1): boom"
    assert "Traceback" in caplog.text and caplog.text.count("Traceback") == 1
    assert [r.getMessage() for r in records[1:]] == [
        f"broken: sync k failed (attempt {n}): boom (the same error {n} times; its traceback was logged the first "
        "time)" for n in range(2, attempts + 1)]
    assert [(f.component, f.key, f.error, f.attempts) for f in rt.failures] == [
        ("broken", "k", "RuntimeError: boom", attempts)]


@pytest.mark.parametrize("components, tracebacks", [
    pytest.param({"broken": {"a": "boom", "b": "boom"}}, {("broken", "boom")}, id="same-error-two-keys"),
    pytest.param({"broken": {"a": "boom", "b": "bang"}}, {("broken", "boom"), ("broken", "bang")},
                 id="two-errors-one-component"),
    pytest.param({"one": {"a": "boom"}, "two": {"a": "boom"}}, {("one", "boom"), ("two", "boom")},
                 id="same-error-two-components"),
])
def test_a_traceback_per_component_and_error(caplog, components, tracebacks):
    rt, records = run(caplog, components)
    with_traceback = [(r.getMessage().split(":")[0], str(r.exc_info[1])) for r in records if r.exc_info is not None]
    assert sorted(with_traceback) == sorted(tracebacks)
    assert len(records) == sum(len(errors) for errors in components.values()) * (MAX_REQUEUES + 1)
    assert len(rt.failures) == sum(len(errors) for errors in components.values())


def test_a_vcjob_whose_pods_the_api_refuses_is_logged_without_a_traceback(caplog):
    """`failed to create 1 pods of 1 (first: …)`, the API's reason included, and no traceback: `vcctl run` printed
    one (of the job controller's own code) for a pod refused for a missing ServiceAccount or a quota."""
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False, max_requeues=MAX_REQUEUES)
    try:
        rt.client.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                          "metadata": {"name": "j", "namespace": "default"},
                          "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{
                              "name": "t", "replicas": 1, "template": {"spec": {
                                  "serviceAccountName": "ghost", "restartPolicy": "Never",
                                  "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}})
        with caplog.at_level(logging.INFO, logger="vclite.runtime"):
            rt.settle()
    finally:
        rt.close()
    records = [r for r in caplog.records if r.name == "vclite.runtime" and "default/j" in r.getMessage()]
    assert records and all(r.exc_info is None for r in records), records
    assert records[0].getMessage().startswith(
        'job-controller: sync default/j failed (attempt 1): failed to create 1 pods of 1 (first: j-t-0: pods "j-t-0" '
        "is forbidden: error looking up service account default/ghost")


def test_an_expected_errors_repeats_are_info_so_vcctl_run_shows_the_first_only(caplog):
    """A refused create retried (errors.Expected: its message says it all) warns once, without a traceback; its
    repeats are INFO lines (a server's log has them; `vcctl run` shows warnings only)."""
    rt, records = run(caplog, {"job-controller": {"ns/j": errors.Expected("failed to create 1 pods of 1")}})
    assert [(r.levelno, r.exc_info is None) for r in records] == \
        [(logging.WARNING, True)] + [(logging.INFO, True)] * MAX_REQUEUES
    assert records[-1].getMessage().endswith(f"(the same error {MAX_REQUEUES + 1} times; its traceback was logged "
                                              "the first time)")


def test_an_unexpected_errors_repeats_stay_warnings(caplog):
    rt, records = run(caplog, {"broken": {"k": "boom"}})
    assert {r.levelno for r in records} == {logging.WARNING}
