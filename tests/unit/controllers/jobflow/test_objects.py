"""The vcjob a flow creates and how a vcjob is traced back to its JobFlow (Volcano U11, U13, U20)."""
from __future__ import annotations

import pytest

from vclite.api import flow
from vclite.controllers.jobflow import objects

JOBFLOW = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
           "metadata": {"name": "jobflow", "namespace": "default", "uid": "jf-uid"},
           "spec": {"flows": [{"name": "jobtemplate", "patch": {"jobSpec": {"queue": "ignored"}}}]}}
TEMPLATE = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
            "metadata": {"name": "jobtemplate", "namespace": "default", "uid": "t-uid", "resourceVersion": "3",
                         "labels": {"team": "ml"}, "annotations": {"a": "b"}},
            "spec": {"queue": "default", "tasks": [{"name": "t", "replicas": 1, "template": {}}]},
            "status": {"jobDependsOnList": ["x"]}}


def test_u13_build_job():
    job = objects.build_job(JOBFLOW, TEMPLATE, "jobtemplate")
    tags = {"volcano.sh/createdByJobTemplate": "default.jobtemplate", "volcano.sh/createdByJobFlow": "default.jobflow"}
    assert job == {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": "jobflow-jobtemplate", "namespace": "default", "labels": tags, "annotations": tags,
                     "ownerReferences": [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                                          "name": "jobflow", "uid": "jf-uid", "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": TEMPLATE["spec"],    # verbatim: flows[].patch is ignored, as Volcano
    }
    job["spec"]["tasks"][0]["replicas"] = 9
    assert TEMPLATE["spec"]["tasks"][0]["replicas"] == 1, "the spec is a copy"


def vcjob(labels=None, owner=None, namespace="default"):
    md = {"name": "j", "namespace": namespace, "labels": labels or {}}
    if owner:
        md["ownerReferences"] = [owner]
    return {"metadata": md}


FLOW_OWNER = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "jobflowtest", "uid": "u",
              "controller": True}


@pytest.mark.parametrize("job, key", [
    pytest.param(vcjob(owner=FLOW_OWNER), "default/jobflowtest", id="U20-controller-owner-ref"),
    pytest.param(vcjob({flow.CREATED_BY_JOB_FLOW: "ns1.my.flow"}, namespace="ns1"), "ns1/my.flow",
                 id="label-name-with-dots"),     # Volcano splits on every dot and skips such names
    pytest.param(vcjob({flow.CREATED_BY_JOB_FLOW: "nodot"}), None, id="malformed-label"),
    pytest.param(vcjob(owner={**FLOW_OWNER, "kind": "Deployment"}), None, id="other-owner"),
    pytest.param(vcjob(owner={**FLOW_OWNER, "controller": False}), None, id="not-controller"),
    pytest.param(vcjob(), None, id="plain-vcjob"),
])
def test_jobflow_key_of(job, key):
    assert objects.jobflow_key_of(job) == key


def test_u20_names():
    assert flow.job_name("jobFlowA", "jobTemplateA") == "jobFlowA-jobTemplateA"
    assert flow.object_string("default", "flow") == "default.flow"


A_LABEL = {flow.CREATED_BY_JOB_FLOW: "default.JobflowA"}
B_LABEL = {flow.CREATED_BY_JOB_FLOW: "default.JobflowB"}
FLOW_A = {"metadata": {"name": "JobflowA", "namespace": "default", "uid": "a-uid"}}


@pytest.mark.parametrize("job, belongs", [
    pytest.param(vcjob(A_LABEL), True, id="U11-labelled-for-A"),
    pytest.param(vcjob(B_LABEL), False, id="U11-labelled-for-B-same-templates"),
    pytest.param(vcjob(A_LABEL, {**FLOW_OWNER, "name": "JobflowA", "uid": "a-uid"}), True, id="owner-uid-matches"),
    pytest.param(vcjob(A_LABEL, {**FLOW_OWNER, "name": "JobflowA", "uid": "old"}), False,
                 id="left-by-a-deleted-namesake"),
    pytest.param(vcjob({flow.CREATED_BY_JOB_TEMPLATE: "default.A"}), False, id="template-label-is-not-enough"),
])
def test_u11_belongs_to(job, belongs):
    assert objects.belongs_to(job, FLOW_A) is belongs


# ---- vclite's flow primitives: instances, patches, placeholders, outputs ------------------------------
TEMPLATE_WITH_PLACEHOLDERS = {
    **TEMPLATE, "metadata": {**TEMPLATE["metadata"], "annotations": {"flow.volcano.sh/output-task": "t"}},
    "spec": {"queue": "default", "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
        {"name": "c", "command": ["echo", "{{params.x}} {{item.k}} {{iteration}}", "{{.Values.keep}}"]}]}}}]}}


@pytest.mark.parametrize("values, patch, command, replicas", [
    pytest.param({"params.x": "1", "item": '{"k": "v"}', "iteration": "2"}, None,
                 ["echo", "1 v 2", "{{.Values.keep}}"], 1, id="placeholders-filled-others-kept"),
    pytest.param({"params.x": "1", "item": '{"k": "v"}', "iteration": "0"}, {"tasks": [{"name": "t", "replicas": 3}]},
                 ["echo", "1 v 0", "{{.Values.keep}}"], 3, id="patched-then-filled"),
])
def test_build_instance(values, patch, command, replicas):
    job = objects.build_instance(JOBFLOW, TEMPLATE_WITH_PLACEHOLDERS, "jobtemplate", "jobflow-jobtemplate-2",
                                 patch, values)
    assert job["metadata"]["name"] == "jobflow-jobtemplate-2"
    assert job["metadata"]["annotations"]["flow.volcano.sh/output-task"] == "t"
    task = job["spec"]["tasks"][0]
    assert task["template"]["spec"]["containers"][0]["command"] == command and task["replicas"] == replicas


def test_build_instance_types_an_integer_field_written_as_a_placeholder():
    """`replicas: "{{item}}"` in a JobTemplate (which JobTemplate admission leaves to the vcjob) gives the
    vcjob the number, not the text "3" vcjob admission refuses."""
    template = {**TEMPLATE, "spec": {"minAvailable": "{{params.n}}", "tasks": [
        {"name": "t", "replicas": "{{item}}", "template": {}}]}}
    job = objects.build_instance(JOBFLOW, template, "jobtemplate", "j", None, {"item": "3", "params.n": "2"})
    assert (job["spec"]["minAvailable"], job["spec"]["tasks"][0]["replicas"]) == (2, 3)


def test_build_instance_names_an_unknown_placeholder():
    with pytest.raises(ValueError, match=r"spec.tasks\[0\].*unknown placeholder \{\{params.x\}\}"):
        objects.build_instance(JOBFLOW, TEMPLATE_WITH_PLACEHOLDERS, "jobtemplate", "j", None, {})


def test_a_plain_template_is_not_touched():
    job = objects.build_instance(JOBFLOW, TEMPLATE, "jobtemplate", "jobflow-jobtemplate", None, {})
    assert job == objects.build_job(JOBFLOW, TEMPLATE, "jobtemplate")


@pytest.mark.parametrize("annotations, tasks, pod", [
    pytest.param({}, ["ps", "worker"], "j-ps-0", id="first-pod-of-first-task"),
    pytest.param({"flow.volcano.sh/output-task": "worker"}, ["ps", "worker"], "j-worker-0", id="annotated-task"),
])
def test_output_pod(annotations, tasks, pod):
    job = {"metadata": {"name": "j", "annotations": annotations}, "spec": {"tasks": [{"name": t} for t in tasks]}}
    assert objects.output_pod(job) == pod


@pytest.mark.parametrize("statuses, message", [
    pytest.param([{"name": "b", "state": {"terminated": {"message": "from b"}}},
                  {"name": "a", "state": {"terminated": {"message": "from a"}}}], "from a", id="first-in-spec-order"),
    pytest.param([{"name": "a", "state": {"terminated": {"exitCode": 0}}},
                  {"name": "b", "lastState": {"terminated": {"message": "earlier"}}}], "", id="not-an-earlier-runs"),
    pytest.param([{"name": "a", "state": {"terminated": {"exitCode": 0}},
                   "lastState": {"terminated": {"message": "first-attempt"}}},
                  {"name": "b", "state": {"terminated": {"message": "from b"}}}], "from b", id="the-last-run-that-wrote"),
    pytest.param([{"name": "a", "state": {"running": {}}}], "", id="none"),
])
def test_termination_message(statuses, message):
    pod = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "status": {"containerStatuses": statuses}}
    assert objects.termination_message(pod) == message


def _job(*pod_specs):
    return {"metadata": {"name": "j"}, "spec": {"minAvailable": 1, "tasks": [
        {"name": f"t{i}", "replicas": 1, "template": {"spec": s}} for i, s in enumerate(pod_specs)]}}


@pytest.mark.parametrize("own, seconds, expected", [
    (None, 7, 7),
    (30, 7, 7),     # the attempt's share of maxDuration is shorter
    (5, 7, 5),      # the pod's own deadline is shorter: kept
    (0, 7, 7),      # (not a deadline)
])
def test_with_active_deadline_never_lengthens_a_pods_own(own, seconds, expected):
    spec = {"containers": [{"name": "c"}], **({"activeDeadlineSeconds": own} if own is not None else {})}
    job = _job(spec, dict(spec))
    out = objects.with_active_deadline(job, seconds)
    assert [t["template"]["spec"]["activeDeadlineSeconds"] for t in out["spec"]["tasks"]] == [expected, expected]
    assert job == _job(spec, dict(spec)), "the job it was given is not changed"


def _deleting(finalizers):
    return {**JOBFLOW, "metadata": {**JOBFLOW["metadata"], "deletionTimestamp": "t", "finalizers": finalizers}}


OWNED = vcjob(owner={**FLOW_OWNER, "uid": "jf-uid"})


@pytest.mark.parametrize("jobflow, jobs, collected", [
    pytest.param(_deleting([objects.FINALIZER]), [OWNED], [OWNED], id="background-owned"),
    pytest.param(_deleting([objects.FINALIZER, "foregroundDeletion"]), [OWNED], [OWNED], id="foreground-owned"),
    pytest.param(_deleting([objects.FINALIZER]), [vcjob()], [], id="orphaned-by-the-store"),
    pytest.param(_deleting([objects.FINALIZER]), [vcjob(owner={**FLOW_OWNER, "uid": "older"})], [],
                 id="owned-by-an-earlier-jobflow"),
    pytest.param(_deleting([objects.FINALIZER, "orphan"]), [OWNED], [], id="orphan-finalizer-on-a-cluster"),
])
def test_collected_with_follows_the_garbage_collector(jobflow, jobs, collected):
    assert objects.collected_with(jobflow, jobs) == collected


@pytest.mark.parametrize("item, written", [
    pytest.param("resnet50", "resnet50", id="string"),
    pytest.param({"lr": 0.1, "model": "vit"}, '{"lr":0.1,"model":"vit"}', id="object-as-compact-json"),
    pytest.param(7, "7", id="number"),
    pytest.param("x" * 300, "x" * (flow.ITEM_ANNOTATION_MAX - 1) + "…", id="cut"),
    pytest.param("two\nlines", "two lines", id="one-line"),
])
def test_a_loop_items_vcjob_carries_its_item(item, written):
    job = objects.build_instance(JOBFLOW, TEMPLATE, "jobtemplate", "jobflow-jobtemplate-0", item=item)
    assert job["metadata"]["annotations"][flow.ITEM_ANNOTATION] == written


def test_a_vcjob_that_is_no_loop_item_carries_no_item():
    job = objects.build_instance(JOBFLOW, TEMPLATE, "jobtemplate", "jobflow-jobtemplate")
    assert flow.ITEM_ANNOTATION not in job["metadata"]["annotations"]


@pytest.mark.parametrize("tasks, limit, names", [
    pytest.param([{"name": "ps", "replicas": 1}, {"name": "w", "replicas": 2}], 32, ["j-ps-0", "j-w-0", "j-w-1"],
                 id="task-by-task"),
    pytest.param([{"name": "w", "replicas": 1000}], 3, ["j-w-0", "j-w-1", "j-w-2"], id="a-big-gang-the-first-few"),
    pytest.param([{"name": "w"}, {"name": "bad", "replicas": "x"}, "junk"], 32, ["j-w-0", "j-bad-0"],
                 id="replicas-defaulted-junk-skipped"),
])
def test_pod_names_of_a_vcjob(tasks, limit, names):
    assert objects.pod_names({"metadata": {"name": "j"}, "spec": {"tasks": tasks}}, limit) == names
