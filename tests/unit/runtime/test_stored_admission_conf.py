"""A server started on a store holding a volcano-admission-configmap that admission refuses today (an older
vclite's, or written straight into the store) says so at start — a warning and a Warning Event on it — rather
than ignoring it silently (Volcano's webhook logs a configuration file it cannot decode)."""
from __future__ import annotations

import logging

import pytest

from vclite.admission import resgroups
from vclite.api import kinds, meta
from vclite.lib import clock
from vclite.runtime import runtime
from vclite.store import sqlite

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
        "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}}}


def stored(tmp_path, text):
    store = sqlite.SqliteStore(clock.VirtualClock(), tmp_path / "data" / runtime.STORE_FILE)
    store.create(kinds.CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": resgroups.CONFIGMAP, "namespace": resgroups.CONFIGMAP_NAMESPACE}, "data": {resgroups.CONF_KEY: text}})
    store.close()


@pytest.mark.parametrize("text, words", [
    pytest.param("resourceGroups: 5\n", "resourceGroups: Invalid value: 5: must be of type array", id="not-a-list"),
    pytest.param("resourceGroups: [\n", "cannot be read: line", id="not-yaml"),
    pytest.param("resourceGroups:\n- resourceGroup: 7\n", "resourceGroups[0]", id="a-field-of-another-type"),
])
def test_a_stored_admission_configmap_that_is_not_used_is_reported_at_start(tmp_path, caplog, text, words):
    stored(tmp_path, text)
    with caplog.at_level(logging.WARNING):
        rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    try:
        assert "admission configuration of ConfigMap volcano-system/volcano-admission-configmap not used" in caplog.text
        assert words in caplog.text
        rt.settle()
        warnings = [e for e in rt.client.list(kinds.EVENT, resgroups.CONFIGMAP_NAMESPACE)
                    if e.get("reason") == resgroups.INVALID]
        assert [(e["type"], e["involvedObject"]["name"]) for e in warnings] == [("Warning", resgroups.CONFIGMAP)]
        assert words in warnings[0]["message"]
    finally:
        rt.close()


def test_a_sound_stored_admission_configmap_is_not_reported(tmp_path, caplog):
    stored(tmp_path, "resourceGroups:\n- resourceGroup: a\n  object: {key: namespace, value: [x]}\n")
    with caplog.at_level(logging.WARNING):
        rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=tmp_path / "data")
    try:
        assert "admission configuration" not in caplog.text
        rt.settle()
        assert not [e for e in rt.client.list(kinds.EVENT) if e.get("reason") == resgroups.INVALID]
        assert meta.name(rt.client.get(kinds.CONFIGMAP, resgroups.CONFIGMAP_NAMESPACE, resgroups.CONFIGMAP))
    finally:
        rt.close()
