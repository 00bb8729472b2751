"""Content negotiation and query parameter parsing."""
import pytest

from vclite.httpserver import media
from vclite.lib import errors

AGG = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
       "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
         "application/json")


@pytest.mark.parametrize("accept, expected", [
    pytest.param(AGG, media.Choice("discovery", "v2"), id="kubectl-aggregated-discovery"),
    pytest.param("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
                 media.Choice("discovery", "v2beta1"), id="v2beta1"),
    pytest.param(TABLE, media.Choice("table", "v1"), id="kubectl-get-table"),
    pytest.param("application/json;as=Table;v=v1beta1;g=meta.k8s.io", media.Choice("table", "v1beta1"), id="table-v1beta1"),
    pytest.param("application/json, */*", media.JSON, id="json"),
    pytest.param("application/vnd.kubernetes.protobuf,application/json", media.JSON, id="protobuf-then-json"),
    pytest.param("application/json;as=Table;v=v9;g=meta.k8s.io,application/json", media.JSON, id="unknown-table-version"),
    pytest.param("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", media.JSON, id="first-wins"),
    pytest.param(None, media.JSON, id="none"),
])
def test_negotiate(accept, expected):
    assert media.negotiate(accept) == expected


@pytest.mark.parametrize("value, expected", [
    *[pytest.param(v, True, id=f"true-{v}") for v in ("1", "t", "T", "true", "True", "TRUE")],
    *[pytest.param(v, False, id=f"false-{v}") for v in ("0", "f", "F", "false", "False", "FALSE")],
    pytest.param(None, False, id="absent"),
])
def test_parse_bool_go_forms(value, expected):
    assert media.parse_bool(value, "watch") is expected


@pytest.mark.parametrize("bad", ["yes", "on", "2"])
def test_parse_bool_refuses(bad):
    with pytest.raises(errors.BadRequest):
        media.parse_bool(bad, "watch")


@pytest.mark.parametrize("value, expected", [("10", 10), ("0", 0), (None, None), ("", None)])
def test_parse_int(value, expected):
    assert media.parse_int(value, "limit") == expected


@pytest.mark.parametrize("bad", ["-1", "x", "1.5"])
def test_parse_int_refuses(bad):
    with pytest.raises(errors.BadRequest):
        media.parse_int(bad, "limit")
