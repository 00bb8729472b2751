"""Content negotiation and query parameters, as kube-apiserver reads them (pure).

- `negotiate(accept)`: the first acceptable entry of the Accept header picks the answer: a Table
  (`application/json;as=Table;g=meta.k8s.io;v=v1|v1beta1`), an aggregated discovery list
  (`application/json;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2|v2beta1`), or plain JSON
  (anything else, protobuf included: every client that asks for protobuf also accepts JSON).
- `parse_bool`: Go's strconv.ParseBool forms (`watch=True` from kubernetes_asyncio, `watch=1`).
- `parse_int`: a non-negative integer parameter (limit, timeoutSeconds, tailLines, …).
"""
from __future__ import annotations

import dataclasses

from vclite.lib import errors

TRUE = ("1", "t", "T", "TRUE", "true", "True")
FALSE = ("0", "f", "F", "FALSE", "false", "False")


@dataclasses.dataclass(frozen=True)
class Choice:
    form: str             # "json" | "table" | "discovery"
    version: str = ""     # Table v1/v1beta1, discovery v2/v2beta1


JSON = Choice("json")


def _params(entry: str) -> tuple[str, dict[str, str]]:
    parts = [p.strip() for p in entry.split(";")]
    params = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        params[k.strip().lower()] = v.strip().strip('"')
    return parts[0].lower(), params


def negotiate(accept: str | None) -> Choice:
    for entry in (accept or "").split(","):
        mt, params = _params(entry)
        if not mt:
            continue
        if mt == "application/json" and params.get("as") == "Table" and params.get("g") == "meta.k8s.io" \
                and params.get("v") in ("v1", "v1beta1"):
            return Choice("table", params["v"])
        if mt == "application/json" and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("g") == "apidiscovery.k8s.io" and params.get("v") in ("v2", "v2beta1"):
            return Choice("discovery", params["v"])
        if mt in ("application/json", "*/*", "application/*", "application/yaml") and not params.get("as"):
            return JSON
    return JSON


def parse_bool(value: str | None, name: str, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise errors.BadRequest(f'invalid value for {name}: "{value}" (want true or false)')


def parse_int(value: str | None, name: str, default: int | None = None) -> int | None:
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise errors.BadRequest(f'invalid value for {name}: "{value}" (want an integer)') from None
    if n < 0:
        raise errors.BadRequest(f"invalid value for {name}: {n} (must not be negative)")
    return n
