"""`vcctl validate`/`run` and PriorityClasses: a vcjob, JobTemplate or JobFlow patch whose pods
would name a PriorityClass no file defines is refused with its file, line and field (Kubernetes'
Priority admission would refuse the pods); what the pods never name is not."""
import pytest

from vclite.cli import manifests

CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"


def job(job_class=None, task_class=None, kind="Job", api="batch.volcano.sh/v1alpha1"):
    lines = [f"apiVersion: {api}", f"kind: {kind}", "metadata: {name: j}", "spec:"]
    if job_class:
        lines.append(f"  priorityClassName: {job_class}")
    lines += ["  tasks:", "  - name: a", "    replicas: 1", "    template:", "      spec:"]
    if task_class:
        lines.append(f"        priorityClassName: {task_class}")
    lines += ["        restartPolicy: Never", '        containers: [{name: c, image: busybox, command: ["true"]}]']
    return "\n".join(lines) + "\n"


FLOW = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec:\n  flows:\n  - name: j\n"


@pytest.mark.parametrize("docs, want", [
    pytest.param([CLASS, job(task_class="high")], [], id="defined"),
    pytest.param([job(task_class="system-cluster-critical")], [], id="system-class"),
    pytest.param([job(task_class="hihg")], [("spec.tasks[0].template.spec.priorityClassName", "hihg")],
                 id="task-class-missing"),
    pytest.param([job(job_class="nope")], [("spec.priorityClassName", "nope")], id="inherited-job-class-missing"),
    pytest.param([CLASS, job(job_class="nope", task_class="high")], [], id="job-class-no-pod-inherits"),
    pytest.param([job(task_class="hihg", kind="JobTemplate", api="flow.volcano.sh/v1alpha1")],
                 [("spec.tasks[0].template.spec.priorityClassName", "hihg")], id="template"),
    pytest.param([job(kind="JobTemplate", api="flow.volcano.sh/v1alpha1"),
                  FLOW + "    patch: {jobSpec: {priorityClassName: gold}}\n"],
                 [("spec.flows[0].patch.jobSpec", "gold")], id="flow-patch"),
])
def test_priority_classes_the_pods_would_name(tmp_path, docs, want):
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join(docs))
    _, problems = manifests.load_and_validate([str(path)])
    got = [(p.field, p.message) for p in problems]
    assert [f for f, _ in got] == [f for f, _ in want], got
    for (_, message), (_, name) in zip(got, want):
        assert f'PriorityClass "{name}" not found' in message and str(path) in str(problems[0])
