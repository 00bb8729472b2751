"""The pod-spec shape tables: a wrongly typed field is one error at its path; right types pass."""
import pytest

from vclite.admission import shapes

S = shapes


@pytest.mark.parametrize("value, shape, expected", [
    pytest.param({"nodeSelector": {"zone": "a"}}, S.POD_SPEC, [], id="good-selector"),
    pytest.param({"nodeSelector": ["a"]}, S.POD_SPEC, ["p.nodeSelector"], id="selector-list"),
    pytest.param({"nodeSelector": {"a": 1}}, S.POD_SPEC, ["p.nodeSelector.a"], id="selector-value-int"),
    pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [5]}}}}, S.POD_SPEC,
        ["p.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"], id="term-int"),
    pytest.param({"tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": "x"}]}, S.POD_SPEC,
                 ["p.tolerations[0].tolerationSeconds"], id="toleration-seconds"),
    pytest.param({"hostNetwork": "maybe"}, S.POD_SPEC, ["p.hostNetwork"], id="bool"),
    pytest.param({"env": [{"name": "A", "value": 1}, {"name": "B", "valueFrom": {"fieldRef": "x"}}]}, S.CONTAINER,
                 ["p.env[0].value", "p.env[1].valueFrom.fieldRef"], id="env-every-error"),
    pytest.param({"ports": [{"containerPort": "http"}], "workingDir": "/tmp"}, S.CONTAINER,
                 ["p.ports[0].containerPort"], id="port-string"),
    pytest.param({"resources": {"limits": {"divisor": 3}}}, S.CONTAINER, [], id="unchecked-fields-pass"),
    pytest.param(None, S.POD_SPEC, [], id="absent"),
    pytest.param({"ports": [None], "env": [{"name": "A"}, None]}, S.CONTAINER, ["p.ports[0]", "p.env[1]"],
                 id="null-items"),
    pytest.param({"command": [None]}, {"command": [S.STR]}, ["p.command[0]"], id="null-string-item"),
    pytest.param("x", S.TEMPLATE_METADATA, ["p"], id="metadata-not-object"),
    pytest.param({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": True},
                                 {"type": 1, "reason": None, "message": "m"}, "x"],
                  "observedGeneration": 2, "qosClass": ["Burstable"], "hostIP": None,
                  "containerStatuses": [{"name": "c", "ready": "yes", "restartCount": 0, "state": {
                      "terminated": {"exitCode": 1.0, "reason": "Error"}}}]}, S.POD_STATUS,
                 ["p.conditions[0].observedGeneration", "p.conditions[1].type", "p.conditions[2]", "p.qosClass",
                  "p.containerStatuses[0].ready", "p.containerStatuses[0].state.terminated.exitCode"],
                 id="status-errors-in-document-order"),
    pytest.param({"names": ["a", 1, None, True]}, {"names": [S.STR]}, ["p.names[1]", "p.names[2]", "p.names[3]"],
                 id="array-of-strings"),
    pytest.param({"count": True, "flag": 0, "any": [1]}, {"count": S.INT, "flag": S.BOOL, "any": S.ANY},
                 ["p.count", "p.flag"], id="a-bool-is-no-integer-and-an-integer-no-bool"),
])
def test_check(value, shape, expected):
    assert [e.path for e in S.check(value, shape, "p")] == expected
