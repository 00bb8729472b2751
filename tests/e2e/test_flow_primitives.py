"""Each flow primitive's example through the real `vcctl run` (real processes, real termination
messages, a real HTTP server for the probe), with what it must show; and `vcctl jobflow
suspend|resume` against a real `vcctl server`."""
import json
import pathlib
import signal
import socket
import subprocess
import time

import pytest

from tests import vcctl_server
from tests.e2e.conftest import VCCTL
from tests.e2e.test_examples import ROOT, by_kind
from vclite.api import kinds, meta
from vclite.kube import client as kube_client


def run_example(vcctl, tmp_path, name, text=None, code=0):
    path = ROOT / "examples" / name
    if text is not None:
        path = tmp_path / name
        path.write_text(text)
    r = vcctl("run", "--quiet", "-o", "json", "--timeout", "90", "--workdir", tmp_path / "work", path)
    assert r.code == code, r
    items = r.json()["items"]
    jobflow = next(o for o in items if o["kind"] == "JobFlow")
    return jobflow["status"], by_kind(items, "Job"), r


def logs(tmp_path, pod: str) -> str:
    return "".join(p.read_text() for p in sorted((tmp_path / "work").rglob(f"{pod}/logs/*.log")))


def phases(status, *names):
    return {n: status["conditions"][n]["phase"] for n in names}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _template(name, script, restart="Never"):
    return f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: {restart}
          containers:
            - {{name: main, image: busybox, command: [sh, -c, {script!r}]}}
"""


def test_probe_starts_the_client_while_the_server_runs(vcctl, tmp_path):
    # The example's port, replaced by a free one: test_examples.py may run the same file meanwhile.
    text = (ROOT / "examples" / "probe.yaml").read_text().replace("18765", str(free_port()))
    status, jobs, _ = run_example(vcctl, tmp_path, "probe.yaml", text)
    assert status["state"]["phase"] == "Succeed"
    assert phases(status, "probe-serve", "probe-client", "probe-watch") == {
        "probe-serve": "Completed", "probe-client": "Completed", "probe-watch": "Completed"}
    # the client started before the server finished: it is what stopped the server
    client_created = jobs["probe-client"]["metadata"]["creationTimestamp"]
    serve_end = next(e for e in status["jobStatusList"] if e["name"] == "probe-serve")["endTimestamp"]
    assert client_created <= serve_end
    assert "prediction: 42" in logs(tmp_path, "probe-client-main-0")
    assert "GET /healthz" in logs(tmp_path, "probe-serve-server-0")


def test_any_and_expression_handle_a_failed_mirror(vcctl, tmp_path):
    status, _, r = run_example(vcctl, tmp_path, "any-expression.yaml")
    assert status["state"]["phase"] == "Succeed"
    assert status["failedJobs"] == ["any-expression-mirror-a"]
    assert status["skippedJobs"] == ["any-expression-deploy"]
    assert status["conditions"]["any-expression-deploy"]["reason"] == "DependencyNeverMet"
    assert sorted(status["completedJobs"]) == sorted(f"any-expression-{n}" for n in
                                                     ("mirror-b", "train", "alert", "cleanup"))


def test_if_else_takes_the_branch_the_output_chooses(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "if-else.yaml")
    assert status["conditions"]["if-else-evaluate"]["output"].strip() == "0.93"
    assert set(jobs) == {"if-else-evaluate", "if-else-deploy"}
    assert status["conditions"]["if-else-retrain"] == {
        "phase": "Skipped", "reason": "WhenFalse", "message": "when outputs.evaluate < 0.9 is false"}
    assert "deploying resnet50 (accuracy 0.93)" in logs(tmp_path, "if-else-deploy-main-0")


def test_switch_runs_exactly_the_chosen_case(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "switch.yaml")
    assert set(jobs) == {"switch-finetune", "switch-report"}
    assert sorted(status["skippedJobs"]) == ["switch-evaluate", "switch-train"]
    assert "mode finetune done: finetuned" in logs(tmp_path, "switch-report-main-0")


@pytest.mark.parametrize("mode, output", [("train", "trained"), ("evaluate", "evaluated")])
def test_switch_report_reads_whichever_case_ran(vcctl, tmp_path, mode, output):
    """The example's report joins every case: with another mode, it runs and reads that case's output."""
    r = vcctl("run", "--quiet", "-o", "json", "--timeout", "90", "--workdir", tmp_path / "work",
              "-p", f"mode={mode}", ROOT / "examples" / "switch.yaml")
    assert r.code == 0, r
    jobs = by_kind(r.json()["items"], "Job")
    assert set(jobs) == {f"switch-{mode}", "switch-report"}
    assert f"mode {mode} done: {output}" in logs(tmp_path, "switch-report-main-0")


def test_fan_out_one_vcjob_per_item(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "fan-out.yaml")
    assert {n for n in jobs if n.startswith("fan-out-process-")} == {f"fan-out-process-{i}" for i in range(3)}
    assert {n for n in jobs if n.startswith("fan-out-languages-")} == {"fan-out-languages-0", "fan-out-languages-1"}
    assert status["conditions"]["fan-out-process"]["items"] == 3
    assert "processing shard-b" in logs(tmp_path, "fan-out-process-1-main-0")
    assert "building the German (de) vocabulary" in logs(tmp_path, "fan-out-languages-1-main-0")
    merge_created = jobs["fan-out-merge"]["metadata"]["creationTimestamp"]
    ends = {e["name"]: e.get("endTimestamp", "") for e in status["jobStatusList"]}
    assert all(ends[f"fan-out-process-{i}"] <= merge_created for i in range(3)), "merge waits for every item"


def test_repeat_until_stops_when_the_condition_holds(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "repeat-until.yaml")
    assert sorted(n for n in jobs if n.startswith("repeat-until-train-")) == [
        "repeat-until-train-0", "repeat-until-train-1", "repeat-until-train-2"]
    assert status["conditions"]["repeat-until-train"]["reason"] == "Repeat"
    assert "accuracy 0.92" in logs(tmp_path, "repeat-until-publish-main-0")


def test_patch_and_parameters_reach_the_vcjob(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "patch.yaml")
    task = jobs["patch-train"]["spec"]["tasks"][0]
    assert task["replicas"] == 2 and jobs["patch-train"]["spec"]["minAvailable"] == 2
    env = {e["name"]: e["value"] for e in task["template"]["spec"]["containers"][0]["env"]}
    assert env == {"LEARNING_RATE": "0.01", "RUN": "full"}
    assert "full run on imagenet-mini: 3 epochs, lr 0.01" in logs(tmp_path, "patch-train-worker-1")
    assert "smoke run on imagenet-mini" in logs(tmp_path, "patch-smoke-test-worker-0")



def test_a_parameter_set_on_the_command_line_replaces_the_files_value(vcctl, tmp_path):
    """`vcctl run -p NAME=VALUE`, as `argo submit -p`: the flow runs with it; a parameter no JobFlow
    declares (a typo) is refused and nothing runs."""
    path = ROOT / "examples" / "patch.yaml"
    r = vcctl("run", "--quiet", "-p", "epochs=7", "-p", "dataset=cifar = 10", "--workdir", tmp_path / "work", path)
    assert r.code == 0, r
    assert "full run on cifar = 10: 7 epochs, lr 0.01" in logs(tmp_path, "patch-train-worker-1")
    bad = vcctl("run", "-p", "epoch=7", "--workdir", tmp_path / "bad", path)
    assert bad.code == 2 and '-p epoch: no JobFlow declares the parameter "epoch" in spec.arguments.parameters ' \
        "(declared: dataset, epochs)" in bad.err, bad
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").rglob("*.log"))
    assert vcctl("validate", "-p", "epochs=7", path).code == 0
    malformed = vcctl("validate", "-p", "epochs", path)
    assert malformed.code == 2 and "'epochs': expected NAME=VALUE" in malformed.err, malformed


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_problem_found_with_p_values_says_which_were_given(vcctl, write, tmp_path, command):
    """The problem is located in the file (the `when` that reads it), but the value came from -p: the count says so."""
    path = write("w.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: w}\nspec:\n"
                           "  arguments: {parameters: [{name: 'n', value: '3'}, {name: s, value: x}]}\n"
                           "  flows:\n  - name: a\n    when: params.n > 2\n" + _template("a", "true"))
    r = vcctl(command, "-p", "n=many", "-p", "s=a b", path)
    assert r.code == 2 and 'w.yaml:8:11: JobFlow/w: spec.flows[0].when: flow "a": cannot read string "many" as a ' \
        "number at position 0" in r.err, r
    assert "1 problem(s) found (with -p n=many -p 's=a b')" in r.err, r


def test_a_parameter_named_like_a_yaml_boolean_is_set_with_p(vcctl, write, tmp_path):
    """`-p n=no`: names and values given with -p are strings, never read as YAML (where `n` and `no` are
    false); the JobFlow declares the name quoted."""
    path = write("n.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: say}\nspec:\n"
                           "  tasks:\n  - name: w\n    replicas: 1\n    template:\n      spec:\n"
                           "        restartPolicy: Never\n"
                           "        containers: [{name: c, command: [echo, 'n is {{params.n}}']}]\n---\n"
                           "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: p}\nspec:\n"
                           "  arguments: {parameters: [{name: 'n', value: 'yes'}]}\n  flows: [{name: say}]\n")
    r = vcctl("run", "--quiet", "-p", "n=no", "--workdir", tmp_path / "work", path)
    assert r.code == 0, r
    assert logs(tmp_path, "p-say-w-0").strip() == "n is no"


SHRINK = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: work}
spec:
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, command: ["true"]}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: shrink}
spec:
  flows:
  - name: work
    patch: {jobSpec: {tasks: [{name: worker, replicas: 1}]}}
"""


BRACES = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: braces}
spec:
  flows: [{name: greet}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: greet}
spec:
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              env: [{name: TPL, value: "Hello {{name}}, build {{ build_id }}"}]
              command: [sh, -c, 'echo "$TPL"']
"""


def test_a_plain_volcano_flow_keeps_its_own_braces_text(vcctl, tmp_path):
    """{{…}} text whose root is not a flow placeholder's runs unchanged, as on Volcano (with a warning)."""
    status, _, _ = run_example(vcctl, tmp_path, "braces.yaml", BRACES)
    assert status["state"]["phase"] == "Succeed"
    assert logs(tmp_path, "braces-greet-main-0").strip() == "Hello {{name}}, build {{ build_id }}"
    checked = vcctl("validate", tmp_path / "braces.yaml")
    assert checked.code == 0 and "{{name}} is not a flow placeholder" in checked.err, checked


def test_a_plain_volcano_flow_keeps_flow_placeholder_text_that_means_nothing_in_it(vcctl, tmp_path):
    """{{item}} outside a loop, {{params.x}} without spec.arguments, {{outputs.<not a flow>}}: Volcano runs
    such a template unchanged, and so does vclite (with a warning each)."""
    text = BRACES.replace("Hello {{name}}, build {{ build_id }}", "{{item}} {{ params.x }} {{outputs.zz}} {{iteration}}")
    status, _, _ = run_example(vcctl, tmp_path, "braces.yaml", text)
    assert status["state"]["phase"] == "Succeed"
    assert logs(tmp_path, "braces-greet-main-0").strip() == "{{item}} {{ params.x }} {{outputs.zz}} {{iteration}}"
    checked = vcctl("validate", tmp_path / "braces.yaml")
    assert checked.code == 0 and "{{item}} is left as it is: flow \"greet\" has no withItems or withParam" in \
        checked.err, checked


def test_a_patch_that_lowers_replicas_gets_a_matching_min_available(vcctl, tmp_path):
    # the template is stored without the vcjob defaults (as on Volcano): minAvailable follows the
    # patched replicas instead of the template's 3 (which made the vcjob invalid)
    status, jobs, _ = run_example(vcctl, tmp_path, "shrink.yaml", text=SHRINK)
    spec = jobs["shrink-work"]["spec"]
    assert status["state"]["phase"] == "Succeed"
    assert (spec["tasks"][0]["replicas"], spec["tasks"][0]["minAvailable"], spec["minAvailable"]) == (1, 1, 1)


def test_flow_retry_recreates_the_vcjob_until_it_succeeds(vcctl, tmp_path):
    status, jobs, _ = run_example(vcctl, tmp_path, "flow-retry.yaml")
    assert status["state"]["phase"] == "Succeed" and status["conditions"]["flow-retry-fetch"]["retries"] == 2
    text = logs(tmp_path, "flow-retry-fetch-download-0")
    assert "attempt 3" in text and "downloaded" in text
    hist = next(e for e in status["jobStatusList"] if e["name"] == "flow-retry-fetch")["runningHistories"]
    assert [h["state"] for h in hist].count("Failed") == 2


def test_a_retry_attempt_is_stopped_at_max_duration_as_argo_sets_its_pods_deadline(vcctl, tmp_path):
    """The second attempt hangs: its pods get what is left of maxDuration as activeDeadlineSeconds, so
    the executor stops it (DeadlineExceeded) and the JobFlow fails instead of waiting for ever."""
    text = (ROOT / "examples" / "flow-retry.yaml").read_text().replace("maxDuration: 10s", "maxDuration: 3s")
    text = text.replace('-lt 3', '-lt 2').replace('echo "downloaded"', "sleep 60")
    status, jobs, r = run_example(vcctl, tmp_path, "flow-retry.yaml", text=text, code=1)
    cond = status["conditions"]["flow-retry-fetch"]
    assert status["state"]["phase"] == "Failed" and cond["retries"] == 1 and cond["reason"] == "RetriesExhausted"
    deadline = jobs["flow-retry-fetch"]["spec"]["tasks"][0]["template"]["spec"]["activeDeadlineSeconds"]
    assert 1 <= deadline <= 2, "3s from the first attempt, less the first attempt and its 1s back-off"
    assert "DeadlineExceeded" in r.err


def test_exit_handler_runs_after_the_failure(vcctl, tmp_path):
    status, jobs, r = run_example(vcctl, tmp_path, "exit-handler.yaml", code=1)
    assert status["state"]["phase"] == "Failed"
    assert set(jobs) == {"exit-handler-prepare", "exit-handler-train", "exit-handler-notify"}
    assert jobs["exit-handler-notify"]["metadata"]["creationTimestamp"] >= \
        next(e for e in status["jobStatusList"] if e["name"] == "exit-handler-train")["endTimestamp"]
    assert status["conditions"]["exit-handler-evaluate"]["reason"] == "DependencyNeverMet"   # train failed
    assert logs(tmp_path, "exit-handler-notify-main-0") == \
        "run Failed: prepare Completed, train Failed, evaluate Skipped; first failure: train\n", r


def _edge_flow(flows: str, on_exit: str = "") -> str:
    return ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: edge}\nspec:\n"
            + (f"  onExit: {on_exit}\n" if on_exit else "") + "  flows:\n" + flows)


EDGE_TEMPLATES = (_template("say", 'printf %s "$SAY" > $TERMINATION_MESSAGE_PATH').replace(
    "command:", "env: [{name: SAY, value: '[1, 2'}], command:") + _template("quiet", "true")
    + _template("each", "echo {{item}}") + _template("fail", "exit 3"))


@pytest.mark.parametrize("flows, on_exit, code, conditions, says", [
    pytest.param("    - name: say\n    - name: each\n      withParam: '{{outputs.say}}'\n", "", 1,
                 {"edge-each": ("Failed", "InvalidParam")},
                 "withParam of flow each (the output of flow say): not a JSON list", id="with-param-malformed-json"),
    pytest.param("    - name: quiet\n    - name: each\n      withParam: '{{outputs.quiet}}'\n", "", 1,
                 {"edge-each": ("Failed", "InvalidParam")}, "the output is empty, not a JSON list",
                 id="with-param-no-output"),
    pytest.param("    - name: each\n      withItems: []\n    - name: quiet\n      dependsOn: {targets: [each]}\n",
                 "", 0, {"edge-each": ("Completed", "NoItems"), "edge-quiet": ("Completed", None)}, "",
                 id="with-items-empty"),
    pytest.param("    - name: quiet\n      repeat: {until: \"outputs.quiet == 'never'\", limit: 2}\n", "", 1,
                 {"edge-quiet": ("Failed", "RepeatLimitReached"), "edge-quiet-1": ("Completed", None)},
                 "until outputs.quiet == 'never' still false after 2 iterations (limit 2)", id="repeat-never-true"),
    pytest.param("    - name: fail\n      retry: {limit: 0}\n", "", 1, {"edge-fail": ("Failed", "RetriesExhausted")},
                 "attempt 1 failed; no retries left (limit 0)", id="retry-limit-0"),
    pytest.param("    - name: quiet\n    - name: fail\n", "fail", 1,
                 {"edge-quiet": ("Completed", None), "edge-fail": ("Failed", None)},
                 "JobFlow default/edge: the exit handler (spec.onExit: fail) was Failed, which fails the JobFlow",
                 id="exit-handler-fails"),
])
def test_edge_cases_end_with_the_right_code_and_a_readable_status(vcctl, tmp_path, flows, on_exit, code,
                                                                   conditions, says):
    status, _, r = run_example(vcctl, tmp_path, "edge.yaml", _edge_flow(flows, on_exit) + EDGE_TEMPLATES, code=code)
    assert status["state"]["phase"] == ("Succeed" if code == 0 else "Failed")
    got = {n: (status["conditions"][n]["phase"], status["conditions"][n].get("reason")) for n in conditions}
    assert got == conditions, status["conditions"]
    assert says in r.err, r


def test_the_exit_handler_reads_the_other_flows_outcomes(vcctl, write, tmp_path):
    """`outcomes.<flow>` in its when and `{{outcomes.<flow>}}` in its template: what failed, what was skipped."""
    text = ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: night}\nspec:\n  onExit: report\n"
            "  flows:\n  - name: extract\n  - name: transform\n    dependsOn: {targets: [extract]}\n"
            "  - name: publish\n    dependsOn: {targets: [transform]}\n"
            "  - name: report\n    when: outcomes.publish != \"Completed\"\n"
            + _template("extract", "true")
            + _template("transform", 'echo "schema mismatch" > $TERMINATION_MESSAGE_PATH; exit 2')
            + _template("publish", "true")
            + _template("report", "echo extract={{outcomes.extract}} transform={{outcomes.transform}} "
                                  "'({{outputs.transform}})' publish={{outcomes.publish}}"))
    status, _, r = run_example(vcctl, tmp_path, "outcomes.yaml", text, code=1)
    assert phases(status, "night-publish", "night-report") == {"night-publish": "Skipped", "night-report": "Completed"}
    assert logs(tmp_path, "night-report-main-0") == \
        "extract=Completed transform=Failed (schema mismatch) publish=Skipped\n", r


def test_the_exit_handler_sends_one_notification_per_failure(vcctl, tmp_path):
    """`withParam: "{{workflow.failures}}"`: one vcjob per failed flow, each reading its failure's fields."""
    text = ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: night}\nspec:\n  onExit: notify\n"
            "  flows:\n  - name: notify\n    withParam: '{{workflow.failures}}'\n  - name: extract\n"
            "  - name: transform\n    dependsOn: {expression: extract.Finished}\n"
            "  - name: publish\n    dependsOn: {targets: [transform]}\n"
            + _template("extract", 'echo "disk full" > $TERMINATION_MESSAGE_PATH; exit 2')
            + _template("transform", "exit 3") + _template("publish", "true")
            + _template("notify", 'echo "{{item.name}} {{item.outcome}} (handled: {{item.handled}}): '
                                  '{{item.message}}"'))
    status, jobs, r = run_example(vcctl, tmp_path, "notify.yaml", text, code=1)
    assert sorted(j for j in jobs if j.startswith("night-notify")) == ["night-notify-0", "night-notify-1"], r
    assert status["conditions"]["night-notify"]["message"] == "2 items: 2 Completed"
    assert logs(tmp_path, "night-notify-0-main-0") == ("extract Failed (handled: true): vcjob night-extract Failed: "
                                                      "pod night-extract-main-0: container main exited with code 2 "
                                                      "(Error): disk full\n"), r
    assert logs(tmp_path, "night-notify-1-main-0") == ("transform Failed (handled: false): vcjob night-transform "
                                                      "Failed: pod night-transform-main-0: container main exited with "
                                                      "code 3 (Error)\n")


def test_a_failed_flow_says_which_container_exited_with_what_code(vcctl, tmp_path):
    """A real `exit 3` with no termination message: the JobFlow's condition, the exit handler's
    `{{workflow.failures}}` and the run's report say which pod's container exited with what code."""
    why = "pod night-train-main-0: container main exited with code 3 (Error)"
    text = ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: night}\nspec:\n  onExit: notify\n"
            "  flows:\n  - name: notify\n  - name: train\n"
            + _template("train", "echo 'loss is nan' >&2; exit 3")
            + _template("notify", 'printf "%s\\n" "$FAILURES"').replace(
                "command: [sh", "env: [{name: FAILURES, value: '{{workflow.failures}}'}], command: [sh"))
    status, _, r = run_example(vcctl, tmp_path, "train.yaml", text, code=1)
    assert status["conditions"]["night-train"]["message"] == why, status
    assert json.loads(logs(tmp_path, "night-notify-main-0")) == [
        {"name": "train", "outcome": "Failed", "message": f"vcjob night-train Failed: {why}", "handled": False}], r
    assert f"vcjob default/night-train Failed: {why}\n" in r.err, r
    assert "loss is nan" in r.err, r   # (the last lines of its log)


def test_an_account_named_by_an_item_or_an_output_is_made_when_the_vcjob_is(vcctl, write, tmp_path):
    """`serviceAccountName: "sa-{{item}}"` / `"{{outputs.pick}}"`: known only when the JobFlow makes the vcjob, the
    account is made then (as those the files name but do not define are before the run), with a warning at the
    field that wrote it; the pods run under it."""
    account = "          serviceAccountName: {!r}\n          restartPolicy: Never"
    text = ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: acct}\nspec:\n  flows:\n"
            "  - name: pick\n  - name: shard\n    withItems: [trainer, evaluator]\n"
            "  - name: publish\n    dependsOn: {targets: [pick]}\n"
            + _template("pick", "printf publisher > $TERMINATION_MESSAGE_PATH")
            + _template("shard", "echo {{item}}").replace("          restartPolicy: Never",
                                                          account.format("sa-{{item}}"))
            + _template("publish", "true").replace("          restartPolicy: Never",
                                                   account.format("{{outputs.pick}}")))
    path = write("acct.yaml", text)
    r = vcctl("run", "-o", "json", "--timeout", "60", "--workdir", tmp_path / "work", path)
    assert r.code == 0, r
    pods = {meta.name(p): p["spec"]["serviceAccountName"] for p in r.json()["items"] if p["kind"] == "Pod"}
    assert pods == {"acct-pick-main-0": "default", "acct-shard-0-main-0": "sa-trainer",
                    "acct-shard-1-main-0": "sa-evaluator", "acct-publish-main-0": "publisher"}, r
    line = {name: 1 + text.splitlines().index(account.format(name).splitlines()[0])
            for name in ("sa-{{item}}", "{{outputs.pick}}")}
    for written, made, job in [("sa-{{item}}", "sa-trainer", "acct-shard-0"),
                               ("sa-{{item}}", "sa-evaluator", "acct-shard-1"),
                               ("{{outputs.pick}}", "publisher", "acct-publish")]:
        assert (f'warning: {path}:{line[written]}: JobTemplate/{job.split("-")[1]}: '
                f'spec.tasks[0].template.spec.serviceAccountName: ServiceAccount "{made}" is not defined in the files '
                f"given: the embedded control plane made one in namespace default for the run when it created vcjob "
                f"default/{job} ") in r.err, r


# ---- a stopped run lists the loop items waiting for their retry ------------------------------------------------
RETRYING_SHARDS = ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: shards}\nspec:\n  flows:\n"
                   "  - name: shard\n    withItems: [1, 2, 3, 4]\n    retry: {limit: 3, backoff: {duration: 5m}}\n"
                   + _template("shard", 'n={{item}}; if [ $((n % 2)) = 0 ]; then echo "shard $n: flaky" >&2; '
                               'exit 1; fi'))
ITEM_LINE = ("    item {i}: {n} (vcjob shards-shard-{i}): attempt 1 failed; retry 1 of 3 after a 5m0s back-off; "
             "next attempt due at ")   # (an item named as the live view names it: its index and value)


def test_a_timeout_lists_each_loop_item_waiting_for_its_retry(vcctl, write, tmp_path):
    r = vcctl("run", "--quiet", "--timeout", "5", "--workdir", tmp_path / "work", write("s.yaml", RETRYING_SHARDS))
    assert r.code == 1 and "stopped: timed out after 5s" in r.err, r
    lines = r.err.splitlines()
    at = lines.index("  JobFlow default/shards: flow shard: 4 items: 2 Completed, 2 retrying")
    assert [line[:len(ITEM_LINE.format(i=1, n=2))] for line in lines[at + 1:at + 3]] == \
        [ITEM_LINE.format(i=1, n=2), ITEM_LINE.format(i=3, n=4)], r
    assert all(line.endswith("s)") and "(in 4m" in line for line in lines[at + 1:at + 3]), r


def test_ctrl_c_reports_what_was_left_with_each_loop_item_waiting_for_its_retry(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(RETRYING_SHARDS)
    proc = subprocess.Popen([VCCTL, "run", "--workdir", str(tmp_path / "work"), str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    failed = 0
    for line in proc.stdout:   # (a line per phase change, and one per failed item: both failing items seen Failed)
        failed += line.rstrip().endswith(("(flow shard, item 1: 2): Failed", "(flow shard, item 3: 4): Failed"))
        if failed == 2:
            break
    time.sleep(0.5)   # (the JobFlow controller records their back-off)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.startswith("interrupted: every pod was stopped.\n"), err
    summary = "  JobFlow default/shards: flow shard: 4 items: 2 Completed, 2 retrying\n"
    assert summary + ITEM_LINE.format(i=1, n=2) in err, err
    assert ITEM_LINE.format(i=3, n=4) in err, err
    assert "vcjob default/shards-shard-3 (flow shard, item 3: 4) Failed: " in err, err


# ---- vcctl jobflow suspend | resume against a server ---------------------------------------------------
FLOW = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: held}
spec:
  flows:
    - name: first
    - name: second
      dependsOn: {targets: [first]}
"""


wait_for = vcctl_server.wait_until


def test_suspend_and_resume_through_a_server(vcctl, tmp_path):
    with vcctl_server.running(tmp_path / "srv", "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        api = kube_client.HttpClient.from_kubeconfig(str(srv.kubeconfig))
        path = tmp_path / "flow.yaml"
        # (`first` runs long enough for the suspend to arrive while it runs, even on a loaded machine: with
        # `sleep 4`, two CLI starts on a busy machine once took longer)
        path.write_text(_template("first", "sleep 8") + _template("second", "sleep 1"))
        assert vcctl("jobtemplate", "create", "-f", path, "-k", srv.kubeconfig).code == 0
        path.write_text(FLOW)
        assert vcctl("jobflow", "create", "-f", path, "-k", srv.kubeconfig).code == 0
        r = vcctl("jobflow", "suspend", "held", "-k", srv.kubeconfig)
        assert (r.code, r.out.strip()) == (0, "Suspended JobFlow: default/held"), r
        wait_for(lambda: meta.phase(api.get(kinds.JOB, "default", "held-first")) == "Completed", "first to complete")
        time.sleep(0.5)   # the controller has had every chance to start `second`: it must not
        assert [meta.name(j) for j in api.list(kinds.JOB, "default")] == ["held-first"]
        status = api.get(kinds.JOBFLOW, "default", "held")["status"]
        assert status["conditions"]["held-second"]["reason"] == "Suspended", status
        assert status["nextFlows"] == ["second"], status    # what the resume starts
        r = vcctl("jobflow", "resume", "-N", "held", "-k", srv.kubeconfig)
        assert (r.code, r.out.strip()) == (0, "Resumed JobFlow: default/held"), r
        wait_for(lambda: meta.phase(api.get(kinds.JOBFLOW, "default", "held")) == "Succeed", "the flow to succeed")
        assert "flow.volcano.sh/suspend" not in meta.annotations(api.get(kinds.JOBFLOW, "default", "held"))
        r = vcctl("jobflow", "suspend", "nope", "-k", srv.kubeconfig)
        assert r.code == 255 and "Failed to suspend jobflow" in r.out, r


@pytest.mark.parametrize("value, code, says", [
    # nothing can resume it in `vcctl run`: the stop says so, and how to run it
    pytest.param("'True'", 1, 'JobFlow default/held is suspended (annotation flow.volcano.sh/suspend: "true"): '
                 "vcctl run starts none of its vcjobs; remove the annotation to run it", id="suspended"),
    # only "true" suspends: another value is warned about, and the flow runs
    pytest.param("'yes'", 0, 'metadata.annotations[flow.volcano.sh/suspend]: "yes" is not "true": the JobFlow '
                 "is not suspended", id="not-true"),
])
def test_a_jobflow_suspended_in_its_file_under_vcctl_run(vcctl, tmp_path, value, code, says):
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW.replace("metadata: {name: held}", "metadata:\n  name: held\n  annotations: "
                                 f"{{flow.volcano.sh/suspend: {value}}}")
                    + _template("first", "true") + _template("second", "true"))
    r = vcctl("run", "--workdir", tmp_path / "work", path, timeout=60)
    assert r.code == code and says in r.err, r
    assert "vcctl jobflow resume" not in r.err, r   # (no client can reach a plain run: its flow lines say so too)


@pytest.mark.parametrize("sub", ["suspend", "resume"])
def test_suspend_needs_a_name(vcctl, sub):
    r = vcctl("jobflow", sub, "-s", "http://127.0.0.1:1")
    assert r.code == 255 and "jobflow name must be specified" in r.out, r



def test_a_repeat_reads_its_previous_iterations_output(vcctl, tmp_path):
    flows = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: acc}
spec:
  flows:
    - name: count
      repeat: {until: "outputs.count >= 3", limit: 5}
"""
    script = "prev='{{outputs.count}}'; echo $(( ${prev:-0} + 1 )) > $TERMINATION_MESSAGE_PATH"
    status, jobs, _ = run_example(vcctl, tmp_path, "acc.yaml", flows + _template("count", script))
    assert status["state"]["phase"] == "Succeed"
    assert sorted(jobs) == ["acc-count-0", "acc-count-1", "acc-count-2"]
    assert [status["conditions"][f"acc-count-{i}"]["output"].strip() for i in range(3)] == ["1", "2", "3"]


def test_a_template_reading_the_output_of_a_flow_that_did_not_complete_is_skipped(vcctl, tmp_path):
    """As a `when` or a patch reading it: an output is read only from a Completed flow — unless the
    reader's expression names that flow."""
    flows = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: reads}
spec:
  flows:
    - name: a
      when: "false"
    - name: b
    - name: c
      dependsOn: {expression: "a.Skipped"}
"""
    text = flows + _template("a", "true") + _template("b", "echo 'a=[{{outputs.a}}]'") \
        + _template("c", "echo 'a=[{{outputs.a}}]'")
    status, jobs, _ = run_example(vcctl, tmp_path, "reads.yaml", text)
    assert status["state"]["phase"] == "Succeed"
    b = status["conditions"]["reads-b"]
    assert (b["phase"], b["reason"]) == ("Skipped", "DependencyNeverMet") and "reads the output of a Skipped" in \
        b["message"], b
    assert sorted(jobs) == ["reads-c"] and logs(tmp_path, "reads-c-main-0").strip() == "a=[]"


def test_a_flows_output_is_its_last_runs_message(vcctl, tmp_path):
    flows = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: last}
spec:
  flows:
    - name: a
"""
    marker = tmp_path / "ran-once"
    script = (f"if [ ! -e {marker} ]; then touch {marker}; echo first-attempt > $TERMINATION_MESSAGE_PATH; "
              "exit 1; fi; echo ok")
    status, _, _ = run_example(vcctl, tmp_path, "last.yaml", flows + _template("a", script, restart="OnFailure"))
    assert status["state"]["phase"] == "Succeed" and "output" not in status["conditions"]["last-a"]


def test_shared_volume_jobs_see_their_mounts_at_their_paths(vcctl, tmp_path):
    """examples/shared-volume.yaml, unchanged from a cluster's: a claim at /data two jobs share, a ConfigMap script
    run by its path, the output written to /dev/termination-log."""
    from vclite.executor import mountview
    if mountview.available() is not None:
        pytest.skip(f"no mount namespace on this host: {mountview.available()}")
    status, jobs, _ = run_example(vcctl, tmp_path, "shared-volume.yaml")
    assert status["conditions"]["shared-volume-train"]["output"] == "0.93\n"
    assert logs(tmp_path, "shared-volume-report-main-0") == "accuracy 0.93: trained on 5 rows (sum 15)\n"
    claim = tmp_path / "work" / "default" / "_pvc" / "shared-data"
    assert sorted(p.name for p in claim.iterdir()) == ["model.txt", "train.csv"]


def test_static_volume_a_volume_made_by_hand_and_a_claim_the_job_makes(vcctl, tmp_path):
    """examples/static-volume.yaml: the claim `results` bound by name to a hostPath PersistentVolume (Retain: its
    directory keeps what the jobs wrote), and the compute job's `volumeClaim` made into a claim the job owns,
    provisioned by the default class under the work directory."""
    from vclite.executor import mountview
    if mountview.available() is not None:
        pytest.skip(f"no mount namespace on this host: {mountview.available()}")
    status, jobs, r = run_example(vcctl, tmp_path, "static-volume.yaml")
    assert status["state"]["phase"] == "Succeed"
    assert logs(tmp_path, "static-volume-publish-main-0") == "sum of 1..10: 55\n"
    assert pathlib.Path("/tmp/vclite-static-volume/sum.txt").read_text() == "55\n"
    items = r.json()["items"]
    claims = {o["metadata"]["name"]: o for o in items if o["kind"] == "PersistentVolumeClaim"}
    assert claims["results"]["spec"]["volumeName"] == "static-results"
    assert claims["results"]["status"]["phase"] == "Bound"
    generated = jobs["static-volume-compute"]["spec"]["volumes"][0]["volumeClaimName"]
    assert generated.startswith("static-volume-compute-pvc-")
    owner = claims[generated]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("Job", "static-volume-compute")
    scratch = tmp_path / "work" / "default" / "_pvc" / generated
    assert (scratch / "numbers").read_text().split() == [str(i) for i in range(1, 11)]
