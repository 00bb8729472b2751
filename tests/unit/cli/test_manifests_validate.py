"""validate on a given API: the documents are created there once; a flow's vcjob checks store nothing."""
from vclite.api import kinds, yamlio
from vclite.apiserver import inprocess
from vclite.cli import manifests

TEMPLATE = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: train}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          containers: [{name: c, image: busybox, command: ["true"]}]
"""


def flow(patch_replicas: int) -> str:
    return TEMPLATE + f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: f}}
spec:
  flows:
    - name: train
      patch: {{jobSpec: {{tasks: [{{name: main, replicas: {patch_replicas}}}]}}}}
"""


def test_documents_are_created_on_the_given_api_and_the_vcjob_checks_store_nothing():
    client = inprocess.new_client()
    problems = manifests.validate(yamlio.load_string(flow(2), "flow.yaml"), client=client)
    assert problems == []
    assert [o["metadata"]["name"] for o in client.list(kinds.JOBTEMPLATE)] == ["train"]
    assert [o["metadata"]["name"] for o in client.list(kinds.JOBFLOW)] == ["f"]
    assert client.list(kinds.JOB) == []   # (the patched vcjob was admitted as a dry run)


def test_a_patch_the_vcjob_admission_refuses_is_reported_and_nothing_else_is_stored():
    client = inprocess.new_client()
    problems = manifests.validate(yamlio.load_string(flow(-1), "flow.yaml"), client=client)
    assert [(p.field, p.line) for p in problems] == [("spec.flows[0].patch.jobSpec.tasks[0].replicas", 20)]
    assert client.list(kinds.JOB) == []
