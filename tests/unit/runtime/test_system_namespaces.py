"""A server's control plane (a Runtime over a data directory) has kube-apiserver's namespaces from its start,
each with its `default` ServiceAccount; `default`, `kube-system` and `kube-public` may not be deleted."""
from __future__ import annotations

import pytest

from vclite.api import kinds, meta
from vclite.lib import clock, errors
from vclite.runtime import runtime

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
        "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}}}
SYSTEM = ["kube-node-lease", "kube-public", "kube-system"]


@pytest.fixture
def rt(tmp_path):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    yield rt
    rt.close()


def test_a_server_has_the_system_namespaces_each_with_its_default_account(rt):
    names = sorted(meta.name(ns) for ns in rt.client.list(kinds.NAMESPACE))
    assert names == ["default", *SYSTEM]
    for ns in SYSTEM:
        assert rt.client.get(kinds.NAMESPACE, "", ns)["status"]["phase"] == "Active"
        assert rt.client.get(kinds.SERVICEACCOUNT, ns, "default")


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_the_immortal_namespaces_may_not_be_deleted(rt, name):
    with pytest.raises(errors.Forbidden, match=f'namespaces "{name}" is forbidden: this namespace may not be deleted'):
        rt.client.delete(kinds.NAMESPACE, "", name)
    assert not rt.client.get(kinds.NAMESPACE, "", name)["metadata"].get("deletionTimestamp")


def test_kube_node_lease_may_be_deleted(rt):
    rt.client.delete(kinds.NAMESPACE, "", "kube-node-lease")
    assert rt.client.get(kinds.NAMESPACE, "", "kube-node-lease")["metadata"].get("deletionTimestamp")


def test_the_embedded_control_plane_makes_none_of_them():
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    assert [meta.name(ns) for ns in rt.client.list(kinds.NAMESPACE)] == ["default"]
