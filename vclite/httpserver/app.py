"""The aiohttp application: authentication, request logs and metrics, and dispatch by route.

One catch-all route; `routes.match` decides what a path names. Order per request:
1. the bearer token is checked before anything else is looked at (a request without it gets
   401 and the server reads no body, resolves no path, touches no object), health and version
   paths included (a probe sends the token too);
2. the route's handler runs; an ApiError becomes its Status (any other exception a 500 Status,
   logged with its traceback). Bodies are capped at bodies.MAX_BODY (413);
3. every request, 401s and 404s included, is logged and counted in the metrics.
Handlers call the synchronous in-process Client directly: it is in memory and fast, and the
runtime shares this event loop. Watches, followed logs and attaches are streamed (watch.py, logs.py,
execstream.py) and end when the server stops.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import time
from typing import Any, Callable

from aiohttp import web

from vclite.api import flow, kinds, meta
from vclite.executor import logtimes
from vclite.httpserver import backend as backend_mod
from vclite.httpserver import absent, bodies, discovery, endpoints, endpointwatch, execstream, health, logs, media
from vclite.httpserver import metrics
from vclite.httpserver import openapi
from vclite.httpserver import listopts, patches, portforward, resources, reviews, routes, security
from vclite.httpserver import status as status_mod
from vclite.httpserver import tables, tokens, usagemetrics, watch
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.store import selectors

Obj = dict[str, Any]
log = logging.getLogger("vclite.httpserver")
access_log = logging.getLogger("vclite.httpserver.access")
JSON_CT = "application/json"
DEFAULT_WATCH_TIMEOUT = 1800
BOOKMARK_INTERVAL = 30.0
BOOKMARK_BEFORE_END = 2.0   # seconds before a watch's timeoutSeconds end when its last bookmark is sent
FRAME_CACHE = 4096
LONG_RUNNING = ("WATCH", "CONNECT")
STATIC_METHODS = ("GET", "HEAD")


def _dumps(obj: Any, pretty: bool = False) -> bytes:
    if pretty:
        return json.dumps(obj, indent=2).encode()
    return json.dumps(obj, separators=(",", ":")).encode()


def json_response(code: int, obj: Any, content_type: str = JSON_CT, pretty: bool = False,
                  warnings: list[str] | None = None) -> web.Response:
    """`warnings`: sent as `Warning: 299 - "<text>"` headers, as kube-apiserver sends them."""
    headers = [("Content-Type", content_type)] + [("Warning", "299 - " + json.dumps(text)) for text in warnings or ()]
    return web.Response(status=code, body=_dumps(obj, pretty), headers=headers)


def status_response(obj: Obj) -> web.Response:
    response = json_response(int(obj.get("code") or 500), obj)
    retry_after = (obj.get("details") or {}).get("retryAfterSeconds")
    if retry_after:   # (as kube-apiserver's response writer)
        response.headers["Retry-After"] = str(retry_after)
    return response


def final_phase_reached(obj: Obj, old: Obj | None) -> str | None:
    """`Succeed` or `Failed` when a JobFlow's new version `obj` is the one that reached it (`old`: the
    version before, None for a new object), else None. Volcano counts a phase where its controller sets
    it, once per JobFlow: a later write of a finished JobFlow, or a restart, counts nothing more."""
    phase = meta.phase(obj)
    if phase not in (flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED):
        return None
    return str(phase) if old is None or meta.phase(old) != phase else None


class Server:
    """The HTTP API over one Backend. `app()` builds the aiohttp application."""

    def __init__(self, backend: backend_mod.Backend, token: str, *, bookmark_interval: float = BOOKMARK_INTERVAL,
                 max_body: int = bodies.MAX_BODY):
        self.backend, self.token = backend, token
        self.token_key = tokens.signing_key(token)   # (ServiceAccount tokens: tokens.py)
        self.bookmark_interval = bookmark_interval
        self.max_body = max_body
        self.stopping = asyncio.Event()
        self.ready = False
        self.feeds: set[watch.Feed] = set()
        self._docs: dict[Any, Obj] = {}
        self._frames: collections.OrderedDict[tuple[int, str], tuple[Obj, bytes]] = collections.OrderedDict()
        self.registry = metrics.Registry()
        r = self.registry
        self.requests = r.add(metrics.Counter("vclite_apiserver_request_total",
                                              "API requests by verb, resource and HTTP code."))
        self.latency = r.add(metrics.Histogram("vclite_apiserver_request_duration_seconds",
                                               "API request latency (watches and followed logs excluded)."))
        self.watch_events = r.add(metrics.Counter("vclite_apiserver_watch_events_total",
                                                  "Watch events sent to HTTP watchers."))
        r.add(metrics.Gauge("vclite_apiserver_watches", "Open HTTP watch streams.",
                            lambda: {(): float(len(self.feeds))}))
        r.add(metrics.Gauge("vclite_objects", "Stored objects by kind.", self._object_counts))
        r.add(metrics.Gauge("vclite_jobflows", "JobFlows by phase.", lambda: self._phases(kinds.JOBFLOW)))
        r.add(metrics.Gauge("vclite_jobs", "Volcano jobs (vcjobs) by phase.", lambda: self._phases(kinds.JOB)))
        r.add(metrics.Gauge("vclite_pods", "Pods by phase.", lambda: self._phases(kinds.POD)))
        self.sessions = r.add(metrics.Histogram("vclite_scheduler_session_duration_seconds",
                                                "Scheduling session latency (one scheduler sync)."))
        self.pods_scheduled = r.add(metrics.Counter("vclite_scheduler_pods_scheduled_total",
                                                    "Pods bound to a node by the scheduler."))
        self.syncs = r.add(metrics.Histogram("vclite_component_sync_duration_seconds",
                                             "Reconcile (sync) latency by component."))
        # Volcano's own JobFlow counters (pkg/controllers/jobflow/state/metrics.go): names, help and label as upstream
        self.jobflow_phases = {
            str(flow.FlowPhase.SUCCEED): r.add(metrics.Counter("volcano_jobflow_succeed_phase_count",
                                                               "Number of jobflow completed phase")),
            str(flow.FlowPhase.FAILED): r.add(metrics.Counter("volcano_jobflow_failed_phase_count",
                                                              "Number of jobflow failed phase"))}

    # ---- metrics sources --------------------------------------------------------------------------
    def _object_counts(self) -> dict:
        return {(("kind", k.kind),): float(sum(1 for _ in self.backend.objects(k))) for k in kinds.ALL}

    def _phases(self, kind: kinds.Kind) -> dict:
        counts: dict = {}
        for obj in self.backend.objects(kind):
            phase = meta.phase(obj) or "Pending"
            key = (("phase", str(phase)),)
            counts[key] = counts.get(key, 0.0) + 1
        return counts

    def observe_jobflow(self, obj: Obj, old: Obj | None) -> None:
        """Called with each stored JobFlow version and the one before it (server.py watches them):
        a JobFlow that has just reached Succeed or Failed counts once in Volcano's counter."""
        phase = final_phase_reached(obj, old)
        if phase is not None:
            self.jobflow_phases[phase].inc(jobflow_namespace=meta.namespace(obj))

    def observe_sync(self, component: str, seconds: float, scheduled: int = 0) -> None:
        """Called by the runtime after each component sync (server.py wires it)."""
        self.syncs.observe(seconds, component=component)
        if component == "scheduler":
            self.sessions.observe(seconds)
            if scheduled:
                self.pods_scheduled.inc(scheduled)

    # ---- application ------------------------------------------------------------------------------
    def app(self) -> web.Application:
        application = web.Application(client_max_size=self.max_body)
        application.router.add_route("*", "/{tail:.*}", self._handle)
        return application

    async def stop_streams(self) -> None:
        """End every watch, followed log and attach (graceful shutdown, before in-flight requests drain)."""
        self.stopping.set()
        self.ready = False
        for feed in list(self.feeds):
            feed.wakeup.set()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        """Every request: authenticate, dispatch, then log and count it. `info` collects what the
        request turned out to be (verb, resource) for the log line and the metrics."""
        start = time.perf_counter()
        info = {"verb": request.method, "resource": ""}
        try:
            header = request.headers.get("Authorization")
            if not security.token_matches(header, self.token):
                info["verb"] = "UNAUTHORIZED"
                response = status_response(status_mod.unauthorized())
            elif refusal := reviews.impersonation_refusal(list(request.headers.items())):
                who, why = refusal
                response = status_response(status_mod.status(403, "Forbidden", f'users "{who}" is forbidden: {why}',
                                                              {"name": who, "kind": "users"}))
            else:
                response = await self._dispatch(request, info)
        except web.HTTPException as exc:  # raised by aiohttp itself (e.g. a body over the limit)
            response = status_response(status_mod.status(exc.status, exc.reason.replace(" ", ""), exc.text or exc.reason))
        except Exception:  # noqa: BLE001 - a failing handler answers 500, the server goes on
            log.exception("request %s %s failed", request.method, request.path)
            response = status_response(status_mod.status(500, "InternalError", "an internal error occurred"))
        elapsed = time.perf_counter() - start
        verb, resource = info["verb"], info["resource"]
        self.requests.inc(verb=verb, resource=resource, code=str(response.status))
        if verb not in LONG_RUNNING:
            self.latency.observe(elapsed, verb=verb, resource=resource)
        access_log.info("%s %s %s %.1fms", request.method, request.path_qs, response.status, elapsed * 1000,
                        extra={"text_fields": False, "fields": {
                            "method": request.method, "path": request.path, "query": request.query_string,
                            "code": response.status, "verb": verb, "resource": resource,
                            "duration_ms": round(elapsed * 1000, 3), "remote": request.remote or "",
                            "user_agent": request.headers.get("User-Agent", "")}})
        return response

    async def _dispatch(self, request: web.Request, info: dict[str, str]) -> web.StreamResponse:
        watch_path = routes.unwatched(request.path)   # (a deprecated /watch/ path: a watch of what it names)
        route = routes.match(watch_path or request.path)
        if watch_path is not None and not (isinstance(route, routes.Resource) and request.method == "GET"
                                           and route.subresource is None):
            route = None
        if route is None:
            return status_response(status_mod.not_found_path())
        if isinstance(route, routes.Usage):
            return self._usage(request, route, info)
        if isinstance(route, routes.Absent):
            if endpointwatch.watched(route.kind.kind, request.method, request.query.get("watch")):
                return await self._computed_watch(request, route, info)
            return self._absent(request, route, info)
        if isinstance(route, routes.Static) and route.endpoint is routes.Endpoint.REVIEW:
            return await self._review(request, route, info)
        if isinstance(route, routes.Static):
            if request.method not in STATIC_METHODS:
                return status_response(status_mod.status(405, "MethodNotAllowed",
                                                         f"the server does not allow {request.method} on {request.path}"))
            return self._static(request, route, info)
        info["resource"] = f"{route.kind.resource}" + (f"/{route.subresource}" if route.subresource else "")
        try:
            return await self._resource(request, route, info, force_watch=watch_path is not None)
        except errors.ApiError as err:
            about_object = not isinstance(err, (errors.BadRequest, status_mod.TooLarge, status_mod.MethodNotAllowed,
                                                status_mod.UnsupportedMediaType))
            return status_response(status_mod.from_error(err, route.kind if about_object else None,
                                                         route.name if about_object else None))

    # ---- fixed endpoints --------------------------------------------------------------------------
    async def _review(self, request: web.Request, route: routes.Static, info: dict[str, str]) -> web.StreamResponse:
        info["verb"], info["resource"] = "CREATE", route.plural
        if request.method != "POST":
            return status_response(status_mod.status(405, "MethodNotAllowed",
                                                     f"the server does not allow {request.method} on {request.path}"))
        try:
            body = bodies.decode(await self._read_body(request), request.headers.get("Content-Type"))
            return json_response(201, reviews.answer(route.group, route.version, route.plural, body))
        except errors.ApiError as err:
            return status_response(status_mod.from_error(err))

    def _usage(self, request: web.Request, route: routes.Usage, info: dict[str, str]) -> web.Response:
        """The metrics API, read by `kubectl top` (usagemetrics.py): what the local executor measures."""
        info["verb"], info["resource"] = ("GET" if route.name else "LIST"), f"{route.plural}.metrics.k8s.io"
        if request.method != "GET":
            return status_response(status_mod.status(405, "MethodNotAllowed",
                                                     f"the server does not allow {request.method} on {request.path}"))
        pods_wanted = route.plural == "pods"
        kind = kinds.POD if pods_wanted else kinds.NODE
        try:
            chosen = self.backend.select(kind, route.namespace, request.query.get("labelSelector") or None,
                                         request.query.get("fieldSelector") or None)
        except errors.ApiError as err:
            return status_response(status_mod.from_error(err))
        pods = chosen if pods_wanted else self.backend.select(kinds.POD, None)
        measured = self.backend.pod_exec.container_usage() if self.backend.pod_exec is not None else {}
        now = clock_mod.format_time(self.backend.clock.now()) or ""
        items = usagemetrics.select(route, pods, [] if pods_wanted else chosen, measured, now)
        if route.name is None:
            return json_response(200, usagemetrics.metrics_list("PodMetrics" if pods_wanted else "NodeMetrics", items))
        if items:
            return json_response(200, items[0])
        resource, name = usagemetrics.not_found(route)
        return status_response(status_mod.status(404, "NotFound", f'{resource}.metrics.k8s.io "{name}" not found',
                                                 {"name": name, "group": routes.METRICS_GROUP, "kind": resource}))

    def _absent(self, request: web.Request, route: routes.Absent, info: dict[str, str]) -> web.Response:
        """A kind vclite does not run (absent.py): an empty list, no object, no write — but Endpoints,
        computed from the Services and Pods (endpoints.py)."""
        k = route.kind
        info["verb"], info["resource"] = ("GET" if route.name else "LIST"), k.resource
        try:
            watching = route.name is None and media.parse_bool(request.query.get("watch"), "watch")
        except errors.ApiError as err:
            return status_response(status_mod.from_error(err))
        applying = bodies.media_type(request.headers.get("Content-Type")) == "application/apply-patch+yaml"
        if route.name is not None and request.method in ("PUT", "PATCH", "DELETE") and not applying:
            if k.watchable and self._computed_one(k, route.namespace, route.name):   # (kubectl edit endpoints …)
                return status_response(status_mod.status(405, "MethodNotAllowed",
                                                         absent.computed_refused(k, request.method)))
            message, details = absent.not_found(k, route.name)   # (there is none to change or delete)
            return status_response(status_mod.status(404, "NotFound", message, details))
        if route.name is None and request.method == "DELETE" and not watching:
            return json_response(200, absent.empty_list(k, self.backend.resource_version()))   # none to delete
        if request.method != "GET" or watching:
            return status_response(status_mod.status(405, "MethodNotAllowed",
                                                     absent.refused(k, "watch" if watching else request.method)))
        choice = media.negotiate(request.headers.get("Accept"))
        rv = self.backend.resource_version()
        try:
            computed = self._computed(k, route.namespace, request.query.get("labelSelector") or None)
        except errors.ApiError as err:   # (a malformed selector)
            return status_response(status_mod.from_error(err))
        if route.name is not None:
            found = [o for o in computed or () if o["metadata"]["name"] == route.name]
            if not found:
                message, details = absent.not_found(k, route.name)
                return status_response(status_mod.status(404, "NotFound", message, details))
            if choice.form == "table":
                return json_response(200, self._computed_table(k, found, rv, choice), tables.CONTENT_TYPE)
            return json_response(200, found[0])
        if computed is not None:
            if choice.form == "table":
                return json_response(200, self._computed_table(k, computed, rv, choice), tables.CONTENT_TYPE)
            return json_response(200, {**absent.empty_list(k, rv), "items": computed})
        if choice.form == "table":
            return json_response(200, absent.empty_table(choice.version, rv))
        return json_response(200, absent.empty_list(k, rv))

    def _computed_table(self, k: absent.AbsentKind, items: list[Obj], rv: str, choice: media.Choice) -> Obj:
        return endpoints.table(k.kind, items, self.backend.clock.now(), rv, tables.AGE.cell, choice.version)

    def _computed(self, k: absent.AbsentKind, namespace: str | None, label_selector: str | None
                  ) -> list[Obj] | None:
        """The objects of a kind vclite computes rather than stores (Endpoints: endpoints.py), else None."""
        if k.kind not in ("Endpoints", "EndpointSlice"):
            return None
        services = sorted(self.backend.select(kinds.SERVICE, namespace),
                          key=lambda o: (meta.namespace(o), meta.name(o)))
        pods = self.backend.select(kinds.POD, namespace)
        apiserver = self.backend.apiserver
        found = endpoints.all_of(services, pods, apiserver) if k.kind == "Endpoints" else \
            endpoints.all_slices(services, pods, apiserver)
        wanted = selectors.label_predicate(label_selector)
        return [o for o in found if wanted(o)]

    def _computed_one(self, k: absent.AbsentKind, namespace: str | None, name: str) -> bool:
        """Whether the computed object `namespace/name` of kind `k` exists (Endpoints, EndpointSlices)."""
        return any(o["metadata"]["name"] == name for o in self._computed(k, namespace, None) or ())

    def _doc(self, key: Any, build: Callable[[], Obj]) -> Obj:
        if key not in self._docs:
            self._docs[key] = build()
        return self._docs[key]

    def _static(self, request: web.Request, route: routes.Static, info: dict[str, str]) -> web.StreamResponse:
        ep, E = route.endpoint, routes.Endpoint
        info["verb"] = "GET"
        choice = media.negotiate(request.headers.get("Accept"))
        if ep in (E.API, E.APIS):
            core = ep is E.API
            if choice.form == "discovery":
                doc = self._doc((ep, choice.version), lambda: discovery.aggregated(core, choice.version))
                return json_response(200, doc, discovery.AGGREGATED_CONTENT_TYPE.format(v=choice.version))
            return json_response(200, self._doc(ep, discovery.api_versions if core else discovery.api_group_list))
        if ep is E.GROUP:
            return json_response(200, discovery.api_group(route.group))
        if ep is E.GROUP_VERSION:
            return json_response(200, self._doc((ep, route.group, route.version),
                                                lambda: discovery.api_resource_list(route.group, route.version)))
        if ep is E.VERSION:
            return json_response(200, discovery.version_info())
        if ep is E.OPENAPI_V2:
            if "protobuf" in (request.headers.get("Accept") or "") and "json" not in request.headers["Accept"]:
                return web.Response(status=200, body=openapi.v2_document_protobuf(),
                                    headers={"Content-Type": openapi.V2_PROTOBUF_TYPE})
            return json_response(200, openapi.v2_document())
        if ep is E.OPENAPI_V3:
            return json_response(200, self._doc(ep, openapi.root))
        if ep is E.OPENAPI_V3_GV:
            return json_response(200, self._doc((ep, route.group, route.version),
                                                lambda: openapi.group_version_document(route.group, route.version)))
        if ep is E.METRICS:
            return web.Response(status=200, body=self.registry.render().encode(),
                                headers={"Content-Type": metrics.CONTENT_TYPE})
        checks = [("ping", True), ("log", True)]
        if ep is E.READYZ:
            checks += [("started", self.ready), ("shutdown", not self.stopping.is_set())]
        parts = [p for p in request.path.split("/") if p]
        code, text = health.answer(ep.value, "/".join(parts[1:]) or None, checks,
                                   "verbose" in request.query)
        return web.Response(status=code, text=text, headers={"Content-Type": "text/plain; charset=utf-8"})

    # ---- resources --------------------------------------------------------------------------------
    async def _read_body(self, request: web.Request) -> bytes:
        length = request.content_length
        if length is not None and length > self.max_body:
            raise status_mod.TooLarge(f"the request body is larger than the limit of {self.max_body} bytes")
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise status_mod.TooLarge(f"the request body is larger than the limit of {self.max_body} bytes") from None

    async def _resource(self, request: web.Request, route: routes.Resource, info: dict[str, str],
                        force_watch: bool = False) -> web.StreamResponse:
        be, method, query = self.backend, request.method, dict(request.query)
        if force_watch:
            query["watch"] = "true"
        choice = media.negotiate(request.headers.get("Accept"))
        pretty = media.parse_bool(query.get("pretty"), "pretty")
        ctype = bodies.media_type(request.headers.get("Content-Type"))
        allowed = self._allowed(route)
        if method not in allowed:
            raise status_mod.MethodNotAllowed(f"the server does not allow {method} on {request.path} "
                                              f"(allowed: {', '.join(allowed)})")
        if route.subresource == "log":
            info["verb"] = "CONNECT" if media.parse_bool(query.get("follow"), "follow") else "GET"
            return await self._logs(request, route, query)
        if route.subresource == "exec":
            info["verb"] = "CONNECT"
            return await self._exec(request, route, query)
        if route.subresource == "attach":
            info["verb"] = "CONNECT"
            return await self._attach(request, route, query)
        if route.subresource == "portforward":
            info["verb"] = "CONNECT"
            return await self._portforward(request, route)
        if method == "GET" and media.parse_bool(query.get("watch"), "watch"):
            info["verb"] = "WATCH"
            return await self._watch(request, route, query, choice)
        verb = {"GET": "LIST" if route.is_collection else "GET", "POST": "CREATE", "PUT": "UPDATE",
                "PATCH": "PATCH", "DELETE": "DELETECOLLECTION" if route.is_collection else "DELETE"}[method]
        info["verb"] = verb
        if method == "GET":
            fn = resources.list_objects if route.is_collection else resources.get_object
            code, obj = fn(be, route, query, choice)
            ct = tables.CONTENT_TYPE if obj.get("kind") == "Table" else JSON_CT
            return json_response(code, obj, ct, pretty)
        raw = await self._read_body(request)
        warnings: list[str] = []
        if not query.get("fieldManager") and ctype != resources.APPLY:   # (an apply must name its manager)
            query["fieldManager"] = patches.default_manager(request.headers.get("User-Agent"))
        if method == "DELETE":
            body = bodies.decode_object(raw, ctype or JSON_CT) if raw.strip() else None
            fn = resources.delete_collection if route.is_collection else resources.delete
            code, obj = fn(be, route, query, body)
        elif method == "PATCH":
            resources.check_patch_type(route.kind, ctype)   # (before the body is read as that type)
            body = resources.decode_body(raw, ctype, query)
            code, obj = resources.patch(be, route, query, ctype, body)
            warnings = resources.field_warnings(route, query, body)   # (none for a JSON patch's operations)
        else:
            body = resources.decode_body(raw, ctype or JSON_CT, query)
            if not isinstance(body, dict):
                raise errors.BadRequest("the request body must be an object")
            if route.subresource == "binding":
                code, obj = resources.bind(be, route, query, body)
            elif route.subresource == "eviction":
                code, obj = resources.evict(be, route, query, body)
            elif route.subresource == "token":
                code, obj = 201, tokens.request(be.client, route.namespace or "default", route.name or "", body,
                                                self.token_key, be.clock.now())
            else:
                code, obj = (resources.create if method == "POST" else resources.update)(be, route, query, body)
                warnings = resources.field_warnings(route, query, body)
        if code == 201:
            warnings = warnings + resources.creation_warnings(route, obj)
        return json_response(code, obj, JSON_CT, pretty, warnings)

    @staticmethod
    def _allowed(route: routes.Resource) -> tuple[str, ...]:
        if route.subresource == "log":
            return ("GET",)
        if route.subresource == "status":
            return ("GET", "PUT", "PATCH")
        if route.subresource in ("binding", "eviction", "token"):
            return ("POST",)
        if route.subresource in ("exec", "attach", "portforward"):
            return ("GET", "POST")
        if route.is_collection:
            return ("GET", "POST", "DELETE")
        return ("GET", "PUT", "PATCH", "DELETE")

    # ---- watch ------------------------------------------------------------------------------------
    async def _watch(self, request: web.Request, route: routes.Resource, query: dict[str, str],
                     choice: media.Choice) -> web.StreamResponse:
        field_selector, rv, timeout, bookmarks, initial = _watch_options(route.name, query)
        feed = watch.Feed(self.backend.client, route.kind, route.namespace, query.get("labelSelector") or None,
                          field_selector or None)
        return await self._stream(request, feed, query, choice, timeout, rv, initial, bookmarks)

    async def _computed_watch(self, request: web.Request, route: routes.Absent, info: dict[str, str]
                              ) -> web.StreamResponse:
        """A watch of Endpoints or EndpointSlices, computed from the Services and Pods (endpointwatch.py)."""
        info["verb"], info["resource"] = "WATCH", route.kind.resource
        query = dict(request.query)
        try:
            field_selector, rv, timeout, bookmarks, initial = _watch_options(route.name, query)
            feed = endpointwatch.EndpointsFeed(self.backend.client, self.backend.select, route.kind, route.namespace,
                                               query.get("labelSelector") or None, field_selector or None,
                                               self.backend.apiserver)
            return await self._stream(request, feed, query, media.negotiate(request.headers.get("Accept")), timeout,
                                      rv, initial, bookmarks)
        except errors.ApiError as err:
            return status_response(status_mod.from_error(err))

    async def _stream(self, request: web.Request, feed: Any, query: dict[str, str], choice: media.Choice,
                      timeout: int, rv: str | None, initial: bool | None, bookmarks: bool) -> web.StreamResponse:
        """Open `feed` (a watch.Feed, or an endpointwatch.EndpointsFeed) and stream its events until the
        timeout, the client's leaving or the server's stop; a version too old ends it with a 410 ERROR."""
        include = query.get("includeObject") or "Metadata"
        as_table = choice.form == "table"
        response = web.StreamResponse(status=200, headers={"Content-Type": tables.CONTENT_TYPE if as_table else JSON_CT})
        response.enable_chunked_encoding()
        try:
            feed.open(rv, initial, bookmarks, self.backend.resource_version())
        except errors.Gone as err:
            await response.prepare(request)
            await response.write(_dumps({"type": "ERROR", "object": status_mod.from_error(err)}) + b"\n")
            await response.write_eof()
            return response
        self.feeds.add(feed)
        try:
            await response.prepare(request)
            await self._pump(request, response, feed, timeout, bookmarks, as_table, include)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            feed.close()
            self.feeds.discard(feed)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write_eof()
        return response

    def _encode_event(self, etype: str, obj: Obj) -> bytes:
        """One watch line, encoded once per event for every watcher that gets it (the objects are
        the store's shared, never-modified ones; the cache holds them, so ids are not reused)."""
        key = (id(obj), etype)
        hit = self._frames.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        data = _dumps({"type": etype, "object": obj}) + b"\n"
        self._frames[key] = (obj, data)
        if len(self._frames) > FRAME_CACHE:
            self._frames.popitem(last=False)
        return data

    async def _pump(self, request: web.Request, response: web.StreamResponse, feed: watch.Feed, timeout: int,
                    bookmarks: bool, as_table: bool, include: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last_call = deadline - BOOKMARK_BEFORE_END   # (a bookmark just before the end, as kube-apiserver's)

        def after(t: float) -> float:
            return min(t + self.bookmark_interval, last_call) if t < last_call else t + self.bookmark_interval
        next_bookmark = after(loop.time())
        while True:
            batch = feed.drain()
            if batch:
                now = self.backend.clock.now()
                data = b"".join(self._encode_event(t, o) if not as_table else
                                _dumps(feed.frame(t, o, as_table, now, include)) + b"\n" for t, o in batch)
                await response.write(data)
                self.watch_events.inc(len(batch))
                continue
            t = loop.time()
            if feed.overflowed or self.stopping.is_set() or t >= deadline:
                return
            if request.transport is None or request.transport.is_closing():
                return
            if bookmarks and t >= next_bookmark:
                await response.write(_dumps({"type": "BOOKMARK",
                                             "object": feed.bookmark(self.backend.resource_version())}) + b"\n")
                next_bookmark = after(t)
                continue
            wait = min(deadline - t, 5.0, (next_bookmark - t) if bookmarks else 5.0)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(feed.wakeup.wait(), timeout=max(wait, 0.0))

    # ---- exec -------------------------------------------------------------------------------------
    def _pod_streams(self, verb: str) -> Any:
        """The executor's exec / attach side, or BadRequest: a server without a local executor has none."""
        if self.backend.pod_exec is None:
            raise errors.BadRequest(f"{verb} is not available: this server runs no local executor")
        return self.backend.pod_exec

    async def _exec(self, request: web.Request, route: routes.Resource, query: dict[str, str]) -> web.StreamResponse:
        """kubectl exec / cp (execstream.py). Checked before the upgrade: the pod, the container, the
        options, then whether the container runs (the kubelet's plain-text refusal)."""
        ns, name = route.namespace or "default", route.name or ""
        pod = self.backend.client.get(kinds.POD, ns, name)
        opts = execstream.check(pod, query, request.query.getall("command", []))
        pod_exec = self._pod_streams("exec")
        refusal = _before_upgrade(request, pod_exec.exec_problem(ns, name, opts.container), status=400)
        if refusal is not None:
            return refusal

        def start(o: execstream.Options) -> Any:
            return pod_exec.exec(ns, name, o.container, o.command, stdin=o.stdin, stdout=o.stdout, stderr=o.stderr,
                                 tty=o.tty)
        return await execstream.serve(request, opts, start)

    # ---- attach -----------------------------------------------------------------------------------
    async def _attach(self, request: web.Request, route: routes.Resource, query: dict[str, str]
                      ) -> web.StreamResponse:
        """kubectl attach (execstream.py, the executor's podattach.py). Checked before the upgrade: the pod,
        the container, the options, then whether the container runs (the kubelet's plain-text refusal,
        a 500 as its streaming server answers it)."""
        ns, name = route.namespace or "default", route.name or ""
        pod = self.backend.client.get(kinds.POD, ns, name)
        opts = execstream.check_attach(pod, query)
        pod_exec = self._pod_streams("attach")
        refusal = _before_upgrade(request, pod_exec.attach_problem(ns, name, opts.container), status=500)
        if refusal is not None:
            return refusal

        def attach() -> Any:
            return pod_exec.attach(ns, name, opts.container, stdin=opts.stdin, output=opts.output)
        return await execstream.serve_attach(request, attach, self.stopping)

    # ---- port-forward -----------------------------------------------------------------------------
    async def _portforward(self, request: web.Request, route: routes.Resource) -> web.StreamResponse:
        """kubectl port-forward (portforward.py). Checked before the upgrade: the pod, its node, that the
        local executor runs it."""
        ns, name = route.namespace or "default", route.name or ""
        pod = self.backend.client.get(kinds.POD, ns, name)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.BadRequest(f"pod {name} does not have a host assigned")
        pod_exec = self.backend.pod_exec
        if pod_exec is None:
            raise errors.BadRequest("port-forward is not available: this server runs no local executor")
        if not pod_exec.runs(ns, name):
            return web.Response(status=404, text="pod does not exist",
                                headers={"Content-Type": "text/plain; charset=utf-8"})
        if request.method != "GET" or request.headers.get("Upgrade", "").lower() != "websocket":
            raise errors.BadRequest(portforward.SPDY_MESSAGE)
        return await portforward.serve(request, request.query.getall("ports", []), name, meta.uid(pod))

    # ---- logs -------------------------------------------------------------------------------------
    async def _logs(self, request: web.Request, route: routes.Resource, query: dict[str, str]) -> web.StreamResponse:
        ns, name = route.namespace or "", route.name or ""
        pod = self.backend.client.get(kinds.POD, ns, name)
        container = logs.resolve(pod, query.get("container"))
        previous = media.parse_bool(query.get("previous"), "previous")
        follow = media.parse_bool(query.get("follow"), "follow") and not previous   # (a finished run's log)
        tail = media.parse_int(query.get("tailLines"), "tailLines")
        limit = media.parse_int(query.get("limitBytes"), "limitBytes")
        timestamps = media.parse_bool(query.get("timestamps"), "timestamps")
        def now() -> float:
            return self.backend.clock.now().timestamp()
        since = logs.since(media.parse_int(query.get("sinceSeconds"), "sinceSeconds"), query.get("sinceTime"), now())
        if self.backend.log_path is None:
            raise errors.BadRequest("pod logs are not available: this server runs no local executor")
        if not (pod.get("spec") or {}).get("nodeName"):
            # no node runs it: nothing to read, as kube-apiserver answers (an empty log location)
            return web.Response(status=200, body=b"", headers={"Content-Type": "text/plain"})
        if previous and not logs.has_previous(pod, container):
            raise errors.BadRequest(logs.previous_missing(pod, container))
        # a container backing off after a crash: its last run is the previous one (and still the
        # current file), as the kubelet serves lastState.terminated for both
        path = self.backend.log_path(ns, name, container, previous and not logs.backing_off(pod, container))
        try:
            fh = open(path, "rb")   # read through one handle: a restart renames the file away
        except FileNotFoundError:
            raise errors.BadRequest(logs.previous_missing(pod, container) if previous
                                    else logs.waiting_message(pod, container)) from None
        with fh:
            start = logs.tail_offset(path, tail) if tail is not None else 0
            fh.seek(start)
            timed = None
            if timestamps or since is not None:
                ended = logs.finished_at(pod, container, previous or logs.backing_off(pod, container))
                timed = logtimes.TimedLines(logtimes.read_samples(path), start, os.fstat(fh.fileno()).st_size,
                                            now() if ended is None else ended, now, timestamps, since)
            response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            sent = 0
            uid = meta.uid(pod)
            try:
                while limit is None or sent < limit:
                    data = fh.read(logs.CHUNK if limit is None or timed is not None else min(logs.CHUNK, limit - sent))
                    if timed is not None and data:
                        data = timed.feed(data)
                        if not data:
                            continue
                    if data:
                        data = data if limit is None else data[:limit - sent]
                        await response.write(data)
                        sent += len(data)
                        continue
                    if not follow or self._log_finished(ns, name, uid) or logs.replaced(path, fh):
                        if os.fstat(fh.fileno()).st_size <= fh.tell():
                            last = timed.flush() if timed is not None else b""
                            if last:
                                await response.write(last if limit is None else last[:limit - sent])
                            break   # (the run ended: kubectl logs -f ends with it, as with the kubelet)
                        continue  # the last bytes came in after the check
                    if self.stopping.is_set() or request.transport is None or request.transport.is_closing():
                        break
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.stopping.wait(), timeout=logs.FOLLOW_INTERVAL)
            except (ConnectionError, asyncio.CancelledError):
                pass
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write_eof()
        return response

    def _log_finished(self, ns: str, name: str, uid: str) -> bool:
        try:
            pod = self.backend.client.get(kinds.POD, ns, name)
        except errors.NotFound:
            return True
        return meta.uid(pod) != uid or (pod.get("status") or {}).get("phase") in logs.TERMINAL


def _before_upgrade(request: web.Request, problem: str | None, status: int) -> web.Response | None:
    """The kubelet's plain-text refusal of a container that does not run (`status`: 400 for exec, 500 for
    attach, as its streaming server answers), or None; SPDY (no WebSocket upgrade) is refused."""
    if problem:
        return web.Response(status=status, text=problem, headers={"Content-Type": "text/plain; charset=utf-8"})
    if request.method != "GET" or request.headers.get("Upgrade", "").lower() != "websocket":
        raise errors.BadRequest(execstream.SPDY_MESSAGE)
    return None


def _watch_options(name: str | None, query: dict[str, str]) -> tuple[str, str | None, int, bool, bool | None]:
    """A watch request's (field selector — with the one object's name for `GET item?watch=true` —,
    resourceVersion, timeout seconds, allowWatchBookmarks, sendInitialEvents (None: not given)); raises
    errors.BadRequest for a bad one."""
    field_selector = query.get("fieldSelector") or ""
    if name is not None:
        field_selector = ",".join(s for s in (field_selector, f"metadata.name={name}") if s)
    listopts.check(query, watching=True)
    rv = query.get("resourceVersion") or None
    if rv is not None and not (rv.isascii() and rv.isdigit()):
        raise errors.BadRequest(f'invalid resourceVersion "{rv}"')
    timeout = media.parse_int(query.get("timeoutSeconds"), "timeoutSeconds") or DEFAULT_WATCH_TIMEOUT
    bookmarks = media.parse_bool(query.get("allowWatchBookmarks"), "allowWatchBookmarks")
    initial = media.parse_bool(query.get("sendInitialEvents"), "sendInitialEvents") \
        if query.get("sendInitialEvents") not in (None, "") else None
    return field_selector, rv, timeout, bookmarks, initial
