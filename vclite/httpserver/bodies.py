"""Request bodies: JSON or YAML to a JSON-shaped value, within limits, or a clear error.

- Size: bodies over MAX_BODY bytes are refused (413) before they are parsed (the HTTP layer
  enforces the same cap while reading).
- Nesting deeper than MAX_DEPTH (maps and lists) is refused (400), including depths that would
  exhaust the parser's recursion.
- Malformed JSON/YAML, non-UTF-8 text, non-string map keys and YAML anchors/aliases (a billion-laughs vector; no
  Kubernetes client sends them) are refused (400).
- `strict=True` (fieldValidation=Strict) also refuses duplicate fields, as kube-apiserver does
  (`strict decoding error: duplicate field "x"`).
- Kubernetes protobuf (what `kubectl create namespace|configmap|priorityclass` sends) is read
  for the kinds `protobuf.py` knows; unknown media types get 415.
Pure; nothing here touches the store.
"""
from __future__ import annotations

import json
import math
from typing import Any

import yaml

from vclite.httpserver import protobuf
from vclite.httpserver import status as status_mod
from vclite.lib import errors

MAX_BODY = 3 * 1024 * 1024
MAX_DEPTH = 100

JSON_TYPES = ("application/json", "application/merge-patch+json", "application/json-patch+json",
              "application/strategic-merge-patch+json", "*/*", "")
YAML_TYPES = ("application/yaml", "application/apply-patch+yaml", "application/x-yaml", "text/yaml")
PROTOBUF = "application/vnd.kubernetes.protobuf"


class _NoAliasLoader(yaml.SafeLoader):
    """Safe loading without anchors/aliases; timestamps stay strings (JSON-shaped, as Kubernetes)."""

    yaml_constructors = {**yaml.SafeLoader.yaml_constructors,
                         "tag:yaml.org,2002:timestamp": yaml.SafeLoader.construct_yaml_str}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise errors.BadRequest("YAML aliases are not accepted in request bodies")
        return super().compose_node(parent, index)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise errors.BadRequest(f'strict decoding error: duplicate field "{k}"')
        out[k] = v
    return out


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > limit:
            raise errors.BadRequest(f"request body is nested deeper than {limit} levels")
        stack.extend((c, depth + 1) for c in children)


def decode(raw: bytes, content_type: str | None, strict: bool = False) -> Any:
    """Parse a request body by its media type; raise an ApiError (400/413/415) if it cannot be taken."""
    if len(raw) > MAX_BODY:
        raise status_mod.TooLarge(f"the request body is larger than the limit of {MAX_BODY} bytes")
    mt = media_type(content_type)
    if mt == PROTOBUF:
        return protobuf.decode(raw)
    if mt not in JSON_TYPES and mt not in YAML_TYPES:
        raise status_mod.UnsupportedMediaType(f'the body of the request was in an unknown format - accepted media '
                                              f'types include: {", ".join(t for t in JSON_TYPES + YAML_TYPES if t and t != "*/*")}')
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.BadRequest("the request body is not valid UTF-8") from None
    if not text.strip():
        raise errors.BadRequest("the request body is empty")
    try:
        if mt in JSON_TYPES or text.lstrip()[:1] in ("{", "["):
            value = json.loads(text, object_pairs_hook=_no_duplicates) if strict else json.loads(text)
        else:
            value = yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise errors.BadRequest(f"request body is nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as e:
        raise errors.BadRequest(f"error decoding the request body as JSON: {e}") from None
    except yaml.YAMLError as e:
        raise errors.BadRequest(f"error decoding the request body as YAML: {e}".replace("\n", " ")) from None
    check_depth(value)
    check_json_shaped(value)
    return value


def check_json_shaped(value: Any) -> None:
    """YAML may carry what no JSON document can: non-string keys (`1: x`), binary, sets, NaN."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, child in v.items():
                if not isinstance(k, str):
                    raise errors.BadRequest(f"map keys must be strings, not {k!r}")
                stack.append(child)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, float) and not math.isfinite(v):
            raise errors.BadRequest(f"numbers must be finite, not {v}")
        elif not (v is None or isinstance(v, (str, int, float))):
            raise errors.BadRequest(f"unsupported value of type {type(v).__name__} in the request body")


def decode_object(raw: bytes, content_type: str | None, strict: bool = False) -> dict:
    value = decode(raw, content_type, strict)
    if not isinstance(value, dict):
        raise errors.BadRequest(f"the request body must be an object, not {type(value).__name__}")
    return value
