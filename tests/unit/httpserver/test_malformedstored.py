"""Objects stored with fields of another shape than today's admission allows (an older vclite, or a row written
straight into the store): lists, gets, tables, selectors and watches serve them as they are, and the other
objects with them — one such object never fails `kubectl get`."""
import json

import pytest

from tests.unit.httpserver import serving
from vclite.api import kinds
from vclite.lib import clock as clock_mod

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TABLE = {**AUTH, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


def obj(kind, name, **fields):
    md = {"name": name, **({"namespace": "default"} if kind.namespaced else {})}
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": md, **fields}


MALFORMED = [
    pytest.param(kinds.POD, "/api/v1/namespaces/default/pods", {"spec": "x", "status": ["Running"]}, id="pod"),
    pytest.param(kinds.POD, "/api/v1/namespaces/default/pods",
                 {"spec": {"containers": 5}, "status": {"containerStatuses": "x"}}, id="pod-containers"),
    pytest.param(kinds.NODE, "/api/v1/nodes", {"status": {"conditions": 5, "addresses": "x"}}, id="node"),
    pytest.param(kinds.SERVICE, "/api/v1/namespaces/default/services", {"spec": {"ports": "80"}}, id="service"),
    pytest.param(kinds.CONFIGMAP, "/api/v1/namespaces/default/configmaps", {"data": 5}, id="configmap-data"),
    pytest.param(kinds.EVENT, "/api/v1/namespaces/default/events", {"involvedObject": "pod/p"}, id="event"),
    pytest.param(kinds.JOB, "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs",
                 {"spec": {"minAvailable": "abc"}, "status": {"state": {"phase": 5}, "running": "x"}}, id="vcjob"),
]


@pytest.mark.parametrize("kind, path, fields", MALFORMED)
def test_a_malformed_stored_object_is_listed_tabled_and_selected_with_the_others(kind, path, fields):
    async def test(client, be):
        store = be.client.inner.store if hasattr(be.client, "inner") else be.client.store
        store.create(kind, obj(kind, "bad", **fields))
        store.create(kind, {**obj(kind, "bad-labels"), "metadata": {**obj(kind, "bad-labels")["metadata"],
                                                                     "labels": ["a"]}})
        for query in ("", "?labelSelector=a%3Db", "?labelSelector=a%21%3Db", "?fieldSelector=metadata.name%3Dbad"):
            plain = await client.get(path + query, headers=AUTH)
            assert plain.status == 200, await plain.text()
            table = await client.get(path + query, headers=TABLE)
            assert table.status == 200, await table.text()
            names = [r["object"]["metadata"]["name"] for r in (await table.json())["rows"]]
            assert ("bad" in names) == (query in ("", "?labelSelector=a%21%3Db", "?fieldSelector=metadata.name%3Dbad"))
        got = await client.get(f"{path}/bad", headers=TABLE)
        assert got.status == 200 and (await got.json())["rows"][0]["object"]["metadata"]["name"] == "bad"
        assert (await (await client.get(f"{path}/bad", headers=AUTH)).json())["metadata"]["name"] == "bad"
        watch = await client.get(path + "?watch=true&timeoutSeconds=1&labelSelector=a%21%3Db", headers=TABLE)
        lines = [json.loads(line) for line in (await watch.text()).splitlines() if line.strip()]
        assert {e["object"]["rows"][0]["object"]["metadata"]["name"] for e in lines if e["type"] == "ADDED"} >= {
            "bad", "bad-labels"}
    serve(test)


def serve(test):
    """Run `await test(client, backend)` against a fresh server on a virtual clock."""
    serving.serve(lambda client, srv, be: test(client, be), TOKEN, clock_mod.VirtualClock())
