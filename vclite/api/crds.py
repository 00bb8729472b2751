"""The CustomResourceDefinitions a cluster needs for `vcctl controller`: vclite's JobFlow and JobTemplate.

Volcano's own CRDs (`config/crd/jobflow/bases/flow.volcano.sh_*.yaml`) carry a structural schema
of Volcano's fields only, so the API server prunes every field vclite adds to a flow (`when`,
`retry`, `withItems`, the expression `dependsOn` …) before any controller sees it. These CRDs keep
Volcano's names, scope, short names, printer columns and status subresource, and keep `spec` and
`status` as given (`x-kubernetes-preserve-unknown-fields`): a plain Volcano JobFlow is stored the
same, and vclite's controller validates each flow itself. Both schemas also name and describe every
field, so `kubectl explain jobflow.spec.flows` and `kubectl explain jobtemplate.spec.tasks` teach on
a cluster too, with types never stricter than admission: JobFlow's as api/flowschema types them,
JobTemplate's (a vcjob spec, api/kindschemas) with every scalar open to a flow placeholder string
(`replicas: "{{params.n}}"`). Pure data: no I/O.
"""
from __future__ import annotations

from typing import Any

from vclite.api import flowschema, kinds, kindschemas, schemabuild

Obj = dict[str, Any]
_OPEN_OBJECT: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
PRINTER_COLUMNS: dict[str, list[Obj]] = {
    "JobFlow": [{"jsonPath": ".status.state.phase", "name": "Status", "type": "string"},
                {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}],
    "JobTemplate": [],
}


def definition(kind: kinds.Kind) -> Obj:
    """The CRD of one of `kinds.JOBFLOW` / `kinds.JOBTEMPLATE`."""
    schema: Obj = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": dict(_OPEN_OBJECT), "status": dict(_OPEN_OBJECT)}}
    if kind is kinds.JOBFLOW:   # every field described (`kubectl explain`), nothing pruned
        schema["description"] = flowschema.DESCRIPTION
        schema["properties"].update(flowschema.jobflow_properties())
    else:
        described = kindschemas.described(kind)
        assert described is not None
        schema["description"], props = described
        schema["properties"].update(spec=schemabuild.open_to_placeholders(props["spec"]), status=props["status"])
    version: Obj = {
        "name": kind.version, "served": True, "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
    }
    if PRINTER_COLUMNS[kind.kind]:
        version["additionalPrinterColumns"] = [dict(c) for c in PRINTER_COLUMNS[kind.kind]]
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{kind.group}", "labels": {"app.kubernetes.io/part-of": "vclite"}},
        "spec": {
            "group": kind.group,
            "names": {"kind": kind.kind, "listKind": f"{kind.kind}List", "plural": kind.plural,
                      "singular": kind.singular, "shortNames": list(kind.short_names)},
            "scope": "Namespaced" if kind.namespaced else "Cluster",
            "versions": [version],
        },
    }


def definitions() -> list[Obj]:
    return [definition(kinds.JOBFLOW), definition(kinds.JOBTEMPLATE)]
