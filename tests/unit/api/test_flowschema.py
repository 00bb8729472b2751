"""JobFlow's OpenAPI schema (`kubectl explain jobflow…`, the CRD for a real cluster): structural, as a
CRD must be, every field described, and in step with the fields admission knows."""
import pytest

from vclite.admission import fields
from vclite.api import flowschema


def walk(schema, path="spec"):
    """(path, node) of every node under `schema`."""
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{path}.{name}")
    if "items" in schema:
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"], f"{path}{{}}")


NODES = [*walk(flowschema.SPEC), *walk(flowschema.STATUS, "status")]


@pytest.mark.parametrize("path, node", NODES, ids=[p for p, _ in NODES])
def test_every_node_is_structural(path, node):
    typed = "type" in node
    assert typed or node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields"), path
    assert not (typed and node.get("x-kubernetes-int-or-string")), path
    assert not ("properties" in node and "additionalProperties" in node), path
    if node.get("type") == "array":
        assert "items" in node, path
    if node.get("type") == "object" and "additionalProperties" not in node:
        assert node.get("x-kubernetes-preserve-unknown-fields"), f"{path}: a cluster would prune unknown fields"
    for name in node.get("required", []):
        assert name in node["properties"], path
    for branch in node.get("anyOf", []):
        assert set(branch) == {"type"} and node.get("x-kubernetes-int-or-string"), path


@pytest.mark.parametrize("path, node", [(p, n) for p, n in NODES if not p.endswith(("[]", "{}"))],
                         ids=[p for p, _ in NODES if not p.endswith(("[]", "{}"))])
def test_every_field_is_described(path, node):
    assert len(node.get("description", "")) > 10, path


def schema_paths(schema, path=""):
    out = set()
    for name, sub in (schema.get("properties") or {}).items():
        out.add(f"{path}.{name}")
        out |= schema_paths(sub.get("items", sub), f"{path}.{name}")
    return out


def field_paths(table, path=""):
    out = set()
    for name, sub in table.items():
        out.add(f"{path}.{name}")
        if isinstance(sub, list):
            sub = sub[0]
        if isinstance(sub, dict) and not path.endswith(".patch"):   # patch.jobSpec is a vcjob spec: open
            out |= field_paths(sub, f"{path}.{name}")
    return out


def test_the_schema_names_every_field_admission_knows_and_no_other():
    assert schema_paths(flowschema.SPEC) == field_paths(fields.JOBFLOW_SPEC)
