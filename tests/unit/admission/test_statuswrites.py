"""Status writes of Pods, Nodes and Services (the /status subresource) checked as kube-apiserver's
ValidatePodStatusUpdate, ValidateNodeUpdate and ValidateServiceStatusUpdate check them."""
from __future__ import annotations

import copy

import pytest

from vclite.admission import admit
from vclite.api import core, kinds, meta
from vclite.apiserver import inprocess
from vclite.executor import nodes, podstatus
from vclite.lib import clock as clock_mod
from vclite.lib import errors

from . import views

Op = admit.Operation
SIDECAR = {"name": "i", "restartPolicy": "Always"}


def pod(status=None, restart_policy="Never", init=()):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"restartPolicy": restart_policy, "nodeName": "n1", "initContainers": list(init),
                     "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]},
            "status": status or {}}


def terminated(name="c", code=0):
    return {"name": name, "state": {"terminated": {"exitCode": code}}}


def running(name="c"):
    return {"name": name, "state": {"running": {}}}


def node(status):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": status}


def service(type_="LoadBalancer", status=None):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
            "spec": {"type": type_, "ports": [{"port": 80}]}, "status": status or {}}


def write_status(kind, new, old):
    return admit.admit(Op.UPDATE_STATUS, kind, new, old, views.DictView())


@pytest.mark.parametrize("kind, new, old, field, words", [
    pytest.param(kinds.POD, pod({"phase": "Done"}), pod({"phase": "Running"}), "status.phase",
                 'Unsupported value: "Done": supported values: "Failed", "Pending", "Running", "Succeeded", '
                 '"Unknown"', id="pod-phase"),
    pytest.param(kinds.POD, pod({"podIPs": [{"ip": "10.0.0.300"}]}), pod(), "status.podIPs[0].ip",
                 'Invalid value: "10.0.0.300": must be a valid IP address', id="pod-ip"),
    pytest.param(kinds.POD, pod({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}), pod(), "status.podIPs",
                 "may specify no more than one IP for each IP family", id="two-ipv4-pod-ips"),
    pytest.param(kinds.POD, pod({"hostIPs": [{"ip": "127.0.0.1"}, {"ip": "127.0.0.1"}]}), pod(), "status.hostIPs[1].ip",
                 'Duplicate value: "127.0.0.1"', id="host-ip-twice"),
    pytest.param(kinds.POD, pod({"nominatedNodeName": "Node_1"}), pod(), "status.nominatedNodeName",
                 'Invalid value: "Node_1"', id="nominated-node"),
    pytest.param(kinds.POD, pod({"containerStatuses": [running()]}), pod({"containerStatuses": [terminated()]}),
                 "status.containerStatuses[0].state",
                 "Forbidden: may not be transitioned to non-terminated state", id="never-restarts"),
    pytest.param(kinds.POD, pod({"containerStatuses": [running()]}, "OnFailure"),
                 pod({"containerStatuses": [terminated()]}, "OnFailure"), "status.containerStatuses[0].state",
                 "may not be transitioned to non-terminated state", id="on-failure-after-success"),
    pytest.param(kinds.POD, pod({"initContainerStatuses": [running("i")]}, init=[{"name": "i"}]),
                 pod({"initContainerStatuses": [terminated("i")]}, init=[{"name": "i"}]),
                 "status.initContainerStatuses[0].state", "may not be transitioned", id="init-container"),
    pytest.param(kinds.POD, pod({"qosClass": "Guaranteed"}), pod({"qosClass": "BestEffort"}), "status.qosClass",
                 'Invalid value: "Guaranteed": field is immutable', id="qos-class"),
    pytest.param(kinds.POD, pod({"conditions": [{"type": "Ready", "status": "True"}, {"type": "my ok",
                                                                                      "status": "True"}]}),
                 # (the path of Kubernetes 1.32, the version /version reports: ValidatePodStatusUpdate hands
                 # validatePodConditions field.NewPath("metadata").Child("conditions"), its child "Type")
                 pod(), "metadata.conditions[1].Type", 'Invalid value: "my ok": name part must consist of',
                 id="condition-type"),
    pytest.param(kinds.POD, pod({"podIP": "10.0.0.300", "podIPs": [{"ip": "10.0.0.1"}]}), pod(),
                 "status.podIPs[0].ip", 'Invalid value: "10.0.0.300": must be a valid IP address',
                 id="pod-ip-wins-then-is-checked"),
    pytest.param(kinds.SERVICE, service(status={"conditions": {"type": "Ready"}}), service(), "status.conditions",
                 'Invalid value: {"type": "Ready"}: must be of type array', id="service-conditions-not-a-list"),
    pytest.param(kinds.SERVICE, service(status={"conditions": [{"type": "Ready", "status": True}]}), service(),
                 "status.conditions[0].status", "Invalid value: true: must be of type string",
                 id="service-condition-status-type"),
    pytest.param(kinds.SERVICE, service(status={"conditions": [{"type": "Ready", "lastTransitionTime": "yesterday"}]}),
                 service(), "status.conditions[0].lastTransitionTime",
                 'Invalid value: "yesterday": must be an RFC 3339 date-time', id="service-condition-time"),
    pytest.param(kinds.SERVICE, service(status={"conditions": [{"type": "Ready", "observedGeneration": "1"}]}),
                 service(), "status.conditions[0].observedGeneration", 'Invalid value: "1": must be of type integer',
                 id="service-condition-generation"),
    pytest.param(kinds.NODE, node({"capacity": {"cpu": "-1"}}), node({}), "status.capacity[cpu]",
                 'Invalid value: "-1": must be greater than or equal to 0', id="negative-capacity"),
    pytest.param(kinds.NODE, node({"capacity": {"memory": "lots"}}), node({}), "status.capacity[memory]",
                 'invalid quantity "lots"', id="capacity-not-a-quantity"),
    pytest.param(kinds.NODE, node({"allocatable": {"pods": "1.5"}}), node({}), "status.allocatable[pods]",
                 'Invalid value: "1.5": must be an integer', id="fractional-pods"),
    pytest.param(kinds.NODE, node({"capacity": {"bad name!": "1"}}), node({}), "status.capacity[bad name!]",
                 "Invalid value", id="resource-name"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"ip": "1.2.3"}]}}), service(),
                 "status.loadBalancer.ingress[0].ip", 'Invalid value: "1.2.3": must be a valid IP address',
                 id="ingress-ip"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"hostname": "1.2.3.4"}]}}), service(),
                 "status.loadBalancer.ingress[0].hostname", "must be a DNS name, not an IP address",
                 id="ingress-hostname-is-an-ip"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"hostname": "Bad_Name"}]}}), service(),
                 "status.loadBalancer.ingress[0].hostname", 'Invalid value: "Bad_Name"', id="ingress-hostname"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"hostname": "lb.example.com",
                                                                              "ipMode": "VIP"}]}}), service(),
                 "status.loadBalancer.ingress[0].ipMode", "Forbidden: may not be specified when `ip` is not set",
                 id="ip-mode-without-ip"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ipMode": "Fast"}]}}),
                 service(), "status.loadBalancer.ingress[0].ipMode",
                 'Unsupported value: "Fast": supported values: "Proxy", "VIP"', id="ip-mode"),
    pytest.param(kinds.SERVICE, service("ClusterIP", {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
                 service("ClusterIP"), "status.loadBalancer.ingress",
                 "Forbidden: may only be used when `spec.type` is 'LoadBalancer'", id="ingress-not-a-load-balancer"),
    # wrongly typed fields, which kube-apiserver's decoding refuses (stored, they broke kubectl get and the tables)
    pytest.param(kinds.NODE, node({"conditions": "x"}), node({}), "status.conditions",
                 'Invalid value: "x": must be of type array', id="node-conditions-not-a-list"),
    pytest.param(kinds.NODE, node({"conditions": [{"type": "Ready", "status": True}]}), node({}),
                 "status.conditions[0].status", "must be of type string", id="node-condition-status"),
    pytest.param(kinds.NODE, node({"addresses": [{"type": "InternalIP", "address": 10}]}), node({}),
                 "status.addresses[0].address", "must be of type string", id="node-address"),
    pytest.param(kinds.NODE, node({"nodeInfo": 5}), node({}), "status.nodeInfo", "must be of type object",
                 id="node-info"),
    pytest.param(kinds.NODE, node({"images": [{"names": "busybox"}]}), node({}), "status.images[0].names",
                 "must be of type array", id="node-image-names"),
    pytest.param(kinds.POD, pod({"conditions": "x"}), pod(), "status.conditions",
                 'Invalid value: "x": must be of type array', id="pod-conditions-not-a-list"),
    pytest.param(kinds.POD, pod({"containerStatuses": "x"}), pod(), "status.containerStatuses",
                 "must be of type array", id="pod-container-statuses"),
    pytest.param(kinds.POD, pod({"initContainerStatuses": 5}), pod(), "status.initContainerStatuses",
                 "must be of type array", id="pod-init-container-statuses"),
    pytest.param(kinds.POD, pod({"containerStatuses": [{"name": "c", "state": "x"}]}), pod(),
                 "status.containerStatuses[0].state", "must be of type object", id="pod-container-state"),
    pytest.param(kinds.POD, pod({"containerStatuses": [{"name": "c", "restartCount": "2"}]}), pod(),
                 "status.containerStatuses[0].restartCount", "must be of type integer", id="pod-restart-count"),
    pytest.param(kinds.POD, pod({"qosClass": [1]}), pod(), "status.qosClass", "must be of type string",
                 id="pod-qos-class"),
    pytest.param(kinds.SERVICE, service(status={"conditions": "x"}), service(), "status.conditions",
                 "must be of type array", id="service-conditions"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ports": [
        {"port": "a", "protocol": "TCP"}]}]}}), service(), "status.loadBalancer.ingress[0].ports[0].port",
                 "must be of type integer", id="ingress-port"),
])
def test_bad_status_writes_are_refused_naming_the_field(kind, new, old, field, words):
    with pytest.raises(errors.Invalid) as caught:
        write_status(kind, new, old)
    assert caught.value.errors[0].path == field and words in caught.value.errors[0].message, caught.value.errors


@pytest.mark.parametrize("kind, new, old", [
    pytest.param(kinds.POD, pod({"phase": "Succeeded", "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"},
                                                                                         {"ip": "::1"}],
                                 "containerStatuses": [terminated()]}), pod({"phase": "Running"}), id="pod"),
    pytest.param(kinds.POD, pod({"containerStatuses": [running()]}, "Always"),
                 pod({"containerStatuses": [terminated()]}, "Always"), id="always-restarts"),
    pytest.param(kinds.POD, pod({"conditions": [{"type": "example.com/warm", "status": "Maybe"}]}), pod(),
                 id="pod-condition-status-not-checked"),   # (kube checks only the type of a pod's conditions)
    pytest.param(kinds.POD, pod({"containerStatuses": [running()]}, "OnFailure"),
                 pod({"containerStatuses": [terminated(code=1)]}, "OnFailure"), id="on-failure-after-failure"),
    pytest.param(kinds.POD, pod({"initContainerStatuses": [running("i")]}, init=[SIDECAR]),
                 pod({"initContainerStatuses": [terminated("i")]}, init=[SIDECAR]), id="sidecar-restarts"),
    pytest.param(kinds.NODE, node({"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110",
                                                "example.com/gpu": "2"}}), node({}), id="node"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}),
                 service(), id="service"),
    pytest.param(kinds.SERVICE, service(status={"conditions": [  # (values kube-apiserver does not check either)
        {"type": "not a name", "status": "Maybe", "reason": "", "message": "x" * 40000, "observedGeneration": -1,
         "lastTransitionTime": "2026-01-02T03:04:05.5+01:00"}]}), service(), id="service-conditions"),
    pytest.param(kinds.SERVICE, service(status={"loadBalancer": {"ingress": [{"hostname": "lb.example.com", "ports": [
        {"port": 80, "protocol": "TCP"}]}]}, "conditions": [{"type": "Ready", "status": "True", "reason": "Up",
                                                            "message": "", "observedGeneration": 1,
                                                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}),
                 service(), id="service-ports-and-conditions"),
])
def test_good_status_writes_pass(kind, new, old):
    assert write_status(kind, new, old)["status"] == new["status"]


@pytest.mark.parametrize("given", [
    pytest.param({"phase": "Running"}, id="left-out"),
    pytest.param({"phase": "Running", "qosClass": ""}, id="empty"),
    pytest.param({"phase": "Running", "qosClass": "Burstable"}, id="the-same"),
])
def test_a_status_write_without_the_qos_class_keeps_the_stored_one(given):
    """podStatusStrategy.PrepareForUpdate backfills an empty qosClass from the stored pod (old kubelets dropped
    it), so such a write is accepted and the pod keeps its class; the write given is not changed."""
    new = pod(dict(given))
    out = write_status(kinds.POD, new, pod({"phase": "Pending", "qosClass": "Burstable"}))
    assert out["status"] == {"phase": "Running", "qosClass": "Burstable"}
    assert new["status"] == given


def cond(ctype, generation=None):
    out = {"type": ctype, "status": "True"}
    return {**out, "observedGeneration": generation} if generation is not None else out


@pytest.mark.parametrize("given, stored, want", [
    pytest.param({"phase": "Running"}, {"observedGeneration": 2}, {"phase": "Running", "observedGeneration": 2},
                 id="status-left-out"),
    pytest.param({"observedGeneration": 0}, {"observedGeneration": 2}, {"observedGeneration": 2}, id="status-zero"),
    pytest.param({"observedGeneration": 3}, {"observedGeneration": 2}, {"observedGeneration": 3}, id="status-given"),
    pytest.param({"phase": "Running"}, {}, {"phase": "Running"}, id="none-stored"),
    pytest.param({"conditions": [cond("Ready"), cond("x.io/a", 0), cond("x.io/b", 5)]},
                 {"conditions": [cond("x.io/b", 1), cond("x.io/a", 1), cond("Ready", 1)]},
                 {"conditions": [cond("Ready", 1), cond("x.io/a", 1), cond("x.io/b", 5)]},
                 id="conditions-by-type"),
    pytest.param({"conditions": [cond("x.io/a"), cond("x.io/a"), cond("x.io/a")]},
                 {"conditions": [cond("x.io/a", 1), cond("x.io/a", 2)]},
                 {"conditions": [cond("x.io/a", 1), cond("x.io/a", 2), cond("x.io/a")]},
                 id="repeated-type-in-order"),
    pytest.param({"conditions": [cond("PodScheduled")]}, {"conditions": [cond("Ready", 4)]},
                 {"conditions": [cond("PodScheduled")]}, id="a-new-type-has-none"),
])
def test_a_status_write_without_observed_generations_keeps_the_stored_ones(given, stored, want):
    """preserveOldObservedGeneration (Kubernetes 1.33+): a pod status write that leaves out (or zeroes) the
    status's or a condition's observedGeneration keeps the stored one — a condition takes the stored one of its
    type, the n-th of a type the n-th — so a writer that does not know the field (the scheduler, an older
    client) does not erase what the kubelet reported; the write given is not changed."""
    new = pod(copy.deepcopy(given))
    out = write_status(kinds.POD, new, pod(stored))
    assert out["status"] == want
    assert new["status"] == given


def test_an_observed_generation_that_is_no_integer_is_refused():
    for status, field in (({"observedGeneration": "2"}, "status.observedGeneration"),
                          ({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": True}]},
                           "status.conditions[0].observedGeneration")):
        with pytest.raises(errors.Invalid) as exc:
            write_status(kinds.POD, pod(status), pod())
        assert field in str(exc.value) and "must be of type integer" in str(exc.value), str(exc.value)


@pytest.mark.parametrize("status, stored, problems", [
    pytest.param({"observedGeneration": -1}, {"observedGeneration": 2},
                 ["status.observedGeneration: Invalid value: -1: must be a non-negative integer"], id="status"),
    pytest.param({"conditions": [cond("Ready", -3), cond("my ok", -1)]}, {},
                 ["status.conditions[0].observedGeneration: Invalid value: -3: must be a non-negative integer",
                  "status.conditions[1].observedGeneration: Invalid value: -1: must be a non-negative integer",
                  'metadata.conditions[1].Type: Invalid value: "my ok": name part must consist of'],
                 id="conditions-a-system-type-too-each-before-its-type"),
    pytest.param({"conditions": [cond("Ready", -1)], "observedGeneration": -2, "qosClass": "Guaranteed"},
                 {"qosClass": "BestEffort"},
                 ["status.conditions[0].observedGeneration: Invalid value: -1: must be a non-negative integer",
                  "status.observedGeneration: Invalid value: -2: must be a non-negative integer",
                  'status.qosClass: Invalid value: "Guaranteed": field is immutable'],
                 id="in-kubes-order"),
    pytest.param({"observedGeneration": 0, "conditions": [cond("Ready", 0)]}, {}, [], id="zero-is-fine"),
])
def test_a_negative_observed_generation_is_refused(status, stored, problems):
    """Kubernetes 1.33+ (ValidatePodStatusUpdate, validatePodConditions): `status.observedGeneration` and a
    condition's (every condition, a system type too: checked before its type) below 0 are Invalid, with kube's
    words and field paths; a negative value is not 'left out', so the stored one does not replace it."""
    if not problems:
        write_status(kinds.POD, pod(status), pod(stored))
        return
    with pytest.raises(errors.Invalid) as exc:
        write_status(kinds.POD, pod(status), pod(stored))
    text = str(exc.value)
    at = [text.index(p) for p in problems]
    assert at == sorted(at), text


def test_a_refused_observed_generation_changes_nothing_stored():
    """Through the in-process API: the write is refused with 422 and the stored pod keeps its status."""
    client = inprocess.new_client(clock_mod.VirtualClock())
    created = client.create({**pod(), "status": None})
    client.update_status({**created, "status": {"phase": "Pending", "observedGeneration": 1}})
    before = client.get(kinds.POD, "default", meta.name(created))
    with pytest.raises(errors.Invalid) as exc:
        client.update_status({**before, "status": {"phase": "Running", "observedGeneration": -1}})
    assert "status.observedGeneration: Invalid value: -1: must be a non-negative integer" in str(exc.value)
    assert client.get(kinds.POD, "default", meta.name(created)) == before


def test_the_statuses_vclite_writes_itself_pass():
    """A kubelet's node status (executor/nodes.py, stamped by the heartbeat) and the pod statuses the executor
    writes (podstatus.py: running, then terminated with a restart) are all of the right types."""
    host = nodes.stamped(nodes.host_node("n1"), "2026-01-01T00:00:00Z")
    assert write_status(kinds.NODE, host, host)["status"] == host["status"]
    a = podstatus.ContainerState("c", "busybox")
    a.start("2026-01-01T00:00:00Z", 42)
    running_status = podstatus.build_status(None, core.PodPhase.RUNNING, "2026-01-01T00:00:01Z",
                                            start_time="2026-01-01T00:00:00Z", init=[], main=[a])
    a.finish(1, "2026-01-01T00:00:02Z", "boom")
    a.start("2026-01-01T00:00:03Z", 43)
    again = podstatus.build_status(running_status, core.PodPhase.RUNNING, "2026-01-01T00:00:04Z",
                                   start_time="2026-01-01T00:00:00Z", init=[], main=[a])
    assert write_status(kinds.POD, pod(again, "Always"), pod(running_status, "Always"))["status"] == again


def test_an_ingress_ip_gets_ip_mode_vip_and_the_write_given_is_not_changed():
    new = service(status={"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}})
    out = write_status(kinds.SERVICE, new, service())
    assert out["status"]["loadBalancer"]["ingress"] == [{"ip": "1.2.3.4", "ipMode": "VIP"}]
    assert new["status"]["loadBalancer"]["ingress"] == [{"ip": "1.2.3.4"}]


def test_a_node_created_with_a_bad_capacity_is_refused():
    with pytest.raises(errors.Invalid, match=r"status.capacity\[cpu\]: Invalid value: \"-2\""):
        admit.admit(Op.CREATE, kinds.NODE, node({"capacity": {"cpu": "-2"}}), None, views.DictView())


@pytest.mark.parametrize("given, stored", [
    pytest.param({"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.2"}, {"ip": "fd00::2"}]},
                 {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}, id="pod-ip-wins"),
    pytest.param({"podIP": "10.0.0.1"}, {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}, id="pod-ips-made"),
    pytest.param({"podIPs": [{"ip": "10.0.0.2"}]}, {"podIP": "10.0.0.2", "podIPs": [{"ip": "10.0.0.2"}]},
                 id="pod-ip-read"),
    pytest.param({"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]},
                 {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}, id="agreeing"),
    pytest.param({"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.2"}]},
                 {"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}]}, id="host-ip-wins"),
    pytest.param({"hostIPs": [{"ip": "10.0.0.2"}]}, {"hostIP": "10.0.0.2", "hostIPs": [{"ip": "10.0.0.2"}]},
                 id="host-ip-read"),
])
def test_pod_ip_and_pod_ips_are_made_to_agree_as_kubes_conversion_does(given, stored):
    new = pod(dict(given))
    assert write_status(kinds.POD, new, pod())["status"] == stored
    assert new["status"] == given


@pytest.mark.parametrize("ips, problem", [
    pytest.param([{"ip": "10.0.0.1"}], None, id="good"),
    pytest.param([{"ip": "10.0.0.300"}], "status.podIPs[0].ip", id="bad"),
    pytest.param([{"ip": ["10.0.0.1"]}], "status.podIPs[0].ip", id="a-list-is-no-address"),
    pytest.param([{"ip": {"v4": "10.0.0.1"}}], "status.podIPs[0].ip", id="an-object-is-no-address"),
])
def test_an_address_gets_the_same_verdict_every_time_it_is_written(ips, problem):
    for _ in range(3):   # (parsed addresses are kept: the second and third writes read what the first parsed)
        if problem is None:
            write_status(kinds.POD, pod({"podIPs": ips}), pod())
        else:
            with pytest.raises(errors.Invalid) as refused:
                write_status(kinds.POD, pod({"podIPs": ips}), pod())
            assert [e.path for e in refused.value.errors] == [problem]
