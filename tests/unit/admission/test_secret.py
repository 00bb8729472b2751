"""Secret admission: stringData merged into data, type defaulted, data checked, immutability."""
from __future__ import annotations

import base64

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def secret(**fields):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, **fields}


def b64(text):
    return base64.b64encode(text.encode()).decode()


def admit_secret(new, old=None, op=Op.CREATE):
    return admit.admit(op, kinds.SECRET, new, old, views.default_view())


def test_string_data_is_merged_into_data_and_type_defaulted():
    out = admit_secret(secret(data={"a": b64("old"), "b": b64("kept")}, stringData={"a": "new", "c": "3"}))
    assert out["data"] == {"a": b64("new"), "b": b64("kept"), "c": b64("3")}
    assert "stringData" not in out and out["type"] == "Opaque"
    assert admit_secret(secret(type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""}))["type"] == \
        "kubernetes.io/tls"


@pytest.mark.parametrize("fields, path, message", [
    pytest.param({"data": {"k": "!!"}}, "data[k]", "illegal base64 data", id="not base64"),
    pytest.param({"data": {"a b": "eA=="}}, "data[a b]", "a valid config key must consist", id="bad key"),
    pytest.param({"data": {"k": 1}}, "data[k]", "must be of type string", id="not a string"),
    pytest.param({"data": ["x"]}, "data", "must be of type object", id="data not a map"),
    pytest.param({"data": {"k": b64("x" * (1024 * 1024 + 1))}}, "data", "Too long", id="over 1 MiB"),
    pytest.param({"type": "kubernetes.io/ssh-auth", "data": {}}, "data[ssh-privatekey]", "Required value",
                 id="ssh-auth needs its key"),
])
def test_rejects(fields, path, message):
    with pytest.raises(errors.Invalid) as info:
        admit_secret(secret(**fields))
    assert any(e.path == path and message in e.message for e in info.value.errors), info.value.errors


def test_immutable_secret_keeps_its_data_type_and_immutability():
    old = admit_secret(secret(data={"k": b64("v")}, immutable=True))
    same = admit_secret({**old, "metadata": {**old["metadata"], "labels": {"x": "y"}}}, old, Op.UPDATE)
    assert same["metadata"]["labels"] == {"x": "y"}
    for change, path in (({"data": {"k": b64("w")}}, "data"), ({"immutable": False}, "immutable"),
                         ({"type": "other"}, "type")):
        with pytest.raises(errors.Invalid) as info:
            admit_secret({**old, **change}, old, Op.UPDATE)
        assert path in [e.path for e in info.value.errors]
