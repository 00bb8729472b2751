"""Secret admission: what Kubernetes' Secret strategy and validation do to a v1 Secret.

- `stringData` is merged into `data` (base64-encoded, winning over a `data` key of the same name)
  and dropped, as the apiserver does on create and update; `type` defaults to `Opaque`.
- `data` values must be base64 (Kubernetes refuses the whole request to decode otherwise); keys are
  config keys (common.config_key: `[-._a-zA-Z0-9]+`, at most 253 bytes, not `.`, `..`, `..x`); the
  whole data is at most 1 MiB.
- `kubernetes.io/ssh-auth` needs the key `ssh-privatekey`, `kubernetes.io/tls` the keys `tls.crt`
  and `tls.key`.
- An `immutable: true` Secret keeps its data and type, and stays immutable.
Pure functions.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from vclite.admission import base, common
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
OPAQUE = "Opaque"
MAX_SIZE = 1024 * 1024
REQUIRED_KEYS = {"kubernetes.io/ssh-auth": ("ssh-privatekey",), "kubernetes.io/tls": ("tls.crt", "tls.key")}


def mutate(op: base.Operation, obj: Obj) -> None:
    if op not in (base.Operation.CREATE, base.Operation.UPDATE):
        return
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        obj["data"] = {**data, **{str(k): base64.b64encode(str(v).encode()).decode()
                                  for k, v in string_data.items()}}
    if not obj.get("type"):
        obj["type"] = OPAQUE


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    data = new.get("data")
    if data is not None and not isinstance(data, dict):
        return [FieldError("data", common.type_error(data, "object"))]
    size = 0
    for key, value in (data or {}).items():
        path = f"data[{key}]"
        errs += [FieldError(path, common.invalid(key, msg)) for msg in common.config_key(key)]
        if not isinstance(value, str):
            errs.append(FieldError(path, common.type_error(value, "string")))
            continue
        try:
            size += len(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            errs.append(FieldError(path, "illegal base64 data"))
    if size > MAX_SIZE:
        errs.append(FieldError("data", f"Too long: may not be more than {MAX_SIZE} bytes"))
    kind = new.get("type")
    for key in REQUIRED_KEYS.get(kind, ()):
        if key not in (data or {}):
            errs.append(FieldError(f"data[{key}]", "Required value"))
    if op is base.Operation.UPDATE and isinstance(old, dict):
        if old.get("type") != kind:
            errs.append(FieldError("type", "field is immutable"))
        if old.get("immutable") is True:
            if new.get("immutable") is not True:
                errs.append(FieldError("immutable", "Forbidden: field is immutable when `immutable` is set"))
            if (old.get("data") or {}) != (data or {}):
                errs.append(FieldError("data", "Forbidden: field is immutable when `immutable` is set"))
    return errs
