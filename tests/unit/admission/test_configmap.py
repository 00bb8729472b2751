"""ConfigMap admission: data and binaryData typed and keyed as Kubernetes decodes and validates them."""
from __future__ import annotations

import base64

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def config_map(**fields):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, **fields}


def admit_cm(new, old=None, op=Op.CREATE):
    return admit.admit(op, kinds.CONFIGMAP, new, old, views.default_view())


@pytest.mark.parametrize("fields", [
    pytest.param({}, id="empty"),
    pytest.param({"data": {"a.conf": "x=1", "B_2-c": ""}}, id="strings"),
    pytest.param({"binaryData": {"bin": base64.b64encode(b"\0\1").decode()}, "data": {"t": "x"}}, id="binary"),
    pytest.param({"data": None, "immutable": True}, id="null data, immutable"),
])
def test_accepts(fields):
    assert admit_cm(config_map(**fields))["metadata"]["name"] == "c"


@pytest.mark.parametrize("fields, path, message", [
    pytest.param({"data": {"a": 1}}, "data[a]", 'Invalid value: 1: must be of type string (quote it', id="number"),
    pytest.param({"data": {"on": True}}, "data[on]", "must be of type string", id="boolean"),
    pytest.param({"data": {"a": {"b": "c"}}}, "data[a]", "must be of type string", id="object"),
    pytest.param({"data": "hello"}, "data", 'Invalid value: "hello": must be of type object', id="data a string"),
    pytest.param({"binaryData": ["x"]}, "binaryData", "must be of type object", id="binaryData a list"),
    pytest.param({"binaryData": {"k": "!!"}}, "binaryData[k]", "illegal base64 data", id="not base64"),
    pytest.param({"data": {"bad key/": "v"}}, "data[bad key/]",
                 "Invalid value: \"bad key/\": a valid config key must consist of alphanumeric characters, '-', '_' "
                 "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                 "'[-._a-zA-Z0-9]+')", id="bad key"),
    pytest.param({"data": {"..": "v"}}, "data[..]", "must not be '..'", id="dot dot"),
    pytest.param({"binaryData": {"..x": "eA=="}}, "binaryData[..x]", "must not start with '..'", id="dot dot prefix"),
    pytest.param({"data": {"k" * 254: "v"}}, "data[" + "k" * 254 + "]", "must be no more than 253 characters",
                 id="key too long"),
    pytest.param({"data": {"k": "v"}, "binaryData": {"k": "eA=="}}, "data[k]",
                 'Invalid value: "k": duplicate of key present in binaryData', id="key in both"),
    pytest.param({"data": {"k": "x" * (1024 * 1024 + 1)}}, "data", "Too long: may not be more than 1048576 bytes",
                 id="over 1 MiB"),
    pytest.param({"immutable": "yes"}, "immutable", "must be of type boolean", id="immutable not a boolean"),
])
def test_rejects_naming_the_field(fields, path, message):
    with pytest.raises(errors.Invalid) as info:
        admit_cm(config_map(**fields))
    assert any(e.path == path and message in e.message for e in info.value.errors), info.value.errors


def test_an_immutable_config_map_keeps_its_data_and_immutability():
    old = admit_cm(config_map(data={"k": "v"}, binaryData={"b": "eA=="}, immutable=True))
    same = admit_cm({**old, "metadata": {**old["metadata"], "labels": {"x": "y"}}}, old, Op.UPDATE)
    assert same["metadata"]["labels"] == {"x": "y"}
    for change, path in (({"data": {"k": "w"}}, "data"), ({"binaryData": {}}, "binaryData"),
                         ({"immutable": False}, "immutable")):
        with pytest.raises(errors.Invalid) as info:
            admit_cm({**old, **change}, old, Op.UPDATE)
        assert [e.message for e in info.value.errors if e.path == path] == \
            ["Forbidden: field is immutable when `immutable` is set"]
    mutable = admit_cm(config_map(data={"k": "v"}))
    assert admit_cm({**mutable, "data": {"k": "w"}}, mutable, Op.UPDATE)["data"] == {"k": "w"}
