"""The CRDs `vcctl controller --print-crds` prints: Volcano's names, scope, short names, printer
columns and status subresource, with spec and status kept as given (vclite's fields survive)."""
import json

import pytest

from vclite.api import crds, kinds, schemabuild


def test_two_definitions_named_as_volcanos():
    names = [d["metadata"]["name"] for d in crds.definitions()]
    assert names == ["jobflows.flow.volcano.sh", "jobtemplates.flow.volcano.sh"]


@pytest.mark.parametrize("kind, short, columns", [
    (kinds.JOBFLOW, ["jf"], ["Status", "Age"]),
    (kinds.JOBTEMPLATE, ["jt"], []),
])
def test_definition_shape(kind, short, columns):
    d = crds.definition(kind)
    assert d["apiVersion"] == "apiextensions.k8s.io/v1" and d["kind"] == "CustomResourceDefinition"
    spec = d["spec"]
    assert spec["group"] == "flow.volcano.sh" and spec["scope"] == "Namespaced"
    assert spec["names"] == {"kind": kind.kind, "listKind": kind.kind + "List", "plural": kind.plural,
                             "singular": kind.singular, "shortNames": short}
    (version,) = spec["versions"]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    assert [c["name"] for c in version.get("additionalPrinterColumns", [])] == columns
    props = version["schema"]["openAPIV3Schema"]["properties"]
    for field in ("spec", "status"):   # nothing a cluster would prune; every field described
        assert props[field]["type"] == "object" and props[field]["x-kubernetes-preserve-unknown-fields"] is True
        assert props[field]["properties"]


@pytest.mark.parametrize("kind", [kinds.JOBFLOW, kinds.JOBTEMPLATE])
def test_every_node_is_structural(kind):
    (version,) = crds.definition(kind)["spec"]["versions"]
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert [(path, problems) for field in ("spec", "status") for path, node in schemabuild.walk(props[field], field)
            if (problems := schemabuild.structural_problems(node))] == []


def test_jobtemplate_fields_are_described_and_take_flow_placeholders():
    """`kubectl explain jobtemplate.spec.tasks.replicas` on a cluster, and `replicas: "{{params.n}}"` stored as
    written (a cluster would refuse a string where the schema says integer, before vclite could fill it in)."""
    (version,) = crds.definition(kinds.JOBTEMPLATE)["spec"]["versions"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    replicas = spec["properties"]["tasks"]["items"]["properties"]["replicas"]
    assert replicas["x-kubernetes-int-or-string"] is True and replicas["description"]
    typed = [(path, node["type"]) for path, node in schemabuild.walk(spec, "spec")
             if node.get("type") not in (None, "object", "array", "string")]
    assert typed == [] and not [path for path, node in schemabuild.walk(spec, "spec") if node.get("required")]


def test_open_to_placeholders():
    node = schemabuild.obj("o", {"n": schemabuild.integer("an int"), "b": schemabuild.boolean("a flag"),
                                 "s": schemabuild.string("text"),
                                 "l": schemabuild.array("ints", {"type": "integer"})}, required=["n"])
    assert schemabuild.open_to_placeholders(node) == {
        "type": "object", "description": "o", "x-kubernetes-preserve-unknown-fields": True, "properties": {
            "n": schemabuild.int_or_string("an int"), "b": schemabuild.any_value("a flag"),
            "s": schemabuild.string("text"), "l": schemabuild.array("ints", schemabuild.int_or_string())}}


def test_jobflow_fields_are_described_for_kubectl_explain():
    (version,) = crds.definition(kinds.JOBFLOW)["spec"]["versions"]
    flow = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["flows"]["items"]
    assert "all attempts together" in flow["properties"]["retry"]["properties"]["backoff"]["properties"]["maxDuration"][
        "description"]


def test_jobflow_status_column_reads_the_phase():
    (version,) = crds.definition(kinds.JOBFLOW)["spec"]["versions"]
    assert version["additionalPrinterColumns"][0]["jsonPath"] == ".status.state.phase"


@pytest.mark.parametrize("kind", [kinds.JOBFLOW, kinds.JOBTEMPLATE])
def test_kubectl_apply_can_keep_its_last_applied_annotation(kind):
    """volcano#3347/#3356: Volcano's JobFlow CRD was too large for `kubectl apply` (`metadata.annotations: Too
    long: must have at most 262144 bytes`, the last-applied copy of the whole object): these must stay below."""
    assert len(json.dumps(crds.definition(kind), separators=(",", ":")).encode()) < 262144
