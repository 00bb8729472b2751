"""Patch application: JSON merge patch, JSON patch, strategic merge patch, server-side apply.

Pure functions from (current object, patch) to the object to write; the caller writes it through
the Client (admission, resourceVersion checks). None of them mutates its arguments.

- merge (RFC 7386): `apiserver.inprocess.merge_patch`.
- JSON patch (RFC 6902): add, remove, replace, move, copy, test; a failing op is a 422.
- strategic merge: for built-in kinds, lists named in MERGE_KEYS merge item by item on their key
  (`containers` by name, `env` by name, `volumeMounts` by mountPath, …) and `finalizers` as a set;
  the directives `$patch: replace|delete`, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>`
  and `$retainKeys` are honoured or dropped. For Volcano's kinds (custom resources, whose lists
  have no merge keys) it is a merge patch without the directives.
- server-side apply: a simple field-ownership model. Each apply manager owns the leaves it set
  (values that are not maps, empty maps, and whole lists — lists are atomic, as in custom
  resources), recorded in `metadata.managedFields` (FieldsV1 `f:` notation, operation Apply).
  Applying sets every leaf of the configuration; removes the leaves this manager set last time
  and no longer sets, unless another manager owns them too; and refuses (ApplyConflict, 409)
  to change a leaf another apply manager owns with a different value, unless `force`, which
  takes the ownership over. Identity metadata (name, namespace, uid, resourceVersion, …) is never
  owned. A write over HTTP that is not an apply (create, update, patch: `record_update`) records
  its manager (`fieldManager`, else the User-Agent's first word, as kube-apiserver) with
  operation Update owning the leaves it set or changed, which no other manager owns any more; an
  apply that would change one conflicts with it (`conflict with "kubectl-create" using v1`).
  The control plane's own writes record nothing.
"""
from __future__ import annotations

import json
from typing import Any

from vclite.apiserver import inprocess
from vclite.httpserver import bodies
from vclite.httpserver import status as status_mod
from vclite.lib import errors, jsoncopy

Obj = dict[str, Any]
Path = tuple[str, ...]

merge_patch = inprocess.merge_patch

# ---- JSON patch ---------------------------------------------------------------------------------


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise errors.BadRequest(f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]] if path else []


def _index(container: list, token: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
        raise status_mod.InvalidPatch(f"invalid array index {token!r}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise status_mod.InvalidPatch(f"array index {i} out of range")
    return i


def _parent(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict) and t in cur:
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, False)]
        else:
            raise status_mod.InvalidPatch(f"path /{'/'.join(tokens)} does not exist")
    return cur


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, False)]
    raise status_mod.InvalidPatch(f"path /{'/'.join(tokens)} does not exist")


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise status_mod.InvalidPatch("cannot remove the whole document")
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, False))
    raise status_mod.InvalidPatch(f"path /{'/'.join(tokens)} does not exist")


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    else:
        raise status_mod.InvalidPatch(f"path /{'/'.join(tokens)} does not exist")
    return doc


# kube-apiserver's bounds on a JSON patch: its number of operations (413 beyond), and how much its `copy`
# operations may add in all (the JSON bytes of the values copied; --max-request-bytes' 3 MiB): without the
# latter, 20 copies of a field into itself make a million-node document and block the server for a minute.
# vclite's own: the patched document may be nested no deeper than a request body (bodies.MAX_DEPTH).
MAX_OPERATIONS = 10000
MAX_COPY_BYTES = 3 * 1024 * 1024


def json_patch(current: Obj, ops: Any) -> Obj:
    if not isinstance(ops, list):
        raise errors.BadRequest("a JSON patch must be a list of operations")
    if len(ops) > MAX_OPERATIONS:
        raise status_mod.TooLarge(f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, "
                                  f"got {len(ops)}")
    doc = jsoncopy.deep_copy(current)
    copied = [0]
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise errors.BadRequest(f"invalid JSON patch operation: {op!r}")
        kind, tokens = op["op"], _pointer(op.get("path"))
        if kind in ("add", "replace", "test") and "value" not in op:
            raise errors.BadRequest(f'JSON patch "{kind}" operation needs a value')
        try:
            doc = _apply_op(doc, op, kind, tokens, copied)
        except status_mod.InvalidPatch as e:   # (the words of the JSON patch library Kubernetes uses)
            raise status_mod.InvalidPatch(e.message if kind == "test" else f"{kind} operation does not apply: "
                                          f"{e.message}") from None
    if not isinstance(doc, dict):
        raise status_mod.InvalidPatch("the patched document is not an object")
    try:   # (`add` operations nest without a deep body; the object must still be one a body could carry)
        bodies.check_depth(doc)
    except errors.BadRequest:
        raise status_mod.InvalidPatch(f"the patched document is nested deeper than {bodies.MAX_DEPTH} levels") \
            from None
    return doc


def _apply_op(doc: Any, op: Obj, kind: str, tokens: list[str], copied: list[int]) -> Any:
    """`doc` with one operation applied (InvalidPatch: it does not apply; BadRequest: unknown).
    `copied[0]`: the bytes `copy` operations added so far (this one's added)."""
    if kind == "add":
        doc = _add(doc, tokens, jsoncopy.deep_copy(op["value"]))
    elif kind == "remove":
        _remove(doc, tokens)
    elif kind == "replace":
        _get(doc, tokens)
        if not tokens:
            doc = jsoncopy.deep_copy(op["value"])
        else:
            _remove(doc, tokens)
            doc = _add(doc, tokens, jsoncopy.deep_copy(op["value"]))
    elif kind == "move":
        doc = _add(doc, tokens, _remove(doc, _pointer(op.get("from"))))
    elif kind == "copy":
        value = _get(doc, _pointer(op.get("from")))
        copied[0] += len(json.dumps(value, separators=(",", ":")))
        if copied[0] > MAX_COPY_BYTES:
            raise status_mod.InvalidPatch(f"Unable to complete the copy, the accumulated size increase of copy is "
                                          f"{copied[0]}, exceeding the limit {MAX_COPY_BYTES}")
        doc = _add(doc, tokens, jsoncopy.deep_copy(value))
    elif kind == "test":
        if _get(doc, tokens) != op["value"]:
            raise status_mod.InvalidPatch(f"testing value {op.get('path')} failed: test failed")
    else:
        raise errors.BadRequest(f"unknown JSON patch operation {kind!r}")
    return doc


# ---- strategic merge patch --------------------------------------------------------------------------

MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
              "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
              "ports": "containerPort", "imagePullSecrets": "name", "conditions": "type",
              "ownerReferences": "uid", "hostAliases": "ip", "containerStatuses": "name",
              "initContainerStatuses": "name"}
# a list whose merge key depends on where it is: a Service's `spec.ports` merge by `port` (a container's by
# `containerPort`); the path is the fields from the object's root, `*` for any list item
PATH_MERGE_KEYS = {("spec", "ports"): "port"}
SET_LISTS = ("finalizers",)
_ORDER, _DELETE_FROM, _RETAIN = "$setElementOrder/", "$deleteFromPrimitiveList/", "$retainKeys"


def strategic_merge(target: Any, patch: Any, merge_keys: bool = True, path: tuple[str, ...] = ()) -> Any:
    """Strategic merge patch; `merge_keys=False` (custom resources) merges like a merge patch. `path`:
    where `target` is in the object (PATH_MERGE_KEYS)."""
    if not isinstance(patch, dict):
        return jsoncopy.deep_copy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: jsoncopy.deep_copy(v) for k, v in patch.items() if not k.startswith("$")}
    result = jsoncopy.deep_copy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith(_DELETE_FROM):
            field = k[len(_DELETE_FROM):]
            if isinstance(result.get(field), list) and isinstance(v, list):
                result[field] = [x for x in result[field] if x not in v]
            continue
        if k.startswith("$"):
            continue  # $setElementOrder/…, $retainKeys, $patch: ordering and pruning hints
        if v is None:
            result.pop(k, None)
        elif isinstance(v, list) and merge_keys and (PATH_MERGE_KEYS.get((*path, k)) or MERGE_KEYS.get(k)) \
                and isinstance(result.get(k), list):
            result[k] = _merge_list(result[k], v, PATH_MERGE_KEYS.get((*path, k)) or MERGE_KEYS[k], (*path, k, "*"))
        elif isinstance(v, list) and merge_keys and k in SET_LISTS and isinstance(result.get(k), list):
            result[k] = result[k] + [x for x in v if x not in result[k]]
        elif isinstance(v, dict):
            merged = strategic_merge(result.get(k), v, merge_keys, (*path, k))
            if merged is None:
                result.pop(k, None)
            else:
                result[k] = merged
        else:
            result[k] = jsoncopy.deep_copy(v)
    return result


def _merge_list(current: list, patch: list, key: str, path: tuple[str, ...] = ()) -> list:
    out = [jsoncopy.deep_copy(x) for x in current]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            out.append(jsoncopy.deep_copy(item))
            continue
        at = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                out.pop(at)
        elif at is None:
            out.append({k: jsoncopy.deep_copy(v) for k, v in item.items() if not k.startswith("$")})
        else:
            out[at] = strategic_merge(out[at], item, path=path)
    return out


# ---- server-side apply ------------------------------------------------------------------------------

IDENTITY = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
            "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generateName")


def leaves(value: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Leaf paths of a JSON object: maps are walked, anything else (and `{}`) is a leaf."""
    if isinstance(value, dict) and value:
        out: dict[Path, Any] = {}
        for k, v in value.items():
            out.update(leaves(v, prefix + (k,)))
        return out
    return {prefix: value} if prefix else {}


def _owned(path: Path, subresource: str | None) -> bool:
    if not path or path[0] in ("apiVersion", "kind"):
        return False
    if path[0] == "metadata":
        return len(path) > 1 and path[1] not in IDENTITY
    return (path[0] == "status") == (subresource == "status")


def encode_fields(paths: set[Path]) -> Obj:
    """Leaf paths in FieldsV1 notation: {"f:spec": {"f:flows": {}}}."""
    root: Obj = {}
    for path in sorted(paths):
        node = root
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return root


def decode_fields(fields: Any, prefix: Path = ()) -> set[Path]:
    if not isinstance(fields, dict):
        return set()
    children = {k: v for k, v in fields.items() if k.startswith("f:")}
    if not children:
        return {prefix} if prefix else set()
    out: set[Path] = set()
    for k, v in children.items():
        out |= decode_fields(v, prefix + (k[2:],))
    return out


def _lookup(obj: Any, path: Path) -> tuple[bool, Any]:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return False, None
        obj = obj[part]
    return True, obj


def _set(obj: Obj, path: Path, value: Any) -> None:
    for part in path[:-1]:
        nxt = obj.get(part)
        if not isinstance(nxt, dict):
            nxt = obj[part] = {}
        obj = nxt
    obj[path[-1]] = jsoncopy.deep_copy(value)


def _delete(obj: Obj, path: Path) -> None:
    chain = [obj]
    for part in path[:-1]:
        nxt = chain[-1].get(part)
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    chain[-1].pop(path[-1], None)
    for depth in range(len(chain) - 1, 0, -1):  # prune maps emptied by the removal (never metadata)
        if chain[depth] or path[:depth] == ("metadata",):
            break
        chain[depth - 1].pop(path[depth - 1], None)


def _covers(current: Any, wanted: Any) -> bool:
    """Whether `current` is `wanted` with, at most, fields added inside it: the values the server
    defaults (a Service port's `protocol`, a container's `terminationMessagePath`) in a list
    item the configuration does not write. Lists must have the same length and order."""
    if isinstance(wanted, dict) and isinstance(current, dict):
        return all(k in current and _covers(current[k], v) for k, v in wanted.items())
    if isinstance(wanted, list) and isinstance(current, list):
        return len(wanted) == len(current) and all(_covers(c, w) for c, w in zip(current, wanted))
    return current == wanted


def _unchanged(obj: Obj, path: Path, value: Any) -> bool:
    """Whether applying `value` at `path` would leave the object as it is (the same value, or the
    same once the server has filled in its defaults again): no conflict, ownership shared."""
    found, current = _lookup(obj, path)
    return found and _covers(current, value)


def _show(path: Path) -> str:
    return "." + ".".join(path)


def apply(current: Obj | None, config: Obj, manager: str, force: bool, now: str,
          subresource: str | None = None) -> Obj:
    """The object after `manager` applies `config` to `current` (None: it does not exist yet)."""
    if not manager:
        raise errors.BadRequest("fieldManager is required for apply requests")
    wanted = {p: v for p, v in leaves(config).items() if _owned(p, subresource)}
    base = jsoncopy.deep_copy(current) if current is not None else {
        k: jsoncopy.deep_copy(config[k]) for k in ("apiVersion", "kind") if k in config}
    md = base.setdefault("metadata", {})
    if current is None:
        for k in ("name", "namespace", "generateName"):
            if k in (config.get("metadata") or {}):
                md[k] = config["metadata"][k]
    entries = [e for e in md.get("managedFields") or [] if isinstance(e, dict)]
    scope = subresource or ""
    owners = {e.get("manager", ""): decode_fields(e.get("fieldsV1")) for e in entries
              if e.get("operation") == "Apply" and (e.get("subresource") or "") == scope}
    updaters = [e for e in entries if e.get("operation") == "Update" and (e.get("subresource") or "") == scope]
    updated = [decode_fields(e.get("fieldsV1")) for e in updaters]
    conflicts, taken = [], []
    for path, value in wanted.items():
        if _unchanged(base, path, value):
            continue   # (the same value: owned together, no conflict)
        conflicts += [(other, _show(path)) for other, paths in owners.items() if other != manager and path in paths]
        for e, paths in zip(updaters, updated):
            if path in paths:
                conflicts.append((f"{e.get('manager', '')}\" using {e.get('apiVersion', '')}", _show(path)))
                taken.append((paths, path))
    if conflicts and not force:
        raise status_mod.ApplyConflict(conflicts)
    for other, paths in owners.items():
        if other != manager:
            paths -= {p for p, v in wanted.items() if p in paths and not _unchanged(base, p, v)}
    for paths, path in taken:
        paths.discard(path)
    others = set().union(*(p for m, p in owners.items() if m != manager), *updated)
    for path in owners.get(manager, set()) - set(wanted) - others:
        _delete(base, path)
    for path, value in wanted.items():
        _set(base, path, value)
    owners[manager] = set(wanted)
    kept = [e for e in entries
            if (e.get("subresource") or "") != scope or e.get("operation") not in ("Apply", "Update")]
    kept += [{**e, "fieldsV1": encode_fields(paths)} for e, paths in zip(updaters, updated) if paths]
    api_version = config.get("apiVersion") or base.get("apiVersion", "")
    applied = []
    for m, paths in owners.items():
        if not paths:
            continue
        entry = next((e for e in entries if e.get("manager") == m and e.get("operation") == "Apply"), None)
        new = {"manager": m, "operation": "Apply", "apiVersion": api_version,
               "time": now if m == manager or entry is None else entry.get("time", now),
               "fieldsType": "FieldsV1", "fieldsV1": encode_fields(paths)}
        if scope:
            new["subresource"] = scope
        applied.append(new)
    md["managedFields"] = kept + applied
    return base


def record_update(old: Obj | None, new: Obj, manager: str, now: str, subresource: str | None = None) -> Obj:
    """`new` (a create's or an update's object, not yet written) with `manager`'s Update entry in its
    managedFields: it owns the leaves it set or changed (and keeps those it owned), which no other
    manager of the same scope owns any more; a manager left owning nothing is dropped. The entries
    are `new`'s own when it carries some (kubectl edit sends them back), else `old`'s."""
    scope = subresource or ""
    before = leaves(old) if old is not None else {}
    after = {p: v for p, v in leaves(new).items() if _owned(p, subresource)}
    changed = {p for p, v in after.items() if before.get(p, _MISSING) != v}
    gone = {p for p in before if _owned(p, subresource) and p not in after}
    md_new = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
    source = md_new.get("managedFields") if md_new.get("managedFields") is not None else \
        ((old or {}).get("metadata") or {}).get("managedFields")
    entries = [e for e in source or [] if isinstance(e, dict)]
    mine: set[Path] = set()
    out = []
    for e in entries:
        paths = decode_fields(e.get("fieldsV1"))
        if (e.get("subresource") or "") != scope:
            out.append(e)
            continue
        if e.get("manager") == manager and e.get("operation") == "Update":
            mine |= paths
            continue
        paths -= changed | gone
        if paths:
            out.append({**e, "fieldsV1": encode_fields(paths)})
    mine = (mine - gone) | changed
    if mine:
        entry: Obj = {"manager": manager, "operation": "Update", "apiVersion": new.get("apiVersion", ""),
                      "time": now, "fieldsType": "FieldsV1", "fieldsV1": encode_fields(mine)}
        if scope:
            entry["subresource"] = scope
        out.append(entry)
    return {**new, "metadata": {**md_new, "managedFields": out}} if out or entries else new


_MISSING = object()


def default_manager(user_agent: str | None) -> str:
    """kube-apiserver's field manager of a write that names none: the User-Agent up to its first `/`
    (at most 128 characters)."""
    return (user_agent or "").split("/")[0][:128]
