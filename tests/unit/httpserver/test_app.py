"""The HTTP application end to end in-process (aiohttp test server): auth, limits, negotiation,
watch streams, logs, metrics. Every refused request is checked to have changed nothing."""
import asyncio
import datetime
import json
import os
import time

import pytest
from aiohttp import test_utils

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import logtimes
from vclite.httpserver import app as app_mod
from vclite.httpserver import backend, bodies, protobuf
from vclite.lib import clock as clock_mod

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CMS = "/api/v1/namespaces/default/configmaps"
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"k": "v"}}


def serve(test, log_dir=None, pod_exec=None, bookmark_interval=0.05):
    """Run `test(client, server, backend)` against a fresh server."""
    async def main():
        api = inprocess.new_client(clock_mod.RealClock())
        log_path = (lambda ns, pod, c, previous: log_dir / f"{ns}_{pod}_{c}{'.previous' if previous else ''}.log"
                    ) if log_dir else None
        be = backend.Backend.of_client(api, log_path, pod_exec)
        srv = app_mod.Server(be, TOKEN, bookmark_interval=bookmark_interval)
        srv.ready = True
        async with test_utils.TestClient(test_utils.TestServer(srv.app())) as client:
            await test(client, srv, be)
    asyncio.run(main())


@pytest.mark.parametrize("headers", [
    pytest.param({}, id="no-token"),
    pytest.param({"Authorization": "Bearer wrong"}, id="wrong-token"),
    pytest.param({"Authorization": TOKEN}, id="not-bearer"),
    pytest.param({"Authorization": f"Basic {TOKEN}"}, id="basic"),
])
@pytest.mark.parametrize("method, path, body", [
    pytest.param("GET", "/api", None, id="discovery"),
    pytest.param("GET", CMS, None, id="list"),
    pytest.param("POST", CMS, json.dumps(CM), id="create"),
    pytest.param("DELETE", "/api/v1/namespaces/default", None, id="delete"),
    pytest.param("GET", "/no/such/path", None, id="unknown-path"),
    pytest.param("GET", "/metrics", None, id="metrics"),
    pytest.param("GET", "/healthz/ping", None, id="health-sub-check"),
    pytest.param("POST", "/healthz", None, id="health-not-a-get"),
])
def test_unauthenticated_requests_get_401_and_change_nothing(headers, method, path, body):
    async def test(client, srv, be):
        before = be.resource_version()
        resp = await client.request(method, path, data=body, headers=headers)
        assert resp.status == 401
        assert await resp.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
        assert be.resource_version() == before
        assert len(be.client.list(kinds.CONFIGMAP)) == 0
    serve(test)


@pytest.mark.parametrize("method, path, body, ctype, code, reason", [
    pytest.param("GET", "/apis/nosuch.io/v1/widgets", None, None, 404, "NotFound", id="unknown-kind"),
    pytest.param("GET", "/random", None, None, 404, "NotFound", id="unknown-path"),
    pytest.param("POST", CMS, b"x" * (bodies.MAX_BODY + 10), "application/json", 413, "RequestEntityTooLarge",
                 id="too-large"),
    pytest.param("POST", CMS, b"[" * 5000 + b"]" * 5000, "application/json", 400, "BadRequest", id="too-deep"),
    pytest.param("POST", CMS, b'{"metadata": ', "application/json", 400, "BadRequest", id="malformed"),
    pytest.param("POST", CMS, b"a: &x 1\nb: *x\n", "application/yaml", 400, "BadRequest", id="yaml-alias"),
    pytest.param("POST", CMS, b"<cm/>", "application/xml", 415, "UnsupportedMediaType", id="xml"),
    pytest.param("PATCH", CMS + "/c0", b"{}", "application/xml", 415, "UnsupportedMediaType", id="patch-type"),
    pytest.param("PUT", CMS, b"{}", "application/json", 405, "MethodNotAllowed", id="put-collection"),
    pytest.param("POST", "/api", b"{}", "application/json", 405, "MethodNotAllowed", id="post-discovery"),
    pytest.param("POST", "/api/v1/configmaps", json.dumps(CM).encode(), "application/json", 400, "BadRequest",
                 id="create-without-namespace"),
    pytest.param("POST", CMS, json.dumps({**CM, "kind": "Pod"}).encode(), "application/json", 400, "BadRequest",
                 id="wrong-kind"),
    pytest.param("POST", CMS + "?fieldValidation=Strict",
                 b'{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "name": "b"}}',
                 "application/json", 400, "BadRequest", id="strict-duplicate"),
    pytest.param("GET", CMS + "?watch=maybe", None, None, 400, "BadRequest", id="bad-bool"),
    pytest.param("GET", CMS + "?watch=1&resourceVersion=abc", None, None, 400, "BadRequest", id="bad-rv"),
])
def test_refused_requests_get_a_status_and_change_nothing(method, path, body, ctype, code, reason):
    async def test(client, srv, be):
        await client.post(CMS, json={**CM, "metadata": {"name": "c0"}}, headers=AUTH)
        before = be.resource_version()
        headers = {**AUTH, **({"Content-Type": ctype} if ctype else {})}
        resp = await client.request(method, path, data=body, headers=headers)
        st = await resp.json()
        assert (resp.status, st["kind"], st["code"], st["reason"]) == (code, "Status", code, reason), st
        assert be.resource_version() == before
    serve(test)


def test_crud_round_trip_and_status_errors():
    async def test(client, srv, be):
        resp = await client.post(CMS, json=CM, headers=AUTH)
        assert resp.status == 201
        resp = await client.post(CMS, json=CM, headers=AUTH)
        st = await resp.json()
        assert (resp.status, st["reason"], st["message"]) == (409, "AlreadyExists", 'configmaps "c1" already exists')
        resp = await client.get(CMS + "/nope", headers=AUTH)
        st = await resp.json()
        assert (resp.status, st["reason"], st["details"]) == (404, "NotFound", {"name": "nope", "group": "",
                                                                                  "kind": "configmaps"})
        resp = await client.patch(CMS + "/c1", data=json.dumps({"data": {"k": "w"}}), headers={
            **AUTH, "Content-Type": "application/merge-patch+json"})
        assert (await resp.json())["data"] == {"k": "w"}
        resp = await client.delete(CMS + "/c1", json={"propagationPolicy": "Background"}, headers=AUTH)
        assert resp.status == 200
    serve(test)


def test_discovery_negotiation_and_table():
    async def test(client, srv, be):
        resp = await client.get("/apis", headers={**AUTH, "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                                    "as=APIGroupDiscoveryList,application/json"})
        assert resp.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        assert (await resp.json())["kind"] == "APIGroupDiscoveryList"
        resp = await client.get("/apis/", headers=AUTH)
        assert (await resp.json())["kind"] == "APIGroupList"
        resp = await client.get("/api/v1/namespaces", headers={
            **AUTH, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
        assert resp.headers["Content-Type"] == "application/json;as=Table;g=meta.k8s.io;v=v1"
        assert (await resp.json())["rows"][0]["cells"][:2] == ["default", "Active"]
        resp = await client.get("/version", headers=AUTH)
        assert (await resp.json())["gitVersion"].startswith("v1.32")
    serve(test)


def test_openapi_v2_is_an_empty_document_as_protobuf_or_json():
    """client-go asks for gnostic's protobuf Document (swagger = 1, info = 2: title = 1, version = 2)."""
    async def test(client, srv, be):
        resp = await client.get("/openapi/v2", headers={
            **AUTH, "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
        assert resp.status == 200
        assert resp.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        fields = protobuf._fields(await resp.read())
        assert [(n, w) for n, w, _ in fields] == [(1, 2), (2, 2)] and fields[0][2] == b"2.0"
        assert [v for _, _, v in protobuf._fields(fields[1][2])] == [b"Kubernetes (vclite)", b"v1.32.0"]
        resp = await client.get("/openapi/v2", headers={**AUTH, "Accept": "application/json"})
        assert await resp.json() == {"swagger": "2.0", "info": {"title": "Kubernetes (vclite)", "version": "v1.32.0"},
                                     "paths": {}, "definitions": {}}
    serve(test)


async def read_lines(resp, n, timeout=5.0):
    lines = []
    while len(lines) < n:
        line = await asyncio.wait_for(resp.content.readline(), timeout)
        if not line:
            break
        lines.append(json.loads(line))
    return lines


def test_watch_streams_events_and_ends_at_timeout():
    async def test(client, srv, be):
        resp = await client.get(CMS + "?watch=true&timeoutSeconds=1", headers=AUTH)
        assert resp.status == 200
        await client.post(CMS, json=CM, headers=AUTH)
        await client.delete(CMS + "/c1", headers=AUTH)
        got = await read_lines(resp, 2)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in got] == [("ADDED", "c1"), ("DELETED", "c1")]
        assert await asyncio.wait_for(resp.content.read(), 5) == b""  # the server closes at timeoutSeconds
    serve(test)


def test_watch_resumes_and_too_old_version_gets_410_event():
    async def test(client, srv, be):
        created = await (await client.post(CMS, json=CM, headers=AUTH)).json()
        await client.patch(CMS + "/c1", data='{"data": {"k": "2"}}',
                           headers={**AUTH, "Content-Type": "application/merge-patch+json"})
        rv = created["metadata"]["resourceVersion"]
        resp = await client.get(CMS + f"?watch=1&resourceVersion={rv}&timeoutSeconds=1", headers=AUTH)
        got = await read_lines(resp, 1)
        assert got[0]["type"] == "MODIFIED" and got[0]["object"]["data"] == {"k": "2"}
        be.client.store._history.clear()  # as if the history had rolled over
        be.client.create({**CM, "metadata": {"name": "c2"}})
        resp = await client.get(CMS + "?watch=true&resourceVersion=1", headers=AUTH)
        got = await read_lines(resp, 1)
        assert got[0]["type"] == "ERROR"
        assert (got[0]["object"]["code"], got[0]["object"]["reason"]) == (410, "Expired")
    serve(test)


def test_watch_bookmarks_and_table_rows():
    async def test(client, srv, be):
        resp = await client.get(CMS + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=2", headers={
            **AUTH, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
        bookmark = (await read_lines(resp, 1))[0]
        assert bookmark["type"] == "BOOKMARK" and bookmark["object"]["metadata"]["resourceVersion"] == \
            be.resource_version()
        await client.post(CMS, json=CM, headers=AUTH)
        while True:
            ev = (await read_lines(resp, 1))[0]
            if ev["type"] != "BOOKMARK":
                break
        assert ev["type"] == "ADDED" and ev["object"]["kind"] == "Table"
        assert ev["object"]["rows"][0]["cells"][0] == "c1"
    serve(test)


def test_watch_ends_when_server_stops():
    async def test(client, srv, be):
        resp = await client.get(CMS + "?watch=true", headers=AUTH)
        await asyncio.sleep(0.05)
        assert len(srv.feeds) == 1
        await srv.stop_streams()
        assert await asyncio.wait_for(resp.content.read(), 5) == b""
        assert len(srv.feeds) == 0
        assert (await client.get("/readyz", headers=AUTH)).status == 503
    serve(test)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
       "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "i", "command": ["true"]}]}}


def test_the_log_of_a_pod_no_node_runs_is_empty(tmp_path):
    async def test(client, srv, be):
        be.client.create({**POD, "spec": {"containers": POD["spec"]["containers"]}})
        for query in ("", "?follow=true", "?timestamps=true&tailLines=3"):
            resp = await client.get("/api/v1/namespaces/default/pods/p1/log" + query, headers=AUTH)
            assert (resp.status, await resp.text()) == (200, ""), query
        resp = await client.get("/api/v1/namespaces/default/pods/p1/log?container=other", headers=AUTH)
        assert resp.status == 400   # (the container is checked first)
    serve(test, log_dir=tmp_path)


class NothingRuns:
    """A local executor whose containers do not run (yet): the kubelet's refusal of an attach."""

    def attach_problem(self, namespace, pod, container):
        return f"container {container} not found in pod {pod}_{namespace}"


ATTACH = "/api/v1/namespaces/default/pods/{}/attach?container={}&stdout=true&stderr=true"


@pytest.mark.parametrize("pod, query, method, pod_exec, code, reason, words", [
    pytest.param("nope", "?stdout=true", "GET", NothingRuns(), 404, "NotFound", 'pods "nope" not found', id="no-pod"),
    pytest.param("p1", "?container=other&stdout=true", "GET", NothingRuns(), 400, "BadRequest",
                 "container other is not valid for pod p1", id="unknown-container"),
    pytest.param("p0", "?stdout=true", "GET", NothingRuns(), 400, "BadRequest", "pod p0 does not have a host assigned",
                 id="no-node"),
    pytest.param("p1", "?stdin=true&stdout=true&tty=true", "GET", NothingRuns(), 400, "BadRequest",
                 "container main has no terminal", id="a-terminal"),
    pytest.param("p1", "?stdout=true", "GET", None, 400, "BadRequest", "attach is not available", id="no-executor"),
    pytest.param("p1", "?stdout=true", "PUT", NothingRuns(), 405, "MethodNotAllowed", "allowed: GET, POST",
                 id="not-get-nor-post"),
])
def test_attach_refusals_as_kube_apiserver_gives_them(pod, query, method, pod_exec, code, reason, words):
    async def test(client, srv, be):
        be.client.create(POD)
        be.client.create({**POD, "metadata": {"name": "p0", "namespace": "default"},
                          "spec": {"containers": POD["spec"]["containers"]}})
        resp = await client.request(method, f"/api/v1/namespaces/default/pods/{pod}/attach{query}", headers=AUTH)
        body = await resp.json()
        assert (resp.status, body["reason"]) == (code, reason) and words in body["message"], body
    serve(test, pod_exec=pod_exec)


@pytest.mark.parametrize("method, headers", [
    pytest.param("GET", {"Connection": "Upgrade", "Upgrade": "websocket"}, id="websocket"),
    pytest.param("POST", {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}, id="spdy"),
])
def test_attach_to_a_container_that_does_not_run_gets_the_kubelets_plain_text(method, headers):
    """As the kubelet's streaming server answers it (a 500 and the error's text), over either protocol; kubectl
    prints `error: unable to upgrade connection: <text>`."""
    async def test(client, srv, be):
        be.client.create(POD)
        resp = await client.request(method, ATTACH.format("p1", "main"), headers={**AUTH, **headers})
        assert (resp.status, await resp.text()) == (500, "container main not found in pod p1_default")
    serve(test, pod_exec=NothingRuns())


def test_attach_over_spdy_is_refused_with_a_message():
    class Runs(NothingRuns):
        def attach_problem(self, namespace, pod, container):
            return None

    async def test(client, srv, be):
        be.client.create(POD)
        resp = await client.post(ATTACH.format("p1", "main"), headers={**AUTH, "Upgrade": "SPDY/3.1"})
        body = await resp.json()
        assert resp.status == 400 and body["message"].startswith("vclite serves exec and attach over WebSocket only")
    serve(test, pod_exec=Runs())


def test_pod_logs_tail_and_follow(tmp_path):
    async def test(client, srv, be):
        be.client.create(POD)
        url = "/api/v1/namespaces/default/pods/p1/log"
        resp = await client.get(url, headers=AUTH)
        st = await resp.json()
        assert resp.status == 400 and "waiting to start" in st["message"]
        log = tmp_path / "default_p1_main.log"
        log.write_text("one\ntwo\nthree\n")
        assert await (await client.get(url, headers=AUTH)).text() == "one\ntwo\nthree\n"
        assert await (await client.get(url + "?tailLines=2", headers=AUTH)).text() == "two\nthree\n"
        assert await (await client.get(url + "?container=main&limitBytes=5", headers=AUTH)).text() == "one\nt"
        resp = await client.get(url + "?container=other", headers=AUTH)
        assert resp.status == 400
        follow = await client.get(url + "?follow=true&tailLines=1", headers=AUTH)
        assert await asyncio.wait_for(follow.content.readline(), 5) == b"three\n"
        with open(log, "a") as f:
            f.write("four\n")
        assert await asyncio.wait_for(follow.content.readline(), 5) == b"four\n"
        be.client.patch(kinds.POD, "default", "p1", {"status": {"phase": "Succeeded"}}, status=True)
        assert await asyncio.wait_for(follow.content.read(), 5) == b""  # ends with the pod
        (tmp_path / "default_p1_main.previous.log").write_text("run before\n")
        resp = await client.get(url + "?previous=true", headers=AUTH)   # no terminated last state: none
        st = await resp.json()
        assert resp.status == 400 and st["message"] == 'previous terminated container "main" in pod "p1" not found'
        last = {"terminated": {"exitCode": 1, "reason": "Error"}}
        status = {"name": "main", "lastState": last, "state": {"running": {}}}
        be.client.patch(kinds.POD, "default", "p1", {"status": {"containerStatuses": [status]}}, status=True)
        for query in ("?previous=true", "?previous=true&follow=true", "?previous=true&tailLines=1"):
            resp = await asyncio.wait_for(client.get(url + query, headers=AUTH), 5)
            assert await asyncio.wait_for(resp.text(), 5) == "run before\n"
        # backing off after a crash: the run in lastState is the current file, for both
        status = {**status, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        be.client.patch(kinds.POD, "default", "p1", {"status": {"containerStatuses": [status]}}, status=True)
        for query in ("", "?previous=true"):
            resp = await asyncio.wait_for(client.get(url + query, headers=AUTH), 5)
            assert await asyncio.wait_for(resp.text(), 5) == "one\ntwo\nthree\nfour\n"
    serve(test, log_dir=tmp_path)


def _stamp(when: float) -> str:
    return logtimes.format_time(when) + " "


def test_pod_logs_timestamps_and_since(tmp_path):
    """Each line's time is the first sample at or after its end (executor/logtimes.py); lines after
    the last sample take the run's finishedAt once it ended, and the time of reading while it runs."""
    async def test(client, srv, be):
        be.client.create(POD)
        url = "/api/v1/namespaces/default/pods/p1/log"
        log = tmp_path / "default_p1_main.log"
        log.write_text("one\ntwo\nthree\n")
        t0 = float(f"{time.time() - 3600:.6f}")   # (as the index file keeps it)
        logtimes.append_sample(log, 4, t0)          # "one\n" by t0
        logtimes.append_sample(log, 8, t0 + 60)     # "two\n" by t0 + 1 min
        before = time.time()
        text = await (await client.get(url + "?timestamps=true", headers=AUTH)).text()
        lines = text.splitlines(keepends=True)
        assert lines[:2] == [_stamp(t0) + "one\n", _stamp(t0 + 60) + "two\n"]
        stamp, _, rest = lines[2].partition(" ")   # still running: the time it was read
        assert rest == "three\n" and logtimes.format_time(before - 1) <= stamp <= logtimes.format_time(time.time() + 1)
        finished = float(int(t0) + 120)
        finished_text = clock_mod.format_time(datetime.datetime.fromtimestamp(finished, datetime.timezone.utc))
        ended = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": finished_text}}
        be.client.patch(kinds.POD, "default", "p1", {"status": {"containerStatuses": [
            {"name": "main", "state": ended}]}}, status=True)
        cases = {
            "?timestamps=true": _stamp(t0) + "one\n" + _stamp(t0 + 60) + "two\n" + _stamp(finished) + "three\n",
            "?timestamps=true&tailLines=1": _stamp(finished) + "three\n",
            "?timestamps=true&limitBytes=35": (_stamp(t0) + "one\n" + _stamp(t0 + 60) + "two\n")[:35],
            f"?sinceSeconds={int(time.time() - t0 - 30)}": "two\nthree\n",
            "?sinceTime=" + finished_text: "three\n",
            "?sinceTime=2030-01-01T00:00:00Z": "",
            f"?sinceSeconds={int(time.time() - t0 - 90)}&tailLines=2": "three\n",
        }
        for query, want in cases.items():
            assert await (await client.get(url + query, headers=AUTH)).text() == want, query
        bad = {
            "?sinceSeconds=0": "sinceSeconds: Invalid value: 0: must be greater than 0",
            "?sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z": "at most one of `sinceTime` or `sinceSeconds`",
            "?sinceTime=yesterday": "invalid value for sinceTime",
            "?timestamps=maybe": "invalid value for timestamps",
        }
        for query, words in bad.items():
            resp = await client.get(url + query, headers=AUTH)
            assert resp.status == 400 and words in (await resp.json())["message"], query
    serve(test, log_dir=tmp_path)


def test_a_followed_log_with_timestamps_stamps_new_lines_when_they_are_read(tmp_path):
    async def test(client, srv, be):
        be.client.create(POD)
        log = tmp_path / "default_p1_main.log"
        log.write_text("old\n")
        logtimes.append_sample(log, 4, time.time() - 60)
        follow = await client.get("/api/v1/namespaces/default/pods/p1/log?follow=true&timestamps=true", headers=AUTH)
        first = await asyncio.wait_for(follow.content.readline(), 5)
        await asyncio.sleep(0.3)
        written = time.time()
        with open(log, "a") as f:
            f.write("new\n")
        stamp, _, line = (await asyncio.wait_for(follow.content.readline(), 5)).decode().partition(" ")
        assert first.decode().partition(" ")[2] == "old\n" and line == "new\n"
        assert logtimes.format_time(written - 0.001) <= stamp <= logtimes.format_time(time.time())
    serve(test, log_dir=tmp_path)


def test_a_quick_run_without_samples_takes_its_end_time_for_every_line(tmp_path):
    async def test(client, srv, be):
        be.client.create(POD)
        (tmp_path / "default_p1_main.log").write_text("a\nb")
        ended = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": "2026-01-02T03:04:05Z"}}
        be.client.patch(kinds.POD, "default", "p1", {"status": {"containerStatuses": [
            {"name": "main", "state": ended}]}}, status=True)
        stamp = _stamp(clock_mod.parse_time("2026-01-02T03:04:05Z").timestamp())
        text = await (await client.get("/api/v1/namespaces/default/pods/p1/log?timestamps=true", headers=AUTH)).text()
        assert text == stamp + "a\n" + stamp + "b"   # (a last line without its newline, as written)
    serve(test, log_dir=tmp_path)


@pytest.mark.parametrize("path, wanted", [("/healthz", "ok"), ("/livez", "ok"), ("/readyz", "ok"),
                                          ("/version", '"gitVersion"'), ("/version/", '"gitVersion"')])
def test_health_and_version_need_the_token_too(path, wanted):
    """The issue's contract: every request needs the token, and one without it learns nothing (Kubernetes'
    public-info-viewer role would answer these anonymously; vclite does not)."""
    async def test(client, srv, be):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            resp = await client.get(path, headers=headers)
            assert resp.status == 401 and wanted not in await resp.text(), path
        resp = await client.get(path, headers=AUTH)
        assert resp.status == 200 and wanted in await resp.text()
    serve(test)


def test_a_followed_log_ends_when_its_run_is_renamed_away_at_a_restart(tmp_path):
    async def test(client, srv, be):
        be.client.create(POD)
        log = tmp_path / "default_p1_main.log"
        log.write_text("first run\n")
        follow = await client.get("/api/v1/namespaces/default/pods/p1/log?follow=true", headers=AUTH)
        assert await asyncio.wait_for(follow.content.readline(), 5) == b"first run\n"
        with open(log, "a") as f:
            f.write("its last line\n")
        os.replace(log, tmp_path / "default_p1_main.previous.log")   # the executor, at the restart
        log.write_text("a much longer first line of the second run\n")
        assert await asyncio.wait_for(follow.content.read(), 5) == b"its last line\n"
    serve(test, log_dir=tmp_path)


def test_health_and_metrics():
    async def test(client, srv, be):
        for path in ("/healthz", "/livez", "/readyz", "/healthz/ping", "/readyz/shutdown"):
            resp = await client.get(path, headers=AUTH)
            assert (resp.status, await resp.text()) == (200, "ok")
        resp = await client.get("/readyz?verbose", headers=AUTH)
        assert (resp.status, await resp.text()) == (
            200, "[+]ping ok\n[+]log ok\n[+]started ok\n[+]shutdown ok\nreadyz check passed\n")
        assert (await client.get("/livez/etcd", headers=AUTH)).status == 404
        await client.get(CMS, headers=AUTH)
        srv.observe_sync("scheduler", 0.002, scheduled=3)
        text = await (await client.get("/metrics", headers=AUTH)).text()
        assert 'vclite_objects{kind="Namespace"} 1' in text
        assert 'vclite_apiserver_request_total{code="200",resource="configmaps",verb="LIST"} 1' in text
        assert 'vclite_apiserver_request_duration_seconds_count{resource="configmaps",verb="LIST"} 1' in text
        assert "vclite_scheduler_pods_scheduled_total 3" in text
        assert "vclite_scheduler_session_duration_seconds_count 1" in text
        assert "vclite_apiserver_watches 0" in text
    serve(test)


def _jf(phase, ns="default"):
    return {"metadata": {"name": "f", "namespace": ns}, "status": {"state": {"phase": phase}} if phase else {}}


@pytest.mark.parametrize("obj, old, reached", [
    pytest.param(_jf("Succeed"), _jf("Running"), "Succeed", id="running-to-succeed"),
    pytest.param(_jf("Failed"), _jf("Pending"), "Failed", id="pending-to-failed"),
    pytest.param(_jf("Failed"), _jf(None), "Failed", id="unset-to-failed"),
    pytest.param(_jf("Succeed"), None, "Succeed", id="new-object"),
    pytest.param(_jf("Succeed"), _jf("Succeed"), None, id="later-write-of-a-succeeded-flow"),
    pytest.param(_jf("Failed"), _jf("Failed"), None, id="later-write-of-a-failed-flow"),
    pytest.param(_jf("Running"), _jf("Pending"), None, id="not-final"),
    pytest.param(_jf("Terminating"), _jf("Succeed"), None, id="terminating"),
])
def test_final_phase_reached(obj, old, reached):
    assert app_mod.final_phase_reached(obj, old) == reached


def test_jobflow_phase_counters_as_volcano():
    async def test(client, srv, be):
        for obj, old in ((_jf("Running"), _jf("Pending")), (_jf("Succeed"), _jf("Running")),
                         (_jf("Succeed"), _jf("Succeed")), (_jf("Failed", "ml"), _jf("Running", "ml"))):
            srv.observe_jobflow(obj, old)
        text = await (await client.get("/metrics", headers=AUTH)).text()
        assert "\n".join(["# HELP volcano_jobflow_succeed_phase_count Number of jobflow completed phase",
                          "# TYPE volcano_jobflow_succeed_phase_count counter",
                          'volcano_jobflow_succeed_phase_count{jobflow_namespace="default"} 1',
                          "# HELP volcano_jobflow_failed_phase_count Number of jobflow failed phase",
                          "# TYPE volcano_jobflow_failed_phase_count counter",
                          'volcano_jobflow_failed_phase_count{jobflow_namespace="ml"} 1']) in text, text
    serve(test)


TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.mark.parametrize("method, path, accept, code, want", [
    pytest.param("GET", "/apis/apps/v1/namespaces/default/deployments", "application/json", 200,
                 {"kind": "DeploymentList", "apiVersion": "apps/v1", "items": []}, id="empty-list"),
    pytest.param("GET", "/api/v1/persistentvolumes", TABLE_ACCEPT, 200, {"kind": "Table", "rows": []},
                 id="empty-table"),
    pytest.param("GET", "/apis/batch/v1/namespaces/default/jobs/j", "application/json", 404,
                 {"reason": "NotFound", "message": 'jobs.batch "j" not found'}, id="no-object"),
    pytest.param("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", 405,
                 {"reason": "MethodNotAllowed"}, id="create-refused"),
    pytest.param("DELETE", "/api/v1/namespaces/default/endpoints/e", "application/json", 404,
                 {"reason": "NotFound", "message": 'endpoints "e" not found'}, id="delete-not-found"),
    pytest.param("PUT", "/apis/apps/v1/namespaces/default/deployments/d", "application/json", 404,
                 {"reason": "NotFound"}, id="update-not-found"),
    pytest.param("DELETE", "/apis/apps/v1/namespaces/default/deployments", "application/json", 200,
                 {"kind": "DeploymentList", "items": []}, id="delete-collection-deletes-nothing"),
    pytest.param("PATCH", "/apis/apps/v1/namespaces/default/deployments/d", "application/apply-patch+yaml", 405,
                 {"reason": "MethodNotAllowed"}, id="server-side-apply-refused"),
    pytest.param("GET", "/apis/apps/v1/deployments?watch=true", "application/json", 405,
                 {"reason": "MethodNotAllowed"}, id="watch-refused"),
    pytest.param("GET", "/apis/apps/v1/deployments?watch=maybe", "application/json", 400,
                 {"reason": "BadRequest"}, id="watch-not-a-bool"),
])
def test_kinds_vclite_does_not_run_are_read_only_and_empty(method, path, accept, code, want):
    async def test(client, srv, be):
        before = be.resource_version()
        body = json.dumps({"metadata": {"name": "d"}}) if method in ("POST", "PUT", "PATCH") else None
        ctype = accept if method == "PATCH" else "application/json"
        resp = await client.request(method, path, data=body, headers={**AUTH, "Accept": "application/json" if
                                    method == "PATCH" else accept, "Content-Type": ctype})
        assert resp.status == code
        body = await resp.json()
        assert want.items() <= body.items(), body
        if code == 405:
            assert "vclite does not run" in body["message"]
        assert be.resource_version() == before
    serve(test)


def test_an_eviction_a_budget_refuses_is_429_with_retry_after_and_the_budget_named():
    """kube-apiserver's answer while a budget's status is older than its spec: retry after 10 s."""
    async def test(client, srv, be):
        be.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                                          "labels": {"app": "a"}},
                          "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}})
        pod = be.client.get(kinds.POD, "default", "p")
        be.client.update_status({**pod, "status": {"phase": "Running"}})
        be.client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": "b", "namespace": "default"},
                          "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "a"}}}})
        resp = await client.post("/api/v1/namespaces/default/pods/p/eviction", headers=AUTH, json={
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}})
        st = await resp.json()
        assert (resp.status, resp.headers.get("Retry-After"), st["reason"]) == (429, "10", "TooManyRequests")
        assert st["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
        assert st["details"] == {"causes": [{"reason": "DisruptionBudget", "message": (
            "The disruption budget b is still being processed by the server.")}], "retryAfterSeconds": 10}
        assert not be.client.get(kinds.POD, "default", "p")["metadata"].get("deletionTimestamp")
    serve(test)


def test_a_list_at_an_exact_version_and_its_refusals():
    async def test(client, srv, be):
        created = await (await client.post(CMS, json=CM, headers=AUTH)).json()
        at = created["metadata"]["resourceVersion"]
        await client.patch(CMS + "/c1", data='{"data": {"k": "2"}}',
                           headers={**AUTH, "Content-Type": "application/merge-patch+json"})
        await client.post(CMS, json={**CM, "metadata": {"name": "c2"}}, headers=AUTH)
        got = await (await client.get(CMS + f"?resourceVersion={at}&resourceVersionMatch=Exact", headers=AUTH)).json()
        assert got["metadata"]["resourceVersion"] == at
        assert [(o["metadata"]["name"], o["data"]) for o in got["items"]] == [("c1", {"k": "v"})]
        newest = await (await client.get(CMS + f"?resourceVersion={at}&resourceVersionMatch=NotOlderThan",
                                          headers=AUTH)).json()
        assert [o["metadata"]["name"] for o in newest["items"]] == ["c1", "c2"]
        before = be.resource_version()
        refused = await client.get(CMS + "?resourceVersionMatch=Exact", headers=AUTH)
        body = await refused.json()
        assert (refused.status, body["reason"], body["details"]["causes"][0]["field"]) == (
            422, "Invalid", "resourceVersionMatch")
        assert body["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                                   "resourceVersionMatch is forbidden unless resourceVersion is provided")
        ahead = await client.get(CMS + f"?resourceVersion={int(before) + 5}&resourceVersionMatch=Exact", headers=AUTH)
        body = await ahead.json()
        assert (ahead.status, body["reason"], body["details"]["causes"][0]["reason"]) == (
            504, "Timeout", "ResourceVersionTooLarge")
        be.client.store._history.clear()  # as if the history had rolled over
        gone = await client.get(CMS + f"?resourceVersion={at}&resourceVersionMatch=Exact", headers=AUTH)
        body = await gone.json()
        assert (gone.status, body["reason"], body["message"]) == (
            410, "Expired", "The resourceVersion for the provided list is too old.")
        assert be.resource_version() == before
    serve(test)


EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def test_events_k8s_io_serves_the_core_events_converted():
    async def test(client, srv, be):
        be.client.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "p.1", "namespace": "default"},
                          "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                          "reason": "Started", "message": "hello", "type": "Normal", "count": 1,
                          "source": {"component": "kubelet"}})
        watch = await client.get(EVENTS_V1 + "?watch=true&timeoutSeconds=2", headers=AUTH)
        listed = await (await client.get(EVENTS_V1 + "?fieldSelector=regarding.kind=Pod", headers=AUTH)).json()
        assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
        item = listed["items"][0]
        assert (item["apiVersion"], item["note"], item["regarding"]["name"], item["deprecatedSource"],
                item["eventTime"]) == ("events.k8s.io/v1", "hello", "p", {"component": "kubelet"},
                                       item["metadata"]["creationTimestamp"][:-1] + ".000000Z")
        got = await (await client.get(EVENTS_V1 + "/p.1", headers=AUTH)).json()
        assert got == item
        refused = await client.get(EVENTS_V1 + "?fieldSelector=involvedObject.kind=Pod", headers=AUTH)
        assert refused.status == 400   # (the core name: not a field of events.k8s.io's Event)
        created = await client.post(EVENTS_V1, headers=AUTH, json={
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e.2"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal", "note": "done",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}})
        assert created.status == 201 and (await created.json())["note"] == "done"
        core = be.client.get(kinds.EVENT, "default", "e.2")
        assert (core["message"], core["reportingComponent"], core["involvedObject"]["name"]) == (
            "done", "example.com/ctl", "p")
        got = await read_lines(watch, 2)
        assert [(e["type"], e["object"]["apiVersion"], e["object"].get("note")) for e in got] == [
            ("ADDED", "events.k8s.io/v1", "hello"), ("ADDED", "events.k8s.io/v1", "done")]
        before = be.resource_version()
        bad = await client.post(EVENTS_V1, headers=AUTH, json={"apiVersion": "events.k8s.io/v1", "kind": "Event",
                                                               "metadata": {"name": "e.3"}, "reason": "X"})
        body = await bad.json()
        assert bad.status == 422 and body["message"].startswith('Event.events.k8s.io "e.3" is invalid: [eventTime: '
                                                                 "Required value")
        assert be.resource_version() == before
        table = await (await client.get(EVENTS_V1, headers={**AUTH, "Accept": "application/json;as=Table;v=v1;"
                                                                              "g=meta.k8s.io"})).json()
        assert [r["cells"][2:4] for r in table["rows"]] == [["Synced", "pod/p"], ["Started", "pod/p"]]
    serve(test)


def test_a_watch_list_request_and_the_watch_options_kube_apiserver_refuses():
    async def test(client, srv, be):
        created = await (await client.post(CMS, json=CM, headers=AUTH)).json()
        rv = created["metadata"]["resourceVersion"]
        resp = await client.get(CMS + f"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                      f"&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=1", headers=AUTH)
        got = await read_lines(resp, 2)
        assert [e["type"] for e in got] == ["ADDED", "BOOKMARK"]
        assert got[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        refused = await client.get(CMS + "?watch=1&sendInitialEvents=true", headers=AUTH)
        body = await refused.json()
        assert refused.status == 422 and body["details"]["causes"][0]["message"] == (
            "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    serve(test)


def test_a_watch_that_allows_bookmarks_gets_one_just_before_its_timeout():
    """(kube-apiserver: so that the client resumes from a recent version.)"""
    async def test(client, srv, be):
        await client.post(CMS, json=CM, headers=AUTH)
        resp = await client.get(CMS + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=3", headers=AUTH)
        got = await read_lines(resp, 2, timeout=10)
        assert [e["type"] for e in got] == ["ADDED", "BOOKMARK"]
        assert got[1]["object"]["metadata"]["resourceVersion"] == be.resource_version()
    serve(test, bookmark_interval=3600)


def test_the_deprecated_watch_paths_are_watches():
    async def test(client, srv, be):
        resp = await client.get("/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=2", headers=AUTH)
        one = await client.get("/api/v1/watch/namespaces/default/configmaps/c1?timeoutSeconds=2", headers=AUTH)
        await client.post(CMS, json=CM, headers=AUTH)
        await client.post(CMS, json={**CM, "metadata": {"name": "c2"}}, headers=AUTH)
        assert [e["object"]["metadata"]["name"] for e in await read_lines(resp, 2)] == ["c1", "c2"]
        assert [e["object"]["metadata"]["name"] for e in await read_lines(one, 1)] == ["c1"]
        refused = await client.post("/api/v1/watch/namespaces/default/configmaps", json=CM, headers=AUTH)
        assert refused.status == 404
    serve(test)


def test_endpoints_and_endpoint_slices_are_computed_from_services_and_pods():
    async def test(client, srv, be):
        be.client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                          "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        pod = be.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                                                 "labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "i", "command": ["true"]}]}})
        be.client.update_status({**pod, "status": {"phase": "Running", "podIP": "127.0.0.1",
                                                   "conditions": [{"type": "Ready", "status": "True"}]}})
        ep = await (await client.get("/api/v1/namespaces/default/endpoints/web", headers=AUTH)).json()
        assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1", "targetRef": {
            "kind": "Pod", "namespace": "default", "name": "p", "uid": pod["metadata"]["uid"]}}],
            "ports": [{"port": 80, "protocol": "TCP"}]}]
        slices = await (await client.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
                                         "?labelSelector=kubernetes.io/service-name=web", headers=AUTH)).json()
        assert [s["metadata"]["name"] for s in slices["items"]] == ["web-0"]
        none = await client.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
                                "?labelSelector=kubernetes.io/service-name=other", headers=AUTH)
        assert (await none.json())["items"] == []
        missing = await client.get("/api/v1/namespaces/default/endpoints/other", headers=AUTH)
        assert missing.status == 404
        # a write of one that exists (kubectl edit / delete endpoints web) is refused saying why, not "not found";
        # one that does not exist is not found (kubectl delete --ignore-not-found goes on)
        patch = {"Content-Type": "application/merge-patch+json", **AUTH}
        for method, path, body, headers in [
                ("PATCH", "/api/v1/namespaces/default/endpoints/web", {"metadata": {"labels": {"a": "b"}}}, patch),
                ("PUT", "/api/v1/namespaces/default/endpoints/web", ep, AUTH),
                ("DELETE", "/api/v1/namespaces/default/endpoints/web", None, AUTH),
                ("DELETE", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-0", None, AUTH)]:
            resp = await client.request(method, path, json=body, headers=headers)
            status = await resp.json()
            assert (resp.status, status["reason"]) == (405, "MethodNotAllowed"), (method, path, status)
            assert f"{method} is not allowed (change the Service, its selector or its pods" in status["message"]
        gone = await client.delete("/api/v1/namespaces/default/endpoints/other", headers=AUTH)
        assert gone.status == 404
        assert (await (await client.get("/api/v1/namespaces/default/endpoints/web", headers=AUTH)).json()) == ep
    serve(test)
