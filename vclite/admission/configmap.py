"""ConfigMap admission: what Kubernetes' ConfigMap decoding and ValidateConfigMap(Update) refuse.

- `data` is a map of strings and `binaryData` a map of base64 strings (kube-apiserver fails to decode
  anything else, 400; here a 422 naming the field, as for other wrongly typed fields); `immutable` a
  boolean. An unquoted YAML value (`a: 1`, `on: true`) is the usual cause, so the message says so.
- every key is a config key (common.config_key), and no key is in both `data` and `binaryData`;
- `data` and `binaryData` together hold at most 1 MiB (kube names no field; here `data`);
- an `immutable: true` ConfigMap keeps its `data`, `binaryData` and immutability;
- Volcano's admission configuration (`volcano-system/volcano-admission-configmap`) reads (resgroups.py).
Pure functions; the executor and the scheduler's ConfigMap reader rely on these shapes.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from vclite.admission import base, common, resgroups
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
MAX_SIZE = 1024 * 1024
IMMUTABLE = "field is immutable when `immutable` is set"


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    data = _string_map(new, "data", errs)
    binary = _string_map(new, "binaryData", errs)
    if "immutable" in new and new["immutable"] is not None and not isinstance(new["immutable"], bool):
        errs.append(FieldError("immutable", common.type_error(new["immutable"], "boolean")))
    size = 0
    for key, value in data.items():
        errs += [FieldError(f"data[{key}]", common.invalid(key, msg)) for msg in common.config_key(key)]
        if key in binary:
            errs.append(FieldError(f"data[{key}]", common.invalid(key, "duplicate of key present in binaryData")))
        size += len(value.encode())
    for key, value in binary.items():
        errs += [FieldError(f"binaryData[{key}]", common.invalid(key, msg)) for msg in common.config_key(key)]
        try:
            size += len(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            errs.append(FieldError(f"binaryData[{key}]", "illegal base64 data"))
    errs += resgroups.shape_errors(new)
    if size > MAX_SIZE:
        errs.append(FieldError("data", f"Too long: may not be more than {MAX_SIZE} bytes"))
    if op is base.Operation.UPDATE and isinstance(old, dict) and old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(FieldError("immutable", f"Forbidden: {IMMUTABLE}"))
        for key in ("data", "binaryData"):
            if (old.get(key) or {}) != (new.get(key) or {}):
                errs.append(FieldError(key, f"Forbidden: {IMMUTABLE}"))
    return errs


def _string_map(obj: Obj, key: str, errs: list[FieldError]) -> dict[str, str]:
    """obj[key] as a map of strings; each entry that is not one (and a field that is no map) is an error."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.append(FieldError(key, common.type_error(value, "object")))
        return {}
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, str):
            out[str(k)] = v
        else:
            hint = " (quote it in YAML: an unquoted number or true/false is not a string)" \
                if isinstance(v, (bool, int, float)) else ""
            errs.append(FieldError(f"{key}[{k}]", common.type_error(v, "string") + hint))
    return out
