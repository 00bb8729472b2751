"""JobFlow admission: Volcano's webhook unit (U1–U6) and e2e (E1–E10) cases from volcano-jobflow.md §5.1–5.2,
and vclite's additions (duplicates, spec updates, quote hints, name lengths, retain policy).

Deliberate differences from Volcano, asserted here:
- duplicate flow names are REJECTED (upstream PR #5876, unmerged): Volcano admits them and the flow can then
  never reach Succeed (D9). So U2, U5, E2 and E4, which upstream expects to be allowed, are rejections here.
- spec updates are REJECTED (upstream PR #5707, unmerged): E5's update is refused.
- a cycle names its path; an undefined target is reported at each place it is used.
"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]


def fl(name: str, *targets: str, **kw: Any) -> Obj:
    f: Obj = {"name": name, **kw}
    if targets:
        f["dependsOn"] = {"targets": list(targets)}
    return f


def jf(*flows: Obj, name: str = "jf", namespace: str = "default", api_version: str = "flow.volcano.sh/v1alpha1",
       **spec: Any) -> Obj:
    return {"apiVersion": api_version, "kind": "JobFlow", "metadata": {"name": name, "namespace": namespace},
            "spec": {"flows": list(flows), **spec}}


def from_graph(graph: dict[str, list[str]]) -> Obj:
    return jf(*(fl(v, *deps) for v, deps in graph.items()))


def create(obj: Obj) -> Obj | None:
    return admit.admit(Op.CREATE, kinds.JOBFLOW, obj, None, views.default_view())


def messages(obj: Obj) -> list[str]:
    """Every `path: message` the CREATE is refused with ([] when admitted)."""
    try:
        create(obj)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


U1 = jf(fl("a"), fl("b", "a"), fl("c", "a", "b"), fl("d", "b"), fl("e", "c", "d"), jobRetainPolicy="retain")

ACCEPT_CASES = [
    pytest.param(U1, id="U1-five-node-dag"),
    # upstream requires only a name; a JobTemplate name may have dots (vcjob "<jf>-prep.v1" is valid)
    pytest.param(from_graph({"prep.v1": [], "train": ["prep.v1"]}), id="dotted-flow-names"),
    pytest.param(from_graph({"1": ["2", "3"], "2": ["3"], "3": ["4"], "4": []}), id="U6-dag-chain"),
    pytest.param(from_graph({"1": ["2", "3"], "2": ["4", "5"], "3": [], "4": [], "5": []}), id="U6-dag-tree"),
    pytest.param(from_graph({"1": ["2", "3", "4"], "2": ["3"], "3": ["4"], "4": ["5"], "5": []}), id="U6-dag-dense"),
    pytest.param(from_graph({"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": []}),
                 id="U6-dag-diamonds"),
    pytest.param(U1, id="E1-valid-dag"),
    pytest.param(jf(fl("start"), fl("middle", "start"), fl("end", "middle")), id="E6-linear"),
    pytest.param(jf(fl("root1"), fl("root2"), fl("level1-a", "root1"), fl("level1-b", "root2"),
                    fl("level2", "level1-a", "level1-b"), fl("final", "level2")), id="E7-two-roots"),
    pytest.param(jf(), id="E8-empty-flows"),
    pytest.param(jf(fl("only")), id="E9-single-flow"),
    pytest.param(jf(fl("a"), fl("b", "a"), jobRetainPolicy="delete"), id="retain-policy-delete"),
    pytest.param(jf(fl("a"), fl("b", "a"), jobRetainPolicy="retain"), id="retain-policy-retain"),
    pytest.param(jf(fl("a"), fl("b"), jobRetainPolicy=""), id="retain-policy-empty"),
    pytest.param(jf(fl("a"), fl("b") | {"dependsOn": {"targets": []}}), id="empty-targets"),
    pytest.param(jf(fl("a"), fl("b") | {"dependsOn": {"probe": {"taskStatusList": [{"taskName": "t", "phase": "Running"}]}}}),
                 id="probe-without-targets"),
    pytest.param({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                  "metadata": {"name": "jf", "namespace": "default"}}, id="no-spec"),
    pytest.param(jf(fl("a"), api_version="batch.volcano.sh/v1alpha1"), id="old-apiversion-accepted"),
    pytest.param(jf(fl("f" * 32), name="j" * 30), id="vcjob-name-exactly-63"),
]


@pytest.mark.parametrize("obj", ACCEPT_CASES)
def test_create_accepts(obj: Obj) -> None:
    assert messages(obj) == []


REJECT_CASES = [
    # U2 / E2 / U5 / E4: Volcano admits duplicates; vclite rejects them (see module docstring).
    pytest.param(jf(*U1["spec"]["flows"], fl("a")),
                 ['spec.flows[5].name: jobflow Flow names must be unique: "a"'], id="U2-duplicate-rejected"),
    pytest.param(jf(fl("b", "a"), fl("c", "a", "b"), fl("d", "b"), fl("e", "c", "d")),
                 ["spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a",
                  "spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a"],
                 id="U3-undefined-vertex"),
    pytest.param(jf(fl("a", "b"), fl("b", "a"), fl("c", "a", "b"), fl("d", "b"), fl("e", "c", "d")),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: a -> b -> a)"], id="U4-cycle"),
    pytest.param(jf(fl("a"), fl("b", "a"), fl("c", "a"), fl("c", "b")),
                 ['spec.flows[3].name: jobflow Flow names must be unique: "c"'], id="U5-duplicate-rejected"),
    pytest.param(from_graph({"1": ["2"], "2": ["1", "3"]}),
                 ["spec.flows[1].dependsOn.targets[1]: jobflow Flow is not DAG: vertex is not defined: 3",
                  "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: 1 -> 2 -> 1)"],
                 id="U6-undefined-and-cycle"),
    pytest.param(from_graph({"1": ["2"], "2": ["3"], "3": ["1"]}),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: 1 -> 2 -> 3 -> 1)"],
                 id="U6-three-cycle"),
    pytest.param(from_graph({"1": ["2"], "2": ["1", "3"], "3": []}),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: 1 -> 2 -> 1)"], id="U6-two-cycle"),
    pytest.param(from_graph({"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": ["5", "3"]}),
                 ["spec.flows[4].dependsOn.targets: jobflow Flow is not DAG (cycle: 5 -> 5)"],
                 id="U6-self-loop-in-dag"),
    pytest.param(jf(fl("a"), fl("a"), fl("b", "a")),
                 ['spec.flows[1].name: jobflow Flow names must be unique: "a"'], id="E2-duplicate-rejected"),
    pytest.param(jf(fl("b", "a"), fl("c", "a", "b")),
                 ["spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a",
                  "spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a"],
                 id="E3-undefined-vertex"),
    pytest.param(jf(fl("a"), fl("b", "a"), fl("c", "a"), fl("c", "b")),
                 ['spec.flows[3].name: jobflow Flow names must be unique: "c"'], id="E4-duplicate-rejected"),
    pytest.param(jf(fl("self-dependent", "self-dependent")),
                 ["spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: self-dependent -> self-dependent)"],
                 id="E10-self-dependency"),
    pytest.param(jf(fl("a"), fl("b", "‘a’")),
                 ["spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: ‘a’ "
                  "(the name contains quote characters ‘’; write targets: ['a'] or [a])"], id="curly-single-quotes"),
    pytest.param(jf(fl("a"), fl("b", "“a”")),
                 ["spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: “a” "
                  "(the name contains quote characters “”; write targets: ['a'] or [a])"], id="curly-double-quotes"),
    pytest.param(jf(fl("a"), fl("b", "'a'")),
                 ["spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: 'a' "
                  "(the name contains quote characters '; write targets: ['a'] or [a])"], id="stray-straight-quotes"),
    pytest.param(jf(fl("a"), fl("b", "x")),
                 ["spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: x"],
                 id="undefined-without-quotes-has-no-hint"),
    pytest.param(jf(fl("a"), jobRetainPolicy="Retain"),
                 ['spec.jobRetainPolicy: Unsupported value: "Retain": supported values: "retain", "delete"'],
                 id="retain-policy-unknown"),
    pytest.param(jf(fl("flow-" + "x" * 30), name="jobflow-" + "y" * 30),
                 ['spec.flows[0].name: flow "flow-' + "x" * 30 + '" would create vcjob "jobflow-' + "y" * 30 + "-flow-"
                  + "x" * 30 + '" (74 characters): a vcjob name must be no more than 63 characters'],
                 id="vcjob-name-too-long"),
    pytest.param(jf(fl("a"), name="j" * 40, namespace="n" * 25),
                 ["metadata.name: the vcjobs it creates would carry label volcano.sh/createdByJobFlow=\""
                  + "n" * 25 + "." + "j" * 40 + '", which is invalid: must be no more than 63 characters'],
                 id="jobflow-label-value-too-long"),
    pytest.param(jf(fl("a" * 40), name="j", namespace="n" * 25),
                 ["spec.flows[0].name: the vcjobs it creates would carry label volcano.sh/createdByJobTemplate=\""
                  + "n" * 25 + "." + "a" * 40 + '", which is invalid: must be no more than 63 characters'],
                 id="template-label-value-too-long"),
    pytest.param(jf(fl("a"), {"dependsOn": {"targets": ["a"]}}), ["spec.flows[1].name: Required value"],
                 id="flow-name-required"),
    pytest.param(jf(fl("Step_1")), ["spec.flows[0].name: Invalid value: \"Step_1\": a lowercase RFC 1123 subdomain "
                                    "must consist of lower case alphanumeric characters, '-' or '.', and must start "
                                    "and end with an alphanumeric character (e.g. 'example.com', regex used for "
                                    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                 id="flow-name-not-dns-subdomain"),
    pytest.param(jf(fl("a"), fl("b") | {"dependsOn": {"targets": "a"}}),
                 ['spec.flows[1].dependsOn.targets: Invalid value: "a": must be of type array'], id="targets-not-a-list"),
    pytest.param(jf() | {"spec": {"flows": {"a": {}}}}, ['spec.flows: Invalid value: {"a": {}}: must be of type array'],
                 id="flows-not-a-list"),
]


@pytest.mark.parametrize("obj, expected", REJECT_CASES)
def test_create_rejects(obj: Obj, expected: list[str]) -> None:
    assert messages(obj) == expected


def test_probe_and_patch_are_kept() -> None:
    obj = jf(fl("a"), fl("b", "a", patch={"jobSpec": {"tasks": [{"name": "t", "replicas": 2}]}})
             | {"dependsOn": {"targets": ["a"], "probe": {"httpGetList": [{"taskName": "t", "path": "/", "port": 80}]}}})
    assert create(obj) == obj


def test_every_problem_is_reported_at_once() -> None:
    got = messages(jf(fl("a", "b"), fl("b", "a"), fl("a"), fl("c", "zz"), jobRetainPolicy="never"))
    assert [m.split(": ")[0] for m in got] == ["spec.jobRetainPolicy", "spec.flows[2].name",
                                              "spec.flows[3].dependsOn.targets[0]", "spec.flows[0].dependsOn.targets"]


# ---- UPDATE: the spec is frozen (E5 differs from Volcano, which allows it) ----------------------

E5_OLD = jf(fl("a"), fl("b", "a"))
UPDATE_CASES = [
    pytest.param(lambda o: o["spec"]["flows"].append(fl("c", "b")), "spec: jobflow spec updates are not supported",
                 id="E5-append-flow-rejected"),
    pytest.param(lambda o: o["spec"].update(jobRetainPolicy="delete"), "spec: jobflow spec updates are not supported",
                 id="retain-policy-change-rejected"),
    pytest.param(lambda o: o["spec"]["flows"][1]["dependsOn"]["targets"].clear(),
                 "spec: jobflow spec updates are not supported", id="targets-change-rejected"),
    pytest.param(lambda o: o["metadata"].update(labels={"team": "ml"}), None, id="metadata-change-allowed"),
    pytest.param(lambda o: o.update(status={"state": {"phase": "Running"}}), None, id="status-change-allowed"),
]


@pytest.mark.parametrize("change, expected", UPDATE_CASES)
def test_update(change, expected: str | None) -> None:
    old = create(E5_OLD)
    new = copy.deepcopy(old)
    change(new)
    if expected is None:
        assert admit.admit(Op.UPDATE, kinds.JOBFLOW, new, old, views.default_view()) == new
    else:
        with pytest.raises(errors.Invalid) as info:
            admit.admit(Op.UPDATE, kinds.JOBFLOW, new, old, views.default_view())
        assert [str(e) for e in info.value.errors] == [expected]


def test_status_write_is_not_admitted() -> None:
    obj = create(E5_OLD) | {"status": {"state": {"phase": "Succeed"}}}
    assert admit.admit(Op.UPDATE_STATUS, kinds.JOBFLOW, obj, obj, views.default_view()) == obj
