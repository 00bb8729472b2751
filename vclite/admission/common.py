"""Field checks shared by every kind's admission rules: Kubernetes name formats, typed field reads,
metadata, resource lists, and the wording Kubernetes uses for field errors.

Messages follow Kubernetes (`Required value`, `Invalid value: "x": …`, `Unsupported value: …`) so a
user sees what kubectl would show. Pure functions that return lists of FieldErrors (or append them to the
`errs` list given); nothing here raises for bad input, mutates another argument, or reads the store.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterator

from vclite.api import kinds, quantity
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
               "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                 "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                 "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")

# Kinds whose names Kubernetes validates as labels rather than subdomains.
_LABEL_NAMED = frozenset({kinds.NAMESPACE.kind})
_DNS1035_NAMED = frozenset({kinds.SERVICE.kind})

REQUIRED = "Required value"


# ---- message wording ---------------------------------------------------------------------------

def show(value: Any) -> str:
    """A value as Kubernetes prints it in field errors: strings quoted, numbers bare."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {show(value)}: {detail}"


def unsupported(value: Any, supported: list[str] | tuple[str, ...]) -> str:
    return f"Unsupported value: {show(value)}: supported values: " + ", ".join(show(s) for s in supported)


def duplicate(value: Any) -> str:
    return f"Duplicate value: {show(value)}"


def type_error(value: Any, type_name: str) -> str:
    return invalid(value, f"must be of type {type_name}")


def json_type(value: Any) -> str:
    """A JSON value's type as a CRD's schema validation names it (an integral number is an `integer`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


def crd_type_error(path: str, value: Any, type_name: str) -> str:
    """kube-apiserver's words when a CRD's structural schema refuses the type of the value at `path`:
    `Invalid value: "null": spec.x[1] in body must be of type string: "null"`."""
    found = json_type(value)
    return f'Invalid value: "{found}": {path} in body must be of type {type_name}: "{found}"'


def string_array_errors(value: Any, path: str, crd: bool) -> list[errors.FieldError]:
    """The problems of a field typed as an array of strings (absent or null: none). In a CRD (`crd`), as its
    schema validation says them: a value that is no array, else each item that is no string, named by its index;
    elsewhere one problem for the whole field."""
    if value is None or (isinstance(value, list) and all(isinstance(item, str) for item in value)):
        return []
    if not crd:
        return [errors.FieldError(path, type_error(value, "array of strings"))]
    if not isinstance(value, list):
        return [errors.FieldError(path, crd_type_error(path, value, "array"))]
    return [errors.FieldError(f"{path}[{i}]", crd_type_error(f"{path}[{i}]", item, "string"))
            for i, item in enumerate(value) if not isinstance(item, str)]


# ---- name formats ------------------------------------------------------------------------------

# The checks below are pure functions of one string, asked again and again for the same few label
# keys, names and namespaces: each answer is kept (a bounded cache), and handed out as a new list.
_cached = functools.lru_cache(maxsize=4096)


@_cached
def _dns1123_label(value: str) -> tuple[str, ...]:
    out = ("must be no more than 63 characters",) if len(value) > 63 else ()
    return out + (() if _LABEL_RE.fullmatch(value) else (LABEL_MSG,))


@_cached
def _dns1123_subdomain(value: str) -> tuple[str, ...]:
    out = ("must be no more than 253 characters",) if len(value) > 253 else ()
    return out + (() if _SUBDOMAIN_RE.fullmatch(value) else (SUBDOMAIN_MSG,))


@_cached
def _dns1035_label(value: str) -> tuple[str, ...]:
    out = ("must be no more than 63 characters",) if len(value) > 63 else ()
    return out + (() if _DNS1035_RE.fullmatch(value) else (DNS1035_MSG,))


@_cached
def _qualified_name(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) > 2:
        return ("a qualified name " + QUALIFIED_MSG.removeprefix("name part "),)
    out: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            out.append("prefix part must be non-empty")
        else:
            out += ["prefix part " + m for m in _dns1123_subdomain(parts[0])]
    if not name:
        return (*out, "name part must be non-empty")
    if len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if not _QUALIFIED_RE.fullmatch(name):
        out.append(QUALIFIED_MSG)
    return tuple(out)


@_cached
def _label_value(value: str) -> tuple[str, ...]:
    out = ("must be no more than 63 characters",) if len(value) > 63 else ()
    return out + (() if _LABEL_VALUE_RE.fullmatch(value) else (LABEL_VALUE_MSG,))


def dns1123_label(value: str) -> list[str]:
    return list(_dns1123_label(value))


def dns1123_subdomain(value: str) -> list[str]:
    return list(_dns1123_subdomain(value))


def dns1035_label(value: str) -> list[str]:
    return list(_dns1035_label(value))


def qualified_name(value: str) -> list[str]:
    """Kubernetes IsQualifiedName: `[prefix/]name`, name ≤ 63 chars (what Volcano checks job and pod names with)."""
    return list(_qualified_name(value))


def label_value(value: str) -> list[str]:
    return list(_label_value(value))


_CONFIG_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                  "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def config_key(value: str) -> list[str]:
    """Kubernetes IsConfigMapKey: what a ConfigMap's or Secret's data key must be (it names a file too)."""
    out = ["must be no more than 253 characters"] if len(value.encode()) > 253 else []
    if not _CONFIG_KEY_RE.fullmatch(value):
        out.append(CONFIG_KEY_MSG)
    if value in (".", ".."):
        out.append(f"must not be '{value}'")
    elif value.startswith(".."):
        out.append("must not start with '..'")
    return out


def name_errors(kind: kinds.Kind, name: str) -> list[str]:
    if kind.kind in _LABEL_NAMED:
        return dns1123_label(name)
    if kind.kind in _DNS1035_NAMED:
        return dns1035_label(name)
    return dns1123_subdomain(name)


# ---- typed reads -------------------------------------------------------------------------------

def set_operator_errors(op: Any, values: list | None, path: str) -> list[FieldError] | None:
    """The `values` errors of a selector requirement whose operator is In, NotIn, Exists or DoesNotExist (kube's
    label and node selector validation word them alike); None for another operator, which the caller judges."""
    if op in ("In", "NotIn"):
        return [] if values else [FieldError(f"{path}.values",
                                             f"{REQUIRED}: must be specified when `operator` is 'In' or 'NotIn'")]
    if op in ("Exists", "DoesNotExist"):
        return [] if not values else [FieldError(
            f"{path}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
    return None


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def check_int(obj: Obj, key: str, path: str, errs: list[FieldError], minimum: int | None = None,
              maximum: int | None = None) -> int | None:
    """obj[key] if it is an integer within bounds; else appends a FieldError. Absent/None -> None, no error.
    Every such field is an int32 in Volcano's API (and the JobFlow fields follow): a value outside
    int32 cannot be decoded there, and here returns None as a wrong type does."""
    value = obj.get(key)
    if value is None:
        return None
    if not is_int(value):
        errs.append(FieldError(path, type_error(value, "integer")))
        return None
    if not INT32_MIN <= value <= INT32_MAX:
        errs.append(FieldError(path, invalid(value, f"must fit in 32 bits (from {INT32_MIN} to {INT32_MAX})")))
        return None
    if minimum is not None and value < minimum:
        errs.append(FieldError(path, invalid(value, f"should be greater than or equal to {minimum}")))
    elif maximum is not None and value > maximum:
        errs.append(FieldError(path, invalid(value, f"should be less than or equal to {maximum}")))
    return value


def check_type(obj: Obj, key: str, path: str, errs: list[FieldError], typ: type, type_name: str) -> Any:
    """obj[key] if absent/None or of type `typ`; otherwise appends a type error and returns None."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        errs.append(FieldError(path, type_error(value, type_name)))
        return None
    return value


def objects_in(value: Any, path: str, errs: list[FieldError]) -> Iterator[tuple[str, Obj]]:
    """The items of an array of objects, each with its path (`<path>[i]`), for the caller's own checks.
    Absent (None): nothing. No array: its type error (`array`) appended to `errs`, nothing. An item that is
    no object: its type error appended, skipped — when the iteration reaches it, so the errors stay in the
    items' order with those the caller appends for the objects before and after it."""
    if value is None:
        return
    if not isinstance(value, list):
        errs.append(FieldError(path, type_error(value, "array")))
        return
    for i, item in enumerate(value):
        at = f"{path}[{i}]"
        if isinstance(item, dict):
            yield at, item
        else:
            errs.append(FieldError(at, type_error(item, "object")))


def dict_at(obj: Any, key: str) -> Obj:
    """obj[key] when both are dicts, else {} (for reads that must not fail on malformed input)."""
    if not isinstance(obj, dict):
        return {}
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def list_at(obj: Any, key: str) -> list:
    if not isinstance(obj, dict):
        return []
    value = obj.get(key)
    return value if isinstance(value, list) else []


# ---- metadata ----------------------------------------------------------------------------------

def _owner_references(refs: Any) -> list[FieldError]:
    """Each owner reference an object with apiVersion, kind, name and uid strings (as Kubernetes)."""
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [FieldError("metadata.ownerReferences", type_error(refs, "array"))]
    errs = []
    for i, ref in enumerate(refs):
        path = f"metadata.ownerReferences[{i}]"
        if not isinstance(ref, dict):
            errs.append(FieldError(path, type_error(ref, "object")))
            continue
        for key in ("apiVersion", "kind", "name", "uid"):
            value = ref.get(key)
            if value in (None, ""):
                errs.append(FieldError(f"{path}.{key}", REQUIRED))
            elif not isinstance(value, str):
                errs.append(FieldError(f"{path}.{key}", type_error(value, "string")))
        for key in ("controller", "blockOwnerDeletion"):
            if ref.get(key) is not None and not isinstance(ref.get(key), bool):
                errs.append(FieldError(f"{path}.{key}", type_error(ref.get(key), "boolean")))
    return errs


MAX_GENERATED_PREFIX = 58   # Kubernetes cuts a generateName to 58 characters before its 5-character suffix


def validate_metadata(kind: kinds.Kind, obj: Obj) -> list[FieldError]:
    """Generic ObjectMeta checks every kind gets: name required and well formed, namespace a DNS label
    (namespaced kinds) or absent (cluster-scoped), labels and annotations string maps with valid keys."""
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return [FieldError("metadata", REQUIRED if md is None else type_error(md, "object"))]
    errs: list[FieldError] = []
    name, prefix = md.get("name"), md.get("generateName")
    generated = isinstance(prefix, str) and bool(prefix)
    prefix_errs: list[FieldError] = []
    if generated:
        # The API server makes the name from the prefix before it admits the object: the prefix
        # must be the start of a valid name (a trailing dash allowed).
        sample = prefix[:MAX_GENERATED_PREFIX].removesuffix("-") + "a"
        prefix_errs = [FieldError("metadata.generateName", invalid(prefix, m)) for m in name_errors(kind, sample)]
        errs += prefix_errs
    if generated and (prefix_errs or name in (None, "")):
        pass   # the name is (or will be) made from the prefix: its errors are the prefix's
    elif name in (None, ""):
        errs.append(FieldError("metadata.name", REQUIRED + ": name or generateName is required"))
    elif not isinstance(name, str):
        errs.append(FieldError("metadata.name", type_error(name, "string")))
    else:
        errs += [FieldError("metadata.name", invalid(name, m)) for m in name_errors(kind, name)]
    ns = md.get("namespace")
    if ns not in (None, ""):
        if not kind.namespaced:
            errs.append(FieldError("metadata.namespace", "Forbidden: not allowed on this type"))
        elif not isinstance(ns, str):
            errs.append(FieldError("metadata.namespace", type_error(ns, "string")))
        else:
            errs += [FieldError("metadata.namespace", invalid(ns, m)) for m in dns1123_label(ns)]
    errs += _owner_references(md.get("ownerReferences"))
    finalizers = md.get("finalizers")
    if finalizers is not None and not (isinstance(finalizers, list) and all(isinstance(f, str) for f in finalizers)):
        errs.append(FieldError("metadata.finalizers", type_error(finalizers, "array of strings")))
    errs += _string_map(md, "labels", "metadata.labels", value_check=_label_value)
    errs += _string_map(md, "annotations", "metadata.annotations", value_check=None)
    errs += _annotations_size(md.get("annotations"))
    return errs


TOTAL_ANNOTATION_SIZE = 256 * 1024   # Kubernetes' limit on all of an object's annotations, keys and values


def _annotations_size(annotations: Any) -> list[FieldError]:
    """All annotations together at most 256 KiB (UTF-8 bytes of keys and values), as Kubernetes
    checks them: what `kubectl apply` meets with a large object's last-applied-configuration."""
    if not isinstance(annotations, dict):
        return []
    total = sum(len(str(k).encode()) + len(v.encode()) for k, v in annotations.items() if isinstance(v, str))
    if total <= TOTAL_ANNOTATION_SIZE:
        return []
    return [FieldError("metadata.annotations", f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE} bytes")]


def label_map(obj: Obj, key: str, path: str) -> list[FieldError]:
    """Kubernetes ValidateLabels on obj[key]: a map of qualified-name keys to label values (a Service's
    selector as its labels)."""
    return _string_map(obj, key, path, value_check=_label_value)


def _string_map(md: Obj, key: str, path: str, value_check) -> list[FieldError]:
    m = md.get(key)
    if m is None:
        return []
    if not isinstance(m, dict):
        return [FieldError(path, type_error(m, "object"))]
    errs: list[FieldError] = []
    for k, v in m.items():
        errs += [FieldError(path, invalid(k, msg)) for msg in _qualified_name(str(k))]
        if not isinstance(v, str):
            errs.append(FieldError(f"{path}.{k}", type_error(v, "string")))
        elif value_check is not None:
            errs += [FieldError(path, invalid(v, msg)) for msg in value_check(v)]
    return errs


# ---- shared sub-objects ------------------------------------------------------------------------

NETWORK_TOPOLOGY_MODES = ("hard", "soft")


def network_topology(nt: Any, path: str) -> list[FieldError]:
    """A vcjob's / PodGroup's / partition's `networkTopology` (CRD: mode hard|soft, highestTierAllowed
    an integer ≥ 0, highestTierName a string of ≤ 253), never both tier fields (Volcano's webhook)."""
    if nt is None:
        return []
    if not isinstance(nt, dict):
        return [FieldError(path, type_error(nt, "object"))]
    errs: list[FieldError] = []
    mode = nt.get("mode")
    if mode is not None and mode not in NETWORK_TOPOLOGY_MODES:
        errs.append(FieldError(f"{path}.mode", unsupported(mode, NETWORK_TOPOLOGY_MODES)))
    check_int(nt, "highestTierAllowed", f"{path}.highestTierAllowed", errs, minimum=0)
    name = check_type(nt, "highestTierName", f"{path}.highestTierName", errs, str, "string")
    if isinstance(name, str) and len(name) > 253:
        errs.append(FieldError(f"{path}.highestTierName", "Too long: may not be more than 253 bytes"))
    if not errs and nt.get("highestTierAllowed") is not None and nt.get("highestTierName"):
        errs.append(FieldError(path, "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology "
                                     "simultaneously"))
    return errs


# ---- resources ---------------------------------------------------------------------------------

def parse_resource_list(rl: Any, path: str, errs: list[FieldError]) -> dict[str, quantity.Fraction]:
    """Parse a ResourceList (`{cpu: 500m, memory: 1Gi}`); bad or negative quantities become FieldErrors
    at `<path>.<resource>` and are left out of the result."""
    if rl is None:
        return {}
    if not isinstance(rl, dict):
        errs.append(FieldError(path, type_error(rl, "object")))
        return {}
    out: dict[str, quantity.Fraction] = {}
    for name, value in rl.items():
        q = nonnegative_quantity(value, f"{path}.{name}", errs)
        if q is not None:
            out[str(name)] = q
    return out


def nonnegative_quantity(value: Any, path: str, errs: list[FieldError]) -> quantity.Fraction | None:
    """`value` as a quantity of at least 0; else a FieldError at `path` and None."""
    try:
        q = quantity.parse(value)
    except ValueError as e:
        errs.append(FieldError(path, str(e)))
        return None
    if q < 0:
        errs.append(FieldError(path, invalid(value, "must be greater than or equal to 0")))
        return None
    return q
