"""Resource requests (everything but watch and logs): one function per verb, no HTTP framework.

Each takes the Backend, the Route, the query parameters and, for writes, the decoded body, and
returns (HTTP code, response object) or raises an ApiError (turned into a Status by the caller).
Writes go through the Client only — admission and resourceVersion checks apply — and a request
refused here changes nothing.

- list: label/field selectors, `limit` + `continue` (a key-ordered cursor; every page reads the state
  the first one read, as kube-apiserver's, or 410 when the watch history no longer reaches it),
  all-namespace collections; items in (namespace, name) order; Table on request;
  `resourceVersion` + `resourceVersionMatch` as kube-apiserver reads them (listopts.py: `Exact`
  answers the state at that version, rewound through the watch history, or 410 when too old).
- create: apiVersion/kind/namespace must agree with the path (filled in when missing).
- update (PUT), status update, patch (merge, JSON, strategic for built-in kinds only, apply), delete (DeleteOptions body
  or query: propagationPolicy, preconditions — checked by the store, store/preconditions.py), deletecollection (the
  same options for each item, in order; the first item that fails ends the request with its error).
- `dryRun=All` (query, or DeleteOptions' `dryRun: [All]`): admission and every check run, nothing is
  written, and the answer is the object as it would be (`kubectl apply|create|delete
  --dry-run=server`, `kubectl diff`). Any other value is refused (400), as kube-apiserver does.
- `fieldValidation=Strict` (what kubectl sends by default): a body with a field the kind's schema
  does not define (admission/fields.py) is refused with kube-apiserver's `strict decoding error:
  unknown field "spec.minAvaliable"`; with Warn (the default) they are kept and named in `Warning`
  response headers (`field_warnings`), with Ignore kept silently.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Mapping

from vclite.admission import fields, shapes
from vclite.api import kinds, meta
from vclite.apiserver import binding, eviction
from vclite.httpserver import backend as backend_mod
from vclite.httpserver import bodies, listopts, media, patches, routes, tables
from vclite.httpserver import status as status_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.store import preconditions

Obj = dict[str, Any]
Query = Mapping[str, str]
Result = tuple[int, Obj]

MERGE, JSON_PATCH, STRATEGIC, APPLY = ("application/merge-patch+json", "application/json-patch+json",
                                       "application/strategic-merge-patch+json", "application/apply-patch+yaml")
# The patch types kube-apiserver accepts, in its order: a custom resource (a CRD's) takes no strategic merge patch
BUILTIN_PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)
CRD_PATCH_TYPES = (JSON_PATCH, MERGE, APPLY)


def check_patch_type(kind: kinds.Kind, content_type: str) -> None:
    """UnsupportedMediaType (415) with kube-apiserver's message unless `kind` takes patches of this type:
    `kubectl patch` without `--type` (a strategic merge patch) fails on a Volcano kind as on a cluster."""
    accepted = CRD_PATCH_TYPES if kind.crd else BUILTIN_PATCH_TYPES
    if content_type not in accepted:
        raise status_mod.UnsupportedMediaType("the body of the request was in an unknown format - accepted media "
                                              f"types include: {', '.join(accepted)}")


def _ns(route: routes.Resource) -> str:
    return route.namespace or ""


def dry_run(values: Any) -> bool:
    """Whether a request is a dry run: `dryRun` given as a query value or DeleteOptions' list. The
    only value Kubernetes defines is All; anything else is refused, nothing applied."""
    if values in (None, "", []):
        return False
    listed = values if isinstance(values, list) else [values]
    bad = [v for v in listed if v != "All"]
    if bad:
        raise errors.BadRequest(f'dryRun: Unsupported value: "{bad[0]}": supported values: "All" '
                                "(the request was not applied)")
    return True


def _sort_key(obj: Obj) -> tuple[str, str]:
    return meta.namespace(obj), meta.name(obj)


def encode_continue(last: tuple[str, str], rv: str) -> str:
    raw = json.dumps({"ns": last[0], "name": last[1], "rv": rv}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[str, str]:
    return decode_continue_at(token)[0]


def decode_continue_at(token: str) -> tuple[tuple[str, str], int | None]:
    """(the last key the previous page had, the resourceVersion the first page read: None if the
    token does not say)."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        rv = data.get("rv")
        return (str(data["ns"]), str(data["name"])), (int(rv) if rv not in (None, "") else None)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise errors.BadRequest("invalid continue token") from None


CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can start "
                    "a new list without the continue parameter.")


def list_objects(be: backend_mod.Backend, route: routes.Resource, query: Query,
                 choice: media.Choice = media.JSON) -> Result:
    kind = route.kind
    listopts.check(query, watching=False)
    rv = be.resource_version()
    at = listopts.list_read(query, int(rv))
    token = query.get("continue")
    after = None
    if token:   # the next page of the same list: the state the first page read (kube-apiserver's paging)
        after, first = decode_continue_at(token)
        at = first if first is not None and first < int(rv) else None
    if at is not None:
        rv = str(at)
    try:
        items = be.select(kind, route.namespace, query.get("labelSelector") or None,
                          query.get("fieldSelector") or None, at)
    except errors.Gone:
        if token:
            raise errors.Gone(CONTINUE_EXPIRED) from None
        raise
    items.sort(key=_sort_key)  # read-only stored objects: serialised by the caller, never modified
    if after is not None:
        items = [o for o in items if _sort_key(o) > after]
    limit = media.parse_int(query.get("limit"), "limit", 0) or 0
    next_token, remaining = "", 0
    if limit and len(items) > limit:
        remaining = len(items) - limit
        items = items[:limit]
        next_token = encode_continue(_sort_key(items[-1]), rv)
    if choice.form == "table":
        table = tables.table(kind, items, be.clock.now(), rv, query.get("includeObject") or "Metadata", next_token)
        return 200, table
    md: Obj = {"resourceVersion": rv}
    if next_token:
        md["continue"], md["remainingItemCount"] = next_token, remaining
    return 200, {"apiVersion": kind.api_version, "kind": f"{kind.kind}List", "metadata": md, "items": items}


def get_object(be: backend_mod.Backend, route: routes.Resource, query: Query,
               choice: media.Choice = media.JSON) -> Result:
    wanted = listopts.version(query)   # (a get is "not older than" its resourceVersion)
    if wanted is not None and wanted > int(be.resource_version()):
        raise listopts.TooLargeResourceVersion(wanted, int(be.resource_version()))
    obj = be.client.get(route.kind, _ns(route), route.name or "")
    if choice.form == "table":
        return 200, tables.table(route.kind, [obj], be.clock.now(), meta_rv(obj), query.get("includeObject") or "Metadata")
    return 200, obj


def meta_rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _conform(route: routes.Resource, obj: Obj, name_from_path: bool = False) -> Obj:
    """Fill in apiVersion/kind/namespace from the path, refuse disagreements (400). An update or patch
    must keep the object's name (kube-apiserver's checkName); only an apply configuration may leave it out."""
    kind = route.kind
    obj = dict(obj)
    api_version, kind_name = obj.get("apiVersion"), obj.get("kind")
    if api_version in (None, "") and kind_name in (None, ""):
        obj["apiVersion"], obj["kind"] = kind.api_version, kind.kind
    elif (kinds.lookup(str(api_version or ""), str(kind_name or ""))
          or kinds.lookup_view(str(api_version or ""), str(kind_name or ""))) is not kind:
        raise errors.BadRequest(f"the API version in the data ({api_version}) does not match the expected API "
                                f"version ({kind.api_version}), or the kind ({kind_name}) is not {kind.kind}")
    md = obj.get("metadata")
    if md is None:
        md = {}
    if not isinstance(md, dict):
        raise errors.BadRequest("metadata must be an object")
    md = obj["metadata"] = dict(md)
    if kind.namespaced:
        if md.get("namespace") in (None, ""):
            md["namespace"] = route.namespace
        elif md["namespace"] != route.namespace:
            raise errors.BadRequest("the namespace of the provided object does not match the namespace sent on "
                                    "the request")
    elif md.get("namespace"):
        md.pop("namespace")
    if route.name is not None:
        if name_from_path and md.get("name") in (None, ""):
            md["name"] = route.name
        problem = meta.name_problem(obj, route.name)
        if problem:
            raise errors.BadRequest(problem)
    elif not md.get("name") and not md.get("generateName"):
        raise errors.Invalid(kind.kind, "", [errors.FieldError("metadata.name", "Required value: name or "
                                                                                "generateName is required")])
    return obj


def _unknown_fields(route: routes.Resource, body: Any) -> list[str]:
    if route.subresource or not isinstance(body, dict):
        return []
    return [f'unknown field "{path}"' for path, _ in fields.unknown(body, fields.BY_KIND.get(route.kind.kind))]


def _check_fields(route: routes.Resource, query: Query, body: Any) -> None:
    """fieldValidation=Strict: refuse a body with fields the kind's schema does not define."""
    if (query.get("fieldValidation") or "").lower() != "strict":
        return
    found = _unknown_fields(route, body)
    if found:
        kind = route.kind
        raise errors.BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
                                "strict decoding error: " + ", ".join(found))


def field_warnings(route: routes.Resource, query: Query, body: Any) -> list[str]:
    """fieldValidation=Warn, kube-apiserver's default: the unknown fields of a write, for `Warning`
    response headers (kubectl prints them); none with Ignore (or Strict, which refused them)."""
    if (query.get("fieldValidation") or "Warn").lower() != "warn":
        return []
    return _unknown_fields(route, body)


VOLCANO_SCHEDULER = "volcano"


def creation_warnings(route: routes.Resource, created: Obj) -> list[str]:
    """What a created object will not do here, for `Warning` headers: a Pod for another scheduler
    than Volcano's (`kubectl run` writes none: default-scheduler) stays Pending, as no such
    scheduler runs in vclite — kube-apiserver has nothing to say, since its cluster runs one."""
    if route.kind is not kinds.POD or route.subresource or created.get("kind") != "Pod":
        return []
    spec = created.get("spec") or {}
    scheduler = spec.get("schedulerName") or "default-scheduler"
    if scheduler == VOLCANO_SCHEDULER or spec.get("nodeName"):
        return []
    name = (created.get("metadata") or {}).get("name", "")
    return [f'pod "{name}" will stay Pending: schedulerName {scheduler} does not run here, only Volcano\'s '
            'scheduler does (set spec.schedulerName: volcano; with kubectl run, '
            '--overrides=\'{"spec":{"schedulerName":"volcano"}}\'; or make it a vcjob)']


def create(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj) -> Result:
    dry = dry_run(query.get("dryRun"))
    _check_fields(route, query, body)
    if route.kind.namespaced and route.namespace is None:
        raise errors.BadRequest(f"a {route.kind.kind} must be created in a namespace: "
                                f"POST to .../namespaces/<namespace>/{route.kind.plural}")
    obj = _conform(route, body)
    _check_status(route.kind, obj)   # (Queues and PodGroups keep a created status)
    return 201, be.client.create(_managed(be, route, query, None, obj), dry_run=dry)


def _check_status(kind: kinds.Kind, obj: Obj) -> None:
    """A client's status of a Volcano kind typed as its CRD types it (shapes.STATUS), else 422 naming the
    field: vclite's controllers and vcctl read these fields (their own writes do not come this way)."""
    shape = shapes.STATUS.get(kind.kind) if kind.crd else None
    problems = shapes.check(obj.get("status"), shape, "status") if shape is not None else []
    if problems:
        raise errors.Invalid(kind.kind, str((obj.get("metadata") or {}).get("name") or ""), problems)


def _managed(be: backend_mod.Backend, route: routes.Resource, query: Query, current: Obj | None, new: Obj) -> Obj:
    """`new` with its writer's Update entry in managedFields (patches.record_update); unchanged
    when the request names no manager (the caller fills in kube-apiserver's default)."""
    manager = query.get("fieldManager") or ""
    if not manager:
        return new
    return patches.record_update(current, new, manager, clock_mod.format_time(be.clock.now()) or "",
                                 route.subresource)


def bind(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj) -> Result:
    """POST pods/<name>/binding: assign the pod to the Binding's target node (apiserver/binding.py);
    answers 201 with a Success Status, as the Kubernetes API does. (A dry run is refused: nothing
    would check the node but the write itself.)"""
    if dry_run(query.get("dryRun")):
        raise errors.BadRequest("dryRun is not supported for pods/binding: the request was not applied")
    name = route.name or ""
    node, annotations = binding.target(body, name)
    be.client.bind(_ns(route), name, node, annotations)
    return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def evict(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj) -> Result:
    """POST pods/<name>/eviction (policy/v1 Eviction, what `kubectl drain` sends): the pod is deleted
    gracefully, as its `deleteOptions` ask, unless a PodDisruptionBudget refuses it (429, see
    apiserver/eviction.py); answers 201 with a Success Status."""
    name = route.name or ""
    md = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    if body.get("kind") not in (None, "Eviction"):
        raise errors.BadRequest(f"expected an Eviction, got {body.get('kind')!r}")
    if md.get("name") not in (None, "", name):
        raise errors.BadRequest(f"name in URL does not match name in Eviction object ({md.get('name')} != {name})")
    options = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool) or grace < 0):
        raise errors.BadRequest(f"deleteOptions.gracePeriodSeconds: must be a non-negative integer, got {grace!r}")
    eviction.evict(be.client, be.clock, _ns(route), name, grace_period=grace,
                   dry_run=bool(dry_run(query.get("dryRun")) or options.get("dryRun")))
    return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


UNCONDITIONAL = "Invalid value: 0x0: must be specified for an update"


def update(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj) -> Result:
    dry = dry_run(query.get("dryRun"))
    _check_fields(route, query, body)
    obj = _conform(route, body)
    if route.kind.crd and not (obj.get("metadata") or {}).get("resourceVersion"):
        # A custom resource's strategy allows no unconditional update (kube's generic registry): a PUT
        # of one that exists must name the version it replaces (`kubectl replace` of a file without it).
        be.client.get(route.kind, _ns(route), route.name or "")   # (NotFound when it does not exist)
        raise errors.Invalid(route.kind.kind, route.name or "",
                             [errors.FieldError("metadata.resourceVersion", UNCONDITIONAL)])
    if query.get("fieldManager"):
        try:
            current: Obj | None = be.client.get(route.kind, _ns(route), route.name or "")
        except errors.NotFound:
            current = None
        obj = _managed(be, route, query, current, obj)
    return 200, _write(be, route, obj, dry)


def _write(be: backend_mod.Backend, route: routes.Resource, obj: Obj, dry: bool) -> Obj:
    if route.subresource == "status":
        _check_status(route.kind, obj)
        return be.client.update_status(obj, dry_run=dry)
    return be.client.update(obj, dry_run=dry)


def patch(be: backend_mod.Backend, route: routes.Resource, query: Query, content_type: str, body: Any) -> Result:
    dry = dry_run(query.get("dryRun"))
    kind, ns, name = route.kind, _ns(route), route.name or ""
    check_patch_type(kind, content_type)
    if content_type == APPLY:
        return apply(be, route, query, body)
    if content_type != JSON_PATCH and not isinstance(body, dict):
        raise errors.BadRequest("a merge patch must be an object")
    _check_fields(route, query, body)   # (a JSON patch is a list of operations: not checked)
    current = be.client.get(kind, ns, name)
    if content_type == JSON_PATCH:
        new = patches.json_patch(current, body)
    elif content_type == STRATEGIC:
        new = patches.strategic_merge(current, body, merge_keys=not kind.group)
    else:
        new = patches.merge_patch(current, body)
    # The result keeps the current resourceVersion unless the patch names one (then it must match).
    return 200, _write(be, route, _managed(be, route, query, current, _conform(route, meta.without_empty_maps(new))),
                       dry)


def apply(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Any) -> Result:
    dry = dry_run(query.get("dryRun"))
    if not isinstance(body, dict):
        raise errors.BadRequest("an apply configuration must be an object")
    _check_fields(route, query, body)
    config = _conform(route, body, name_from_path=True)
    manager = query.get("fieldManager") or ""
    force = media.parse_bool(query.get("force"), "force")
    try:
        current: Obj | None = be.client.get(route.kind, _ns(route), route.name or "")
    except errors.NotFound:
        if route.subresource:
            raise
        current = None
    now = clock_mod.format_time(be.clock.now()) or ""
    new = patches.apply(current, config, manager, force, now, route.subresource)
    if current is None:
        return 201, be.client.create(new, dry_run=dry)
    return 200, _write(be, route, new, dry)


def grace_period(query: Query, body: Obj | None) -> int | None:
    """DeleteOptions.gracePeriodSeconds, from the body or the query (None: the pod's own)."""
    value = (body or {}).get("gracePeriodSeconds") if isinstance(body, dict) else None
    if value is None:
        text = query.get("gracePeriodSeconds")
        if text in (None, ""):
            return None
        try:
            return int(text)
        except ValueError:
            raise errors.BadRequest(f'invalid value for gracePeriodSeconds: "{text}" (want an integer)') from None
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.BadRequest(f"gracePeriodSeconds: expected an integer, got {value!r}")
    return value


def delete_options(query: Query, body: Obj | None) -> tuple[str, Obj, bool]:
    """(propagationPolicy, preconditions, dry run) from a DeleteOptions body or the query."""
    opts = body or {}
    if not isinstance(opts, dict):
        raise errors.BadRequest("DeleteOptions must be an object")
    policy = opts.get("propagationPolicy") or query.get("propagationPolicy") or "Background"
    if opts.get("orphanDependents") is True or media.parse_bool(query.get("orphanDependents"), "orphanDependents"):
        policy = "Orphan"
    if policy not in ("Background", "Foreground", "Orphan"):
        raise errors.BadRequest(f'unsupported propagationPolicy "{policy}": want Background, Foreground or Orphan')
    dry = dry_run(query.get("dryRun")) | dry_run(opts.get("dryRun"))
    return policy, preconditions.parse(opts.get("preconditions")), dry


def delete(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj | None) -> Result:
    policy, pre, dry = delete_options(query, body)
    kind, ns, name = route.kind, _ns(route), route.name or ""
    gone = be.client.delete(kind, ns, name, propagation=policy, dry_run=dry, grace_period=grace_period(query, body),
                            preconditions=pre)
    if gone is None:
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "details": {"name": name, "group": kind.group, "kind": kind.plural}}
    return 200, gone


def delete_collection(be: backend_mod.Backend, route: routes.Resource, query: Query, body: Obj | None) -> Result:
    policy, pre, dry = delete_options(query, body)
    grace = grace_period(query, body)
    kind = route.kind
    items = be.select(kind, route.namespace, query.get("labelSelector") or None, query.get("fieldSelector") or None)
    deleted = []
    for obj in sorted(items, key=_sort_key):
        try:   # (each item meets the preconditions or the request fails there, as kube-apiserver's one worker)
            out = be.client.delete(kind, meta.namespace(obj), meta.name(obj), propagation=policy, dry_run=dry,
                                   grace_period=grace, preconditions=pre)
        except errors.NotFound:
            continue
        deleted.append(out if out is not None else obj)
    return 200, {"apiVersion": kind.api_version, "kind": f"{kind.kind}List",
                 "metadata": {"resourceVersion": be.resource_version()}, "items": deleted}


def decode_body(raw: bytes, content_type: str | None, query: Query) -> Any:
    strict = (query.get("fieldValidation") or "").lower() == "strict"
    return bodies.decode(raw, content_type, strict=strict)
