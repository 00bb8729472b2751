"""kube-apiserver parity over HTTP (the aiohttp application in-process, the real in-process API behind it):
status writes checked, Service checks, ServiceAccounts and their tokens, `default/kubernetes`, and
Endpoints watches. Every refused request is checked to have changed nothing."""
from __future__ import annotations

import asyncio
import json

import pytest

from tests.unit.httpserver import serving
from vclite.api import kinds

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MERGE = {**AUTH, "Content-Type": "application/merge-patch+json"}
PODS = "/api/v1/namespaces/default/pods"
SVCS = "/api/v1/namespaces/default/services"
NODES = "/api/v1/nodes"


def serve(test, **backend_options):
    """Run `test(client, server, backend)` against a fresh server."""
    serving.serve(test, TOKEN, bookmark_interval=0.05, **backend_options)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1"]}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"}}}
LB = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
      "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}


@pytest.mark.parametrize("path, patch, words", [
    pytest.param(PODS + "/p/status", {"status": {"phase": "Finished"}}, 'status.phase: Unsupported value: "Finished"',
                 id="pod-phase"),
    pytest.param(PODS + "/p/status", {"status": {"podIPs": [{"ip": "nope"}]}},
                 'status.podIPs[0].ip: Invalid value: "nope": must be a valid IP address', id="pod-ip"),
    pytest.param(NODES + "/n1/status", {"status": {"capacity": {"cpu": "-4"}}},
                 'status.capacity[cpu]: Invalid value: "-4": must be greater than or equal to 0', id="node-capacity"),
    pytest.param(NODES + "/n1/status", {"status": {"allocatable": {"memory": "8 GiB"}}},
                 'status.allocatable[memory]: invalid quantity "8 GiB"', id="node-quantity"),
    pytest.param(SVCS + "/lb/status", {"status": {"loadBalancer": {"ingress": [{"ip": "300.1.1.1"}]}}},
                 'status.loadBalancer.ingress[0].ip: Invalid value: "300.1.1.1"', id="service-ingress"),
])
def test_bad_status_writes_get_422_and_change_nothing(path, patch, words):
    async def test(client, srv, be):
        for url, body in ((PODS, POD), (NODES, NODE), (SVCS, LB)):
            assert (await client.post(url, json=body, headers=AUTH)).status == 201
        before = be.resource_version()
        for method in ("PATCH", "PUT"):
            if method == "PATCH":
                resp = await client.patch(path, data=json.dumps(patch), headers=MERGE)
            else:
                current = await (await client.get(path, headers=AUTH)).json()
                current["status"] = {**current.get("status", {}), **patch["status"]}
                resp = await client.put(path, json=current, headers=AUTH)
            st = await resp.json()
            assert (resp.status, st["reason"]) == (422, "Invalid"), st
            assert words in st["message"], st["message"]
        assert be.resource_version() == before
    serve(test)


def test_a_good_load_balancer_status_is_stored_with_its_ip_mode():
    async def test(client, srv, be):
        assert (await client.post(SVCS, json=LB, headers=AUTH)).status == 201
        resp = await client.patch(SVCS + "/lb/status", headers=MERGE, data=json.dumps(
            {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}))
        assert resp.status == 200
        assert (await resp.json())["status"]["loadBalancer"] == {"ingress": [{"ip": "192.0.2.10", "ipMode": "VIP"}]}
    serve(test)


@pytest.mark.parametrize("spec, words", [
    pytest.param({"clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.21"]},
                 'spec.clusterIPs: Invalid value: ["10.96.0.21"]: first value must match `clusterIP`',
                 id="cluster-ips"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90000}}},
                 "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 90000: must be greater than 0 "
                 "and less than 86400", id="affinity-timeout"),
])
def test_service_checks_over_http(spec, words):
    async def test(client, srv, be):
        before = be.resource_version()
        body = {**LB, "spec": {"ports": [{"port": 80}], **spec}}
        resp = await client.post(SVCS, json=body, headers=AUTH)
        st = await resp.json()
        assert (resp.status, st["reason"]) == (422, "Invalid") and words in st["message"], st
        assert be.resource_version() == before and be.client.list(kinds.SERVICE) == []
    serve(test)


SAS = "/api/v1/namespaces/default/serviceaccounts"


def _claims(token):
    import base64
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def test_every_namespace_has_a_default_service_account_made_again_when_deleted():
    async def test(client, srv, be):
        names = [i["metadata"]["name"] for i in (await (await client.get(SAS, headers=AUTH)).json())["items"]]
        assert names == ["default"]
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
        assert (await client.post("/api/v1/namespaces", json=ns, headers=AUTH)).status == 201
        resp = await client.get("/api/v1/namespaces/team/serviceaccounts/default", headers=AUTH)
        assert resp.status == 200
        uid = (await resp.json())["metadata"]["uid"]
        assert (await client.delete("/api/v1/namespaces/team/serviceaccounts/default", headers=AUTH)).status == 200
        again = await (await client.get("/api/v1/namespaces/team/serviceaccounts/default", headers=AUTH)).json()
        assert again["metadata"]["uid"] != uid
        table = await (await client.get(SAS, headers={
            **AUTH, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).json()
        assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Secrets", "Age"]
    serve(test)


def test_pods_get_the_default_account_and_one_naming_a_missing_account_is_refused():
    async def test(client, srv, be):
        resp = await client.post(PODS, json=POD, headers=AUTH)
        spec = (await resp.json())["spec"]
        assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
        before = be.resource_version()
        ci = {**POD, "metadata": {"name": "q"}, "spec": {**POD["spec"], "serviceAccountName": "ci"}}
        resp = await client.post(PODS, json=ci, headers=AUTH)
        st = await resp.json()
        assert (resp.status, st["reason"], st["message"]) == (403, "Forbidden", 'pods "q" is forbidden: error looking '
                                                              'up service account default/ci: serviceaccount "ci" '
                                                              'not found')
        assert be.resource_version() == before
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ci"}}
        assert (await client.post(SAS, json=sa, headers=AUTH)).status == 201
        resp = await client.post(PODS, json=ci, headers=AUTH)
        assert resp.status == 201 and (await resp.json())["spec"]["serviceAccount"] == "ci"
    serve(test)


def test_a_token_request_answers_a_signed_token_for_the_account():
    async def test(client, srv, be):
        assert (await client.post(PODS, json=POD, headers=AUTH)).status == 201
        pod_uid = be.client.get(kinds.POD, "default", "p")["metadata"]["uid"]
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 600, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}}
        resp = await client.post(SAS + "/default/token", json=body, headers=AUTH)
        out = await resp.json()
        assert resp.status == 201 and out["kind"] == "TokenRequest" and out["spec"]["expirationSeconds"] == 600
        claims = _claims(out["status"]["token"])
        assert claims["sub"] == "system:serviceaccount:default:default" and claims["exp"] - claims["iat"] == 600
        assert claims["kubernetes.io"]["pod"] == {"name": "p", "uid": pod_uid}
        assert out["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
        # the token is not a credential of this API (docs/differences.md)
        resp = await client.get(SAS, headers={"Authorization": f"Bearer {out['status']['token']}"})
        assert resp.status == 401
    serve(test)


def test_a_token_bound_to_a_pod_is_for_the_account_the_pod_runs_with():
    """As kube-apiserver's TokenREST: `kubectl create token ci --bound-object-kind Pod --bound-object-name p` for
    a pod running as `default` is a 400 (it was answered)."""
    async def test(client, srv, be):
        assert (await client.post(PODS, json=POD, headers=AUTH)).status == 201
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ci"}}
        assert (await client.post(SAS, json=sa, headers=AUTH)).status == 201
        body = {"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}}
        resp = await client.post(SAS + "/ci/token", json=body, headers=AUTH)
        st = await resp.json()
        assert (resp.status, st["message"]) == (400, 'cannot bind token for serviceaccount "ci" to pod running with '
                                                     'serviceaccount "default"')
        assert (await client.post(SAS + "/default/token", json=body, headers=AUTH)).status == 201
    serve(test)


@pytest.mark.parametrize("path, spec, code, words", [
    pytest.param(SAS + "/default/token", {"expirationSeconds": 60}, 422,
                 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not '
                 'specify a duration less than 10 minutes', id="too-short"),
    pytest.param(SAS + "/default/token", {"expirationSeconds": 1 << 33}, 422,
                 "may not specify a duration larger than 2^32 seconds", id="too-long"),
    pytest.param(SAS + "/nobody/token", {}, 404, 'serviceaccounts "nobody" not found', id="no-such-account"),
    pytest.param(SAS + "/default/token", {"boundObjectRef": {"kind": "ConfigMap", "name": "c"}}, 400,
                 "cannot bind token for object of type", id="bound-to-a-configmap"),
    pytest.param(SAS + "/default/token", {"boundObjectRef": {"kind": "Pod", "name": "gone"}}, 404,
                 'pods "gone" not found', id="bound-to-a-missing-pod"),
])
def test_bad_token_requests_are_refused(path, spec, code, words):
    async def test(client, srv, be):
        before = be.resource_version()
        resp = await client.post(path, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                             "spec": spec}, headers=AUTH)
        st = await resp.json()
        assert resp.status == code and words in st["message"], st
        assert be.resource_version() == before
    serve(test)


EPS = "/api/v1/namespaces/default/endpoints"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
WEB = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
       "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}


async def read_lines(resp, n, timeout=5.0):
    lines = []
    while len(lines) < n:
        line = await asyncio.wait_for(resp.content.readline(), timeout)
        if not line:
            break
        event = json.loads(line)
        if event["type"] != "BOOKMARK":
            lines.append(event)
    return lines


def _web_pod(name="w1"):
    return {**POD, "metadata": {"name": name, "labels": {"app": "web"}}}


async def _run_pod(client, name="w1", ready=True):
    """The pod as a kubelet would report it: bound, Running with an IP, Ready or not."""
    status = {"phase": "Running", "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}],
              "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    resp = await client.patch(f"{PODS}/{name}/status", data=json.dumps({"status": status}), headers=MERGE)
    assert resp.status == 200, await resp.text()


def test_an_endpoints_watch_follows_services_and_pods():
    async def test(client, srv, be):
        assert (await client.post(SVCS, json=WEB, headers=AUTH)).status == 201
        resp = await client.get(EPS + "?watch=true&timeoutSeconds=5", headers=AUTH)
        assert resp.status == 200
        [first] = await read_lines(resp, 1)   # (the current state: web has no address yet)
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "web")
        assert "subsets" not in first["object"]
        await client.post(PODS, json=_web_pod(), headers=AUTH)
        await _run_pod(client, ready=False)
        await _run_pod(client, ready=True)
        await client.delete(SVCS + "/web", headers=AUTH)
        got = await read_lines(resp, 3)
        assert [e["type"] for e in got] == ["MODIFIED", "MODIFIED", "DELETED"]
        assert got[0]["object"]["subsets"][0]["notReadyAddresses"][0]["targetRef"]["name"] == "w1"
        assert got[1]["object"]["subsets"][0]["addresses"][0]["ip"] == "127.0.0.1"
        assert got[1]["object"]["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
        versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in got]
        assert versions == sorted(versions) and versions[-1] == int(be.resource_version())
    serve(test)


def test_an_endpoints_watch_resumes_from_a_version_and_410_when_too_old():
    async def test(client, srv, be):
        assert (await client.post(SVCS, json=WEB, headers=AUTH)).status == 201
        await client.post(PODS, json=_web_pod(), headers=AUTH)
        listed = await (await client.get(EPS, headers=AUTH)).json()
        rv = listed["metadata"]["resourceVersion"]
        await _run_pod(client)
        resp = await client.get(EPS + f"?watch=1&resourceVersion={rv}&timeoutSeconds=5", headers=AUTH)
        [ev] = await read_lines(resp, 1)   # (only the change after rv, no initial state)
        assert ev["type"] == "MODIFIED" and ev["object"]["subsets"][0]["addresses"][0]["targetRef"]["name"] == "w1"
        be.client.store._history.clear()   # as if the history had rolled over
        be.client.create({**CM_OTHER})
        resp = await client.get(EPS + "?watch=true&resourceVersion=1", headers=AUTH)
        [err] = await read_lines(resp, 1)
        assert err["type"] == "ERROR" and (err["object"]["code"], err["object"]["reason"]) == (410, "Expired")
    serve(test)


CM_OTHER = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c2", "namespace": "default"}}


def test_an_endpoint_slices_watch_with_a_label_selector_and_table_rows():
    async def test(client, srv, be):
        assert (await client.post(SVCS, json=WEB, headers=AUTH)).status == 201
        other = {**WEB, "metadata": {"name": "other"}, "spec": {**WEB["spec"], "selector": {"app": "other"}}}
        assert (await client.post(SVCS, json=other, headers=AUTH)).status == 201
        resp = await client.get(SLICES + "?watch=true&labelSelector=kubernetes.io/service-name%3Dweb&timeoutSeconds=5",
                                headers={**AUTH, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        await client.post(PODS, json=_web_pod(), headers=AUTH)
        await client.post(PODS, json={**_web_pod("o1"), "metadata": {"name": "o1", "labels": {"app": "other"}}},
                          headers=AUTH)
        await _run_pod(client, "o1")
        await _run_pod(client)
        first, ev = await read_lines(resp, 2)   # (web's slice, empty at first; nothing of other's)
        assert (first["type"], first["object"]["rows"][0]["cells"][:4]) == ("ADDED", ["web-0", "IPv4", "<unset>",
                                                                                    "<unset>"])
        assert ev["type"] == "MODIFIED" and ev["object"]["kind"] == "Table"
        assert ev["object"]["rows"][0]["cells"][:4] == ["web-0", "IPv4", "8080", "127.0.0.1"]
    serve(test)


def test_a_watch_of_one_endpoints_object():
    async def test(client, srv, be):
        for name in ("web", "b"):
            body = {**WEB, "metadata": {"name": name}}
            assert (await client.post(SVCS, json=body, headers=AUTH)).status == 201
        resp = await client.get(EPS + "/web?watch=true&timeoutSeconds=5", headers=AUTH)
        await client.delete(SVCS + "/b", headers=AUTH)
        await client.delete(SVCS + "/web", headers=AUTH)
        got = await read_lines(resp, 2)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in got] == [("ADDED", "web"), ("DELETED", "web")]
    serve(test)
