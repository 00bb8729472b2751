"""JobFlow's OpenAPI schema (`kubectl explain jobflow…`, the CRD for a real cluster): structural, as a
CRD must be, every field described, and in step with the fields admission knows."""
import pytest

from vclite.admission import fields
from vclite.api import flowschema, schemabuild


NODES = [*schemabuild.walk(flowschema.SPEC, "spec"), *schemabuild.walk(flowschema.STATUS, "status")]


@pytest.mark.parametrize("path, node", NODES, ids=[p for p, _ in NODES])
def test_every_node_is_structural(path, node):
    assert schemabuild.structural_problems(node) == [], path


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


@pytest.mark.parametrize("node, problems", [
    ({"type": "string"}, []),
    ({"description": "x"}, ["no type"]),
    ({"type": "integer", "x-kubernetes-int-or-string": True}, ["a type and x-kubernetes-int-or-string"]),
    ({"type": "object", "properties": {}, "additionalProperties": {}}, ["both properties and additionalProperties"]),
    ({"type": "array"}, ["an array without items"]),
    ({"type": "object", "properties": {}}, ["an object that would drop the fields it does not name"]),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": True, "required": ["a"]},
     ["required 'a' is no property"]),
])
def test_structural_problems(node, problems):
    assert schemabuild.structural_problems(node) == problems


def test_the_expression_description_names_the_outcomes_the_parser_takes():
    """`kubectl explain jobflow.spec.flows.dependsOn.expression` lists the outcomes an expression may read: every one
    the parser takes, and none it refuses (Aborted: a suspended vcjob has no outcome yet)."""
    from vclite.api import flowsyntax
    text = flowschema.DEPENDS_ON["properties"]["expression"]["description"]
    for word in flowsyntax.NOT_OUTCOMES:
        assert word not in text
    for outcome in flowsyntax.Outcome:
        if outcome.value not in flowsyntax.NOT_OUTCOMES:
            assert outcome.value in text, outcome
